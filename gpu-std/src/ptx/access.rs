//! Memory accesses: one `ld`/`st` per element of its width in its state space, plain or volatile,
//! and the 16-byte vector accesses with their cache operators.
//!
//! Names only gpu-std's vocabulary and `Pod`, like the rest of the PTX layer, and not `ptx.rs`
//! itself, which re-exports it.

use crate::pod::Pod;
use crate::vocab::access::{Access, CacheOp};
use crate::vocab::scope::SpaceKind;
use crate::vocab::site::Site;
use core::arch::asm;

/// One load and one store function per (state space, access kind): each is a single `ld`/`st` of
/// the element's width. Addresses are already in the instruction's state space: a global pointer is its
/// own global address (the generic and global windows coincide on every GPU that runs PTX 7+, as nvcc
/// relies on too), and shared views hold shared-window addresses (see
/// [`dynamic_shared`](super::dynamic_shared)). Plain loads
/// are `pure`: the compiler may merge them or keep the value in a register, as for plain C++ loads, but
/// it cannot see the memory, so a racing write yields a racy value, never undefined behaviour.
macro_rules! access_fns {
    ($load:ident, $store:ident, $ld:literal, $st:literal, [$($lopt:ident),*]) => {
        /// # Safety
        /// `p` is a valid, aligned address of a `T` in this state space.
        #[inline(always)]
        unsafe fn $load<T: Pod>(p: *const T) -> T {
            // SAFETY: the caller's contract; the asm reads exactly `size_of::<T>()` bytes at `p`, and
            // any bit pattern of that size is a valid `T` (`Pod`).
            unsafe {
                match size_of::<T>() {
                    1 => {
                        let v: u16;
                        asm!(concat!($ld, ".u8 {v}, [{a}];"),
                             a = in(reg64) p, v = out(reg16) v, options(nostack, $($lopt),*));
                        core::mem::transmute_copy(&(v as u8))
                    }
                    2 => {
                        let v: u16;
                        asm!(concat!($ld, ".b16 {v}, [{a}];"),
                             a = in(reg64) p, v = out(reg16) v, options(nostack, $($lopt),*));
                        core::mem::transmute_copy(&v)
                    }
                    4 => {
                        let v: u32;
                        asm!(concat!($ld, ".b32 {v}, [{a}];"),
                             a = in(reg64) p, v = out(reg32) v, options(nostack, $($lopt),*));
                        core::mem::transmute_copy(&v)
                    }
                    _ => {
                        let v: u64;
                        asm!(concat!($ld, ".b64 {v}, [{a}];"),
                             a = in(reg64) p, v = out(reg64) v, options(nostack, $($lopt),*));
                        core::mem::transmute_copy(&v)
                    }
                }
            }
        }
        /// # Safety
        /// `p` is a valid, aligned address of a `T` in this state space.
        #[inline(always)]
        unsafe fn $store<T: Pod>(p: *mut T, v: T) {
            // SAFETY: the caller's contract; the asm writes exactly `size_of::<T>()` bytes at `p`.
            unsafe {
                match size_of::<T>() {
                    1 => {
                        let x: u8 = core::mem::transmute_copy(&v);
                        asm!(concat!($st, ".b8 [{a}], {x};"),
                             a = in(reg64) p, x = in(reg16) x as u16, options(nostack));
                    }
                    2 => {
                        let x: u16 = core::mem::transmute_copy(&v);
                        asm!(concat!($st, ".b16 [{a}], {x};"),
                             a = in(reg64) p, x = in(reg16) x, options(nostack));
                    }
                    4 => {
                        let x: u32 = core::mem::transmute_copy(&v);
                        asm!(concat!($st, ".b32 [{a}], {x};"),
                             a = in(reg64) p, x = in(reg32) x, options(nostack));
                    }
                    _ => {
                        let x: u64 = core::mem::transmute_copy(&v);
                        asm!(concat!($st, ".b64 [{a}], {x};"),
                             a = in(reg64) p, x = in(reg64) x, options(nostack));
                    }
                }
            }
        }
    };
}
access_fns!(ld_global, st_global, "ld.global", "st.global", [readonly, pure]);
access_fns!(ld_volatile_global, st_volatile_global, "ld.volatile.global", "st.volatile.global", [readonly]);
access_fns!(ld_shared, st_shared, "ld.shared", "st.shared", [readonly, pure]);
access_fns!(ld_volatile_shared, st_volatile_shared, "ld.volatile.shared", "st.volatile.shared", [readonly]);

