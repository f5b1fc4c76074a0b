//! What may be passed to a kernel: [`KernelParam`] (sealed: the [`Pod`](crate::Pod) scalars and the
//! global-memory views), each with the type a signature names, the memory it gives access to, and
//! what it asks of the launch. Re-exported by [`crate::memory`] and the crate root.
//!
//! Below the views (`memory.rs`) and the outputs (`memory/output.rs`), which implement it; names
//! only the vocabulary.

use crate::vocab::param::ParamType;

/// The seal of [`KernelParam`] (and of [`Owner`](crate::memory::Owner)): implemented by this
/// module's scalars and by the views and outputs.
pub(super) mod sealed {
    pub trait Sealed {}
}

/// Types that may be passed to a kernel: [`Pod`](crate::Pod) scalars and global-memory views. Their layout is
/// identical on the host and the device, so the host can pass them by value to `cuLaunchKernel`.
/// Sealed: `usize`/`isize` (whose width the host and device could disagree on), references, `bool`
/// and structs with padding cannot be kernel parameters.
pub trait KernelParam: Copy + sealed::Sealed {
    /// The parameter's type as a kernel signature names it ([`crate::signature`]).
    #[doc(hidden)]
    const TYPE: ParamType;
    /// The device memory the parameter gives access to, as `(address, bytes)` (none for scalars). The
    /// emulator checks every access of a launch against these regions.
    #[doc(hidden)]
    fn region(&self) -> Option<(usize, usize)>;
    /// Whether the kernel may only be launched 1-D (grid and block `y = z = 1`): true for [`Output`](crate::Output)
    /// views, whose ownership rule is defined on the 1-D global index.
    #[doc(hidden)]
    fn needs_1d_launch(&self) -> bool {
        false
    }
    /// Whether no other view of the same launch may overlap it: true for [`Output`](crate::Output) views, whose
    /// elements each have one writer.
    #[doc(hidden)]
    fn exclusive(&self) -> bool {
        false
    }
}
macro_rules! scalar_params {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl KernelParam for $t {
            const TYPE: ParamType =
                ParamType { view: "", elem: stringify!($t), owner: "" };
            fn region(&self) -> Option<(usize, usize)> {
                None
            }
        }
    )*};
}
scalar_params!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

#[doc(hidden)]
#[inline(always)]
pub fn assert_param<T: KernelParam>() {}

/// The region of a view of `len` elements at `ptr`: `len * size_of::<T>()` bytes, saturating at
/// `usize::MAX` (a view's contract keeps it within one allocation, of at most `isize::MAX` bytes; a view
/// that breaks it is then refused by [`KernelArgs::check_launch`](crate::KernelArgs::check_launch), never
/// wrapped round to a small region).
#[inline(always)]
pub(super) fn view_region<T>(ptr: *const T, len: usize) -> Option<(usize, usize)> {
    Some((ptr as usize, len.saturating_mul(size_of::<T>())))
}
