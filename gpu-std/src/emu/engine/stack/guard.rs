//! Where each emulated thread's stack ends (`Guard`: its guard page, and the soft limit of the
//! check on entry to the emulator, [`RESERVE`] above it), and what the fault handler reads of the
//! running thread: its guard and indices (`RUNNING`) and the report formatted before the launch
//! (`REPORT`).
//!
//! Below `stack` and `stack::fault`, which both use it; names nothing of the emulator.

use std::cell::{Cell, UnsafeCell};

/// Bytes of every emulated thread's stack kept for the emulator below the kernel's own frames.
pub(crate) const RESERVE: usize = 64 * 1024;

/// Where one emulated thread's stack ends.
#[derive(Clone, Copy)]
#[cfg_attr(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))), allow(dead_code))]
pub(crate) struct Guard {
    /// The guard page: `[guard_lo, guard_hi)`.
    pub(super) guard_lo: usize,
    pub(super) guard_hi: usize,
    /// The lowest stack address the kernel's frames may reach (the top of the reserve).
    pub(super) soft_limit: usize,
}

impl Guard {
    /// The guard of a stack whose lowest address (its guard page) is `stack_limit`.
    pub(crate) fn new(stack_limit: usize) -> Guard {
        let page = page_size();
        Guard { guard_lo: stack_limit, guard_hi: stack_limit + page, soft_limit: stack_limit + page + RESERVE }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as usize } else { 4096 }
}

/// Bytes of the report of an overflow onto a guard page that are formatted before the launch.
pub(super) const REPORT_BYTES: usize = 1024;

/// The report of an overflow onto a guard page, formatted before the launch: `text[..head]` comes
/// before the thread's indices, `text[head..len]` after them.
pub(super) struct Report {
    pub(super) text: [u8; REPORT_BYTES],
    pub(super) head: usize,
    pub(super) len: usize,
}

thread_local! {
    /// The guard of the emulated thread running on this OS thread, and that thread's block and thread
    /// index; `None` while the scheduler runs. Read by the fault handler: const-initialised, no
    /// destructor.
    pub(super) static RUNNING: Cell<Option<(Guard, [u32; 6])>> = const { Cell::new(None) };
    /// The running launch's report of an overflow onto a guard page (read by the fault handler:
    /// const-initialised, no destructor). Written only by `stack::start_launch`, while no emulated thread
    /// runs on this OS thread, so never while the handler may read it.
    pub(super) static REPORT: UnsafeCell<Report> =
        const { UnsafeCell::new(Report { text: [0; REPORT_BYTES], head: 0, len: 0 }) };
}
