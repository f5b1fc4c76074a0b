//! Host side of `system_scope` (§5.4, `__threadfence_system()`): a kernel and a running host thread
//! talk through mapped page-locked host memory. Checks, for `n` payload words:
//!
//! 1. GPU → host: the host thread sees the flag while the kernel runs (the kernel waits for its
//!    acknowledgement) and every payload word is right;
//! 2. host → GPU: the kernel sees the host's flag (system-scope acquire load, and volatile polls +
//!    `__threadfence_system()`) and copies the payload exactly;
//! 3. ping-pong: rounds between one GPU thread and the host thread all complete; on a GPU with
//!    `--reps` > 0, the median round trip next to a launch + synchronise + copy per round trip, as a
//!    ratio;
//! 4. the device attributes that decide what is legal; system-scope atomics on one word from the GPU
//!    and the host only where the device reports host-native atomics (the emulator models them);
//! 5. on the emulator: the variants that publish at device scope (`__threadfence()`, `st.release.gpu`),
//!    acquire at device scope (`ld.acquire.gpu`), or whose host writes the payload after the flag are
//!    reported as races naming the host thread.

use super::{Example, RunParams, check_n, finish, flagged, mismatch};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::{Result, bail};
use gpu_host::{Device, cover};
use gpu_kernels::system_scope::{
    BLOCK, DEVICE_FENCE, GPU_ACQUIRE, GPU_RELEASE, RECEIVED, SYSTEM_FENCE, SYSTEM_RELEASE_ACQUIRE, bump, gpu_to_host,
    host_to_gpu, payload_value, ping_pong, sys_atomics,
};
use gpu_std::emu::LaunchConfig;
use std::sync::atomic::Ordering::{Relaxed, Release};
use std::time::{Duration, Instant};

/// This example's entry in the catalogue (`host list`, `host run system_scope`).
pub const EXAMPLE: Example = Example {
    name: "system_scope",
    row: Some(19),
    section: "§5.4 (__threadfence_system)",
    about: "kernel ↔ running host thread through mapped host memory: payloads both ways, ping-pong latency vs launch+copy, device attributes; device-scope variants named by the emulator",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1],
    emu_sizes: &[1, 7, 33, 257],
    keeps_races: true,
    kept_bugs: &[],
    run,
};

/// How long the host waits for the kernel before it gives up (a kernel that failed to launch, or a
/// broken protocol, must not hang the runner).
pub const HOST_TIMEOUT: Duration = Duration::from_secs(30);

/// Bounds of the waits on each side: polls by the kernel, polls by the host.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub kernel_polls: u32,
    pub host_polls: u64,
}

/// The bounds for `dev`: on a GPU, a few seconds of polls; on the emulator, fewer than its livelock
/// limit, so that a wait that cannot end is reported by the side that waits.
pub fn bounds(dev: &Device) -> Bounds {
    if dev.profile().full_scale() {
        Bounds { kernel_polls: 1 << 24, host_polls: u64::MAX }
    } else {
        Bounds { kernel_polls: 20_000, host_polls: 20_000 }
    }
}

/// What the host thread of a GPU → host run saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostSaw {
    /// The flag came before the host's timeout.
    pub flag: bool,
    /// Payload words that differ from what the kernel wrote (the first one's index, and the count).
    pub wrong: Option<(usize, usize)>,
}

/// GPU → host once: the kernel publishes `n` words as `how` says; the host thread waits for the flag
/// (`Acquire`), checks every word (relaxed loads), then acknowledges. Returns what the host saw and the
/// kernel's status word.
pub fn gpu_to_host_once(dev: &Device, n: usize, round: u32, how: u32, b: Bounds) -> Result<(HostSaw, u32)> {
    let payload = dev.mapped::<u32>("payload", n)?;
    let flag = dev.mapped::<u32>("flag", 1)?;
    let ack = dev.mapped::<u32>("ack", 1)?;
    let status = dev.filled("status", 1, 0u32)?;
    let (hp, hf, ha) = (payload.host(), flag.host(), ack.host());
    let mut saw = HostSaw::default();
    let mut agent = || {
        if hf.wait_until(0, b.host_polls, HOST_TIMEOUT, |v| v == round).is_none() {
            return;
        }
        saw.flag = true;
        let bad: Vec<usize> = (0..n).filter(|&i| hp.load(i, Relaxed) != payload_value(i, round)).collect();
        saw.wrong = bad.first().map(|&i| (i, bad.len()));
        ha.store(0, round, Release);
    };
    dev.launch_with_host::<gpu_to_host>(
        LaunchConfig::linear(1, BLOCK, 0),
        (payload.view_mut(), flag.view_mut(), ack.view_mut(), status.view_mut(), round, how, b.kernel_polls),
        &mut agent,
    )?;
    Ok((saw, status.read()?[0]))
}

