//! The launch state, as data: every thread and block of the running wave (`EThread`, `EBlock`, with
//! the barrier and warp collectives they wait in), the scheduler's runnable list and generator, the
//! memory model, the host agent's state, and the facts a running thread's primitives read (`Info`).
//! The operations on it live with what they do (`barrier`, `collectives`, `poll`, `deadlock`,
//! `host_agent`); the thread-locals through which a primitive reaches it, in `context`.
//!
//! Names the data it holds (`polled`, `watchdog`'s running thread, the model, the reports, the
//! settings) and gpu-std's vocabulary; no operation of the engine, not `context`, `sched` or
//! `launch`.

use super::polled::{Polled, Writer};
use crate::emu::config::{LaunchConfig, Options, SiteKind};
use crate::emu::model::Model;
use crate::emu::report::{EmuError, SyncSite, ThreadId, Warning};
use crate::vocab::dim3::Dim3;
use crate::vocab::lanes::ShflMode;
use crate::vocab::site::Site;
use corosensei::Yielder;
use std::cell::RefCell;
use std::collections::HashMap;

/// Threads per wave of a normal launch (bounded memory for coroutine stacks).
pub(crate) const WAVE_THREADS: u64 = 8192;

/// The thread index the running host agent has for GPU primitives: none (they refuse to run).
pub(crate) const NOT_A_GPU_THREAD: usize = usize::MAX;

/// SplitMix64: small, fast, seedable.
pub(crate) struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Status {
    Runnable,
    Barrier(Site),
    Warp(Site, CollKind, u32),
    Grid(Site),
    Exited,
}

pub(crate) struct EThread {
    pub block: usize,
    pub tid: Dim3,
    pub rank: u32,
    pub status: Status,
    pub result: u32,
    /// Where the thread first accessed memory since its last block barrier (a thread that exits after
    /// touching memory in the interval skipped the barrier that ends it).
    pub first_access: Option<Site>,
    /// The last source line at which the thread entered the emulator (a primitive or an access).
    pub at: Option<Site>,
    /// Consecutive polls by this thread with nothing else in between (0: it is doing other work).
    pub spins: u64,
    /// The last memory the thread polled since it last did other work: where, and what it saw.
    pub polled: Option<(Site, Polled)>,
}

pub(crate) struct EBlock {
    pub idx: Dim3,
    pub linear: u32,
    pub first: usize,
    pub n: usize,
    pub shared: Vec<u128>,
    pub live: u32,
    pub exited: u32,
    pub(super) bar: Bar,
    pub(super) warps: Vec<Vec<Coll>>,
}

