//! The scheduler: coroutines for GPU threads, waves of resident blocks, barriers, warp collectives,
//! the grid barrier, and the deadlock/livelock reports.

use super::race::{self, Acc, Current, Findings, Kind, Place, Pos, ThreadClock};
use super::report::{Deadlock, EmuError, Outcome, ThreadId, WaitGroup};
use super::{LaunchConfig, Options};
use crate::Dim3;
use crate::Site;
use crate::atomic::SpaceKind;
use crate::warp::{ShflMode, shfl_source_lane};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

const STACK_BYTES: usize = 256 * 1024;
/// Threads per wave of a normal launch (bounded memory for coroutine stacks).
const WAVE_THREADS: u64 = 8192;
/// Largest dynamic shared memory per block accepted (the H100/H200 opt-in maximum, 227 KiB).
const MAX_SHARED_BYTES: usize = 227 * 1024;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CollKind {
    Shfl(ShflMode),
    Ballot,
    Any,
    All,
    SyncWarp,
}

impl CollKind {
    fn name(self) -> &'static str {
        match self {
            CollKind::Shfl(ShflMode::Down) => "shfl.sync.down",
            CollKind::Shfl(ShflMode::Up) => "shfl.sync.up",
            CollKind::Shfl(ShflMode::Xor) => "shfl.sync.bfly",
            CollKind::Shfl(ShflMode::Idx) => "shfl.sync.idx",
            CollKind::Ballot => "vote.sync.ballot",
            CollKind::Any => "vote.sync.any",
            CollKind::All => "vote.sync.all",
            CollKind::SyncWarp => "bar.warp.sync",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarOp {
    Sync,
    Count,
    And,
    Or,
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
    pub gid: u32,
    pub status: Status,
    pub bepoch: u32,
    pub gepoch: u32,
    pub clock: ThreadClock,
    pub result: u32,
    pub last_poll: Option<Site>,
    /// Consecutive polls by this thread with nothing else in between (0: it is doing other work).
    pub spins: u64,
}

struct Coll {
    kind: CollKind,
    site: Site,
    mask: u32,
    arrived: u32,
    vals: [u32; 32],
    bs: [u32; 32],
    c: u32,
}

#[derive(Default)]
struct Bar {
    arrived: u32,
    /// Call sites threads wait at (more than one is divergence).
    sites: Vec<Site>,
    op: Option<BarOp>,
    count: u32,
    all: bool,
    any: bool,
}

pub(crate) struct EBlock {
    pub idx: Dim3,
    pub linear: u32,
    pub first: usize,
    pub n: usize,
    pub shared: Vec<u128>,
    pub live: u32,
    pub exited: u32,
    bar: Bar,
    pub epoch: u32,
    warps: Vec<Vec<Coll>>,
    pub shadow: HashMap<usize, race::Cell>,
}

pub(crate) struct State {
    pub kernel: String,
    pub cfg: LaunchConfig,
    pub opts: Options,
    pub rng: Rng,
    pub threads: Vec<EThread>,
    pub blocks: Vec<EBlock>,
    runnable: Vec<usize>,
    pos: Vec<usize>,
    grid_arrived: u32,
    grid_site: Option<Site>,
    pub grid_epoch: u32,
    pub error: Option<EmuError>,
    pub global_shadow: HashMap<usize, race::Cell>,
    pub findings: Findings,
    pub polls: u64,
    pub steps: u64,
    yielders: Vec<*const Yielder<(), ()>>,
    pub wave_live: u32,
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

thread_local! {
    static CTX: Cell<*const Emu> = const { Cell::new(std::ptr::null()) };
    pub(crate) static INFO: Cell<Info> = Cell::new(Info::default());
    static YIELDER: Cell<*const Yielder<(), ()>> = const { Cell::new(std::ptr::null()) };
    static IN_KERNEL: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Whether the calling code runs inside an emulated launch.
pub(crate) fn active() -> bool {
    CTX.with(|c| !c.get().is_null())
}

pub(crate) fn info() -> Info {
    assert!(active(), "GPU primitive called outside a kernel launch (use gpu_std::emu::launch)");
    INFO.with(|i| i.get())
}

/// Runs `f` on the launch state. Never suspends while borrowed.
pub(crate) fn with_state<R>(f: impl FnOnce(&mut State, usize) -> R) -> R {
    let emu = CTX.with(|c| c.get());
    assert!(!emu.is_null(), "GPU primitive called outside a kernel launch (use gpu_std::emu::launch)");
    let me = INFO.with(|i| i.get().index);
    // SAFETY: CTX points to the Emu owned by `run_launch`, alive for the whole launch, and only this
    // OS thread touches it.
    let emu = unsafe { &*emu };
    f(&mut emu.st.borrow_mut(), me)
}

/// Gives the scheduler the chance to run another thread (or waits, if this thread is blocked).
pub(crate) fn suspend() {
    let y = YIELDER.with(|y| y.get());
    assert!(!y.is_null());
    // SAFETY: the yielder of the running coroutine, set when it started; valid while it runs.
    unsafe { (*y).suspend(()) }
}

fn install_panic_capture() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_KERNEL.with(|k| k.get()) {
                let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
                    s.to_string()
                } else if let Some(s) = info.payload().downcast_ref::<String>() {
                    s.clone()
                } else {
                    "panic".to_string()
                };
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
                    .unwrap_or_default();
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{at}")));
            } else {
                prev(info)
            }
        }));
    });
}

