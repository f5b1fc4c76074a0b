//! Predictive detection of races that the order of taking a lock hides.
//!
//! Thread A takes a lock, releases it, then writes `x` outside it; thread B reads `x` inside the lock.
//! When B's critical section runs first, B's read happens before A's write *through the lock handoff*
//! (B's release, A's acquire); in the other order of taking the lock nothing orders them. The race is
//! real, but a run sees it only when A wins the lock first.
//!
//! So besides its happens-before knowledge, a thread keeps what it knows **without lock handoffs**
//! (its `Pred`, in `clock`): a lock acquire — a successful compare-and-swap or exchange that takes the
//! lock, whose observed release is then acquired by a fence — adds the previous holder's release to the
//! thread's full knowledge only. Critical sections of one lock may run in either order, unless they
//! touch the same data: as in weak-causally-precedes analysis, when an access inside a critical section
//! of lock `l` conflicts with an access an earlier critical section of `l` made, the earlier section's
//! release is ordered before it in every order (so it is joined into the lock-free knowledge too).
//! Two conflicting accesses that the full knowledge orders but the lock-free knowledge does not are
//! reported as a **predicted** race, naming the lock and both critical sections.
//!
//! A lock is recognised from what a thread does to a word: a compare-and-swap or exchange that changes
//! it takes it (the value it replaced is the unlocked value), and a later store, exchange or release
//! store of that value by the same thread releases it. What a thread does while holding it is its
//! critical section. A critical section that touches more than [`MAX_CS_ADDRESSES`] addresses makes
//! its lock unpredictable: its handoffs then count as ordinary happens-before (no prediction, no false
//! report).

use super::clock::Clock;
use super::int_map::IntMap;
use super::lock::{Held, Section};
use std::collections::HashMap;

/// Addresses one critical section may touch before its lock is no longer used for prediction.
pub(crate) const MAX_CS_ADDRESSES: usize = 64;
/// The block key of sections acquired at device or system scope (ordered before any section).
const ANY_BLOCK: u32 = u32::MAX;
/// Locks one thread is followed holding at once.
pub(crate) const MAX_HELD: usize = 8;

/// What the critical sections of every lock touched, per launch.
#[derive(Debug, Default)]
pub(crate) struct Locks {
    /// (lock, address, block) → releases of the critical sections that wrote it, and that read it;
    /// block [`ANY_BLOCK`] for sections acquired at device or system scope, else the block of a
    /// section acquired at block scope (it is ordered only before sections of its own block).
    /// Sections that ran unacquired are not kept: no order of the lock orders them.
    touched: HashMap<(usize, usize, u32), (Clock, Clock)>,
    /// The last critical section of each lock.
    pub last: IntMap<usize, Section>,
    /// Locks whose critical sections were too large to follow.
    unpredictable: IntMap<usize, ()>,
}

impl Locks {
    /// Whether handoffs of the lock at `addr` may be reordered for prediction.
    pub fn predictable(&self, addr: usize) -> bool {
        !self.unpredictable.contains_key(&addr)
    }

    /// A critical section of the lock at `held.addr` ended with the release `clock`.
    pub fn released(&mut self, held: &Held, gid: u32, clock: &Clock) {
        use crate::atomic::ScopeKind;
        if held.touched.len() > MAX_CS_ADDRESSES {
            self.unpredictable.insert(held.addr, ());
        }
        // Had a later section of the lock come first, this one would be ordered after it only
        // through its own acquire: a section that ran unacquired is ordered after none.
        let block = match held.acquired {
            None => None,
            Some(ScopeKind::Block) => Some(held.block),
            Some(_) => Some(ANY_BLOCK),
        };
        if let Some(block) = block {
            for &(x, writes) in &held.touched {
                let e = self.touched.entry((held.addr, x, block)).or_default();
                if writes { &mut e.0 } else { &mut e.1 }.join(clock);
            }
        }
        self.last.insert(held.addr, Section { gid, taken: held.taken });
    }

    /// What an access to `x` (reading, writing) inside a critical section of `lock` by a thread of
    /// block `block` is ordered after in every order of the lock's critical sections, among the
    /// earlier sections that would be ordered after it in the other order (they acquired the lock
    /// at a scope that includes the thread): into `always`, those whose access it depends on — it
    /// reads what they wrote, or writes what they read (the other order would change a value
    /// read); into `section`, those that only wrote what it writes (the lock orders the two sections
    /// either way, but not what the thread does after its section).
    pub fn ordered_before(
        &self,
        lock: usize,
        x: usize,
        (reads, writes): (bool, bool),
        block: u32,
        always: &mut Clock,
        section: &mut Clock,
    ) {
        for b in [ANY_BLOCK, block] {
            if let Some((w, r)) = self.touched.get(&(lock, x, b)) {
                if reads {
                    always.join(w);
                } else if writes {
                    section.join(w);
                }
                if writes {
                    always.join(r);
                }
            }
        }
    }

    /// Bytes held (for the shadow-memory total).
    pub fn bytes(&self) -> usize {
        self.touched.capacity() * (size_of::<((usize, usize, u32), (Clock, Clock))>() + 1)
            + self.last.capacity() * (size_of::<(usize, Section)>() + 1)
    }
}
