//! Scopes and state spaces, as values and as types: which threads an atomic or a fence is promised
//! to ([`ScopeKind`], [`Scope`]: `.cta`, `.gpu`, `.sys`) and which memory a view points into
//! ([`SpaceKind`], [`Space`]: `.global`, `.shared`).
//!
//! Ground floor: imports nothing of gpu-std. Re-exported by [`crate::atomic`], where kernels find
//! them (`gpu_std::atomic::ScopeKind`, `gpu_std::Device`).

/// The scope of an atomic or fence, as a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScopeKind {
    /// `.cta`
    Block,
    /// `.gpu`
    Device,
    /// `.sys`
    System,
}

/// A scope, as a type (so that the scope is fixed at compile time). Sealed: [`Block`], [`Device`],
/// [`System`].
pub trait Scope: scope_sealed::Sealed {
    /// The scope, as a value.
    const KIND: ScopeKind;
}
/// Threads of one block. PTX `.cta`.
#[derive(Clone, Copy, Debug)]
pub struct Block;
/// All threads of the device. PTX `.gpu`.
#[derive(Clone, Copy, Debug)]
pub struct Device;
/// The device, the host and peer devices. PTX `.sys`.
#[derive(Clone, Copy, Debug)]
pub struct System;
mod scope_sealed {
    /// The scopes and the state spaces of this module.
    pub trait Sealed {}
    impl Sealed for super::Block {}
    impl Sealed for super::Device {}
    impl Sealed for super::System {}
    impl Sealed for super::GlobalSpace {}
    impl Sealed for super::SharedSpace {}
}
impl Scope for Block {
    const KIND: ScopeKind = ScopeKind::Block;
}
impl Scope for Device {
    const KIND: ScopeKind = ScopeKind::Device;
}
impl Scope for System {
    const KIND: ScopeKind = ScopeKind::System;
}

/// A state space a view points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpaceKind {
    /// Global memory (`.global`).
    Global,
    /// Shared memory of a block (`.shared`).
    Shared,
}

/// A state space, as a type (so that the space of an [`AtomicRef`](crate::atomic::AtomicRef) is fixed
/// at compile time). Sealed: [`GlobalSpace`], [`SharedSpace`] (an atomic's instruction is chosen by
/// its space).
pub trait Space: scope_sealed::Sealed {
    /// The state space, as a value.
    const KIND: SpaceKind;
}
/// Global memory.
#[derive(Clone, Copy, Debug)]
pub struct GlobalSpace;
/// Shared memory of the block.
#[derive(Clone, Copy, Debug)]
pub struct SharedSpace;
impl Space for GlobalSpace {
    const KIND: SpaceKind = SpaceKind::Global;
}
impl Space for SharedSpace {
    const KIND: SpaceKind = SpaceKind::Shared;
}
