//! The shuffle specialisations of CUB's warp collectives, as device functions the block algorithms
//! call: `NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
//! cub/cub/warp/specializations/warp_reduce_shfl.cuh (WarpReduceShfl::Reduce, ReduceStep)` and
//! `cub/cub/warp/specializations/warp_scan_shfl.cuh (WarpScanShfl::InclusiveScan, InclusiveScanStep,
//! Update)`, for a logical warp of the whole 32 lanes (`member_mask` all ones, `SHFL_C` 0).
//!
//! Kept: the step structure (offsets 1, 2, 4, 8, 16), the shuffle direction of each, and the rule
//! that decides whether a lane adds what it received. CUB's `ReduceStep` and `InclusiveScanStep` are
//! inline PTX that shuffles with the clamp `last_lane` (or `first_lane`) and adds under the
//! shuffle's own in-range predicate; here the shuffle uses the full clamp and the lane tests the same
//! condition itself (`lane + offset <= last_lane`, `lane >= first_lane + offset`): the same
//! `shfl.sync` per step, the same sums. Specialised to `u64` for reductions (two `shfl.sync.down.b32`
//! per step, as CUB's `unsigned long long` overload; for 32-bit integers CUB's full-warp path is
//! `redux.sync`, which gpu-std does not expose) and `u32` for scans.
//!
//! Synchronisation: none through memory. Values cross lanes only in registers, by `shfl.sync` with
//! the full mask, which every lane of the warp executes the same number of times (all 32 lanes call
//! these functions; lanes past the data carry 0). These modules have no entry of their own: with no
//! barrier, fence, atomic or strong access there is nothing to mutate; they are exercised by
//! `block_reduce_warp_reductions`, `block_reduce_raking` and `block_scan_*`.
use gpu_std::warp::{FULL_MASK, WARP_SIZE, lane_id, shfl_down, shfl_idx, shfl_up};

/// `log2(32)` steps.
const STEPS: u32 = 5;

/// `WarpReduceShfl<u64, 32>::Reduce<ALL_LANES_VALID>(input, valid_items, plus)`: lane 0 gets the sum
/// of lanes `0 .. valid_items` (all 32 when `all_lanes_valid`).
#[inline(always)]
pub fn reduce_sum_u64(input: u64, valid_items: i32, all_lanes_valid: bool) -> u64 {
    let lane = lane_id() as i32;
    let last_lane = if all_lanes_valid { WARP_SIZE as i32 - 1 } else { valid_items - 1 };
    let mut output = input;
    let mut step = 0;
    while step < STEPS {
        let offset = 1i32 << step;
        // ReduceStep: `shfl.sync.down` of both halves, added when the source lane is in range.
        let peer = shfl_down(FULL_MASK, output, offset as u32);
        if lane + offset <= last_lane {
            output = output.wrapping_add(peer);
        }
        step += 1;
    }
    output
}

/// `WarpScanShfl<u32, 32>::InclusiveScan(input, inclusive, plus)`.
#[inline(always)]
pub fn inclusive_sum_u32(input: u32) -> u32 {
    let lane = lane_id() as i32;
    let first_lane = 0i32;
    let mut inclusive = input;
    let mut step = 0;
    while step < STEPS {
        let offset = 1i32 << step;
        // InclusiveScanStep: `shfl.sync.up`, added when the source lane is in the segment.
        let temp = shfl_up(FULL_MASK, inclusive, offset as u32);
        if lane >= first_lane + offset {
            inclusive = temp.wrapping_add(inclusive);
        }
        step += 1;
    }
    inclusive
}

/// `WarpScan<u32, 32>::Scan(input, inclusive, exclusive, plus)`: `InclusiveScan`, then `Update` for an
/// integer sum (`exclusive = inclusive - input`, no shuffle). Returns `(inclusive, exclusive)`.
#[inline(always)]
pub fn scan_sum_u32(input: u32) -> (u32, u32) {
    let inclusive = inclusive_sum_u32(input);
    (inclusive, inclusive.wrapping_sub(input))
}

/// `WarpScan<u32, 32>::ExclusiveScan(input, exclusive, initial_value, plus)`: `InclusiveScan`, then
/// `Update` with the initial value (`inclusive = initial + inclusive`, `exclusive = inclusive -
/// input`). Returns `(inclusive, exclusive)`.
#[inline(always)]
pub fn exclusive_sum_init_u32(input: u32, initial_value: u32) -> (u32, u32) {
    let inclusive = initial_value.wrapping_add(inclusive_sum_u32(input));
    (inclusive, inclusive.wrapping_sub(input))
}

/// `WarpScanShfl::Broadcast(input, src_lane)`: `shfl.sync.idx`.
#[inline(always)]
pub fn broadcast_u32(input: u32, src_lane: u32) -> u32 {
    shfl_idx(FULL_MASK, input, src_lane)
}

/// `WarpReduceShfl<u32, 32>::ReduceStep` chain with an explicit `last_lane` (what `SegmentedReduce`
/// computes from the flags): lane 0 gets the sum of lanes `0 ..= last_lane`.
#[inline(always)]
pub fn reduce_sum_u32_to(input: u32, last_lane: i32) -> u32 {
    let lane = lane_id() as i32;
    let mut output = input;
    let mut step = 0;
    while step < STEPS {
        let offset = 1i32 << step;
        let peer = shfl_down(FULL_MASK, output, offset as u32);
        if lane + offset <= last_lane {
            output = output.wrapping_add(peer);
        }
        step += 1;
    }
    output
}

/// `WarpReduce<u32, 32>::TailSegmentedReduce(input, tail_flag, plus)` (`WarpReduceShfl::
/// SegmentedReduce<false>`): the flags by `vote.ballot`, kept from the calling lane up (`lanemask_ge`),
/// lane 31 always a tail; each lane reduces up to the first tail at or above it.
#[inline(always)]
pub fn tail_segmented_sum_u32(input: u32, tail_flag: bool) -> u32 {
    let lanemask_ge = FULL_MASK << lane_id();
    let mut warp_flags = gpu_std::warp::ballot(FULL_MASK, tail_flag);
    warp_flags &= lanemask_ge;
    warp_flags |= 1u32 << (WARP_SIZE - 1);
    let last_lane = warp_flags.trailing_zeros() as i32;
    reduce_sum_u32_to(input, last_lane)
}
