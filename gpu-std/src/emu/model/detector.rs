//! The detector: the `Model` of one launch, which every access, fence and barrier is told to, in
//! the order they happened, and which judges each access by the PTX memory model and keeps what it
//! found. Who acts is an `Agent`; what each thread, block and the host agent have done is kept
//! here, what they know in `clock`, what each byte saw in `shadow` and `race`.
//!
//! Names the files of the model below it (`clock`, `race`, `predict`, `lock`, `kind`, `shadow`,
//! `explain`, `findings`, `topology`), the reports and the vocabulary; nothing of the engine or the
//! primitives, and not `trace`, which drives it from above.

use super::clock::{BlockClock, Clock, FenceOrder, Pos, ThreadClock, hint_for, wide};
use super::explain::{explain, hazard_why};
use super::findings::Findings;
use super::kind::Kind;
use super::lock::{Edge, Held, Section};
use super::predict::{Locks, MAX_CS_ADDRESSES, MAX_HELD};
use super::race::{Cur, Epoch, Slot};
use super::shadow::{Shadow, SharedShadow, Written};
use super::topology::{HOST_BLOCK, HOST_GID, Topology};
use crate::emu::report::{AccessInfo, Place, Race, UninitRead, names};
use crate::vocab::scope::{ScopeKind, SpaceKind};
use crate::vocab::shared_field::SharedField;
use crate::vocab::site::Site;

/// Who makes an event: a GPU thread of the current wave (its index in the wave, as given to
/// [`Model::start_wave`]), or the host agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Agent {
    Gpu(usize),
    Host,
}

/// What the model keeps of one GPU thread of the wave.
#[derive(Debug)]
struct ThreadModel {
    /// Global rank (block-major).
    gid: u32,
    /// Index of its block in the wave.
    block: usize,
    /// Block barriers its block completed while it took part (its barrier interval).
    bar: u32,
    /// Grid barriers completed before or while it ran (its grid interval).
    grid: u32,
    clock: ThreadClock,
}

/// The detector's state of one block of the wave: the records of its shared memory, which of its
/// bytes were written, and what the block's threads acquired as a whole.
#[derive(Debug)]
struct BlockModel {
    /// Linear index in the grid.
    linear: u32,
    /// Its first thread's index in the wave, and its number of threads.
    first: usize,
    n: usize,
    /// Address of its shared memory.
    shared_base: usize,
    /// Block barriers completed.
    barriers: u32,
    slots: SharedShadow,
    written: Option<Written>,
    clock: BlockClock,
    /// The fences of its threads, at any scope (Fence-SC order within the block).
    fences: FenceOrder,
}

impl BlockModel {
    fn bytes(&self) -> usize {
        self.slots.bytes() + self.written.as_ref().map_or(0, Written::bytes) + self.fences.bytes()
    }
}

/// The host agent's synchronisation state: its clock, and an empty block clock (it is in no block,
/// so nothing is ever acquired through a block barrier).
#[derive(Debug, Default)]
struct HostModel {
    clock: ThreadClock,
    no_block: BlockClock,
}

/// The memory model of one launch (see the module docs).
pub(crate) struct Model {
    /// Whether accesses are judged at all (`Options::detect_races`).
    detect: bool,
    topo: Topology,
    global: Shadow,
    threads: Vec<ThreadModel>,
    blocks: Vec<BlockModel>,
    host: HostModel,
    /// Grid barriers completed.
    grid_barriers: u32,
    /// The device- and system-scope fences of each device's threads, and the system-scope fences of
    /// everyone (Fence-SC order between blocks, devices and the host agent).
    device_fences: [FenceOrder; 2],
    system_fences: FenceOrder,
    /// Report ordering hazards as races (`Options::hazards_are_races`).
    hazards_are_races: bool,
    /// The explanation of the hazard found by the access being told.
    pending_hazard: Option<String>,
    findings: Findings,
}

use super::findings::{access_info, site_str};

impl Model {
    /// The model of a launch of `kernel` with the shape `topo`; `detect`: judge accesses at all;
    /// `max_reports`: findings of each kind kept in full (all are counted).
    pub fn new(kernel: &str, topo: Topology, detect: bool, max_reports: usize) -> Model {
        Model {
            detect,
            topo,
            global: Shadow::default(),
            threads: Vec::new(),
            blocks: Vec::new(),
            host: HostModel::default(),
            grid_barriers: 0,
            device_fences: Default::default(),
            system_fences: FenceOrder::default(),
            hazards_are_races: false,
            pending_hazard: None,
            findings: Findings::new(kernel, max_reports),
        }
    }

