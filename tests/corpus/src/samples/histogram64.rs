//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420
//! Samples/2_Concepts_and_Techniques/histogram/histogram64.cu (histogram64Kernel,
//! mergeHistogram64Kernel, histogram64)`.
//!
//! Kept: per-thread sub-histograms of 64 byte-sized counters in shared memory (64 threads per block,
//! thread `t`'s counter for bin `b` at byte `threadPos(t) + 64 b`, with the sample's bank-shuffled
//! `threadPos`), zeroed as 32-bit words by the block, a barrier, each thread counting the top six
//! bits of every byte of its grid-stride 16-byte chunks with plain byte increments, a barrier, thread
//! `t < 64` summing bin `t`'s 64 counters (in the sample's rotated order) into the block's partial
//! histogram; then the merge, one 256-thread block per bin with a shared tree. Grid:
//! `ceil(bytes / (64 * 240))` blocks, so that no counter passes 255. Changed: each `uint4` load is
//! four 32-bit loads of the same words. Inputs: random bytes (every bin is hit, and the counters of
//! one thread see repeated bins).
//!
//! Synchronisation. The zeroing writes 32-bit words that cover other threads' counters, so the first
//! barrier orders it before the increments (the emulator tracks bytes, so a word store and a byte
//! access overlap). Each counter byte is then read and written by its one thread only: no atomics
//! needed. The second barrier orders every increment before the summing threads read the counters
//! of all 64 threads. The merge is the same tree as histogram256's: the barrier at the top of each
//! step orders the previous step's writes before this step's reads.
use gpu_std::block::sync_threads;
use gpu_std::shared::dynamic;
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::{Global, GlobalMut, Output, PerBlock, SharedSlice, kernel, shared_layout};

/// `HISTOGRAM64_BIN_COUNT`.
pub const BIN_COUNT: usize = 64;
/// `HISTOGRAM64_THREADBLOCK_SIZE`.
pub const THREADBLOCK_SIZE: u32 = 64;
/// `SHARED_MEMORY_BANKS`.
const BANKS: u32 = 16;
/// `MERGE_THREADBLOCK_SIZE`.
pub const MERGE_THREADBLOCK_SIZE: u32 = 256;

shared_layout! {
    /// `__shared__ uchar s_Hist[HISTOGRAM64_THREADBLOCK_SIZE * HISTOGRAM64_BIN_COUNT]`.
    pub struct Hist {
        /// Every thread's 64 byte counters.
        pub s_hist: [u8; THREADBLOCK_SIZE as usize * BIN_COUNT],
    }
}

shared_layout! {
    /// `__shared__ uint data[MERGE_THREADBLOCK_SIZE]` of the merge.
    pub struct Merge {
        /// One partial sum per thread.
        pub data: [u32; MERGE_THREADBLOCK_SIZE as usize],
    }
}

/// `addWord`: the top six bits of each byte of `data`, one counter increment each.
#[inline(always)]
fn add_word(s_hist: SharedSlice<u8>, thread_base: usize, data: u32) {
    for shift in [2, 10, 18, 26] {
        let at = thread_base + ((data >> shift) & 0x3f) as usize * THREADBLOCK_SIZE as usize;
        s_hist.set(at, s_hist.get(at).wrapping_add(1));
    }
}

