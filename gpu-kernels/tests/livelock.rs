//! Spin loops on the emulator: a lock nobody releases, a lock held across a barrier and a
//! compare-and-swap spin on a word that already holds the "taken" value must be reported as livelocks
//! within seconds, naming the threads, the line and the value they wait on; the chapter's spinlocks and
//! producer/consumer make progress and must not be reported, even with a tiny poll limit; a spin on a
//! plain load ends at the time limit, whose report says what every unfinished thread was doing.

use gpu_std::block::sync_threads;
use gpu_std::emu::{self, Buffer, EmuError, LaunchConfig, Livelock, Options, ThreadId};
use gpu_std::thread::{global_index_x, thread_idx};
use gpu_std::{GlobalMut, kernel, shared_layout};
use std::time::{Duration, Instant};

const SOURCE: &str = include_str!("livelock.rs");

/// `file:line:` of the line of this file that ends in the comment `// <marker>`, as reports print sites.
fn site_of(marker: &str) -> String {
    let line = SOURCE.lines().position(|l| l.contains(&format!("// {marker}"))).expect("marker") + 1;
    format!("{}:{line}:", file!())
}

fn opts(seed: u64) -> Options {
    Options { schedule_seed: seed, ..Options::default() }
}

fn t(block: u32, thread: u32) -> ThreadId {
    ThreadId { block: (block, 0, 0), thread: (thread, 0, 0) }
}

/// Runs `launch`, which must end in a livelock within 10 seconds, and returns the report.
fn livelock(launch: impl FnOnce() -> Result<emu::Outcome, EmuError>) -> Livelock {
    let started = Instant::now();
    let e = launch().expect_err("the launch must not complete");
    let took = started.elapsed();
    println!("reported after {took:?}:\n{e}");
    assert!(took < Duration::from_secs(10), "reported within seconds, not at the time limit ({took:?})");
    match e {
        EmuError::Livelock(l) => l,
        other => panic!("expected a livelock, got: {other}"),
    }
}

kernel! {
    /// Every thread spins on `atomicCAS(lock, 0, 1)`; the host leaves the lock word at 1.
    pub fn cas_spin_on_taken_word<'a>(lock: GlobalMut<'a, u32>) {
        while lock.atomic(0).compare_and_swap(0, 1) != 0 {} // @taken-word
    }
}

#[test]
fn cas_spin_on_a_word_that_already_holds_one_is_a_livelock() {
    for seed in 1..=3 {
        let lock = emu::buffer("lock", vec![1u32]);
        let cfg = LaunchConfig::linear(2, 32, 0);
        let l = livelock(|| emu::launch::<cas_spin_on_taken_word>(&cfg, &opts(seed), (lock.view_mut(),)));
        assert_eq!(l.kernel, "cas_spin_on_taken_word");
        assert!(l.polls > Options::default().poll_limit);
        assert_eq!(l.spinning.len(), 1, "{:?}", l.spinning);
        let g = &l.spinning[0];
        let all: Vec<ThreadId> = (0..2).flat_map(|b| (0..32).map(move |x| t(b, x))).collect();
        assert_eq!(g.threads, all);
        // Nobody in the launch set the 1: the host did, so no writer is named.
        let at = site_of("@taken-word");
        assert!(g.what.starts_with(&format!("wait at {at}")), "{}", g.what);
        assert!(g.what.ends_with(" for `lock`[0] to change from 1"), "{}", g.what);
        assert!(l.blocked.is_empty(), "{:?}", l.blocked);
        assert_eq!(lock.to_vec(), [1]);
    }
}

kernel! {
    /// The first thread to take the lock records itself in `owner` and exits without releasing it.
    pub fn lock_never_released<'a>(lock: GlobalMut<'a, u32>, owner: GlobalMut<'a, u32>) {
        while lock.atomic(0).compare_and_swap(0, 1) != 0 {} // @never-released
        owner.set(0, global_index_x() as u32);
    }
}

