//! `NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
//! cub/cub/block/specializations/block_scan_raking.cuh (BlockScanRaking::ExclusiveScan(input, output,
//! initial_value, scan_op), Upsweep, ExclusiveDownsweep)` with `cub/cub/block/block_raking_layout.cuh`
//! and `cub/cub/thread/thread_scan.cuh (ThreadScanExclusive)`: `BLOCK_SCAN_RAKING` and
//! `BLOCK_SCAN_RAKING_MEMOIZE` (`Memoize = true`), as `BlockScan::ExclusiveSum(input, output)` calls
//! them (initial value 0).
//!
//! Kept: the raking layout for 128 threads (segments of 4, one pad element after each: a 160-element
//! grid), each thread's placement store at `tid + tid / 4`, `__syncthreads`, the 32 raking threads'
//! upsweep (copy the segment to registers, `cached_segment`, and reduce it), their warp scan
//! (`WarpScanShfl` exclusive scan with initial value, [`super::warp_shfl`]), the downsweep (re-read
//! the segment from shared memory unless memoized, exclusive thread scan seeded with the warp's
//! exclusive partial, copy back), `__syncthreads`, each thread's load from its placement. Changed:
//! `u32`, one item per thread, one tile per block, 0 past `n`; each thread stores its own output.
//!
//! Synchronisation (block only): the first barrier orders the 128 placement stores before the raking
//! threads' reads of their segments (read-after-write across warps); the second orders the raking
//! threads' stores of the scanned segments before every thread's load of its placement. The raking
//! threads are warp 0; the warp scan exchanges registers only. Each block's tile is its own.
use super::warp_shfl::exclusive_sum_init_u32;
use gpu_std::block::sync_threads;
use gpu_std::thread::{global_index_x, thread_idx};
use gpu_std::{Global, Output, kernel, shared_layout};

/// Threads per block.
pub const BLOCK: u32 = 128;
/// `BlockRakingLayout<u32, 128>` constants.
const SEGMENT_LENGTH: usize = (BLOCK as usize).div_ceil(32);
const RAKING_THREADS: usize = (BLOCK as usize).div_ceil(SEGMENT_LENGTH);
const USE_SEGMENT_PADDING: usize = (SEGMENT_LENGTH.is_multiple_of(2) && SEGMENT_LENGTH > 2) as usize;
const GRID_ELEMENTS: usize = RAKING_THREADS * (SEGMENT_LENGTH + USE_SEGMENT_PADDING);
const UNGUARDED: bool = (BLOCK as usize).is_multiple_of(RAKING_THREADS);

shared_layout! {
    /// `_TempStorage::raking_grid` (`warp_scan` is empty for shuffles, `block_aggregate` unused here).
    pub struct ScanRakingShared { pub raking_grid: [u32; GRID_ELEMENTS] }
}

/// `BlockScanRaking<u32, 128, MEMOIZE>::ExclusiveScan(input, output, 0, plus)`.
#[inline(always)]
fn exclusive_sum<const MEMOIZE: bool>(input: u32) -> u32 {
    let grid = ScanRakingShared::view().raking_grid;
    let linear_tid = thread_idx().x as usize;
    let placement = linear_tid + USE_SEGMENT_PADDING * (linear_tid / SEGMENT_LENGTH);
    grid.set(placement, input);
    sync_threads();
    if linear_tid < RAKING_THREADS {
        let raking = linear_tid * (SEGMENT_LENGTH + USE_SEGMENT_PADDING);
        // Upsweep: CopySegment into registers, then GuardedReduce.
        let mut cached_segment = [0u32; SEGMENT_LENGTH];
        let mut k = 0;
        while k < SEGMENT_LENGTH {
            cached_segment[k] = grid.get(raking + k);
            k += 1;
        }
        let mut upsweep_partial = cached_segment[0];
        let mut iteration = 1;
        while iteration < SEGMENT_LENGTH {
            if UNGUARDED || linear_tid * SEGMENT_LENGTH + iteration < BLOCK as usize {
                upsweep_partial = upsweep_partial.wrapping_add(cached_segment[iteration]);
            }
            iteration += 1;
        }
        let (_, exclusive_partial) = exclusive_sum_init_u32(upsweep_partial, 0);
        // ExclusiveDownsweep(plus, exclusive_partial, apply_prefix = true).
        if !MEMOIZE {
            let mut k = 0;
            while k < SEGMENT_LENGTH {
                cached_segment[k] = grid.get(raking + k);
                k += 1;
            }
        }
        let mut inclusive = exclusive_partial.wrapping_add(cached_segment[0]);
        cached_segment[0] = exclusive_partial;
        let mut exclusive = inclusive;
        let mut k = 1;
        while k < SEGMENT_LENGTH {
            inclusive = exclusive.wrapping_add(cached_segment[k]);
            cached_segment[k] = exclusive;
            exclusive = inclusive;
            k += 1;
        }
        let mut k = 0;
        while k < SEGMENT_LENGTH {
            grid.set(raking + k, cached_segment[k]);
            k += 1;
        }
    }
    sync_threads();
    grid.get(placement)
}

/// Load, `BlockScan::ExclusiveSum`, store.
#[inline(always)]
fn scan_tile<const MEMOIZE: bool>(input: Global<'_, u32>, output: Output<'_, u32>) {
    let i = global_index_x();
    let item = if i < input.len() { input.get(i) } else { 0 };
    let out = exclusive_sum::<MEMOIZE>(item);
    if let Some(slot) = output.mine() {
        slot.set(out);
    }
}

kernel! {
    /// `output` = the exclusive sums of `input` within each block of `BLOCK` elements,
    /// `BLOCK_SCAN_RAKING`. Launch `BLOCK` threads per block, `ScanRakingShared::BYTES` of shared memory.
    pub fn cub_block_scan_raking<'a>(input: Global<'a, u32>, output: Output<'a, u32>) {
        scan_tile::<false>(input, output)
    }
}

kernel! {
    /// As [`cub_block_scan_raking`], `BLOCK_SCAN_RAKING_MEMOIZE`.
    pub fn cub_block_scan_raking_memoize<'a>(input: Global<'a, u32>, output: Output<'a, u32>) {
        scan_tile::<true>(input, output)
    }
}

#[cfg(not(target_arch = "nvptx64"))]
fn run<K>(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked>
where
    K: for<'a> gpu_std::Kernel<Args<'a> = (Global<'a, u32>, Output<'a, u32>)>,
{
    let input = super::common::input_u32(n);
    let ib = dev.upload("input", &input)?;
    let mut ob = dev.filled("output", n, 0u32)?;
    let cfg = gpu_host::cover(n, BLOCK, u32::MAX, ScanRakingShared::BYTES);
    dev.launch::<K>(cfg, (ib.view(), ob.output()))?;
    let mut want = Vec::with_capacity(n);
    for c in input.chunks(BLOCK as usize) {
        let mut run = 0u32;
        for &x in c {
            want.push(run);
            run = run.wrapping_add(x);
        }
    }
    Ok(super::common::compare("output", &ob.read()?, &want))
}

/// `BLOCK_SCAN_RAKING` over `n` inputs.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    run::<cub_block_scan_raking>(dev, n)
}

/// `BLOCK_SCAN_RAKING_MEMOIZE` over `n` inputs.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check_memoize(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    run::<cub_block_scan_raking_memoize>(dev, n)
}
