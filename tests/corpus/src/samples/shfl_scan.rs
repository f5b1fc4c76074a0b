//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420
//! Samples/2_Concepts_and_Techniques/shfl_scan/shfl_scan.cu (shfl_scan_test, uniform_add,
//! shuffle_simple_test)`.
//!
//! Kept: the three launches of `shuffle_simple_test` — an inclusive scan of every 256-element block
//! (`__shfl_up_sync` within each warp, the warps' totals through shared memory, a second shuffle scan
//! of those by warp 0, each warp adding its predecessors' total) that also writes each block's total
//! to `partial_sums`; the same kernel over the partial sums in one block of `min(blocks, 256)`
//! threads; and `uniform_add`, one block per 256 elements after the first, thread 0 loading its
//! block's partial sum into a shared word that every thread adds after a barrier. The kernels have
//! no bounds checks, as in the sample, so `n` is a multiple of 256 (the sample fixes it at 65536) and
//! at most 65536 (the second launch scans one block). Changed: `data + blockSize` is an offset
//! parameter (views have no pointer arithmetic); a `NULL` `partial_sums` is an empty view. Inputs are
//! small integers (the sample uses all ones), so the check is exact. Sizes are chosen so that the
//! warp count of the second launch is 0, 1 or 2 (a power of two, as the shuffle width must be):
//! 2560 (10 partial sums: no complete warp, the warp phase skipped), 10240 (40: one warp and a
//! partial one), 16384 (64).
//!
//! Synchronisation. The in-warp scans exchange registers. Lane 31 of warp `w` writes `sums[w]`; the
//! barrier orders those writes before warp 0's lanes read them; each lane of warp 0 then writes back
//! only the element it read, and the second barrier orders those writes before every warp reads its
//! predecessor's. In `uniform_add` thread 0 writes `buf` and the barrier orders it before every
//! thread reads it. Blocks share nothing within a launch; the three launches are ordered by the host.
use gpu_std::block::sync_threads;
use gpu_std::shared::dynamic;
use gpu_std::thread::{block_dim, block_idx, thread_idx};
use gpu_std::warp::{FULL_MASK, shfl_up_width};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// Threads per block of the first launch and of `uniform_add`.
pub const BLOCK: u32 = 256;

kernel! {
    /// `shfl_scan_test`: an inclusive scan of each block's elements of `data` in place; thread
    /// `blockDim - 1` writes the block's total to `partial_sums[block]` unless `partial_sums` is empty
    /// (`NULL` in the sample).
    pub fn shfl_scan_test<'a>(data: GlobalMut<'a, i32>, width: u32, partial_sums: GlobalMut<'a, i32>) {
        let sums = dynamic::<i32>();
        let id = (block_idx().x * block_dim().x + thread_idx().x) as usize;
        let lane_id = (id % 32) as u32;
        let warp_id = thread_idx().x / 32;
        let mut value = data.get(id);
        let mut i = 1;
        while i <= width {
            let n = shfl_up_width(FULL_MASK, value, i, width);
            if lane_id >= i {
                value += n;
            }
            i *= 2;
        }
        if thread_idx().x % 32 == 31 {
            sums.set(warp_id as usize, value);
        }
        sync_threads();
        let warps = block_dim().x / 32;
        if warp_id == 0 && lane_id < warps {
            let mut warp_sum = sums.get(lane_id as usize);
            let mask = (1u32 << warps) - 1;
            let mut i = 1;
            while i <= warps {
                let n = shfl_up_width(mask, warp_sum, i, warps);
                if lane_id >= i {
                    warp_sum += n;
                }
                i *= 2;
            }
            sums.set(lane_id as usize, warp_sum);
        }
        sync_threads();
        let mut block_sum = 0;
        if warp_id > 0 {
            block_sum = sums.get(warp_id as usize - 1);
        }
        value += block_sum;
        data.set(id, value);
        if !partial_sums.is_empty() && thread_idx().x == block_dim().x - 1 {
            partial_sums.set(block_idx().x as usize, value);
        }
    }
}

shared_layout! {
    /// `__shared__ int buf` of `uniform_add`.
    pub struct Buf {
        /// The block's partial sum.
        pub buf: [i32; 1],
    }
}

kernel! {
    /// `uniform_add(data + offset, partial_sums, len)`: adds `partial_sums[block]` to each of the
    /// block's elements of `data[offset..]`.
    pub fn uniform_add<'a>(data: GlobalMut<'a, i32>, offset: u32, partial_sums: Global<'a, i32>, len: u32) {
        let buf = Buf::view().buf;
        let id = block_idx().x * block_dim().x + thread_idx().x;
        if id > len {
            return;
        }
        if thread_idx().x == 0 {
            buf.set(0, partial_sums.get(block_idx().x as usize));
        }
        sync_threads();
        let at = (offset + id) as usize;
        data.set(at, data.get(at) + buf.get(0));
    }
}

/// `n` (a multiple of 256, at most 65536) small integers, the sample's three launches, the inclusive
/// scan compared element by element.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    anyhow::ensure!(n.is_multiple_of(BLOCK as usize) && n >= 2 * BLOCK as usize && n <= 65536, "shfl_scan: n = {n}");
    let mut rng = super::common::Lcg(n as u32);
    let input: Vec<i32> = (0..n).map(|_| rng.below(10) as i32).collect();
    let want: Vec<i32> = input
        .iter()
        .scan(0, |s, &x| {
            *s += x;
            Some(*s)
        })
        .collect();
    let grid = (n / BLOCK as usize) as u32;
    let shmem = (BLOCK / 32) as usize * 4;
    let n_partial = grid;
    let p_block = n_partial.min(BLOCK);
    let p_grid = n_partial.div_ceil(p_block);
    let d_data = dev.upload("data", &input)?;
    let d_partial = dev.filled("partial_sums", n_partial as usize, 0i32)?;
    let none = dev.filled("null", 0, 0i32)?;
    dev.launch::<shfl_scan_test>(
        gpu_host::Launch::linear(grid, BLOCK, shmem),
        (d_data.view_mut(), 32, d_partial.view_mut()),
    )?;
    dev.launch::<shfl_scan_test>(
        gpu_host::Launch::linear(p_grid, p_block, shmem),
        (d_partial.view_mut(), 32, none.view_mut()),
    )?;
    dev.launch::<uniform_add>(
        gpu_host::Launch::linear(grid - 1, BLOCK, Buf::BYTES),
        (d_data.view_mut(), BLOCK, d_partial.view(), n as u32),
    )?;
    Ok(super::common::first_mismatch("data", &d_data.read()?, &want))
}
