//! Host side of `tile_reduce` (000 cooperative groups `tileReduceSum`): the seed's in-place version
//! races (flagged on the emulator; on a GPU its outputs are compared and reported); the project's
//! version writes to a separate output and is checked.

use super::{EMU_SIZES, Example, GPU_SIZES, RunParams, check_n, finish, flagged};
use crate::report::ExampleResult;
use crate::verify::within;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::tile_reduce::{BLOCK, tile_reduce, tile_reduce_seed};
use gpu_std::emu::LaunchConfig;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run tile_reduce`).
pub const EXAMPLE: Example = Example {
    name: "tile_reduce",
    row: Some(16),
    section: "000 tileReduceSum",
    about: "tiled_partition<32> shuffle reduce; the seed's in-place write is a race",
    gpu_sizes: GPU_SIZES,
    emu_sizes: EMU_SIZES,
    keeps_races: true,
    kept_bugs: &[],
    run,
};

fn tile_sums(x: &[f32]) -> Vec<(f64, f64)> {
    x.chunks(32)
        .map(|c| {
            (
                c.iter().map(|&v| v as f64).sum(),
                32.0 * f32::EPSILON as f64 / 2.0 * c.iter().map(|v| v.abs() as f64).sum::<f64>(),
            )
        })
        .collect()
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("tile_reduce", n, 4)?;
    let mut rng = StdRng::seed_from_u64(p.seed);
    let input: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let mut r = ExampleResult::new("tile_reduce", dev.kind(), n, p.seed);

    // The seed: one block, in place (needs whole warps: pad to 32).
    let seed_n = n.min(BLOCK as usize).next_multiple_of(32);
    let mut padded = input[..n.min(seed_n)].to_vec();
    padded.resize(seed_n, 0.0);
    let data = dev.upload("data", &padded)?;
    dev.launch::<tile_reduce_seed>(LaunchConfig::linear(1, seed_n as u32, 0), (data.view_mut(),))?;
    flagged(dev, &mut r, "tile_reduce_seed (writes data[tile] while other tiles read it)", seed_n > 32);
    let got = data.read()?;
    let wrong = tile_sums(&padded).iter().enumerate().filter(|&(t, &(w, b))| !within(got[t] as f64, w, b)).count();
    r.show.push(format!("seed (in place): {wrong} of {} tile sums wrong in this run", seed_n / 32));

    let tiles = n.div_ceil(32);
    let inp = dev.upload("input", &input)?;
    let mut out = dev.filled("out", tiles, f32::NAN)?;
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, 0);
    dev.launch::<tile_reduce>(cfg, (inp.view(), out.output()))?;
    let got = out.read()?;
    let bad = tile_sums(&input).iter().enumerate().filter(|&(t, &(w, b))| !within(got[t] as f64, w, b)).count();
    r.check(
        bad == 0,
        format!("tiled_partition<32> reduce to a separate output: {tiles} tile sums within 32u·Σ|x| ({bad} bad)"),
    );
    super::measure::<tile_reduce>(dev, p, &mut r, cfg, (inp.view(), out.output()), n * 4 + tiles * 4, &|| Ok(()))?;
    Ok(finish(dev, r, false))
}