kernel! {
    /// `histogram64Kernel`: block `b`'s histogram of its grid-stride 16-byte chunks into
    /// `d_partial_histograms[64 b..64 b + 64]`.
    pub fn histogram64_kernel<'a>(d_partial_histograms: GlobalMut<'a, u32>, d_data: Global<'a, u32>, data_count: u32) {
        let t = thread_idx().x;
        let thread_pos = ((t & !(BANKS * 4 - 1)) | ((t & (BANKS - 1)) << 2) | ((t & (BANKS * 3)) >> 4)) as usize;
        let s_hist = Hist::view().s_hist;
        // The sample zeroes s_Hist as uints: the same bytes through a 32-bit view.
        let s_words = dynamic::<u32>();
        for i in 0..BIN_COUNT / 4 {
            s_words.set(t as usize + i * THREADBLOCK_SIZE as usize, 0);
        }
        sync_threads();
        let mut pos = block_idx().x * block_dim().x + t;
        while pos < data_count {
            for k in 0..4 {
                add_word(s_hist, thread_pos, d_data.get(4 * pos as usize + k));
            }
            pos += block_dim().x * grid_dim().x;
        }
        sync_threads();
        if (t as usize) < BIN_COUNT {
            let hist_base = t as usize * THREADBLOCK_SIZE as usize;
            let mut sum = 0u32;
            let mut pos = 4 * (t & (BANKS - 1)) as usize;
            for _ in 0..THREADBLOCK_SIZE / 4 {
                for k in 0..4 {
                    sum += s_hist.get(hist_base + pos + k) as u32;
                }
                pos = (pos + 4) & (THREADBLOCK_SIZE as usize - 1);
            }
            d_partial_histograms.set(block_idx().x as usize * BIN_COUNT + t as usize, sum);
        }
    }
}

kernel! {
    /// `mergeHistogram64Kernel`: bin `blockIdx.x` summed over `histogram_count` partial histograms.
    pub fn merge_histogram64_kernel<'a>(
        d_histogram: Output<'a, u32, PerBlock>,
        d_partial_histograms: Global<'a, u32>,
        histogram_count: u32,
    ) {
        let data = Merge::view().data;
        let tid = thread_idx().x as usize;
        let mut sum = 0u32;
        let mut i = thread_idx().x;
        while i < histogram_count {
            sum += d_partial_histograms.get(block_idx().x as usize + i as usize * BIN_COUNT);
            i += MERGE_THREADBLOCK_SIZE;
        }
        data.set(tid, sum);
        let mut stride = MERGE_THREADBLOCK_SIZE as usize / 2;
        while stride > 0 {
            sync_threads();
            if tid < stride {
                data.set(tid, data.get(tid) + data.get(tid + stride));
            }
            stride >>= 1;
        }
        if let Some(out) = d_histogram.mine() {
            out.set(data.get(0));
        }
    }
}

/// `n` random bytes (a multiple of 16), the sample's two launches, the 64 bins compared.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    anyhow::ensure!(n.is_multiple_of(16) && n > 0, "histogram64: n = {n} bytes is not a multiple of 16");
    let mut rng = super::common::Lcg(n as u32 ^ 64);
    let words: Vec<u32> = (0..n / 4).map(|_| rng.next_u32()).collect();
    let mut want = vec![0u32; BIN_COUNT];
    for w in &words {
        for b in w.to_le_bytes() {
            want[(b >> 2) as usize] += 1;
        }
    }
    // iDivUp(byteCount, HISTOGRAM64_THREADBLOCK_SIZE * iSnapDown(255, sizeof(uint4)))
    let count = n.div_ceil(THREADBLOCK_SIZE as usize * 240) as u32;
    let d_data = dev.upload("d_Data", &words)?;
    let d_partial = dev.filled("d_PartialHistograms", count as usize * BIN_COUNT, 0u32)?;
    let mut d_hist = dev.filled("d_Histogram", BIN_COUNT, 0u32)?;
    dev.launch::<histogram64_kernel>(
        gpu_host::Launch::linear(count, THREADBLOCK_SIZE, Hist::BYTES),
        (d_partial.view_mut(), d_data.view(), (n / 16) as u32),
    )?;
    dev.launch::<merge_histogram64_kernel>(
        gpu_host::Launch::linear(BIN_COUNT as u32, MERGE_THREADBLOCK_SIZE, Merge::BYTES),
        (d_hist.output(), d_partial.view(), count),
    )?;
    Ok(super::common::first_mismatch("histogram", &d_hist.read()?, &want))
}
