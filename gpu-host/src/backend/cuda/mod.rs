//! The CUDA backend (feature `cuda`): one GPU with its context, stream, events and loaded modules
//! ([`Gpu`]). It launches with `cuLaunchKernel` / `cuLaunchCooperativeKernel` after finding the
//! kernel's entry in a module whose parameters and signature are the kernel's (`module`), times with
//! events, and runs every driver call with the device's own context current (pushed and popped
//! around it), so that two GPUs can be open in one process. The raw driver calls are `driver`'s; the
//! allocations `memory`'s.
//!
//! May import the crate's leaves (`attributes`, `error`, `launch`, `ptx`, `size`) and its own
//! children; never the device layer above it (`device`, `buffer`, ...).

pub(crate) mod driver;
pub(crate) mod memory;
mod module;

use crate::attributes::{PeerAttributes, SystemAttributes};
use crate::error::{Error, Result, fail};
use crate::launch::Launch;
use crate::ptx_module::Ptx;
use cust::context::Context;
use cust::device::Device as CuDevice;
use cust::event::{Event, EventFlags};
use cust::stream::{Stream, StreamFlags};
use driver::{Call as _, Ctx, StreamRef};
use gpu_std::{Dim3, Kernel, KernelArgs, Pod};
pub(crate) use memory::{GpuBuffer, HostAlloc};
use module::Modules;

pub(crate) struct Gpu {
    /// Everything made in the context, destroyed with the context current (see `Drop`).
    res: std::mem::ManuallyDrop<Resources>,
    name: String,
    sms: u32,
    ordinal: u32,
    dev: CuDevice,
    ctx: Ctx,
    _ctx: Context,
}

/// What a [`Gpu`] makes in its context.
struct Resources {
    /// Start and stop events of every launch (made once: launches are one at a time per device).
    events: (Event, Event),
    /// Start and stop events around a region of several launches ([`Gpu::time_region`]).
    region: (Event, Event),
    stream: Stream,
    /// The modules loaded, in the order they were: the one the device opened with first.
    modules: Modules,
    /// A page-locked word that [`Gpu::queue_read`] copies a device word into, on the stream.
    readback: cust::memory::LockedBuffer<u64>,
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // The module, stream and events are destroyed with their context current, before it is
        // released (the `_ctx` field drops after this).
        let _bound = self.ctx.bind();
        // SAFETY: dropped once, here; never used again.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.res) };
    }
}

/// GPUs the driver reports (`cuDeviceGetCount`), or why there are none.
pub(crate) fn count() -> Result<u32> {
    cust::init(cust::CudaFlags::empty())
        .map_err(|e| Error::NoGpu(format!("cuInit failed: {e} (no NVIDIA driver or no device)")))?;
    CuDevice::num_devices().call("cuDeviceGetCount")
}

