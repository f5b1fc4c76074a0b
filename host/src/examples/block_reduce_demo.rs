//! Host side of `block_reduce_demo` (§5.3): per-block sums through one shared slot per thread and a
//! barrier; the variant without the barrier is named by the race detector on the emulator.

use super::{EMU_SIZES, Example, GPU_SIZES, KeptBug, RunParams, check_n, finish, flagged};
use crate::report::ExampleResult;
use crate::verify::within;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::block_reduce_demo::{BLOCK, SHARED_BYTES, block_reduce_demo, block_reduce_demo_no_barrier};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run block_reduce_demo`).
pub const EXAMPLE: Example = Example {
    name: "block_reduce_demo",
    row: Some(3),
    section: "§5.3",
    about: "one shared slot per thread, barrier, thread 0 sums; the no-barrier variant is a race",
    gpu_sizes: GPU_SIZES,
    emu_sizes: EMU_SIZES,
    keeps_races: true,
    kept_bugs: &[KeptBug { kernel: "block_reduce_demo_no_barrier", tools: &["racecheck"] }],
    run,
};

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("block_reduce_demo", n, 4)?;
    let mut rng = StdRng::seed_from_u64(p.seed);
    let input: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let blocks = n.div_ceil(BLOCK as usize);
    let inp = dev.upload("input", &input)?;
    let mut out = dev.filled("out", blocks, f32::NAN)?;
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, SHARED_BYTES);
    let mut r = ExampleResult::new("block_reduce_demo", dev.kind(), n, p.seed);

    dev.launch::<block_reduce_demo_no_barrier>(cfg, (inp.view(), out.output()))?;
    flagged(dev, &mut r, "block_reduce_demo_no_barrier (thread 0 reads slots before the barrier)", BLOCK > 1);
    // Poison again: the fixed kernel must write every block's sum itself.
    out.write(&vec![f32::NAN; blocks])?;
    dev.launch::<block_reduce_demo>(cfg, (inp.view(), out.output()))?;
    let got = out.read()?;
    // Thread 0 adds 256 terms in order: error at most 255 u sum|x| (u = 2^-24).
    let bad: Vec<String> = (0..blocks)
        .filter_map(|b| {
            let xs = &input[b * BLOCK as usize..((b + 1) * BLOCK as usize).min(n)];
            let want: f64 = xs.iter().map(|&x| x as f64).sum();
            let bound = 255.0 * f32::EPSILON as f64 / 2.0 * xs.iter().map(|x| x.abs() as f64).sum::<f64>();
            (!within(got[b] as f64, want, bound)).then(|| format!("block {b}: {} vs {want}", got[b]))
        })
        .collect();
    r.check(bad.is_empty(), format!("{blocks} block sums within 255u·Σ|x|{}", super::warp_reduce::fmt_bad(&bad)));
    super::measure::<block_reduce_demo>(dev, p, &mut r, cfg, (inp.view(), out.output()), n * 4 + blocks * 4, &|| {
        Ok(())
    })?;
    Ok(finish(dev, r, false))
}
