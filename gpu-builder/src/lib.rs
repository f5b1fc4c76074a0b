//! Builds a Rust GPU kernel crate to one PTX module, from a build script or from a tool.
//!
//! The kernel crate is compiled by rustc's NVPTX backend (`nvptx64-nvidia-cuda`, `-Zbuild-std=core`)
//! with the nightly it pins, and its LLVM bitcode is linked into one `.ptx` file with `llvm-link`,
//! `opt` and `llc` from that toolchain's `llvm-tools` component. Nothing else is needed: no CUDA
//! toolkit, no LLVM install, only rustup. The crate that calls the builder may be on stable; the
//! kernel build runs `cargo +<nightly>` through rustup's proxy.
//!
//! # In a build script
//!
//! ```no_run
//! // build.rs of the host crate
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // FIRST: in linker mode this call links and exits (see below).
//!     let module = gpu_builder::PtxBuilder::new("../kernels").arch("sm_90").build()?;
//!     // module.path() is OUT_DIR/kernels.ptx; cargo will rerun this script when a kernel source,
//!     // a path dependency's source, Cargo.toml, Cargo.lock or rust-toolchain.toml changes.
//!     let _ = module;
//!     Ok(())
//! }
//! ```
//!
//! and in the host crate:
//!
//! ```ignore
//! static PTX: &str = include_str!(env!("KERNELS_PTX"));
//! // The kernels' names as constants (`KERNELS`, `SAXPY`, ...):
//! include!(concat!(env!("OUT_DIR"), "/kernels_ptx.rs"));
//! ```
//!
//! In a build script (detected by cargo's `OUT_DIR`, `TARGET` and `HOST`; see
//! [`PtxBuilder::cargo_directives`]) [`PtxBuilder::build`] also
//! - copies the module to `OUT_DIR/<crate_name>.ptx`,
//! - prints `cargo:rustc-env=<CRATE_NAME>_PTX=<that path>` (e.g. `KERNELS_PTX` for the crate
//!   `kernels`),
//! - writes `OUT_DIR/<crate_name>_ptx.rs` with `pub const` names of the module's kernels,
//! - prints `cargo:rerun-if-changed` for every source file in the kernel build's dep-info (the
//!   kernel crate's and its path dependencies'), the kernel `Cargo.toml`, its workspace's
//!   `Cargo.toml` and `Cargo.lock`, and the toolchain file, plus `cargo:rerun-if-env-changed` for
//!   every environment variable the builder read, so an unchanged kernel is not rebuilt;
//! - forwards rustc's warnings and errors as `cargo:warning=` lines (cargo shows a build script's
//!   output only when it fails).
//!
//! # Linker mode: `build()` must come first
//!
//! rustc needs a linker for the NVPTX target that joins bitcode, and a build dependency cannot ship
//! an executable. So the builder passes *the executable that called it* (the build script binary,
//! or your tool) to rustc as `-Clinker`, with an environment variable naming that executable. When
//! rustc starts it as the linker, the program runs from the top again: [`PtxBuilder::build`] (and
//! [`link_if_invoked`]) notice linker mode at their very start, link, and exit the process with the
//! link's status.
//!
//! **Therefore `build()` (or [`link_if_invoked`]) must be the first thing `main` does.** Work done
//! before it runs again, once per link, in the linker process. A tool that builds PTX somewhere deep
//! inside calls [`link_if_invoked`] as the first line of `main`.
//!
//! # Where the kernel crate may live
//!
//! Anywhere on disk: inside the caller's workspace as a member, in another workspace, or alone. A
//! crate that is not a member of a workspace but lies in a directory below one must say so, or cargo
//! refuses to build it: give it its own (empty) `[workspace]` table, or list it in the enclosing
//! workspace's `exclude`. The builder reports this case as [`BuildError::NotInWorkspace`].
//! A kernel crate meant for a stable host project is best its own workspace, so that the nightly
//! cargo never resolves the host's workspace and lock file.
//!
//! # Target directory
//!
//! The kernel build has its own target directory, never the outer build's (cargo holds a lock on
//! that one while build scripts run): by default `<outer target dir>/gpu-builder` in a build
//! script, else `<kernel crate>/target/gpu-builder`; see [`PtxBuilder::target_dir`]. The link step
//! writes its command line and tool invocations to `<target dir>/ptx-link/<package>.log`.
#![warn(missing_docs)]