    /// Count the races and hazards `rules` match against them instead of reporting them.
    pub fn accept(&mut self, rules: &[crate::emu::config::AcceptedRace]) {
        self.findings.accept(rules);
    }

    /// Report ordering hazards as races, not in their own class.
    pub fn hazards_are_races(&mut self, yes: bool) {
        self.hazards_are_races = yes;
    }

    /// The launch's shape.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// What the detectors found so far.
    pub fn findings(&self) -> &Findings {
        &self.findings
    }

    /// The findings, and the shadow memory's bytes and touched element addresses.
    pub fn finish(self) -> (Findings, usize, usize) {
        let (bytes, touched) = self.shadow_stats();
        (self.findings, bytes, touched)
    }

    /// A new wave of resident blocks: for each, its linear index and the address of its shared memory.
    /// Its threads are the wave's agents `Gpu(0..)`, block after block, each block's in rank order.
    /// The blocks of the previous wave are dropped (their shadow counts for the launch's total).
    pub fn start_wave(&mut self, blocks: impl IntoIterator<Item = (u32, usize)>) {
        for blk in self.blocks.drain(..) {
            self.findings.retired_shadow.0 += blk.bytes();
            self.findings.retired_shadow.1 += blk.slots.touched();
        }
        self.threads.clear();
        let n = self.topo.block_threads() as usize;
        for (linear, shared_base) in blocks {
            let first = self.threads.len();
            let block = self.blocks.len();
            self.threads.extend((0..n as u32).map(|r| ThreadModel {
                gid: linear * n as u32 + r,
                block,
                bar: 0,
                grid: self.grid_barriers,
                clock: ThreadClock::default(),
            }));
            self.blocks.push(BlockModel {
                linear,
                first,
                n,
                shared_base,
                barriers: 0,
                slots: SharedShadow::default(),
                written: None,
                clock: BlockClock::default(),
                fences: FenceOrder::default(),
            });
        }
    }

    /// The kernel's shared layout (its arrays, with their offsets), to name shared memory in reports.
    pub fn name_shared_layout(&mut self, fields: &'static [SharedField]) {
        let known = &mut self.findings.shared_layouts;
        if !known.iter().any(|k| std::ptr::eq(*k, fields)) {
            known.push(fields);
        }
    }

