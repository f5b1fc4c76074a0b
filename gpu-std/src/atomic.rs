//! Atomic read-modify-write operations on global and shared memory (CUDA's `atomicAdd` family).
//!
//! Each operation is indivisible: concurrent operations on one location take effect in some serial
//! order chosen by the hardware, and each returns the value it replaced (the *old* value). Atomics here
//! are *relaxed*: they order nothing but themselves. To publish other data, pair them with a fence or
//! use `store_release` / `load_acquire` (see [`crate::fence`]).
//!
//! The *scope* says which threads the atomicity is promised to: [`Block`] (`.cta`, threads of one
//! block), [`Device`] (`.gpu`, every thread of the device; CUDA's default), [`System`] (`.sys`, also the
//! host and peer devices). A block-scoped atomic on a location that another block also updates is a
//! race; the emulator reports it.
//!
//! Operations per type: add/sub/min/max/and/or/xor/exch/cas on `u32`, `i32`, `u64`, `i64`;
//! inc/dec (wrapping at a limit) on `u32`; add/exch/cas on `f32`, `f64`.
//!
//! Floor of the views and primitives: names gpu-std's vocabulary, the backend (`crate::backend`: the PTX
//! layer on the GPU, the emulator on the host) and other primitives; nothing of the kernel floor
//! (`Kernel`, signatures, launch arguments) nor the emulator's launch API.

pub use crate::vocab::atom::{AtomOp, Atomic};
pub use crate::vocab::scope::{Block, Device, GlobalSpace, Scope, ScopeKind, SharedSpace, Space, SpaceKind, System};
use crate::vocab::site::site;
use core::marker::PhantomData;

/// Integer types: add/sub/min/max/and/or/xor.
pub trait AtomicInt: Atomic {
    #[doc(hidden)]
    fn negate(self) -> Self;
}
/// Floating-point types: add.
pub trait AtomicFloat: Atomic {}
impl AtomicFloat for f32 {}
impl AtomicFloat for f64 {}

impl AtomicInt for u32 {
    fn negate(self) -> Self {
        self.wrapping_neg()
    }
}
impl AtomicInt for i32 {
    fn negate(self) -> Self {
        self.wrapping_neg()
    }
}
impl AtomicInt for u64 {
    fn negate(self) -> Self {
        self.wrapping_neg()
    }
}
impl AtomicInt for i64 {
    fn negate(self) -> Self {
        self.wrapping_neg()
    }
}

/// One element of a view, for atomic operations at scope `S`. Made by `.atomic(i)` on a view, and
/// valid for `'a`: the launch, for an element of a global-memory view (it can no more be kept past the
/// launch than the view itself); the borrow of the [`SharedSlice`](crate::SharedSlice) it was made
/// from, for shared memory.
///
/// ```compile_fail,E0521
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// std::thread_local! {
///     static KEPT: std::cell::Cell<Option<gpu_std::atomic::AtomicRef<'static, u32, gpu_std::Device, gpu_std::atomic::GlobalSpace>>> =
///         const { std::cell::Cell::new(None) };
/// }
/// gpu_std::kernel! {
///     pub fn keep<'a>(x: gpu_std::GlobalMut<'a, u32>) {
///         KEPT.with(|k| k.set(Some(x.atomic(0)))); // error: borrowed data escapes outside of function
///     }
/// }
/// ```
///
/// An element of shared memory lives as long as the borrow of its slice:
///
/// ```compile_fail,E0515
/// gpu_std::shared_layout! { pub struct Lock { pub word: [u32; 1] } }
/// fn lock_word() -> gpu_std::atomic::AtomicRef<'static, u32, gpu_std::Block, gpu_std::atomic::SharedSpace> {
///     let s = Lock::view().word;
///     s.atomic(0) // error: cannot return value referencing local variable `s`
/// }
/// ```
/// ```
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// // Within the launch (and the slice's scope), an element for atomics is an ordinary value.
/// gpu_std::shared_layout! { pub struct Lock { pub word: [u32; 1] } }
/// gpu_std::kernel! {
///     pub fn count<'a>(x: gpu_std::GlobalMut<'a, u32>) {
///         let counter = x.atomic(0);
///         let block_counter = counter.scope::<gpu_std::Block>();
///         counter.fetch_add(1);
///         let _ = block_counter;
///         let word = Lock::view().word;
///         let lock = word.atomic(0);
///         while lock.compare_and_swap(0, 1) != 0 {}
///         lock.swap(0);
///     }
/// }
/// ```
#[derive(Debug)]
pub struct AtomicRef<'a, T, S, Sp> {
    ptr: *mut T,
    _m: PhantomData<(&'a (), S, Sp)>,
}
impl<T, S, Sp> Clone for AtomicRef<'_, T, S, Sp> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, S, Sp> Copy for AtomicRef<'_, T, S, Sp> {}

