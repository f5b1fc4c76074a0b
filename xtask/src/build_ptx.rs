//! `build-ptx`: compiles a kernel crate for `nvptx64-nvidia-cuda` and writes
//! `target/ptx/<crate_name>.ptx`.
//!
//! The nvptx build uses its own target directory (`target/nvptx`) because its `RUSTFLAGS` differ from
//! the host build's. `-Ctarget-cpu` goes through `CARGO_ENCODED_RUSTFLAGS` rather than
//! `cargo rustc -- ...` so that the `core` built by `-Zbuild-std` is compiled for the same PTX ISA
//! target as the kernels (rustc treats the target CPU as part of the ABI). The link step is this
//! program itself, copied to `target/nvptx/ptx-linker` (see `ptx_link`).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::json;
use crate::ptx_link::{LINKER_FILE_NAME, LINKER_MODE_ENV, LLVM_BIN_ENV, LOG_FILE_NAME};
use crate::toolchain::Toolchain;
use crate::util::{
    Context, Error, Result, cargo_command, copy_file, create_dir_all, describe, display_path, replace_file,
    run_capture, run_stdout, secs,
};
use crate::workspace::KernelCrate;

pub const TARGET: &str = "nvptx64-nvidia-cuda";
pub const DEFAULT_ARCH: &str = "sm_90";

/// `target/nvptx`: cargo target directory of the kernel build.
pub fn nvptx_target_dir(root: &Path) -> PathBuf {
    root.join("target").join("nvptx")
}

/// Where `build-ptx` puts the module of the crate named `crate_name` for `arch`:
/// `target/ptx/<crate_name>.ptx` for the default architecture, `target/ptx/<crate_name>.<arch>.ptx`
/// for the others.
pub fn ptx_path(root: &Path, crate_name: &str, arch: &str) -> PathBuf {
    let name = if arch == DEFAULT_ARCH { format!("{crate_name}.ptx") } else { format!("{crate_name}.{arch}.ptx") };
    root.join("target").join("ptx").join(name)
}

/// Accepts PTX ISA target names such as `sm_70`, `sm_90`, `sm_90a`, `sm_100f`.
pub fn validate_arch(arch: &str) -> Result<()> {
    let ok = arch.strip_prefix("sm_").is_some_and(|rest| {
        let digits = rest.trim_end_matches(['a', 'f']);
        (2..=3).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) && rest.len() - digits.len() <= 1
    });
    if ok {
        Ok(())
    } else {
        Err(Error::usage(format!("`{arch}` is not a GPU architecture name (expected e.g. sm_70, sm_80, sm_90)")))
    }
}

/// Builds the PTX module of `krate` for `arch`, prints one summary line, and returns the path of the
/// module. `all` lists every kernel crate of the workspace (see [`install_linker`]).
pub fn build_ptx(root: &Path, krate: &KernelCrate, all: &[KernelCrate], arch: &str) -> Result<PathBuf> {
    let start = Instant::now();
    validate_arch(arch)?;
    let toolchain = Toolchain::detect()?;
    toolchain.check_ptx_components()?;

    let target_dir = nvptx_target_dir(root);
    let linker = install_linker(root, &target_dir, all)?;

    let mut cmd = cargo_command();
    cmd.current_dir(root)
        .args(["rustc", "--package", &krate.package, "--release", "--target", TARGET, "-Zbuild-std=core"])
        .args(["--crate-type", "cdylib", "--message-format=json-render-diagnostics", "--target-dir"])
        .arg(&target_dir)
        .env("CARGO_ENCODED_RUSTFLAGS", rustflags(arch, &linker))
        .env(LINKER_MODE_ENV, "1")
        .env(LLVM_BIN_ENV, toolchain.llvm_bin_dir())
        .env_remove("RUSTFLAGS");
    let started = std::time::SystemTime::now();
    let stdout = run_stdout(&mut cmd).map_err(|e| {
        let log = target_dir.join(LOG_FILE_NAME);
        let hint = if link_failed_since(&log, started) {
            format!(
                "\n  the PTX link step failed; its command line and tool invocations are in {}",
                display_path(root, &log)
            )
        } else {
            String::new()
        };
        Error::new(format!("build-ptx: build of {} for {arch} failed: {e}{hint}", krate.package))
    })?;

    let built = find_ptx_artifact(&stdout)
        .or_else(|| {
            let fallback = target_dir.join(TARGET).join("release").join(format!("{}.ptx", krate.crate_name));
            fallback.is_file().then_some(fallback)
        })
        .ok_or_else(|| {
            Error::new(format!("build-ptx: cargo finished but reported no .ptx artifact (command: {})", describe(&cmd)))
        })?;

    let ptx = fs::read_to_string(&built).context(|| format!("cannot read {}", built.display()))?;
    match ptx_target(&ptx) {
        Some(t) if t == arch => {}
        other => {
            return Err(Error::new(format!(
                "build-ptx: {} declares `.target {}`, expected {arch}",
                built.display(),
                other.unwrap_or_else(|| "<none>".into())
            )));
        }
    }
    let dest = ptx_path(root, &krate.crate_name, arch);
    copy_file(&built, &dest)?;
    let kernels = ptx_entries(&ptx);
    let elapsed = start.elapsed();
    println!(
        "build-ptx: {} ({arch}, {} .entry kernel{}{}) in {}",
        display_path(root, &dest),
        kernels.len(),
        if kernels.len() == 1 { "" } else { "s" },
        kernel_list(&kernels),
        secs(elapsed)
    );
    if kernels.is_empty() {
        eprintln!("build-ptx: warning: the module has no .entry kernels");
    }
    Ok(dest)
}

