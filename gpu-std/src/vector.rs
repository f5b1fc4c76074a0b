//! 16-byte vector loads and stores: one instruction moves 16 bytes of a global view into four registers, the
//! widest load a thread can issue and what a memory-bound kernel needs to reach the memory's bandwidth
//! (a quarter of the load instructions of 4-byte loads, so more bytes in flight per thread).
//!
//! [`Global::split_vectors`] splits a view the way `slice::align_to` splits a slice: a `head` of the
//! elements before the first 16-byte boundary, a `body` of whole 16-byte groups ([`Vectors`]) and a
//! `tail` of the elements after them. Buffers from the CUDA driver start on a 256-byte boundary, so on a
//! GPU the head is empty; a sub-view or a host buffer on the emulator may start anywhere, and a kernel
//! that reads head, body and tail reads every element exactly once either way.
//! [`GlobalMut::split_vectors_mut`] splits a writable view the same way, into [`VectorsMut`], whose
//! `set` writes 16 bytes with one store.
//!
//! ```
//! use gpu_std::Global;
//! // Element type f32: 4 lanes per vector.
//! let data: Vec<f32> = (0..11).map(|x| x as f32).collect();
//! // SAFETY: `data` outlives the view and is not written while the view exists.
//! let view = unsafe { Global::from_raw_parts(data.as_ptr(), data.len()) };
//! let s = view.split_vectors();
//! assert_eq!(s.head.len() + 4 * s.body.len() + s.tail.len(), 11);
//! ```
//!
//! Floor of the views and primitives: names gpu-std's vocabulary, the backend (`crate::backend`: the PTX
//! layer on the GPU, the emulator on the host) and other primitives; nothing of the kernel floor
//! (`Kernel`, signatures, launch arguments) nor the emulator's launch API.

use crate::memory::{Global, GlobalMut};
use crate::pod::Pod;
pub use crate::vocab::access::CacheOp;
use crate::vocab::site::site;

mod sealed {
    pub trait Sealed {}
}

/// Stops the kernel (panics on the host) unless `start .. start + len` lies in `0 .. total`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn check_sub(start: usize, len: usize, total: usize) {
    if start > total || len > total - start {
        crate::memory::out_of_bounds(start.saturating_add(len), total)
    }
}

/// Element types that 16-byte vectors carry: `LANES = 16 / size_of::<T>()` of them per vector, read
/// as one [`Lanes::Vector`] (`[T; LANES]`). Sealed: the [`Pod`] scalars.
pub trait Lanes: Pod + sealed::Sealed {
    /// Elements per 16-byte vector.
    const LANES: usize;
    /// `[Self; LANES]`.
    type Vector: Copy + Default + core::fmt::Debug + AsRef<[Self]> + AsMut<[Self]>;
}

macro_rules! lanes {
    ($($t:ty => $n:literal),*) => {$(
        impl sealed::Sealed for $t {}
        impl Lanes for $t {
            const LANES: usize = $n;
            type Vector = [$t; $n];
        }
    )*};
}
lanes!(u8 => 16, i8 => 16, u16 => 8, i16 => 8, u32 => 4, i32 => 4, f32 => 4, u64 => 2, i64 => 2, f64 => 2);

/// A read-only view of whole 16-byte groups of global memory, 16-byte aligned: vector `i` holds the
/// elements `LANES * i .. LANES * (i + 1)`. Made by [`Global::split_vectors`].
#[derive(Clone, Copy, Debug)]
pub struct Vectors<'a, T: Lanes> {
    ptr: *const T,
    len: usize,
    _launch: core::marker::PhantomData<&'a [T]>,
}

/// A global view split at 16-byte boundaries: see the [module docs](self).
#[derive(Clone, Copy, Debug)]
pub struct Split<'a, T: Lanes> {
    /// The elements before the first 16-byte boundary (fewer than `LANES`).
    pub head: Global<'a, T>,
    /// The whole 16-byte groups after them.
    pub body: Vectors<'a, T>,
    /// The elements after the last whole group (fewer than `LANES`).
    pub tail: Global<'a, T>,
}

