//! The project template, used as a user would: copied to a directory outside this repository, its path
//! dependencies pointed at this checkout, then `cargo test` (the kernels on the emulator, the race in the
//! variant reported), `cargo build` (the PTX built by `build.rs`, with both kernels' entries) and
//! `cargo run` (no GPU here: the emulator, and the right result), and `cargo build --features cuda`
//! where no libcuda.so can be found (one message saying what to set and how to get one). Runs with
//! the machine's default toolchain, as a user's project would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("checkout")
}

/// Copies `from` into `to`, skipping build output.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read template") {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

/// Points the template's path dependencies (`../../../<crate>` from a member, `../../<crate>` from
/// the template's root) at this checkout.
fn repoint(manifest: &Path, up: &str, root: &Path) {
    let text = std::fs::read_to_string(manifest).expect("manifest");
    let text = text.replace(&format!("\"{up}"), &format!("\"{}/", root.display()));
    std::fs::write(manifest, text).expect("write manifest");
}

/// `cargo ARGS` in `dir` with the environment a user's shell would have: nothing of this build.
fn cargo(dir: &Path, args: &[&str]) -> Output {
    let out = cargo_command(dir, args).output().expect("cargo runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "`cargo {}` in {} failed:\n{text}", args.join(" "), dir.display());
    out
}

fn cargo_command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(dir).args(args);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let from_this_build = key.starts_with("CARGO_") && key != "CARGO_HOME"
            || key.starts_with("RUSTC")
            || key.starts_with("RUSTDOC")
            || matches!(key.as_str(), "CARGO" | "RUSTFLAGS" | "RUSTUP_TOOLCHAIN" | "OUT_DIR" | "TARGET" | "HOST");
        if from_this_build {
            cmd.env_remove(&key);
        }
    }
    cmd
}

fn ptx_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            ptx_files(&p, found);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            found.push(p);
        }
    }
}

#[test]
fn the_template_works_outside_the_repository() {
    let root = checkout();
    let dir = std::env::temp_dir().join(format!("kernel-project-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&root.join("templates/kernel-project"), &dir);
    repoint(&dir.join("kernels/Cargo.toml"), "../../../", &root);
    repoint(&dir.join("app/Cargo.toml"), "../../../", &root);
    repoint(&dir.join("Cargo.toml"), "../../", &root);
    assert!(!dir.starts_with(&root), "the copy must lie outside the repository");

    let version = cargo(&dir, &["--version"]);
    println!("template on {}", String::from_utf8_lossy(&version.stdout).trim());

    let test = cargo(&dir, &["test"]);
    let text = format!("{}{}", String::from_utf8_lossy(&test.stdout), String::from_utf8_lossy(&test.stderr));
    assert!(text.contains("test dot_is_exact_and_race_free ... ok"), "{text}");
    assert!(text.contains("test the_missing_barrier_is_reported ... ok"), "{text}");

    cargo(&dir, &["build"]);
    let mut found = Vec::new();
    ptx_files(&dir.join("target/debug/build"), &mut found);
    let module = found.iter().find(|p| p.file_name().is_some_and(|n| n == "kernels.ptx")).unwrap_or_else(|| {
        panic!("build.rs wrote no kernels.ptx under target/debug/build: {found:?}");
    });
    let ptx = std::fs::read_to_string(module).expect("read PTX");
    for entry in [".entry dot(", ".entry dot_missing_barrier("] {
        assert!(ptx.contains(entry), "{} lacks `{entry}`", module.display());
    }

    let run = cargo(&dir, &["run", "--", "100003", "emu"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    println!("{stdout}");
    assert!(stdout.contains("device: CPU SIMT emulator"), "{stdout}");
    assert!(stdout.contains("dot of 100003 elements on emu") && stdout.contains("PASS"), "{stdout}");
    let auto = cargo(&dir, &["run", "--", "4099"]);
    let stdout = String::from_utf8_lossy(&auto.stdout);
    assert!(stdout.contains("no CUDA GPU available") && stdout.contains("PASS"), "{stdout}");

    cuda_feature_without_libcuda(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where no libcuda.so can be found (no `CUDA_LIBRARY_PATH`, no toolkit, no driver), building with
/// `--features cuda` stops with one message: what to set and the command that gets the library.
fn cuda_feature_without_libcuda(dir: &Path) {
    let search = find_cuda_helper::search::Search::from_env();
    if std::env::var_os("CUDA_LIBRARY_PATH").is_none() && !search.link_dirs().is_empty()
        || find_cuda_helper::search::find_driver().is_some()
    {
        println!("skipped: `--features cuda` without libcuda.so (this machine has a CUDA toolkit or driver)");
        return;
    }
    let mut cmd = cargo_command(dir, &["build", "--features", "cuda"]);
    cmd.env_remove("CUDA_LIBRARY_PATH");
    let out = cmd.output().expect("cargo runs");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the build must stop without a libcuda.so:\n{text}");
    for needle in [
        "CUDA_LIBRARY_PATH is not set",
        "Set CUDA_LIBRARY_PATH to a directory DIR that holds DIR/lib64/libcuda.so",
        "export CUDA_LIBRARY_PATH=$(bash ",
        "gpu-host/scripts/fetch-libcuda.sh",
        "libcuda.so.1 of the machine it runs on",
    ] {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }
    assert!(!text.contains("Could not find a cuda installation"), "the bare message of the original helper:\n{text}");
}
