//! The promise a kernel crate makes about thread-local storage, which the emulator needs and cannot
//! check.
//!
//! The emulator runs every GPU thread of a launch as a coroutine of one OS thread, so all of them share
//! that OS thread's `thread_local!`s. Rust's thread-locals assume that no other thread can run while a
//! thread is inside one: when a thread-local's lazy initialiser, or a closure given to
//! `LocalKey::with`, reaches a scheduling point of the emulator (a barrier, a fence, an atomic, a
//! volatile or any view access), another emulated thread may run the same initialiser, and `std` then
//! drops a value that the first thread still borrows. No safe design avoids that at a cost the emulator
//! can pay (one OS thread per emulated thread, handing a baton at every scheduling point, costs two
//! orders of magnitude per switch), so the condition is a promise, made once per kernel crate, in an
//! `unsafe` block: [`KernelCrate::new`].
//!
//! [`kernel!`](crate::kernel) requires it: every kernel names the constant `GPU_STD_KERNEL_CRATE` of
//! its crate's root (or of the block it is defined in), and refuses to compile without it, or with one
//! made in another crate.

/// A kernel crate's promise about thread-local storage (see the module docs); made with
/// [`KernelCrate::new`] as the constant `GPU_STD_KERNEL_CRATE` at the root of the crate, once:
///
/// ```
/// // SAFETY: no kernel of this crate, nor any function it calls, reaches a gpu-std primitive or view
/// // access inside a thread-local's initialiser or while it borrows a thread-local, and none keeps a
/// // view in a thread-local.
/// const GPU_STD_KERNEL_CRATE: gpu_std::KernelCrate = unsafe { gpu_std::KernelCrate::new(module_path!()) };
///
/// gpu_std::kernel! {
///     pub fn fill<'a>(x: gpu_std::GlobalMut<'a, u32>) { x.set(0, 1); }
/// }
/// # fn main() {}
/// ```
///
/// A kernel crate that has none does not compile:
///
/// ```compile_fail,E0425
/// gpu_std::kernel! {
///     pub fn fill<'a>(x: gpu_std::GlobalMut<'a, u32>) { x.set(0, 1); }
/// }
/// # fn main() {}
/// ```
///
/// nor does one that borrows another crate's (the promise is about the kernels of the crate that made
/// it), e.g. of a kernel crate `other_kernels` that made its constant public:
///
/// ```ignore
/// const GPU_STD_KERNEL_CRATE: gpu_std::KernelCrate = other_kernels::GPU_STD_KERNEL_CRATE;
/// gpu_std::kernel! { pub fn fill() {} } // error: the constant was made in another crate
/// ```
#[derive(Debug)]
pub struct KernelCrate {
    krate: &'static str,
}

impl KernelCrate {
    /// The promise of the crate whose root's `module_path!()` is `module_path`.
    ///
    /// # Safety
    /// No kernel of the crate (no body that [`kernel!`](crate::kernel) defines in it), nor any
    /// function such a body calls, may
    /// - reach a gpu-std primitive or a view access (anything the emulator schedules at: barriers,
    ///   warp collectives, fences, atomics, volatile, acquire, release and plain view accesses) while
    ///   it runs a thread-local's initialiser, or while it holds a reference it got from a
    ///   thread-local (inside `LocalKey::with`, `with_borrow`, `with_borrow_mut`);
    /// - store a view ([`SharedSlice`](crate::SharedSlice), a shared layout's view, or anything that
    ///   holds one) in a thread-local.
    ///
    /// The first would let the emulator drop a thread-local's value while another emulated thread
    /// borrows it (every emulated thread of a launch runs on one OS thread); the second would let a
    /// later launch on the same OS thread use a view of a launch that has ended. On a GPU neither can
    /// happen (a kernel crate has no thread-locals there). A kernel that uses a thread-local briefly
    /// (reads a `Cell` of a `const`-initialised thread-local, and calls nothing of gpu-std meanwhile)
    /// keeps the promise.
    pub const unsafe fn new(module_path: &'static str) -> KernelCrate {
        KernelCrate { krate: crate_of(module_path) }
    }

    /// Checks, at compile time (called by [`kernel!`](crate::kernel)), that the promise was made by
    /// the crate of the kernel defined in `module_path`.
    #[doc(hidden)]
    pub const fn check(&self, module_path: &'static str) {
        if !same(self.krate.as_bytes(), crate_of(module_path).as_bytes()) {
            panic!(
                "this crate's GPU_STD_KERNEL_CRATE was made by another crate: a kernel crate makes its own \
                 promise, `const GPU_STD_KERNEL_CRATE: gpu_std::KernelCrate = unsafe {{ \
                 gpu_std::KernelCrate::new(module_path!()) }};` at its root (see gpu_std::KernelCrate)"
            );
        }
    }
}

/// The crate name at the start of a module path (`a` of `a::b::c`).
const fn crate_of(path: &'static str) -> &'static str {
    let bytes = path.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b':' && bytes[i + 1] == b':' {
            let (head, _) = path.split_at(i);
            return head;
        }
        i += 1;
    }
    path
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
