//! Device memory: a [`Buffer`] of `Pod` elements, on the GPU or (for the emulator) in host memory, the
//! kernel arguments that borrow it, and the [`Device`] calls that make one ([`Device::upload`],
//! [`Device::filled`]).
//!
//! Imports the device (`device`), the backend's memory (`backend::Memory`) and `size`; the device
//! layer does not import this file (sequences do).

use crate::backend::Memory;
use crate::device::Device;
use crate::error::{Error, Result, fail};
use gpu_std::memory::Owner;
use gpu_std::{Arg, Global, GlobalMut, MemorySpace, Output, Pod};
use std::marker::PhantomData;

/// A buffer of `len` [`Pod`] elements on the device `'dev` (it cannot outlive it). Its views are kernel
/// arguments that borrow it, usable only in launches on the same device.
pub struct Buffer<'dev, T: Pod> {
    len: usize,
    space: MemorySpace,
    inner: Memory<T>,
    _device: PhantomData<&'dev Device>,
}

impl Device {
    /// A buffer holding a copy of `data`. `name` appears in race reports.
    pub fn upload<T: Pod>(&self, name: &str, data: &[T]) -> Result<Buffer<'_, T>> {
        Ok(Buffer { len: data.len(), space: self.space, inner: self.backend.upload(name, data)?, _device: PhantomData })
    }

    /// A buffer of `n` copies of `v`. An error, naming the buffer, when `n` elements cannot be
    /// allocated (their size in bytes overflows, or the host has not the memory for them).
    pub fn filled<T: Pod>(&self, name: &str, n: usize, v: T) -> Result<Buffer<'_, T>> {
        crate::size::byte_len::<T>("buffer", name, n)?;
        let mut data = Vec::new();
        data.try_reserve_exact(n)
            .map_err(|e| Error::OutOfMemory(format!("buffer `{name}`: cannot allocate {n} elements: {e}")))?;
        data.resize(n, v);
        self.upload(name, &data)
    }
}