impl<'a, T: Lanes> Global<'a, T> {
    /// Splits the view into a head of single elements, a body of 16-byte vectors and a tail of single
    /// elements (see the [module docs](self)). Costs a few integer instructions, no memory access.
    #[inline(always)]
    pub fn split_vectors(&self) -> Split<'a, T> {
        let (ptr, len) = self.raw_parts();
        let size = size_of::<T>();
        // Elements up to the next 16-byte boundary (the address is a multiple of `size`).
        let head = ((ptr as usize).wrapping_neg() % 16 / size).min(len);
        let body = (len - head) / T::LANES;
        let tail = len - head - body * T::LANES;
        let body_ptr = ptr.wrapping_add(head);
        let tail_ptr = body_ptr.wrapping_add(body * T::LANES);
        // SAFETY: the three ranges partition the view's `len` elements, which `self` makes valid for
        // every launch it is passed to; the body starts on a 16-byte boundary.
        unsafe {
            Split {
                head: Global::from_raw_parts(ptr, head),
                body: Vectors { ptr: body_ptr, len: body, _launch: core::marker::PhantomData },
                tail: Global::from_raw_parts(tail_ptr, tail),
            }
        }
    }
}

impl<T: Lanes> Vectors<'_, T> {
    /// Number of 16-byte vectors.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The vectors `start .. start + len` as a view of their own (bounds-checked once, here): a kernel
    /// that reads several vectors at constant distances from one index checks that index once, and the
    /// checks of the reads, against a length known at compile time, fold away.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn sub(&self, start: usize, len: usize) -> Self {
        check_sub(start, len, self.len);
        Vectors { ptr: self.ptr.wrapping_add(start * T::LANES), len, _launch: core::marker::PhantomData }
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn at(&self, i: usize) -> *const T {
        if i >= self.len {
            crate::memory::out_of_bounds(i, self.len)
        }
        self.ptr.wrapping_add(i * T::LANES)
    }
    /// Reads vector `i` with one 16-byte load (bounds-checked like every view access).
    /// PTX: `ld.global.v4.b32`, `ld.global.v2.b64` (8-byte elements, which land in 64-bit registers).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn get(&self, i: usize) -> T::Vector {
        let p = self.at(i);
        // SAFETY: in bounds (checked above) and 16-byte aligned (`split_vectors`); any 16 bytes are a
        // valid `[T; LANES]` of `Pod` scalars.
        unsafe { crate::backend::load_vector::<T, T::Vector>(p, CacheOp::Normal, site()) }
    }
    /// Reads the `N` vectors `first`, `first + stride`, …, `first + (N - 1) * stride` with `N` 16-byte
    /// loads after one bounds check (of the last index), so that no branch stands between the loads:
    /// all `N` are in flight before the first value is used. (With `N` calls of [`get`](Self::get),
    /// each load follows its own check, and the compiler may issue the later loads only after the
    /// earlier checks.) PTX: `ld.global.v4.b32`, `ld.global.v2.b64` (one per vector).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn get_strided<const N: usize>(&self, first: usize, stride: usize) -> [T::Vector; N] {
        self.strided(first, stride, CacheOp::Normal, site())
    }
    /// [`get_strided`](Self::get_strided) through the read-only data cache, as [`get_nc`](Self::get_nc)
    /// reads one vector (no thread may write these bytes during the launch). PTX: `ld.global.nc.v4.b32`,
    /// `ld.global.nc.v2.b64` (one per vector).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn get_strided_nc<const N: usize>(&self, first: usize, stride: usize) -> [T::Vector; N] {
        self.strided(first, stride, CacheOp::ReadOnly, site())
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn strided<const N: usize>(&self, first: usize, stride: usize, op: CacheOp, at: crate::Site) -> [T::Vector; N] {
        let last = stride.checked_mul(N.saturating_sub(1)).and_then(|d| first.checked_add(d));
        match last {
            Some(last) if N == 0 || last < self.len => {}
            _ => crate::memory::out_of_bounds(last.unwrap_or(usize::MAX), self.len),
        }
        core::array::from_fn(|u| {
            let p = self.ptr.wrapping_add((first + u * stride) * T::LANES);
            // SAFETY: `first + u * stride <= last < len` (checked above, without overflow), 16-byte
            // aligned (`split_vectors`); any 16 bytes are a valid `[T; LANES]` of `Pod` scalars.
            unsafe { crate::backend::load_vector::<T, T::Vector>(p, op, at) }
        })
    }
    /// Reads vector `i` with one 16-byte load through the read-only (non-coherent) data cache, which
    /// CUDA uses for `const __restrict__` inputs (`__ldg`). No thread may write these bytes during the
    /// launch: the cache is not kept coherent with writes, so such a load may return the old bytes —
    /// an unspecified value, never undefined behaviour. (The emulator treats it as a plain load, and
    /// reports a write racing with it like any race.) PTX: `ld.global.nc.v4.b32`, `ld.global.nc.v2.b64`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn get_nc(&self, i: usize) -> T::Vector {
        let p = self.at(i);
        // SAFETY: as in `get`.
        unsafe { crate::backend::load_vector::<T, T::Vector>(p, CacheOp::ReadOnly, site()) }
    }
    /// Reads vector `i` with one 16-byte *streaming* load: the bytes are likely read once, so the caches
    /// evict them first (they do not push out data that is used again, such as a kernel's flags). A
    /// hint only: the value is that of [`get`](Self::get). PTX: `ld.global.cs.v4.b32`,
    /// `ld.global.cs.v2.b64`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn get_streaming(&self, i: usize) -> T::Vector {
        let p = self.at(i);
        // SAFETY: as in `get`.
        unsafe { crate::backend::load_vector::<T, T::Vector>(p, CacheOp::Streaming, site()) }
    }
}

