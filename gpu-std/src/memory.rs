//! Views of global memory, the only way kernels touch device buffers.
//!
//! A view is a pointer and a length, `#[repr(C)]`, passed to a kernel by value. Every access goes
//! through a method, bounds-checked (a failed check traps on the GPU and is reported by the emulator),
//! so the emulator sees each one and can find races. [`Global`] is read-only; [`GlobalMut`] also
//! writes; [`Output`] is the recommended way to write results: each thread may write only the elements
//! it owns, so no two threads can write one element.
//!
//! Every access is one PTX instruction emitted by inline assembly (`ld.global`, `st.global`,
//! `ld.volatile.global`, …), never a Rust load or store. The compiler cannot reason about it, so a
//! race between threads — which kernels written to demonstrate races commit on purpose — yields racy
//! *values*, never undefined behaviour. Plain `get`/`set` may still be merged or kept in a register by
//! the compiler, like plain C++ accesses; `get_volatile`/`set_volatile` reach memory every time;
//! `.atomic(i)` gives read-modify-writes and acquire/release accesses.
//!
//! The views are here; what may be a kernel parameter ([`KernelParam`]) is in `memory/param.rs`, the
//! one-writer [`Output`] and its owners in `memory/output.rs`, both re-exported.
//!
//! Floor of the views and primitives: names gpu-std's vocabulary, the backend (`crate::backend`: the PTX
//! layer on the GPU, the emulator on the host) and other primitives; nothing of the kernel floor
//! (`Kernel`, signatures, launch arguments) nor the emulator's launch API.

use crate::atomic::{Atomic, Device, GlobalSpace, ScopeKind, SpaceKind};
use crate::pod::Pod;
pub use crate::vocab::access::Access;
use param::{sealed, view_region};

mod output;
mod param;

use crate::vocab::site::site;
use core::marker::PhantomData;
pub use output::{Output, OwnedSlots, Owner, PerBlock, PerThread, PerWarp, Slot};
pub use param::{KernelParam, assert_param};

/// Panics (traps on the GPU) unless the `N` indices `first`, `first + stride`, … are all below
/// `len`: one check of the last, without overflow.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) fn check_strided<const N: usize>(first: usize, stride: usize, len: usize) {
    let last = stride.checked_mul(N.saturating_sub(1)).and_then(|d| first.checked_add(d));
    match last {
        Some(last) if N == 0 || last < len => {}
        _ => out_of_bounds(last.unwrap_or(usize::MAX), len),
    }
}

#[cold]
#[inline(never)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) fn out_of_bounds(i: usize, len: usize) -> ! {
    #[cfg(target_arch = "nvptx64")]
    {
        let _ = (i, len);
        crate::ptx::trap_with(c"gpu-std: view index out of bounds\n")
    }
    #[cfg(not(target_arch = "nvptx64"))]
    panic!("index out of bounds: the len is {len} but the index is {i}")
}

/// A read-only view of `len` elements of global memory, valid for the launch `'a`.
///
/// A kernel receives its views for a lifetime it cannot name outside the launch, so it cannot keep one
/// anywhere that outlives the launch (a `static`, a `thread_local`):
///
/// ```compile_fail,E0521
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// std::thread_local! {
///     static KEPT: std::cell::Cell<Option<gpu_std::GlobalMut<'static, u32>>> = const { std::cell::Cell::new(None) };
/// }
/// gpu_std::kernel! {
///     pub fn keep<'a>(x: gpu_std::GlobalMut<'a, u32>) {
///         KEPT.with(|k| k.set(Some(x))); // error: borrowed data escapes outside of function
///     }
/// }
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Global<'a, T: Pod> {
    ptr: *const T,
    len: usize,
    _launch: PhantomData<&'a [T]>,
}

/// A read-write view of `len` elements of global memory, which any thread may write anywhere: the view
/// for atomics, flags and deliberately racy demonstrations. For results, prefer [`Output`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GlobalMut<'a, T: Pod> {
    ptr: *mut T,
    len: usize,
    _launch: PhantomData<&'a [T]>,
}

