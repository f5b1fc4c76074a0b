//! Memory-access tracking: the glue between the scheduler's threads and the detectors. Every access of
//! an emulated thread is checked against the records of the bytes it touches (global, or the block's
//! shared memory; see `shadow`) by the race test, carries release/acquire knowledge between threads through that address,
//! and, in shared memory, is checked for bytes no thread of the block has written. Fences, warp, block
//! and grid barriers update the threads' clocks here too.

use super::buffer;
use super::clock::{BlockClock, Clock, Pos, hint_for};
use super::findings::Place;
use super::predict::{Edge, Held, MAX_CS_ADDRESSES, MAX_HELD, Section};
use super::race::{Cur, Epoch, Kind, explain};
use super::report::{AccessInfo, Race, ThreadId, UninitRead};
use super::sched::State;
use super::shadow::{SharedShadow, Written};
use crate::Site;
use crate::atomic::{ScopeKind, SpaceKind};

/// The detector's state of one block: the records of its shared memory, which of its bytes were
/// written, and what the block's threads acquired as a whole.
#[derive(Debug, Default)]
pub(crate) struct BlockShadow {
    slots: SharedShadow,
    written: Option<Written>,
    clock: BlockClock,
}

impl BlockShadow {
    fn bytes(&self) -> usize {
        self.slots.bytes() + self.written.as_ref().map_or(0, Written::bytes)
    }
}

fn site_str(s: Site) -> String {
    format!("{}:{}:{}", s.file(), s.line(), s.column())
}

impl State {
    /// Records an access for the detectors and the release/acquire model.
    pub fn on_access(&mut self, t: usize, addr: usize, size: usize, space: SpaceKind, kind: Kind, site: Site) {
        // For barrier divergence: whether the thread touched memory in its barrier interval.
        let first = &mut self.threads[t].clock.first_access;
        if first.is_none() {
            *first = Some(site);
        }
        if !self.opts.detect_races {
            return;
        }
        let th = &self.threads[t];
        let b = th.block;
        let (block, block_threads) = (self.blocks[b].linear, self.blocks[b].n as u32);
        let pos = Pos { gid: th.gid, block, bepoch: th.bepoch };
        let x = Epoch::new(site, th.gid, th.clock.rel, th.bepoch, th.gepoch, kind);
        let shared_base = self.blocks[b].shared.as_ptr() as usize;
        let place = Place { space, addr, size, shared_base };
        let shared_bytes = self.cfg.shared_bytes;
        let bs = &mut self.blocks[b].shadow;
        let mut unwritten = false;
        // Every record the access's bytes have: one, unless accesses of different widths share them.
        let slots = match space {
            SpaceKind::Global => self.global_shadow.slots(addr, size),
            SpaceKind::Shared => {
                let written = bs.written.get_or_insert_with(|| Written::new(shared_base, shared_bytes));
                unwritten = written.access(addr, size, kind.reads(), kind.writes());
                bs.slots.slots(addr - shared_base, size, shared_bytes)
            }
        };
        let bclock = &bs.clock;
        let clock = &mut self.threads[t].clock;
        // Inside critical sections: what every order of the locks' sections orders before this access,
        // and what the section touched (see `predict`).
        for h in clock.held.iter_mut().filter(|h| h.addr != addr) {
            if let Some(pr) = &mut clock.pred {
                self.findings.locks.ordered_before(h.addr, addr, kind.writes(), &mut pr.nolock);
            }
            if h.touched.len() <= MAX_CS_ADDRESSES && !h.touched.contains(&(addr, kind.writes())) {
                h.touched.push((addr, kind.writes()));
            }
        }
        if kind.observes() {
            for sync in slots.iter().filter_map(|s| s.sync()) {
                clock.observe(sync, block, kind);
            }
        }
        let mut report = None;
        {
            let cur = Cur { x, kind, block, block_threads, knows: clock.knows(bclock) };
            // Every record is checked and updated; the first conflict found is reported.
            let found = slots.iter_mut().fold(None, |found, slot| {
                let f = slot.access(&cur);
                // A race found in this run stands before a predicted one.
                match (found, f) {
                    (Some((_, true)), Some((_, false))) | (None, _) => f,
                    _ => found,
                }
            });
            if let Some((e, predicted)) = found
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
        }
        self.threads[t].clock.acquiring = None;
        let clock = &mut self.threads[t].clock;
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
        if let Some((e, why, predicted)) = report {
            let why = why.unwrap_or_else(|edge| self.predicted_why(edge));
            self.push_race(&place, (&e, &x), why, predicted);
        }
        if unwritten && self.findings.count_uninit(addr - shared_base, block) {
            let (name, index) = place.buffer_index(&self.findings.shared_layouts);
            let read = UninitRead {
                kernel: self.findings.kernel.clone(),
                thread: self.thread_of(x.gid),
                kind: kind.name(),
                array: (name != "shared").then_some(name),
                index,
                offset: addr - shared_base,
                size,
                site: site_str(site),
            };
            self.findings.uninit_reads.push(read);
        }
    }

