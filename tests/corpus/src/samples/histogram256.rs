//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420
//! Samples/2_Concepts_and_Techniques/histogram/histogram256.cu (histogram256Kernel,
//! mergeHistogram256Kernel, histogram256)`.
//!
//! Kept: per-warp sub-histograms of 256 bins in shared memory (6 warps of 32, 192 threads per block),
//! zeroed by the block, a barrier, each thread adding the four bytes of each of its grid-stride words
//! to its warp's bins with shared-memory `atomicAdd`, a barrier, each thread summing its bins over
//! the six warps into the block's partial histogram; then the merge kernel, one block of 256 threads
//! per bin, summing that bin over the partial histograms with a shared-memory tree (barrier at the
//! top of each step) and thread 0 writing the bin. Changed: the sample launches 240 blocks whatever
//! the input; here `min(240, words / 192)` (at least 1), so that the emulator's small inputs do not
//! pay for 240 idle blocks (the GPU sizes reach 240). The tag of the old tagged-update scheme is
//! computed and masked off with an all-ones mask in the sample; it is left out. Inputs: bytes drawn
//! from 0..32, so that the bins of a warp collide and the shared atomics are exercised.
//!
//! Synchronisation. The zeroing and the counting touch the same bins from different threads: the
//! first barrier orders them. Threads of one warp update the same bin: shared atomics at block scope
//! (morally strong among the block's threads) make each update count once. The second barrier
//! orders every update before the sums read the bins. In the merge, step `stride` has thread
//! `t < stride` read `data[t + stride]` (written by thread `t + stride` in the previous step or at
//! load time) and write `data[t]`, with the barrier at the top of each step ordering the previous
//! step. The partial histograms are written by the first launch and read by the second.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::{Global, GlobalMut, Output, PerBlock, kernel, shared_layout};

/// `HISTOGRAM256_BIN_COUNT`.
pub const BIN_COUNT: usize = 256;
/// `WARP_COUNT`.
pub const WARP_COUNT: usize = 6;
/// `HISTOGRAM256_THREADBLOCK_SIZE`.
pub const THREADBLOCK_SIZE: u32 = (WARP_COUNT * 32) as u32;
/// `HISTOGRAM256_THREADBLOCK_MEMORY`.
pub const THREADBLOCK_MEMORY: usize = WARP_COUNT * BIN_COUNT;
/// `PARTIAL_HISTOGRAM256_COUNT`: the sample's grid.
pub const PARTIAL_COUNT: u32 = 240;
/// `MERGE_THREADBLOCK_SIZE`.
pub const MERGE_THREADBLOCK_SIZE: u32 = 256;

shared_layout! {
    /// `__shared__ uint s_Hist[HISTOGRAM256_THREADBLOCK_MEMORY]`.
    pub struct Hist {
        /// The block's per-warp sub-histograms.
        pub s_hist: [u32; THREADBLOCK_MEMORY],
    }
}

shared_layout! {
    /// `__shared__ uint data[MERGE_THREADBLOCK_SIZE]` of the merge.
    pub struct Merge {
        /// One partial sum per thread.
        pub data: [u32; MERGE_THREADBLOCK_SIZE as usize],
    }
}

kernel! {
    /// `histogram256Kernel`: block `b`'s histogram of its grid-stride words into
    /// `d_partial_histograms[256 b..256 b + 256]`.
    pub fn histogram256_kernel<'a>(d_partial_histograms: GlobalMut<'a, u32>, d_data: Global<'a, u32>, data_count: u32) {
        let s_hist = Hist::view().s_hist;
        let tid = thread_idx().x as usize;
        let warp_hist = (thread_idx().x >> 5) as usize * BIN_COUNT;
        for i in 0..THREADBLOCK_MEMORY / THREADBLOCK_SIZE as usize {
            s_hist.set(tid + i * THREADBLOCK_SIZE as usize, 0);
        }
        sync_threads();
        let mut pos = block_idx().x * block_dim().x + thread_idx().x;
        while pos < data_count {
            let data = d_data.get(pos as usize);
            // addWord: the four bytes, each one atomicAdd on the warp's bin.
            for shift in [0, 8, 16, 24] {
                s_hist.atomic(warp_hist + ((data >> shift) & 0xff) as usize).fetch_add(1);
            }
            pos += block_dim().x * grid_dim().x;
        }
        sync_threads();
        let mut bin = tid;
        while bin < BIN_COUNT {
            let mut sum = 0u32;
            for i in 0..WARP_COUNT {
                sum += s_hist.get(bin + i * BIN_COUNT);
            }
            d_partial_histograms.set(block_idx().x as usize * BIN_COUNT + bin, sum);
            bin += THREADBLOCK_SIZE as usize;
        }
    }
}

kernel! {
    /// `mergeHistogram256Kernel`: bin `blockIdx.x` summed over `histogram_count` partial histograms.
    pub fn merge_histogram256_kernel<'a>(
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

/// `n` bytes (a multiple of 4) drawn from 0..32, the two launches, the 256 bins compared.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    anyhow::ensure!(n.is_multiple_of(4), "histogram256: n = {n} bytes is not a multiple of 4");
    let mut rng = super::common::Lcg(n as u32 ^ 256);
    let bytes: Vec<u8> = (0..n).map(|_| rng.below(32) as u8).collect();
    let words: Vec<u32> = bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let mut want = vec![0u32; BIN_COUNT];
    for &b in &bytes {
        want[b as usize] += 1;
    }
    let count = (words.len() as u32 / THREADBLOCK_SIZE).clamp(1, PARTIAL_COUNT);
    let d_data = dev.upload("d_Data", &words)?;
    let d_partial = dev.filled("d_PartialHistograms", count as usize * BIN_COUNT, 0u32)?;
    let mut d_hist = dev.filled("d_Histogram", BIN_COUNT, 0u32)?;
    dev.launch::<histogram256_kernel>(
        gpu_host::Launch::linear(count, THREADBLOCK_SIZE, Hist::BYTES),
        (d_partial.view_mut(), d_data.view(), words.len() as u32),
    )?;
    dev.launch::<merge_histogram256_kernel>(
        gpu_host::Launch::linear(BIN_COUNT as u32, MERGE_THREADBLOCK_SIZE, Merge::BYTES),
        (d_hist.output(), d_partial.view(), count),
    )?;
    Ok(super::common::first_mismatch("histogram", &d_hist.read()?, &want))
}
