//! Privatised histogram (the chapter's `histogram`, exercise 3): each block counts into its own 256
//! bins in shared memory with shared-memory atomics, then folds them into the global bins with one
//! global atomic per non-empty bin.
//!
//! Decision procedure (§5.7): many threads write each bin, so every update is atomic; the shared bins
//! are zeroed, filled and read by different threads, so block barriers separate the three phases;
//! blocks meet only through global atomics. Integer adds commute, so the result is deterministic.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, grid_stride, thread_idx};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// Bins: one per byte value.
pub const NUM_BINS: usize = 256;
/// Threads per block.
pub const BLOCK: u32 = 256;
/// Grid cap from the seed.
pub const MAX_GRID: u32 = 1024;
shared_layout! {
    /// The block's shared memory.
    pub struct Scratch {
        /// The block's private bins.
        pub bins: [u32; NUM_BINS],
    }
}
/// Dynamic shared memory per block.
pub const SHARED_BYTES: usize = Scratch::BYTES;

kernel! {
    /// `hist[b] += count of b in data` for every byte value b (hist zeroed by the host; 256 bins).
    pub fn histogram_privatised<'a>(data: Global<'a, u8>, hist: GlobalMut<'a, u32>) {
        let bins = Scratch::view().bins;
        let (tid, step) = (thread_idx().x as usize, block_dim().x as usize);
        let mut b = tid;
        while b < NUM_BINS {
            bins.set(b, 0);
            b += step;
        }
        sync_threads();
        for i in grid_stride(data.len()) {
            bins.atomic(data.get(i) as usize).fetch_add(1);
        }
        sync_threads();
        let mut b = tid;
        while b < NUM_BINS {
            let c = bins.get(b);
            if c > 0 {
                hist.atomic(b).fetch_add(c);
            }
            b += step;
        }
    }
}
