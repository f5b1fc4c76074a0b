//! Memory-access tracking: the glue between the scheduler's threads and the detectors. Every access of
//! an emulated thread is checked against the records of the bytes it touches (global, or the block's
//! shared memory; see `shadow`) by the race test, carries release/acquire knowledge between threads through that address,
//! and, in shared memory, is checked for bytes no thread of the block has written. Fences, warp, block
//! and grid barriers update the threads' clocks here too.

use super::clock::{BlockClock, Clock, Pos, hint_for};
use super::findings::Place;
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
        if kind.observes() {
            for sync in slots.iter().filter_map(|s| s.sync()) {
                clock.observe(sync, block, kind);
            }
        }
        let mut report = None;
        {
            let cur = Cur { x, kind, block, block_threads, knows: clock.knows(bclock) };
            // Every record is checked and updated; the first conflict found is reported.
            let found = slots.iter_mut().fold(None, |found, slot| found.or(slot.access(&cur)));
            if let Some(e) = found
                && self.findings.count_race(&place, block)
            {
                let cut = hint_for(clock, bclock, e.gid, e.rel, cur.block_of(&e), e.bar);
                report = Some((e, explain(&e, &cur, cut)));
            }
        }
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
        if let Some((e, why)) = report {
            let (buffer, index) = place.buffer_index();
            let race = Race {
                kernel: self.findings.kernel.clone(),
                space,
                buffer,
                index,
                first: self.access_info(&e),
                second: self.access_info(&x),
                why,
            };
            self.findings.races.push(race);
        }
        if unwritten && self.findings.count_uninit(addr - shared_base, block) {
            let read = UninitRead {
                kernel: self.findings.kernel.clone(),
                thread: self.thread_of(x.gid),
                kind: kind.name(),
                index: (addr - shared_base) / size.max(1),
                offset: addr - shared_base,
                size,
                site: site_str(site),
            };
            self.findings.uninit_reads.push(read);
        }
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
        bytes += self.global_shadow.bytes();
        touched += self.global_shadow.touched();
        for blk in &self.blocks {
            bytes += blk.shadow.bytes();
            touched += blk.shadow.slots.touched();
        }
        (bytes, touched)
    }
}