impl<'a, T: Atomic, S: Scope, Sp: Space> AtomicRef<'a, T, S, Sp> {
    /// # Safety
    /// `ptr` must point to a live, aligned `T` in space `Sp` for `'a`.
    #[inline(always)]
    pub(crate) unsafe fn new(ptr: *mut T) -> Self {
        AtomicRef { ptr, _m: PhantomData }
    }
    /// The same element at another scope.
    #[inline(always)]
    pub fn scope<S2: Scope>(self) -> AtomicRef<'a, T, S2, Sp> {
        AtomicRef { ptr: self.ptr, _m: PhantomData }
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn op(self, op: AtomOp, a: T, b: T) -> T {
        // SAFETY: `new`'s contract: the pointer is valid for the view's lifetime and in space `Sp`.
        unsafe { T::atom(op, Sp::KIND, S::KIND, self.ptr, a, b, site()) }
    }
    /// `atomicAdd` when the old value is not needed: a reduction (`red`), which the hardware performs
    /// without sending the old value back, so the thread need not wait for it. Integers wrap; floats
    /// round as `fetch_add_float`. PTX: `red.relaxed.gpu.global.add.u32`, `red.relaxed.cta.shared.add.u32`,
    /// `red.relaxed.gpu.global.add.s32`, `red.relaxed.gpu.global.add.u64`, `red.relaxed.gpu.global.add.f32`,
    /// `red.relaxed.gpu.global.add.f64`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn add(self, v: T) {
        // SAFETY: as in `op`.
        unsafe { T::red_add(Sp::KIND, S::KIND, self.ptr, v, site()) }
    }
    /// `atomicExch`: stores `v`, returns the old value. PTX: `atom.relaxed.gpu.global.exch.b32`,
    /// `atom.relaxed.gpu.global.exch.b64`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn swap(self, v: T) -> T {
        self.op(AtomOp::Exch, v, v)
    }
    /// `atomicCAS`: if the value equals `current`, replaces it with `new`; returns the old value either
    /// way. PTX: `atom.relaxed.gpu.global.cas.b32`, `atom.relaxed.gpu.global.cas.b64`,
    /// `atom.relaxed.cta.shared.cas.b32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn compare_and_swap(self, current: T, new: T) -> T {
        self.op(AtomOp::Cas, current, new)
    }
    /// A load that *acquires*: later accesses of this thread are ordered after it, and it observes
    /// what the releasing writer published. PTX: `ld.acquire.gpu.global.u32`, `ld.acquire.sys.global.u32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn load_acquire(self) -> T {
        // SAFETY: as in `op`.
        unsafe { T::load_acquire(Sp::KIND, S::KIND, self.ptr, site()) }
    }
    /// A store that *releases*: earlier accesses of this thread are visible to a thread that acquires
    /// this value. PTX: `st.release.gpu.global.u32`, `st.release.sys.global.u32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn store_release(self, v: T) {
        // SAFETY: as in `op`.
        unsafe { T::store_release(Sp::KIND, S::KIND, self.ptr, v, site()) }
    }
}