/// Loads a `T` from `p` in `space` with `access`: one `ld` instruction.
///
/// # Safety
/// `p` is a valid, aligned address of a `T` in `space`.
#[inline(always)]
pub unsafe fn load<T: Pod>(p: *const T, access: Access, space: SpaceKind, _: Site) -> T {
    // SAFETY: the caller's contract.
    unsafe {
        match (space, access) {
            (SpaceKind::Global, Access::Plain) => ld_global(p),
            (SpaceKind::Global, Access::Volatile) => ld_volatile_global(p),
            (SpaceKind::Shared, Access::Plain) => ld_shared(p),
            (SpaceKind::Shared, Access::Volatile) => ld_volatile_shared(p),
        }
    }
}
/// Stores `v` (`[T; 16 / size_of::<T>()]`) at `p`: one `st.global.v4.b32` (for 8-byte `T`,
/// `st.global.v2.b64`), with the `.cs` operator when `op` is `Streaming`.
///
/// # Safety
/// `p` is a valid, 16-byte aligned global address of 16 bytes of `T`s, and `V` is 16 bytes of `Pod`.
#[inline(always)]
pub unsafe fn store_vector<T: Pod, V: Copy>(p: *mut T, v: V, op: CacheOp, _: Site) {
    const { assert!(size_of::<V>() == 16) };
    macro_rules! st2 {
        ($op:literal, $a:ident, $b:ident) => {
            asm!(concat!("st.global", $op, ".v2.b64 [{p}], {{{a}, {b}}};"), p = in(reg64) p, a = in(reg64) $a,
                 b = in(reg64) $b, options(nostack))
        };
    }
    macro_rules! st4 {
        ($op:literal, $a:ident, $b:ident, $c:ident, $d:ident) => {
            asm!(concat!("st.global", $op, ".v4.b32 [{p}], {{{a}, {b}, {c}, {d}}};"), p = in(reg64) p,
                 a = in(reg32) $a, b = in(reg32) $b, c = in(reg32) $c, d = in(reg32) $d, options(nostack))
        };
    }
    // SAFETY: the caller's contract; the asm writes exactly the 16 bytes at `p`.
    unsafe {
        if size_of::<T>() == 8 {
            let [a, b]: [u64; 2] = core::mem::transmute_copy(&v);
            match op {
                CacheOp::Streaming => st2!(".cs", a, b),
                _ => st2!("", a, b),
            }
        } else {
            let [a, b, c, d]: [u32; 4] = core::mem::transmute_copy(&v);
            match op {
                CacheOp::Streaming => st4!(".cs", a, b, c, d),
                _ => st4!("", a, b, c, d),
            }
        }
    }
}
/// Loads the 16 bytes at `p` as a `V` (`[T; 16 / size_of::<T>()]`): one `ld.global.v4.b32` (for 8-byte
/// `T`, `ld.global.v2.b64`); `ld.global.nc…` through the read-only data cache for `ReadOnly`,
/// `ld.global.cs…` for `Streaming`.
///
/// # Safety
/// `p` is a valid, 16-byte aligned global address of 16 bytes of `T`s, and `V` is 16 bytes of `Pod`.
#[inline(always)]
pub unsafe fn load_vector<T: Pod, V: Copy>(p: *const T, op: CacheOp, _: Site) -> V {
    const { assert!(size_of::<V>() == 16) };
    macro_rules! ld2 {
        ($op:literal) => {{
            let (a, b): (u64, u64);
            asm!(concat!("ld.global", $op, ".v2.b64 {{{a}, {b}}}, [{p}];"), p = in(reg64) p, a = out(reg64) a,
                 b = out(reg64) b, options(nostack, readonly, pure));
            core::mem::transmute_copy(&[a, b])
        }};
    }
    macro_rules! ld4 {
        ($op:literal) => {{
            let (a, b, c, d): (u32, u32, u32, u32);
            asm!(concat!("ld.global", $op, ".v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];"), p = in(reg64) p,
                 a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
                 options(nostack, readonly, pure));
            core::mem::transmute_copy(&[a, b, c, d])
        }};
    }
    // SAFETY: the caller's contract; the asm reads exactly the 16 bytes at `p` (two 8-byte lanes land in
    // 64-bit registers as they are).
    unsafe {
        if size_of::<T>() == 8 {
            match op {
                CacheOp::Normal => ld2!(""),
                CacheOp::ReadOnly => ld2!(".nc"),
                CacheOp::Streaming => ld2!(".cs"),
            }
        } else {
            match op {
                CacheOp::Normal => ld4!(""),
                CacheOp::ReadOnly => ld4!(".nc"),
                CacheOp::Streaming => ld4!(".cs"),
            }
        }
    }
}

/// Stores `v` at `p` in `space` with `access`: one `st` instruction.
///
/// # Safety
/// `p` is a valid, aligned address of a `T` in `space`.
#[inline(always)]
pub unsafe fn store<T: Pod>(p: *mut T, v: T, access: Access, space: SpaceKind, _: Site) {
    // SAFETY: the caller's contract.
    unsafe {
        match (space, access) {
            (SpaceKind::Global, Access::Plain) => st_global(p, v),
            (SpaceKind::Global, Access::Volatile) => st_volatile_global(p, v),
            (SpaceKind::Shared, Access::Plain) => st_shared(p, v),
            (SpaceKind::Shared, Access::Volatile) => st_volatile_shared(p, v),
        }
    }
}
