//! Happens-before knowledge of the race detector: sparse vector clocks, what each thread and each
//! block has acquired, and what a release publishes — with the scope of every fence and
//! release/acquire operation.
//!
//! A clock has two kinds of component. `thread_key(g)` holds a release count of thread `g`: knowing
//! `n` means knowing every access that thread made before its `n`-th release (fence, release store,
//! warp barrier). `block_key(b)` holds a block-barrier count of block `b`: knowing `n` means knowing
//! every access of every thread of that block made before the block's `n`-th barrier. A block barrier
//! is therefore one component, not a join per thread; the grid barrier needs none at all (every thread
//! of a cooperative launch passes it together, so each access records its grid interval instead).
//!
//! Scopes: a release→acquire edge exists only between threads inside the scope of every operation
//! that makes it — the release fence or release store, the flag store, the flag load, the acquire fence
//! or acquire load. `.cta` covers the threads of one block; `.gpu` every thread of a launch; `.sys`
//! also the host agent (see `topology`), so an edge between a GPU thread and the host needs system
//! scope throughout.
//! Edges that a block scope cut are kept aside as a *hint* (with the reasons), so that a race report can
//! say which scope was used and which was needed.

use super::int_map::IntMap;
use super::kind::Kind;
use super::lock::{Edge, Held};
use super::topology::Topology;
use crate::atomic::ScopeKind;
use std::rc::Rc;

const BLOCK_KEY: u64 = 1 << 32;

/// The clock component of thread `gid` (global rank).
pub(crate) fn thread_key(gid: u32) -> u64 {
    gid as u64
}

/// The clock component of the barriers of block `block` (linear index).
pub(crate) fn block_key(block: u32) -> u64 {
    BLOCK_KEY | block as u64
}

/// Sparse vector clock (see the module docs for its components).
#[derive(Clone, Default, Debug)]
pub(crate) struct Clock(IntMap<u64, u32>);

impl Clock {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn clear(&mut self) {
        self.0.clear()
    }
    fn get(&self, k: u64) -> u32 {
        self.0.get(&k).copied().unwrap_or(0)
    }
    pub fn raise(&mut self, k: u64, v: u32) {
        let e = self.0.entry(k).or_insert(0);
        *e = (*e).max(v);
    }
    pub fn join(&mut self, other: &Clock) {
        for (&k, &v) in &other.0 {
            self.raise(k, v);
        }
    }
    /// Whether this knowledge covers an access made by thread `gid` of block `block` with release
    /// count `rel` after `bar` barriers of its block.
    pub fn covers(&self, gid: u32, rel: u32, block: u32, bar: u32) -> bool {
        !self.0.is_empty() && (self.get(thread_key(gid)) > rel || self.get(block_key(block)) > bar)
    }
    /// Whether this knowledge covers every access of block `block` made before its barrier `bar + 1`.
    pub fn covers_block(&self, block: u32, bar: u32) -> bool {
        !self.0.is_empty() && self.get(block_key(block)) > bar
    }
}

/// Whether an operation at `scope` reaches threads of other blocks (`.gpu`, `.sys`) rather than only
/// its own block (`.cta`).
pub(crate) fn wide(scope: ScopeKind) -> bool {
    scope != ScopeKind::Block
}

/// Why a release→acquire edge did not form: each bit names one block-scope operation of the pattern
/// (or a missing acquire); the same bits shifted by [`cut::DEVICE`] name a device-scope operation of
/// a pattern between a GPU thread and the host agent, which needs system scope.
pub(crate) mod cut {
    /// The set of reasons.
    pub type Why = u16;
    /// Shift of the bits that name a device-scope (`.gpu`) operation where system scope was needed.
    pub const DEVICE: u32 = 8;
    /// The release fence before the flag store was `fence.sc.cta` (`__threadfence_block`).
    pub const REL_FENCE: Why = 1;
    /// The release store was `st.release.cta`.
    pub const REL_STORE: Why = 2;
    /// The flag (or lock) was written by a block-scope atomic.
    pub const FLAG_WRITE: Why = 4;
    /// The flag (or lock) was read by a block-scope atomic.
    pub const FLAG_READ: Why = 8;
    /// The acquire load was `ld.acquire.cta`.
    pub const ACQ_LOAD: Why = 16;
    /// The acquire fence after the flag load was `fence.sc.cta`.
    pub const ACQ_FENCE: Why = 32;
    /// The flag was observed, but no fence followed the load.
    pub const NO_ACQ_FENCE: Why = 64;
    /// With [`NO_ACQ_FENCE`]: the access that observed it was a read-modify-write (a lock's
    /// compare-and-swap or exchange), not a load.
    pub const BY_RMW: Why = 128;
}