    /// An access by `who` of `size` bytes at `addr` in `space`, of `kind`, at `site`: judged against
    /// every earlier access of those bytes, then recorded; carries release/acquire knowledge through
    /// the address; in shared memory, checked for bytes no thread of the block has written. (The host
    /// agent has no shared memory.)
    #[inline]
    pub fn access(&mut self, who: Agent, addr: usize, size: usize, space: SpaceKind, kind: Kind, site: Site) {
        if !self.detect {
            return;
        }
        let block_threads = self.topo.block_threads();
        let shared_bytes = self.topo.shared_bytes;
        let mut unwritten = false;
        let (clock, bclock, pos, bar, grid, shared_base, slots);
        match who {
            Agent::Gpu(t) => {
                let th = &mut self.threads[t];
                let bs = &mut self.blocks[th.block];
                shared_base = bs.shared_base;
                // Every record the access's bytes have: one, unless accesses of different widths share them.
                slots = match space {
                    SpaceKind::Global => self.global.slots(addr, size),
                    SpaceKind::Shared => {
                        let written = bs.written.get_or_insert_with(|| Written::new(shared_base, shared_bytes));
                        unwritten = written.access(addr, size, kind.reads(), kind.writes());
                        bs.slots.slots(addr - shared_base, size, shared_bytes)
                    }
                };
                (clock, bclock) = (&mut th.clock, &bs.clock);
                (pos, bar, grid) = (Pos { gid: th.gid, block: bs.linear, bepoch: th.bar }, th.bar, th.grid);
            }
            Agent::Host => {
                shared_base = 0;
                slots = self.global.slots(addr, size);
                (clock, bclock) = (&mut self.host.clock, &self.host.no_block);
                (pos, bar, grid) = (Pos { gid: HOST_GID, block: HOST_BLOCK, bepoch: 0 }, 0, 0);
            }
        }
        let block = pos.block;
        let place = Place { space, addr, size, shared_base };
        let x = Epoch::new(site, pos.gid, clock.rel, bar, grid, kind);
        in_sections(clock, &self.findings.locks, addr, kind, block);
        if kind.observes() {
            for sync in slots.iter().filter_map(|s| s.sync()) {
                clock.observe(sync, block, kind, &self.topo);
            }
        }
        let mut report = None;
        let mut hazard = None;
        {
            let hazards = space == SpaceKind::Shared;
            let cur = Cur { x, kind, block, block_threads, knows: clock.knows(bclock), topo: &self.topo, hazards };
            // Every record is checked and updated; the first conflict found is reported.
            let found = slots.iter_mut().fold(None, |found, slot| {
                let (f, h) = slot.access(&cur);
                hazard = hazard.or(h);
                // A race found in this run stands before a predicted one.
                match (found, f) {
                    (Some((_, true)), Some((_, false))) | (None, _) => f,
                    _ => found,
                }
            });
            if let Some((e, predicted)) = found
                && !self.findings.accepted(&self.topo, &place, block, (&e, &x))
                && self.findings.count_race(&place, block)
            {
                // A predicted race is explained once the records are released (it names threads).
                let why = if predicted {
                    Err(clock.pred.as_ref().and_then(|p| p.edge))
                } else {
                    let cut = hint_for(clock, bclock, e.gid, e.rel, cur.block_of(&e), e.bar);
                    Ok(explain(&e, &cur, cut))
                };
                report = Some((e, why, predicted));
            }
            if found.is_none()
                && let Some(e) = hazard.take()
                && !self.findings.accepted(&self.topo, &place, block, (&e, &x))
            {
                let why = hazard_why(&e, &cur);
                if self.hazards_are_races {
                    if self.findings.count_race(&place, block) {
                        report = Some((e, Ok(why), false));
                    }
                } else if self.findings.count_hazard(addr - shared_base, block) {
                    hazard = Some(e);
                    self.pending_hazard = Some(why);
                }
            }
        }
        clock.acquiring = None;
        publish(slots, clock, pos, kind, bclock);
        if let Some((e, why, predicted)) = report {
            let why = why.unwrap_or_else(|edge| self.predicted_why(edge));
            let hazard = why.starts_with("ordering hazard");
            self.push_race(&place, (&e, &x), why, predicted, hazard);
        }
        if let (Some(e), Some(why)) = (hazard, self.pending_hazard.take()) {
            self.push_race(&place, (&e, &x), why, false, true);
            let race = self.findings.races.pop().expect("just pushed");
            self.findings.hazards.push(race);
        }
        if unwritten && self.findings.count_uninit(addr - shared_base, block) {
            self.push_uninit_read(&place, x.gid, kind, site);
        }
    }

    /// Records a read by thread `gid` of shared bytes at `place` that no thread of its block wrote.
    fn push_uninit_read(&mut self, place: &Place, gid: u32, kind: Kind, site: Site) {
        let (name, index) = place.buffer_index(&self.findings.shared_layouts);
        let read = UninitRead {
            kernel: self.findings.kernel.clone(),
            thread: self.topo.thread_of(gid),
            kind: kind.name(),
            array: (name != "shared").then_some(name),
            index,
            offset: place.addr - place.shared_base,
            size: place.size,
            site: site_str(site),
        };
        self.findings.uninit_reads.push(read);
    }

    /// Records a race on `place` between the accesses `first` and `second`.
    fn push_race(
        &mut self,
        place: &Place,
        (first, second): (&Epoch, &Epoch),
        why: String,
        predicted: bool,
        hazard: bool,
    ) {
        let (buffer, index) = place.buffer_index(&self.findings.shared_layouts);
        let race = Race {
            kernel: self.findings.kernel.clone(),
            space: place.space,
            buffer,
            index,
            first: self.access_info(first),
            second: self.access_info(second),
            why,
            predicted,
            hazard,
        };
        self.findings.races.push(race);
    }

    /// Why a predicted race is one: the lock handoff that ordered the accesses in this run, and the
    /// two critical sections it joined.
    fn predicted_why(&self, edge: Option<Edge>) -> String {
        let Some(edge) = edge else {
            return "predicted: in another order of taking a lock, nothing orders these accesses".into();
        };
        let (name, index) = names::describe(edge.lock, 4);
        let thread_of = |g| self.topo.thread_of(g);
        format!(
            "predicted: in another order of taking `{name}`[{index}], nothing orders these accesses. In this run \
             the critical section of {} (lock taken at {}) came before the critical section of {} (lock taken at \
             {}), and only that handoff of the lock ordered them; had {} taken the lock first, they would race \
             (put both accesses inside the lock, or order them with a barrier or a flag)",
            thread_of(edge.from.gid),
            site_str(edge.from.taken),
            thread_of(edge.to.gid),
            site_str(edge.to.taken),
            thread_of(edge.to.gid),
        )
    }