mod ar;
mod depinfo;
mod env;
mod error;
pub mod json;
mod link;
pub mod process;
pub mod ptx;
mod toolchain;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader, IsTerminal};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

pub use error::BuildError;
pub use ptx::validate_arch;
pub use toolchain::DEFAULT_TOOLCHAIN;

use env::EnvReader;
use json::Value;
use process::{describe, run_capture, spawn_error, status_text};
use toolchain::{Rustup, Sysroot};

/// The target triple of the kernel build.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// The architecture built for unless [`PtxBuilder::arch`] names another.
pub const DEFAULT_ARCH: &str = "sm_90";

/// The directory, below the outer target directory, of the kernel build in a build script.
const TARGET_SUBDIR: &str = "gpu-builder";

/// If rustc started this process as the PTX linker of a kernel build, links and exits the process
/// with the link's status; otherwise returns at once.
///
/// [`PtxBuilder::build`] calls this first, so a build script that starts with `build()` needs
/// nothing else. A program that calls `build()` later, or only on some paths (a command-line tool),
/// must call this as the first statement of `main`: the builder makes rustc run the calling
/// executable as the linker (see the [crate documentation](crate#linker-mode-build-must-come-first)).
pub fn link_if_invoked() {
    if link::invoked() {
        std::process::exit(link::main());
    }
}

/// Builds one kernel crate to one PTX module.
///
/// ```no_run
/// # fn main() -> Result<(), gpu_builder::BuildError> {
/// let module = gpu_builder::PtxBuilder::new("../kernels").arch("sm_80").copy_to("kernels.ptx").build()?;
/// println!("{} kernels in {}", module.entries().len(), module.path().display());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct PtxBuilder {
    path: PathBuf,
    arch: String,
    toolchain: Option<String>,
    target_dir: Option<PathBuf>,
    copy_to: Option<PathBuf>,
    features: Vec<String>,
    no_default_features: bool,
    rustflags: Vec<String>,
    cargo_directives: Option<bool>,
}

impl PtxBuilder {
    /// A builder for the kernel crate in directory `path` (or of the manifest `path`, if it names a
    /// `Cargo.toml`). A relative path is taken from the current directory, which in a build script
    /// is the directory of the package being built.
    pub fn new(path: impl AsRef<Path>) -> Self {
        PtxBuilder {
            path: path.as_ref().to_path_buf(),
            arch: DEFAULT_ARCH.to_string(),
            toolchain: None,
            target_dir: None,
            copy_to: None,
            features: Vec::new(),
            no_default_features: false,
            rustflags: Vec::new(),
            cargo_directives: None,
        }
    }

