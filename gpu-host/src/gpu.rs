//! The CUDA backend (feature `cuda`): loads a PTX module, launches with `cuLaunchKernel` /
//! `cuLaunchCooperativeKernel` after checking the arguments against the kernel's parameters in the
//! module, times with events. Every call is checked.

use crate::device::NoGpu;
use crate::launch::Launch;
use crate::ptx::{Ptx, PtxParams};
use anyhow::{Context as _, Result, bail};
use cust::context::Context;
use cust::device::Device as CuDevice;
use cust::event::{Event, EventFlags};
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use gpu_std::Dim3;
use gpu_std::KernelArgs;
use gpu_std::Pod;

pub struct Gpu {
    // Field order: drop the events, stream and module before the context.
    /// Start and stop events of every launch (made once: launches are synchronous and one at a time).
    events: (Event, Event),
    stream: Stream,
    module: Module,
    /// The module, for messages.
    ptx: String,
    /// Every kernel's parameter sizes, as the module declares them.
    params: PtxParams,
    name: String,
    sms: u32,
    dev: CuDevice,
    _ctx: Context,
}

impl Gpu {
    /// Opens device 0 and loads the PTX module at `ptx`.
    pub fn open(ptx: &Ptx) -> Result<Gpu> {
        cust::init(cust::CudaFlags::empty())
            .map_err(|e| NoGpu(format!("cuInit failed: {e} (no NVIDIA driver or no device)")))?;
        let n = CuDevice::num_devices().context("cuDeviceGetCount")?;
        if n == 0 {
            return Err(NoGpu("the CUDA driver reports no device".into()).into());
        }
        let dev = CuDevice::get_device(0).context("cuDeviceGet(0)")?;
        let ctx = Context::new(dev).context("cuCtxCreate")?;
        let major = dev.get_attribute(cust::device::DeviceAttribute::ComputeCapabilityMajor)?;
        let minor = dev.get_attribute(cust::device::DeviceAttribute::ComputeCapabilityMinor)?;
        let sms = dev.get_attribute(cust::device::DeviceAttribute::MultiprocessorCount)? as u32;
        let name = format!("{} (sm_{major}{minor}, {sms} SMs)", dev.name()?);
        let text = ptx.load().with_context(|| format!("cannot read {}", ptx.describe()))?;
        let module = Module::from_ptx(&text, &[])
            .with_context(|| format!("the driver rejected {} (cuModuleLoadData)", ptx.describe()))?;
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None).context("cuStreamCreate")?;
        let params = PtxParams::parse(&text);
        let events = (
            Event::new(EventFlags::DEFAULT).context("cuEventCreate")?,
            Event::new(EventFlags::DEFAULT).context("cuEventCreate")?,
        );
        Ok(Gpu { events, stream, module, ptx: ptx.describe(), params, name, sms, dev, _ctx: ctx })
    }

    pub fn name(&self) -> String {
        self.name.clone()
    }

    pub fn sm_count(&self) -> u32 {
        self.sms
    }

    /// A device attribute (`cuDeviceGetAttribute`).
    pub fn attribute(&self, attr: cust::sys::CUdevice_attribute) -> Result<i32> {
        let mut v = 0i32;
        // SAFETY: writes one int; the device handle is valid.
        let r = unsafe { cust::sys::cuDeviceGetAttribute(&mut v, attr, self.dev.as_raw()) };
        cu(r, &format!("cuDeviceGetAttribute({attr:?})"))?;
        Ok(v)
    }

    /// `len` zeroed words of mapped page-locked host memory.
    pub fn host_alloc<T: Pod>(&self, len: usize) -> Result<HostAlloc<T>> {
        let bytes = (len * size_of::<T>()).max(16);
        let mut host: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer; the context is current on this thread (made by `open`).
        let r = unsafe { cust::sys::cuMemHostAlloc(&mut host, bytes, cust::sys::CU_MEMHOSTALLOC_DEVICEMAP) };
        cu(r, "cuMemHostAlloc(CU_MEMHOSTALLOC_DEVICEMAP)")?;
        // Owned from here: freed on every path out (and only once: the value itself is returned).
        let mut alloc = HostAlloc { host: host as *mut T, device: 0 };
        // SAFETY: `bytes` bytes were just allocated at `host`.
        unsafe { std::ptr::write_bytes(host as *mut u8, 0, bytes) };
        // SAFETY: writes one device pointer for an allocation made with DEVICEMAP.
        let r = unsafe { cust::sys::cuMemHostGetDevicePointer_v2(&mut alloc.device, host, 0) };
        cu(r, "cuMemHostGetDevicePointer")?;
        Ok(alloc)
    }

    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<GpuBuffer<T>> {
        let bytes = std::mem::size_of_val(data);
        // SAFETY: filled immediately below (or zero-length).
        let buf = unsafe { DeviceBuffer::<u8>::uninitialized(bytes.max(16)) }.context("cuMemAlloc")?;
        if bytes > 0 {
            // SAFETY: T is a plain scalar type; viewing its bytes is sound.
            let src = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, bytes) };
            buf.index(..bytes).copy_from(src).context("cuMemcpyHtoD")?;
        }
        Ok(GpuBuffer { buf, bytes, _t: std::marker::PhantomData })
    }

    fn function(&self, name: &str) -> Result<cust::function::Function<'_>> {
        self.module.get_function(name).with_context(|| {
            format!("kernel `{name}` is not in {} (rebuild the module from the kernel crate)", self.ptx)
        })
    }

    pub fn max_coresident_blocks(&self, name: &str, block: Dim3, shared: usize) -> Result<u32> {
        let f = self.function(name)?;
        let per_sm = f
            .max_active_blocks_per_multiprocessor(cust::function::BlockSize::xyz(block.x, block.y, block.z), shared)
            .context("cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
        Ok(per_sm * self.sms)
    }

    /// Launches and waits; returns the kernel time in ms (events around the launch).
    pub fn launch<A: KernelArgs>(&self, name: &str, cfg: Launch, args: A) -> Result<f64> {
        self.launch_within(name, cfg, args, None).map(|ms| ms.expect("an unbounded launch finishes"))
    }

    /// Launches, then polls the stream (`cuStreamQuery`, every millisecond) for at most `limit` if
    /// given: `Ok(None)` if the kernel was still running then (it cannot be stopped: the caller must
    /// not touch the device again, and ends the process), else the kernel time in ms.
    pub fn launch_within<A: KernelArgs>(
        &self,
        name: &str,
        cfg: Launch,
        mut args: A,
        limit: Option<std::time::Duration>,
    ) -> Result<Option<f64>> {
        // A module built from another version of the kernel would read the argument array out of bounds.
        self.params.check(name, &A::sizes(), &self.ptx).map_err(anyhow::Error::msg)?;
        let f = self.function(name)?;
        let (g, b) = (cfg.grid, cfg.block);
        if cfg.cooperative {
            let cap = self.max_coresident_blocks(name, b, cfg.shared_bytes)?;
            if g.volume() > cap as u64 {
                bail!(
                    "cooperative launch of `{name}` with {} blocks exceeds the {cap} blocks that can be resident at \
                     once on {} ({} per SM); a grid barrier could never complete (reduce the grid)",
                    g.volume(),
                    self.name,
                    cap / self.sms
                );
            }
        }
        let mut ptrs = args.pointers();
        let (start, stop) = (&self.events.0, &self.events.1);
        start.record(&self.stream).context("cuEventRecord")?;
        // SAFETY: the argument tuple has the count and sizes of the parameters the module declares for
        // this kernel (checked above), every view points to a live device buffer of its length in this
        // context (views borrow their buffers, and `Device` checked their memory space), and the launch
        // shape was checked against the arguments.
        let r: Result<()> = unsafe {
            if cfg.cooperative {
                let res = cust::sys::cuLaunchCooperativeKernel(
                    f.to_raw(),
                    g.x,
                    g.y,
                    g.z,
                    b.x,
                    b.y,
                    b.z,
                    cfg.shared_bytes as u32,
                    self.stream.as_inner(),
                    ptrs.as_mut_ptr(),
                );
                cu(res, "cuLaunchCooperativeKernel")
            } else {
                self.stream
                    .launch(&f, (g.x, g.y, g.z), (b.x, b.y, b.z), cfg.shared_bytes as u32, &ptrs)
                    .map_err(anyhow::Error::new)
            }
        };
        r.with_context(|| format!("launch of `{name}` with grid {g:?} block {b:?} failed"))?;
        stop.record(&self.stream).context("cuEventRecord")?;
        if let Some(limit) = limit {
            let started = std::time::Instant::now();
            loop {
                // SAFETY: the stream is alive (owned by `self`).
                let r = unsafe { cust::sys::cuStreamQuery(self.stream.as_inner()) };
                if r != cust::sys::CUresult::CUDA_ERROR_NOT_READY {
                    cu(r, "cuStreamQuery").with_context(|| format!("kernel `{name}` failed while running"))?;
                    break;
                }
                if started.elapsed() > limit {
                    return Ok(None);
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        self.stream
            .synchronize()
            .with_context(|| format!("kernel `{name}` failed while running (cuStreamSynchronize)"))?;
        let ms = stop.elapsed_time_f32(start).context("cuEventElapsedTime")?;
        Ok(Some(ms as f64))
    }
}

/// Checks a raw driver-API result, naming the call and the CUDA error.
fn cu(r: cust::sys::CUresult, what: &str) -> Result<()> {
    if r == cust::sys::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut name: *const std::os::raw::c_char = std::ptr::null();
    // SAFETY: cuGetErrorName writes a pointer to a static string (or leaves it null).
    unsafe { cust::sys::cuGetErrorName(r, &mut name) };
    let name = if name.is_null() {
        format!("{r:?}")
    } else {
        // SAFETY: a NUL-terminated static string from the driver.
        unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned()
    };
    bail!("{what} failed: {name}")
}

/// Mapped page-locked host memory (`cuMemHostAlloc` with `CU_MEMHOSTALLOC_DEVICEMAP`): its host
/// address and the address kernels use; freed with `cuMemFreeHost`.
pub struct HostAlloc<T> {
    host: *mut T,
    device: cust::sys::CUdeviceptr,
}

impl<T> HostAlloc<T> {
    pub fn host_ptr(&self) -> *mut T {
        self.host
    }
    pub fn device_ptr(&self) -> u64 {
        self.device
    }
}

impl<T> Drop for HostAlloc<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc; no view or launch uses it any more (they borrow the
        // buffer that owns this). A failure cannot be reported from a destructor; the memory is then
        // leaked, never freed twice.
        unsafe { cust::sys::cuMemFreeHost(self.host as *mut std::ffi::c_void) };
    }
}

/// A device allocation of `bytes` (typed views are made from its address).
pub struct GpuBuffer<T> {
    buf: DeviceBuffer<u8>,
    bytes: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T: Pod> GpuBuffer<T> {
    pub fn device_ptr(&self) -> u64 {
        self.buf.as_device_ptr().as_raw()
    }
    pub fn read(&self, len: usize) -> Result<Vec<T>> {
        let mut out = vec![T::default(); len];
        if self.bytes > 0 {
            // SAFETY: plain scalar T; `out` has exactly `bytes` bytes.
            let dst = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut u8, self.bytes) };
            self.buf.index(..self.bytes).copy_to(dst).context("cuMemcpyDtoH")?;
        }
        Ok(out)
    }
    pub fn write(&self, src: &[T]) -> Result<()> {
        if self.bytes > 0 {
            // SAFETY: plain scalar T.
            let s = unsafe { std::slice::from_raw_parts(src.as_ptr() as *const u8, self.bytes) };
            // SAFETY: DeviceSlice copy into our own allocation; no kernel is running (launches are
            // synchronous).
            let mut slice =
                unsafe { cust::memory::DeviceSlice::from_raw_parts_mut(self.buf.as_device_ptr(), self.bytes) };
            slice.copy_from(s).context("cuMemcpyHtoD")?;
        }
        Ok(())
    }
}
