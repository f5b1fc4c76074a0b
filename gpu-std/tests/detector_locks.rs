//! Locks whose acquire does not acquire: the race between two critical sections must be reported
//! whichever thread takes the lock first. Each shape runs under schedule seeds chosen so that both
//! lock orders occur (asserted), and the race must be reported in both.

mod common;

use common::{Buf, launch, pair, reports, seed, t};
use gpu_std::GlobalMut;
use gpu_std::emu::{LaunchConfig, Outcome};
use gpu_std::fence::{nanosleep, threadfence, threadfence_block};
use gpu_std::thread::{block_idx, thread_idx};

/// No fence after the successful compare-and-swap.
const NO_FENCE: u32 = 0;
/// A block-scope fence (`__threadfence_block()`) after it.
const BLOCK_FENCE: u32 = 1;
/// A device-scope fence (`__threadfence()`) after it: a correct lock.
const DEVICE_FENCE: u32 = 2;

gpu_std::kernel! {
    /// Test-only: threads 0 and 32 of every block take `lock[0]` with a compare-and-swap loop, acquire
    /// as `how` says, write their number to `data[0]`, then `__threadfence()` and release with an
    /// atomic exchange.
    pub fn lock_shapes<'a>(lock: GlobalMut<'a, u32>, data: GlobalMut<'a, u32>, how: u32) {
        let me = thread_idx().x;
        if !me.is_multiple_of(32) {
            return;
        }
        while lock.atomic(0).compare_and_swap(0, 1) != 0 {
            nanosleep(16);
        }
        match how {
            NO_FENCE => {}
            BLOCK_FENCE => threadfence_block(),
            _ => threadfence(),
        }
        data.set(0, block_idx().x * 100 + me + 1);
        threadfence();
        lock.atomic(0).swap(0);
    }
}

/// Runs [`lock_shapes`] and returns the outcome and the thread that took the lock second (its write
/// is the one left in `data[0]`).
fn run(cfg: LaunchConfig, how: u32, s: u64) -> (Outcome, u32) {
    let mut lock = Buf::new("lock", vec![0u32]);
    let mut data = Buf::new("data", vec![0u32]);
    let o = launch::<lock_shapes>(cfg, &seed(s), (lock.view_mut(), data.view_mut(), how));
    assert_eq!(lock.data[0], 0, "the lock is free at the end");
    (o, data.data[0] - 1)
}

/// Seeds 1..=8: every case must see both lock orders among them.
const ORDER_SEEDS: std::ops::RangeInclusive<u64> = 1..=8;

/// Checks that `data[0]` races between threads `a` and `b` on every seed, explained with every phrase
/// of `why` and none of `not`, and that both lock orders occurred.
fn check_both_orders(cfg: LaunchConfig, how: u32, a: (u32, u32), b: (u32, u32), why: &[&str], not: &[&str]) {
    let mut seconds = vec![];
    for s in ORDER_SEEDS {
        let (o, second) = run(cfg, how, s);
        seconds.push(second);
        let r = o.races.iter().find(|r| r.buffer == "data").unwrap_or_else(|| {
            panic!("seed {s} (second taker {second}): the race on data[0] is missed: {}", reports(&o))
        });
        assert_eq!(o.racy_addresses, 1, "seed {s}: {}", reports(&o));
        assert_eq!((r.index, pair(r)), (0, [t(a.0, a.1), t(b.0, b.1)]), "{r}");
        assert_eq!((r.first.kind, r.second.kind), ("write", "write"), "{r}");
        for w in why {
            assert!(r.why.contains(w), "seed {s}: `{w}` missing in: {r}");
        }
        for w in not {
            assert!(!r.why.contains(w), "seed {s}: `{w}` misleads in: {r}");
        }
        if s == 1 {
            println!("{r}");
        }
    }
    let (x, y) = (a.0 * 100 + a.1, b.0 * 100 + b.1);
    assert!(seconds.contains(&x) && seconds.contains(&y), "both lock orders occur on the seeds: {seconds:?}");
}

#[test]
fn lock_without_fence_after_cas_across_blocks_is_flagged_in_both_orders() {
    check_both_orders(
        LaunchConfig::linear(2, 1, 0),
        NO_FENCE,
        (0, 0),
        (1, 0),
        &[
            "an atomic read-modify-write (a lock's compare-and-swap or exchange, a ticket's fetch_add) observed the release",
            "no fence followed it",
            "add __threadfence() right after the atomic",
        ],
        &["load_acquire", "strong load"],
    );
}

#[test]
fn lock_with_block_scope_acquire_fence_across_blocks_is_flagged_in_both_orders() {
    check_both_orders(
        LaunchConfig::linear(2, 1, 0),
        BLOCK_FENCE,
        (0, 0),
        (1, 0),
        &[
            "acquired with a block-scope fence (fence.sc.cta, __threadfence_block)",
            "needs device scope: __threadfence (fence.sc.gpu)",
        ],
        &["no fence followed", "load_acquire"],
    );
}

