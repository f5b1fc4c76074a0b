//! Launching a kernel: the launch is checked against the limits of a GPU, its blocks are split into
//! waves of resident blocks (a cooperative launch is one wave), and every thread of a wave becomes a
//! stackful coroutine on a recycled stack (see `stack`). A panic inside a kernel is captured with its
//! location and reported for the thread that raised it. When a launch fails, the threads it left
//! suspended are unwound one by one, each as the current thread (see `teardown`).
//!
//! The engine's top: names the state, the context, the scheduler's loop, the stacks, the watchdog and
//! the host agent; nothing of the engine names it.

use super::context::{self, running_kernel, with_state};
use super::host_agent;
use super::sched::schedule;
use super::stack::{self, Co, Guard};
use super::state::{Bar, EBlock, EThread, Emu, HostAgent, Rng, State, Status};
use crate::Dim3;
use crate::emu::config::{LaunchConfig, Options};
use crate::emu::model::{Model, Topology};
use crate::emu::report::{EmuError, Outcome};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, Yielder};
use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::time::Instant;

pub(crate) use super::state::WAVE_THREADS;
/// Largest dynamic shared memory per block accepted (the H100/H200 opt-in maximum, 227 KiB).
const MAX_SHARED_BYTES: usize = 227 * 1024;