    /// The GPU architecture, e.g. `sm_80` or `sm_90a` (default [`DEFAULT_ARCH`]). It is passed as
    /// `-Ctarget-cpu` to every crate of the build, `core` included, and the module's `.target`
    /// directive is checked against it.
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = arch.into();
        self
    }

    /// The rustup toolchain that builds the kernels, e.g. `nightly-2026-10-01`. Default: the one
    /// named by the `rust-toolchain.toml` (or `rust-toolchain`) file of the kernel crate's directory
    /// or its nearest ancestor that has one, else [`DEFAULT_TOOLCHAIN`]. It needs the `rust-src`
    /// and `llvm-tools` components.
    pub fn toolchain(mut self, toolchain: impl Into<String>) -> Self {
        self.toolchain = Some(toolchain.into());
        self
    }

    /// The cargo target directory of the kernel build (relative paths are taken from the current
    /// directory). Default: `<outer target dir>/gpu-builder` in a build script (found from
    /// `OUT_DIR`), else `<kernel crate>/target/gpu-builder`. Never use the target directory of a
    /// build that is running this build script: cargo holds its lock, and the kernel build would
    /// wait forever.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Also copies the module to `path` (creating its directory), which then becomes
    /// [`PtxModule::path`] and the value of the `<CRATE_NAME>_PTX` variable. The file is left
    /// untouched when it already holds the same module.
    pub fn copy_to(mut self, path: impl Into<PathBuf>) -> Self {
        self.copy_to = Some(path.into());
        self
    }

    /// Cargo features of the kernel crate to turn on.
    pub fn features<I, S>(mut self, features: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.features.extend(features.into_iter().map(Into::into));
        self
    }

    /// Builds the kernel crate without its default features.
    pub fn no_default_features(mut self) -> Self {
        self.no_default_features = true;
        self
    }

    /// Adds a rustc flag for every crate of the kernel build (after `-Ctarget-cpu` and
    /// `-Cpanic=abort`). Flags from the user's cargo configuration (`build.rustflags`) do not apply
    /// to the kernel build, since the builder sets `CARGO_ENCODED_RUSTFLAGS`.
    pub fn rustflag(mut self, flag: impl Into<String>) -> Self {
        self.rustflags.push(flag.into());
        self
    }

    /// Whether to act as a build script: print the `cargo:` directives, forward diagnostics as
    /// warnings, copy the module and write the kernel-name constants into `OUT_DIR` (which must be
    /// set). Default: when cargo's build script variables `OUT_DIR`, `TARGET` and `HOST` are set.
    pub fn cargo_directives(mut self, on: bool) -> Self {
        self.cargo_directives = Some(on);
        self
    }

    /// Builds the module.
    ///
    /// In linker mode (rustc started this executable as the linker of a kernel build) this links and
    /// exits the process instead; see the [crate documentation](crate#linker-mode-build-must-come-first).
    pub fn build(&self) -> Result<PtxModule, BuildError> {
        link_if_invoked();
        let started = SystemTime::now();
        let env = EnvReader::default();
        validate_arch(&self.arch)?;
        if let Some(bad) = self.rustflags.iter().find(|f| f.contains('\x1f')) {
            return Err(BuildError::InvalidFlag(bad.clone()));
        }
        let out_dir = build_script_out_dir(self.cargo_directives);

        let manifest = self.manifest()?;
        let crate_dir = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
        let (toolchain, toolchain_file) = match &self.toolchain {
            Some(t) => (t.clone(), None),
            None => match toolchain::toolchain_file(&crate_dir)? {
                Some((file, channel)) => (channel, Some(file)),
                None => (DEFAULT_TOOLCHAIN.to_string(), None),
            },
        };
        let rustup = Rustup::locate(&env)?;
        let sysroot = Sysroot::probe(&rustup, &toolchain, |cmd| {
            env::clean_child_env(cmd, std::env::vars_os().map(|(k, _)| k));
        })?;
        sysroot.check_components()?;
        let package = Package::load(&rustup, &toolchain, &manifest)?;

        let target_dir = match (&self.target_dir, &out_dir) {
            (Some(dir), _) => absolute(dir)?,
            (None, Some(out)) => {
                target_dir_from_out_dir(out).unwrap_or_else(|| crate_dir.join("target").join(TARGET_SUBDIR))
            }
            (None, None) => crate_dir.join("target").join(TARGET_SUBDIR),
        };
        check_target_dir(&target_dir, out_dir.as_deref())?;
        create_dir_all(&target_dir)?;
        mark_cache_dir(&target_dir)?;
        let link_dir = target_dir.join("ptx-link");
        create_dir_all(&link_dir)?;
        let link_log = link_dir.join(format!("{}.log", package.name));

        let exe = std::env::current_exe().map_err(|e| BuildError::io("cannot locate the running executable", e))?;
        let mut cmd = rustup.cargo(&toolchain);
        cmd.current_dir(&crate_dir).arg("rustc").arg("--manifest-path").arg(&manifest);
        cmd.args(["--package", &package.name, "--lib", "--release", "--target", TARGET, "-Zbuild-std=core"]);
        cmd.args(["--crate-type", "cdylib", "--target-dir"]).arg(&target_dir);
        let colour = out_dir.is_none() && std::io::stderr().is_terminal();
        cmd.arg(if colour { "--message-format=json-diagnostic-rendered-ansi" } else { "--message-format=json" });
        if !self.features.is_empty() {
            cmd.arg("--features").arg(self.features.join(","));
        }
        if self.no_default_features {
            cmd.arg("--no-default-features");
        }
        let mut linker = OsString::from("-Clinker=");
        linker.push(&exe);
        cmd.arg("--").arg(linker).arg(format!("-Clink-arg={}={:016x}", link::LINK_ID_ARG, link::LINK_ID));
        let removed = env::clean_child_env(&mut cmd, std::env::vars_os().map(|(k, _)| k));
        cmd.env("CARGO_ENCODED_RUSTFLAGS", encoded_rustflags(&self.arch, &self.rustflags))
            .env("CARGO_BUILD_BUILD_DIR", &target_dir)
            .env(link::LINKER_ENV, &exe)
            .env(link::LLVM_BIN_ENV, sysroot.llvm_bin_dir())
            .env(link::LOG_ENV, &link_log);
        write_build_log(&target_dir, &cmd, &removed);

        let forward = out_dir.is_some();
        let outcome = run_kernel_build(&mut cmd, forward, &package.lib_name, &package.workspace_root)?;
        if !outcome.success {
            return Err(BuildError::Compile {
                package: package.name,
                errors: outcome.errors,
                forwarded: forward,
                link_log: link_failed_since(&link_log, started).then_some(link_log),
                command: describe(&cmd),
                status: outcome.status,
            });
        }
        let artifact = outcome.ptx.ok_or_else(|| BuildError::NoArtifact { command: describe(&cmd) })?;

        let text = fs::read_to_string(&artifact)
            .map_err(|e| BuildError::io(format!("cannot read {}", artifact.display()), e))?;
        let found = ptx::target(&text);
        if found.as_deref() != Some(self.arch.as_str()) {
            return Err(BuildError::WrongTarget { path: artifact, found, expected: self.arch.clone() });
        }
        let entries = ptx::entries(&text);

        // Outputs.
        let mut path = artifact.clone();
        if let Some(out) = &out_dir {
            path = out.join(format!("{}.ptx", package.lib_name));
            copy_if_changed(&artifact, &path)?;
        }
        if let Some(dest) = &self.copy_to {
            path = absolute(dest)?;
            copy_if_changed(&artifact, &path)?;
        }
        let env_var = env::ptx_env_name(&package.lib_name);
        let kernel_names_rs = match &out_dir {
            Some(out) => {
                let file = out.join(format!("{}_ptx.rs", package.lib_name));
                let code = kernel_names_code(&package.name, &self.arch, &path, &entries);
                write_if_changed(&file, code.as_bytes())?;
                Some(file)
            }
            None => None,
        };

        // What the module was built from.
        let mut dependencies = dep_info_sources(&artifact, &crate_dir, &[&sysroot.path, &target_dir]);
        if dependencies.is_empty() {
            dependencies.push(crate_dir.clone());
        }
        let ws_manifest = package.workspace_root.join("Cargo.toml");
        let lock = package.workspace_root.join("Cargo.lock");
        for extra in [Some(manifest.clone()), Some(ws_manifest), Some(lock), toolchain_file] {
            if let Some(file) = extra.filter(|f| f.is_file())
                && !dependencies.contains(&file)
            {
                dependencies.push(file);
            }
        }
        let env_read = env.names();
        let mut cargo_lines: Vec<String> =
            dependencies.iter().map(|d| format!("cargo:rerun-if-changed={}", d.display())).collect();
        cargo_lines.extend(env_read.iter().map(|v| format!("cargo:rerun-if-env-changed={v}")));
        cargo_lines.push(format!("cargo:rustc-env={env_var}={}", path.display()));
        if out_dir.is_some() {
            for line in &cargo_lines {
                println!("{line}");
            }
        }

        Ok(PtxModule {
            path,
            artifact,
            package: package.name,
            crate_name: package.lib_name,
            arch: self.arch.clone(),
            toolchain,
            target_dir,
            entries,
            dependencies,
            env_read,
            env_var,
            kernel_names_rs,
            cargo_lines,
        })
    }

    /// The kernel crate's manifest, absolute and with links resolved.
    fn manifest(&self) -> Result<PathBuf, BuildError> {
        let given = if self.path.file_name().is_some_and(|n| n == "Cargo.toml") {
            self.path.clone()
        } else {
            self.path.join("Cargo.toml")
        };
        if !given.is_file() {
            return Err(BuildError::NoKernelCrate(absolute(&self.path).unwrap_or_else(|_| self.path.clone())));
        }
        fs::canonicalize(&given).map_err(|e| BuildError::io(format!("cannot resolve {}", given.display()), e))
    }
}

