//! Host side of `histogram_privatised`: seeded random bytes, all 256 bins checked exactly, the first 10
//! bins shown like the seed prints them.

use super::{EMU_SIZES, Example, RunParams, check_n, finish};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::histogram_privatised::{BLOCK, MAX_GRID, NUM_BINS, SHARED_BYTES, histogram_privatised};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run histogram_privatised`).
pub const EXAMPLE: Example = Example {
    name: "histogram_privatised",
    row: Some(7),
    section: "000 histogram; ex. 3",
    about: "256 shared-memory bins per block folded with global atomics; tiers histogram_fast (per-lane bin columns) and histogram_small (small inputs) on uniform, one-bin and Zipf bytes",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1, 1 << 22, 1 << 28],
    emu_sizes: EMU_SIZES,
    keeps_races: false,
    kept_bugs: &[],
    run,
};

/// `n` seeded random bytes and their 256-bin histogram counted on the CPU (shared by the histogram
/// examples).
pub(crate) fn random_bytes(seed: u64, n: usize) -> (Vec<u8>, Vec<u32>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let data: Vec<u8> = (0..n).map(|_| rng.r#gen::<u8>()).collect();
    let mut bins = vec![0u32; NUM_BINS];
    for &b in &data {
        bins[b as usize] += 1;
    }
    (data, bins)
}

/// `First 10 bins: [0]=… [1]=…`, as the chapter's host prints them.
pub(crate) fn first_bins(bins: &[u32]) -> String {
    format!("First 10 bins: {}", (0..10).map(|i| format!("[{i}]={}", bins[i])).collect::<Vec<_>>().join(" "))
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("histogram_privatised", n, 1)?;
    let (data, want) = random_bytes(p.seed, n);
    let d = dev.upload("data", &data)?;
    let hist = dev.filled("hist", NUM_BINS, 0u32)?;
    let cfg = cover(n, BLOCK, dev.grid_cap(MAX_GRID), SHARED_BYTES);
    let args = (d.view(), hist.view_mut());
    dev.launch::<histogram_privatised>(cfg, args)?;
    let got = hist.read()?;

    let mut r = ExampleResult::new("histogram_privatised", dev.kind(), n, p.seed);
    let mismatch = exact(&got, &want, "bins");
    let correct = (0..NUM_BINS).filter(|&i| got[i] == want[i]).count();
    r.check(mismatch.is_none(), format!("{correct}/{NUM_BINS} bins correct{}", super::mismatch(mismatch)));
    let total: u64 = got.iter().map(|&c| c as u64).sum();
    r.check(total == n as u64, format!("bins sum to {total} (n = {n})"));
    r.show.push(first_bins(&got));
    super::measure::<histogram_privatised>(dev, p, &mut r, cfg, args, n, &|| Ok(hist.write(&[0; NUM_BINS])?))?;
    super::histogram_fast::run_tiers(dev, p, &mut r, &data, &want)?;
    Ok(finish(dev, r, false))
}
