//! The toolchain that builds the kernels, and the rustup proxies that select it.
//!
//! The kernel crate names its nightly in a `rust-toolchain.toml` (or legacy `rust-toolchain`) file
//! in its directory or an ancestor, as rustup would find it; without one the builder uses
//! [`DEFAULT_TOOLCHAIN`]. The child build runs `cargo +<toolchain>` through rustup's proxy, so the
//! crate whose build script calls the builder may itself be on stable.
//!
//! `-Zbuild-std=core` compiles `core` for `nvptx64-nvidia-cuda` from the `rust-src` component, and
//! the link step runs `llvm-link`, `opt` and `llc` from the `llvm-tools` component.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::env::EnvReader;
use crate::error::BuildError;
use crate::process::run_capture;

/// The toolchain used when neither the builder nor a toolchain file names one.
pub const DEFAULT_TOOLCHAIN: &str = "nightly-2026-10-01";

/// The LLVM tools the PTX link runs, in pipeline order.
pub(crate) const LLVM_TOOLS: [&str; 3] = ["llvm-link", "opt", "llc"];

/// The toolchain file that applies to `dir` (searched from `dir` up through its ancestors) and the
/// toolchain it names. In one directory `rust-toolchain` wins over `rust-toolchain.toml`, as in
/// rustup.
pub(crate) fn toolchain_file(dir: &Path) -> Result<Option<(PathBuf, String)>, BuildError> {
    for d in dir.ancestors() {
        for name in ["rust-toolchain", "rust-toolchain.toml"] {
            let path = d.join(name);
            if !path.is_file() {
                continue;
            }
            let text =
                fs::read_to_string(&path).map_err(|e| BuildError::io(format!("cannot read {}", path.display()), e))?;
            let channel = parse_toolchain_file(&text, name == "rust-toolchain")
                .map_err(|reason| BuildError::ToolchainFile { path: path.clone(), reason })?;
            return Ok(Some((path, channel)));
        }
    }
    Ok(None)
}

/// The toolchain a toolchain file names: `[toolchain] channel = "..."`, or for a legacy
/// `rust-toolchain` file without a table, its one line.
fn parse_toolchain_file(text: &str, legacy: bool) -> Result<String, String> {
    let has_table = text.lines().any(|l| l.split('#').next().unwrap_or("").trim() == "[toolchain]");
    if legacy && !has_table {
        let name = text.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err("a rust-toolchain file without a [toolchain] table must hold one toolchain name".into());
        }
        return Ok(name.to_string());
    }
    let mut in_table = false;
    let mut channel = None;
    let mut path = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_table = line.split('#').next().unwrap_or("").trim() == "[toolchain]";
            continue;
        }
        let Some((key, value)) = line.split_once('=').filter(|_| in_table) else { continue };
        match key.trim() {
            "channel" => channel = Some(toml_string(value).ok_or("`channel` is not a string")?),
            "path" => path = Some(toml_string(value).ok_or("`path` is not a string")?),
            _ => {}
        }
    }
    if let Some(path) = path {
        return Err(format!(
            "it selects a toolchain directory (`path = \"{path}\"`), which `cargo +<toolchain>` cannot name"
        ));
    }
    match channel {
        Some(c) if !c.is_empty() => Ok(c),
        _ => Err("it has no `channel` in a [toolchain] table".into()),
    }
}

/// A basic TOML string (`"..."` or `'...'`, no escapes) followed by nothing or a comment.
fn toml_string(value: &str) -> Option<String> {
    let value = value.trim_start();
    let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'')?;
    let rest = &value[1..];
    let end = rest.find(quote)?;
    let after = rest[end + 1..].trim();
    (after.is_empty() || after.starts_with('#')).then(|| rest[..end].to_string())
}

/// rustup's proxies (`cargo`, `rustc`), which select a toolchain with `+<toolchain>`.
#[derive(Debug)]
pub(crate) struct Rustup {
    bin_dir: PathBuf,
}

impl Rustup {
    /// The directory holding `rustup` and its proxies: `$CARGO_HOME/bin`, else the first `PATH`
    /// entry holding `rustup`.
    pub(crate) fn locate(env: &EnvReader) -> Result<Rustup, BuildError> {
        let rustup = exe("rustup");
        if let Some(home) = env.non_empty("CARGO_HOME") {
            let dir = PathBuf::from(home).join("bin");
            if dir.join(&rustup).is_file() {
                return Ok(Rustup { bin_dir: dir });
            }
        }
        let path = env.var_os("PATH").unwrap_or_default();
        env::split_paths(&path)
            .find(|dir| dir.join(&rustup).is_file())
            .map(|bin_dir| Rustup { bin_dir })
            .ok_or(BuildError::NoRustup)
    }

    /// `cargo +<toolchain>`.
    pub(crate) fn cargo(&self, toolchain: &str) -> Command {
        let mut cmd = Command::new(self.bin_dir.join(exe("cargo")));
        cmd.arg(format!("+{toolchain}"));
        cmd
    }

    /// `rustc +<toolchain>`.
    pub(crate) fn rustc(&self, toolchain: &str) -> Command {
        let mut cmd = Command::new(self.bin_dir.join(exe("rustc")));
        cmd.arg(format!("+{toolchain}"));
        cmd
    }
}

fn exe(name: &str) -> String {
    format!("{name}{}", env::consts::EXE_SUFFIX)
}

/// An installed toolchain: its sysroot and host triple.
#[derive(Debug)]
pub(crate) struct Sysroot {
    /// The toolchain's name as given to rustup.
    pub(crate) toolchain: String,
    pub(crate) path: PathBuf,
    /// Host triple, e.g. `x86_64-unknown-linux-gnu`.
    pub(crate) host: String,
}

