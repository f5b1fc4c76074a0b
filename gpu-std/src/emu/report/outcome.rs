//! What a launch that ran to completion reports: the races found, and warnings about values that are
//! undefined on a GPU. (Errors that end a launch are in `errors`.)

use crate::Dim3;
use crate::atomic::SpaceKind;
use std::fmt;

/// A GPU thread: its block and its thread index in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId {
    /// Index of the block in the grid, `(x, y, z)` (`blockIdx`).
    pub block: (u32, u32, u32),
    /// Index of the thread in its block, `(x, y, z)` (`threadIdx`).
    pub thread: (u32, u32, u32),
}

impl ThreadId {
    /// The host agent of a launch (see [`launch_with_host`](crate::emu::launch_with_host)): a CPU thread
    /// outside every block, shown as `the host thread`.
    pub const HOST: ThreadId = ThreadId { block: (u32::MAX, u32::MAX, u32::MAX), thread: (0, 0, 0) };

    pub(crate) fn new(block: Dim3, thread: Dim3) -> Self {
        ThreadId { block: (block.x, block.y, block.z), thread: (thread.x, thread.y, thread.z) }
    }

    /// Whether this is the host agent rather than a GPU thread.
    pub fn is_host(&self) -> bool {
        *self == ThreadId::HOST
    }
}

/// `x` for 1-D indices, `(x,y,z)` otherwise.
fn triple(d: (u32, u32, u32)) -> String {
    if d.1 == 0 && d.2 == 0 { d.0.to_string() } else { format!("({},{},{})", d.0, d.1, d.2) }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_host() {
            return f.write_str("the host thread");
        }
        write!(f, "block {} thread {}", triple(self.block), triple(self.thread))
    }
}

/// One side of a race.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessInfo {
    /// The thread that made the access.
    pub thread: ThreadId,
    /// The GPU of the thread in a two-device launch ([`launch_two_devices`](crate::emu::launch_two_devices));
    /// `None` in a launch on one device.
    pub device: Option<u32>,
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
        if self.thread.is_host() {
            // The host agent passes no barrier.
            return write!(f, "{:<14} by {} at {}", self.kind, self.thread, self.site);
        }
        let gpu = self.device.map(|d| format!("GPU {d} ")).unwrap_or_default();
        write!(
            f,
            "{:<14} by {gpu}{} at {} (after {} block barrier(s), {} grid barrier(s))",
            self.kind, self.thread, self.site, self.barrier_interval, self.grid_interval
        )
    }
}

/// Two unordered, conflicting accesses to one location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// Name of the kernel.
    pub kernel: String,
    /// Whether the location is in global or shared memory.
    pub space: SpaceKind,
    /// Global memory: the buffer's name (a [`Buffer`](crate::emu::Buffer) or a registered name), else
    /// the kernel parameter and base address of the view that holds it (`parameter `y` at 0x7f…`), the
    /// index then counting from that base. Shared memory: the array of the kernel's
    /// [`shared_layout!`](crate::shared_layout) (`DotScratch.warp_sums`), or `shared` for memory from
    /// [`shared::dynamic`](crate::shared::dynamic).
    pub buffer: String,
    /// Element index within the buffer or shared array (for `shared`: the byte offset divided by the
    /// access size).
    pub index: usize,
    /// The earlier access.
    pub first: AccessInfo,
    /// The later access, which found the conflict.
    pub second: AccessInfo,
    /// Why nothing orders them; for a predicted race, the lock and the two critical sections whose
    /// order hid it (`predicted: in another order of taking `lock`[0] …`).
    pub why: String,
    /// The accesses were ordered in this run only by the order in which threads took a lock: in
    /// another order they race.
    pub predicted: bool,
    /// An ordering hazard, not a data race (see [`Outcome::hazards`]).
    pub hazard: bool,
}

