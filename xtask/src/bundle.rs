//! `bundle`: everything a GPU machine without Rust needs to run the examples and the integration
//! tests, in `.gpu-bundle/`:
//!
//! ```text
//! .gpu-bundle/host                  host runner (built with the `cuda` feature)
//! .gpu-bundle/plans                 gpu-algos' launches on this GPU, for `bench/algos.cu`
//! .gpu-bundle/sort_bench            gpu-algos' sort timed on this GPU, beside `bench/sort.cu`
//! .gpu-bundle/tests/<test name>     the integration tests with GPU cases (`GPU_TESTS`)
//!                                   (built with the `cuda` feature)
//! .gpu-bundle/ptx/<crate_name>.ptx  every kernel crate's module for sm_90 (gpu_kernels, user_kernels)
//! .gpu-bundle/run-gpu.sh            runs `host run all --device gpu`, then every test executable
//! ```
//!
//! The `cuda` feature links against `libcuda.so`: `CUDA_LIBRARY_PATH` names a directory with
//! `lib64/libcuda.so`, else this machine's driver is used; without a driver,
//! `gpu-host/scripts/fetch-libcuda.sh` unpacks one from Debian's `libcuda1` package.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::build_ptx::{DEFAULT_ARCH, build_ptx};
use crate::cuda;
use crate::flows::CUDA_FEATURE;
use crate::util::{
    Context, Error, Result, cargo_command, copy_file, create_dir_all, display_path, replace_file, run_stdout, secs,
};
use crate::workspace::Workspace;
use gpu_builder::json::{self, Value};

pub const BUNDLE_DIR: &str = ".gpu-bundle";

/// The integration tests of the `tests` package that run on the GPU: every example, and the user
/// crate's kernels. (The PTX and source checks run where the sources are.)
const GPU_TESTS: [&str; 12] = [
    "examples",
    "algos_gpu",
    "sort_gpu",
    "user_kernels",
    "shfl_table",
    "mask_check",
    "output_views",
    "gpu_open",
    "system_scope",
    "multi_gpu",
    "corpus",
    "sequence_unwind",
];

/// The helper that unpacks a linkable `libcuda.so` on a machine without the NVIDIA driver.
pub const FETCH_LIBCUDA: &str = "gpu-host/scripts/fetch-libcuda.sh";