fn validate(name: &str, cfg: &LaunchConfig, opts: &Options) -> Result<(), EmuError> {
    let bad = |m: String| Err(EmuError::InvalidLaunch(format!("kernel `{name}`: {m}")));
    let (g, b) = (cfg.grid, cfg.block);
    if g.volume() == 0 || b.volume() == 0 {
        return bad(format!("grid {g:?} and block {b:?} must have every extent >= 1"));
    }
    if b.volume() > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64 {
        return bad(format!("block {b:?} exceeds 1024 threads (x, y <= 1024, z <= 64)"));
    }
    if g.x > i32::MAX as u32 || g.y > 65535 || g.z > 65535 {
        return bad(format!("grid {g:?} exceeds (2^31-1, 65535, 65535)"));
    }
    if cfg.shared_bytes > MAX_SHARED_BYTES {
        return bad(format!("{} bytes of shared memory exceed {MAX_SHARED_BYTES}", cfg.shared_bytes));
    }
    if g.volume() * b.volume() > u32::MAX as u64 {
        return bad("more than 2^32 threads".into());
    }
    if opts.max_resident_blocks == 0 {
        return bad("max_resident_blocks must be >= 1".into());
    }
    if cfg.cooperative && g.volume() > opts.max_resident_blocks as u64 {
        return Err(EmuError::CooperativeTooLarge {
            kernel: name.to_string(),
            blocks: g.volume(),
            limit: opts.max_resident_blocks,
        });
    }
    Ok(())
}

pub(crate) fn run_launch(name: &str, cfg: &LaunchConfig, opts: &Options, body: &dyn Fn()) -> Result<Outcome, EmuError> {
    validate(name, cfg, opts)?;
    assert!(!active(), "emulated launches cannot nest");
    install_panic_capture();
    let block_threads = cfg.block.volume();
    let total_blocks = cfg.grid.volume();
    let wave_blocks = if cfg.cooperative {
        total_blocks
    } else {
        (opts.max_resident_blocks as u64).min((WAVE_THREADS / block_threads).max(1)).min(total_blocks)
    };
    let mut rng = Rng::new(opts.schedule_seed);
    // Blocks start in a seeded order: a kernel must not depend on block order.
    let mut order: Vec<u32> = (0..total_blocks as u32).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let emu = Box::new(Emu {
        st: RefCell::new(State {
            kernel: name.to_string(),
            cfg: *cfg,
            opts: opts.clone(),
            rng,
            threads: Vec::new(),
            blocks: Vec::new(),
            runnable: Vec::new(),
            pos: Vec::new(),
            grid_arrived: 0,
            grid_site: None,
            grid_epoch: 0,
            error: None,
            global_shadow: HashMap::new(),
            findings: Findings::new(name, opts.max_race_reports),
            polls: 0,
            steps: 0,
            yielders: Vec::new(),
            wave_live: 0,
        }),
    });
    let start = Instant::now();
    let mut stacks: Vec<DefaultStack> = Vec::new();
    let result = (|| {
        for wave in order.chunks(wave_blocks as usize) {
            run_wave(&emu, wave, body, &mut stacks, start)?;
        }
        Ok(())
    })();
    let st = emu.st.into_inner();
    result.map(|()| Outcome {
        races: st.findings.races,
        racy_addresses: st.findings.racy_addresses,
        steps: st.steps,
        threads: total_blocks * block_threads,
    })
}

