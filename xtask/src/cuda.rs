//! Finding the NVIDIA driver (`libcuda.so.1`) and preparing `CUDA_LIBRARY_PATH` for the host's
//! `cuda` feature.
//!
//! The `cust` crate's build needs `CUDA_LIBRARY_PATH=<dir>` with `<dir>/lib64/libcuda.so` to link
//! against; at run time the driver's own `libcuda.so.1` is loaded.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build_ptx::DEFAULT_ARCH;
use crate::util::{Context, Error, Result, create_dir_all, display_path, find_in_path, run_capture};

/// Directories searched for `libcuda.so.1` when `ldconfig` does not list it.
const DRIVER_DIRS: [&str; 5] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/local/nvidia/lib64",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib/wsl/lib",
];

pub struct Driver {
    /// The driver's `libcuda.so.1`.
    pub library: PathBuf,
}

/// The NVIDIA driver library of this machine, if installed.
pub fn find_driver() -> Option<Driver> {
    from_ldconfig()
        .or_else(|| DRIVER_DIRS.iter().map(|d| Path::new(d).join("libcuda.so.1")).find(|p| p.exists()))
        .map(|library| Driver { library })
}

fn from_ldconfig() -> Option<PathBuf> {
    let ldconfig = find_in_path("ldconfig")
        .or_else(|| ["/sbin/ldconfig", "/usr/sbin/ldconfig"].into_iter().map(PathBuf::from).find(|p| p.is_file()))?;
    let out = run_capture(Command::new(ldconfig).arg("-p")).ok()?;
    parse_ldconfig(&out.stdout, env::consts::ARCH).filter(|p| p.exists())
}

/// The `libcuda.so.1` entry of `ldconfig -p` output, preferring the one for `arch`.
fn parse_ldconfig(listing: &str, arch: &str) -> Option<PathBuf> {
    let abi_tag = match arch {
        "x86_64" => "x86-64",
        "aarch64" => "AArch64",
        other => other,
    };
    let entries: Vec<(&str, PathBuf)> = listing
        .lines()
        .filter_map(|line| {
            let (lhs, path) = line.split_once("=>")?;
            let name = lhs.split_whitespace().next()?;
            (name == "libcuda.so.1").then(|| (lhs, PathBuf::from(path.trim())))
        })
        .collect();
    entries.iter().find(|(lhs, _)| lhs.contains(abi_tag)).or_else(|| entries.first()).map(|(_, p)| p.clone())
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
    let lib64 = dir.join("lib64");
    create_dir_all(&lib64)?;
    let link = lib64.join("libcuda.so");
    if fs::read_link(&link).is_ok_and(|t| t == driver.library) {
        return Ok(dir);
    }
    if fs::symlink_metadata(&link).is_ok() {
        fs::remove_file(&link).context(|| format!("cannot replace {}", link.display()))?;
    }
    std::os::unix::fs::symlink(&driver.library, &link)
        .context(|| format!("cannot link {} to {}", link.display(), driver.library.display()))?;
    Ok(dir)
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

    const LDCONFIG: &str = "\t1234 libs found in cache `/etc/ld.so.cache'\n\
        \tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12\n\
        \tlibcuda.so.1 (libc6) => /usr/lib/i386-linux-gnu/libcuda.so.1\n\
        \tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n\
        \tlibcuda.so (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so\n";

    #[test]
    fn picks_the_native_libcuda_from_ldconfig() {
        assert_eq!(parse_ldconfig(LDCONFIG, "x86_64"), Some(PathBuf::from("/usr/lib/x86_64-linux-gnu/libcuda.so.1")));
        assert_eq!(parse_ldconfig("\tlibc.so.6 (libc6,x86-64) => /lib/libc.so.6\n", "x86_64"), None);
    }

    #[test]
    fn compute_capability() {
        assert_eq!(parse_compute_cap("9.0"), Some(90));
        assert_eq!(parse_compute_cap(" 8.6\n"), Some(86));
        assert_eq!(parse_compute_cap("12.0"), Some(120));
        assert_eq!(parse_compute_cap("[N/A]"), None);
    }
}
