//! The CUDA driver API as the backend calls it: every raw `cust::sys` call of the crate is here, each
//! behind a function that checks its result and names the call in the error ([`check`]). Also the
//! handles that make a context current around a call ([`Ctx`], [`Bound`]) and the device's stream
//! as buffers hold it ([`StreamRef`]).
//!
//! Imports `error` only: the backend above it (`backend::cuda`) decides what to call when.

use crate::error::{Error, Result};
use cust::sys;
use gpu_std::Dim3;
use std::ffi::c_void;

pub(crate) use sys::{CUdevice, CUdevice_attribute as Attribute, CUfunction};

/// Checks a raw driver-API result, naming the call and the CUDA error: [`Error::Driver`], or
/// [`Error::OutOfMemory`] for `CUDA_ERROR_OUT_OF_MEMORY`.
pub(crate) fn check(r: sys::CUresult, what: &str) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut name: *const std::os::raw::c_char = std::ptr::null();
    // SAFETY: cuGetErrorName writes a pointer to a static string (or leaves it null).
    unsafe { sys::cuGetErrorName(r, &mut name) };
    let name = if name.is_null() {
        format!("{r:?}")
    } else {
        // SAFETY: a NUL-terminated static string from the driver.
        unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned()
    };
    Err(driver_error(what, name, r == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY))
}

fn driver_error(call: &str, code: String, out_of_memory: bool) -> Error {
    if out_of_memory {
        return Error::OutOfMemory(format!("{call} failed: {code}"));
    }
    Error::Driver { call: call.to_string(), code }
}

/// The error of a call through `cust`'s wrappers, named as [`check`] names a raw call's.
pub(crate) trait Call<T> {
    /// `call` failed with the error.
    fn call(self, call: &str) -> Result<T>;
}

impl<T> Call<T> for std::result::Result<T, cust::error::CudaError> {
    fn call(self, call: &str) -> Result<T> {
        self.map_err(|e| driver_error(call, e.to_string(), e == cust::error::CudaError::OutOfMemory))
    }
}

/// A context handle, for making the context current around a driver call ([`Ctx::bind`]).
#[derive(Clone, Copy)]
pub(crate) struct Ctx(pub(crate) sys::CUcontext);

// SAFETY: a CUDA context handle may be made current on any host thread (`cuCtxPushCurrent`); the
// handle itself is an opaque pointer the driver owns, never dereferenced here.
unsafe impl Send for Ctx {}
// SAFETY: as above.
unsafe impl Sync for Ctx {}

/// The context made current by [`Ctx::bind`], until dropped (`cuCtxPopCurrent`).
pub(crate) struct Bound(());

impl Ctx {
    /// Makes the context current on this thread until the guard drops (`cuCtxPushCurrent`). With two
    /// GPUs in one process every driver call of a device runs with that device's context current.
    pub(crate) fn bind(self) -> Result<Bound> {
        // SAFETY: a live context (the `Gpu` that owns it outlives every caller: buffers and the device
        // borrow it).
        check(unsafe { sys::cuCtxPushCurrent_v2(self.0) }, "cuCtxPushCurrent")?;
        Ok(Bound(()))
    }

    /// Lets this context's kernels access `peer`'s memory (`cuCtxEnablePeerAccess`; this context must
    /// be current); enabling it twice is not an error.
    pub(crate) fn enable_peer_access(self, peer: Ctx, what: &str) -> Result<()> {
        // SAFETY: both contexts are live; flags must be 0.
        let r = unsafe { sys::cuCtxEnablePeerAccess(peer.0, 0) };
        if r == sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
            return Ok(());
        }
        check(r, what)
    }
}

impl Drop for Bound {
    fn drop(&mut self) {
        let mut old: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: pops the context `bind` pushed (guards drop in reverse order of their making). A
        // failure cannot be reported from a destructor; the context then stays current.
        unsafe { sys::cuCtxPopCurrent_v2(&mut old) };
    }
}

/// The device's stream, as a buffer holds it: a buffer's copies and zeroings run on it, after every
/// kernel queued there before them (a [`Device::sequence`](crate::Device::sequence)'s included), and
/// are waited for before they return.
#[derive(Clone, Copy)]
pub(crate) struct StreamRef(pub(crate) sys::CUstream);

