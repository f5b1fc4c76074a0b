//! Views of global memory, the only way kernels touch device buffers.
//!
//! A view is a pointer and a length, `#[repr(C)]`, passed to a kernel by value. Every access goes
//! through a method, bounds-checked (a failed check traps on the GPU and is reported by the emulator),
//! so the emulator sees each one and can find races. [`Global`] is read-only; [`GlobalMut`] also writes.
//!
//! Plain `get`/`set` compile to `ld`/`st` and may be cached in registers or reordered by the compiler;
//! `get_volatile`/`set_volatile` compile to `ld.volatile`/`st.volatile` (every access reaches memory;
//! not atomic); `.atomic(i)` gives read-modify-writes and acquire/release accesses.

use crate::atomic::{Atomic, AtomicRef, Device, GlobalSpace, Scope, SpaceKind};
use crate::{backend, site};

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
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Global<T> {
    ptr: *const T,
    len: usize,
}

/// A read-write view of `len` elements of global memory.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GlobalMut<T> {
    ptr: *mut T,
    len: usize,
}

macro_rules! read_methods {
    () => {
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
                out_of_bounds(i, self.len)
            }
            // SAFETY: i < len, and the view's constructor promised len valid elements.
            unsafe { self.ptr.add(i) as *mut T }
        }
        /// Reads element `i`. PTX: `ld.global`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn get(&self, i: usize) -> T {
            let p = self.elem(i);
            // SAFETY: in bounds (checked above).
            unsafe { backend::load(p, Access::Plain, SpaceKind::Global, site()) }
        }
        /// Reads element `i` with a volatile load: never cached in a register. PTX: `ld.volatile`.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn get_volatile(&self, i: usize) -> T {
            let p = self.elem(i);
            // SAFETY: in bounds (checked above).
            unsafe { backend::load(p, Access::Volatile, SpaceKind::Global, site()) }
        }
    };
}

impl<T: Copy> Global<T> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be a device (or, in the emulator, host) address of `len` initialised, aligned `T`s
    /// that stay valid for every launch the view is passed to.
    pub const unsafe fn from_raw_parts(ptr: *const T, len: usize) -> Self {
        Global { ptr, len }
    }
    read_methods!();
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
    read_methods!();
    /// The same memory, read-only.
    #[inline(always)]
    pub fn as_global(&self) -> Global<T> {
        Global { ptr: self.ptr, len: self.len }
    }
    /// Writes element `i`. PTX: `st.global`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn set(&self, i: usize, v: T) {
        let p = self.elem(i);
        // SAFETY: in bounds.
        unsafe { backend::store(p, v, Access::Plain, SpaceKind::Global, site()) }
    }
    /// Writes element `i` with a volatile store. PTX: `st.volatile`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn set_volatile(&self, i: usize, v: T) {
        let p = self.elem(i);
        // SAFETY: in bounds.
        unsafe { backend::store(p, v, Access::Volatile, SpaceKind::Global, site()) }
    }
    /// Element `i` for atomic operations at device scope (CUDA's default); `.scope::<Block>()` or
    /// `.scope::<System>()` changes it.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn atomic(&self, i: usize) -> AtomicRef<T, Device, GlobalSpace>
    where
        T: Atomic,
    {
        let p = self.elem(i);
        // SAFETY: in bounds, global memory.
        unsafe { AtomicRef::new(p) }
    }
    /// Element `i` for atomic operations at scope `S`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn atomic_scoped<S: Scope>(&self, i: usize) -> AtomicRef<T, S, GlobalSpace>
    where
        T: Atomic,
    {
        self.atomic(i).scope::<S>()
    }
}