impl Sysroot {
    /// Asks the toolchain's `rustc` for its sysroot and host triple; a toolchain rustup does not have
    /// is a [`BuildError::ToolchainMissing`].
    pub(crate) fn probe(rustup: &Rustup, toolchain: &str, clean: impl Fn(&mut Command)) -> Result<Sysroot, BuildError> {
        let query = |args: &[&str]| -> Result<String, BuildError> {
            let mut cmd = rustup.rustc(toolchain);
            cmd.args(args);
            clean(&mut cmd);
            let out = run_capture(&mut cmd)?;
            if out.status.success() {
                Ok(out.stdout)
            } else if out.stderr.contains("is not installed") {
                Err(BuildError::ToolchainMissing { toolchain: toolchain.to_string() })
            } else {
                Err(out.error(&cmd))
            }
        };
        let path = PathBuf::from(query(&["--print", "sysroot"])?.trim());
        let version = query(&["-vV"])?;
        let host =
            version.lines().find_map(|l| l.strip_prefix("host:")).map(|h| h.trim().to_string()).ok_or_else(|| {
                BuildError::Command {
                    command: format!("rustc +{toolchain} -vV"),
                    status: "no `host:` line in its output".into(),
                    stderr: version.trim().to_string(),
                }
            })?;
        Ok(Sysroot { toolchain: toolchain.to_string(), path, host })
    }

    /// Directory holding the `llvm-tools` binaries.
    pub(crate) fn llvm_bin_dir(&self) -> PathBuf {
        self.path.join("lib").join("rustlib").join(&self.host).join("bin")
    }

    /// Checks that `rust-src` and `llvm-tools` are installed; one error names every missing one and
    /// the command that adds them.
    pub(crate) fn check_components(&self) -> Result<(), BuildError> {
        let rust_src = self.path.join("lib/rustlib/src/rust/library/core/Cargo.toml");
        let missing = missing_components(&rust_src, &self.llvm_bin_dir());
        if missing.is_empty() {
            Ok(())
        } else {
            Err(BuildError::ComponentsMissing { toolchain: self.toolchain.clone(), components: missing })
        }
    }
}

fn missing_components(rust_src_marker: &Path, llvm_bin: &Path) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if !rust_src_marker.is_file() {
        missing.push("rust-src");
    }
    if LLVM_TOOLS.iter().any(|tool| !llvm_bin.join(exe(tool)).is_file()) {
        missing.push("llvm-tools");
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_channel_of_a_toolchain_file() {
        let file = "# pinned\n[toolchain]\nchannel = \"nightly-2026-10-01\"  # the kernels' nightly\n\
                    components = [\"rust-src\", \"llvm-tools\"]\nprofile = \"minimal\"\n";
        assert_eq!(parse_toolchain_file(file, false).unwrap(), "nightly-2026-10-01");
        assert_eq!(parse_toolchain_file("[toolchain]\nchannel='nightly'\n", false).unwrap(), "nightly");
        // Another table's `channel` is not the toolchain's.
        let other = "[other]\nchannel = \"stable\"\n[toolchain]\nchannel = \"nightly-2026-01-01\"\n";
        assert_eq!(parse_toolchain_file(other, false).unwrap(), "nightly-2026-01-01");
    }

    #[test]
    fn legacy_files_hold_one_name_or_a_table() {
        assert_eq!(parse_toolchain_file("nightly-2026-10-01\n", true).unwrap(), "nightly-2026-10-01");
        assert_eq!(parse_toolchain_file("[toolchain]\nchannel = \"nightly\"\n", true).unwrap(), "nightly");
        assert!(parse_toolchain_file("\n", true).is_err());
        assert!(parse_toolchain_file("two words", true).is_err());
    }

    #[test]
    fn unusable_toolchain_files_say_why() {
        let no_channel = parse_toolchain_file("[toolchain]\ncomponents = []\n", false).unwrap_err();
        assert!(no_channel.contains("no `channel`"), "{no_channel}");
        let path = parse_toolchain_file("[toolchain]\npath = \"/opt/rust\"\n", false).unwrap_err();
        assert!(path.contains("/opt/rust"), "{path}");
        assert!(parse_toolchain_file("[toolchain]\nchannel = nightly\n", false).is_err());
    }

    #[test]
    fn finds_the_nearest_toolchain_file() {
        let base = env::temp_dir().join(format!("gpu-builder-tc-{}", std::process::id()));
        let deep = base.join("a/b/kernels");
        fs::create_dir_all(&deep).unwrap();
        fs::write(base.join("rust-toolchain.toml"), "[toolchain]\nchannel = \"nightly-2026-10-01\"\n").unwrap();
        let found = toolchain_file(&deep).unwrap().expect("the file two levels up");
        assert_eq!(found, (base.join("rust-toolchain.toml"), "nightly-2026-10-01".to_string()));
        // A nearer legacy file wins; in one directory the legacy name wins over the .toml.
        fs::write(base.join("a/rust-toolchain"), "nightly-2026-09-01\n").unwrap();
        fs::write(base.join("a/rust-toolchain.toml"), "[toolchain]\nchannel = \"x\"\n").unwrap();
        assert_eq!(toolchain_file(&deep).unwrap().unwrap().1, "nightly-2026-09-01");
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn reports_every_missing_component() {
        let nowhere = Path::new("/nonexistent-sysroot");
        assert_eq!(missing_components(&nowhere.join("core/Cargo.toml"), nowhere), ["rust-src", "llvm-tools"]);
    }
}
