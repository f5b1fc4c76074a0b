//! One module per example, named like its kernel file: inputs, launch, CPU reference, checks.

use crate::device::{Device, IntoArgs, Launch};
use crate::report::ExampleResult;
use anyhow::{Result, bail};
use gpu_std::Kernel;

pub mod atomic_add_f64;
pub mod atomic_tour;
pub mod block_reduce_demo;
pub mod divergence;
pub mod divergent_barrier;
pub mod fp_determinism;
pub mod grid_sync;
pub mod histogram_fast;
pub mod histogram_global;
pub mod histogram_privatised;
pub mod lost_update;
pub mod multi_gpu;
pub mod primitives;
pub mod producer_consumer;
pub mod reduce_fast;
pub mod reduce_sum;
pub mod running_max;
pub mod scan;
pub mod sort;
pub mod spinlock;
pub mod stencil;
pub mod sync_variants;
pub mod system_scope;
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

/// An example: its name, where it comes from, what it shows, its test sizes, and its runner.
pub struct Example {
    pub name: &'static str,
    /// Its row in the chapter's catalogue of examples (1..=18, and the rows beyond it: 19, 20, 21); `None` for `primitives`, which checks
    /// the device layer itself.
    pub row: Option<u32>,
    /// Where in the chapter it comes from: `§5.x` of the chapter text (001), `ex. k` of its
    /// exercises, or the code samples `000` / `002` by the name they use.
    pub section: &'static str,
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

/// Every example, in the order of the chapter's catalogue (then `primitives`).
pub const ALL: &[Example] = &[
    Example {
        name: "stencil",
        row: Some(1),
        section: "§5.3; 000 tile",
        about: "shared tile + __syncthreads, 0.25/0.5/0.25 (tile edges read 0, as written); halo version = global stencil; no-barrier variant is a race",
        gpu_sizes: &[1, 7, 31, 33, 255, 256, 257, 1 << 20, (1 << 20) + 1],
        emu_sizes: EMU_SIZES,
        run: stencil::run,
    },
    Example {
        name: "warp_reduce",
        row: Some(2),
        section: "002 warpReduce; 000 warpReduceSum",
        about: "per-warp sums with shfl.sync.down",
        gpu_sizes: GPU_SIZES,
        emu_sizes: EMU_SIZES,
        run: warp_reduce::run,
    },
    Example {
        name: "block_reduce_demo",
        row: Some(3),
        section: "§5.3",
        about: "one shared slot per thread, barrier, thread 0 sums; the no-barrier variant is a race",
        gpu_sizes: GPU_SIZES,
        emu_sizes: EMU_SIZES,
        run: block_reduce_demo::run,
    },
    Example {
        name: "reduce_sum",
        row: Some(4),
        section: "000 reduceSum",
        about: "grid-stride + warp shuffle + shared warp sums + one atomicAdd per block; 2^20 ones sum to exactly 2^20; tiers reduce_fast f32/f64/i32 and the deterministic sum",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 1 << 20, (1 << 20) + 1, 1 << 26],
        emu_sizes: EMU_SIZES,
        run: reduce_sum::run,
    },
    Example {
        name: "atomic_add_f64",
        row: Some(5),
        section: "§5.5; 000 atomicAddDouble",
        about: "atomicAddDouble (CAS loop on the u64 bits) vs native atom.add.f64: sums, old values, cost ratio on a GPU",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 1 << 16, (1 << 20) + 1],
        emu_sizes: EMU_SIZES,
        run: atomic_add_f64::run,
    },
    Example {
        name: "histogram_global",
        row: Some(6),
        section: "§5.5.1",
        about: "one global atomicAdd per byte; every bin exact",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1, 1 << 22],
        emu_sizes: EMU_SIZES,
        run: histogram_global::run,
    },
    Example {
        name: "histogram_privatised",
        row: Some(7),
        section: "000 histogram; ex. 3",
        about: "256 shared-memory bins per block folded with global atomics; tiers histogram_fast (per-lane bin columns) and histogram_small (small inputs) on uniform, one-bin and Zipf bytes",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1, 1 << 22, 1 << 28],
        emu_sizes: EMU_SIZES,
        run: histogram_privatised::run,
    },
    Example {
        name: "lost_update",
        row: Some(8),
        section: "§5.1, §5.5.1",
        about: "plain `bin += 1` histogram loses counts (GPU) and is named by the race detector (emulator); atomic twin exact",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1, 1 << 24],
        emu_sizes: EMU_SIZES,
        run: lost_update::run,
    },
    Example {
        name: "divergence",
        row: Some(9),
        section: "§5.2; ex. 1",
        about: "conditionalAdd's guard; branch on threadIdx % 2 (divergent) vs blockIdx % 2 (warp-uniform), timed on a GPU",
        gpu_sizes: &[1, 7, 31, 33, 255, 256, 257, 1 << 20, (1 << 20) + 1],
        emu_sizes: EMU_SIZES,
        run: divergence::run,
    },
    Example {
        name: "divergent_barrier",
        row: Some(10),
        section: "§5.3; ex. 2",
        about: "a barrier only odd threads reach: undefined behaviour named by the emulator; on a GPU run under a time limit, and what the hardware did printed; fixed twin",
        gpu_sizes: GPU_SIZES,
        emu_sizes: &[1, 33, 257, 4097],
        run: divergent_barrier::run,
    },
    Example {
        name: "producer_consumer",
        row: Some(11),
        section: "§5.4",
        about: "block 0 produces, block 1 consumes after __threadfence + volatile flag, bounded spin",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1],
        emu_sizes: EMU_SIZES,
        run: producer_consumer::run,
    },
    Example {
        name: "spinlock",
        row: Some(12),
        section: "§5.5.2",
        about: "atomicCAS locks: shared lock per block (x*2+1) and a global lock around a plain counter",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 8193],
        emu_sizes: &[1, 7, 31, 33, 257, 1000],
        run: spinlock::run,
    },
    Example {
        name: "fp_determinism",
        row: Some(13),
        section: "§5.6",
        about: "atomic float sum vs fixed-order tree over K runs: distinct bit patterns counted (tree: one, any grid)",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 1 << 20, (1 << 20) + 1],
        emu_sizes: EMU_SIZES,
        run: fp_determinism::run,
    },
    Example {
        name: "running_max",
        row: Some(14),
        section: "ex. 4; 002 atomicMax",
        about: "lock-free running max: atomicMax/atomicMin/atomicSub on ints; float max by ordered bits and by CAS (NaN ignored, -0 < +0)",
        gpu_sizes: GPU_SIZES,
        emu_sizes: EMU_SIZES,
        run: running_max::run,
    },
    Example {
        name: "atomic_tour",
        row: Some(15),
        section: "§5.5; 002",
        about: "every atomic on int, unsigned, u64, float, double under contention; atomicAdd(1) olds = {0..n-1}",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 4097, atomic_tour::MAX_N],
        emu_sizes: EMU_SIZES,
        run: atomic_tour::run,
    },
    Example {
        name: "tile_reduce",
        row: Some(16),
        section: "000 tileReduceSum",
        about: "tiled_partition<32> shuffle reduce; the seed's in-place write is a race",
        gpu_sizes: GPU_SIZES,
        emu_sizes: EMU_SIZES,
        run: tile_reduce::run,
    },
    Example {
        name: "grid_sync",
        row: Some(17),
        section: "000 multiPhaseKernel; §5.3",
        about: "grid.sync() under a cooperative launch; the seed's phase 2 is a race",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 4097, 32768],
        emu_sizes: &[1, 7, 31, 33, 257, 4096],
        run: grid_sync::run,
    },
    Example {
        name: "sync_variants",
        row: Some(18),
        section: "§5.3, §5.7; 002",
        about: "__syncthreads_count/and/or, ballot/any/all, __syncwarp, with partial last warps and blocks",
        gpu_sizes: GPU_SIZES,
        emu_sizes: &[1, 7, 31, 33, 255, 257, 1000, 4097],
        run: sync_variants::run,
    },
    Example {
        name: "system_scope",
        row: Some(19),
        section: "§5.4 (__threadfence_system)",
        about: "kernel ↔ running host thread through mapped host memory: payloads both ways, ping-pong latency vs launch+copy, device attributes; device-scope twins named by the emulator",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1],
        emu_sizes: &[1, 7, 33, 257],
        run: system_scope::run,
    },
    Example {
        name: "scan",
        row: Some(20),
        section: "§5.4–5.5",
        about: "single-pass inclusive prefix sum: tiles from an atomic ticket, decoupled look-back over 64-bit release/acquire status words; u32 exact, f32 within bound; reduce-then-scan baseline; twins without release/acquire are races",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 16383, 16385, (1 << 20) + 1, 1 << 26, 1 << 30],
        emu_sizes: &[1, 7, 31, 33, 255, 257, 4097, 2 * 16384 + 5],
        run: scan::run,
    },
    Example {
        name: "multi_gpu",
        row: Some(21),
        section: "§5.4–5.5 (system scope)",
        about: "two GPUs with peer access: .sys atomics from both on GPU 0's memory, a cross-GPU flag handshake, round trip vs launch+copy; needs two GPUs (SKIP otherwise); the emulator runs both grids and names the __threadfence() twin",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1],
        emu_sizes: &[1, 7, 33, 257, 4097],
        run: multi_gpu::run,
    },
    Example {
        name: "sort",
        row: Some(22),
        section: "§5.4–5.7",
        about: "gpu-algos' stable radix sort: one histogram pass, then per 8-bit digit a pass whose tiles rank keys with warp ballots and find their offsets by decoupled look-back over strong status words; pairs stable, descending, bit ranges, f32 total order; twins with plain status words are races",
        gpu_sizes: &[1, 7, 33, 257, 4096, 4097, (1 << 20) + 1, 1 << 24],
        emu_sizes: &[1, 7, 33, 257, 4097, 3 * 512 + 5],
        run: sort::run,
    },
    Example {
        name: "primitives",
        row: None,
        section: "all (device layer)",
        about: "every device primitive against its CPU model: shuffles, votes, barriers, atomics, fences, grid sync, tiles",
        gpu_sizes: &[1, 7, 31, 33, 255, 257, 1000, primitives::MAX_ATOMIC_THREADS],
        emu_sizes: &[1, 7, 31, 33, 257, 1000],
        run: primitives::run,
    },
];

