//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420
//! Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu (reduce2, reduce3, reduce4, reduce5,
//! reduce6)`, with the host rules of `reduction.cpp` (`getNumBlocksAndThreads`, `benchmarkReduce`).
//!
//! Kept: every kernel's loads, shared-memory tree, barriers, warp tail (`tiled_partition<32>` and
//! `shfl_down`), and the launch shape: at most 256 threads per block, `nextPow2(n)` threads for small
//! inputs (`nextPow2((n + 1) / 2)` from reduce3 on, which add two elements per thread while loading),
//! 64 blocks at most for reduce6, `threads <= 32 ? 2 * threads : threads` elements of dynamic shared
//! memory. Changed: the element type is fixed to `i32` (the sample's default `int`; additions wrap, as
//! the GPU's do); the `blockSize` template parameter of reduce4..6 is the launch's `blockDim.x`, which
//! is what the sample's `switch (threads)` instantiates; reduce2 and reduce3 sum their partials on the
//! device as the sample does by default (the kernel again over the previous pass's partials, copied to
//! a separate input buffer, until one is left), while reduce4..6 run one pass and add the partials on
//! the host (the sample's `--cpufinal`): the device loop's later passes launch blocks of fewer than 32
//! threads, whose full-tile `shfl_down` reads lanes that do not exist (an undefined value that lane 0
//! adds to its sum; see the report), which the emulator rightly flags.
//!
//! Synchronisation. Each thread writes its own `sdata[tid]` (its loaded sum), then a block barrier;
//! in each step of the tree thread `tid < s` reads `sdata[tid + s]` (written by thread `tid + s` in
//! the previous step, or at load time) and writes `sdata[tid]`, and the barrier that ends the step
//! orders those writes before the next step's reads (`tid + s/2` of the next step was `tid` of this
//! one). reduce3..6 keep the running sum in a register too, so a step's writer and its next reader
//! meet only through `sdata`. The warp tail of reduce4..6: after the last barrier, threads 0..31 read
//! `sdata[tid + 32]` (written before that barrier) and then exchange registers with `shfl_down`
//! inside one warp; no shared memory is written after the last barrier, so the tail needs no
//! `__syncwarp`. Thread 0 alone writes the block's partial; blocks share nothing within a launch (a
//! later pass reads the partials after the launch that wrote them has ended).
use gpu_std::block::sync_threads;
use gpu_std::grid::tiled_partition;
use gpu_std::shared::dynamic;
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::{Global, Output, PerBlock, kernel};

kernel! {
    /// `reduce2`: sequential addressing, one element per thread.
    pub fn reduce2<'a>(g_idata: Global<'a, i32>, g_odata: Output<'a, i32, PerBlock>, n: u32) {
        let sdata = dynamic::<i32>();
        let tid = thread_idx().x as usize;
        let i = (block_idx().x * block_dim().x + thread_idx().x) as usize;
        sdata.set(tid, if i < n as usize { g_idata.get(i) } else { 0 });
        sync_threads();
        let mut s = block_dim().x as usize / 2;
        while s > 0 {
            if tid < s {
                sdata.set(tid, sdata.get(tid).wrapping_add(sdata.get(tid + s)));
            }
            sync_threads();
            s >>= 1;
        }
        if let Some(out) = g_odata.mine() {
            out.set(sdata.get(0));
        }
    }
}

kernel! {
    /// `reduce3`: two elements per thread while loading, the running sum kept in a register.
    pub fn reduce3<'a>(g_idata: Global<'a, i32>, g_odata: Output<'a, i32, PerBlock>, n: u32) {
        let sdata = dynamic::<i32>();
        let n = n as usize;
        let tid = thread_idx().x as usize;
        let bd = block_dim().x as usize;
        let i = block_idx().x as usize * (bd * 2) + tid;
        let mut my_sum = if i < n { g_idata.get(i) } else { 0 };
        if i + bd < n {
            my_sum = my_sum.wrapping_add(g_idata.get(i + bd));
        }
        sdata.set(tid, my_sum);
        sync_threads();
        let mut s = bd / 2;
        while s > 0 {
            if tid < s {
                my_sum = my_sum.wrapping_add(sdata.get(tid + s));
                sdata.set(tid, my_sum);
            }
            sync_threads();
            s >>= 1;
        }
        if let Some(out) = g_odata.mine() {
            out.set(my_sum);
        }
    }
}