impl<T: AtomicInt, S: Scope, Sp: Space> AtomicRef<'_, T, S, Sp> {
    /// `atomicAdd`. PTX: `atom.relaxed.gpu.global.add.u32`, `atom.relaxed.gpu.global.add.s32`,
    /// `atom.relaxed.gpu.global.add.u64`, `atom.relaxed.cta.shared.add.u32`, `atom.relaxed.sys.global.add.u32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_add(self, v: T) -> T {
        self.op(AtomOp::Add, v, v)
    }
    /// `atomicSub`: an add of the two's-complement negation, as CUDA does. PTX: `atom.relaxed.gpu.global.add.u32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_sub(self, v: T) -> T {
        let n = v.negate();
        self.op(AtomOp::Add, n, n)
    }
    /// `atomicMin`. PTX: `atom.relaxed.gpu.global.min.u32`, `atom.relaxed.gpu.global.min.s32`,
    /// `atom.relaxed.gpu.global.min.u64`, `atom.relaxed.gpu.global.min.s64`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_min(self, v: T) -> T {
        self.op(AtomOp::Min, v, v)
    }
    /// `atomicMax`. PTX: `atom.relaxed.gpu.global.max.u32`, `atom.relaxed.gpu.global.max.s32`,
    /// `atom.relaxed.gpu.global.max.u64`, `atom.relaxed.gpu.global.max.s64`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_max(self, v: T) -> T {
        self.op(AtomOp::Max, v, v)
    }
    /// `atomicAnd`. PTX: `atom.relaxed.gpu.global.and.b32`, `atom.relaxed.gpu.global.and.b64`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_and(self, v: T) -> T {
        self.op(AtomOp::And, v, v)
    }
    /// `atomicOr`. PTX: `atom.relaxed.gpu.global.or.b32`, `atom.relaxed.gpu.global.or.b64`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_or(self, v: T) -> T {
        self.op(AtomOp::Or, v, v)
    }
    /// `atomicXor`. PTX: `atom.relaxed.gpu.global.xor.b32`, `atom.relaxed.gpu.global.xor.b64`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_xor(self, v: T) -> T {
        self.op(AtomOp::Xor, v, v)
    }
}

impl<S: Scope, Sp: Space> AtomicRef<'_, u32, S, Sp> {
    /// `atomicInc(p, limit)`: `old >= limit ? 0 : old + 1`. PTX: `atom.relaxed.gpu.global.inc.u32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_inc(self, limit: u32) -> u32 {
        self.op(AtomOp::Inc, limit, limit)
    }
    /// `atomicDec(p, limit)`: `(old == 0 || old > limit) ? limit : old - 1`.
    /// PTX: `atom.relaxed.gpu.global.dec.u32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_dec(self, limit: u32) -> u32 {
        self.op(AtomOp::Dec, limit, limit)
    }
}

impl<T: AtomicFloat, S: Scope, Sp: Space> AtomicRef<'_, T, S, Sp> {
    /// `atomicAdd` on `f32`/`f64` (native since sm_60 for f64). PTX: `atom.relaxed.gpu.global.add.f32`,
    /// `atom.relaxed.gpu.global.add.f64`, `atom.relaxed.cta.shared.add.f32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_add_float(self, v: T) -> T {
        self.op(AtomOp::Add, v, v)
    }
}

impl<S: Scope, Sp: Space> AtomicRef<'_, f64, S, Sp> {
    /// The classic `atomicAddDouble`: an f64 add built from a compare-and-swap loop on the 64-bit
    /// pattern, as GPUs before sm_60 needed. Returns the old value. Each failed CAS means another thread
    /// updated the value in between; the loop retries with the value it observed.
    /// PTX: `atom.relaxed.gpu.global.cas.b64`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_add_cas_loop(self, v: f64) -> f64 {
        let bits = AtomicRef::<u64, S, Sp> { ptr: self.ptr as *mut u64, _m: PhantomData };
        // A volatile read of the current pattern (the seed reads it plainly, which races with the CAS
        // of other threads); a stale value only costs one more iteration.
        // SAFETY: as in `op`.
        let mut old: u64 =
            unsafe { crate::backend::load(self.ptr as *const u64, crate::memory::Access::Volatile, Sp::KIND, site()) };
        loop {
            let assumed = old;
            let new = (f64::from_bits(assumed) + v).to_bits();
            old = bits.compare_and_swap(assumed, new);
            if old == assumed {
                return f64::from_bits(old);
            }
        }
    }
}
