//! The stacks of emulated threads, and stack overflow as a report instead of a crash.
//!
//! Every emulated thread runs on its own stack: [`Options::stack_bytes`](crate::emu::Options::stack_bytes)
//! for the kernel, plus a [`RESERVE`] for the emulator's own bookkeeping, above a guard page. An
//! overflow is caught in one of two ways:
//!
//! - **On entry to the emulator** (the normal path). Every primitive and every view access enters the
//!   emulator, which first checks that the kernel's frames have not reached into the reserve. If they
//!   have, the thread unwinds like a panic (its destructors run) and the launch ends with
//!   `EmuError::StackOverflow` naming the kernel and the thread; the process goes on.
//! - **On the guard page: the process aborts.** Kernel code that overflows without calling the
//!   emulator (deep recursion over registers, a large local array) faults on the guard page. Its
//!   frames cannot be unwound from a signal handler, and abandoning them without running their
//!   destructors is unsound (a guard that releases a lock, joins a scoped thread or restores shared
//!   state would never run). So on Linux (x86-64 and aarch64) a `SIGSEGV`/`SIGBUS` handler, on an
//!   alternate signal stack, recognises a fault inside the guard page of the running thread's stack,
//!   writes the same report to stderr (`gpu-std emulator: stack overflow in kernel `k`, block b thread
//!   t: ...`, with the stack size and how to raise it) and aborts the process (`SIGABRT`). The report
//!   is written with async-signal-safe calls only: it is formatted before the launch, into a fixed
//!   per-OS-thread buffer, except for the thread's indices, which the handler writes as digits into
//!   a stack buffer, and it reaches stderr with one `write(2)`. Faults anywhere else go to the handler
//!   that was installed before (Rust's own stack-overflow report, or the default action).
//!
//! A thread that is already unwinding (a panic, an overflow caught on entry, the teardown of a failed
//! launch) skips the check on entry: unwinding again from a destructor would abort anyway. Should its
//! destructors then reach the guard page, the handler reports and aborts.
//!
//! On other platforms only the check on entry to the emulator applies (an overflow onto the guard page
//! then ends the process as any stack overflow does).
//!
//! Names only its own files (`stack/guard.rs`, `stack/fault.rs`) and the size of a wave (`state`);
//! nothing else of the emulator.

use corosensei::stack::{DefaultStack, Stack};
pub(super) use guard::{Guard, RESERVE};
use guard::{REPORT, REPORT_BYTES, RUNNING};
use std::cell::{Cell, RefCell};

/// An emulated thread.
pub(super) type Co = corosensei::Coroutine<(), (), (), DefaultStack>;

/// The unwinding payload of a thread whose frames reached into the reserve.
pub(super) struct Overflow;

/// A stack for a thread whose kernel may use `stack_bytes`.
pub(super) fn allocate(stack_bytes: usize) -> std::io::Result<DefaultStack> {
    DefaultStack::new(stack_bytes.saturating_add(RESERVE))
}

/// Most stacks an OS thread keeps between launches: one full wave's.
const POOL_MAX: usize = super::state::WAVE_THREADS as usize;

thread_local! {
    /// The stacks of this OS thread's last launch, with the `stack_bytes` they were made for, kept for
    /// the next launch: mapping a stack, its guard page and its first touched pages costs the kernel
    /// more than a small launch's emulated work, and a test or the runner launches many times. A
    /// stack's old contents are never read (a coroutine starts on it from its top), and its guard page
    /// stays in place. Freed when the OS thread ends.
    static POOL: RefCell<(usize, Vec<DefaultStack>)> = const { RefCell::new((0, Vec::new())) };
}

/// The stacks kept from an earlier launch of `stack_bytes` per thread (none for another size).
pub(super) fn take_pool(stack_bytes: usize) -> Vec<DefaultStack> {
    POOL.try_with(|p| {
        let (size, stacks) = std::mem::take(&mut *p.borrow_mut());
        if size == stack_bytes { stacks } else { Vec::new() }
    })
    .unwrap_or_default()
}

