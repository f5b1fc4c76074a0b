//! `NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
//! cub/cub/block/specializations/block_reduce_warp_reductions.cuh (BlockReduceWarpReductions::Sum,
//! ApplyWarpAggregates, ApplyWarpAggregatesNonDeterministic)` with `cub/cub/block/block_reduce.cuh
//! (BlockReduce::Sum(input, num_valid))`: `BLOCK_REDUCE_WARP_REDUCTIONS` and
//! `BLOCK_REDUCE_WARP_REDUCTIONS_NONDETERMINISTIC`.
//!
//! Kept: `Sum(input, num_valid)` choosing `Sum<true>` for a full block and `Sum<false>` otherwise;
//! each warp's `warp_num_valid` and its `WarpReduceShfl::Reduce<FullTile>` (see [`super::warp_shfl`]);
//! then, deterministic: lane 0 of each warp stores its aggregate in `warp_aggregates[warp]`,
//! `__syncthreads`, thread 0 adds those of the warps that hold valid items; nondeterministic: thread
//! 0 stores its warp's aggregate in `warp_aggregates[0]`, `__syncthreads`, lane 0 of every other warp
//! adds its aggregate there with a relaxed block-scope atomic, `__syncthreads`, every thread reads
//! the total. Changed: `u64` (for 32-bit integers CUB's full-warp reduction is `redux.sync`, which
//! gpu-std lacks), 128 threads (four warps), one item per thread, threads past `n` contribute 0
//! (CUB's nondeterministic variant lets every warp's lane 0 add, valid or not, so the padding must be
//! the identity, as a `BlockLoad` with a default gives). Thread 0 writes the block's sum.
//!
//! Synchronisation (block only; each block reduces its own tile): deterministic, one pair: the four
//! lane-0 stores of `warp_aggregates[w]` before thread 0's loads of them, ordered by the barrier.
//! Nondeterministic: thread 0's plain store to `warp_aggregates[0]` must precede the other warps'
//! atomic adds to it (first barrier: else a plain write races an atomic, and an add may be lost
//! under the store); the adds are atomic with each other (made plain, two read-modify-writes
//! interleave and one is lost); the second barrier orders every add before every thread's load of
//! the total.
use super::warp_shfl::reduce_sum_u64;
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_idx, global_index_x, thread_idx};
use gpu_std::warp::{WARP_SIZE, lane_id};
use gpu_std::{Global, Output, PerBlock, kernel, shared_layout};

/// Threads per block.
pub const BLOCK: u32 = 128;
/// `warps`.
const WARPS: usize = BLOCK as usize / 32;
/// `logical_warp_size`.
const LOGICAL_WARP_SIZE: i32 = 32;
/// `even_warp_multiple`.
const EVEN_WARP_MULTIPLE: bool = BLOCK as i32 % LOGICAL_WARP_SIZE == 0;

shared_layout! {
    /// `_TempStorage` (`warp_reduce` is empty for the shuffle reduction; `block_prefix` unused by `Sum`).
    pub struct WarpReductionsShared { pub warp_aggregates: [u64; WARPS] }
}

/// `BlockReduceWarpReductions<u64, 128, 1, 1, DETERMINISTIC>::Sum<FULL_TILE>(input, num_valid)`.
#[inline(always)]
fn sum<const DETERMINISTIC: bool>(input: u64, num_valid: i32, full_tile: bool) -> u64 {
    let storage = WarpReductionsShared::view().warp_aggregates;
    let linear_tid = thread_idx().x;
    let warp_id = (linear_tid / WARP_SIZE) as usize;
    let lane_id = lane_id();
    let warp_offset = warp_id as i32 * LOGICAL_WARP_SIZE;
    let warp_num_valid = if (full_tile && EVEN_WARP_MULTIPLE) || warp_offset + LOGICAL_WARP_SIZE <= num_valid {
        LOGICAL_WARP_SIZE
    } else {
        num_valid - warp_offset
    };
    let mut warp_aggregate = reduce_sum_u64(input, warp_num_valid, full_tile && EVEN_WARP_MULTIPLE);
    if DETERMINISTIC {
        // ApplyWarpAggregates<FullTile>.
        if lane_id == 0 {
            storage.set(warp_id, warp_aggregate);
        }
        sync_threads();
        if linear_tid == 0 {
            let mut warp_idx = 1;
            while warp_idx < WARPS {
                if full_tile || (warp_idx as i32 * LOGICAL_WARP_SIZE) < num_valid {
                    let addend = storage.get(warp_idx);
                    warp_aggregate = warp_aggregate.wrapping_add(addend);
                }
                warp_idx += 1;
            }
        }
        warp_aggregate
    } else {
        // ApplyWarpAggregatesNonDeterministic.
        if linear_tid == 0 {
            storage.set(0, warp_aggregate);
        }
        sync_threads();
        if lane_id == 0 && warp_id != 0 {
            let _ = storage.atomic(0).fetch_add(warp_aggregate);
        }
        sync_threads();
        storage.get(0)
    }
}

/// `BlockReduce<u64, 128, ALGORITHM>::Sum(input, num_valid)`.
#[inline(always)]
fn block_sum<const DETERMINISTIC: bool>(input: Global<'_, u64>, sums: Output<'_, u64, PerBlock>) {
    let i = global_index_x();
    let item = if i < input.len() { input.get(i) } else { 0 };
    let num_valid = input.len().saturating_sub(block_idx().x as usize * BLOCK as usize).min(BLOCK as usize) as i32;
    let total = sum::<DETERMINISTIC>(item, num_valid, num_valid >= BLOCK as i32);
    if let Some(slot) = sums.mine() {
        slot.set(total);
    }
}

kernel! {
    /// `sums[b]` = the sum of block `b`'s elements, `BLOCK_REDUCE_WARP_REDUCTIONS`. Launch `BLOCK`
    /// threads per block, `WarpReductionsShared::BYTES` of shared memory.
    pub fn cub_block_reduce_warp_reductions<'a>(input: Global<'a, u64>, sums: Output<'a, u64, PerBlock>) {
        block_sum::<true>(input, sums)
    }
}

kernel! {
    /// As [`cub_block_reduce_warp_reductions`], `BLOCK_REDUCE_WARP_REDUCTIONS_NONDETERMINISTIC`.
    pub fn cub_block_reduce_warp_reductions_nd<'a>(input: Global<'a, u64>, sums: Output<'a, u64, PerBlock>) {
        block_sum::<false>(input, sums)
    }
}

/// `BLOCK_REDUCE_WARP_REDUCTIONS` over `n` inputs, one sum per block.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    super::common::check_block_sums::<cub_block_reduce_warp_reductions>(dev, n, BLOCK, WarpReductionsShared::BYTES)
}

/// `BLOCK_REDUCE_WARP_REDUCTIONS_NONDETERMINISTIC` over `n` inputs, one sum per block.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check_nondeterministic(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    super::common::check_block_sums::<cub_block_reduce_warp_reductions_nd>(dev, n, BLOCK, WarpReductionsShared::BYTES)
}
