//! The host runner: launches the chapter's kernels on a CUDA GPU or on the CPU SIMT emulator,
//! checks them against CPU references, and reports.
pub mod examples;
pub mod models;
pub mod mutate;
pub mod open;
pub mod report;
pub mod run;
pub mod sanitize;
pub mod verify;

/// The paths `host::device::…` that integration tests and earlier code use: gpu-host's device layer
/// and the functions of [`open`].
pub mod device {
    pub use crate::open::{DEFAULT_KERNEL_CRATE, crate_ptx, open, open_crate, open_with_ptx, ptx_env, ptx_path};
    pub use gpu_host::*;
}
