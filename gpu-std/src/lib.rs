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
//!
//! # Safety design
//!
//! The safe API keeps safe kernel code out of undefined behaviour, including the chapter's
//! deliberately racy kernels:
//!
//! - **Every view access is one PTX instruction of inline assembly** (`ld.global.b32`,
//!   `st.shared.b32`, `ld.volatile.global.b32`, ...), never a Rust load or store: the compiler cannot
//!   reason about device memory, so a race yields racy values, not UB. Volatile means
//!   `ld.volatile`/`st.volatile`. Shared views hold shared-window addresses, converted once per
//!   kernel, so a shared access or atomic is one `ld.shared`/`atom.shared` with no per-access address
//!   conversion.
//! - **Elements are plain old data**: views, shared arrays, kernel parameters and host buffers take
//!   only the sealed [`Pod`] scalars (`u8`...`u64`, `i8`...`i64`, `f32`, `f64`), for which every bit
//!   pattern is a value. A `bool`, a reference or a `usize` parameter does not compile.
//! - **Shared memory by layout**: `shared_layout! { pub struct Bins { pub bins: [u32; 1024] } }`
//!   places every array with Rust's own `#[repr(C)]` layout (no overlap between its arrays, no
//!   overflow), and `Bins::BYTES` sizes the launch. A launch with fewer bytes traps instead of
//!   corrupting memory; the emulator says "kernel `uses_bins` needs 4096 bytes of dynamic shared
//!   memory (Bins::BYTES) but the launch gave 0 (pass Bins::BYTES as the launch's shared bytes)"
//!   (`tests/reports.rs`). Every layout (and `shared::dynamic`) starts at the first byte of the
//!   block's dynamic shared memory, so a kernel uses one layout: two in one kernel share bytes (not
//!   UB: `Pod` elements, one instruction per access), and the emulator's race detector, which tracks
//!   memory per byte, reports unordered overlapping accesses of any widths.
//! - **One writer per element**: [`Output<T, PerThread | PerWarp | PerBlock>`](Output) lets each
//!   thread write only the element it owns (`out.mine()`, `out.grid_stride()`); the host hands it out
//!   only for a buffer it borrows exclusively. Ownership is computed from the 1-D global index (as
//!   cheap as a hand-written `if (lane == 0) out[i / 32] = ...`), so a kernel that takes an `Output`
//!   must be launched 1-D: every launcher checks that and refuses other shapes. `GlobalMut::set`
//!   (anyone writes anywhere) stays for atomics, flags and the chapter's racy demonstrations.
//! - **Warp masks**: `shfl_*`, `ballot`, `any`, `all` and `sync_warp` trap with a message (device
//!   `printf`) when the calling lane is not in the mask; with `FULL_MASK` the check compiles away. The
//!   `*_unchecked` forms are `unsafe fn` with a `# Safety` section.
//! - **Host views borrow their buffers** (`buf.view()`, `buf.view_mut()`, `buf.output()`, for
//!   `gpu-host`'s device buffers and the emulator's `emu::Buffer` alike), so a launch cannot be given
//!   a freed buffer, nor an `Output` together with another view of its buffer (`compile_fail` tests).
//!   Launchers also refuse raw views that overlap an `Output`, within one launch and across two
//!   launches that run at the same time ([`check_concurrent_views`]). On the emulator every access is
//!   also checked against the launch's views and the block's shared memory.
//! - **A kernel's signature travels with its `.entry`**: [`kernel!`] writes the definition's module
//!   path, name and parameter types, as each target resolves them, into the PTX module next to the
//!   entry ([`signature`]), and the host's [`Kernel`] type has the same ones. `gpu-host` refuses to
//!   launch an entry whose signature is not the host type's: a stale module, a kernel of the same
//!   name from another crate or module, a parameter type that differs between the targets (a
//!   `#[cfg]`'d alias), whose parameters may have the same sizes. Only doc comments, lint attributes
//!   and `#[launch_bounds]` reach a kernel's two definitions, and the macros reach `core` and the
//!   standard macros through `gpu_std` itself, so a crate that shadows `stringify!` or replaces
//!   `::core` changes neither a kernel's name nor a shared layout's size.
//! - **Thread-locals are a promise**: the emulator runs every thread of a launch as a coroutine of one
//!   OS thread, so they share its thread-locals, and a thread-local's lazy initialiser (or a scoped
//!   thread-local's closure) that reaches a scheduling point lets `std` drop a value another emulated
//!   thread borrows. A kernel crate promises, once, with `unsafe impl gpu_std::KernelCrate for Kernels
//!   {}`, that its kernels do not do that ([`KernelCrate`]); [`kernel!`] does not compile without the
//!   promise of a `Kernels` type of its own crate.
//! - **Views carry the launch's lifetime** (`fn k<'a>(x: Global<'a, f32>)`), so a kernel cannot keep
//!   one past its launch, nor an element for atomics made from one (`AtomicRef<'a, ..>`; one of shared
//!   memory lives as long as the borrow of its [`SharedSlice`]). A `SharedSlice` itself carries no
//!   lifetime: it is neither `Send` nor `Sync`, so only a host `thread_local!` can keep it past its
//!   launch; the emulator refuses its accesses to memory that the running launch was not given
//!   (which stops a freed block's memory from being touched, not an address that another view of
//!   the new launch now covers).
//! - **16-byte loads**: `view.split_vectors()` splits a `Global<T>` like `slice::align_to` into a head
//!   of single elements, a body of 16-byte vectors (`body.get(i)` is one `ld.global.v4.b32`, or
//!   `ld.global.v2.b64` for 8-byte elements; `body.get_nc(i)` reads through the read-only data cache,
//!   `ld.global.nc.v4.b32`; `body.get_streaming(i)` and `set_streaming` mark data used once,
//!   `ld.global.cs` / `st.global.cs`) and a tail, so a kernel reads every element exactly once whatever
//!   the alignment. `body.sub(start, len)` is a sub-view checked once, so that several accesses at
//!   constant distances cost one bounds check. The emulator records a vector load as one read of each
//!   element.
//! - **Reductions**: `view.atomic(i).add(v)` is an atomic add whose old value is not returned
//!   (`red.relaxed.gpu.global.add.u32`, `red.relaxed.cta.shared.add.u32`, ...): the thread does not
//!   wait for it.
//!
//! Every primitive names the PTX it emits (`/// PTX: shfl.sync.down.b32`), and a test finds each
//! named instruction in the code of that primitive's own probe kernel (`tests/probes` of the
//! workspace).
#![warn(missing_docs)]
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(asm_experimental_arch, stdarch_nvptx, core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
// The docs link to host-only items (`emu`, `Kernel`, `KernelArgs`), which a GPU build has none of.
#![cfg_attr(target_arch = "nvptx64", allow(rustdoc::broken_intra_doc_links))]

// The floors, bottom up; a file names only files of its own floor or below (tests/tests/layers.rs).
//
// 0. Vocabulary: scopes, spaces, accesses, sites, `Dim3`, lanes, parameter types, `Pod`, the spin
//    bound, and what the exported macros reach through `$crate`. Imports nothing else of gpu-std.
#[doc(hidden)]
pub mod __private;
pub mod pod;
pub mod spin;
mod vocab;

// 1. The backend every primitive calls (`backend::load`, `backend::sync_threads`, ...): one PTX
//    instruction of inline assembly on the GPU, the emulator below its launch API on the host.
#[cfg(target_arch = "nvptx64")]
mod ptx;
#[cfg(not(target_arch = "nvptx64"))]
use emu::backend;
#[cfg(target_arch = "nvptx64")]
use ptx as backend;

// 2. Views and primitives: what a kernel body calls.
pub mod atomic;
pub mod block;
pub mod fence;
pub mod grid;
pub mod memory;
pub mod shared;
pub mod thread;
pub mod vector;
pub mod warp;

// 3. Kernels: the host's `Kernel`, signatures, launch arguments and bounds, the crate's promise
//    (with `kernel!` below).
#[cfg(not(target_arch = "nvptx64"))]
mod args;
#[cfg(not(target_arch = "nvptx64"))]
mod kernel;
pub mod kernel_crate;
pub mod launch_bounds;
mod params;
pub mod signature;

// 4. The emulator's launch API (`emu::launch`, `emu::Buffer`); its engine is the host's backend.
#[cfg(not(target_arch = "nvptx64"))]
pub mod emu;

#[cfg(not(target_arch = "nvptx64"))]
pub use args::{Arg, IntoArgs, IntoParam, KernelArgs, MemorySpace, ViewArg, check_concurrent_views};
pub use atomic::{Block, Device, Scope, System};
#[cfg(not(target_arch = "nvptx64"))]
pub use kernel::Kernel;
pub use kernel_crate::KernelCrate;
pub use memory::{Global, GlobalMut, KernelParam, Output, PerBlock, PerThread, PerWarp, Slot};
pub use pod::Pod;
pub use shared::SharedSlice;
pub use vector::{Lanes, Split, SplitMut, Vectors, VectorsMut};
pub use vocab::dim3::Dim3;
pub use vocab::site::Site;
#[doc(hidden)]
pub use vocab::site::site;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // A failed bounds check or assertion ends the launch with "unspecified launch failure"
    // (CUDA_ERROR_LAUNCH_FAILED), which the host reports.
    unsafe { core::arch::nvptx::trap() }
}