/// Host → GPU once: the host thread writes `n` words (relaxed stores) and raises the flag (`Release`),
/// or, with `flag_first`, raises the flag before writing (the broken host); the kernel acquires as
/// `how` says and copies the payload. Returns the copy and the kernel's status word.
pub fn host_to_gpu_once(
    dev: &Device,
    n: usize,
    round: u32,
    how: u32,
    flag_first: bool,
    b: Bounds,
) -> Result<(Vec<u32>, u32)> {
    let payload = dev.mapped::<u32>("payload", n)?;
    let flag = dev.mapped::<u32>("flag", 1)?;
    let copy = dev.filled("copy", n, u32::MAX)?;
    let status = dev.filled("status", 1, 0u32)?;
    let (hp, hf) = (payload.host(), flag.host());
    let mut agent = || {
        if flag_first {
            hf.store(0, round, Release);
        }
        for i in 0..n {
            hp.store(i, payload_value(i, round), Relaxed);
        }
        if !flag_first {
            hf.store(0, round, Release);
        }
    };
    dev.launch_with_host::<host_to_gpu>(
        LaunchConfig::linear(1, BLOCK, 0),
        (payload.view(), flag.view_mut(), copy.view_mut(), status.view_mut(), round, how, b.kernel_polls),
        &mut agent,
    )?;
    Ok((copy.read()?, status.read()?[0]))
}

/// The outcome of a ping-pong run.
#[derive(Clone, Debug, Default)]
pub struct PingPong {
    /// Rounds the kernel completed, and whether its waits all succeeded.
    pub kernel_rounds: u32,
    pub kernel_ok: bool,
    /// Rounds the host completed before its timeout.
    pub host_rounds: u32,
    /// Round-trip times the host measured, in µs (all rounds).
    pub rtt_us: Vec<f64>,
}

/// `rounds` round trips: the host raises `to_gpu = r` (`Release`) and waits for `to_host == r`
/// (`Acquire`); the kernel's one thread answers each (volatile polls + `__threadfence_system()`).
pub fn ping_pong_run(dev: &Device, rounds: u32, b: Bounds) -> Result<PingPong> {
    let to_gpu = dev.mapped::<u32>("to_gpu", 1)?;
    let to_host = dev.mapped::<u32>("to_host", 1)?;
    let status = dev.filled("status", 2, 0u32)?;
    let (tg, th) = (to_gpu.host(), to_host.host());
    let mut pp = PingPong::default();
    let mut agent = || {
        for r in 1..=rounds {
            let t0 = Instant::now();
            tg.store(0, r, Release);
            if th.wait_until(0, b.host_polls, HOST_TIMEOUT, |v| v == r).is_none() {
                return;
            }
            pp.rtt_us.push(t0.elapsed().as_secs_f64() * 1e6);
            pp.host_rounds = r;
        }
    };
    dev.launch_with_host::<ping_pong>(
        LaunchConfig::linear(1, 1, 0),
        (to_gpu.view_mut(), to_host.view_mut(), status.view_mut(), rounds, b.kernel_polls),
        &mut agent,
    )?;
    let s = status.read()?;
    (pp.kernel_rounds, pp.kernel_ok) = (s[0], s[1] == RECEIVED);
    Ok(pp)
}

/// Median and the 10th / 90th percentiles of `v` (sorted in place).
pub fn percentiles(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.1), at(0.9))
}