/// Whether the PTX link log was written by a failed link after `since`.
fn link_failed_since(log: &Path, since: std::time::SystemTime) -> bool {
    let recent = fs::metadata(log).and_then(|m| m.modified()).is_ok_and(|t| t >= since);
    recent && fs::read_to_string(log).is_ok_and(|text| text.lines().any(|l| l.starts_with("FAILED:")))
}

fn kernel_list(kernels: &[String]) -> String {
    const SHOWN: usize = 6;
    if kernels.is_empty() {
        return String::new();
    }
    let mut text = kernels.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if kernels.len() > SHOWN {
        text.push_str(&format!(", ... {} more", kernels.len() - SHOWN));
    }
    format!(": {text}")
}

/// The flags of the nvptx build, `\x1f`-separated as `CARGO_ENCODED_RUSTFLAGS` wants them.
fn rustflags(arch: &str, linker: &Path) -> String {
    [format!("-Ctarget-cpu={arch}"), format!("-Clinker={}", linker.display()), "-Cpanic=abort".to_string()].join("\x1f")
}

/// Copies the running executable to `target/nvptx/ptx-linker` (a copy, so rebuilding xtask never
/// hits a busy executable). When the copy changes, the previous link outputs of every kernel crate in
/// `kernels` are cleaned first so cargo links them again with the new linker; `core` and `gpu-std`
/// stay built.
fn install_linker(root: &Path, target_dir: &Path, kernels: &[KernelCrate]) -> Result<PathBuf> {
    let exe = env::current_exe().context(|| "cannot locate the running xtask executable".to_string())?;
    let bytes = fs::read(&exe).context(|| format!("cannot read {}", exe.display()))?;
    let dest = target_dir.join(LINKER_FILE_NAME);
    if fs::read(&dest).is_ok_and(|old| old == bytes) {
        return Ok(dest);
    }
    create_dir_all(target_dir)?;
    mark_cache_dir(target_dir)?;
    if target_dir.join(TARGET).is_dir() && !kernels.is_empty() {
        let mut clean = cargo_command();
        clean.current_dir(root).arg("clean");
        for k in kernels {
            clean.args(["--package", &k.package]);
        }
        clean.args(["--release", "--target", TARGET, "--target-dir"]).arg(target_dir);
        let out = run_capture(&mut clean)?;
        if !out.success() {
            return Err(Error::new(format!(
                "build-ptx: `{}` failed ({}): {}",
                describe(&clean),
                out.status_text(),
                out.stderr.trim()
            )));
        }
    }
    replace_file(&dest, &bytes, true)?;
    Ok(dest)
}

