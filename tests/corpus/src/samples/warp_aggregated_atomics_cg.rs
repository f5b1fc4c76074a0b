//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420
//! Samples/3_CUDA_Features/warpAggregatedAtomicsCG/warpAggregatedAtomicsCG.cu (filter_arr,
//! atomicAggInc)`.
//!
//! Kept: the grid-stride filter that copies every positive element of `src` to `dst` at a slot drawn
//! from one counter, with the warp-aggregated increment: the lanes that take the branch form a group,
//! its first lane adds the group's size to the counter with one `atomicAdd`, shuffles the old value
//! to the group, and each lane writes at that value plus its rank in the group. 512 threads per
//! block, `n / 512 + 1` blocks; inputs `rand() % 5` (here an LCG's). Changed: `cg::coalesced_threads()`
//! (the lanes active in the branch: `__activemask()`) is made with `__ballot_sync` of the branch
//! condition over the full warp just before the branch, and the loop runs while the warp's first
//! index is below `n`, so that every lane of a warp reaches the ballot together (lanes past `n` vote
//! false): gpu-std's `active_mask()` is not the branch's active set on the emulator (it returns the
//! lanes that have not exited), so the group must be computed. Rank = popcount of the lower lanes
//! of the group, leader = its lowest lane, as cooperative groups computes them. `mapToBuckets` and
//! `calculateMaxInEachBuckets` (`labeled_partition`, a `__match_any_sync`) are not ported: gpu-std
//! has no match primitive.
//!
//! Synchronisation. The counter is the only location shared by threads: one device-scope atomic add
//! per group, so every slot range is handed out once. Each lane then writes its own slot of `dst`
//! (ranges of different groups are disjoint, ranks within a group distinct), and reads only `src`.
//! The shuffle exchanges registers within the group, whose lanes all execute it.
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::warp::{FULL_MASK, ballot, lane_id, shfl_idx};
use gpu_std::{Global, GlobalMut, kernel};

/// `NUM_THREADS_PER_BLOCK`.
pub const THREADS: u32 = 512;

kernel! {
    /// `filter_arr`: `dst[..*nres]` = the positive elements of `src[..n]`, in the order the slots were
    /// drawn.
    pub fn filter_arr<'a>(dst: GlobalMut<'a, i32>, nres: GlobalMut<'a, i32>, src: Global<'a, i32>, n: u32) {
        let id = thread_idx().x + block_idx().x * block_dim().x;
        let lane = lane_id();
        let mut i = id;
        while i - lane < n {
            let take = i < n && src.get(i as usize) > 0;
            // cg::coalesced_threads() inside the branch: the lanes that take it.
            let active = ballot(FULL_MASK, take);
            if take {
                // atomicAggInc(nres)
                let rank = (active & (1u32 << lane).wrapping_sub(1)).count_ones();
                let mut res = 0;
                if rank == 0 {
                    res = nres.atomic(0).fetch_add(active.count_ones() as i32);
                }
                res = shfl_idx(active, res, active.trailing_zeros());
                dst.set((res + rank as i32) as usize, src.get(i as usize));
            }
            i += grid_dim().x * block_dim().x;
        }
    }
}

/// `n` values `0..5`, `n / 512 + 1` blocks; the count and the multiset of `dst[..nres]` compared
/// with the CPU's filter (the order of the slots is the schedule's).
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    let mut rng = super::common::Lcg(n as u32 + 5);
    let src: Vec<i32> = (0..n).map(|_| rng.below(5) as i32).collect();
    let mut want: Vec<i32> = src.iter().copied().filter(|&x| x > 0).collect();
    let d_src = dev.upload("src", &src)?;
    let d_dst = dev.filled("dst", n, -1i32)?;
    let d_nres = dev.filled("nres", 1, 0i32)?;
    let blocks = (n / THREADS as usize) as u32 + 1;
    dev.launch::<filter_arr>(
        gpu_host::Launch::linear(blocks, THREADS, 0),
        (d_dst.view_mut(), d_nres.view_mut(), d_src.view(), n as u32),
    )?;
    let nres = d_nres.read()?[0];
    if nres as usize != want.len() {
        return Ok(Err(format!("nres = {nres}, expected {}", want.len())));
    }
    let mut got = d_dst.read()?[..want.len()].to_vec();
    got.sort_unstable();
    want.sort_unstable();
    Ok(super::common::first_mismatch("sorted dst", &got, &want))
}
