//! Host side of `divergent_barrier` (§5.3, exercise 2). The broken kernel's barrier is reached by the
//! odd threads only: undefined behaviour. On the emulator it is reported (the even threads skip the
//! barrier after writing their slots); on a GPU it runs under a time limit (polling the stream), and
//! what the hardware did — it does not hang on sm_70+: the odd threads pass a barrier the even threads
//! never reach —
//! is printed next to the emulator's report of the same launch. The fixed kernel runs everywhere and
//! is checked exactly.

use super::{Example, GPU_SIZES, RunParams, check_n, finish};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::divergent_barrier::{BLOCK, SHARED_BYTES, divergent_barrier_broken, divergent_barrier_fixed};
use gpu_std::emu;
use std::time::Duration;

/// This example's entry in the catalogue (`host list`, `host run divergent_barrier`).
pub const EXAMPLE: Example = Example {
    name: "divergent_barrier",
    row: Some(10),
    section: "§5.3; ex. 2",
    about: "a barrier only odd threads reach: undefined behaviour named by the emulator; on a GPU run under a time limit, and what the hardware did printed; fixed kernel",
    gpu_sizes: GPU_SIZES,
    emu_sizes: &[1, 33, 257, 4097],
    keeps_races: false,
    kept_bugs: &[],
    run,
};

/// How long the broken kernel may run on a GPU before the run is declared hung.
const GPU_LIMIT: Duration = Duration::from_secs(5);

/// What a correct barrier would give thread `t` of a block.
fn ordered_value(t: usize) -> u32 {
    if t % 2 == 1 { 3 * (t as u32 - 1) } else { 3 * t as u32 + 1 }
}

/// The emulator's report of the broken kernel on `cfg` (its first line), and whether it is the
/// divergence report.
fn emulator_report(dev: &Device, cfg: gpu_host::Launch, threads: usize) -> Result<(bool, String)> {
    let mut out = dev.filled("out", threads, u32::MAX)?;
    let e = dev.launch::<divergent_barrier_broken>(cfg, (out.output(),));
    let msg = e.err().map(|e| format!("{e:#}")).unwrap_or_default();
    let _ = dev.take_findings();
    let ok = msg.contains("barrier divergence")
        && msg.contains("skipped it: they accessed memory in its barrier interval")
        && msg.contains("undefined behaviour: on sm_70+ hardware a barrier can release without the threads");
    Ok((ok, msg.lines().next().unwrap_or("no report").to_string()))
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("divergent_barrier", n, 4)?;
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, SHARED_BYTES);
    let threads = cfg.grid.x as usize * BLOCK as usize;
    let mut out = dev.filled("out", threads, u32::MAX)?;
    let mut r = ExampleResult::new("divergent_barrier", dev.kind(), n, p.seed);
    if !dev.profile().detectors {
        let ms = dev.launch_within::<divergent_barrier_broken>(cfg, (out.output(),), GPU_LIMIT)?.unwrap_or(0.0);
        let got = out.read()?;
        let (mut odd_ordered, mut even_ordered) = (0, 0);
        for (i, &v) in got.iter().enumerate() {
            let t = i % BLOCK as usize;
            let hit = v == ordered_value(t);
            if t % 2 == 1 { odd_ordered += hit as usize } else { even_ordered += hit as usize }
        }
        r.show.push(format!(
            "GPU: divergent_barrier_broken finished in {ms:.3} ms ({} blocks x {BLOCK}; bounded at {} s): no hang — \
             the odd threads passed a barrier the even threads never reached; {odd_ordered} of {} odd threads read their neighbour's \
             slot as a barrier would order it, {even_ordered} of {} even threads wrote their own (undefined \
             behaviour: nothing guarantees these counts)",
            cfg.grid.x,
            GPU_LIMIT.as_secs(),
            threads / 2,
            threads / 2
        ));
        let emu = Device::emulator(emu::Options { schedule_seed: p.seed, ..emu::Options::default() });
        let (ok, first) = emulator_report(&emu, cfg, threads)?;
        r.check(ok, "the emulator reports the same launch as barrier divergence (undefined behaviour)".to_string());
        r.show.push(format!("emulator: {first}"));
    } else {
        let (ok, first) = emulator_report(dev, cfg, threads)?;
        r.check(
            ok,
            "the emulator reports the divergent barrier: 128 odd threads wait, 128 even threads skipped it \
             (undefined behaviour; on sm_70+ the barrier can release without them)"
                .to_string(),
        );
        r.show.push(first);
    }
    out.write(&vec![u32::MAX; threads])?; // poison again: the fixed kernel must write every element
    dev.launch::<divergent_barrier_fixed>(cfg, (out.output(),))?;
    let want: Vec<u32> = (0..threads).map(|i| ordered_value(i % BLOCK as usize)).collect();
    let m = exact(&out.read()?, &want, "out");
    r.check(
        m.is_none(),
        format!("fixed kernel: every thread reaches the barrier once; {threads} outputs exact{}", super::mismatch(m)),
    );
    Ok(finish(dev, r, false))
}
