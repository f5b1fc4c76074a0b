//! The CPU SIMT emulator: runs kernels written with this crate on the CPU, with CUDA's execution model,
//! and checks them.
//!
//! Every GPU thread of a launch is a stackful coroutine. One OS thread runs them, one at a time, and a
//! seeded scheduler picks which runs next at every synchronisation point (barriers, warp collectives,
//! atomics, fences, volatile and acquire/release accesses) and, at random, at plain memory accesses —
//! so interleavings vary with the seed and replay exactly with the same seed.
//!
//! - `sync_threads` waits for every thread of the block; shuffles and votes rendezvous the lanes named
//!   in their mask that have not exited (as the PTX ISA defines: a full mask in a partial warp is fine); shared memory is per block, sized by the launch; atomics are read-modify-writes
//!   that return the old value; `grid.sync()` spans the grid and is allowed only in cooperative
//!   launches whose grid fits [`Options::max_resident_blocks`].
//! - Blocks of a normal launch run in waves of `min(max_resident_blocks, 8192 / threads per block)`
//!   blocks, in a seeded order.
//! - **Race detector** (on by default): two accesses to one address from different threads, at least
//!   one a write, not ordered by a block barrier, a grid barrier, a warp barrier or a release→acquire
//!   edge (fence + flag, or release store + acquire load), are reported with kernel, buffer, index, both
//!   threads, both access kinds, source locations and why nothing orders them — unless both are
//!   atomic/volatile/acquire/release at scopes that include both threads. Scopes count: a block-scope
//!   fence, atomic or release/acquire synchronises only threads of one block, and the report names the
//!   scope used and the scope needed. Memory is tracked per byte: accesses of different widths that
//!   share bytes (a `u8` write and a `u32` read of its word, through overlapping views) conflict like
//!   accesses of one width. Each element keeps an exact record (no bound on the history), of 56 bytes
//!   for most elements (per byte only where narrower accesses split it); `Outcome::shadow_bytes` says
//!   how much the launch used.
//! - **Host agent**: [`launch_with_host`] runs a host closure next to the kernel, under the same seeded
//!   scheduler; its accesses (through [`host_agent`]) are system-scope operations of a thread outside
//!   every block, so a GPU↔host protocol that publishes or acquires at device scope is reported as a
//!   race naming `the host thread`, and its spins appear in livelock reports.
//! - **Races hidden by the order of taking a lock** are predicted: a lock (a compare-and-swap or
//!   exchange that takes a word, and a later store of the value it replaced) orders two critical
//!   sections only in the order they ran; accesses ordered only through that handoff, whose sections
//!   touch no common data, race in the other order and are reported with [`Race::predicted`] set,
//!   naming the lock and both critical sections.
//! - **Two GPUs**: [`launch_two_devices`] runs one kernel on GPU 0 and one on GPU 1 at the same time,
//!   as one launch whose blocks carry a device index; device scope (`.gpu`) then covers only the
//!   threads of one GPU, so a cross-GPU protocol that publishes or acquires at device scope is
//!   reported as a race naming both GPUs (`GPU 0 block 0 thread 0`), the scope used and the scope
//!   needed.
//! - **Uninitialised shared memory**: a read of shared memory that no thread of the block has written
//!   in the launch is reported (`Outcome::uninit_reads`).
//! - **Deadlock detector**: a barrier that some threads of the block skip (they touched memory in its
//!   interval and exited, or wait at another barrier: undefined behaviour, since on sm_70+ hardware
//!   the barrier can release without them), a warp collective whose mask names live lanes that never
//!   arrive, and a grid
//!   barrier outside a cooperative launch end in [`EmuError::Deadlock`], which names the waiting and
//!   the missing threads. Lanes that exited are not waited for by warp collectives.
//! - **Livelock detector**: when every runnable thread spins — polls memory with volatile/acquire
//!   loads or read-modify-writes that change nothing (a failed compare-and-swap), or sleeps — and no
//!   thread writes, the launch ends in [`EmuError::Livelock`], which says where each thread spins and
//!   the value it waits to change. A thread whose poll finds what its last poll found is parked until
//!   that location changes (see `poll`), so a contended lock costs linear work. Nothing hangs: a launch also stops at [`Options::time_limit`], with
//!   what every unfinished thread was doing.
//! - **Robustness**: a kernel panic ([`EmuError::KernelPanic`]) and a stack overflow
//!   ([`EmuError::StackOverflow`], see [`Options::stack_bytes`]) end the launch, not the process, with
//!   a report naming the thread. The one exception: a thread that overflows in its own code, without
//!   calling the emulator, onto its stack's guard page cannot be unwound, and abandoning its frames
//!   without their destructors would be unsound, so the process **aborts**, with the same report on
//!   stderr (on Linux x86-64 and aarch64; see `engine::stack`). The same for a thread that blocks its
//!   OS thread (an OS lock another emulated thread holds across a barrier, a blocking call, a loop that
//!   calls no primitive): past [`Options::time_limit`] and a grace, a watchdog writes what it knows to
//!   stderr and aborts (see `engine::watchdog`). A shuffle that reads a lane outside its mask, a lane
//!   that does not exist or one that has exited gets [`POISON`] and a warning in
//!   [`Outcome::warnings`], since only that value is undefined on a GPU.
//! - **Memory another OS thread touches**: every access of an emulated thread is an atomic access of
//!   the element's width (see `prims::memory`), so mapped host memory may be used by a real host
//!   thread during a launch without a data race, and emulated atomics are atomic against its atomics.
//! - **Destructors run**: a thread that panics unwinds, and a launch that fails (any error) unwinds
//!   every thread it leaves unfinished, each as itself (`thread_idx()` in a destructor is that
//!   thread's). A primitive called while a thread unwinds completes at once: memory accesses and
//!   atomics are performed (and checked against the launch's memory), barriers, collectives, fences
//!   and sleeps are skipped, since nothing may wait then.
//!
//! - **Thread-locals**: every emulated thread of a launch shares the OS thread's thread-locals; a
//!   kernel's crate promises that none of its kernels reaches a scheduling point inside a
//!   thread-local's lazy initialiser or a scoped thread-local's closure
//!   ([`KernelCrate`](crate::KernelCrate)), and [`kernel!`](crate::kernel) requires that promise.
//!
//! Host memory for launches is a [`Buffer`]: it names itself in reports and lends views that borrow it.