#[test]
fn lock_without_fence_after_cas_across_warps_is_flagged_in_both_orders() {
    check_both_orders(
        LaunchConfig::linear(1, 64, 0),
        NO_FENCE,
        (0, 0),
        (0, 32),
        &[
            "an atomic read-modify-write (a lock's compare-and-swap or exchange, a ticket's fetch_add) observed the release",
            "no fence followed it",
            "add __threadfence() right after the atomic",
        ],
        &["load_acquire", "strong load"],
    );
}

#[test]
fn lock_with_device_fences_is_clean() {
    for s in ORDER_SEEDS {
        for cfg in [LaunchConfig::linear(2, 1, 0), LaunchConfig::linear(1, 64, 0), LaunchConfig::linear(2, 64, 0)] {
            let (o, _) = run(cfg, DEVICE_FENCE, s);
            assert_eq!(o.racy_addresses, 0, "seed {s}: {}", reports(&o));
        }
    }
}

gpu_std::kernel! {
    /// Test-only, two blocks of one thread, a correct lock (`__threadfence()` after the CAS and before
    /// the release): block 0's thread takes and releases the lock, then writes `data[0]` outside it;
    /// block 1's thread reads `data[0]` inside the lock. `lock` holds `b + 1` while block `b` holds it;
    /// `waited[b]` is what block `b`'s failed compare-and-swaps saw last (the other block, if it waited
    /// for it), written outside the critical section.
    pub fn write_after_unlock<'a>(lock: GlobalMut<'a, u32>, data: GlobalMut<'a, u32>, waited: GlobalMut<'a, u32>) {
        let b = block_idx().x;
        let mut seen = 0;
        loop {
            let old = lock.atomic(0).compare_and_swap(0, b + 1);
            if old == 0 {
                break;
            }
            seen = old;
            nanosleep(16);
        }
        threadfence();
        let v = if b == 1 { data.get(0) } else { 0 };
        threadfence();
        lock.atomic(0).swap(0);
        waited.set(b as usize, seen);
        if b == 0 {
            data.set(0, 7);
        } else {
            waited.set(2, v);
        }
    }
}

#[test]
fn a_race_hidden_by_the_lock_order_is_predicted_on_every_seed() {
    let (mut predicted, mut found) = (0, 0);
    for s in 1..=12 {
        let mut lock = Buf::new("lock", vec![0u32]);
        let mut data = Buf::new("data", vec![0u32]);
        let mut waited = Buf::new("waited", vec![0u32; 3]);
        let o = launch::<write_after_unlock>(
            LaunchConfig::linear(2, 1, 0),
            &seed(s),
            (lock.view_mut(), data.view_mut(), waited.view_mut()),
        );
        assert_eq!(o.racy_addresses, 1, "seed {s}: {}", reports(&o));
        let r = &o.races[0];
        // Who took the lock first: the block the other one waited for; if neither waited, the reader
        // came second when it read the writer's 7 (else the order is not known: only the race is checked).
        let reader_first = match (waited.data[0], waited.data[1], waited.data[2]) {
            (2, _, _) => true,
            (_, 1, _) | (_, _, 7) => false,
            _ => {
                assert!(r.buffer == "data", "{r}");
                continue;
            }
        };
        assert_eq!((r.buffer.as_str(), r.index, pair(r)), ("data", 0, [t(0, 0), t(1, 0)]), "{r}");
        let kinds = if reader_first { ("read", "write") } else { ("write", "read") };
        assert_eq!((r.first.kind, r.second.kind), kinds, "{r}");
        assert_eq!(r.predicted, reader_first, "seed {s}: predicted exactly when the lock order hid it: {r}");
        if reader_first {
            predicted += 1;
            println!("{r}");
            for w in [
                "predicted: in another order of taking `lock`[0], nothing orders these accesses",
                "the critical section of block 1 thread 0 (lock taken at ",
                "came before the critical section of block 0 thread 0 (lock taken at ",
                "had block 0 thread 0 taken the lock first, they would race",
            ] {
                assert!(r.why.contains(w), "seed {s}: `{w}` missing in {r}");
            }
        } else {
            found += 1;
            assert!(!r.why.contains("predicted"), "{r}");
        }
    }
    assert!(predicted > 0 && found > 0, "both lock orders occur: {predicted} predicted, {found} found");
}

gpu_std::kernel! {
    /// Test-only: a flag protected by a lock hands data over. Block 0's thread writes `data[0]`, then
    /// sets `flag[0]` under the lock; block 1's thread reads the flag under the lock until it is set,
    /// then reads `data[0]`. Race-free in every order: the critical sections touch the same flag.
    pub fn flag_under_lock<'a>(lock: GlobalMut<'a, u32>, data: GlobalMut<'a, u32>, flag: GlobalMut<'a, u32>, out: GlobalMut<'a, u32>) {
        let b = block_idx().x;
        if b == 0 {
            data.set(0, 7);
        }
        let mut spins = 0;
        loop {
            while lock.atomic(0).compare_and_swap(0, 1) != 0 {
                nanosleep(16);
            }
            threadfence();
            let seen = if b == 0 {
                flag.set(0, 1);
                true
            } else {
                flag.get(0) == 1
            };
            threadfence();
            lock.atomic(0).swap(0);
            spins += 1;
            if seen || spins > 1000 {
                break;
            }
            nanosleep(16);
        }
        if b == 1 {
            out.set(0, data.get(0));
        }
    }
}

