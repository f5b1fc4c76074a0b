//! Launch bounds: what CUDA C++ writes as `__launch_bounds__(MAX_THREADS, MIN_BLOCKS)`, given to a
//! kernel as `#[launch_bounds(MAX_THREADS, MIN_BLOCKS)]` inside [`kernel!`](crate::kernel).
//!
//! `MAX_THREADS` promises that no block of the kernel has more threads (the GPU refuses a launch
//! with more, and so does the emulator); `MIN_BLOCKS` asks the assembler to keep the kernel's
//! registers few enough that that many blocks of `MAX_THREADS` fit on one SM. The assembler then knows
//! how many registers each thread may use: with `#[launch_bounds(512, 3)]` up to 42 on an H200
//! (65536 registers per SM over 3 x 512 threads), where without bounds it may keep to 32 (4 blocks)
//! and serialise loads that it could otherwise issue together.
//!
//! ```
//! # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
//! gpu_std::kernel! {
//!     /// Each thread doubles one element; blocks of at most 256 threads, 4 of them per SM.
//!     #[launch_bounds(256, 4)]
//!     pub fn double<'a>(x: gpu_std::GlobalMut<'a, f32>) {
//!         let i = gpu_std::thread::global_index_x();
//!         if i < x.len() {
//!             x.set(i, 2.0 * x.get(i));
//!         }
//!     }
//! }
//! use gpu_std::Kernel;
//! assert_eq!(double::MAX_THREADS_PER_BLOCK, Some(256));
//! ```
//!
//! A kernel takes one `#[launch_bounds]`:
//!
//! ```compile_fail
//! # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
//! gpu_std::kernel! {
//!     #[launch_bounds(256, 4)]
//!     #[launch_bounds(512, 2)]
//!     pub fn twice<'a>(x: gpu_std::GlobalMut<'a, f32>) { x.set(0, 1.0); }
//! }
//! ```
//!
//! How it reaches the PTX: rustc has no attribute for it, so the kernel's `.entry` starts with a PTX
//! comment that names the bounds (this module's [`marker`]), and the PTX linker of `gpu-builder`
//! replaces it with the directives `.maxntid MAX_THREADS, 1, 1` and `.minnctapersm MIN_BLOCKS`
//! before the entry's body.

/// The comment a kernel's `.entry` starts with when it has launch bounds: `// gpu-std launch-bounds
/// MAX_THREADS MIN_BLOCKS` (`MIN_BLOCKS` 0: none given). Called by [`kernel!`](crate::kernel), not by
/// hand. PTX: `.maxntid`, `.minnctapersm` (the directives the PTX linker writes for the comment).
#[doc(hidden)]
#[inline(always)]
pub fn marker<const MAX_THREADS: u32, const MIN_BLOCKS: u32>() {
    const { assert!(MAX_THREADS >= 1 && MAX_THREADS <= 1024, "launch_bounds: MAX_THREADS must be 1 ..= 1024") };
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a comment: no instruction, no register, no memory.
    unsafe {
        core::arch::asm!(
            "// gpu-std launch-bounds {0} {1}",
            const MAX_THREADS,
            const MIN_BLOCKS,
            options(nomem, nostack, preserves_flags)
        );
    }
}

/// Refuses a block of more threads than kernel `K`'s launch bounds allow (`Ok` for a kernel without
/// bounds), with the message both launchers give: the emulator's and `gpu-host`'s, before the driver
/// would refuse the launch with a bare `CUDA_ERROR_INVALID_VALUE`.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check_block<K: crate::Kernel>(block: crate::thread::Dim3) -> Result<(), String> {
    match K::MAX_THREADS_PER_BLOCK {
        Some(max) if block.volume() > max as u64 => Err(format!(
            "kernel `{}`: a block of {} threads exceeds its launch bounds (at most {max} threads per block); \
             the GPU refuses this launch",
            K::NAME,
            block.volume()
        )),
        _ => Ok(()),
    }
}
