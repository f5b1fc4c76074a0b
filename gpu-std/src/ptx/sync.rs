//! Synchronisation instructions: block barriers (`bar.sync`, `bar.red`), the warp barrier
//! (`bar.warp.sync`), fences (`fence.sc.<scope>`) and `nanosleep`.
//!
//! Names only gpu-std's vocabulary and `Pod`, like the rest of the PTX layer, and not `ptx.rs`
//! itself, which re-exports it.

use crate::vocab::scope::ScopeKind;
use crate::vocab::site::Site;
use core::arch::asm;
use core::arch::nvptx as nv;

#[inline(always)]
pub fn sync_threads(_: Site) {
    // SAFETY: bar.sync 0; uniform reachability is the caller's liveness obligation.
    unsafe { nv::_syncthreads() }
}
#[inline(always)]
pub fn sync_threads_count(pred: bool, _: Site) -> u32 {
    let r: u32;
    // SAFETY: barrier with a popcount reduction; no memory operands.
    unsafe {
        asm!("{{ .reg .pred %p; setp.ne.u32 %p, {x}, 0; bar.red.popc.u32 {r}, 0, %p; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, options(nostack));
    }
    r
}
#[inline(always)]
pub fn sync_threads_and(pred: bool, _: Site) -> bool {
    let r: u32;
    // SAFETY: barrier with an and-reduction.
    unsafe {
        asm!("{{ .reg .pred %p, %q; setp.ne.u32 %p, {x}, 0; bar.red.and.pred %q, 0, %p; selp.u32 {r}, 1, 0, %q; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, options(nostack));
    }
    r != 0
}
#[inline(always)]
pub fn sync_threads_or(pred: bool, _: Site) -> bool {
    let r: u32;
    // SAFETY: barrier with an or-reduction.
    unsafe {
        asm!("{{ .reg .pred %p, %q; setp.ne.u32 %p, {x}, 0; bar.red.or.pred %q, 0, %p; selp.u32 {r}, 1, 0, %q; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, options(nostack));
    }
    r != 0
}
#[inline(always)]
pub fn sync_warp(mask: u32, _: Site) {
    // SAFETY: warp barrier; orders the named lanes' memory accesses.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
}

#[inline(always)]
pub fn fence(scope: ScopeKind, _: Site) {
    // SAFETY: memory fences have no operands.
    unsafe {
        match scope {
            ScopeKind::Block => asm!("fence.sc.cta;", options(nostack)),
            ScopeKind::Device => asm!("fence.sc.gpu;", options(nostack)),
            ScopeKind::System => asm!("fence.sc.sys;", options(nostack)),
        }
    }
}
#[inline(always)]
pub fn nanosleep(ns: u32, _: Site) {
    // SAFETY: suspends the thread; no memory effects.
    unsafe { asm!("nanosleep.u32 {t};", t = in(reg32) ns, options(nostack)) }
}