/// A writable view of whole 16-byte groups of global memory, 16-byte aligned: vector `i` holds the
/// elements `LANES * i .. LANES * (i + 1)`. Made by [`GlobalMut::split_vectors_mut`]. Like
/// [`GlobalMut`], any thread may write any vector (two threads writing one vector race).
#[derive(Clone, Copy, Debug)]
pub struct VectorsMut<'a, T: Lanes> {
    ptr: *mut T,
    len: usize,
    _launch: core::marker::PhantomData<&'a [T]>,
}

/// A writable global view split at 16-byte boundaries: see [`Split`].
#[derive(Clone, Copy, Debug)]
pub struct SplitMut<'a, T: Lanes> {
    /// The elements before the first 16-byte boundary (fewer than `LANES`).
    pub head: GlobalMut<'a, T>,
    /// The whole 16-byte groups after them.
    pub body: VectorsMut<'a, T>,
    /// The elements after the last whole group (fewer than `LANES`).
    pub tail: GlobalMut<'a, T>,
}

impl<'a, T: Lanes> GlobalMut<'a, T> {
    /// Splits the view into a head of single elements, a body of 16-byte vectors and a tail of single
    /// elements, at the same boundaries as [`Global::split_vectors`] of the same memory. Costs a few
    /// integer instructions, no memory access.
    #[inline(always)]
    pub fn split_vectors_mut(&self) -> SplitMut<'a, T> {
        let s = self.as_global().split_vectors();
        let (head_ptr, head) = s.head.raw_parts();
        let (tail_ptr, tail) = s.tail.raw_parts();
        // SAFETY: the three ranges partition this writable view's elements (`split_vectors` of the same
        // pointer and length), which `self` makes valid for writes for every launch it is passed to.
        unsafe {
            SplitMut {
                head: GlobalMut::from_raw_parts(head_ptr as *mut T, head),
                body: VectorsMut { ptr: s.body.ptr as *mut T, len: s.body.len, _launch: core::marker::PhantomData },
                tail: GlobalMut::from_raw_parts(tail_ptr as *mut T, tail),
            }
        }
    }
}

impl<T: Lanes> VectorsMut<'_, T> {
    /// Number of 16-byte vectors.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The vectors `start .. start + len` as a view of their own, bounds-checked once: see
    /// [`Vectors::sub`].
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn sub(&self, start: usize, len: usize) -> Self {
        check_sub(start, len, self.len);
        VectorsMut { ptr: self.ptr.wrapping_add(start * T::LANES), len, _launch: core::marker::PhantomData }
    }
    /// Writes vector `i` with one 16-byte store (bounds-checked like every view access).
    /// PTX: `st.global.v4.b32`, `st.global.v2.b64` (8-byte elements).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn set(&self, i: usize, v: T::Vector) {
        self.put(i, v, CacheOp::Normal)
    }
    /// Writes vector `i` with one 16-byte *streaming* store: the bytes are likely not read again by this
    /// launch, so the caches evict them first. A hint only: the effect is that of [`set`](Self::set).
    /// PTX: `st.global.cs.v4.b32`, `st.global.cs.v2.b64`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn set_streaming(&self, i: usize, v: T::Vector) {
        self.put(i, v, CacheOp::Streaming)
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn put(&self, i: usize, v: T::Vector, op: CacheOp) {
        if i >= self.len {
            crate::memory::out_of_bounds(i, self.len)
        }
        let p = self.ptr.wrapping_add(i * T::LANES);
        // SAFETY: in bounds (checked above) and 16-byte aligned (`split_vectors_mut`).
        unsafe { crate::backend::store_vector::<T, T::Vector>(p, v, op, site()) }
    }
}