    fn access_info(&self, e: &Epoch) -> AccessInfo {
        access_info(&self.topo, e)
    }

    /// An atomic compare-and-swap or exchange by GPU thread `t` at `site` changed `addr` from `old` to
    /// `new`: it takes a lock, or releases one the thread holds (see `predict`). Told before the
    /// access itself ([`Model::access`] with `Kind::Atomic`).
    pub fn lock_rmw(&mut self, t: usize, addr: usize, old: u64, new: u64, site: Site) {
        if !self.detect || old == new {
            return;
        }
        if self.threads[t].clock.held.iter().any(|h| h.addr == addr) {
            self.lock_store(t, addr, new);
            return;
        }
        let gid = self.threads[t].gid;
        let to = Section { gid, taken: site };
        let locks = &self.findings.locks;
        let clock = &mut self.threads[t].clock;
        clock.acquiring = locks
            .last
            .get(&addr)
            .filter(|from| from.gid != gid && locks.predictable(addr))
            .map(|&from| Edge { lock: addr, from, to });
        // A thread holds few locks; an exchange used for something else (a flag) may look like a take
        // that is never released: beyond `MAX_HELD`, further takes are not followed.
        if clock.held.len() < MAX_HELD {
            let block = self.blocks[self.threads[t].block].linear;
            let clock = &mut self.threads[t].clock;
            clock.held.push(Held { addr, unlocked: old, taken: site, touched: vec![], acquired: None, block });
        } else {
            clock.acquiring = None;
        }
    }

    /// GPU thread `t` stored `new` to `addr` with a strong store: if that is the unlocked value of a
    /// lock it holds, its critical section ends. Told before the access itself.
    pub fn lock_store(&mut self, t: usize, addr: usize, new: u64) {
        if !self.detect {
            return;
        }
        let th = &mut self.threads[t];
        let Some(i) = th.clock.held.iter().position(|h| h.addr == addr && h.unlocked == new) else { return };
        let held = th.clock.held.swap_remove(i);
        let b = &self.blocks[th.block];
        let p = Pos { gid: th.gid, block: b.linear, bepoch: th.bar };
        let snap = th.clock.section_release(p, &b.clock);
        self.findings.locks.released(&held, p.gid, &snap);
        if th.clock.held.is_empty()
            && let Some(pr) = &mut th.clock.pred
        {
            pr.section.clear();
        }
    }

    /// A fence at `scope` by `who` (the host agent's fences are `fence.sc.sys`): a `fence.sc`. It
    /// synchronizes with every earlier fence it is morally strong with (Fence-SC order: each one's
    /// scope includes the other's thread), acquires what its thread's strong loads observed, and
    /// releases.
    pub fn fence(&mut self, who: Agent, scope: ScopeKind) {
        if !self.detect {
            return;
        }
        let sys = scope == ScopeKind::System;
        match who {
            Agent::Gpu(t) => {
                let th = &mut self.threads[t];
                let b = &mut self.blocks[th.block];
                let d = self.topo.device_of(b.linear).unwrap_or(0) as usize;
                let p = Pos { gid: th.gid, block: b.linear, bepoch: th.bar };
                // Earlier fences of the block (any scope includes a thread of its own block), of the
                // device at device scope or wider, of anyone at system scope.
                let sc = [&b.fences, &self.device_fences[d], &self.system_fences];
                let reach = match scope {
                    ScopeKind::Block => 1,
                    ScopeKind::Device => 2,
                    ScopeKind::System => 3,
                };
                let snap = th.clock.fence(p, scope, &b.clock, &sc[..reach]);
                // A fence before a section's first access acquires its lock (see `predict`).
                for h in th.clock.held.iter_mut().filter(|h| h.touched.is_empty() && h.acquired.is_none()) {
                    h.acquired = Some(scope);
                }
                let free = th.clock.held.is_empty();
                b.fences.add(&snap, free);
                if wide(scope) {
                    self.device_fences[d].add(&snap, free);
                }
                if sys {
                    self.system_fences.add(&snap, free);
                }
            }
            Agent::Host => {
                let h = &mut self.host;
                let p = Pos { gid: HOST_GID, block: HOST_BLOCK, bepoch: 0 };
                let snap = h.clock.fence(p, ScopeKind::System, &h.no_block, &[&self.system_fences]);
                self.system_fences.add(&snap, true);
            }
        }
    }

