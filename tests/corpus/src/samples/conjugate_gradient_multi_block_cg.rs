//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420
//! Samples/4_CUDA_Libraries/conjugateGradientMultiBlockCG/conjugateGradientMultiBlockCG.cu
//! (gpuConjugateGradient, gpuSpMV, gpuSaxpy, gpuDotProduct, gpuCopyVector, gpuScaleVectorAndSaxpy)`.
//!
//! Kept: the whole solver in one cooperative kernel: CSR sparse matrix-vector products, saxpy, copy
//! and scale-and-saxpy phases over grid-stride loops, dot products (each thread's grid-stride sum
//! in `double`, a `cg::reduce` per 32-thread tile, tile leaders' sums through shared memory, a block
//! barrier, tile 0 reducing them and its leader adding the block's sum to `*dot_result` with a
//! `double` `atomicAdd`), thread 0 of block 0 zeroing `*dot_result` before each product, every
//! thread reading the product after the grid barrier, `grid.sync()` between every two phases exactly
//! where the sample has them, and the loop `while (r1 > tol * tol && k <= max_iter)`. 512 threads per
//! block, `8 * (512 / 32 + 1)` bytes of shared memory; the
//! sample's tridiagonal, diagonally dominant matrix (`genTridiag`: diagonal in `[10, 11)`,
//! off-diagonals in `[0, 1)`, here from an LCG in steps of 1/1024), right-hand side and `r` all ones,
//! `x = 0`, `tol = 1e-5`. Changed: `N = n` (the sample fixes 2^20); the grid is `ceil(n / 512)` blocks capped at the co-resident
//! count (the sample launches the co-resident count whatever `N`, which at 2^20 is the same grid,
//! and which on the emulator would make small systems pay for 16 blocks' grid barriers); the sample's kernel has 11 parameters and `kernel!` takes at most
//! 8, so `I` and `J` share one buffer (`I` then `J`), and `x`, `Ax`, `p`, `r` another (`n` each, in
//! that order): the same loads and stores at other offsets; `cg::reduce` is the `shfl_xor`
//! butterfly cooperative groups uses for `double`. The check is the sample's (`sqrt(r1) < tol` and the residual `|A x - rhs|`) plus `x`
//! against the same iteration on the CPU within `1e-4` relative (`1e-6` absolute): the device adds
//! the blocks' `double` partial products in a schedule-dependent order, so `x` may differ from the
//! CPU's in the last bits of `float`, and the iteration count could differ when a residual lands
//! within rounding of `tol` (the check would then still hold within the tolerance).
//!
//! Synchronisation. Every phase reads vectors that other threads wrote in an earlier phase (the
//! product `A p` reads `p[J[..]]` of neighbouring rows; a dot product reads every element), and
//! `grid.sync()` separates each phase from the next. `*dot_result` is zeroed by one thread, updated
//! by one atomic add per block, and read by every thread, each step in its own grid-barrier
//! interval. Within a dot product, the tile leaders' `tmp` writes are ordered before tile 0's reads
//! by the block barrier; the next product writes `tmp` only after a grid barrier.
use gpu_std::block::sync_threads;
use gpu_std::grid::{Grid, this_grid, tiled_partition};
use gpu_std::shared::dynamic;
use gpu_std::thread::{block_idx, thread_idx};
use gpu_std::warp::{FULL_MASK, shfl_xor};
use gpu_std::{Global, GlobalMut, SharedSlice, kernel};

/// `THREADS_PER_BLOCK`.
pub const THREADS_PER_BLOCK: u32 = 512;
/// The sample's `max_iter`.
pub const MAX_ITER: u32 = 10000;
/// Dynamic shared memory: `sizeof(double) * (THREADS_PER_BLOCK / 32 + 1)`.
pub const SMEM_BYTES: usize = 8 * (THREADS_PER_BLOCK as usize / 32 + 1);

