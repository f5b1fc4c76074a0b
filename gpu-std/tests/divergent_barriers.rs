//! Block barriers that not every thread reaches. A barrier waits only for threads that have not
//! exited (PTX ISA): threads that return before it without touching memory in its interval are fine
//! (a warning, since CUDA C++ calls it undefined). Threads that skip it while they run, or wait at
//! another barrier, are undefined behaviour: on sm_70+ hardware the barrier can release without them.
//! Every case runs under several schedules.

mod common;

use common::{Buf, SEEDS, launch, launch_raw, reports, seed};
use gpu_std::block::sync_threads;
use gpu_std::emu::{EmuError, LaunchConfig};
use gpu_std::thread::{global_index_x, thread_idx};
use gpu_std::{GlobalMut, shared_layout};

shared_layout! {
    /// Test-only: one slot per thread of a 64-thread block.
    pub struct Slots {
        pub v: [u32; 64],
    }
}

/// Threads at or past `active` return at once; the others write their slot, pass a barrier, and copy
/// their neighbour's slot to `out`.
const EARLY_RETURN: u32 = 0;
/// Odd threads wait at one barrier, even threads at another.
const TWO_BARRIERS: u32 = 1;

/// `__syncthreads()` at its own call site.
fn another_barrier() {
    sync_threads();
}

gpu_std::kernel! {
    /// Test-only: the barrier shapes above, chosen by `shape`.
    pub fn barriers<'a>(out: GlobalMut<'a, u32>, active: u32, shape: u32) {
        let s = Slots::view().v;
        let t = thread_idx().x;
        if shape == EARLY_RETURN {
            if t >= active {
                return;
            }
            s.set(t as usize, t + 1);
            sync_threads();
            out.set(global_index_x(), s.get(((t + 1) % active) as usize));
        } else {
            s.set(t as usize, t + 1);
            if t.is_multiple_of(2) {
                sync_threads();
            } else {
                another_barrier();
            }
            out.set(t as usize, s.get(((t + 1) % 64) as usize));
        }
    }
}

#[test]
fn threads_that_return_before_the_barrier_are_not_waited_for() {
    for s in SEEDS {
        let mut out = Buf::new("out", vec![0u32; 128]);
        let cfg = LaunchConfig::linear(2, 64, Slots::BYTES);
        let o = launch::<barriers>(cfg, &seed(s), (out.view_mut(), 40, EARLY_RETURN));
        assert_eq!(o.racy_addresses, 0, "seed {s}: {}", reports(&o));
        let want: Vec<u32> = (0..128).map(|i| i % 64).map(|t| if t < 40 { (t + 1) % 40 + 1 } else { 0 }).collect();
        assert_eq!(out.data, want);
        assert_eq!(o.warnings.len(), 1, "{:?}", o.warnings);
        let w = &o.warnings[0];
        println!("{w}");
        assert_eq!(w.count, 2, "once per block: {w}");
        assert!(w.message.contains("24 thread(s) exited before it without touching memory in its interval"), "{w}");
        assert!(w.message.contains("exited threads do not hold a barrier"), "{w}");
        assert!(
            w.message.contains("an aligned barrier (barrier.sync.aligned), which PTX, like CUDA C++, leaves undefined"),
            "{w}"
        );
        assert!(!w.message.contains("defined in PTX"), "{w}");
    }
}

#[test]
fn threads_at_different_barriers_are_undefined_behaviour() {
    for s in SEEDS {
        let mut out = Buf::new("out", vec![0u32; 64]);
        let cfg = LaunchConfig::linear(1, 64, Slots::BYTES);
        let e = launch_raw::<barriers>(&cfg, &seed(s), (out.view_mut(), 64, TWO_BARRIERS)).unwrap_err();
        let EmuError::Deadlock(d) = e else { panic!("expected a divergence report, got {e}") };
        println!("{}", d.summary);
        assert!(d.summary.contains("barrier divergence in block 0: threads wait at 2 different block barriers"));
        assert!(d.summary.contains("undefined behaviour: on sm_70+ hardware a barrier can release without"));
    }
}

gpu_std::kernel! {
    /// Test-only, one block: odd threads pass a barrier and then raise `flag[0]`; even threads spin on
    /// the flag (bounded) instead of reaching the barrier.
    pub fn spin_instead_of_barrier<'a>(flag: GlobalMut<'a, u32>) {
        if thread_idx().x % 2 == 1 {
            sync_threads();
            flag.set_volatile(0, 1);
        } else {
            let mut spins = 0u32;
            while flag.get_volatile(0) == 0 && spins < 1 << 24 {
                spins += 1;
            }
        }
    }
}

#[test]
fn threads_that_spin_instead_of_reaching_the_barrier_are_named_as_divergence() {
    for s in SEEDS {
        let mut flag = Buf::new("flag", vec![0u32]);
        let opts = gpu_std::emu::Options { poll_limit: 20_000, ..seed(s) };
        let e = launch_raw::<spin_instead_of_barrier>(&LaunchConfig::linear(1, 64, 0), &opts, (flag.view_mut(),))
            .unwrap_err();
        let EmuError::Livelock(l) = &e else { panic!("expected a livelock report, got {e}") };
        println!("{e}");
        assert_eq!(l.divergent_barriers.len(), 1, "{e}");
        let d = &l.divergent_barriers[0];
        assert!(d.contains("in block 0 waits for 32 thread(s) of its block that spin instead of reaching it"), "{d}");
        assert!(d.contains("on sm_70+ hardware the barrier can release without them"), "{d}");
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