impl fmt::Display for Race {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.hazard { "ordering hazard" } else { "data race" };
        match self.space {
            SpaceKind::Global => {
                writeln!(f, "{} in kernel `{}` on global `{}`[{}]", what, self.kernel, self.buffer, self.index)?
            }
            SpaceKind::Shared if self.buffer == "shared" => writeln!(
                f,
                "{} in kernel `{}` on shared memory of block {}, element [{}]",
                what,
                self.kernel,
                triple(self.second.thread.block),
                self.index
            )?,
            SpaceKind::Shared => writeln!(
                f,
                "{} in kernel `{}` on shared memory `{}`[{}] of block {}",
                what,
                self.kernel,
                self.buffer,
                self.index,
                triple(self.second.thread.block)
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
    /// Name of the kernel.
    pub kernel: String,
    /// The reading thread (its block is the block whose shared memory was read).
    pub thread: ThreadId,
    /// `read`, `volatile read`, `atomic (block)`, ...
    pub kind: &'static str,
    /// The array of the kernel's shared layout that holds the element, if one does (`Tile.v`).
    pub array: Option<String>,
    /// Element index: in [`array`](Self::array) if set, else in the block's shared memory (the byte
    /// offset divided by the access size).
    pub index: usize,
    /// Byte offset of the read in the block's shared memory.
    pub offset: usize,
    /// Bytes read.
    pub size: usize,
    /// `file:line:column` in the kernel source.
    pub site: String,
}

impl fmt::Display for UninitRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match &self.array {
            Some(array) => format!("shared memory `{array}`[{}] of block {}", self.index, triple(self.thread.block)),
            None => format!("shared memory of block {}, element [{}]", triple(self.thread.block), self.index),
        };
        write!(
            f,
            "uninitialised read in kernel `{}` of {place} (bytes {}..{}): {} by {} at {}, but no thread of the \
             block wrote it in this launch",
            self.kernel,
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
    /// Up to `Options::max_race_reports` *ordering hazards*, one per shared-memory address and block:
    /// two conflicting volatile accesses of shared memory that causality order does not order. They
    /// are strong, so no data race under PTX, but the value a read sees depends on the schedule — the
    /// warp-synchronous reduction over volatile shared memory without `__syncwarp()` computes wrong
    /// sums. Named as races are. Read-modify-writes, acquire loads and release stores are never
    /// hazards (counters, tickets, locks), nor is global memory (flags and mailboxes, polled by
    /// design). With `Options::hazards_are_races` they are reported in `races` instead.
    pub hazards: Vec<Race>,
    /// Number of distinct shared addresses (per block) with an ordering hazard.
    pub hazard_addresses: usize,
    /// Operations whose result is undefined on a GPU but which do not make the kernel wrong unless it
    /// uses the value (a shuffle reading a lane outside its mask), one per call site.
    pub warnings: Vec<Warning>,
    /// The synchronisation sites the launch executed, in source order, when
    /// [`Options::record_sites`](crate::emu::Options::record_sites) is set (empty otherwise).
    pub sites: Vec<SyncSite>,
    /// One entry per race declared intended in
    /// [`Options::accepted_races`](crate::emu::Options::accepted_races): the addresses whose races it
    /// matched (not counted in `racy_addresses` nor `hazard_addresses`), or none — a declared race that
    /// did not happen in this launch.
    pub accepted: Vec<Accepted>,
}

/// A race declared intended, and what matched it.
#[derive(Clone, Debug)]
pub struct Accepted {
    /// The declaration.
    pub rule: crate::emu::config::AcceptedRace,
    /// Distinct addresses (per block in shared memory) with a race or ordering hazard it matched.
    pub addresses: usize,
    /// The first race it matched, in full.
    pub first: Option<Race>,
}

impl fmt::Display for Accepted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.rule.site.as_deref().map(|s| format!(" at {s}")).unwrap_or_default();
        match &self.first {
            None => write!(f, "accepted race on `{}`{at} ({}): not seen in this run", self.rule.buffer, self.rule.why),
            Some(r) => {
                let head = r.to_string();
                let head = head.lines().next().unwrap_or_default();
                write!(
                    f,
                    "accepted race on `{}`{at} ({}): {} address(es); first: {head}",
                    self.rule.buffer, self.rule.why, self.addresses
                )
            }
        }
    }
}

/// A synchronisation site a launch executed: a barrier, fence, atomic, volatile, acquire or release
/// access at one source location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SyncSite {
    /// Source file.
    pub file: &'static str,
    /// Line.
    pub line: u32,
    /// Column.
    pub column: u32,
    /// What the site is.
    pub kind: crate::emu::config::SiteKind,
    /// The scope of a fence, an atomic, an acquire or a release (`None` for barriers and volatile
    /// accesses).
    pub scope: Option<crate::atomic::ScopeKind>,
    /// How many times threads executed it.
    pub count: u64,
}

impl SyncSite {
    /// The site of `site` (a `Location`) of `kind`, executed once.
    pub(crate) fn at(
        site: crate::Site,
        kind: crate::emu::config::SiteKind,
        scope: Option<crate::atomic::ScopeKind>,
    ) -> SyncSite {
        SyncSite { file: site.file(), line: site.line(), column: site.column(), kind, scope, count: 1 }
    }
    /// `file:line:column`.
    pub fn location(&self) -> String {
        format!("{}:{}:{}", self.file, self.line, self.column)
    }
    /// The mutants of this site.
    pub fn mutations(&self) -> impl Iterator<Item = crate::emu::config::Mutation> + '_ {
        crate::emu::config::MutationKind::of(self.kind, self.scope).iter().map(|&kind| crate::emu::config::Mutation {
            file: self.file,
            line: self.line,
            column: self.column,
            site: self.kind,
            kind,
        })
    }
}

impl fmt::Display for SyncSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            crate::emu::config::SiteKind::BlockBarrier => "block barrier",
            crate::emu::config::SiteKind::GridBarrier => "grid barrier",
            crate::emu::config::SiteKind::WarpBarrier => "warp barrier",
            crate::emu::config::SiteKind::Fence => "fence",
            crate::emu::config::SiteKind::Atomic => "atomic",
            crate::emu::config::SiteKind::VolatileLoad => "volatile load",
            crate::emu::config::SiteKind::VolatileStore => "volatile store",
            crate::emu::config::SiteKind::AcquireLoad => "acquire load",
            crate::emu::config::SiteKind::ReleaseStore => "release store",
        };
        write!(f, "{what}")?;
        if let Some(scope) = self.scope {
            let s = match scope {
                crate::atomic::ScopeKind::Block => "block",
                crate::atomic::ScopeKind::Device => "device",
                crate::atomic::ScopeKind::System => "system",
            };
            write!(f, " ({s} scope)")?;
        }
        write!(f, " at {}", self.location())
    }
}

/// An operation whose result is undefined on a GPU. The emulator gives it a poisoned value
/// ([`POISON`](crate::emu::POISON)) and runs on: a kernel that never uses the value is correct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Name of the kernel.
    pub kernel: String,
    /// `file:line:column` of the operation.
    pub site: String,
    /// The first thread that got an undefined value there.
    pub thread: ThreadId,
    /// What happened, for that first thread.
    pub message: String,
    /// How many times it happened at this site (every lane, every launch of the site).
    pub count: u64,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "warning in kernel `{}`: {}", self.kernel, self.message)?;
        if self.count > 1 {
            write!(f, " ({} times at this site)", self.count)?;
        }
        Ok(())
    }
}
