//! Shared memory: per-block scratch memory, visible to every thread of the block and to no other.
//!
//! Kernels here use the launch's *dynamic* shared memory, carved at compile-time offsets into typed
//! arrays. A kernel file declares its layout as consts:
//!
//! ```
//! use gpu_std::SharedArray;
//! pub const BINS: SharedArray<u32> = SharedArray::first(256);
//! pub const SUMS: SharedArray<f32> = SharedArray::after(BINS.end(), 32);
//! pub const SHARED_BYTES: usize = SUMS.end();
//! assert_eq!(SHARED_BYTES, 256 * 4 + 32 * 4);
//! ```
//!
//! The host reads `SHARED_BYTES` to size the launch; `view()` checks at run time that the launch gave
//! at least that much (PTX `%dynamic_smem_size`), so a mismatch cannot silently corrupt memory.
//! Shared memory starts uninitialised each launch: write before you read, and put a block barrier
//! between one thread's write and another thread's read.

use crate::atomic::{Block, SharedSpace, SpaceKind};
use crate::memory::out_of_bounds;
use crate::{backend, site};
use core::marker::PhantomData;

/// A typed array at a fixed byte offset of the block's dynamic shared memory.
#[derive(Debug)]
pub struct SharedArray<T> {
    offset: usize,
    len: usize,
    _t: PhantomData<T>,
}
impl<T> Clone for SharedArray<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedArray<T> {}

const fn align_up(x: usize, a: usize) -> usize {
    x.div_ceil(a) * a
}

/// Alignment of the dynamic shared memory base.
pub const SHARED_BASE_ALIGN: usize = 16;

impl<T> SharedArray<T> {
    /// `len` elements at offset 0.
    pub const fn first(len: usize) -> Self {
        assert!(core::mem::align_of::<T>() <= SHARED_BASE_ALIGN);
        SharedArray { offset: 0, len, _t: PhantomData }
    }
    /// `len` elements at the first offset at or after `end_of_previous` aligned for `T`.
    pub const fn after(end_of_previous: usize, len: usize) -> Self {
        assert!(core::mem::align_of::<T>() <= SHARED_BASE_ALIGN);
        SharedArray { offset: align_up(end_of_previous, core::mem::align_of::<T>()), len, _t: PhantomData }
    }
    /// Byte offset.
    pub const fn offset(&self) -> usize {
        self.offset
    }
    pub const fn len(&self) -> usize {
        self.len
    }
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// First byte after the array.
    pub const fn end(&self) -> usize {
        self.offset + self.len * core::mem::size_of::<T>()
    }
    /// The array in this block's shared memory. Traps (GPU) or reports (emulator) if the launch gave
    /// fewer dynamic shared bytes than `end()`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn view(&self) -> SharedSlice<T> {
        let (base, size) = backend::dynamic_shared(site());
        if self.end() > size {
            out_of_bounds(self.end(), size)
        }
        // SAFETY: offset + len*size_of::<T>() <= size of the block's dynamic shared memory; the base is
        // SHARED_BASE_ALIGN-aligned and offset is aligned for T.
        SharedSlice { ptr: unsafe { base.add(self.offset) } as *mut T, len: self.len }
    }
}

/// A view of a typed array in the block's shared memory. PTX: `ld.shared`, `st.shared`,
/// `atom.relaxed.cta.shared.add.u32`.
#[derive(Debug)]
pub struct SharedSlice<T> {
    ptr: *mut T,
    len: usize,
}
impl<T> Clone for SharedSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedSlice<T> {}

impl<T: Copy> SharedSlice<T> {
    crate::memory::view_read_methods!(SpaceKind::Shared, "ld.shared");
    crate::memory::view_write_methods!(
        SpaceKind::Shared,
        SharedSpace,
        Block,
        "st.shared",
        "block scope (shared memory is visible to one block only)"
    );
}
