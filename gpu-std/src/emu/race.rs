//! The race detector: a shadow record per accessed address, and a happens-before test built from
//! barrier intervals plus sparse vector clocks for release/acquire edges.
//!
//! Access `a` (by thread A) happens before access `b` (by thread B) when:
//! - A == B (program order), or
//! - a grid barrier lies between them (`a.grid_interval < B's grid interval`), or
//! - A and B share a block and a block barrier lies between them, or
//! - B acquired, directly or transitively, a release that A made after `a`: a fence followed by a
//!   store/atomic to a flag (or a `store_release`), observed by B through a volatile/atomic load
//!   followed by a fence (or a `load_acquire`). Warp barriers (`sync_warp`) are modelled the same
//!   way among their lanes.
//!
//! Two accesses *conflict* when at least one writes and not both are atomic/volatile/acquire/release
//! ("strong" in the PTX memory model), or when both are atomics and one is block-scoped while the
//! threads are in different blocks.

use super::report::{AccessInfo, Race, ThreadId};
use crate::Site;
use crate::atomic::{ScopeKind, SpaceKind};
use std::collections::HashMap;
use std::rc::Rc;

/// Sparse vector clock. Keys: a thread's global rank → the release epoch of that thread known;
/// `BLOCK_KEY | block` → the block-barrier interval of that block known (everything its threads did
/// before that many barriers); `GRID_KEY` → grid barriers known.
pub(crate) type Clock = HashMap<u64, u32>;
pub(crate) const BLOCK_KEY: u64 = 1 << 32;
pub(crate) const GRID_KEY: u64 = 1 << 33;

pub(crate) fn join(into: &mut Clock, from: &Clock) {
    for (&k, &v) in from {
        let e = into.entry(k).or_insert(0);
        if *e < v {
            *e = v;
        }
    }
}

/// Synchronisation state of one thread.
#[derive(Default)]
pub(crate) struct ThreadClock {
    /// Release epoch: incremented by every fence / release; accesses record the current value.
    pub rel: u32,
    /// Releases of other threads this thread has acquired.
    pub acq: Clock,
    /// Releases observed by strong loads, acquired at this thread's next fence.
    pub pending: Clock,
    /// What a store after this thread's last fence publishes.
    pub fence_snap: Option<Rc<Clock>>,
}

/// Where a thread stands: identity and barrier intervals.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pos {
    pub gid: u32,
    pub block: u32,
    pub bepoch: u32,
    pub gepoch: u32,
}

impl ThreadClock {
    /// A release by the thread at `p`: everything it did before now, and everything ordered before that
    /// (its block's earlier barrier intervals, earlier grid intervals, what it acquired), becomes
    /// visible to whoever acquires the snapshot.
    pub fn release(&mut self, p: Pos) -> Rc<Clock> {
        self.rel += 1;
        let mut snap = self.acq.clone();
        snap.insert(p.gid as u64, self.rel);
        let bk = snap.entry(BLOCK_KEY | p.block as u64).or_insert(0);
        *bk = (*bk).max(p.bepoch);
        let gk = snap.entry(GRID_KEY).or_insert(0);
        *gk = (*gk).max(p.gepoch);
        Rc::new(snap)
    }
    /// A fence: acquires what earlier strong loads observed, and releases.
    pub fn fence(&mut self, p: Pos) {
        let pending = std::mem::take(&mut self.pending);
        join(&mut self.acq, &pending);
        self.fence_snap = Some(self.release(p));
    }
}

/// How an access touched memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
    VolatileRead,
    VolatileWrite,
    Atomic(ScopeKind),
    AcquireLoad,
    ReleaseStore,
}

impl Kind {
    fn writes(self) -> bool {
        matches!(self, Kind::Write | Kind::VolatileWrite | Kind::Atomic(_) | Kind::ReleaseStore)
    }
    fn strong(self) -> bool {
        !matches!(self, Kind::Read | Kind::Write)
    }
    fn name(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::VolatileRead => "volatile read",
            Kind::VolatileWrite => "volatile write",
            Kind::Atomic(ScopeKind::Block) => "atomic (block)",
            Kind::Atomic(ScopeKind::Device) => "atomic",
            Kind::Atomic(ScopeKind::System) => "atomic (system)",
            Kind::AcquireLoad => "acquire load",
            Kind::ReleaseStore => "release store",
        }
    }
}

/// One recorded access.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Acc {
    pub gid: u32,
    pub who: ThreadId,
    pub block: u32,
    pub bepoch: u32,
    pub gepoch: u32,
    pub rel: u32,
    pub kind: Kind,
    pub site: Site,
}

/// The thread making the current access, as the happens-before test needs it.
pub(crate) struct Current<'a> {
    pub acc: Acc,
    pub clock: &'a ThreadClock,
}