#[test]
fn a_lock_never_released_is_a_livelock_naming_who_took_it() {
    for seed in 1..=4 {
        let lock = emu::buffer("lock", vec![0u32]);
        let owner = emu::buffer("owner", vec![u32::MAX]);
        let cfg = LaunchConfig::linear(1, 64, 0);
        let l = livelock(|| emu::launch::<lock_never_released>(&cfg, &opts(seed), (lock.view_mut(), owner.view_mut())));
        let holder = owner.to_vec()[0];
        assert!(holder < 64, "one thread took the lock");
        assert_eq!(lock.to_vec(), [1]);
        assert_eq!(l.spinning.len(), 1, "{:?}", l.spinning);
        let g = &l.spinning[0];
        assert_eq!(g.threads, (0..64).filter(|&x| x != holder).map(|x| t(0, x)).collect::<Vec<_>>());
        let at = site_of("@never-released");
        assert_eq!(
            g.what.split_once(" (set by").map(|(w, _)| w.to_string()),
            Some(format!("wait at {at}{} for `lock`[0] to change from 1", column(&g.what, &at))),
            "{}",
            g.what
        );
        assert!(g.what.contains(&format!("(set by block 0 thread {holder} at {at}")), "{}", g.what);
        assert!(l.blocked.is_empty(), "the holder exited: {:?}", l.blocked);
    }
}

/// The column that follows `at` (`file:line:`) in `what`.
fn column(what: &str, at: &str) -> String {
    let rest = &what[what.find(at).expect("site") + at.len()..];
    rest.chars().take_while(char::is_ascii_digit).collect()
}

shared_layout! {
    struct LockWord {
        lock: [u32; 1],
    }
}

kernel! {
    /// A per-block shared-memory lock whose holder waits at a block barrier before releasing it: the
    /// others spin for the lock and never reach the barrier.
    pub fn lock_held_across_barrier<'a>(out: GlobalMut<'a, u32>) {
        let lock = LockWord::view().lock;
        if thread_idx().x == 0 {
            lock.set(0, 0);
        }
        sync_threads();
        while lock.atomic(0).compare_and_swap(0, 1) != 0 {} // @held-across-barrier
        sync_threads(); // @holder-waits
        out.atomic(0).fetch_add(1);
        lock.atomic(0).swap(0);
    }
}

#[test]
fn a_lock_held_across_a_barrier_is_a_livelock_naming_the_holder_and_the_spinners() {
    for seed in 1..=3 {
        let out = emu::buffer("out", vec![0u32]);
        let cfg = LaunchConfig::linear(2, 32, LockWord::BYTES);
        let l = livelock(|| emu::launch::<lock_held_across_barrier>(&cfg, &opts(seed), (out.view_mut(),)));
        let spin_at = site_of("@held-across-barrier");
        let barrier_at = site_of("@holder-waits");
        // One holder per block waits at the second barrier; the other 31 threads of its block spin.
        assert_eq!(l.blocked.len(), 1, "{:?}", l.blocked);
        let holders = &l.blocked[0];
        assert!(holders.what.starts_with(&format!("wait at block barrier {barrier_at}")), "{}", holders.what);
        assert_eq!(holders.threads.len(), 2);
        assert_eq!(l.spinning.len(), 2, "one group per block: {:?}", l.spinning);
        for (b, g) in l.spinning.iter().enumerate() {
            let holder = holders.threads[b];
            assert_eq!(holder.block.0, b as u32);
            let mut want: Vec<ThreadId> = (0..32).map(|x| t(b as u32, x)).collect();
            want.retain(|&x| x != holder);
            assert_eq!(g.threads, want);
            assert!(g.what.starts_with(&format!("wait at {spin_at}")), "{}", g.what);
            assert!(
                g.what.contains(&format!(
                    "for shared memory `LockWord.lock`[0] of block {b} to change from 1 (set by {holder} at {spin_at}"
                )),
                "{}",
                g.what
            );
        }
        assert_eq!(out.to_vec(), [0]);
    }
}

