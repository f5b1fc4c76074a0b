//! The kernel build itself: the flags every crate of it gets, `cargo rustc` run with cargo's JSON
//! messages read as they come (diagnostics shown or forwarded, the `.ptx` artifact noted), the
//! dep-info of what it read, and its logs. It may not import the builder, which calls it.

use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use crate::depinfo;
use crate::error::BuildError;
use crate::json::{self, Value};
use crate::process::{describe, spawn_error, status_text};

/// The flags of every crate of the kernel build, `\x1f`-separated as `CARGO_ENCODED_RUSTFLAGS` wants
/// them. `-Ctarget-cpu` goes here, not to `cargo rustc -- ...`, so that `core` is compiled for the
/// same PTX target as the kernels (rustc treats the target CPU as part of the ABI).
pub(crate) fn encoded_rustflags(arch: &str, extra: &[String]) -> String {
    let mut flags = vec![format!("-Ctarget-cpu={arch}"), "-Cpanic=abort".to_string()];
    flags.extend(extra.iter().cloned());
    flags.join("\x1f")
}

/// What the kernel build reported.
pub(crate) struct Outcome {
    pub(crate) success: bool,
    pub(crate) status: String,
    /// The `.ptx` of the last `compiler-artifact` of the kernel library.
    pub(crate) ptx: Option<PathBuf>,
    /// Rendered error diagnostics.
    pub(crate) errors: Vec<String>,
}

/// Runs the kernel build, reading cargo's JSON messages as they come: diagnostics go to standard
/// error (or, with `forward`, become `cargo:warning=` lines), the `.ptx` artifact is noted.
pub(crate) fn run_kernel_build(
    cmd: &mut Command,
    forward: bool,
    lib_name: &str,
    ws_root: &Path,
) -> Result<Outcome, BuildError> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = cmd.spawn().map_err(|e| spawn_error(cmd, e))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut outcome = Outcome { success: false, status: String::new(), ptx: None, errors: Vec::new() };
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = json::parse(&line) else {
            // Not a cargo message (e.g. printed by a dependency's build script).
            if !line.trim().is_empty() {
                eprintln!("{line}");
            }
            continue;
        };
        match msg.get("reason").and_then(Value::as_str) {
            Some("compiler-message") => {
                let level = msg.at(&["message", "level"]).and_then(Value::as_str).unwrap_or("");
                let Some(rendered) = msg.at(&["message", "rendered"]).and_then(Value::as_str) else { continue };
                let rendered = absolute_locations(rendered, ws_root);
                let rendered = rendered.as_str();
                if level.starts_with("error") {
                    outcome.errors.push(rendered.to_string());
                }
                if forward {
                    if level.starts_with("error") || level == "warning" {
                        for l in rendered.lines().filter(|l| !l.trim().is_empty()) {
                            println!("cargo:warning={l}");
                        }
                    }
                } else {
                    eprint!("{rendered}");
                }
            }
            Some("compiler-artifact") => {
                if msg.at(&["target", "name"]).and_then(Value::as_str).map(|n| n.replace('-', "_")).as_deref()
                    == Some(lib_name)
                    && let Some(ptx) = msg.strings("filenames").into_iter().find(|f| f.ends_with(".ptx"))
                {
                    outcome.ptx = Some(PathBuf::from(ptx));
                }
            }
            _ => {}
        }
    }
    let status = child.wait().map_err(|e| spawn_error(cmd, e))?;
    outcome.success = status.success();
    outcome.status = status_text(status);
    Ok(outcome)
}

/// A rendered diagnostic with its source locations (`--> src/lib.rs:7:9`, relative to the kernel
/// workspace, where rustc runs) made absolute, so that they cannot be taken for the calling crate's
/// files.
fn absolute_locations(rendered: &str, ws_root: &Path) -> String {
    let mut out = String::with_capacity(rendered.len() + 64);
    for line in rendered.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        match line[indent..].strip_prefix("--> ") {
            Some(location) if !location.is_empty() && Path::new(location.trim_end()).is_relative() => {
                out.push_str(&line[..indent]);
                out.push_str("--> ");
                out.push_str(&ws_root.join(location).display().to_string());
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Whether the PTX link log was written by a failed link after `since`.
pub(crate) fn link_failed_since(log: &Path, since: SystemTime) -> bool {
    let recent = fs::metadata(log).and_then(|m| m.modified()).is_ok_and(|t| t >= since);
    recent && fs::read_to_string(log).is_ok_and(|text| text.lines().any(|l| l.starts_with("FAILED:")))
}

/// The sources listed in the dep-info file next to `artifact`, minus files under any of `skip`
/// (the toolchain's `core` sources, generated files), existing files only.
pub(crate) fn dep_info_sources(artifact: &Path, base: &Path, skip: &[&Path]) -> Vec<PathBuf> {
    let Ok(text) = fs::read_to_string(artifact.with_extension("d")) else { return Vec::new() };
    depinfo::prerequisites(&text, base)
        .into_iter()
        .filter(|p| !skip.iter().any(|s| p.starts_with(s)))
        .filter(|p| p.is_file())
        .collect()
}

/// Records the kernel build's command line and the variables kept from the child, for debugging.
pub(crate) fn write_build_log(target_dir: &Path, cmd: &Command, removed: &[String]) {
    let mut text =
        format!("command: {}\ncwd: {}\n", describe(cmd), cmd.get_current_dir().unwrap_or(Path::new(".")).display());
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            let _ = writeln!(text, "set: {}={}", k.to_string_lossy(), v.to_string_lossy().replace('\x1f', "\\x1f"));
        }
    }
    let _ = writeln!(text, "removed from the inherited environment: {}", removed.join(" "));
    // A debugging aid: failing to write it must not fail the build.
    let _ = fs::write(target_dir.join("gpu-builder.log"), text);
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn flags_are_unit_separated() {
        let flags = encoded_rustflags("sm_80", &["-Cdebug-assertions=on".to_string()]);
        assert_eq!(
            flags.split('\x1f').collect::<Vec<_>>(),
            ["-Ctarget-cpu=sm_80", "-Cpanic=abort", "-Cdebug-assertions=on"]
        );
    }

    #[test]
    fn diagnostic_locations_become_absolute() {
        let rendered = "error[E0425]: cannot find value `x`\n  --> src/lib.rs:7:9\n   |\n7  |     x\n";
        assert_eq!(
            absolute_locations(rendered, Path::new("/w/kernels")),
            "error[E0425]: cannot find value `x`\n  --> /w/kernels/src/lib.rs:7:9\n   |\n7  |     x\n"
        );
        let outside = "warning: unused\n --> /w/gpu-std/src/lib.rs:1:1\n";
        assert_eq!(absolute_locations(outside, Path::new("/w/kernels")), outside);
    }
}