fn install_panic_capture() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if context::in_kernel() {
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
                context::set_last_panic(format!("{msg}{at}"));
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
    if opts.stack_bytes < 16 * 1024 {
        return bad(format!("stack_bytes {} is below the 16 KiB minimum", opts.stack_bytes));
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

/// `Err` unless a launch may start here: not from inside a kernel, since launches do not nest (one
/// OS thread runs one launch; its state, the current thread and the memory it may touch, are per OS
/// thread); and not while the calling thread panics (a launch from a destructor during unwinding),
/// since `std::thread::panicking()` would then hold for every emulated thread, and every primitive
/// would act as for a thread that unwinds (see `context::unwinding`).
pub(crate) fn check_caller(name: &str) -> Result<(), EmuError> {
    if let Some(outer) = running_kernel() {
        return Err(EmuError::InvalidLaunch(format!(
            "kernel `{name}`: launched from inside a thread of kernel `{outer}`; emulated launches cannot nest \
             (launch kernels from the host, one at a time)"
        )));
    }
    if std::thread::panicking() {
        return Err(EmuError::InvalidLaunch(format!(
            "kernel `{name}`: launched while the calling thread panics (from a destructor during unwinding); \
             launch it before or after the panic"
        )));
    }
    Ok(())
}

/// The device of the running GPU thread in a two-device launch (0 otherwise).
pub(crate) fn current_device() -> u32 {
    with_state(|st, me| {
        let linear = st.blocks[st.threads[me].block].linear;
        st.model.topology().device_of(linear).unwrap_or(0)
    })
}

/// Runs the launch `cfg` of `body` as the kernel `name`, with the host agent `agent` if any; in a
/// two-device launch, `devices` holds the blocks of GPU 0 and of GPU 1 (the first and the next of
/// the grid's).
pub(crate) fn run_launch(
    name: &str,
    cfg: &LaunchConfig,
    opts: &Options,
    body: &dyn Fn(),
    agent: Option<&mut dyn FnMut()>,
    devices: Option<[u32; 2]>,
) -> Result<Outcome, EmuError> {
    check_caller(name)?;
    validate(name, cfg, opts)?;
    if agent.is_some() {
        host_agent::validate(name, cfg, opts)?;
    }
    install_panic_capture();
    let block_threads = cfg.block.volume();
    let total_blocks = cfg.grid.volume();
    let wave_blocks = if cfg.cooperative {
        total_blocks
    } else {
        (opts.max_resident_blocks as u64).min((WAVE_THREADS / block_threads).max(1)).min(total_blocks)
    };
    if agent.is_some() && wave_blocks < total_blocks {
        return Err(EmuError::InvalidLaunch(format!(
            "kernel `{name}`: a launch with a host agent runs all its blocks at once, and {total_blocks} blocks of \
             {block_threads} threads exceed the {wave_blocks} the emulator runs at once (raise \
             Options::max_resident_blocks, or launch fewer blocks)"
        )));
    }
    let mut rng = Rng::new(opts.schedule_seed);
    // Blocks start in a seeded order: a kernel must not depend on block order.
    let mut order: Vec<u32> = (0..total_blocks as u32).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let watch = super::watchdog::Watch::start(name, opts.time_limit);
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
            error: None,
            model: {
                let topo = Topology { grid: cfg.grid, block: cfg.block, shared_bytes: cfg.shared_bytes, devices };
                let mut m = Model::new(name, topo, opts.detect_races, opts.max_race_reports);
                m.hazards_are_races(opts.hazards_are_races);
                m.accept(&opts.accepted_races);
                m
            },
            polls: 0,
            writers: HashMap::new(),
            parked: HashMap::new(),
            warnings: Vec::new(),
            sites: Default::default(),
            steps: 0,
            yielders: Vec::new(),
            wave_live: 0,
            host: agent.is_some().then(HostAgent::new),
            running: watch.running.clone(),
        }),
    });
    let start = Instant::now();
    let mut stacks: Vec<DefaultStack> = stack::take_pool(opts.stack_bytes);
    stack::start_launch(name, opts.stack_bytes);
    let mut host = match agent {
        // SAFETY: `agent` outlives the coroutine, which completes or is torn down below.
        Some(a) => match unsafe { host_agent::HostRun::new(a, opts.stack_bytes) } {
            Ok(h) => Some(h),
            Err(e) => {
                stack::finish_launch();
                return Err(e);
            }
        },
        None => None,
    };
    // A panic that leaves the scheduler (an emulator bug) is held until the launch is taken down: the
    // host agent unwound, the OS thread's emulator state cleared. Then it goes on to the caller, and
    // the next launch on this OS thread starts from nothing.
    let result = catch_unwind(AssertUnwindSafe(|| {
        for wave in order.chunks(wave_blocks as usize) {
            run_wave(&emu, wave, body, &mut stacks, start, host.as_mut())?;
        }
        Ok(())
    }));
    if let Some(h) = host.as_mut() {
        context::set_emu(&*emu as *const Emu);
        h.teardown(&emu);
        context::set_emu(std::ptr::null());
    }
    drop(host);
    stack::finish_launch();
    stack::give_back(stacks, opts.stack_bytes);
    let result = result.unwrap_or_else(|p| resume_unwind(p));
    let st = emu.st.into_inner();
    let (findings, shadow_bytes, touched_addresses) = st.model.finish();
    result.map(|()| Outcome {
        races: findings.races,
        racy_addresses: findings.racy_addresses,
        uninit_reads: findings.uninit_reads,
        uninit_elements: findings.uninit_elements,
        hazards: findings.hazards,
        hazard_addresses: findings.hazard_addresses,
        accepted: findings.accepted,
        shadow_bytes,
        touched_addresses,
        steps: st.steps,
        threads: total_blocks * block_threads,
        warnings: st.warnings,
        sites: st.sites.into_values().collect(),
    })
}

