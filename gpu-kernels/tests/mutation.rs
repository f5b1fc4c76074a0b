//! Mutation testing (`emu::mutation_test`) over chapter kernels: every barrier and atomic of the
//! privatised histogram and the block reduction is needed, and a barrier put where nothing needs it
//! has no effect seen.

use gpu_kernels::{histogram_privatised as hp, reduce_sum as rs};
use gpu_std::block::sync_threads;
use gpu_std::emu::{self, Caught, LaunchConfig, MutationKind, Options, SiteKind, Trial, Verdict};
use gpu_std::thread::global_index_x;
use gpu_std::{Global, Output, PerThread, kernel};

const SEEDS: std::ops::RangeInclusive<u64> = 1..=5;

/// The privatised histogram of `n` bytes on 3 blocks (a partial last one), checked against a count.
fn histogram(opts: &Options) -> Result<Trial, emu::TestError> {
    let n = 1000;
    let data: Vec<u8> = (0..n).map(|i| (i * 7 % 13) as u8).collect();
    let mut want = vec![0u32; 256];
    for &b in &data {
        want[b as usize] += 1;
    }
    let input = emu::buffer("data", data);
    let hist = emu::buffer("hist", vec![0u32; 256]);
    let cfg = LaunchConfig::linear(3, hp::BLOCK, hp::SHARED_BYTES);
    let out = emu::launch::<hp::histogram_privatised>(&cfg, opts, (input.view(), hist.view_mut()))?;
    Ok(Trial::one(out, hist.to_vec() == want))
}

#[test]
fn every_barrier_and_atomic_of_the_privatised_histogram_is_needed() {
    let report = emu::mutation_test(&Options::default(), SEEDS, histogram).expect("clean runs pass");
    println!("{report}");
    let kinds: Vec<SiteKind> = report.mutants.iter().map(|m| m.site.kind).collect();
    assert_eq!(
        kinds,
        [SiteKind::BlockBarrier, SiteKind::Atomic, SiteKind::BlockBarrier, SiteKind::Atomic],
        "the sites in source order: {report}"
    );
    for m in &report.mutants {
        assert!(matches!(m.verdict, Verdict::Needed { .. }), "{} {}: {:?}", m.site, m.mutation.describe(), m.verdict);
    }
    // The first barrier's mutant: the zeroing stores race with the shared-memory atomics.
    assert!(matches!(&report.mutants[0].verdict, Verdict::Needed { how: Caught::Race(_), .. }), "{report}");
    // The atomics made plain lose updates between threads: a race on the bins.
    assert_eq!(report.mutants[1].mutation, MutationKind::PlainReadModifyWrite);
    assert!(
        matches!(&report.mutants[1].verdict, Verdict::Needed { how: Caught::Race(r), .. } if r.contains("bins")),
        "{report}"
    );
}

/// The block reduction of the chapter over 2 blocks, into one float atomic.
fn reduce(opts: &Options) -> Result<Trial, emu::TestError> {
    let n = 300;
    let x = emu::buffer("input", (0..n).map(|i| (i % 5) as f32).collect());
    let out = emu::buffer("output", vec![0.0f32]);
    let cfg = LaunchConfig::linear(2, rs::BLOCK, rs::SHARED_BYTES);
    let o = emu::launch::<rs::reduce_sum>(&cfg, opts, (x.view(), out.view_mut()))?;
    let want: f32 = (0..n).map(|i| (i % 5) as f32).sum();
    Ok(Trial::one(o, out.to_vec()[0] == want))
}

#[test]
fn the_block_reductions_barrier_and_its_atomic_are_needed() {
    let report = emu::mutation_test(&Options::default(), SEEDS, reduce).expect("clean runs pass");
    println!("{report}");
    assert_eq!(report.sites(), 2, "{report}");
    assert_eq!(report.caught(), 2, "{report}");
}

kernel! {
    /// `out[i] = 2 x[i]`, with a barrier nothing needs: each thread reads and writes its own elements.
    pub fn doubled_with_a_spare_barrier<'a>(x: Global<'a, u32>, out: Output<'a, u32, PerThread>) {
        let i = global_index_x();
        let v = if i < x.len() { x.get(i) * 2 } else { 0 };
        sync_threads();
        if let Some(slot) = out.mine() {
            slot.set(v);
        }
    }
}

#[test]
fn a_barrier_nothing_needs_has_no_effect_seen() {
    let report = emu::mutation_test(&Options::default(), SEEDS, |opts| {
        let x = emu::buffer("x", (0..200u32).collect());
        let mut out = emu::buffer("out", vec![0u32; 200]);
        let o = emu::launch::<doubled_with_a_spare_barrier>(
            &LaunchConfig::linear(2, 128, 0),
            opts,
            (x.view(), out.output()),
        )?;
        Ok(Trial::one(o, out.to_vec() == (0..200u32).map(|v| v * 2).collect::<Vec<_>>()))
    })
    .expect("clean runs pass");
    println!("{report}");
    assert_eq!(report.mutants.len(), 1, "{report}");
    assert_eq!(report.mutants[0].verdict, Verdict::NoEffectSeen, "{report}");
    assert!(report.to_string().contains("possibly redundant (not a proof)"), "{report}");
}

#[test]
fn a_racy_clean_run_is_refused_by_name() {
    let err = emu::mutation_test(&Options::default(), 1..=1, |opts| {
        let x = emu::buffer("x", vec![1u8; 64]);
        let total = emu::buffer("total", vec![0u32; 256]);
        let o = emu::launch::<gpu_kernels::lost_update::histogram_racy>(
            &LaunchConfig::linear(1, 64, 0),
            opts,
            (x.view(), total.view_mut()),
        )?;
        Ok(Trial::one(o, true))
    })
    .expect_err("a racy kernel has no clean run");
    assert!(err.contains("seed 1 has races"), "{err}");
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
