//! Views of global memory, the only way kernels touch device buffers.
//!
//! A view is a pointer and a length, `#[repr(C)]`, passed to a kernel by value. Every access goes
//! through a method, bounds-checked (a failed check traps on the GPU and is reported by the emulator),
//! so the emulator sees each one and can find races. [`Global`] is read-only; [`GlobalMut`] also writes.
//!
//! Plain `get`/`set` compile to `ld`/`st` and may be cached in registers or reordered by the compiler;
//! `get_volatile`/`set_volatile` compile to `ld.volatile`/`st.volatile` (every access reaches memory;
//! not atomic); `.atomic(i)` gives read-modify-writes and acquire/release accesses.

use crate::atomic::{Atomic, Device, GlobalSpace, SpaceKind};
use crate::site;

/// How an access reaches memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// `ld` / `st`.
    Plain,
    /// `ld.volatile` / `st.volatile`.
    Volatile,
}

/// Types that may be passed to a kernel: scalars and global views. Their layout is identical on the
/// host and the device, so the host can pass them by value to `cuLaunchKernel`.
///
/// # Safety
/// Implementors must be `#[repr(C)]` (or primitive) with the same size and layout on both targets and
/// contain no host-only state.
pub unsafe trait KernelParam: Copy {}
macro_rules! scalar_params { ($($t:ty),*) => { $(unsafe impl KernelParam for $t {})* }; }
scalar_params!(u8, u32, i32, u64, i64, f32, f64);
unsafe impl<T: Copy> KernelParam for Global<T> {}
unsafe impl<T: Copy> KernelParam for GlobalMut<T> {}

#[doc(hidden)]
#[inline(always)]
pub fn assert_param<T: KernelParam>() {}

#[cold]
#[inline(never)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) fn out_of_bounds(i: usize, len: usize) -> ! {
    #[cfg(target_arch = "nvptx64")]
    {
        let _ = (i, len);
        // SAFETY: `trap` ends the thread's launch; nothing is left half-done that the host could see
        // as valid (the launch reports an error).
        unsafe { core::arch::nvptx::trap() }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    panic!("index out of bounds: the len is {len} but the index is {i}")
}

/// A read-only view of `len` elements of global memory.
/// PTX: `ld.global.b32`, `ld.global.b64`, `ld.global.u8`, `ld.volatile`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Global<T> {
    ptr: *const T,
    len: usize,
}

/// A read-write view of `len` elements of global memory.
/// PTX: `st.global.b32`, `st.global.b64`, `st.volatile` (and the loads of the read-only view).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GlobalMut<T> {
    ptr: *mut T,
    len: usize,
}

/// `len`, `is_empty`, bounds-checked element pointers, `get` and `get_volatile` for a view type in
/// state space `$space` (`ld_doc`: the PTX its plain load emits). Shared by global and shared views.
macro_rules! view_read_methods {
    ($space:expr, $ld_doc:literal) => {
        /// Number of elements.
        #[inline(always)]
        pub fn len(&self) -> usize {
            self.len
        }
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
            // SAFETY: i < len, and the view's constructor promised len valid elements.
            unsafe { self.ptr.add(i) as *mut T }
        }
        #[doc = concat!("Reads element `i`. PTX: `", $ld_doc, "`.")]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn get(&self, i: usize) -> T {
            let p = self.elem(i);
            // SAFETY: in bounds (checked above).
            unsafe { $crate::backend::load(p, $crate::memory::Access::Plain, $space, $crate::site()) }
        }
        /// Reads element `i` with a volatile load: never cached in a register. PTX: `ld.volatile`.
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
/// state space `$space` (type `$space_ty`).
macro_rules! view_write_methods {
    ($space:expr, $space_ty:ty, $scope:ty, $st_doc:literal, $scope_doc:literal) => {
        #[doc = concat!("Writes element `i`. PTX: `", $st_doc, "`.")]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn set(&self, i: usize, v: T) {
            let p = self.elem(i);
            // SAFETY: in bounds.
            unsafe { $crate::backend::store(p, v, $crate::memory::Access::Plain, $space, $crate::site()) }
        }
        /// Writes element `i` with a volatile store. PTX: `st.volatile`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn set_volatile(&self, i: usize, v: T) {
            let p = self.elem(i);
            // SAFETY: in bounds.
            unsafe { $crate::backend::store(p, v, $crate::memory::Access::Volatile, $space, $crate::site()) }
        }
        #[doc = concat!("Element `i` for atomic operations at ", $scope_doc, "; `.scope::<S>()` changes it.")]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn atomic(&self, i: usize) -> $crate::atomic::AtomicRef<T, $scope, $space_ty>
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
        pub fn atomic_scoped<S: $crate::atomic::Scope>(&self, i: usize) -> $crate::atomic::AtomicRef<T, S, $space_ty>
        where
            T: $crate::atomic::Atomic,
        {
            self.atomic(i).scope::<S>()
        }
    };
}
pub(crate) use {view_read_methods, view_write_methods};

impl<T: Copy> Global<T> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be a device (or, in the emulator, host) address of `len` initialised, aligned `T`s
    /// that stay valid for every launch the view is passed to.
    pub const unsafe fn from_raw_parts(ptr: *const T, len: usize) -> Self {
        Global { ptr, len }
    }
    view_read_methods!(SpaceKind::Global, "ld.global");
    /// Reads element `i` with acquire semantics at device scope. PTX: `ld.acquire.gpu.global.u32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn load_acquire(&self, i: usize) -> T
    where
        T: Atomic,
    {
        let p = self.elem(i);
        // SAFETY: in bounds.
        unsafe { T::load_acquire(SpaceKind::Global, crate::atomic::ScopeKind::Device, p, site()) }
    }
}

impl<T: Copy> GlobalMut<T> {
    /// A view of `len` writable elements at `ptr`.
    ///
    /// # Safety
    /// As [`Global::from_raw_parts`]; also no other view may be used to write the same elements
    /// outside the kernels' own synchronisation.
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        GlobalMut { ptr, len }
    }
    view_read_methods!(SpaceKind::Global, "ld.global");
    view_write_methods!(SpaceKind::Global, GlobalSpace, Device, "st.global", "device scope (CUDA's default)");
    /// The same memory, read-only.
    #[inline(always)]
    pub fn as_global(&self) -> Global<T> {
        Global { ptr: self.ptr, len: self.len }
    }
}
