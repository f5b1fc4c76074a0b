//! The emulator's detectors on the chapter's bugs (must be reported, with the right threads and index)
//! and on correct synchronisation (must stay silent). The detector's own cases, on kernels of
//! their own, are in gpu-std's tests: scoped synchronisation in `gpu-std/tests/detector_scope.rs`;
//! unbounded access history, uninitialised shared memory and warp-level races in
//! `gpu-std/tests/detector_history.rs`.

#[path = "../../gpu-std/tests/common/mod.rs"]
mod common;

use common::{Buf, SEEDS, launch, launch_raw, pair, seed, t};
use gpu_std::emu::{EmuError, LaunchConfig, Options};
use gpu_std::grid::GRID_BARRIER_WORDS;
use gpu_std::{Global, GlobalMut};

#[test]
fn lost_update_histogram_is_flagged_with_both_threads() {
    use gpu_kernels::lost_update::*;
    let mut data = Buf::new("data", vec![7u8, 7]);
    let mut hist = Buf::new("hist", vec![0u32; 256]);
    let o = launch::<histogram_racy>(LaunchConfig::linear(1, BLOCK, 0), &seed(1), (data.view(), hist.view_mut()));
    println!("{}", o.races[0]);
    assert_eq!(o.racy_addresses, 1);
    let r = &o.races[0];
    assert_eq!((r.kernel.as_str(), r.buffer.as_str(), r.index), ("histogram_racy", "hist", 7));
    assert_eq!(pair(&o.races[0]), [t(0, 0), t(0, 1)]);
    assert!(r.first.kind == "write" || r.second.kind == "write");
    assert!(r.first.site.contains("lost_update.rs") && r.second.site.contains("lost_update.rs"));
}

#[test]
fn lost_updates_really_happen_and_the_atomic_kernel_is_exact() {
    use gpu_kernels::lost_update::*;
    let n = 4096;
    let mut lost_any = false;
    for s in 1..=5 {
        let mut data = Buf::new("data", vec![3u8; n]);
        let mut hist = Buf::new("hist", vec![0u32; 256]);
        let cfg = LaunchConfig::linear((n as u32).div_ceil(BLOCK), BLOCK, 0);
        let o = launch::<histogram_racy>(cfg, &seed(s), (data.view(), hist.view_mut()));
        assert_eq!(o.racy_addresses, 1, "one racy bin");
        println!("schedule {s}: racy histogram counted {} of {n}", hist.data[3]);
        lost_any |= hist.data[3] < n as u32;
        let mut hist = Buf::new("hist", vec![0u32; 256]);
        let o = launch::<histogram_global>(cfg, &seed(s), (data.view(), hist.view_mut()));
        assert_eq!((o.racy_addresses, hist.data[3]), (0, n as u32));
    }
    assert!(lost_any, "the emulator interleaves plain read-modify-writes, so some updates must be lost");
}

#[test]
fn seed_multi_phase_kernel_race_is_flagged() {
    use gpu_kernels::grid_sync::*;
    // Three blocks of one thread: phase 2 of thread 2 reads data[1] while thread 1 writes it.
    let mut data = Buf::new("data", vec![1.0f32, 2.0, 3.0]);
    let mut ws = Buf::new("workspace", vec![0u32; GRID_BARRIER_WORDS]);
    let cfg = LaunchConfig::linear(3, 1, 0).cooperative();
    let o = launch::<multi_phase_seed>(cfg, &seed(1), (data.view_mut(), ws.view_mut()));
    println!("{}", o.races[0]);
    assert_eq!(o.racy_addresses, 1);
    let r = &o.races[0];
    assert_eq!((r.kernel.as_str(), r.buffer.as_str(), r.index), ("multi_phase_seed", "data", 1));
    assert_eq!(pair(&o.races[0]), [t(1, 0), t(2, 0)]);
    assert_eq!((r.first.grid_interval, r.second.grid_interval), (1, 1));

    let mut data = Buf::new("data", vec![1.0f32, 2.0, 3.0]);
    let mut ws = Buf::new("workspace", vec![0u32; GRID_BARRIER_WORDS]);
    for s in 1..=3 {
        data.data.copy_from_slice(&[1.0, 2.0, 3.0]);
        let o = launch::<multi_phase>(cfg, &seed(s), (data.view_mut(), ws.view_mut()));
        assert_eq!(o.racy_addresses, 0);
        assert_eq!(data.data, vec![2.0, 6.0, 10.0], "2a[i] + 2a[i-1]");
    }
}

