//! The variants of the barrier and the warp votes (§5.3, §5.7; 002's warp-level synchronisation):
//! `__syncthreads_count/and/or`, `__ballot_sync`, `__any_sync`, `__all_sync` and `__syncwarp`, with
//! partial last warps and blocks.
//!
//! `__syncthreads_count(p)` is a barrier that also returns, to every thread of the block, how many
//! threads passed `p`; `_and` / `_or` whether all / any did. Every thread of the block must reach it —
//! also the threads past the end of the data in the last block. They pass the operation's identity
//! (`false` to count and or, `true` to and), so that each result is over the threads with an element.
//!
//! The warp votes name their lanes in a mask. In a partial last warp only the lanes with an element
//! take part: the kernel first finds them with a full-warp `__ballot_sync(FULL_MASK, i < n)` (every
//! lane of the warp executes it), then votes with that mask. Those lanes also swap values through
//! shared memory: each writes its slot, `__syncwarp(mask)` orders the writes before the reads, and each
//! reads the slot of the next lane (cyclically among the lanes with an element).
//!
//! Decision procedure (§5.7):
//! 1. Who writes? Each thread its own shared slot and its own output elements (an `Output`).
//! 2. Who reads after whom? Lanes read slots of other lanes of their warp: `__syncwarp(mask)` between
//!    the writes and the reads, executed by every lane of the mask. The barrier variants are reached by
//!    every thread of the block.
//! 3. Across blocks? Nothing crosses blocks.
//! 4. Deterministic? Yes: counts and predicates do not depend on any order.
use gpu_std::block::{sync_threads_and, sync_threads_count, sync_threads_or};
use gpu_std::thread::{global_index_x, thread_idx};
use gpu_std::warp::{self, FULL_MASK};
use gpu_std::{Global, Output, kernel, shared_layout};

/// Threads per block (whole warps: a partial warp only ever comes from `n`).
pub const BLOCK: u32 = 128;

shared_layout! {
    /// One slot per thread for the warp exchange.
    pub struct Exchange {
        pub slots: [u32; BLOCK as usize],
    }
}
/// Dynamic shared memory per block.
pub const SHARED_BYTES: usize = Exchange::BYTES;

/// Output words per thread: thread `g` writes word `w` to `out[w * threads + g]`.
/// `__syncthreads_count(p)` over the block's threads with an element.
pub const W_COUNT: usize = 0;
/// `__syncthreads_and(p)` over them.
pub const W_AND: usize = 1;
/// `__syncthreads_or(p)` over them.
pub const W_OR: usize = 2;
/// `__ballot_sync(lanes, p)`, `lanes` = the warp's lanes with an element (threads with one only).
pub const W_BALLOT: usize = 3;
/// `__any_sync(lanes, p)`.
pub const W_ANY: usize = 4;
/// `__all_sync(lanes, p)`.
pub const W_ALL: usize = 5;
/// `preds` of the next lane among `lanes`, read through shared memory after `__syncwarp(lanes)`.
pub const W_NEXT: usize = 6;
/// Words per thread.
pub const WORDS: usize = 7;

kernel! {
    /// `p = preds[i] != 0` for `i < n = preds.len()`. Every thread writes the three block words; threads
    /// with an element also the four warp words. `out` has `WORDS` x (threads in the grid) elements.
    /// Launch `BLOCK` threads per block, `SHARED_BYTES`.
    pub fn sync_variants<'a>(preds: Global<'a, u32>, out: Output<'a, u32>) {
        let i = global_index_x();
        let valid = i < preds.len();
        let p = valid && preds.get(i) != 0;
        let count = sync_threads_count(p);
        let and = sync_threads_and(p || !valid);
        let or = sync_threads_or(p);
        let lanes = warp::ballot(FULL_MASK, valid);
        let mut words = out.grid_stride();
        let mut put = |w: u32| {
            if let Some(slot) = words.next() {
                slot.set(w);
            }
        };
        put(count);
        put(and as u32);
        put(or as u32);
        if valid {
            let ballot = warp::ballot(lanes, p);
            let any = warp::any(lanes, p);
            let all = warp::all(lanes, p);
            let slots = Exchange::view().slots;
            let t = thread_idx().x as usize;
            slots.set(t, preds.get(i));
            warp::sync_warp(lanes);
            // The lanes with an element are lanes 0..k of the warp (they hold consecutive indices).
            let lane = warp::lane_id();
            let next = (lane + 1) % lanes.count_ones();
            let neighbour = slots.get(t - lane as usize + next as usize);
            put(ballot);
            put(any as u32);
            put(all as u32);
            put(neighbour);
        }
    }
}