/// A kernel that keeps a chapter bug on purpose, and the compute-sanitizer tools that must be allowed
/// to report it (`host sanitize` fails on any other finding). compute-sanitizer's racecheck sees
/// shared-memory hazards only, so the global-memory races kept on purpose (`histogram_racy`,
/// `tile_reduce_seed`, `multi_phase_seed`, `producer_consumer_no_fence`) are the emulator's to find.
pub struct KeptBug {
    pub example: &'static str,
    pub kernel: &'static str,
    pub tools: &'static [&'static str],
}

pub const KEPT_BUGS: &[KeptBug] = &[
    KeptBug { example: "stencil", kernel: "stencil_no_barrier", tools: &["racecheck"] },
    KeptBug { example: "block_reduce_demo", kernel: "block_reduce_demo_no_barrier", tools: &["racecheck"] },
];

pub fn find(name: &str) -> Option<&'static Example> {
    ALL.iter().find(|e| e.name == name)
}

/// Rejects sizes the kernels cannot take: zero, or past u32 indexing / a 16 GiB buffer.
/// An example cannot run at the requested size on this device (e.g. a cooperative grid larger than the
/// emulator or the GPU can hold at once): the run shows a SKIP row with this reason instead of failing.
#[derive(Debug)]
pub struct Skip(pub String);

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Skip {}

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
    if !dev.profile().detectors {
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

/// On a GPU with `p.reps > 0`: times `K` (see [`Device::time`]) and returns the median time and
/// `bytes` (that must move) / time. `reset` restores the inputs before each timed launch.
fn time_and_rate<'a, K: Kernel>(
    dev: &Device,
    p: &RunParams,
    cfg: Launch,
    args: impl IntoArgs<Params = K::Args<'a>>,
    bytes: usize,
    reset: &dyn Fn() -> Result<()>,
) -> Result<Option<(f64, f64)>>
where
{
    if p.reps == 0 {
        return Ok(None);
    }
    let t = dev.time::<K, _>(cfg, args, p.reps, reset)?;
    Ok(t.map(|t| (t.median_ms, bytes as f64 / (t.median_ms * 1e6))))
}