#[test]
fn grid_sync_needs_a_cooperative_launch_that_fits() {
    use gpu_kernels::grid_sync::*;
    let mut data = Buf::new("data", vec![1.0f32; 64]);
    let mut ws = Buf::new("workspace", vec![0u32; GRID_BARRIER_WORDS]);
    let e = launch_raw::<multi_phase>(&LaunchConfig::linear(2, 32, 0), &seed(1), (data.view_mut(), ws.view_mut()))
        .unwrap_err();
    assert!(e.to_string().contains("not cooperative"), "{e}");
    let e = launch_raw::<multi_phase>(
        &LaunchConfig::linear(17, 32, 0).cooperative(),
        &seed(1),
        (data.view_mut(), ws.view_mut()),
    )
    .unwrap_err();
    assert!(matches!(e, EmuError::CooperativeTooLarge { blocks: 17, limit: 16, .. }), "{e}");
}

#[test]
fn seed_tile_reduce_in_place_race_is_flagged() {
    use gpu_kernels::tile_reduce::*;
    let input: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let mut data = Buf::new("data", input.clone());
    let o = launch::<tile_reduce_seed>(LaunchConfig::linear(1, 64, 0), &seed(1), (data.view_mut(),));
    println!("{}", o.races[0]);
    assert_eq!(o.racy_addresses, 1);
    let r = &o.races[0];
    assert_eq!((r.kernel.as_str(), r.buffer.as_str(), r.index), ("tile_reduce_seed", "data", 1));
    assert_eq!(pair(&o.races[0]), [t(0, 1), t(0, 32)]);

    let mut inp = Buf::new("input", input.clone());
    let mut out = Buf::new("out", vec![f32::NAN; 2]);
    let o = launch::<tile_reduce>(LaunchConfig::linear(1, 64, 0), &seed(2), (inp.view(), out.output()));
    assert_eq!(o.racy_addresses, 0);
    assert_eq!(out.data, vec![(0..32).sum::<i32>() as f32, (32..64).sum::<i32>() as f32]);
}

#[test]
fn shared_read_without_barrier_is_flagged() {
    use gpu_kernels::block_reduce_demo::*;
    let mut inp = Buf::new("input", vec![1.0f32; 256]);
    let mut out = Buf::new("out", vec![0.0f32; 1]);
    let cfg = LaunchConfig::linear(1, BLOCK, SHARED_BYTES);
    let o = launch::<block_reduce_demo_no_barrier>(cfg, &seed(1), (inp.view(), out.output()));
    println!("{}", o.races[0]);
    // Thread 0 reads every slot k >= 1 with no barrier after thread k's write: 255 racy slots.
    assert_eq!(o.racy_addresses, 255);
    for (k, r) in o.races.iter().enumerate() {
        assert_eq!((r.kernel.as_str(), r.buffer.as_str()), ("block_reduce_demo_no_barrier", "Scratch.partial"));
        let slot = r.index as u32;
        assert_eq!(pair(&o.races[k]), [t(0, 0), t(0, slot)], "{r}");
        assert!(r.why.contains("same barrier interval"), "{r}");
    }
    let o = launch::<block_reduce_demo>(cfg, &seed(1), (inp.view(), out.output()));
    assert_eq!((o.racy_addresses, out.data[0]), (0, 256.0));
}

