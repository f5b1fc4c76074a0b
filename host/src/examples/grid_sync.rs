//! Host side of `grid_sync` (000 `multiPhaseKernel` + cooperative launch): intended result
//! `2a[i] + 2a[i-1]`; the seed's phase 2 races (flagged on the emulator, compared on a GPU); a grid
//! larger than the co-resident capacity is refused with a clear error. An `n` that needs more blocks than
//! the device holds at once is a SKIP row saying so.

use super::{Example, RunParams, Skip, check_n, finish, flagged};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_host::Device;
use gpu_kernels::grid_sync::{BLOCK, multi_phase, multi_phase_seed};
use gpu_std::Dim3;
use gpu_std::emu::LaunchConfig;
use gpu_std::grid::GRID_BARRIER_WORDS;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run grid_sync`).
pub const EXAMPLE: Example = Example {
    name: "grid_sync",
    row: Some(17),
    section: "000 multiPhaseKernel; §5.3",
    about: "grid.sync() under a cooperative launch; the seed's phase 2 is a race",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, 4097, 32768],
    emu_sizes: &[1, 7, 31, 33, 257, 4096],
    keeps_races: true,
    kept_bugs: &[],
    run,
};

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("grid_sync", n, 4)?;
    let cap = dev.max_coresident_blocks::<multi_phase>(Dim3::x(BLOCK), 0)? as usize;
    let blocks = n.div_ceil(BLOCK as usize);
    if blocks > cap {
        return Err(Skip(format!(
            "n = {n} needs {blocks} blocks of {BLOCK} threads (one element per thread), but only {cap} blocks can be \
             co-resident on this device for a cooperative launch; n <= {} runs",
            cap * BLOCK as usize
        ))
        .into());
    }
    let mut rng = StdRng::seed_from_u64(p.seed);
    // Small integers: every result is exact in f32.
    let a: Vec<f32> = (0..n).map(|_| rng.gen_range(0..1000) as f32).collect();
    let want: Vec<f32> = (0..n).map(|i| 2.0 * a[i] + if i > 0 { 2.0 * a[i - 1] } else { 0.0 }).collect();
    let cfg = LaunchConfig::linear(blocks as u32, BLOCK, 0).cooperative();
    let mut r = ExampleResult::new("grid_sync", dev.kind(), n, p.seed);

    let data = dev.upload("data", &a)?;
    let ws = dev.filled("grid_workspace", GRID_BARRIER_WORDS, 0u32)?;
    dev.launch::<multi_phase_seed>(cfg, (data.view_mut(), ws.view_mut()))?;
    flagged(dev, &mut r, "multi_phase_seed (phase 2 reads data[i-1] while it is written)", n > 2);
    let got = data.read()?;
    let wrong = (0..n).filter(|&i| got[i] != want[i]).count();
    r.show.push(format!("seed phase 2: {wrong} of {n} elements differ from 2a[i]+2a[i-1] in this run"));

    data.write(&a)?;
    ws.write(&[0; GRID_BARRIER_WORDS])?; // the fixed kernel's timeout flag must be its own
    let args = (data.view_mut(), ws.view_mut());
    dev.launch::<multi_phase>(cfg, args)?;
    let m = exact(&data.read()?, &want, "data");
    let timeout = ws.read()?[2];
    r.check(
        m.is_none() && timeout == 0,
        format!("fixed: {blocks} co-resident blocks, two grid barriers, 2a[i]+2a[i-1] exact{}", super::mismatch(m)),
    );

    let too_big = LaunchConfig::linear(cap as u32 + 1, BLOCK, 0).cooperative();
    let e = dev.launch::<multi_phase>(too_big, args).err().map(|e| format!("{e:#}")).unwrap_or_default();
    r.check(e.contains("exceeds"), format!("a cooperative grid of {} blocks (cap {cap}) is refused: {e}", cap + 1));
    let _ = dev.take_findings();
    super::measure::<multi_phase>(dev, p, &mut r, cfg, args, n * 4 * 3, &|| Ok(data.write(&a)?))?;
    Ok(finish(dev, r, false))
}
