//! Spin loops: which accesses are polls, and when a launch is stuck polling.
//!
//! A *poll* is an access that leaves memory as it was: a volatile or acquire load, a read-modify-write
//! that writes back the value it found (a compare-and-swap whose compare fails, an exchange, add, or,
//! and, min or max that changes nothing), or a `nanosleep`. A *write* (a store, or a read-modify-write
//! that changes the value), a completed barrier or collective, and a thread's exit are progress.
//!
//! The launch is *livelocked* when [`Options::poll_limit`](crate::emu::Options::poll_limit) polls happened
//! since the last progress and every runnable thread is in a run of polls (a thread that did anything
//! else since its last poll may be about to write). Each thread remembers the last memory it polled
//! and the value it saw, so the report says what it waits for: "wait at `site` for `lock`[0] to change
//! from 1". The last atomic, volatile or release writer of each address is remembered too, so the
//! report can say who set that value.
//!
//! A thread that polls the same location again and finds the same value, with nothing but polls in
//! between, is *parked*: the scheduler does not run it until that location changes (a write of other
//! bytes than it saw; for a compare-and-swap, a write of the value it compares with, which wakes one
//! such thread, chosen by the seeded generator), until no other thread can run, or until
//! [`PARK_BOUND`] scheduler steps have passed. Running it earlier would only repeat the same failed
//! poll, so a contended lock costs work linear in the number of spinners, not quadratic. The thread
//! stays runnable in every report (it is spinning), and the polls it makes when woken count towards
//! the livelock limit as before.
//!
//! Acts on the launch state (`state`, `polled`); names no other file of the engine but `deadlock`'s
//! formatting.

use super::deadlock::fmt_dim;
use super::polled::{Polled, Writer, fmt_value};
use super::state::{State, Status};
use crate::Site;
use crate::atomic::SpaceKind;
use crate::emu::report::{Place, names};

/// A parked thread runs again after at most this many scheduler steps, even if its location has not
/// changed (so that a spin with a bound reaches it while other threads keep running).
pub(crate) const PARK_BOUND: u64 = 1 << 16;

impl State {
    /// Marks a forward step: a write, a completed barrier, an exit. Resets the spin detector.
    pub fn progress(&mut self) {
        self.polls = 0;
    }

    /// Thread `t` entered the emulator at `site` for something other than a poll: it is not spinning.
    pub fn busy(&mut self, t: usize, site: Site) {
        if self.is_parked(t) {
            self.unpark(t);
        }
        let th = &mut self.threads[t];
        th.at = Some(site);
        th.spins = 0;
        th.polled = None;
    }

    /// Thread `t` wrote `bits` (`size` bytes) to `addr` at `site`: progress, and threads parked on that
    /// location may run again. `strong` writes (atomic, volatile, release) are remembered as that
    /// address's last writer.
    pub fn wrote(&mut self, t: usize, site: Site, (addr, size, bits): (usize, usize, u64), strong: bool) {
        self.progress();
        self.busy(t, site);
        if strong {
            self.writers.insert(addr, Writer { thread: t, site, bits });
        }
        self.changed(addr, size, bits);
    }

    /// A poll by thread `t` at `site`: of memory (`mem`, with the value seen), or a sleep (`None`).
    /// A poll that finds what the thread's previous poll found, with only polls in between, parks it.
    pub fn poll(&mut self, t: usize, site: Site, mem: Option<Polled>) {
        self.polls += 1;
        let th = &mut self.threads[t];
        th.at = Some(site);
        let again = th.spins > 0 && matches!((&th.polled, &mem), (Some((_, p)), Some(m)) if p.same(m));
        th.spins += 1;
        if let Some(m) = mem {
            th.polled = Some((site, m));
            if again {
                self.park(t, m.addr);
            }
        }
    }

    /// Whether thread `t` is parked: runnable, but out of the scheduler's list until woken.
    fn is_parked(&self, t: usize) -> bool {
        matches!(self.threads[t].status, Status::Runnable) && self.pos[t] == usize::MAX
    }

