//! Warp-level primitives: lane identity, shuffles and votes.
//!
//! A warp is 32 consecutive threads of a block (by linear rank). Since Volta, lanes of a warp are
//! scheduled independently, so every warp collective names the lanes that take part in a `mask`.
//! Shuffles and votes exchange registers inside the warp without shared memory and without a block
//! barrier.
//!
//! The PTX rules, and how this module keeps safe code out of undefined behaviour:
//! - *The calling lane must be in `mask`* (PTX leaves the behaviour undefined otherwise). The safe functions
//!   check it and trap with the reason (device `printf`, then `trap`); with [`FULL_MASK`] the check
//!   compiles away, so the common full-warp case costs nothing. The `*_unchecked` functions skip the
//!   check and are `unsafe`.
//! - *Every non-exited lane named in `mask` must execute the same collective*; the instruction waits
//!   for them. A lane that never arrives hangs the warp: a liveness bug, like a divergent
//!   `__syncthreads`, not memory unsafety. Lanes that exited are not waited for; a shuffle that reads
//!   from one gets an unspecified value, which is still a valid value because shuffled types are
//!   [`Pod`](crate::Pod) scalars.
//! - *A shuffle whose source lane is outside `mask`* returns an undefined value (again a valid value
//!   of the type) to the lane that reads it; nothing else is undefined, so a kernel that never uses
//!   that value is correct.
//!
//! The emulator reports every misuse — a lane outside its own mask (a trap, as on the GPU), a mask
//! naming live lanes that never arrive (a deadlock) — with the lanes and source lines involved,
//! whichever function was called. Like the GPU, it does not wait for lanes that exited or that a
//! partial warp lacks. A lane that shuffles from outside the mask, or from an exited or absent lane,
//! receives `gpu_std::emu::POISON` (`0xDEADBEEF` in each 32-bit word) and the launch's outcome a
//! warning.
//!
//! `width` (a power of two, 1..=32) splits the warp into independent segments of `width` lanes, as
//! CUDA's `__shfl_*_sync(mask, v, b, width)`. The PTX clamp operand is `((32 - width) << 8) | 0x1f`
//! for down/xor/idx and `(32 - width) << 8` for up; a source lane outside the segment (or past its
//! end) yields the caller's own value.
//!
//! Floor of the views and primitives: names gpu-std's vocabulary, the backend (`crate::backend`: the PTX
//! layer on the GPU, the emulator on the host) and other primitives; nothing of the kernel floor
//! (`Kernel`, signatures, launch arguments) nor the emulator's launch API.

use crate::backend;
pub use crate::vocab::lanes::{FULL_MASK, ShflMode, WARP_SIZE, shfl_source_lane};

/// Values that can be shuffled: 32-bit types in one `shfl.sync`, 64-bit types in two.
pub trait ShflValue: crate::Pod {
    #[doc(hidden)]
    fn shfl_with<F: FnMut(u32) -> u32>(self, f: F) -> Self;
}

macro_rules! shfl32 {
    ($($t:ty => |$x:ident| $to:expr, |$y:ident| $from:expr;)*) => {$(
        impl ShflValue for $t {
            #[inline(always)]
            fn shfl_with<F: FnMut(u32) -> u32>(self, mut f: F) -> Self {
                let $x = self;
                let $y = f($to);
                $from
            }
        }
    )*};
}
shfl32! {
    u32 => |x| x, |y| y;
    i32 => |x| x as u32, |y| y as i32;
    f32 => |x| x.to_bits(), |y| f32::from_bits(y);
}

