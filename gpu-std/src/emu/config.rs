//! How a launch is shaped ([`LaunchConfig`]) and how the emulator runs it ([`Options`]): plain
//! settings, read by every layer.

use crate::Dim3;
use std::time::Duration;

/// Grid, block and dynamic shared memory of a launch, as in `kernel<<<grid, block, shared>>>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in the grid, in up to three dimensions (`gridDim`).
    pub grid: Dim3,
    /// Threads per block, in up to three dimensions (`blockDim`).
    pub block: Dim3,
    /// Bytes of dynamic shared memory per block.
    pub shared_bytes: usize,
    /// A cooperative launch (`cuLaunchCooperativeKernel`): all blocks resident at once, so that
    /// `grid.sync()` is allowed.
    pub cooperative: bool,
}

impl LaunchConfig {
    /// A 1-D launch: `grid` blocks of `block` threads.
    pub fn linear(grid: u32, block: u32, shared_bytes: usize) -> Self {
        LaunchConfig { grid: Dim3::x(grid), block: Dim3::x(block), shared_bytes, cooperative: false }
    }
    /// The same launch, cooperative.
    pub fn cooperative(mut self) -> Self {
        self.cooperative = true;
        self
    }
}

/// Emulator settings. `Default` gives seed 1, race detection on, 16 resident blocks, 256 KiB stacks, a
/// 60 s bound.
#[derive(Clone, Debug)]
pub struct Options {
    /// Seed of the scheduler: the same seed replays the same interleaving.
    pub schedule_seed: u64,
    /// Run the race detector (slower: every access is recorded).
    pub detect_races: bool,
    /// Blocks resident at once. Normal launches run in waves of this many blocks; cooperative
    /// launches with more blocks are refused, as on a GPU.
    pub max_resident_blocks: u32,
    /// At a plain memory access, switch to another thread with probability `1/preempt_one_in`
    /// (0: never). Makes lost updates of racy read-modify-writes actually happen.
    pub preempt_one_in: u32,
    /// Polls (volatile/acquire loads, read-modify-writes that leave memory unchanged such as a failed
    /// compare-and-swap, sleeps) with no write anywhere, while every runnable thread polls, before the
    /// launch is reported as a livelock.
    pub poll_limit: u64,
    /// Stack of each emulated thread, in bytes (at least 16 KiB). A thread that needs more ends the
    /// launch with [`EmuError::StackOverflow`](crate::emu::EmuError::StackOverflow) when it next calls the emulator (any primitive or view
    /// access); one that overflows in its own code, onto the guard page below its stack, aborts the
    /// process with the same report on stderr.
    pub stack_bytes: usize,
    /// Wall-clock bound for one launch.
    pub time_limit: Duration,
    /// Distinct racy addresses reported in full (all are counted).
    pub max_race_reports: usize,
    /// Report ordering hazards (volatile accesses of shared memory that nothing orders, see
    /// [`Outcome::hazards`](crate::emu::Outcome::hazards)) as races, so that whatever fails on a race
    /// fails on them. Off by default: they are no data race under PTX.
    pub hazards_are_races: bool,
    /// Record every synchronisation site the launch executes ([`Outcome::sites`](crate::emu::Outcome::sites)),
    /// for mutation testing (see [`mutation_test`](crate::emu::mutation_test)).
    pub record_sites: bool,
    /// Run the launch with one synchronisation site removed or weakened (a *mutant*): see
    /// [`mutation_test`](crate::emu::mutation_test).
    pub mutation: Option<Mutation>,
    /// Races the program means to have (a flag several threads set to the same value, a statistic read
    /// while it changes): a race or ordering hazard one of these matches is counted against it in
    /// [`Outcome::accepted`](crate::emu::Outcome::accepted), not reported; a rule nothing matched is
    /// listed there too, with no address.
    pub accepted_races: Vec<AcceptedRace>,
}

/// A race declared intended: on a buffer (by the name reports give it: a [`Buffer`](crate::emu::Buffer)'s
/// name or a shared layout's field, e.g. `done` or `Scratch.flag`), and, optionally, where one of the
/// two accesses is made (`file:line`, matched as the end of the access's path and line, e.g.
/// `flags.rs:42`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcceptedRace {
    /// The buffer (or shared array) the race is on.
    pub buffer: String,
    /// `file:line` of one of the two accesses; `None` accepts every race on the buffer.
    pub site: Option<String>,
    /// Why the race is intended (shown with the count).
    pub why: String,
}

