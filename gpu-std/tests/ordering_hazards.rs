//! Ordering hazards: conflicting volatile accesses of shared memory that causality order does not
//! order. No data race under PTX (volatile accesses are strong), but the value a read sees depends on
//! the schedule: the legacy warp-synchronous reduction over volatile shared memory without
//! `__syncwarp()` computes a wrong sum on some schedules, and the emulator says why.

mod common;

use common::{Buf, launch, reports, seed};
use gpu_std::emu::{LaunchConfig, Options};
use gpu_std::shared::dynamic;
use gpu_std::thread::thread_idx;
use gpu_std::warp::sync_warp;
use gpu_std::{Block, GlobalMut};

/// The legacy warp-synchronous reduction: `s[t] += s[t + k]` over volatile shared memory, no
/// `__syncwarp()`.
const LEGACY: u32 = 0;
/// The same with each step read into a register, `__syncwarp()`, then written, `__syncwarp()`.
const SYNCWARP: u32 = 1;
/// Every lane adds its value to `s[0]` with a block-scope atomic: a counter, quiet by design.
const ATOMIC_COUNTER: u32 = 2;

gpu_std::kernel! {
    /// Test-only: one warp sums 64 values of `x` through 64 words of shared memory, as `how` says,
    /// into `out[0]`.
    pub fn warp_sum<'a>(x: GlobalMut<'a, u32>, out: GlobalMut<'a, u32>, how: u32) {
        let s = dynamic::<u32>();
        let t = thread_idx().x as usize;
        if how == ATOMIC_COUNTER {
            if t == 0 {
                s.set(0, 0);
            }
            sync_warp(u32::MAX);
            s.atomic_scoped::<Block>(0).fetch_add(x.get(t) + x.get(t + 32));
            sync_warp(u32::MAX);
            if t == 0 {
                out.set(0, s.get(0));
            }
            return;
        }
        s.set_volatile(t, x.get(t) + x.get(t + 32));
        sync_warp(u32::MAX);
        for k in [16, 8, 4, 2, 1] {
            if how == LEGACY {
                s.set_volatile(t, s.get_volatile(t) + s.get_volatile(t + k));
            } else {
                let v = s.get_volatile(t) + s.get_volatile(t + k);
                sync_warp(u32::MAX);
                s.set_volatile(t, v);
                sync_warp(u32::MAX);
            }
        }
        if t == 0 {
            out.set(0, s.get_volatile(0));
        }
    }
}

fn run(how: u32, opts: &Options) -> (gpu_std::emu::Outcome, u32) {
    let mut x = Buf::new("x", (1..=64).collect::<Vec<u32>>());
    let mut out = Buf::new("out", vec![0u32]);
    let o = launch::<warp_sum>(LaunchConfig::linear(1, 32, 64 * 4), opts, (x.view_mut(), out.view_mut(), how));
    (o, out.data[0])
}

#[test]
fn the_warp_synchronous_idiom_without_syncwarp_is_an_ordering_hazard() {
    let mut wrong = 0;
    for s in 1..=5 {
        let (o, sum) = run(LEGACY, &seed(s));
        wrong += (sum != 2080) as usize;
        assert!(o.races.is_empty(), "seed {s}: volatile accesses are no data race: {}", reports(&o));
        assert!(o.hazard_addresses > 0, "seed {s}: the hazard is reported (sum {sum})");
        let h = &o.hazards[0];
        assert!(h.hazard && h.to_string().starts_with("ordering hazard in kernel `warp_sum` on shared memory"), "{h}");
        assert!(h.why.contains("ordering hazard") && h.why.contains("add __syncwarp() between them"), "{h}");
        let kinds = [h.first.kind, h.second.kind];
        assert!(kinds.contains(&"volatile write"), "{h}");
        if s == 1 {
            println!("{h}");
        }
    }
    // What the hazard costs: the sum is wrong on some schedules.
    assert!(wrong > 0, "the legacy idiom computed 2080 on every seed");
    // On request, hazards are races.
    let (o, _) = run(LEGACY, &Options { hazards_are_races: true, ..seed(1) });
    assert!(o.racy_addresses > 0 && o.hazards.is_empty(), "{}", reports(&o));
    assert!(o.races[0].hazard && o.races[0].why.contains("ordering hazard"), "{}", o.races[0]);
}

#[test]
fn with_syncwarp_and_for_an_atomic_counter_nothing_is_reported() {
    for s in 1..=5 {
        for how in [SYNCWARP, ATOMIC_COUNTER] {
            let (o, sum) = run(how, &seed(s));
            assert_eq!(sum, 2080, "how {how}, seed {s}");
            assert!(o.races.is_empty() && o.hazards.is_empty(), "how {how}, seed {s}: {}", reports(&o));
        }
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