fn run_wave(
    emu: &Emu,
    wave: &[u32],
    body: &dyn Fn(),
    stacks: &mut Vec<DefaultStack>,
    start: Instant,
) -> Result<(), EmuError> {
    let (bdim, gdim) = {
        let st = &mut *emu.st.borrow_mut();
        let cfg = st.cfg;
        let bdim = cfg.block;
        let n = bdim.volume() as usize;
        st.threads.clear();
        st.blocks.clear();
        for &lin in wave {
            let idx = cfg.grid.delinear(lin);
            let first = st.threads.len();
            for r in 0..n as u32 {
                st.threads.push(EThread {
                    block: st.blocks.len(),
                    tid: bdim.delinear(r),
                    rank: r,
                    gid: lin * n as u32 + r,
                    status: Status::Runnable,
                    bepoch: 0,
                    gepoch: st.grid_epoch,
                    clock: ThreadClock::default(),
                    result: 0,
                    last_poll: None,
                    spins: 0,
                });
            }
            st.blocks.push(EBlock {
                idx,
                linear: lin,
                first,
                n,
                shared: vec![0u128; cfg.shared_bytes.div_ceil(16)],
                live: n as u32,
                exited: 0,
                bar: Bar::default(),
                epoch: 0,
                warps: (0..n.div_ceil(32)).map(|_| Vec::new()).collect(),
                shadow: HashMap::new(),
            });
        }
        let total = st.threads.len();
        st.runnable = (0..total).collect();
        st.pos = (0..total).collect();
        st.yielders = vec![std::ptr::null(); total];
        st.wave_live = total as u32;
        st.grid_arrived = 0;
        st.grid_site = None;
        (bdim, cfg.grid)
    };
    let total = emu.st.borrow().threads.len();
    let body_ptr: *const dyn Fn() = body;
    let mut cos: Vec<Option<Coroutine<(), (), ()>>> = Vec::with_capacity(total);
    for t in 0..total {
        let stack = match stacks.pop() {
            Some(s) => s,
            None => DefaultStack::new(STACK_BYTES).map_err(|e| {
                EmuError::InvalidLaunch(format!("cannot allocate a coroutine stack for thread {t}: {e}"))
            })?,
        };
        // SAFETY: the closure borrows `body` and `emu`, which outlive every coroutine: all of them are
        // completed or dropped before this function returns.
        let co = unsafe {
            Coroutine::with_stack_unchecked(stack, move |y: &Yielder<(), ()>, ()| {
                YIELDER.with(|c| c.set(y as *const _));
                with_state(|st, me| st.yielders[me] = y as *const _);
                (*body_ptr)();
                with_state(|st, me| st.thread_exit(me));
            })
        };
        cos.push(Some(co));
    }
    CTX.with(|c| c.set(emu as *const Emu));
    let outcome = schedule(emu, &mut cos, bdim, gdim, start);
    // Completed coroutines give their stacks back; suspended ones (after an error) are unwound on drop.
    for co in cos.into_iter().flatten() {
        if co.done() {
            stacks.push(co.into_stack());
        } else {
            drop(co);
        }
    }
    CTX.with(|c| c.set(std::ptr::null()));
    outcome
}

