//! Block barriers (`__syncthreads` and its reducing variants).
//!
//! A block barrier waits until every thread of the block has arrived, and orders memory: writes made
//! by any thread of the block before the barrier are visible to every thread of the block after it.
//! It is valid only when *uniformly reachable*: every thread of the block executes the same barrier
//! the same number of times (threads that have exited are not waited for). A barrier inside a branch
//! that some running threads skip, or inside a loop with a per-thread trip count, is undefined
//! behaviour: on sm_70+ hardware it does not hang but can release without the missing threads, so it
//! orders nothing they do. The emulator reports it as barrier divergence.

use crate::backend;

/// `__syncthreads()`. PTX: `bar.sync 0`.
///
/// Safe to call: a divergent barrier breaks the ordering the kernel relies on (its accesses race), but
/// every access is still one instruction on memory the views check, never memory unsafety.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads() {
    backend::sync_threads(crate::site())
}

/// `__syncthreads_count(pred)`: barrier that returns how many threads of the block passed `true`.
/// PTX: `bar.red.popc.u32`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_count(pred: bool) -> u32 {
    backend::sync_threads_count(pred, crate::site())
}

/// `__syncthreads_and(pred)`: barrier that returns whether every thread passed `true`.
/// PTX: `bar.red.and.pred`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_and(pred: bool) -> bool {
    backend::sync_threads_and(pred, crate::site())
}

/// `__syncthreads_or(pred)`: barrier that returns whether any thread passed `true`.
/// PTX: `bar.red.or.pred`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_or(pred: bool) -> bool {
    backend::sync_threads_or(pred, crate::site())
}
