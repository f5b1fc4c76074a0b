//! Host side of `scan` (example 20): the single-pass inclusive prefix sum in `u32` (every element
//! exact, wrapping) and `f32` (every element within the stated bound of an f64 reference), the
//! three-kernel reduce-then-scan baseline (exact), and on the emulator the variants that publish or read
//! the status word without release/acquire, which the race detector must name.

use super::{Example, RunParams, check_n, finish, flagged, measure_tier};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_algos_kernels::scan::{
    self, ERROR_GAVE_UP, Epochs, SHARED_BYTES, scan_inclusive_f32 as scan_f32, scan_inclusive_u32 as scan_u32,
};
use gpu_algos_kernels::scan_variants::{
    SPINE_BLOCK, SPINE_SHARED_BYTES, scan_downsweep_u32, scan_no_acquire_u32, scan_no_release_u32, scan_reduce_u32,
    scan_spine_u32,
};
use gpu_host::{Buffer, Device, Launch};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run scan`).
pub const EXAMPLE: Example = Example {
    name: "scan",
    row: Some(20),
    section: "§5.4–5.5",
    about: "single-pass inclusive prefix sum: tiles from an atomic ticket, decoupled look-back over 64-bit release/acquire status words; u32 exact, f32 within bound; reduce-then-scan baseline; variants without release/acquire are races",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, 16383, 16385, (1 << 20) + 1, 1 << 26, 1 << 30],
    emu_sizes: &[1, 7, 31, 33, 255, 257, 4097, 2 * 16384 + 5],
    keeps_races: true,
    kept_bugs: &[],
    run,
};

/// The single-pass launch for `n` elements: one block of [`scan::launch_block`]`(n)` threads per tile.
pub fn launch(n: usize) -> Launch {
    let block = scan::launch_block(n);
    Launch::linear(scan::tiles(n, block) as u32, block, SHARED_BYTES)
}

/// The CPU reference: the wrapping inclusive prefix sum.
fn prefix_u32(x: &[u32]) -> Vec<u32> {
    let mut acc = 0u32;
    x.iter()
        .map(|&v| {
            acc = acc.wrapping_add(v);
            acc
        })
        .collect()
}

/// Zeroes the ticket, the error word and the status words (before a launch tagged with epoch 0).
fn reset(state: &Buffer<'_, u64>) -> Result<()> {
    Ok(state.write(&vec![0; state.len()])?)
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("scan", n, 4)?;
    let mut r = ExampleResult::new("scan", dev.kind(), n, p.seed);
    let mut rng = StdRng::seed_from_u64(p.seed);
    let cfg = launch(n);
    let block = scan::launch_block(n);
    let tiles = scan::tiles(n, block);

    // u32: random words, so that the sums wrap many times.
    let x: Vec<u32> = (0..n).map(|_| rng.r#gen()).collect();
    let want = prefix_u32(&x);
    let input = dev.upload("input", &x)?;
    let out = dev.filled("out", n, 0xdead_beefu32)?;
    // The state is zeroed once; each launch on it takes the next epoch instead of a zeroing.
    let state = dev.filled("state", scan::state_len(n, block), 0u64)?;
    let mut epochs = Epochs::new();
    let (epoch, _) = epochs.advance();
    dev.launch::<scan_u32>(cfg, (input.view(), out.view_mut(), state.view_mut(), epoch))?;
    let st = state.read()?;
    let m = exact(&out.read()?, &want, "out");
    r.check(
        m.is_none() && st[1] & ERROR_GAVE_UP == 0,
        format!(
            "scan_u32: all {n} prefix sums exact (wrapping), {tiles} tile(s) of {block} x {} elements, no tile gave up (error word {}){}",
            scan::ITEMS,
            st[1],
            super::mismatch(m)
        ),
    );
    // The library's call launches the same kernel on the same shape (gpu_algos::plan::scan).
    let mut lib_out = dev.filled("out", n, 0u32)?;
    gpu_algos::scan::inclusive_sum(dev, &input, &mut lib_out)?;
    let m = exact(&lib_out.read()?, &want, "out");
    r.check(
        m.is_none(),
        format!("gpu_algos::scan::inclusive_sum u32: all {n} prefix sums exact{}", super::mismatch(m)),
    );
    drop(lib_out);
    if tiles > 1 {
        r.check(st[0] == 0, format!("the last of {tiles} tickets resets the ticket: it ends at {}", st[0]));
    }
    let bytes = 2 * n * 4;
    // Timed on a state zeroed before each launch (outside the timed region), tagged 0.
    let args = (input.view(), out.view_mut(), state.view_mut(), 0);
    measure_tier::<scan_u32>(dev, p, &mut r, "scan_u32 (single pass)", cfg, args, bytes, &|| reset(&state))?;
    if p.reps > 0 && dev.profile().can_time {
        let m = exact(&out.read()?, &want, "out");
        r.check(m.is_none(), format!("scan_u32: exact again after the timed launches{}", super::mismatch(m)));
    }

    // Reduce-then-scan (the baseline): three launches, no block waits for another.
    let sums = dev.filled("sums", tiles, 0u32)?;
    let out2 = dev.filled("out", n, 0xdead_beefu32)?;
    dev.launch::<scan_reduce_u32>(cfg, (input.view(), sums.view_mut()))?;
    dev.launch::<scan_spine_u32>(Launch::linear(1, SPINE_BLOCK, SPINE_SHARED_BYTES), (sums.view_mut(),))?;
    dev.launch::<scan_downsweep_u32>(cfg, (input.view(), sums.view_mut(), out2.view_mut()))?;
    let m = exact(&out2.read()?, &want, "out");
    r.check(m.is_none(), format!("reduce-then-scan (3 kernels): all {n} prefix sums exact{}", super::mismatch(m)));
    drop((input, out, out2, sums));

    // f32: values in [-1, 1); the bound of the module docs against an f64 reference, element by element.
    let xf: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let input = dev.upload("input", &xf)?;
    let out = dev.filled("out", n, f32::NAN)?;
    // The state as the launches before left it, not zeroed: the next epoch.
    let (epoch, _) = epochs.advance();
    dev.launch::<scan_f32>(cfg, (input.view(), out.view_mut(), state.view_mut(), epoch))?;
    let got = out.read()?;
    let (mut exact_sum, mut mag, mut worst, mut bad) = (0f64, 0f64, 0f64, None);
    let tile_len = scan::tile_elems(block);
    for i in 0..n {
        exact_sum += xf[i] as f64;
        mag += (xf[i] as f64).abs();
        let bound = scan::f32_error_bound_terms(i / tile_len) as f64 * (f32::EPSILON as f64 / 2.0) * mag;
        let err = (got[i] as f64 - exact_sum).abs();
        if !crate::verify::within(got[i] as f64, exact_sum, bound) && bad.is_none() {
            bad = Some(format!("[{i}] got {} want {exact_sum} (bound {bound:.3e})", got[i]));
        }
        if mag > 0.0 {
            worst = f64::max(worst, err / mag);
        }
    }
    r.check(
        bad.is_none() && state.read()?[1] == 0,
        format!(
            "scan_f32 (on the state the u32 launches left, epoch {epoch}): all {n} prefix sums within (tile + 64) 2^-24 sum|x| of the f64 reference (largest |err| / sum|x|: {worst:.2e}){}",
            bad.map(|b| format!(" — {b}")).unwrap_or_default()
        ),
    );
    let args = (input.view(), out.view_mut(), state.view_mut(), 0);
    measure_tier::<scan_f32>(dev, p, &mut r, "scan_f32 (single pass)", cfg, args, bytes, &|| reset(&state))?;

    // The racy variants, on the emulator only (a race on a GPU fails silently): three tiles of 32 threads.
    if dev.profile().detectors {
        let _ = dev.take_findings();
        let m = 3 * scan::tile_elems(32) + 5;
        let xs: Vec<u32> = (0..m).map(|_| rng.r#gen()).collect();
        let three_tiles = Launch::linear(scan::tiles(m, 32) as u32, 32, SHARED_BYTES);
        let input = dev.upload("input", &xs)?;
        let out = dev.filled("out", m, 0u32)?;
        let state = dev.filled("state", scan::state_len(m, 32), 0u64)?;
        dev.launch::<scan_no_release_u32>(three_tiles, (input.view(), out.view_mut(), state.view_mut(), 1))?;
        flagged(dev, &mut r, "scan_no_release_u32 (status word stored without release)", true);
        reset(&state)?;
        dev.launch::<scan_no_acquire_u32>(three_tiles, (input.view(), out.view_mut(), state.view_mut(), 1))?;
        flagged(dev, &mut r, "scan_no_acquire_u32 (status words loaded without acquire)", true);
    }
    Ok(finish(dev, r, false))
}
