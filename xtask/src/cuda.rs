//! Finding the NVIDIA driver (`libcuda.so.1`) and preparing `CUDA_LIBRARY_PATH` for the host's
//! `cuda` feature.
//!
//! The `cust` crate's build needs `CUDA_LIBRARY_PATH=<dir>` with `<dir>/lib64/libcuda.so` to link
//! against; at run time the driver's own `libcuda.so.1` is loaded.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use find_cuda_helper::search as libcuda;

use crate::build_ptx::DEFAULT_ARCH;
use crate::util::{Context, Error, Result, display_path, find_in_path, run_capture};

pub struct Driver {
    /// The driver's `libcuda.so.1`.
    pub library: PathBuf,
}

/// The NVIDIA driver library of this machine, if installed.
pub fn find_driver() -> Option<Driver> {
    libcuda::find_driver().map(|library| Driver { library })
}

/// The GPU architecture to build PTX for on this machine: the GPU's own when it is older than the
/// default (PTX for a newer architecture does not load there), else the default.
pub fn gpu_arch() -> String {
    let Some(smi) = find_in_path("nvidia-smi") else {
        return DEFAULT_ARCH.to_string();
    };
    let mut cmd = Command::new(smi);
    cmd.args(["--query-gpu=compute_cap", "--format=csv,noheader"]);
    let Ok(out) = run_capture(&mut cmd) else {
        return DEFAULT_ARCH.to_string();
    };
    out.stdout
        .lines()
        .filter_map(parse_compute_cap)
        .min()
        .filter(|&cap| cap < 90)
        .map(|cap| format!("sm_{cap}"))
        .unwrap_or_else(|| DEFAULT_ARCH.to_string())
}

/// `"8.6"` → `86`.
fn parse_compute_cap(text: &str) -> Option<u32> {
    let (major, minor) = text.trim().split_once('.')?;
    Some(major.parse::<u32>().ok()? * 10 + minor.parse::<u32>().ok()?)
}

/// A directory usable as `CUDA_LIBRARY_PATH` that points at the local driver:
/// `target/cuda-link/lib64/libcuda.so` → the driver's `libcuda.so.1`.
pub fn link_dir_for(root: &Path, driver: &Driver) -> Result<PathBuf> {
    let dir = root.join("target").join("cuda-link");
    libcuda::link_dir_to_driver(&dir, &driver.library)
        .context(|| format!("cannot link {} to {}", dir.join("lib64/libcuda.so").display(), driver.library.display()))
}

/// `CUDA_LIBRARY_PATH` for a build with the `cuda` feature on this machine: the environment's value
/// if set, else a link directory for the local driver. `None` when neither exists.
pub fn library_path_for_local_build(root: &Path, driver: Option<&Driver>) -> Result<Option<PathBuf>> {
    if let Some(dir) = env::var_os("CUDA_LIBRARY_PATH").filter(|d| !d.is_empty()) {
        return Ok(Some(PathBuf::from(dir)));
    }
    driver.map(|d| link_dir_for(root, d)).transpose()
}

/// Checks that `dir` is something the `cust` build can link with.
pub fn check_library_path(root: &Path, dir: &Path) -> Result<()> {
    let lib = dir.join("lib64").join("libcuda.so");
    if lib.exists() {
        Ok(())
    } else {
        Err(Error::new(format!(
            "CUDA_LIBRARY_PATH={} has no lib64/libcuda.so (the host's `cuda` feature links against it)",
            display_path(root, dir)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_capability() {
        assert_eq!(parse_compute_cap("9.0"), Some(90));
        assert_eq!(parse_compute_cap(" 8.6\n"), Some(86));
        assert_eq!(parse_compute_cap("12.0"), Some(120));
        assert_eq!(parse_compute_cap("[N/A]"), None);
    }
}
