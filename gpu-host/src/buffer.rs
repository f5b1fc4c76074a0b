//! Device memory: a [`Buffer`] of `Pod` elements, on the GPU or (for the emulator) in host memory, and
//! the kernel arguments that borrow it.

use crate::device::Device;
use anyhow::{Result, anyhow, bail};
use gpu_std::emu;
use gpu_std::memory::Owner;
use gpu_std::{Arg, Global, GlobalMut, MemorySpace, Output, Pod};
use std::cell::UnsafeCell;
use std::marker::PhantomData;

/// A buffer of `len` [`Pod`] elements on the device `'dev` (it cannot outlive it). Its views are kernel
/// arguments that borrow it, usable only in launches on the same device.
pub struct Buffer<'dev, T: Pod> {
    len: usize,
    space: MemorySpace,
    inner: BufInner<T>,
    _device: PhantomData<&'dev Device>,
}

pub(crate) enum BufInner<T: Pod> {
    #[cfg(feature = "cuda")]
    Gpu(crate::gpu::GpuBuffer<T>),
    Emu {
        data: Box<[UnsafeCell<T>]>,
        _name: emu::BufferName,
    },
}

impl<'dev, T: Pod> Buffer<'dev, T> {
    pub(crate) fn new(len: usize, space: MemorySpace, inner: BufInner<T>) -> Self {
        Buffer { len, space, inner, _device: PhantomData }
    }

    /// Host memory for an emulator device, named `name` in reports.
    pub(crate) fn host(name: &str, data: &[T]) -> Result<Self> {
        let mut cells = Vec::new();
        cells
            .try_reserve_exact(data.len())
            .map_err(|e| anyhow!("buffer `{name}`: cannot allocate {} elements: {e}", data.len()))?;
        cells.extend(data.iter().map(|v| UnsafeCell::new(*v)));
        let data: Box<[UnsafeCell<T>]> = cells.into_boxed_slice();
        let reg = emu::register_buffer(name, elements(&data), data.len());
        Ok(Buffer::new(data.len(), MemorySpace::HOST, BufInner::Emu { data, _name: reg }))
    }

    /// Elements in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn ptr(&self) -> *mut T {
        match &self.inner {
            #[cfg(feature = "cuda")]
            BufInner::Gpu(b) => b.device_ptr() as *mut T,
            BufInner::Emu { data, .. } => elements(data),
        }
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
            bail!(
                "a view of {}-byte elements as {} (of {} bytes, alignment {}): the sizes must be equal",
                size_of::<T>(),
                std::any::type_name::<U>(),
                size_of::<U>(),
                align_of::<U>()
            );
        }
        if len > self.len {
            bail!("a view of {len} elements of a buffer of {}", self.len);
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
        match &self.inner {
            #[cfg(feature = "cuda")]
            BufInner::Gpu(b) => b.read(self.len),
            // SAFETY: no launch runs while the host reads: launches are synchronous, and a kernel cannot
            // hold this buffer's view past its launch.
            BufInner::Emu { data, .. } => Ok(data.iter().map(|c| unsafe { *c.get() }).collect()),
        }
    }

    /// Copies element `i` to the host (an error past the end).
    pub fn read_at(&self, i: usize) -> Result<T> {
        if i >= self.len {
            bail!("read of element {i} of a buffer of {}", self.len);
        }
        match &self.inner {
            #[cfg(feature = "cuda")]
            BufInner::Gpu(b) => b.read_at(i),
            // SAFETY: as in `read`.
            BufInner::Emu { data, .. } => Ok(unsafe { *data[i].get() }),
        }
    }

    /// Sets every byte of the buffer to zero: on a GPU with `cuMemsetD8Async` on the device's stream
    /// (no host copy, after every launch queued before), finished when this returns.
    pub fn zero(&self) -> Result<()> {
        match &self.inner {
            #[cfg(feature = "cuda")]
            BufInner::Gpu(b) => b.zero(),
            BufInner::Emu { data, .. } => {
                for c in data.iter() {
                    // SAFETY: as in `read`.
                    unsafe { *c.get() = T::default() };
                }
                Ok(())
            }
        }
    }

    /// The device address and bytes of a GPU buffer; `None` for an emulator's.
    #[cfg(feature = "cuda")]
    pub(crate) fn gpu_region(&self) -> Option<(u64, usize)> {
        match &self.inner {
            BufInner::Gpu(b) => Some((b.device_ptr(), b.bytes())),
            BufInner::Emu { .. } => None,
        }
    }

    /// Overwrites the buffer from the host, after every launch queued before (as [`Buffer::read`]);
    /// `src` must have the buffer's length.
    pub fn write(&self, src: &[T]) -> Result<()> {
        if src.len() != self.len {
            bail!("write of {} elements into a buffer of {}", src.len(), self.len);
        }
        match &self.inner {
            #[cfg(feature = "cuda")]
            BufInner::Gpu(b) => b.write(src),
            BufInner::Emu { data, .. } => {
                for (c, v) in data.iter().zip(src) {
                    // SAFETY: as in `read`.
                    unsafe { *c.get() = *v };
                }
                Ok(())
            }
        }
    }
}

