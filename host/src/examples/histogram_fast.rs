//! The optimised tiers of `histogram_privatised` (gpu-kernels' `histogram_fast`: per-lane bin columns
//! and 16-byte loads; `histogram_small`: the launcher's kernel up to 8 MiB, one set of bins per block
//! over many blocks), each checked exactly (and timed on a GPU) on the example's random bytes, on bytes
//! that are all equal (one hot bin) and on a skewed, Zipf-like distribution.

use super::RunParams;
use super::measure_tier;
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_algos_kernels::histogram::bytes::{
    self as hf, BLOCK, NUM_BINS, SHARED_BYTES, histogram_bytes as histogram_fast,
};
use gpu_algos_kernels::histogram::small::{self as hs, histogram_bytes_small as histogram_small};
use gpu_host::{Device, Launch};
use gpu_std::Dim3;
use rand::distributions::{Distribution, WeightedIndex};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// Blocks on the emulator, whose cost grows with the number of threads.
const EMU_GRID: u32 = 2;

/// The launch for `n` bytes: [`hf::grid`] on a GPU (`BLOCKS_PER_SM` blocks per SM, at most what fits,
/// fewer for small inputs), a few blocks on the emulator.
fn launch(dev: &Device, n: usize) -> Result<Launch> {
    let resident = dev.max_coresident_blocks::<histogram_fast>(Dim3::x(BLOCK), SHARED_BYTES)?;
    let profile = dev.profile();
    let grid = if profile.full_scale() { hf::grid(n, profile.sms, resident) } else { resident.min(EMU_GRID) };
    Ok(Launch::linear(grid, BLOCK, SHARED_BYTES))
}

/// The launch of `histogram_small` for `n` bytes: [`hs::grid`] on a GPU (above its largest input, where
/// the launcher takes `histogram_fast`, the most blocks it would give), a few blocks on the emulator.
fn launch_small(dev: &Device, n: usize) -> Result<Launch> {
    let profile = dev.profile();
    let grid = if profile.full_scale() {
        let sms = profile.sms;
        hs::grid(n, sms).unwrap_or(sms * hs::BLOCKS_PER_SM)
    } else {
        EMU_GRID
    };
    Ok(Launch::linear(grid, hs::BLOCK, hs::SHARED_BYTES))
}

/// `n` bytes where byte `k` has probability proportional to `1 / (k + 1)` (Zipf, s = 1), seeded.
pub(crate) fn zipf_bytes(seed: u64, n: usize) -> Vec<u8> {
    let weights: Vec<f64> = (0..NUM_BINS).map(|k| 1.0 / (k as f64 + 1.0)).collect();
    let dist = WeightedIndex::new(&weights).expect("positive weights");
    let mut rng = StdRng::seed_from_u64(seed);
    // Sample a table once, then index it: n may be 2^30.
    let table: Vec<u8> = (0..1 << 16).map(|_| dist.sample(&mut rng) as u8).collect();
    (0..n).map(|_| table[rng.r#gen::<u16>() as usize]).collect()
}

fn count(data: &[u8]) -> Vec<u32> {
    let mut bins = vec![0u32; NUM_BINS];
    for &b in data {
        bins[b as usize] += 1;
    }
    bins
}

/// Runs the tier on `data` (the example's random bytes, with their CPU count `want`), then on one-bin
/// and Zipf bytes of the same length; records checks and times in `r`.
pub(crate) fn run_tiers(dev: &Device, p: &RunParams, r: &mut ExampleResult, data: &[u8], want: &[u32]) -> Result<()> {
    let n = data.len();
    let (cfg, cfg_small) = (launch(dev, n)?, launch_small(dev, n)?);
    let inputs: [(&str, Vec<u8>); 2] = [("one bin", vec![42u8; n]), ("zipf", zipf_bytes(p.seed, n))];
    let cases = std::iter::once(("uniform", data, want.to_vec()))
        .chain(inputs.iter().map(|(name, d)| (*name, d.as_slice(), count(d))));
    for (name, bytes, want) in cases {
        let d = dev.upload("data", bytes)?;
        let hist = dev.filled("hist", NUM_BINS, 0u32)?;
        let args = (d.view(), hist.view_mut());
        dev.launch::<histogram_fast>(cfg, args)?;
        let got = hist.read()?;
        let m = exact(&got, &want, "bins");
        r.check(m.is_none(), format!("histogram_fast ({name}): all {NUM_BINS} bins exact{}", super::mismatch(m)));
        // The library's call (gpu_algos::histogram::bytes) picks one of the two kernels by n.
        let mut lib_hist = dev.filled("hist", NUM_BINS, 0u32)?;
        gpu_algos::histogram::bytes(dev, &d, &mut lib_hist)?;
        let m = exact(&lib_hist.read()?, &want, "bins");
        r.check(
            m.is_none(),
            format!("gpu_algos::histogram::bytes ({name}): all {NUM_BINS} bins exact{}", super::mismatch(m)),
        );
        let tier = format!("histogram_fast ({name})");
        measure_tier::<histogram_fast>(dev, p, r, &tier, cfg, args, n, &|| Ok(hist.write(&[0; NUM_BINS])?))?;

        hist.write(&[0; NUM_BINS])?;
        dev.launch::<histogram_small>(cfg_small, args)?;
        let m = exact(&hist.read()?, &want, "bins");
        r.check(m.is_none(), format!("histogram_small ({name}): all {NUM_BINS} bins exact{}", super::mismatch(m)));
        let tier = format!("histogram_small ({name})");
        measure_tier::<histogram_small>(dev, p, r, &tier, cfg_small, args, n, &|| Ok(hist.write(&[0; NUM_BINS])?))?;
    }
    Ok(())
}
