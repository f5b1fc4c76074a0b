//! `bundle`: everything a GPU machine without Rust needs to run the examples and the integration
//! tests, in `.gpu-bundle/`:
//!
//! ```text
//! .gpu-bundle/host                 host runner (built with the `cuda` feature)
//! .gpu-bundle/tests/<test name>    integration test executables (built with the `cuda` feature)
//! .gpu-bundle/ptx/gpu_kernels.ptx  the kernels for sm_90
//! .gpu-bundle/run-gpu.sh           runs `host run all --device gpu`, then every test executable
//! ```

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::build_ptx::{DEFAULT_ARCH, build_ptx};
use crate::cuda;
use crate::flows::{CUDA_FEATURE, PTX_ENV};
use crate::json::{self, Value};
use crate::util::{
    Context, Error, Result, cargo_command, copy_file, create_dir_all, describe, display_path, replace_file,
    run_capture, run_stdout, secs,
};

pub const BUNDLE_DIR: &str = ".gpu-bundle";

const RUN_SCRIPT: &str = r#"#!/usr/bin/env bash
# Runs every example on this machine's GPU (`host run all --device gpu`), then every integration test
# executable, all with the PTX module of this bundle. Needs the NVIDIA driver (libcuda.so.1), no Rust.
# Usage: ./run-gpu.sh [ARGS...]   (ARGS go to the test executables, e.g. a test name filter)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GPU_KERNELS_PTX="$here/ptx/gpu_kernels.ptx"
failed=()
echo "== host run all --device gpu"
"$here/host" run all --device gpu || failed+=("host")
for t in "$here"/tests/*; do
    [ -f "$t" ] && [ -x "$t" ] || continue
    echo "== tests/$(basename "$t")"
    "$t" "$@" || failed+=("tests/$(basename "$t")")
done
if [ "${#failed[@]}" -ne 0 ]; then
    echo "run-gpu.sh: FAILED: ${failed[*]}"
    exit 1
fi
echo "run-gpu.sh: all passed"
"#;

/// A `fetch-libcuda.sh` helper beside the workspace that unpacks a linkable `libcuda.so` on machines
/// without the driver; it prints the directory to use as `CUDA_LIBRARY_PATH`.
fn fetch_libcuda_script(root: &Path) -> PathBuf {
    let script = root.join("..").join("shared").join("tools").join("fetch-libcuda.sh");
    fs::canonicalize(&script).unwrap_or(script)
}

/// `CUDA_LIBRARY_PATH` for the bundle build: the environment's, else the `fetch-libcuda.sh` helper's
/// output, else a link to this machine's driver.
fn cuda_library_path(root: &Path) -> Result<PathBuf> {
    if let Some(dir) = env::var_os("CUDA_LIBRARY_PATH").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let script = fetch_libcuda_script(root);
    if script.is_file() {
        eprintln!("bundle: CUDA_LIBRARY_PATH not set; running {}", script.display());
        let mut cmd = Command::new("bash");
        cmd.current_dir(root).arg(&script).arg(root.join("target").join("cuda-link"));
        let out = run_capture(&mut cmd)?;
        if !out.success() {
            return Err(Error::new(format!(
                "bundle: `{}` failed ({}):\n{}",
                describe(&cmd),
                out.status_text(),
                out.stderr.trim()
            )));
        }
        let dir = out.stdout.lines().rev().find(|l| !l.trim().is_empty()).map(|l| PathBuf::from(l.trim()));
        return dir.ok_or_else(|| Error::new(format!("bundle: `{}` printed no directory", describe(&cmd))));
    }
    if let Some(driver) = cuda::find_driver() {
        return cuda::link_dir_for(root, &driver);
    }
    Err(Error::new(
        "bundle: the host's `cuda` feature links against libcuda.so, and none was found.\n  \
         Set CUDA_LIBRARY_PATH=<dir> where <dir>/lib64/libcuda.so exists: on a machine with the NVIDIA \
         driver, a link to its libcuda.so.1; without one, the library unpacked from a driver package \
         (e.g. Debian's non-free libcuda1).",
    ))
}

/// Executables named in cargo's JSON messages: `(target name, target kinds, path)` of each artifact
/// with an `executable`, keeping test harnesses only when `tests` is true.
fn executables(cargo_stdout: &str, tests: bool) -> Vec<(String, Vec<String>, PathBuf)> {
    cargo_stdout
        .lines()
        .filter_map(|line| json::parse(line).ok())
        .filter(|msg| msg.get("reason").and_then(Value::as_str) == Some("compiler-artifact"))
        .filter(|msg| msg.at(&["profile", "test"]).and_then(Value::as_bool).unwrap_or(false) == tests)
        .filter_map(|msg| {
            let exe = msg.get("executable").and_then(Value::as_str)?;
            let name = msg.at(&["target", "name"]).and_then(Value::as_str)?.to_string();
            let kinds = msg.at(&["target"]).map(|t| t.strings("kind")).unwrap_or_default();
            Some((name, kinds.into_iter().map(String::from).collect(), PathBuf::from(exe)))
        })
        .collect()
}

pub fn bundle(root: &Path) -> Result<()> {
    let start = Instant::now();
    let ptx = build_ptx(root, DEFAULT_ARCH)?;
    let cuda_dir = cuda_library_path(root)?;
    cuda::check_library_path(root, &cuda_dir)?;
    println!("bundle: linking the `{CUDA_FEATURE}` feature with CUDA_LIBRARY_PATH={}", cuda_dir.display());

    let cargo = |args: &[&str]| {
        let mut cmd = cargo_command();
        cmd.current_dir(root)
            .args(args)
            .args(["--features", CUDA_FEATURE, "--message-format=json-render-diagnostics"])
            .env("CUDA_LIBRARY_PATH", &cuda_dir)
            .env(PTX_ENV, &ptx);
        cmd
    };

    let step = Instant::now();
    let host_out = run_stdout(&mut cargo(&["build", "--release", "--package", "host"]))
        .map_err(|e| Error::new(format!("bundle: host build failed: {e}")))?;
    let bins: Vec<_> =
        executables(&host_out, false).into_iter().filter(|(_, kinds, _)| kinds.iter().any(|k| k == "bin")).collect();
    let host_exe = bins
        .iter()
        .find(|(name, _, _)| name == "host")
        .or(if bins.len() == 1 { bins.first() } else { None })
        .map(|(_, _, path)| path.clone())
        .ok_or_else(|| Error::new("bundle: the host build reported no `host` executable"))?;
    println!("bundle: host built in {}", secs(step.elapsed()));

    let step = Instant::now();
    let tests_out = run_stdout(&mut cargo(&[
        "test",
        "--release",
        "--no-run",
        "--package",
        "tests",
        // The GPU tests; the PTX and source checks run where the sources are (CI).
        "--test",
        "examples",
    ]))
    .map_err(|e| Error::new(format!("bundle: test build failed: {e}")))?;
    let tests = executables(&tests_out, true);
    if tests.is_empty() {
        return Err(Error::new("bundle: the test build reported no test executables"));
    }
    println!("bundle: {} test executable(s) built in {}", tests.len(), secs(step.elapsed()));

    let dir = root.join(BUNDLE_DIR);
    if dir.exists() {
        fs::remove_dir_all(&dir).context(|| format!("cannot clear {}", dir.display()))?;
    }
    create_dir_all(&dir)?;
    copy_file(&host_exe, &dir.join("host"))?;
    copy_file(&ptx, &dir.join("ptx").join("gpu_kernels.ptx"))?;
    let mut names: Vec<String> = Vec::new();
    for (name, kinds, path) in &tests {
        // A library's unit tests and an integration test can share a name; keep both.
        let file = if names.contains(name) { format!("{name}-{}", kinds.join("-")) } else { name.clone() };
        copy_file(path, &dir.join("tests").join(&file))?;
        names.push(file);
    }
    replace_file(&dir.join("run-gpu.sh"), RUN_SCRIPT.as_bytes(), true)?;

    println!(
        "bundle: {} ready in {}: host, ptx/gpu_kernels.ptx, run-gpu.sh, tests/{{{}}}",
        display_path(root, &dir),
        secs(start.elapsed()),
        names.join(",")
    );
    println!("bundle: copy it to the GPU machine and run ./run-gpu.sh there");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST_BUILD: &str = concat!(
        r#"{"reason":"compiler-artifact","package_id":"registry+https://github.com/rust-lang/crates.io-index#cust@0.3.2","target":{"kind":["lib"],"name":"cust"},"profile":{"test":false},"filenames":["/w/target/release/deps/libcust.rlib"],"executable":null,"fresh":true}"#,
        "\n",
        r#"{"reason":"compiler-artifact","package_id":"path+file:///w/host#0.1.0","target":{"kind":["bin"],"name":"host"},"profile":{"test":false},"filenames":["/w/target/release/host"],"executable":"/w/target/release/host","fresh":false}"#,
        "\n",
        r#"{"reason":"build-finished","success":true}"#,
        "\n"
    );

    const TEST_BUILD: &str = concat!(
        r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"tests"},"profile":{"test":false},"filenames":["/w/target/release/deps/libtests.rlib"],"executable":null}"#,
        "\n",
        r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"tests"},"profile":{"test":true},"filenames":["/w/target/release/deps/tests-1a"],"executable":"/w/target/release/deps/tests-1a"}"#,
        "\n",
        r#"{"reason":"compiler-artifact","target":{"kind":["test"],"name":"warp_reduce"},"profile":{"test":true},"filenames":["/w/target/release/deps/warp_reduce-2b"],"executable":"/w/target/release/deps/warp_reduce-2b"}"#,
        "\n"
    );

    #[test]
    fn finds_the_host_binary() {
        let bins = executables(HOST_BUILD, false);
        assert_eq!(bins.len(), 1);
        assert_eq!(bins[0].0, "host");
        assert_eq!(bins[0].2, PathBuf::from("/w/target/release/host"));
    }

    #[test]
    fn finds_test_executables_by_target_name() {
        let tests: Vec<_> = executables(TEST_BUILD, true).into_iter().map(|(n, k, _)| (n, k)).collect();
        assert_eq!(
            tests,
            [("tests".to_string(), vec!["lib".to_string()]), ("warp_reduce".to_string(), vec!["test".to_string()])]
        );
    }

    #[test]
    fn run_script_uses_the_bundled_ptx() {
        assert!(RUN_SCRIPT.starts_with("#!/usr/bin/env bash\n"));
        assert!(RUN_SCRIPT.contains(r#"export GPU_KERNELS_PTX="$here/ptx/gpu_kernels.ptx""#));
        assert!(RUN_SCRIPT.contains(r#""$here/host" run all --device gpu"#));
        assert!(RUN_SCRIPT.contains(&format!("export {PTX_ENV}=")));
    }
}
