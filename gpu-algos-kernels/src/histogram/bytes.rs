//! A 256-bin byte histogram at the memory's bandwidth (the chapter's privatised histogram, optimised).
//!
//! The chapter's version gives each block one set of 256 shared bins. With random bytes, the 32 lanes
//! of a warp hit random bins: several land in one of the 32 shared-memory banks and are serialised,
//! and when many bytes are equal, lanes contend for one address. Here each block keeps **one column of
//! bins per lane**: `counts[bin * 32 + lane]`, 256 x 32 counters (32 KiB). Lane `l` only touches
//! column `l`, which lies in bank `l` whatever the bin, so every warp-wide update is free of bank
//! conflicts and same-address contention, on any input: uniform, skewed, or all one byte. Warps of
//! a block share the columns through shared-memory atomic adds (`red.shared.add.u32`, whose old value
//! is not needed).
//!
//! Data is read as 16-byte vectors through the read-only data cache (`ld.global.nc`; the kernel never
//! writes it), four per thread in flight ([`LOADS`], one bounds check for the four), in a grid-stride
//! loop. At the end each
//! warp adds the 32 columns of its bins with a butterfly shuffle and adds the totals to the global bins
//! (`red.global.add.u32`), one per non-empty bin and block, each block starting at a different bin.
//!
//! Decision procedure (§5.7): many threads update one counter, so every update is atomic; the counters
//! are zeroed, filled and read by different threads, so barriers separate the three phases; blocks meet
//! only through global atomics. Integer adds commute: the bins are exact and deterministic.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, block_idx, global_index_x, grid_stride_x, thread_idx};
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

use super::ends::count_ends;

/// Bins: one per byte value.
pub const NUM_BINS: usize = 256;
/// Threads per block (a multiple of 32).
pub const BLOCK: u32 = 1024;
/// Blocks per SM the launcher asks for. One block of 1024 threads per SM measured fastest on an H200
/// at 2^28 bytes and within 3% of two at 2^30: half the SM's threads already keep the memory busy,
/// and each extra block adds its own 32 KiB of counters to zero and merge.
pub const BLOCKS_PER_SM: u32 = 1;
/// Fewest input bytes per block the launcher aims for: each block zeroes and merges 32 KiB of
/// counters, worth it only over enough bytes.
pub const MIN_BLOCK_BYTES: usize = 64 * 1024;
/// Small inputs get more blocks than `MIN_BLOCK_BYTES` gives, up to [`SMALL_GRID`]: one per
/// `SMALL_BLOCK_BYTES`. From 32 KiB to 256 KiB a block then reads one or two vectors per thread instead
/// of up to sixteen, and waits for the memory once or twice: 0.85–0.95x of CUB's time became
/// 1.0–1.06x on an H200 (GPU time with the L2 flushed). With 32 or more blocks the merges of their
/// counters into the same 256 bins cost more than the reading they share.
pub const SMALL_BLOCK_BYTES: usize = 16 * 1024;
/// Most blocks the small-input rule asks for.
pub const SMALL_GRID: usize = 16;

/// The grid for `n` bytes (the launcher runs this kernel above
/// [`small::MAX_BYTES`](super::small::MAX_BYTES), `histogram_bytes_small` below; the rule
/// for small inputs is for a direct use): `ceil(n / MIN_BLOCK_BYTES)` blocks, or for small inputs
/// `ceil(n / SMALL_BLOCK_BYTES)` up to `SMALL_GRID` when that is more; at least 1, at most
/// `BLOCKS_PER_SM` per SM (and `resident`, what fits).
pub fn grid(n: usize, sms: u32, resident: u32) -> u32 {
    let full = (sms * BLOCKS_PER_SM).min(resident).max(1);
    let small = n.div_ceil(SMALL_BLOCK_BYTES).min(SMALL_GRID);
    n.div_ceil(MIN_BLOCK_BYTES).max(small).clamp(1, full as usize) as u32
}
shared_layout! {
    /// The block's counters: one column of `NUM_BINS` bins per lane, `lanes[bin * 32 + lane]`.
    pub struct Counts {
        pub lanes: [u32; NUM_BINS * 32],
    }
}
/// 16-byte loads a thread issues together in its grid-stride loop (after one bounds check).
pub const LOADS: usize = 4;
/// Dynamic shared memory per block: 32 KiB.
pub const SHARED_BYTES: usize = Counts::BYTES;

kernel! {
    /// `hist[b] += count of b in data` for every byte value b (hist zeroed by the host; 256 bins).
    /// Launch: `BLOCK` threads, `SHARED_BYTES`, any 1-D grid.
    pub fn histogram_bytes<'a>(data: Global<'a, u8>, hist: GlobalMut<'a, u32>) {
        let counts = Counts::view().lanes;
        let (t, threads) = (thread_idx().x as usize, block_dim().x as usize);
        let mut k = t;
        while k < counts.len() {
            counts.set(k, 0);
            k += threads;
        }
        sync_threads();
        let lane = (warp::lane_id() % WARP_SIZE) as usize;
        let count = |byte: u8| counts.atomic(byte as usize * 32 + lane).add(1);
        let split = data.split_vectors();
        let (nv, stride) = (split.body.len(), grid_stride_x());
        let mut i = global_index_x();
        while i + (LOADS - 1) * stride < nv {
            let v: [[u8; 16]; LOADS] = split.body.get_strided_nc(i, stride);
            v.into_iter().for_each(|v| v.into_iter().for_each(count));
            i += LOADS * stride;
        }
        while i < nv {
            split.body.get_nc(i).into_iter().for_each(count);
            i += stride;
        }
        count_ends(&split, count);
        sync_threads();
        // Blocks start their merges at different bins (block b at bin 32 * b mod 256), so that blocks
        // finishing together do not all add to the same 32 global bins at once.
        let first = (block_idx().x as usize * 32) % NUM_BINS;
        let mut k = warp::warp_id() as usize;
        while k < NUM_BINS {
            let bin = (first + k) % NUM_BINS;
            let mut c = counts.get(bin * 32 + lane);
            let mut offset = WARP_SIZE / 2;
            while offset > 0 {
                c += warp::shfl_xor(FULL_MASK, c, offset);
                offset >>= 1;
            }
            if lane == 0 && c > 0 {
                hist.atomic(bin).add(c);
            }
            k += threads / 32;
        }
    }
}
