//! Host side of `multi_gpu` (§5.4–5.5 across two GPUs): peer access, system-scope atomics on a peer's
//! memory, a cross-GPU handshake and its round-trip latency. Checks, for `n` elements per GPU:
//!
//! 1. the driver's peer attributes both ways (`cuDeviceCanAccessPeer`, `ACCESS_SUPPORTED`,
//!    `NATIVE_ATOMIC_SUPPORTED`, `PERFORMANCE_RANK`); peer access enabled both ways. With fewer than
//!    two GPUs, or two that cannot reach each other, the run is a SKIP row saying so;
//! 2. both GPUs at once: every thread adds to counters in GPU 0's memory with `atom.add.sys`; the totals
//!    are exact and the old values form a serial order of all `2n` adds (`models::chain_ok`). Where
//!    the driver reports no native peer atomics this part is skipped, with the reason;
//! 3. the handshake: GPU 0 publishes `n` payload words with `__threadfence_system()` and a flag in GPU
//!    1's memory; GPU 1 acquires it at system scope, checks every word, answers; both waits bounded;
//! 4. on two GPUs with `--reps` > 0: the round trip GPU 0 ↔ GPU 1 through flags (median over runs of
//!    the mean per round), next to the same exchange through the host (launch + synchronise + copy on
//!    each GPU), as a ratio;
//! 5. on the emulator: both grids under one scheduler, race-free; the variant that publishes with
//!    `__threadfence()` is reported as a race naming both GPUs.

use super::{Example, RunParams, Skip, check_n, finish, flagged, mismatch};
use crate::models::chain_ok;
use crate::report::ExampleResult;
use anyhow::Result;
use gpu_host::{Device, Launch, cover};
use gpu_kernels::multi_gpu::{
    BLOCK, DEVICE_FENCE, RECEIVED, SYSTEM_FENCE, add_value, handshake_recv, handshake_send, peer_add, ping, pong,
};
use gpu_kernels::system_scope::bump;
use gpu_std::emu::LaunchConfig;
use std::time::Instant;

/// This example's entry in the catalogue (`host list`, `host run multi_gpu`).
pub const EXAMPLE: Example = Example {
    name: "multi_gpu",
    row: Some(21),
    section: "§5.4–5.5 (system scope)",
    about: "two GPUs with peer access: .sys atomics from both on GPU 0's memory, a cross-GPU flag handshake, round trip vs launch+copy; needs two GPUs (SKIP otherwise); the emulator runs both grids and names the __threadfence() variant",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, (1 << 20) + 1],
    emu_sizes: &[1, 7, 33, 257, 4097],
    keeps_races: true,
    kept_bugs: &[],
    run,
};

/// Polls a kernel makes before giving up: on a GPU a few seconds' worth; on the emulator fewer than
/// its livelock limit, so that a wait that cannot end is reported by the side that waits.
pub fn max_polls(dev: &Device) -> u32 {
    dev.profile().pick(1 << 24, 20_000)
}

/// Opens the second device: GPU 1 next to GPU 0 (then peer access is checked and enabled both ways),
/// or a second emulator next to an emulator. `Err(Skip)` when there is no GPU 1, or when the two GPUs
/// cannot reach each other's memory. Returns the device and lines describing the peer attributes.
pub fn open_peer(dev: &Device) -> Result<(Device, Vec<String>, bool)> {
    if let Some(opts) = dev.emu_options() {
        let d1 = Device::emulator(opts.clone());
        let note = "emulator: both devices' grids run under one scheduler; device scope (.gpu) covers the threads of \
                    one device, system scope (.sys) both"
            .to_string();
        return Ok((d1, vec![note], true));
    }
    let found = Device::gpu_count()?;
    if found < 2 {
        return Err(Skip(format!("needs 2 GPUs with peer access; found {found} ({})", dev.name())).into());
    }
    let ptx = crate::open::crate_ptx(crate::open::DEFAULT_KERNEL_CRATE);
    let d1 = Device::gpu_ordinal(&ptx, 1)?;
    let mut lines = vec![format!("GPU 0: {}", dev.name()), format!("GPU 1: {}", d1.name())];
    let mut native = true;
    let mut reachable = true;
    for (from, to, a, b) in [(0, 1, dev, &d1), (1, 0, &d1, dev)] {
        let p = a.peer_attributes(b)?.expect("two GPUs");
        lines.push(format!(
            "GPU {from} → GPU {to}: cuDeviceCanAccessPeer={} accessSupported={} nativeAtomicSupported={} \
             performanceRank={}",
            p.can_access_peer as u8, p.access_supported as u8, p.native_atomics as u8, p.performance_rank
        ));
        reachable &= p.can_access_peer && p.access_supported;
        native &= p.native_atomics;
    }
    if !reachable {
        return Err(Skip(format!("needs 2 GPUs with peer access; found {found}, but {}", lines[2..].join("; "))).into());
    }
    dev.enable_peer_access(&d1)?;
    d1.enable_peer_access(dev)?;
    lines.push("peer access enabled both ways (cuCtxEnablePeerAccess)".into());
    Ok((d1, lines, native))
}