/// Edges that were cut (by a block scope, or by a missing acquire fence), and why.
#[derive(Clone, Default, Debug)]
pub(crate) struct Hint {
    pub clock: Clock,
    pub why: cut::Why,
}

fn add_hint(h: &mut Option<Box<Hint>>, clock: &Clock, why: cut::Why) {
    let h = h.get_or_insert_with(Default::default);
    h.clock.join(clock);
    h.why |= why;
}

fn join_hint(into: &mut Option<Box<Hint>>, from: Option<Box<Hint>>) {
    if let Some(f) = from {
        match into {
            None => *into = Some(f),
            Some(h) => {
                h.clock.join(&f.clock);
                h.why |= f.why;
            }
        }
    }
}

/// Where a thread stands, as a release records it: identity, block and block-barrier interval.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pos {
    pub gid: u32,
    pub block: u32,
    pub bepoch: u32,
}

/// One release, as published through a flag: its knowledge, the releasing block, and whether every
/// operation on the release side was at device or system scope (`wide`) or some was block-scoped.
#[derive(Clone, Debug)]
struct Published {
    block: u32,
    wide: bool,
    /// Every operation on the release side was at system scope (reaches the host agent).
    sys: bool,
    /// [`cut`] bits of the block-scoped (and device-scoped) operations on the release side.
    why: cut::Why,
    clock: Rc<Clock>,
}

/// The [`cut`] bit `bit` for an operation at `scope`: the bit itself for block scope, the shifted bit
/// for device scope, none for system scope.
fn scope_cut(scope: ScopeKind, bit: cut::Why) -> cut::Why {
    match scope {
        ScopeKind::Block => bit,
        ScopeKind::Device => bit << cut::DEVICE,
        ScopeKind::System => 0,
    }
}

/// The block-scope bits of `why` (those that cut an edge between GPU threads).
fn block_bits(why: cut::Why) -> cut::Why {
    why & ((1 << cut::DEVICE) - 1)
}

/// What the stores to one address published, per releasing block and scope class. Read-modify-writes
/// extend the release sequence (their releases join the set); other stores replace it.
#[derive(Clone, Default, Debug)]
pub(crate) struct SyncSet {
    items: Vec<Published>,
}

impl SyncSet {
    fn add(&mut self, p: Published) {
        match self.items.iter_mut().find(|q| q.block == p.block && q.wide == p.wide && q.sys == p.sys) {
            Some(q) => {
                if !Rc::ptr_eq(&q.clock, &p.clock) {
                    Rc::make_mut(&mut q.clock).join(&p.clock);
                }
                q.why |= p.why;
            }
            None => self.items.push(p),
        }
    }
    /// Heap bytes held (for the shadow-memory total).
    pub fn bytes(&self) -> usize {
        self.items.capacity() * size_of::<Published>()
    }
}

/// Fence-SC order, as far as one group of threads sees it: the releases of the `fence.sc`
/// operations (every fence of this crate is one) executed so far that a later fence of the group is
/// morally strong with. PTX orders every pair of morally strong `fence.sc` in Fence-SC order, and
/// the earlier synchronizes with the later; the order the emulator executes them in is one such
/// order (it cannot contradict causality: the execution happened). `free` holds the releases of
/// fences made outside every critical section: the handoffs of a lock reorder the fences inside its
/// sections, so those edges are not part of what a thread knows without lock handoffs (see
/// `predict`).
#[derive(Clone, Default, Debug)]
pub(crate) struct FenceOrder {
    all: Clock,
    free: Clock,
}

impl FenceOrder {
    /// A fence released `snap`; `free`: outside every critical section.
    pub fn add(&mut self, snap: &Clock, free: bool) {
        self.all.join(snap);
        if free {
            self.free.join(snap);
        }
    }
    /// At a completed grid barrier: everything before it is ordered anyway.
    pub fn clear(&mut self) {
        self.all.clear();
        self.free.clear();
    }
    /// Bytes held (for the shadow-memory total).
    pub fn bytes(&self) -> usize {
        (self.all.0.capacity() + self.free.0.capacity()) * (size_of::<(u64, u32)>() + 1)
    }
}

/// What a block's threads acquired as a whole: everything a thread had acquired when it passed a
/// block barrier is known to every thread of the block after it.
#[derive(Default, Debug)]
pub(crate) struct BlockClock {
    acq: Clock,
    hint: Option<Box<Hint>>,
}

