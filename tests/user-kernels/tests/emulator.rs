//! Both kernels on the CPU SIMT emulator, race-checked, against CPU references; and a block sum
//! without its barriers, which the race detector must name.

use gpu_std::emu::{self, LaunchConfig, Options, Outcome};
use gpu_std::thread::{global_index_x, thread_idx};
use gpu_std::{Global, IntoArgs, Kernel, Output, PerBlock, SharedSlice, kernel, shared_layout};
use user_kernels::{BLOCK, SHARED_BYTES, block_sum, saxpy};

fn launch<'a, K: Kernel>(cfg: LaunchConfig, seed: u64, args: impl IntoArgs<Params = K::Args<'a>>) -> Outcome {
    let opts = Options { schedule_seed: seed, ..Options::default() };
    emu::launch::<K>(&cfg, &opts, args).unwrap_or_else(|e| panic!("launch of {} failed: {e}", K::NAME))
}

fn assert_race_free(o: &Outcome) {
    let reports: Vec<String> = o.races.iter().map(ToString::to_string).collect();
    assert_eq!(o.racy_addresses, 0, "races reported:\n{}", reports.join("\n"));
}

/// Inputs in [-1, 1) that differ from element to element.
fn wave(n: usize, phase: f32) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37 + phase).sin()).collect()
}

#[test]
fn saxpy_matches_the_cpu_and_has_no_races() {
    for (n, block) in [(1, 32), (257, 64), (1000, 128)] {
        let a = 1.75f32;
        let x = emu::buffer("x", wave(n, 0.0));
        let y0 = wave(n, 1.0);
        let y = emu::buffer("y", y0.clone());
        let blocks = (n as u32).div_ceil(block);
        let cfg = LaunchConfig::linear(blocks, block, 0);
        let o = emu::launch::<saxpy>(&cfg, &Options::default(), (a, x.view(), y.view_mut())).expect("saxpy launch");
        assert_eq!(o.racy_addresses, 0, "{:?}", o.races);
        assert_eq!(o.threads, u64::from(blocks * block));
        // The emulator computes in f32 exactly as the CPU does: the results are bit-identical.
        let want: Vec<f32> = x.to_vec().iter().zip(&y0).map(|(&xi, &yi)| a * xi + yi).collect();
        assert_eq!(y.to_vec(), want, "n = {n}");
    }
}

#[test]
fn block_sum_matches_the_cpu_and_has_no_races() {
    for n in [1, 255, 256, 257, 1000] {
        let input = emu::buffer("input", (0..n as u32).map(|i| i * 7 % 1000).collect());
        let blocks = (n as u32).div_ceil(BLOCK);
        let mut sums = emu::buffer("sums", vec![u32::MAX; blocks as usize]);
        for seed in 1..=3 {
            let cfg = LaunchConfig::linear(blocks, BLOCK, SHARED_BYTES);
            let o = launch::<block_sum>(cfg, seed, (input.view(), sums.output()));
            assert_race_free(&o);
            let want: Vec<u32> = input.to_vec().chunks(BLOCK as usize).map(|c| c.iter().sum()).collect();
            assert_eq!(sums.to_vec(), want, "n = {n}, schedule seed {seed}");
        }
    }
}

shared_layout! {
    struct Slots {
        slots: [u32; BLOCK as usize],
    }
}

/// `block_sum` with its barriers forgotten: thread `t` may read `s[t + stride]` before thread
/// `t + stride` wrote it.
fn sum_without_barriers(input: Global<u32>, sums: Output<u32, PerBlock>, s: SharedSlice<u32>) {
    let t = thread_idx().x as usize;
    let i = global_index_x();
    s.set(t, if i < input.len() { input.get(i) } else { 0 });
    let mut stride = BLOCK as usize / 2;
    while stride > 0 {
        if t < stride {
            s.set(t, s.get(t) + s.get(t + stride));
        }
        stride /= 2;
    }
    if let Some(sum) = sums.mine() {
        sum.set(s.get(0));
    }
}

kernel! {
    /// RACY: `block_sum` without `sync_threads()`.
    pub fn block_sum_no_sync<'a>(input: Global<'a, u32>, sums: Output<'a, u32, PerBlock>) {
        sum_without_barriers(input, sums, Slots::view().slots)
    }
}

#[test]
fn block_sum_without_barriers_is_reported() {
    let input = emu::buffer("input", vec![1u32; 2 * BLOCK as usize]);
    let mut sums = emu::buffer("sums", vec![0u32; 2]);
    let cfg = LaunchConfig::linear(2, BLOCK, Slots::BYTES);
    let o = launch::<block_sum_no_sync>(cfg, 1, (input.view(), sums.output()));
    assert!(o.racy_addresses > 0, "the missing barriers must be reported as races");
    let race = &o.races[0];
    println!("{race}");
    assert_eq!(race.kernel, "block_sum_no_sync");
    assert_eq!(race.buffer, "Slots.slots");
    assert!(race.why.contains("no __syncthreads()"), "{}", race.why);
    assert!(race.first.thread != race.second.thread);
    assert!(race.first.kind == "write" || race.second.kind == "write");
    for side in [&race.first, &race.second] {
        assert!(side.site.contains("emulator.rs"), "{}", side.site);
        assert_eq!(side.barrier_interval, 0);
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
