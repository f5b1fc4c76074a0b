//! `NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
//! cub/cub/block/specializations/block_scan_warp_scans.cuh (BlockScanWarpScans::ExclusiveScan with a
//! BlockPrefixCallbackOp, ComputeWarpPrefix, ApplyWarpAggregates)` with `cub/cub/block/block_scan.cuh
//! (BlockScan::ExclusiveSum(input, output, block_prefix_callback_op))`: `BLOCK_SCAN_WARP_SCANS`, as a
//! block scans a run of tiles, carrying the running total in a prefix callback (the usage CUB's
//! documentation and tests show for `BlockPrefixCallbackOp`).
//!
//! Kept: each warp's `WarpScanShfl::Scan` (inclusive by `shfl.sync.up`, exclusive `= inclusive -
//! input`, [`super::warp_shfl`]); `ComputeWarpPrefix`: lane 31 of each warp stores the warp's total in
//! `warp_aggregates[warp]`, `__syncthreads`, every thread adds the totals of the warps before its own
//! (`ApplyWarpAggregates`, unrolled over warps 1..4) and gets the block's aggregate; warps other
//! than 0 add their prefix (lane 0 takes it as its output); then warp 0 calls the callback with the
//! block aggregate, lane 0 stores the returned prefix in `block_prefix` (and takes it as its output),
//! `__syncthreads`, every thread but 0 adds `block_prefix`. The callback is CUB's test functor: a
//! running total, returned before the tile's aggregate is added (every lane of warp 0 keeps its own
//! copy, the same). Changed: `u32`, 128 threads, one item per thread, `TILES` consecutive tiles per
//! block (the block's segment is scanned from 0), items past `n` are 0 and are not stored.
//!
//! Synchronisation (block only; each block's segment is its own): the first barrier orders the four
//! lane-31 stores of `warp_aggregates` before every thread's loads of them; the second orders lane
//! 0's store of `block_prefix` before every thread's load. Across tiles the storage is reused: the
//! loads of `warp_aggregates` of tile `t` precede the second barrier of tile `t`, and the stores of
//! tile `t + 1` follow it; the load of `block_prefix` of tile `t` precedes the first barrier of tile
//! `t + 1`, and the store of tile `t + 1` follows it. So CUB's two barriers also order every reuse,
//! with no barrier between tiles.
use super::warp_shfl::scan_sum_u32;
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_idx, thread_idx};
use gpu_std::warp::{WARP_SIZE, lane_id};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// Threads per block.
pub const BLOCK: u32 = 128;
/// Tiles each block scans.
pub const TILES: usize = 2;
/// `WARPS`.
const WARPS: usize = BLOCK as usize / 32;

shared_layout! {
    /// `_TempStorage`: `warp_aggregates` and `block_prefix` (`warp_scan` is empty for shuffles).
    pub struct WarpScansShared { pub warp_aggregates: [u32; WARPS], pub block_prefix: [u32; 1] }
}

/// CUB's test `BlockPrefixCallbackOp`: returns the running total, then adds the tile's aggregate.
struct RunningPrefix {
    running_total: u32,
}

impl RunningPrefix {
    fn call(&mut self, block_aggregate: u32) -> u32 {
        let old_prefix = self.running_total;
        self.running_total = self.running_total.wrapping_add(block_aggregate);
        old_prefix
    }
}

kernel! {
    /// `output` = the exclusive sums of `input` within each block's segment of `TILES * BLOCK`
    /// elements. Launch `BLOCK` threads per block, `WarpScansShared::BYTES` of shared memory,
    /// `n.div_ceil(TILES * BLOCK)` blocks.
    pub fn cub_block_scan_warp_scans<'a>(input: Global<'a, u32>, output: GlobalMut<'a, u32>) {
        let shared = WarpScansShared::view();
        let linear_tid = thread_idx().x;
        let warp_id = (linear_tid / WARP_SIZE) as usize;
        let lane_id = lane_id();
        let mut prefix_op = RunningPrefix { running_total: 0 };
        let mut tile = 0;
        while tile < TILES {
            let i = (block_idx().x as usize * TILES + tile) * BLOCK as usize + linear_tid as usize;
            let input_item = if i < input.len() { input.get(i) } else { 0 };
            // ExclusiveScan(input, exclusive_output, plus, block_aggregate).
            let (inclusive_output, mut exclusive_output) = scan_sum_u32(input_item);
            // ComputeWarpPrefix.
            if lane_id == WARP_SIZE - 1 {
                shared.warp_aggregates.set(warp_id, inclusive_output);
            }
            sync_threads();
            let mut warp_prefix = 0u32;
            let mut block_aggregate = shared.warp_aggregates.get(0);
            let mut warp = 1;
            while warp < WARPS {
                if warp_id == warp {
                    warp_prefix = block_aggregate;
                }
                let addend = shared.warp_aggregates.get(warp);
                block_aggregate = block_aggregate.wrapping_add(addend);
                warp += 1;
            }
            if warp_id != 0 {
                exclusive_output = warp_prefix.wrapping_add(exclusive_output);
                if lane_id == 0 {
                    exclusive_output = warp_prefix;
                }
            }
            // The prefix callback, in warp 0.
            if warp_id == 0 {
                let block_prefix = prefix_op.call(block_aggregate);
                if lane_id == 0 {
                    shared.block_prefix.set(0, block_prefix);
                    exclusive_output = block_prefix;
                }
            }
            sync_threads();
            let block_prefix = shared.block_prefix.get(0);
            if linear_tid > 0 {
                exclusive_output = block_prefix.wrapping_add(exclusive_output);
            }
            // Each thread stores its own element.
            if i < output.len() {
                output.set(i, exclusive_output);
            }
            tile += 1;
        }
    }
}

/// One launch over `n` inputs; the exclusive sums compared with the CPU's, per block segment.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    let input = super::common::input_u32(n);
    let ib = dev.upload("input", &input)?;
    let ob = dev.filled("output", n, 0u32)?;
    let seg = TILES * BLOCK as usize;
    let blocks = n.div_ceil(seg).max(1) as u32;
    let cfg = gpu_host::Launch::linear(blocks, BLOCK, WarpScansShared::BYTES);
    dev.launch::<cub_block_scan_warp_scans>(cfg, (ib.view(), ob.view_mut()))?;
    let mut want = Vec::with_capacity(n);
    for c in input.chunks(seg) {
        let mut run = 0u32;
        for &x in c {
            want.push(run);
            run = run.wrapping_add(x);
        }
    }
    Ok(super::common::compare("output", &ob.read()?, &want))
}
