//! Host side of `reduce_sum`: the seed's case (2^20 ones must give exactly 2^20) and random inputs
//! against a Kahan-summed f64 reference; then the optimised tiers (`reduce_fast`).

use super::{EMU_SIZES, Example, RunParams, check_n, finish};
use crate::report::ExampleResult;
use crate::verify::kahan_sum;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::reduce_sum::{BLOCK, MAX_GRID, SHARED_BYTES, reduce_sum};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run reduce_sum`).
pub const EXAMPLE: Example = Example {
    name: "reduce_sum",
    row: Some(4),
    section: "000 reduceSum",
    about: "grid-stride + warp shuffle + shared warp sums + one atomicAdd per block; 2^20 ones sum to exactly 2^20; tiers reduce_fast f32/f64/i32 and the deterministic sum",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, 1 << 20, (1 << 20) + 1, 1 << 26],
    emu_sizes: EMU_SIZES,
    keeps_races: false,
    kept_bugs: &[],
    run,
};

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("reduce_sum", n, 4)?;
    let seed_case = n == 1 << 20;
    let input: Vec<f32> = if seed_case {
        vec![1.0; n] // the seed: all ones, the sum must be exactly N
    } else {
        let mut rng = StdRng::seed_from_u64(p.seed);
        (0..n).map(|_| rng.gen_range(0.0f32..1.0)).collect()
    };
    let inp = dev.upload("input", &input)?;
    let out = dev.filled("output", 1, 0.0f32)?;
    let cfg = cover(n, BLOCK, dev.grid_cap(MAX_GRID), SHARED_BYTES);
    let args = (inp.view(), out.view_mut());
    dev.launch::<reduce_sum>(cfg, args)?;
    let got = out.read()?[0];

    let mut r = ExampleResult::new("reduce_sum", dev.kind(), n, p.seed);
    let want = kahan_sum(input.iter().map(|&x| x as f64));
    if seed_case {
        r.check(got == n as f32, format!("sum of {n} ones = {got} (exactly {n} expected)"));
    } else {
        // Each thread adds ~n/threads terms in sequence, then a 5-level warp tree, a 3-level tree over
        // warps, then one atomic add per block in some order: the f32 rounding error is at most
        // (terms per thread + 8 + blocks) u sum|x|, u = 2^-24. All inputs are >= 0, so sum|x| = sum.
        let threads = cfg.grid.x as usize * BLOCK as usize;
        let depth = n.div_ceil(threads) + 8 + cfg.grid.x as usize;
        let bound = depth as f64 * (f32::EPSILON as f64 / 2.0) * want + 1e-30;
        let err = (got as f64 - want).abs();
        r.check(
            crate::verify::within(got as f64, want, bound),
            format!("sum {got} vs Kahan f64 {want:.3} (|err| {err:.3e} <= bound {bound:.3e})"),
        );
    }
    super::measure::<reduce_sum>(dev, p, &mut r, cfg, args, n * 4, &|| Ok(out.write(&[0.0])?))?;
    super::reduce_fast::run_tiers(dev, p, &mut r, &input, seed_case)?;
    Ok(finish(dev, r, false))
}