    /// Records a race on `place` between the accesses `first` and `second`.
    pub(crate) fn push_race(&mut self, place: &Place, (first, second): (&Epoch, &Epoch), why: String, predicted: bool) {
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
        };
        self.findings.races.push(race);
    }

    /// Why a predicted race is one: the lock handoff that ordered the accesses in this run, and the
    /// two critical sections it joined.
    pub(crate) fn predicted_why(&self, edge: Option<Edge>) -> String {
        let Some(edge) = edge else {
            return "predicted: in another order of taking a lock, nothing orders these accesses".into();
        };
        let (name, index) = buffer::describe(edge.lock, 4);
        format!(
            "predicted: in another order of taking `{name}`[{index}], nothing orders these accesses. In this run \
             the critical section of {} (lock taken at {}) came before the critical section of {} (lock taken at \
             {}), and only that handoff of the lock ordered them; had {} taken the lock first, they would race \
             (put both accesses inside the lock, or order them with a barrier or a flag)",
            self.thread_of(edge.from.gid),
            site_str(edge.from.taken),
            self.thread_of(edge.to.gid),
            site_str(edge.to.taken),
            self.thread_of(edge.to.gid),
        )
    }

    /// An atomic compare-and-swap or exchange by thread `t` at `site` changed `addr` from `old` to
    /// `new`: it takes a lock, or releases one the thread holds (see `predict`).
    pub fn lock_rmw(&mut self, t: usize, addr: usize, old: u64, new: u64, site: Site) {
        if !self.opts.detect_races || old == new {
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
            clock.held.push(Held { addr, unlocked: old, taken: site, touched: vec![] });
        } else {
            clock.acquiring = None;
        }
    }

    /// Thread `t` stored `new` to `addr` with a strong store: if that is the unlocked value of a lock it
    /// holds, its critical section ends.
    pub fn lock_store(&mut self, t: usize, addr: usize, new: u64) {
        if !self.opts.detect_races {
            return;
        }
        let th = &mut self.threads[t];
        let Some(i) = th.clock.held.iter().position(|h| h.addr == addr && h.unlocked == new) else { return };
        let held = th.clock.held.swap_remove(i);
        let b = th.block;
        let p = Pos { gid: th.gid, block: self.blocks[b].linear, bepoch: th.bepoch };
        let snap = th.clock.section_release(p, &self.blocks[b].shadow.clock);
        self.findings.locks.released(&held, p.gid, &snap);
    }

    fn thread_of(&self, gid: u32) -> ThreadId {
        if gid == super::host_agent::HOST_GID {
            return ThreadId::HOST;
        }
        let n = self.cfg.block.volume() as u32;
        let lin = gid / n;
        let (block, _) = super::devices::local(lin, self.cfg.grid.delinear(lin), self.cfg.grid);
        ThreadId::new(block, self.cfg.block.delinear(gid % n))
    }

    pub(super) fn access_info(&self, e: &Epoch) -> AccessInfo {
        let n = self.cfg.block.volume() as u32;
        AccessInfo {
            thread: self.thread_of(e.gid),
            device: if e.gid == super::host_agent::HOST_GID { None } else { super::devices::device_of(e.gid / n) },
            kind: e.kind().name(),
            site: site_str(e.site()),
            barrier_interval: e.bar,
            grid_interval: e.grid(),
        }
    }

    /// A fence at `scope` by thread `t`.
    pub fn on_fence(&mut self, t: usize, scope: ScopeKind) {
        if self.opts.detect_races {
            let b = self.threads[t].block;
            let p = Pos { gid: self.threads[t].gid, block: self.blocks[b].linear, bepoch: self.threads[t].bepoch };
            self.threads[t].clock.fence(p, scope, &self.blocks[b].shadow.clock);
        }
    }

    /// A completed warp barrier of the lanes in `mask` of the warp whose lane 0 is thread `first`:
    /// each lane releases, and each acquires what all of them released.
    pub(super) fn warp_barrier_clocks(&mut self, first: usize, mask: u32) {
        if !self.opts.detect_races {
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

    /// A completed barrier of block `b`: what any of its threads acquired, all of them know now.
    pub(super) fn block_barrier_clocks(&mut self, b: usize) {
        if !self.opts.detect_races {
            return;
        }
        let (first, n) = (self.blocks[b].first, self.blocks[b].n);
        let bc = &mut self.blocks[b].shadow.clock;
        for th in &mut self.threads[first..first + n] {
            bc.absorb(&mut th.clock);
        }
    }

    /// A completed grid barrier: everything before it is ordered by grid intervals, so no thread or
    /// block needs its acquired knowledge any more.
    pub(super) fn grid_barrier_clocks(&mut self) {
        if !self.opts.detect_races {
            return;
        }
        for th in &mut self.threads {
            th.clock.clear();
        }
        for blk in &mut self.blocks {
            blk.shadow.clock.clear();
        }
    }

    /// Drops the blocks of a finished wave, keeping the size of their shadow for the launch's total.
    pub(super) fn retire_blocks(&mut self) {
        for blk in self.blocks.drain(..) {
            self.findings.retired_shadow.0 += blk.shadow.bytes();
            self.findings.retired_shadow.1 += blk.shadow.slots.touched();
        }
    }

    /// Bytes of shadow memory the launch used, and element addresses it recorded (global memory, and
    /// the shared memory of every block).
    pub(super) fn shadow_stats(&self) -> (usize, usize) {
        let (mut bytes, mut touched) = self.findings.retired_shadow;
        bytes += self.findings.locks.bytes();
        bytes += self.global_shadow.bytes();
        touched += self.global_shadow.touched();
        for blk in &self.blocks {
            bytes += blk.shadow.bytes();
            touched += blk.shadow.slots.touched();
        }
        (bytes, touched)
    }
}
