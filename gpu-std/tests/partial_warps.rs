//! Full-mask warp collectives in a partial warp, or after some lanes exited: the PTX ISA says
//! `shfl.sync`, `vote.sync` and `bar.warp.sync` wait only for the non-exited threads of the mask, so
//! they complete. A value read from an absent or exited lane is undefined: a warning, with `POISON`;
//! nothing is reported where no such value is read. Every case runs under several schedules.

mod common;

use common::{Buf, SEEDS, launch, seed};
use gpu_std::GlobalMut;
use gpu_std::emu::{LaunchConfig, POISON};
use gpu_std::thread::thread_idx;
use gpu_std::warp::{FULL_MASK, ballot, shfl_xor, sync_warp};

gpu_std::kernel! {
    /// Test-only: every thread takes a full-mask ballot of `t % 2 == 0`, then a full-mask warp
    /// barrier, and writes the ballot to `votes[t]`; with `shuffle != 0` it also writes the full-mask
    /// `shfl_down` by 2 of `t` to `shuffled[t]`. Threads below `exit_below` return first.
    pub fn full_mask<'a>(votes: GlobalMut<'a, u32>, shuffled: GlobalMut<'a, u32>, exit_below: u32, shuffle: u32) {
        let t = thread_idx().x;
        if t < exit_below {
            return;
        }
        let v = ballot(FULL_MASK, t.is_multiple_of(2));
        sync_warp(FULL_MASK);
        votes.set(t as usize, v);
        if shuffle != 0 {
            shuffled.set(t as usize, shfl_xor(FULL_MASK, t, 16));
        }
    }
}

fn run(threads: u32, exit_below: u32, shuffle: u32, s: u64) -> (gpu_std::emu::Outcome, Vec<u32>, Vec<u32>) {
    let mut votes = Buf::new("votes", vec![0u32; threads as usize]);
    let mut shuffled = Buf::new("shuffled", vec![0u32; threads as usize]);
    let args = (votes.view_mut(), shuffled.view_mut(), exit_below, shuffle);
    let o = launch::<full_mask>(LaunchConfig::linear(1, threads, 0), &seed(s), args);
    (o, votes.data.clone(), shuffled.data.clone())
}

#[test]
fn full_mask_collectives_in_a_partial_warp_complete_without_a_report() {
    for s in SEEDS {
        // 100 threads: the last warp has lanes 96..100 only.
        let (o, votes, _) = run(100, 0, 0, s);
        assert!(o.warnings.is_empty() && o.racy_addresses == 0, "seed {s}: {:?}", o.warnings);
        assert_eq!(votes[96..], [0b0101; 4], "the ballot of the 4-lane warp has only its lanes' bits");
        assert_eq!(votes[0], 0x5555_5555);
    }
}

#[test]
fn full_mask_ballot_after_lanes_exited_counts_the_others_only() {
    for s in SEEDS {
        let (o, votes, _) = run(32, 16, 0, s);
        assert!(o.warnings.is_empty(), "seed {s}: {:?}", o.warnings);
        assert_eq!(votes[16..], [0x5555_0000; 16]);
    }
}

#[test]
fn a_value_read_from_an_absent_or_exited_lane_is_a_warning_with_poison() {
    for s in SEEDS {
        let (o, _, shuffled) = run(100, 0, 1, s);
        assert_eq!(shuffled[96..], [POISON; 4], "lanes 0..4 of the last warp read lanes 16..20, which do not exist");
        let want: Vec<u32> = (0..96).map(|t| t ^ 16).collect();
        assert_eq!(shuffled[..96], want[..]);
        assert_eq!(o.warnings.len(), 1, "{:?}", o.warnings);
        let w = &o.warnings[0];
        println!("{w}");
        assert_eq!(w.count, 4, "{w}");
        assert!(w.message.contains("shfl.sync.bfly at "), "{w}");
        assert!(
            w.message.contains("block 0 thread 96 (lane 0) reads lane 16, which does not exist (the warp has 4 lanes)"),
            "{w}"
        );
        assert!(w.message.contains("undefined on a GPU, and the emulator gives it 0xdeadbeef"), "{w}");

        let (o, _, shuffled) = run(32, 16, 1, s);
        assert_eq!(shuffled[16..], [POISON; 16]);
        assert_eq!(o.warnings.len(), 1, "{:?}", o.warnings);
        assert_eq!(o.warnings[0].count, 16);
        assert!(
            o.warnings[0].message.contains("thread 16 (lane 16) reads lane 0, which has exited"),
            "{}",
            o.warnings[0]
        );
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
