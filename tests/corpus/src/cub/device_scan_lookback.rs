//! `NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f cub/cub/agent/single_pass_scan_operators.cuh
//! (ScanTileState<T, true>::InitializeStatus, SetPartial, SetInclusive, WaitForValid;
//! TilePrefixCallbackOp::lookback, ProcessWindow; delay, fixed_delay_constructor_t)` with
//! `cub/cub/agent/agent_scan.cuh (AgentScan::ConsumeTile, ConsumeRange, ScanFirstTile,
//! ScanSubsequentTile)`: the single-pass exclusive sum of `DeviceScan::ExclusiveSum`, by decoupled
//! look-back across blocks.
//!
//! Kept, for `u32` (`ScanTileState<unsigned, true>`, one status word per tile): the descriptor of a
//! tile is one 8-byte transaction word, the status (`OOB` 0, `INVALID` 99, `PARTIAL` 100, `INCLUSIVE`
//! 101) in its low half and the value in its high half; `TILE_STATUS_PADDING` (32) words of `OOB`
//! before tile 0's, so a window of 32 predecessors never leaves the array; an init kernel writes
//! every word (`InitializeStatus`, plain stores, before the scan launch); tile `blockIdx.x` (CUB takes
//! the block index, no ticket) loads its 512 items (`BLOCK_LOAD_TRANSPOSE`: striped loads,
//! `StripedToBlocked`, the last tile padded with its first item), `__syncthreads`, scans them
//! (`BLOCK_SCAN_WARP_SCANS` over 4 items per thread, see [`super::block_scan_warp_scans`]): tile 0
//! with initial value 0, publishing its aggregate as `INCLUSIVE` (unless it is the last tile); every
//! later tile with a `TilePrefixCallbackOp` run by warp 0: thread 0 publishes `PARTIAL` with the
//! tile's aggregate, lane `l` polls tile `tile - 1 - l` until no lane sees `INVALID` (`__any_sync`),
//! the warp sums the values up to the nearest `INCLUSIVE` (`TailSegmentedReduce`), and moves the
//! window back 32 tiles while no lane saw `INCLUSIVE` (`__all_sync`); thread 0 then publishes
//! `INCLUSIVE` with the tile's inclusive prefix. Then `__syncthreads`, `BLOCK_STORE_TRANSPOSE`
//! (`BlockedToStriped`, striped stores of the valid items). The load, store and scan storage are a
//! union (one shared array here, the scan's words aliasing the first elements of the exchange
//! buffer). The polls' back-off is CUB's default for 4-byte values (`fixed_delay_constructor_t<350,
//! 450>`): a `__threadfence_block` on grids under 500 blocks, `__nanosleep` on larger ones.
//!
//! Changed: CUB's `MemoryOrder::relaxed` (the default) stores and loads each descriptor with
//! `st.relaxed.gpu.v2.u32` / `ld.relaxed.gpu.v2.u32`; gpu-std has no relaxed access, so the port
//! uses a volatile 64-bit access (`st.volatile.global.b64` / `ld.volatile.global.b64`: strong,
//! ordering nothing, like relaxed, at system scope, and one access for the whole word; the PTX
//! memory model treats a vector access as one access per element, so CUB's `v2` word is single-copy
//! atomic by the hardware's 8-byte accesses, not by the model). 128 threads, 4 items per thread. The
//! wait is bounded: a warp that polls [`SPIN_LIMIT`] times (gpu-std's one spin bound, 2^22; the CUDA
//! file bounds at 2^20) without seeing every predecessor valid gives up, sets `error[0]` (an atomic
//! or) and stops looking back; the host checks the word.
//!
//! Synchronisation. Across blocks: a status word is written by one thread of its tile (init kernel
//! before the launch, then `PARTIAL`, then `INCLUSIVE`) and read by warp 0 of later tiles; every
//! write and every poll is a strong (relaxed) access, so they do not race; the value travels in the
//! same word as its status, so no fence is needed to make a reader that sees a status see its value,
//! and no other data crosses blocks (a block's outputs depend only on the prefix it read). The
//! `__threadfence_block` of the back-off orders nothing another block observes: it is CUB's way of
//! keeping the compiler from hoisting the poll out of the loop on small grids, which a volatile load
//! already prevents (its mutant is argued redundant). Within a block: `StripedToBlocked` and
//! `BlockedToStriped` each order their stores before the other threads' loads; the barrier after the
//! load orders the exchange's loads of `buff[0 .. 8]` before the scan's stores of its words there
//! (write-after-read), and the one before the store orders every load of `block_prefix` before the
//! exchange's stores over it; the scan's two barriers order the warp totals and the block prefix (as
//! in [`super::block_scan_warp_scans`]).
use super::warp_shfl::{scan_sum_u32, tail_segmented_sum_u32};
use gpu_std::block::sync_threads;
use gpu_std::fence::{nanosleep, threadfence_block};
use gpu_std::shared::SharedSlice;
use gpu_std::spin::SPIN_LIMIT;
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE, lane_id};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// Threads per block.
pub const BLOCK: u32 = 128;
/// Items per thread.
pub const ITEMS: usize = 4;
/// `TILE_ITEMS`.
pub const TILE_ITEMS: usize = BLOCK as usize * ITEMS;
/// `TILE_STATUS_PADDING`.
pub const TILE_STATUS_PADDING: usize = 32;
/// `ScanTileStatus`.
const SCAN_TILE_OOB: u32 = 0;
const SCAN_TILE_INVALID: u32 = 99;
const SCAN_TILE_PARTIAL: u32 = 100;
const SCAN_TILE_INCLUSIVE: u32 = 101;
/// `WARPS`.
const WARPS: usize = BLOCK as usize / 32;
/// Offsets of the scan storage in the union (`scan_storage.scan`, then `scan_storage.prefix`).
const WARP_AGGREGATES: usize = 0;
const BLOCK_PREFIX: usize = WARPS;
const EXCLUSIVE_PREFIX: usize = WARPS + 1;
const INCLUSIVE_PREFIX: usize = WARPS + 2;
const PREFIX_BLOCK_AGGREGATE: usize = WARPS + 3;

