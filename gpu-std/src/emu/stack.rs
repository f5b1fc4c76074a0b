//! The stacks of emulated threads, and stack overflow as a report instead of a crash.
//!
//! Every emulated thread runs on its own stack: [`Options::stack_bytes`](super::Options::stack_bytes)
//! for the kernel, plus a [`RESERVE`] for the emulator's own bookkeeping, above a guard page. An
//! overflow is caught in one of two ways, and the launch ends with `EmuError::StackOverflow` naming
//! the kernel and the thread:
//!
//! - **On entry to the emulator.** Every primitive and every view access enters the emulator, which
//!   first checks that the kernel's frames have not reached into the reserve. If they have, the thread
//!   unwinds like a panic (its destructors run) and the scheduler reports the overflow.
//! - **On the guard page.** Kernel code that overflows without calling the emulator (deep recursion
//!   over registers, a large local array) faults on the guard page. On Linux (x86-64 and aarch64) a
//!   `SIGSEGV`/`SIGBUS` handler, on an alternate signal stack, recognises a fault inside the guard page
//!   of the running thread's stack and uses corosensei's trap support to abandon that thread: its stack
//!   is reset, it returns to the scheduler, and the launch reports the overflow. The abandoned frames
//!   are not unwound (their destructors do not run; what they allocated leaks); kernel code holds no
//!   locks and touches memory only through the emulator, so nothing else is left inconsistent. A fault
//!   while the emulator's own code runs (outside its reserve, which does not happen in practice) cannot
//!   be recovered that way: the handler writes the kernel and thread to stderr, and the process dies
//!   as it would without the handler. Faults anywhere else go to the handler that was installed
//!   before (Rust's own stack-overflow report, or the default action).
//!
//! On other platforms only the check on entry to the emulator applies.

use corosensei::Coroutine;
use corosensei::stack::{DefaultStack, Stack};
use corosensei::trap::CoroutineTrapHandler;
use std::cell::Cell;

/// Bytes of every emulated thread's stack kept for the emulator below the kernel's own frames.
pub(super) const RESERVE: usize = 64 * 1024;

/// An emulated thread.
pub(super) type Co = Coroutine<(), (), (), DefaultStack>;

/// The unwinding payload of a thread whose frames reached into the reserve.
pub(super) struct Overflow;

/// Where one emulated thread's stack ends.
#[derive(Clone, Copy)]
#[cfg_attr(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))), allow(dead_code))]
pub(super) struct Guard {
    trap: CoroutineTrapHandler<()>,
    /// The guard page: `[guard_lo, guard_hi)`.
    guard_lo: usize,
    guard_hi: usize,
    /// The lowest stack address the kernel's frames may reach (the top of the reserve).
    soft_limit: usize,
}

/// A stack for a thread whose kernel may use `stack_bytes`.
pub(super) fn allocate(stack_bytes: usize) -> std::io::Result<DefaultStack> {
    DefaultStack::new(stack_bytes.saturating_add(RESERVE))
}

impl Guard {
    /// The guard of coroutine `co`, which runs on a stack whose lowest address (its guard page) is
    /// `stack_limit`.
    pub(super) fn new(co: &Co, stack_limit: usize) -> Guard {
        let page = page_size();
        Guard {
            trap: co.trap_handler(),
            guard_lo: stack_limit,
            guard_hi: stack_limit + page,
            soft_limit: stack_limit + page + RESERVE,
        }
    }
}

/// The lowest address of `stack` (its guard page).
pub(super) fn limit_of(stack: &DefaultStack) -> usize {
    stack.limit().get()
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as usize } else { 4096 }
}

thread_local! {
    /// The guard of the emulated thread running on this OS thread, and that thread's block and thread
    /// index; `None` while the scheduler runs. Read by the fault handler: const-initialised, no
    /// destructor.
    static RUNNING: Cell<Option<(Guard, [u32; 6])>> = const { Cell::new(None) };
    /// `RUNNING`'s soft limit, or 0: what the check on entry to the emulator compares against.
    static SOFT_LIMIT: Cell<usize> = const { Cell::new(0) };
    /// Set by a thread abandoned after a fault on its guard page.
    static OVERFLOWED: Cell<bool> = const { Cell::new(false) };
    /// How deep the running thread is inside the emulator's own code (state borrowed, the panic
    /// capture running): a fault there cannot be recovered.
    static IN_EMULATOR: Cell<u32> = const { Cell::new(0) };
    /// The running launch's kernel name, for the message of an unrecoverable fault.
    static KERNEL: Cell<(*const u8, usize)> = const { Cell::new((std::ptr::null(), 0)) };
}

/// Prepares this OS thread to run the threads of kernel `kernel` (whose name must stay alive until
/// [`finish_launch`]): the fault handler is installed, and the thread has an alternate signal stack.
pub(super) fn start_launch(kernel: &str) {
    KERNEL.with(|k| k.set((kernel.as_ptr(), kernel.len())));
    fault::prepare();
}

/// Forgets the kernel named at [`start_launch`].
pub(super) fn finish_launch() {
    KERNEL.with(|k| k.set((std::ptr::null(), 0)));
    RUNNING.with(|r| r.set(None));
    SOFT_LIMIT.with(|s| s.set(0));
}

/// The emulated thread `who` (block and thread index) with stack `guard` runs from now on (`None`:
/// the scheduler does).
pub(super) fn running(running: Option<(Guard, [u32; 6])>) {
    SOFT_LIMIT.with(|s| s.set(running.map_or(0, |(g, _)| g.soft_limit)));
    RUNNING.with(|r| r.set(running));
}

/// Whether the thread that just returned to the scheduler was abandoned after a fault on its guard
/// page.
pub(super) fn take_overflow() -> bool {
    OVERFLOWED.with(|o| o.replace(false))
}

/// Called on entry to the emulator: unwinds the running thread with [`Overflow`] if its frames reached
/// into the reserve.
#[inline(always)]
pub(super) fn check() {
    let limit = SOFT_LIMIT.with(|s| s.get());
    let here = 0u8;
    if (std::hint::black_box(&here) as *const u8 as usize) < limit {
        overflow()
    }
}

#[cold]
#[inline(never)]
fn overflow() {
    // A thread that is already unwinding (a panic, an earlier overflow, a teardown) runs destructors:
    // unwinding again from inside one would abort the process. It goes on into the reserve; should it
    // reach the guard page, the fault handler reports the overflow and aborts.
    if std::thread::panicking() {
        return;
    }
    SOFT_LIMIT.with(|s| s.set(0));
    std::panic::resume_unwind(Box::new(Overflow))
}

/// Marks the emulator's own code (state borrowed, panic capture running) for as long as it lives.
pub(super) struct InEmulator(());

impl InEmulator {
    #[inline(always)]
    pub(super) fn enter() -> InEmulator {
        IN_EMULATOR.with(|d| d.set(d.get() + 1));
        InEmulator(())
    }
}

impl Drop for InEmulator {
    #[inline(always)]
    fn drop(&mut self) {
        IN_EMULATOR.with(|d| d.set(d.get() - 1));
    }
}

#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
mod fault;

#[cfg(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))))]
mod fault {
    //! No fault handler on this platform: only the check on entry to the emulator applies.
    pub(super) fn prepare() {}
}