fn schedule(
    emu: &Emu,
    cos: &mut [Option<Coroutine<(), (), ()>>],
    bdim: Dim3,
    gdim: Dim3,
    start: Instant,
) -> Result<(), EmuError> {
    loop {
        let next = {
            let st = &mut *emu.st.borrow_mut();
            if let Some(e) = st.error.take() {
                return Err(e);
            }
            if st.runnable.is_empty() {
                if st.wave_live == 0 {
                    return Ok(());
                }
                return Err(EmuError::Deadlock(st.deadlock_report("no thread can make progress")));
            }
            st.steps += 1;
            if st.steps.is_multiple_of(4096) {
                let el = start.elapsed();
                if el > st.opts.time_limit {
                    return Err(EmuError::TimeLimit {
                        kernel: st.kernel.clone(),
                        seconds: el.as_secs_f64(),
                        steps: st.steps,
                    });
                }
            }
            // Stuck: many polls with no write anywhere, and every runnable thread is spinning (a thread
            // that computes with plain loads may still be about to write).
            if st.polls > st.opts.poll_limit
                && st.steps.is_multiple_of(1024)
                && st.runnable.iter().all(|&t| st.threads[t].spins > 0)
            {
                return Err(EmuError::Livelock(st.livelock_report()));
            }
            let n = st.runnable.len();
            let k = st.rng.below(n);
            let t = st.runnable[k];
            let th = &st.threads[t];
            let b = &st.blocks[th.block];
            INFO.with(|i| i.set(Info { tid: th.tid, bid: b.idx, bdim, gdim, lane: th.rank % 32, index: t }));
            YIELDER.with(|y| y.set(st.yielders[t]));
            t
        };
        let co = cos[next].as_mut().expect("runnable thread has a coroutine");
        IN_KERNEL.with(|k| k.set(true));
        let r = catch_unwind(AssertUnwindSafe(|| co.resume(())));
        IN_KERNEL.with(|k| k.set(false));
        match r {
            Ok(CoroutineResult::Yield(())) => {}
            Ok(CoroutineResult::Return(())) => {}
            Err(payload) => {
                let message = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| {
                    payload
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| payload.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "panic".into())
                });
                let st = emu.st.borrow();
                if let Some(e) = st.error.clone() {
                    return Err(e);
                }
                let th = &st.threads[next];
                return Err(EmuError::KernelPanic {
                    kernel: st.kernel.clone(),
                    thread: ThreadId::new(st.blocks[th.block].idx, th.tid),
                    message,
                });
            }
        }
    }
}

impl State {
    pub fn pos_of(&self, t: usize) -> Pos {
        let th = &self.threads[t];
        Pos { gid: th.gid, block: self.blocks[th.block].linear, bepoch: th.bepoch, gepoch: th.gepoch }
    }

    pub fn tid(&self, t: usize) -> ThreadId {
        let th = &self.threads[t];
        ThreadId::new(self.blocks[th.block].idx, th.tid)
    }

    fn make_runnable(&mut self, t: usize) {
        if self.pos[t] == usize::MAX {
            self.pos[t] = self.runnable.len();
            self.runnable.push(t);
        }
        self.threads[t].status = Status::Runnable;
    }

    fn block_thread(&mut self, t: usize, status: Status) {
        let p = self.pos[t];
        if p != usize::MAX {
            let last = *self.runnable.last().expect("non-empty");
            self.runnable.swap_remove(p);
            if last != t {
                self.pos[last] = p;
            }
            self.pos[t] = usize::MAX;
        }
        self.threads[t].status = status;
    }

    /// Marks a forward step: a write, a completed barrier, an exit. Resets the spin detector.
    pub fn progress(&mut self) {
        self.polls = 0;
    }