impl<T: Pod> sealed::Sealed for Global<'_, T> {}
impl<T: Pod> KernelParam for Global<'_, T> {
    const TYPE: crate::vocab::param::ParamType =
        crate::vocab::param::ParamType { view: "Global", elem: T::NAME, owner: "" };
    fn region(&self) -> Option<(usize, usize)> {
        view_region(self.ptr, self.len)
    }
}
impl<T: Pod> sealed::Sealed for GlobalMut<'_, T> {}
impl<T: Pod> KernelParam for GlobalMut<'_, T> {
    const TYPE: crate::vocab::param::ParamType =
        crate::vocab::param::ParamType { view: "GlobalMut", elem: T::NAME, owner: "" };
    fn region(&self) -> Option<(usize, usize)> {
        view_region(self.ptr, self.len)
    }
}

/// `len`, `is_empty`, bounds-checked element pointers, `get` and `get_volatile` for a view type in
/// state space `$space`. Shared by global and shared views.
macro_rules! view_read_methods {
    ($space:expr) => {
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
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        fn elem(&self, i: usize) -> *mut T {
            if i >= self.len {
                $crate::memory::out_of_bounds(i, self.len)
            }
            // `wrapping_add`: the address is only handed to PTX (a shared view holds a shared-window
            // address, not a Rust pointer); `i < len` keeps it inside the view.
            self.ptr.wrapping_add(i) as *mut T
        }
        /// Reads element `i` with a plain load of the element's width.
        /// PTX: `ld.global.u8`, `ld.global.b16`, `ld.global.b32`, `ld.global.b64`, `ld.shared.b32`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn get(&self, i: usize) -> T {
            let p = self.elem(i);
            // SAFETY: in bounds (checked above), in this view's state space.
            unsafe { $crate::backend::load(p, $crate::memory::Access::Plain, $space, $crate::site()) }
        }
        /// Reads element `i` with a volatile load: never cached in a register, never merged with
        /// another load. Not atomic with respect to read-modify-writes; it does not order other
        /// accesses (pair it with a fence). PTX: `ld.volatile.global.b32`, `ld.volatile.shared.b32`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn get_volatile(&self, i: usize) -> T {
            let p = self.elem(i);
            // SAFETY: in bounds (checked above).
            unsafe { $crate::backend::load(p, $crate::memory::Access::Volatile, $space, $crate::site()) }
        }
    };
}

/// `set`, `set_volatile`, `atomic` (at scope `$scope`) and `atomic_scoped` for a writable view in
/// state space `$space` (type `$space_ty`), whose elements for atomics are valid for `$lt` (the
/// launch's lifetime of a global view, `'_` for the borrow of a shared one).
macro_rules! view_write_methods {
    ($lt:lifetime, $space:expr, $space_ty:ty, $scope:ty) => {
        /// Writes element `i` with a plain store of the element's width.
        /// PTX: `st.global.b8`, `st.global.b16`, `st.global.b32`, `st.global.b64`, `st.shared.b32`.
        ///
        /// Another thread's access to the same element without a barrier or release/acquire edge in
        /// between is a data race: the values are then unspecified (never undefined behaviour), and
        /// the emulator reports it.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn set(&self, i: usize, v: T) {
            let p = self.elem(i);
            // SAFETY: in bounds.
            unsafe { $crate::backend::store(p, v, $crate::memory::Access::Plain, $space, $crate::site()) }
        }
        /// Writes element `i` with a volatile store. PTX: `st.volatile.global.b32`,
        /// `st.volatile.shared.b32`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn set_volatile(&self, i: usize, v: T) {
            let p = self.elem(i);
            // SAFETY: in bounds.
            unsafe { $crate::backend::store(p, v, $crate::memory::Access::Volatile, $space, $crate::site()) }
        }
        /// Element `i` for atomic operations at the view's default scope (device scope for global
        /// memory, CUDA's default; block scope for shared memory); `.scope::<S>()` changes it.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn atomic(&self, i: usize) -> $crate::atomic::AtomicRef<$lt, T, $scope, $space_ty>
        where
            T: $crate::atomic::Atomic,
        {
            let p = self.elem(i);
            // SAFETY: in bounds, in this view's state space.
            unsafe { $crate::atomic::AtomicRef::new(p) }
        }
        /// Element `i` for atomic operations at scope `S`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn atomic_scoped<S: $crate::atomic::Scope>(
            &self,
            i: usize,
        ) -> $crate::atomic::AtomicRef<$lt, T, S, $space_ty>
        where
            T: $crate::atomic::Atomic,
        {
            self.atomic(i).scope::<S>()
        }
    };
}
pub(crate) use {view_read_methods, view_write_methods};