shared_layout! {
    /// `AgentScan::_TempStorage`: the union of the load and store exchange buffer and the scan storage.
    pub struct AgentScanShared { pub smem: [u32; TILE_ITEMS] }
}

/// A tile descriptor as its transaction word: status in the low half, value in the high half.
#[inline(always)]
fn descriptor(status: u32, value: u32) -> u64 {
    status as u64 | (value as u64) << 32
}

kernel! {
    /// `DeviceScanInitKernel`: `ScanTileState::InitializeStatus(num_tiles)`. Launch
    /// `num_tiles.div_ceil(128)` blocks of 128 threads (at least one).
    pub fn cub_scan_init<'a>(tile_status: GlobalMut<'a, u64>, num_tiles: u32) {
        let tile_idx = block_idx().x * block_dim().x + thread_idx().x;
        if tile_idx < num_tiles {
            tile_status.set(TILE_STATUS_PADDING + tile_idx as usize, descriptor(SCAN_TILE_INVALID, 0));
        }
        if block_idx().x == 0 && (thread_idx().x as usize) < TILE_STATUS_PADDING {
            tile_status.set(thread_idx().x as usize, descriptor(SCAN_TILE_OOB, 0));
        }
    }
}

/// `detail::delay<DELAY, 500>()`.
#[inline(always)]
fn delay(ns: u32) {
    if grid_dim().x < 500 {
        threadfence_block();
    } else {
        nanosleep(ns);
    }
}

/// `ScanTileState::WaitForValid` then `ProcessWindow`'s tail-segmented reduction: `(status, window
/// aggregate, gave up)`.
#[inline(always)]
fn process_window(tile_status: GlobalMut<'_, u64>, predecessor_idx: i32) -> (u32, u32, bool) {
    let at = (TILE_STATUS_PADDING as i32 + predecessor_idx) as usize;
    let mut word = tile_status.get_volatile(at);
    let mut polls = 0u32;
    let mut gave_up = false;
    while warp::any(FULL_MASK, word as u32 == SCAN_TILE_INVALID) {
        polls += 1;
        if polls >= SPIN_LIMIT {
            gave_up = true;
            break;
        }
        // delay_or_prevent_hoisting<350>.
        delay(350);
        word = tile_status.get_volatile(at);
    }
    let (status, value) = (word as u32, (word >> 32) as u32);
    let tail_flag = status == SCAN_TILE_INCLUSIVE;
    (status, tail_segmented_sum_u32(value, tail_flag), gave_up)
}