    /// A poll by thread `t` at `site`: a volatile/acquire load, a failed compare-and-swap, a sleep.
    pub fn poll(&mut self, t: usize, site: Site) {
        self.polls += 1;
        let th = &mut self.threads[t];
        th.spins += 1;
        th.last_poll = Some(site);
    }

    pub fn fail(&mut self, summary: String) {
        if self.error.is_none() {
            let d = self.deadlock_report(&summary);
            self.error = Some(EmuError::Deadlock(d));
        }
        // Stop everyone: the scheduler sees the error before picking again.
    }

    fn site_str(s: Site) -> String {
        format!("{}:{}:{}", s.file(), s.line(), s.column())
    }

    fn status_str(&self, s: Status) -> String {
        match s {
            Status::Runnable => "are runnable".into(),
            Status::Barrier(site) => format!("wait at block barrier {}", Self::site_str(site)),
            Status::Warp(site, k, mask) => {
                format!("wait in {} at {} (mask {mask:#010x})", k.name(), Self::site_str(site))
            }
            Status::Grid(site) => format!("wait at grid barrier {}", Self::site_str(site)),
            Status::Exited => "exited".into(),
        }
    }

    /// What every unfinished thread waits for, and which threads the waiters wait for.
    pub fn deadlock_report(&self, summary: &str) -> Deadlock {
        let mut waiting: BTreeMap<String, Vec<ThreadId>> = BTreeMap::new();
        for (t, th) in self.threads.iter().enumerate() {
            if !matches!(th.status, Status::Exited) {
                waiting.entry(self.status_str(th.status)).or_default().push(self.tid(t));
            }
        }
        let mut missing: BTreeMap<String, std::collections::BTreeSet<ThreadId>> = BTreeMap::new();
        let mut causes = Vec::new();
        for blk in &self.blocks {
            if blk.bar.arrived > 0 {
                let mut n = 0;
                for u in blk.first..blk.first + blk.n {
                    if !matches!(self.threads[u].status, Status::Barrier(_)) {
                        missing.entry(self.status_str(self.threads[u].status)).or_default().insert(self.tid(u));
                        n += 1;
                    }
                }
                let site = blk.bar.sites.first().map(|&s| Self::site_str(s)).unwrap_or_default();
                causes.push(format!(
                    "the block barrier {site} in block {} waits for {n} thread(s) that never arrive",
                    fmt_dim(blk.idx)
                ));
            }
            for (w, colls) in blk.warps.iter().enumerate() {
                for c in colls {
                    let absent = c.mask & !c.arrived;
                    for l in 0..32 {
                        if absent & (1 << l) != 0 {
                            let u = blk.first + w * 32 + l;
                            missing.entry(self.status_str(self.threads[u].status)).or_default().insert(self.tid(u));
                        }
                    }
                    causes.push(format!(
                        "{} at {} (mask {:#010x}) in block {} warp {w} waits for lanes {absent:#010x} that never arrive",
                        c.kind.name(),
                        Self::site_str(c.site),
                        c.mask,
                        fmt_dim(blk.idx)
                    ));
                }
            }
        }
        if self.grid_arrived > 0 {
            for (t, th) in self.threads.iter().enumerate() {
                if !matches!(th.status, Status::Grid(_)) {
                    missing.entry(self.status_str(th.status)).or_default().insert(self.tid(t));
                }
            }
            causes.push(format!(
                "the grid barrier waits for {} thread(s)",
                self.threads.len() as u32 - self.grid_arrived
            ));
        }
        let summary = if causes.is_empty() || !summary.starts_with("no thread") {
            summary.to_string()
        } else {
            format!("{summary}: {}", causes.join("; "))
        };
        Deadlock {
            kernel: self.kernel.clone(),
            summary,
            waiting: waiting.into_iter().map(|(what, threads)| WaitGroup { what, threads }).collect(),
            missing: missing
                .into_iter()
                .map(|(what, threads)| WaitGroup { what, threads: threads.into_iter().collect() })
                .collect(),
        }
    }

