//! Memory-access tracking: every access of an emulated thread is recorded in the shadow cell of its
//! address (global, or the block's shared memory), checked against earlier accesses by the race
//! detector, and carries release/acquire knowledge from writers to readers through that address.

use super::race::{self, Acc, Current, Kind, Place, Pos};
use super::report::ThreadId;
use super::sched::State;
use crate::Site;
use crate::atomic::SpaceKind;

impl State {
    /// Records an access for the race detector and the release/acquire model.
    pub fn on_access(&mut self, t: usize, addr: usize, size: usize, space: SpaceKind, kind: Kind, site: Site) {
        if !self.opts.detect_races {
            return;
        }
        let th = &self.threads[t];
        let b = th.block;
        let acc = Acc {
            gid: th.gid,
            who: ThreadId::new(self.blocks[b].idx, th.tid),
            block: self.blocks[b].linear,
            bepoch: th.bepoch,
            gepoch: th.gepoch,
            rel: th.clock.rel,
            kind,
            site,
        };
        let shared_base = self.blocks[b].shared.as_ptr() as usize;
        let shadow = match space {
            SpaceKind::Global => &mut self.global_shadow,
            SpaceKind::Shared => &mut self.blocks[b].shadow,
        };
        let cell = shadow.entry(addr).or_default();
        let th = &mut self.threads[t];
        // Release/acquire edges through this address.
        match kind {
            Kind::AcquireLoad => {
                if let Some(s) = &cell.sync {
                    race::join(&mut th.clock.acq, s);
                }
            }
            Kind::VolatileRead | Kind::Atomic(_) => {
                if let Some(s) = &cell.sync {
                    race::join(&mut th.clock.pending, s);
                }
            }
            _ => {}
        }
        let found = cell.access(&Current { acc, clock: &th.clock });
        match kind {
            Kind::ReleaseStore => {
                let p = Pos { gid: th.gid, block: acc.block, bepoch: th.bepoch, gepoch: th.gepoch };
                cell.sync = Some(th.clock.release(p))
            }
            Kind::Atomic(_) => {
                if let Some(snap) = &th.clock.fence_snap {
                    let mut merged = cell.sync.as_deref().cloned().unwrap_or_default();
                    race::join(&mut merged, snap);
                    cell.sync = Some(std::rc::Rc::new(merged));
                }
            }
            Kind::Write | Kind::VolatileWrite => {
                if let Some(snap) = &th.clock.fence_snap {
                    cell.sync = Some(snap.clone());
                }
            }
            _ => {}
        }
        if let Some((first, why)) = found {
            let place = Place { space, addr, size, shared_base };
            self.findings.record(&place, self.blocks[b].linear, first, acc, why);
        }
    }
}