    /// Takes thread `t`, which polls `addr`, out of the scheduler's list (it keeps running until it
    /// next suspends).
    fn park(&mut self, t: usize, addr: usize) {
        self.leave_runnable(t);
        self.parked.entry(addr).or_default().push(t);
    }

    /// Puts parked thread `t` back into the scheduler's list; it is still spinning.
    fn unpark(&mut self, t: usize) {
        self.pos[t] = self.runnable.len();
        self.runnable.push(t);
    }

    /// The thread parked on `key` in entry `t`, if the entry is current (the thread is still parked,
    /// on that address).
    fn parked_on(&self, t: usize, key: usize) -> Option<Polled> {
        let (_, m) = self.threads[t].polled?;
        (self.is_parked(t) && m.addr == key).then_some(m)
    }

    /// `size` bytes at `addr` now hold `bits`: wakes the threads parked on a location this changes.
    pub(crate) fn changed(&mut self, addr: usize, size: usize, bits: u64) {
        if self.parked.is_empty() {
            return;
        }
        for key in addr.saturating_sub(7)..addr + size {
            let Some(list) = self.parked.remove(&key) else { continue };
            let (mut keep, mut cas) = (Vec::new(), Vec::new());
            for t in list {
                let Some(m) = self.parked_on(t, key) else { continue };
                if key + m.size <= addr || addr + size <= key {
                    keep.push(t); // no byte in common
                } else if key != addr || m.size != size {
                    self.unpark(t); // part of it changed: look again
                } else if let Some(c) = m.compare {
                    // Only a write of the compared value lets a compare-and-swap succeed, and only one.
                    if c == bits { cas.push(t) } else { keep.push(t) }
                } else if m.bits != bits {
                    self.unpark(t);
                } else {
                    keep.push(t);
                }
            }
            if !cas.is_empty() {
                let k = self.rng.below(cas.len());
                self.unpark(cas.swap_remove(k));
                keep.extend(cas);
            }
            if !keep.is_empty() {
                self.parked.insert(key, keep);
            }
        }
    }

    /// Wakes every parked thread: no other thread can run, or [`PARK_BOUND`] steps have passed.
    pub(super) fn wake_all(&mut self) {
        let mut keys: Vec<(usize, Vec<usize>)> = self.parked.drain().collect();
        // A fixed order, so that a schedule seed replays exactly.
        keys.sort_unstable_by_key(|&(k, _)| k);
        for (key, list) in keys {
            for t in list {
                if self.parked_on(t, key).is_some() {
                    self.unpark(t);
                }
            }
        }
    }

    /// Whether the launch is stuck: enough polls since the last progress, and every runnable thread
    /// is polling.
    pub(super) fn livelocked(&self) -> bool {
        self.polls > self.opts.poll_limit && self.runnable.iter().all(|&t| self.threads[t].spins > 0)
    }

    /// What a polling thread waits for: `wait at <site> for `lock`[0] to change from 1 (set by block 0
    /// thread 3 at <site>)`, or, for a thread that only sleeps, where it sleeps.
    pub(super) fn spin_what(&self, t: usize) -> String {
        let th = &self.threads[t];
        let Some((site, m)) = th.polled else {
            let at = th.at.map(Self::site_str).unwrap_or_default();
            return format!("poll at {at} without reading memory (nanosleep)");
        };
        let place = match m.space {
            SpaceKind::Global => {
                let (name, index) = names::describe(m.addr, m.size);
                format!("`{name}`[{index}]")
            }
            SpaceKind::Shared => {
                let blk = &self.blocks[th.block];
                let shared_base = blk.shared.as_ptr() as usize;
                let place = Place { space: SpaceKind::Shared, addr: m.addr, size: m.size, shared_base };
                format!("{} of block {}", place.shared_name(&self.model.findings().shared_layouts), fmt_dim(blk.idx))
            }
        };
        let mut what =
            format!("wait at {} for {place} to change from {}", Self::site_str(site), fmt_value(m.bits, m.ty));
        if let Some(w) = self.writers.get(&m.addr).filter(|w| w.bits == m.bits) {
            what += &format!(" (set by {} at {})", self.tid(w.thread), Self::site_str(w.site));
        }
        what
    }
}
