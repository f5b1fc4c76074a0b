//! Example 19, `system_scope`: a kernel and a running host thread through mapped host memory.
//!
//! On the emulator the host thread is the launch's host agent, so the protocol itself is checked: the
//! correct versions are race-free under several schedules; the variants that publish or acquire at device
//! scope, or whose host writes the payload after the flag, are reported as races that name the host
//! thread, the scope used and the scope needed; a spin of the agent shows in livelock reports; the
//! host's bounded waits give up. On a GPU the same runs happen for real.

use gpu_host::Device;
use gpu_kernels::system_scope::{
    DEVICE_FENCE, GPU_ACQUIRE, GPU_RELEASE, RECEIVED, SYSTEM_FENCE, SYSTEM_RELEASE_ACQUIRE, TIMED_OUT, host_to_gpu,
    payload_value,
};
use gpu_std::emu::{EmuError, LaunchConfig, Options, Race, ThreadId};
use host::examples::system_scope::{Bounds, HostSaw, bounds, gpu_to_host_once, host_to_gpu_once, ping_pong_run};
use std::sync::atomic::Ordering::{Relaxed, Release};
use std::time::{Duration, Instant};
use tests::gpu_or_skip;

const SEEDS: [u64; 4] = [1, 2, 3, 17];

fn emu(seed: u64) -> Device {
    Device::emulator(Options { schedule_seed: seed, ..Default::default() })
}

fn races(dev: &Device) -> Vec<Race> {
    dev.take_findings().races
}

#[test]
fn correct_protocols_are_race_free_under_several_schedules() {
    for seed in SEEDS {
        let dev = emu(seed);
        let b = bounds(&dev);
        for (n, how) in [(1, SYSTEM_FENCE), (33, SYSTEM_FENCE), (257, SYSTEM_RELEASE_ACQUIRE)] {
            let (saw, status) = gpu_to_host_once(&dev, n, 5, how, b).unwrap();
            assert_eq!((saw, status), (HostSaw { flag: true, wrong: None }, RECEIVED), "seed {seed} n {n} how {how}");
            let (copy, status) = host_to_gpu_once(&dev, n, 6, how, false, b).unwrap();
            assert_eq!(status, RECEIVED, "seed {seed}");
            assert_eq!(copy, (0..n).map(|i| payload_value(i, 6)).collect::<Vec<_>>(), "seed {seed} n {n}");
        }
        let pp = ping_pong_run(&dev, 9, b).unwrap();
        assert_eq!((pp.kernel_rounds, pp.kernel_ok, pp.host_rounds), (9, true, 9), "seed {seed}");
        let f = dev.take_findings();
        assert_eq!(f.racy_addresses, 0, "seed {seed}: {:?}", f.races);
        assert!(f.deadlocks.is_empty(), "seed {seed}: {:?}", f.deadlocks);
    }
}

/// Every report names the host thread on one side and a GPU thread on the other; the first report's
/// explanation contains each of `words`.
fn assert_host_races(what: &str, rs: &[Race], words: &[&str]) {
    assert!(!rs.is_empty(), "{what}: no race reported");
    for r in rs {
        let host_sides = [r.first.thread, r.second.thread].iter().filter(|t| t.is_host()).count();
        assert_eq!(host_sides, 1, "{what}: one side must be the host thread: {r}");
        assert!(r.to_string().contains("by the host thread"), "{what}: {r}");
    }
    let all: Vec<String> = rs.iter().map(|r| r.why.clone()).collect();
    for w in words {
        assert!(all.iter().any(|why| why.contains(w)), "{what}: no report says `{w}`:\n{}", all.join("\n"));
    }
}

#[test]
fn publishing_with_threadfence_is_a_race_with_the_host() {
    for seed in SEEDS {
        let dev = emu(seed);
        gpu_to_host_once(&dev, 33, 3, DEVICE_FENCE, bounds(&dev)).unwrap();
        let rs = races(&dev);
        assert_host_races(
            "__threadfence variant",
            &rs,
            &[
                "device-scope fence (fence.sc.gpu, __threadfence)",
                "needs system scope: __threadfence_system (fence.sc.sys)",
            ],
        );
        // The payload words are the races (33 of them), not only the flag.
        assert!(rs.iter().any(|r| r.buffer == "payload"), "seed {seed}: {rs:?}");
    }
}