/// One of the solver's vectors: `len` elements of the launch's one vector buffer from `off` (a kernel
/// takes at most 8 parameters, the sample's takes 11, so `x`, `Ax`, `p` and `r` share one buffer).
#[derive(Clone, Copy)]
struct Part<'a> {
    all: GlobalMut<'a, f32>,
    off: usize,
}

impl Part<'_> {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn get(&self, i: usize) -> f32 {
        self.all.get(self.off + i)
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn set(&self, i: usize, v: f32) {
        self.all.set(self.off + i, v)
    }
}

/// `cg::reduce(tile32, v, cg::plus<double>())`: every lane gets the tile's sum.
#[inline(always)]
fn tile_sum(mut v: f64) -> f64 {
    let mut lane_mask = 1;
    while lane_mask < 32 {
        v += shfl_xor(FULL_MASK, v, lane_mask);
        lane_mask *= 2;
    }
    v
}

/// The grid-stride indices of the calling thread below `n`.
#[inline(always)]
fn strided(grid: &Grid<'_>, n: usize) -> impl Iterator<Item = usize> {
    (grid.thread_rank() as usize..n).step_by(grid.size() as usize)
}

/// `gpuSpMV`: `y = alpha A x` for the CSR matrix `(row_ptr, col, val)`.
#[inline(always)]
fn spmv(
    csr: Global<'_, i32>,
    val: Global<'_, f32>,
    num_rows: usize,
    alpha: f32,
    x: Part<'_>,
    y: Part<'_>,
    grid: &Grid<'_>,
) {
    // `csr` holds the row pointers `I[0..=num_rows]`, then the column indices `J`.
    let col = num_rows + 1;
    for i in strided(grid, num_rows) {
        let row_elem = csr.get(i) as usize;
        let next_row_elem = csr.get(i + 1) as usize;
        let mut output = 0.0f32;
        for j in 0..next_row_elem - row_elem {
            output += alpha * val.get(row_elem + j) * x.get(csr.get(col + row_elem + j) as usize);
        }
        y.set(i, output);
    }
}

/// `gpuSaxpy`: `y = a x + y`.
#[inline(always)]
fn saxpy(x: Part<'_>, y: Part<'_>, a: f32, size: usize, grid: &Grid<'_>) {
    for i in strided(grid, size) {
        y.set(i, a * x.get(i) + y.get(i));
    }
}

/// `gpuDotProduct`: `*result += a . b`, one atomic add per block.
#[inline(always)]
fn dot_product(
    a: Part<'_>,
    b: Part<'_>,
    result: GlobalMut<'_, f64>,
    size: usize,
    tmp: SharedSlice<f64>,
    grid: &Grid<'_>,
) {
    let mut temp_sum = 0.0f64;
    for i in strided(grid, size) {
        temp_sum += (a.get(i) * b.get(i)) as f64;
    }
    let tile32 = tiled_partition::<32>();
    temp_sum = tile_sum(temp_sum);
    if tile32.thread_rank() == 0 {
        tmp.set(tile32.meta_group_rank() as usize, temp_sum);
    }
    sync_threads();
    if tile32.meta_group_rank() == 0 {
        temp_sum =
            if tile32.thread_rank() < tile32.meta_group_size() { tmp.get(tile32.thread_rank() as usize) } else { 0.0 };
        temp_sum = tile_sum(temp_sum);
        if tile32.thread_rank() == 0 {
            result.atomic(0).fetch_add_float(temp_sum);
        }
    }
}