/// A built PTX module. It dereferences to its [path](PtxModule::path).
#[derive(Clone, Debug)]
pub struct PtxModule {
    path: PathBuf,
    artifact: PathBuf,
    package: String,
    crate_name: String,
    arch: String,
    toolchain: String,
    target_dir: PathBuf,
    entries: Vec<String>,
    dependencies: Vec<PathBuf>,
    env_read: Vec<String>,
    env_var: String,
    kernel_names_rs: Option<PathBuf>,
    cargo_lines: Vec<String>,
}

impl PtxModule {
    /// Where the module is: the [`copy_to`](PtxBuilder::copy_to) path if one was given, else
    /// `OUT_DIR/<crate_name>.ptx` in a build script, else the [`artifact`](PtxModule::artifact).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The module as cargo wrote it, in the kernel build's target directory.
    pub fn artifact(&self) -> &Path {
        &self.artifact
    }

    /// The kernel package's name, e.g. `my-kernels`.
    pub fn package(&self) -> &str {
        &self.package
    }

    /// The kernel library's crate name, e.g. `my_kernels`.
    pub fn crate_name(&self) -> &str {
        &self.crate_name
    }

    /// The architecture the module was built for, e.g. `sm_90`.
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// The toolchain that built it, e.g. `nightly-2026-10-01`.
    pub fn toolchain(&self) -> &str {
        &self.toolchain
    }

