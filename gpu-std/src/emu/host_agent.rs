//! The host agent: a CPU thread that runs next to a kernel's GPU threads and talks with them through
//! mapped host memory (flags, payloads, `__threadfence_system()`).
//!
//! A launch with a host agent ([`launch_with_host`](super::launch_with_host)) runs a closure as one
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
//! [`Options::max_resident_blocks`](super::Options::max_resident_blocks)) and is not cooperative; the
//! agent may not launch kernels.

use super::clock::{BlockClock, Pos, ThreadClock, hint_for};
use super::errors::{EmuError, Livelock, WaitGroup};
use super::findings::Place;
use super::poll::{Polled, bits_of, fmt_value};
use super::race::{Cur, Epoch, Kind, explain};
use super::report::ThreadId;
use super::sched::{CTX, Emu, IN_KERNEL, INFO, Info, State, YIELDER, suspend, unwinding};
use super::stack::{self, Co, Guard};
use super::{buffer, stack::Overflow};
use crate::Site;
use crate::atomic::{ScopeKind, SpaceKind};
use corosensei::{CoroutineResult, Yielder};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

/// The host agent's thread number in the detector's records (no GPU thread has it: launches with a
/// host agent have fewer than 2^32 - 1 threads).
pub(crate) const HOST_GID: u32 = u32::MAX;
/// The host agent's block in the detector's records: none of the grid's.
pub(crate) const HOST_BLOCK: u32 = u32::MAX;

thread_local! {
    /// Set while the host agent's coroutine runs on this OS thread.
    static AGENT: Cell<bool> = const { Cell::new(false) };
}

/// Whether the caller is the host agent of an emulated launch (then this module's functions are
/// modelled; otherwise they are plain atomics).
pub fn in_host_agent() -> bool {
    AGENT.with(|a| a.get())
}

/// The thread index the running host agent has for GPU primitives: none (they refuse to run).
pub(crate) const NOT_A_GPU_THREAD: usize = usize::MAX;

/// Runs `f` on the launch state, for the host agent's operations (see `sched::with_state`).
fn host_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let emu = CTX.with(|c| c.get());
    assert!(!emu.is_null(), "host agent operation outside a launch");
    stack::check();
    // SAFETY: as in `sched::with_state`: the launch's state, alive for the whole launch, touched by
    // this OS thread only.
    let emu = unsafe { &*emu };
    f(&mut emu.st.borrow_mut())
}

/// The host agent's state in a launch.
pub(crate) struct HostAgent {
    clock: ThreadClock,
    /// The agent is in no block: nothing is ever acquired through a block barrier.
    no_block: BlockClock,
    /// It has not returned yet.
    pub live: bool,
    at: Option<Site>,
    /// Consecutive polls with nothing else in between.
    spins: u64,
    polled: Option<(Site, Polled)>,
    yielder: *const Yielder<(), ()>,
    /// Its operations so far (its own clock of steps).
    pub ops: u64,
}

impl HostAgent {
    pub(crate) fn new() -> Self {
        HostAgent {
            clock: ThreadClock::default(),
            no_block: BlockClock::default(),
            live: true,
            at: None,
            spins: 0,
            polled: None,
            yielder: std::ptr::null(),
            ops: 0,
        }
    }
    fn pos() -> Pos {
        Pos { gid: HOST_GID, block: HOST_BLOCK, bepoch: 0 }
    }
}

/// The host agent's coroutine, owned by the launch.
pub(crate) struct HostRun {
    co: Option<Co>,
    guard: Guard,
}

/// What the stack guard reports for the agent (block and thread indices of no GPU thread).
const WHO: [u32; 6] = [u32::MAX, u32::MAX, u32::MAX, 0, 0, 0];

