//! `NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
//! cub/cub/block/specializations/block_reduce_raking.cuh (BlockReduceRaking::Reduce, RakingReduction)`
//! and `cub/cub/block/specializations/block_reduce_raking_commutative_only.cuh
//! (BlockReduceRakingCommutativeOnly::Sum)`, with `cub/cub/block/block_raking_layout.cuh
//! (BlockRakingLayout::PlacementPtr, RakingPtr)`: `BLOCK_REDUCE_RAKING` and
//! `BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY`.
//!
//! Kept: the raking layouts of CUB for 128 threads, with their constants computed the same way: for
//! `BLOCK_REDUCE_RAKING` every thread places its partial at `tid + tid / 4` of a 160-element grid
//! (segments of 4, one pad element each, `USE_SEGMENT_PADDING`), `__syncthreads`, the 32 raking
//! threads each add their segment of 4 (guarded by `num_valid` for a partial tile), `__syncwarp` of
//! the 32 raking lanes, and a `WarpReduceShfl` over `valid_raking_threads` lanes
//! ([`super::warp_shfl`]). For `BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY` on a full tile, threads 32 ..
//! 128 place their partial at `tid - 32` of a 96-element grid (segments of 3, no padding),
//! `__syncthreads`, warp 0 adds its own partial and its segment of 3 (`ThreadReduce` with a prefix)
//! and reduces the warp; on a partial tile it falls back to `BlockReduceRaking` (CUB's
//! `USE_FALLBACK || !FULL_TILE`); the two storages are a union (one shared array here). Changed:
//! `u64` (CUB's full-warp shuffle reduction of 32-bit integers is `redux.sync`, absent from
//! gpu-std), one item per thread, 0 past `n`; thread 0 writes the block's sum.
//!
//! Synchronisation (block only): every placement store is read by one raking thread after the
//! `__syncthreads` (without it, read-after-write races between warps). The raking warp's
//! `__syncwarp` orders its reads of the grid before what the warp reduction writes to its storage,
//! which in CUB's union may alias the grid; with the shuffle reduction that storage is empty, and
//! nothing is written to shared memory after the reads, so nothing is left for it to order (its
//! mutant is argued redundant). The block's tile is its own; nothing crosses blocks.
use super::warp_shfl::reduce_sum_u64;
use gpu_std::block::sync_threads;
use gpu_std::shared::SharedSlice;
use gpu_std::thread::{block_idx, global_index_x, thread_idx};
use gpu_std::warp::sync_warp;
use gpu_std::{Global, Output, PerBlock, kernel, shared_layout};

/// Threads per block.
pub const BLOCK: u32 = 128;
/// `BlockRakingLayout<u64, 128>`: `SEGMENT_LENGTH`, `RAKING_THREADS`, `USE_SEGMENT_PADDING`,
/// `GRID_ELEMENTS`, `UNGUARDED`.
const SEGMENT_LENGTH: usize = (BLOCK as usize).div_ceil(32);
const RAKING_THREADS: usize = (BLOCK as usize).div_ceil(SEGMENT_LENGTH);
const USE_SEGMENT_PADDING: usize = (SEGMENT_LENGTH.is_multiple_of(2) && SEGMENT_LENGTH > 2) as usize;
const GRID_ELEMENTS: usize = RAKING_THREADS * (SEGMENT_LENGTH + USE_SEGMENT_PADDING);
const RAKING_UNGUARDED: bool = (BLOCK as usize).is_multiple_of(RAKING_THREADS);
/// `BlockRakingLayout<u64, SHARING_THREADS = 96>` of the commutative-only variant: segments of 3,
/// no padding.
const SHARING_THREADS: usize = BLOCK as usize - 32;
const COMMUTATIVE_SEGMENT_LENGTH: usize = SHARING_THREADS / 32;

shared_layout! {
    /// The raking grid (the union of both variants' storage: the fallback's grid is the larger).
    pub struct RakingShared { pub grid: [u64; GRID_ELEMENTS] }
}

