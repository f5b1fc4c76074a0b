//! What every example's run shares: its parameters ([`RunParams`]), the size check every run starts
//! with ([`check_n`]), a size the device cannot run ([`Skip`]), and how findings and failed comparisons
//! reach the result ([`flagged`], [`mismatch`], [`finish`]). It may import gpu-host and the report, not
//! the examples, which import it.

use crate::report::ExampleResult;
use anyhow::{Result, bail};
use gpu_host::Device;

/// Parameters of one run.
#[derive(Clone, Copy, Debug)]
pub struct RunParams {
    pub n: usize,
    pub seed: u64,
    /// Timed launches after warm-up (GPU only); 0 = no timing.
    pub reps: usize,
}

/// An example cannot run at the requested size on this device (e.g. a cooperative grid larger than the
/// emulator or the GPU can hold at once): the run shows a SKIP row with this reason instead of failing.
#[derive(Debug)]
pub struct Skip(pub String);

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Skip {}

/// Rejects sizes the kernels cannot take: zero, or past u32 indexing / a 16 GiB buffer.
pub fn check_n(name: &str, n: usize, elem_bytes: usize) -> Result<()> {
    if n == 0 {
        bail!("{name}: n must be at least 1");
    }
    if n > u32::MAX as usize / 2 {
        bail!(
            "{name}: n = {n} is too large (at most {} elements: kernels index with 32-bit grid arithmetic)",
            u32::MAX / 2
        );
    }
    if n.saturating_mul(elem_bytes) > 16 << 30 {
        bail!("{name}: n = {n} needs {} GiB of device memory (limit 16 GiB)", (n * elem_bytes) >> 30);
    }
    Ok(())
}

/// On the emulator: takes the findings of the launches so far, which come from a kernel that keeps a
/// bug on purpose, and checks that the detector named it (when `racy_expected`) — the reports go to the
/// result, the race count to its `races` column. On a GPU there is no detector: nothing to check.
pub fn flagged(dev: &Device, r: &mut ExampleResult, what: &str, racy_expected: bool) {
    if !dev.profile().detectors {
        return;
    }
    let f = dev.take_findings();
    r.races += f.racy_addresses;
    r.race_reports.extend(f.races.iter().take(2).map(|x| x.to_string()));
    if racy_expected {
        r.check(
            f.racy_addresses > 0,
            format!("race detector names the race in {what}: {} racy address(es)", f.racy_addresses),
        );
    }
}

/// `" — <what>"` for a failed comparison, nothing otherwise: appended to a check's description.
pub fn mismatch(m: Option<String>) -> String {
    m.map(|m| format!(" — {m}")).unwrap_or_default()
}

/// The run's outcome, with the emulator's findings folded in.
pub fn finish(dev: &Device, mut r: ExampleResult, races_expected: bool) -> ExampleResult {
    r.absorb(dev.take_findings(), races_expected);
    r
}