impl<'dev, T: Pod> Buffer<'dev, T> {
    /// Elements in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn ptr(&self) -> *mut T {
        self.inner.ptr()
    }

    /// Read-only view for a kernel argument, borrowing the buffer.
    pub fn view(&self) -> Arg<'_, Global<'_, T>> {
        // SAFETY: the pointer addresses `len` elements owned by this buffer in `space`, which the
        // returned argument borrows, so it stays alive for every launch the view is passed to.
        unsafe { Arg::in_space(Global::from_raw_parts(self.ptr(), self.len), self.space) }
    }

    /// Writable view (any thread may write any element: for atomics, flags and racy demonstrations),
    /// borrowing the buffer.
    pub fn view_mut(&self) -> Arg<'_, GlobalMut<'_, T>> {
        // SAFETY: as in `view`.
        unsafe { Arg::in_space(GlobalMut::from_raw_parts(self.ptr(), self.len), self.space) }
    }

    /// Read-only view of the first `len` elements, each as the `U` with its bits (`U` a [`Pod`] type of
    /// `T`'s size and at most its alignment: an `f32` buffer as `u32`), borrowing the buffer. An error
    /// past the end, or for a `U` of another size or a larger alignment.
    pub fn view_of<U: Pod>(&self, len: usize) -> Result<Arg<'_, Global<'_, U>>> {
        let ptr = self.bits_ptr::<U>(len)?;
        // SAFETY: `ptr` addresses `len` elements of this buffer (checked), which the argument borrows;
        // `U` has `T`'s size and an alignment `T`'s satisfies, and both are `Pod` (every bit pattern is
        // a value, no padding), so the bytes are `len` valid `U`s.
        Ok(unsafe { Arg::in_space(Global::from_raw_parts(ptr, len), self.space) })
    }

    /// Writable view of the first `len` elements as `U`, as [`Buffer::view_of`].
    pub fn view_mut_of<U: Pod>(&self, len: usize) -> Result<Arg<'_, GlobalMut<'_, U>>> {
        let ptr = self.bits_ptr::<U>(len)?;
        // SAFETY: as in `view_of`.
        Ok(unsafe { Arg::in_space(GlobalMut::from_raw_parts(ptr, len), self.space) })
    }

    fn bits_ptr<U: Pod>(&self, len: usize) -> Result<*mut U> {
        if size_of::<U>() != size_of::<T>() || align_of::<U>() > align_of::<T>() {
            fail!(
                Bounds,
                "a view of {}-byte elements as {} (of {} bytes, alignment {}): the sizes must be equal",
                size_of::<T>(),
                std::any::type_name::<U>(),
                size_of::<U>(),
                align_of::<U>()
            );
        }
        if len > self.len {
            fail!(Bounds, "a view of {len} elements of a buffer of {}", self.len);
        }
        Ok(self.ptr() as *mut U)
    }

    /// One-writer-per-element output view, borrowing the buffer exclusively: no other argument of the
    /// launch can view it. `O` says who owns which element (inferred from the kernel).
    pub fn output<O: Owner>(&mut self) -> Arg<'_, Output<'_, T, O>> {
        // SAFETY: as in `view`; the exclusive borrow keeps every other view of this buffer out of the
        // launch.
        unsafe { Arg::in_space(Output::from_raw_parts(self.ptr(), self.len), self.space) }
    }

    /// Copies the buffer to the host, after every launch queued before (on a GPU the copy runs on the
    /// device's stream, behind the kernels of a [`Device::sequence`] that has not waited yet).
    pub fn read(&self) -> Result<Vec<T>> {
        self.inner.read(self.len)
    }

    /// Copies element `i` to the host (an error past the end).
    pub fn read_at(&self, i: usize) -> Result<T> {
        if i >= self.len {
            fail!(Bounds, "read of element {i} of a buffer of {}", self.len);
        }
        self.inner.read_at(i)
    }

    /// Sets every byte of the buffer to zero: on a GPU with `cuMemsetD8Async` on the device's stream
    /// (no host copy, after every launch queued before), finished when this returns.
    pub fn zero(&self) -> Result<()> {
        self.inner.zero()
    }

    /// The buffer's memory, for a sequence's queued zeroings and reads.
    pub(crate) fn memory(&self) -> &Memory<T> {
        &self.inner
    }

    /// Overwrites the buffer from the host, after every launch queued before (as [`Buffer::read`]);
    /// `src` must have the buffer's length.
    pub fn write(&self, src: &[T]) -> Result<()> {
        if src.len() != self.len {
            fail!(Bounds, "write of {} elements into a buffer of {}", src.len(), self.len);
        }
        self.inner.write(src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host<T: Pod>(data: &[T]) -> Buffer<'static, T> {
        let dev = Box::leak(Box::new(Device::emulator(Default::default())));
        dev.upload("b", data).unwrap()
    }

    #[test]
    fn an_empty_buffer_has_a_dangling_aligned_pointer() {
        let b = host::<u64>(&[]);
        assert!(b.is_empty());
        assert_eq!(b.ptr() as usize % align_of::<u64>(), 0);
    }

    #[test]
    fn every_element_is_reached_from_the_base_pointer() {
        let b = host::<u32>(&[1, 2, 3, 4]);
        // Under Stacked Borrows this read of element 3 through the base pointer is defined only when the
        // pointer was derived from the whole slice.
        // SAFETY: 4 elements, no launch running.
        assert_eq!(unsafe { b.ptr().add(3).read() }, 4);
        b.write(&[5, 6, 7, 8]).unwrap();
        assert_eq!(b.read().unwrap(), [5, 6, 7, 8]);
    }

    #[test]
    fn a_view_of_other_bits_needs_the_same_size_and_stays_in_the_buffer() {
        let b = host::<f32>(&[1.0, -2.0]);
        assert!(b.view_of::<u32>(2).is_ok());
        assert!(b.view_mut_of::<i32>(1).is_ok());
        let Err(e) = b.view_of::<u64>(1) else { panic!("an 8-byte view of 4-byte elements") };
        assert!(e.to_string().contains("sizes must be equal"), "{e}");
        let Err(e) = b.view_mut_of::<u16>(1) else { panic!("a 2-byte view of 4-byte elements") };
        assert!(e.to_string().contains("sizes must be equal"), "{e}");
        let Err(e) = b.view_of::<u32>(3) else { panic!("a view past the end") };
        assert!(e.to_string().contains("a view of 3 elements of a buffer of 2"), "{e}");
        // A u64 buffer's elements are aligned for f64 (same size, same alignment).
        let w = host::<u64>(&[1]);
        assert!(w.view_of::<f64>(1).is_ok());
    }
}