    /// A completed warp barrier of the lanes in `mask` of the warp whose lane 0 is wave thread `first`:
    /// each lane releases, and each acquires what all of them released.
    pub fn warp_barrier(&mut self, first: usize, mask: u32) {
        if !self.detect {
            return;
        }
        let lanes = || (0..32).filter(move |l| mask & (1 << l) != 0).map(move |l| first + l);
        let mut all = Clock::default();
        for u in lanes() {
            let th = &mut self.threads[u];
            th.clock.warp_release(th.gid, &mut all);
        }
        for u in lanes() {
            self.threads[u].clock.warp_acquire(&all);
        }
    }

    /// A completed barrier of wave block `b`, which the threads for which `took_part` holds passed
    /// (the others exited before it): what any thread of the block acquired, all of them know now,
    /// and the participants start a new barrier interval.
    pub fn block_barrier(&mut self, b: usize, took_part: impl Fn(usize) -> bool) {
        let blk = &mut self.blocks[b];
        blk.barriers += 1;
        let (first, n, epoch) = (blk.first, blk.n, blk.barriers);
        if self.detect {
            for th in &mut self.threads[first..first + n] {
                blk.clock.absorb(&mut th.clock);
            }
        }
        for u in (first..first + n).filter(|&u| took_part(u)) {
            self.threads[u].bar = epoch;
        }
    }

    /// A completed grid barrier: everything before it is ordered by grid intervals, so no thread or
    /// block needs its acquired knowledge any more.
    pub fn grid_barrier(&mut self) {
        self.grid_barriers += 1;
        let ge = self.grid_barriers;
        for th in &mut self.threads {
            th.grid = ge;
        }
        if !self.detect {
            return;
        }
        for th in &mut self.threads {
            th.clock.clear();
        }
        for blk in &mut self.blocks {
            blk.clock.clear();
            blk.fences.clear();
        }
        for f in self.device_fences.iter_mut().chain([&mut self.system_fences]) {
            f.clear();
        }
    }

    /// Bytes of shadow memory the launch used, and element addresses it recorded (global memory, and
    /// the shared memory of every block).
    fn shadow_stats(&self) -> (usize, usize) {
        let (mut bytes, mut touched) = self.findings.retired_shadow;
        bytes += self.findings.locks.bytes();
        bytes += self.device_fences.iter().chain([&self.system_fences]).map(FenceOrder::bytes).sum::<usize>();
        bytes += self.global.bytes();
        touched += self.global.touched();
        for blk in &self.blocks {
            bytes += blk.bytes();
            touched += blk.slots.touched();
        }
        (bytes, touched)
    }
}

/// Inside critical sections: what every order of the locks' sections orders before an access of
/// `kind` to `addr` by a thread of block `block` with clocks `clock`, and what each section touched
/// (see `predict`).
#[inline]
fn in_sections(clock: &mut ThreadClock, locks: &Locks, addr: usize, kind: Kind, block: u32) {
    for h in clock.held.iter_mut().filter(|h| h.addr != addr) {
        if let Some(pr) = &mut clock.pred {
            let rw = (kind.reads(), kind.writes());
            locks.ordered_before(h.addr, addr, rw, block, &mut pr.nolock, &mut pr.section);
        }
        if h.touched.len() <= MAX_CS_ADDRESSES && !h.touched.contains(&(addr, kind.writes())) {
            h.touched.push((addr, kind.writes()));
        }
    }
}

/// What an access of `kind` leaves in the records `slots` of its bytes: a plain write ends their
/// release sequences; a volatile write, an atomic or a release store publishes what the thread at
/// `pos` knows (one release store is one publication for every byte).
#[inline]
fn publish(slots: &mut [Slot], clock: &mut ThreadClock, pos: Pos, kind: Kind, bclock: &BlockClock) {
    match kind {
        Kind::Write => {
            for slot in slots.iter_mut() {
                slot.end_release_sequence();
                slot.tidy();
            }
        }
        Kind::VolatileWrite | Kind::Atomic(_) | Kind::ReleaseStore(_) => {
            let (head, rest) = slots.split_first_mut().expect("an access touches a byte");
            clock.publish(pos, kind, bclock, head.sync_mut());
            head.tidy();
            for slot in rest {
                if matches!(kind, Kind::ReleaseStore(_)) {
                    // One release (publishing again would count a second one): the same
                    // publication for every byte.
                    *slot.sync_mut() = head.sync().cloned();
                } else {
                    clock.publish(pos, kind, bclock, slot.sync_mut());
                }
                slot.tidy();
            }
        }
        Kind::Read | Kind::VolatileRead | Kind::AcquireLoad(_) => {}
    }
}