/// Defines a kernel once for both targets.
///
/// ```
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
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
/// Among the attributes, `#[launch_bounds(MAX_THREADS, MIN_BLOCKS)]` (`MIN_BLOCKS` optional) gives the
/// kernel CUDA's launch bounds: see [`launch_bounds`]. The others may be doc comments and lint
/// attributes (`allow`, `warn`, `deny`, `forbid`, `expect`) only: any other attribute would reach one
/// of the kernel's two definitions (the `.entry` or the host type) and not the other, such as a
/// `#[cfg]` that keeps the host type of a kernel whose `.entry` is gone, or an `export_name`. (A macro
/// that passes attributes on to `kernel!` passes them as tokens, `#[$($a:tt)*]`: a `$a:meta` fragment
/// cannot be looked into, and is refused.)
///
/// ```compile_fail
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// gpu_std::kernel! {
///     #[cfg(not(target_arch = "nvptx64"))] // error: only doc comments, lint attributes and #[launch_bounds]
///     pub fn fill<'a>(x: gpu_std::GlobalMut<'a, u8>) { x.set(0, 1); }
/// }
/// ```
/// ```
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// gpu_std::kernel! {
///     /// Documented, with lints and launch bounds.
///     #[allow(unused_variables)]
///     #[launch_bounds(64)]
///     #[deny(unsafe_code)]
///     pub fn fill<'a>(x: gpu_std::GlobalMut<'a, u8>) { let unused = 0; x.set(0, 1); }
/// }
/// ```
///
/// On nvptx it becomes `#[no_mangle] pub extern "gpu-kernel" fn name(...)`, a PTX `.entry`, and a
/// global `__gpu_std_signature_name` that holds the definition's [`signature`] (its module path,
/// name and parameter types). On the host it becomes a unit struct implementing [`Kernel`], whose
/// `run` is the same body, for the emulator, and whose signature is computed from the same module
/// path, name and types: a GPU launch refuses a module whose signature for the kernel differs (a
/// stale module, a kernel of the same name defined elsewhere, a definition whose types differ between
/// the targets). Parameters must be [`KernelParam`]s ([`Pod`] scalars and global-memory views):
/// anything else is a compile error on both targets.
///
/// The body is safe code on both targets (it is the body of a safe function): an unsafe operation in
/// it needs an `unsafe` block, as anywhere else.
///
/// ```compile_fail,E0133
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// gpu_std::kernel! {
///     pub fn raw_store(addr: u64) {
///         *(addr as *mut u32) = 0xdeadbeef; // error: dereference of raw pointer is unsafe
///     }
/// }
/// ```
/// ```compile_fail,E0133
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// gpu_std::kernel! {
///     pub fn bad_mask(x: u32) {
///         let _ = gpu_std::warp::shfl_unchecked(gpu_std::warp::ShflMode::Idx, 0, x, 0, 32); // error: call to unsafe function
///     }
/// }
/// ```
/// ```compile_fail,E0277
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// gpu_std::kernel! {
///     pub fn takes_usize(n: usize) { let _ = n; }
/// }
/// ```
/// ```compile_fail,E0277
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// gpu_std::kernel! {
///     pub fn takes_bool(b: bool) { let _ = b; }
/// }
/// ```
/// ```compile_fail,E0277
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// gpu_std::kernel! {
///     pub fn takes_a_host_slice(s: &'static [u32]) { let _ = s; }
/// }
/// ```
///
/// A kernel takes at most 8 parameters; more is one error that says so:
///
/// ```compile_fail
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// gpu_std::kernel! { // error: kernel `nine` takes more than 8 parameters
///     pub fn nine(a: u32, b: u32, c: u32, d: u32, e: u32, f: u32, g: u32, h: u32, i: u32) { let _ = (a, b, c, d, e, f, g, h, i); }
/// }
/// ```
///
/// What the macro expands to names `core` and the standard macros only through `gpu_std`, so a crate
/// that replaces `::core` or shadows `stringify!` changes nothing in it (here its `stringify!` would
/// give every kernel the name of another):
///
/// ```standalone_crate
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// extern crate self as core;
/// pub use ::std::*;
/// macro_rules! stringify { ($($t:tt)*) => { "saxpy" } }
///
/// gpu_std::kernel! {
///     pub fn fill<'a>(x: gpu_std::GlobalMut<'a, u32>) { x.set(0, 1); }
/// }
///
/// fn main() {
///     use gpu_std::Kernel;
///     assert_eq!(stringify!(fill), "saxpy");
///     assert_eq!((fill::NAME, fill::PARAMS), ("fill", &["x"][..]));
/// }
/// ```
///
/// Launchers check the rest on the host, before the launch: a kernel with an [`Output`] runs 1-D, and
/// no other view of the launch overlaps the `Output` ([`KernelArgs::check_launch`]).
#[macro_export]
macro_rules! kernel {
    ($($input:tt)*) => { $crate::__kernel! { [] [] $($input)* } };
}

