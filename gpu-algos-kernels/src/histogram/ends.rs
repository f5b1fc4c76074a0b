//! What the histograms (and the sort's digit histogram) share: the elements of a split view that
//! lie outside its 16-byte vectors, counted one by one by block 0.
//!
//! Owns: [`count_ends`]. Imports gpu-std only; no histogram's module.
use gpu_std::thread::{block_dim, block_idx, thread_idx};
use gpu_std::vector::{Lanes, Split};

/// The elements before the first and after the last 16-byte boundary of `split`: block 0 counts them,
/// its threads taking one element each in turn.
#[inline(always)]
pub(crate) fn count_ends<T: Lanes>(split: &Split<'_, T>, count: impl Fn(T)) {
    if block_idx().x == 0 {
        let (head, tail) = (split.head.len(), split.tail.len());
        let mut j = thread_idx().x as usize;
        while j < head + tail {
            count(if j < head { split.head.get(j) } else { split.tail.get(j - head) });
            j += block_dim().x as usize;
        }
    }
}
