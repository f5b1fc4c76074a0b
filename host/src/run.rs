//! `host run`: runs examples at their test sizes (or one `--n`) and collects results.

use crate::device::{Device, DeviceChoice};
use crate::examples::{self, Example, RunParams, Skip};
use crate::report::ExampleResult;
use anyhow::{Result, bail};
use gpu_std::emu;

/// What `host run` was asked to do.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub examples: Vec<String>,
    pub n: Option<usize>,
    pub seed: u64,
    pub device: DeviceChoice,
    pub json: bool,
    pub verbose: bool,
    pub schedule_seed: u64,
    pub schedules: u32,
    pub reps: usize,
    /// Skip test sizes above this.
    pub max_n: Option<usize>,
}

impl Default for RunRequest {
    fn default() -> Self {
        RunRequest {
            examples: vec!["all".into()],
            n: None,
            seed: 42,
            device: DeviceChoice::Auto,
            json: false,
            verbose: false,
            schedule_seed: 1,
            schedules: 1,
            reps: 20,
            max_n: None,
        }
    }
}

/// Resolves example names (`all` expands); unknown names are an error listing the known ones.
pub fn select(names: &[String]) -> Result<Vec<&'static Example>> {
    let mut out = Vec::new();
    for n in names {
        if n == "all" {
            out.extend(examples::ALL.iter());
        } else if let Some(e) = examples::find(n) {
            out.push(e);
        } else {
            let known: Vec<&str> = examples::ALL.iter().map(|e| e.name).collect();
            bail!("unknown example `{n}`; known: {}, all", known.join(", "));
        }
    }
    if out.is_empty() {
        bail!("no example named; try `host list`");
    }
    Ok(out)
}

/// Runs one example at one size. A launch error (CUDA error, emulator deadlock, kernel panic) is a
/// FAIL row carrying the error, not an abort of the whole run; a size the example cannot run on this
/// device ([`Skip`]) is a SKIP row carrying the reason.
pub fn run_one(dev: &Device, ex: &Example, p: &RunParams) -> ExampleResult {
    match (ex.run)(dev, p) {
        Ok(r) => r,
        Err(e) if e.is::<Skip>() => {
            let _ = dev.take_findings();
            ExampleResult::skip(ex.name, dev.kind(), p.n, p.seed, e.to_string())
        }
        Err(e) => {
            let mut r = ExampleResult::new(ex.name, dev.kind(), p.n, p.seed);
            let f = dev.take_findings();
            r.absorb(f, false);
            r.check(false, format!("error: {e:#}"));
            r
        }
    }
}

/// Opens the device for a request (emulator options from the request).
pub fn open(req: &RunRequest, schedule_seed: u64) -> Result<(Device, Option<String>)> {
    let opts = emu::Options { schedule_seed, ..emu::Options::default() };
    crate::device::open(req.device, opts)
}

/// The sizes an example runs at for this request and device.
pub fn sizes(ex: &Example, req: &RunRequest, dev: &Device) -> Vec<usize> {
    let all = match req.n {
        Some(n) => return vec![n],
        None if dev.is_gpu() => ex.gpu_sizes,
        None => ex.emu_sizes,
    };
    all.iter().copied().filter(|&n| req.max_n.is_none_or(|m| n <= m)).collect()
}
