//! The byte histogram for small inputs: the launcher's choice up to [`MAX_BYTES`], where
//! [`histogram_bytes`](super::bytes) spends more on its 32 KiB of counters per block than on
//! the bytes.
//!
//! The chapter's privatised histogram again, with 16-byte loads: each block of [`BLOCK`] threads keeps
//! one set of 256 shared bins (1 KiB, cheap to zero and to merge), counts into them with
//! shared-memory atomic adds (`red.shared.add.u32`), and adds its non-zero bins to the global ones.
//! Cheap blocks let the launcher spread a small input over many of them ([`grid`]: one block per
//! 4 KiB up to 1 MiB, one per 16 KiB above), so that many SMs read it at once. Lanes that count the
//! same byte contend for one counter (all of them, for an input of one repeated byte); at these
//! sizes that cost measured less than the column layout's zeroing and merging. On an H200, GPU time
//! with the L2 flushed, 2^10 … 2^23 bytes: 1.04–1.57x CUB's time on uniform, one-bin and Zipf bytes
//! (`histogram_bytes` 0.76–1.09x in the same sweep); eight sets of bins, one per warp, measured 0.97–1.32x in the run
//! that chose one. At 2^24 it measured 0.88–0.92x on uniform and Zipf bytes, no better than
//! `histogram_bytes`, hence [`MAX_BYTES`].
//!
//! Decision procedure (§5.7): many threads update one counter, so every update is atomic; the counters
//! are zeroed, filled and read by different threads, so barriers separate the three phases; blocks meet
//! only through global atomics. Integer adds commute: the bins are exact and deterministic.
use super::bytes::NUM_BINS;
use super::ends::count_ends;
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, global_index_x, grid_stride_x, thread_idx};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// Threads per block.
pub const BLOCK: u32 = 256;
/// Largest input the launcher gives this kernel; above, `histogram_bytes`.
pub const MAX_BYTES: usize = 1 << 23;
/// Input bytes per block up to 1 MiB: one 16-byte vector per thread.
pub const SMALL_BLOCK_BYTES: usize = 4 * 1024;
/// Input bytes per block from 1 MiB to [`MAX_BYTES`]: four vectors per thread (one block per 4 KiB
/// measured 0.93–0.95x CUB at 2 MiB on uniform bytes, one per 16 KiB 1.06–1.08x).
pub const BLOCK_BYTES: usize = 16 * 1024;
/// Most blocks per SM the launcher asks for.
pub const BLOCKS_PER_SM: u32 = 8;

/// The launcher's grid for `n` bytes on a device of `sms` SMs, or `None` above [`MAX_BYTES`] (then
/// `histogram_bytes` runs): one block per [`SMALL_BLOCK_BYTES`] up to 1 MiB, per [`BLOCK_BYTES`]
/// above; at least 1, at most [`BLOCKS_PER_SM`] per SM.
pub fn grid(n: usize, sms: u32) -> Option<u32> {
    if n > MAX_BYTES {
        return None;
    }
    let per = if n <= 1 << 20 { SMALL_BLOCK_BYTES } else { BLOCK_BYTES };
    Some(n.div_ceil(per).clamp(1, (sms.max(1) * BLOCKS_PER_SM) as usize) as u32)
}

shared_layout! {
    /// The block's 256 bins.
    pub struct Bins {
        pub bins: [u32; NUM_BINS],
    }
}
/// Dynamic shared memory per block: 1 KiB.
pub const SHARED_BYTES: usize = Bins::BYTES;

kernel! {
    /// `hist[b] += count of b in data` for every byte value b (hist zeroed by the host; 256 bins).
    /// Launch: any block size up to 1024, `SHARED_BYTES`, any 1-D grid (the launcher: `BLOCK` threads,
    /// [`grid`] blocks).
    pub fn histogram_bytes_small<'a>(data: Global<'a, u8>, hist: GlobalMut<'a, u32>) {
        let bins = Bins::view().bins;
        let (t, threads) = (thread_idx().x as usize, block_dim().x as usize);
        let mut k = t;
        while k < NUM_BINS {
            bins.set(k, 0);
            k += threads;
        }
        sync_threads();
        let count = |byte: u8| bins.atomic(byte as usize).add(1);
        let split = data.split_vectors();
        let (nv, stride) = (split.body.len(), grid_stride_x());
        let mut i = global_index_x();
        while i < nv {
            split.body.get_nc(i).into_iter().for_each(count);
            i += stride;
        }
        count_ends(&split, count);
        sync_threads();
        let mut b = t;
        while b < NUM_BINS {
            let c = bins.get(b);
            if c > 0 {
                hist.atomic(b).add(c);
            }
            b += threads;
        }
    }
}
