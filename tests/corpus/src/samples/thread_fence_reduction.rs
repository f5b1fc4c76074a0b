//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420
//! Samples/2_Concepts_and_Techniques/threadFenceReduction/threadFenceReduction_kernel.cuh
//! (reduceSinglePass, reduceBlocks, reduceBlock)`, with the host rules of `threadFenceReduction.cu`
//! (`getNumBlocksAndThreads`, `maxThreads = 128`, `maxBlocks = 64`).
//!
//! Kept: the grid-stride load (two elements per iteration, `nIsPow2` as a parameter), the block
//! reduction over `volatile` shared memory (a 32-wide tree per warp with `tile32.sync()` between
//! steps, a block barrier, thread 0 adding the warps' sums), thread 0 writing the block's partial,
//! `__threadfence()` by every thread, thread 0 drawing a ticket with `atomicInc(&retirementCount,
//! gridDim.x)` and publishing "am I last" in shared memory, a block barrier, and the last block
//! reducing the partials the same way and resetting the counter with a plain store. Launch: 128
//! threads (`nextPow2(n / 2)` below 256 elements), `n / 256` blocks at most 64. Changed: `float`
//! stays `f32` but the inputs are small integers, so that every order of addition gives the same
//! exact sum and the check compares bits; the `blockSize` template parameter is the launch's
//! `blockDim.x` (what the sample's `switch (threads)` instantiates); the `__device__` counter is a
//! one-element buffer the host zeroes; the dynamic `sdata` and the static `amLast` are one layout.
//! Sizes start at 64 elements: below that the sample launches blocks of fewer than 32 threads, whose
//! 32-wide tree reads `sdata[tid + 16]` past the `threads * 4` bytes of shared memory it allocates.
//!
//! Synchronisation. Within a warp, step `i` of the tree has lane `vid < i` read `sdata[tid + i]`
//! (whose owner, lane `vid + i >= i`, does not write in that step) and write `sdata[tid]`;
//! `tile32.sync()` (`__syncwarp`) orders each step's writes before the next step's reads. The block
//! barrier then orders every warp's `sdata[32 w]` before thread 0 reads them, and a second one orders
//! thread 0's `sdata[0]` before everyone's later use. Across blocks: thread 0 of block X writes
//! `g_odata[X]`, every thread fences (`fence.sc.gpu`), thread 0 takes its ticket. The block that draws
//! the last ticket passes a barrier (which hands `amLast` from thread 0 to the block) and its threads
//! read every partial. Nothing acquires after the ticket: the last block's fences precede its
//! ticket, so a partial is ordered before a reader only when the writer's fence came before the
//! reader's in Fence-SC order (see `docs/memory-model.md`). This port therefore adds one
//! `__threadfence()` after the barrier in the last block, before it reads the partials (the pattern
//! of the CUDA Programming Guide's last-block sum): each writer's fence precedes that fence in
//! Fence-SC order, because the writer's ticket precedes the last ticket. Without it the detector
//! reports the race (the report says which accesses). The counter's reset by the thread that drew
//! the last ticket follows every increment in the same-location order: no race.
use gpu_std::block::sync_threads;
use gpu_std::fence::threadfence;
use gpu_std::grid::tiled_partition;
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::{Global, GlobalMut, SharedSlice, kernel, shared_layout};

/// The sample's `maxThreads`: the largest block.
pub const MAX_THREADS: u32 = 128;
/// The sample's `maxBlocks`.
pub const MAX_BLOCKS: u32 = 64;

shared_layout! {
    /// `extern __shared__ float sdata[]` (one element per thread) and `__shared__ bool amLast`.
    pub struct Smem {
        /// The block's partial sums.
        pub sdata: [f32; MAX_THREADS as usize],
        /// Whether this block drew the last ticket.
        pub am_last: [u32; 1],
    }
}

