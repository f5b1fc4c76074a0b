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
//! present. `cuda/` holds the CUDA C++ source of each, trimmed from the original to a launch and a
//! check, with its mutants selected by `-DMUTANT=k`, for compute-sanitizer's racecheck and synccheck.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_gpu_kernel))]

pub mod cub;
pub mod samples;

#[cfg(not(target_arch = "nvptx64"))]
mod entry;
#[cfg(not(target_arch = "nvptx64"))]
pub use entry::{Checked, Entry, Redundant};

/// This crate's promise about thread-locals, which every `kernel!` needs (see `gpu_std::KernelCrate`).
pub struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}

/// Every entry of the corpus: the cuda-samples ports, then the CUB ports.
#[cfg(not(target_arch = "nvptx64"))]
pub fn all() -> Vec<Entry> {
    let mut v = samples::entries();
    v.extend(cub::entries());
    v
}
