//! The chapter's examples, one file each. Every file holds the kernel(s) and their launch contract
//! (block size, shared bytes, grid cap) as consts that the host reads. Kernels named `*_seed`,
//! `*_racy`, `*_broken`, `*_no_*` keep a bug of the chapter on purpose, for the emulator's detectors;
//! their fixed kernels sit beside them.
//!
//! The crate is written against `gpu-std` only, the way any user's kernel crate is: `no_std` and the
//! `gpu-kernel` ABI on nvptx (`cargo xtask build-ptx` builds it to PTX), plain Rust on the host, where
//! every kernel runs on `gpu_std::emu`.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_gpu_kernel))]

/// This crate's promise about thread-locals, which every `kernel!` of it needs (see
/// `gpu_std::KernelCrate`). It is public only to show that another crate cannot borrow it for its own
/// kernels. Not by importing it, as a package's binary would import its library's (a doctest is such
/// a crate: it links this library):
///
/// ```compile_fail,E0116
/// use gpu_kernels::Kernels;
/// gpu_std::kernel! { pub fn fill() {} } // error: cannot define inherent `impl` for a type outside of this crate
/// fn main() {}
/// ```
///
/// nor by a glob import of the library at the root:
///
/// ```compile_fail,E0116
/// use gpu_kernels::*;
/// gpu_std::kernel! { pub fn fill() {} }
/// fn main() {}
/// ```
///
/// nor by re-exporting it:
///
/// ```compile_fail,E0116
/// pub use gpu_kernels::Kernels;
/// gpu_std::kernel! { pub fn fill() {} }
/// fn main() {}
/// ```
///
/// nor by an alias of it:
///
/// ```compile_fail,E0116
/// type Kernels = gpu_kernels::Kernels;
/// gpu_std::kernel! { pub fn fill() {} }
/// fn main() {}
/// ```
///
/// A crate that makes its own promise compiles, with this library imported whole:
///
/// ```
/// use gpu_kernels::*;
/// pub struct Kernels;
/// // SAFETY: `fill` calls nothing.
/// unsafe impl gpu_std::KernelCrate for Kernels {}
/// gpu_std::kernel! { pub fn fill() {} }
/// fn main() {}
/// ```
pub struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}

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
