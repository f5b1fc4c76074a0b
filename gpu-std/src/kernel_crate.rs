//! The one promise a kernel crate makes: about thread-local storage, which the emulator needs and
//! cannot check.
//!
//! The emulator runs every GPU thread of a launch as a coroutine of one OS thread, so all of them share
//! that OS thread's `thread_local!`s. Code that keeps a thread-local in a half-made state while it
//! runs other code assumes that nothing else runs on the thread meanwhile. Two such places exist:
//! - a `thread_local!`'s **lazy initialiser**: when one emulated thread's initialiser reaches a
//!   scheduling point of the emulator (a view access, barrier, fence, atomic, warp collective or any
//!   other gpu-std operation), another emulated thread may run the same initialiser to its end and
//!   borrow the value; when the first initialiser ends, `std` stores its value in the slot and drops
//!   the value the second thread still borrows;
//! - a closure that a library runs with a thread-local **set for the closure's duration** (as
//!   `scoped_tls::ScopedKey::set` does): two emulated threads inside such closures at once restore the
//!   slot in the wrong order, and it is left pointing at a value that is gone.
//!
//! Plain `LocalKey::with` and `with_borrow(_mut)` closures are not among them (a second emulated thread
//! borrows the same, live value; a `RefCell` borrowed twice panics), nor is a view kept in a
//! thread-local (the emulator refuses every access of a launch to memory the launch was not given).
//! No design the emulator can pay for closes the two places (one OS thread per emulated thread,
//! handing a baton at every scheduling point, costs two orders of magnitude per switch), and no macro
//! can see whether a crate reaches them (a kernel may call a function of another crate that does), so
//! the condition is a promise, made once per kernel crate with an `unsafe impl`:
//!
//! ```
//! /// This crate's promise (`gpu_std::KernelCrate`): no kernel of it reaches gpu-std inside a
//! /// thread-local's lazy initialiser or a scoped thread-local's closure.
//! pub struct Kernels;
//! // SAFETY: the kernels below call gpu-std only from their own bodies, never from a thread-local's
//! // initialiser or a scoped thread-local's closure.
//! unsafe impl gpu_std::KernelCrate for Kernels {}
//!
//! gpu_std::kernel! {
//!     pub fn fill<'a>(x: gpu_std::GlobalMut<'a, u32>) { x.set(0, 1); }
//! }
//! # fn main() {}
//! ```
//!
//! [`kernel!`](crate::kernel) checks the promise by type, and the type must be the crate's own: every
//! kernel writes an empty inherent `impl Kernels {}`, which compiles only for a type defined in the
//! crate (an alias of, an import of or a re-export of another crate's type is refused, E0116), and
//! requires `Kernels: KernelCrate`. The name is looked up at the crate root (or in the block the kernel
//! is defined in, which a test can use). A crate without a promise does not compile:
//!
//! ```compile_fail,E0425
//! gpu_std::kernel! {
//!     pub fn fill<'a>(x: gpu_std::GlobalMut<'a, u32>) { x.set(0, 1); } // error: cannot find type `Kernels`
//! }
//! # fn main() {}
//! ```
//!
//! nor does one whose `Kernels` does not make the promise, whatever else it looks like (here the
//! look-alike of the promise this design replaced, with a `check` method and no `unsafe`):
//!
//! ```compile_fail,E0277
//! pub struct Kernels;
//! impl Kernels {
//!     pub const fn check(&self, _: &'static str) {}
//! }
//! const GPU_STD_KERNEL_CRATE: Kernels = Kernels;
//! gpu_std::kernel! {
//!     pub fn fill<'a>(x: gpu_std::GlobalMut<'a, u32>) { x.set(0, 1); } // error: `Kernels` does not promise `KernelCrate`
//! }
//! # fn main() {}
//! ```
//!
//! and the promise cannot be made without `unsafe`:
//!
//! ```compile_fail,E0200
//! pub struct Kernels;
//! impl gpu_std::KernelCrate for Kernels {} // error: the trait requires an `unsafe impl` declaration
//! # fn main() {}
//! ```
//!
//! A crate that borrows another's promise (a package's binary importing its library's, a crate that
//! re-exports a dependency's, an alias of it) is refused: see the tests in `gpu-kernels`' crate docs.

/// A kernel crate's promise about thread-locals (see [the module docs](self)): implemented, with
/// `unsafe impl`, by a type named `Kernels` defined at the root of the crate. [`kernel!`](crate::kernel)
/// refuses to compile without it, and with a `Kernels` defined in another crate.
///
/// # Safety
/// No kernel of the crate (no body that [`kernel!`](crate::kernel) defines in it), nor any function
/// such a body calls, reaches a gpu-std operation (a view access, barrier, warp collective, fence,
/// atomic, or any other function of this crate that a kernel calls) while it runs a `thread_local!`'s
/// lazy initialiser, or inside a closure that a library runs with a thread-local set for the closure's
/// duration (`scoped_tls::ScopedKey::set`, for one). That is [`PROMISE`], and what a reader of the crate
/// checks.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not make the kernel crate's promise (`gpu_std::KernelCrate`)",
    label = "every `kernel!` of a crate needs its promise about thread-locals",
    note = "at the crate root: `pub struct Kernels;` and, once its kernels keep the promise, `unsafe impl gpu_std::KernelCrate for Kernels {{}}` (see gpu_std::KernelCrate)"
)]
pub unsafe trait KernelCrate {}

/// The promise of [`KernelCrate`] in one sentence, as the runner prints it.
pub const PROMISE: &str = "no kernel reaches gpu-std inside a thread-local's lazy initialiser, or inside a closure run \
                           with a thread-local set for its duration (scoped_tls)";

/// Compiles only for a type that made the promise (called by [`kernel!`](crate::kernel)).
#[doc(hidden)]
pub const fn promised<K: KernelCrate + ?Sized>() {}
