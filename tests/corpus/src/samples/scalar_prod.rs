//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420
//! Samples/2_Concepts_and_Techniques/scalarProd/scalarProd_kernel.cuh (scalarProdGPU)`, with the
//! launch of `scalarProd.cu`.
//!
//! Kept: blocks loop over the vectors (`vec += gridDim.x`); for each, the block's threads fill 1024
//! (`ACCUM_N`) shared accumulators, each the sum of the products at positions `iAccum`, `iAccum +
//! 1024`, ..., then a shared-memory tree with the barrier at the top of each step and every thread
//! covering several accumulators (`iAccum += blockDim.x`), a barrier, and thread 0 writing the dot
//! product. 256 threads per block. Changed: the sample's 256 vectors of 4096 elements and 128 blocks
//! become `n / elementN` vectors of `elementN = min(n, 4096)` elements on `ceil(vectors / 2)` blocks
//! (at most 128), so that every block of a small launch also loops over two vectors, as the sample's
//! blocks do; inputs are small integers, so each dot product is an exact integer in `f32` whatever
//! the order of the additions (the sample compares with an L1-norm tolerance).
//!
//! Synchronisation. Each accumulator is written by one thread in the fill; the first tree step reads
//! accumulators written by other threads, after its barrier. Step `stride` has the thread covering
//! `iAccum < stride` read `accumResult[stride + iAccum]` and write `accumResult[iAccum]`; the next
//! step's barrier orders them before its reads. The barrier after the tree orders `accumResult[0]`
//! before thread 0 reads it; the next vector's fill writes `accumResult[0]` by thread 0 itself, and
//! every other accumulator of the next fill was last read (in the tree) before that barrier.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// `ACCUM_N`.
pub const ACCUM_N: usize = 1024;
/// Threads per block.
pub const THREADS: u32 = 256;

shared_layout! {
    /// `__shared__ float accumResult[ACCUM_N]`.
    pub struct Accum {
        /// The partial dot products.
        pub accum_result: [f32; ACCUM_N],
    }
}

kernel! {
    /// `scalarProdGPU`: `d_c[v]` = the dot product of vector `v` of `d_a` and `d_b`.
    pub fn scalar_prod_gpu<'a>(d_c: GlobalMut<'a, f32>, d_a: Global<'a, f32>, d_b: Global<'a, f32>, vector_n: u32, element_n: u32) {
        let accum = Accum::view().accum_result;
        let tid = thread_idx().x as usize;
        let bd = block_dim().x as usize;
        let mut vec = block_idx().x;
        while vec < vector_n {
            let vector_base = (element_n * vec) as usize;
            let vector_end = vector_base + element_n as usize;
            let mut i_accum = tid;
            while i_accum < ACCUM_N {
                let mut sum = 0.0f32;
                let mut pos = vector_base + i_accum;
                while pos < vector_end {
                    sum += d_a.get(pos) * d_b.get(pos);
                    pos += ACCUM_N;
                }
                accum.set(i_accum, sum);
                i_accum += bd;
            }
            let mut stride = ACCUM_N / 2;
            while stride > 0 {
                sync_threads();
                let mut i_accum = tid;
                while i_accum < stride {
                    accum.set(i_accum, accum.get(i_accum) + accum.get(stride + i_accum));
                    i_accum += bd;
                }
                stride >>= 1;
            }
            sync_threads();
            if tid == 0 {
                d_c.set(vec as usize, accum.get(0));
            }
            vec += grid_dim().x;
        }
    }
}

/// Small-integer vectors, the launch, every dot product compared exactly.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    let element_n = n.clamp(1, 4096);
    let vector_n = (n / element_n).max(1);
    let len = vector_n * element_n;
    let mut rng = super::common::Lcg(n as u32 ^ 0xab);
    let a: Vec<f32> = (0..len).map(|_| rng.below(8) as f32).collect();
    let b: Vec<f32> = (0..len).map(|_| rng.below(8) as f32).collect();
    let want: Vec<f32> = (0..vector_n)
        .map(|v| (v * element_n..(v + 1) * element_n).map(|i| (a[i] * b[i]) as f64).sum::<f64>() as f32)
        .collect();
    let blocks = vector_n.div_ceil(2).min(128) as u32;
    let (d_a, d_b) = (dev.upload("d_A", &a)?, dev.upload("d_B", &b)?);
    let d_c = dev.filled("d_C", vector_n, -1.0f32)?;
    dev.launch::<scalar_prod_gpu>(
        gpu_host::Launch::linear(blocks, THREADS, Accum::BYTES),
        (d_c.view_mut(), d_a.view(), d_b.view(), vector_n as u32, element_n as u32),
    )?;
    Ok(super::common::first_mismatch("d_C", &d_c.read()?, &want))
}