impl AcceptedRace {
    /// Every race on `buffer`, for the reason `why`.
    pub fn on(buffer: &str, why: &str) -> AcceptedRace {
        AcceptedRace { buffer: buffer.into(), site: None, why: why.into() }
    }
    /// Only races one of whose accesses is made at `site` (`file:line`, e.g. `flags.rs:42`).
    pub fn at(self, site: &str) -> AcceptedRace {
        AcceptedRace { site: Some(site.into()), ..self }
    }
    /// Whether this rule matches a race on `buffer` whose accesses are at `sites` (`path:line:column`).
    pub(crate) fn matches(&self, buffer: &str, sites: [&str; 2]) -> bool {
        if buffer != self.buffer {
            return false;
        }
        let Some(want) = &self.site else { return true };
        sites.iter().any(|s| {
            // `path:line:column` without the column, its end compared at a path boundary.
            let at = s.rsplit_once(':').map_or(*s, |(a, _)| a);
            at.strip_suffix(want.as_str()).is_some_and(|rest| rest.is_empty() || rest.ends_with('/'))
        })
    }
}

/// What a synchronisation site is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SiteKind {
    /// `sync_threads()` (`bar.sync 0`).
    BlockBarrier,
    /// `grid.sync()`.
    GridBarrier,
    /// `sync_warp(mask)` (`bar.warp.sync`).
    WarpBarrier,
    /// A fence (`fence.sc` / `membar`), of the scope recorded with the site.
    Fence,
    /// An atomic read-modify-write or reduction (`atom`, `red`).
    Atomic,
    /// A volatile load (`ld.volatile`).
    VolatileLoad,
    /// A volatile store (`st.volatile`).
    VolatileStore,
    /// An acquire load (`ld.acquire`).
    AcquireLoad,
    /// A release store (`st.release`).
    ReleaseStore,
}

/// How a mutant changes its site.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MutationKind {
    /// The barrier or fence is not executed.
    Skip,
    /// The fence's scope is one narrower (system to device, device to block).
    NarrowScope,
    /// The read-modify-write is a plain load and a plain store (the scheduler may switch threads
    /// between them).
    PlainReadModifyWrite,
    /// The volatile access is a plain one.
    Plain,
    /// The acquire load or release store is a relaxed (volatile) one: strong, but ordering nothing.
    Relaxed,
}

impl MutationKind {
    /// The mutants of a site of `kind` (and scope, for a fence).
    pub fn of(kind: SiteKind, scope: Option<crate::atomic::ScopeKind>) -> &'static [MutationKind] {
        use MutationKind::*;
        match kind {
            SiteKind::BlockBarrier | SiteKind::GridBarrier | SiteKind::WarpBarrier => &[Skip],
            SiteKind::Fence if scope == Some(crate::atomic::ScopeKind::Block) => &[Skip],
            SiteKind::Fence => &[Skip, NarrowScope],
            SiteKind::Atomic => &[PlainReadModifyWrite],
            SiteKind::VolatileLoad | SiteKind::VolatileStore => &[Plain],
            SiteKind::AcquireLoad | SiteKind::ReleaseStore => &[Relaxed],
        }
    }
    /// How a report names it.
    pub fn describe(self) -> &'static str {
        match self {
            MutationKind::Skip => "removed",
            MutationKind::NarrowScope => "scope narrowed",
            MutationKind::PlainReadModifyWrite => "made a plain load and store",
            MutationKind::Plain => "made plain",
            MutationKind::Relaxed => "made relaxed",
        }
    }
}

/// One mutant: the site (by source location and kind) and what is done to it, at every execution of
/// the site by any thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mutation {
    /// Source file of the site.
    pub file: &'static str,
    /// Line of the site.
    pub line: u32,
    /// Column of the site.
    pub column: u32,
    /// Which kind of site (a line may hold two).
    pub site: SiteKind,
    /// What is done to it.
    pub kind: MutationKind,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            schedule_seed: 1,
            detect_races: true,
            max_resident_blocks: 16,
            preempt_one_in: 4,
            poll_limit: 200_000,
            stack_bytes: 256 * 1024,
            time_limit: Duration::from_secs(60),
            max_race_reports: 16,
            hazards_are_races: false,
            record_sites: false,
            mutation: None,
            accepted_races: Vec::new(),
        }
    }
}