kernel! {
    /// `gpuConjugateGradient`: solves `A x = r` for the CSR matrix `(csr = I ++ J, val)`; `vectors`
    /// holds `x`, `Ax`, `p`, `r` of `n` elements each (on entry `r` is the right-hand side, `x` zero).
    pub fn gpu_conjugate_gradient<'a>(
        csr: Global<'a, i32>,
        val: Global<'a, f32>,
        vectors: GlobalMut<'a, f32>,
        dot_result: GlobalMut<'a, f64>,
        n: u32,
        tol: f32,
        workspace: GlobalMut<'a, u32>,
    ) {
        let grid = this_grid(workspace);
        let tmp = dynamic::<f64>();
        let n = n as usize;
        let part = |k: usize| Part { all: vectors, off: k * n };
        let (x, ax, p, r) = (part(0), part(1), part(2), part(3));
        let (alpha, alpham1) = (1.0f32, -1.0f32);
        let max_iter = MAX_ITER;
        let mut r0 = 0.0f32;
        let first = thread_idx().x == 0 && block_idx().x == 0;
        spmv(csr, val, n, alpha, x, ax, &grid);
        grid.sync();
        saxpy(ax, r, alpham1, n, &grid);
        grid.sync();
        dot_product(r, r, dot_result, n, tmp, &grid);
        grid.sync();
        let mut r1 = dot_result.get(0) as f32;
        let mut k = 1;
        while r1 > tol * tol && k <= max_iter {
            if k > 1 {
                let b = r1 / r0;
                // gpuScaleVectorAndSaxpy(r, p, alpha, b): p = alpha r + b p
                for i in strided(&grid, n) {
                    p.set(i, alpha * r.get(i) + b * p.get(i));
                }
            } else {
                // gpuCopyVector(r, p)
                for i in strided(&grid, n) {
                    p.set(i, r.get(i));
                }
            }
            grid.sync();
            spmv(csr, val, n, alpha, p, ax, &grid);
            if first {
                dot_result.set(0, 0.0);
            }
            grid.sync();
            dot_product(p, ax, dot_result, n, tmp, &grid);
            grid.sync();
            let a = r1 / dot_result.get(0) as f32;
            saxpy(p, x, a, n, &grid);
            saxpy(ax, r, -a, n, &grid);
            r0 = r1;
            grid.sync();
            if first {
                dot_result.set(0, 0.0);
            }
            grid.sync();
            dot_product(r, r, dot_result, n, tmp, &grid);
            grid.sync();
            r1 = dot_result.get(0) as f32;
            k += 1;
        }
    }
}

/// `genTridiag` with the LCG: CSR `(row_ptr, col, val)` of an `n x n` symmetric tridiagonal matrix.
#[cfg(not(target_arch = "nvptx64"))]
fn gen_tridiag(n: usize) -> (Vec<i32>, Vec<i32>, Vec<f32>) {
    let mut rng = super::common::Lcg(n as u32 ^ 0xc9);
    let mut unit = || rng.below(1024) as f32 / 1024.0;
    let nz = if n == 1 { 1 } else { (n - 2) * 3 + 4 };
    let (mut row_ptr, mut col, mut val) = (vec![0i32; n + 1], vec![0i32; nz], vec![0.0f32; nz]);
    val[0] = unit() + 10.0;
    if n > 1 {
        col[1] = 1;
        val[1] = unit();
    }
    for i in 1..n {
        row_ptr[i] = if i > 1 { row_ptr[i - 1] + 3 } else { 2 };
        let start = (i - 1) * 3 + 2;
        col[start] = i as i32 - 1;
        col[start + 1] = i as i32;
        if i < n - 1 {
            col[start + 2] = i as i32 + 1;
        }
        val[start] = val[start - 1];
        val[start + 1] = unit() + 10.0;
        if i < n - 1 {
            val[start + 2] = unit();
        }
    }
    row_ptr[n] = nz as i32;
    (row_ptr, col, val)
}