    fn livelock_report(&self) -> Deadlock {
        let mut groups: BTreeMap<String, Vec<ThreadId>> = BTreeMap::new();
        for (t, th) in self.threads.iter().enumerate() {
            if matches!(th.status, Status::Runnable) {
                let what = match th.last_poll {
                    Some(s) => format!("spin polling at {}", Self::site_str(s)),
                    None => "are runnable".into(),
                };
                groups.entry(what).or_default().push(self.tid(t));
            } else if !matches!(th.status, Status::Exited) {
                groups.entry(self.status_str(th.status)).or_default().push(self.tid(t));
            }
        }
        Deadlock {
            kernel: self.kernel.clone(),
            summary: format!(
                "spin loop without progress: {} polls and no thread wrote memory (a flag nobody sets, or a lock \
                 nobody releases)",
                self.polls
            ),
            waiting: groups.into_iter().map(|(what, threads)| WaitGroup { what, threads }).collect(),
            missing: vec![],
        }
    }

    // ---- thread exit ---------------------------------------------------------------------------

    pub fn thread_exit(&mut self, t: usize) {
        self.progress();
        self.block_thread(t, Status::Exited);
        self.wave_live -= 1;
        let b = self.threads[t].block;
        self.blocks[b].live -= 1;
        self.blocks[b].exited += 1;
        // Waiters that were waiting only for this thread can now be judged. Collectives whose mask
        // names it never complete; they end in the no-progress report, which names every thread.
        if self.blocks[b].bar.arrived > 0 {
            self.try_complete_barrier(b);
        }
        if self.grid_arrived > 0 && self.grid_arrived == self.wave_live {
            self.try_complete_grid();
        }
    }

    // ---- block barrier -------------------------------------------------------------------------

    pub fn barrier_arrive(&mut self, t: usize, op: BarOp, pred: bool, site: Site) {
        let b = self.threads[t].block;
        let bar = &mut self.blocks[b].bar;
        if bar.arrived == 0 {
            *bar = Bar { arrived: 0, sites: vec![], op: Some(op), count: 0, all: true, any: false };
        }
        if !bar.sites.contains(&site) {
            bar.sites.push(site);
        }
        bar.arrived += 1;
        bar.count += pred as u32;
        bar.all &= pred;
        bar.any |= pred;
        self.block_thread(t, Status::Barrier(site));
        self.try_complete_barrier(b);
    }

    /// Completes block `b`'s barrier once every live thread waits at it, or reports divergence if
    /// threads exited without reaching it or wait at different barriers.
    fn try_complete_barrier(&mut self, b: usize) {
        let blk = &self.blocks[b];
        if blk.bar.arrived < blk.live {
            return;
        }
        if blk.exited > 0 || blk.bar.sites.len() > 1 {
            let idx = blk.idx;
            let sites: Vec<String> = blk.bar.sites.iter().map(|&s| Self::site_str(s)).collect();
            let summary = if blk.bar.sites.len() > 1 {
                format!(
                    "barrier divergence in block {}: threads wait at {} different block barriers ({}); \
                     __syncthreads must be the same barrier for every thread of the block",
                    fmt_dim(idx),
                    sites.len(),
                    sites.join(", ")
                )
            } else {
                format!(
                    "barrier divergence in block {}: {} thread(s) wait at the block barrier {} but {} thread(s) exited \
                     without reaching it; on a GPU the block hangs (every thread must reach __syncthreads the same \
                     number of times)",
                    fmt_dim(idx),
                    blk.bar.arrived,
                    sites[0],
                    blk.exited
                )
            };
            self.fail(summary);
            return;
        }
        let result = match blk.bar.op.unwrap_or(BarOp::Sync) {
            BarOp::Sync => 0,
            BarOp::Count => blk.bar.count,
            BarOp::And => blk.bar.all as u32,
            BarOp::Or => blk.bar.any as u32,
        };
        let (first, n) = (blk.first, blk.n);
        let blk = &mut self.blocks[b];
        blk.epoch += 1;
        blk.bar.arrived = 0;
        blk.bar.sites.clear();
        let epoch = blk.epoch;
        self.join_clocks(first..first + n);
        for u in first..first + n {
            if matches!(self.threads[u].status, Status::Exited) {
                continue;
            }
            self.threads[u].bepoch = epoch;
            self.threads[u].result = result;
            self.make_runnable(u);
        }
        self.progress();
    }

