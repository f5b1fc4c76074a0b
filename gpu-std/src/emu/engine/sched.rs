//! The scheduler: the launch state, the thread-local context through which a running GPU thread
//! reaches it, and the loop that picks, with a seeded generator, which runnable thread runs next —
//! until every thread of the wave has exited, or the launch fails (a detector's report, a panic, a
//! stack overflow, no thread able to make progress, a spin loop without progress, the time limit).

use super::barrier::Bar;
use super::collectives::{Coll, CollKind};
use super::poll::{PARK_BOUND, Polled, Writer};
use super::stack::{self, Co, Guard};
use crate::Dim3;
use crate::Site;
use crate::emu::config::{LaunchConfig, Options, SiteKind};
use crate::emu::model::Model;
use crate::emu::report::{EmuError, SyncSite, ThreadId, Warning};
use corosensei::{CoroutineResult, Yielder};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

/// SplitMix64: small, fast, seedable.
pub(crate) struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Status {
    Runnable,
    Barrier(Site),
    Warp(Site, CollKind, u32),
    Grid(Site),
    Exited,
}

pub(crate) struct EThread {
    pub block: usize,
    pub tid: Dim3,
    pub rank: u32,
    pub status: Status,
    pub result: u32,
    /// Where the thread first accessed memory since its last block barrier (a thread that exits after
    /// touching memory in the interval skipped the barrier that ends it).
    pub first_access: Option<Site>,
    /// The last source line at which the thread entered the emulator (a primitive or an access).
    pub at: Option<Site>,
    /// Consecutive polls by this thread with nothing else in between (0: it is doing other work).
    pub spins: u64,
    /// The last memory the thread polled since it last did other work: where, and what it saw.
    pub polled: Option<(Site, Polled)>,
}

pub(crate) struct EBlock {
    pub idx: Dim3,
    pub linear: u32,
    pub first: usize,
    pub n: usize,
    pub shared: Vec<u128>,
    pub live: u32,
    pub exited: u32,
    pub(super) bar: Bar,
    pub(super) warps: Vec<Vec<Coll>>,
}