// Layers, bottom up (see `docs/emulator.md`): `config` and `report` (read by all), `model` (the
// memory model), `engine` (the execution engine), `prims` (the primitives), and this file with
// `buffer` (the public launch API). No file imports a layer above its own.
mod buffer;
mod config;
mod engine;
pub mod model;
mod mutate;
mod prims;
mod report;

pub use buffer::{Buffer, buffer};
pub use config::{AcceptedRace, LaunchConfig, Mutation, MutationKind, Options, SiteKind};
pub use engine::collectives::POISON;
pub use mutate::{Caught, MutantResult, MutationReport, TestError, Trial, Verdict, mutation_test};
pub use prims::host_agent;
pub use report::{
    Accepted, AccessInfo, BufferName, Deadlock, EmuError, Livelock, Outcome, Race, SyncSite, ThreadId, UninitRead,
    WaitGroup, Warning, register_buffer,
};

/// The emulator side of every primitive (the counterpart of the PTX layer).
pub(crate) use prims::backend;

use crate::{Dim3, IntoArgs, Kernel, KernelArgs};
use engine::launch;
use report::names::{LaunchRegions, Region};

/// Runs kernel `K` on the emulator with `args` and returns what the detectors found. `args` is the
/// kernel's argument tuple: scalars, and views that borrow their buffers (`(a, x.view(), y.view_mut())`
/// with [`Buffer`]s), all in host memory. Every access of global memory is checked against the views
/// among `args` (a view kept from an earlier launch is reported, never followed).
///
/// Launches do not nest: called from inside a kernel (a thread of a running launch), it returns
/// [`EmuError::InvalidLaunch`] and leaves the running launch as it was. It returns the same error
/// when called while the calling thread panics (from a destructor during unwinding).
pub fn launch<'a, K: Kernel>(
    cfg: &LaunchConfig,
    opts: &Options,
    args: impl IntoArgs<Params = K::Args<'a>>,
) -> Result<Outcome, EmuError> {
    args.check_space(K::NAME, K::PARAMS, crate::MemorySpace::HOST).map_err(EmuError::InvalidLaunch)?;
    // SAFETY: every view among `args` borrows a buffer in host memory (checked above) that stays alive
    // until this call returns, and the launch runs to completion before it does.
    unsafe { launch_params::<K>(cfg, opts, args.into_args()) }
}

