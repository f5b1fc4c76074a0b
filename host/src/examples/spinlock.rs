//! Host side of `spinlock` (§5.5.2): a shared-memory lock per block around `x * 2 + 1`, and a global
//! lock across blocks around a plain (non-atomic) counter, which must end exactly at the thread count.

use super::{Example, RunParams, check_n, finish};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::spinlock::{BLOCK, MAX_GRID, SHARED_BYTES, global_lock_counter, locked_critical_section};
use gpu_std::emu::LaunchConfig;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run spinlock`).
pub const EXAMPLE: Example = Example {
    name: "spinlock",
    row: Some(12),
    section: "§5.5.2",
    about: "atomicCAS locks: shared lock per block (x*2+1) and a global lock around a plain counter",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, 8193],
    emu_sizes: &[1, 7, 31, 33, 257, 1000],
    keeps_races: false,
    kept_bugs: &[],
    run,
};

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("spinlock", n, 4)?;
    let mut rng = StdRng::seed_from_u64(p.seed);
    // Integers below 2^22: x * 2 + 1 is exact in f32.
    let init: Vec<f32> = (0..n).map(|_| rng.gen_range(0..1 << 22) as f32).collect();
    let mut r = ExampleResult::new("spinlock", dev.kind(), n, p.seed);
    let g = dev.upload("g_data", &init)?;
    let errors = dev.filled("errors", 1, 0u32)?;
    let cfg = cover(n, BLOCK, dev.grid_cap(MAX_GRID), SHARED_BYTES);
    dev.launch::<locked_critical_section>(cfg, (g.view_mut(), errors.view_mut()))?;
    let want: Vec<f32> = init.iter().map(|x| x * 2.0 + 1.0).collect();
    let m = exact(&g.read()?, &want, "g_data");
    let e = errors.read()?[0];
    r.check(
        m.is_none() && e == 0,
        format!("shared-memory lock per block: every element x*2+1 exact, {e} lock timeouts{}", super::mismatch(m)),
    );

    // One global lock for the whole grid: every thread increments a plain counter once.
    let blocks = n.div_ceil(BLOCK as usize).min(dev.grid_cap(MAX_GRID) as usize) as u32;
    let threads = blocks * BLOCK;
    let lock = dev.filled("lock", 1, 0u32)?;
    let counter = dev.filled("counter", 1, 0u32)?;
    let errors = dev.filled("errors", 1, 0u32)?;
    dev.launch::<global_lock_counter>(
        LaunchConfig::linear(blocks, BLOCK, 0),
        (lock.view_mut(), counter.view_mut(), errors.view_mut()),
    )?;
    let (c, e, l) = (counter.read()?[0], errors.read()?[0], lock.read()?[0]);
    r.check(
        c == threads && e == 0 && l == 0,
        format!("global lock: plain counter = {c} (want {threads}), {e} lock timeouts, lock released ({l})"),
    );
    Ok(finish(dev, r, false))
}
