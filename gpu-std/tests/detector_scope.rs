//! Scoped happens-before: fences, release/acquire accesses and atomics order memory only among the
//! threads inside their scope. Block scope (`.cta`) used to publish data, or to build a lock, across
//! blocks must be reported, naming the scope used and the scope needed; the same patterns at device
//! scope, and block scope inside one block, must stay silent. Every case runs under several schedules.

mod common;

use common::{Buf, SEEDS, launch, pair, reports, seed, t};
use gpu_std::emu::{LaunchConfig, Outcome};
use gpu_std::fence::{nanosleep, threadfence, threadfence_block};
use gpu_std::thread::{block_dim, global_index_x, grid_dim};
use gpu_std::{Block, GlobalMut};

/// How [`publish`] releases and acquires: `__threadfence_block()` + volatile flag store, volatile
/// polls + `__threadfence_block()`.
const FENCE_BLOCK: u32 = 0;
/// `__threadfence()` + volatile flag store, volatile polls + `__threadfence()`.
const FENCE_DEVICE: u32 = 1;
/// `store_release` / `load_acquire` at block scope (`st.release.cta` / `ld.acquire.cta`).
const RELACQ_BLOCK: u32 = 2;
/// `store_release` / `load_acquire` at device scope.
const RELACQ_DEVICE: u32 = 3;
/// `__threadfence()` + a block-scope atomic exchange on the flag (`atom.cta`), volatile polls +
/// `__threadfence()`.
const ATOMIC_FLAG_BLOCK: u32 = 4;
/// `__threadfence()` + a device-scope atomic exchange on the flag, volatile polls + `__threadfence()`.
const ATOMIC_FLAG_DEVICE: u32 = 5;

/// Elements [`publish`] hands over.
const N: usize = 8;

gpu_std::kernel! {
    /// Test-only: the first thread of the launch writes `data` and raises `flag`, releasing as `how`
    /// says; the last thread waits for the flag, acquiring as `how` says, and copies `data` to `copy`.
    pub fn publish<'a>(data: GlobalMut<'a, u32>, flag: GlobalMut<'a, u32>, copy: GlobalMut<'a, u32>, how: u32) {
        let me = global_index_x();
        let last = (grid_dim().x * block_dim().x) as usize - 1;
        if me == 0 {
            for i in 0..data.len() {
                data.set(i, i as u32 + 1);
            }
            match how {
                FENCE_BLOCK => {
                    threadfence_block();
                    flag.set_volatile(0, 1);
                }
                FENCE_DEVICE => {
                    threadfence();
                    flag.set_volatile(0, 1);
                }
                RELACQ_BLOCK => flag.atomic_scoped::<Block>(0).store_release(1),
                RELACQ_DEVICE => flag.atomic(0).store_release(1),
                ATOMIC_FLAG_BLOCK => {
                    threadfence();
                    flag.atomic_scoped::<Block>(0).swap(1);
                }
                _ => {
                    threadfence();
                    flag.atomic(0).swap(1);
                }
            }
        } else if me == last {
            loop {
                let seen = match how {
                    RELACQ_BLOCK => flag.atomic_scoped::<Block>(0).load_acquire(),
                    RELACQ_DEVICE => flag.atomic(0).load_acquire(),
                    _ => flag.get_volatile(0),
                };
                if seen != 0 {
                    break;
                }
                nanosleep(32);
            }
            match how {
                FENCE_BLOCK => threadfence_block(),
                RELACQ_BLOCK | RELACQ_DEVICE => {}
                _ => threadfence(),
            }
            for i in 0..data.len() {
                copy.set(i, data.get(i));
            }
        }
    }
}

/// Runs [`publish`] on `cfg` with schedule `s`; checks the copy (the emulator's values are exact
/// whatever the detector says) and returns the outcome.
fn run_publish(cfg: LaunchConfig, how: u32, s: u64) -> Outcome {
    let mut data = Buf::new("data", vec![0u32; N]);
    let mut flag = Buf::new("flag", vec![0u32]);
    let mut copy = Buf::new("copy", vec![0u32; N]);
    let o = launch::<publish>(cfg, &seed(s), (data.view_mut(), flag.view_mut(), copy.view_mut(), how));
    assert_eq!(copy.data, (1..=N as u32).collect::<Vec<_>>());
    o
}

/// Two blocks of one thread: the producer is block 0's thread, the consumer block 1's.
fn across_blocks() -> LaunchConfig {
    LaunchConfig::linear(2, 1, 0)
}

/// One block of 64 threads: the producer is thread 0 (warp 0), the consumer thread 63 (warp 1).
fn one_block() -> LaunchConfig {
    LaunchConfig::linear(1, 64, 0)
}

