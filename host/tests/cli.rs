//! The `host` command line: errors are one clear line and a non-zero exit, never a panic.

use std::process::Command;

fn host(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_host")).args(args).output().expect("run host");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

#[test]
fn list_names_every_example_with_its_row_and_section() {
    let (code, out, _) = host(&["list"]);
    assert_eq!(code, 0);
    for e in host::examples::ALL {
        let line = out.lines().find(|l| l.split_whitespace().nth(1) == Some(e.name)).unwrap_or_else(|| panic!("{out}"));
        assert!(line.contains(e.section), "{line}");
        let row = e.row.map_or("-".to_string(), |r| r.to_string());
        assert_eq!(line.split_whitespace().next(), Some(row.as_str()), "{line}");
    }
    assert_eq!(out.lines().count(), host::examples::ALL.len() + 1, "{out}");
}

#[test]
fn run_runs_exactly_the_named_examples() {
    let (code, out, err) = host(&["run", "warp_reduce", "stencil", "--n", "33", "--device", "emu", "--json"]);
    assert_eq!(code, 0, "{err}");
    let names: Vec<&str> =
        out.lines().map(|l| l.split("\"example\":\"").nth(1).and_then(|x| x.split('"').next()).unwrap_or("")).collect();
    assert_eq!(names, ["warp_reduce", "stencil"], "{out}");
}

#[test]
fn bad_input_is_one_clear_error() {
    let (code, _, err) = host(&["run", "nope"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("invalid value 'nope'") && err.contains("possible values: stencil, warp_reduce"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let (code, _, err) = host(&["run", "all", "--n", "abc"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'abc' for '--n <N>'"), "{err}");
    let (code, _, err) = host(&["run", "all", "--device", "tpu"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'tpu' for '--device <D>'"), "{err}");
}

#[test]
fn a_misspelt_example_gets_a_suggestion() {
    let (code, _, err) = host(&["run", "warp_reduc"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a similar value exists: 'warp_reduce'"), "{err}");
}

#[test]
fn options_take_their_value_with_or_without_equals() {
    for args in
        [&["run", "warp_reduce", "--n=33", "--device=emu"][..], &["run", "warp_reduce", "--n", "33", "--device", "emu"]]
    {
        let (code, out, err) = host(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.contains("warp_reduce") && out.contains(" 33 ") && out.contains("PASS"), "{out}");
    }
}

#[test]
fn every_subcommand_has_its_help() {
    let (code, out, _) = host(&["run", "--help"]);
    assert_eq!(code, 0);
    for opt in
        ["--n <N>", "--seed <S>", "--device <D>", "--json", "--schedule-seed <S>", "--schedules <K>", "--reps <R>"]
    {
        assert!(out.contains(opt), "{opt} missing in run --help:\n{out}");
    }
    let (code, out, _) = host(&["list", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("List the examples"), "{out}");
}

#[test]
fn zero_size_fails_the_row_and_the_exit_code() {
    let (code, out, _) = host(&["run", "reduce_sum", "--n", "0", "--device", "emu"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL") && out.contains("n must be at least 1"), "{out}");
}

#[test]
fn json_has_the_documented_fields() {
    let (code, out, err) = host(&["run", "reduce_sum", "--n", "1000", "--device", "emu", "--json"]);
    assert_eq!(code, 0, "{err}");
    let line = out.lines().next().expect("one line");
    for f in [
        "\"example\":\"reduce_sum\"",
        "\"device\":\"emu\"",
        "\"n\":1000",
        "\"seed\":42",
        "\"schedule_seed\":1",
        "\"result\":\"PASS\"",
        "\"time_ms\":null",
        "\"gbps\":null",
        "\"races\":0",
        "\"deadlocks\":0",
    ] {
        assert!(line.contains(f), "{f} missing in {line}");
    }
}

#[test]
fn auto_without_gpu_says_so() {
    // On a machine without a CUDA driver (or a build without the `cuda` feature), auto falls back to
    // the emulator and says why in one line.
    let (code, _, err) = host(&["run", "warp_reduce", "--n", "33", "--device", "auto"]);
    assert_eq!(code, 0, "{err}");
    if err.contains("device: CPU SIMT emulator") {
        assert!(err.contains("no CUDA GPU available"), "{err}");
    }
}

#[test]
fn schedules_run_each_example_once_per_schedule_seed() {
    let (code, out, err) = host(&["run", "lost_update", "--n", "64", "--device", "emu", "--schedules", "3", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 3, "{out}");
    for s in ["schedule seed 1", "schedule seed 2", "schedule seed 3"] {
        assert!(err.contains(s), "{err}");
    }
    for line in out.lines() {
        assert!(line.contains("\"result\":\"PASS\"") && !line.contains("\"races\":0,"), "{line}");
    }
}