// SAFETY: as for `Ctx`: an opaque handle the driver owns, usable from any host thread with its
// context current.
unsafe impl Send for StreamRef {}
// SAFETY: as above.
unsafe impl Sync for StreamRef {}

impl StreamRef {
    /// Waits for everything queued on the stream.
    pub(crate) fn synchronize(self) -> Result<()> {
        // SAFETY: the stream outlives every buffer of its device (buffers borrow the device).
        check(unsafe { sys::cuStreamSynchronize(self.0) }, "cuStreamSynchronize")
    }

    /// Whether everything queued on the stream has finished (`cuStreamQuery`); an error when a kernel
    /// of it failed.
    pub(crate) fn is_done(self) -> Result<bool> {
        // SAFETY: the stream is alive (owned by the device that called this).
        let r = unsafe { sys::cuStreamQuery(self.0) };
        if r == sys::CUresult::CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        check(r, "cuStreamQuery").map(|()| true)
    }

    /// Queues a zeroing of `bytes` at `ptr` (`cuMemsetD8Async`), without waiting.
    ///
    /// # Safety
    /// `ptr .. ptr + bytes` is device memory of the stream's context, alive until the stream is waited
    /// for; the context is current.
    pub(crate) unsafe fn zero(self, ptr: u64, bytes: usize) -> Result<()> {
        // SAFETY: the caller's contract.
        check(unsafe { sys::cuMemsetD8Async(ptr, 0, bytes, self.0) }, "cuMemsetD8Async")
    }

    /// Queues a copy of `bytes` from device address `src` to host memory at `dst`
    /// (`cuMemcpyDtoHAsync`), without waiting.
    ///
    /// # Safety
    /// `dst` holds `bytes` writable bytes, not read until the stream is waited for; `src .. src +
    /// bytes` is device memory of the stream's context, alive until then; the context is current.
    pub(crate) unsafe fn copy_to_host(self, dst: *mut u8, src: u64, bytes: usize) -> Result<()> {
        // SAFETY: the caller's contract.
        let r = unsafe { sys::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, bytes, self.0) };
        check(r, "cuMemcpyDtoHAsync")
    }

    /// Queues a copy of `bytes` from host memory at `src` to device address `dst`
    /// (`cuMemcpyHtoDAsync`), without waiting.
    ///
    /// # Safety
    /// `src` holds `bytes` readable bytes, alive and unchanged until the stream is waited for; `dst ..
    /// dst + bytes` is device memory of the stream's context; the context is current.
    pub(crate) unsafe fn copy_from_host(self, dst: u64, src: *const u8, bytes: usize) -> Result<()> {
        // SAFETY: the caller's contract.
        let r = unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src as *const c_void, bytes, self.0) };
        check(r, "cuMemcpyHtoDAsync")
    }

    /// Queues `f` with the launch shape and parameter pointers given, as a cooperative launch
    /// (`cuLaunchCooperativeKernel`) or not (`cuLaunchKernel`).
    ///
    /// # Safety
    /// `f` is a function of a module the current context loaded; `params` point to values of the
    /// count, sizes and types of its parameters (the driver copies them at the call); every pointer
    /// among them addresses device memory the context may access, alive until the kernel ends.
    pub(crate) unsafe fn launch(
        self,
        f: CUfunction,
        grid: Dim3,
        block: Dim3,
        shared_bytes: u32,
        cooperative: bool,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let (g, b) = (grid, block);
        // SAFETY: the caller's contract.
        unsafe {
            if cooperative {
                let r = sys::cuLaunchCooperativeKernel(
                    f,
                    g.x,
                    g.y,
                    g.z,
                    b.x,
                    b.y,
                    b.z,
                    shared_bytes,
                    self.0,
                    params.as_mut_ptr(),
                );
                check(r, "cuLaunchCooperativeKernel")
            } else {
                let r = sys::cuLaunchKernel(
                    f,
                    g.x,
                    g.y,
                    g.z,
                    b.x,
                    b.y,
                    b.z,
                    shared_bytes,
                    self.0,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                );
                check(r, "cuLaunchKernel")
            }
        }
    }
}

