//! Example 21, `multi_gpu`: two GPUs through each other's memory.
//!
//! On the emulator both devices' grids run under one scheduler: the correct protocols are race-free
//! under several schedules, the handshake published with `__threadfence()` is reported as a race
//! naming a thread of each GPU, the scope used and the scope needed, and device-scope atomics across
//! the GPUs are not atomic with each other. On a machine with two GPUs the same runs happen for real,
//! after the peer-access checks; with fewer the GPU test says it is skipped.

use gpu_host::{Device, cover};
use gpu_kernels::multi_gpu::{BLOCK, DEVICE_FENCE, RECEIVED, SYSTEM_FENCE, TIMED_OUT, handshake_recv, peer_add};
use gpu_std::emu::{self, LaunchConfig, Options};
use host::examples::multi_gpu::{Handshake, adds_ok, handshake_once, max_polls, peer_add_run, ping_pong_run};
use tests::gpu_or_skip;

const SEEDS: [u64; 4] = [1, 2, 3, 17];

fn emu(seed: u64) -> Device {
    Device::emulator(Options { schedule_seed: seed, ..Default::default() })
}

#[test]
fn correct_protocols_are_race_free_under_several_schedules() {
    for seed in SEEDS {
        let (d0, d1) = (emu(seed), emu(seed));
        for n in [1, 33, 257, 1000] {
            let a = peer_add_run(&d0, &d1, n, 4).unwrap();
            let (ok, what) = adds_ok(&a, n);
            assert!(ok, "seed {seed} n {n}: {what}");
            let h = handshake_once(&d0, &d1, n, 7, SYSTEM_FENCE, max_polls(&d0)).unwrap();
            assert_eq!(h, Handshake { sender: RECEIVED, receiver: RECEIVED, wrong: 0 }, "seed {seed} n {n}");
        }
        let (done, ok, _) = ping_pong_run(&d0, &d1, 9, max_polls(&d0)).unwrap();
        assert_eq!((done, ok), ([9, 9], true), "seed {seed}");
        let f = d0.take_findings();
        assert_eq!(f.racy_addresses, 0, "seed {seed}: {:?}", f.races);
        assert!(f.deadlocks.is_empty(), "seed {seed}: {:?}", f.deadlocks);
        assert_eq!(d1.take_findings().racy_addresses, 0);
    }
}

#[test]
fn publishing_with_threadfence_is_a_race_between_the_gpus() {
    for seed in SEEDS {
        let (d0, d1) = (emu(seed), emu(seed));
        handshake_once(&d0, &d1, 33, 3, DEVICE_FENCE, max_polls(&d0)).unwrap();
        let f = d0.take_findings();
        // Every payload word is a race.
        assert_eq!(f.racy_addresses, 33, "seed {seed}: {:?}", f.races);
        for r in &f.races {
            assert_eq!(r.buffer, "payload", "seed {seed}: {r}");
            assert_eq!((r.first.device, r.second.device), (Some(0), Some(1)), "seed {seed}: {r}");
            let text = r.to_string();
            assert!(text.contains("by GPU 0 block 0 thread") && text.contains("by GPU 1 block 0 thread"), "{text}");
            assert!(
                r.why.contains("released with a device-scope fence (fence.sc.gpu, __threadfence)")
                    && r.why.contains("the threads are on different GPUs")
                    && r.why.contains("needs system scope: __threadfence_system (fence.sc.sys)"),
                "seed {seed}: {}",
                r.why
            );
        }
    }
}

gpu_std::kernel! {
    /// Every thread adds 1 to `counter[0]` with a device-scope atomic (`atom.add.gpu`).
    pub fn device_scope_add<'a>(counter: gpu_std::GlobalMut<'a, u32>) {
        counter.atomic(0).add(1);
    }
}

#[test]
fn device_scope_atomics_across_the_gpus_are_a_race() {
    let cfg = LaunchConfig::linear(1, 32, 0);
    let counter = emu::buffer("counter", vec![0u32]);
    let out = emu::launch_two_devices::<device_scope_add, device_scope_add>(
        &cfg,
        (counter.view_mut(),),
        &cfg,
        (counter.view_mut(),),
        &Options::default(),
    )
    .unwrap();
    assert!(!out.races.is_empty(), "device-scope atomics of two GPUs on one word must be reported");
    let why = &out.races[0].why;
    assert!(why.contains("different GPUs") && why.contains("needs system scope"), "{why}");
    assert_eq!(counter.to_vec(), [64]);
    // Within one device the same atomics are fine.
    let one =
        emu::launch::<device_scope_add>(&LaunchConfig::linear(2, 32, 0), &Options::default(), (counter.view_mut(),))
            .unwrap();
    assert!(one.races.is_empty(), "{:?}", one.races);
}

