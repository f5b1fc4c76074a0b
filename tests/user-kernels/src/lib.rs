//! Two kernels written the way a user of `gpu-std` writes them: `saxpy` (one thread per element) and
//! `block_sum` (a tree reduction in shared memory with a block barrier between the steps).
//!
//! `cargo xtask build-ptx -p user-kernels` builds this crate to `target/ptx/user_kernels.ptx`; on
//! the host the same kernels run on `gpu_std::emu` (see `tests/emulator.rs`).
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_gpu_kernel))]

use gpu_std::block::sync_threads;
use gpu_std::thread::{global_index_x, thread_idx};
use gpu_std::{Global, GlobalMut, Output, PerBlock, kernel, shared_layout};

kernel! {
    /// `y[i] = a * x[i] + y[i]` for every `i < y.len()`, one thread per element (`x` at least as long
    /// as `y`). Launch any block size with at least `y.len()` threads in all.
    pub fn saxpy<'a>(a: f32, x: Global<'a, f32>, y: GlobalMut<'a, f32>) {
        let i = global_index_x();
        if i < y.len() {
            y.set(i, a * x.get(i) + y.get(i));
        }
    }
}

/// Threads per block of `block_sum` (a power of two: the tree halves it at every step).
pub const BLOCK: u32 = 256;
shared_layout! {
    /// The shared memory of a `block_sum` block.
    pub struct Scratch {
        /// One slot per thread.
        pub partial: [u32; BLOCK as usize],
    }
}
/// Dynamic shared memory per block of `block_sum`.
pub const SHARED_BYTES: usize = Scratch::BYTES;

kernel! {
    /// `sums[b]` = the sum of block `b`'s elements of `input` (those past the end count as 0). Launch
    /// `BLOCK` threads per block, `SHARED_BYTES` of shared memory, `input.len().div_ceil(BLOCK)` blocks.
    pub fn block_sum<'a>(input: Global<'a, u32>, sums: Output<'a, u32, PerBlock>) {
        let s = Scratch::view().partial;
        let t = thread_idx().x as usize;
        let i = global_index_x();
        s.set(t, if i < input.len() { input.get(i) } else { 0 });
        sync_threads();
        let mut stride = BLOCK as usize / 2;
        while stride > 0 {
            if t < stride {
                s.set(t, s.get(t) + s.get(t + stride));
            }
            // Every thread reaches this barrier the same number of times: the loop bound is uniform.
            sync_threads();
            stride /= 2;
        }
        // Thread 0 owns the block's element of `sums`.
        if let Some(sum) = sums.mine() {
            sum.set(s.get(0));
        }
    }
}

/// The section "Race-check your own kernel" of `docs/emulator.md`, compiled and run as a doc test (a test in
/// `tests/readme.rs` checks that the doc quotes this text verbatim).
#[cfg(doctest)]
#[doc = include_str!("race_check.md")]
pub struct RaceCheckReadme;

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
