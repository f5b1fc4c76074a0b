//! The error type of the builder: one variant per way a build can fail, each with the context the
//! message needs to say what to do next.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why a PTX build failed.
///
/// `Display` (and `Debug`, so that `build().unwrap()` and `fn main() -> Result<..>` print the same
/// text) says what went wrong and, where there is one, the command that fixes it.
#[non_exhaustive]
pub enum BuildError {
    /// The architecture is not a PTX ISA target name such as `sm_80` or `sm_90a`.
    InvalidArch(String),
    /// An extra rustc flag contains the 0x1F unit separator that `CARGO_ENCODED_RUSTFLAGS` uses.
    InvalidFlag(String),
    /// The kernel build's target directory holds the running build script's `OUT_DIR`: it is the
    /// outer build's, whose lock cargo holds while the script runs.
    TargetDirInUse(PathBuf),
    /// There is no `Cargo.toml` at the kernel crate's path.
    NoKernelCrate(PathBuf),
    /// A `rust-toolchain.toml` / `rust-toolchain` file could not be used.
    ToolchainFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// rustup, whose `cargo` and `rustc` proxies understand `+<toolchain>`, was not found.
    NoRustup,
    /// The toolchain the kernel crate needs is not installed.
    ToolchainMissing {
        /// The toolchain, e.g. `nightly-2026-10-01`.
        toolchain: String,
    },
    /// The toolchain lacks components the build needs (`rust-src`, `llvm-tools`).
    ComponentsMissing {
        /// The toolchain.
        toolchain: String,
        /// The missing components, in rustup's names.
        components: Vec<&'static str>,
    },
    /// The kernel crate lies below a workspace that does not list it, so cargo refuses to build it.
    NotInWorkspace {
        /// The kernel crate's manifest.
        manifest: PathBuf,
        /// Cargo's own explanation.
        cargo_says: String,
    },
    /// The path holds a manifest that is not a package with a library target (e.g. a virtual
    /// workspace manifest, or a binary-only package).
    NotALibrary {
        /// The manifest.
        manifest: PathBuf,
        /// What is missing.
        reason: String,
    },
    /// A cargo or rustc command (other than the kernel build itself) failed.
    Command {
        /// The command line.
        command: String,
        /// How it ended, e.g. `exit code 101`.
        status: String,
        /// Its standard error output (trimmed).
        stderr: String,
    },
    /// A command could not be started.
    Spawn {
        /// The command line.
        command: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// The kernel crate did not compile or link.
    Compile {
        /// The kernel package.
        package: String,
        /// Rustc's rendered error diagnostics (file, line, message).
        errors: Vec<String>,
        /// Whether the diagnostics were also forwarded as `cargo:warning=` lines of a build script.
        forwarded: bool,
        /// The PTX link log, when the link step failed.
        link_log: Option<PathBuf>,
        /// The cargo command line.
        command: String,
        /// How cargo ended.
        status: String,
    },
    /// Cargo finished but did not report a `.ptx` artifact.
    NoArtifact {
        /// The cargo command line.
        command: String,
    },
    /// The module declares another `.target` than the one asked for.
    WrongTarget {
        /// The module.
        path: PathBuf,
        /// What its `.target` directive says, if it has one.
        found: Option<String>,
        /// The architecture asked for.
        expected: String,
    },
    /// A file operation failed.
    Io {
        /// What was being done, e.g. `cannot copy A to B`.
        action: String,
        /// The operating system's error.
        source: io::Error,
    },
}

impl BuildError {
    pub(crate) fn io(action: impl Into<String>, source: io::Error) -> Self {
        BuildError::Io { action: action.into(), source }
    }
}

/// `rustup component add ...` for the components and toolchain.
pub(crate) fn component_add_command(toolchain: &str, components: &[&str]) -> String {
    format!("rustup component add {} --toolchain {toolchain}", components.join(" "))
}

/// `rustup toolchain install ...` with the components the build needs.
pub(crate) fn toolchain_install_command(toolchain: &str) -> String {
    format!("rustup toolchain install {toolchain} --component rust-src,llvm-tools")
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::InvalidArch(arch) => write!(
                f,
                "`{arch}` is not a GPU architecture name (expected sm_ and two or three digits, optionally \
                 followed by `a` or `f`: sm_70, sm_80, sm_90, sm_90a, sm_100f)"
            ),
            BuildError::InvalidFlag(flag) => {
                write!(f, "the rustc flag {flag:?} contains the 0x1F separator of CARGO_ENCODED_RUSTFLAGS")
            }
            BuildError::TargetDirInUse(dir) => write!(
                f,
                "the kernel build cannot use {}: it is the target directory of the build running this build \
                 script, which cargo keeps locked until the script ends\n  fix: leave `.target_dir(...)` out \
                 (the default is `gpu-builder` inside it) or name a directory of its own",
                dir.display()
            ),
            BuildError::NoKernelCrate(path) => write!(
                f,
                "no kernel crate at {}: there is no Cargo.toml (PtxBuilder::new takes the kernel crate's \
                 directory, relative to the build script's package or absolute)",
                path.display()
            ),
            BuildError::ToolchainFile { path, reason } => write!(
                f,
                "cannot use the toolchain file {}: {reason}\n  fix: name a rustup toolchain in it \
                 (`[toolchain] channel = \"nightly-YYYY-MM-DD\"`), or call `.toolchain(\"...\")` on the builder",
                path.display()
            ),
            BuildError::NoRustup => write!(
                f,
                "rustup was not found (neither in $CARGO_HOME/bin nor on PATH); the kernel build runs \
                 `cargo +<nightly>` through rustup's proxies\n  fix: install rustup from https://rustup.rs"
            ),
            BuildError::ToolchainMissing { toolchain } => write!(
                f,
                "the toolchain `{toolchain}` that builds the kernels is not installed\n  fix: {}",
                toolchain_install_command(toolchain)
            ),
            BuildError::ComponentsMissing { toolchain, components } => write!(
                f,
                "the toolchain `{toolchain}` lacks the component{} {} that the PTX build needs\n  fix: {}",
                if components.len() == 1 { "" } else { "s" },
                components.join(" and "),
                component_add_command(toolchain, components)
            ),
            BuildError::NotInWorkspace { manifest, cargo_says } => write!(
                f,
                "cargo will not build the kernel crate {}: it lies below a workspace that does not list it.\n  \
                 fix: give the kernel crate its own workspace (an empty `[workspace]` table in its \
                 Cargo.toml), or add it to that workspace's `exclude` (or `members`).\n  cargo says: {}",
                manifest.display(),
                cargo_says.trim()
            ),
            BuildError::NotALibrary { manifest, reason } => {
                write!(f, "{} is not a kernel crate: {reason}", manifest.display())
            }
            BuildError::Command { command, status, stderr } => {
                write!(f, "`{command}` failed ({status})")?;
                if !stderr.is_empty() {
                    write!(f, ":\n{stderr}")?;
                }
                Ok(())
            }
            BuildError::Spawn { command, source } => write!(f, "could not start `{command}`: {source}"),
            BuildError::Compile { package, errors, forwarded, link_log, command, status } => {
                write!(f, "the kernel crate `{package}` failed to build for nvptx64-nvidia-cuda ({status})")?;
                if *forwarded {
                    // A build script: cargo shows this text, and the warnings only with it.
                    for e in errors {
                        write!(f, "\n{}", e.trim_end())?;
                    }
                    if !errors.is_empty() {
                        write!(f, "\n  (every diagnostic was also printed as a cargo warning)")?;
                    }
                } else {
                    // The full diagnostics went to standard error as they came: the gist here.
                    for e in errors {
                        for line in headline(e) {
                            write!(f, "\n  {line}")?;
                        }
                    }
                }
                if errors.is_empty() || !*forwarded {
                    write!(f, "\n  rustc's and cargo's messages are on standard error above")?;
                }
                if let Some(log) = link_log {
                    write!(
                        f,
                        "\n  the PTX link step failed; its command line and tool invocations are in {}",
                        log.display()
                    )?;
                }
                write!(f, "\n  command: {command}")
            }
            BuildError::NoArtifact { command } => {
                write!(f, "cargo finished but reported no .ptx artifact (command: {command})")
            }
            BuildError::WrongTarget { path, found, expected } => write!(
                f,
                "{} declares `.target {}`, expected {expected}",
                path.display(),
                found.as_deref().unwrap_or("<none>")
            ),
            BuildError::Io { action, source } => write!(f, "{action}: {source}"),
        }
    }
}

