//! A GPU's memory as the CUDA backend holds it: device allocations ([`GpuBuffer`]) and mapped
//! page-locked host memory ([`HostAlloc`]), each freed with its context current; their copies and
//! zeroings run on the device's stream.
//!
//! Imports the driver calls (`driver`) and `error`; nothing else of the crate.

use super::driver::{self, Call as _, Ctx, StreamRef};
use crate::error::Result;
use cust::memory::{CopyDestination, DeviceBuffer};
use gpu_std::Pod;

/// Mapped page-locked host memory (`cuMemHostAlloc` with `CU_MEMHOSTALLOC_DEVICEMAP`): its host
/// address and the address kernels use; freed with `cuMemFreeHost`.
pub(crate) struct HostAlloc<T> {
    host: *mut T,
    device: u64,
    ctx: Ctx,
}

impl<T> HostAlloc<T> {
    /// `bytes` zeroed bytes of mapped host memory in the context `ctx` (made current here).
    pub(crate) fn new(ctx: Ctx, bytes: usize) -> Result<HostAlloc<T>> {
        let _bound = ctx.bind()?;
        let host = driver::host_alloc_mapped(bytes)?;
        // Owned from here: freed on every path out (and only once: the value itself is returned).
        let mut alloc = HostAlloc { host: host as *mut T, device: 0, ctx };
        // SAFETY: allocated just above by `host_alloc_mapped`.
        alloc.device = unsafe { driver::host_device_pointer(host)? };
        Ok(alloc)
    }
    pub(crate) fn host_ptr(&self) -> *mut T {
        self.host
    }
    pub(crate) fn device_ptr(&self) -> u64 {
        self.device
    }
}

impl<T> Drop for HostAlloc<T> {
    fn drop(&mut self) {
        let _bound = self.ctx.bind();
        // SAFETY: allocated by `host_alloc_mapped`; no view or launch uses it any more (they borrow the
        // buffer that owns this).
        unsafe { driver::free_host(self.host as *mut std::ffi::c_void) };
    }
}

/// A device allocation of `bytes` (typed views are made from its address). Its reads, writes and
/// zeroings run on the device's stream ([`StreamRef`]), so that they come after every kernel queued
/// before them, and are waited for before they return.
pub(crate) struct GpuBuffer<T> {
    /// Freed with its context current (see `Drop`).
    buf: std::mem::ManuallyDrop<DeviceBuffer<u8>>,
    bytes: usize,
    ctx: Ctx,
    stream: StreamRef,
    _t: std::marker::PhantomData<T>,
}

impl<T> Drop for GpuBuffer<T> {
    fn drop(&mut self) {
        let _bound = self.ctx.bind();
        // SAFETY: dropped once, here (`cuMemFree`); no view or launch uses it any more (they borrow the
        // buffer that owns this).
        unsafe { std::mem::ManuallyDrop::drop(&mut self.buf) };
    }
}

impl<T: Pod> GpuBuffer<T> {
    /// A copy of `data` in the context `ctx` (made current here), read and written on `stream`.
    pub(crate) fn upload(ctx: Ctx, stream: StreamRef, data: &[T]) -> Result<GpuBuffer<T>> {
        let _bound = ctx.bind()?;
        let bytes = std::mem::size_of_val(data);
        // SAFETY: filled immediately below (or zero-length).
        let buf = unsafe { DeviceBuffer::<u8>::uninitialized(bytes.max(16)) }.call("cuMemAlloc")?;
        let buf = GpuBuffer { buf: std::mem::ManuallyDrop::new(buf), bytes, ctx, stream, _t: std::marker::PhantomData };
        if bytes > 0 {
            // SAFETY: T is a plain scalar type; viewing its bytes is sound.
            let src = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, bytes) };
            buf.buf.index(..bytes).copy_from(src).call("cuMemcpyHtoD")?;
        }
        Ok(buf)
    }
    pub(crate) fn device_ptr(&self) -> u64 {
        self.buf.as_device_ptr().as_raw()
    }
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
    pub(crate) fn read(&self, len: usize) -> Result<Vec<T>> {
        let mut out = vec![T::default(); len];
        // SAFETY: `out` has `len` elements, the buffer's (the caller's `len`), so `bytes` bytes.
        unsafe { self.copy_out(self.device_ptr(), out.as_mut_ptr() as *mut u8, self.bytes.min(len * size_of::<T>())) }?;
        Ok(out)
    }
    /// Copies element `i` (in bounds: checked by the caller) to the host.
    pub(crate) fn read_at(&self, i: usize) -> Result<T> {
        let size = size_of::<T>();
        let mut out = T::default();
        // SAFETY: `out` has `size` bytes; element `i` lies in the allocation (checked by the caller).
        unsafe { self.copy_out(self.device_ptr() + (i * size) as u64, &mut out as *mut T as *mut u8, size) }?;
        Ok(out)
    }

    /// Copies `bytes` at `src` (of this allocation) to host memory at `dst`, on the device's stream,
    /// after what is queued there, and waits for it.
    ///
    /// # Safety
    /// `dst` holds `bytes` writable bytes; `src .. src + bytes` lies in this allocation.
    unsafe fn copy_out(&self, src: u64, dst: *mut u8, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let _bound = self.ctx.bind()?;
        // SAFETY: the caller's contract; the stream is this context's, waited for right after. `T` is
        // `Pod`: any bytes are a value.
        unsafe { self.stream.copy_to_host(dst, src, bytes)? };
        self.stream.synchronize()
    }

    /// Zeroes the allocation's `bytes` (`cuMemsetD8Async` on the device's stream, after what is queued
    /// there, then waited for).
    pub(crate) fn zero(&self) -> Result<()> {
        let _bound = self.ctx.bind()?;
        if self.bytes > 0 {
            // SAFETY: our own allocation of at least `bytes` bytes, on the device's stream, waited for.
            unsafe { self.stream.zero(self.device_ptr(), self.bytes)? };
            self.stream.synchronize()?;
        }
        Ok(())
    }

    /// Overwrites the allocation's `bytes` from `src` (of the buffer's length), on the device's stream
    /// after what is queued there, then waited for.
    pub(crate) fn write(&self, src: &[T]) -> Result<()> {
        let _bound = self.ctx.bind()?;
        let bytes = self.bytes.min(std::mem::size_of_val(src));
        if bytes > 0 {
            // SAFETY: `src` has at least `bytes` bytes, which the copy reads before the wait below
            // returns; the destination is our own allocation; the stream is this context's.
            unsafe { self.stream.copy_from_host(self.device_ptr(), src.as_ptr() as *const u8, bytes)? };
            self.stream.synchronize()?;
        }
        Ok(())
    }
}
