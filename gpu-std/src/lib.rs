//! `gpu-std`: the device layer for Rust CUDA kernels on rustc's NVPTX backend — threads, warps,
//! blocks, shared memory, atomics, fences and grid-wide barriers — plus a CPU SIMT emulator that runs
//! the same kernel source and reports data races, divergent barriers and deadlocks.
//!
//! The crate compiles two ways from one source:
//! - for `nvptx64-nvidia-cuda`: every primitive lowers to the PTX instruction its documentation
//!   names, and every `kernel!` becomes a `.entry`;
//! - for the host: every primitive is backed by [`emu`], an emulator of the CUDA execution model that
//!   runs each GPU thread as a coroutine under a seeded scheduler and reports data races, barrier
//!   divergence and deadlocks instead of hanging.
//!
//! Kernels touch memory only through views ([`Global`], [`GlobalMut`], [`Output`], [`SharedSlice`])
//! so that the emulator observes every access. Every view access is one PTX instruction of inline
//! assembly, so racy kernels (kept on purpose to demonstrate races) produce racy values, never
//! undefined behaviour; view elements are [`Pod`] scalars, for which every bit pattern is valid.
//!
//! A kernel crate needs, besides this dependency, `#![cfg_attr(target_arch = "nvptx64", no_std,
//! feature(abi_gpu_kernel))]`. It is built to PTX by rustc's NVPTX backend (`--target
//! nvptx64-nvidia-cuda -Zbuild-std=core`, as a `cdylib`, its LLVM bitcode linked into one `.ptx`
//! module); the `gpu-builder` crate does this from a build script. `gpu-host` launches its kernels,
//! on a GPU or on the emulator.
#![warn(missing_docs)]
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(asm_experimental_arch, stdarch_nvptx, core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
// The docs link to host-only items (`emu`, `Kernel`, `KernelArgs`), which a GPU build has none of.
#![cfg_attr(target_arch = "nvptx64", allow(rustdoc::broken_intra_doc_links))]

#[cfg(target_arch = "nvptx64")]
mod ptx;
#[cfg(target_arch = "nvptx64")]
use ptx as backend;

#[cfg(not(target_arch = "nvptx64"))]
mod args;
#[cfg(not(target_arch = "nvptx64"))]
pub mod emu;
#[cfg(not(target_arch = "nvptx64"))]
pub use args::{Arg, IntoArgs, IntoParam, KernelArgs, MemorySpace, ViewArg};
#[cfg(not(target_arch = "nvptx64"))]
use emu::backend;

pub mod atomic;
pub mod block;
pub mod fence;
pub mod grid;
pub mod memory;
pub mod pod;
pub mod shared;
pub mod thread;
pub mod vector;
pub mod warp;

pub use atomic::{Block, Device, Scope, System};
pub use memory::{Global, GlobalMut, KernelParam, Output, PerBlock, PerThread, PerWarp, Slot};
pub use pod::Pod;
pub use shared::SharedSlice;
pub use thread::Dim3;
pub use vector::{Lanes, Split, SplitMut, Vectors, VectorsMut};

/// Where in the kernel source a primitive was called: a `Location` on the host (the emulator names it
/// in its reports), nothing on the GPU.
#[cfg(not(target_arch = "nvptx64"))]
pub type Site = &'static core::panic::Location<'static>;
/// Where in the kernel source a primitive was called: nothing on the GPU (a `Location` on the host,
/// where the emulator names it in its reports).
#[cfg(target_arch = "nvptx64")]
pub type Site = ();

#[doc(hidden)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn site() -> Site {
    #[cfg(not(target_arch = "nvptx64"))]
    {
        core::panic::Location::caller()
    }
}

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // A failed bounds check or assertion ends the launch with "unspecified launch failure"
    // (CUDA_ERROR_LAUNCH_FAILED), which the host reports.
    unsafe { core::arch::nvptx::trap() }
}

/// A kernel as the host sees it: its PTX entry name and a function the emulator can call.
/// Implemented by [`kernel!`] on the host target only.
///
/// # Safety
/// `Args` must be the parameter list of the `.entry` called `NAME` that the kernel crate's PTX module
/// declares, and `run` its body: launchers pass an `Args` tuple to that entry. Write kernels with
/// [`kernel!`], which guarantees both; a GPU launcher also checks the count and sizes of the
/// parameters against the module before each launch.
///
/// A hand-written implementation must say `unsafe impl`:
///
/// ```compile_fail,E0200
/// struct Fake;
/// impl gpu_std::Kernel for Fake { // error: the trait requires an `unsafe impl` declaration
///     const NAME: &'static str = "saxpy";
///     type Args<'a> = (u32,);
///     fn run<'a>(_: (u32,)) {}
/// }
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub unsafe trait Kernel {
    /// The `.entry` name in the PTX module.
    const NAME: &'static str;
    /// The parameter names, in declaration order (for reports: a view's parameter names its memory).
    const PARAMS: &'static [&'static str] = &[];
    /// The parameters, as a tuple of [`KernelParam`]s, in declaration order, with views valid for the
    /// launch `'a`.
    type Args<'a>: KernelArgs;
    /// Runs the kernel body for the calling emulated thread. The body gets its views for a lifetime it
    /// cannot name, so it cannot keep them past the launch.
    fn run<'a>(args: Self::Args<'a>);
}

