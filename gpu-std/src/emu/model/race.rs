//! The race test: the record one element (or range of bytes) keeps of its accesses, checked at every new access
//! against the accessing thread's happens-before knowledge (see `clock`). Why a race is one is in
//! `explain`.
//!
//! Access `a` (by thread A) happens before access `b` (by thread B) when A == B (program order), a
//! grid barrier lies between them, A and B share a block and a block barrier lies between them, or B
//! knows `a` through its clocks: a release→acquire edge inside the scope of every operation that made
//! it, a warp barrier, or a chain of these and barriers.
//!
//! Two accesses *conflict* when at least one writes, nothing orders them, and they are not both
//! strong (atomic, volatile, acquire, release) and *morally strong*: strong accesses conflict only when
//! one is block-scoped (`.cta`) and the threads are in different blocks, or, between a GPU thread and
//! the host agent (see `topology`), when one is not system-scoped (`.sys`).
//!
//! The record is exact, whatever the number of accesses (FastTrack-style): the last plain write; the
//! last plain read as one epoch while each read is ordered after the one before, widened to the last
//! read of each thread when reads are concurrent; and the last strong access of each thread per class
//! (writes or not, block scope or not). A plain write resets the record: every older access is ordered
//! before it or races with it (and is reported), and an access that conflicts with an older one without
//! being ordered after it conflicts with the write in the same way. So every address that has a race
//! is reported, at the access that completes its first race.

use super::clock::{Knows, SyncSet, wide};
use super::int_map::IntMap;
use super::kind::Kind;
use super::topology::{HOST_BLOCK, HOST_GID, Topology};
use crate::Site;
use crate::atomic::ScopeKind;

/// Kind code of an empty epoch.
const NONE: u32 = 0;
/// Kind code of a read epoch whose reads are kept per thread (in the record's extension).
const PER_THREAD_READS: u32 = 0xff;
/// Largest grid interval an epoch holds (grid barriers beyond it compare as equal).
const GRID_MAX: u32 = (1 << 24) - 1;

/// One access, as the record keeps it (24 bytes): who, where in its thread's synchronisation history
/// (release count, block and grid intervals), what kind, and the source line.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Epoch {
    site: Option<Site>,
    pub gid: u32,
    pub rel: u32,
    pub bar: u32,
    /// Grid interval (bits 8..32) and kind code (bits 0..8).
    grid_kind: u32,
}

impl Epoch {
    pub fn new(site: Site, gid: u32, rel: u32, bar: u32, grid: u32, kind: Kind) -> Self {
        Epoch { site: Some(site), gid, rel, bar, grid_kind: grid.min(GRID_MAX) << 8 | kind.code() }
    }
    fn code(&self) -> u32 {
        self.grid_kind & 0xff
    }
    fn is_none(&self) -> bool {
        self.code() == NONE
    }
    pub fn kind(&self) -> Kind {
        Kind::from_code(self.code())
    }
    pub fn grid(&self) -> u32 {
        self.grid_kind >> 8
    }
    pub fn site(&self) -> Site {
        self.site.expect("a recorded access has a site")
    }
}

/// The thread making the current access, as the happens-before test needs it.
pub(crate) struct Cur<'a> {
    pub x: Epoch,
    pub kind: Kind,
    /// Linear index of the thread's block.
    pub block: u32,
    pub block_threads: u32,
    pub knows: Knows<'a>,
    /// The launch's shape: which scopes include which threads.
    pub topo: &'a Topology,
    /// Whether to look for an ordering hazard (see [`Slot::access`]).
    pub hazards: bool,
}