/// On a GPU with `p.reps > 0`: times `K` and records the median time and GB/s in `r`.
pub fn measure<'a, K: Kernel>(
    dev: &Device,
    p: &RunParams,
    r: &mut ExampleResult,
    cfg: Launch,
    args: impl IntoArgs<Params = K::Args<'a>>,
    bytes: usize,
    reset: &dyn Fn() -> Result<()>,
) -> Result<()>
where
{
    if let Some((ms, gbps)) = time_and_rate::<K>(dev, p, cfg, args, bytes, reset)? {
        (r.time_ms, r.gbps) = (Some(ms), Some(gbps));
    }
    Ok(())
}

/// On a GPU with `p.reps > 0`: times `K` like [`measure`] and records it as the optimised tier `name`
/// of `r`.
#[allow(clippy::too_many_arguments)]
pub fn measure_tier<'a, K: Kernel>(
    dev: &Device,
    p: &RunParams,
    r: &mut ExampleResult,
    name: &str,
    cfg: Launch,
    args: impl IntoArgs<Params = K::Args<'a>>,
    bytes: usize,
    reset: &dyn Fn() -> Result<()>,
) -> Result<()>
where
{
    if let Some((time_ms, gbps)) = time_and_rate::<K>(dev, p, cfg, args, bytes, reset)? {
        r.tiers.push(crate::report::Tier { name: name.to_string(), time_ms, gbps });
    }
    Ok(())
}

/// On a GPU with `p.reps > 0`: times `call` (a gpu-algos call, see [`Device::time_calls`]) and records
/// it as the optimised tier `name` of `r`, at `bytes` / time.
pub fn measure_call(
    dev: &Device,
    p: &RunParams,
    r: &mut ExampleResult,
    name: &str,
    bytes: usize,
    reset: &dyn Fn() -> Result<()>,
    call: &dyn Fn() -> Result<()>,
) -> Result<()> {
    if p.reps == 0 {
        return Ok(());
    }
    if let Some(t) = dev.time_calls(p.reps, reset, call)? {
        let gbps = bytes as f64 / (t.median_ms * 1e6);
        r.tiers.push(crate::report::Tier { name: name.to_string(), time_ms: t.median_ms, gbps });
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
