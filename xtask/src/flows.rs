//! `run` and `test`: the everyday flows, on the GPU when this machine has the NVIDIA driver and on the
//! CPU SIMT emulator otherwise.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::build_ptx::{DEFAULT_ARCH, build_ptx, ptx_path};
use crate::cuda::{self, Driver};
use crate::ptxas::{CheckOptions, CheckOutcome, check_ptx};
use crate::util::{EXIT_FAILURE, EXIT_SKIPPED, Error, Result, cargo_command, display_path, run_inherit, secs};
use crate::workspace::{DEFAULT_KERNEL_PACKAGE, KernelCrate, Workspace};

/// Cargo feature of `host` and `tests` that links the CUDA driver API.
pub const CUDA_FEATURE: &str = "cuda";
/// The host command line of `cargo xtask run ARGS...`: `host run ARGS...`. The host runs the examples
/// the arguments name, or every example when they name none.
fn host_run_args(host_args: &[String]) -> Vec<String> {
    std::iter::once("run".to_string()).chain(host_args.iter().cloned()).collect()
}

/// How this machine will run kernels.
struct Backend {
    driver: Option<Driver>,
    cuda_library_path: Option<PathBuf>,
}

impl Backend {
    fn detect(root: &Path) -> Result<Backend> {
        let driver = cuda::find_driver();
        let cuda_library_path = match &driver {
            Some(d) => cuda::library_path_for_local_build(root, Some(d))?,
            None => None,
        };
        if let Some(dir) = &cuda_library_path {
            cuda::check_library_path(root, dir)?;
        }
        Ok(Backend { driver, cuda_library_path })
    }

    fn gpu(&self) -> bool {
        self.driver.is_some()
    }

    /// The architecture to build PTX for: the local GPU's when it needs an older one.
    fn arch(&self) -> String {
        if self.gpu() { cuda::gpu_arch() } else { DEFAULT_ARCH.to_string() }
    }

    fn describe(&self) -> String {
        match &self.driver {
            Some(d) => format!("GPU (NVIDIA driver {})", d.library.display()),
            None => "CPU SIMT emulator (no NVIDIA driver library libcuda.so.1 found)".to_string(),
        }
    }

    /// Sets the environment of a cargo command that builds or runs the host side: where each kernel
    /// crate's module is (`GPU_KERNELS_PTX=...`), and `CUDA_LIBRARY_PATH`.
    fn configure(&self, cmd: &mut std::process::Command, modules: &[(&KernelCrate, PathBuf)]) {
        for (krate, ptx) in modules {
            cmd.env(krate.ptx_env(), ptx);
        }
        if let Some(dir) = &self.cuda_library_path {
            cmd.env("CUDA_LIBRARY_PATH", dir);
        }
    }
}

/// `cargo xtask run [EXAMPLE...] [OPTIONS...]`: builds gpu-kernels' PTX, then
/// `host run [EXAMPLE...] [OPTIONS...]` — the named examples, or all of them.
pub fn run(root: &Path, host_args: &[String]) -> Result<()> {
    let backend = Backend::detect(root)?;
    let arch = backend.arch();
    let workspace = Workspace::load(root)?;
    let krate = workspace.kernel_crate(DEFAULT_KERNEL_PACKAGE)?;
    let ptx = build_ptx(root, &krate, &arch)?;
    println!("run: examples will run on the {}", backend.describe());

    let mut cmd = cargo_command();
    cmd.current_dir(root).args(["run", "--release", "--package", "host"]);
    if backend.gpu() {
        cmd.args(["--features", CUDA_FEATURE]);
    }
    cmd.arg("--").args(host_run_args(host_args));
    backend.configure(&mut cmd, &[(&krate, ptx)]);
    run_inherit(&mut cmd).map_err(|e| Error::new(format!("run: {e}")))
}