    /// The kernel build's cargo target directory.
    pub fn target_dir(&self) -> &Path {
        &self.target_dir
    }

    /// The names of the module's kernels (`.entry` functions), in module order.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// The files the module was built from: the sources in the build's dep-info (the kernel
    /// crate's and its path dependencies'; the toolchain's `core` left out), the kernel
    /// `Cargo.toml`, its workspace's `Cargo.toml` and `Cargo.lock`, and the toolchain file.
    pub fn dependencies(&self) -> &[PathBuf] {
        &self.dependencies
    }

    /// The environment variables the builder read (cargo's build script variables left out).
    pub fn env_read(&self) -> &[String] {
        &self.env_read
    }

    /// The variable through which the host finds the module, e.g. `MY_KERNELS_PTX`.
    pub fn env_var(&self) -> &str {
        &self.env_var
    }

    /// In a build script, `OUT_DIR/<crate_name>_ptx.rs`: `PTX_PATH`, `KERNELS` (every kernel name)
    /// and one constant per kernel (`SAXPY` for `saxpy`), for `include!`.
    pub fn kernel_names_rs(&self) -> Option<&Path> {
        self.kernel_names_rs.as_deref()
    }

    /// The `cargo:` directives for a build script: `rerun-if-changed` for every
    /// [dependency](PtxModule::dependencies), `rerun-if-env-changed` for every variable read, and
    /// `rustc-env=<CRATE_NAME>_PTX=<path>`. [`PtxBuilder::build`] prints them in a build script.
    pub fn cargo_lines(&self) -> &[String] {
        &self.cargo_lines
    }
}

impl Deref for PtxModule {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for PtxModule {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// `OUT_DIR` when acting as a build script: when `forced` says so, else when cargo's build script
/// variables are set.
fn build_script_out_dir(forced: Option<bool>) -> Option<PathBuf> {
    let out_dir = std::env::var_os("OUT_DIR").filter(|d| !d.is_empty()).map(PathBuf::from);
    let in_build_script = || ["TARGET", "HOST"].iter().all(|v| std::env::var_os(v).is_some());
    match forced {
        Some(false) => None,
        Some(true) => out_dir,
        None => out_dir.filter(|_| in_build_script()),
    }
}

/// The kernel build's target directory for a build script whose output directory is `out_dir`:
/// `gpu-builder` in the outer target (or build) directory, which is the nearest ancestor holding
/// cargo's `CACHEDIR.TAG`, else the directory above `<profile>/build/`.
fn target_dir_from_out_dir(out_dir: &Path) -> Option<PathBuf> {
    let tagged = out_dir.ancestors().skip(1).find(|d| d.join("CACHEDIR.TAG").is_file());
    let above_build = || {
        let build = out_dir.ancestors().find(|d| d.file_name().is_some_and(|n| n == "build"))?;
        build.parent()?.parent()
    };
    tagged.or_else(above_build).map(|dir| dir.join(TARGET_SUBDIR))
}

/// Refuses a target directory that holds the running build script's `OUT_DIR`: the outer build's.
fn check_target_dir(target_dir: &Path, out_dir: Option<&Path>) -> Result<(), BuildError> {
    match out_dir {
        Some(out) if out.starts_with(target_dir) => Err(BuildError::TargetDirInUse(target_dir.to_path_buf())),
        _ => Ok(()),
    }
}

/// The flags of every crate of the kernel build, `\x1f`-separated as `CARGO_ENCODED_RUSTFLAGS` wants
/// them. `-Ctarget-cpu` goes here, not to `cargo rustc -- ...`, so that `core` is compiled for the
/// same PTX target as the kernels (rustc treats the target CPU as part of the ABI).
fn encoded_rustflags(arch: &str, extra: &[String]) -> String {
    let mut flags = vec![format!("-Ctarget-cpu={arch}"), "-Cpanic=abort".to_string()];
    flags.extend(extra.iter().cloned());
    flags.join("\x1f")
}

/// What `cargo metadata` says about the kernel package.
struct Package {
    name: String,
    /// The library target's crate name.
    lib_name: String,
    workspace_root: PathBuf,
}

impl Package {
    fn load(rustup: &Rustup, toolchain: &str, manifest: &Path) -> Result<Package, BuildError> {
        let mut cmd = rustup.cargo(toolchain);
        cmd.args(["metadata", "--no-deps", "--format-version", "1", "--manifest-path"]).arg(manifest);
        if let Some(dir) = manifest.parent() {
            cmd.current_dir(dir);
        }
        env::clean_child_env(&mut cmd, std::env::vars_os().map(|(k, _)| k));
        let out = run_capture(&mut cmd)?;
        if !out.status.success() {
            if out.stderr.contains("believes it's in a workspace when it's not") {
                return Err(BuildError::NotInWorkspace { manifest: manifest.to_path_buf(), cargo_says: out.stderr });
            }
            return Err(out.error(&cmd));
        }
        Package::parse(&out.stdout, manifest).map_err(|reason| match reason {
            ParseFailure::NotALibrary(reason) => BuildError::NotALibrary { manifest: manifest.to_path_buf(), reason },
            ParseFailure::Bad(why) => BuildError::Command {
                command: describe(&cmd),
                status: format!("unexpected output: {why}"),
                stderr: String::new(),
            },
        })
    }

