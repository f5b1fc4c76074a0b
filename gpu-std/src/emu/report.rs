//! What the emulator reports: races found in a finished launch, and errors that end a launch.

use crate::Dim3;
use crate::atomic::SpaceKind;
use std::fmt;

/// A GPU thread: its block and its thread index in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId {
    pub block: (u32, u32, u32),
    pub thread: (u32, u32, u32),
}

impl ThreadId {
    pub(crate) fn new(block: Dim3, thread: Dim3) -> Self {
        ThreadId { block: (block.x, block.y, block.z), thread: (thread.x, thread.y, thread.z) }
    }
}

/// `x` for 1-D indices, `(x,y,z)` otherwise.
fn triple(d: (u32, u32, u32)) -> String {
    if d.1 == 0 && d.2 == 0 { d.0.to_string() } else { format!("({},{},{})", d.0, d.1, d.2) }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block {} thread {}", triple(self.block), triple(self.thread))
    }
}

/// One side of a race.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessInfo {
    pub thread: ThreadId,
    /// `read`, `write`, `atomic`, `volatile read`, `volatile write`, `acquire load`, `release store`.
    pub kind: &'static str,
    /// `file:line:column` in the kernel source.
    pub site: String,
    /// Block barriers the thread had passed when it made the access.
    pub barrier_interval: u32,
    /// Grid barriers the thread had passed.
    pub grid_interval: u32,
}

impl fmt::Display for AccessInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<14} by {} at {} (after {} block barrier(s), {} grid barrier(s))",
            self.kind, self.thread, self.site, self.barrier_interval, self.grid_interval
        )
    }
}

/// Two unordered, conflicting accesses to one location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    pub kernel: String,
    pub space: SpaceKind,
    /// The registered buffer name (global memory), or `shared` (the block's shared memory), or the
    /// address in hex when the buffer is unknown.
    pub buffer: String,
    /// Element index within the buffer (for shared memory: the byte offset divided by the access size).
    pub index: usize,
    /// The earlier access.
    pub first: AccessInfo,
    /// The later access, which found the conflict.
    pub second: AccessInfo,
    /// Why nothing orders them.
    pub why: String,
}

impl fmt::Display for Race {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.space {
            SpaceKind::Global => {
                writeln!(f, "data race in kernel `{}` on global `{}`[{}]", self.kernel, self.buffer, self.index)?
            }
            SpaceKind::Shared => writeln!(
                f,
                "data race in kernel `{}` on shared memory of block {}, element [{}]",
                self.kernel,
                triple(self.second.thread.block),
                self.index
            )?,
        }
        writeln!(f, "  first:  {}", self.first)?;
        writeln!(f, "  second: {}", self.second)?;
        write!(f, "  {}", self.why)
    }
}

/// A read of shared memory that no thread of the block had written in the launch (on a GPU its value
/// is whatever an earlier block left there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UninitRead {
    pub kernel: String,
    /// The reading thread (its block is the block whose shared memory was read).
    pub thread: ThreadId,
    /// `read`, `volatile read`, `atomic (block)`, ...
    pub kind: &'static str,
    /// Element index in the block's shared memory (the byte offset divided by the access size).
    pub index: usize,
    /// Byte offset in the block's shared memory, and bytes read.
    pub offset: usize,
    pub size: usize,
    /// `file:line:column` in the kernel source.
    pub site: String,
}

impl fmt::Display for UninitRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "uninitialised read in kernel `{}` of shared memory of block {}, element [{}] (bytes {}..{}): {} by {} at \
             {}, but no thread of the block wrote it in this launch",
            self.kernel,
            triple(self.thread.block),
            self.index,
            self.offset,
            self.offset + self.size,
            self.kind,
            self.thread,
            self.site
        )
    }
}

/// The result of a launch that ran to completion.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Up to `Options::max_race_reports` races, one per racy address, in the order found.
    pub races: Vec<Race>,
    /// Number of distinct racy addresses.
    pub racy_addresses: usize,
    /// Up to `Options::max_race_reports` reads of uninitialised shared memory, one per element and
    /// block, in the order found.
    pub uninit_reads: Vec<UninitRead>,
    /// Number of distinct shared elements (per block) read before any thread of the block wrote them.
    pub uninit_elements: usize,
    /// Bytes of shadow memory the race detector used (records of global memory, and of every block's
    /// shared memory); 0 without the detector.
    pub shadow_bytes: usize,
    /// Element addresses the race detector kept a record of (global, and shared per block).
    pub touched_addresses: usize,
    /// Scheduler steps (context switches) the launch took.
    pub steps: u64,
    /// Threads that ran.
    pub threads: u64,
}

/// Threads waiting at one place, or missing from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitGroup {
    /// What they do: `wait at block barrier <site>`, `exited`, `wait in shfl.sync at <site> (mask ...)`.
    pub what: String,
    pub threads: Vec<ThreadId>,
}

/// No thread can make progress, or a synchronisation primitive was used in a way that can never
/// complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    pub kernel: String,
    /// One line: what is wrong.
    pub summary: String,
    /// Threads that wait.
    pub waiting: Vec<WaitGroup>,
    /// Threads the waiters wait for (exited, or waiting elsewhere).
    pub missing: Vec<WaitGroup>,
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

impl fmt::Display for Deadlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "deadlock in kernel `{}`: {}", self.kernel, self.summary)?;
        for g in &self.waiting {
            write!(f, "\n  waiting: {} threads {}: ", g.threads.len(), g.what)?;
            thread_list(f, &g.threads)?;
        }
        for g in &self.missing {
            write!(f, "\n  missing: {} threads {}: ", g.threads.len(), g.what)?;
            thread_list(f, &g.threads)?;
        }
        Ok(())
    }
}

/// Why an emulated launch did not complete.
#[derive(Clone, Debug, PartialEq)]
pub enum EmuError {
    /// Bad launch shape (zero extent, too many threads per block, ...).
    InvalidLaunch(String),
    /// A cooperative launch with more blocks than can be co-resident.
    CooperativeTooLarge { kernel: String, blocks: u64, limit: u32 },
    /// Barrier divergence, collective misuse, or no runnable thread.
    Deadlock(Deadlock),
    /// Threads spin (poll) without any thread writing memory.
    Livelock(Deadlock),
    /// A kernel thread panicked (e.g. an out-of-bounds view access).
    KernelPanic { kernel: String, thread: ThreadId, message: String },
    /// The launch exceeded `Options::time_limit`.
    TimeLimit { kernel: String, seconds: f64, steps: u64 },
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
            EmuError::Deadlock(d) => write!(f, "{d}"),
            EmuError::Livelock(d) => write!(f, "{d}"),
            EmuError::KernelPanic { kernel, thread, message } => {
                write!(f, "kernel `{kernel}` failed in {thread}: {message}")
            }
            EmuError::TimeLimit { kernel, seconds, steps } => {
                write!(f, "kernel `{kernel}` did not finish within {seconds:.1} s ({steps} scheduler steps); stopped")
            }
        }
    }
}

impl std::error::Error for EmuError {}
