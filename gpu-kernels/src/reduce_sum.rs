//! Sum of an array (the chapter's `reduceSum` with `blockReduceSum`): grid-stride accumulation, a warp
//! shuffle reduction, per-warp sums through shared memory, and one `atomicAdd` per block.
//!
//! Decision procedure (§5.7): many blocks write the one output, so they combine with an atomic add;
//! within a block, warp sums cross warps through shared memory, so a block barrier separates their
//! write (lane 0 of each warp) from their read (warp 0); the order of the atomic adds varies between
//! runs, so the last bits of the float sum may too (see `fp_determinism`).
use gpu_std::block::sync_threads;
use gpu_std::shared::SharedSlice;
use gpu_std::thread::{block_dim, grid_stride, thread_idx};
use gpu_std::warp::{self, WARP_SIZE};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// Threads per block (a multiple of 32: the block reduction assumes full warps).
pub const BLOCK: u32 = 256;
/// The seed caps the grid at 1024 blocks; the grid-stride loop covers the rest.
pub const MAX_GRID: u32 = 1024;
shared_layout! {
    /// The block's shared memory.
    pub struct Scratch {
        /// One slot per warp (at most 1024 / 32 = 32 warps).
        pub warp_sums: [f32; 32],
    }
}
/// Dynamic shared memory per block.
pub const SHARED_BYTES: usize = Scratch::BYTES;

/// `blockReduceSum`: the block's total, valid in thread 0. Every thread of the block must call it
/// (it contains a block barrier), with `blockDim.x` a multiple of 32.
pub fn block_reduce_sum(val: f32, warp_sums: SharedSlice<f32>) -> f32 {
    let lane = warp::lane_id();
    let wid = warp::warp_id() as usize;
    let val = warp::reduce_sum_f32(val);
    if lane == 0 {
        warp_sums.set(wid, val);
    }
    sync_threads();
    let num_warps = block_dim().x / WARP_SIZE;
    let tid = thread_idx().x;
    let val = if tid < num_warps { warp_sums.get(tid as usize) } else { 0.0 };
    if wid == 0 { warp::reduce_sum_f32(val) } else { val }
}

kernel! {
    /// `output[0] += sum(input)` (output zeroed by the host). Launch: `BLOCK` threads,
    /// `SHARED_BYTES` of shared memory, any grid (capped at `MAX_GRID`).
    pub fn reduce_sum<'a>(input: Global<'a, f32>, output: GlobalMut<'a, f32>) {
        let mut sum = 0.0f32;
        for i in grid_stride(input.len()) {
            sum += input.get(i);
        }
        let sum = block_reduce_sum(sum, Scratch::view().warp_sums);
        if thread_idx().x == 0 {
            output.atomic(0).fetch_add_float(sum);
        }
    }
}
