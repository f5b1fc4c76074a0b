//! A corpus of kernels that were not written for this project's race detector: ports of NVIDIA's
//! public [cuda-samples](https://github.com/NVIDIA/cuda-samples) (`samples`) and of the block and warp
//! algorithms of [CCCL/CUB](https://github.com/NVIDIA/cccl) (`cub`).
//!
//! Each port keeps the original's memory operations, barriers, fences, atomics and launch shape; its
//! module header names the source file and commit it follows, and what was left out. Each comes with
//! a host-side check ([`Entry::check`]): inputs, the launch, and a CPU reference the result must match.
//! The tests run every entry on the emulator at sizes with a partial last block on schedule seeds
//! 1..=5 (exact and race-free), mutation-test it (every barrier, fence, atomic and strong access
//! removed or weakened in turn, see `gpu_host::mutation_test`), and run it on a GPU when one is
//! present. `cuda/` holds a CUDA C++ twin of each, trimmed from the original to a launch and a
//! check, with its mutants selected by `-DMUTANT=k`, for compute-sanitizer's racecheck and synccheck.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_gpu_kernel))]

pub mod cub;
pub mod samples;

#[cfg(not(target_arch = "nvptx64"))]
mod entry;
#[cfg(not(target_arch = "nvptx64"))]
pub use entry::{Checked, Entry, Redundant, all};

// SAFETY: no kernel of this crate, nor anything it calls, reaches a gpu-std primitive or view access
// inside a thread-local's initialiser or while it borrows a thread-local, and none keeps a view in a
// thread-local (this crate has no thread-locals).
pub const GPU_STD_KERNEL_CRATE: gpu_std::KernelCrate = unsafe { gpu_std::KernelCrate::new(module_path!()) };