#[test]
fn divergent_barrier_reports_waiting_and_missing_threads() {
    use gpu_kernels::divergent_barrier::*;
    let mut out = Buf::new("out", vec![0u32; 256]);
    let cfg = LaunchConfig::linear(1, BLOCK, SHARED_BYTES);
    let started = std::time::Instant::now();
    let e = launch_raw::<divergent_barrier_broken>(&cfg, &seed(1), (out.output(),)).unwrap_err();
    println!("{e}");
    assert!(started.elapsed().as_secs() < 5, "reported within seconds");
    let EmuError::Deadlock(d) = e else { panic!("expected a deadlock report, got {e}") };
    assert_eq!(d.kernel, "divergent_barrier_broken");
    assert!(d.summary.contains("barrier divergence in block 0"), "{}", d.summary);
    for w in [
        "128 thread(s) wait at the block barrier",
        "but 128 thread(s) skipped it: they accessed memory in its barrier interval (block 0 thread 0 first at",
        "undefined behaviour: on sm_70+ hardware a barrier can release without the threads missing from it, so \
         nothing they do is ordered by it",
    ] {
        assert!(d.summary.contains(w), "`{w}` missing in: {}", d.summary);
    }
    assert!(!d.summary.contains("hangs"), "{}", d.summary);
    assert_eq!(d.waiting.len(), 1);
    assert!(d.waiting[0].what.contains("wait at block barrier") && d.waiting[0].what.contains("divergent_barrier.rs"));
    assert_eq!(d.waiting[0].threads, (0..256).filter(|x| x % 2 == 1).map(|x| t(0, x)).collect::<Vec<_>>());
    assert_eq!(d.missing.len(), 1);
    assert_eq!(d.missing[0].what, "exited");
    assert_eq!(d.missing[0].threads, (0..256).filter(|x| x % 2 == 0).map(|x| t(0, x)).collect::<Vec<_>>());

    let o = launch::<divergent_barrier_fixed>(cfg, &seed(1), (out.output(),));
    assert_eq!(o.racy_addresses, 0);
    let want: Vec<u32> = (0..256).map(|t| if t % 2 == 1 { 3 * (t - 1) } else { 3 * t + 1 }).collect();
    assert_eq!(out.data, want);
}

#[test]
fn shuffle_reading_exited_or_absent_lanes_is_a_warning() {
    use gpu_kernels::warp_reduce::*;
    let mut inp = Buf::new("input", vec![1.0f32; 20]);
    for s in SEEDS {
        // Lanes 20..32 return before the full-mask shuffle: it completes (exited lanes are not
        // waited for), and lanes that read them get POISON, with one warning at the call site.
        let mut out = Buf::new("output", vec![0.0f32; 1]);
        let o =
            launch::<warp_reduce_early_exit>(LaunchConfig::linear(1, 32, 0), &seed(s), (inp.view(), out.view_mut()));
        assert_eq!(o.warnings.len(), 1, "{:?}", o.warnings);
        let w = &o.warnings[0];
        println!("{w}");
        assert!(w.site.contains("warp_reduce.rs"), "{w}");
        assert!(w.message.contains("shfl.sync.down") && w.message.contains("which has exited"), "{w}");
        assert_ne!(out.data[0], 20.0, "the sum used undefined values");
        // A block of 20 threads: lanes 20..32 do not exist; inputs past n count as 0 in `warp_reduce`,
        // but the shuffle still reads absent lanes.
        let mut out = Buf::new("output", vec![0.0f32; 1]);
        let o = launch::<warp_reduce>(LaunchConfig::linear(1, 20, 0), &seed(s), (inp.view(), out.output()));
        assert_eq!(o.warnings.len(), 1, "{:?}", o.warnings);
        assert!(o.warnings[0].message.contains("which does not exist (the warp has 20 lanes)"), "{}", o.warnings[0]);
    }
}

