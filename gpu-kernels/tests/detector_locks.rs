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
        if me % 32 != 0 {
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