/// Defines a kernel once for both targets.
///
/// ```
/// gpu_std::kernel! {
///     /// `y[i] = a * x[i] + y[i]`.
///     pub fn saxpy<'a>(a: f32, x: gpu_std::Global<'a, f32>, y: gpu_std::GlobalMut<'a, f32>) {
///         let i = gpu_std::thread::global_index_x();
///         if i < y.len() {
///             y.set(i, a * x.get(i) + y.get(i));
///         }
///     }
/// }
/// ```
///
/// Views carry the lifetime of the launch: a kernel that takes views declares it (`<'a>`) and gives it
/// to each view. A kernel without views needs none.
///
/// On nvptx it becomes `#[no_mangle] pub extern "gpu-kernel" fn name(...)`, a PTX `.entry`. On the
/// host it becomes a unit struct implementing [`Kernel`], whose `run` is the same body, for the
/// emulator. Parameters must be [`KernelParam`]s ([`Pod`] scalars and global-memory views): anything
/// else is a compile error on both targets.
///
/// The body is safe code on both targets (it is the body of a safe function): an unsafe operation in
/// it needs an `unsafe` block, as anywhere else.
///
/// ```compile_fail,E0133
/// gpu_std::kernel! {
///     pub fn raw_store(addr: u64) {
///         *(addr as *mut u32) = 0xdeadbeef; // error: dereference of raw pointer is unsafe
///     }
/// }
/// ```
/// ```compile_fail,E0133
/// gpu_std::kernel! {
///     pub fn bad_mask(x: u32) {
///         let _ = gpu_std::warp::shfl_unchecked(gpu_std::warp::ShflMode::Idx, 0, x, 0, 32); // error: call to unsafe function
///     }
/// }
/// ```
/// ```compile_fail,E0277
/// gpu_std::kernel! {
///     pub fn takes_usize(n: usize) { let _ = n; }
/// }
/// ```
/// ```compile_fail,E0277
/// gpu_std::kernel! {
///     pub fn takes_bool(b: bool) { let _ = b; }
/// }
/// ```
/// ```compile_fail,E0277
/// gpu_std::kernel! {
///     pub fn takes_a_host_slice(s: &'static [u32]) { let _ = s; }
/// }
/// ```
///
/// Launchers check the rest on the host, before the launch: a kernel with an [`Output`] runs 1-D, and
/// no other view of the launch overlaps the `Output` ([`KernelArgs::check_launch`]).
#[macro_export]
macro_rules! kernel {
    ($(#[$m:meta])* pub fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        $crate::kernel! { $(#[$m])* pub fn $name<'__launch>($($arg: $ty),*) $body }
    };
    ($(#[$m:meta])* pub fn $name:ident<$lt:lifetime>($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        // Views are `#[repr(C)] {ptr, len}` structs; rustc passes them as `.param .align 8 .b8 p[16]`,
        // the layout CUDA C++ uses for a struct parameter (checked by a test over the built PTX).
        #[allow(improper_gpu_kernel_arg)]
        pub extern "gpu-kernel" fn $name<$lt>($($arg: $ty),*) {
            $( $crate::memory::assert_param::<$ty>(); )*
            // The body is a safe function's, as on the host.
            #[inline(always)]
            #[allow(unused_variables)]
            fn __gpu_std_kernel_body<$lt>($($arg: $ty),*) $body
            __gpu_std_kernel_body($($arg),*)
        }

        $(#[$m])*
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug)]
        pub struct $name;

        // SAFETY: `Args` and `run` come from the same definition as the `.entry` above.
        #[cfg(not(target_arch = "nvptx64"))]
        unsafe impl $crate::Kernel for $name {
            const NAME: &'static str = stringify!($name);
            const PARAMS: &'static [&'static str] = &[$(stringify!($arg)),*];
            type Args<$lt> = ($($ty,)*);
            #[allow(unused_parens)]
            fn run<$lt>(args: Self::Args<$lt>) {
                #[allow(unused_variables)]
                fn __gpu_std_kernel_body<$lt>($($arg: $ty),*) $body
                let ($($arg,)*) = args;
                __gpu_std_kernel_body($($arg),*)
            }
        }
    };
}

/// The README's examples, run as doctests.
#[cfg(all(doctest, not(target_arch = "nvptx64")))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