impl Cur<'_> {
    pub fn block_of(&self, e: &Epoch) -> u32 {
        if e.gid == HOST_GID { HOST_BLOCK } else { e.gid / self.block_threads }
    }
    /// Whether `e` or the current access is the host agent's, or the two are on different GPUs (a
    /// two-device launch): only system scope includes both sides.
    pub(super) fn with_host(&self, e: &Epoch) -> bool {
        self.topo.only_system_between(self.block_of(e), self.block)
    }
    /// Whether `e` happens before the current access.
    #[inline]
    fn ordered(&self, e: &Epoch) -> bool {
        if e.gid == self.x.gid || e.grid() < self.x.grid() {
            return true;
        }
        let eb = self.block_of(e);
        (eb == self.block && e.bar < self.x.bar) || self.knows.covers(e.gid, e.rel, eb, e.bar)
    }
    /// Whether `e` happens before the current access without lock handoffs (see `predict`).
    fn ordered_without_locks(&self, e: &Epoch) -> bool {
        if e.gid == self.x.gid || e.grid() < self.x.grid() {
            return true;
        }
        let eb = self.block_of(e);
        (eb == self.block && e.bar < self.x.bar) || self.knows.covers_without_locks(e.gid, e.rel, eb, e.bar)
    }
    /// Whether `e` conflicts with the current access in another order of taking a lock.
    fn conflicts_without_locks(&self, e: &Epoch) -> bool {
        let ek = e.kind();
        (ek.writes() || self.kind.writes())
            && !(ek.strong() && self.kind.strong() && self.morally_strong(e))
            && !self.ordered_without_locks(e)
    }
    /// Strong accesses by threads inside each other's scopes.
    fn morally_strong(&self, e: &Epoch) -> bool {
        if self.with_host(e) && e.gid != self.x.gid {
            return e.kind().scope() == ScopeKind::System && self.kind.scope() == ScopeKind::System;
        }
        (wide(e.kind().scope()) && wide(self.kind.scope())) || self.block_of(e) == self.block
    }
    #[inline]
    fn conflicts(&self, e: &Epoch) -> bool {
        let ek = e.kind();
        (ek.writes() || self.kind.writes())
            && !(ek.strong() && self.kind.strong() && self.morally_strong(e))
            && !self.ordered(e)
    }
}

/// What is common to a record's strong accesses, to skip scanning them when no conflict is possible.
#[derive(Clone, Copy, Debug, Default)]
struct StrongSummary {
    /// The block of every entry, unless `multi`.
    block: u32,
    multi: bool,
    bar_max: u32,
    grid_max: u32,
    /// Some entry is block-scoped.
    narrow: bool,
    /// Some entry writes.
    writes: bool,
    /// Some entry is the host agent's.
    host: bool,
}

impl StrongSummary {
    fn add(&mut self, cur: &Cur<'_>, first: bool) {
        let (x, k) = (&cur.x, cur.kind);
        if first {
            *self = StrongSummary {
                block: cur.block,
                multi: false,
                bar_max: x.bar,
                grid_max: x.grid(),
                narrow: !wide(k.scope()),
                writes: k.writes(),
                host: x.gid == HOST_GID,
            };
        } else {
            self.multi |= self.block != cur.block;
            self.bar_max = self.bar_max.max(x.bar);
            self.grid_max = self.grid_max.max(x.grid());
            self.narrow |= !wide(k.scope());
            self.writes |= k.writes();
            self.host |= x.gid == HOST_GID;
        }
    }
    /// Whether some entry may conflict with the current access.
    fn may_conflict(&self, cur: &Cur<'_>) -> bool {
        let k = cur.kind;
        if !k.writes() && !self.writes {
            return false;
        }
        let one_block = !self.multi;
        if self.host || cur.x.gid == HOST_GID || cur.topo.two_devices() {
            // Scopes between the host and GPU threads, or between two GPUs, are checked entry by entry.
            return true;
        }
        if k.strong() {
            // Only a block scope across blocks makes strong accesses conflict.
            let other_blocks = !one_block || self.block != cur.block;
            if !(other_blocks && (!wide(k.scope()) || self.narrow)) {
                return false;
            }
        }
        let all_ordered = self.grid_max < cur.x.grid()
            || (one_block && self.block == cur.block && self.bar_max < cur.x.bar)
            || (one_block && cur.knows.covers_block(self.block, self.bar_max));
        !all_ordered
    }
}

/// The parts of a record that most addresses never need.
#[derive(Clone, Debug, Default)]
struct Ext {
    /// Last plain read per thread, while reads are concurrent.
    reads: IntMap<u32, Epoch>,
    /// Last strong access per thread and class (see [`strong_key`]).
    strong: IntMap<u64, Epoch>,
    summary: StrongSummary,
    /// What releasing stores to this address published.
    sync: Option<SyncSet>,
    /// The strong writes of this address that later reads observe, for the same-location rule
    /// (boxed: most addresses with an extension have only plain reads).
    chain: Option<Box<Chain>>,
}