pub(crate) struct State {
    pub kernel: String,
    pub cfg: LaunchConfig,
    pub opts: Options,
    pub rng: Rng,
    pub threads: Vec<EThread>,
    pub blocks: Vec<EBlock>,
    pub(super) runnable: Vec<usize>,
    pub(super) pos: Vec<usize>,
    pub(super) grid_arrived: u32,
    pub(super) grid_site: Option<Site>,
    pub error: Option<EmuError>,
    /// What the memory model knows of the launch: every access, fence and barrier is told to it.
    pub model: Model,
    /// Polls since the last write, completed barrier or exit.
    pub polls: u64,
    /// The last thread to change each address with an atomic, volatile or release write (this wave).
    pub writers: HashMap<usize, Writer>,
    /// Parked threads by the address they poll (see `poll`); entries of threads woken since are stale.
    pub(super) parked: HashMap<usize, Vec<usize>>,
    pub warnings: Vec<Warning>,
    /// The synchronisation sites executed, when `Options::record_sites` is set.
    pub sites: std::collections::BTreeMap<(&'static str, u32, u32, SiteKind), SyncSite>,
    pub steps: u64,
    pub(super) yielders: Vec<*const Yielder<(), ()>>,
    pub wave_live: u32,
    /// The emulated thread running now, for the watchdog (see `watchdog`).
    pub running: std::sync::Arc<super::watchdog::RunningThread>,
    /// The launch's host agent, if it has one (see `host_agent`).
    pub host: Option<super::host_agent::HostAgent>,
}

pub(crate) struct Emu {
    pub st: RefCell<State>,
}

/// Per-thread facts cached for fast index queries.
#[derive(Clone, Copy, Default)]
pub(crate) struct Info {
    pub tid: Dim3,
    pub bid: Dim3,
    pub bdim: Dim3,
    pub gdim: Dim3,
    pub lane: u32,
    pub index: usize,
}

thread_local! {
    pub(super) static CTX: Cell<*const Emu> = const { Cell::new(std::ptr::null()) };
    pub(crate) static INFO: Cell<Info> = Cell::new(Info::default());
    pub(super) static YIELDER: Cell<*const Yielder<(), ()>> = const { Cell::new(std::ptr::null()) };
    pub(super) static IN_KERNEL: Cell<bool> = const { Cell::new(false) };
    /// Set while a failed launch unwinds the threads it left suspended (see `launch::teardown`).
    pub(super) static TEARDOWN: Cell<bool> = const { Cell::new(false) };
    pub(super) static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Whether the calling code runs inside an emulated launch.
pub(crate) fn active() -> bool {
    CTX.with(|c| !c.get().is_null())
}

/// The name of the kernel whose launch runs on this OS thread, if a kernel thread is running.
pub(crate) fn running_kernel() -> Option<String> {
    let emu = CTX.with(|c| c.get());
    if emu.is_null() {
        return None;
    }
    // SAFETY: as in `with_state`.
    let emu = unsafe { &*emu };
    Some(emu.st.try_borrow().map_or_else(|_| "?".to_string(), |st| st.kernel.clone()))
}

/// Whether the running thread is unwinding: it panicked, its stack reached the reserve, or a failed
/// launch is tearing it down. Destructors run then, and may call any primitive; none of them may
/// suspend the thread: the scheduler would resume other threads (or, during a teardown, the yielder
/// may not be usable at all) while this one is half unwound, with the panic still counted on the OS
/// thread. So while unwinding, every primitive completes at once: memory accesses are performed
/// (checked against the launch's memory as always, but not recorded by the detectors, whose findings
/// the failed launch drops), and barriers, collectives, fences and sleeps are skipped.
#[inline]
pub(crate) fn unwinding() -> bool {
    std::thread::panicking() || TEARDOWN.with(|t| t.get())
}

pub(crate) fn info() -> Info {
    assert!(active(), "GPU primitive called outside a kernel launch (use gpu_std::emu::launch)");
    assert!(!super::host_agent::in_host_agent(), "a GPU primitive (thread index) was called from the host agent");
    stack::check();
    INFO.with(|i| i.get())
}

/// Runs `f` on the launch state. Never suspends while borrowed. Unwinds the calling thread first if
/// its stack is nearly exhausted (see `stack`).
pub(crate) fn with_state<R>(f: impl FnOnce(&mut State, usize) -> R) -> R {
    let emu = CTX.with(|c| c.get());
    assert!(!emu.is_null(), "GPU primitive called outside a kernel launch (use gpu_std::emu::launch)");
    stack::check();
    let me = INFO.with(|i| i.get().index);
    assert!(
        me != super::host_agent::NOT_A_GPU_THREAD,
        "a GPU primitive was called from the host agent (it is a host thread: it may use only the host_agent \
         operations)"
    );
    // SAFETY: CTX points to the Emu owned by `run_launch`, alive for the whole launch, and only this
    // OS thread touches it.
    let emu = unsafe { &*emu };
    f(&mut emu.st.borrow_mut(), me)
}

/// Gives the scheduler the chance to run another thread (or waits, if this thread is blocked). Does
/// nothing while the thread unwinds (see [`unwinding`]); every primitive checks that itself first, this
/// is the last line of defence.
pub(crate) fn suspend() {
    if unwinding() {
        return;
    }
    let y = YIELDER.with(|y| y.get());
    assert!(!y.is_null());
    // SAFETY: the yielder of the running coroutine, set when it started; valid while it runs.
    unsafe { (*y).suspend(()) }
}

/// Drops the payload of a panic that ended an emulated thread (or the host agent), and returns
/// whether its destructor panicked. The destructor is the kernel's code, run after the thread's
/// coroutine finished: no primitive may suspend then (the thread's yielder belongs to a coroutine that
/// has returned), so it runs as a teardown does, every primitive completing at once (see
/// [`unwinding`]); a panic in it is caught here, so that no panic leaves the scheduler.
pub(super) fn drop_payload(payload: Box<dyn std::any::Any + Send>) -> bool {
    YIELDER.with(|y| y.set(std::ptr::null()));
    TEARDOWN.with(|t| t.set(true));
    let mut payload = payload;
    let mut panicked = false;
    // The panic of a destructor has a payload of its own, dropped the same way; one whose destructors
    // keep panicking is leaked after a few rounds.
    for _ in 0..4 {
        match catch_unwind(AssertUnwindSafe(move || drop(payload))) {
            Ok(()) => {
                TEARDOWN.with(|t| t.set(false));
                return panicked;
            }
            Err(next) => {
                panicked = true;
                payload = next;
            }
        }
    }
    std::mem::forget(payload);
    TEARDOWN.with(|t| t.set(false));
    true
}

/// A kernel panic's message, with a note when its payload's destructor panicked too.
pub(super) fn panic_report(payload: Box<dyn std::any::Any + Send>) -> String {
    let mut message = panic_message(payload.as_ref());
    if drop_payload(payload) {
        message.push_str(" (and the destructor of its panic payload panicked too)");
    }
    message
}

/// The message of a panic that ended an emulated thread: the one the panic hook recorded, else the
/// payload's text.
pub(super) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into())
    })
}