fn ordered(a: &Acc, cur: &Current<'_>) -> bool {
    let b = &cur.acc;
    let acq = &cur.clock.acq;
    a.gid == b.gid
        || a.gepoch < b.gepoch
        || (a.block == b.block && a.bepoch < b.bepoch)
        || (!acq.is_empty()
            && (acq.get(&(a.gid as u64)).is_some_and(|&e| e > a.rel)
                || acq.get(&(BLOCK_KEY | a.block as u64)).is_some_and(|&e| e > a.bepoch)
                || acq.get(&GRID_KEY).is_some_and(|&e| e > a.gepoch)))
}

/// Why two accesses conflict, or `None`.
fn conflict(a: &Acc, cur: &Current<'_>) -> Option<String> {
    let b = &cur.acc;
    if !(a.kind.writes() || b.kind.writes()) || ordered(a, cur) {
        return None;
    }
    if a.kind.strong() && b.kind.strong() {
        let block_scoped =
            matches!(a.kind, Kind::Atomic(ScopeKind::Block)) || matches!(b.kind, Kind::Atomic(ScopeKind::Block));
        if block_scoped && a.block != b.block {
            return Some(
                "a block-scoped atomic (.cta) is atomic only among threads of one block, and these threads are in \
                 different blocks: use device scope"
                    .into(),
            );
        }
        return None;
    }
    Some(if a.gepoch != b.gepoch || a.block != b.block {
        if a.block != b.block {
            "different blocks, and no grid barrier or release/acquire edge between the accesses".into()
        } else {
            "no barrier or release/acquire edge between the accesses".into()
        }
    } else {
        format!("same block, same barrier interval ({}): no __syncthreads() between the accesses", a.bepoch)
    })
}

const KEEP: usize = 64;

/// Shadow of one address.
#[derive(Default)]
pub(crate) struct Cell {
    write: Option<Acc>,
    reads: Vec<Acc>,
    atomics: Vec<Acc>,
    /// What the last releasing store to this address published.
    pub sync: Option<Rc<Clock>>,
}

fn push_access(v: &mut Vec<Acc>, a: Acc) {
    if let Some(slot) = v.iter_mut().find(|x| x.gid == a.gid) {
        *slot = a;
    } else {
        if v.len() >= KEEP {
            v.remove(0);
        }
        v.push(a);
    }
}

impl Cell {
    /// Checks `cur` against the history, then records it. Returns the first conflict found.
    pub fn access(&mut self, cur: &Current<'_>) -> Option<(Acc, String)> {
        let mut found = None;
        let mut check = |a: &Acc| {
            if found.is_none()
                && let Some(why) = conflict(a, cur)
            {
                found = Some((*a, why));
            }
        };
        if let Some(w) = &self.write {
            check(w);
        }
        if cur.acc.kind.writes() {
            self.reads.iter().for_each(&mut check);
        }
        self.atomics.iter().for_each(&mut check);
        let a = cur.acc;
        match a.kind {
            Kind::Read | Kind::VolatileRead | Kind::AcquireLoad => push_access(&mut self.reads, a),
            Kind::Atomic(_) => push_access(&mut self.atomics, a),
            Kind::Write | Kind::VolatileWrite | Kind::ReleaseStore => {
                self.write = Some(a);
                self.reads.clear();
                self.atomics.clear();
            }
        }
        found
    }
}

/// Where a racy address lives, for the report.
pub(crate) struct Place {
    pub space: SpaceKind,
    pub addr: usize,
    pub size: usize,
    /// Base of the block's shared memory (shared space only).
    pub shared_base: usize,
}

/// Races found in one launch.
pub(crate) struct Findings {
    kernel: String,
    /// Races reported in full (all racy addresses are counted).
    max: usize,
    pub races: Vec<Race>,
    pub racy_addresses: usize,
    reported: std::collections::HashSet<(u8, usize, u32)>,
}

impl Findings {
    pub fn new(kernel: &str, max: usize) -> Self {
        Findings { kernel: kernel.to_string(), max, races: vec![], racy_addresses: 0, reported: Default::default() }
    }

    /// Records the race between `first` and `second` at `place` (once per address and block).
    pub fn record(&mut self, place: &Place, block: u32, first: Acc, second: Acc, why: String) {
        // Shared addresses are per block; key them by block too.
        let key = match place.space {
            SpaceKind::Global => (0u8, place.addr, 0),
            SpaceKind::Shared => (1u8, place.addr - place.shared_base, block),
        };
        if !self.reported.insert(key) {
            return;
        }
        self.racy_addresses += 1;
        if self.races.len() >= self.max {
            return;
        }
        let (buffer, index) = match place.space {
            SpaceKind::Shared => ("shared".to_string(), (place.addr - place.shared_base) / place.size.max(1)),
            SpaceKind::Global => super::buffer::describe(place.addr, place.size),
        };
        let info = |a: Acc| AccessInfo {
            thread: a.who,
            kind: a.kind.name(),
            site: format!("{}:{}:{}", a.site.file(), a.site.line(), a.site.column()),
            barrier_interval: a.bepoch,
            grid_interval: a.gepoch,
        };
        self.races.push(Race {
            kernel: self.kernel.clone(),
            space: place.space,
            buffer,
            index,
            first: info(first),
            second: info(second),
            why,
        });
    }
}
