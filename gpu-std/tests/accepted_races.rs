//! Races a program declares intended (`Options::accepted_races`): counted against their declaration in
//! `Outcome::accepted` instead of reported, by buffer and optionally by the site of one access; a
//! declaration nothing matched is listed with no address; races it does not match are still reported.

use gpu_std::emu::{self, AcceptedRace, LaunchConfig, Options, Outcome};
use gpu_std::thread::global_index_x;
use gpu_std::{GlobalMut, Output, kernel};

kernel! {
    /// Every thread sets `done[0] = 1` with a plain store (a same-value flag: a data race under PTX,
    /// harmless in practice) and writes its own element of `out`; threads 0 of each block also add
    /// one to `count[0]` with a plain load and store, a race that loses updates.
    pub fn flag_and_count<'a>(done: GlobalMut<'a, u32>, count: GlobalMut<'a, u32>, out: Output<'a, u32>) {
        done.set(0, 1);
        if let Some(o) = out.mine() {
            o.set(global_index_x() as u32);
        }
        if gpu_std::thread::thread_idx().x == 0 {
            count.set(0, count.get(0) + 1);
        }
    }
}

/// The line of `done.set(0, 1)` above.
const FLAG_LINE: &str = "accepted_races.rs:14";

fn launch(accepted: Vec<AcceptedRace>) -> Outcome {
    let done = emu::buffer("done", vec![0u32]);
    let count = emu::buffer("count", vec![0u32]);
    let mut out = emu::buffer("out", vec![0u32; 128]);
    let opts = Options { accepted_races: accepted, ..Options::default() };
    emu::launch::<flag_and_count>(
        &LaunchConfig::linear(2, 64, 0),
        &opts,
        (done.view_mut(), count.view_mut(), out.output()),
    )
    .expect("the launch completes")
}

fn racy_buffers(o: &Outcome) -> Vec<&str> {
    let mut b: Vec<&str> = o.races.iter().map(|r| r.buffer.as_str()).collect();
    b.sort();
    b.dedup();
    b
}

#[test]
fn without_a_declaration_both_races_are_reported() {
    let o = launch(vec![]);
    assert_eq!(racy_buffers(&o), ["count", "done"], "{:?}", o.races);
    assert_eq!(o.racy_addresses, 2);
    assert!(o.accepted.is_empty());
}

#[test]
fn a_race_accepted_by_buffer_is_counted_not_reported_and_the_other_stays() {
    let o = launch(vec![AcceptedRace::on("done", "every thread sets the same flag")]);
    assert_eq!(racy_buffers(&o), ["count"], "{:?}", o.races);
    assert_eq!(o.racy_addresses, 1);
    assert_eq!(o.accepted.len(), 1);
    assert_eq!(o.accepted[0].addresses, 1);
    let first = o.accepted[0].first.as_ref().expect("the first accepted race, in full");
    assert_eq!(first.buffer, "done");
    assert!(first.first.site.contains(FLAG_LINE) && first.second.site.contains(FLAG_LINE), "{first}");
    let shown = o.accepted[0].to_string();
    assert!(shown.starts_with("accepted race on `done` (every thread sets the same flag): 1 address(es)"), "{shown}");
}

#[test]
fn a_declaration_by_site_matches_that_line_only() {
    let o = launch(vec![AcceptedRace::on("done", "same-value flag").at(FLAG_LINE)]);
    assert_eq!(o.accepted[0].addresses, 1, "{}", o.accepted[0]);
    assert_eq!(racy_buffers(&o), ["count"]);
    // Another line of the file: the race on `done` is reported, and the declaration was not seen.
    let o = launch(vec![AcceptedRace::on("done", "same-value flag").at("accepted_races.rs:15")]);
    assert_eq!(racy_buffers(&o), ["count", "done"]);
    assert_eq!(o.accepted[0].addresses, 0);
    assert!(o.accepted[0].to_string().ends_with("not seen in this run"), "{}", o.accepted[0]);
    // The end of a file name is not a file: `races.rs:14` does not match `accepted_races.rs:14`.
    let o = launch(vec![AcceptedRace::on("done", "same-value flag").at("races.rs:14")]);
    assert_eq!(o.accepted[0].addresses, 0);
}

#[test]
fn a_declared_race_that_no_longer_happens_is_listed() {
    let o = launch(vec![AcceptedRace::on("out", "was racy before the fix")]);
    assert_eq!(o.racy_addresses, 2);
    assert_eq!(o.accepted.len(), 1);
    assert_eq!((o.accepted[0].addresses, o.accepted[0].first.is_none()), (0, true));
}

#[test]
fn the_docs_declaration_compiles_as_shown() {
    let shown = r#"use gpu_std::emu::{AcceptedRace, Options};
let opts = Options {
    accepted_races: vec![AcceptedRace::on("done", "every thread sets the same flag").at("flags.rs:42")],
    ..Options::default()
};"#;
    assert!(include_str!("../../docs/emulator.md").contains(shown), "docs/emulator.md shows another declaration");
    let opts = Options {
        accepted_races: vec![AcceptedRace::on("done", "every thread sets the same flag").at("flags.rs:42")],
        ..Options::default()
    };
    assert_eq!(opts.accepted_races[0].site.as_deref(), Some("flags.rs:42"));
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