/// `reduceBlock`: the block's sum into `sdata[0]`, every access volatile as in the sample.
#[inline(always)]
fn reduce_block(sdata: SharedSlice<f32>, my_sum: f32, tid: u32) {
    let tile32 = tiled_partition::<32>();
    let t = tid as usize;
    sdata.set_volatile(t, my_sum);
    tile32.sync();
    let vid = tid & 31;
    let mut beta = my_sum;
    let mut i = 16;
    while i > 0 {
        if vid < i {
            let temp = sdata.get_volatile(t + i as usize);
            beta += temp;
            sdata.set_volatile(t, beta);
        }
        tile32.sync();
        i >>= 1;
    }
    sync_threads();
    if tid == 0 {
        let mut beta = 0.0f32;
        let mut i = 0;
        while i < block_dim().x as usize {
            beta += sdata.get_volatile(i);
            i += 32;
        }
        sdata.set_volatile(0, beta);
    }
    sync_threads();
}

kernel! {
    /// `reduceSinglePass`: every block's partial into `g_odata[block]`, and the last block to finish
    /// their sum into `g_odata[0]`.
    pub fn reduce_single_pass<'a>(
        g_idata: Global<'a, f32>,
        g_odata: GlobalMut<'a, f32>,
        retirement_count: GlobalMut<'a, u32>,
        n: u32,
        n_is_pow2: u32,
    ) {
        let smem = Smem::view();
        let tid = thread_idx().x;
        let block_size = block_dim().x;
        // reduceBlocks
        let mut i = block_idx().x * (block_size * 2) + tid;
        let grid_size = block_size * 2 * grid_dim().x;
        let mut my_sum = 0.0f32;
        while i < n {
            my_sum += g_idata.get(i as usize);
            if n_is_pow2 != 0 || i + block_size < n {
                my_sum += g_idata.get((i + block_size) as usize);
            }
            i += grid_size;
        }
        reduce_block(smem.sdata, my_sum, tid);
        if tid == 0 {
            g_odata.set(block_idx().x as usize, smem.sdata.get(0));
        }
        if grid_dim().x > 1 {
            threadfence();
            if tid == 0 {
                let ticket = retirement_count.atomic(0).fetch_inc(grid_dim().x);
                smem.am_last.set(0, (ticket == grid_dim().x - 1) as u32);
            }
            sync_threads();
            if smem.am_last.get(0) != 0 {
                // Added (see the module docs): acquire the other blocks' partials.
                threadfence();
                let mut i = tid;
                let mut my_sum = 0.0f32;
                while i < grid_dim().x {
                    my_sum += g_odata.get(i as usize);
                    i += block_size;
                }
                reduce_block(smem.sdata, my_sum, tid);
                if tid == 0 {
                    g_odata.set(0, smem.sdata.get(0));
                    retirement_count.set(0, 0);
                }
            }
        }
    }
}

/// `getNumBlocksAndThreads` of threadFenceReduction: (blocks, threads).
#[cfg(not(target_arch = "nvptx64"))]
fn blocks_and_threads(n: u32) -> (u32, u32) {
    if n == 1 {
        return (1, 1);
    }
    let threads = if n < MAX_THREADS * 2 { super::common::next_pow2(n / 2) } else { MAX_THREADS };
    ((n / (threads * 2)).clamp(1, MAX_BLOCKS), threads)
}

/// `n` small integers as floats, one single-pass launch, the sum compared exactly (every partial sum
/// is an integer below 2^24, so the order of the additions does not change it). `n >= 64`.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    let mut rng = super::common::Lcg(n as u32);
    let input: Vec<f32> = (0..n).map(|_| rng.below(8) as f32).collect();
    let want: f32 = input.iter().sum();
    let (blocks, threads) = blocks_and_threads(n as u32);
    let d_in = dev.upload("g_idata", &input)?;
    let d_out = dev.filled("g_odata", blocks as usize, 0.0f32)?;
    let count = dev.filled("retirementCount", 1, 0u32)?;
    let cfg = gpu_host::Launch::linear(blocks, threads, Smem::BYTES);
    let pow2 = (n as u32).is_power_of_two() as u32;
    dev.launch::<reduce_single_pass>(cfg, (d_in.view(), d_out.view_mut(), count.view_mut(), n as u32, pow2))?;
    let (got, count) = (d_out.read()?[0], count.read()?[0]);
    Ok(if got != want {
        Err(format!("sum = {got}, expected {want} ({blocks} blocks of {threads})"))
    } else if count != 0 {
        Err(format!("retirementCount = {count} after the launch, expected 0"))
    } else {
        Ok(())
    })
}