/// What [`peer_add_run`] found: the two counters and the old values of GPU 0's and GPU 1's adds.
pub struct Adds {
    pub counters: Vec<u32>,
    pub olds: [Vec<u32>; 2],
}

/// Both GPUs at once: `n` adds each to `counters` in `d0`'s memory (`atom.add.sys`), with grids of at
/// most `max_grid` blocks.
pub fn peer_add_run(d0: &Device, d1: &Device, n: usize, max_grid: u32) -> Result<Adds> {
    let counters = d0.filled("counters", 2, 0u32)?;
    let olds0 = d0.filled("olds (GPU 0)", n, u32::MAX)?;
    let olds1 = d1.filled("olds (GPU 1)", n, u32::MAX)?;
    let cfg = cover(n, BLOCK, max_grid, 0);
    Device::launch_pair::<peer_add, peer_add>(
        d0,
        cfg,
        (counters.view_mut(), olds0.view_mut(), 0u32),
        d1,
        cfg,
        (counters.view_mut(), olds1.view_mut(), 1u32),
    )?;
    Ok(Adds { counters: counters.read()?, olds: [olds0.read()?, olds1.read()?] })
}

/// Whether `a` is right for `n` adds per GPU: exact totals, and old values that a serial order of all
/// `2n` adds hands out. Returns the check's text.
pub fn adds_ok(a: &Adds, n: usize) -> (bool, String) {
    let vals: Vec<u32> = (0..2).flat_map(|d| (0..n).map(move |i| add_value(d, i))).collect();
    let olds: Vec<u32> = a.olds[0].iter().chain(&a.olds[1]).copied().collect();
    let want = vals.iter().fold(0u32, |s, v| s.wrapping_add(*v));
    let totals = a.counters == [want, 2 * n as u32];
    let order = chain_ok::<u32>(0, &vals, &olds, a.counters[0], |c, v| c + v);
    (
        totals && order,
        format!(
            "atom.add.sys into GPU 0's memory from both GPUs at once, {n} adds each: total {} (expected {want}), \
             count {} (expected {}); old values a serial order of all {} adds: {order}",
            a.counters[0],
            a.counters[1],
            2 * n,
            2 * n
        ),
    )
}

/// What a handshake left: GPU 0's status (`RECEIVED` when GPU 1 answered), and GPU 1's status and
/// count of wrong payload words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handshake {
    pub sender: u32,
    pub receiver: u32,
    pub wrong: u32,
}

/// One handshake of `n` payload words (in `d0`'s memory); `how` = [`SYSTEM_FENCE`] or the racy
/// [`DEVICE_FENCE`].
pub fn handshake_once(d0: &Device, d1: &Device, n: usize, round: u32, how: u32, polls: u32) -> Result<Handshake> {
    let payload = d0.filled("payload", n, 0u32)?;
    let flag = d1.filled("flag (GPU 1)", 1, 0u32)?;
    let ack = d0.filled("ack (GPU 0)", 1, 0u32)?;
    let s0 = d0.filled("status (GPU 0)", 1, 0u32)?;
    let s1 = d1.filled("status (GPU 1)", 2, 0u32)?;
    let one_block = LaunchConfig::linear(1, BLOCK, 0);
    Device::launch_pair::<handshake_send, handshake_recv>(
        d0,
        one_block,
        (payload.view_mut(), flag.view_mut(), ack.view_mut(), s0.view_mut(), round, how, polls),
        d1,
        one_block,
        (payload.view(), flag.view_mut(), ack.view_mut(), s1.view_mut(), round, polls),
    )?;
    let s1 = s1.read()?;
    Ok(Handshake { sender: s0.read()?[0], receiver: s1[0], wrong: s1[1] })
}

/// One ping-pong launch of `rounds` round trips: the rounds each side completed, whether all its waits
/// succeeded, and GPU 0's kernel time in ms (GPU only).
pub fn ping_pong_run(d0: &Device, d1: &Device, rounds: u32, polls: u32) -> Result<([u32; 2], bool, Option<f64>)> {
    let to_peer = d1.filled("to_peer (GPU 1)", 1, 0u32)?;
    let back = d0.filled("back (GPU 0)", 1, 0u32)?;
    let s0 = d0.filled("ping status", 2, 0u32)?;
    let s1 = d1.filled("pong status", 2, 0u32)?;
    let one: Launch = LaunchConfig::linear(1, 1, 0);
    let (t0, _) = Device::launch_pair::<ping, pong>(
        d0,
        one,
        (to_peer.view_mut(), back.view_mut(), s0.view_mut(), rounds, polls),
        d1,
        one,
        (to_peer.view_mut(), back.view_mut(), s1.view_mut(), rounds, polls),
    )?;
    let (a, b) = (s0.read()?, s1.read()?);
    Ok(([a[0], b[0]], a[1] == RECEIVED && b[1] == RECEIVED, t0))
}