impl BlockClock {
    /// At a completed block barrier: takes over what thread `t` acquired (and its hints).
    pub fn absorb(&mut self, t: &mut ThreadClock) {
        // The block's knowledge does not tell handoffs apart: prediction stops at a barrier.
        t.pred = None;
        if !t.acq.is_empty() {
            self.acq.join(&t.acq);
            t.acq.clear();
        }
        join_hint(&mut self.hint, t.hint.take());
        // An observed release that no fence acquired before the barrier: not an edge, but a hint.
        let no_fence = cut::NO_ACQ_FENCE | if t.pending_rmw { cut::BY_RMW } else { 0 };
        for p in [&t.pending_local, &t.pending_wide, &t.pending_sys] {
            if !p.is_empty() {
                add_hint(&mut self.hint, p, no_fence);
            }
        }
    }
    /// At a completed grid barrier: everything known was before it, which grid intervals order.
    pub fn clear(&mut self) {
        self.acq.clear();
        self.hint = None;
    }
}

/// Synchronisation state of one thread.
#[derive(Default, Debug)]
pub(crate) struct ThreadClock {
    /// Release count: incremented by every release (fence, release store, warp barrier); accesses
    /// record the current value.
    pub rel: u32,
    /// Releases of other threads this thread acquired (since its block's last barrier).
    acq: Clock,
    /// Releases observed by strong loads from the thread's own block, acquired at its next fence.
    pending_local: Clock,
    /// Releases observed from other blocks (device or system scope throughout), acquired at its next
    /// device- or system-scope fence.
    pending_wide: Clock,
    /// Releases observed from the host agent (or, by the host agent, from GPU threads), system scope
    /// throughout, acquired at its next system-scope fence.
    pending_sys: Clock,
    /// What a store after this thread's last fence publishes, and that fence's scope.
    fence: Option<(Rc<Clock>, ScopeKind)>,
    /// Edges cut by a block scope (or never acquired), for race explanations.
    hint: Option<Box<Hint>>,
    /// A load cut an edge since the thread's last fence (which, if block-scoped, is cut too).
    fresh_cut: bool,
    /// A read-modify-write put a release into `pending_local` or `pending_wide` (for explanations).
    pending_rmw: bool,
    /// What the thread knows without lock handoffs, once a handoff gave it knowledge (see `predict`).
    pub pred: Option<Box<Pred>>,
    /// The locks the thread holds (see `predict`).
    pub held: Vec<Held>,
    /// Set while an atomic that takes a lock observes the lock word: the handoff it makes.
    pub acquiring: Option<Edge>,
}

/// A thread's knowledge without lock handoffs: its acquired clock and pending releases, less what
/// lock handoffs brought, and the last handoff (for reports).
#[derive(Debug)]
pub(crate) struct Pred {
    pub nolock: Clock,
    /// Earlier critical sections of a lock the thread holds that wrote what its section writes:
    /// ordered before the rest of its section in either order of the two (the lock orders them),
    /// not before what it does after the section (see `predict`).
    pub section: Clock,
    np_local: Clock,
    np_wide: Clock,
    np_sys: Clock,
    pub edge: Option<Edge>,
}

/// What the thread making an access knows: its own acquisitions and its block's.
#[derive(Clone, Copy)]
pub(crate) struct Knows<'a> {
    own: &'a Clock,
    block: &'a Clock,
    /// The thread's knowledge without lock handoffs, if a handoff gave it any.
    pub nolock: Option<&'a Clock>,
    /// Its section-scoped knowledge without lock handoffs (see [`Pred::section`]).
    section: Option<&'a Clock>,
}

impl Knows<'_> {
    /// Whether an access of thread `gid` (block `block`, release count `rel`, `bar` barriers) is known.
    #[inline]
    pub fn covers(&self, gid: u32, rel: u32, block: u32, bar: u32) -> bool {
        self.own.covers(gid, rel, block, bar) || self.block.covers(gid, rel, block, bar)
    }
    /// Whether every access of block `block` before its barrier `bar + 1` is known.
    pub fn covers_block(&self, block: u32, bar: u32) -> bool {
        self.own.covers_block(block, bar) || self.block.covers_block(block, bar)
    }
    /// Whether the access is known without lock handoffs (only asked when `nolock` is set).
    #[inline]
    pub fn covers_without_locks(&self, gid: u32, rel: u32, block: u32, bar: u32) -> bool {
        self.nolock.is_some_and(|c| c.covers(gid, rel, block, bar))
            || self.section.is_some_and(|c| c.covers(gid, rel, block, bar))
            || self.block.covers(gid, rel, block, bar)
    }
}

