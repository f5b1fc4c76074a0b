//! A program that depends on gpu-host pulls in the device crate and the driver bindings, nothing of the
//! chapter and no command-line or serialisation crates.

use std::process::Command;

fn tree(features: &[&str]) -> String {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "-p", "gpu-host", "--edges", "normal", "--prefix", "none"])
        .args(features);
    let out = cmd.output().expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8")
}

fn crates(tree: &str) -> Vec<String> {
    let mut names: Vec<String> = tree.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_library_pulls_in_nothing_of_the_chapter_runner() {
    for features in [&[][..], &["--features", "cuda"][..]] {
        let names = crates(&tree(features));
        assert!(names.iter().any(|n| n == "gpu-std"), "{names:?}");
        for banned in ["gpu-kernels", "host", "clap", "serde", "serde_json", "rand"] {
            assert!(!names.iter().any(|n| n == banned), "gpu-host {features:?} depends on {banned}: {names:?}");
        }
        if features.is_empty() {
            assert!(!names.iter().any(|n| n == "cust"), "cust only with the `cuda` feature: {names:?}");
            // (cust's math types bring `approx` with the `cuda` feature; the runner's own use of it stays out.)
            assert!(!names.iter().any(|n| n == "approx"), "{names:?}");
        } else {
            assert!(names.iter().any(|n| n == "cust"), "{names:?}");
        }
    }
}