/// The same-location rule of causality order: "X precedes Z in observation order, Z precedes Y in
/// base causality order, and X and Y overlap" orders X before Y. Here X is a strong write of this
/// address, Z a strong read of it (a load, or a read-modify-write) that observes X — it reads X's
/// value, or a later read-modify-write's of X's chain — and Y a later access of the same thread
/// to this address. Each strong write gets a sequence number; a read-modify-write continues the
/// chain, any other strong store starts a new one (later reads observe it, not what came before
/// it). A read records the chain it observed (`[start, len)`), and a strong write of a thread whose
/// last write in the chain lies inside it is ordered before that thread's later accesses here.
#[derive(Clone, Debug, Default)]
struct Chain {
    /// Sequence number of the first write of the current chain, and of the next write.
    start: u32,
    len: u32,
    /// The sequence number of each thread's last strong write (by global rank).
    last: IntMap<u32, u32>,
    /// The part of the chain each thread's last strong read observed.
    observed: IntMap<u32, (u32, u32)>,
}

impl Chain {
    /// Whether strong write `e` is ordered before the later accesses of thread `gid` by the
    /// same-location rule.
    fn orders(&self, e: &Epoch, gid: u32) -> bool {
        e.kind().strong()
            && e.kind().writes()
            && match (self.last.get(&e.gid), self.observed.get(&gid)) {
                (Some(&seq), Some(&(start, end))) => seq >= start && seq < end,
                _ => false,
            }
    }
    /// A strong access of `kind` by thread `gid`: it observes the chain (if it reads), then extends
    /// it (a read-modify-write) or starts a new one (a store).
    fn record(&mut self, gid: u32, kind: Kind) {
        if kind.observes() {
            self.observed.insert(gid, (self.start, self.len));
        }
        if kind.writes() {
            if !matches!(kind, Kind::Atomic(_)) {
                self.start = self.len;
            }
            self.last.insert(gid, self.len);
            self.len += 1;
        }
    }
    fn bytes(&self) -> usize {
        self.last.capacity() * (size_of::<(u32, u32)>() + 1)
            + self.observed.capacity() * (size_of::<(u32, (u32, u32))>() + 1)
    }
}

fn strong_key(x: &Epoch, k: Kind) -> u64 {
    (x.gid as u64) << 2 | (wide(k.scope()) as u64) << 1 | k.writes() as u64
}

// The sizes the shadow-memory budget is built on.
const _: () = assert!(size_of::<Epoch>() == 24 && size_of::<Slot>() == 56);

/// The race detector's record of one range of bytes (an element, or a part of one that a narrower
/// access also touched): 56 bytes, more only for ranges with concurrent reads, strong accesses or
/// releases.
#[derive(Clone, Debug, Default)]
pub(crate) struct Slot {
    /// Last plain write.
    write: Epoch,
    /// Last plain read, or `PER_THREAD_READS`.
    read: Epoch,
    ext: Option<Box<Ext>>,
}

impl Slot {
    /// Whether no access was ever recorded here.
    pub fn is_untouched(&self) -> bool {
        self.write.is_none() && self.read.is_none() && self.ext.is_none()
    }

    /// What releasing stores to this address published.
    pub fn sync(&self) -> Option<&SyncSet> {
        self.ext.as_ref().and_then(|e| e.sync.as_ref())
    }

    /// The publications of this address, to update.
    pub fn sync_mut(&mut self) -> &mut Option<SyncSet> {
        &mut self.ext.get_or_insert_with(Default::default).sync
    }

    /// A plain store: the address no longer carries a release.
    pub fn end_release_sequence(&mut self) {
        if let Some(e) = &mut self.ext {
            e.sync = None;
        }
    }

    /// Drops the extension when it holds nothing.
    pub fn tidy(&mut self) {
        if self.ext.as_ref().is_some_and(|e| e.reads.is_empty() && e.strong.is_empty() && e.sync.is_none()) {
            self.ext = None;
        }
    }

    /// Heap bytes held beyond the slot itself.
    pub fn heap_bytes(&self) -> usize {
        self.ext.as_ref().map_or(0, |e| {
            size_of::<Ext>()
                + e.reads.capacity() * (size_of::<(u32, Epoch)>() + 1)
                + e.strong.capacity() * (size_of::<(u64, Epoch)>() + 1)
                + e.sync.as_ref().map_or(0, SyncSet::bytes)
                + e.chain.as_ref().map_or(0, |c| size_of::<Chain>() + c.bytes())
        })
    }