/// Keeps up to [`POOL_MAX`] of a finished launch's `stacks` (of `stack_bytes` each) for the next one;
/// the rest are unmapped.
pub(super) fn give_back(mut stacks: Vec<DefaultStack>, stack_bytes: usize) {
    stacks.truncate(POOL_MAX);
    // During the OS thread's teardown the pool may be gone: the stacks are unmapped here instead.
    let _ = POOL.try_with(|p| *p.borrow_mut() = (stack_bytes, stacks));
}

/// The lowest address of `stack` (its guard page).
pub(super) fn limit_of(stack: &DefaultStack) -> usize {
    stack.limit().get()
}

thread_local! {
    /// The running thread's soft limit, or 0: what the check on entry to the emulator compares against.
    static SOFT_LIMIT: Cell<usize> = const { Cell::new(0) };
}

/// Prepares this OS thread to run the threads of kernel `kernel`, whose threads have `stack_bytes`
/// of stack each: the report of an overflow onto a guard page is formatted, the fault handler is
/// installed, and the thread has an alternate signal stack.
pub(super) fn start_launch(kernel: &str, stack_bytes: usize) {
    use std::io::Write;
    REPORT.with(|r| {
        // SAFETY: only this OS thread touches its `REPORT`, and the fault handler reads it only while
        // an emulated thread runs (`RUNNING` is `Some`), which it does not now.
        let r = unsafe { &mut *r.get() };
        let mut w = &mut r.text[..];
        // A name too long for the buffer is cut short: the writes below stop at its end.
        let _ = write!(w, "gpu-std emulator: stack overflow in kernel `{kernel}`, ");
        r.head = REPORT_BYTES - w.len();
        let _ = write!(
            w,
            ": the thread needed more than its {stack_bytes} bytes of stack (raise emu::Options::stack_bytes, or \
             recurse less: a GPU thread's stack is small too)\ngpu-std emulator: the thread overflowed in its own \
             code, onto its stack's guard page, where its frames cannot be unwound; aborting the process\n"
        );
        r.len = REPORT_BYTES - w.len();
    });
    fault::prepare();
}

/// Ends the launch started by [`start_launch`].
pub(super) fn finish_launch() {
    RUNNING.with(|r| r.set(None));
    SOFT_LIMIT.with(|s| s.set(0));
}

/// The emulated thread `who` (block and thread index) with stack `guard` runs from now on (`None`:
/// the scheduler does).
pub(super) fn running(running: Option<(Guard, [u32; 6])>) {
    SOFT_LIMIT.with(|s| s.set(running.map_or(0, |(g, _)| g.soft_limit)));
    RUNNING.with(|r| r.set(running));
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

mod guard;

#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
mod fault;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_gets_the_stacks_of_the_last_one_of_its_size_only() {
        let stacks: Vec<DefaultStack> = (0..3).map(|_| allocate(16 * 1024).unwrap()).collect();
        let limits: Vec<usize> = stacks.iter().map(limit_of).collect();
        give_back(stacks, 16 * 1024);
        let again = take_pool(16 * 1024);
        assert_eq!(again.iter().map(limit_of).collect::<Vec<_>>(), limits, "the same mappings come back");
        assert!(take_pool(16 * 1024).is_empty(), "taken once");
        give_back(again, 16 * 1024);
        assert!(take_pool(32 * 1024).is_empty(), "another size gets none (and the kept ones are unmapped)");
        assert!(take_pool(16 * 1024).is_empty());
    }

    #[test]
    fn at_most_one_wave_of_stacks_is_kept() {
        let stacks: Vec<DefaultStack> = (0..POOL_MAX + 2).map(|_| allocate(16 * 1024).unwrap()).collect();
        give_back(stacks, 16 * 1024);
        assert_eq!(take_pool(16 * 1024).len(), POOL_MAX);
    }
}

#[cfg(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))))]
mod fault {
    //! No fault handler on this platform: only the check on entry to the emulator applies.
    pub(super) fn prepare() {}
}
