//! The chapter's examples, one file each. Every file holds the kernel(s) and their launch contract
//! (block size, shared bytes, grid cap) as consts that the host reads. Kernels named `*_seed`,
//! `*_racy`, `*_broken`, `*_no_*` keep a bug of the chapter on purpose, for the emulator's detectors;
//! their fixed twins sit beside them.
//!
//! The crate is written against `gpu-std` only, the way any user's kernel crate is: `no_std` and the
//! `gpu-kernel` ABI on nvptx (`cargo xtask build-ptx` builds it to PTX), plain Rust on the host, where
//! every kernel runs on `gpu_std::emu`.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_gpu_kernel))]

/// This crate's promise about thread-locals, which every `kernel!` needs (see `gpu_std::KernelCrate`).
/// It is public only to show that another crate cannot borrow it for its own kernels:
///
/// ```compile_fail,E0080
/// const GPU_STD_KERNEL_CRATE: gpu_std::KernelCrate = gpu_kernels::GPU_STD_KERNEL_CRATE;
/// gpu_std::kernel! { pub fn fill() {} } // error: this crate's GPU_STD_KERNEL_CRATE was made by another crate
/// fn main() {}
/// ```
// SAFETY: no kernel of this crate, nor anything it calls, reaches a gpu-std primitive or view access
// inside a thread-local's initialiser or while it borrows a thread-local, and none keeps a view in a
// thread-local.
pub const GPU_STD_KERNEL_CRATE: gpu_std::KernelCrate = unsafe { gpu_std::KernelCrate::new(module_path!()) };

pub mod atomic_add_f64;
pub mod atomic_tour;
pub mod block_reduce_demo;
pub mod divergence;
pub mod divergent_barrier;
pub mod fp_determinism;
pub mod grid_sync;
pub mod histogram_global;
pub mod histogram_privatised;
pub mod lost_update;
pub mod multi_gpu;
pub mod primitives;
pub mod producer_consumer;
pub mod reduce_sum;
pub mod running_max;
pub mod spinlock;
pub mod stencil;
pub mod sync_variants;
pub mod system_scope;
pub mod tile_reduce;
pub mod warp_reduce;
