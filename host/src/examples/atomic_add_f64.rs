//! Host side of `atomic_add_f64` (000's `atomicAddDouble`): the CAS loop and the native `atom.add.f64`,
//! each at full contention (one cell) and spread over 1024 cells, on integer-valued doubles (every
//! order gives the exact sum) and on random reals. Every cell's sum and every thread's old value is
//! checked; on a GPU both are timed and the cost ratio is printed.

use super::{EMU_SIZES, Example, RunParams, check_n, finish};
use crate::models::{ModelFloat, float_add_order_ok, gamma};
use crate::report::ExampleResult;
use crate::verify::{kahan_sum, within};
use anyhow::Result;
use gpu_host::{Device, Launch, cover};
use gpu_kernels::atomic_add_f64::{BLOCK, SPREAD, atomic_add_double_cas, atomic_add_double_native};

/// Most adds of the CAS loop under full contention (one cell), as in `primitives`.
const CAS_FULL_CONTENTION: usize = super::primitives::MAX_ATOMIC_THREADS;
use gpu_std::{Global, GlobalMut, Kernel, Output};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run atomic_add_f64`).
pub const EXAMPLE: Example = Example {
    name: "atomic_add_f64",
    row: Some(5),
    section: "§5.5; 000 atomicAddDouble",
    about: "atomicAddDouble (CAS loop on the u64 bits) vs native atom.add.f64: sums, old values, cost ratio on a GPU",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, 1 << 16, (1 << 20) + 1],
    emu_sizes: EMU_SIZES,
    keeps_races: false,
    kept_bugs: &[],
    run,
};

/// The two kernels take the same arguments.
trait AddKernel: for<'a> Kernel<Args<'a> = (Global<'a, f64>, GlobalMut<'a, f64>, Output<'a, f64>)> {}
impl AddKernel for atomic_add_double_cas {}
impl AddKernel for atomic_add_double_native {}

/// Launches `K` with `cells` cells on `vals` and returns the cells and the old values.
fn launch<K: AddKernel>(dev: &Device, cfg: Launch, vals: &[f64], cells: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    let v = dev.upload("vals", vals)?;
    let sums = dev.filled("sums", cells, 0.0f64)?;
    let mut olds = dev.filled("olds", vals.len(), f64::NAN)?; // poison: every thread must report
    dev.launch::<K>(cfg, (v.view(), sums.view_mut(), olds.output()))?;
    Ok((sums.read()?, olds.read()?))
}

/// Checks every cell: its old values form a serial order of its adds, rounded as the device rounds
/// (exact, bit for bit), and its sum is the exact integer sum (`integers`) or within
/// gamma(m-1)·Σ|x| of the Kahan-summed f64 reference, the bound of any order of m adds.
fn check(vals: &[f64], sums: &[f64], olds: &[f64], integers: bool) -> Vec<String> {
    let cells = sums.len();
    let mut bad = Vec::new();
    for (c, &sum) in sums.iter().enumerate() {
        let idx: Vec<usize> = (c..vals.len()).step_by(cells).collect();
        let v: Vec<f64> = idx.iter().map(|&i| vals[i]).collect();
        let o: Vec<f64> = idx.iter().map(|&i| olds[i]).collect();
        if !float_add_order_ok(0.0, &v, &o, sum) {
            bad.push(format!(
                "cell {c}: the old values and the sum {} are no serial order of its {} adds",
                sum,
                v.len()
            ));
            continue;
        }
        if integers {
            let exact: u64 = v.iter().map(|&x| x as u64).sum();
            if sum != exact as f64 {
                bad.push(format!("cell {c}: sum {} want exactly {exact}", sum));
            }
        } else {
            let want = kahan_sum(v.iter().copied());
            let bound = gamma(v.len().saturating_sub(1), f64::UNIT_ROUNDOFF) * v.iter().map(|x| x.abs()).sum::<f64>();
            if !within(sum, want, bound) {
                bad.push(format!("cell {c}: sum {} vs Kahan {want} (bound {bound:.3e})", sum));
            }
        }
    }
    bad
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("atomic_add_f64", n, 16)?;
    let mut rng = StdRng::seed_from_u64(p.seed);
    // Integers 1..=1000: every partial sum is an integer below 2^53, exact in any order, and distinct.
    let ints: Vec<f64> = (0..n).map(|_| rng.gen_range(1..=1000u32) as f64).collect();
    // Reals in [0.5, 1): positive, so every add changes the cell and the old values are distinct.
    let reals: Vec<f64> = (0..n).map(|_| rng.gen_range(0.5f64..1.0)).collect();
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, 0);
    let mut r = ExampleResult::new("atomic_add_f64", dev.kind(), n, p.seed);

    // Full contention on one cell: every CAS-loop thread retries while the others succeed, so the
    // retries grow with the square of the threads; that case uses the first CAS_FULL_CONTENTION adds.
    let cas_n = n.min(CAS_FULL_CONTENTION);
    let cas_cfg = cover(cas_n, BLOCK, u32::MAX / BLOCK, 0);
    if cas_n < n {
        r.show.push(format!("CAS loop on 1 cell: the first {cas_n} adds (full contention grows quadratically)"));
    }
    for (vals, integers, what) in [(&ints, true, "integer-valued, sums exact"), (&reals, false, "reals in [0.5, 1)")] {
        for cells in [1, SPREAD] {
            let (cvals, ccfg) = if cells == 1 { (&vals[..cas_n], cas_cfg) } else { (&vals[..], cfg) };
            let (sums, olds) = launch::<atomic_add_double_cas>(dev, ccfg, cvals, cells)?;
            let bad = check(cvals, &sums, &olds, integers);
            r.check(
                bad.is_empty(),
                format!(
                    "CAS loop (atomicAddDouble), {cells} cell(s), {} adds, {what}: old values a serial order of the adds{}",
                    cvals.len(),
                    super::warp_reduce::fmt_bad(&bad)
                ),
            );
            let (sums, olds) = launch::<atomic_add_double_native>(dev, cfg, vals, cells)?;
            let bad = check(vals, &sums, &olds, integers);
            r.check(
                bad.is_empty(),
                format!(
                    "native atom.add.f64, {cells} cell(s), {what}: old values a serial order of the adds{}",
                    super::warp_reduce::fmt_bad(&bad)
                ),
            );
        }
    }

    if dev.profile().can_time && p.reps > 0 {
        for cells in [1, SPREAD] {
            // Both kernels time the same adds: the CAS loop's cap applies to the native one too.
            let (m, cfg) = if cells == 1 { (cas_n, cas_cfg) } else { (n, cfg) };
            let v = dev.upload("vals", &reals[..m])?;
            let mut olds = dev.filled("olds", m, f64::NAN)?;
            let sums = dev.filled("sums", cells, 0.0f64)?;
            let reset = || sums.write(&vec![0.0; cells]);
            let cas =
                dev.time::<atomic_add_double_cas, _>(cfg, (v.view(), sums.view_mut(), olds.output()), p.reps, &reset)?;
            let native = dev.time::<atomic_add_double_native, _>(
                cfg,
                (v.view(), sums.view_mut(), olds.output()),
                p.reps,
                &reset,
            )?;
            if let (Some(cas), Some(native)) = (cas, native) {
                r.show.push(format!(
                    "{cells:>4} cell(s), {m} adds: CAS loop {:.4} ms, native {:.4} ms: CAS loop / native = {:.1}x",
                    cas.median_ms,
                    native.median_ms,
                    cas.median_ms / native.median_ms
                ));
                if cells == 1 {
                    r.time_ms = Some(native.median_ms);
                }
            }
        }
    }
    Ok(finish(dev, r, false))
}
