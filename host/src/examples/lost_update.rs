//! Host side of `lost_update` (§5.1, §5.5.1): the plain `bin += 1` histogram loses counts silently on a
//! GPU and is named by the race detector on the emulator; the atomic kernel (`histogram_global`) is exact.

use super::{EMU_SIZES, Example, RunParams, check_n, finish, flagged};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::lost_update::{BLOCK, histogram_global, histogram_racy};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run lost_update`).
pub const EXAMPLE: Example = Example {
    name: "lost_update",
    row: Some(8),
    section: "§5.1, §5.5.1",
    about: "plain `bin += 1` histogram loses counts (GPU) and is named by the race detector (emulator); atomic kernel exact",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1, 1 << 24],
    emu_sizes: EMU_SIZES,
    keeps_races: true,
    kept_bugs: &[],
    run,
};

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("lost_update", n, 1)?;
    let mut rng = StdRng::seed_from_u64(p.seed);
    // Four hot bins: heavy contention, as in a skewed histogram.
    let data: Vec<u8> = (0..n).map(|_| rng.gen_range(0..4u8)).collect();
    let mut want = vec![0u32; 256];
    for &b in &data {
        want[b as usize] += 1;
    }
    let d = dev.upload("data", &data)?;
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, 0);
    let mut r = ExampleResult::new("lost_update", dev.kind(), n, p.seed);

    let hist = dev.filled("hist", 256, 0u32)?;
    dev.launch::<histogram_racy>(cfg, (d.view(), hist.view_mut()))?;
    let counted: u64 = hist.read()?.iter().map(|&c| c as u64).sum();
    let lost = n as u64 - counted.min(n as u64);
    r.show.push(format!(
        "plain `bin += 1`: counted {counted} of {n}: {lost} updates lost ({:.1}%)",
        100.0 * lost as f64 / n as f64
    ));
    // Two threads share a bin exactly when some bin counts at least 2.
    flagged(dev, &mut r, "histogram_racy (plain read-modify-write)", want.iter().any(|&c| c >= 2));

    let hist = dev.filled("hist", 256, 0u32)?;
    let args = (d.view(), hist.view_mut());
    dev.launch::<histogram_global>(cfg, args)?;
    let m = exact(&hist.read()?, &want, "bins");
    r.check(m.is_none(), format!("atomicAdd kernel (histogram_global): all 256 bins exact{}", super::mismatch(m)));
    super::measure::<histogram_global>(dev, p, &mut r, cfg, args, n, &|| Ok(hist.write(&[0; 256])?))?;
    Ok(finish(dev, r, false))
}