/// The solver on the CPU, phase by phase as the kernel runs it (dot products summed in index order).
#[cfg(not(target_arch = "nvptx64"))]
fn cpu_cg(row_ptr: &[i32], col: &[i32], val: &[f32], n: usize, tol: f32, max_iter: u32) -> (Vec<f32>, f32) {
    let spmv = |x: &[f32], y: &mut [f32]| {
        for i in 0..n {
            let mut o = 0.0f32;
            for j in row_ptr[i] as usize..row_ptr[i + 1] as usize {
                o += 1.0 * val[j] * x[col[j] as usize];
            }
            y[i] = o;
        }
    };
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(&x, &y)| (x * y) as f64).sum::<f64>() as f32;
    let (mut x, mut ax, mut p, mut r) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n], vec![1.0f32; n]);
    spmv(&x, &mut ax);
    for i in 0..n {
        r[i] += -ax[i];
    }
    let (mut r1, mut r0, mut k) = (dot(&r, &r), 0.0f32, 1);
    while r1 > tol * tol && k <= max_iter {
        if k > 1 {
            let b = r1 / r0;
            for i in 0..n {
                p[i] = r[i] + b * p[i];
            }
        } else {
            p.copy_from_slice(&r);
        }
        spmv(&p, &mut ax);
        let a = r1 / dot(&p, &ax);
        for i in 0..n {
            x[i] += a * p[i];
            r[i] += -a * ax[i];
        }
        r0 = r1;
        r1 = dot(&r, &r);
        k += 1;
    }
    (x, r1)
}

/// The sample's system of `n` unknowns, one cooperative launch, the sample's checks and `x` against
/// the CPU's iteration.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    use gpu_std::Dim3;
    const TOL: f32 = 1e-5;
    let (row_ptr, col, val) = gen_tridiag(n);
    let (want_x, _) = cpu_cg(&row_ptr, &col, &val, n, TOL, MAX_ITER);
    let cap = dev.max_coresident_blocks::<gpu_conjugate_gradient>(Dim3::x(THREADS_PER_BLOCK), SMEM_BYTES)?;
    let blocks = (n.div_ceil(THREADS_PER_BLOCK as usize) as u32).clamp(1, cap);
    let csr: Vec<i32> = row_ptr.iter().chain(&col).copied().collect();
    let (d_csr, d_val) = (dev.upload("I_J", &csr)?, dev.upload("val", &val)?);
    // x = 0, Ax = 0, p = 0, r = rhs = 1.
    let vectors: Vec<f32> = (0..4 * n).map(|i| if i >= 3 * n { 1.0 } else { 0.0 }).collect();
    let d_vec = dev.upload("x_Ax_p_r", &vectors)?;
    let d_dot = dev.filled("dot_result", 1, 0.0f64)?;
    let ws = dev.filled("grid_workspace", gpu_std::grid::GRID_BARRIER_WORDS, 0u32)?;
    let cfg = gpu_host::Launch::linear(blocks, THREADS_PER_BLOCK, SMEM_BYTES).cooperative();
    dev.launch::<gpu_conjugate_gradient>(
        cfg,
        (d_csr.view(), d_val.view(), d_vec.view_mut(), d_dot.view_mut(), n as u32, TOL, ws.view_mut()),
    )?;
    let (x, r1) = (d_vec.read()?[..n].to_vec(), d_dot.read()?[0] as f32);
    if r1.sqrt() >= TOL {
        return Ok(Err(format!("sqrt(r1) = {}, not below tol = {TOL}", r1.sqrt())));
    }
    let mut err = 0.0f32;
    for i in 0..n {
        let rsum: f32 = (row_ptr[i] as usize..row_ptr[i + 1] as usize).map(|j| val[j] * x[col[j] as usize]).sum();
        err = err.max((rsum - 1.0).abs());
    }
    if err > 1e-4 {
        return Ok(Err(format!("residual max |A x - rhs| = {err}")));
    }
    for i in 0..n {
        if (x[i] - want_x[i]).abs() > 1e-6 + 1e-4 * want_x[i].abs() {
            return Ok(Err(format!("x[{i}] = {}, the CPU's iteration gives {}", x[i], want_x[i])));
        }
    }
    Ok(Ok(()))
}