#[test]
fn a_gpu_release_is_a_race_with_the_host() {
    for seed in SEEDS {
        let dev = emu(seed);
        gpu_to_host_once(&dev, 7, 3, GPU_RELEASE, bounds(&dev)).unwrap();
        assert_host_races(
            ".gpu release variant",
            &races(&dev),
            &["device-scope release store (st.release.gpu)", "store_release at System scope (st.release.sys)"],
        );
    }
}

#[test]
fn a_gpu_acquire_is_a_race_with_the_host() {
    for seed in SEEDS {
        let dev = emu(seed);
        host_to_gpu_once(&dev, 7, 3, GPU_ACQUIRE, false, bounds(&dev)).unwrap();
        assert_host_races(
            ".gpu acquire variant",
            &races(&dev),
            &["device-scope acquire load (ld.acquire.gpu)", "load_acquire at System scope (ld.acquire.sys)"],
        );
    }
}

#[test]
fn a_host_writing_the_payload_after_the_flag_is_a_race() {
    for seed in SEEDS {
        let dev = emu(seed);
        host_to_gpu_once(&dev, 7, 3, SYSTEM_RELEASE_ACQUIRE, true, bounds(&dev)).unwrap();
        let rs = races(&dev);
        assert_host_races("flag-first host", &rs, &["no release/acquire edge at system scope"]);
        assert!(rs.iter().all(|r| r.buffer == "payload"), "seed {seed}: {rs:?}");
    }
}

#[test]
fn a_spinning_host_agent_is_named_in_the_livelock_report() {
    // The kernel waits (without a usable bound) for a flag the host never raises, and the host waits
    // for a word nobody writes: both spin.
    let dev = Device::emulator(Options { poll_limit: 20_000, ..Default::default() });
    let payload = dev.mapped::<u32>("payload", 4).unwrap();
    let flag = dev.mapped::<u32>("flag", 1).unwrap();
    let never = dev.mapped::<u32>("never", 1).unwrap();
    let copy = dev.filled("copy", 4, 0u32).unwrap();
    let status = dev.filled("status", 1, 0u32).unwrap();
    let h = never.host();
    let mut agent = || {
        let _ = h.wait_until(0, u64::MAX, Duration::from_secs(3600), |v| v == 1);
    };
    let err = dev
        .launch_with_host::<host_to_gpu>(
            LaunchConfig::linear(1, 32, 0),
            (payload.view(), flag.view_mut(), copy.view_mut(), status.view_mut(), 1, SYSTEM_FENCE, u32::MAX),
            &mut agent,
        )
        .unwrap_err();
    let gpu_host::Error::Emulator(EmuError::Livelock(l)) = &err else { panic!("not a livelock: {err:#}") };
    let spinning: Vec<ThreadId> = l.spinning.iter().flat_map(|g| g.threads.clone()).collect();
    assert!(spinning.contains(&ThreadId::HOST), "{l}");
    assert!(spinning.iter().any(|t| !t.is_host()), "the kernel's thread 0 spins too: {l}");
    // The block's other threads wait at its barrier for thread 0.
    assert!(l.blocked.iter().any(|g| g.what.contains("block barrier") && g.threads.len() == 31), "{l}");
    let text = err.to_string();
    assert!(text.contains("the host thread") && text.contains("`never`[0] to change from 0"), "{text}");
}

#[test]
fn a_host_agent_left_alone_spinning_is_a_livelock() {
    // The kernel gives up at once (max_polls 1) and exits; the host waits for a flag only the kernel
    // could have set.
    let dev = Device::emulator(Options { schedule_seed: 2, poll_limit: 20_000, ..Default::default() });
    let payload = dev.mapped::<u32>("payload", 1).unwrap();
    let flag = dev.mapped::<u32>("flag", 1).unwrap();
    let copy = dev.filled("copy", 1, 0u32).unwrap();
    let status = dev.filled("status", 1, 0u32).unwrap();
    let (hf, hp) = (flag.host(), payload.host());
    let mut agent = || {
        let _ = hp.wait_until(0, u64::MAX, Duration::from_secs(3600), |v| v == 7);
        hf.store(0, 1, Release);
    };
    let err = dev
        .launch_with_host::<host_to_gpu>(
            LaunchConfig::linear(1, 32, 0),
            (payload.view(), flag.view_mut(), copy.view_mut(), status.view_mut(), 1, SYSTEM_FENCE, 1),
            &mut agent,
        )
        .unwrap_err();
    let gpu_host::Error::Emulator(EmuError::Livelock(l)) = &err else { panic!("not a livelock: {err:#}") };
    assert_eq!(l.spinning.len(), 1, "{l}");
    assert_eq!(l.spinning[0].threads, [ThreadId::HOST], "{l}");
}

