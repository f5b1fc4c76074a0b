//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420
//! Samples/2_Concepts_and_Techniques/reductionMultiBlockCG/reductionMultiBlockCG.cu
//! (reduceSinglePassMultiBlockCG, reduceBlock)`.
//!
//! Kept: each thread accumulates its grid-stride elements in its own `double` of dynamic shared
//! memory, a block barrier, the block reduction (`cg::reduce` over each 32-thread tile, written back
//! by every lane to its own slot, a barrier, thread 0 adding the tiles' sums, a barrier), thread 0
//! writing the block's sum as `float`, `grid.sync()`, and grid thread 0 adding every block's sum into
//! `g_odata[0]`. Cooperative launch with `threads * sizeof(double)` bytes of shared memory and as many
//! blocks as are co-resident (the sample caps its grid the same way). Changed: the block size is
//! fixed to 256 (the sample asks the occupancy API); `cg::reduce` is written out as the butterfly of
//! `shfl_xor` that cooperative groups uses for `double`; inputs are small integers, so that every
//! partial sum is exact and the check compares bits.
//!
//! Synchronisation. `sdata[rank]` is written and read only by thread `rank` until the tile reduction
//! has written it back, so the barrier before `reduceBlock` orders nothing a thread does not already
//! order by program order; the barrier after the write-back orders every tile's `sdata[32 w]` before
//! thread 0 reads them. The tile reduction exchanges registers only. Across blocks: thread 0 of each
//! block writes `g_odata[block]`, and grid thread 0 reads them all after `grid.sync()`, the grid-wide
//! barrier that orders them (thread 0 of block 0 also read-modify-writes `g_odata[0]`, its own block's
//! element).
use gpu_std::block::sync_threads;
use gpu_std::grid::this_grid;
use gpu_std::shared::dynamic;
use gpu_std::thread::{block_dim, block_idx, block_rank, grid_dim};
use gpu_std::warp::{FULL_MASK, shfl_xor};
use gpu_std::{Global, GlobalMut, SharedSlice};

/// Threads per block.
pub const THREADS: u32 = 256;

/// `reduceBlock`: the block's sum into `sdata[0]`.
#[inline(always)]
fn reduce_block(sdata: SharedSlice<f64>) {
    let tid = block_rank() as usize;
    // cg::reduce(tile32, sdata[tid], cg::plus<double>()): every lane gets the tile's sum.
    let mut v = sdata.get(tid);
    let mut lane_mask = 1;
    while lane_mask < 32 {
        v += shfl_xor(FULL_MASK, v, lane_mask);
        lane_mask *= 2;
    }
    sdata.set(tid, v);
    sync_threads();
    if tid == 0 {
        let mut beta = 0.0f64;
        let mut i = 0;
        while i < block_dim().x as usize {
            beta += sdata.get(i);
            i += 32;
        }
        sdata.set(0, beta);
    }
    sync_threads();
}

gpu_std::kernel! {
    /// `reduceSinglePassMultiBlockCG`: the sum of `g_idata[..n]` into `g_odata[0]` (`g_odata` has one
    /// element per block).
    pub fn reduce_single_pass_multi_block_cg<'a>(
        g_idata: Global<'a, f32>,
        g_odata: GlobalMut<'a, f32>,
        n: u32,
        workspace: GlobalMut<'a, u32>,
    ) {
        let grid = this_grid(workspace);
        let sdata = dynamic::<f64>();
        let rank = block_rank() as usize;
        sdata.set(rank, 0.0);
        let mut i = grid.thread_rank() as usize;
        while i < n as usize {
            sdata.set(rank, sdata.get(rank) + g_idata.get(i) as f64);
            i += grid.size() as usize;
        }
        sync_threads();
        reduce_block(sdata);
        if rank == 0 {
            g_odata.set(block_idx().x as usize, sdata.get(0) as f32);
        }
        grid.sync();
        if grid.thread_rank() == 0 {
            let mut block = 1;
            while block < grid_dim().x as usize {
                g_odata.set(0, g_odata.get(0) + g_odata.get(block));
                block += 1;
            }
        }
    }
}

/// `n` small integers as floats, one cooperative launch, the sum compared exactly.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    use gpu_std::Dim3;
    let mut rng = super::common::Lcg(n as u32 ^ 0x5eed);
    let input: Vec<f32> = (0..n).map(|_| rng.below(16) as f32).collect();
    let want: f32 = input.iter().map(|&x| x as f64).sum::<f64>() as f32;
    let smem = THREADS as usize * 8;
    let blocks = dev.max_coresident_blocks::<reduce_single_pass_multi_block_cg>(Dim3::x(THREADS), smem)?;
    let d_in = dev.upload("g_idata", &input)?;
    let d_out = dev.filled("g_odata", blocks as usize, 0.0f32)?;
    let ws = dev.filled("grid_workspace", gpu_std::grid::GRID_BARRIER_WORDS, 0u32)?;
    let cfg = gpu_host::Launch::linear(blocks, THREADS, smem).cooperative();
    dev.launch::<reduce_single_pass_multi_block_cg>(cfg, (d_in.view(), d_out.view_mut(), n as u32, ws.view_mut()))?;
    let got = d_out.read()?[0];
    Ok(if got == want { Ok(()) } else { Err(format!("sum = {got}, expected {want} ({blocks} blocks)")) })
}