const RUN_SCRIPT: &str = r#"#!/usr/bin/env bash
# Runs every example on this machine's GPU (`host run all --device gpu`), then every integration test
# executable, all with the PTX modules of this bundle. Needs the NVIDIA driver (libcuda.so.1), no Rust.
# Usage: ./run-gpu.sh [ARGS...]   (ARGS go to the test executables, e.g. a test name filter)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# ptx/gpu_kernels.ptx -> GPU_KERNELS_PTX, ptx/user_kernels.ptx -> USER_KERNELS_PTX, ...
for ptx in "$here"/ptx/*.ptx; do
    name="$(basename "$ptx" .ptx)"
    export "${name^^}_PTX=$ptx"
done
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

/// `CUDA_LIBRARY_PATH` for the bundle build: the environment's, else a link to this machine's
/// driver; without either, an error that says how to get a linkable `libcuda.so`.
fn cuda_library_path(root: &Path) -> Result<PathBuf> {
    if let Some(dir) = env::var_os("CUDA_LIBRARY_PATH").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    match cuda::find_driver() {
        Some(driver) => cuda::link_dir_for(root, &driver),
        None => Err(Error::new(no_libcuda_message())),
    }
}

fn no_libcuda_message() -> String {
    format!(
        "bundle: the `{CUDA_FEATURE}` feature links against libcuda.so, and this machine has no NVIDIA driver \
         (libcuda.so.1) and CUDA_LIBRARY_PATH is not set.\n  \
         Set CUDA_LIBRARY_PATH to a directory with lib64/libcuda.so. Without a driver, unpack one from \
         Debian's non-free `libcuda1` package (`apt-get download libcuda1`, then `dpkg -x`; nothing is \
         installed); {FETCH_LIBCUDA} does that and prints the directory:\n    \
         CUDA_LIBRARY_PATH=$({FETCH_LIBCUDA}) cargo xtask bundle\n  \
         The bundle loads the GPU machine's own driver at run time."
    )
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
    let cuda_dir = cuda_library_path(root)?;
    cuda::check_library_path(root, &cuda_dir)?;
    let workspace = Workspace::load(root)?;
    let kernels = workspace.kernel_crates();
    let mut modules = Vec::new();
    for krate in &kernels {
        modules.push((krate, build_ptx(root, krate, DEFAULT_ARCH)?));
    }
    println!("bundle: linking the `{CUDA_FEATURE}` feature with CUDA_LIBRARY_PATH={}", cuda_dir.display());

    let cargo = |args: &[&str]| {
        let mut cmd = cargo_command();
        cmd.current_dir(root)
            .args(args)
            .args(["--features", CUDA_FEATURE, "--message-format=json-render-diagnostics"])
            .env("CUDA_LIBRARY_PATH", &cuda_dir);
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

    let algos_args = ["build", "--release", "--package", "gpu-algos", "--example", "plans", "--example", "sort_bench"];
    let algos_out = run_stdout(&mut cargo(&algos_args))
        .map_err(|e| Error::new(format!("bundle: the gpu-algos examples failed to build: {e}")))?;
    let algos_exes = executables(&algos_out, false);
    let example = |want: &str| {
        algos_exes
            .iter()
            .find(|(name, kinds, _)| name == want && kinds.iter().any(|k| k == "example"))
            .map(|(_, _, path)| path.clone())
            .ok_or_else(|| Error::new(format!("bundle: the gpu-algos build reported no `{want}` example")))
    };
    let (plans_exe, sort_bench_exe) = (example("plans")?, example("sort_bench")?);

    let step = Instant::now();
    let mut test_args = vec!["test", "--release", "--no-run", "--package", "tests"];
    for name in GPU_TESTS {
        test_args.extend(["--test", name]);
    }
    let tests_out =
        run_stdout(&mut cargo(&test_args)).map_err(|e| Error::new(format!("bundle: test build failed: {e}")))?;
    let tests = executables(&tests_out, true);
    if let Some(missing) = GPU_TESTS.iter().find(|t| !tests.iter().any(|(name, _, _)| name == *t)) {
        return Err(Error::new(format!("bundle: the test build reported no `{missing}` test executable")));
    }
    println!("bundle: {} test executable(s) built in {}", tests.len(), secs(step.elapsed()));

    let dir = root.join(BUNDLE_DIR);
    if dir.exists() {
        fs::remove_dir_all(&dir).context(|| format!("cannot clear {}", dir.display()))?;
    }
    create_dir_all(&dir)?;
    copy_file(&host_exe, &dir.join("host"))?;
    copy_file(&plans_exe, &dir.join("plans"))?;
    copy_file(&sort_bench_exe, &dir.join("sort_bench"))?;
    let mut ptx_names = Vec::new();
    for (krate, ptx) in &modules {
        let name = format!("{}.ptx", krate.crate_name);
        copy_file(ptx, &dir.join("ptx").join(&name))?;
        ptx_names.push(name);
    }
    let mut names: Vec<String> = Vec::new();
    for (name, kinds, path) in &tests {
        // A library's unit tests and an integration test can share a name; keep both.
        let file = if names.contains(name) { format!("{name}-{}", kinds.join("-")) } else { name.clone() };
        copy_file(path, &dir.join("tests").join(&file))?;
        names.push(file);
    }
    replace_file(&dir.join("run-gpu.sh"), RUN_SCRIPT.as_bytes(), true)?;

    println!(
        "bundle: {} ready in {}: host, plans, sort_bench, ptx/{{{}}}, run-gpu.sh, tests/{{{}}}",
        display_path(root, &dir),
        secs(start.elapsed()),
        ptx_names.join(","),
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
        assert!(RUN_SCRIPT.contains(r#"for ptx in "$here"/ptx/*.ptx; do"#));
        assert!(RUN_SCRIPT.contains(r#"export "${name^^}_PTX=$ptx""#));
        assert!(RUN_SCRIPT.contains(r#""$here/host" run all --device gpu"#));
    }

    /// The script's exports, run by bash over a bundle's `ptx/`: one `<CRATE_NAME>_PTX` per module,
    /// named as the host and the tests look them up.
    #[test]
    fn run_script_exports_every_module() {
        let dir = env::temp_dir().join(format!("xtask-bundle-test-{}", std::process::id()));
        fs::create_dir_all(dir.join("ptx")).unwrap();
        for m in ["gpu_kernels.ptx", "user_kernels.ptx"] {
            fs::write(dir.join("ptx").join(m), "").unwrap();
        }
        let lines: Vec<&str> = RUN_SCRIPT.lines().collect();
        let from = lines.iter().position(|l| l.starts_with("here=")).expect("here=");
        let to = from + lines[from..].iter().position(|l| *l == "done").expect("done");
        let script = format!("{}\nenv | grep _PTX= | sort\n", lines[from..=to].join("\n"));
        fs::write(dir.join("exports.sh"), script).unwrap();
        let mut bash = std::process::Command::new("bash");
        bash.env_clear().env("PATH", env::var_os("PATH").unwrap_or_default()).arg(dir.join("exports.sh"));
        let out = bash.output().expect("bash");
        let _ = fs::remove_dir_all(&dir);
        let here = &dir;
        let want = ["gpu_kernels", "user_kernels"]
            .map(|c| {
                let krate = crate::workspace::KernelCrate {
                    package: String::new(),
                    crate_name: c.into(),
                    dir: PathBuf::new(),
                    shipped: None,
                };
                format!("{}={}/ptx/{c}.ptx", krate.ptx_env(), here.display())
            })
            .join("\n");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), want);
    }

    #[test]
    fn without_libcuda_the_message_says_what_to_do() {
        let text = no_libcuda_message();
        for needle in ["CUDA_LIBRARY_PATH", "lib64/libcuda.so", "apt-get download libcuda1", "dpkg -x", FETCH_LIBCUDA] {
            assert!(text.contains(needle), "{needle}");
        }
        assert!(!text.contains("../"), "no paths outside the repository");
        let script = crate::util::workspace_root().join(FETCH_LIBCUDA);
        assert!(script.is_file(), "{} exists", script.display());
    }
}
