//! Host side of `fp_determinism` (§5.6): one input summed many times by the atomic float reduction and
//! by the fixed-order tree. The distinct bit patterns of each are counted: the tree must give exactly
//! one — the CPU's pairwise sum, bit for bit — across runs and across grid sizes; the atomic sum may
//! give several (on the emulator, different schedule seeds must give different results). The
//! deterministic fast sum (`reduce_fast` with virtual blocks fixed by n) must also give exactly one,
//! on every grid it is launched with. Every run is within its error bound of the Kahan-summed f64
//! reference.

use super::{EMU_SIZES, Example, RunParams, check_n, finish};
use crate::models::gamma;
use crate::report::ExampleResult;
use crate::verify::{kahan_sum, within};
use anyhow::Result;
use gpu_host::{Buffer, Device, cover};
use gpu_kernels::fp_determinism::{BLOCK, MAX_GRID, TREE_SHARED_BYTES, sum_atomic, sum_tree};
use gpu_std::emu::{LaunchConfig, Options};
use rand::{Rng, SeedableRng, rngs::StdRng};
use std::collections::BTreeSet;

/// This example's entry in the catalogue (`host list`, `host run fp_determinism`).
pub const EXAMPLE: Example = Example {
    name: "fp_determinism",
    row: Some(13),
    section: "§5.6",
    about: "atomic float sum vs fixed-order tree over K runs: distinct bit patterns counted (tree: one, any grid)",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, 1 << 20, (1 << 20) + 1],
    emu_sizes: EMU_SIZES,
    keeps_races: false,
    kept_bugs: &[],
    run,
};

/// Runs of each sum on a GPU.
pub const RUNS_GPU: usize = 100;
/// Runs of each sum on the emulator, each under its own schedule seed (the emulator replays one seed's
/// interleaving exactly, so variety comes from the seeds).
pub const RUNS_EMU: usize = 8;
/// Block sizes of the tree runs, used in turn: each gives another grid size.
pub const TREE_BLOCKS: [u32; 4] = [256, 32, 1024, 64];
/// From this size on, the emulator's schedules must produce more than one atomic result.
pub const VARIES_FROM_N: usize = 128;

/// The pairwise-tree sum of `x` in f32, `+0.0` past the end: the order `sum_tree` adds in.
pub fn pairwise(x: &[f32]) -> f32 {
    fn node(x: &[f32], lo: usize, size: usize) -> f32 {
        if lo >= x.len() {
            0.0
        } else if size == 1 {
            x[lo]
        } else {
            node(x, lo, size / 2) + node(x, lo + size / 2, size / 2)
        }
    }
    node(x, 0, x.len().next_power_of_two())
}