/// The naive alternative, `rounds` times: launch [`bump`], synchronise, copy the word back; returns the
/// wall time of each round trip in µs, and whether the final value is `rounds`.
pub fn launch_round_trips(dev: &Device, rounds: u32) -> Result<(Vec<f64>, bool)> {
    let x = dev.filled("x", 1, 0u32)?;
    let mut times = Vec::with_capacity(rounds as usize);
    let mut last = 0;
    for _ in 0..rounds {
        let t0 = Instant::now();
        dev.launch::<bump>(LaunchConfig::linear(1, 1, 0), (x.view_mut(),))?;
        last = x.read()?[0];
        times.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    Ok((times, last == rounds))
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("system_scope", n, 4)?;
    if n > 1 << 24 {
        bail!("system_scope: n = {n} payload words is more mapped host memory than this example takes (at most 2^24)");
    }
    let b = bounds(dev);
    let mut r = ExampleResult::new("system_scope", dev.kind(), n, p.seed);
    let round = 1 + (p.seed % 1000) as u32;

    // 4. What the hardware promises.
    let native_atomics = match dev.system_attributes()? {
        Some(a) => {
            let on = |v: bool| if v { 1 } else { 0 };
            r.show.push(format!(
                "device attributes: canMapHostMemory={} unifiedAddressing={} hostNativeAtomicSupported={} \
                 pageableMemoryAccess={} pageableMemoryAccessUsesHostPageTables={} concurrentManagedAccess={}",
                on(a.can_map_host_memory),
                on(a.unified_addressing),
                on(a.host_native_atomics),
                on(a.pageable_memory_access),
                on(a.pageable_uses_host_page_tables),
                on(a.concurrent_managed_access)
            ));
            if !a.host_native_atomics {
                r.show.push(
                    "hostNativeAtomicSupported=0: flags and system fences between host and GPU work, but a GPU \
                     read-modify-write and a host one on the same word are NOT atomic with each other here \
                     (e.g. a PCIe x86 host), and GPU atomics on mapped host memory are not allowed; the host+GPU \
                     atomics check is skipped (atom.add.sys runs in device memory only)"
                        .into(),
                );
            }
            a.host_native_atomics
        }
        None => {
            r.show.push(
                "emulator: models the PTX memory model; the host agent's atomics are system-scope and atomic with \
                 the kernel's .sys atomics"
                    .into(),
            );
            true
        }
    };

    // 1. GPU → host.
    let (saw, status) = gpu_to_host_once(dev, n, round, SYSTEM_FENCE, b)?;
    let wrong = saw.wrong.map(|(i, k)| format!("{k} word(s) differ, first at [{i}]"));
    r.check(
        saw.flag && wrong.is_none() && status == RECEIVED,
        format!(
            "GPU → host (__threadfence_system + volatile flag): host saw the flag ({}), all {n} payload words exact{}, \
             kernel saw the host's acknowledgement while running (status {status}: 1 = received, 2 = timed out)",
            saw.flag,
            mismatch(wrong)
        ),
    );
    let (saw, status) = gpu_to_host_once(dev, n, round + 1, SYSTEM_RELEASE_ACQUIRE, b)?;
    r.check(
        saw.flag && saw.wrong.is_none() && status == RECEIVED,
        format!("GPU → host (st.release.sys flag): flag seen, {n} words exact, acknowledged (status {status})"),
    );

    // 2. Host → GPU.
    let want: Vec<u32> = (0..n).map(|i| payload_value(i, round)).collect();
    for (how, what) in
        [(SYSTEM_RELEASE_ACQUIRE, "ld.acquire.sys polls"), (SYSTEM_FENCE, "volatile polls + __threadfence_system")]
    {
        let (copy, status) = host_to_gpu_once(dev, n, round, how, false, b)?;
        let m = exact(&copy, &want, "copy");
        r.check(
            status == RECEIVED && m.is_none(),
            format!(
                "host → GPU (Release flag; kernel {what}): status {status}, {n} words copied exactly{}",
                mismatch(m)
            ),
        );
    }

    // 3. Ping-pong.
    // Timed runs (`--reps` > 0) measure 20000 round trips; untimed ones (the sanitizers) check 200.
    let rounds = match (dev.profile().full_scale(), p.reps) {
        (false, _) => 12,
        (true, 0) => 200,
        (true, _) => 20_000,
    };
    let mut pp = ping_pong_run(dev, rounds, b)?;
    r.check(
        pp.kernel_ok && pp.kernel_rounds == rounds && pp.host_rounds == rounds,
        format!(
            "ping-pong: {rounds} round trips completed by both sides (kernel {}, host {})",
            pp.kernel_rounds, pp.host_rounds
        ),
    );
    if dev.profile().can_time && pp.rtt_us.len() > 1000 {
        // The first rounds include the kernel's start: leave them out.
        let (med, p10, p90) = percentiles(&mut pp.rtt_us[1000..]);
        let naive_rounds = 2000;
        let (mut naive, naive_ok) = launch_round_trips(dev, naive_rounds)?;
        r.check(naive_ok, format!("launch + synchronise + copy: {naive_rounds} bumps counted exactly"));
        let (nmed, n10, n90) = percentiles(&mut naive[100..]);
        r.show.push(format!(
            "{:<44} {:>10} {:>10} {:>10} {:>8}",
            "round trip (host ↔ one GPU thread)", "median µs", "p10 µs", "p90 µs", "rounds"
        ));
        r.show.push(format!(
            "{:<44} {med:>10.2} {p10:>10.2} {p90:>10.2} {:>8}",
            "mapped-memory flags, __threadfence_system",
            rounds - 1000
        ));
        r.show.push(format!(
            "{:<44} {nmed:>10.2} {n10:>10.2} {n90:>10.2} {:>8}",
            "kernel launch + synchronise + copy",
            naive_rounds - 100
        ));
        r.show.push(format!("ratio launch+sync+copy / mapped flags: {:.1}x", nmed / med));
    }

    // 4. Host + GPU system-scope atomics on one word: in mapped host memory only where the device
    // reports host-native atomics (elsewhere a GPU atomic on mapped host memory is not even allowed:
    // compute-sanitizer's memcheck reports "Invalid __global__ system-scoped atomic"), else in device
    // memory, GPU threads only.
    {
        let threads = 2 * BLOCK;
        let per_thread = dev.profile().pick(64, 2);
        let cfg = cover(threads as usize, BLOCK, 2, 0);
        if native_atomics {
            let host_adds: u32 = dev.profile().pick(100_000, 16);
            let counter = dev.mapped::<u32>("counter", 1)?;
            let hc = counter.host();
            let mut agent = || {
                for _ in 0..host_adds {
                    hc.fetch_add(0, 1, Relaxed);
                }
            };
            dev.launch_with_host::<sys_atomics>(cfg, (counter.view_mut(), per_thread), &mut agent)?;
            let (got, want) = (counter.read()[0], threads * per_thread + host_adds);
            r.check(
                got == want,
                format!(
                    "atom.add.sys on mapped host memory from {threads} GPU threads x {per_thread} + {host_adds} host \
                     fetch_adds on the same word at the same time: total {got}, expected {want}"
                ),
            );
        } else {
            let counter = dev.filled("counter", 1, 0u32)?;
            dev.launch::<sys_atomics>(cfg, (counter.view_mut(), per_thread))?;
            let (got, want) = (counter.read()?[0], threads * per_thread);
            r.check(
                got == want,
                format!(
                    "atom.add.sys in device memory from {threads} GPU threads x {per_thread}: total {got}, expected \
                     {want} (no host adds and no mapped memory: not atomic with the host here)"
                ),
            );
        }
    }

    // 5. Twins, on the emulator only (on a GPU a broken protocol may pass by luck, or not end).
    if dev.profile().detectors {
        // The correct protocols above must be race-free: their findings are taken (and judged) first.
        r.absorb(dev.take_findings(), false);
        gpu_to_host_once(dev, n, round, DEVICE_FENCE, b)?;
        flagged(dev, &mut r, "gpu_to_host with __threadfence() (device scope) before the flag", true);
        gpu_to_host_once(dev, n, round, GPU_RELEASE, b)?;
        flagged(dev, &mut r, "gpu_to_host with st.release.gpu (device scope) on the flag", true);
        host_to_gpu_once(dev, n, round, GPU_ACQUIRE, false, b)?;
        flagged(dev, &mut r, "host_to_gpu with ld.acquire.gpu (device scope) polls", true);
        host_to_gpu_once(dev, n, round, SYSTEM_RELEASE_ACQUIRE, true, b)?;
        flagged(dev, &mut r, "host_to_gpu whose host writes the payload after the flag", true);
        return Ok(r);
    }
    Ok(finish(dev, r, false))
}