/// The body of [`kernel!`]: collects the attributes (taking out `#[launch_bounds(..)]`, refusing any
/// but doc comments and lint attributes), then emits the `.entry` with its signature, and the host
/// type.
#[doc(hidden)]
#[macro_export]
// `crate::*` is meant: the promise is the calling crate's own (`Kernels`, see `KernelCrate`).
#[allow(clippy::crate_in_macro_def)]
macro_rules! __kernel {
    ([$($attrs:tt)*] [] #[launch_bounds($max:literal $(, $min:literal)? $(,)?)] $($rest:tt)*) => {
        $crate::__kernel! { [$($attrs)*] [$max, $($min)?] $($rest)* }
    };
    ([$($attrs:tt)*] [$($lb:tt)+] #[launch_bounds $($x:tt)*] $($rest:tt)*) => {
        $crate::__private::core::compile_error!("a kernel takes one #[launch_bounds(MAX_THREADS, MIN_BLOCKS)]");
    };
    ([$($attrs:tt)*] [$($lb:tt)*] #[doc $($a:tt)*] $($rest:tt)*) => {
        $crate::__kernel! { [$($attrs)* #[doc $($a)*]] [$($lb)*] $($rest)* }
    };
    ([$($attrs:tt)*] [$($lb:tt)*] #[allow $($a:tt)*] $($rest:tt)*) => {
        $crate::__kernel! { [$($attrs)* #[allow $($a)*]] [$($lb)*] $($rest)* }
    };
    ([$($attrs:tt)*] [$($lb:tt)*] #[warn $($a:tt)*] $($rest:tt)*) => {
        $crate::__kernel! { [$($attrs)* #[warn $($a)*]] [$($lb)*] $($rest)* }
    };
    ([$($attrs:tt)*] [$($lb:tt)*] #[deny $($a:tt)*] $($rest:tt)*) => {
        $crate::__kernel! { [$($attrs)* #[deny $($a)*]] [$($lb)*] $($rest)* }
    };
    ([$($attrs:tt)*] [$($lb:tt)*] #[forbid $($a:tt)*] $($rest:tt)*) => {
        $crate::__kernel! { [$($attrs)* #[forbid $($a)*]] [$($lb)*] $($rest)* }
    };
    ([$($attrs:tt)*] [$($lb:tt)*] #[expect $($a:tt)*] $($rest:tt)*) => {
        $crate::__kernel! { [$($attrs)* #[expect $($a)*]] [$($lb)*] $($rest)* }
    };
    ([$($attrs:tt)*] [$($lb:tt)*] #[$($other:tt)*] $($rest:tt)*) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "kernel!: only doc comments, lint attributes (allow, warn, deny, forbid, expect) and #[launch_bounds] \
             may be given to a kernel, not #[",
            $crate::__private::core::stringify!($($other)*),
            "]: it would apply to one of the kernel's two definitions (the .entry, or the host type) and not the \
             other (a macro that passes attributes on to kernel! must pass them as tokens, #[$($a:tt)*], not as \
             $a:meta fragments, which kernel! cannot look into)"
        ));
    };
    ([$($attrs:tt)*] [$($lb:tt)*] pub fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        $crate::__kernel! { [$($attrs)*] [$($lb)*] pub fn $name<'__launch>($($arg: $ty),*) $body }
    };
    ([$($attrs:tt)*] [$($lb:tt)*] pub fn $name:ident<$lt:lifetime>(
        $a0:ident : $t0:ty, $a1:ident : $t1:ty, $a2:ident : $t2:ty, $a3:ident : $t3:ty, $a4:ident : $t4:ty,
        $a5:ident : $t5:ty, $a6:ident : $t6:ty, $a7:ident : $t7:ty, $a8:ident : $t8:ty $(, $($more:tt)*)?
    ) $body:block) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "kernel `",
            $crate::__private::core::stringify!($name),
            "` takes more than 8 parameters, the most a kernel! takes: pass several scalars in one buffer \
             (a Global<u32> of them), or several arrays as one view and their offsets"
        ));
    };
    ([$($attrs:tt)*] [$($lb:tt)*] pub fn $name:ident<$lt:lifetime>($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        // The crate's promise about thread-locals (see `KernelCrate`): a type `Kernels` of this crate
        // (an inherent impl compiles only for a type defined in the crate: E0116 for an alias, an import
        // or a re-export of another crate's) that implements `KernelCrate`.
        const _: () = {
            #[allow(unused_imports)]
            use crate::*;
            // A kernel defined in a function body names the crate root's `Kernels`: the impl adds
            // nothing, so where it stands changes nothing.
            #[allow(non_local_definitions)]
            impl Kernels {}
            $crate::kernel_crate::promised::<Kernels>()
        };

        // The parameter types, written once for each target: the `.entry`, its signature, the host
        // type and the body all name them through `KernelTypes` (`__kernel_params!`).
        #[cfg(target_arch = "nvptx64")]
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        pub struct $name {}
        $($attrs)*
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(non_camel_case_types)]
        #[derive(
            $crate::__private::core::clone::Clone,
            $crate::__private::core::marker::Copy,
            $crate::__private::core::fmt::Debug
        )]
        pub struct $name;
        impl $crate::signature::KernelTypes for $name {
            type Args<$lt> = ($($ty,)*);
        }

        // The definition's signature, next to its `.entry` in the PTX module, where a GPU launch reads
        // it: the module path, name and parameter types as this target resolves them.
        #[cfg(target_arch = "nvptx64")]
        const _: () = {
            const __GPU_STD_SIGNATURE_LEN: $crate::__private::core::primitive::usize = $crate::signature::len(
                $crate::__private::core::module_path!(),
                $crate::__private::core::stringify!($name),
                <<$name as $crate::signature::KernelTypes>::Args<'static> as $crate::signature::ParamList>::TYPES,
            );
            // SAFETY: the name is this kernel's alone (a second kernel of the same name in the crate
            // would clash at its `.entry` too): `__gpu_std_signature_<name>`, never read by Rust code.
            #[unsafe(export_name = $crate::__private::core::concat!(
                "__gpu_std_signature_",
                $crate::__private::core::stringify!($name)
            ))]
            static __GPU_STD_SIGNATURE: [$crate::__private::core::primitive::u8; __GPU_STD_SIGNATURE_LEN] = $crate::signature::bytes(
                $crate::__private::core::module_path!(),
                $crate::__private::core::stringify!($name),
                <<$name as $crate::signature::KernelTypes>::Args<'static> as $crate::signature::ParamList>::TYPES,
            );
        };

        $crate::__kernel_params! {
            [[$($attrs)*] [$($lb)*] $name $lt $body]
            [<$name as $crate::signature::KernelTypes>::Args<$lt>]
            []
            $($arg)*
        }
    };
}

/// The rest of [`kernel!`]: names each parameter's type as `Head` of the parameter tuple after as many
/// `Tail`s as parameters before it (`[$rest]` is the tuple of the parameters still to name, `[$done]`
/// the named ones), then emits the `.entry` and the host type's [`Kernel`] impl with those types.
#[doc(hidden)]
#[macro_export]
macro_rules! __kernel_params {
    ([$($k:tt)*] [$($rest:tt)*] [$($done:tt)*] $arg:ident $($more:ident)*) => {
        $crate::__kernel_params! {
            [$($k)*]
            [<$($rest)* as $crate::signature::Split>::Tail]
            [$($done)* ($arg: <$($rest)* as $crate::signature::Split>::Head)]
            $($more)*
        }
    };
    ([[$($attrs:tt)*] [$($lb:tt)*] $name:ident $lt:lifetime $body:block] [$($rest:tt)*] [$(($arg:ident : $($pty:tt)*))*]) => {
        $($attrs)*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        // Views are `#[repr(C)] {ptr, len}` structs; rustc passes them as `.param .align 8 .b8 p[16]`,
        // the layout CUDA C++ uses for a struct parameter (checked by a test over the built PTX).
        #[allow(improper_gpu_kernel_arg)]
        pub extern "gpu-kernel" fn $name<$lt>($($arg: $($pty)*),*) {
            $crate::__launch_bounds!($($lb)*);
            // The body is a safe function's, as on the host.
            #[inline(always)]
            #[allow(unused_variables)]
            fn __gpu_std_kernel_body<$lt>($($arg: $($pty)*),*) $body
            __gpu_std_kernel_body($($arg),*)
        }

        // SAFETY: the crate promised what `run` needs of its thread-locals (its own `Kernels:
        // KernelCrate`, checked above). `Args` and `run` come from the same definition as the `.entry`
        // above, with the types of one expansion (`KernelTypes`), and the signature the `.entry`'s
        // module holds for it is made from the same module path, name and types (`Kernel`'s contract).
        // Only doc comments and lint attributes reach the two definitions, so neither can exist without
        // the other.
        #[cfg(not(target_arch = "nvptx64"))]
        unsafe impl $crate::Kernel for $name {
            const NAME: &'static str = $crate::__private::core::stringify!($name);
            const MODULE_PATH: &'static str = $crate::__private::core::module_path!();
            const PARAMS: &'static [&'static str] = &[$($crate::__private::core::stringify!($arg)),*];
            const MAX_THREADS_PER_BLOCK: $crate::__private::core::option::Option<u32> =
                $crate::__max_threads!($($lb)*);
            type Args<'__gpu_std_a> = <$name as $crate::signature::KernelTypes>::Args<'__gpu_std_a>;
            #[allow(unused_parens)]
            fn run<$lt>(args: Self::Args<$lt>) {
                #[allow(unused_variables)]
                fn __gpu_std_kernel_body<$lt>($($arg: $($pty)*),*) $body
                let ($($arg,)*) = args;
                __gpu_std_kernel_body($($arg),*)
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __launch_bounds {
    () => {};
    ($max:literal, $min:literal) => {
        $crate::launch_bounds::marker::<$max, $min>()
    };
    ($max:literal,) => {
        $crate::launch_bounds::marker::<$max, 0>()
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __max_threads {
    () => {
        $crate::__private::core::option::Option::None
    };
    ($max:literal, $($min:literal)?) => {
        $crate::__private::core::option::Option::Some($max)
    };
}

/// The README's examples, run as doctests.
#[cfg(all(doctest, not(target_arch = "nvptx64")))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