/// `BlockReduceRaking<u64, 128>::Sum<IS_FULL_TILE>(partial, num_valid)`.
#[inline(always)]
fn raking_sum(grid: SharedSlice<u64>, mut partial: u64, num_valid: i32, full_tile: bool) -> u64 {
    let linear_tid = thread_idx().x as usize;
    // PlacementPtr.
    grid.set(linear_tid + USE_SEGMENT_PADDING * (linear_tid / SEGMENT_LENGTH), partial);
    sync_threads();
    if linear_tid < RAKING_THREADS {
        // RakingPtr.
        let segment = linear_tid * (SEGMENT_LENGTH + USE_SEGMENT_PADDING);
        partial = grid.get(segment);
        let mut iteration = 1;
        while iteration < SEGMENT_LENGTH {
            if (full_tile && RAKING_UNGUARDED) || ((linear_tid * SEGMENT_LENGTH + iteration) as i32) < num_valid {
                let addend = grid.get(segment + iteration);
                partial = partial.wrapping_add(addend);
            }
            iteration += 1;
        }
        let valid_raking_threads = if full_tile {
            RAKING_THREADS as i32
        } else {
            (num_valid + SEGMENT_LENGTH as i32 - 1) / SEGMENT_LENGTH as i32
        };
        let mask = ((1u64 << RAKING_THREADS) - 1) as u32;
        sync_warp(mask);
        partial = reduce_sum_u64(partial, valid_raking_threads, full_tile && RAKING_UNGUARDED);
    }
    partial
}

/// `BlockReduceRakingCommutativeOnly<u64, 128>::Sum<FULL_TILE>(partial, num_valid)`.
#[inline(always)]
fn commutative_sum(grid: SharedSlice<u64>, mut partial: u64, num_valid: i32, full_tile: bool) -> u64 {
    if !full_tile {
        return raking_sum(grid, partial, num_valid, full_tile);
    }
    let linear_tid = thread_idx().x as usize;
    if linear_tid >= 32 {
        grid.set(linear_tid - 32, partial);
    }
    sync_threads();
    if linear_tid < 32 {
        let segment = linear_tid * COMMUTATIVE_SEGMENT_LENGTH;
        // ThreadReduce(segment, plus, partial).
        let mut k = 0;
        while k < COMMUTATIVE_SEGMENT_LENGTH {
            partial = partial.wrapping_add(grid.get(segment + k));
            k += 1;
        }
        // WarpReduce<u64, 32>::Sum(partial): the full-warp shuffle reduction.
        partial = reduce_sum_u64(partial, 32, true);
    }
    partial
}

/// `BlockReduce<u64, 128, ALGORITHM>::Sum(input, num_valid)`, thread 0 writing the block's sum.
#[inline(always)]
fn block_sum<const COMMUTATIVE_ONLY: bool>(input: Global<'_, u64>, sums: Output<'_, u64, PerBlock>) {
    let grid = RakingShared::view().grid;
    let i = global_index_x();
    let item = if i < input.len() { input.get(i) } else { 0 };
    let num_valid = input.len().saturating_sub(block_idx().x as usize * BLOCK as usize).min(BLOCK as usize) as i32;
    let full = num_valid >= BLOCK as i32;
    let total = if COMMUTATIVE_ONLY {
        commutative_sum(grid, item, num_valid, full)
    } else {
        raking_sum(grid, item, num_valid, full)
    };
    if let Some(slot) = sums.mine() {
        slot.set(total);
    }
}

kernel! {
    /// `sums[b]` = the sum of block `b`'s elements, `BLOCK_REDUCE_RAKING`. Launch `BLOCK` threads per
    /// block, `RakingShared::BYTES` of shared memory.
    pub fn cub_block_reduce_raking<'a>(input: Global<'a, u64>, sums: Output<'a, u64, PerBlock>) {
        block_sum::<false>(input, sums)
    }
}

kernel! {
    /// As [`cub_block_reduce_raking`], `BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY`.
    pub fn cub_block_reduce_raking_commutative<'a>(input: Global<'a, u64>, sums: Output<'a, u64, PerBlock>) {
        block_sum::<true>(input, sums)
    }
}

/// `BLOCK_REDUCE_RAKING` over `n` inputs, one sum per block.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    super::common::check_block_sums::<cub_block_reduce_raking>(dev, n, BLOCK, RakingShared::BYTES)
}

/// `BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY` over `n` inputs, one sum per block.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check_commutative(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    super::common::check_block_sums::<cub_block_reduce_raking_commutative>(dev, n, BLOCK, RakingShared::BYTES)
}