kernel! {
    /// `reduce4`: the tree down to 64 partials, then one warp finishes with `shfl_down`.
    pub fn reduce4<'a>(g_idata: Global<'a, i32>, g_odata: Output<'a, i32, PerBlock>, n: u32) {
        let sdata = dynamic::<i32>();
        let n = n as usize;
        let block_size = block_dim().x as usize;
        let tid = thread_idx().x as usize;
        let i = block_idx().x as usize * (block_size * 2) + tid;
        let mut my_sum = if i < n { g_idata.get(i) } else { 0 };
        if i + block_size < n {
            my_sum = my_sum.wrapping_add(g_idata.get(i + block_size));
        }
        sdata.set(tid, my_sum);
        sync_threads();
        let mut s = block_size / 2;
        while s > 32 {
            if tid < s {
                my_sum = my_sum.wrapping_add(sdata.get(tid + s));
                sdata.set(tid, my_sum);
            }
            sync_threads();
            s >>= 1;
        }
        let tile32 = tiled_partition::<32>();
        if tid < 32 {
            if block_size >= 64 {
                my_sum = my_sum.wrapping_add(sdata.get(tid + 32));
            }
            let mut offset = tile32.size() / 2;
            while offset > 0 {
                my_sum = my_sum.wrapping_add(tile32.shfl_down(my_sum, offset));
                offset /= 2;
            }
        }
        if let Some(out) = g_odata.mine() {
            out.set(my_sum);
        }
    }
}

kernel! {
    /// `reduce5`: reduce4 with the tree unrolled for a block of at most 512 threads.
    pub fn reduce5<'a>(g_idata: Global<'a, i32>, g_odata: Output<'a, i32, PerBlock>, n: u32) {
        let sdata = dynamic::<i32>();
        let n = n as usize;
        let block_size = block_dim().x as usize;
        let tid = thread_idx().x as usize;
        let i = block_idx().x as usize * (block_size * 2) + tid;
        let mut my_sum = if i < n { g_idata.get(i) } else { 0 };
        if i + block_size < n {
            my_sum = my_sum.wrapping_add(g_idata.get(i + block_size));
        }
        sdata.set(tid, my_sum);
        sync_threads();
        if block_size >= 512 && tid < 256 {
            my_sum = my_sum.wrapping_add(sdata.get(tid + 256));
            sdata.set(tid, my_sum);
        }
        sync_threads();
        if block_size >= 256 && tid < 128 {
            my_sum = my_sum.wrapping_add(sdata.get(tid + 128));
            sdata.set(tid, my_sum);
        }
        sync_threads();
        if block_size >= 128 && tid < 64 {
            my_sum = my_sum.wrapping_add(sdata.get(tid + 64));
            sdata.set(tid, my_sum);
        }
        sync_threads();
        let tile32 = tiled_partition::<32>();
        if tid < 32 {
            if block_size >= 64 {
                my_sum = my_sum.wrapping_add(sdata.get(tid + 32));
            }
            let mut offset = tile32.size() / 2;
            while offset > 0 {
                my_sum = my_sum.wrapping_add(tile32.shfl_down(my_sum, offset));
                offset /= 2;
            }
        }
        if let Some(out) = g_odata.mine() {
            out.set(my_sum);
        }
    }
}

kernel! {
    /// `reduce6`: reduce5 after a grid-stride loop that adds many elements per thread (`n_is_pow2`:
    /// two per iteration, as the sample's `nIsPow2` instantiation).
    pub fn reduce6<'a>(g_idata: Global<'a, i32>, g_odata: Output<'a, i32, PerBlock>, n: u32, n_is_pow2: u32) {
        let sdata = dynamic::<i32>();
        let n = n as usize;
        let block_size = block_dim().x as usize;
        let tid = thread_idx().x as usize;
        let mut grid_size = block_size * grid_dim().x as usize;
        let mut my_sum = 0i32;
        if n_is_pow2 != 0 {
            let mut i = block_idx().x as usize * block_size * 2 + tid;
            grid_size <<= 1;
            while i < n {
                my_sum = my_sum.wrapping_add(g_idata.get(i));
                if i + block_size < n {
                    my_sum = my_sum.wrapping_add(g_idata.get(i + block_size));
                }
                i += grid_size;
            }
        } else {
            let mut i = block_idx().x as usize * block_size + tid;
            while i < n {
                my_sum = my_sum.wrapping_add(g_idata.get(i));
                i += grid_size;
            }
        }
        sdata.set(tid, my_sum);
        sync_threads();
        if block_size >= 512 && tid < 256 {
            my_sum = my_sum.wrapping_add(sdata.get(tid + 256));
            sdata.set(tid, my_sum);
        }
        sync_threads();
        if block_size >= 256 && tid < 128 {
            my_sum = my_sum.wrapping_add(sdata.get(tid + 128));
            sdata.set(tid, my_sum);
        }
        sync_threads();
        if block_size >= 128 && tid < 64 {
            my_sum = my_sum.wrapping_add(sdata.get(tid + 64));
            sdata.set(tid, my_sum);
        }
        sync_threads();
        let tile32 = tiled_partition::<32>();
        if tid < 32 {
            if block_size >= 64 {
                my_sum = my_sum.wrapping_add(sdata.get(tid + 32));
            }
            let mut offset = tile32.size() / 2;
            while offset > 0 {
                my_sum = my_sum.wrapping_add(tile32.shfl_down(my_sum, offset));
                offset /= 2;
            }
        }
        if let Some(out) = g_odata.mine() {
            out.set(my_sum);
        }
    }
}

