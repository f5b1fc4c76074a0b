//! Atomics: `atom`, `red`, `ld.acquire` and `st.release` at every scope, for the six `Atomic`
//! types (the `Atomic` trait's methods on the GPU).
//!
//! Names only gpu-std's vocabulary and `Pod`, like the rest of the PTX layer, and not `ptx.rs`
//! itself, which re-exports it.

use crate::vocab::atom::{AtomOp, Atomic};
use crate::vocab::scope::{ScopeKind, SpaceKind};
use crate::vocab::site::Site;
use core::arch::asm;
use core::arch::nvptx as nv;

/// One-operand `atom` on an address of the state space (see
/// [`dynamic_shared`](super::dynamic_shared) for shared memory).
macro_rules! atom1 {
    ($sc:literal, $sp:literal, $op:literal, $ty:literal, $cls:ident, $p:expr, $a:expr) => {{
        let o;
        asm!(concat!("atom.relaxed.", $sc, ".", $sp, ".", $op, ".", $ty, " {o}, [{p}], {a};"),
             p = in(reg64) $p, a = in($cls) $a, o = out($cls) o, options(nostack));
        o
    }};
}
macro_rules! cas1 {
    ($sc:literal, $sp:literal, $ty:literal, $cls:ident, $p:expr, $a:expr, $b:expr) => {{
        let o;
        asm!(concat!("atom.relaxed.", $sc, ".", $sp, ".cas.", $ty, " {o}, [{p}], {a}, {b};"),
             p = in(reg64) $p, a = in($cls) $a, b = in($cls) $b, o = out($cls) o, options(nostack));
        o
    }};
}
macro_rules! red1 {
    ($sc:literal, $sp:literal, $op:literal, $ty:literal, $cls:ident, $p:expr, $a:expr) => {{
        asm!(concat!("red.relaxed.", $sc, ".", $sp, ".", $op, ".", $ty, " [{p}], {a};"),
             p = in(reg64) $p, a = in($cls) $a, options(nostack));
    }};
}
macro_rules! ld_acq {
    ($sc:literal, $sp:literal, $ty:literal, $cls:ident, $p:expr) => {{
        let o;
        asm!(concat!("ld.acquire.", $sc, ".", $sp, ".", $ty, " {o}, [{p}];"),
             p = in(reg64) $p, o = out($cls) o, options(nostack));
        o
    }};
}
macro_rules! st_rel {
    ($sc:literal, $sp:literal, $ty:literal, $cls:ident, $p:expr, $v:expr) => {{
        asm!(concat!("st.release.", $sc, ".", $sp, ".", $ty, " [{p}], {v};"),
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
    ($t:ty, $cls:ident, bits $bits:literal, ld $ldty:literal, red $redty:literal, zero $zero:expr, [$($op:ident => $name:literal $pty:literal),*]) => {
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
            unsafe fn red_add(space: SpaceKind, scope: ScopeKind, p: *mut Self, v: Self, _: Site) {
                // SAFETY: as above.
                unsafe { by_scope!(red1, space, scope, "add", $redty, $cls, p, v) }
            }
            #[inline(always)]
            fn zero() -> Self {
                $zero
            }
        }
    };
}

impl_atomic!(u32, reg32, bits "b32", ld "u32", red "u32", zero 0, [Add => "add" "u32", Min => "min" "u32", Max => "max" "u32",
    Inc => "inc" "u32", Dec => "dec" "u32", And => "and" "b32", Or => "or" "b32", Xor => "xor" "b32"]);
impl_atomic!(i32, reg32, bits "b32", ld "s32", red "s32", zero 0, [Add => "add" "s32", Min => "min" "s32", Max => "max" "s32",
    And => "and" "b32", Or => "or" "b32", Xor => "xor" "b32"]);
impl_atomic!(u64, reg64, bits "b64", ld "u64", red "u64", zero 0, [Add => "add" "u64", Min => "min" "u64", Max => "max" "u64",
    And => "and" "b64", Or => "or" "b64", Xor => "xor" "b64"]);
impl_atomic!(i64, reg64, bits "b64", ld "s64", red "u64", zero 0, [Add => "add" "u64", Min => "min" "s64", Max => "max" "s64",
    And => "and" "b64", Or => "or" "b64", Xor => "xor" "b64"]);
impl_atomic!(f32, reg32, bits "b32", ld "f32", red "f32", zero 0.0, [Add => "add" "f32"]);
impl_atomic!(f64, reg64, bits "b64", ld "f64", red "f64", zero 0.0, [Add => "add" "f64"]);