/// Checks that `o` reports exactly `data[0..N]` (besides `others` more racy addresses), each as the
/// producer's write against the consumer's read, explained with every phrase in `why`.
fn assert_data_races(o: &Outcome, others: usize, why: &[&str]) {
    assert_eq!(o.racy_addresses, N + others, "{}", reports(o));
    let data: Vec<_> = o.races.iter().filter(|r| r.buffer == "data").collect();
    assert_eq!(data.len(), N, "{}", reports(o));
    for (k, r) in data.iter().enumerate() {
        assert_eq!((r.kernel.as_str(), r.index), ("publish", k), "{r}");
        assert_eq!((r.first.thread, r.second.thread), (t(0, 0), t(1, 0)), "{r}");
        assert_eq!((r.first.kind, r.second.kind), ("write", "read"), "{r}");
        for w in why {
            assert!(r.why.contains(w), "`{w}` missing in: {r}");
        }
    }
}

#[test]
fn block_scope_fence_publishing_across_blocks_is_flagged() {
    for s in SEEDS {
        let o = run_publish(across_blocks(), FENCE_BLOCK, s);
        println!("{}", o.races[0]);
        assert_data_races(
            &o,
            0,
            &[
                "released with a block-scope fence (fence.sc.cta, __threadfence_block)",
                "acquired with a block-scope fence (fence.sc.cta, __threadfence_block)",
                "the threads are in different blocks",
                "needs device scope: __threadfence (fence.sc.gpu)",
            ],
        );
    }
}

/// Exactly one race on `flag`[0], between thread 0 of block 0 and thread 0 of block 1, with these
/// access kinds (sorted) and an explanation that contains `why`.
fn assert_flag_race(o: &Outcome, kinds: [&str; 2], why: &str) {
    let flag: Vec<_> = o.races.iter().filter(|r| r.buffer == "flag").collect();
    assert_eq!(flag.len(), 1, "{}", reports(o));
    let r = flag[0];
    assert_eq!((r.index, pair(r)), (0, [t(0, 0), t(1, 0)]), "{r}");
    let mut got = [r.first.kind, r.second.kind];
    got.sort();
    assert_eq!(got, kinds, "{r}");
    assert!(r.why.contains(why), "{r}");
}

#[test]
fn block_scope_release_acquire_across_blocks_is_flagged() {
    for s in SEEDS {
        let o = run_publish(across_blocks(), RELACQ_BLOCK, s);
        println!("{}", o.races[0]);
        assert_data_races(
            &o,
            1,
            &[
                "released with a block-scope release store (st.release.cta)",
                "acquired with a block-scope acquire load (ld.acquire.cta)",
                "needs device scope: store_release at Device scope (st.release.gpu), load_acquire at Device scope",
            ],
        );
        // The flag itself: a block-scoped release store and acquire load in different blocks are not
        // morally strong, so they race too.
        assert_flag_race(
            &o,
            ["acquire load (block)", "release store (block)"],
            "block-scoped release store (st.release.cta)",
        );
    }
}

#[test]
fn block_scope_atomic_flag_across_blocks_is_flagged() {
    for s in SEEDS {
        let o = run_publish(across_blocks(), ATOMIC_FLAG_BLOCK, s);
        println!("{}", o.races[0]);
        // The flag: a block-scoped atomic and a read from another block are not morally strong.
        assert_flag_race(&o, ["atomic (block)", "volatile read"], "block-scoped atomic (.cta)");
        // The data is not a race: both sides fence with `__threadfence()` (fence.sc.gpu), morally
        // strong fences, and the producer's comes first in Fence-SC order (the consumer's waits for
        // the flag written after it), so it synchronizes with the consumer's.
        assert_eq!(o.racy_addresses, 1, "{}", reports(&o));
    }
}

#[test]
fn device_scope_publishing_across_blocks_is_clean() {
    for s in SEEDS {
        for how in [FENCE_DEVICE, RELACQ_DEVICE, ATOMIC_FLAG_DEVICE] {
            let o = run_publish(across_blocks(), how, s);
            assert_eq!(o.racy_addresses, 0, "how {how}, seed {s}: {}", reports(&o));
        }
    }
}

#[test]
fn block_scope_publishing_inside_one_block_is_clean() {
    for s in SEEDS {
        for how in [FENCE_BLOCK, RELACQ_BLOCK, ATOMIC_FLAG_BLOCK, FENCE_DEVICE, RELACQ_DEVICE, ATOMIC_FLAG_DEVICE] {
            let o = run_publish(one_block(), how, s);
            assert_eq!(o.racy_addresses, 0, "how {how}, seed {s}: {}", reports(&o));
        }
    }
}

