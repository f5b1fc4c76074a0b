//! The builder on kernel crates that are not part of this repository's workspace: a copy of
//! `tests/user-kernels` in a temporary directory, with a standalone manifest whose `gpu-std`
//! dependency points at this checkout.
//!
//! The first run compiles `core` for nvptx (a minute or two); the target directory lives under
//! cargo's `CARGO_TARGET_TMPDIR`, so later runs reuse it.
//!
//! The builder makes rustc run the calling executable as the PTX linker, and a libtest harness would
//! take the linker's command line for test options. So this file has its own `main` (the target sets
//! `harness = false`) that hands over to `gpu_builder::link_if_invoked()` before anything else, as
//! any tool calling the builder must, and prints libtest's lines.

use std::fs;
use std::path::{Path, PathBuf};

use gpu_builder::{BuildError, DEFAULT_TOOLCHAIN, PtxBuilder};

/// This checkout's root.
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("gpu-builder lies in the checkout").to_path_buf()
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("gpu-builder-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// Writes a copy of `tests/user-kernels` into `dir`: its sources, a manifest without workspace
/// inheritance, with its own `[workspace]` table when `own_workspace`, and the checkout's lock file
/// (so the copy resolves `gpu-std`'s dependencies to the versions already fetched).
fn user_kernels_copy(dir: &Path, own_workspace: bool) -> Option<()> {
    let repo = checkout();
    let source = repo.join("tests/user-kernels");
    let gpu_std = repo.join("gpu-std");
    if !source.join("src/lib.rs").is_file() || !gpu_std.join("Cargo.toml").is_file() {
        eprintln!("skipped: tests/user-kernels and gpu-std are not next to this crate");
        return None;
    }
    copy_dir(&source.join("src"), &dir.join("src"));
    let manifest = format!(
        "[package]\nname = \"user-kernels\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [lib]\ncrate-type = [\"rlib\"]\n\n[dependencies]\ngpu-std = {{ path = {:?} }}\n{}",
        gpu_std.display().to_string(),
        if own_workspace { "\n[workspace]\n" } else { "" }
    );
    fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    Some(())
}

/// The kernel builds' shared target directory.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("outside-workspace")
}

fn builds_a_kernel_crate_outside_any_workspace() {
    let tmp = TempDir::new("outside");
    let kernels = tmp.0.join("user-kernels");
    if user_kernels_copy(&kernels, true).is_none() {
        return;
    }
    let module = PtxBuilder::new(&kernels)
        .arch("sm_80")
        .target_dir(target_dir())
        .cargo_directives(false)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));

    let ptx = fs::read_to_string(&*module).unwrap();
    assert!(ptx.contains(".entry saxpy"), "no saxpy kernel in {}", module.display());
    assert!(ptx.contains(".entry block_sum"), "no block_sum kernel in {}", module.display());
    assert!(ptx.contains(".target sm_80"));
    assert_eq!(module.entries(), ["block_sum", "saxpy"]);
    assert_eq!(module.crate_name(), "user_kernels");
    assert_eq!(module.env_var(), "USER_KERNELS_PTX");
    assert!(module.path().starts_with(target_dir()), "{}", module.display());
    // No toolchain file above the temporary directory: the builder's own default.
    assert_eq!(module.toolchain(), DEFAULT_TOOLCHAIN);

    let lines = module.cargo_lines();
    let reruns: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("cargo:rerun-if-changed=")).collect();
    let gpu_std_src = checkout().join("gpu-std").join("src");
    assert!(
        reruns.iter().any(|r| Path::new(r).starts_with(&gpu_std_src) && r.ends_with(".rs")),
        "no gpu-std source among the rerun lines: {reruns:#?}"
    );
    let kernels = fs::canonicalize(&kernels).unwrap();
    for file in ["src/lib.rs", "Cargo.toml", "Cargo.lock"] {
        assert!(reruns.contains(&kernels.join(file).to_str().unwrap()), "{file} missing: {reruns:#?}");
    }
    assert!(!reruns.iter().any(|r| r.contains("/library/core/")), "core's sources are the toolchain's");
    assert!(lines.iter().any(|l| l.starts_with("cargo:rerun-if-env-changed=")), "{lines:#?}");
    assert!(lines.contains(&format!("cargo:rustc-env=USER_KERNELS_PTX={}", module.display())), "{lines:#?}");
}

fn a_kernel_compile_error_names_the_kernel_source_line() {
    let tmp = TempDir::new("broken");
    let kernels = tmp.0.join("broken-kernels");
    if user_kernels_copy(&kernels, true).is_none() {
        return;
    }
    let lib = kernels.join("src/lib.rs");
    let mut source = fs::read_to_string(&lib).unwrap();
    let line = source.lines().count() + 3;
    source.push_str("\npub fn broken() -> u32 {\n    not_defined_anywhere\n}\n");
    fs::write(&lib, source).unwrap();

    let err = PtxBuilder::new(&kernels).target_dir(target_dir()).cargo_directives(false).build().unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, BuildError::Compile { .. }), "{text}");
    assert!(text.contains("cannot find value `not_defined_anywhere`"), "{text}");
    let location = format!("--> {}:{line}:5", fs::canonicalize(&lib).unwrap().display());
    assert!(text.contains(&location), "{location} missing: {text}");
}

fn a_kernel_crate_below_a_foreign_workspace_is_a_clear_error() {
    let tmp = TempDir::new("foreign");
    fs::write(tmp.0.join("Cargo.toml"), "[workspace]\nmembers = []\n").unwrap();
    let kernels = tmp.0.join("kernels");
    if user_kernels_copy(&kernels, false).is_none() {
        return;
    }
    let err = PtxBuilder::new(&kernels).target_dir(target_dir()).cargo_directives(false).build().unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, BuildError::NotInWorkspace { .. }), "{text}");
    assert!(text.contains("`[workspace]` table"), "{text}");
}

type Test = (&'static str, fn());

const TESTS: [Test; 3] = [
    ("builds_a_kernel_crate_outside_any_workspace", builds_a_kernel_crate_outside_any_workspace),
    ("a_kernel_compile_error_names_the_kernel_source_line", a_kernel_compile_error_names_the_kernel_source_line),
    (
        "a_kernel_crate_below_a_foreign_workspace_is_a_clear_error",
        a_kernel_crate_below_a_foreign_workspace_is_a_clear_error,
    ),
];

fn main() -> std::process::ExitCode {
    // Linker mode: rustc started this executable to link a kernel crate.
    gpu_builder::link_if_invoked();
    // Test names on the command line select tests (as with libtest); options are ignored.
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let selected: Vec<&Test> = TESTS
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    println!("\nrunning {} tests", selected.len());
    let mut failed = Vec::new();
    for (name, test) in &selected {
        let ok = std::panic::catch_unwind(test).is_ok();
        println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
        if !ok {
            failed.push(*name);
        }
    }
    let passed = selected.len() - failed.len();
    if !failed.is_empty() {
        println!("\nfailures:");
        for name in &failed {
            println!("    {name}");
        }
    }
    let verdict = if failed.is_empty() { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {verdict}. {passed} passed; {} failed; 0 ignored; 0 measured; {} filtered out\n",
        failed.len(),
        TESTS.len() - selected.len()
    );
    if failed.is_empty() { std::process::ExitCode::SUCCESS } else { std::process::ExitCode::FAILURE }
}