fn run_wave(
    emu: &Emu,
    wave: &[u32],
    body: &dyn Fn(),
    stacks: &mut Vec<DefaultStack>,
    start: Instant,
    host: Option<&mut host_agent::HostRun>,
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
                    status: Status::Runnable,
                    result: 0,
                    first_access: None,
                    at: None,
                    spins: 0,
                    polled: None,
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
                warps: (0..n.div_ceil(32)).map(|_| Vec::new()).collect(),
            });
        }
        // The memory model's threads and blocks are the wave's, in the same order.
        let blocks = st.blocks.iter().map(|b| (b.linear, b.shared.as_ptr() as usize)).collect::<Vec<_>>();
        st.model.start_wave(blocks);
        let total = st.threads.len();
        st.runnable = (0..total).collect();
        st.pos = (0..total).collect();
        st.yielders = vec![std::ptr::null(); total];
        st.wave_live = total as u32;
        st.grid_arrived = 0;
        st.grid_site = None;
        // Addresses of shared memory and thread numbers are reused by the next wave.
        st.writers.clear();
        (bdim, cfg.grid)
    };
    let (total, stack_bytes) = {
        let st = emu.st.borrow();
        (st.threads.len(), st.opts.stack_bytes)
    };
    let body_ptr: *const dyn Fn() = body;
    let mut cos: Vec<Option<Co>> = Vec::with_capacity(total);
    let mut guards: Vec<Guard> = Vec::with_capacity(total);
    for t in 0..total {
        let stack = match stacks.pop() {
            Some(s) => s,
            None => stack::allocate(stack_bytes).map_err(|e| {
                EmuError::InvalidLaunch(format!("cannot allocate a {stack_bytes}-byte stack for thread {t}: {e}"))
            })?,
        };
        let limit = stack::limit_of(&stack);
        // SAFETY: the closure borrows `body` and `emu`, which outlive every coroutine: all of them are
        // completed or dropped before this function returns.
        let co = unsafe {
            Coroutine::with_stack_unchecked(stack, move |y: &Yielder<(), ()>, ()| {
                context::set_yielder(y as *const _);
                with_state(|st, me| st.yielders[me] = y as *const _);
                (*body_ptr)();
                with_state(|st, me| st.thread_exit(me));
            })
        };
        guards.push(Guard::new(limit));
        cos.push(Some(co));
    }
    context::set_emu(emu as *const Emu);
    let _running = Running;
    // Suspended threads are unwound below in every case, also when a panic left the scheduler.
    let outcome = catch_unwind(AssertUnwindSafe(|| schedule(emu, &mut cos, &guards, bdim, gdim, start, host)));
    // Completed coroutines give their stacks back; suspended ones (after an error) are unwound.
    for (t, co) in cos.into_iter().enumerate() {
        match co {
            Some(co) if co.done() => stacks.push(co.into_stack()),
            Some(co) => teardown(emu, t, co, guards[t], bdim, gdim),
            None => {}
        }
    }
    context::set_emu(std::ptr::null());
    outcome.unwrap_or_else(|p| resume_unwind(p))
}

/// Clears this OS thread's emulator state when a wave ends, whichever way it ends (a panic too), so
/// that nothing points into a launch that is gone: the launch, the current thread and its yielder,
/// the teardown and in-kernel flags, the stack guard.
struct Running;

impl Drop for Running {
    fn drop(&mut self) {
        context::clear();
        stack::running(None);
    }
}

/// Unwinds thread `t`, left suspended by a failed launch, so that its destructors run.
///
/// Soundness: a destructor may call any primitive, and primitives act for the current thread — the
/// one the context's indices and yielder name, which after the scheduler stopped is whichever thread ran last. A
/// primitive suspending on that thread's yielder would jump into another coroutine's frames. So the
/// current-thread state is switched to `t` first (its indices, its own yielder, its stack guard for
/// the fault handler), and the context's teardown flag makes every primitive complete without suspending (see
/// `context::unwinding`).
fn teardown(emu: &Emu, t: usize, co: Co, guard: Guard, bdim: Dim3, gdim: Dim3) {
    let who = emu.st.borrow().make_current(t, bdim, gdim);
    stack::running(Some((guard, who)));
    context::set_teardown(true);
    // Dropping a suspended coroutine unwinds it from its `suspend` call.
    drop(co);
    context::set_teardown(false);
    stack::running(None);
    context::set_yielder(std::ptr::null());
}
