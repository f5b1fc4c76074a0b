//! What a build returns: [`PtxModule`], the module's path and what it was built from. Data only: it
//! may not import the build's steps.

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A built PTX module. It dereferences to its [path](PtxModule::path).
#[derive(Clone, Debug)]
pub struct PtxModule {
    pub(crate) path: PathBuf,
    pub(crate) artifact: PathBuf,
    pub(crate) package: String,
    pub(crate) crate_name: String,
    pub(crate) arch: String,
    pub(crate) toolchain: String,
    pub(crate) target_dir: PathBuf,
    pub(crate) entries: Vec<String>,
    pub(crate) dependencies: Vec<PathBuf>,
    pub(crate) env_read: Vec<String>,
    pub(crate) env_var: String,
    pub(crate) kernel_names_rs: Option<PathBuf>,
    pub(crate) cargo_lines: Vec<String>,
}

impl PtxModule {
    /// Where the module is: the [`copy_to`](crate::PtxBuilder::copy_to) path if one was given, else
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
    /// `rustc-env=<CRATE_NAME>_PTX=<path>`. [`PtxBuilder::build`](crate::PtxBuilder::build) prints them in a build script.
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
