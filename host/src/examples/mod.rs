//! One module per example, named like its kernel file: inputs, launch, CPU reference, checks.

use crate::device::{Device, IntoArgs, Launch, ParamList};
use crate::report::ExampleResult;
use anyhow::{Result, bail};
use gpu_std::Kernel;

pub mod block_reduce_demo;
pub mod divergent_barrier;
pub mod grid_sync;
pub mod histogram_privatised;
pub mod lost_update;
pub mod primitives;
pub mod producer_consumer;
pub mod reduce_sum;
pub mod spinlock;
pub mod tile_reduce;
pub mod warp_reduce;

/// Parameters of one run.
#[derive(Clone, Copy, Debug)]
pub struct RunParams {
    pub n: usize,
    pub seed: u64,
    /// Timed launches after warm-up (GPU only); 0 = no timing.
    pub reps: usize,
}

/// An example: its name, what it shows, its test sizes, and its runner.
pub struct Example {
    pub name: &'static str,
    pub about: &'static str,
    /// Sizes `host run` uses when no `--n` is given: on a GPU, and on the emulator.
    pub gpu_sizes: &'static [usize],
    pub emu_sizes: &'static [usize],
    pub run: fn(&Device, &RunParams) -> Result<ExampleResult>,
}

/// The sizes every example is tested at on a GPU (the chapter's edge cases and one past 2^20).
pub const GPU_SIZES: &[usize] = &[1, 7, 31, 33, 255, 257, (1 << 20) + 1];
/// The same edge cases plus a few thousand elements: what the emulator checks in seconds.
pub const EMU_SIZES: &[usize] = &[1, 7, 31, 33, 255, 257, 4097];

pub const ALL: &[Example] = &[
    Example {
        name: "warp_reduce",
        about: "per-warp sums with shfl.sync.down (002 warpReduce, 000 warpReduceSum)",
        gpu_sizes: GPU_SIZES,
        emu_sizes: EMU_SIZES,
        run: warp_reduce::run,
    },
    Example {
        name: "reduce_sum",
        about: "grid-stride + warp shuffle + shared warp sums + one atomicAdd per block (000 reduceSum)",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 1 << 20, (1 << 20) + 1, 1 << 26],
        emu_sizes: EMU_SIZES,
        run: reduce_sum::run,
    },
    Example {
        name: "histogram_privatised",
        about: "256 shared-memory bins per block folded with global atomics (000 histogram, exercise 3)",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1, 1 << 22, 1 << 28],
        emu_sizes: EMU_SIZES,
        run: histogram_privatised::run,
    },
    Example {
        name: "lost_update",
        about: "plain `bin += 1` histogram loses counts (GPU) and is named by the race detector (emulator); atomic twin exact (§5.1, §5.5.1)",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1, 1 << 24],
        emu_sizes: EMU_SIZES,
        run: lost_update::run,
    },
    Example {
        name: "block_reduce_demo",
        about: "one shared slot per thread, barrier, thread 0 sums; the no-barrier variant is a race (§5.3)",
        gpu_sizes: GPU_SIZES,
        emu_sizes: EMU_SIZES,
        run: block_reduce_demo::run,
    },
    Example {
        name: "divergent_barrier",
        about: "a barrier only odd threads reach: reported by the emulator, never launched on a GPU; fixed twin (§5.3, ex. 2)",
        gpu_sizes: GPU_SIZES,
        emu_sizes: &[1, 33, 257, 4097],
        run: divergent_barrier::run,
    },
    Example {
        name: "producer_consumer",
        about: "block 0 produces, block 1 consumes after __threadfence + volatile flag, bounded spin (§5.4)",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1],
        emu_sizes: EMU_SIZES,
        run: producer_consumer::run,
    },
    Example {
        name: "spinlock",
        about: "atomicCAS locks: shared lock per block (x*2+1) and a global lock around a plain counter (§5.5.2)",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 8193],
        emu_sizes: &[1, 7, 31, 33, 257, 1000],
        run: spinlock::run,
    },
    Example {
        name: "tile_reduce",
        about: "tiled_partition<32> shuffle reduce; the seed's in-place write is a race (000 cooperative groups)",
        gpu_sizes: GPU_SIZES,
        emu_sizes: EMU_SIZES,
        run: tile_reduce::run,
    },
    Example {
        name: "grid_sync",
        about: "multiPhaseKernel with grid.sync() under a cooperative launch; the seed's phase 2 is a race (000)",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 4097, 32768],
        emu_sizes: &[1, 7, 31, 33, 257, 4096],
        run: grid_sync::run,
    },
    Example {
        name: "primitives",
        about: "every device primitive against its CPU model: shuffles, votes, barriers, atomics, fences, grid sync, tiles",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 1000, primitives::MAX_ATOMIC_THREADS],
        emu_sizes: &[1, 7, 31, 33, 257, 1000],
        run: primitives::run,
    },
];

