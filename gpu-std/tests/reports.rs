//! Each way a launch can fail has its own `EmuError` variant and wording; a value that is undefined on
//! a GPU (a shuffle from a lane outside the mask) is poisoned and warned about instead of failing the
//! launch; a launch with too little shared memory for the kernel's layout says so in those words.

use gpu_std::block::sync_threads;
use gpu_std::emu::{self, EmuError, LaunchConfig, Options, POISON, ThreadId};
use gpu_std::thread::{global_index_x, thread_idx};
use gpu_std::warp::{lane_id, shfl_down, shfl_xor};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

const SOURCE: &str = include_str!("reports.rs");

/// `file:line:` of the line of this file that ends in the comment `// <marker>`.
fn site_of(marker: &str) -> String {
    let line = SOURCE.lines().position(|l| l.contains(&format!("// {marker}"))).expect("marker") + 1;
    format!("{}:{line}:", file!())
}

fn seed(s: u64) -> Options {
    Options { schedule_seed: s, ..Options::default() }
}

fn t(block: u32, thread: u32) -> ThreadId {
    ThreadId { block: (block, 0, 0), thread: (thread, 0, 0) }
}

// ---- shuffles from lanes outside the mask ------------------------------------------------------------

kernel! {
    /// Lanes 0..16 shuffle down by 8 under mask 0x0000ffff: lanes 8..16 read lanes 16..24, outside the
    /// mask. Lanes below `keep` store what they got.
    pub fn half_warp_shuffle<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, keep: u32) {
        let lane = lane_id();
        if lane < 16 {
            let v = shfl_down(0x0000_ffff, input.get(lane as usize), 8); // @half-warp
            if lane < keep {
                out.set(lane as usize, v);
            }
        }
    }
}

#[test]
fn a_shuffle_from_outside_the_mask_is_poisoned_and_warned_about() {
    for s in 1..=3 {
        let input = emu::buffer("input", (100..132).collect::<Vec<u32>>());
        let out = emu::buffer("out", vec![0u32; 16]);
        let o = emu::launch::<half_warp_shuffle>(
            &LaunchConfig::linear(1, 32, 0),
            &seed(s),
            (input.view(), out.view_mut(), 16),
        )
        .expect("an undefined value does not fail the launch");
        let want: Vec<u32> = (108..116).chain([POISON; 8]).collect();
        assert_eq!(out.to_vec(), want);
        assert_eq!(o.warnings.len(), 1, "{:?}", o.warnings);
        let w = &o.warnings[0];
        let at = site_of("@half-warp");
        assert_eq!((w.kernel.as_str(), w.thread, w.count), ("half_warp_shuffle", t(0, 8), 8));
        assert!(w.site.starts_with(&at), "{}", w.site);
        assert_eq!(
            w.message,
            format!(
                "shfl.sync.down at {}: block 0 thread 8 (lane 8) reads lane 16, which is not in the mask 0x0000ffff; \
                 its value is undefined on a GPU, and the emulator gives it 0xdeadbeef",
                w.site
            )
        );
        assert_eq!(
            w.to_string(),
            format!("warning in kernel `half_warp_shuffle`: {} (8 times at this site)", w.message)
        );
    }
}

#[test]
fn a_kernel_that_never_uses_the_undefined_value_is_correct() {
    let input = emu::buffer("input", (100..132).collect::<Vec<u32>>());
    let out = emu::buffer("out", vec![7u32; 16]);
    let o =
        emu::launch::<half_warp_shuffle>(&LaunchConfig::linear(1, 32, 0), &seed(1), (input.view(), out.view_mut(), 8))
            .expect("launch");
    assert_eq!(out.to_vec(), (108..116).chain([7; 8]).collect::<Vec<u32>>());
    assert_eq!(o.racy_addresses, 0);
    assert_eq!(o.warnings.len(), 1, "the shuffle itself is still worth a warning");
}

kernel! {
    /// Lanes 0..8 exchange f64 values with lane ^ 8 under mask 0x000000ff: every source is outside it.
    pub fn f64_shuffle_outside_mask<'a>(out: GlobalMut<'a, f64>) {
        let lane = lane_id();
        if lane < 8 {
            out.set(lane as usize, shfl_xor(0x0000_00ff, lane as f64, 8));
        }
    }
}

#[test]
fn a_64_bit_shuffle_is_poisoned_in_both_halves() {
    let out = emu::buffer("out", vec![0.0f64; 8]);
    let o = emu::launch::<f64_shuffle_outside_mask>(&LaunchConfig::linear(1, 32, 0), &seed(2), (out.view_mut(),))
        .expect("launch");
    let poison = f64::from_bits((u64::from(POISON) << 32) | u64::from(POISON));
    assert!(out.to_vec().iter().all(|v| v.to_bits() == poison.to_bits()), "{:?}", out.to_vec());
    assert_eq!((o.warnings.len(), o.warnings[0].count), (1, 16), "two 32-bit shuffles per lane");
}

kernel! {
    /// Every lane shuffles under a mask that names only lanes 0..16.
    pub fn lane_outside_own_mask<'a>(out: GlobalMut<'a, u32>) {
        let v = shfl_down(0x0000_ffff, lane_id(), 1); // @own-mask
        out.set(lane_id() as usize, v);
    }
}

