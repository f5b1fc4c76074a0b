//! A lock as the model follows it: a critical section (`Section`), a lock a thread holds and what
//! its section touched (`Held`), and the handoff that gave a thread knowledge (`Edge`). What
//! `clock` keeps of a thread's locks, and what `predict` reorders.
//!
//! Names only gpu-std's vocabulary (sites, scopes): below `clock` and `predict`, which both use it.

use crate::vocab::site::Site;

/// One critical section, for reports.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Section {
    pub gid: u32,
    /// Where the lock was taken.
    pub taken: Site,
}

/// A lock a thread holds, and what its critical section touched.
#[derive(Clone, Debug)]
pub(crate) struct Held {
    pub addr: usize,
    /// Bits of the value that releases the lock (the value the acquiring atomic replaced).
    pub unlocked: u64,
    pub taken: Site,
    /// Addresses touched in the critical section, and whether each was written.
    pub touched: Vec<(usize, bool)>,
    /// The scope of the fence that acquired the lock: the first fence after the take, if it came
    /// before the section's first access (`None`: the section ran unacquired).
    pub acquired: Option<crate::vocab::scope::ScopeKind>,
    /// The thread's block (linear index), to judge a block-scope acquire.
    pub block: u32,
}

/// A lock handoff that gave a thread knowledge: which lock, and the critical section it came from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub lock: usize,
    pub from: Section,
    /// The receiving thread's own critical section.
    pub to: Section,
}