pub fn find(name: &str) -> Option<&'static Example> {
    ALL.iter().find(|e| e.name == name)
}

/// Rejects sizes the kernels cannot take: zero, or past u32 indexing / a 16 GiB buffer.
pub fn check_n(name: &str, n: usize, elem_bytes: usize) -> Result<()> {
    if n == 0 {
        bail!("{name}: n must be at least 1");
    }
    if n > u32::MAX as usize / 2 {
        bail!(
            "{name}: n = {n} is too large (at most {} elements: kernels index with 32-bit grid arithmetic)",
            u32::MAX / 2
        );
    }
    if n.saturating_mul(elem_bytes) > 16 << 30 {
        bail!("{name}: n = {n} needs {} GiB of device memory (limit 16 GiB)", (n * elem_bytes) >> 30);
    }
    Ok(())
}

/// On the emulator: takes the findings of the launches so far, which come from a kernel that keeps a
/// bug on purpose, and checks that the detector named it (when `racy_expected`) — the reports go to the
/// result, the race count to its `races` column. On a GPU there is no detector: nothing to check.
pub fn flagged(dev: &Device, r: &mut ExampleResult, what: &str, racy_expected: bool) {
    if dev.is_gpu() {
        return;
    }
    let f = dev.take_findings();
    r.races += f.racy_addresses;
    r.race_reports.extend(f.races.iter().take(2).map(|x| x.to_string()));
    if racy_expected {
        r.check(
            f.racy_addresses > 0,
            format!("race detector names the race in {what}: {} racy address(es)", f.racy_addresses),
        );
    }
}

/// On a GPU with `p.reps > 0`: times `K` (see [`Device::time`]) and records the median time and
/// `bytes` (that must move) / time in `r`. `reset` restores the inputs before each timed launch.
pub fn measure<K: Kernel>(
    dev: &Device,
    p: &RunParams,
    r: &mut ExampleResult,
    cfg: Launch,
    args: impl IntoArgs<Params = K::Args>,
    bytes: usize,
    reset: &dyn Fn() -> Result<()>,
) -> Result<()>
where
    K::Args: ParamList,
{
    if p.reps > 0
        && let Some(t) = dev.time::<K>(cfg, args, p.reps, reset)?
    {
        r.time_ms = Some(t.median_ms);
        r.gbps = Some(bytes as f64 / (t.median_ms * 1e6));
    }
    Ok(())
}

/// `" — <what>"` for a failed comparison, nothing otherwise: appended to a check's description.
pub fn mismatch(m: Option<String>) -> String {
    m.map(|m| format!(" — {m}")).unwrap_or_default()
}

/// The run's outcome, with the emulator's findings folded in.
pub fn finish(dev: &Device, mut r: ExampleResult, races_expected: bool) -> ExampleResult {
    r.absorb(dev.take_findings(), races_expected);
    r
}