/// The first line of a rendered diagnostic and its first location line (`--> file:line:column`),
/// without terminal colours.
fn headline(rendered: &str) -> Vec<String> {
    let plain = strip_ansi(rendered);
    let mut lines = plain.lines();
    let mut out: Vec<String> = lines.next().map(|l| l.trim().to_string()).into_iter().collect();
    if let Some(location) = lines.map(str::trim).find(|l| l.starts_with("--> ")) {
        out.push(location.to_string());
    }
    out
}

/// The text without ANSI escape sequences (`ESC [ ... letter`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Io { source, .. } | BuildError::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_of_a_coloured_diagnostic() {
        let rendered = "\x1b[0m\x1b[1m\x1b[38;5;9merror[E0425]\x1b[0m: cannot find value `x`\n\
                        \x1b[0m  \x1b[0m\x1b[1m\x1b[38;5;12m--> \x1b[0m\x1b[0m/k/src/lib.rs:7:9\n   |\n";
        assert_eq!(headline(rendered), ["error[E0425]: cannot find value `x`", "--> /k/src/lib.rs:7:9"]);
        assert_eq!(headline("error: aborting due to 1 previous error\n"), ["error: aborting due to 1 previous error"]);
    }

    #[test]
    fn error_messages_say_what_to_do() {
        let tc = "nightly-2026-10-01";
        let missing = BuildError::ToolchainMissing { toolchain: tc.into() }.to_string();
        assert!(
            missing.ends_with("fix: rustup toolchain install nightly-2026-10-01 --component rust-src,llvm-tools"),
            "{missing}"
        );
        let components =
            BuildError::ComponentsMissing { toolchain: tc.into(), components: vec!["rust-src", "llvm-tools"] }
                .to_string();
        assert!(components.contains("lacks the components rust-src and llvm-tools"), "{components}");
        assert!(components.ends_with("fix: rustup component add rust-src llvm-tools --toolchain nightly-2026-10-01"));
        let one = BuildError::ComponentsMissing { toolchain: tc.into(), components: vec!["llvm-tools"] }.to_string();
        assert!(one.contains("the component llvm-tools that"), "{one}");
        for text in [&missing, &components] {
            assert!(!text.contains("stable"), "{text}");
        }
        let ws = BuildError::NotInWorkspace {
            manifest: "/w/k/Cargo.toml".into(),
            cargo_says: "error: current package believes it's in a workspace when it's not".into(),
        }
        .to_string();
        assert!(ws.contains("`[workspace]` table"), "{ws}");
        assert!(ws.contains("`exclude`"), "{ws}");
        let compile = BuildError::Compile {
            package: "k".into(),
            errors: vec!["error[E0425]: cannot find value `x`\n --> src/lib.rs:7:9\n".into()],
            forwarded: true,
            link_log: Some("/t/ptx-link/k.log".into()),
            command: "cargo rustc".into(),
            status: "exit code 101".into(),
        };
        let text = compile.to_string();
        assert!(text.contains(" --> src/lib.rs:7:9"), "{text}");
        assert!(text.contains("cargo warning"), "{text}");
        assert!(text.contains("/t/ptx-link/k.log"), "{text}");
        // Debug prints the same text, so `build().unwrap()` in a build script reads well.
        assert_eq!(format!("{compile:?}"), text);
    }
}
