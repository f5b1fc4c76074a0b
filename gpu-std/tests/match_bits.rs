//! `warp::match_bits` on the emulator: the lanes whose value agrees in the low bits, among the lanes
//! that take part; lanes that exited before it, or that a partial warp lacks, never match.

use gpu_std::emu::{self, LaunchConfig, Options};
use gpu_std::thread::thread_idx;
use gpu_std::warp::{self, FULL_MASK};
use gpu_std::{GlobalMut, kernel};

/// Threads of the block, and the first that returns before the collective.
const THREADS: u32 = 40;
const EXITS_FROM: u32 = 36;

kernel! {
    /// Threads `EXITS_FROM..` return at once; thread `i` of the others writes
    /// `out[2i] = match_bits(full, 4 i + i % 3, 2)` and `out[2i + 1] = match_bits(full, 0, 32)`.
    pub fn matches<'a>(out: GlobalMut<'a, u32>) {
        let i = thread_idx().x;
        if i >= EXITS_FROM {
            return;
        }
        out.set(2 * i as usize, warp::match_bits(FULL_MASK, 4 * i + i % 3, 2));
        out.set(2 * i as usize + 1, warp::match_bits(FULL_MASK, 0, 32));
    }
}

#[test]
fn match_bits_compares_the_low_bits_of_the_lanes_that_take_part() {
    let want: Vec<u32> = (0..THREADS)
        .flat_map(|i| {
            if i >= EXITS_FROM {
                return [u32::MAX, u32::MAX];
            }
            // The lanes of i's warp that reach the collective.
            let warp: Vec<u32> = (i / 32 * 32..EXITS_FROM.min(i / 32 * 32 + 32)).collect();
            let lanes =
                |same: &dyn Fn(u32) -> bool| warp.iter().filter(|&&k| same(k)).fold(0u32, |m, &k| m | 1 << (k % 32));
            [lanes(&|k| k % 3 == i % 3), lanes(&|_| true)]
        })
        .collect();
    for seed in 1..=5 {
        let out = emu::buffer("out", vec![u32::MAX; 2 * THREADS as usize]);
        let opts = Options { schedule_seed: seed, ..Options::default() };
        let o = emu::launch::<matches>(&LaunchConfig::linear(1, THREADS, 0), &opts, (out.view_mut(),)).expect("launch");
        assert!(o.races.is_empty() && o.warnings.is_empty(), "seed {seed}: {:?} {:?}", o.races, o.warnings);
        assert_eq!(out.to_vec(), want, "seed {seed}");
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
