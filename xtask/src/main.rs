//! Project tasks, run as `cargo xtask <command>`: build the kernels to PTX with rustc's NVPTX backend,
//! check the PTX with `ptxas`, run the examples, run every test, bundle a GPU build, and plot the
//! benchmark results.
//!
//! The same executable also serves as the PTX linker of the kernel build: `gpu-builder` passes it to
//! rustc as the linker, so `main` first hands over to `gpu_builder::link_if_invoked`.

mod build_ptx;
mod bundle;
mod cuda;
mod flows;
mod plot;
mod ptxas;
mod util;
mod workspace;

use std::process::ExitCode;

use build_ptx::DEFAULT_ARCH;
use util::{Error, Result};
use workspace::{DEFAULT_KERNEL_PACKAGE, KernelCrate, Workspace};

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  build-ptx [-p CRATE] [--arch sm_XX]
      Compile a kernel crate (default gpu-kernels) for nvptx64-nvidia-cuda and link it to one PTX
      module: target/ptx/<crate_name>.ptx for sm_90 (the default), target/ptx/<crate_name>.<arch>.ptx
      otherwise (e.g. -p user-kernels: target/ptx/user_kernels.ptx).
  check-ptx [-p CRATE] [--arch sm_XX] [--allow-skip]
      build-ptx, then assemble the module with ptxas (fetched into .tools/ptxas on first use) and print
      registers, spill stores/loads, stack frame, static shared memory and barriers per kernel.
      Fails on any ptxas error or register spill. Without ptxas it fails with exit code 3 unless
      --allow-skip is given.
  ship-ptx
      Build every kernel crate that ships its module in the source tree (`shipped-ptx` under
      [package.metadata.xtask]: gpu-algos-kernels, whose module gpu-algos embeds) and copy it there.
      `test` fails when a shipped module is not what its crate builds to.
  run [EXAMPLE...] [OPTIONS...]
      build-ptx, then `host run EXAMPLE... OPTIONS...` — the named examples, or every example when
      none is named — on the GPU when an NVIDIA driver is found (host built with the `cuda` feature),
      else on the CPU SIMT emulator.
  test [--allow-skip]
      build-ptx and check-ptx for every kernel crate, the shipped modules' check, fmt, clippy, then `cargo test` of gpu-std, every
      kernel crate, gpu-algos (where the workspace has it), host, tests and xtask (with the `cuda`
      feature when an NVIDIA driver is found).
      One line per step; fails if any step fails.
  sanitize [EXAMPLE...] [--tools memcheck,racecheck,...] [--max-n N]
      On a machine with an NVIDIA GPU and compute-sanitizer: build the PTX and the host with GPU
      support, run every example (or those named) under memcheck, racecheck, synccheck and initcheck,
      and print one table example x tool -> clean / N findings. Fails on any finding outside the
      kernels that keep a chapter bug on purpose (each example's `kept_bugs`, in its file in
      host/src/examples/). Without a driver it says so and exits with code 3.
  bundle
      Build every kernel crate's PTX (sm_90), the host and the GPU integration tests with the `cuda`
      feature, and put them with run-gpu.sh into .gpu-bundle/ for a GPU machine without Rust. Links
      against CUDA_LIBRARY_PATH, else this machine's NVIDIA driver; without either it says how to get
      a linkable libcuda.so (gpu-host/scripts/fetch-libcuda.sh).
  plot [--csv PATH] [--svg PATH] [--markdown PATH]
      Read the results of bench/bench.cu (default bench/results.csv) and write a chart of GB/s per
      workload and implementation, with each workload's read limit (default bench/results.svg), and
      the same numbers as a Markdown table (default bench/results.md).
  plot-sweep [--csv PATH] [--svg PATH] [--tables PATH]
      Read the size sweep of bench/bench.cu --sweep (default bench/sweep.csv) and write line charts
      of GB/s against n per workload: the proxy, CUB and the Rust tiers (default bench/sweep.svg),
      and a table per workload with the ratios to CUB and to nvcc (default bench/sweep-tables.md).
  plot-algos [--csv PATH] [--torch PATH] [--svg PATH] [--tables PATH]
      Read gpu-algos' benchmark (bench/algos.cu: default bench/algos.csv; bench/torch_cupy.py:
      default bench/torch_cupy.csv) and write line charts of CUB's time over gpu-algos' against n
      (default bench/algos.svg, host-timed, and bench/algos-cold.svg), every row as Markdown tables
      (default bench/algos.md), and print the README's summary table.
  help
      Show this text.