#[test]
fn bounded_waits_give_up_on_both_sides() {
    // Emulator: the kernel's bound ends its wait (status TIMED_OUT), the host's bound ends its own
    // (no livelock report: both gave up before the detector's limit).
    let dev = emu(3);
    let b = Bounds { kernel_polls: 500, host_polls: 500 };
    let (copy, status) = {
        let payload = dev.mapped::<u32>("payload", 2).unwrap();
        let flag = dev.mapped::<u32>("flag", 1).unwrap();
        let copy = dev.filled("copy", 2, 9u32).unwrap();
        let status = dev.filled("status", 1, 0u32).unwrap();
        let hp = payload.host();
        let mut gave_up = false;
        let mut agent = || gave_up = hp.wait_until(0, b.host_polls, Duration::from_secs(3600), |v| v == 1).is_none();
        dev.launch_with_host::<host_to_gpu>(
            LaunchConfig::linear(1, 32, 0),
            (payload.view(), flag.view_mut(), copy.view_mut(), status.view_mut(), 1, SYSTEM_FENCE, b.kernel_polls),
            &mut agent,
        )
        .unwrap();
        assert!(gave_up, "the host's wait must give up");
        (copy.read().unwrap(), status.read().unwrap()[0])
    };
    assert_eq!((copy, status), (vec![9, 9], TIMED_OUT));

    // A real host thread (no launch): the timeout ends a wait for a word nobody writes.
    let m = dev.mapped::<u32>("m", 1).unwrap();
    let t0 = Instant::now();
    assert_eq!(m.host().wait_until(0, u64::MAX, Duration::from_millis(50), |v| v == 1), None);
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(50) && took < Duration::from_secs(5), "{took:?}");
    m.host().store(0, 1, Relaxed);
    assert_eq!(m.host().wait_until(0, u64::MAX, Duration::from_millis(50), |v| v == 1), Some(1));
}

#[test]
fn the_schedule_seed_replays_the_same_reports() {
    let run = |seed| {
        let dev = emu(seed);
        gpu_to_host_once(&dev, 33, 3, DEVICE_FENCE, bounds(&dev)).unwrap();
        races(&dev).iter().map(|r| r.to_string()).collect::<Vec<_>>()
    };
    assert_eq!(run(5), run(5));
}

#[test]
fn on_gpu_both_directions_and_the_ping_pong_complete() {
    let Some(dev) = gpu_or_skip("system_scope on GPU") else { return };
    let b = bounds(&dev);
    for n in [1, 257, (1 << 20) + 1] {
        for how in [SYSTEM_FENCE, SYSTEM_RELEASE_ACQUIRE] {
            let (saw, status) = gpu_to_host_once(&dev, n, 11, how, b).unwrap();
            assert_eq!((saw, status), (HostSaw { flag: true, wrong: None }, RECEIVED), "n {n} how {how}");
            let (copy, status) = host_to_gpu_once(&dev, n, 12, how, false, b).unwrap();
            assert_eq!(status, RECEIVED);
            assert!(copy.iter().enumerate().all(|(i, &v)| v == payload_value(i, 12)), "n {n} how {how}");
        }
    }
    let pp = ping_pong_run(&dev, 5000, b).unwrap();
    assert_eq!((pp.kernel_rounds, pp.kernel_ok, pp.host_rounds), (5000, true, 5000));
    println!("system_scope on GPU: both directions at 1, 257, 2^20+1 words and 5000 round trips: PASS");
}

#[test]
fn a_gpu_primitive_in_the_host_agent_is_a_reported_panic() {
    let dev = emu(1);
    let m = dev.mapped::<u32>("m", 1).unwrap();
    let mut agent = || {
        gpu_std::block::sync_threads();
    };
    let err = dev
        .launch_with_host::<gpu_kernels::system_scope::bump>(LaunchConfig::linear(1, 1, 0), (m.view_mut(),), &mut agent)
        .unwrap_err();
    let text = format!("{err:#}");
    assert!(text.contains("the host thread") && text.contains("called from the host agent"), "{text}");
}