/// Cargo tags the target directories it creates with `CACHEDIR.TAG` (and `cargo clean` refuses to
/// work without it); this directory may be created here before cargo first runs.
fn mark_cache_dir(dir: &Path) -> Result<()> {
    let tag = dir.join("CACHEDIR.TAG");
    if tag.exists() {
        return Ok(());
    }
    let text = "Signature: 8a477f597d28d172789f06886806bc55\n\
                # This file is a cache directory tag created by cargo xtask build-ptx.\n\
                # For information about cache directory tags see https://bford.info/cachedir/\n";
    fs::write(&tag, text).context(|| format!("cannot write {}", tag.display()))
}

/// The `.ptx` file named by a `compiler-artifact` message in cargo's JSON output.
fn find_ptx_artifact(cargo_stdout: &str) -> Option<PathBuf> {
    cargo_stdout
        .lines()
        .filter_map(|line| json::parse(line).ok())
        .filter(|msg| msg.get("reason").and_then(json::Value::as_str) == Some("compiler-artifact"))
        .flat_map(|msg| msg.strings("filenames").into_iter().map(PathBuf::from).collect::<Vec<_>>())
        .find(|p| p.extension().is_some_and(|e| e == "ptx"))
}

/// Names of the `.entry` functions (kernels) of a PTX module, in order.
pub fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            words.by_ref().find(|w| *w == ".entry")?;
            let name = words.next()?.split('(').next()?.to_string();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// The architecture of the module's `.target` directive.
pub fn ptx_target(ptx: &str) -> Option<String> {
    ptx.lines().find_map(|line| {
        let rest = line.trim_start().strip_prefix(".target")?;
        rest.split([',', ' ', '\t']).find(|w| !w.is_empty()).map(str::to_string)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 7.8\n.target sm_90\n.address_size 64\n\n\t// .globl\tprobe\n.visible .entry probe(\n\t.param .align 8 .b8 probe_param_0[16],\n\t.param .u32 probe_param_1\n)\n{\n\tret;\n}\n.entry second (\n)\n{\n}\n";

    #[test]
    fn lists_entries_and_target() {
        assert_eq!(ptx_entries(SAMPLE), ["probe", "second"]);
        assert_eq!(ptx_target(SAMPLE).as_deref(), Some("sm_90"));
        assert_eq!(ptx_target(".target sm_80, debug\n").as_deref(), Some("sm_80"));
    }

    #[test]
    fn architecture_names() {
        for ok in ["sm_70", "sm_80", "sm_90", "sm_90a", "sm_100", "sm_100f"] {
            assert!(validate_arch(ok).is_ok(), "{ok}");
        }
        for bad in ["90", "sm90", "sm_", "sm_9", "sm_90ab", "compute_90", "sm_9x", "-Cfoo"] {
            assert!(validate_arch(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn default_arch_gets_the_plain_name() {
        let root = Path::new("/w");
        assert_eq!(ptx_path(root, "gpu_kernels", "sm_90"), Path::new("/w/target/ptx/gpu_kernels.ptx"));
        assert_eq!(ptx_path(root, "gpu_kernels", "sm_80"), Path::new("/w/target/ptx/gpu_kernels.sm_80.ptx"));
        assert_eq!(ptx_path(root, "user_kernels", "sm_90"), Path::new("/w/target/ptx/user_kernels.ptx"));
    }

    #[test]
    fn flags_are_unit_separated() {
        let flags = rustflags("sm_80", Path::new("/w/target/nvptx/ptx-linker"));
        assert_eq!(
            flags.split('\x1f').collect::<Vec<_>>(),
            ["-Ctarget-cpu=sm_80", "-Clinker=/w/target/nvptx/ptx-linker", "-Cpanic=abort"]
        );
    }

    #[test]
    fn finds_the_ptx_in_cargo_messages() {
        let out = concat!(
            r#"{"reason":"compiler-artifact","target":{"name":"core"},"filenames":["/t/libcore.rlib"]}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"name":"gpu_kernels"},"filenames":["/t/nvptx64-nvidia-cuda/release/gpu_kernels.ptx"]}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
            "\n"
        );
        assert_eq!(find_ptx_artifact(out), Some(PathBuf::from("/t/nvptx64-nvidia-cuda/release/gpu_kernels.ptx")));
    }
}