impl<'a, T: Pod> Global<'a, T> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be a device (or, in the emulator, host) address of `len` initialised, aligned `T`s
    /// that stay valid for every launch the view is passed to. (Host code gets views from its buffers,
    /// which borrow the buffer instead.)
    pub const unsafe fn from_raw_parts(ptr: *const T, len: usize) -> Self {
        Global { ptr, len, _launch: PhantomData }
    }
    /// The view's start and length, for splitting it into sub-views.
    #[inline(always)]
    pub(crate) fn raw_parts(&self) -> (*const T, usize) {
        (self.ptr, self.len)
    }
    view_read_methods!(SpaceKind::Global);
    /// Reads the `N` elements `first`, `first + stride`, …, `first + (N - 1) * stride` with `N` plain
    /// loads after one bounds check (of the last index), so that no branch stands between the loads:
    /// all `N` are in flight before the first value is used, and a warp reading a tile spends one
    /// check on it instead of one per element. PTX: `ld.global.b32` (one per element, of its width).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn get_strided<const N: usize>(&self, first: usize, stride: usize) -> [T; N] {
        check_strided::<N>(first, stride, self.len);
        let at = site();
        core::array::from_fn(|u| {
            let p = self.ptr.wrapping_add(first + u * stride);
            // SAFETY: `first + u * stride <= last < len` (checked above, without overflow), in global
            // memory.
            unsafe { crate::backend::load(p, crate::memory::Access::Plain, SpaceKind::Global, at) }
        })
    }
    /// Reads element `i` with acquire semantics at device scope. PTX: `ld.acquire.gpu.global.u32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn load_acquire(&self, i: usize) -> T
    where
        T: Atomic,
    {
        let p = self.elem(i);
        // SAFETY: in bounds.
        unsafe { T::load_acquire(SpaceKind::Global, ScopeKind::Device, p, site()) }
    }
}

impl<'a, T: Pod> GlobalMut<'a, T> {
    /// A view of `len` writable elements at `ptr`.
    ///
    /// # Safety
    /// As [`Global::from_raw_parts`]. Concurrent writes through other views are allowed (they are
    /// races, with unspecified values), but the memory must not be freed or reused while a launch
    /// that was given the view runs.
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        GlobalMut { ptr, len, _launch: PhantomData }
    }
    view_read_methods!(SpaceKind::Global);
    view_write_methods!('a, SpaceKind::Global, GlobalSpace, Device);
    /// Writes `v[u]` to element `at[u]` for every `u`, with `N` plain stores after one bounds check (of
    /// the largest index): a scatter, such as a sort's, whose stores need no branch between them, so
    /// that the loads feeding them can all be issued first. Two indices that are equal write in turn
    /// (the last wins). PTX: `st.global.b32` (one per element, of its width).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn scatter<const N: usize>(&self, at: [usize; N], v: [T; N]) {
        let largest = at.iter().fold(0, |m, &i| m.max(i));
        if N > 0 && largest >= self.len {
            out_of_bounds(largest, self.len)
        }
        let site = site();
        for u in 0..N {
            let p = self.ptr.wrapping_add(at[u]);
            // SAFETY: `at[u] <= largest < len` (checked above), in global memory.
            unsafe { crate::backend::store(p, v[u], crate::memory::Access::Plain, SpaceKind::Global, site) }
        }
    }
    /// Writes `v[u]` to the `N` elements `first`, `first + stride`, …, `first + (N - 1) * stride` with
    /// `N` plain stores after one bounds check (of the last index): the write of a tile that a warp
    /// holds in registers as [`Global::get_strided`] read it. PTX: `st.global.b32` (one per element,
    /// of its width).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn set_strided<const N: usize>(&self, first: usize, stride: usize, v: [T; N]) {
        check_strided::<N>(first, stride, self.len);
        let site = site();
        for (u, x) in v.into_iter().enumerate() {
            let p = self.ptr.wrapping_add(first + u * stride);
            // SAFETY: `first + u * stride <= last < len` (checked above, without overflow), in global
            // memory.
            unsafe { crate::backend::store(p, x, crate::memory::Access::Plain, SpaceKind::Global, site) }
        }
    }
    /// The same memory, read-only.
    #[inline(always)]
    pub fn as_global(&self) -> Global<'a, T> {
        Global { ptr: self.ptr, len: self.len, _launch: PhantomData }
    }
}