/// The tree sum on the device with blocks of `block` threads: one launch per level of `2 * block`.
fn tree_sum(dev: &Device, x: &Buffer<f32>, block: u32) -> Result<(f32, Vec<u32>)> {
    let w = 2 * block as usize;
    let mut len = x.len().div_ceil(w);
    let mut grids = vec![len as u32];
    let mut sums = dev.filled("tree_sums", len, f32::NAN)?;
    dev.launch::<sum_tree>(LaunchConfig::linear(len as u32, block, TREE_SHARED_BYTES), (x.view(), sums.output()))?;
    while len > 1 {
        let next_len = len.div_ceil(w);
        let mut next = dev.filled("tree_sums", next_len, f32::NAN)?;
        let cfg = LaunchConfig::linear(next_len as u32, block, TREE_SHARED_BYTES);
        dev.launch::<sum_tree>(cfg, (sums.view(), next.output()))?;
        grids.push(next_len as u32);
        (sums, len) = (next, next_len);
    }
    Ok((sums.read()?[0], grids))
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("fp_determinism", n, 4)?;
    let mut rng = StdRng::seed_from_u64(p.seed);
    // `+ 0.0` turns a -0.0 into +0.0: no input is -0.0, so no partial sum is, and the tree's +0.0
    // padding changes no value.
    let x: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0) + 0.0).collect();
    let want = kahan_sum(x.iter().map(|&v| v as f64));
    let abs: f64 = x.iter().map(|v| v.abs() as f64).sum();
    let u = f32::EPSILON as f64 / 2.0;
    // Any order of n adds errs by at most gamma(n-1)·Σ|x|; the tree, n.next_power_of_two() = 2^d wide,
    // by gamma(d)·Σ|x| (the adds of +0.0 padding are exact).
    let atomic_bound = gamma(n - 1, u) * abs;
    let depth = n.next_power_of_two().trailing_zeros() as usize;
    let tree_bound = gamma(depth, u) * abs;
    let cpu_tree = pairwise(&x);
    let mut r = ExampleResult::new("fp_determinism", dev.kind(), n, p.seed);

    let runs = dev.profile().pick(RUNS_GPU, RUNS_EMU);
    let (mut atomic, mut tree) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    let (mut fast_det, mut det_grids) = (Vec::with_capacity(runs), BTreeSet::new());
    let mut shapes = BTreeSet::new();
    let mut seeds = Vec::new();
    let x_here = dev.upload("input", &x)?;
    for k in 0..runs {
        // On the emulator every run after the first gets a device with another schedule seed.
        let other = match dev.emu_options() {
            Some(o) if k > 0 => {
                let seed = o.schedule_seed.wrapping_add(k as u64);
                seeds.push(seed);
                Some(Device::emulator(Options { schedule_seed: seed, ..o.clone() }))
            }
            Some(o) => {
                seeds.push(o.schedule_seed);
                None
            }
            None => None,
        };
        let d = other.as_ref().unwrap_or(dev);
        let x_there = match &other {
            Some(o) => Some(o.upload("input", &x)?),
            None => None,
        };
        let xb = x_there.as_ref().unwrap_or(&x_here);
        let out = d.filled("out", 1, 0.0f32)?;
        d.launch::<sum_atomic>(cover(n, BLOCK, d.grid_cap(MAX_GRID), 0), (xb.view(), out.view_mut()))?;
        atomic.push(out.read()?[0]);
        let block = TREE_BLOCKS[k % TREE_BLOCKS.len()];
        let (t, grids) = tree_sum(d, xb, block)?;
        tree.push(t);
        shapes.insert((block, grids));
        let (f, grid) = super::reduce_fast::deterministic_sum(d, &x, k)?;
        fast_det.push(f);
        det_grids.insert(grid);
        if let Some(o) = &other {
            // Findings of the other seeds' devices count like this device's.
            r.absorb(o.take_findings(), false);
        }
    }

    let distinct = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<BTreeSet<u32>>().len();
    let max_err = |v: &[f32]| v.iter().map(|&g| (g as f64 - want).abs()).fold(0.0, f64::max);
    let (da, dt) = (distinct(&atomic), distinct(&tree));
    let atomic_ok = atomic.iter().all(|&g| within(g as f64, want, atomic_bound));
    r.check(
        atomic_ok,
        format!(
            "atomic sum: all {runs} runs within gamma(n-1)·Σ|x| = {atomic_bound:.3e} of the f64 sum (max |err| {:.3e})",
            max_err(&atomic)
        ),
    );
    let shapes_text: Vec<String> = shapes.iter().map(|(b, g)| format!("{b}-thread blocks, grids {g:?}")).collect();
    r.check(
        tree.iter().all(|t| t.to_bits() == cpu_tree.to_bits()) && within(cpu_tree as f64, want, tree_bound),
        format!(
            "tree sum: {runs} runs give {dt} bit pattern(s), equal to the CPU's pairwise sum {cpu_tree:e}, within \
             gamma({depth})·Σ|x| = {tree_bound:.3e} (|err| {:.3e}); launch shapes: {}",
            (cpu_tree as f64 - want).abs(),
            shapes_text.join("; ")
        ),
    );
    let det_bound = super::reduce_fast::deterministic_bound(n, abs);
    let df = distinct(&fast_det);
    r.check(
        df == 1 && fast_det.iter().all(|&g| within(g as f64, want, det_bound)),
        format!(
            "reduce_deterministic_f32 (the fast tier of reduce_sum): {runs} runs on launches {det_grids:?} give {df} bit \
             pattern(s), within {det_bound:.3e} (max |err| {:.3e})",
            max_err(&fast_det)
        ),
    );
    if dev.profile().schedule_seed.is_some() && n >= VARIES_FROM_N {
        r.check(
            da > 1,
            format!("atomic sum under schedule seeds {seeds:?}: {da} distinct results (more than one expected)"),
        );
    }
    r.show.push(format!(
        "atomicAdd sum: {da} distinct bit pattern(s) in {runs} runs{}; fixed-order tree: {dt} in {runs} runs over {} block sizes; reduce_deterministic_f32: {df} over {} launches",
        if dev.profile().schedule_seed.is_none() { String::new() } else { format!(" (schedule seeds {seeds:?})") },
        TREE_BLOCKS.len().min(runs),
        det_grids.len()
    ));

    let out = dev.filled("out", 1, 0.0f32)?;
    let cfg = cover(n, BLOCK, dev.grid_cap(MAX_GRID), 0);
    super::measure::<sum_atomic>(dev, p, &mut r, cfg, (x_here.view(), out.view_mut()), n * 4, &|| {
        Ok(out.write(&[0.0])?)
    })?;
    Ok(finish(dev, r, false))
}