/// `TilePrefixCallbackOp::lookback(block_aggregate)`, by warp 0.
#[inline(always)]
fn lookback(
    smem: SharedSlice<u32>,
    tile_status: GlobalMut<'_, u64>,
    error: GlobalMut<'_, u32>,
    tile_idx: i32,
    block_aggregate: u32,
) -> u32 {
    let tid = thread_idx().x as i32;
    if tid == 0 {
        smem.set(PREFIX_BLOCK_AGGREGATE, block_aggregate);
        // SetPartial.
        tile_status
            .set_volatile(TILE_STATUS_PADDING + tile_idx as usize, descriptor(SCAN_TILE_PARTIAL, block_aggregate));
    }
    let mut predecessor_idx = tile_idx - tid - 1;
    // DelayConstructorT construct_delay(tile_idx): delay<450>().
    delay(450);
    let (mut predecessor_status, window_aggregate, mut gave_up) = process_window(tile_status, predecessor_idx);
    let mut exclusive_prefix = window_aggregate;
    while !gave_up && warp::all(FULL_MASK, predecessor_status != SCAN_TILE_INCLUSIVE) {
        predecessor_idx -= WARP_SIZE as i32;
        let (status, window_aggregate, g) = process_window(tile_status, predecessor_idx);
        predecessor_status = status;
        gave_up = g;
        exclusive_prefix = window_aggregate.wrapping_add(exclusive_prefix);
    }
    if gave_up && tid == 0 {
        error.atomic(0).fetch_or(1);
    }
    if tid == 0 {
        let inclusive_prefix = exclusive_prefix.wrapping_add(block_aggregate);
        // SetInclusive.
        tile_status
            .set_volatile(TILE_STATUS_PADDING + tile_idx as usize, descriptor(SCAN_TILE_INCLUSIVE, inclusive_prefix));
        smem.set(EXCLUSIVE_PREFIX, exclusive_prefix);
        smem.set(INCLUSIVE_PREFIX, inclusive_prefix);
    }
    exclusive_prefix
}

/// `BlockScanWarpScans::ComputeWarpPrefix`: `(warp_prefix, block_aggregate)`.
#[inline(always)]
fn compute_warp_prefix(smem: SharedSlice<u32>, warp_aggregate: u32) -> (u32, u32) {
    let warp_id = (thread_idx().x / WARP_SIZE) as usize;
    if lane_id() == WARP_SIZE - 1 {
        smem.set(WARP_AGGREGATES + warp_id, warp_aggregate);
    }
    sync_threads();
    let mut warp_prefix = 0u32;
    let mut block_aggregate = smem.get(WARP_AGGREGATES);
    let mut warp = 1;
    while warp < WARPS {
        if warp_id == warp {
            warp_prefix = block_aggregate;
        }
        block_aggregate = block_aggregate.wrapping_add(smem.get(WARP_AGGREGATES + warp));
        warp += 1;
    }
    (warp_prefix, block_aggregate)
}

