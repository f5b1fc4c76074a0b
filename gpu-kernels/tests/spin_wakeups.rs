//! The emulator runs a thread whose poll failed again only when the polled location changes (or no
//! other thread can run): a contended lock costs scheduler steps linear in the number of threads that
//! wait for it, and spinning still ends in the right result under every schedule tried.

use gpu_kernels::spinlock::{BLOCK, SHARED_BYTES, global_lock_counter, locked_critical_section};
use gpu_std::emu::{self, LaunchConfig, Options};
use gpu_std::{GlobalMut, kernel};

/// Scheduler steps of one `global_lock_counter` launch of `blocks` blocks (one wave: at most 16), after
/// checking that the counter counted every thread.
fn global_lock_steps(blocks: u32, seed: u64) -> u64 {
    let (lock, counter, errors) =
        (emu::buffer("lock", vec![0u32]), emu::buffer("counter", vec![0u32]), emu::buffer("errors", vec![0u32]));
    let opts = Options { schedule_seed: seed, ..Options::default() };
    let o = emu::launch::<global_lock_counter>(
        &LaunchConfig::linear(blocks, BLOCK, 0),
        &opts,
        (lock.view_mut(), counter.view_mut(), errors.view_mut()),
    )
    .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert_eq!(o.racy_addresses, 0, "{:?}", o.races);
    assert_eq!((counter.to_vec(), errors.to_vec(), lock.to_vec()), (vec![blocks * BLOCK], vec![0], vec![0]));
    o.steps
}

#[test]
fn a_contended_global_lock_costs_steps_linear_in_its_waiters() {
    for seed in 1..=2 {
        let small = global_lock_steps(4, seed); // 512 threads
        let large = global_lock_steps(16, seed); // 2048 threads
        let per_thread = large as f64 / (16 * BLOCK) as f64;
        println!("seed {seed}: {small} steps for 512 threads, {large} for 2048 ({per_thread:.1} per thread)");
        // Each thread takes the lock once: a handful of steps each, not one per waiter per hand-off
        // (2048 waiters re-polling after every failed attempt took millions of steps).
        assert!(per_thread < 40.0, "{per_thread:.1} steps per thread");
        assert!(large < 6 * small, "4x the threads took {:.1}x the steps", large as f64 / small as f64);
    }
}

#[test]
fn a_contended_shared_lock_is_exact_under_several_schedules() {
    for seed in 1..=3 {
        let n = 16 * BLOCK as usize;
        let init: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
        let (g, errors) = (emu::buffer("g_data", init.clone()), emu::buffer("errors", vec![0u32]));
        let opts = Options { schedule_seed: seed, ..Options::default() };
        let o = emu::launch::<locked_critical_section>(
            &LaunchConfig::linear(16, BLOCK, SHARED_BYTES),
            &opts,
            (g.view_mut(), errors.view_mut()),
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(o.racy_addresses, 0);
        assert_eq!(errors.to_vec(), [0]);
        assert_eq!(g.to_vec(), init.iter().map(|x| x * 2.0 + 1.0).collect::<Vec<_>>());
        assert!(o.steps < 40 * n as u64, "{} steps for {n} threads", o.steps);
    }
}

kernel! {
    /// Thread 0 publishes `flag[0] = 1` after a long run of plain work; the others spin on a volatile
    /// load of the flag, then copy it out. A parked spinner must wake when the flag changes.
    pub fn wait_for_flag<'a>(flag: GlobalMut<'a, u32>, work: GlobalMut<'a, u32>, seen: GlobalMut<'a, u32>) {
        let t = gpu_std::thread::global_index_x();
        if t == 0 {
            for i in 0..work.len() {
                work.set(i, work.get(i) + 1);
            }
            flag.set_volatile(0, 1);
        } else {
            while flag.get_volatile(0) == 0 {}
            seen.atomic(0).fetch_add(1);
        }
    }
}

#[test]
fn a_parked_spinner_wakes_when_its_flag_changes() {
    for seed in 1..=3 {
        let (flag, work, seen) =
            (emu::buffer("flag", vec![0u32]), emu::buffer("work", vec![0u32; 2000]), emu::buffer("seen", vec![0u32]));
        let opts = Options { schedule_seed: seed, poll_limit: 1_000, ..Options::default() };
        let o = emu::launch::<wait_for_flag>(
            &LaunchConfig::linear(1, 64, 0),
            &opts,
            (flag.view_mut(), work.view_mut(), seen.view_mut()),
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(seen.to_vec(), [63]);
        // The 63 spinners park after two polls each instead of polling while thread 0 works.
        assert!(o.steps < 8_000, "{} steps", o.steps);
    }
}

kernel! {
    /// Thread 0 polls a flag nobody sets, giving up after `GIVE_UP` polls and saying so in `gave_up`;
    /// thread 1 waits for that with a plain load (not a poll, so it is never parked) and then exits.
    pub fn bounded_spin_while_another_runs<'a>(flag: GlobalMut<'a, u32>, gave_up: GlobalMut<'a, u32>) {
        if gpu_std::thread::global_index_x() == 0 {
            let mut polls = 0;
            while flag.get_volatile(0) == 0 && polls < GIVE_UP {
                polls += 1;
            }
            gave_up.set_volatile(0, 1);
        } else {
            while gave_up.get(0) == 0 {}
        }
    }
}

/// Polls before thread 0 of [`bounded_spin_while_another_runs`] gives up.
const GIVE_UP: u32 = 4;

#[test]
fn a_parked_spinner_runs_again_after_the_bound_even_if_its_location_never_changes() {
    let (flag, gave_up) = (emu::buffer("flag", vec![0u32]), emu::buffer("gave_up", vec![0u32]));
    let opts = Options { time_limit: std::time::Duration::from_secs(30), ..Options::default() };
    let o = emu::launch::<bounded_spin_while_another_runs>(
        &LaunchConfig::linear(1, 2, 0),
        &opts,
        (flag.view_mut(), gave_up.view_mut()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(gave_up.to_vec(), [1]);
    // Parked after its second poll, thread 0 ran again only at the bound, once per remaining poll.
    println!("{} steps", o.steps);
    assert!(o.steps > 2 * 65_536, "{} steps", o.steps);
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