#[test]
fn a_flag_under_a_lock_is_not_predicted() {
    for s in 1..=8 {
        let mut lock = Buf::new("lock", vec![0u32]);
        let mut data = Buf::new("data", vec![0u32]);
        let mut flag = Buf::new("flag", vec![0u32]);
        let mut out = Buf::new("out", vec![0u32]);
        let args = (lock.view_mut(), data.view_mut(), flag.view_mut(), out.view_mut());
        let o = launch::<flag_under_lock>(LaunchConfig::linear(2, 1, 0), &seed(s), args);
        assert_eq!(out.data[0], 7);
        assert_eq!(o.racy_addresses, 0, "seed {s}: {}", reports(&o));
    }
}

/// [`asymmetric`]: block 0's thread takes the device lock with no fence after the compare-and-swap,
/// block 1's with `__threadfence()`; both write `data[0]` inside.
const ONE_UNACQUIRED: u32 = 0;
/// The same with `__threadfence_block()` after block 0's compare-and-swap.
const ONE_BLOCK_ACQUIRED: u32 = 1;
/// Warps 0 and 1 of one block and a block-scope lock (`atom.cta`); warp 0 fences nothing after the
/// compare-and-swap, warp 1 `__threadfence_block()`; both write `data[0]` inside.
const WARPS_ONE_UNACQUIRED: u32 = 2;
/// Both take a correct device lock, read `data[0]` and write `dummy[0]` inside; block 0's thread writes
/// `data[0]` after releasing.
const WRITE_AFTER_RELEASE: u32 = 3;

gpu_std::kernel! {
    /// Test-only: two threads (thread 0 of blocks 0 and 1, or threads 0 and 32 of block 0) take
    /// `lock[0]` in the asymmetric ways `shape` names.
    pub fn asymmetric<'a>(lock: GlobalMut<'a, u32>, data: GlobalMut<'a, u32>, dummy: GlobalMut<'a, u32>, shape: u32) {
        let (b, t) = (block_idx().x, thread_idx().x);
        let me = if shape == WARPS_ONE_UNACQUIRED { t / 32 } else { b };
        if t % 32 != 0 || me > 1 {
            return;
        }
        let cta = shape == WARPS_ONE_UNACQUIRED;
        let take = || if cta { lock.atomic_scoped::<gpu_std::Block>(0).compare_and_swap(0, 1) } else { lock.atomic(0).compare_and_swap(0, 1) };
        while take() != 0 {
            nanosleep(16);
        }
        match (shape, me) {
            (ONE_UNACQUIRED | WARPS_ONE_UNACQUIRED, 0) => {}
            (ONE_BLOCK_ACQUIRED, 0) | (WARPS_ONE_UNACQUIRED, _) => threadfence_block(),
            _ => threadfence(),
        }
        if shape == WRITE_AFTER_RELEASE {
            let _ = data.get(0);
            dummy.set(0, me);
        } else {
            data.set(0, me + 1);
        }
        if cta { threadfence_block() } else { threadfence() }
        if cta {
            lock.atomic_scoped::<gpu_std::Block>(0).swap(0);
        } else {
            lock.atomic(0).swap(0);
        }
        if shape == WRITE_AFTER_RELEASE && me == 0 {
            data.set(0, 7);
        }
    }
}

#[test]
fn a_race_that_one_order_of_taking_the_lock_hides_is_reported_in_either_order() {
    for shape in [ONE_UNACQUIRED, ONE_BLOCK_ACQUIRED, WARPS_ONE_UNACQUIRED, WRITE_AFTER_RELEASE] {
        let cfg =
            if shape == WARPS_ONE_UNACQUIRED { LaunchConfig::linear(1, 64, 0) } else { LaunchConfig::linear(2, 32, 0) };
        let mut firsts = vec![];
        for s in 1..=8 {
            let (mut lock, mut data, mut dummy) =
                (Buf::new("lock", vec![0u32]), Buf::new("data", vec![0u32]), Buf::new("dummy", vec![9u32]));
            let o = launch::<asymmetric>(cfg, &seed(s), (lock.view_mut(), data.view_mut(), dummy.view_mut(), shape));
            // Who took the lock first: the other one's value is left (the write after the release
            // in the last shape is block 0's, so there `dummy` tells).
            firsts.push(if shape == WRITE_AFTER_RELEASE { 1 - dummy.data[0] } else { 2 - data.data[0] });
            let races: Vec<&str> = o.races.iter().map(|r| r.buffer.as_str()).collect();
            assert_eq!(races, ["data"], "shape {shape}, seed {s}: {}", reports(&o));
            assert_eq!(lock.data[0], 0);
        }
        assert!(firsts.contains(&0) && firsts.contains(&1), "shape {shape}: both lock orders occur: {firsts:?}");
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