/// `cargo xtask sanitize [EXAMPLE...] [host sanitize options]`: builds the PTX and the host with GPU
/// support, then `host sanitize ...`: every example under compute-sanitizer's memcheck, racecheck,
/// synccheck and initcheck, one table, non-zero exit on any unexpected finding. Needs the NVIDIA driver
/// (and compute-sanitizer, from the CUDA toolkit).
pub fn sanitize(root: &Path, host_args: &[String]) -> Result<()> {
    let backend = Backend::detect(root)?;
    if !backend.gpu() {
        return Err(Error::with_code(
            "sanitize: compute-sanitizer checks kernels on a GPU, and this machine has no NVIDIA driver \
             (libcuda.so.1); the emulator's own detectors run in `cargo xtask test`"
                .to_string(),
            EXIT_SKIPPED,
        ));
    }
    let workspace = Workspace::load(root)?;
    let krate = workspace.kernel_crate(DEFAULT_KERNEL_PACKAGE)?;
    let ptx = build_ptx(root, &krate, &backend.arch())?;
    let mut cmd = cargo_command();
    cmd.current_dir(root).args(["run", "--release", "--package", "host", "--features", CUDA_FEATURE, "--", "sanitize"]);
    cmd.args(host_args);
    backend.configure(&mut cmd, &[(&krate, ptx)]);
    run_inherit(&mut cmd).map_err(|e| Error::new(format!("sanitize: {e}")))
}

/// One step of `cargo xtask test`.
pub struct Step {
    pub name: String,
    pub action: Action,
    /// Name of an earlier step that must have passed for this one to run.
    pub needs: Option<String>,
}

pub enum Action {
    BuildPtx {
        krate: KernelCrate,
        arch: String,
    },
    CheckPtx {
        krate: KernelCrate,
        arch: String,
    },
    /// The crate's shipped module is what its source builds to ([`crate::build_ptx::check_shipped`]).
    ShippedPtx {
        krate: KernelCrate,
    },
    /// A cargo command line (without `cargo`), run in the workspace root.
    Cargo(Vec<String>),
}

/// Totals over the `test result:` lines of cargo's test binaries.
#[derive(Default, Debug, PartialEq)]
struct TestCounts {
    passed: u64,
    failed: u64,
}

impl TestCounts {
    /// Adds one `test result: ok. 3 passed; 0 failed; ...` line (other lines are ignored).
    fn add_line(&mut self, line: &str) {
        let Some(rest) = line.trim().strip_prefix("test result:") else { return };
        for part in rest.split([';', '.']) {
            let mut w = part.split_whitespace();
            if let (Some(n), Some(what)) = (w.next(), w.next())
                && let Ok(n) = n.parse::<u64>()
            {
                match what {
                    "passed" => self.passed += n,
                    "failed" => self.failed += n,
                    _ => {}
                }
            }
        }
    }
}

/// Runs a command with stdout passed through line by line, counting test results on the way.
fn run_counting(cmd: &mut std::process::Command, counts: &mut TestCounts) -> Result<()> {
    use std::io::{BufRead, BufReader, Write};
    cmd.stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| Error::new(format!("cannot start cargo test: {e}")))?;
    let out = child.stdout.take().expect("piped stdout");
    let mut stdout = std::io::stdout();
    for line in BufReader::new(out).lines() {
        let line = line.map_err(|e| Error::new(format!("reading cargo test output: {e}")))?;
        counts.add_line(&line);
        let _ = writeln!(stdout, "{line}");
    }
    let status = child.wait().map_err(|e| Error::new(format!("waiting for cargo test: {e}")))?;
    if status.success() { Ok(()) } else { Err(Error::new(format!("cargo test failed ({status})"))) }
}

/// The host libraries whose tests `cargo xtask test` runs beside the kernel crates': the algorithms
/// library, where the workspace has it.
fn host_libraries(root: &Path) -> Vec<String> {
    ["gpu-algos"].into_iter().filter(|l| root.join(l).join("Cargo.toml").is_file()).map(String::from).collect()
}