/// The same exchange through the host, `rounds` times: launch [`bump`] on GPU 0, copy the word to the
/// host and on to GPU 1, launch [`bump`] there, copy it back to GPU 0. Returns each round trip's wall
/// time in µs, and whether the final value is `2 * rounds`.
pub fn host_round_trips(d0: &Device, d1: &Device, rounds: u32) -> Result<(Vec<f64>, bool)> {
    let x0 = d0.filled("x (GPU 0)", 1, 0u32)?;
    let x1 = d1.filled("x (GPU 1)", 1, 0u32)?;
    let mut times = Vec::with_capacity(rounds as usize);
    let one = LaunchConfig::linear(1, 1, 0);
    for _ in 0..rounds {
        let t = Instant::now();
        d0.launch::<bump>(one, (x0.view_mut(),))?;
        x1.write(&x0.read()?)?;
        d1.launch::<bump>(one, (x1.view_mut(),))?;
        x0.write(&x1.read()?)?;
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok((times, x0.read()?[0] == 2 * rounds))
}

/// The median of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("multi_gpu", n, 4)?;
    if n > 1 << 24 {
        anyhow::bail!("multi_gpu: n = {n} is more than this example takes (at most 2^24 per GPU)");
    }
    let (d1, lines, native) = open_peer(dev)?;
    let mut r = ExampleResult::new("multi_gpu", dev.kind(), n, p.seed);
    r.show.extend(lines);
    let polls = max_polls(dev);
    let round = 1 + (p.seed % 1000) as u32;

    // 2. System-scope atomics from both GPUs on GPU 0's memory.
    if native {
        let profile = dev.profile();
        let max_grid = profile.pick(4 * profile.sms, 4);
        let a = peer_add_run(dev, &d1, n, max_grid)?;
        let (ok, what) = adds_ok(&a, n);
        r.check(ok, what);
    } else {
        r.show.push(
            "nativeAtomicSupported=0: atomics on the peer's memory are not atomic over this link; the two-GPU \
             atomics check is skipped"
                .into(),
        );
    }

    // 3. The handshake.
    let h = handshake_once(dev, &d1, n, round, SYSTEM_FENCE, polls)?;
    let want = Handshake { sender: RECEIVED, receiver: RECEIVED, wrong: 0 };
    r.check(
        h == want,
        format!(
            "handshake: GPU 1 saw GPU 0's flag (status {}: 1 = received, 2 = timed out), all {n} payload words \
             exact through peer access{}, GPU 0 saw the answer (status {})",
            h.receiver,
            mismatch((h.wrong > 0).then(|| format!("{} word(s) wrong", h.wrong))),
            h.sender
        ),
    );

    // 4. Ping-pong, and the same exchange through the host.
    let rounds = match (dev.profile().full_scale(), p.reps) {
        (false, _) => 6,
        (true, 0) => 200,
        (true, _) => 10_000,
    };
    let (done, ok, t0) = ping_pong_run(dev, &d1, rounds, polls)?;
    r.check(
        ok && done == [rounds, rounds],
        format!(
            "ping-pong GPU 0 ↔ GPU 1: {rounds} round trips completed by both (GPU 0 {}, GPU 1 {})",
            done[0], done[1]
        ),
    );
    if dev.profile().can_time && p.reps > 0 {
        // Each run's mean round trip is its kernel time over its rounds; the median over runs.
        let mut per_round = vec![t0.unwrap_or(0.0) * 1e3 / rounds as f64];
        for _ in 0..10 {
            let (done, ok, t) = ping_pong_run(dev, &d1, rounds, polls)?;
            r.check(ok && done == [rounds, rounds], format!("ping-pong repeat: {rounds} round trips"));
            per_round.push(t.unwrap_or(0.0) * 1e3 / rounds as f64);
        }
        let flags = median(&mut per_round);
        let host_rounds = 2000;
        let (mut via_host, host_ok) = host_round_trips(dev, &d1, host_rounds)?;
        r.check(host_ok, format!("through the host: {host_rounds} round trips counted exactly"));
        let host = median(&mut via_host[100..]);
        r.show.push(format!("{:<52} {:>10} {:>8}", "round trip GPU 0 ↔ GPU 1", "median µs", "rounds"));
        r.show.push(format!(
            "{:<52} {flags:>10.2} {:>8}",
            "peer-memory flags, __threadfence_system (11 runs)",
            11 * rounds
        ));
        r.show.push(format!("{:<52} {host:>10.2} {:>8}", "launch + synchronise + copy on each GPU", host_rounds - 100));
        r.show.push(format!("ratio through the host / peer flags: {:.1}x", host / flags));
    }

    // 5. The racy variant, on the emulator only (on GPUs a broken protocol may pass by luck).
    if dev.profile().detectors {
        r.absorb(dev.take_findings(), false);
        handshake_once(dev, &d1, n, round, DEVICE_FENCE, polls)?;
        flagged(dev, &mut r, "the handshake published with __threadfence() (device scope)", true);
        return Ok(r);
    }
    Ok(finish(dev, r, false))
}
