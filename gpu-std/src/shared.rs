//! Shared memory: per-block scratch memory, visible to every thread of the block and to no other.
//!
//! Kernels use the launch's *dynamic* shared memory. A kernel declares its layout once with
//! [`shared_layout!`](crate::shared_layout): every array of the block's shared memory is a field of one
//! `#[repr(C)]` struct, so Rust's own layout rules place them — the arrays of one layout cannot
//! overlap, offsets are aligned, and a size that overflows is a compile error. The host reads `BYTES`
//! to size the launch:
//!
//! ```
//! gpu_std::shared_layout! {
//!     /// The block's bins and per-warp sums.
//!     pub struct Scratch {
//!         pub bins: [u32; 256],
//!         pub sums: [f32; 32],
//!     }
//! }
//! assert_eq!(Scratch::BYTES, 256 * 4 + 32 * 4);
//! ```
//!
//! In the kernel, `Scratch::view()` gives the arrays as [`SharedSlice`]s. It checks at run time that
//! the launch gave at least `BYTES` (PTX `%dynamic_smem_size`); a launch with less traps on the GPU and
//! is reported by the emulator ("kernel `k` needs 1152 bytes of dynamic shared memory (Scratch::BYTES)
//! but the launch gave 0"), so a mismatch cannot corrupt memory. Elements must be [`Pod`]:
//!
//! ```compile_fail,E0277
//! gpu_std::shared_layout! {
//!     pub struct Flags { pub set: [bool; 32] }
//! }
//! ```
//!
//! The size and the offsets are Rust's own even in a crate that has replaced `::core` or shadowed a
//! standard macro: the macro reaches `core` through `gpu_std`, never through names the crate using it
//! can change. Here a crate's own `core` claims every struct is empty and every field 1 MiB in:
//!
//! ```standalone_crate
//! extern crate self as core;
//! // Everything of the real library, but `mem`:
//! pub use ::std::*;
//! pub mod mem {
//!     pub use ::std::mem::*;
//!     pub const fn size_of<T>() -> usize { 0 }
//!     macro_rules! offset_of { ($t:ty, $f:ident) => { 1 << 20 } }
//!     pub(crate) use offset_of;
//! }
//! macro_rules! stringify { ($($t:tt)*) => { "Other" } }
//!
//! gpu_std::shared_layout! {
//!     pub struct Bins { pub bins: [u32; 256], pub total: [u64; 1] }
//! }
//!
//! fn main() {
//!     // What the fake `core` says, and what the layout says.
//!     assert_eq!((::core::mem::size_of::<[u32; 256]>(), ::core::mem::offset_of!(Bins, bins)), (0, 1 << 20));
//!     assert_eq!(Bins::BYTES, 1032);
//! }
//! ```
//!
//! **One layout per kernel.** Every layout's `view()`, and [`dynamic`], starts at the first byte of
//! the block's dynamic shared memory (there is one such region per block, and nothing allocates from
//! it): two layouts used in one kernel, or a layout and `dynamic`, overlap — an array of one aliases an
//! array of the other, possibly with a different element type. That is not undefined behaviour
//! (elements are [`Pod`], and every access is one instruction, never a Rust reference), but it is
//! shared bytes: a write through one view changes what the other reads. Put every array a kernel
//! needs in one layout. The emulator's race detector tracks shared memory per byte, so overlapping
//! accesses of different widths by different threads without a barrier between them are reported as
//! a race like any other.
//!
//! Shared memory starts uninitialised each launch: write before you read, and put a block barrier
//! between one thread's write and another thread's read. Every access is an `ld.shared`/`st.shared`
//! instruction of inline PTX, so a race yields racy values, never undefined behaviour.
//!
//! Floor of the views and primitives: names gpu-std's vocabulary, the backend (`crate::backend`: the PTX
//! layer on the GPU, the emulator on the host) and other primitives; nothing of the kernel floor
//! (`Kernel`, signatures, launch arguments) nor the emulator's launch API.

use crate::atomic::{Block, SharedSpace, SpaceKind};
use crate::backend;
use crate::pod::Pod;
pub use crate::vocab::shared_field::SharedField;
use crate::vocab::site::site;

/// Alignment of the dynamic shared memory base (every [`Pod`] type needs at most 8).
pub const SHARED_BASE_ALIGN: usize = 16;

