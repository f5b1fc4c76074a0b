//! Host side of `producer_consumer` (§5.4): block 0 produces, block 1 consumes after a fence + volatile
//! flag; the consumer's copy must equal the data and its bounded spin must not time out. The variant
//! without the producer's fence is named by the race detector on the emulator.

use super::{EMU_SIZES, Example, RunParams, check_n, finish, flagged};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_host::Device;
use gpu_kernels::producer_consumer::{BLOCK, RECEIVED, producer_consumer, producer_consumer_no_fence};
use gpu_std::emu::LaunchConfig;

/// This example's entry in the catalogue (`host list`, `host run producer_consumer`).
pub const EXAMPLE: Example = Example {
    name: "producer_consumer",
    row: Some(11),
    section: "§5.4",
    about: "block 0 produces, block 1 consumes after __threadfence + volatile flag, bounded spin",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1],
    emu_sizes: EMU_SIZES,
    keeps_races: true,
    kept_bugs: &[],
    run,
};

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("producer_consumer", n, 4)?;
    let cfg = LaunchConfig::linear(2, BLOCK, 0);
    let want: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut r = ExampleResult::new("producer_consumer", dev.kind(), n, p.seed);
    let buf = dev.filled("buffer", n, -1.0f32)?;
    let flag = dev.filled("flag", 1, 0u32)?;
    let copy = dev.filled("copy", n, f32::NAN)?;
    let status = dev.filled("status", 1, 0u32)?;

    dev.launch::<producer_consumer_no_fence>(
        cfg,
        (buf.view_mut(), flag.view_mut(), copy.view_mut(), status.view_mut()),
    )?;
    flagged(dev, &mut r, "producer_consumer_no_fence (flag raised without __threadfence)", true);

    buf.write(&vec![-1.0; n])?;
    flag.write(&[0])?;
    copy.write(&vec![f32::NAN; n])?;
    status.write(&[0])?;
    dev.launch::<producer_consumer>(cfg, (buf.view_mut(), flag.view_mut(), copy.view_mut(), status.view_mut()))?;
    let s = status.read()?[0];
    let m = exact(&copy.read()?, &want, "copy");
    r.check(
        s == RECEIVED && m.is_none(),
        format!(
            "consumer saw the flag (status {s}: 1 = received, 2 = spin timeout) and copied {n} elements exactly{}",
            super::mismatch(m)
        ),
    );
    Ok(finish(dev, r, false))
}