    /// Checks the current access against the record, then records it. Returns an earlier access it
    /// races with, if any, and whether the race is only predicted (another order of taking a lock
    /// leaves the two unordered; see `predict`).
    ///
    /// Also returns, when `cur.hazards` is set and no race was found, an *ordering hazard*: an
    /// earlier volatile access of another thread that conflicts with this volatile access and that
    /// causality order does not order before it. Two volatile accesses are strong and morally strong,
    /// so no data race, but which value a read sees depends on the schedule (the warp-synchronous
    /// reduction over volatile shared memory without `__syncwarp()`). Read-modify-writes, acquires
    /// and releases are never hazards: their disorder is what counters, tickets and locks are for.
    pub fn access(&mut self, cur: &Cur<'_>) -> (Option<(Epoch, bool)>, Option<Epoch>) {
        let found = self.check(cur, false).map(|e| (e, false));
        let found = match found {
            None if cur.knows.nolock.is_some() => self.check(cur, true).map(|e| (e, true)),
            f => f,
        };
        let hazard = if found.is_none() && cur.hazards { self.hazard(cur) } else { None };
        self.record(cur);
        (found, hazard)
    }

    /// The earlier volatile access that makes the current one an ordering hazard, if any.
    #[cold]
    fn hazard(&self, cur: &Cur<'_>) -> Option<Epoch> {
        let volatile = |k: Kind| matches!(k, Kind::VolatileRead | Kind::VolatileWrite);
        if !volatile(cur.kind) {
            return None;
        }
        let ext = self.ext.as_ref()?;
        ext.strong
            .values()
            .find(|e| {
                volatile(e.kind()) && (e.kind().writes() || cur.kind.writes()) && e.gid != cur.x.gid && !cur.ordered(e)
            })
            .copied()
    }

    /// The first recorded access that conflicts with the current one (`predicting`: in another order
    /// of taking a lock).
    #[inline]
    fn check(&self, cur: &Cur<'_>, predicting: bool) -> Option<Epoch> {
        let conflicts = if predicting { Cur::conflicts_without_locks } else { Cur::conflicts };
        let mut found = None;
        if !self.write.is_none() && conflicts(cur, &self.write) {
            found = Some(self.write);
        }
        if found.is_none() && cur.kind.writes() {
            if self.read.code() == PER_THREAD_READS {
                let ext = self.ext.as_ref().expect("per-thread reads live in the extension");
                found = ext.reads.values().find(|e| conflicts(cur, e)).copied();
            } else if !self.read.is_none() && conflicts(cur, &self.read) {
                found = Some(self.read);
            }
        }
        // The summary skips strong entries that cannot conflict (it knows nothing of locks: strong
        // entries are all checked when predicting).
        if found.is_none()
            && let Some(ext) = &self.ext
            && !ext.strong.is_empty()
            && (predicting || ext.summary.may_conflict(cur))
        {
            let gid = cur.x.gid;
            let ordered = |e: &Epoch| ext.chain.as_ref().is_some_and(|c| c.orders(e, gid));
            found = ext.strong.values().find(|e| conflicts(cur, e) && !ordered(e)).copied();
        }
        found
    }

    fn record(&mut self, cur: &Cur<'_>) {
        let x = cur.x;
        match cur.kind {
            Kind::Write => {
                // Everything recorded is ordered before this write, or raced with it (and is reported):
                // whatever conflicts with an older access and is not ordered after it, conflicts with
                // this write and is not ordered after it either.
                self.write = x;
                self.read = Epoch::default();
                if let Some(ext) = &mut self.ext {
                    ext.reads = Default::default();
                    ext.strong = Default::default();
                    ext.chain = None;
                }
            }
            Kind::Read => self.record_read(cur),
            k => {
                let ext = self.ext.get_or_insert_with(Default::default);
                ext.summary.add(cur, ext.strong.is_empty());
                ext.strong.insert(strong_key(&x, k), x);
                ext.chain.get_or_insert_with(Default::default).record(x.gid, k);
            }
        }
    }

    fn record_read(&mut self, cur: &Cur<'_>) {
        let x = cur.x;
        let old = self.read;
        if old.code() == PER_THREAD_READS {
            self.ext.as_mut().expect("per-thread reads live in the extension").reads.insert(x.gid, x);
        } else if old.is_none()
            || old.gid == x.gid
            || if cur.knows.nolock.is_some() { cur.ordered_without_locks(&old) } else { cur.ordered(&old) }
        {
            // A later read that the older one happens before stands for both (without lock
            // handoffs, where the prediction needs the older one: see `predict`).
            self.read = x;
        } else {
            let ext = self.ext.get_or_insert_with(Default::default);
            ext.reads.insert(old.gid, old);
            ext.reads.insert(x.gid, x);
            self.read = Epoch { grid_kind: PER_THREAD_READS, ..Epoch::default() };
        }
    }
}