/// The steps of `cargo xtask test`, in order: build-ptx of every kernel crate, check-ptx of each,
/// fmt, clippy, and one `cargo test` of gpu-std, gpu-host, gpu-builder, find_cuda_helper, the kernel
/// crates, the host `libraries`, host, tests and xtask.
fn test_steps(gpu: bool, arch: &str, kernels: &[KernelCrate], libraries: &[String]) -> Vec<Step> {
    let mut cargo_test: Vec<String> =
        ["test", "-p", "gpu-std", "-p", "gpu-host", "-p", "gpu-builder", "-p", "find_cuda_helper"]
            .map(String::from)
            .to_vec();
    for k in kernels {
        cargo_test.extend(["-p".into(), k.package.clone()]);
    }
    for lib in libraries {
        cargo_test.extend(["-p".into(), lib.clone()]);
    }
    cargo_test.extend(["-p", "host", "-p", "tests", "-p", "xtask"].map(String::from));
    if gpu {
        cargo_test.push("--features".into());
        cargo_test.push(format!("host/{CUDA_FEATURE},tests/{CUDA_FEATURE}"));
    }
    let build_name = |k: &KernelCrate| format!("build-ptx {}", k.package);
    let builds = kernels.iter().map(|k| Step {
        name: build_name(k),
        action: Action::BuildPtx { krate: k.clone(), arch: arch.to_string() },
        needs: None,
    });
    let checks = kernels.iter().map(|k| Step {
        name: format!("check-ptx {}", k.package),
        action: Action::CheckPtx { krate: k.clone(), arch: arch.to_string() },
        needs: Some(build_name(k)),
    });
    let shipped = kernels.iter().filter(|k| k.shipped.is_some() && arch == DEFAULT_ARCH).map(|k| Step {
        name: format!("shipped PTX of {}", k.package),
        action: Action::ShippedPtx { krate: k.clone() },
        needs: Some(build_name(k)),
    });
    builds
        .chain(checks)
        .chain(shipped)
        .chain([
            Step {
                name: "fmt".into(),
                action: Action::Cargo(["fmt", "--all", "--check"].map(String::from).to_vec()),
                needs: None,
            },
            Step {
                name: "clippy".into(),
                action: Action::Cargo(
                    ["clippy", "--workspace", "--all-targets", "--quiet", "--", "-D", "warnings"]
                        .map(String::from)
                        .to_vec(),
                ),
                needs: None,
            },
            Step { name: "cargo test".into(), action: Action::Cargo(cargo_test), needs: None },
        ])
        .chain(sanitizer_steps(&host_triple()))
        .collect()
}

/// The emulator's soundness tests again under ThreadSanitizer and AddressSanitizer, for the host
/// `triple`: a host thread and a launch sharing mapped memory (TSan: no data race), and the attacks on
/// the emulator's own state (ASan: no use of freed memory). Each builds `std` with the sanitizer
/// (`-Zbuild-std`) into its own target folder.
fn sanitizer_steps(triple: &str) -> Vec<Step> {
    let run = |sanitizer: &str, package: &str, test: &str| Step {
        name: format!("{sanitizer} sanitizer: {package} {test}"),
        action: Action::Cargo(
            [
                "--config",
                &format!("build.rustflags=[\"-Zsanitizer={sanitizer}\"]"),
                "test",
                "-Zbuild-std",
                "--target",
                triple,
                "--target-dir",
                &format!("target/sanitize-{sanitizer}"),
                "-p",
                package,
                "--test",
                test,
            ]
            .map(String::from)
            .to_vec(),
        ),
        needs: None,
    };
    vec![run("thread", "gpu-host", "mapped_threads"), run("address", "gpu-std", "emu_soundness")]
}

/// The host's target triple, as rustc names it (`x86_64-unknown-linux-gnu` if rustc cannot say).
fn host_triple() -> String {
    let out = std::process::Command::new("rustc").arg("-vV").output().ok();
    let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map_or_else(|| "x86_64-unknown-linux-gnu".to_string(), |h| h.trim().to_string())
}

/// The `doc` step of `cargo xtask test`: the libraries' docs, with every rustdoc warning an error (a
/// broken link, a missing doc). `gpu-builder` is documented too where the workspace has it. The flags
/// are passed as `build.rustdocflags` (what `RUSTDOCFLAGS="-D warnings"` sets), so that the step stays
/// one cargo command line.
fn doc_step(root: &Path) -> Step {
    let mut args: Vec<String> = [
        "--config",
        "build.rustdocflags=[\"-D\", \"warnings\"]",
        "doc",
        "--no-deps",
        "--quiet",
        "-p",
        "gpu-std",
        "-p",
        "gpu-host",
    ]
    .map(String::from)
    .to_vec();
    for lib in ["gpu-algos", "gpu-algos-kernels"] {
        if root.join(lib).join("Cargo.toml").is_file() {
            args.extend(["-p", lib].map(String::from));
        }
    }
    if root.join("gpu-builder/Cargo.toml").is_file() {
        args.extend(["-p", "gpu-builder"].map(String::from));
    }
    Step { name: "doc".into(), action: Action::Cargo(args), needs: None }
}

