//! The host agent: a CPU thread that runs next to a kernel's GPU threads and talks with them through
//! mapped host memory (flags, payloads, `__threadfence_system()`).
//!
//! A launch with a host agent ([`launch_with_host`](crate::emu::launch_with_host)) runs a closure as one
//! more coroutine under the launch's seeded scheduler, so its interleaving with the GPU threads varies
//! with the seed and replays with it. The agent touches memory only through the functions of this
//! module ([`load`], [`store`], [`fetch_add`], [`fence`], [`pause`]), the counterparts of Rust's
//! atomics on the host. Each is a scheduling point, and each counts for the detectors as a
//! *system-scope* operation of a thread outside every block, shown as `the host thread`:
//!
//! - a `Relaxed` load or store is a volatile access (relaxed, `.sys`); an `Acquire` load is
//!   `ld.acquire.sys`; a `Release` store is `st.release.sys`; [`fetch_add`] is `atom.sys` with fences
//!   for its ordering; [`fence`] is `fence.sc.sys`;
//! - the agent has its own happens-before clock. An edge between it and a GPU thread forms only when
//!   every operation of the pattern (the release fence or release store, the flag store, the flag
//!   load, the acquire fence or acquire load) has system scope: `__threadfence()` or a `.gpu` release
//!   publishes to the device only, and the race report says so, with the scope used and the scope
//!   needed;
//! - a strong access of the agent and one of a GPU thread are morally strong (never a race) only when
//!   both are system-scoped;
//! - its polls (loads, read-modify-writes that change nothing, [`pause`]) count for the livelock
//!   detector, and reports of stuck launches name it when it spins.
//!
//! Called from anywhere else (outside a launch, or on a real host thread next to a GPU), the same
//! functions are plain atomic operations, so one host routine serves both.
//!
//! Limits: a launch with a host agent runs in one wave (all blocks resident, at most
//! [`Options::max_resident_blocks`](crate::emu::Options::max_resident_blocks)) and is not cooperative; the
//! agent may not launch kernels.

use crate::atomic::{ScopeKind, SpaceKind};
use crate::emu::engine::context::host_state;
use crate::emu::engine::context::{suspend, unwinding};
use crate::emu::engine::polled::{Polled, bits_of};
use crate::emu::model::Kind;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

/// Whether the caller is the host agent of an emulated launch (then this module's functions are
/// modelled; otherwise they are plain atomics).
pub fn in_host_agent() -> bool {
    crate::emu::engine::context::in_host_agent()
}

mod sealed {
    pub trait Sealed {}
}

/// A word the host and the GPU may share through mapped memory: `u32`, `i32`, `u64`, `i64` (types
/// with host atomics of the same size and alignment).
pub trait HostWord: Copy + PartialEq + sealed::Sealed + 'static {
    /// `self + other`, wrapping.
    fn wrapping_add(self, other: Self) -> Self;
    /// An atomic load of `*p`.
    ///
    /// # Safety
    /// `p` is valid and aligned, and every concurrent access of `*p` is atomic.
    unsafe fn atomic_load(p: *const Self, order: Ordering) -> Self;
    /// An atomic store to `*p`.
    ///
    /// # Safety
    /// As [`HostWord::atomic_load`].
    unsafe fn atomic_store(p: *mut Self, v: Self, order: Ordering);
    /// An atomic add to `*p`, returning the old value.
    ///
    /// # Safety
    /// As [`HostWord::atomic_load`].
    unsafe fn atomic_fetch_add(p: *mut Self, v: Self, order: Ordering) -> Self;
}

macro_rules! host_word {
    ($($t:ty => $a:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl HostWord for $t {
            fn wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
            unsafe fn atomic_load(p: *const Self, order: Ordering) -> Self {
                // SAFETY: the caller's contract; the atomic type has the size and alignment of the word.
                unsafe { <$a>::from_ptr(p as *mut $t) }.load(order)
            }
            unsafe fn atomic_store(p: *mut Self, v: Self, order: Ordering) {
                // SAFETY: as above.
                unsafe { <$a>::from_ptr(p) }.store(v, order)
            }
            unsafe fn atomic_fetch_add(p: *mut Self, v: Self, order: Ordering) -> Self {
                // SAFETY: as above.
                unsafe { <$a>::from_ptr(p) }.fetch_add(v, order)
            }
        }
    )*};
}
host_word!(u32 => AtomicU32, i32 => AtomicI32, u64 => AtomicU64, i64 => AtomicI64);

fn modelled() -> bool {
    in_host_agent() && !unwinding()
}

fn load_order(order: Ordering) -> Ordering {
    // A load cannot be a release; std panics on one. Keep that contract everywhere.
    assert!(!matches!(order, Ordering::Release | Ordering::AcqRel), "there is no release load: use Acquire or Relaxed");
    order
}

