//! Timed launches on a GPU (`--reps`): a chapter kernel ([`measure`], [`measure_tier`]) or a
//! gpu-algos call ([`measure_call`]), recorded as the result's time and GB/s or as one of its optimised
//! tiers. It may import gpu-host, the report and [`RunParams`], not the examples, which import it.

use super::check::RunParams;
use crate::report::ExampleResult;
use anyhow::Result;
use gpu_host::{Device, IntoArgs, Launch};
use gpu_std::Kernel;

/// On a GPU with `p.reps > 0`: times `K` (see [`Device::time`]) and returns the median time and
/// `bytes` (that must move) / time. `reset` restores the inputs before each timed launch.
fn time_and_rate<'a, K: Kernel>(
    dev: &Device,
    p: &RunParams,
    cfg: Launch,
    args: impl IntoArgs<Params = K::Args<'a>>,
    bytes: usize,
    reset: &dyn Fn() -> Result<()>,
) -> Result<Option<(f64, f64)>>
where
{
    if p.reps == 0 {
        return Ok(None);
    }
    let t = dev.time::<K, _>(cfg, args, p.reps, reset)?;
    Ok(t.map(|t| (t.median_ms, bytes as f64 / (t.median_ms * 1e6))))
}

/// On a GPU with `p.reps > 0`: times `K` and records the median time and GB/s in `r`.
pub fn measure<'a, K: Kernel>(
    dev: &Device,
    p: &RunParams,
    r: &mut ExampleResult,
    cfg: Launch,
    args: impl IntoArgs<Params = K::Args<'a>>,
    bytes: usize,
    reset: &dyn Fn() -> Result<()>,
) -> Result<()>
where
{
    if let Some((ms, gbps)) = time_and_rate::<K>(dev, p, cfg, args, bytes, reset)? {
        (r.time_ms, r.gbps) = (Some(ms), Some(gbps));
    }
    Ok(())
}

/// On a GPU with `p.reps > 0`: times `K` like [`measure`] and records it as the optimised tier `name`
/// of `r`.
#[allow(clippy::too_many_arguments)]
pub fn measure_tier<'a, K: Kernel>(
    dev: &Device,
    p: &RunParams,
    r: &mut ExampleResult,
    name: &str,
    cfg: Launch,
    args: impl IntoArgs<Params = K::Args<'a>>,
    bytes: usize,
    reset: &dyn Fn() -> Result<()>,
) -> Result<()>
where
{
    if let Some((time_ms, gbps)) = time_and_rate::<K>(dev, p, cfg, args, bytes, reset)? {
        r.tiers.push(crate::report::Tier { name: name.to_string(), time_ms, gbps });
    }
    Ok(())
}

/// On a GPU with `p.reps > 0`: times `call` (a gpu-algos call, see [`Device::time_calls`]) and records
/// it as the optimised tier `name` of `r`, at `bytes` / time.
pub fn measure_call(
    dev: &Device,
    p: &RunParams,
    r: &mut ExampleResult,
    name: &str,
    bytes: usize,
    reset: &dyn Fn() -> Result<()>,
    call: &dyn Fn() -> Result<()>,
) -> Result<()> {
    if p.reps == 0 {
        return Ok(());
    }
    if let Some(t) = dev.time_calls(p.reps, reset, call)? {
        let gbps = bytes as f64 / (t.median_ms * 1e6);
        r.tiers.push(crate::report::Tier { name: name.to_string(), time_ms: t.median_ms, gbps });
    }
    Ok(())
}
