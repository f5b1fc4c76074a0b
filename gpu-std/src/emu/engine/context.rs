//! The context of the running emulated thread: the thread-locals through which a primitive reaches
//! the launch — the launch state (`Emu`), the running thread's indices (`Info`) and yielder, whether
//! kernel code or the host agent runs, whether a failed launch tears its threads down, and the last
//! panic's message — one `Context` per OS thread, read and set only through this file's functions.
//!
//! Names the launch state (`state`) and the stack guard (`stack::check`); no operation of the
//! engine (barriers, collectives, polls, the scheduler's loop, the launch) names anything but these
//! functions to reach the running launch.

use super::stack;
use super::state::{Emu, Info, NOT_A_GPU_THREAD, State};
use crate::vocab::dim3::Dim3;
use corosensei::Yielder;
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What one OS thread knows of the emulated launch it runs.
struct Context {
    /// The running launch's state, owned by `launch::run_launch` (null outside a launch).
    emu: Cell<*const Emu>,
    /// The running GPU thread's indices.
    info: Cell<Info>,
    /// The running coroutine's yielder (null when none may suspend).
    yielder: Cell<*const Yielder<(), ()>>,
    /// Kernel code (a GPU thread or the host agent) runs now.
    in_kernel: Cell<bool>,
    /// The host agent's coroutine runs now.
    in_host_agent: Cell<bool>,
    /// Set while a failed launch unwinds the threads it left suspended (see `launch::teardown`).
    teardown: Cell<bool>,
    /// The message the panic hook recorded for the last panic of kernel code.
    last_panic: RefCell<Option<String>>,
}

const NO_INFO: Info = Info {
    tid: Dim3::new(0, 0, 0),
    bid: Dim3::new(0, 0, 0),
    bdim: Dim3::new(0, 0, 0),
    gdim: Dim3::new(0, 0, 0),
    lane: 0,
    index: 0,
};

thread_local! {
    static CONTEXT: Context = const {
        Context {
            emu: Cell::new(std::ptr::null()),
            info: Cell::new(NO_INFO),
            yielder: Cell::new(std::ptr::null()),
            in_kernel: Cell::new(false),
            in_host_agent: Cell::new(false),
            teardown: Cell::new(false),
            last_panic: RefCell::new(None),
        }
    };
}

/// The running launch's state (null outside a launch).
pub(super) fn emu() -> *const Emu {
    CONTEXT.with(|c| c.emu.get())
}

/// Makes `emu` the running launch's state (null: none).
pub(super) fn set_emu(emu: *const Emu) {
    CONTEXT.with(|c| c.emu.set(emu))
}

/// Sets the indices the running thread's primitives read.
pub(super) fn set_info(info: Info) {
    CONTEXT.with(|c| c.info.set(info))
}

/// Sets the yielder the running coroutine suspends on (null: none may suspend).
pub(super) fn set_yielder(y: *const Yielder<(), ()>) {
    CONTEXT.with(|c| c.yielder.set(y))
}

/// Whether kernel code (a GPU thread or the host agent) runs now.
pub(super) fn in_kernel() -> bool {
    CONTEXT.with(|c| c.in_kernel.get())
}

/// Says whether kernel code runs now.
pub(super) fn set_in_kernel(on: bool) {
    CONTEXT.with(|c| c.in_kernel.set(on))
}

/// Whether the caller is the host agent of an emulated launch (then the host agent's operations are
/// modelled; otherwise they are plain atomics).
pub(crate) fn in_host_agent() -> bool {
    CONTEXT.with(|c| c.in_host_agent.get())
}

/// Says whether the host agent's coroutine runs now.
pub(super) fn set_in_host_agent(on: bool) {
    CONTEXT.with(|c| c.in_host_agent.set(on))
}

/// Says whether a failed launch tears its threads down now (see [`unwinding`]).
pub(super) fn set_teardown(on: bool) {
    CONTEXT.with(|c| c.teardown.set(on))
}

/// Records the message of a panic of kernel code (the panic hook's).
pub(super) fn set_last_panic(message: String) {
    CONTEXT.with(|c| *c.last_panic.borrow_mut() = Some(message))
}

/// Forgets the launch on this OS thread: no state, no thread, nothing running or torn down.
pub(super) fn clear() {
    CONTEXT.with(|c| {
        c.emu.set(std::ptr::null());
        c.yielder.set(std::ptr::null());
        c.info.set(NO_INFO);
        c.in_kernel.set(false);
        c.teardown.set(false);
    })
}

/// Whether the calling code runs inside an emulated launch.
pub(crate) fn active() -> bool {
    CONTEXT.with(|c| !c.emu.get().is_null())
}

/// The name of the kernel whose launch runs on this OS thread, if a kernel thread is running.
pub(crate) fn running_kernel() -> Option<String> {
    let emu = emu();
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
    std::thread::panicking() || CONTEXT.with(|c| c.teardown.get())
}

pub(crate) fn info() -> Info {
    assert!(active(), "GPU primitive called outside a kernel launch (use gpu_std::emu::launch)");
    assert!(!in_host_agent(), "a GPU primitive (thread index) was called from the host agent");
    stack::check();
    CONTEXT.with(|c| c.info.get())
}

/// Runs `f` on the launch state. Never suspends while borrowed. Unwinds the calling thread first if
/// its stack is nearly exhausted (see `stack`).
pub(crate) fn with_state<R>(f: impl FnOnce(&mut State, usize) -> R) -> R {
    let emu = emu();
    assert!(!emu.is_null(), "GPU primitive called outside a kernel launch (use gpu_std::emu::launch)");
    stack::check();
    let me = CONTEXT.with(|c| c.info.get().index);
    assert!(
        me != NOT_A_GPU_THREAD,
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
    let y = CONTEXT.with(|c| c.yielder.get());
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
    set_yielder(std::ptr::null());
    set_teardown(true);
    let mut payload = payload;
    let mut panicked = false;
    // The panic of a destructor has a payload of its own, dropped the same way; one whose destructors
    // keep panicking is leaked after a few rounds.
    for _ in 0..4 {
        match catch_unwind(AssertUnwindSafe(move || drop(payload))) {
            Ok(()) => {
                set_teardown(false);
                return panicked;
            }
            Err(next) => {
                panicked = true;
                payload = next;
            }
        }
    }
    std::mem::forget(payload);
    set_teardown(false);
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
    CONTEXT.with(|c| c.last_panic.borrow_mut().take()).unwrap_or_else(|| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into())
    })
}

/// Runs `f` on the launch state, for the host agent's operations (see [`with_state`]).
pub(crate) fn host_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let emu = emu();
    assert!(!emu.is_null(), "host agent operation outside a launch");
    stack::check();
    // SAFETY: as in `with_state`: the launch's state, alive for the whole launch, touched by
    // this OS thread only.
    let emu = unsafe { &*emu };
    f(&mut emu.st.borrow_mut())
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
        set_info(Info { tid: th.tid, bid, bdim, gdim, lane: th.rank % 32, index: t });
        set_yielder(self.yielders[t]);
        [b.idx.x, b.idx.y, b.idx.z, th.tid.x, th.tid.y, th.tid.z]
    }
}
