//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420 Samples/0_Introduction/matrixMul/matrixMul.cu
//! (MatrixMulCUDA)`.
//!
//! Kept: the tiled product `C = A B`: blocks of `BLOCK_SIZE x BLOCK_SIZE` threads, one element of `C`
//! each; for each tile along the inner dimension every thread loads one element of `A`'s and one of
//! `B`'s tile into shared memory, a barrier, the tile's partial dot product from shared memory, a
//! barrier before the next tile overwrites them; grid `(wB / BLOCK_SIZE, hA / BLOCK_SIZE)`, matrix
//! sides multiples of the block size (no bounds checks, as in the sample). Changed: `BLOCK_SIZE` is
//! fixed to 16 (the sample's other instantiation; its default 32 makes blocks of 1024 threads, costly
//! on the emulator); the shapes come from `n` (`wA = 48`, three tiles along the inner dimension;
//! `wB = 32`; `hA` enough rows for about `n` elements of `C`); the entries are small integers (the
//! sample uses constants 1 and 0.01 and a tolerance), so every element is exact.
//!
//! Synchronisation. Each element of `As` and `Bs` is written by one thread and read by the 16
//! threads of its row (`As`) or column (`Bs`) after the first barrier; the second barrier orders those
//! reads before the next iteration's writes of the same elements. Each element of `C` is written by
//! one thread.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_idx, thread_idx};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// `BLOCK_SIZE`.
pub const BLOCK_SIZE: usize = 16;

shared_layout! {
    /// `__shared__ float As[BLOCK_SIZE][BLOCK_SIZE], Bs[BLOCK_SIZE][BLOCK_SIZE]`.
    pub struct Tiles {
        /// The tile of `A`.
        pub a_s: [f32; BLOCK_SIZE * BLOCK_SIZE],
        /// The tile of `B`.
        pub b_s: [f32; BLOCK_SIZE * BLOCK_SIZE],
    }
}

kernel! {
    /// `MatrixMulCUDA<16>`: `C = A B` with `A` of width `w_a`, `B` of width `w_b`.
    pub fn matrix_mul_cuda<'a>(c: GlobalMut<'a, f32>, a: Global<'a, f32>, b: Global<'a, f32>, w_a: u32, w_b: u32) {
        let Tiles { a_s, b_s } = Tiles::view();
        let (bx, by) = (block_idx().x as usize, block_idx().y as usize);
        let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
        let (w_a, w_b) = (w_a as usize, w_b as usize);
        let a_begin = w_a * BLOCK_SIZE * by;
        let a_end = a_begin + w_a - 1;
        let a_step = BLOCK_SIZE;
        let b_begin = BLOCK_SIZE * bx;
        let b_step = BLOCK_SIZE * w_b;
        let mut c_sub = 0.0f32;
        let (mut ia, mut ib) = (a_begin, b_begin);
        while ia <= a_end {
            a_s.set(ty * BLOCK_SIZE + tx, a.get(ia + w_a * ty + tx));
            b_s.set(ty * BLOCK_SIZE + tx, b.get(ib + w_b * ty + tx));
            sync_threads();
            for k in 0..BLOCK_SIZE {
                c_sub += a_s.get(ty * BLOCK_SIZE + k) * b_s.get(k * BLOCK_SIZE + tx);
            }
            sync_threads();
            ia += a_step;
            ib += b_step;
        }
        let ic = w_b * BLOCK_SIZE * by + BLOCK_SIZE * bx;
        c.set(ic + w_b * ty + tx, c_sub);
    }
}

/// Small-integer matrices for about `n` elements of `C`, the launch, `C` compared exactly.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    use gpu_std::Dim3;
    let (w_a, w_b) = (3 * BLOCK_SIZE, 2 * BLOCK_SIZE);
    let h_a = n.div_ceil(w_b * BLOCK_SIZE).max(1) * BLOCK_SIZE;
    let mut rng = super::common::Lcg(n as u32 ^ 0x3a3);
    let ha: Vec<f32> = (0..h_a * w_a).map(|_| rng.below(4) as f32).collect();
    let hb: Vec<f32> = (0..w_a * w_b).map(|_| rng.below(4) as f32).collect();
    let mut want = vec![0.0f32; h_a * w_b];
    for r in 0..h_a {
        for col in 0..w_b {
            want[r * w_b + col] = (0..w_a).map(|k| ha[r * w_a + k] * hb[k * w_b + col]).sum();
        }
    }
    let (d_a, d_b) = (dev.upload("A", &ha)?, dev.upload("B", &hb)?);
    let d_c = dev.filled("C", h_a * w_b, -1.0f32)?;
    let cfg = gpu_host::Launch {
        grid: Dim3::new((w_b / BLOCK_SIZE) as u32, (h_a / BLOCK_SIZE) as u32, 1),
        block: Dim3::new(BLOCK_SIZE as u32, BLOCK_SIZE as u32, 1),
        shared_bytes: Tiles::BYTES,
        cooperative: false,
    };
    dev.launch::<matrix_mul_cuda>(cfg, (d_c.view_mut(), d_a.view(), d_b.view(), w_a as u32, w_b as u32))?;
    Ok(super::common::first_mismatch("C", &d_c.read()?, &want))
}
