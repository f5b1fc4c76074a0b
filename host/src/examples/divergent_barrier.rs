//! Host side of `divergent_barrier` (§5.3, exercise 2). The broken kernel hangs a GPU, so it runs only
//! on the emulator, which must report the deadlock with the waiting and the missing threads; the fixed
//! kernel runs everywhere and is checked exactly.

use super::{RunParams, check_n, finish};
use crate::device::{Device, cover};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_kernels::divergent_barrier::{BLOCK, SHARED_BYTES, divergent_barrier_broken, divergent_barrier_fixed};

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("divergent_barrier", n, 4)?;
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, SHARED_BYTES);
    let threads = cfg.grid.x as usize * BLOCK as usize;
    let mut out = dev.filled("out", threads, u32::MAX)?;
    let mut r = ExampleResult::new("divergent_barrier", dev.kind(), n, p.seed);
    if dev.is_gpu() {
        r.show.push("divergent_barrier_broken not launched: it hangs a GPU (run it with --device emu)".into());
    } else {
        let e = dev.launch::<divergent_barrier_broken>(cfg, (out.output(),));
        let msg = e.err().map(|e| format!("{e:#}")).unwrap_or_default();
        let ok = msg.contains("barrier divergence") && msg.contains("128 thread(s) exited");
        r.check(
            ok,
            "the emulator reports the divergent barrier: 128 odd threads wait, 128 even threads never arrive"
                .to_string(),
        );
        if let Some(first) = msg.lines().next() {
            r.show.push(first.to_string());
        }
        let _ = dev.take_findings();
    }
    out.write(&vec![u32::MAX; threads])?; // poison again: the fixed kernel must write every element
    dev.launch::<divergent_barrier_fixed>(cfg, (out.output(),))?;
    let want: Vec<u32> = (0..threads)
        .map(|i| i % BLOCK as usize)
        .map(|t| if t % 2 == 1 { 3 * (t as u32 - 1) } else { 3 * t as u32 + 1 })
        .collect();
    let m = exact(&out.read()?, &want, "out");
    r.check(
        m.is_none(),
        format!("fixed kernel: every thread reaches the barrier once; {threads} outputs exact{}", super::mismatch(m)),
    );
    Ok(finish(dev, r, false))
}
