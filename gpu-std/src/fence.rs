//! Memory fences (`__threadfence_block`, `__threadfence`, `__threadfence_system`).
//!
//! A fence makes no thread wait. It orders the calling thread's own memory operations as other
//! threads at the fence's scope observe them: writes before the fence become visible before writes
//! after it. The release/acquire pattern of the PTX memory model is *fence, then flag store* on the
//! writer and *flag load, then fence* on the reader (or `store_release` / `load_acquire`, see
//! [`crate::GlobalMut`]). Volatile accesses (`ld.volatile`) stop the compiler from caching a value in a
//! register; they do not make a read-modify-write atomic.

use crate::backend;

/// `__threadfence_block()`: orders this thread's accesses as seen by its block. PTX: `fence.sc.cta`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn threadfence_block() {
    backend::fence(crate::atomic::ScopeKind::Block, crate::site())
}

/// `__threadfence()`: orders this thread's accesses as seen by the whole device. PTX: `fence.sc.gpu`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn threadfence() {
    backend::fence(crate::atomic::ScopeKind::Device, crate::site())
}

/// `__threadfence_system()`: orders this thread's accesses as seen by the device, the host and peer
/// devices. PTX: `fence.sc.sys`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn threadfence_system() {
    backend::fence(crate::atomic::ScopeKind::System, crate::site())
}

/// Suspends the thread for about `ns` nanoseconds (a back-off for spin loops). PTX: `nanosleep.u32`.
/// In the emulator it yields to another thread.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn nanosleep(ns: u32) {
    backend::nanosleep(ns, crate::site())
}
