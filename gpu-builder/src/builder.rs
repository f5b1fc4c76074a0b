//! The builder: [`PtxBuilder`]'s options and [`PtxBuilder::build`], which runs the steps in order
//! (toolchain, package, target directory, the kernel build, the module's checks, the build script's
//! outputs) and returns the [`PtxModule`]. Each step is another file's; this one only sequences them.
//! Nothing else in the crate may import it (the crate root re-exports it).

use std::ffi::OsString;
use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::build_script::{build_script_out_dir, kernel_names_code};
use crate::env::{self, EnvReader};
use crate::error::BuildError;
use crate::files::{absolute, copy_if_changed, create_dir_all, write_if_changed};
use crate::kernel_build::{dep_info_sources, encoded_rustflags, link_failed_since, run_kernel_build, write_build_log};
use crate::link::{self, link_if_invoked};
use crate::module::PtxModule;
use crate::package::Package;
use crate::process::describe;
use crate::ptx_text::{self, validate_arch};
use crate::target_dir::{TARGET_SUBDIR, check_target_dir, mark_cache_dir, target_dir_from_out_dir};
use crate::toolchain::{self, DEFAULT_TOOLCHAIN, Rustup, Sysroot};

/// The target triple of the kernel build.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// The architecture built for unless [`PtxBuilder::arch`] names another.
pub const DEFAULT_ARCH: &str = "sm_90";

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
        let found = ptx_text::target(&text);
        if found.as_deref() != Some(self.arch.as_str()) {
            return Err(BuildError::WrongTarget { path: artifact, found, expected: self.arch.clone() });
        }
        let entries = ptx_text::entries(&text);

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

#[cfg(test)]
mod tests {
    use super::*;
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
