//! `NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
//! cub/cub/warp/specializations/warp_scan_smem.cuh (WarpScanSmem::InclusiveScan, ScanStep, Update)`
//! with `cub/cub/warp/warp_scan.cuh (WarpScan::InclusiveSum, ExclusiveSum)`: a Kogge–Stone warp scan
//! through shared memory, with volatile accesses and `__syncwarp` around every step.
//!
//! Kept: the storage of 48 elements per warp, the identity written to `temp[lane]` first (a sum has
//! an identity, so `HAS_IDENTITY` scans need no `lane >= offset` guard: lanes below `offset` read the
//! identity from `temp[0 .. 16]`), the five steps "volatile store of my partial at `temp[16 + lane]`,
//! `__syncwarp`, volatile load of `temp[16 + lane - offset]`, add, `__syncwarp`", and `ExclusiveSum`
//! as CUB writes it: the same inclusive scan, then `Update` for an integer sum (`inclusive = 0 +
//! inclusive`, `exclusive = inclusive - input`, no memory). Changed: `u32`, a logical warp of 32
//! lanes (CUB picks this specialisation for logical warps that are not a power of two), 128-thread
//! blocks of four warps with a storage each. The kernel calls `InclusiveSum`, then `ExclusiveSum` on
//! the same storage, as a user of CUB may once a `__syncwarp` separates them (the last step's own
//! `__syncwarp` is that one). Threads past `n` scan 0s; outputs past `n` are not written.
//!
//! Synchronisation, within each warp: the identity stores (lane `l` writes `temp[l]`) are ordered
//! before step 0's reads of `temp[0 .. 16]` and before step 0's stores to `temp[16 ..]` (lanes 16..31
//! wrote their identity there) by the first `__syncwarp`; at each step, lane `l` writes `temp[16 + l]`
//! and then reads what lane `l - offset` wrote: the step's first `__syncwarp` orders the write before
//! that read, its second orders the read before the next step's write of the same element. The
//! volatile qualifiers add nothing the barriers do not: `__syncwarp` orders memory among the lanes
//! it names, and a volatile access is never a substitute for it (hence the redundant mutants).
use gpu_std::shared::SharedSlice;
use gpu_std::thread::{global_index_x, thread_idx};
use gpu_std::warp::{FULL_MASK, WARP_SIZE, lane_id, sync_warp};
use gpu_std::{Global, Output, kernel, shared_layout};

/// Threads per block.
pub const BLOCK: u32 = 128;
/// Warps per block.
const WARPS: usize = BLOCK as usize / 32;
/// `log2(LOGICAL_WARP_THREADS)`.
const STEPS: u32 = 5;
/// `HALF_WARP_THREADS`.
const HALF_WARP_THREADS: usize = 16;
/// `WARP_SMEM_ELEMENTS`.
const WARP_SMEM_ELEMENTS: usize = 32 + HALF_WARP_THREADS;

shared_layout! {
    /// One `TempStorage` per warp.
    pub struct WarpScanSmemShared { pub temp: [u32; WARPS * WARP_SMEM_ELEMENTS] }
}

/// `WarpScanSmem<u32, 32>::InclusiveScan(input, inclusive, plus)` on the warp's storage at `base`.
#[inline(always)]
fn inclusive_scan(temp: SharedSlice<u32>, base: usize, input: u32) -> u32 {
    let lane = lane_id() as usize;
    let member_mask = FULL_MASK;
    // The identity of `plus` below the partials.
    temp.set_volatile(base + lane, 0);
    sync_warp(member_mask);
    let mut partial = input;
    let mut step = 0;
    while step < STEPS {
        let offset = 1usize << step;
        temp.set_volatile(base + HALF_WARP_THREADS + lane, partial);
        sync_warp(member_mask);
        let addend = temp.get_volatile(base + HALF_WARP_THREADS + lane - offset);
        partial = addend.wrapping_add(partial);
        sync_warp(member_mask);
        step += 1;
    }
    partial
}

kernel! {
    /// `inclusive[i]` and `exclusive[i]`: the inclusive and exclusive sums of `input` within each warp
    /// of 32 elements. Launch `BLOCK` threads per block, `WarpScanSmemShared::BYTES` of shared memory.
    pub fn cub_warp_scan_smem<'a>(input: Global<'a, u32>, inclusive: Output<'a, u32>, exclusive: Output<'a, u32>) {
        let s = WarpScanSmemShared::view().temp;
        let base = thread_idx().x as usize / WARP_SIZE as usize * WARP_SMEM_ELEMENTS;
        let i = global_index_x();
        let item = if i < input.len() { input.get(i) } else { 0 };
        // WarpScan::InclusiveSum.
        let inc = inclusive_scan(s, base, item);
        // WarpScan::ExclusiveSum: ExclusiveScan(input, output, 0, plus) = InclusiveScan, then Update.
        let inc2 = 0u32.wrapping_add(inclusive_scan(s, base, item));
        let exc = inc2.wrapping_sub(item);
        if let Some(slot) = inclusive.mine() {
            slot.set(inc);
        }
        if let Some(slot) = exclusive.mine() {
            slot.set(exc);
        }
    }
}

/// One launch over `n` inputs; both scans compared with the CPU's, per warp of 32 elements.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    let input = super::common::input_u32(n);
    let ib = dev.upload("input", &input)?;
    let mut inc = dev.filled("inclusive", n, 0u32)?;
    let mut exc = dev.filled("exclusive", n, 0u32)?;
    let cfg = gpu_host::cover(n, BLOCK, u32::MAX, WarpScanSmemShared::BYTES);
    dev.launch::<cub_warp_scan_smem>(cfg, (ib.view(), inc.output(), exc.output()))?;
    let (mut want_inc, mut want_exc) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for c in input.chunks(32) {
        let mut run = 0u32;
        for &x in c {
            want_exc.push(run);
            run = run.wrapping_add(x);
            want_inc.push(run);
        }
    }
    if let Err(e) = super::common::compare("inclusive", &inc.read()?, &want_inc) {
        return Ok(Err(e));
    }
    Ok(super::common::compare("exclusive", &exc.read()?, &want_exc))
}