pub(crate) struct State {
    pub kernel: String,
    pub cfg: LaunchConfig,
    pub opts: Options,
    pub rng: Rng,
    pub threads: Vec<EThread>,
    pub blocks: Vec<EBlock>,
    pub(super) runnable: Vec<usize>,
    pub(super) pos: Vec<usize>,
    pub(super) grid_arrived: u32,
    pub(super) grid_site: Option<Site>,
    pub error: Option<EmuError>,
    /// What the memory model knows of the launch: every access, fence and barrier is told to it.
    pub model: Model,
    /// Polls since the last write, completed barrier or exit.
    pub polls: u64,
    /// The last thread to change each address with an atomic, volatile or release write (this wave).
    pub writers: HashMap<usize, Writer>,
    /// Parked threads by the address they poll (see `poll`); entries of threads woken since are stale.
    pub(super) parked: HashMap<usize, Vec<usize>>,
    pub warnings: Vec<Warning>,
    /// The synchronisation sites executed, when `Options::record_sites` is set.
    pub sites: std::collections::BTreeMap<(&'static str, u32, u32, SiteKind), SyncSite>,
    pub steps: u64,
    pub(super) yielders: Vec<*const Yielder<(), ()>>,
    pub wave_live: u32,
    /// The emulated thread running now, for the watchdog (see `watchdog`).
    pub running: std::sync::Arc<super::watchdog::RunningThread>,
    /// The launch's host agent, if it has one (see `host_agent`).
    pub host: Option<HostAgent>,
}

pub(crate) struct Emu {
    pub st: RefCell<State>,
}

/// Per-thread facts cached for fast index queries.
#[derive(Clone, Copy, Default)]
pub(crate) struct Info {
    pub tid: Dim3,
    pub bid: Dim3,
    pub bdim: Dim3,
    pub gdim: Dim3,
    pub lane: u32,
    pub index: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarOp {
    Sync,
    Count,
    And,
    Or,
}

#[derive(Default)]
pub(super) struct Bar {
    pub(super) arrived: u32,
    /// Call sites threads wait at (more than one is divergence).
    pub(super) sites: Vec<Site>,
    pub(super) op: Option<BarOp>,
    pub(super) count: u32,
    pub(super) all: bool,
    pub(super) any: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CollKind {
    Shfl(ShflMode),
    Ballot,
    /// `warp::match_bits`: the lanes whose value agrees in the low `c` bits.
    MatchBits,
    Any,
    All,
    SyncWarp,
}

impl CollKind {
    pub(super) fn name(self) -> &'static str {
        match self {
            CollKind::Shfl(ShflMode::Down) => "shfl.sync.down",
            CollKind::Shfl(ShflMode::Up) => "shfl.sync.up",
            CollKind::Shfl(ShflMode::Xor) => "shfl.sync.bfly",
            CollKind::Shfl(ShflMode::Idx) => "shfl.sync.idx",
            CollKind::Ballot => "vote.sync.ballot",
            CollKind::MatchBits => "vote.sync.ballot (match_bits)",
            CollKind::Any => "vote.sync.any",
            CollKind::All => "vote.sync.all",
            CollKind::SyncWarp => "bar.warp.sync",
        }
    }
}

pub(super) struct Coll {
    pub(super) kind: CollKind,
    pub(super) site: Site,
    pub(super) mask: u32,
    pub(super) arrived: u32,
    pub(super) vals: [u32; 32],
    pub(super) bs: [u32; 32],
    pub(super) c: u32,
}

/// The host agent's state in a launch.
pub(crate) struct HostAgent {
    /// It has not returned yet.
    pub live: bool,
    pub(super) at: Option<Site>,
    /// Consecutive polls with nothing else in between.
    pub(super) spins: u64,
    pub(super) polled: Option<(Site, Polled)>,
    pub(super) yielder: *const Yielder<(), ()>,
    /// Its operations so far (its own clock of steps).
    pub ops: u64,
}

impl HostAgent {
    pub(crate) fn new() -> Self {
        HostAgent { live: true, at: None, spins: 0, polled: None, yielder: std::ptr::null(), ops: 0 }
    }
}

impl State {
    pub fn tid(&self, t: usize) -> ThreadId {
        let th = &self.threads[t];
        ThreadId::new(self.blocks[th.block].idx, th.tid)
    }

    pub(super) fn make_runnable(&mut self, t: usize) {
        if self.pos[t] == usize::MAX {
            self.pos[t] = self.runnable.len();
            self.runnable.push(t);
        }
        let th = &mut self.threads[t];
        th.status = Status::Runnable;
        // Released from a barrier or collective: not spinning.
        th.spins = 0;
        th.polled = None;
    }

    pub(super) fn block_thread(&mut self, t: usize, status: Status) {
        self.leave_runnable(t);
        self.threads[t].status = status;
    }

    /// Takes thread `t` out of the list the scheduler picks from (if it is in it).
    pub(super) fn leave_runnable(&mut self, t: usize) {
        let p = self.pos[t];
        if p != usize::MAX {
            let last = *self.runnable.last().expect("non-empty");
            self.runnable.swap_remove(p);
            if last != t {
                self.pos[last] = p;
            }
            self.pos[t] = usize::MAX;
        }
    }
}