pub(super) fn schedule(
    emu: &Emu,
    cos: &mut [Option<Co>],
    guards: &[Guard],
    bdim: Dim3,
    gdim: Dim3,
    start: Instant,
    mut host: Option<&mut super::host_agent::HostRun>,
) -> Result<(), EmuError> {
    emu.st.borrow_mut().parked.clear();
    loop {
        let pick = {
            let st = &mut *emu.st.borrow_mut();
            if let Some(e) = st.error.take() {
                return Err(e);
            }
            if st.runnable.is_empty() || st.steps.is_multiple_of(PARK_BOUND) {
                // Parked spinners run again when no other GPU thread can, or after a bounded wait
                // (the host agent's writes wake the threads parked on what they change).
                st.wake_all();
            }
            let host_ready = st.host_ready();
            if st.runnable.is_empty() && !host_ready {
                if st.wave_live == 0 {
                    return Ok(());
                }
                return Err(EmuError::Deadlock(st.deadlock_report("no thread can make progress")));
            }
            st.steps += 1;
            if st.steps.is_multiple_of(4096) {
                let el = start.elapsed();
                if el > st.opts.time_limit {
                    return Err(EmuError::TimeLimit {
                        kernel: st.kernel.clone(),
                        seconds: el.as_secs_f64(),
                        steps: st.steps,
                        threads: st.with_host_group(st.unfinished_threads()),
                    });
                }
            }
            if st.steps.is_multiple_of(1024) && st.livelocked() && st.host_spinning_or_done() {
                return Err(EmuError::Livelock(st.livelock_report_with_host()));
            }
            let n = st.runnable.len() + host_ready as usize;
            let k = st.rng.below(n);
            if k == st.runnable.len() {
                // The host agent's turn.
                None
            } else {
                let t = st.runnable[k];
                let who = st.make_current(t, bdim, gdim);
                st.running.set(who);
                Some((t, who))
            }
        };
        let Some((next, who)) = pick else {
            host.as_mut().expect("a launch with a host agent has its coroutine").resume(emu)?;
            continue;
        };
        let co = cos[next].as_mut().expect("runnable thread has a coroutine");
        stack::running(Some((guards[next], who)));
        IN_KERNEL.with(|k| k.set(true));
        let r = catch_unwind(AssertUnwindSafe(|| co.resume(())));
        IN_KERNEL.with(|k| k.set(false));
        stack::running(None);
        // The yielder is valid only while its coroutine runs: nothing may suspend on it now.
        YIELDER.with(|y| y.set(std::ptr::null()));
        let overflow = || {
            let st = emu.st.borrow();
            EmuError::StackOverflow {
                kernel: st.kernel.clone(),
                thread: st.tid(next),
                stack_bytes: st.opts.stack_bytes,
            }
        };
        match r {
            Ok(CoroutineResult::Yield(())) => {}
            Ok(CoroutineResult::Return(())) => {}
            Err(payload) if payload.is::<stack::Overflow>() => return Err(overflow()),
            Err(payload) => {
                let message = panic_report(payload);
                let st = emu.st.borrow();
                if let Some(e) = st.error.clone() {
                    return Err(e);
                }
                return Err(EmuError::KernelPanic { kernel: st.kernel.clone(), thread: st.tid(next), message });
            }
        }
    }
}

impl State {
    /// Makes thread `t` the one primitives act for (its indices and its yielder); returns its block and
    /// thread index, for the stack guard.
    pub(super) fn make_current(&self, t: usize, bdim: Dim3, gdim: Dim3) -> [u32; 6] {
        let th = &self.threads[t];
        let b = &self.blocks[th.block];
        // In a two-device launch a thread sees its own device's grid.
        let topo = self.model.topology();
        let (bid, gdim) = if topo.two_devices() { topo.local(b.linear) } else { (b.idx, gdim) };
        INFO.with(|i| i.set(Info { tid: th.tid, bid, bdim, gdim, lane: th.rank % 32, index: t }));
        YIELDER.with(|y| y.set(self.yielders[t]));
        [b.idx.x, b.idx.y, b.idx.z, th.tid.x, th.tid.y, th.tid.z]
    }

    pub fn tid(&self, t: usize) -> ThreadId {
        let th = &self.threads[t];
        ThreadId::new(self.blocks[th.block].idx, th.tid)
    }

    pub(super) fn make_runnable(&mut self, t: usize) {
        if self.pos[t] == usize::MAX {
            self.pos[t] = self.runnable.len();
            self.runnable.push(t);
        }
        let th = &mut self.threads[t];
        th.status = Status::Runnable;
        // Released from a barrier or collective: not spinning.
        th.spins = 0;
        th.polled = None;
    }

    pub(super) fn block_thread(&mut self, t: usize, status: Status) {
        self.leave_runnable(t);
        self.threads[t].status = status;
    }

    /// Takes thread `t` out of the list the scheduler picks from (if it is in it).
    pub(super) fn leave_runnable(&mut self, t: usize) {
        let p = self.pos[t];
        if p != usize::MAX {
            let last = *self.runnable.last().expect("non-empty");
            self.runnable.swap_remove(p);
            if last != t {
                self.pos[last] = p;
            }
            self.pos[t] = usize::MAX;
        }
    }
}