/// How [`lock_counter`] builds its lock: device-scope atomics and `__threadfence()`.
const LOCK_DEVICE: u32 = 0;
/// Device-scope atomics, but the critical section fenced with `__threadfence_block()` only.
const LOCK_BLOCK_FENCES: u32 = 1;
/// Block-scope atomics on the lock word (`atom.cta`), `__threadfence()`.
const LOCK_BLOCK_ATOMICS: u32 = 2;

fn lock_fence(how: u32) {
    if how == LOCK_BLOCK_FENCES { threadfence_block() } else { threadfence() }
}

gpu_std::kernel! {
    /// Test-only: every thread adds 1 to `counter[0]` with a plain load and store, under the lock
    /// `lock[0]` built as `how` says.
    pub fn lock_counter<'a>(lock: GlobalMut<'a, u32>, counter: GlobalMut<'a, u32>, how: u32) {
        loop {
            let old = if how == LOCK_BLOCK_ATOMICS {
                lock.atomic_scoped::<Block>(0).compare_and_swap(0, 1)
            } else {
                lock.atomic(0).compare_and_swap(0, 1)
            };
            if old == 0 {
                lock_fence(how);
                counter.set(0, counter.get(0) + 1);
                lock_fence(how);
                if how == LOCK_BLOCK_ATOMICS {
                    lock.atomic_scoped::<Block>(0).swap(0);
                } else {
                    lock.atomic(0).swap(0);
                }
                break;
            }
            nanosleep(16);
        }
    }
}

/// Runs [`lock_counter`] on `cfg` with schedule `s`; checks the count and returns the outcome.
fn run_lock(cfg: LaunchConfig, how: u32, s: u64) -> Outcome {
    let mut lock = Buf::new("lock", vec![0u32]);
    let mut counter = Buf::new("counter", vec![0u32]);
    let o = launch::<lock_counter>(cfg, &seed(s), (lock.view_mut(), counter.view_mut(), how));
    assert_eq!((counter.data[0], lock.data[0]), (cfg.grid.x * cfg.block.x, 0), "the emulator's lock works");
    o
}

/// The race on `counter[0]` between the two blocks' threads, explained with every phrase in `why`.
fn assert_counter_race(o: &Outcome, why: &[&str]) {
    let r = o.races.iter().find(|r| r.buffer == "counter").unwrap_or_else(|| panic!("no counter race: {}", reports(o)));
    assert_eq!((r.kernel.as_str(), r.index, pair(r)), ("lock_counter", 0, [t(0, 0), t(1, 0)]), "{r}");
    assert_eq!((r.first.kind, r.second.kind), ("write", "read"), "{r}");
    assert_ne!(r.first.thread, r.second.thread);
    for w in why {
        assert!(r.why.contains(w), "`{w}` missing in: {r}");
    }
}

#[test]
fn global_lock_fenced_at_block_scope_is_flagged() {
    for s in SEEDS {
        let o = run_lock(across_blocks(), LOCK_BLOCK_FENCES, s);
        println!("{}", o.races[0]);
        assert_eq!(o.racy_addresses, 1, "{}", reports(&o));
        assert_counter_race(
            &o,
            &[
                "released with a block-scope fence (fence.sc.cta, __threadfence_block)",
                "acquired with a block-scope fence",
                "needs device scope: __threadfence (fence.sc.gpu)",
            ],
        );
    }
}

#[test]
fn block_scope_atomic_lock_across_blocks_is_flagged() {
    for s in SEEDS {
        let o = run_lock(across_blocks(), LOCK_BLOCK_ATOMICS, s);
        println!("{}", reports(&o));
        // The lock word: block-scoped atomics of two blocks are not morally strong (on a GPU such a
        // lock does not exclude the other block at all).
        let r = o.races.iter().find(|r| r.buffer == "lock").expect("the lock word races");
        assert_eq!((r.index, pair(r)), (0, [t(0, 0), t(1, 0)]), "{r}");
        assert_eq!((r.first.kind, r.second.kind), ("atomic (block)", "atomic (block)"), "{r}");
        assert!(r.why.contains("block-scoped atomic (.cta)"), "{r}");
        // The counter is not: the critical sections fence with `__threadfence()`, and the earlier
        // section's fence synchronizes with the later's (Fence-SC order).
        assert_eq!(o.racy_addresses, 1, "{}", reports(&o));
    }
}

#[test]
fn device_scope_lock_is_clean_and_block_scope_locks_inside_one_block_are_clean() {
    for s in SEEDS {
        let o = run_lock(across_blocks(), LOCK_DEVICE, s);
        assert_eq!(o.racy_addresses, 0, "seed {s}: {}", reports(&o));
        for how in [LOCK_DEVICE, LOCK_BLOCK_FENCES, LOCK_BLOCK_ATOMICS] {
            let o = run_lock(LaunchConfig::linear(1, 4, 0), how, s);
            assert_eq!(o.racy_addresses, 0, "how {how}, seed {s}: {}", reports(&o));
        }
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