/// A device attribute (`cuDeviceGetAttribute`).
pub(crate) fn attribute(dev: CUdevice, attr: Attribute) -> Result<i32> {
    let mut v = 0i32;
    // SAFETY: writes one int; the device handle is the driver's.
    let r = unsafe { sys::cuDeviceGetAttribute(&mut v, attr, dev) };
    check(r, &format!("cuDeviceGetAttribute({attr:?})"))?;
    Ok(v)
}

/// What the driver reports for a pair of devices (`cuDeviceCanAccessPeer`, `cuDeviceGetP2PAttribute`):
/// can access, access supported, native atomics, performance rank.
pub(crate) fn peer(a: CUdevice, b: CUdevice) -> Result<(bool, bool, bool, i32)> {
    use sys::CUdevice_P2PAttribute as P;
    let mut can = 0i32;
    // SAFETY: writes one int; both device handles are the driver's.
    check(unsafe { sys::cuDeviceCanAccessPeer(&mut can, a, b) }, "cuDeviceCanAccessPeer")?;
    let attr = |p: P| -> Result<i32> {
        let mut v = 0i32;
        // SAFETY: writes one int; both device handles are the driver's.
        check(unsafe { sys::cuDeviceGetP2PAttribute(&mut v, p, a, b) }, &format!("cuDeviceGetP2PAttribute({p:?})"))?;
        Ok(v)
    };
    Ok((
        can != 0,
        attr(P::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED)? != 0,
        attr(P::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED)? != 0,
        attr(P::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK)?,
    ))
}

/// `bytes` of page-locked host memory mapped into the current context's address space
/// (`cuMemHostAlloc` with `CU_MEMHOSTALLOC_DEVICEMAP`), zeroed: its host address.
pub(crate) fn host_alloc_mapped(bytes: usize) -> Result<*mut c_void> {
    let mut host: *mut c_void = std::ptr::null_mut();
    // SAFETY: writes one pointer; the caller made a context current.
    let r = unsafe { sys::cuMemHostAlloc(&mut host, bytes, sys::CU_MEMHOSTALLOC_DEVICEMAP) };
    check(r, "cuMemHostAlloc(CU_MEMHOSTALLOC_DEVICEMAP)")?;
    // SAFETY: `bytes` bytes were just allocated at `host`.
    unsafe { std::ptr::write_bytes(host as *mut u8, 0, bytes) };
    Ok(host)
}

/// The address kernels use for mapped host memory at `host` (`cuMemHostGetDevicePointer`).
///
/// # Safety
/// `host` was allocated by [`host_alloc_mapped`] and not freed.
pub(crate) unsafe fn host_device_pointer(host: *mut c_void) -> Result<u64> {
    let mut device = 0;
    // SAFETY: writes one device pointer for an allocation made with DEVICEMAP (the caller's contract).
    let r = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) };
    check(r, "cuMemHostGetDevicePointer")?;
    Ok(device)
}

/// Frees mapped host memory (`cuMemFreeHost`); a failure is ignored (the memory is then leaked,
/// never freed twice).
///
/// # Safety
/// `host` was allocated by [`host_alloc_mapped`], is freed once, and nothing uses it any more.
pub(crate) unsafe fn free_host(host: *mut c_void) {
    // SAFETY: the caller's contract.
    unsafe { sys::cuMemFreeHost(host) };
}

/// Lets `f` take `bytes` of dynamic shared memory (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`).
///
/// # Safety
/// `f` is a function of a module a live context loaded and keeps.
pub(crate) unsafe fn allow_dynamic_shared(f: CUfunction, bytes: usize) -> Result<()> {
    let attr = sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    // SAFETY: the caller's contract; sets one attribute.
    check(unsafe { sys::cuFuncSetAttribute(f, attr, bytes as i32) }, "cuFuncSetAttribute")
}

/// Blocks of `f` resident at once on one SM with `threads` per block and `shared` bytes of dynamic
/// shared memory (`cuOccupancyMaxActiveBlocksPerMultiprocessor`).
///
/// # Safety
/// `f` is a function of a module the current context loaded and keeps.
pub(crate) unsafe fn blocks_per_sm(f: CUfunction, threads: u64, shared: usize) -> Result<u32> {
    let mut per_sm = 0i32;
    // SAFETY: writes one int; the caller's contract.
    let r = unsafe { sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut per_sm, f, threads as i32, shared) };
    check(r, "cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
    Ok(per_sm.max(0) as u32)
}