    /// Shares release/acquire knowledge among threads that just passed a barrier together.
    fn join_clocks(&mut self, range: std::ops::Range<usize>) {
        if !self.opts.detect_races || range.clone().all(|u| self.threads[u].clock.acq.is_empty()) {
            return;
        }
        let mut all = race::Clock::new();
        for u in range.clone() {
            race::join(&mut all, &self.threads[u].clock.acq);
        }
        for u in range {
            race::join(&mut self.threads[u].clock.acq, &all);
        }
    }

    // ---- grid barrier --------------------------------------------------------------------------

    pub fn grid_arrive(&mut self, t: usize, site: Site) {
        if !self.cfg.cooperative {
            self.block_thread(t, Status::Grid(site));
            self.fail(format!(
                "grid.sync() at {} in a launch that is not cooperative: blocks are not guaranteed to be resident \
                 together, so the grid barrier can never be relied on (launch it cooperatively)",
                Self::site_str(site)
            ));
            return;
        }
        if self.grid_arrived == 0 {
            self.grid_site = Some(site);
        }
        if self.grid_site != Some(site) {
            let other = self.grid_site.map(Self::site_str).unwrap_or_default();
            self.block_thread(t, Status::Grid(site));
            self.fail(format!("grid barrier divergence: threads wait at {} and at {}", other, Self::site_str(site)));
            return;
        }
        self.grid_arrived += 1;
        self.block_thread(t, Status::Grid(site));
        self.try_complete_grid();
    }

    fn try_complete_grid(&mut self) {
        if self.grid_arrived < self.wave_live {
            return;
        }
        if self.wave_live as usize != self.threads.len() {
            let site = self.grid_site.map(Self::site_str).unwrap_or_default();
            self.fail(format!(
                "grid barrier divergence: {} thread(s) wait at the grid barrier {site} but {} exited without reaching it",
                self.grid_arrived,
                self.threads.len() - self.wave_live as usize
            ));
            return;
        }
        self.grid_arrived = 0;
        self.grid_epoch += 1;
        let ge = self.grid_epoch;
        let n = self.threads.len();
        self.join_clocks(0..n);
        for u in 0..n {
            self.threads[u].gepoch = ge;
            self.make_runnable(u);
        }
        self.progress();
    }

    // ---- warp collectives ----------------------------------------------------------------------