kernel! {
    /// `DeviceScanKernel` for an exclusive sum: `output[i] = input[0] + … + input[i - 1]`. Launch
    /// `input.len().div_ceil(TILE_ITEMS)` blocks of `BLOCK` threads, `AgentScanShared::BYTES` of shared
    /// memory, after `cub_scan_init` on `tile_status` (`TILE_STATUS_PADDING + tiles` words) and with
    /// `error[0] = 0`.
    pub fn cub_device_scan<'a>(
        input: Global<'a, u32>,
        output: GlobalMut<'a, u32>,
        tile_status: GlobalMut<'a, u64>,
        error: GlobalMut<'a, u32>,
    ) {
        let smem = AgentScanShared::view().smem;
        let linear_tid = thread_idx().x as usize;
        let warp_id = (linear_tid / WARP_SIZE as usize) as u32;
        let lane_id = lane_id();
        // ConsumeRange.
        let tile_idx = block_idx().x as i32;
        let tile_offset = TILE_ITEMS * tile_idx as usize;
        let num_remaining = input.len() - tile_offset;
        let is_last_tile = num_remaining <= TILE_ITEMS;
        // BlockLoad (BLOCK_LOAD_TRANSPOSE): striped loads, the last tile padded with its first item.
        let mut items = [0u32; ITEMS];
        let oob_default = input.get(tile_offset);
        let mut i = 0;
        while i < ITEMS {
            let k = i * BLOCK as usize + linear_tid;
            items[i] = if !is_last_tile || k < num_remaining { input.get(tile_offset + k) } else { oob_default };
            i += 1;
        }
        // StripedToBlocked.
        let mut i = 0;
        while i < ITEMS {
            smem.set(i * BLOCK as usize + linear_tid, items[i]);
            i += 1;
        }
        sync_threads();
        let mut i = 0;
        while i < ITEMS {
            items[i] = smem.get(linear_tid * ITEMS + i);
            i += 1;
        }
        sync_threads();
        // BlockScan::ExclusiveScan over ITEMS per thread: ThreadReduce, the block scan of the thread
        // partials, ThreadScanExclusive.
        let mut thread_prefix = items[0];
        let mut i = 1;
        while i < ITEMS {
            thread_prefix = thread_prefix.wrapping_add(items[i]);
            i += 1;
        }
        let (inclusive_output, mut exclusive_output) = scan_sum_u32(thread_prefix);
        if tile_idx == 0 {
            // ScanFirstTile: ExclusiveScan(thread_prefix, thread_prefix, 0, plus, block_aggregate).
            let initial_value = 0u32;
            let (mut warp_prefix, block_aggregate) = compute_warp_prefix(smem, inclusive_output);
            warp_prefix = initial_value.wrapping_add(warp_prefix);
            if warp_id == 0 {
                warp_prefix = initial_value;
            }
            exclusive_output = warp_prefix.wrapping_add(exclusive_output);
            if lane_id == 0 {
                exclusive_output = warp_prefix;
            }
            let block_aggregate = initial_value.wrapping_add(block_aggregate);
            if !is_last_tile && linear_tid == 0 {
                // SetInclusive(0, block_aggregate).
                tile_status.set_volatile(TILE_STATUS_PADDING, descriptor(SCAN_TILE_INCLUSIVE, block_aggregate));
            }
        } else {
            // ScanSubsequentTile: ExclusiveScan(thread_prefix, thread_prefix, plus, prefix_op).
            let (warp_prefix, block_aggregate) = compute_warp_prefix(smem, inclusive_output);
            if warp_id != 0 {
                exclusive_output = warp_prefix.wrapping_add(exclusive_output);
                if lane_id == 0 {
                    exclusive_output = warp_prefix;
                }
            }
            if warp_id == 0 {
                let block_prefix = lookback(smem, tile_status, error, tile_idx, block_aggregate);
                if lane_id == 0 {
                    smem.set(BLOCK_PREFIX, block_prefix);
                    exclusive_output = block_prefix;
                }
            }
            sync_threads();
            let block_prefix = smem.get(BLOCK_PREFIX);
            if linear_tid > 0 {
                exclusive_output = block_prefix.wrapping_add(exclusive_output);
            }
        }
        thread_prefix = exclusive_output;
        // ThreadScanExclusive(items, items, plus, thread_prefix).
        let mut inclusive = thread_prefix.wrapping_add(items[0]);
        items[0] = thread_prefix;
        let mut exclusive = inclusive;
        let mut i = 1;
        while i < ITEMS {
            inclusive = exclusive.wrapping_add(items[i]);
            items[i] = exclusive;
            exclusive = inclusive;
            i += 1;
        }
        sync_threads();
        // BlockStore (BLOCK_STORE_TRANSPOSE): BlockedToStriped, then striped stores of the valid items.
        let mut i = 0;
        while i < ITEMS {
            smem.set(linear_tid * ITEMS + i, items[i]);
            i += 1;
        }
        sync_threads();
        let mut i = 0;
        while i < ITEMS {
            let k = i * BLOCK as usize + linear_tid;
            let v = smem.get(k);
            if !is_last_tile || k < num_remaining {
                output.set(tile_offset + k, v);
            }
            i += 1;
        }
    }
}

/// Init and scan launches over `n` inputs; the exclusive sum compared with the CPU's.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    use gpu_host::Launch;
    let input = super::common::input_u32(n.max(1));
    let tiles = input.len().div_ceil(TILE_ITEMS);
    let ib = dev.upload("input", &input)?;
    let ob = dev.filled("output", input.len(), 0u32)?;
    let sb = dev.filled("tile_status", TILE_STATUS_PADDING + tiles, u64::MAX)?;
    let eb = dev.filled("error", 1, 0u32)?;
    dev.launch::<cub_scan_init>(
        Launch::linear(tiles.div_ceil(128).max(1) as u32, 128, 0),
        (sb.view_mut(), tiles as u32),
    )?;
    dev.launch::<cub_device_scan>(
        Launch::linear(tiles as u32, BLOCK, AgentScanShared::BYTES),
        (ib.view(), ob.view_mut(), sb.view_mut(), eb.view_mut()),
    )?;
    if eb.read()?[0] != 0 {
        return Ok(Err(format!("a tile gave up waiting for its predecessors after {SPIN_LIMIT} polls")));
    }
    let mut want = Vec::with_capacity(input.len());
    let mut run = 0u32;
    for &x in &input {
        want.push(run);
        run = run.wrapping_add(x);
    }
    Ok(super::common::compare("output", &ob.read()?, &want))
}
