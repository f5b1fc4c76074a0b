//! A dot product on the GPU: every thread sums the products of a grid-stride slice, each warp adds its
//! threads' sums with shuffles, the warps meet in shared memory behind a block barrier, and one atomic
//! add per block accumulates the result.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_gpu_kernel))]

use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, grid_stride, thread_idx};
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// Threads per block (whole warps; at most 1024).
pub const BLOCK: u32 = 256;

shared_layout! {
    /// One partial sum per warp of the block.
    pub struct WarpSums {
        /// Slot `w`: warp `w`'s sum.
        pub sums: [u32; 32],
    }
}
/// Dynamic shared memory a launch gives each block.
pub const SHARED_BYTES: usize = WarpSums::BYTES;

/// The sum of `v` over the warp, in lane 0 (`shfl.sync.down.b32`).
fn warp_sum(mut v: u32) -> u32 {
    let mut delta = WARP_SIZE / 2;
    while delta > 0 {
        v = v.wrapping_add(warp::shfl_down(FULL_MASK, v, delta));
        delta /= 2;
    }
    v
}

/// Every thread's share of `x · y`, reduced to its warp's lane 0, written to shared memory.
fn warp_partials(x: Global<'_, u32>, y: Global<'_, u32>, sums: gpu_std::SharedSlice<u32>) {
    let mut acc = 0u32;
    for i in grid_stride(x.len().min(y.len())) {
        acc = acc.wrapping_add(x.get(i).wrapping_mul(y.get(i)));
    }
    let acc = warp_sum(acc);
    if warp::lane_id() == 0 {
        sums.set(warp::warp_id() as usize, acc);
    }
}

/// Warp 0 adds the block's warp sums and thread 0 adds them to `result[0]` (`atom.global.add.u32`).
fn block_total(sums: gpu_std::SharedSlice<u32>, result: GlobalMut<'_, u32>) {
    if warp::warp_id() == 0 {
        let lane = thread_idx().x;
        let v = if lane < block_dim().x / WARP_SIZE { sums.get(lane as usize) } else { 0 };
        let total = warp_sum(v);
        if lane == 0 {
            result.atomic(0).fetch_add(total);
        }
    }
}

kernel! {
    /// `result[0] += x · y` (wrapping u32 arithmetic). Launch `BLOCK` threads per block with
    /// `SHARED_BYTES` of shared memory, any grid; `result[0]` starts at 0.
    pub fn dot<'a>(x: Global<'a, u32>, y: Global<'a, u32>, result: GlobalMut<'a, u32>) {
        let sums = WarpSums::view().sums;
        warp_partials(x, y, sums);
        sync_threads(); // every warp's slot is written before warp 0 reads them
        block_total(sums, result);
    }
}

kernel! {
    /// The same without the block barrier: warp 0 may read a slot before its warp wrote it. The
    /// emulator's race detector reports it; kept to show that it does.
    pub fn dot_missing_barrier<'a>(x: Global<'a, u32>, y: Global<'a, u32>, result: GlobalMut<'a, u32>) {
        let sums = WarpSums::view().sums;
        warp_partials(x, y, sums);
        block_total(sums, result);
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
