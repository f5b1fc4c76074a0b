//! The only place with inline PTX. The GPU backend of every primitive. Each function is the
//! instruction its public wrapper documents; `Site` is `()` here.
#![allow(clippy::missing_safety_doc)]

use crate::Dim3;
use crate::Site;
use crate::atomic::{AtomOp, Atomic, ScopeKind, SpaceKind};
use crate::memory::Access;
use crate::warp::ShflMode;
use core::arch::asm;
use core::arch::nvptx as nv;

#[inline(always)]
pub fn thread_idx() -> Dim3 {
    // SAFETY: special-register reads, valid in any kernel.
    unsafe { Dim3::new(nv::_thread_idx_x(), nv::_thread_idx_y(), nv::_thread_idx_z()) }
}
#[inline(always)]
pub fn block_idx() -> Dim3 {
    // SAFETY: as above.
    unsafe { Dim3::new(nv::_block_idx_x(), nv::_block_idx_y(), nv::_block_idx_z()) }
}
#[inline(always)]
pub fn block_dim() -> Dim3 {
    // SAFETY: as above.
    unsafe { Dim3::new(nv::_block_dim_x(), nv::_block_dim_y(), nv::_block_dim_z()) }
}
#[inline(always)]
pub fn grid_dim() -> Dim3 {
    // SAFETY: as above.
    unsafe { Dim3::new(nv::_grid_dim_x(), nv::_grid_dim_y(), nv::_grid_dim_z()) }
}

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
pub fn shfl(mode: ShflMode, mask: u32, x: u32, b: u32, c: u32, _: Site) -> u32 {
    let r: u32;
    // SAFETY: register exchange within the warp; no memory operands.
    unsafe {
        match mode {
            ShflMode::Down => asm!("shfl.sync.down.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
            ShflMode::Up => asm!("shfl.sync.up.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
            ShflMode::Xor => asm!("shfl.sync.bfly.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
            ShflMode::Idx => asm!("shfl.sync.idx.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
        }
    }
    r
}

#[inline(always)]
pub fn ballot(mask: u32, pred: bool, _: Site) -> u32 {
    let r: u32;
    // SAFETY: warp vote; no memory operands.
    unsafe {
        asm!("{{ .reg .pred %p; setp.ne.u32 %p, {x}, 0; vote.sync.ballot.b32 {r}, %p, {m}; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, m = in(reg32) mask, options(nostack));
    }
    r
}
#[inline(always)]
pub fn vote_any(mask: u32, pred: bool, _: Site) -> bool {
    let r: u32;
    // SAFETY: warp vote.
    unsafe {
        asm!("{{ .reg .pred %p, %q; setp.ne.u32 %p, {x}, 0; vote.sync.any.pred %q, %p, {m}; selp.u32 {r}, 1, 0, %q; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, m = in(reg32) mask, options(nostack));
    }
    r != 0
}
#[inline(always)]
pub fn vote_all(mask: u32, pred: bool, _: Site) -> bool {
    let r: u32;
    // SAFETY: warp vote.
    unsafe {
        asm!("{{ .reg .pred %p, %q; setp.ne.u32 %p, {x}, 0; vote.sync.all.pred %q, %p, {m}; selp.u32 {r}, 1, 0, %q; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, m = in(reg32) mask, options(nostack));
    }
    r != 0
}
#[inline(always)]
pub fn sync_warp(mask: u32, _: Site) {
    // SAFETY: warp barrier; orders the named lanes' memory accesses.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
}
#[inline(always)]
pub fn active_mask() -> u32 {
    let r: u32;
    // SAFETY: reads the active-lane mask.
    unsafe { asm!("activemask.b32 {r};", r = out(reg32) r, options(nostack)) }
    r
}
#[inline(always)]
pub fn lane_id() -> u32 {
    let r: u32;
    // SAFETY: special-register read.
    unsafe { asm!("mov.u32 {r}, %laneid;", r = out(reg32) r, options(nostack, nomem, pure)) }
    r
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

/// `ld.global` for the 1-, 4- and 8-byte types kernels use; other sizes (and shared memory, which
/// LLVM already addresses as `.shared`) go through an ordinary generic load.
#[inline(always)]
pub unsafe fn load<T: Copy>(p: *const T, access: Access, space: SpaceKind, _: Site) -> T {
    // SAFETY: the caller checked bounds; views hold valid, aligned pointers; the asm reads exactly
    // size_of::<T>() bytes at `p` and the result is reinterpreted at the same size.
    unsafe {
        if access == Access::Volatile {
            return p.read_volatile();
        }
        if space == SpaceKind::Global {
            match core::mem::size_of::<T>() {
                1 => {
                    let v: u16;
                    asm!("ld.global.u8 {v}, [{p}];", v = out(reg16) v, p = in(reg64) p, options(nostack, readonly, pure));
                    return core::mem::transmute_copy(&(v as u8));
                }
                4 => {
                    let v: u32;
                    asm!("ld.global.b32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(nostack, readonly, pure));
                    return core::mem::transmute_copy(&v);
                }
                8 => {
                    let v: u64;
                    asm!("ld.global.b64 {v}, [{p}];", v = out(reg64) v, p = in(reg64) p, options(nostack, readonly, pure));
                    return core::mem::transmute_copy(&v);
                }
                _ => {}
            }
        }
        p.read()
    }
}
/// `st.global` for 4- and 8-byte types; others as [`load`].
#[inline(always)]
pub unsafe fn store<T: Copy>(p: *mut T, v: T, access: Access, space: SpaceKind, _: Site) {
    // SAFETY: as in `load`.
    unsafe {
        if access == Access::Volatile {
            return p.write_volatile(v);
        }
        if space == SpaceKind::Global {
            match core::mem::size_of::<T>() {
                4 => {
                    let x: u32 = core::mem::transmute_copy(&v);
                    asm!("st.global.b32 [{p}], {x};", p = in(reg64) p, x = in(reg32) x, options(nostack));
                    return;
                }
                8 => {
                    let x: u64 = core::mem::transmute_copy(&v);
                    asm!("st.global.b64 [{p}], {x};", p = in(reg64) p, x = in(reg64) x, options(nostack));
                    return;
                }
                _ => {}
            }
        }
        p.write(v)
    }
}

/// Marker type giving the dynamic shared memory base its alignment.
#[repr(C, align(16))]
struct SharedBase([u8; 16]);

#[inline(always)]
pub fn dynamic_shared(_: Site) -> (*mut u8, usize) {
    let size: u32;
    // SAFETY: special-register read of the launch's dynamic shared size.
    unsafe { asm!("mov.u32 {r}, %dynamic_smem_size;", r = out(reg32) size, options(nostack, nomem, pure)) }
    let base = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<SharedBase>() as *mut u8;
    (base, size as usize)
}

// ---- atomics -------------------------------------------------------------------------------------

/// One-operand `atom` on a generic address converted to the state space.
macro_rules! atom1 {
    ($sc:literal, $sp:literal, $op:literal, $ty:literal, $cls:ident, $p:expr, $a:expr) => {{
        let o;
        asm!(concat!("{{ .reg .u64 _ga; cvta.to.", $sp, ".u64 _ga, {p}; atom.relaxed.", $sc, ".", $sp, ".", $op, ".", $ty, " {o}, [_ga], {a}; }}"),
             p = in(reg64) $p, a = in($cls) $a, o = out($cls) o, options(nostack));
        o
    }};
}
macro_rules! cas1 {
    ($sc:literal, $sp:literal, $ty:literal, $cls:ident, $p:expr, $a:expr, $b:expr) => {{
        let o;
        asm!(concat!("{{ .reg .u64 _ga; cvta.to.", $sp, ".u64 _ga, {p}; atom.relaxed.", $sc, ".", $sp, ".cas.", $ty, " {o}, [_ga], {a}, {b}; }}"),
             p = in(reg64) $p, a = in($cls) $a, b = in($cls) $b, o = out($cls) o, options(nostack));
        o
    }};
}
macro_rules! ld_acq {
    ($sc:literal, $sp:literal, $ty:literal, $cls:ident, $p:expr) => {{
        let o;
        asm!(concat!("{{ .reg .u64 _ga; cvta.to.", $sp, ".u64 _ga, {p}; ld.acquire.", $sc, ".", $sp, ".", $ty, " {o}, [_ga]; }}"),
             p = in(reg64) $p, o = out($cls) o, options(nostack));
        o
    }};
}
macro_rules! st_rel {
    ($sc:literal, $sp:literal, $ty:literal, $cls:ident, $p:expr, $v:expr) => {{
        asm!(concat!("{{ .reg .u64 _ga; cvta.to.", $sp, ".u64 _ga, {p}; st.release.", $sc, ".", $sp, ".", $ty, " [_ga], {v}; }}"),
             p = in(reg64) $p, v = in($cls) $v, options(nostack));
    }};
}
/// Expands `$m!(scope, space, rest...)` for the (space, scope) pair known at compile time.
macro_rules! by_scope {
    ($m:ident, $space:expr, $scope:expr, $($rest:tt)*) => {
        match ($space, $scope) {
            (SpaceKind::Global, ScopeKind::Block) => $m!("cta", "global", $($rest)*),
            (SpaceKind::Global, ScopeKind::Device) => $m!("gpu", "global", $($rest)*),
            (SpaceKind::Global, ScopeKind::System) => $m!("sys", "global", $($rest)*),
            (SpaceKind::Shared, ScopeKind::Block) => $m!("cta", "shared", $($rest)*),
            (SpaceKind::Shared, ScopeKind::Device) => $m!("gpu", "shared", $($rest)*),
            (SpaceKind::Shared, ScopeKind::System) => $m!("sys", "shared", $($rest)*),
        }
    };
}

macro_rules! impl_atomic {
    ($t:ty, $cls:ident, bits $bits:literal, ld $ldty:literal, zero $zero:expr, [$($op:ident => $name:literal $pty:literal),*]) => {
        impl Atomic for $t {
            #[inline(always)]
            unsafe fn atom(op: AtomOp, space: SpaceKind, scope: ScopeKind, p: *mut Self, a: Self, b: Self, _: Site) -> Self {
                // SAFETY: the caller (AtomicRef) holds a valid, aligned pointer into `space`.
                unsafe {
                    match op {
                        $(AtomOp::$op => by_scope!(atom1, space, scope, $name, $pty, $cls, p, a),)*
                        AtomOp::Exch => by_scope!(atom1, space, scope, "exch", $bits, $cls, p, a),
                        AtomOp::Cas => by_scope!(cas1, space, scope, $bits, $cls, p, a, b),
                        #[allow(unreachable_patterns)]
                        _ => nv::trap(),
                    }
                }
            }
            #[inline(always)]
            unsafe fn load_acquire(space: SpaceKind, scope: ScopeKind, p: *const Self, _: Site) -> Self {
                // SAFETY: as above.
                unsafe { by_scope!(ld_acq, space, scope, $ldty, $cls, p) }
            }
            #[inline(always)]
            unsafe fn store_release(space: SpaceKind, scope: ScopeKind, p: *mut Self, v: Self, _: Site) {
                // SAFETY: as above.
                unsafe { by_scope!(st_rel, space, scope, $ldty, $cls, p, v) }
            }
            #[inline(always)]
            fn zero() -> Self {
                $zero
            }
        }
    };
}

impl_atomic!(u32, reg32, bits "b32", ld "u32", zero 0, [Add => "add" "u32", Min => "min" "u32", Max => "max" "u32",
    Inc => "inc" "u32", Dec => "dec" "u32", And => "and" "b32", Or => "or" "b32", Xor => "xor" "b32"]);
impl_atomic!(i32, reg32, bits "b32", ld "s32", zero 0, [Add => "add" "s32", Min => "min" "s32", Max => "max" "s32",
    And => "and" "b32", Or => "or" "b32", Xor => "xor" "b32"]);
impl_atomic!(u64, reg64, bits "b64", ld "u64", zero 0, [Add => "add" "u64", Min => "min" "u64", Max => "max" "u64",
    And => "and" "b64", Or => "or" "b64", Xor => "xor" "b64"]);
impl_atomic!(i64, reg64, bits "b64", ld "s64", zero 0, [Add => "add" "u64", Min => "min" "s64", Max => "max" "s64",
    And => "and" "b64", Or => "or" "b64", Xor => "xor" "b64"]);
impl_atomic!(f32, reg32, bits "b32", ld "f32", zero 0.0, [Add => "add" "f32"]);
impl_atomic!(f64, reg64, bits "b64", ld "f64", zero 0.0, [Add => "add" "f64"]);