/// The cut edges a thread and its block know of, for explanations.
pub(crate) fn hint_for(t: &ThreadClock, b: &BlockClock, gid: u32, rel: u32, block: u32, bar: u32) -> Option<cut::Why> {
    let mut why = 0;
    for h in [&t.hint, &b.hint].into_iter().flatten() {
        if h.clock.covers(gid, rel, block, bar) {
            why |= h.why;
        }
    }
    // A release that a block- or device-scope fence failed to acquire is explained by that fence, not
    // by a missing one.
    if why & (cut::ACQ_FENCE | cut::ACQ_FENCE << cut::DEVICE) == 0 {
        for p in [&t.pending_local, &t.pending_wide, &t.pending_sys] {
            if p.covers(gid, rel, block, bar) {
                why |= cut::NO_ACQ_FENCE | if t.pending_rmw { cut::BY_RMW } else { 0 };
            }
        }
    }
    (why != 0).then_some(why)
}

impl ThreadClock {
    pub fn knows<'a>(&'a self, block: &'a BlockClock) -> Knows<'a> {
        Knows {
            own: &self.acq,
            block: &block.acq,
            nolock: self.pred.as_ref().map(|p| &p.nolock),
            section: self.pred.as_ref().map(|p| &p.section),
        }
    }

    /// A release by the thread at `p`: everything it did before now, and everything it knows, becomes
    /// visible to whoever acquires the snapshot.
    fn release(&mut self, p: Pos, block: &BlockClock) -> Rc<Clock> {
        self.rel += 1;
        let mut snap = self.acq.clone();
        snap.join(&block.acq);
        snap.raise(thread_key(p.gid), self.rel);
        if p.bepoch > 0 {
            snap.raise(block_key(p.block), p.bepoch);
        }
        Rc::new(snap)
    }

    /// The end of a critical section (see `predict`): a release of everything the thread did so far,
    /// whose snapshot only the predictive analysis uses.
    pub fn section_release(&mut self, p: Pos, block: &BlockClock) -> Rc<Clock> {
        self.release(p, block)
    }

    /// A fence at `scope`: acquires the earlier fences it is morally strong with (`sc`, see
    /// [`FenceOrder`]) and what earlier strong loads observed (from other blocks only at device or
    /// system scope), then releases; returns the release, for the fences after it.
    pub fn fence(&mut self, p: Pos, scope: ScopeKind, block: &BlockClock, sc: &[&FenceOrder]) -> Rc<Clock> {
        for order in sc {
            self.acq.join(&order.all);
            if let Some(pr) = &mut self.pred {
                pr.nolock.join(&order.free);
            }
        }
        if let Some(pr) = &mut self.pred {
            pr.nolock.join(&pr.np_local);
            pr.np_local.clear();
            if wide(scope) {
                pr.nolock.join(&pr.np_wide);
                pr.np_wide.clear();
            }
            if scope == ScopeKind::System {
                pr.nolock.join(&pr.np_sys);
                pr.np_sys.clear();
            }
        }
        if !self.pending_local.is_empty() {
            self.acq.join(&self.pending_local);
            self.pending_local.clear();
        }
        if scope == ScopeKind::System {
            if !self.pending_sys.is_empty() {
                self.acq.join(&self.pending_sys);
                self.pending_sys.clear();
            }
        } else if !self.pending_sys.is_empty() {
            add_hint(&mut self.hint, &self.pending_sys, scope_cut(scope, cut::ACQ_FENCE));
        }
        if wide(scope) {
            if !self.pending_wide.is_empty() {
                self.acq.join(&self.pending_wide);
                self.pending_wide.clear();
            }
        } else {
            if !self.pending_wide.is_empty() {
                add_hint(&mut self.hint, &self.pending_wide, cut::ACQ_FENCE);
            }
            if let Some(h) = self.hint.as_mut().filter(|_| self.fresh_cut) {
                h.why |= cut::ACQ_FENCE;
            }
        }
        self.fresh_cut = false;
        self.pending_rmw &=
            !(self.pending_local.is_empty() && self.pending_wide.is_empty() && self.pending_sys.is_empty());
        let snap = self.release(p, block);
        self.fence = Some((snap.clone(), scope));
        snap
    }

    /// A warp barrier among lanes: each lane releases; returns what the lane contributes to all.
    pub fn warp_release(&mut self, gid: u32, into: &mut Clock) {
        self.rel += 1;
        into.join(&self.acq);
        into.raise(thread_key(gid), self.rel);
    }

    /// A warp barrier among lanes: the lane acquires what every lane contributed.
    pub fn warp_acquire(&mut self, all: &Clock) {
        self.acq.join(all);
        if let Some(pr) = &mut self.pred {
            pr.nolock.join(all);
        }
    }

