//! Twins and tuning variants of the single-pass scan ([`crate::scan`]), for `u32`: the kernels that
//! show what each of its synchronisation choices prevents (a status word published without a release
//! or read without an acquire, tiles taken by `blockIdx.x`), the shapes and sleeps it was tuned
//! against, and the three-kernel reduce-then-scan it replaces. None is launched by gpu-algos' calls;
//! the chapter's runner and the bench launch them.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, thread_idx};
use gpu_std::warp::{self, WARP_SIZE};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

use crate::lookback::wait::{Access, Wait};
#[cfg(doc)]
use crate::scan::scan_inclusive_u32;
use crate::scan::{CHUNKS, Carry, INCLUSIVE, WAIT, scan_tile};
use crate::warp::inclusive_scan;

kernel! {
    /// Tuning variant of [`scan_inclusive_u32`]: 16 elements per thread (tiles of `blockDim.x * 16`, so
    /// [`tiles_of`]`(n, threads, 16)` blocks); fewer registers, more blocks per SM. Otherwise launch as
    /// [`scan_inclusive_u32`]. The bench measures it against the launchers' shape.
    pub fn scan_items16_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, 4>(input, Some(out), Carry::LookBack(state, epoch, Access::Strong, WAIT), INCLUSIVE)
    }
}
kernel! {
    /// Tuning variant of [`scan_inclusive_u32`]: 24 elements per thread (tiles of `blockDim.x * 24`, so
    /// [`tiles_of`]`(n, threads, 24)` blocks); launch as [`scan_items16_u32`].
    pub fn scan_items24_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, 6>(input, Some(out), Carry::LookBack(state, epoch, Access::Strong, WAIT), INCLUSIVE)
    }
}
kernel! {
    /// Tuning variant of [`scan_inclusive_u32`]: the look-back sleeps `pre_ns` before its first poll and `poll_ns`
    /// between polls, on any grid (the launchers' kernel: [`PRE_SLEEP_NS`], [`POLL_SLEEP_NS`], from
    /// [`SLEEP_MIN_TILES`] tiles on). Launch as [`scan_inclusive_u32`].
    pub fn scan_sleeps_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32, pre_ns: u32, poll_ns: u32) {
        let wait = Wait { pre_ns, poll_ns, min_tiles: 0 };
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::LookBack(state, epoch, Access::Strong, wait), INCLUSIVE)
    }
}
kernel! {
    /// RACY variant of [`scan_inclusive_u32`]: publishes the status word with a plain store, no release.
    pub fn scan_no_release_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::LookBack(state, epoch, Access::PlainStore, WAIT), INCLUSIVE)
    }
}
kernel! {
    /// RACY variant of [`scan_inclusive_u32`]: reads the status words with plain loads, no acquire.
    pub fn scan_no_acquire_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::LookBack(state, epoch, Access::PlainLoad, WAIT), INCLUSIVE)
    }
}
kernel! {
    /// BROKEN variant of [`scan_inclusive_u32`]: tile `blockIdx.x` instead of a ticket. A resident block may wait for
    /// a tile whose block has not started: it hangs when fewer blocks are resident than the grid has.
    /// Never launched on a GPU.
    pub fn scan_blockidx_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::LookBackBlockIdx(state, epoch), INCLUSIVE)
    }
}
kernel! {
    /// Reduce-then-scan, pass 1: `sums[b]` = the sum of tile `b`. Launch: as [`scan_inclusive_u32`] (tiles by
    /// `blockIdx`), `sums` holds `tiles(n, threads)` elements.
    pub fn scan_reduce_u32<'a>(input: Global<'a, u32>, sums: GlobalMut<'a, u32>) {
        scan_tile::<_, CHUNKS>(input, None, Carry::ReduceOnly(sums), INCLUSIVE)
    }
}
kernel! {
    /// Reduce-then-scan, pass 2: `sums` becomes its exclusive prefix sum (wrapping). Launch: 1 block of
    /// `SPINE_BLOCK` threads, `SPINE_SHARED_BYTES`.
    pub fn scan_spine_u32<'a>(sums: GlobalMut<'a, u32>) {
        spine(sums)
    }
}
kernel! {
    /// Reduce-then-scan, pass 3: tile `b` scanned from the prefix `sums[b]`. Launch as
    /// [`scan_reduce_u32`].
    pub fn scan_downsweep_u32<'a>(input: Global<'a, u32>, sums: GlobalMut<'a, u32>, out: GlobalMut<'a, u32>) {
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::Given(sums), INCLUSIVE)
    }
}

/// Threads of the spine kernel.
pub const SPINE_BLOCK: u32 = 1024;
shared_layout! {
    /// Warp totals of the spine and the carry between its rounds.
    pub struct SpineShared { pub warps: [u32; 32], pub carry: [u32; 1] }
}
/// Dynamic shared memory of the spine kernel.
pub const SPINE_SHARED_BYTES: usize = SpineShared::BYTES;

/// Exclusive scan of `sums` in place by one block: rounds of `blockDim.x` consecutive elements (one
/// per thread, coalesced), a block scan per round, a carry between rounds.
#[inline(always)]
fn spine(sums: GlobalMut<u32>) {
    let sh = SpineShared::view();
    let t = thread_idx().x as usize;
    let (lane, w) = (warp::lane_id(), warp::warp_id());
    let threads = block_dim().x as usize;
    let nwarps = block_dim().x / WARP_SIZE;
    if t == 0 {
        sh.carry.set(0, 0);
    }
    let mut base = 0;
    while base < sums.len() {
        let i = base + t;
        let x = if i < sums.len() { sums.get(i) } else { 0 };
        let inclusive = inclusive_scan(x, u32::wrapping_add);
        if lane == WARP_SIZE - 1 {
            sh.warps.set(w as usize, inclusive);
        }
        sync_threads();
        if w == 0 {
            let total = if lane < nwarps { sh.warps.get(lane as usize) } else { 0 };
            let incl = inclusive_scan(total, u32::wrapping_add);
            if lane < nwarps {
                sh.warps.set(lane as usize, incl.wrapping_sub(total));
            }
        }
        sync_threads();
        let carry = sh.carry.get(0);
        if i < sums.len() {
            sums.set(i, carry.wrapping_add(sh.warps.get(w as usize)).wrapping_add(inclusive).wrapping_sub(x));
        }
        sync_threads();
        if t == threads - 1 {
            sh.carry.set(0, carry.wrapping_add(sh.warps.get(w as usize)).wrapping_add(inclusive));
        }
        sync_threads();
        base += threads;
    }
}
