//! Why a launch did not complete: each kind of failure is its own [`EmuError`] variant with its own
//! wording — a deadlock (threads wait for each other at a barrier or collective), a livelock (threads
//! spin on memory nobody changes), the time limit, a kernel panic, a stack overflow, and launches that
//! are invalid before they start. Reports of stuck launches group the threads by what they do.

use super::outcome::ThreadId;
use std::fmt;

/// Threads doing one thing: waiting at one place, spinning on one value, or missing from a barrier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitGroup {
    /// What they do: `wait at block barrier <site>`, `exited`, `wait in shfl.sync at <site> (mask ...)`,
    /// `wait at <site> for `lock`[0] to change from 1`, `run (last at <site>)`.
    pub what: String,
    /// The threads that do it.
    pub threads: Vec<ThreadId>,
}

/// No thread can make progress, or a synchronisation primitive was used in a way that can never
/// complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    /// Name of the kernel.
    pub kernel: String,
    /// One line: what is wrong.
    pub summary: String,
    /// Threads that wait.
    pub waiting: Vec<WaitGroup>,
    /// Threads the waiters wait for (exited, or waiting elsewhere).
    pub missing: Vec<WaitGroup>,
}

/// Every thread that can run is spinning — polling memory with loads, or read-modify-writes that leave
/// it unchanged — and no thread writes memory or passes a barrier: what they wait for never comes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Livelock {
    /// Name of the kernel.
    pub kernel: String,
    /// Polls since the last write to memory, completed barrier or exit.
    pub polls: u64,
    /// The spinning threads, grouped by where they poll and the value they wait to change.
    pub spinning: Vec<WaitGroup>,
    /// The other unfinished threads (waiting at a barrier, for instance while holding the lock the
    /// others spin on).
    pub blocked: Vec<WaitGroup>,
    /// Block barriers that wait while threads of their block spin: barrier divergence, which on sm_70+
    /// hardware need not hang (one line per block).
    pub divergent_barriers: Vec<String>,
}

fn thread_list(f: &mut fmt::Formatter<'_>, ts: &[ThreadId]) -> fmt::Result {
    const SHOW: usize = 8;
    for (k, t) in ts.iter().take(SHOW).enumerate() {
        if k > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{t}")?;
    }
    if ts.len() > SHOW {
        write!(f, ", … ({} threads)", ts.len())?;
    }
    Ok(())
}

/// One line per group: `\n  <label>: <n> threads <what>: <threads>`.
fn groups(f: &mut fmt::Formatter<'_>, label: &str, gs: &[WaitGroup]) -> fmt::Result {
    for g in gs {
        write!(f, "\n  {label}: {} threads {}: ", g.threads.len(), g.what)?;
        thread_list(f, &g.threads)?;
    }
    Ok(())
}

impl fmt::Display for Deadlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A divergent block barrier does not hang a GPU (sm_70+): it is undefined behaviour.
        let what = if self.summary.starts_with("barrier divergence") { "undefined behaviour" } else { "deadlock" };
        write!(f, "{what} in kernel `{}`: {}", self.kernel, self.summary)?;
        groups(f, "waiting", &self.waiting)?;
        groups(f, "missing", &self.missing)
    }
}

impl fmt::Display for Livelock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "livelock in kernel `{}`: every thread that can run spins on memory that no thread changes ({} polls \
             since the last write, barrier or exit): a flag nobody sets, or a lock nobody releases",
            self.kernel, self.polls
        )?;
        groups(f, "spinning", &self.spinning)?;
        groups(f, "blocked", &self.blocked)?;
        for d in &self.divergent_barriers {
            write!(f, "\n  also: {d}")?;
        }
        Ok(())
    }
}