macro_rules! shfl64 {
    ($($t:ty => |$x:ident| $to:expr, |$y:ident| $from:expr;)*) => {$(
        impl ShflValue for $t {
            #[inline(always)]
            fn shfl_with<F: FnMut(u32) -> u32>(self, mut f: F) -> Self {
                let $x = self;
                let bits: u64 = $to;
                let lo = f(bits as u32) as u64;
                let hi = f((bits >> 32) as u32) as u64;
                let $y = lo | (hi << 32);
                $from
            }
        }
    )*};
}
shfl64! {
    u64 => |x| x, |y| y;
    i64 => |x| x as u64, |y| y as i64;
    f64 => |x| x.to_bits(), |y| f64::from_bits(y);
}

#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn shfl<T: ShflValue>(mode: ShflMode, mask: u32, v: T, b: u32, width: u32) -> T {
    backend::check_in_mask(mask, c"shfl.sync", crate::site());
    // SAFETY: the calling lane is in `mask` (checked above).
    unsafe { shfl_unchecked(mode, mask, v, b, width) }
}

/// `shfl.sync` in any mode without the mask check of the safe functions.
/// PTX: `shfl.sync.up.b32`, `shfl.sync.down.b32`, `shfl.sync.bfly.b32`, `shfl.sync.idx.b32`.
///
/// # Safety
/// The calling lane must be in `mask` (PTX leaves the result undefined otherwise). `width` must be a
/// power of two up to 32 (checked: a panic, which traps on the GPU).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn shfl_unchecked<T: ShflValue>(mode: ShflMode, mask: u32, v: T, b: u32, width: u32) -> T {
    assert!(width.is_power_of_two() && width <= WARP_SIZE, "shuffle width must be a power of two <= 32");
    let c = match mode {
        ShflMode::Up => (32 - width) << 8,
        _ => ((32 - width) << 8) | 0x1f,
    };
    let site = crate::site();
    v.shfl_with(|x| backend::shfl(mode, mask, x, b, c, site))
}

/// `__shfl_down_sync(mask, v, delta)`: the value of lane `lane + delta`. PTX: `shfl.sync.down.b32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn shfl_down<T: ShflValue>(mask: u32, v: T, delta: u32) -> T {
    shfl(ShflMode::Down, mask, v, delta, WARP_SIZE)
}
/// `__shfl_down_sync(mask, v, delta, width)`. PTX: `shfl.sync.down.b32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn shfl_down_width<T: ShflValue>(mask: u32, v: T, delta: u32, width: u32) -> T {
    shfl(ShflMode::Down, mask, v, delta, width)
}
/// `__shfl_up_sync(mask, v, delta)`: the value of lane `lane - delta`. PTX: `shfl.sync.up.b32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn shfl_up<T: ShflValue>(mask: u32, v: T, delta: u32) -> T {
    shfl(ShflMode::Up, mask, v, delta, WARP_SIZE)
}
/// `__shfl_up_sync(mask, v, delta, width)`. PTX: `shfl.sync.up.b32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn shfl_up_width<T: ShflValue>(mask: u32, v: T, delta: u32, width: u32) -> T {
    shfl(ShflMode::Up, mask, v, delta, width)
}
/// `__shfl_xor_sync(mask, v, lane_mask)`: the value of lane `lane ^ lane_mask`. PTX: `shfl.sync.bfly.b32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn shfl_xor<T: ShflValue>(mask: u32, v: T, lane_mask: u32) -> T {
    shfl(ShflMode::Xor, mask, v, lane_mask, WARP_SIZE)
}
/// `__shfl_xor_sync(mask, v, lane_mask, width)`. PTX: `shfl.sync.bfly.b32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn shfl_xor_width<T: ShflValue>(mask: u32, v: T, lane_mask: u32, width: u32) -> T {
    shfl(ShflMode::Xor, mask, v, lane_mask, width)
}
/// `__shfl_sync(mask, v, src_lane)`: the value of lane `src_lane`. PTX: `shfl.sync.idx.b32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn shfl_idx<T: ShflValue>(mask: u32, v: T, src_lane: u32) -> T {
    shfl(ShflMode::Idx, mask, v, src_lane, WARP_SIZE)
}
/// `__shfl_sync(mask, v, src_lane, width)`. PTX: `shfl.sync.idx.b32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn shfl_idx_width<T: ShflValue>(mask: u32, v: T, src_lane: u32, width: u32) -> T {
    shfl(ShflMode::Idx, mask, v, src_lane, width)
}

