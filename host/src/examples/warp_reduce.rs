//! Host side of `warp_reduce`: random inputs, one launch covering every element, per-warp sums
//! checked against an f64 reference.

use super::{EMU_SIZES, Example, GPU_SIZES, RunParams, check_n, finish};
use crate::report::ExampleResult;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::warp_reduce::{BLOCK, warp_reduce};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run warp_reduce`).
pub const EXAMPLE: Example = Example {
    name: "warp_reduce",
    row: Some(2),
    section: "002 warpReduce; 000 warpReduceSum",
    about: "per-warp sums with shfl.sync.down",
    gpu_sizes: GPU_SIZES,
    emu_sizes: EMU_SIZES,
    keeps_races: false,
    kept_bugs: &[],
    run,
};

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("warp_reduce", n, 4)?;
    let mut rng = StdRng::seed_from_u64(p.seed);
    let input: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let warps = n.div_ceil(32);
    let inp = dev.upload("input", &input)?;
    let mut out = dev.filled("output", warps, f32::NAN)?; // poison: every warp sum must be written
    // No grid-stride loop in this kernel: the grid covers every element.
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, 0);
    dev.launch::<warp_reduce>(cfg, (inp.view(), out.output()))?;
    let got = out.read()?;

    let mut r = ExampleResult::new("warp_reduce", dev.kind(), n, p.seed);
    // Any order of summing 32 floats errs by at most 31 u sum|x| (u = 2^-24); NaN never passes.
    let mut bad = Vec::new();
    for (w, &g) in got.iter().enumerate() {
        let xs = &input[w * 32..((w + 1) * 32).min(n)];
        let want: f64 = xs.iter().map(|&x| x as f64).sum();
        let bound = 31.0 * f32::EPSILON as f64 / 2.0 * xs.iter().map(|x| x.abs() as f64).sum::<f64>() + 1e-30;
        if !crate::verify::within(g as f64, want, bound) {
            bad.push(format!("warp {w}: got {g} want {want}"));
        }
    }
    r.check(bad.is_empty(), format!("{warps} warp sums within 31u·Σ|x| of the f64 sums{}", fmt_bad(&bad)));
    super::measure::<warp_reduce>(dev, p, &mut r, cfg, (inp.view(), out.output()), n * 4 + warps * 4, &|| Ok(()))?;
    Ok(finish(dev, r, false))
}

pub(crate) fn fmt_bad(bad: &[String]) -> String {
    if bad.is_empty() {
        String::new()
    } else {
        format!(" — {} bad, first: {}", bad.len(), bad.iter().take(3).cloned().collect::<Vec<_>>().join("; "))
    }
}
