//! [`Kernel`]: a kernel as the host sees it. [`kernel!`](crate::kernel) implements it for every
//! kernel, on the host target only (a GPU build has no `Kernel`: its kernels are `.entry`s).
//!
//! Kernel floor (with [`crate::signature`], [`crate::launch_bounds`], [`crate::kernel_crate`] and the
//! launch arguments): names the launch arguments' traits, no primitive, no backend, not the emulator.

use crate::args::KernelArgs;

/// A kernel as the host sees it: its PTX entry name, the signature of its definition, and a function
/// the emulator can call. Implemented by [`kernel!`](crate::kernel) on the host target only.
///
/// # Safety
/// `Args` must be the parameter list of the `.entry` called `NAME` in every PTX module whose
/// signature global for `NAME` ([`signature`](crate::signature)) holds this kernel's signature
/// ([`signature::of::<Self>()`](crate::signature::of)), and `run` its body: a GPU launcher passes an `Args`
/// tuple to that entry once it has checked the signature (and the count and sizes of the
/// parameters) against the module. [`kernel!`](crate::kernel) guarantees this: it writes the signature into the
/// module from the same definition, with the same module path, name and parameter types (as each
/// target resolves them), so two definitions that differ in any of them cannot be taken for each
/// other.
///
/// `run` must keep [`KernelCrate`](crate::KernelCrate)'s promise about thread-locals: the emulator
/// runs every thread of a launch on one OS thread. [`kernel!`](crate::kernel) relies on the crate's
/// own `Kernels: KernelCrate` for it.
///
/// A hand-written implementation must say `unsafe impl`:
///
/// ```compile_fail,E0200
/// struct Fake;
/// impl gpu_std::Kernel for Fake { // error: the trait requires an `unsafe impl` declaration
///     const NAME: &'static str = "saxpy";
///     const MODULE_PATH: &'static str = "fake";
///     type Args<'a> = (u32,);
///     fn run<'a>(_: (u32,)) {}
/// }
/// ```
pub unsafe trait Kernel {
    /// The `.entry` name in the PTX module.
    const NAME: &'static str;
    /// The module path of the definition (`module_path!()` where [`kernel!`](crate::kernel) was invoked): with
    /// `NAME` and the types of `Args`, the kernel's [`signature`](crate::signature).
    const MODULE_PATH: &'static str;
    /// The parameter names, in declaration order (for reports: a view's parameter names its memory).
    const PARAMS: &'static [&'static str] = &[];
    /// The parameters, as a tuple of [`KernelParam`](crate::KernelParam)s, in declaration order, with
    /// views valid for the launch `'a`.
    type Args<'a>: KernelArgs;
    /// The most threads per block the kernel may be launched with, when its definition gives launch
    /// bounds (`#[launch_bounds(MAX, MIN)]` in [`kernel!`](crate::kernel)): the GPU refuses a launch with more, and so
    /// does the emulator.
    const MAX_THREADS_PER_BLOCK: Option<u32> = None;
    /// Runs the kernel body for the calling emulated thread. The body gets its views for a lifetime it
    /// cannot name, so it cannot keep them past the launch.
    fn run<'a>(args: Self::Args<'a>);
}