/// Runs kernel `K` on the emulator with its parameter tuple itself (views made with
/// `from_raw_parts`), and returns what the detectors found.
///
/// # Safety
/// Every view among `params` must point to host memory that stays valid, and that nothing else
/// accesses, for the whole launch (the emulator checks every access against these views, so their
/// regions must be real).
pub unsafe fn launch_params<'a, K: Kernel>(
    cfg: &LaunchConfig,
    opts: &Options,
    params: K::Args<'a>,
) -> Result<Outcome, EmuError> {
    // SAFETY: the caller's contract.
    unsafe { launch_checked::<K>(cfg, opts, params, None) }
}

/// [`launch_params`], with a host agent or without.
///
/// # Safety
/// As [`launch_params`].
unsafe fn launch_checked<'a, K: Kernel>(
    cfg: &LaunchConfig,
    opts: &Options,
    params: K::Args<'a>,
    agent: Option<&mut dyn FnMut()>,
) -> Result<Outcome, EmuError> {
    // Refused before anything is touched: a launch from inside a kernel would replace the running
    // launch's regions with its own, and reset them on its way out.
    launch::check_caller(K::NAME)?;
    crate::launch_bounds::check_block::<K>(cfg.block).map_err(EmuError::InvalidLaunch)?;
    params.check_launch(K::NAME, K::PARAMS, cfg.grid, cfg.block).map_err(EmuError::InvalidLaunch)?;
    let regions = params
        .views()
        .into_iter()
        .map(|v| Region {
            base: v.base,
            bytes: v.bytes,
            position: v.position,
            name: K::PARAMS.get(v.position).copied(),
        })
        .collect();
    let _regions = LaunchRegions::set(regions);
    launch::run_launch(K::NAME, cfg, opts, &move || K::run(params), agent, None)
}

/// Runs kernel `K` on the emulator with `args`, and `agent` as a host thread next to it: a closure
/// scheduled with the kernel's threads, which talks with them through memory both can reach (mapped
/// host memory on a GPU) using the functions of [`host_agent`]. Its operations count as
/// system-scope operations of a thread outside every block, so the detectors check the protocol
/// between the host and the GPU threads: a publication at device scope is reported as a race naming
/// the host thread, and a spin of the agent appears in livelock reports. The launch runs all blocks
/// at once (see [`host_agent`] for the limits).
pub fn launch_with_host<'a, K: Kernel>(
    cfg: &LaunchConfig,
    opts: &Options,
    args: impl IntoArgs<Params = K::Args<'a>>,
    agent: &mut dyn FnMut(),
) -> Result<Outcome, EmuError> {
    args.check_space(K::NAME, K::PARAMS, crate::MemorySpace::HOST).map_err(EmuError::InvalidLaunch)?;
    // SAFETY: as in `launch`.
    unsafe { launch_params_with_host::<K>(cfg, opts, args.into_args(), agent) }
}

/// [`launch_with_host`] with the kernel's parameter tuple itself.
///
/// # Safety
/// As [`launch_params`].
pub unsafe fn launch_params_with_host<'a, K: Kernel>(
    cfg: &LaunchConfig,
    opts: &Options,
    params: K::Args<'a>,
    agent: &mut dyn FnMut(),
) -> Result<Outcome, EmuError> {
    // SAFETY: the caller's contract.
    unsafe { launch_checked::<K>(cfg, opts, params, Some(agent)) }
}

/// Runs kernel `K0` on GPU 0 with `args0` and kernel `K1` on GPU 1 with `args1` at the same time,
/// under one seeded scheduler, and returns what the detectors found in both (see the module docs'
/// **Two GPUs**): device scope covers one GPU's threads, system scope both. Each grid sees its own
/// coordinates (`block_idx()`, `grid_dim()` count within its device's grid). Both launches must be
/// 1-D with the same block shape and dynamic shared memory, not cooperative, and fit in one wave
/// together (all blocks resident, so that the two kernels may wait for each other): at most
/// [`Options::max_resident_blocks`] blocks and 8192 threads in all. On the emulator both devices'
/// memory is host memory, reachable from both (as peer memory is once peer access is enabled).
pub fn launch_two_devices<'a, 'b, K0: Kernel, K1: Kernel>(
    cfg0: &LaunchConfig,
    args0: impl IntoArgs<Params = K0::Args<'a>>,
    cfg1: &LaunchConfig,
    args1: impl IntoArgs<Params = K1::Args<'b>>,
    opts: &Options,
) -> Result<Outcome, EmuError> {
    args0.check_space(K0::NAME, K0::PARAMS, crate::MemorySpace::HOST).map_err(EmuError::InvalidLaunch)?;
    args1.check_space(K1::NAME, K1::PARAMS, crate::MemorySpace::HOST).map_err(EmuError::InvalidLaunch)?;
    // SAFETY: as in `launch`, for both argument tuples.
    unsafe { launch_params_two_devices::<K0, K1>(cfg0, args0.into_args(), cfg1, args1.into_args(), opts) }
}