impl Gpu {
    /// Opens device `ordinal` and loads the PTX module `ptx`.
    pub(crate) fn open(ptx: &Ptx, ordinal: u32) -> Result<Gpu> {
        let n = count()?;
        if n == 0 {
            fail!(NoGpu, "the CUDA driver reports no device");
        }
        if ordinal >= n {
            fail!(NoGpu, "GPU {ordinal} does not exist: the CUDA driver reports {n} device(s) (0..{})", n - 1);
        }
        let dev = CuDevice::get_device(ordinal).call(&format!("cuDeviceGet({ordinal})"))?;
        // The device's primary context; `Context::new` also makes it current, which `bind` below makes
        // explicit for every call.
        let ctx = Context::new(dev).call("cuDevicePrimaryCtxRetain")?;
        let raw = Ctx(ctx.as_raw());
        let _bound = raw.bind()?;
        let major =
            dev.get_attribute(cust::device::DeviceAttribute::ComputeCapabilityMajor).call("cuDeviceGetAttribute")?;
        let minor =
            dev.get_attribute(cust::device::DeviceAttribute::ComputeCapabilityMinor).call("cuDeviceGetAttribute")?;
        let sms =
            dev.get_attribute(cust::device::DeviceAttribute::MultiprocessorCount).call("cuDeviceGetAttribute")? as u32;
        let name = format!("{} (sm_{major}{minor}, {sms} SMs)", dev.name().call("cuDeviceGetName")?);
        let modules = Modules::first(ptx)?;
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None).call("cuStreamCreate")?;
        let events = (
            Event::new(EventFlags::DEFAULT).call("cuEventCreate")?,
            Event::new(EventFlags::DEFAULT).call("cuEventCreate")?,
        );
        let region = (
            Event::new(EventFlags::DEFAULT).call("cuEventCreate")?,
            Event::new(EventFlags::DEFAULT).call("cuEventCreate")?,
        );
        let readback = cust::memory::LockedBuffer::new(&0u64, 1).call("cuMemAllocHost")?;
        let res = std::mem::ManuallyDrop::new(Resources { events, region, stream, modules, readback });
        Ok(Gpu { res, name, sms, ordinal, dev, ctx: raw, _ctx: ctx })
    }

    /// Loads `ptx` next to the modules loaded already, unless a module of the same text is loaded;
    /// returns whether it loaded it.
    pub(crate) fn load_module(&self, ptx: &Ptx) -> Result<bool> {
        if self.res.modules.has(ptx)? {
            return Ok(false);
        }
        let _bound = self.ctx.bind()?;
        self.res.modules.add(ptx)?;
        Ok(true)
    }

    pub(crate) fn name(&self) -> String {
        self.name.clone()
    }

    pub(crate) fn sm_count(&self) -> u32 {
        self.sms
    }

    /// The device's ordinal (`cuDeviceGet`).
    pub(crate) fn ordinal(&self) -> u32 {
        self.ordinal
    }

    fn stream(&self) -> StreamRef {
        StreamRef(self.res.stream.as_inner())
    }

    /// What the GPU promises about memory shared with the host (`cuDeviceGetAttribute`).
    pub(crate) fn system_attributes(&self) -> Result<SystemAttributes> {
        use driver::Attribute as A;
        let on = |a: A| driver::attribute(self.dev.as_raw(), a).map(|v| v != 0);
        Ok(SystemAttributes {
            can_map_host_memory: on(A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY)?,
            unified_addressing: on(A::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING)?,
            host_native_atomics: on(A::CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED)?,
            pageable_memory_access: on(A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS)?,
            pageable_uses_host_page_tables: on(A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES)?,
            concurrent_managed_access: on(A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)?,
        })
    }

    /// What the driver reports about this device's kernels reaching `peer`'s memory; an error when
    /// both are the same GPU.
    pub(crate) fn peer_attributes(&self, peer: &Gpu) -> Result<PeerAttributes> {
        if self.ordinal == peer.ordinal {
            fail!(
                Unsupported,
                "GPU {} and GPU {} are the same device: peer access needs two",
                self.ordinal,
                peer.ordinal
            );
        }
        let (can_access_peer, access_supported, native_atomics, performance_rank) =
            driver::peer(self.dev.as_raw(), peer.dev.as_raw())?;
        Ok(PeerAttributes { can_access_peer, access_supported, native_atomics, performance_rank })
    }

    /// Lets this context's kernels access `peer`'s memory (`cuCtxEnablePeerAccess`), after checking that
    /// the driver says they can; enabling it twice is not an error.
    pub(crate) fn enable_peer_access(&self, peer: &Gpu) -> Result<()> {
        let p = self.peer_attributes(peer)?;
        if !(p.can_access_peer && p.access_supported) {
            fail!(
                Unsupported,
                "GPU {} cannot access the memory of GPU {} (cuDeviceCanAccessPeer = {}, \
                 CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED = {})",
                self.ordinal,
                peer.ordinal,
                p.can_access_peer as u8,
                p.access_supported as u8
            );
        }
        let _bound = self.ctx.bind()?;
        let what = format!("cuCtxEnablePeerAccess (GPU {} → memory of GPU {})", self.ordinal, peer.ordinal);
        self.ctx.enable_peer_access(peer.ctx, &what)
    }

    /// `len` zeroed words of mapped page-locked host memory, for the buffer `name`; an error when the
    /// GPU cannot map host memory.
    pub(crate) fn host_alloc<T: Pod>(&self, name: &str, len: usize) -> Result<HostAlloc<T>> {
        if !self.system_attributes()?.can_map_host_memory {
            fail!(Unsupported, "{} cannot map host memory (CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY is 0)", self.name);
        }
        // Never fewer bytes than `len` words: the buffer's length is what its host view trusts.
        let bytes = crate::size::byte_len::<T>("mapped buffer", name, len)?.max(16);
        HostAlloc::new(self.ctx, bytes)
    }

    pub(crate) fn upload<T: Pod>(&self, data: &[T]) -> Result<GpuBuffer<T>> {
        GpuBuffer::upload(self.ctx, self.stream(), data)
    }

    /// Most blocks of `K` resident at once with this launch shape: occupancy x SMs.
    pub(crate) fn max_coresident_blocks<K: Kernel>(&self, block: Dim3, shared: usize) -> Result<u32> {
        let _bound = self.ctx.bind()?;
        let f = self.res.modules.function::<K>(shared)?;
        // SAFETY: `f` is a function of a module this context loaded and keeps.
        let per_sm = unsafe { driver::blocks_per_sm(f, block.volume(), shared)? };
        Ok(per_sm * self.sms)
    }

    /// Launches `K` and waits; returns the kernel time in ms (events around the launch).
    ///
    /// # Safety
    /// As [`Gpu::start`].
    pub(crate) unsafe fn launch<K: Kernel>(&self, cfg: Launch, args: K::Args<'_>) -> Result<f64> {
        // SAFETY: the caller's contract; the kernel is waited for right here.
        unsafe { self.start::<K>(cfg, args)? };
        self.finish(K::NAME)
    }

    /// Launches without waiting for the kernel: the caller must call [`Gpu::finish`] before anything
    /// `args` points to may be freed or used by the host. Returns only once the kernel is queued (an
    /// error: nothing runs).
    ///
    /// # Safety
    /// Every view in `args` must point to live device memory this context may access (its own, or a
    /// peer's with peer access enabled) that stays alive until [`Gpu::finish`] returns; and the
    /// caller must call [`Gpu::finish`] after an `Ok` before that memory is freed.
    pub(crate) unsafe fn start<K: Kernel>(&self, cfg: Launch, args: K::Args<'_>) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.queue::<K>(cfg, args, true) }
    }

    /// Queues `K` on the device's stream after what is queued there, between the launch events when
    /// `timed` (for [`Gpu::finish`]), else with no event (for [`Gpu::wait`]: a sequence of launches
    /// queued back to back, whose driver calls are then only the launches').
    ///
    /// # Safety
    /// As [`Gpu::start`], with [`Gpu::wait`] in place of [`Gpu::finish`] when not `timed`.
    pub(crate) unsafe fn queue<K: Kernel>(&self, cfg: Launch, mut args: K::Args<'_>, timed: bool) -> Result<()> {
        let name = K::NAME;
        let _bound = self.ctx.bind()?;
        // The entry whose parameters and signature are `K`'s (checked in `function`), allowed the
        // launch's shared memory.
        let f = self.res.modules.function::<K>(cfg.shared_bytes)?;
        let (g, b) = (cfg.grid, cfg.block);
        if cfg.cooperative {
            let cap = self.max_coresident_blocks::<K>(b, cfg.shared_bytes)?;
            if g.volume() > cap as u64 {
                fail!(
                    Refused,
                    "cooperative launch of `{name}` with {} blocks exceeds the {cap} blocks that can be resident at \
                     once on {} ({} per SM); a grid barrier could never complete (reduce the grid)",
                    g.volume(),
                    self.name,
                    cap / self.sms
                );
            }
        }
        let mut ptrs = args.pointers();
        let (start, stop) = (&self.res.events.0, &self.res.events.1);
        let stream = &self.res.stream;
        if timed {
            start.record(stream).call("cuEventRecord")?;
        }
        // SAFETY: the module's entry is the code of a definition with this kernel's module path, name and
        // parameter types (its signature, checked above; `Ptx`'s contract), so the argument tuple has the
        // count, sizes and types of its parameters; every view points to a live device buffer of its
        // length that this context may access (the caller's contract: views borrow their buffers, and
        // `Device` checked their memory space), and the launch shape was checked against the arguments.
        // The driver copies the parameter values at the call.
        let r = unsafe { self.stream().launch(f, g, b, cfg.shared_bytes as u32, cfg.cooperative, &mut ptrs) };
        r.map_err(|e| e.context(format!("launch of `{name}` with grid {g:?} block {b:?} failed")))?;
        if !timed {
            return Ok(());
        }
        if let Err(e) = stop.record(stream) {
            // The kernel is queued: wait for it before reporting, so that nothing it uses is freed early.
            let _ = stream.synchronize();
            return Err(e).call("cuEventRecord");
        }
        Ok(())
    }

    /// Runs `call` (which launches on this device, each launch waited for) between two events on the
    /// device's stream; returns the time between them in ms: what a caller of `call` waits for on the
    /// GPU, from the first launch's enqueueing to the last kernel's end (host work between launches
    /// included).
    pub(crate) fn time_region<E: From<Error>>(&self, call: &dyn Fn() -> Result<(), E>) -> Result<f64, E> {
        let stream = &self.res.stream;
        {
            let _bound = self.ctx.bind()?;
            self.res.region.0.record(stream).call("cuEventRecord")?;
        }
        call()?;
        let _bound = self.ctx.bind()?;
        self.res.region.1.record(stream).call("cuEventRecord")?;
        stream.synchronize().call("cuStreamSynchronize")?;
        Ok(self.res.region.1.elapsed_time_f32(&self.res.region.0).call("cuEventElapsedTime")? as f64)
    }

    /// Queues a zeroing of `bytes` at `ptr` on the device's stream (after what is queued there), without
    /// waiting.
    ///
    /// # Safety
    /// `ptr .. ptr + bytes` must be device memory of this context that stays alive until the stream is
    /// waited for ([`Gpu::wait`]).
    pub(crate) unsafe fn zero_async(&self, ptr: u64, bytes: usize) -> Result<()> {
        let _bound = self.ctx.bind()?;
        if bytes > 0 {
            // SAFETY: the caller's contract; the stream is this context's.
            unsafe { self.stream().zero(ptr, bytes)? };
        }
        Ok(())
    }

    /// Queues a copy of the `T` at device address `ptr` into the page-locked readback word, after what
    /// is queued on the stream; [`Gpu::read_back`] returns it once the stream was waited for.
    ///
    /// # Safety
    /// `ptr .. ptr + size_of::<T>()` must be device memory of this context that stays alive until the
    /// stream is waited for.
    pub(crate) unsafe fn queue_read<T: Pod>(&self, ptr: u64) -> Result<()> {
        let size = std::mem::size_of::<T>();
        if size > 8 {
            fail!(Unsupported, "a read back on the stream takes at most 8 bytes ({size} asked)");
        }
        let _bound = self.ctx.bind()?;
        let dst = self.res.readback.as_ptr() as *mut u8;
        // SAFETY: the caller's contract for the source; the destination is our own page-locked word of
        // 8 bytes, read only after the stream is waited for.
        unsafe { self.stream().copy_to_host(dst, ptr, size) }
    }

    /// The word [`Gpu::queue_read`] copied (the stream must have been waited for since).
    pub(crate) fn read_back<T: Pod>(&self) -> T {
        let mut out = T::default();
        let size = std::mem::size_of::<T>().min(8);
        // SAFETY: plain scalar T of at most 8 bytes (`queue_read` refused larger); the word is ours and
        // no copy into it is in flight (the stream was waited for).
        unsafe {
            std::ptr::copy_nonoverlapping(self.res.readback.as_ptr() as *const u8, &mut out as *mut T as *mut u8, size)
        };
        out
    }

    /// Waits for everything queued on the stream, naming `what` if a kernel of it failed.
    pub(crate) fn wait(&self, what: &str) -> Result<()> {
        let _bound = self.ctx.bind()?;
        self.res
            .stream
            .synchronize()
            .call("cuStreamSynchronize")
            .map_err(|e| e.context(format!("{what} failed while running")))
    }

    /// Waits for the kernel [`Gpu::start`] queued; returns its time in ms.
    pub(crate) fn finish(&self, name: &str) -> Result<f64> {
        self.wait(&format!("kernel `{name}`"))?;
        let _bound = self.ctx.bind()?;
        let ms = self.res.events.1.elapsed_time_f32(&self.res.events.0).call("cuEventElapsedTime")?;
        Ok(ms as f64)
    }

    /// Launches, then polls the stream (`cuStreamQuery`, every millisecond) for at most `limit`:
    /// `Ok(None)` if the kernel was still running then (it cannot be stopped: the caller must not
    /// touch the device again, and ends the process), else the kernel time in ms.
    ///
    /// # Safety
    /// As [`Gpu::start`]; on `Ok(None)` the kernel still runs, so nothing it uses may be freed: the
    /// caller ends the process without returning.
    pub(crate) unsafe fn launch_within<K: Kernel>(
        &self,
        cfg: Launch,
        args: K::Args<'_>,
        limit: std::time::Duration,
    ) -> Result<Option<f64>> {
        let name = K::NAME;
        // SAFETY: the caller's contract.
        unsafe { self.start::<K>(cfg, args)? };
        let started = std::time::Instant::now();
        loop {
            let done = {
                let _bound = self.ctx.bind()?;
                self.stream().is_done().map_err(|e| e.context(format!("kernel `{name}` failed while running")))?
            };
            if done {
                return self.finish(name).map(Some);
            }
            if started.elapsed() > limit {
                return Ok(None);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