impl HostRun {
    /// The agent's coroutine, running `agent` on a stack of `stack_bytes`.
    ///
    /// # Safety
    /// `agent` must stay valid until the coroutine is completed or dropped (the launch does both
    /// before it returns).
    pub(crate) unsafe fn new(agent: *mut (dyn FnMut() + '_), stack_bytes: usize) -> Result<HostRun, EmuError> {
        let stack = stack::allocate(stack_bytes).map_err(|e| {
            EmuError::InvalidLaunch(format!("cannot allocate a {stack_bytes}-byte stack for the host agent: {e}"))
        })?;
        let guard = Guard::new(stack::limit_of(&stack));
        // SAFETY: lifetime erased for the coroutine; the caller keeps `agent` valid while it exists.
        let agent: *mut (dyn FnMut() + 'static) = unsafe { std::mem::transmute(agent) };
        // SAFETY: the closure touches `agent` only, which outlives the coroutine (caller's contract).
        let co = unsafe {
            corosensei::Coroutine::with_stack_unchecked(stack, move |y: &Yielder<(), ()>, ()| {
                YIELDER.with(|c| c.set(y as *const _));
                host_state(|st| {
                    if let Some(h) = st.host.as_mut() {
                        h.yielder = y as *const _;
                    }
                });
                (*agent)();
            })
        };
        Ok(HostRun { co: Some(co), guard })
    }

    /// Runs the agent until its next scheduling point. `Err` when it panicked or overflowed its
    /// stack (or a detector stopped the launch meanwhile).
    pub(crate) fn resume(&mut self, emu: &Emu) -> Result<(), EmuError> {
        let Some(co) = self.co.as_mut() else { return Ok(()) };
        {
            let st = emu.st.borrow();
            let y = st.host.as_ref().map_or(std::ptr::null(), |h| h.yielder);
            YIELDER.with(|c| c.set(y));
        }
        // GPU primitives called by the agent find no GPU thread (and say so).
        INFO.with(|i| i.set(Info { index: NOT_A_GPU_THREAD, ..Info::default() }));
        stack::running(Some((self.guard, WHO)));
        AGENT.with(|a| a.set(true));
        IN_KERNEL.with(|k| k.set(true));
        let r = catch_unwind(AssertUnwindSafe(|| co.resume(())));
        IN_KERNEL.with(|k| k.set(false));
        AGENT.with(|a| a.set(false));
        stack::running(None);
        let st = &mut *emu.st.borrow_mut();
        match r {
            Ok(CoroutineResult::Yield(())) => Ok(()),
            Ok(CoroutineResult::Return(())) => {
                if let Some(h) = st.host.as_mut() {
                    h.live = false;
                }
                // The agent's return is progress, as a thread's exit.
                st.progress();
                Ok(())
            }
            Err(payload) if payload.is::<Overflow>() => Err(EmuError::StackOverflow {
                kernel: st.kernel.clone(),
                thread: ThreadId::HOST,
                stack_bytes: st.opts.stack_bytes,
            }),
            Err(payload) => {
                if let Some(e) = st.error.take() {
                    return Err(e);
                }
                let message = super::sched::panic_message(payload.as_ref());
                Err(EmuError::KernelPanic { kernel: st.kernel.clone(), thread: ThreadId::HOST, message })
            }
        }
    }

    /// Unwinds the agent if a failed launch left it suspended, so that its destructors run (every
    /// operation completes at once meanwhile, see `sched::unwinding`).
    pub(crate) fn teardown(&mut self, emu: &Emu) {
        let Some(co) = self.co.take() else { return };
        if co.done() {
            return;
        }
        let y = emu.st.borrow().host.as_ref().map_or(std::ptr::null(), |h| h.yielder);
        YIELDER.with(|c| c.set(y));
        INFO.with(|i| i.set(Info { index: NOT_A_GPU_THREAD, ..Info::default() }));
        stack::running(Some((self.guard, WHO)));
        AGENT.with(|a| a.set(true));
        super::sched::TEARDOWN.with(|d| d.set(true));
        drop(co);
        super::sched::TEARDOWN.with(|d| d.set(false));
        AGENT.with(|a| a.set(false));
        stack::running(None);
        YIELDER.with(|c| c.set(std::ptr::null()));
    }
}

/// `Err` unless a launch with a host agent can run: not cooperative (grid barriers are not modelled
/// with a host agent), and fewer than 2^32 - 1 threads (the agent's number is the last).
pub(crate) fn validate(name: &str, cfg: &super::LaunchConfig, _opts: &super::Options) -> Result<(), EmuError> {
    if cfg.cooperative {
        return Err(EmuError::InvalidLaunch(format!(
            "kernel `{name}`: a cooperative launch cannot have a host agent (grid barriers are not modelled with one)"
        )));
    }
    if cfg.grid.volume() * cfg.block.volume() >= HOST_GID as u64 {
        return Err(EmuError::InvalidLaunch(format!(
            "kernel `{name}`: too many threads for a launch with a host agent"
        )));
    }
    Ok(())
}

// ---- the scheduler's view -------------------------------------------------------------------------

impl State {
    /// Whether the launch has a host agent that has not returned.
    pub(crate) fn host_ready(&self) -> bool {
        self.host.as_ref().is_some_and(|h| h.live)
    }

    /// Whether the host agent, if it still runs, is in a run of polls (a livelock needs it to be).
    pub(crate) fn host_spinning_or_done(&self) -> bool {
        self.host.as_ref().is_none_or(|h| !h.live || h.spins > 0)
    }

    /// What the agent does, for reports.
    fn host_doing(&self) -> String {
        let Some(h) = &self.host else { return String::new() };
        if h.spins > 0 {
            let Some((site, m)) = h.polled else {
                let at = h.at.map(Self::site_str).unwrap_or_default();
                return format!("poll at {at} without reading memory (host agent pause)");
            };
            let (name, index) = buffer::describe(m.addr, m.size);
            let mut what = format!(
                "wait at {} for `{name}`[{index}] to change from {}",
                Self::site_str(site),
                fmt_value(m.bits, m.ty)
            );
            if let Some(w) = self.writers.get(&m.addr).filter(|w| w.bits == m.bits) {
                what += &format!(" (set by {} at {})", self.tid(w.thread), Self::site_str(w.site));
            }
            return what;
        }
        match h.at {
            Some(site) => format!("run (last seen at {})", Self::site_str(site)),
            None => "have not started".into(),
        }
    }

    /// The livelock report, with the host agent among the spinning (or the other) threads while it
    /// runs.
    pub(crate) fn livelock_report_with_host(&self) -> Livelock {
        let mut r = self.livelock_report();
        if self.host_ready() {
            let g = WaitGroup { what: self.host_doing(), threads: vec![ThreadId::HOST] };
            let spinning = self.host.as_ref().is_some_and(|h| h.spins > 0);
            if spinning { r.spinning.push(g) } else { r.blocked.push(g) }
        }
        r
    }

    /// Groups of unfinished threads for the time-limit report, with the host agent if it runs.
    pub(crate) fn with_host_group(&self, mut groups: Vec<WaitGroup>) -> Vec<WaitGroup> {
        if self.host_ready() {
            groups.push(WaitGroup { what: self.host_doing(), threads: vec![ThreadId::HOST] });
        }
        groups
    }

    fn host_mut(&mut self) -> &mut HostAgent {
        self.host.as_mut().expect("the host agent runs in a launch with a host agent")
    }

    fn host_poll(&mut self, site: Site, mem: Option<Polled>) {
        self.polls += 1;
        let h = self.host_mut();
        h.ops += 1;
        h.at = Some(site);
        h.spins += 1;
        if let Some(m) = mem {
            h.polled = Some((site, m));
        }
    }

    fn host_busy(&mut self, site: Site) {
        let h = self.host_mut();
        h.ops += 1;
        h.at = Some(site);
        h.spins = 0;
        h.polled = None;
    }

    /// The agent wrote `bits` (`size` bytes) to `addr`: progress, and GPU threads parked on that
    /// location may run again.
    fn host_wrote(&mut self, site: Site, (addr, size, bits): (usize, usize, u64)) {
        self.progress();
        self.host_busy(site);
        // The last strong writer of a flag is remembered for GPU threads only; the agent's write
        // replaces theirs.
        self.writers.remove(&addr);
        self.changed(addr, size, bits);
    }

    fn host_fence(&mut self, site: Site) {
        self.host_busy(site);
        if self.opts.detect_races {
            let h = self.host.as_mut().expect("host agent");
            h.clock.fence(HostAgent::pos(), ScopeKind::System, &h.no_block);
        }
    }

    /// Records an access of the agent for the race detector and the release/acquire model (global
    /// memory only: the agent has no shared memory).
    fn host_access(&mut self, addr: usize, size: usize, kind: Kind, site: Site) {
        if !self.opts.detect_races {
            return;
        }
        let block_threads = self.cfg.block.volume() as u32;
        let place = Place { space: SpaceKind::Global, addr, size, shared_base: 0 };
        let h = self.host.as_mut().expect("host agent");
        let x = Epoch::new(site, HOST_GID, h.clock.rel, 0, 0, kind);
        let slots = self.global_shadow.slots(addr, size);
        if kind.observes() {
            for sync in slots.iter().filter_map(|s| s.sync()) {
                h.clock.observe(sync, HOST_BLOCK, kind);
            }
        }
        let mut report = None;
        {
            let cur = Cur { x, kind, block: HOST_BLOCK, block_threads, knows: h.clock.knows(&h.no_block) };
            // Every record is checked and updated; a race found in this run stands before a predicted one.
            let found = slots.iter_mut().fold(None, |found, slot| match (found, slot.access(&cur)) {
                (Some((_, true)), f @ Some((_, false))) | (None, f) => f,
                (found, _) => found,
            });
            if let Some((e, predicted)) = found
                && self.findings.count_race(&place, HOST_BLOCK)
            {
                let why = (!predicted).then(|| {
                    let cut = hint_for(&h.clock, &h.no_block, e.gid, e.rel, cur.block_of(&e), e.bar);
                    explain(&e, &cur, cut)
                });
                report = Some((e, why, predicted));
            }
        }
        if kind.writes() {
            let (head, rest) = slots.split_first_mut().expect("an access touches a byte");
            h.clock.publish(HostAgent::pos(), kind, &h.no_block, head.sync_mut());
            head.tidy();
            for slot in rest {
                if matches!(kind, Kind::ReleaseStore(_)) {
                    *slot.sync_mut() = head.sync().cloned();
                } else {
                    h.clock.publish(HostAgent::pos(), kind, &h.no_block, slot.sync_mut());
                }
                slot.tidy();
            }
        }
        if let Some((e, why, predicted)) = report {
            // The agent takes no locks: a predicted race comes from a GPU thread's handoff.
            let why = why.unwrap_or_else(|| self.predicted_why(None));
            self.push_race(&place, (&e, &x), why, predicted);
        }
    }
}

// ---- the agent's operations -----------------------------------------------------------------------

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
    // SAFETY: the caller's contract; the read-modify-write is indivisible (no other emulated thread
    // runs until the agent suspends).
    let old = unsafe { T::atomic_load(p, Ordering::Relaxed) };
    let new = old.wrapping_add(v);
    host_state(|st| {
        st.host_access(p as usize, size_of::<T>(), Kind::Atomic(ScopeKind::System), site);
        if bits_of(new) == bits_of(old) {
            st.host_poll(site, Some(Polled::of(p, SpaceKind::Global, old)));
        } else {
            st.host_wrote(site, (p as usize, size_of::<T>(), bits_of(new)));
        }
    });
    // SAFETY: as above.
    unsafe { T::atomic_store(p, new, Ordering::Relaxed) };
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
