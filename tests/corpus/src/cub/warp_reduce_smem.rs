//! `NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
//! cub/cub/warp/specializations/warp_reduce_smem.cuh (WarpReduceSmem::Reduce, ReduceStep)`: a warp
//! sum through a shared-memory array, one `__syncwarp` on each side of every step's read.
//!
//! Kept: the per-warp storage of `LOGICAL_WARP_THREADS + LOGICAL_WARP_THREADS / 2` elements, the five
//! steps (offsets 1 .. 16), each "store my partial at `reduce[lane]`, `__syncwarp`, add
//! `reduce[lane + offset]` if that lane is valid, `__syncwarp`", and the `valid_items` guard of
//! `Reduce<ALL_LANES_VALID = false>` (what `WarpReduce::Sum(input, valid_items)` calls). Changed:
//! specialised to `u64`, a logical warp of 32 lanes (CUB picks this specialisation for logical warps
//! that are not a power of two; with 32 lanes it runs the same steps), 128-thread blocks of four
//! warps, each with its own storage, as CUB's warp tests give one `TempStorage` per warp. The
//! segmented reductions (and the `flags` array they need) are left out. Threads past `n` take part
//! with 0; `valid_items = min(32, n - first element of the warp)`. Lane 0 of each warp writes the sum.
//! (The `ALL_LANES_VALID` path reads `reduce[32 .. 48]`, which nobody writes, in lanes whose result
//! is discarded: an uninitialised read the emulator would report, so the guarded path is ported.)
//!
//! Synchronisation, within each warp only (no storage is shared between warps, nothing crosses
//! blocks): at step `s`, lane `l` writes `reduce[l]` and then reads `reduce[l + 2^s]`, which lane
//! `l + 2^s` wrote. The first `__syncwarp` orders each write before the other lanes' reads of it
//! (without it, read-after-write race); the second orders every read of step `s` before the writes
//! of step `s + 1` to the same elements (without it, write-after-read race). All 32 lanes run every
//! step (the guard only skips the read), so both `__syncwarp(FULL)` are reached by the whole warp.
use gpu_std::shared::SharedSlice;
use gpu_std::thread::{block_idx, global_index_x, thread_idx};
use gpu_std::warp::{FULL_MASK, WARP_SIZE, lane_id, sync_warp};
use gpu_std::{Global, Output, PerWarp, kernel, shared_layout};

/// Threads per block.
pub const BLOCK: u32 = 128;
/// Warps per block.
const WARPS: usize = BLOCK as usize / 32;
/// `LOGICAL_WARP_THREADS`.
const LOGICAL_WARP_THREADS: usize = 32;
/// `log2(LOGICAL_WARP_THREADS)`.
const STEPS: u32 = 5;
/// `WARP_SMEM_ELEMENTS`: `LOGICAL_WARP_THREADS + HALF_WARP_THREADS`.
const WARP_SMEM_ELEMENTS: usize = LOGICAL_WARP_THREADS + LOGICAL_WARP_THREADS / 2;

shared_layout! {
    /// One `TempStorage::reduce` per warp.
    pub struct WarpReduceSmemShared { pub reduce: [u64; WARPS * WARP_SMEM_ELEMENTS] }
}

/// `WarpReduceSmem<u64, 32>::Reduce<false>(input, valid_items, plus)` on the warp's storage at `base`.
#[inline(always)]
fn reduce(reduce: SharedSlice<u64>, base: usize, mut input: u64, valid_items: i32) -> u64 {
    let lane = lane_id() as usize;
    let member_mask = FULL_MASK;
    let mut step = 0;
    while step < STEPS {
        let offset = 1usize << step;
        reduce.set(base + lane, input);
        sync_warp(member_mask);
        if ((lane + offset) as i32) < valid_items {
            let peer_addend = reduce.get(base + lane + offset);
            input = input.wrapping_add(peer_addend);
        }
        sync_warp(member_mask);
        step += 1;
    }
    input
}

kernel! {
    /// `sums[w]` = the sum of the 32 elements of warp `w` of the grid (fewer in the last). Launch
    /// `BLOCK` threads per block, `WarpReduceSmemShared::BYTES` of shared memory.
    pub fn cub_warp_reduce_smem<'a>(input: Global<'a, u64>, sums: Output<'a, u64, PerWarp>) {
        let s = WarpReduceSmemShared::view().reduce;
        let warp = thread_idx().x as usize / WARP_SIZE as usize;
        let i = global_index_x();
        let item = if i < input.len() { input.get(i) } else { 0 };
        let warp_first = block_idx().x as usize * BLOCK as usize + warp * LOGICAL_WARP_THREADS;
        let valid_items = input.len().saturating_sub(warp_first).min(LOGICAL_WARP_THREADS) as i32;
        let sum = reduce(s, warp * WARP_SMEM_ELEMENTS, item, valid_items);
        if let Some(slot) = sums.mine() {
            slot.set(sum);
        }
    }
}

/// One launch over `n` inputs, the per-warp sums compared with the CPU's.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    let input = super::common::input_u64(n);
    let ib = dev.upload("input", &input)?;
    let mut sb = dev.filled("sums", n.div_ceil(32), 0u64)?;
    let cfg = gpu_host::cover(n, BLOCK, u32::MAX, WarpReduceSmemShared::BYTES);
    dev.launch::<cub_warp_reduce_smem>(cfg, (ib.view(), sb.output()))?;
    let want: Vec<u64> = input.chunks(32).map(|c| c.iter().fold(0u64, |a, &b| a.wrapping_add(b))).collect();
    Ok(super::common::compare("sums", &sb.read()?, &want))
}