options:
  -p, --package CRATE  a kernel crate: a workspace member whose Cargo.toml sets `build-ptx = true`
                       under [package.metadata.xtask] (here: gpu-kernels, gpu-algos-kernels, user-kernels)

environment:
  PTXAS               ptxas to use instead of .tools/ptxas/bin/ptxas
  CUDA_LIBRARY_PATH   directory with lib64/libcuda.so for builds with the `cuda` feature
  <CRATE_NAME>_PTX    where the host and the tests load a crate's module from (GPU_KERNELS_PTX,
                      USER_KERNELS_PTX); `test`, `run` and run-gpu.sh set them
";

fn main() -> ExitCode {
    // When rustc runs this executable as the PTX linker, this links and exits.
    gpu_builder::link_if_invoked();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match dispatch(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            if e.code == util::EXIT_USAGE {
                eprintln!("(see `cargo xtask help`)");
            }
            exit_code(e.code)
        }
    }
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Options shared by the commands that take them.
#[derive(Debug, PartialEq)]
struct Options {
    arch: String,
    allow_skip: bool,
    /// The package named by `-p`, if any.
    package: Option<String>,
}

impl Options {
    /// The kernel crate named by `-p` (default gpu-kernels), checked against the workspace.
    fn kernel_crate(&self, workspace: &Workspace) -> Result<KernelCrate> {
        workspace.kernel_crate(self.package.as_deref().unwrap_or(DEFAULT_KERNEL_PACKAGE))
    }
}

/// Parses `--arch X`, `--arch=X`, `-p X`, `--package X`, `--package=X` and `--allow-skip`, as far as
/// `allowed` permits (`-p` is allowed with `--package`).
fn parse_options(command: &str, args: &[String], allowed: &[&str]) -> Result<Options> {
    let mut opts = Options { arch: DEFAULT_ARCH.to_string(), allow_skip: false, package: None };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let flag = if flag == "-p" { "--package" } else { flag };
        if !allowed.contains(&flag) {
            return Err(Error::usage(format!("`{command}` does not take `{arg}`")));
        }
        match flag {
            "--arch" => {
                let value = inline
                    .or_else(|| it.next().cloned())
                    .ok_or_else(|| Error::usage("`--arch` needs a value, e.g. --arch sm_80"))?;
                build_ptx::validate_arch(&value)?;
                opts.arch = value;
            }
            "--package" => {
                let value = inline
                    .or_else(|| it.next().cloned())
                    .filter(|v| !v.is_empty() && !v.starts_with('-'))
                    .ok_or_else(|| Error::usage(format!("`{arg}` needs a package name, e.g. -p user-kernels")))?;
                if let Some(first) = &opts.package {
                    return Err(Error::usage(format!(
                        "`{command}` takes one package; `{first}` and `{value}` were given"
                    )));
                }
                opts.package = Some(value);
            }
            "--allow-skip" if inline.is_none() => opts.allow_skip = true,
            _ => return Err(Error::usage(format!("`{command}` does not take `{arg}`"))),
        }
    }
    Ok(opts)
}

