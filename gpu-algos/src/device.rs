//! What the library needs of a [`Device`]: its kernels' module loaded there ([`ptx`],
//! `ensure_module`), and what the rules of [`crate::plan`] need to know of it (`target`).
//!
//! Imports `plan` and nothing else of the crate.

use crate::plan;
use gpu_host::{Device, Ptx};

/// The library's PTX module (sm_90), as built from `gpu-algos-kernels`.
static PTX: &str = include_str!("../ptx/gpu_algos_kernels.ptx");

/// The library's kernels as a module for [`Device::open`] (for a program with no kernels of its own)
/// or [`Device::load_module`].
pub fn ptx() -> Ptx {
    // SAFETY: `PTX` is the module that gpu-builder built from the `gpu-algos-kernels` crate
    // (its repository's tests check that it is what the crate's source builds to).
    unsafe { Ptx::text("gpu_algos_kernels", PTX) }
}

/// Makes the library's kernels launchable on `dev` (once per device; nothing on the emulator).
pub(crate) fn ensure_module(dev: &Device) -> crate::Result<()> {
    dev.load_module(&ptx())?;
    Ok(())
}

/// What the rules of [`plan`] need from `dev`.
pub(crate) fn target(dev: &Device) -> crate::Result<plan::Target> {
    let profile = dev.profile();
    Ok(plan::Target { gpu: profile.full_scale(), sms: profile.sms })
}
