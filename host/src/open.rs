//! Opening a device for the runner: finds the PTX module of a kernel crate of the workspace
//! ([`ptx_path`]: `$<CRATE>_PTX`, the bundle's `ptx/`, or `target/ptx/`) and opens the device chosen on
//! the command line ([`gpu_host::Device::open`]) with it and gpu-algos' module, saying what to do when
//! the module was never built. The device itself is gpu-host's; this file may import gpu-host, gpu-std's
//! emulator options and gpu-algos, nothing else of the runner.

use gpu_host::{Device, DeviceChoice, Error, Ptx};
use gpu_std::emu;
use std::path::{Path, PathBuf};

/// The kernel crate whose PTX module [`open`] loads.
pub const DEFAULT_KERNEL_CRATE: &str = "gpu_kernels";

/// Where the PTX module of kernel crate `crate_name` (`gpu_kernels`, `user_kernels`, ...) is:
/// `$<CRATE_NAME>_PTX` (e.g. `$GPU_KERNELS_PTX`), else `ptx/<crate_name>.ptx` next to the executable
/// (a bundle), else `target/ptx/<crate_name>.ptx` of the workspace, where `cargo xtask build-ptx`
/// writes it.
pub fn ptx_path(crate_name: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(ptx_env(crate_name)).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let file = format!("{crate_name}.ptx");
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        let p = dir.join("ptx").join(&file);
        if p.exists() {
            return p;
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ptx").join(file)
}

/// The environment variable that overrides [`ptx_path`]: `GPU_KERNELS_PTX` for `gpu_kernels`.
pub fn ptx_env(crate_name: &str) -> String {
    format!("{}_PTX", crate_name.replace('-', "_").to_ascii_uppercase())
}

/// The PTX module of the workspace's kernel crate `crate_name`, at [`ptx_path`]: what `cargo xtask
/// build-ptx` (or the bundle) put there, or the module `$<CRATE_NAME>_PTX` names.
///
/// Loading a module runs its code, so this trusts those files to be modules that `gpu-builder` built
/// from gpu-std kernel crates, as a program trusts its own installed files (see [`Ptx::file`]). What
/// it need not trust is that the file is up to date, or this crate's: every launch checks the
/// module's signature for the kernel against the kernel's host type, and refuses a module built from
/// another definition.
pub fn crate_ptx(crate_name: &str) -> Ptx {
    // SAFETY: `ptx_path` names the module the build wrote for a kernel crate of this workspace
    // (`target/ptx/`, or `ptx/` next to the executable in a bundle), or the one the person running the
    // program named in `$<CRATE_NAME>_PTX` (which safe code cannot set); all are gpu-builder's output.
    // Which crate or version it was built from is checked at each launch, not assumed.
    unsafe { Ptx::file(ptx_path(crate_name)) }
}

/// Opens the requested device with the chapter's kernels (the PTX module at
/// `ptx_path("gpu_kernels")` on a GPU); see [`Device::open`].
pub fn open(choice: DeviceChoice, emu_opts: emu::Options) -> anyhow::Result<(Device, Option<String>)> {
    open_crate(choice, emu_opts, DEFAULT_KERNEL_CRATE)
}

/// Opens the requested device with the PTX module of the workspace's kernel crate `crate_name`
/// ([`crate_ptx`]).
pub fn open_crate(
    choice: DeviceChoice,
    emu_opts: emu::Options,
    crate_name: &str,
) -> anyhow::Result<(Device, Option<String>)> {
    with_hint(Device::open(choice, &crate_ptx(crate_name), emu_opts).map_err(Into::into), &ptx_path(crate_name))
}

/// Opens the requested device with the PTX module at `ptx` (another kernel crate's).
///
/// # Safety
/// As [`Ptx::file`]: the file at `ptx` must be a module that `gpu-builder` built from gpu-std kernel
/// crates (or one the driver refuses to load).
pub unsafe fn open_with_ptx(
    choice: DeviceChoice,
    emu_opts: emu::Options,
    ptx: &Path,
) -> anyhow::Result<(Device, Option<String>)> {
    // SAFETY: the caller's contract.
    with_hint(Device::open(choice, &unsafe { Ptx::file(ptx) }, emu_opts).map_err(Into::into), ptx)
}

/// Adds what to do to an error about a module that does not exist.
fn with_hint(r: anyhow::Result<(Device, Option<String>)>, ptx: &Path) -> anyhow::Result<(Device, Option<String>)> {
    // The library's kernels (gpu-algos), which the optimised tiers launch, next to the chapter's.
    let r = r.and_then(|(dev, note)| {
        // Nothing to load where kernels run from their host code (the emulator).
        dev.load_module(&gpu_algos::ptx())?;
        Ok((dev, note))
    });
    r.map_err(|e| {
        if !ptx.exists() && !e.downcast_ref::<Error>().is_some_and(Error::is_no_gpu) {
            e.context("build the module first: `cargo xtask build-ptx` (`-p CRATE` for a kernel crate other than gpu-kernels)")
        } else {
            e
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_modules_are_found_by_crate_name() {
        assert_eq!(ptx_env("gpu_kernels"), "GPU_KERNELS_PTX");
        assert_eq!(ptx_env("user-kernels"), "USER_KERNELS_PTX");
        // Without its variable, a module is looked up where `cargo xtask build-ptx` writes it.
        if std::env::var_os("NO_SUCH_CRATE_PTX").is_none() {
            assert!(ptx_path("no_such_crate").ends_with("target/ptx/no_such_crate.ptx"));
        }
    }
}
