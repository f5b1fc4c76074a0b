//! Warp-level building blocks of the algorithms: a butterfly reduction and a Kogge–Stone inclusive
//! scan of one value per lane, under any associative operator (an [`Op`]'s `apply`, or
//! [`ScanValue::add`](crate::element::ScanValue::add)). The reduce, the scan, the scan's look-back
//! and the sort's digit scan all combine a warp's values through these two.
//!
//! Owns: collectives over the 32 lanes of a warp (shuffles only: no shared memory, no barrier).
//! Imports gpu-std and [`crate::element`] only; no algorithm's module.
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE};

use crate::element::Element;
#[cfg(doc)]
use crate::element::Op;

/// `op` over the warp by a butterfly (`shfl.sync.bfly`, offsets 16, 8, 4, 2, 1): every lane gets the
/// same bits, in a fixed order (`op(v, other)` at each step).
#[inline(always)]
pub fn reduce<T: Element>(mut v: T, op: impl Fn(T, T) -> T) -> T {
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        v = op(v, warp::shfl_xor(FULL_MASK, v, offset));
        offset >>= 1;
    }
    v
}

/// Inclusive scan of `op` over the warp (`shfl.up`, offsets 1, 2, 4, 8, 16): lane `l` gets
/// `op` over lanes `0 ..= l`, the earlier lanes' values on the left (`op(up, v)` at each step).
#[inline(always)]
pub fn inclusive_scan<T: Element>(mut v: T, op: impl Fn(T, T) -> T) -> T {
    let lane = warp::lane_id();
    let mut offset = 1;
    while offset < WARP_SIZE {
        let up = warp::shfl_up(FULL_MASK, v, offset);
        if lane >= offset {
            v = op(up, v);
        }
        offset <<= 1;
    }
    v
}
