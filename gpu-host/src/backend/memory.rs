//! A buffer's memory as the backend holds it: a GPU's ([`Memory::Cuda`], [`Mapped::Cuda`]) or the
//! emulator's host memory ([`Memory::Emu`], [`Mapped::Emu`]), and what a buffer does with it (its
//! address, copies, zeroing) whichever it is.
//!
//! Names the backends' memory types (`cuda::memory`, `emu`); never `backend`'s own items.

#[cfg(feature = "cuda")]
use super::cuda;
use super::emu::HostCells;
use crate::error::Result;
use gpu_std::Pod;

/// A buffer's elements: device memory of a GPU, or host memory for the emulator.
pub(crate) enum Memory<T> {
    #[cfg(feature = "cuda")]
    Cuda(cuda::GpuBuffer<T>),
    Emu(HostCells<T>),
}

/// A mapped buffer's words: page-locked host memory mapped into a GPU, or host memory the emulator's
/// threads and its host agent share.
pub(crate) enum Mapped<T> {
    #[cfg(feature = "cuda")]
    Cuda(cuda::HostAlloc<T>),
    Emu(HostCells<T>),
}

impl<T: Pod> Memory<T> {
    /// The address kernels use for the first element.
    pub(crate) fn ptr(&self) -> *mut T {
        match self {
            #[cfg(feature = "cuda")]
            Memory::Cuda(b) => b.device_ptr() as *mut T,
            Memory::Emu(c) => c.ptr(),
        }
    }

    /// A copy of the `len` elements (after everything queued on the device before).
    pub(crate) fn read(&self, len: usize) -> Result<Vec<T>> {
        match self {
            #[cfg(feature = "cuda")]
            Memory::Cuda(b) => b.read(len),
            Memory::Emu(c) => {
                let _ = len;
                Ok(c.read())
            }
        }
    }

    /// Element `i` (in bounds: checked by the caller).
    pub(crate) fn read_at(&self, i: usize) -> Result<T> {
        match self {
            #[cfg(feature = "cuda")]
            Memory::Cuda(b) => b.read_at(i),
            Memory::Emu(c) => Ok(c.read_at(i)),
        }
    }

    pub(crate) fn zero(&self) -> Result<()> {
        match self {
            #[cfg(feature = "cuda")]
            Memory::Cuda(b) => b.zero(),
            Memory::Emu(c) => {
                c.zero();
                Ok(())
            }
        }
    }

    /// Overwrites the elements from `src` (of the buffer's length: checked by the caller).
    pub(crate) fn write(&self, src: &[T]) -> Result<()> {
        match self {
            #[cfg(feature = "cuda")]
            Memory::Cuda(b) => b.write(src),
            Memory::Emu(c) => {
                c.write(src);
                Ok(())
            }
        }
    }
}

impl<T: Pod> Mapped<T> {
    /// The address kernels use.
    pub(crate) fn device_ptr(&self) -> *mut T {
        match self {
            #[cfg(feature = "cuda")]
            Mapped::Cuda(a) => a.device_ptr() as *mut T,
            Mapped::Emu(c) => c.ptr(),
        }
    }

    /// The address the host uses.
    pub(crate) fn host_ptr(&self) -> *mut T {
        match self {
            #[cfg(feature = "cuda")]
            Mapped::Cuda(a) => a.host_ptr(),
            Mapped::Emu(c) => c.ptr(),
        }
    }
}