#[test]
fn a_lane_outside_its_own_mask_traps_like_the_gpu() {
    for s in 1..=3 {
        let out = emu::buffer("out", vec![0u32; 32]);
        let e = emu::launch::<lane_outside_own_mask>(&LaunchConfig::linear(1, 32, 0), &seed(s), (out.view_mut(),))
            .unwrap_err();
        let EmuError::KernelPanic { kernel, thread, message } = &e else { panic!("expected a trap: {e}") };
        let lane = thread.thread.0;
        assert_eq!(kernel, "lane_outside_own_mask");
        assert!((16..32).contains(&lane), "{thread}");
        let at = site_of("@own-mask");
        assert!(message.starts_with(&format!("shfl.sync.down at {at}")), "{message}");
        assert!(
            message.ends_with(&format!(": lane {lane} of warp 0 is not in its own mask 0x0000ffff (a GPU traps here)")),
            "{message}"
        );
        assert!(
            e.to_string().starts_with(&format!("panic in kernel `lane_outside_own_mask`, block 0 thread {lane}: "))
        );
    }
}

// ---- the wording of each failure -------------------------------------------------------------------

kernel! {
    /// Odd threads wait at a barrier that even threads never reach.
    pub fn odd_threads_wait<'a>(out: GlobalMut<'a, u32>) {
        if thread_idx().x % 2 == 1 {
            sync_threads(); // @odd-barrier
        }
        out.set(0, 1);
    }
}

#[test]
fn a_divergent_barrier_says_undefined_behaviour() {
    let out = emu::buffer("out", vec![0u32]);
    let e = emu::launch::<odd_threads_wait>(&LaunchConfig::linear(1, 4, 0), &seed(1), (out.view_mut(),)).unwrap_err();
    assert!(matches!(e, EmuError::Deadlock(_)), "{e}");
    let at = site_of("@odd-barrier");
    let text = e.to_string();
    let mut lines = text.lines();
    let first = lines.next().unwrap();
    assert!(
        first.starts_with(&format!(
            "undefined behaviour in kernel `odd_threads_wait`: barrier divergence in block 0: 2 thread(s) wait at \
             the block barrier {at}"
        )),
        "{text}"
    );
    assert!(first.contains(" but 2 thread(s) skipped it: they accessed memory in its barrier interval"), "{text}");
    assert!(first.contains("on sm_70+ hardware a barrier can release without the threads missing from it"), "{text}");
    assert!(lines.next().unwrap().ends_with(": block 0 thread 1, block 0 thread 3"), "{text}");
    assert_eq!(lines.next().unwrap(), "  missing: 2 threads exited: block 0 thread 0, block 0 thread 2");
}

kernel! {
    /// Reads one element past the end of `v`.
    pub fn read_past_end<'a>(v: Global<'a, u32>, out: GlobalMut<'a, u32>) {
        let i = global_index_x();
        out.set(i, v.get(i + 1)); // @past-end
    }
}

#[test]
fn a_kernel_panic_says_panic_and_names_the_thread() {
    let v = emu::buffer("v", vec![1u32; 8]);
    let out = emu::buffer("out", vec![0u32; 8]);
    let e =
        emu::launch::<read_past_end>(&LaunchConfig::linear(1, 8, 0), &seed(1), (v.view(), out.view_mut())).unwrap_err();
    let at = site_of("@past-end");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "panic in kernel `read_past_end`, block 0 thread 7: index out of bounds: the len is 8 but the index is 8 \
             at {at}"
        )),
        "{text}"
    );
}

shared_layout! {
    struct Bins {
        bins: [u32; 1024],
    }
}

kernel! {
    /// Zeroes the block's bins in shared memory.
    pub fn uses_bins<'a>(out: GlobalMut<'a, u32>) {
        let bins = Bins::view().bins;
        bins.set(thread_idx().x as usize, 0);
        out.set(0, 1);
    }
}

#[test]
fn too_little_shared_memory_for_the_layout_is_named_in_bytes() {
    assert_eq!(Bins::BYTES, 4096);
    for given in [0, 4095] {
        let out = emu::buffer("out", vec![0u32]);
        let e = emu::launch::<uses_bins>(&LaunchConfig::linear(2, 32, given), &seed(1), (out.view_mut(),)).unwrap_err();
        assert_eq!(
            e,
            EmuError::SharedMemoryTooSmall { kernel: "uses_bins".into(), layout: "Bins".into(), needed: 4096, given }
        );
        assert_eq!(
            e.to_string(),
            format!(
                "kernel `uses_bins` needs 4096 bytes of dynamic shared memory (Bins::BYTES) but the launch gave \
                 {given} (pass Bins::BYTES as the launch's shared bytes)"
            )
        );
    }
    let out = emu::buffer("out", vec![0u32]);
    emu::launch::<uses_bins>(&LaunchConfig::linear(2, 32, Bins::BYTES), &seed(1), (out.view_mut(),)).expect("enough");
    assert_eq!(out.to_vec(), [1]);
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