    /// A lane arrives at a warp collective. Returns false if the launch failed.
    #[allow(clippy::too_many_arguments)] // the operands of one shfl.sync/vote.sync, plus who and where
    pub fn warp_arrive(&mut self, t: usize, kind: CollKind, mask: u32, val: u32, b_arg: u32, c_arg: u32, site: Site) {
        let th = &self.threads[t];
        let (b, rank) = (th.block, th.rank);
        let (w, lane) = ((rank / 32) as usize, rank % 32);
        let blk = &self.blocks[b];
        let idx = blk.idx;
        if mask & (1 << lane) == 0 {
            self.block_thread(t, Status::Warp(site, kind, mask));
            self.fail(format!(
                "{} at {}: lane {lane} of warp {w} in block {} is not in its own mask {mask:#010x}",
                kind.name(),
                Self::site_str(site),
                fmt_dim(idx)
            ));
            return;
        }
        // Lanes named by the mask that do not exist or have exited can never arrive.
        // (Lanes that exited are not an error yet: the collective simply never completes, and the
        // no-progress report names every waiting and missing lane.)
        let lanes_in_warp = (blk.n - w * 32).min(32) as u32;
        let exist = if lanes_in_warp == 32 { u32::MAX } else { (1u32 << lanes_in_warp) - 1 };
        let gone = mask & !exist;
        if gone != 0 {
            self.block_thread(t, Status::Warp(site, kind, mask));
            self.fail(format!(
                "{} at {} in block {} warp {w}: mask {mask:#010x} names lanes {gone:#010x} that do not exist (the \
                 warp has {} lanes); they can never arrive",
                kind.name(),
                Self::site_str(site),
                fmt_dim(idx),
                lanes_in_warp
            ));
            return;
        }
        let colls = &mut self.blocks[b].warps[w];
        // Lanes meet at the same collective: same instruction (call site), kind, mask and clamp. Lanes
        // at different call sites wait separately and, if they never meet, end in the no-progress report.
        let pos = match colls.iter().position(|c| c.mask == mask && c.kind == kind && c.site == site && c.c == c_arg) {
            Some(p) => p,
            None => {
                colls.push(Coll { kind, site, mask, arrived: 0, vals: [0; 32], bs: [0; 32], c: c_arg });
                colls.len() - 1
            }
        };
        let coll = &mut colls[pos];
        coll.arrived |= 1 << lane;
        coll.vals[lane as usize] = val;
        coll.bs[lane as usize] = b_arg;
        self.block_thread(t, Status::Warp(site, kind, mask));
        let coll = &self.blocks[b].warps[w][pos];
        if coll.arrived != mask {
            return;
        }
        let coll = self.blocks[b].warps[w].swap_remove(pos);
        let first = self.blocks[b].first + w * 32;
        let mut results = [0u32; 32];
        let mut err = None;
        for l in 0..32u32 {
            if mask & (1 << l) == 0 {
                continue;
            }
            let li = l as usize;
            results[li] = match coll.kind {
                CollKind::Shfl(mode) => {
                    let width = 32 - ((coll.c >> 8) & 0x1f);
                    match shfl_source_lane(mode, l, coll.bs[li], width) {
                        Some(j) if mask & (1 << j) != 0 => coll.vals[j as usize],
                        Some(j) => {
                            err.get_or_insert(format!(
                                "{} at {}: lane {l} reads lane {j}, which is not in the mask {mask:#010x} (undefined value)",
                                coll.kind.name(),
                                Self::site_str(coll.site)
                            ));
                            0
                        }
                        None => coll.vals[li],
                    }
                }
                CollKind::Ballot => {
                    (0..32).filter(|&k| mask & (1 << k) != 0 && coll.vals[k] != 0).fold(0, |a, k| a | (1 << k))
                }
                CollKind::Any => (0..32).any(|k| mask & (1 << k) != 0 && coll.vals[k] != 0) as u32,
                CollKind::All => (0..32).all(|k| mask & (1 << k) == 0 || coll.vals[k] != 0) as u32,
                CollKind::SyncWarp => 0,
            };
        }
        if let Some(e) = err {
            self.fail(e);
            return;
        }
        if coll.kind == CollKind::SyncWarp && self.opts.detect_races {
            // A warp barrier orders the named lanes' accesses: each releases, each acquires all.
            let mut all = race::Clock::new();
            for l in 0..32 {
                if mask & (1 << l) != 0 {
                    let u = first + l;
                    let p = self.pos_of(u);
                    let snap = self.threads[u].clock.release(p);
                    race::join(&mut all, &snap);
                }
            }
            for l in 0..32 {
                if mask & (1 << l) != 0 {
                    race::join(&mut self.threads[first + l].clock.acq, &all);
                }
            }
        }
        for l in 0..32 {
            if mask & (1 << l) != 0 {
                self.threads[first + l].result = results[l];
                self.make_runnable(first + l);
            }
        }
        self.progress();
    }

    // ---- memory --------------------------------------------------------------------------------

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

pub(crate) fn fmt_dim(d: Dim3) -> String {
    if d.y == 0 && d.z == 0 { format!("{}", d.x) } else { format!("({},{},{})", d.x, d.y, d.z) }
}