/// The sample's `maxThreads` and `maxBlocks`.
#[cfg(not(target_arch = "nvptx64"))]
const MAX_THREADS: u32 = 256;
#[cfg(not(target_arch = "nvptx64"))]
const MAX_BLOCKS: u32 = 64;

/// `getNumBlocksAndThreads(whichKernel, n, maxBlocks, maxThreads)`: (blocks, threads).
#[cfg(not(target_arch = "nvptx64"))]
fn blocks_and_threads(which: u32, n: u32) -> (u32, u32) {
    use super::common::next_pow2;
    let (mut blocks, threads) = if which < 3 {
        let threads = if n < MAX_THREADS { next_pow2(n) } else { MAX_THREADS };
        (n.div_ceil(threads), threads)
    } else {
        let threads = if n < MAX_THREADS * 2 { next_pow2(n.div_ceil(2)) } else { MAX_THREADS };
        (n.div_ceil(threads * 2), threads)
    };
    if which >= 6 {
        blocks = blocks.min(MAX_BLOCKS);
    }
    (blocks, threads)
}

/// One launch of kernel `which` (2..=6) over `input`: the partial sums of its blocks.
#[cfg(not(target_arch = "nvptx64"))]
fn pass(dev: &gpu_host::Device, which: u32, input: &[i32]) -> anyhow::Result<Vec<i32>> {
    let n = input.len() as u32;
    let (blocks, threads) = blocks_and_threads(which, n);
    let smem = if threads <= 32 { 2 * threads } else { threads } as usize * 4;
    let cfg = gpu_host::Launch::linear(blocks, threads, smem);
    let d_in = dev.upload("g_idata", input)?;
    let mut d_out = dev.filled("g_odata", blocks as usize, 0i32)?;
    match which {
        2 => dev.launch::<reduce2>(cfg, (d_in.view(), d_out.output(), n))?,
        3 => dev.launch::<reduce3>(cfg, (d_in.view(), d_out.output(), n))?,
        4 => dev.launch::<reduce4>(cfg, (d_in.view(), d_out.output(), n))?,
        5 => dev.launch::<reduce5>(cfg, (d_in.view(), d_out.output(), n))?,
        _ => dev.launch::<reduce6>(cfg, (d_in.view(), d_out.output(), n, n.is_power_of_two() as u32))?,
    }
    Ok(d_out.read()?)
}

/// The CPU's partial sums of one pass of kernel `which`: what each block adds up.
#[cfg(not(target_arch = "nvptx64"))]
fn cpu_pass(which: u32, input: &[i32]) -> Vec<i32> {
    let n = input.len();
    let (blocks, threads) = blocks_and_threads(which, n as u32);
    let (blocks, threads) = (blocks as usize, threads as usize);
    let mut partial = vec![0i32; blocks];
    for (i, &x) in input.iter().enumerate() {
        let b = match which {
            2 => i / threads,
            3..=5 => i / (2 * threads),
            // reduce6 strides over the grid: element i belongs to the block of its thread.
            _ if n.is_power_of_two() => (i / (2 * threads)) % blocks,
            _ => (i / threads) % blocks,
        };
        partial[b] = partial[b].wrapping_add(x);
    }
    partial
}

/// Inputs of `n` small integers, the first pass checked block by block, then the final sum.
#[cfg(not(target_arch = "nvptx64"))]
fn check(dev: &gpu_host::Device, which: u32, n: usize) -> anyhow::Result<crate::Checked> {
    let mut rng = super::common::Lcg(which * 7919 + n as u32);
    let input: Vec<i32> = (0..n).map(|_| rng.below(256) as i32 - 128).collect();
    let want_total = input.iter().fold(0i32, |a, &x| a.wrapping_add(x));
    let first = pass(dev, which, &input)?;
    if let Err(e) = super::common::first_mismatch("partial sums of the first pass", &first, &cpu_pass(which, &input)) {
        return Ok(Err(e));
    }
    let total = if which <= 3 {
        // The sample's device loop: the kernel again over the partials until one is left.
        let mut s = first;
        while s.len() > 1 {
            s = pass(dev, which, &s)?;
        }
        s[0]
    } else {
        // `--cpufinal`: the host adds the first pass's partials.
        first.iter().fold(0i32, |a, &x| a.wrapping_add(x))
    };
    Ok(if total == want_total { Ok(()) } else { Err(format!("sum = {total}, expected {want_total}")) })
}

/// The reduce2 entry's check.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check2(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    check(dev, 2, n)
}
/// The reduce3 entry's check.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check3(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    check(dev, 3, n)
}
/// The reduce4 entry's check.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check4(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    check(dev, 4, n)
}
/// The reduce5 entry's check.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check5(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    check(dev, 5, n)
}
/// The reduce6 entry's check.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check6(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    check(dev, 6, n)
}