/// Declares a block's shared-memory layout: a struct of named arrays of [`Pod`] elements, with
/// `BYTES` (the dynamic shared memory a launch must give) and `view()` (the arrays of the calling
/// thread's block, as [`SharedSlice`]s). The arrays of one layout are disjoint; every layout starts
/// at the first byte of the block's dynamic shared memory, so a kernel should use one layout. See
/// [the module docs](crate::shared).
#[macro_export]
macro_rules! shared_layout {
    ($(#[$m:meta])* $vis:vis struct $name:ident { $($(#[$fm:meta])* $fvis:vis $field:ident : [$ty:ty; $len:expr]),+ $(,)? }) => {
        // Every path to `core` goes through `$crate`: the kernel crate may have replaced `::core`
        // (`extern crate self as core;`) or shadowed a macro (`macro_rules! stringify`), and the size
        // check and the offsets below must be Rust's own.
        $(#[$m])*
        #[derive(
            $crate::__private::core::clone::Clone,
            $crate::__private::core::marker::Copy,
            $crate::__private::core::fmt::Debug
        )]
        $vis struct $name {
            $($(#[$fm])* $fvis $field: $crate::shared::SharedSlice<$ty>,)+
        }

        const _: () = {
            // Each length is written once, here: the size checked at run time, the offsets, the
            // lengths of the views and the names the emulator reports all come from this one struct
            // (a length or type that expands differently each time cannot make a view longer than the
            // checked layout). Each view's element type is this struct's (`array_view`), so a struct
            // field of another type does not compile.
            #[repr(C)]
            #[allow(dead_code)]
            struct Layout { $($field: [$ty; $len],)+ }

            const FIELDS: &[$crate::shared::SharedField] = &[$($crate::shared::SharedField::of(
                $crate::__private::core::concat!(
                    $crate::__private::core::stringify!($name),
                    ".",
                    $crate::__private::core::stringify!($field)
                ),
                $crate::__private::core::mem::offset_of!(Layout, $field),
                |l: &Layout| &l.$field,
            ),)+];

            impl $name {
                /// Bytes of dynamic shared memory per block that a launch must give.
                pub const BYTES: $crate::__private::core::primitive::usize = $crate::__private::core::mem::size_of::<Layout>();

                /// The arrays in the calling thread's block. Traps (GPU) or reports (emulator) if the
                /// launch gave fewer than `BYTES` bytes of dynamic shared memory.
                #[inline(always)]
                #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
                pub fn view() -> Self {
                    const {
                        $crate::__private::core::assert!(
                            $crate::__private::core::mem::align_of::<Layout>() <= $crate::shared::SHARED_BASE_ALIGN
                        )
                    };
                    let base = $crate::shared::dynamic_base(
                        $crate::__private::core::mem::size_of::<Layout>(),
                        $crate::__private::core::stringify!($name),
                        FIELDS,
                    );
                    $name {
                        // SAFETY: `Layout` fits in the block's dynamic shared memory (checked by
                        // `dynamic_base`), whose base is aligned for it; each field is its own array
                        // there, at its offset in `Layout`.
                        $($field: unsafe {
                            $crate::shared::array_view(
                                base,
                                $crate::__private::core::mem::offset_of!(Layout, $field),
                                |l: &Layout| &l.$field,
                            )
                        },)+
                    }
                }
            }
        };
    };
}

/// The view of the array `[T; N]` at byte `offset` of the block's dynamic shared memory at `base`; `T`
/// and `N` are those of the layout's field that `_field` (never called) returns.
///
/// # Safety
/// `base` is what [`dynamic_base`] returned, after it checked a layout `L` whose field `_field`
/// returns lies at `offset`.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn array_view<L, T: Pod, const N: usize>(
    base: *mut u8,
    offset: usize,
    _field: fn(&L) -> &[T; N],
) -> SharedSlice<T> {
    // SAFETY: the caller's contract: `N` elements of `T` at `offset` lie in the checked layout.
    unsafe { SharedSlice::from_raw_parts(base.wrapping_add(offset) as *mut T, N) }
}

/// The base of the block's dynamic shared memory (on the GPU a shared-window address, what `ld.shared`
/// takes; in the emulator a host address), after checking that the launch gave at least `bytes` of it,
/// the size of shared layout `layout`.
#[doc(hidden)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn dynamic_base(bytes: usize, layout: &'static str, fields: &'static [SharedField]) -> *mut u8 {
    let (base, size) = backend::dynamic_shared(site());
    if bytes > size {
        backend::shared_too_small(layout, bytes, size)
    }
    // The emulator names the arrays of the layout in its reports; a GPU build has nothing to do.
    #[cfg(not(target_arch = "nvptx64"))]
    backend::name_shared_layout(fields);
    #[cfg(target_arch = "nvptx64")]
    let _ = fields;
    base
}

/// The whole of the block's dynamic shared memory as one array of `T` (`extern __shared__ T s[]`),
/// as many elements as the launch's shared bytes hold. It overlaps the view of every
/// [`shared_layout!`](crate::shared_layout): use one or the other in a kernel.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn dynamic<T: Pod>() -> SharedSlice<T> {
    let (base, size) = backend::dynamic_shared(site());
    // SAFETY: `size / size_of::<T>()` elements fit in the region; the base is SHARED_BASE_ALIGN-aligned.
    unsafe { SharedSlice::from_raw_parts(base as *mut T, size / size_of::<T>()) }
}

/// A view of a typed array in the block's shared memory: `ld.shared`/`st.shared` accesses, atomics at
/// block scope by default.
#[derive(Debug)]
pub struct SharedSlice<T: Pod> {
    ptr: *mut T,
    len: usize,
}
impl<T: Pod> Clone for SharedSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Pod> Copy for SharedSlice<T> {}

impl<T: Pod> SharedSlice<T> {
    /// A view of `len` elements of shared memory at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be an address of the calling block's shared memory as [`dynamic_base`] returns it
    /// (on the GPU a shared-window address, which is never dereferenced as a Rust pointer; in the
    /// emulator a host address), aligned for `T`, with `len` elements after it inside the block's
    /// dynamic shared memory. [`shared_layout!`](crate::shared_layout) and [`dynamic`] uphold this.
    ///
    /// Other shared views may overlap this one, with the same or a different element type: elements
    /// are [`Pod`] and every access is one instruction, so overlapping views share bytes (accesses
    /// through them race like any others, and the emulator reports such races per byte), never
    /// undefined behaviour.
    #[inline(always)]
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        SharedSlice { ptr, len }
    }
    crate::memory::view_read_methods!(SpaceKind::Shared);
    crate::memory::view_write_methods!('_, SpaceKind::Shared, SharedSpace, Block);
}
