//! `NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
//! cub/cub/block/specializations/block_histogram_atomic.cuh (BlockHistogramAtomic::Composite)` with
//! `cub/cub/block/block_histogram.cuh (BlockHistogram::Histogram, InitHistogram)`:
//! `BLOCK_HISTO_ATOMIC`, used as CUB's documentation shows: a block histogram in shared memory,
//! then merged into a global one.
//!
//! Kept: `InitHistogram` (each thread zeroes bins `tid` and `tid + 128` of 256, CUB's loop over whole
//! strides), `__syncthreads`, `Composite` (one `atomicAdd_block` on the shared bin of each item).
//! Changed: 8-bit samples, 256 bins of `u32`, 128 threads with 4 items each (a blocked tile of 512
//! per block). CUB's `Composite` has no item guard; here items past `n` are not counted (the kernel
//! loads only the valid ones and skips the rest, as a partial tile of a device histogram would). The
//! merge is the documented usage: `__syncthreads`, then each thread adds its bins to the global
//! histogram with a device-scope `atomicAdd`.
//!
//! Synchronisation: the first barrier orders the zeroing stores before any thread's atomic on the
//! bin (a plain store racing an atomic, and a count lost under a late zero); the shared atomics
//! order the block's increments of one bin among themselves (block scope suffices: one block's
//! shared memory); the second barrier orders every increment before the merging thread's plain
//! load of the bin; the global atomics order the blocks' adds to one global bin (device scope:
//! several blocks add to it). The host reads the global histogram after the launch.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_idx, thread_idx};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// Threads per block.
pub const BLOCK: u32 = 128;
/// Samples per thread.
pub const ITEMS: usize = 4;
/// Bins.
pub const BINS: usize = 256;

shared_layout! {
    /// The block's histogram.
    pub struct HistogramShared { pub histogram: [u32; BINS] }
}

kernel! {
    /// `histogram[b] += ` the number of samples equal to `b`. Launch `BLOCK` threads per block,
    /// `HistogramShared::BYTES` of shared memory, one block per 512 samples, on a zeroed histogram.
    pub fn cub_block_histogram_atomic<'a>(samples: Global<'a, u8>, histogram: GlobalMut<'a, u32>) {
        let smem = HistogramShared::view().histogram;
        let linear_tid = thread_idx().x as usize;
        // Blocked arrangement: thread t holds samples 4t .. 4t + 4 of the tile.
        let first = (block_idx().x as usize * BLOCK as usize + linear_tid) * ITEMS;
        // InitHistogram.
        let mut histo_offset = 0;
        while histo_offset + BLOCK as usize <= BINS {
            smem.set(histo_offset + linear_tid, 0);
            histo_offset += BLOCK as usize;
        }
        sync_threads();
        // Composite.
        let mut i = 0;
        while i < ITEMS {
            if first + i < samples.len() {
                smem.atomic(samples.get(first + i) as usize).add(1);
            }
            i += 1;
        }
        sync_threads();
        // Merge into the global histogram.
        let mut bin = linear_tid;
        while bin < BINS {
            histogram.atomic(bin).add(smem.get(bin));
            bin += BLOCK as usize;
        }
    }
}

/// One launch over `n` samples; the histogram compared with the CPU's.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    // Skewed towards a few bins, so that increments of one bin meet in every block.
    let samples: Vec<u8> = (0..n as u32)
        .map(|i| if i % 3 == 0 { (i % 5) as u8 } else { (i.wrapping_mul(2_654_435_761) >> 24) as u8 })
        .collect();
    let sb = dev.upload("samples", &samples)?;
    let hb = dev.filled("histogram", BINS, 0u32)?;
    let tile = BLOCK as usize * ITEMS;
    let cfg = gpu_host::Launch::linear(n.div_ceil(tile).max(1) as u32, BLOCK, HistogramShared::BYTES);
    dev.launch::<cub_block_histogram_atomic>(cfg, (sb.view(), hb.view_mut()))?;
    let mut want = vec![0u32; BINS];
    for &s in &samples {
        want[s as usize] += 1;
    }
    Ok(super::common::compare("histogram", &hb.read()?, &want))
}
