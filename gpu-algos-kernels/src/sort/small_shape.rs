//! The one-block sort's launch shape: keys per thread, threads and keys at most. Its kernels
//! ([`super::small`]) and the shared layouts they are laid out for ([`super::tile`]) are both sized
//! by it.
//!
//! Owns: the shape constants. Imports nothing.

/// Keys per thread of the one-block sort.
pub const ITEMS: usize = 12;
/// Most threads of the one-block sort.
pub const MAX_BLOCK: u32 = 512;
/// Its warps at most.
pub const MAX_WARPS: usize = MAX_BLOCK as usize / 32;
/// Its keys at most: one tile of [`MAX_BLOCK`] threads.
pub const MAX_TILE: usize = MAX_BLOCK as usize * ITEMS;
/// Most keys the one-block sort takes.
pub const SMALL_MAX_LEN: usize = MAX_TILE;
