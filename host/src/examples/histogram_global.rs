//! Host side of `histogram_global` (§5.5.1): seeded random bytes, one global `atomicAdd` per byte,
//! every one of the 256 bins checked exactly.

use super::histogram_privatised::{first_bins, random_bytes};
use super::{EMU_SIZES, Example, RunParams, check_n, finish};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::histogram_global::{BLOCK, NUM_BINS, histogram_global};

/// This example's entry in the catalogue (`host list`, `host run histogram_global`).
pub const EXAMPLE: Example = Example {
    name: "histogram_global",
    row: Some(6),
    section: "§5.5.1",
    about: "one global atomicAdd per byte; every bin exact",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1, 1 << 22],
    emu_sizes: EMU_SIZES,
    keeps_races: false,
    kept_bugs: &[],
    run,
};

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("histogram_global", n, 1)?;
    let (data, want) = random_bytes(p.seed, n);
    let d = dev.upload("data", &data)?;
    // The bins accumulate: they start at zero, as the chapter's host zeroes them.
    let hist = dev.filled("hist", NUM_BINS, 0u32)?;
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, 0);
    let args = (d.view(), hist.view_mut());
    dev.launch::<histogram_global>(cfg, args)?;
    let got = hist.read()?;

    let mut r = ExampleResult::new("histogram_global", dev.kind(), n, p.seed);
    let m = exact(&got, &want, "bins");
    r.check(m.is_none(), format!("all {NUM_BINS} bins exact{}", super::mismatch(m)));
    let total: u64 = got.iter().map(|&c| c as u64).sum();
    r.check(total == n as u64, format!("bins sum to {total} (n = {n})"));
    r.show.push(first_bins(&got));
    super::measure::<histogram_global>(dev, p, &mut r, cfg, args, n, &|| Ok(hist.write(&[0; NUM_BINS])?))?;
    Ok(finish(dev, r, false))
}