    fn parse(metadata: &str, manifest: &Path) -> Result<Package, ParseFailure> {
        let doc = json::parse(metadata).map_err(ParseFailure::Bad)?;
        let workspace_root = doc.get("workspace_root").and_then(Value::as_str).map(PathBuf::from);
        let same = |p: &str| {
            let p = Path::new(p);
            p == manifest || fs::canonicalize(p).is_ok_and(|c| c == manifest)
        };
        let package = doc
            .get("packages")
            .map(Value::as_array)
            .unwrap_or_default()
            .iter()
            .find(|p| p.get("manifest_path").and_then(Value::as_str).is_some_and(same))
            .ok_or_else(|| {
                ParseFailure::NotALibrary("it is not a package (a virtual workspace manifest has no library)".into())
            })?;
        let name =
            package.get("name").and_then(Value::as_str).ok_or(ParseFailure::Bad("a package without a name".into()))?;
        let lib_name = package
            .get("targets")
            .map(Value::as_array)
            .unwrap_or_default()
            .iter()
            .find(|t| t.strings("kind").iter().any(|k| matches!(*k, "lib" | "rlib" | "cdylib" | "dylib" | "staticlib")))
            .and_then(|t| t.get("name").and_then(Value::as_str))
            .ok_or_else(|| ParseFailure::NotALibrary(format!("the package `{name}` has no library target")))?;
        Ok(Package {
            name: name.to_string(),
            lib_name: lib_name.replace('-', "_"),
            workspace_root: workspace_root.unwrap_or_else(|| manifest.parent().unwrap_or(manifest).to_path_buf()),
        })
    }
}

#[derive(Debug)]
enum ParseFailure {
    NotALibrary(String),
    Bad(String),
}

/// What the kernel build reported.
struct Outcome {
    success: bool,
    status: String,
    /// The `.ptx` of the last `compiler-artifact` of the kernel library.
    ptx: Option<PathBuf>,
    /// Rendered error diagnostics.
    errors: Vec<String>,
}

/// Runs the kernel build, reading cargo's JSON messages as they come: diagnostics go to standard
/// error (or, with `forward`, become `cargo:warning=` lines), the `.ptx` artifact is noted.
fn run_kernel_build(cmd: &mut Command, forward: bool, lib_name: &str, ws_root: &Path) -> Result<Outcome, BuildError> {
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
fn link_failed_since(log: &Path, since: SystemTime) -> bool {
    let recent = fs::metadata(log).and_then(|m| m.modified()).is_ok_and(|t| t >= since);
    recent && fs::read_to_string(log).is_ok_and(|text| text.lines().any(|l| l.starts_with("FAILED:")))
}

/// The sources listed in the dep-info file next to `artifact`, minus files under any of `skip`
/// (the toolchain's `core` sources, generated files), existing files only.
fn dep_info_sources(artifact: &Path, base: &Path, skip: &[&Path]) -> Vec<PathBuf> {
    let Ok(text) = fs::read_to_string(artifact.with_extension("d")) else { return Vec::new() };
    depinfo::prerequisites(&text, base)
        .into_iter()
        .filter(|p| !skip.iter().any(|s| p.starts_with(s)))
        .filter(|p| p.is_file())
        .collect()
}

/// Rust source with the module's path and kernel names as constants.
fn kernel_names_code(package: &str, arch: &str, path: &Path, entries: &[String]) -> String {
    let mut code = format!(
        "// Generated by gpu-builder from the kernel crate `{package}` ({arch}); rewritten on every build.\n\n\
         /// Path of the PTX module.\n\
         #[allow(dead_code)]\n\
         pub const PTX_PATH: &str = {:?};\n\n\
         /// The module's kernels (`.entry` functions), in module order.\n\
         #[allow(dead_code)]\n\
         pub const KERNELS: &[&str] = &[{}];\n",
        path.display().to_string(),
        entries.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>().join(", ")
    );
    let names: Vec<String> = entries.iter().map(|e| const_name(e)).collect();
    for (entry, name) in entries.iter().zip(&names) {
        let unique = names.iter().filter(|n| *n == name).count() == 1;
        if unique && name != "PTX_PATH" && name != "KERNELS" {
            let _ =
                write!(code, "\n/// The kernel `{entry}`.\n#[allow(dead_code)]\npub const {name}: &str = {entry:?};\n");
        }
    }
    code
}

/// `SAXPY` for `saxpy`: upper case, other characters as `_`, `_` before a leading digit.
fn const_name(entry: &str) -> String {
    let mut name: String =
        entry.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// Records the kernel build's command line and the variables kept from the child, for debugging.
fn write_build_log(target_dir: &Path, cmd: &Command, removed: &[String]) {
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

fn absolute(path: &Path) -> Result<PathBuf, BuildError> {
    std::path::absolute(path).map_err(|e| BuildError::io(format!("cannot make {} absolute", path.display()), e))
}

fn create_dir_all(dir: &Path) -> Result<(), BuildError> {
    fs::create_dir_all(dir).map_err(|e| BuildError::io(format!("cannot create directory {}", dir.display()), e))
}

/// Cargo tags the target directories it creates with `CACHEDIR.TAG` (and `cargo clean` refuses to
/// work without it); this one is created before cargo first runs.
fn mark_cache_dir(dir: &Path) -> Result<(), BuildError> {
    let tag = dir.join("CACHEDIR.TAG");
    if tag.exists() {
        return Ok(());
    }
    let text = "Signature: 8a477f597d28d172789f06886806bc55\n\
                # This file is a cache directory tag created by gpu-builder.\n\
                # For information about cache directory tags see https://bford.info/cachedir/\n";
    fs::write(&tag, text).map_err(|e| BuildError::io(format!("cannot write {}", tag.display()), e))
}

/// Copies `from` to `to` unless `to` already holds the same bytes (so its time stamp stays).
fn copy_if_changed(from: &Path, to: &Path) -> Result<(), BuildError> {
    let bytes = fs::read(from).map_err(|e| BuildError::io(format!("cannot read {}", from.display()), e))?;
    write_if_changed(to, &bytes)
}

/// Writes `bytes` to `to` (through a temporary sibling and a rename, so readers never see half a
/// file) unless it already holds them.
fn write_if_changed(to: &Path, bytes: &[u8]) -> Result<(), BuildError> {
    if fs::read(to).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    if let Some(parent) = to.parent() {
        create_dir_all(parent)?;
    }
    let mut tmp = to.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    fs::write(&tmp, bytes).map_err(|e| BuildError::io(format!("cannot write {}", tmp.display()), e))?;
    fs::rename(&tmp, to).map_err(|e| BuildError::io(format!("cannot move {} to {}", tmp.display(), to.display()), e))
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
    fn target_dir_is_beside_the_outer_profile_directory() {
        // Without a CACHEDIR.TAG on the way up: the directory above `<profile>/build`.
        let classic = Path::new("/nonexistent/w/target/debug/build/app-0123abcd/out");
        assert_eq!(target_dir_from_out_dir(classic).unwrap(), Path::new("/nonexistent/w/target/gpu-builder"));
        let cross = Path::new("/nonexistent/w/target/x86_64-unknown-linux-gnu/release/build/app-1/out");
        assert_eq!(
            target_dir_from_out_dir(cross).unwrap(),
            Path::new("/nonexistent/w/target/x86_64-unknown-linux-gnu/gpu-builder")
        );
        assert_eq!(target_dir_from_out_dir(Path::new("/nonexistent/out")), None);
    }

    #[test]
    fn the_outer_target_dir_is_refused() {
        let out = Path::new("/w/target/debug/build/app-1/out");
        let err = check_target_dir(Path::new("/w/target"), Some(out)).unwrap_err();
        assert!(err.to_string().contains("cannot use /w/target"), "{err}");
        assert!(check_target_dir(Path::new("/w/target/gpu-builder"), Some(out)).is_ok());
        assert!(check_target_dir(Path::new("/w/target"), None).is_ok());
    }

    #[test]
    fn target_dir_follows_cargos_cache_tag() {
        // Newer cargo layouts (`build/<pkg>/<hash>/out`) and separate build directories: the tag wins.
        let base = std::env::temp_dir().join(format!("gpu-builder-out-{}", std::process::id()));
        let out = base.join("target/debug/build/app/0123abcd/out");
        fs::create_dir_all(&out).unwrap();
        fs::write(base.join("target/CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
        assert_eq!(target_dir_from_out_dir(&out).unwrap(), base.join("target/gpu-builder"));
        fs::remove_dir_all(&base).unwrap();
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

    #[test]
    fn kernel_name_constants() {
        let code = kernel_names_code(
            "k",
            "sm_90",
            Path::new("/o/k.ptx"),
            &["saxpy", "block_sum", "dup", "DUP", "kernels", "9x"].map(String::from),
        );
        assert!(code.contains("pub const PTX_PATH: &str = \"/o/k.ptx\";"), "{code}");
        assert!(code.contains(
            "pub const KERNELS: &[&str] = &[\"saxpy\", \"block_sum\", \"dup\", \"DUP\", \"kernels\", \"9x\"];"
        ));
        assert!(code.contains("pub const SAXPY: &str = \"saxpy\";"));
        assert!(code.contains("pub const BLOCK_SUM: &str = \"block_sum\";"));
        assert!(code.contains("pub const _9X: &str = \"9x\";"));
        // Names that would clash are left to KERNELS.
        assert!(!code.contains("pub const DUP"));
        assert_eq!(code.matches("pub const KERNELS").count(), 1);
    }

    const METADATA: &str = r#"{"packages":[
        {"name":"helpers","manifest_path":"/w/helpers/Cargo.toml","targets":[{"kind":["lib"],"name":"helpers"}]},
        {"name":"my-kernels","manifest_path":"/w/kernels/Cargo.toml",
         "targets":[{"kind":["rlib"],"name":"my_kernels"},{"kind":["test"],"name":"emu"}]},
        {"name":"tool","manifest_path":"/w/tool/Cargo.toml","targets":[{"kind":["bin"],"name":"tool"}]}
    ],"workspace_root":"/w","target_directory":"/w/target","version":1}"#;

    #[test]
    fn reads_the_package_from_cargo_metadata() {
        let p = Package::parse(METADATA, Path::new("/w/kernels/Cargo.toml")).unwrap();
        assert_eq!((p.name.as_str(), p.lib_name.as_str()), ("my-kernels", "my_kernels"));
        assert_eq!(p.workspace_root, Path::new("/w"));
        assert!(matches!(Package::parse(METADATA, Path::new("/w/tool/Cargo.toml")), Err(ParseFailure::NotALibrary(_))));
        assert!(matches!(Package::parse(METADATA, Path::new("/w/Cargo.toml")), Err(ParseFailure::NotALibrary(_))));
        assert!(matches!(Package::parse("nope", Path::new("/w/Cargo.toml")), Err(ParseFailure::Bad(_))));
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

    #[test]
    fn builder_checks_its_inputs_before_running_anything() {
        let err = PtxBuilder::new("/nonexistent/kernels").arch("sm90").build().unwrap_err();
        assert!(matches!(err, BuildError::InvalidArch(_)), "{err}");
        let err = PtxBuilder::new("/nonexistent/kernels").rustflag("-Ca\x1f-Cb").build().unwrap_err();
        assert!(matches!(err, BuildError::InvalidFlag(_)), "{err}");
        let err = PtxBuilder::new("/nonexistent/kernels").cargo_directives(false).build().unwrap_err();
        assert!(matches!(err, BuildError::NoKernelCrate(_)), "{err}");
        assert!(err.to_string().contains("/nonexistent/kernels"), "{err}");
    }
}