fn dispatch(args: &[String]) -> Result<()> {
    let Some((command, rest)) = args.split_first() else {
        print!("{USAGE}");
        return Ok(());
    };
    let root = util::workspace_root();
    match command.as_str() {
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(())
        }
        "build-ptx" => {
            let opts = parse_options(command, rest, &["--arch", "--package"])?;
            let workspace = Workspace::load(&root)?;
            let krate = opts.kernel_crate(&workspace)?;
            build_ptx::build_ptx(&root, &krate, &opts.arch).map(|_| ())
        }
        "check-ptx" => {
            let opts = parse_options(command, rest, &["--arch", "--package", "--allow-skip"])?;
            let workspace = Workspace::load(&root)?;
            let krate = opts.kernel_crate(&workspace)?;
            build_ptx::build_ptx(&root, &krate, &opts.arch)?;
            let check = ptxas::CheckOptions { krate: &krate, arch: &opts.arch, allow_skip: opts.allow_skip };
            ptxas::check_ptx(&root, &check).map(|_| ())
        }
        "ship-ptx" => {
            parse_options(command, rest, &[])?;
            build_ptx::ship_ptx(&root, &Workspace::load(&root)?.kernel_crates())
        }
        "run" => flows::run(&root, rest),
        "sanitize" => flows::sanitize(&root, rest),
        "test" => {
            let opts = parse_options(command, rest, &["--allow-skip"])?;
            flows::test(&root, opts.allow_skip)
        }
        "plot" => plot::plot(&root, rest),
        "plot-sweep" => plot::sweep::plot_sweep(&root, rest),
        "plot-algos" => plot::algos::plot_algos(&root, rest),
        "bundle" => {
            parse_options(command, rest, &[])?;
            bundle::bundle(&root)
        }
        other => Err(Error::usage(format!("unknown command `{other}`"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    const ALL: [&str; 3] = ["--arch", "--package", "--allow-skip"];

    #[test]
    fn options() {
        assert_eq!(
            parse_options("c", &[], &ALL).unwrap(),
            Options { arch: "sm_90".into(), allow_skip: false, package: None }
        );
        let o = parse_options("c", &args(&["--arch", "sm_80", "--allow-skip"]), &ALL).unwrap();
        assert_eq!(o, Options { arch: "sm_80".into(), allow_skip: true, package: None });
        assert_eq!(parse_options("c", &args(&["--arch=sm_70"]), &ALL).unwrap().arch, "sm_70");
    }

    #[test]
    fn package_option() {
        for form in [&["-p", "user-kernels"][..], &["--package", "user-kernels"], &["--package=user-kernels"]] {
            let o = parse_options("c", &args(form), &ALL).unwrap();
            assert_eq!(o.package.as_deref(), Some("user-kernels"), "{form:?}");
        }
        let o = parse_options("c", &args(&["--arch", "sm_80", "-p", "gpu-kernels", "--allow-skip"]), &ALL).unwrap();
        assert_eq!(o, Options { arch: "sm_80".into(), allow_skip: true, package: Some("gpu-kernels".into()) });
    }

    #[test]
    fn bad_options_are_usage_errors() {
        for bad in [
            &["--arch"][..],
            &["--arch", "90"],
            &["--frob"],
            &["--allow-skip=1"],
            &["sm_90"],
            &["-p"],
            &["--package="],
            &["-p", "--arch", "sm_90"],
            &["-p", "a", "-p", "b"],
            &["-puser-kernels"],
        ] {
            let err = parse_options("c", &args(bad), &ALL).unwrap_err();
            assert_eq!(err.code, util::EXIT_USAGE, "{bad:?}");
            assert!(!err.message.contains('\n'), "{bad:?}: one line");
        }
        assert!(parse_options("bundle", &args(&["--arch", "sm_90"]), &[]).is_err());
        assert!(parse_options("test", &args(&["-p", "user-kernels"]), &["--allow-skip"]).is_err());
    }

    #[test]
    fn package_defaults_to_gpu_kernels() {
        let ws = Workspace::load(&util::workspace_root()).expect("cargo metadata");
        let none = parse_options("c", &[], &ALL).unwrap();
        assert_eq!(none.kernel_crate(&ws).unwrap().crate_name, "gpu_kernels");
        let user = parse_options("c", &args(&["-p", "user-kernels"]), &ALL).unwrap();
        assert_eq!(user.kernel_crate(&ws).unwrap().crate_name, "user_kernels");
        for not_kernels in ["host", "gpu-std", "no-such-crate"] {
            let o = parse_options("c", &args(&["-p", not_kernels]), &ALL).unwrap();
            assert_eq!(o.kernel_crate(&ws).unwrap_err().code, util::EXIT_USAGE, "{not_kernels}");
        }
    }
}