#[test]
fn spin_without_progress_is_reported_not_hung() {
    use gpu_kernels::producer_consumer::*;
    let mut flag = Buf::new("flag", vec![0u32]);
    let mut status = Buf::new("status", vec![0u32]);
    let opts = Options { poll_limit: 50_000, ..seed(1) };
    let started = std::time::Instant::now();
    let e = launch_raw::<wait_for_flag>(&LaunchConfig::linear(1, 32, 0), &opts, (flag.view_mut(), status.view_mut()))
        .unwrap_err();
    println!("{e}");
    assert!(started.elapsed().as_secs() < 5);
    let EmuError::Livelock(d) = e else { panic!("expected a livelock report, got {e}") };
    assert_eq!(d.kernel, "wait_for_flag");
    assert_eq!(d.spinning.len(), 1);
    assert_eq!(d.spinning[0].threads, vec![t(0, 0)]);
    assert!(
        d.spinning[0].what.contains("producer_consumer.rs")
            && d.spinning[0].what.contains("for `flag`[0] to change from 0")
    );
}

#[test]
fn producer_consumer_with_fence_is_clean_and_without_is_flagged() {
    use gpu_kernels::producer_consumer::*;
    for s in 1..=4 {
        let mut buf = Buf::new("buffer", vec![0.0f32; 1024]);
        let mut flag = Buf::new("flag", vec![0u32]);
        let mut copy = Buf::new("copy", vec![-1.0f32; 1024]);
        let mut status = Buf::new("status", vec![0u32]);
        let o = launch::<producer_consumer>(
            LaunchConfig::linear(2, BLOCK, 0),
            &seed(s),
            (buf.view_mut(), flag.view_mut(), copy.view_mut(), status.view_mut()),
        );
        assert_eq!(o.racy_addresses, 0, "{:?}", o.races.first().map(|r| r.to_string()));
        assert_eq!(status.data[0], RECEIVED);
        assert_eq!(copy.data, (0..1024).map(|i| i as f32).collect::<Vec<_>>());
    }
    let mut buf = Buf::new("buffer", vec![0.0f32; 1024]);
    let mut flag = Buf::new("flag", vec![0u32]);
    let mut copy = Buf::new("copy", vec![-1.0f32; 1024]);
    let mut status = Buf::new("status", vec![0u32]);
    let o = launch::<producer_consumer_no_fence>(
        LaunchConfig::linear(2, BLOCK, 0),
        &seed(1),
        (buf.view_mut(), flag.view_mut(), copy.view_mut(), status.view_mut()),
    );
    println!("{}", o.races[0]);
    assert_eq!(o.racy_addresses, 1024, "every buffer element is read unordered after its write");
    let r = &o.races[0];
    assert_eq!(r.buffer, "buffer");
    assert_eq!((r.first.kind, r.first.thread.block.0, r.second.kind, r.second.thread.block.0), ("write", 0, "read", 1));
}

#[test]
fn fence_released_spinlocks_are_clean_and_exact() {
    use gpu_kernels::spinlock::*;
    for s in 1..=3 {
        let init: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let mut g = Buf::new("g_data", init.clone());
        let mut errors = Buf::new("errors", vec![0u32]);
        let o = launch::<locked_critical_section>(
            LaunchConfig::linear(4, BLOCK, SHARED_BYTES),
            &seed(s),
            (g.view_mut(), errors.view_mut()),
        );
        assert_eq!(o.racy_addresses, 0, "{:?}", o.races.first().map(|r| r.to_string()));
        assert_eq!(errors.data[0], 0);
        assert_eq!(g.data, init.iter().map(|x| x * 2.0 + 1.0).collect::<Vec<_>>());

        let mut lock = Buf::new("lock", vec![0u32]);
        let mut counter = Buf::new("counter", vec![0u32]);
        let mut errors = Buf::new("errors", vec![0u32]);
        let o = launch::<global_lock_counter>(
            LaunchConfig::linear(3, 64, 0),
            &seed(s),
            (lock.view_mut(), counter.view_mut(), errors.view_mut()),
        );
        assert_eq!(o.racy_addresses, 0, "{:?}", o.races.first().map(|r| r.to_string()));
        assert_eq!((counter.data[0], errors.data[0], lock.data[0]), (192, 0, 0));
    }
}

