//! One writer per element: [`Output`] views, whose elements each have one owner ([`Owner`]:
//! [`PerThread`], [`PerWarp`], [`PerBlock`]), and the [`Slot`] a thread writes its element through.
//! Re-exported by [`crate::memory`] and the crate root.
//!
//! Names the kernel parameters' seal and regions (`memory/param.rs`), the thread indices, the
//! backend and the vocabulary; not the views of `memory.rs`.

use super::param::{KernelParam, sealed, view_region};
use crate::pod::Pod;
use crate::thread::{block_idx, global_index_x, grid_stride_x, thread_idx};
use crate::vocab::access::Access;
use crate::vocab::scope::SpaceKind;
use crate::vocab::site::site;
use core::marker::PhantomData;

/// Who owns which elements of an [`Output`]. Sealed: [`PerThread`], [`PerWarp`], [`PerBlock`].
///
/// Ownership is defined on the 1-D launch: with `g = blockIdx.x * blockDim.x + threadIdx.x`, each
/// element has exactly one owner, computed from the `.x` registers alone (as cheap as the index a
/// hand-written kernel computes). A kernel that takes an `Output` is therefore launched 1-D (grid and
/// block `y = z = 1`); the launchers check it ([`KernelParam::needs_1d_launch`]) and refuse any other
/// shape, so no two threads can ever own one element.
pub trait Owner: Copy + sealed::Sealed {
    /// The owner's name (`PerWarp`), for kernel signatures ([`crate::signature`]).
    #[doc(hidden)]
    const NAME: &'static str;
    /// Whether the calling thread owns an element, and which (before the bounds check), for a 1-D
    /// launch. Computed without branches.
    #[doc(hidden)]
    fn owned_index() -> (bool, usize);
}

/// Element `g` belongs to the thread of 1-D global index `g` (and, in a grid-stride loop, to the thread
/// of `g mod (gridDim.x * blockDim.x)`).
#[derive(Clone, Copy, Debug)]
pub struct PerThread;
/// Element `k` belongs to the thread of 1-D global index `32 k`: lane 0 of the `k`-th warp of the grid
/// when blocks are whole warps (otherwise, of each run of 32 consecutive global indices).
#[derive(Clone, Copy, Debug)]
pub struct PerWarp;
/// Element `b` belongs to thread 0 of block `b`.
#[derive(Clone, Copy, Debug)]
pub struct PerBlock;

impl sealed::Sealed for PerThread {}
impl sealed::Sealed for PerWarp {}
impl sealed::Sealed for PerBlock {}

impl Owner for PerThread {
    const NAME: &'static str = "PerThread";
    #[inline(always)]
    fn owned_index() -> (bool, usize) {
        (true, global_index_x())
    }
}
impl Owner for PerWarp {
    const NAME: &'static str = "PerWarp";
    #[inline(always)]
    fn owned_index() -> (bool, usize) {
        let g = global_index_x();
        (g.is_multiple_of(32), g / 32)
    }
}
impl Owner for PerBlock {
    const NAME: &'static str = "PerBlock";
    #[inline(always)]
    fn owned_index() -> (bool, usize) {
        (thread_idx().x == 0, block_idx().x as usize)
    }
}

/// A one-writer-per-element output view: each thread may write only the elements it owns under `O`
/// ([`PerThread`] by default, [`PerWarp`] or [`PerBlock`]). No two threads can reach one element, so
/// results written through it cannot race, by construction; the host hands it out only for a buffer it
/// borrows exclusively, so no other argument of the launch aliases it.
#[repr(C)]
#[derive(Debug)]
pub struct Output<'a, T: Pod, O: Owner = PerThread> {
    ptr: *mut T,
    len: usize,
    _owner: PhantomData<(O, &'a [T])>,
}
impl<T: Pod, O: Owner> Clone for Output<'_, T, O> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Pod, O: Owner> Copy for Output<'_, T, O> {}
impl<T: Pod, O: Owner> sealed::Sealed for Output<'_, T, O> {}
impl<T: Pod, O: Owner> KernelParam for Output<'_, T, O> {
    const TYPE: crate::vocab::param::ParamType =
        crate::vocab::param::ParamType { view: "Output", elem: T::NAME, owner: O::NAME };
    fn region(&self) -> Option<(usize, usize)> {
        view_region(self.ptr, self.len)
    }
    fn needs_1d_launch(&self) -> bool {
        true
    }
    fn exclusive(&self) -> bool {
        true
    }
}

/// One element of an [`Output`], owned by the calling thread.
#[derive(Debug)]
pub struct Slot<'a, T: Pod> {
    ptr: *mut T,
    index: usize,
    _view: PhantomData<&'a ()>,
}

impl<T: Pod> Slot<'_, T> {
    /// The element's index in the output.
    #[inline(always)]
    pub fn index(&self) -> usize {
        self.index
    }
    /// Writes the element (plain store: no other thread reads or writes it during the launch).
    /// PTX: `st.global.b32` (by element width).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn set(&self, v: T) {
        // SAFETY: the slot was made in bounds of its view.
        unsafe { crate::backend::store(self.ptr, v, Access::Plain, SpaceKind::Global, site()) }
    }
    /// Reads the element back (the owner's own earlier write, or what the host put there).
    /// PTX: `ld.global.b32` (by element width).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn get(&self) -> T {
        // SAFETY: as in `set`.
        unsafe { crate::backend::load(self.ptr, Access::Plain, SpaceKind::Global, site()) }
    }
}

impl<T: Pod, O: Owner> Output<'_, T, O> {
    /// An output view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// As [`GlobalMut::from_raw_parts`](crate::GlobalMut::from_raw_parts), and no other view passed
    /// to the same launch may overlap these elements (otherwise two threads could reach one element).
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        Output { ptr, len, _owner: PhantomData }
    }
    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the view has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline(always)]
    fn slot(&self, index: usize) -> Option<Slot<'_, T>> {
        (index < self.len).then(|| Slot { ptr: self.ptr.wrapping_add(index), index, _view: PhantomData })
    }
    /// The element the calling thread owns, if it owns one and it lies within the view.
    #[inline(always)]
    pub fn mine(&self) -> Option<Slot<'_, T>> {
        let (owns, i) = O::owned_index();
        // `wrapping_add`: the pointer is only used (by the slot) when `i < len`.
        let slot = Slot { ptr: self.ptr.wrapping_add(i), index: i, _view: PhantomData };
        core::hint::select_unpredictable(owns & (i < self.len), Some(slot), None)
    }
}

impl<T: Pod> Output<'_, T, PerThread> {
    /// The elements the calling thread owns in a grid-stride loop over the whole view: its 1-D global
    /// index, then every `gridDim.x * blockDim.x` after it.
    #[inline(always)]
    pub fn grid_stride(&self) -> OwnedSlots<'_, T> {
        OwnedSlots { view: self, next: global_index_x(), step: grid_stride_x() }
    }
}

/// Iterator returned by [`Output::grid_stride`].
#[derive(Debug)]
pub struct OwnedSlots<'a, T: Pod> {
    view: &'a Output<'a, T, PerThread>,
    next: usize,
    step: usize,
}

impl<'a, T: Pod> Iterator for OwnedSlots<'a, T> {
    type Item = Slot<'a, T>;
    #[inline(always)]
    fn next(&mut self) -> Option<Slot<'a, T>> {
        let s = self.view.slot(self.next)?;
        self.next += self.step;
        Some(s)
    }
}
