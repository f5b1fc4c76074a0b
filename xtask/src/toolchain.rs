//! The Rust toolchain pieces the PTX build needs, found in the active sysroot.
//!
//! `-Zbuild-std=core` compiles `core` for `nvptx64-nvidia-cuda` from the `rust-src` component, so
//! the prebuilt `rust-std` for that target is not used; the link step uses `llvm-link`, `opt` and
//! `llc` from the `llvm-tools` component.

use std::path::{Path, PathBuf};

use crate::util::{Error, Result, run_capture, rustc_command};

/// The LLVM tools the PTX link runs, in pipeline order.
pub const LLVM_TOOLS: [&str; 3] = ["llvm-link", "opt", "llc"];

pub struct Toolchain {
    pub sysroot: PathBuf,
    /// Host triple, e.g. `x86_64-unknown-linux-gnu`.
    pub host: String,
}

impl Toolchain {
    /// Asks the active `rustc` for its sysroot and host triple.
    pub fn detect() -> Result<Toolchain> {
        let sysroot = rustc_query(&["--print", "sysroot"])?;
        let version = rustc_query(&["-vV"])?;
        let host = version
            .lines()
            .find_map(|l| l.strip_prefix("host:"))
            .map(|h| h.trim().to_string())
            .ok_or_else(|| Error::new("`rustc -vV` did not report a host triple"))?;
        Ok(Toolchain { sysroot: PathBuf::from(sysroot.trim()), host })
    }

    /// Directory holding the `llvm-tools` binaries.
    pub fn llvm_bin_dir(&self) -> PathBuf {
        self.sysroot.join("lib/rustlib").join(&self.host).join("bin")
    }

    fn rust_src_marker(&self) -> PathBuf {
        self.sysroot.join("lib/rustlib/src/rust/library/core/Cargo.toml")
    }

    /// The toolchain name as rustup knows it, when the sysroot is a rustup toolchain directory.
    fn rustup_name(&self) -> Option<String> {
        let parent = self.sysroot.parent()?;
        if parent.file_name()? != "toolchains" {
            return None;
        }
        let name = self.sysroot.file_name()?.to_str()?;
        Some(name.strip_suffix(&format!("-{}", self.host)).unwrap_or(name).to_string())
    }

    /// Checks that every component the PTX build needs is installed; one error lists all that are
    /// missing with the command that installs them.
    pub fn check_ptx_components(&self) -> Result<()> {
        let missing = missing_components(&self.rust_src_marker(), &self.llvm_bin_dir());
        if missing.is_empty() {
            return Ok(());
        }
        let toolchain = self.rustup_name().map(|n| format!(" --toolchain {n}")).unwrap_or_default();
        Err(Error::new(format!(
            "the PTX build needs the rustup component{} {} (not installed in {})\n  fix: rustup component add {}{toolchain}",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(" and "),
            self.sysroot.display(),
            missing.join(" "),
        )))
    }
}

fn missing_components(rust_src_marker: &Path, llvm_bin: &Path) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if !rust_src_marker.is_file() {
        missing.push("rust-src");
    }
    if LLVM_TOOLS.iter().any(|tool| !llvm_bin.join(tool).is_file()) {
        missing.push("llvm-tools");
    }
    missing
}

fn rustc_query(args: &[&str]) -> Result<String> {
    let mut cmd = rustc_command();
    cmd.args(args);
    let out = run_capture(&mut cmd)?;
    if !out.success() {
        return Err(Error::new(format!(
            "`rustc {}` failed ({}): {}",
            args.join(" "),
            out.status_text(),
            out.stderr.trim()
        )));
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_every_missing_component() {
        let nowhere = Path::new("/nonexistent-sysroot");
        assert_eq!(missing_components(&nowhere.join("core/Cargo.toml"), nowhere), ["rust-src", "llvm-tools"]);
    }

    #[test]
    fn rustup_toolchain_name_drops_the_host_triple() {
        let tc = Toolchain {
            sysroot: PathBuf::from("/root/.rustup/toolchains/nightly-2026-10-01-x86_64-unknown-linux-gnu"),
            host: "x86_64-unknown-linux-gnu".into(),
        };
        assert_eq!(tc.rustup_name().as_deref(), Some("nightly-2026-10-01"));
        let custom = Toolchain { sysroot: PathBuf::from("/opt/rust"), host: tc.host.clone() };
        assert_eq!(custom.rustup_name(), None);
    }
}