gpu_std::kernel! {
    /// Test-only: every thread adds 1 to `cell[0]` with a *block-scoped* atomic, across blocks.
    pub fn block_scope_across_blocks<'a>(cell: GlobalMut<'a, u32>) {
        cell.atomic_scoped::<gpu_std::Block>(0).fetch_add(1);
    }
}

#[test]
fn block_scoped_atomic_across_blocks_is_a_scope_race() {
    let mut cell = Buf::new("cell", vec![0u32]);
    let o = launch::<block_scope_across_blocks>(LaunchConfig::linear(2, 32, 0), &seed(1), (cell.view_mut(),));
    println!("{}", o.races[0]);
    assert_eq!(o.racy_addresses, 1);
    assert!(o.races[0].why.contains("block-scoped atomic"), "{}", o.races[0]);
    assert_ne!(o.races[0].first.thread.block, o.races[0].second.thread.block);
    let o = launch::<block_scope_across_blocks>(LaunchConfig::linear(1, 64, 0), &seed(1), (cell.view_mut(),));
    assert_eq!(o.racy_addresses, 0, "within one block, block scope is enough");
}

#[test]
fn schedules_replay_exactly_and_differ_between_seeds() {
    use gpu_kernels::lost_update::*;
    let run = |s: u64| {
        let mut data = Buf::new("data", vec![5u8; 512]);
        let mut hist = Buf::new("hist", vec![0u32; 256]);
        let o = launch::<histogram_racy>(LaunchConfig::linear(2, BLOCK, 0), &seed(s), (data.view(), hist.view_mut()));
        (o.steps, hist.data[5], o.races[0].first.thread, o.races[0].second.thread)
    };
    assert_eq!(run(11), run(11), "same seed, same interleaving");
    let distinct: std::collections::HashSet<_> = (1..=6).map(run).collect();
    assert!(distinct.len() > 1, "different seeds explore different interleavings");
}

#[test]
fn kernel_panics_name_the_thread() {
    gpu_std::kernel! {
        /// Test-only: reads one past the end.
        pub fn read_past_end<'a>(v: Global<'a, u32>, out: GlobalMut<'a, u32>) {
            let i = gpu_std::thread::global_index_x();
            out.set(i, v.get(i + 1));
        }
    }
    let mut v = Buf::new("v", vec![1u32; 8]);
    let mut out = Buf::new("out", vec![0u32; 8]);
    let e =
        launch_raw::<read_past_end>(&LaunchConfig::linear(1, 8, 0), &seed(1), (v.view(), out.view_mut())).unwrap_err();
    let EmuError::KernelPanic { kernel, thread, message } = e else { panic!("expected a kernel panic") };
    assert_eq!((kernel.as_str(), thread), ("read_past_end", t(0, 7)));
    assert!(
        message.contains("index out of bounds: the len is 8 but the index is 8") && message.contains("detector.rs"),
        "{message}"
    );
}

gpu_std::kernel! {
    /// Test-only: the chapter's "never spin on a non-volatile flag" — a plain-load spin nobody ends.
    pub fn spin_on_plain_flag<'a>(flag: GlobalMut<'a, u32>) {
        while flag.get(0) == 0 {}
    }
}

#[test]
fn a_plain_load_spin_ends_at_the_time_limit() {
    // Plain loads are not polls (a thread reading a large input must not look stuck), so this spin
    // is caught by the launch's time bound rather than the spin detector.
    let mut flag = Buf::new("flag", vec![0u32]);
    let opts = Options { time_limit: std::time::Duration::from_millis(500), ..seed(1) };
    let started = std::time::Instant::now();
    let e = launch_raw::<spin_on_plain_flag>(&LaunchConfig::linear(1, 4, 0), &opts, (flag.view_mut(),)).unwrap_err();
    assert!(matches!(e, EmuError::TimeLimit { .. }), "{e}");
    assert!(e.to_string().contains("did not finish within"), "{e}");
    assert!(started.elapsed().as_secs() < 5);
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