kernel! {
    /// A global lock taken before a block barrier and released after it (one block).
    pub fn global_lock_across_barrier<'a>(lock: GlobalMut<'a, u32>) {
        while lock.atomic(0).compare_and_swap(0, 1) != 0 { // @global-lock
            gpu_std::fence::nanosleep(32);
        }
        sync_threads();
        lock.atomic(0).swap(0);
    }
}

#[test]
fn a_global_lock_held_across_a_barrier_with_backoff_is_a_livelock() {
    for seed in 1..=3 {
        let lock = emu::buffer("lock", vec![0u32]);
        let l = livelock(|| {
            emu::launch::<global_lock_across_barrier>(&LaunchConfig::linear(1, 8, 0), &opts(seed), (lock.view_mut(),))
        });
        assert_eq!(l.blocked.len(), 1);
        assert_eq!(l.blocked[0].threads.len(), 1);
        let holder = l.blocked[0].threads[0];
        assert_eq!(l.spinning.len(), 1);
        // The spinners sleep between attempts; the report names the compare-and-swap they retry.
        let what = &l.spinning[0].what;
        let at = site_of("@global-lock");
        assert!(what.starts_with(&format!("wait at {at}")), "{what}");
        assert!(what.contains(&format!("for `lock`[0] to change from 1 (set by {holder} at {at}")), "{what}");
        assert_eq!(l.spinning[0].threads.len(), 7);
        assert!(!l.spinning[0].threads.contains(&holder));
    }
}

#[test]
fn livelock_wording_is_its_own() {
    let lock = emu::buffer("lock", vec![1u32]);
    let e = emu::launch::<cas_spin_on_taken_word>(&LaunchConfig::linear(1, 2, 0), &opts(1), (lock.view_mut(),))
        .unwrap_err();
    let text = e.to_string();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("livelock in kernel `cas_spin_on_taken_word`: every thread that can run spins"),
        "{text}"
    );
    assert!(!text.contains("deadlock"), "{text}");
    let second = text.lines().nth(1).unwrap();
    assert!(
        second.starts_with(&format!("  spinning: 2 threads wait at {}", site_of("@taken-word")))
            && second.ends_with("for `lock`[0] to change from 1: block 0 thread 0, block 0 thread 1"),
        "{second}"
    );
}

// ---- must not be reported ---------------------------------------------------------------------------

/// Options that report a livelock after very few polls: correct spinning still must not trip them.
fn impatient(seed: u64) -> Options {
    Options { poll_limit: 1_000, ..opts(seed) }
}