/// `cargo xtask test`: runs every step (a step whose prerequisite failed is not run), prints one line
/// per step, and fails if any step failed.
pub fn test(root: &Path, allow_skip: bool) -> Result<()> {
    let start = Instant::now();
    let backend = Backend::detect(root)?;
    println!("test: kernels will run on the {}", backend.describe());
    let arch = backend.arch();
    let workspace = Workspace::load(root)?;
    let kernels = workspace.kernel_crates();
    let modules: Vec<(&KernelCrate, PathBuf)> =
        kernels.iter().map(|k| (k, ptx_path(root, &k.crate_name, &arch))).collect();
    let mut steps = test_steps(backend.gpu(), &arch, &kernels, &host_libraries(root));
    steps.push(doc_step(root));
    let mut passed: Vec<String> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    let mut failed: Vec<(String, i32)> = Vec::new();
    let mut counts = TestCounts::default();
    let total = steps.len();
    for (i, step) in steps.iter().enumerate() {
        let label = format!("test: [{}/{total}] {}", i + 1, step.name);
        if let Some(need) = step.needs.as_ref().filter(|n| !passed.contains(n)) {
            println!("{label}: NOT RUN ({need} did not pass)");
            failed.push((step.name.clone(), EXIT_FAILURE));
            continue;
        }
        println!("{label} ...");
        let step_start = Instant::now();
        let result = match &step.action {
            Action::BuildPtx { krate, arch } => build_ptx(root, krate, arch).map(|_| true),
            Action::CheckPtx { krate, arch } => {
                check_ptx(root, &CheckOptions { krate, arch, allow_skip }).map(|o| o == CheckOutcome::Assembled)
            }
            Action::ShippedPtx { krate } => crate::build_ptx::check_shipped(root, krate).map(|()| true),
            Action::Cargo(args) => {
                let mut cmd = cargo_command();
                cmd.current_dir(root).args(args);
                backend.configure(&mut cmd, &modules);
                run_counting(&mut cmd, &mut counts).map(|()| true)
            }
        };
        let took = secs(step_start.elapsed());
        match result {
            Ok(true) => {
                println!("{label}: ok ({took})");
                passed.push(step.name.clone());
            }
            Ok(false) => {
                println!("{label}: SKIPPED, allowed by --allow-skip ({took})");
                passed.push(step.name.clone());
                skipped.push(step.name.clone());
            }
            Err(e) => {
                eprintln!("{e}");
                println!("{label}: FAILED ({took})");
                failed.push((step.name.clone(), e.code));
            }
        }
    }
    let took = secs(start.elapsed());
    // One plain closing line with the totals of every test binary.
    let closing = format!("tests: {} passed, {} failed", counts.passed, counts.failed);
    if failed.is_empty() {
        let note = if skipped.is_empty() { String::new() } else { format!(", skipped: {}", skipped.join(", ")) };
        let ptx: Vec<String> = modules.iter().map(|(_, p)| display_path(root, p)).collect();
        println!("test: all {total} steps passed in {took} ({}{note})", ptx.join(", "));
        println!("{closing}");
        Ok(())
    } else {
        let names: Vec<&str> = failed.iter().map(|(n, _)| n.as_str()).collect();
        // Exit code 3 only when the sole problem is a check that could not run.
        let code = if failed.iter().all(|(_, c)| *c == EXIT_SKIPPED) { EXIT_SKIPPED } else { EXIT_FAILURE };
        println!("{closing}");
        Err(Error::with_code(
            format!("test: FAILED in {took}: {} of {total} steps did not pass: {}", failed.len(), names.join(", ")),
            code,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_passes_the_named_examples_only() {
        let args = |a: &[&str]| host_run_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>()).join(" ");
        assert_eq!(args(&["warp_reduce"]), "run warp_reduce");
        assert_eq!(args(&["stencil", "divergence", "--n", "33"]), "run stencil divergence --n 33");
        // No example named: the host runs them all.
        assert_eq!(args(&["--device", "emu"]), "run --device emu");
        assert_eq!(args(&[]), "run");
    }

    #[test]
    fn test_result_lines_are_summed() {
        let mut c = TestCounts::default();
        c.add_line("test result: ok. 27 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 14.42s");
        c.add_line("test result: FAILED. 3 passed; 2 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.1s");
        c.add_line("running 5 tests");
        assert_eq!(c, TestCounts { passed: 30, failed: 2 });
    }

    fn kernels() -> Vec<KernelCrate> {
        [("gpu-kernels", "gpu_kernels"), ("user-kernels", "user_kernels")]
            .map(|(p, c)| KernelCrate { package: p.into(), crate_name: c.into(), dir: PathBuf::new(), shipped: None })
            .to_vec()
    }

    #[test]
    fn cuda_features_only_with_a_driver() {
        let steps = |gpu| test_steps(gpu, DEFAULT_ARCH, &kernels(), &["gpu-algos".to_string()]);
        let args = |gpu| match &steps(gpu).into_iter().find(|s| s.name == "cargo test").expect("steps").action {
            Action::Cargo(args) => args.join(" "),
            _ => unreachable!(),
        };
        assert_eq!(
            args(false),
            "test -p gpu-std -p gpu-host -p gpu-builder -p find_cuda_helper -p gpu-kernels -p user-kernels -p gpu-algos -p host \
             -p tests -p xtask"
        );
        assert_eq!(
            args(true),
            "test -p gpu-std -p gpu-host -p gpu-builder -p find_cuda_helper -p gpu-kernels -p user-kernels -p gpu-algos -p host \
             -p tests -p xtask --features host/cuda,tests/cuda"
        );
    }

    #[test]
    fn the_algorithms_library_is_tested_where_the_workspace_has_it() {
        let root = std::env::temp_dir().join(format!("xtask-host-libraries-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("gpu-algos")).expect("temp dir");
        assert!(host_libraries(&root).is_empty(), "no Cargo.toml: not a crate");
        std::fs::write(root.join("gpu-algos/Cargo.toml"), "").expect("write");
        assert_eq!(host_libraries(&root), ["gpu-algos"]);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn every_kernel_crate_is_built_and_checked() {
        let steps = test_steps(false, "sm_80", &kernels(), &[]);
        let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "build-ptx gpu-kernels",
                "build-ptx user-kernels",
                "check-ptx gpu-kernels",
                "check-ptx user-kernels",
                "fmt",
                "clippy",
                "cargo test",
                "thread sanitizer: gpu-host mapped_threads",
                "address sanitizer: gpu-std emu_soundness",
            ]
        );
        for (step, want) in steps.iter().take(4).zip(kernels().iter().chain(&kernels())) {
            match &step.action {
                Action::BuildPtx { krate, arch } | Action::CheckPtx { krate, arch } => {
                    assert_eq!((krate, arch.as_str()), (want, "sm_80"), "{}", step.name);
                }
                Action::Cargo(_) | Action::ShippedPtx { .. } => panic!("{} is not a PTX build or check", step.name),
            }
        }
    }

    #[test]
    fn doc_step_denies_warnings_and_adds_gpu_builder_when_present() {
        let root = std::env::temp_dir().join(format!("xtask-doc-step-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let args = |root: &Path| match doc_step(root).action {
            Action::Cargo(args) => args.join(" "),
            _ => unreachable!(),
        };
        let base = r#"--config build.rustdocflags=["-D", "warnings"] doc --no-deps --quiet -p gpu-std -p gpu-host"#;
        assert_eq!(args(&root), base);
        std::fs::create_dir_all(root.join("gpu-builder")).expect("temp dir");
        std::fs::write(root.join("gpu-builder/Cargo.toml"), "").expect("temp file");
        assert_eq!(args(&root), format!("{base} -p gpu-builder"));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn prerequisites_name_earlier_steps() {
        let steps = test_steps(false, DEFAULT_ARCH, &kernels(), &[]);
        for (i, step) in steps.iter().enumerate() {
            if let Some(need) = &step.needs {
                assert!(steps[..i].iter().any(|s| &s.name == need), "{} needs unknown {need}", step.name);
            }
        }
        assert_eq!(steps[3].needs.as_deref(), Some("build-ptx user-kernels"));
    }
}