    /// A strong load of `kind` by this thread (block `me`) observed what `sync` published: an acquire
    /// load acquires it now, a volatile load or an atomic holds it until the next fence. Releases from
    /// other blocks count only when every operation of the pattern has device or system scope; between
    /// a GPU thread and the host agent, or threads of two GPUs, only when every one has system scope.
    pub fn observe(&mut self, sync: &SyncSet, me: u32, kind: Kind, topo: &Topology) {
        let acquire_now = matches!(kind, Kind::AcquireLoad(_));
        let load_wide = wide(kind.scope());
        let load_sys = kind.scope() == ScopeKind::System;
        let load_cut = scope_cut(kind.scope(), if acquire_now { cut::ACQ_LOAD } else { cut::FLAG_READ });
        // An atomic that takes a lock: what it observes is a lock handoff, kept out of the knowledge
        // without handoffs (see `predict`).
        let handoff = self.acquiring;
        if handoff.is_some() && self.pred.is_none() {
            self.pred = Some(Box::new(Pred {
                nolock: self.acq.clone(),
                section: Clock::default(),
                np_local: self.pending_local.clone(),
                np_wide: self.pending_wide.clone(),
                np_sys: self.pending_sys.clone(),
                edge: None,
            }));
        }
        for item in &sync.items {
            // Only system scope includes the other side: the host agent, or a thread of another GPU.
            let host = topo.only_system_between(me, item.block);
            // 0: acquired now; 1: pending, own block; 2: pending, other block; 3: pending, system
            // scope (the host agent, another GPU).
            let target = if item.block == me {
                if acquire_now { 0 } else { 1 }
            } else if host && item.sys && load_sys {
                if acquire_now { 0 } else { 3 }
            } else if !host && item.wide && load_wide {
                if acquire_now { 0 } else { 2 }
            } else {
                let why = item.why | load_cut;
                add_hint(&mut self.hint, &item.clock, if host { why } else { block_bits(why) });
                self.fresh_cut = !acquire_now;
                continue;
            };
            [&mut self.acq, &mut self.pending_local, &mut self.pending_wide, &mut self.pending_sys][target]
                .join(&item.clock);
            self.pending_rmw |= matches!(kind, Kind::Atomic(_));
            if let Some(pr) = &mut self.pred {
                if handoff.is_some() {
                    pr.edge = handoff;
                } else {
                    [&mut pr.nolock, &mut pr.np_local, &mut pr.np_wide, &mut pr.np_sys][target].join(&item.clock);
                }
            }
        }
    }

    /// The store part of a strong access of `kind` to an address whose publications are `sync`: a
    /// release store publishes a new release, a read-modify-write after a fence adds that fence's release
    /// to the release sequence, a volatile store replaces it with its fence's release, if any. (A plain
    /// store ends the sequence; it publishes nothing.)
    pub fn publish(&mut self, p: Pos, kind: Kind, block: &BlockClock, sync: &mut Option<SyncSet>) {
        match kind {
            Kind::ReleaseStore(s) => {
                let clock = self.release(p, block);
                let why = scope_cut(s, cut::REL_STORE);
                let (wide, sys) = (wide(s), s == ScopeKind::System);
                *sync = Some(SyncSet { items: vec![Published { block: p.block, wide, sys, why, clock }] });
            }
            Kind::Atomic(s) => {
                if let Some((clock, fs)) = &self.fence {
                    let why = scope_cut(*fs, cut::REL_FENCE) | scope_cut(s, cut::FLAG_WRITE);
                    let (wide, sys) = (block_bits(why) == 0, why == 0);
                    let item = Published { block: p.block, wide, sys, why, clock: clock.clone() };
                    sync.get_or_insert_with(Default::default).add(item);
                }
            }
            Kind::VolatileWrite => {
                // A volatile store is a relaxed store at system scope: the fence before it decides.
                *sync = self.fence.as_ref().map(|(clock, fs)| {
                    let why = scope_cut(*fs, cut::REL_FENCE);
                    let (wide, sys) = (block_bits(why) == 0, why == 0);
                    SyncSet { items: vec![Published { block: p.block, wide, sys, why, clock: clock.clone() }] }
                });
            }
            Kind::Write | Kind::Read | Kind::VolatileRead | Kind::AcquireLoad(_) => {}
        }
    }

    /// At a completed grid barrier: everything known was before it.
    pub fn clear(&mut self) {
        self.acq.clear();
        self.pending_local.clear();
        self.pending_wide.clear();
        self.pending_sys.clear();
        self.pending_rmw = false;
        self.pred = None;
        self.hint = None;
    }
}
