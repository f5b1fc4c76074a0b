//! Host memory for emulator launches, and the names reports give it.
//!
//! [`Buffer`] owns the elements, names itself in reports (by a given name, or by the line that made
//! it), and hands out kernel arguments that borrow it ([`Arg`]): `view()` and `view_mut()` share the
//! buffer, `output()` borrows it exclusively. Between launches the host reads it with `to_vec()` or
//! `as_slice()`.
//!
//! The borrows are checked by the compiler. A view cannot outlive its buffer:
//!
//! ```compile_fail,E0597
//! # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
//! gpu_std::kernel! { pub fn fill<'a>(out: gpu_std::GlobalMut<'a, u32>) { out.set(0, 1); } }
//! use gpu_std::emu::{self, LaunchConfig, Options};
//! let view = {
//!     let b = emu::buffer("b", vec![0u32; 4]);
//!     b.view_mut() // error: `b` does not live long enough
//! };
//! emu::launch::<fill>(&LaunchConfig::linear(1, 1, 0), &Options::default(), (view,)).unwrap();
//! ```
//!
//! and an `Output` cannot share a launch with another view of its buffer:
//!
//! ```compile_fail,E0502
//! # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
//! gpu_std::kernel! {
//!     pub fn copy<'a>(src: gpu_std::Global<'a, u32>, out: gpu_std::Output<'a, u32>) {
//!         if let Some(o) = out.mine() { o.set(src.get(o.index())); }
//!     }
//! }
//! use gpu_std::emu::{self, LaunchConfig, Options};
//! let mut b = emu::buffer("b", vec![0u32; 32]);
//! // error: cannot borrow `b` as mutable because it is also borrowed as immutable
//! emu::launch::<copy>(&LaunchConfig::linear(1, 32, 0), &Options::default(), (b.view(), b.output())).unwrap();
//! ```
//!
//! Reports name global memory by buffer and element: a registered name (a `Buffer`, or
//! [`register_buffer`](super::register_buffer) for memory the caller owns), else the kernel parameter
//! whose view holds the address, with the view's base address (`parameter `y` at 0x7f…`[5]).

use super::report::{BufferName, register_buffer};
use crate::memory::Owner;
use crate::{Arg, Global, GlobalMut, Output, Pod};
use std::cell::UnsafeCell;
use std::fmt;

// ---- buffers --------------------------------------------------------------------------------------

/// Host memory for emulator launches: `len` elements, named in race and livelock reports.
///
/// ```
/// use gpu_std::emu::{self, Buffer};
/// let x = emu::buffer("x", vec![1.0f32; 4]); // reports say `x`[i]
/// let mut y = Buffer::new(vec![0.0f32; 4]); // reports say `buffer at <this file>:<line>`[i]
/// assert_eq!(x.name(), "x");
/// assert!(y.name().starts_with("buffer at "));
/// y.as_mut_slice()[0] = 2.0;
/// assert_eq!(y.to_vec(), [2.0, 0.0, 0.0, 0.0]);
/// ```
pub struct Buffer<T: Pod> {
    data: Box<[UnsafeCell<T>]>,
    name: String,
    _registered: BufferName,
}

/// A [`Buffer`] named `name` in reports, holding `data`.
pub fn buffer<T: Pod>(name: &str, data: Vec<T>) -> Buffer<T> {
    Buffer::named(name, data)
}

impl<T: Pod> Buffer<T> {
    /// A buffer holding `data`, named in reports by the line that made it (`buffer at src/x.rs:12:9`).
    #[track_caller]
    pub fn new(data: Vec<T>) -> Self {
        let at = std::panic::Location::caller();
        Buffer::named(&format!("buffer at {}:{}:{}", at.file(), at.line(), at.column()), data)
    }

    /// A buffer holding `data`, named `name` in reports.
    pub fn named(name: &str, data: Vec<T>) -> Self {
        let data: Box<[UnsafeCell<T>]> = data.into_iter().map(UnsafeCell::new).collect();
        let registered = register_buffer(name, data.as_ptr() as *const T, data.len());
        Buffer { data, name: name.to_string(), _registered: registered }
    }

    /// The name reports use.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }
    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    fn ptr(&self) -> *mut T {
        // `UnsafeCell<T>` has the layout of `T`; kernels write through this pointer, which is why the
        // elements live in `UnsafeCell`s. Soundness: the pointer is derived from the whole slice, so it
        // may reach every element; one derived from a reference to the first element (`data[0].get()`)
        // may reach only that element. An empty slice gives a dangling, aligned pointer.
        UnsafeCell::raw_get(self.data.as_ptr())
    }

    /// A read-only view for a kernel argument, borrowing the buffer.
    pub fn view(&self) -> Arg<'_, Global<'_, T>> {
        // SAFETY: `len` elements owned by this buffer, which the argument borrows for its lifetime.
        unsafe { Arg::new(Global::from_raw_parts(self.ptr(), self.len())) }
    }
    /// A writable view (any thread may write any element: atomics, flags, racy demonstrations),
    /// borrowing the buffer.
    pub fn view_mut(&self) -> Arg<'_, GlobalMut<'_, T>> {
        // SAFETY: as in `view`; the elements are `UnsafeCell`s, so writes through a shared borrow are
        // allowed.
        unsafe { Arg::new(GlobalMut::from_raw_parts(self.ptr(), self.len())) }
    }
    /// A one-writer-per-element output view, borrowing the buffer exclusively: no other argument of
    /// the launch can view it. `O` (who owns which element) is inferred from the kernel.
    pub fn output<O: Owner>(&mut self) -> Arg<'_, Output<'_, T, O>> {
        // SAFETY: as in `view`, under an exclusive borrow.
        unsafe { Arg::new(Output::from_raw_parts(self.ptr(), self.len())) }
    }

    /// A copy of the elements.
    pub fn to_vec(&self) -> Vec<T> {
        // SAFETY: launches are synchronous and a `Buffer` is not `Sync`, so no kernel writes while the
        // host reads.
        self.data.iter().map(|c| unsafe { *c.get() }).collect()
    }
    /// The elements. Takes `&mut self` so that no view of the buffer (which could be written through
    /// by a launch) exists while the slice does.
    pub fn as_slice(&mut self) -> &[T] {
        self.as_mut_slice()
    }
    /// The elements, writable by the host between launches.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        let len = self.len();
        // SAFETY: `UnsafeCell<T>` has the layout of `T`; the exclusive borrow excludes every view.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(), len) }
    }
}

impl<T: Pod> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer").field("name", &self.name).field("data", &self.to_vec()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pointer views are made from reaches every element, and writes through it are what the host
    /// reads back. (Under Miri, a pointer derived from a reference to the first element alone would be
    /// undefined behaviour for every other element.)
    #[test]
    fn the_view_pointer_reaches_every_element() {
        let b = buffer("b", vec![0u32; 4]);
        let p = b.ptr();
        for i in 0..4 {
            // SAFETY: `i < len`; no reference to the elements exists while the pointer is used.
            unsafe { p.add(i).write(10 + i as u32) };
        }
        // SAFETY: as above.
        assert_eq!(unsafe { p.add(3).read() }, 13);
        assert_eq!(b.to_vec(), [10, 11, 12, 13]);
        let mut b = b;
        b.as_mut_slice()[2] = 7;
        assert_eq!(b.as_slice(), [10, 11, 7, 13]);
        let empty = buffer::<u64>("empty", vec![]);
        assert!(empty.ptr().is_aligned());
        assert!(empty.to_vec().is_empty());
    }
}
