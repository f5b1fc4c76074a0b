//! Project tasks, run as `cargo xtask <command>`: build the kernels to PTX with rustc's NVPTX backend,
//! check the PTX with `ptxas`, run the examples, run every test, and bundle a GPU build.
//!
//! The same executable also serves as the PTX linker of the kernel build (see `ptx_link`).

mod ar;
mod build_ptx;
mod bundle;
mod cuda;
mod flows;
mod json;
mod ptx_link;
mod ptxas;
mod toolchain;
mod util;

use std::process::ExitCode;

use build_ptx::DEFAULT_ARCH;
use util::{Error, Result};

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  build-ptx [--arch sm_XX]
      Compile gpu-kernels for nvptx64-nvidia-cuda and link it to one PTX module:
      target/ptx/gpu_kernels.ptx for sm_90 (the default), target/ptx/gpu_kernels.<arch>.ptx otherwise.
  check-ptx [--arch sm_XX] [--allow-skip]
      build-ptx, then assemble the module with ptxas (fetched into .tools/ptxas on first use) and print
      registers, spill stores/loads, stack frame, static shared memory and barriers per kernel.
      Fails on any ptxas error or register spill. Without ptxas it fails with exit code 3 unless
      --allow-skip is given.
  run [ARGS...]
      build-ptx, then `host run all ARGS...` on the GPU when an NVIDIA driver is found (host built
      with the `cuda` feature), else on the CPU SIMT emulator.
  test [--allow-skip]
      build-ptx, check-ptx, then `cargo test -p gpu-std -p gpu-kernels -p host -p tests -p xtask` (with the
      `cuda` feature when an NVIDIA driver is found). One line per step; fails if any step fails.
  bundle
      Build the PTX (sm_90), the host and the integration tests with the `cuda` feature, and put them
      with run-gpu.sh into .gpu-bundle/ for a GPU machine without Rust. Needs CUDA_LIBRARY_PATH
      (a directory with lib64/libcuda.so) or a way to obtain it.
  help
      Show this text.

environment:
  PTXAS               ptxas to use instead of .tools/ptxas/bin/ptxas
  CUDA_LIBRARY_PATH   directory with lib64/libcuda.so for builds with the `cuda` feature
";

fn main() -> ExitCode {
    if ptx_link::is_linker_invocation() {
        return exit_code(ptx_link::main());
    }
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
}

/// Parses `--arch X`, `--arch=X` and `--allow-skip`, as far as `allowed` permits.
fn parse_options(command: &str, args: &[String], allowed: &[&str]) -> Result<Options> {
    let mut opts = Options { arch: DEFAULT_ARCH.to_string(), allow_skip: false };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
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
            let opts = parse_options(command, rest, &["--arch"])?;
            build_ptx::build_ptx(&root, &opts.arch).map(|_| ())
        }
        "check-ptx" => {
            let opts = parse_options(command, rest, &["--arch", "--allow-skip"])?;
            build_ptx::build_ptx(&root, &opts.arch)?;
            ptxas::check_ptx(&root, &ptxas::CheckOptions { arch: &opts.arch, allow_skip: opts.allow_skip }).map(|_| ())
        }
        "run" => flows::run(&root, rest),
        "test" => {
            let opts = parse_options(command, rest, &["--allow-skip"])?;
            flows::test(&root, opts.allow_skip)
        }
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

    #[test]
    fn options() {
        let all = ["--arch", "--allow-skip"];
        assert_eq!(parse_options("c", &[], &all).unwrap(), Options { arch: "sm_90".into(), allow_skip: false });
        let o = parse_options("c", &args(&["--arch", "sm_80", "--allow-skip"]), &all).unwrap();
        assert_eq!(o, Options { arch: "sm_80".into(), allow_skip: true });
        assert_eq!(parse_options("c", &args(&["--arch=sm_70"]), &all).unwrap().arch, "sm_70");
    }

    #[test]
    fn bad_options_are_usage_errors() {
        let all = ["--arch", "--allow-skip"];
        for bad in [&["--arch"][..], &["--arch", "90"], &["--frob"], &["--allow-skip=1"], &["sm_90"]] {
            let err = parse_options("c", &args(bad), &all).unwrap_err();
            assert_eq!(err.code, util::EXIT_USAGE, "{bad:?}");
        }
        assert!(parse_options("bundle", &args(&["--arch", "sm_90"]), &[]).is_err());
    }
}
