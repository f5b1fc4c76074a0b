//! The CPU SIMT emulator: runs kernels written with this crate on the CPU, with CUDA's execution model,
//! and checks them.
//!
//! Every GPU thread of a launch is a stackful coroutine. One OS thread runs them, one at a time, and a
//! seeded scheduler picks which runs next at every synchronisation point (barriers, warp collectives,
//! atomics, fences, volatile and acquire/release accesses) and, at random, at plain memory accesses —
//! so interleavings vary with the seed and replay exactly with the same seed.
//!
//! - `sync_threads` waits for every thread of the block; shuffles and votes rendezvous the lanes named
//!   in their mask; shared memory is per block, sized by the launch; atomics are read-modify-writes
//!   that return the old value; `grid.sync()` spans the grid and is allowed only in cooperative
//!   launches whose grid fits [`Options::max_resident_blocks`].
//! - Blocks of a normal launch run in waves of at most `max_resident_blocks`, in a seeded order.
//! - **Race detector** (on by default): two accesses to one address from different threads, at least
//!   one a write, not ordered by a block barrier, a grid barrier, a warp barrier or a release→acquire
//!   edge (fence + flag, or release store + acquire load), are reported with kernel, buffer, index, both
//!   threads, both access kinds, source locations and why nothing orders them — unless both are
//!   atomic/volatile/acquire/release at scopes that include both threads. Scopes count: a block-scope
//!   fence, atomic or release/acquire synchronises only threads of one block, and the report names the
//!   scope used and the scope needed. Each address keeps an exact record (no bound on the history), of
//!   56 bytes for most addresses; `Outcome::shadow_bytes` says how much the launch used.
//! - **Uninitialised shared memory**: a read of shared memory that no thread of the block has written
//!   in the launch is reported (`Outcome::uninit_reads`).
//! - **Deadlock detector**: a barrier that some threads of the block never reach (they exited, or wait
//!   at another barrier), a warp collective whose mask names lanes that never arrive, a grid barrier
//!   outside a cooperative launch, and spin loops that make no progress end in an error that names the
//!   waiting and the missing threads. Nothing hangs: a launch also stops at [`Options::time_limit`].

mod access_check;
mod backend_impl;
mod barrier;
mod clock;
mod collectives;
mod deadlock;
mod findings;
mod launch;
mod race;
mod report;
mod sched;
mod shadow;
mod tracking;

pub use report::{AccessInfo, Deadlock, EmuError, Outcome, Race, ThreadId, UninitRead, WaitGroup};

/// The emulator side of every primitive (the counterpart of the PTX layer).
pub(crate) mod backend {
    pub use super::backend_impl::*;
}

use crate::{Dim3, Kernel, KernelArgs};
use std::time::Duration;

/// Grid, block and dynamic shared memory of a launch, as in `kernel<<<grid, block, shared>>>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: Dim3,
    pub block: Dim3,
    /// Bytes of dynamic shared memory per block.
    pub shared_bytes: usize,
    /// A cooperative launch (`cuLaunchCooperativeKernel`): all blocks resident at once, so that
    /// `grid.sync()` is allowed.
    pub cooperative: bool,
}

impl LaunchConfig {
    /// A 1-D launch: `grid` blocks of `block` threads.
    pub fn linear(grid: u32, block: u32, shared_bytes: usize) -> Self {
        LaunchConfig { grid: Dim3::x(grid), block: Dim3::x(block), shared_bytes, cooperative: false }
    }
    /// The same launch, cooperative.
    pub fn cooperative(mut self) -> Self {
        self.cooperative = true;
        self
    }
}

/// Emulator settings. `Default` gives seed 1, race detection on, 16 resident blocks, a 60 s bound.
#[derive(Clone, Debug)]
pub struct Options {
    /// Seed of the scheduler: the same seed replays the same interleaving.
    pub schedule_seed: u64,
    /// Run the race detector (slower: every access is recorded).
    pub detect_races: bool,
    /// Blocks resident at once. Normal launches run in waves of this many blocks; cooperative
    /// launches with more blocks are refused, as on a GPU.
    pub max_resident_blocks: u32,
    /// At a plain memory access, switch to another thread with probability `1/preempt_one_in`
    /// (0: never). Makes lost updates of racy read-modify-writes actually happen.
    pub preempt_one_in: u32,
    /// Polls (volatile/acquire/atomic loads, failed compare-and-swaps, sleeps) with no write anywhere
    /// before the launch is declared stuck in a spin loop.
    pub poll_limit: u64,
    /// Wall-clock bound for one launch.
    pub time_limit: Duration,
    /// Distinct racy addresses reported in full (all are counted).
    pub max_race_reports: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            schedule_seed: 1,
            detect_races: true,
            max_resident_blocks: 16,
            preempt_one_in: 4,
            poll_limit: 2_000_000,
            time_limit: Duration::from_secs(60),
            max_race_reports: 16,
        }
    }
}

/// Runs kernel `K` on the emulator with `args` and returns what the detectors found. Every access of
/// global memory is checked against the views among `args` (a view kept from an earlier launch is
/// reported, never followed).
pub fn launch<K: Kernel>(cfg: &LaunchConfig, opts: &Options, args: K::Args) -> Result<Outcome, EmuError> {
    args.check_launch(K::NAME, cfg.grid, cfg.block).map_err(EmuError::InvalidLaunch)?;
    let _regions = access_check::LaunchRegions::set(args.regions());
    launch::run_launch(K::NAME, cfg, opts, &move || K::run(args))
}

/// Runs `body` as the kernel named `name` (every thread of the launch calls it).
///
/// # Safety
/// Every global-memory view `body` uses must point to memory that stays valid for the whole launch:
/// unlike [`launch`], the emulator is not told which views the body may use, so it cannot check them.
pub unsafe fn launch_fn(name: &str, cfg: &LaunchConfig, opts: &Options, body: &dyn Fn()) -> Result<Outcome, EmuError> {
    launch::run_launch(name, cfg, opts, body)
}

/// Names a host allocation so that race reports can say `buffer[index]` instead of an address.
/// The name is forgotten when the returned guard drops.
pub fn register_buffer<T>(name: &str, data: *const T, len: usize) -> BufferName {
    findings::register_buffer(name, data as usize, len * std::mem::size_of::<T>(), std::mem::size_of::<T>())
}

/// Keeps a buffer's name registered; see [`register_buffer`].
#[derive(Debug)]
pub struct BufferName {
    base: usize,
}

impl Drop for BufferName {
    fn drop(&mut self) {
        findings::unregister_buffer(self.base)
    }
}