fn store_order(order: Ordering) -> Ordering {
    assert!(
        !matches!(order, Ordering::Acquire | Ordering::AcqRel),
        "there is no acquire store: use Release or Relaxed"
    );
    order
}

/// Loads `*p` (`AtomicU32::load` and the like). In a host agent: a volatile read (`Relaxed`) or an
/// acquire load at system scope (`Acquire`, `SeqCst`), and a poll.
///
/// # Safety
/// `p` is valid for reads and aligned for the whole call, and every concurrent access of `*p` (by
/// the host or a GPU) is atomic.
#[track_caller]
pub unsafe fn load<T: HostWord>(p: *const T, order: Ordering) -> T {
    let order = load_order(order);
    if !modelled() {
        // SAFETY: the caller's contract.
        return unsafe { T::atomic_load(p, order) };
    }
    let site = crate::site();
    suspend();
    // SAFETY: the caller's contract; only this OS thread runs the launch.
    let v = unsafe { T::atomic_load(p, Ordering::Relaxed) };
    let kind = if order == Ordering::Relaxed { Kind::VolatileRead } else { Kind::AcquireLoad(ScopeKind::System) };
    host_state(|st| {
        st.host_access(p as usize, size_of::<T>(), kind, site);
        st.host_poll(site, Some(Polled::of(p, SpaceKind::Global, v)));
    });
    v
}

/// Stores `v` to `*p` (`AtomicU32::store` and the like). In a host agent: a volatile write
/// (`Relaxed`) or a release store at system scope (`Release`, `SeqCst`).
///
/// # Safety
/// As [`load`], for writes.
#[track_caller]
pub unsafe fn store<T: HostWord>(p: *mut T, v: T, order: Ordering) {
    let order = store_order(order);
    if !modelled() {
        // SAFETY: the caller's contract.
        return unsafe { T::atomic_store(p, v, order) };
    }
    let site = crate::site();
    suspend();
    let kind = if order == Ordering::Relaxed { Kind::VolatileWrite } else { Kind::ReleaseStore(ScopeKind::System) };
    host_state(|st| {
        st.host_access(p as usize, size_of::<T>(), kind, site);
        st.host_wrote(site, (p as usize, size_of::<T>(), bits_of(v)));
    });
    // SAFETY: the caller's contract.
    unsafe { T::atomic_store(p, v, Ordering::Relaxed) }
}

/// Adds `v` to `*p` and returns the old value (`AtomicU32::fetch_add` and the like). In a host agent:
/// `atom.add.sys`, after a system fence for `Release`/`AcqRel`/`SeqCst` and before one for
/// `Acquire`/`AcqRel`/`SeqCst`. (On a real GPU this is atomic with the GPU's `.sys` atomics only where
/// the device reports host-native atomics.)
///
/// # Safety
/// As [`load`], for reads and writes.
#[track_caller]
pub unsafe fn fetch_add<T: HostWord>(p: *mut T, v: T, order: Ordering) -> T {
    if !modelled() {
        // SAFETY: the caller's contract.
        return unsafe { T::atomic_fetch_add(p, v, order) };
    }
    let site = crate::site();
    let releases = matches!(order, Ordering::Release | Ordering::AcqRel | Ordering::SeqCst);
    let acquires = matches!(order, Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst);
    if releases {
        suspend();
        host_state(|st| st.host_fence(site));
    }
    suspend();
    // SAFETY: the caller's contract. One atomic read-modify-write: no emulated thread runs until the
    // agent suspends, and a real host thread touching the word sees it as indivisible too.
    let old = unsafe { T::atomic_fetch_add(p, v, Ordering::Relaxed) };
    let new = old.wrapping_add(v);
    host_state(|st| {
        st.host_access(p as usize, size_of::<T>(), Kind::Atomic(ScopeKind::System), site);
        if bits_of(new) == bits_of(old) {
            st.host_poll(site, Some(Polled::of(p, SpaceKind::Global, old)));
        } else {
            st.host_wrote(site, (p as usize, size_of::<T>(), bits_of(new)));
        }
    });
    if acquires {
        suspend();
        host_state(|st| st.host_fence(site));
    }
    old
}

/// A memory fence (`std::sync::atomic::fence`). In a host agent: `fence.sc.sys` (acquires what its
/// relaxed loads observed, releases what it did before).
#[track_caller]
pub fn fence(order: Ordering) {
    if !modelled() {
        std::sync::atomic::fence(order);
        return;
    }
    let site = crate::site();
    suspend();
    host_state(|st| st.host_fence(site));
}

/// A pause in a spin loop (`std::hint::spin_loop`). In a host agent: a poll that reads no memory,
/// and a scheduling point.
#[track_caller]
pub fn pause() {
    if !modelled() {
        std::hint::spin_loop();
        return;
    }
    let site = crate::site();
    suspend();
    host_state(|st| st.host_poll(site, None));
}
