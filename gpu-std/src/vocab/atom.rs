//! What an atomic is made of: the read-modify-write operations of PTX `atom` ([`AtomOp`]) and the
//! types with hardware atomics ([`Atomic`], whose methods each backend implements: the PTX layer with
//! one instruction, the emulator with its model).
//!
//! Ground floor: imports only the ground floor ([`crate::pod`], the scopes, [`Site`]). Re-exported by
//! [`crate::atomic`].

use super::scope::{ScopeKind, SpaceKind};
use super::site::Site;

/// The read-modify-write operations of PTX `atom`. Each variant's documentation gives the value
/// stored, from the old value and the operands `a` and `b` (one value for every operation but `Cas`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomOp {
    /// `old + b`
    Add,
    /// `min(old, b)`
    Min,
    /// `max(old, b)`
    Max,
    /// `old >= b ? 0 : old + 1`
    Inc,
    /// `(old == 0 || old > b) ? b : old - 1`
    Dec,
    /// `old & b`
    And,
    /// `old | b`
    Or,
    /// `old ^ b`
    Xor,
    /// `b`
    Exch,
    /// `old == a ? b : old`
    Cas,
}

mod sealed {
    pub trait Sealed {}
}

/// Types with hardware atomics: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`.
pub trait Atomic: crate::pod::Pod + sealed::Sealed {
    /// `atom.relaxed.<scope>.<space>.<op>` on `p`.
    ///
    /// # Safety
    /// `p` is a valid, aligned address of a `Self` in `space`.
    #[doc(hidden)]
    unsafe fn atom(op: AtomOp, space: SpaceKind, scope: ScopeKind, p: *mut Self, a: Self, b: Self, site: Site) -> Self;
    /// `ld.acquire.<scope>.<space>` of `p`.
    ///
    /// # Safety
    /// As [`Atomic::atom`].
    #[doc(hidden)]
    unsafe fn load_acquire(space: SpaceKind, scope: ScopeKind, p: *const Self, site: Site) -> Self;
    /// `st.release.<scope>.<space>` to `p`.
    ///
    /// # Safety
    /// As [`Atomic::atom`].
    #[doc(hidden)]
    unsafe fn store_release(space: SpaceKind, scope: ScopeKind, p: *mut Self, v: Self, site: Site);
    /// `red.relaxed.<scope>.<space>.add` on `p`: an add whose old value is not returned.
    ///
    /// # Safety
    /// As [`Atomic::atom`].
    #[doc(hidden)]
    unsafe fn red_add(space: SpaceKind, scope: ScopeKind, p: *mut Self, v: Self, site: Site);
    #[doc(hidden)]
    fn zero() -> Self;
}

impl sealed::Sealed for u32 {}
impl sealed::Sealed for i32 {}
impl sealed::Sealed for u64 {}
impl sealed::Sealed for i64 {}
impl sealed::Sealed for f32 {}
impl sealed::Sealed for f64 {}
