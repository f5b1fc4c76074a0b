//! Every example against its CPU reference: on the emulator always, on the GPU when one is present.

use gpu_host::Device;
use host::examples::{self, RunParams};
use host::run::run_one;
use tests::gpu_or_skip;

fn emu() -> Device {
    Device::emulator(Default::default())
}

fn run_sizes(dev: &Device, name: &str, sizes: &[usize]) {
    let ex = examples::find(name).expect("example exists");
    for &n in sizes {
        let r = run_one(dev, ex, &RunParams { n, seed: 42, reps: 0 });
        assert!(
            r.pass,
            "{name} n={n} on {} failed:\n  {}\n  {}",
            dev.kind(),
            r.details.join("\n  "),
            r.race_reports.join("\n")
        );
        assert!(!r.details.is_empty(), "{name} n={n}: nothing was checked");
        // Examples that keep a chapter bug next to its fix count the bug's races; the others have none.
        if !ex.keeps_races {
            assert_eq!(r.races, 0, "{name} n={n}: races reported: {:?}", r.race_reports);
        }
        println!("{name} n={n} on {}: PASS ({} checks)", dev.kind(), r.details.len());
    }
}

fn on_emulator(name: &str) {
    let ex = examples::find(name).expect("example exists");
    run_sizes(&emu(), name, ex.emu_sizes);
}

fn on_gpu(name: &str) {
    let test = format!("{name} on GPU");
    let Some(dev) = gpu_or_skip(&test) else { return };
    if name == "multi_gpu" {
        let found = Device::gpu_count().expect("cuDeviceGetCount");
        if found < 2 {
            // Visible in every test run, like the skip without a GPU.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{test}: skipped: needs two CUDA devices (found {found})");
            return;
        }
    }
    let ex = examples::find(name).expect("example exists");
    run_sizes(&dev, name, ex.gpu_sizes);
}

/// One emulator test and one GPU test per example, for every example of the registry
/// (`host::for_each_example!`), so a new example has its tests without a line here.
macro_rules! example_tests {
    ($($name:ident),* $(,)?) => {
        mod emulator {
            $(#[test] fn $name() { super::on_emulator(stringify!($name)); })*
        }
        mod gpu {
            $(#[test] fn $name() { super::on_gpu(stringify!($name)); })*
        }
    };
}
host::for_each_example!(example_tests);

#[test]
fn every_kernel_module_is_an_example() {
    // A module of gpu-kernels (`pub mod name;` in its lib.rs) holds one example's kernels, named
    // like the example; one that no example runs would be built and shipped but never checked.
    let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../gpu-kernels/src/lib.rs"))
        .expect("gpu-kernels/src/lib.rs");
    let modules: Vec<&str> = lib.lines().filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';')).collect();
    assert!(modules.len() > 10, "no `pub mod` read from gpu-kernels/src/lib.rs: {modules:?}");
    for m in modules {
        assert!(
            examples::find(m).is_some(),
            "gpu-kernels module `{m}` is no example: add it to host::for_each_example!"
        );
    }
}

#[test]
fn every_example_file_is_registered() {
    // A runner file that declares its `EXAMPLE` but has no `pub mod` line in the registry would not
    // even be compiled.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../host/src/examples");
    let mut found = 0;
    for entry in std::fs::read_dir(dir).expect("host/src/examples") {
        let path = entry.expect("a directory entry").path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.contains("pub const EXAMPLE: Example = ") {
            let name = path.file_stem().and_then(|s| s.to_str()).expect("a file name");
            assert!(examples::find(name).is_some(), "{name}.rs declares an EXAMPLE but is not in the registry");
            found += 1;
        }
    }
    assert_eq!(found, examples::ALL.len(), "every example has its own file");
}

#[test]
fn every_catalogue_row_is_an_example() {
    // Rows 1..=18 of the chapter's catalogue, each once, in order, each with its section; then rows
    // beyond the catalogue (19 on), each once, in order.
    let rows: Vec<u32> = examples::ALL.iter().filter_map(|e| e.row).collect();
    assert_eq!(rows[..18], (1..=18).collect::<Vec<u32>>());
    assert!(rows[18..].windows(2).all(|w| w[0] < w[1]) && rows[18..].iter().all(|&r| r > 18), "{rows:?}");
    for e in examples::ALL {
        assert!(!e.section.is_empty() && !e.about.is_empty(), "{}: no section or description", e.name);
        for sizes in [e.gpu_sizes, e.emu_sizes] {
            assert!(sizes.contains(&1) && sizes.contains(&257), "{}: sizes {sizes:?} miss the edge cases", e.name);
        }
    }
}

#[test]
fn reduce_sum_seed_case_emulator() {
    // The seed: 2^20 ones sum to exactly 2^20.
    run_sizes(&emu(), "reduce_sum", &[1 << 20]);
}

#[test]
fn clean_examples_stay_clean_under_other_schedules() {
    for s in [2u64, 3] {
        let opts = gpu_std::emu::Options { schedule_seed: s, ..Default::default() };
        let dev = Device::emulator(opts);
        for name in ["warp_reduce", "reduce_sum", "histogram_privatised", "primitives", "running_max", "sync_variants"]
        {
            run_sizes(&dev, name, &[1000]);
        }
    }
}

#[test]
fn bad_sizes_are_clear_errors() {
    let dev = emu();
    for ex in examples::ALL {
        let name = ex.name;
        let r = run_one(&dev, ex, &RunParams { n: 0, seed: 1, reps: 0 });
        assert!(!r.pass);
        assert!(r.details.iter().any(|d| d.contains("n must be at least 1")), "{name}: {:?}", r.details);
        let r = run_one(&dev, ex, &RunParams { n: usize::MAX / 2, seed: 1, reps: 0 });
        assert!(!r.pass);
        assert!(r.details.iter().any(|d| d.contains("too large")), "{name}: {:?}", r.details);
    }
}

#[test]
fn sizes_an_example_cannot_run_are_skips_with_the_reason() {
    let dev = emu();
    let max_tour = host::examples::atomic_tour::MAX_N;
    let max_prim = host::examples::primitives::MAX_ATOMIC_THREADS;
    for (name, n, why) in [
        ("grid_sync", 4097, "co-resident"),
        ("atomic_tour", max_tour + 1, "contend for one cell"),
        ("primitives", max_prim + 1, "threads of the atomic checks"),
    ] {
        let ex = examples::find(name).expect("example exists");
        let r = run_one(&dev, ex, &RunParams { n, seed: 1, reps: 0 });
        let reason = r.skipped.as_deref().unwrap_or_else(|| panic!("{name} n={n} is not a skip: {:?}", r.details));
        assert!(r.pass && r.verdict() == "SKIP", "{name}: {:?}", r.details);
        assert!(reason.contains(&format!("n = {n}")) && reason.contains(why), "{name}: {reason}");
    }
    // The largest size each can run still runs.
    let r = run_one(&dev, examples::find("grid_sync").expect("grid_sync"), &RunParams { n: 4096, seed: 1, reps: 0 });
    assert!(r.pass && r.skipped.is_none(), "{:?}", r.details);
}

#[test]
fn unknown_example_lists_known_ones() {
    let e = host::run::select(&["nope".to_string()]).err().expect("error");
    let m = e.to_string();
    assert!(m.contains("unknown example `nope`") && m.contains("reduce_sum"), "{m}");
}
