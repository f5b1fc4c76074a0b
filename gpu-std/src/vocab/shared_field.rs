//! [`SharedField`]: one array of a shared layout, as the emulator's reports name it.
//!
//! Ground floor: imports only [`crate::pod`]. Re-exported by [`crate::shared`], whose
//! `shared_layout!` makes them.

use crate::pod::Pod;

/// One array of a [`shared_layout!`](crate::shared_layout), as the emulator's reports name it
/// (`Scratch.bins`). Made by the macro.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct SharedField {
    /// `Layout.field`.
    pub name: &'static str,
    /// Byte offset of the array in the block's shared memory.
    pub offset: usize,
    /// Bytes per element.
    pub elem: usize,
    /// Elements.
    pub len: usize,
}

impl SharedField {
    /// The array `name` at byte `offset` of a layout `L`, with the element size and count of the field
    /// that `_field` (never called) returns.
    pub const fn of<L, T: Pod, const N: usize>(name: &'static str, offset: usize, _field: fn(&L) -> &[T; N]) -> Self {
        SharedField { name, offset, elem: size_of::<T>(), len: N }
    }
}