/// [`launch_two_devices`] with the kernels' parameter tuples themselves.
///
/// # Safety
/// As [`launch_params`], for both tuples.
pub unsafe fn launch_params_two_devices<'a, 'b, K0: Kernel, K1: Kernel>(
    cfg0: &LaunchConfig,
    params0: K0::Args<'a>,
    cfg1: &LaunchConfig,
    params1: K1::Args<'b>,
    opts: &Options,
) -> Result<Outcome, EmuError> {
    let name = format!("{} (GPU 0) + {} (GPU 1)", K0::NAME, K1::NAME);
    launch::check_caller(&name)?;
    params0.check_launch(K0::NAME, K0::PARAMS, cfg0.grid, cfg0.block).map_err(EmuError::InvalidLaunch)?;
    params1.check_launch(K1::NAME, K1::PARAMS, cfg1.grid, cfg1.block).map_err(EmuError::InvalidLaunch)?;
    // Two grids at once: an `Output` of one may not share memory with any view of the other.
    crate::check_concurrent_views(K0::NAME, K0::PARAMS, &params0.views(), K1::NAME, K1::PARAMS, &params1.views())
        .map_err(EmuError::InvalidLaunch)?;
    let bad = |m: String| Err(EmuError::InvalidLaunch(format!("two-device launch `{name}`: {m}")));
    let one_d = |d: Dim3| d.y == 1 && d.z == 1;
    if !one_d(cfg0.grid) || !one_d(cfg1.grid) {
        return bad(format!("grids {:?} and {:?} must be 1-D", cfg0.grid, cfg1.grid));
    }
    if cfg0.block != cfg1.block || cfg0.shared_bytes != cfg1.shared_bytes {
        return bad(format!(
            "both kernels need the same block shape and shared memory (GPU 0: {:?}, {} bytes; GPU 1: {:?}, {} bytes)",
            cfg0.block, cfg0.shared_bytes, cfg1.block, cfg1.shared_bytes
        ));
    }
    if cfg0.cooperative || cfg1.cooperative {
        return bad("cooperative launches are not supported across two devices".into());
    }
    let (g0, g1) = (cfg0.grid.x, cfg1.grid.x);
    let blocks = g0 as u64 + g1 as u64;
    if blocks > opts.max_resident_blocks as u64 || blocks * cfg0.block.volume() > launch::WAVE_THREADS {
        return bad(format!(
            "{blocks} blocks of {} threads do not fit in one wave ({} blocks, {} threads): both grids must be \
             resident at once",
            cfg0.block.volume(),
            opts.max_resident_blocks,
            launch::WAVE_THREADS
        ));
    }
    let mut regions = Vec::new();
    for (views, params) in [(params0.views(), K0::PARAMS), (params1.views(), K1::PARAMS)] {
        regions.extend(views.into_iter().map(|v| Region {
            base: v.base,
            bytes: v.bytes,
            position: v.position,
            name: params.get(v.position).copied(),
        }));
    }
    let _regions = LaunchRegions::set(regions);
    let cfg = LaunchConfig { grid: Dim3::x(g0 + g1), ..*cfg0 };
    let body = move || {
        if launch::current_device() == 0 { K0::run(params0) } else { K1::run(params1) }
    };
    launch::run_launch(&name, &cfg, opts, &body, None, Some([g0, g1]))
}

/// Runs `body` as the kernel named `name` (every thread of the launch calls it). Like [`launch`], it
/// refuses to run from inside a kernel.
///
/// # Safety
/// Every global-memory view `body` uses must point to memory that stays valid for the whole launch:
/// unlike [`launch`], the emulator is not told which views the body may use, so it cannot check them.
/// And `body` must keep the promise of [`KernelCrate`](crate::KernelCrate) about
/// thread-locals, which a kernel's crate makes for [`launch`].
pub unsafe fn launch_fn(name: &str, cfg: &LaunchConfig, opts: &Options, body: &dyn Fn()) -> Result<Outcome, EmuError> {
    launch::check_caller(name)?;
    let _unchecked = LaunchRegions::unchecked();
    launch::run_launch(name, cfg, opts, body, None, None)
}
