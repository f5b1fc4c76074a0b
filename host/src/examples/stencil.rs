//! Host side of `stencil` (000's tile + `__syncthreads()`, §5.3): the seed's tile kernel with its exact
//! semantics (neighbours outside the tile read 0), the halo kernel against the true global stencil,
//! and the seed without its barrier, named by the race detector on the emulator.

use super::{EMU_SIZES, Example, KeptBug, RunParams, check_n, finish, flagged};
use crate::report::ExampleResult;
use crate::verify::within;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::stencil::{BLOCK, HALO_SHARED_BYTES, SHARED_BYTES, stencil_halo, stencil_no_barrier, stencil_tile};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run stencil`).
pub const EXAMPLE: Example = Example {
    name: "stencil",
    row: Some(1),
    section: "§5.3; 000 tile",
    about: "shared tile + __syncthreads, 0.25/0.5/0.25 (tile edges read 0, as written); halo version = global stencil; no-barrier variant is a race",
    gpu_sizes: &[1, 7, 31, 33, 255, 256, 257, 1 << 20, (1 << 20) + 1],
    emu_sizes: EMU_SIZES,
    keeps_races: true,
    kept_bugs: &[KeptBug { kernel: "stencil_no_barrier", tools: &["racecheck"] }],
    run,
};

/// `(reference, bound)` of one output from its three neighbours, in f64. The products by 0.25 and 0.5
/// are exact in f32 (powers of two; the inputs are multiples of 2^-24 in [-1, 1), far from underflow),
/// so only the two additions round: the f32 result is within gamma(2) = 2u/(1-2u) of
/// 0.25|l| + 0.5|c| + 0.25|r| (u = 2^-24), whatever the order of the additions.
fn reference(l: f32, c: f32, r: f32) -> (f64, f64) {
    let terms = [0.25 * l as f64, 0.5 * c as f64, 0.25 * r as f64];
    let u = f32::EPSILON as f64 / 2.0;
    (terms.iter().sum(), 2.0 * u / (1.0 - 2.0 * u) * terms.iter().map(|t| t.abs()).sum::<f64>())
}

/// Every element of `got` against `want(i)`; a description of the first mismatches.
fn compare(got: &[f32], want: impl Fn(usize) -> (f64, f64)) -> Vec<String> {
    (0..got.len())
        .filter_map(|i| {
            let (w, b) = want(i);
            (!within(got[i] as f64, w, b)).then(|| format!("[{i}] got {} want {w}", got[i]))
        })
        .collect()
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("stencil", n, 4)?;
    let mut rng = StdRng::seed_from_u64(p.seed);
    let x: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let at = |j: Option<usize>| j.filter(|&j| j < n).map_or(0.0, |j| x[j]);
    let b = BLOCK as usize;
    let mut r = ExampleResult::new("stencil", dev.kind(), n, p.seed);
    let inp = dev.upload("input", &x)?;
    let mut out = dev.filled("output", n, f32::NAN)?;
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, SHARED_BYTES);

    // The seed without its barrier: every thread but the last of a block reads a slot another thread
    // writes, so with BLOCK > 1 there is always a race to name.
    dev.launch::<stencil_no_barrier>(cfg, (inp.view(), out.output()))?;
    flagged(dev, &mut r, "stencil_no_barrier (neighbour slots read before the barrier)", BLOCK > 1);

    // The seed as written: neighbours outside the tile read 0.
    out.write(&vec![f32::NAN; n])?;
    dev.launch::<stencil_tile>(cfg, (inp.view(), out.output()))?;
    let tile_got = out.read()?;
    let tile_ref = |i: usize| {
        let l = if !i.is_multiple_of(b) { at(Some(i - 1)) } else { 0.0 };
        let r = if i % b < b - 1 { at(Some(i + 1)) } else { 0.0 };
        reference(l, x[i], r)
    };
    let bad = compare(&tile_got, tile_ref);
    r.check(
        bad.is_empty(),
        format!(
            "stencil_tile (the seed): {n} outputs within gamma(2)·Σ|terms| of the tile stencil, 0 outside the tile{}",
            super::warp_reduce::fmt_bad(&bad)
        ),
    );

    // The halo version: the true global stencil, 0 outside the array.
    let global_ref = |i: usize| reference(at(i.checked_sub(1)), x[i], at(Some(i + 1)));
    out.write(&vec![f32::NAN; n])?;
    let halo_cfg = cover(n, BLOCK, u32::MAX / BLOCK, HALO_SHARED_BYTES);
    dev.launch::<stencil_halo>(halo_cfg, (inp.view(), out.output()))?;
    let halo_got = out.read()?;
    let bad = compare(&halo_got, global_ref);
    r.check(
        bad.is_empty(),
        format!(
            "stencil_halo: {n} outputs within gamma(2)·Σ|terms| of the global 3-point stencil, 0 outside the array{}",
            super::warp_reduce::fmt_bad(&bad)
        ),
    );
    // Where the seed's tile edges make it differ from the global stencil.
    let edges = (0..n).filter(|&i| tile_got[i].to_bits() != halo_got[i].to_bits()).count();
    r.show.push(format!("the seed's tile edges: {edges} of {n} outputs differ from the global stencil"));

    super::measure::<stencil_halo>(dev, p, &mut r, halo_cfg, (inp.view(), out.output()), n * 8, &|| Ok(()))?;
    Ok(finish(dev, r, false))
}