#[test]
fn a_two_device_launch_refuses_what_it_cannot_run() {
    let (d0, d1) = (emu(1), emu(1));
    let counters = d0.filled("counters", 2, 0u32).unwrap();
    let olds = d0.filled("olds", 64, 0u32).unwrap();
    let payload = d0.filled("payload", 4, 0u32).unwrap();
    let flag = d1.filled("flag", 1, 0u32).unwrap();
    let status = d1.filled("status", 2, 0u32).unwrap();
    // Different block shapes.
    let e = Device::launch_pair::<peer_add, handshake_recv>(
        &d0,
        cover(64, 64, 1, 0),
        (counters.view_mut(), olds.view_mut(), 0u32),
        &d1,
        LaunchConfig::linear(1, BLOCK, 0),
        (payload.view(), flag.view_mut(), counters.view_mut(), status.view_mut(), 1u32, 10u32),
    )
    .unwrap_err();
    assert!(format!("{e:#}").contains("same block shape"), "{e:#}");
    // More blocks than one wave holds: the two grids must be resident together.
    let many = LaunchConfig::linear(9, 64, 0);
    let e = Device::launch_pair::<peer_add, peer_add>(
        &d0,
        many,
        (counters.view_mut(), olds.view_mut(), 0u32),
        &d1,
        many,
        (counters.view_mut(), olds.view_mut(), 1u32),
    )
    .unwrap_err();
    assert!(format!("{e:#}").contains("do not fit in one wave"), "{e:#}");
}

#[test]
fn a_receiver_without_a_sender_gives_up() {
    let d0 = emu(1);
    let payload = d0.filled("payload", 4, 0u32).unwrap();
    let flag = d0.filled("flag", 1, 0u32).unwrap();
    let ack = d0.filled("ack", 1, 0u32).unwrap();
    let status = d0.filled("status", 2, 0u32).unwrap();
    d0.launch::<handshake_recv>(
        LaunchConfig::linear(1, BLOCK, 0),
        (payload.view(), flag.view_mut(), ack.view_mut(), status.view_mut(), 1u32, 100u32),
    )
    .unwrap();
    assert_eq!(status.read().unwrap(), [TIMED_OUT, 0]);
    assert_eq!(ack.read().unwrap(), [0], "a receiver that timed out must not answer");
}

/// On a machine with two GPUs: the peer attributes both ways, a launch on GPU 1 refuses GPU 0's buffer
/// until peer access is enabled, then the whole example at its GPU sizes. With one GPU it prints the
/// GPU and says it is skipped.
#[test]
fn two_gpus() {
    let Some(d0) = gpu_or_skip("multi_gpu on two GPUs") else { return };
    let found = Device::gpu_count().unwrap();
    if found < 2 {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "multi_gpu on two GPUs: skipped: needs two CUDA devices (found {found}: GPU 0 is {})",
            d0.name()
        );
        return;
    }
    let ptx = host::open::crate_ptx(host::open::DEFAULT_KERNEL_CRATE);
    let d1 = Device::gpu_ordinal(&ptx, 1).unwrap();
    for (a, b) in [(&d0, &d1), (&d1, &d0)] {
        let p = a.peer_attributes(b).unwrap().expect("two GPUs");
        println!("{} → {}: {p:?}", a.name(), b.name());
    }
    // Before peer access, GPU 1 refuses a view of GPU 0's buffer.
    let counters = d0.filled("counters", 2, 0u32).unwrap();
    let olds = d1.filled("olds", 32, 0u32).unwrap();
    let e = d1.launch::<peer_add>(cover(32, 32, 1, 0), (counters.view_mut(), olds.view_mut(), 1u32)).unwrap_err();
    assert!(format!("{e:#}").contains("peer access"), "{e:#}");
    let ex = host::examples::find("multi_gpu").unwrap();
    for &n in ex.gpu_sizes {
        let r = host::run::run_one(&d0, ex, &host::examples::RunParams { n, seed: 42, reps: 0 });
        assert!(r.pass && r.skipped.is_none(), "multi_gpu n={n}: {:?} {:?}", r.skipped, r.details);
        println!("multi_gpu n={n} on two GPUs: PASS ({} checks)", r.details.len());
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