/// Bytes of `len` elements of `T` for the buffer `name` (a `what`: "buffer", "mapped buffer"), or an
/// error naming it when they overflow or exceed the largest allocation (`isize::MAX` bytes): the
/// buffer's length and its allocation must never disagree.
pub(crate) fn byte_len<T>(what: &str, name: &str, len: usize) -> Result<usize> {
    match len.checked_mul(size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => Ok(bytes),
        _ => bail!(
            "{what} `{name}`: {len} elements of {} bytes are more than one allocation can hold ({} bytes at most)",
            size_of::<T>(),
            isize::MAX
        ),
    }
}

/// A pointer to the first element that may address every element: derived from the whole slice, not
/// from a reference to its first element (whose provenance covers that element only).
fn elements<T>(data: &[UnsafeCell<T>]) -> *mut T {
    if data.is_empty() { std::ptr::NonNull::dangling().as_ptr() } else { UnsafeCell::raw_get(data.as_ptr()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_buffer_has_a_dangling_aligned_pointer() {
        let b = Buffer::<u64>::host("empty", &[]).unwrap();
        assert!(b.is_empty());
        assert_eq!(b.ptr() as usize % align_of::<u64>(), 0);
    }

    #[test]
    fn every_element_is_reached_from_the_base_pointer() {
        let b = Buffer::<u32>::host("b", &[1, 2, 3, 4]).unwrap();
        // Under Stacked Borrows this read of element 3 through the base pointer is defined only when the
        // pointer was derived from the whole slice.
        // SAFETY: 4 elements, no launch running.
        assert_eq!(unsafe { b.ptr().add(3).read() }, 4);
        b.write(&[5, 6, 7, 8]).unwrap();
        assert_eq!(b.read().unwrap(), [5, 6, 7, 8]);
    }

    #[test]
    fn a_view_of_other_bits_needs_the_same_size_and_stays_in_the_buffer() {
        let b = Buffer::<f32>::host("b", &[1.0, -2.0]).unwrap();
        assert!(b.view_of::<u32>(2).is_ok());
        assert!(b.view_mut_of::<i32>(1).is_ok());
        let Err(e) = b.view_of::<u64>(1) else { panic!("an 8-byte view of 4-byte elements") };
        assert!(e.to_string().contains("sizes must be equal"), "{e}");
        let Err(e) = b.view_mut_of::<u16>(1) else { panic!("a 2-byte view of 4-byte elements") };
        assert!(e.to_string().contains("sizes must be equal"), "{e}");
        let Err(e) = b.view_of::<u32>(3) else { panic!("a view past the end") };
        assert!(e.to_string().contains("a view of 3 elements of a buffer of 2"), "{e}");
        // A u64 buffer's elements are aligned for f64 (same size, same alignment).
        let w = Buffer::<u64>::host("w", &[1]).unwrap();
        assert!(w.view_of::<f64>(1).is_ok());
    }
}