/// Why an emulated launch did not complete.
#[derive(Clone, Debug, PartialEq)]
pub enum EmuError {
    /// Bad launch shape (zero extent, too many threads per block, ...) or arguments (an `Output` that
    /// overlaps another view).
    InvalidLaunch(String),
    /// A cooperative launch with more blocks than can be co-resident.
    CooperativeTooLarge {
        /// Name of the kernel.
        kernel: String,
        /// Blocks in the launch's grid.
        blocks: u64,
        /// Blocks that can be resident at once
        /// ([`Options::max_resident_blocks`](crate::emu::Options::max_resident_blocks)).
        limit: u32,
    },
    /// The kernel's shared-memory layout (`layout::BYTES`) needs more dynamic shared memory than the
    /// launch gave.
    SharedMemoryTooSmall {
        /// Name of the kernel.
        kernel: String,
        /// Name of the shared-memory layout.
        layout: String,
        /// Bytes of dynamic shared memory the layout needs.
        needed: usize,
        /// Bytes of dynamic shared memory the launch gave
        /// ([`LaunchConfig::shared_bytes`](crate::emu::LaunchConfig::shared_bytes)).
        given: usize,
    },
    /// Barrier divergence, a collective whose lanes never all arrive, or no runnable thread.
    Deadlock(Deadlock),
    /// Every runnable thread spins (polls) and no thread changes memory.
    Livelock(Livelock),
    /// A kernel thread panicked (an out-of-bounds view access, a lane outside its own warp mask, ...):
    /// on a GPU the kernel traps.
    KernelPanic {
        /// Name of the kernel.
        kernel: String,
        /// The thread that panicked.
        thread: ThreadId,
        /// The panic message.
        message: String,
    },
    /// A kernel thread used more stack than `Options::stack_bytes` (found when it next called the
    /// emulator; a thread that overflows onto its guard page without calling it aborts the process
    /// with this report on stderr instead, since its frames cannot be unwound).
    StackOverflow {
        /// Name of the kernel.
        kernel: String,
        /// The thread that overflowed its stack.
        thread: ThreadId,
        /// Stack size of each thread, in bytes (`Options::stack_bytes`).
        stack_bytes: usize,
    },
    /// The launch exceeded `Options::time_limit`; `threads` says what every unfinished thread was doing.
    TimeLimit {
        /// Name of the kernel.
        kernel: String,
        /// Wall-clock seconds the launch had run when it was stopped.
        seconds: f64,
        /// Scheduler steps (context switches) the launch had taken.
        steps: u64,
        /// The unfinished threads, grouped by what they were doing.
        threads: Vec<WaitGroup>,
    },
}

impl fmt::Display for EmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmuError::InvalidLaunch(m) => write!(f, "invalid launch: {m}"),
            EmuError::CooperativeTooLarge { kernel, blocks, limit } => write!(
                f,
                "cooperative launch of `{kernel}` with {blocks} blocks exceeds the {limit} blocks that can be \
                 resident at once; a grid barrier could never complete (reduce the grid)"
            ),
            EmuError::SharedMemoryTooSmall { kernel, layout, needed, given } => write!(
                f,
                "kernel `{kernel}` needs {needed} bytes of dynamic shared memory ({layout}::BYTES) but the launch \
                 gave {given} (pass {layout}::BYTES as the launch's shared bytes)"
            ),
            EmuError::Deadlock(d) => write!(f, "{d}"),
            EmuError::Livelock(l) => write!(f, "{l}"),
            EmuError::KernelPanic { kernel, thread, message } => {
                write!(f, "panic in kernel `{kernel}`, {thread}: {message}")
            }
            EmuError::StackOverflow { kernel, thread, stack_bytes } => write!(
                f,
                "stack overflow in kernel `{kernel}`, {thread}: the thread needed more than its {stack_bytes} bytes \
                 of stack (raise emu::Options::stack_bytes, or recurse less: a GPU thread's stack is small too)"
            ),
            EmuError::TimeLimit { kernel, seconds, steps, threads } => {
                write!(
                    f,
                    "time limit: kernel `{kernel}` did not finish within {seconds:.1} s ({steps} scheduler steps) \
                     and was stopped"
                )?;
                groups(f, "unfinished", threads)
            }
        }
    }
}

impl std::error::Error for EmuError {}