/// `__ballot_sync(mask, pred)`: bit `i` set iff lane `i` is in `mask` and passed `true`.
/// PTX: `vote.sync.ballot.b32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn ballot(mask: u32, pred: bool) -> u32 {
    backend::check_in_mask(mask, c"vote.sync.ballot", crate::site());
    backend::ballot(mask, pred, crate::site())
}
/// `__ballot_sync` without the mask check. PTX: `vote.sync.ballot.b32`.
///
/// # Safety
/// The calling lane must be in `mask`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn ballot_unchecked(mask: u32, pred: bool) -> u32 {
    backend::ballot(mask, pred, crate::site())
}
/// The lanes of `mask` whose `value` has the same low `bits` bits as the caller's (`bits` up to 32):
/// `__match_any_sync(mask, value & ((1 << bits) - 1))`, computed with one ballot of the lanes that
/// take part and one ballot per bit, which on sm_90 runs faster than `match.any.sync` (measured in
/// the radix sort's ranking, where `bits` is 8). Lanes that exited or are absent never match. Every
/// lane of `mask` must pass the same `bits`. PTX: `vote.sync.ballot.b32`, `not.b32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn match_bits(mask: u32, value: u32, bits: u32) -> u32 {
    assert!(bits <= 32, "match_bits takes at most 32 bits");
    backend::check_in_mask(mask, c"vote.sync.ballot", crate::site());
    backend::match_bits(mask, value, bits, crate::site())
}
/// `__any_sync(mask, pred)`. PTX: `vote.sync.any.pred`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn any(mask: u32, pred: bool) -> bool {
    backend::check_in_mask(mask, c"vote.sync.any", crate::site());
    backend::vote_any(mask, pred, crate::site())
}
/// `__all_sync(mask, pred)`. PTX: `vote.sync.all.pred`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn all(mask: u32, pred: bool) -> bool {
    backend::check_in_mask(mask, c"vote.sync.all", crate::site());
    backend::vote_all(mask, pred, crate::site())
}
/// `__syncwarp(mask)`: the named lanes wait for each other; orders their memory accesses.
/// PTX: `bar.warp.sync`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_warp(mask: u32) {
    backend::check_in_mask(mask, c"bar.warp.sync", crate::site());
    backend::sync_warp(mask, crate::site())
}
/// `__syncwarp(mask)` without the mask check. PTX: `bar.warp.sync`.
///
/// # Safety
/// The calling lane must be in `mask`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn sync_warp_unchecked(mask: u32) {
    backend::sync_warp(mask, crate::site())
}
/// `__activemask()`: the lanes currently executing this instruction together. PTX: `activemask.b32`.
/// (The emulator returns the lanes of the warp that have not exited.)
#[inline(always)]
pub fn active_mask() -> u32 {
    backend::active_mask()
}
/// The lane of the calling thread within its warp, 0..32. PTX: `%laneid`.
#[inline(always)]
pub fn lane_id() -> u32 {
    backend::lane_id()
}
/// The warp of the calling thread within its block (`block_rank() / 32`).
#[inline(always)]
pub fn warp_id() -> u32 {
    crate::thread::block_rank() / WARP_SIZE
}

/// Sum over the 32 lanes by `shfl_down` with offsets 16, 8, 4, 2, 1 (the classic `warpReduceSum`).
/// The result is valid in lane 0 only. Every lane of the warp must call it (a lane that exited
/// contributes an unspecified value).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn reduce_sum_f32(mut v: f32) -> f32 {
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        v += shfl_down(FULL_MASK, v, offset);
        offset >>= 1;
    }
    v
}
