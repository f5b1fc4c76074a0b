//! How the emulator's threads touch memory: every load and store of a scalar of 1, 2, 4 or 8 bytes at
//! an address aligned to its size is one relaxed atomic access of that width, and every
//! read-modify-write a compare-and-swap loop on its bits.
//!
//! One OS thread runs all emulated threads, so among themselves plain accesses would do. But memory a
//! launch is given may be touched by another OS thread at the same time: mapped host memory, whose
//! host view (`gpu_host::HostView`) any host thread may use with atomics while an emulated launch runs.
//! Non-atomic accesses there would be data races in Rust's sense, and emulated atomics made of a load
//! and a store would lose that thread's updates. As atomics of the element's width, every access is
//! the same size as the host view's atomics on the same words, so nothing the two OS threads do is a
//! data race, and an emulated atomic is atomic with respect to the other thread's too. On x86-64 and
//! aarch64 a relaxed atomic load or store is the same instruction as a plain one.
//!
//! A scalar of another size, or at an address its size does not divide (no view makes one), is read
//! and written with volatile accesses.

use std::mem::{MaybeUninit, size_of, transmute_copy};
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Whether `p` is a scalar the atomics of its width can reach.
#[inline(always)]
fn atomic_width<T>(p: *const T) -> Option<usize> {
    let n = size_of::<T>();
    (matches!(n, 1 | 2 | 4 | 8) && (p as usize).is_multiple_of(n)).then_some(n)
}

/// Loads `*p`.
///
/// # Safety
/// `p` is valid for reads of a `T`, and every bit pattern memory may hold there is a valid `T`.
#[inline(always)]
pub(crate) unsafe fn read<T: Copy>(p: *const T) -> T {
    // SAFETY (every arm): `p` is valid and, for the atomics, aligned to their width, which is `T`'s
    // size; the bits read are a `T` (the caller's contract).
    unsafe {
        match atomic_width(p) {
            Some(1) => transmute_copy(&AtomicU8::from_ptr(p as *mut u8).load(Relaxed)),
            Some(2) => transmute_copy(&AtomicU16::from_ptr(p as *mut u16).load(Relaxed)),
            Some(4) => transmute_copy(&AtomicU32::from_ptr(p as *mut u32).load(Relaxed)),
            Some(8) => transmute_copy(&AtomicU64::from_ptr(p as *mut u64).load(Relaxed)),
            _ => p.read_volatile(),
        }
    }
}

/// Stores `v` to `*p`.
///
/// # Safety
/// `p` is valid for writes of a `T`.
#[inline(always)]
pub(crate) unsafe fn write<T: Copy>(p: *mut T, v: T) {
    // SAFETY (every arm): as in `read`; `T` has the atomic's size.
    unsafe {
        match atomic_width(p) {
            Some(1) => AtomicU8::from_ptr(p as *mut u8).store(transmute_copy(&v), Relaxed),
            Some(2) => AtomicU16::from_ptr(p as *mut u16).store(transmute_copy(&v), Relaxed),
            Some(4) => AtomicU32::from_ptr(p as *mut u32).store(transmute_copy(&v), Relaxed),
            Some(8) => AtomicU64::from_ptr(p as *mut u64).store(transmute_copy(&v), Relaxed),
            _ => p.write_volatile(v),
        }
    }
}

/// Replaces `*p` with `f(old)` as one atomic read-modify-write (a compare-and-swap loop on the bits),
/// and returns `(old, new)`.
///
/// # Safety
/// As [`read`] and [`write`].
#[inline]
pub(crate) unsafe fn read_modify_write<T: Copy>(p: *mut T, f: impl Fn(T) -> T) -> (T, T) {
    macro_rules! rmw {
        ($atomic:ty, $bits:ty) => {{
            // SAFETY: as in `read`; `T` has the size of `$bits`.
            let a = unsafe { <$atomic>::from_ptr(p as *mut $bits) };
            let mut cur = a.load(Relaxed);
            loop {
                // SAFETY: `cur` holds the bits of a `T` that memory held.
                let old: T = unsafe { transmute_copy(&cur) };
                let new = f(old);
                // SAFETY: `new` is a `T` of `$bits`'s size.
                let bits: $bits = unsafe { transmute_copy(&new) };
                match a.compare_exchange_weak(cur, bits, Relaxed, Relaxed) {
                    Ok(_) => break (old, new),
                    Err(now) => cur = now,
                }
            }
        }};
    }
    match atomic_width(p) {
        Some(1) => rmw!(AtomicU8, u8),
        Some(2) => rmw!(AtomicU16, u16),
        Some(4) => rmw!(AtomicU32, u32),
        Some(8) => rmw!(AtomicU64, u64),
        _ => {
            // SAFETY: the caller's contract.
            let old = unsafe { p.read_volatile() };
            let new = f(old);
            // SAFETY: as above.
            unsafe { p.write_volatile(new) };
            (old, new)
        }
    }
}

/// Loads the 16-byte vector `V` (`[T; 16 / size_of::<T>()]`) at `p`, element by element (see the
/// module docs: each element is an atomic access of its width).
///
/// # Safety
/// `p` is valid for reads of 16 bytes, every element's bits are a valid `T`, and `V` is an array of
/// `T` of 16 bytes.
#[inline]
pub(crate) unsafe fn read_vector<T: Copy, V: Copy>(p: *const T) -> V {
    assert_eq!(size_of::<V>(), 16, "a vector access moves 16 bytes");
    let mut out = MaybeUninit::<V>::uninit();
    for k in 0..16 / size_of::<T>() {
        // SAFETY: element `k` of the 16 bytes at `p`, and of `out` (an array of `T`).
        unsafe { (out.as_mut_ptr() as *mut T).add(k).write(read(p.add(k))) };
    }
    // SAFETY: every element was written.
    unsafe { out.assume_init() }
}

/// Stores the 16-byte vector `v` at `p`, element by element.
///
/// # Safety
/// `p` is valid for writes of 16 bytes, and `V` is an array of `T` of 16 bytes.
#[inline]
pub(crate) unsafe fn write_vector<T: Copy, V: Copy>(p: *mut T, v: V) {
    assert_eq!(size_of::<V>(), 16, "a vector access moves 16 bytes");
    for k in 0..16 / size_of::<T>() {
        // SAFETY: element `k` of `v` (an array of `T`) and of the 16 bytes at `p`.
        unsafe { write(p.add(k), (&v as *const V as *const T).add(k).read()) };
    }
}