#[test]
fn the_chapters_spinlocks_make_progress_even_with_a_tiny_poll_limit() {
    use gpu_kernels::spinlock::*;
    for seed in 1..=3 {
        let init: Vec<f32> = (0..600).map(|i| i as f32).collect();
        let g = emu::buffer("g_data", init.clone());
        let errors = emu::buffer("errors", vec![0u32]);
        let cfg = LaunchConfig::linear(4, BLOCK, SHARED_BYTES);
        let o = emu::launch::<locked_critical_section>(&cfg, &impatient(seed), (g.view_mut(), errors.view_mut()))
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(o.racy_addresses, 0);
        assert_eq!(errors.to_vec(), [0]);
        assert_eq!(g.to_vec(), init.iter().map(|x| x * 2.0 + 1.0).collect::<Vec<_>>());

        let (lock, counter, errors) = (emu::buffer("lock", vec![0u32]), Buffer::new(vec![0u32]), Buffer::new(vec![0]));
        let cfg = LaunchConfig::linear(3, 64, 0);
        emu::launch::<global_lock_counter>(
            &cfg,
            &impatient(seed),
            (lock.view_mut(), counter.view_mut(), errors.view_mut()),
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!((counter.to_vec(), errors.to_vec(), lock.to_vec()), (vec![192], vec![0], vec![0]));
    }
}

#[test]
fn producer_consumer_makes_progress_even_with_a_tiny_poll_limit() {
    use gpu_kernels::producer_consumer::*;
    for seed in 1..=4 {
        let buffer = emu::buffer("buffer", vec![0.0f32; 512]);
        let flag = emu::buffer("flag", vec![0u32]);
        let copy = emu::buffer("copy", vec![-1.0f32; 512]);
        let status = emu::buffer("status", vec![0u32]);
        let o = emu::launch::<producer_consumer>(
            &LaunchConfig::linear(2, BLOCK, 0),
            &impatient(seed),
            (buffer.view_mut(), flag.view_mut(), copy.view_mut(), status.view_mut()),
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(o.racy_addresses, 0);
        assert_eq!(status.to_vec(), [RECEIVED]);
        assert_eq!(copy.to_vec(), (0..512).map(|i| i as f32).collect::<Vec<_>>());
    }
}

kernel! {
    /// Lock-free: every thread adds to a counter with a compare-and-swap loop that retries while other
    /// threads change the value. Failed compares are polls, but the winners' writes are progress.
    pub fn cas_increment<'a>(counter: GlobalMut<'a, u32>) {
        let mut old = counter.get_volatile(0);
        loop {
            let seen = counter.atomic(0).compare_and_swap(old, old + 1);
            if seen == old {
                break;
            }
            old = seen;
        }
    }
}

#[test]
fn contended_compare_and_swap_loops_are_not_livelocks() {
    for seed in 1..=3 {
        let counter = emu::buffer("counter", vec![0u32]);
        emu::launch::<cas_increment>(&LaunchConfig::linear(4, 64, 0), &impatient(seed), (counter.view_mut(),))
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(counter.to_vec(), [256]);
    }
}

// ---- the time limit -------------------------------------------------------------------------------

kernel! {
    /// Thread 0 spins on a plain load of a flag nobody sets (a plain load is not a poll: a thread
    /// reading its input must not look stuck); the others wait for it at a barrier.
    pub fn plain_spin_before_barrier<'a>(flag: GlobalMut<'a, u32>) {
        if thread_idx().x == 0 {
            while flag.get(0) == 0 {} // @plain-spin
        }
        sync_threads(); // @others-wait
    }
}

#[test]
fn the_time_limit_report_says_what_every_unfinished_thread_was_doing() {
    let flag = emu::buffer("flag", vec![0u32]);
    let o = Options { time_limit: Duration::from_millis(300), ..opts(1) };
    let started = Instant::now();
    let e =
        emu::launch::<plain_spin_before_barrier>(&LaunchConfig::linear(1, 4, 0), &o, (flag.view_mut(),)).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    println!("{e}");
    let EmuError::TimeLimit { kernel, threads, seconds, .. } = &e else { panic!("expected the time limit: {e}") };
    assert_eq!(kernel, "plain_spin_before_barrier");
    assert!(*seconds >= 0.3);
    let spin_at = site_of("@plain-spin");
    let barrier_at = site_of("@others-wait");
    assert_eq!(threads.len(), 2, "{threads:?}");
    let [running, waiting] = [&threads[0], &threads[1]];
    assert_eq!(running.threads, [t(0, 0)]);
    assert!(running.what.starts_with(&format!("run (last seen at {spin_at}")), "{}", running.what);
    assert_eq!(waiting.threads, [t(0, 1), t(0, 2), t(0, 3)]);
    assert!(waiting.what.starts_with(&format!("wait at block barrier {barrier_at}")), "{}", waiting.what);
    let text = e.to_string();
    assert!(text.starts_with("time limit: kernel `plain_spin_before_barrier` did not finish within"), "{text}");
    assert!(text.contains(&format!("\n  unfinished: 1 threads run (last seen at {spin_at}")), "{text}");
    assert!(!text.contains("deadlock in") && !text.contains("livelock in"), "{text}");
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
