//! The CUDA backend (feature `cuda`): loads a PTX module, launches with `cuLaunchKernel` /
//! `cuLaunchCooperativeKernel` after checking the kernel's parameters and signature in the module
//! against the host's kernel type, times with events. Every call is checked, and runs with the device's own context current
//! (pushed and popped around it), so that two GPUs can be open in one process.

use crate::device::NoGpu;
use crate::launch::Launch;
use crate::ptx::{Ptx, PtxEntries};
use anyhow::{Context as _, Result, bail};
use cust::context::Context;
use cust::device::Device as CuDevice;
use cust::event::{Event, EventFlags};
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use gpu_std::{Dim3, Kernel, KernelArgs, Pod};

pub struct Gpu {
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
    modules: std::cell::RefCell<Vec<Loaded>>,
    /// The entry found for each kernel type (by `type_name`): modules are only ever added, after the
    /// ones searched first, so a kernel's entry never changes once found. With it, the most dynamic
    /// shared memory it has been allowed so far (so that the attribute is set once, not per launch).
    functions: std::cell::RefCell<Vec<(&'static str, cust::sys::CUfunction, usize)>>,
    /// A page-locked word that [`Gpu::queue_read`] copies a device word into, on the stream.
    readback: cust::memory::LockedBuffer<u64>,
}

/// A loaded PTX module and what it declares.
struct Loaded {
    module: Module,
    /// The module, for messages ([`Ptx::describe`]).
    describe: String,
    /// Every kernel's parameter sizes and signature, as the module declares them.
    entries: PtxEntries,
    /// A hash of the module's text: a module is loaded once per device.
    hash: u64,
}

impl Loaded {
    /// Reads `ptx`, checks what it declares and has the driver load it (the context must be current).
    fn load(ptx: &Ptx) -> Result<Loaded> {
        let text = ptx.load().with_context(|| format!("cannot read {}", ptx.describe()))?;
        // Read before the driver sees it: a text this reader refuses (a NUL byte, preprocessor lines)
        // is never loaded.
        let entries = PtxEntries::parse(&text).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", ptx.describe()))?;
        let module = Module::from_ptx(&text, &[])
            .with_context(|| format!("the driver rejected {} (cuModuleLoadData)", ptx.describe()))?;
        Ok(Loaded { module, describe: ptx.describe(), entries, hash: text_hash(&text) })
    }
}

/// A hash of a module's text, to tell whether it is loaded already.
pub(crate) fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// A context handle, for making the context current around a driver call ([`Ctx::bind`]).
#[derive(Clone, Copy)]
pub struct Ctx(cust::sys::CUcontext);

// SAFETY: a CUDA context handle may be made current on any host thread (`cuCtxPushCurrent`); the
// handle itself is an opaque pointer the driver owns, never dereferenced here.
unsafe impl Send for Ctx {}
// SAFETY: as above.
unsafe impl Sync for Ctx {}

/// The device's stream, as a buffer holds it: a buffer's copies and zeroings run on it, after every
/// kernel queued there before them (a [`Device::sequence`](crate::Device::sequence)'s included), and
/// are waited for before they return.
#[derive(Clone, Copy)]
pub struct StreamRef(cust::sys::CUstream);

// SAFETY: as for `Ctx`: an opaque handle the driver owns, usable from any host thread with its
// context current.
unsafe impl Send for StreamRef {}
// SAFETY: as above.
unsafe impl Sync for StreamRef {}

impl StreamRef {
    /// Waits for everything queued on the stream.
    fn synchronize(self) -> Result<()> {
        // SAFETY: the stream outlives every buffer of its device (buffers borrow the device).
        cu(unsafe { cust::sys::cuStreamSynchronize(self.0) }, "cuStreamSynchronize")
    }
}

/// The context made current by [`Ctx::bind`], until dropped (`cuCtxPopCurrent`).
pub struct Bound(());

impl Ctx {
    /// Makes the context current on this thread until the guard drops (`cuCtxPushCurrent`). With two
    /// GPUs in one process every driver call of a device runs with that device's context current.
    pub fn bind(self) -> Result<Bound> {
        // SAFETY: a live context (the `Gpu` that owns it outlives every caller: buffers and the device
        // borrow it).
        cu(unsafe { cust::sys::cuCtxPushCurrent_v2(self.0) }, "cuCtxPushCurrent")?;
        Ok(Bound(()))
    }
}

impl Drop for Bound {
    fn drop(&mut self) {
        let mut old: cust::sys::CUcontext = std::ptr::null_mut();
        // SAFETY: pops the context `bind` pushed (guards drop in reverse order of their making). A
        // failure cannot be reported from a destructor; the context then stays current.
        unsafe { cust::sys::cuCtxPopCurrent_v2(&mut old) };
    }
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

/// What the driver reports for a pair of devices (`cuDeviceCanAccessPeer`, `cuDeviceGetP2PAttribute`).
pub struct Peer {
    pub can_access_peer: bool,
    pub access_supported: bool,
    pub native_atomics: bool,
    pub performance_rank: i32,
}

/// GPUs the driver reports (`cuDeviceGetCount`), or why there are none.
pub fn count() -> Result<u32> {
    cust::init(cust::CudaFlags::empty())
        .map_err(|e| NoGpu(format!("cuInit failed: {e} (no NVIDIA driver or no device)")))?;
    CuDevice::num_devices().context("cuDeviceGetCount")
}

impl Gpu {
    /// Opens device `ordinal` and loads the PTX module `ptx`.
    pub fn open(ptx: &Ptx, ordinal: u32) -> Result<Gpu> {
        let n = count()?;
        if n == 0 {
            return Err(NoGpu("the CUDA driver reports no device".into()).into());
        }
        if ordinal >= n {
            return Err(NoGpu(format!(
                "GPU {ordinal} does not exist: the CUDA driver reports {n} device(s) (0..{})",
                n - 1
            ))
            .into());
        }
        let dev = CuDevice::get_device(ordinal).with_context(|| format!("cuDeviceGet({ordinal})"))?;
        // The device's primary context; `Context::new` also makes it current, which `bind` below makes
        // explicit for every call.
        let ctx = Context::new(dev).context("cuDevicePrimaryCtxRetain")?;
        let raw = Ctx(ctx.as_raw());
        let _bound = raw.bind()?;
        let major = dev.get_attribute(cust::device::DeviceAttribute::ComputeCapabilityMajor)?;
        let minor = dev.get_attribute(cust::device::DeviceAttribute::ComputeCapabilityMinor)?;
        let sms = dev.get_attribute(cust::device::DeviceAttribute::MultiprocessorCount)? as u32;
        let name = format!("{} (sm_{major}{minor}, {sms} SMs)", dev.name()?);
        let first = Loaded::load(ptx)?;
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None).context("cuStreamCreate")?;
        let events = (
            Event::new(EventFlags::DEFAULT).context("cuEventCreate")?,
            Event::new(EventFlags::DEFAULT).context("cuEventCreate")?,
        );
        let region = (
            Event::new(EventFlags::DEFAULT).context("cuEventCreate")?,
            Event::new(EventFlags::DEFAULT).context("cuEventCreate")?,
        );
        let modules = std::cell::RefCell::new(vec![first]);
        let readback = cust::memory::LockedBuffer::new(&0u64, 1).context("cuMemAllocHost")?;
        let res = std::mem::ManuallyDrop::new(Resources {
            events,
            region,
            stream,
            modules,
            functions: Default::default(),
            readback,
        });
        Ok(Gpu { res, name, sms, ordinal, dev, ctx: raw, _ctx: ctx })
    }

    /// Loads `ptx` next to the modules loaded already, unless a module of the same text is loaded;
    /// returns whether it loaded it.
    pub fn load_module(&self, ptx: &Ptx) -> Result<bool> {
        let text = ptx.load().with_context(|| format!("cannot read {}", ptx.describe()))?;
        let hash = text_hash(&text);
        if self.res.modules.borrow().iter().any(|m| m.hash == hash) {
            return Ok(false);
        }
        let _bound = self.ctx.bind()?;
        let loaded = Loaded::load(ptx)?;
        self.res.modules.borrow_mut().push(loaded);
        Ok(true)
    }

    pub fn name(&self) -> String {
        self.name.clone()
    }

    pub fn sm_count(&self) -> u32 {
        self.sms
    }

    /// The device's ordinal (`cuDeviceGet`).
    pub fn ordinal(&self) -> u32 {
        self.ordinal
    }

    /// A device attribute (`cuDeviceGetAttribute`).
    pub fn attribute(&self, attr: cust::sys::CUdevice_attribute) -> Result<i32> {
        let mut v = 0i32;
        // SAFETY: writes one int; the device handle is valid.
        let r = unsafe { cust::sys::cuDeviceGetAttribute(&mut v, attr, self.dev.as_raw()) };
        cu(r, &format!("cuDeviceGetAttribute({attr:?})"))?;
        Ok(v)
    }

    /// What the driver reports about this device's kernels reaching `peer`'s memory.
    pub fn peer(&self, peer: &Gpu) -> Result<Peer> {
        use cust::sys::CUdevice_P2PAttribute as P;
        let (a, b) = (self.dev.as_raw(), peer.dev.as_raw());
        let mut can = 0i32;
        // SAFETY: writes one int; both device handles are valid.
        cu(unsafe { cust::sys::cuDeviceCanAccessPeer(&mut can, a, b) }, "cuDeviceCanAccessPeer")?;
        let attr = |p: P| -> Result<i32> {
            let mut v = 0i32;
            // SAFETY: writes one int; both device handles are valid.
            cu(
                unsafe { cust::sys::cuDeviceGetP2PAttribute(&mut v, p, a, b) },
                &format!("cuDeviceGetP2PAttribute({p:?})"),
            )?;
            Ok(v)
        };
        Ok(Peer {
            can_access_peer: can != 0,
            access_supported: attr(P::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED)? != 0,
            native_atomics: attr(P::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED)? != 0,
            performance_rank: attr(P::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK)?,
        })
    }

    /// Lets this context's kernels access `peer`'s memory (`cuCtxEnablePeerAccess`); enabling it twice
    /// is not an error.
    pub fn enable_peer_access(&self, peer: &Gpu) -> Result<()> {
        let _bound = self.ctx.bind()?;
        // SAFETY: both contexts are live; flags must be 0.
        let r = unsafe { cust::sys::cuCtxEnablePeerAccess(peer.ctx.0, 0) };
        if r == cust::sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
            return Ok(());
        }
        cu(r, &format!("cuCtxEnablePeerAccess (GPU {} → memory of GPU {})", self.ordinal, peer.ordinal))
    }

    /// `len` zeroed words of mapped page-locked host memory, for the buffer `name`.
    pub fn host_alloc<T: Pod>(&self, name: &str, len: usize) -> Result<HostAlloc<T>> {
        let _bound = self.ctx.bind()?;
        // Never fewer bytes than `len` words: the buffer's length is what its host view trusts.
        let bytes = crate::buffer::byte_len::<T>("mapped buffer", name, len)?.max(16);
        let mut host: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer; the context is current on this thread (bound above).
        let r = unsafe { cust::sys::cuMemHostAlloc(&mut host, bytes, cust::sys::CU_MEMHOSTALLOC_DEVICEMAP) };
        cu(r, "cuMemHostAlloc(CU_MEMHOSTALLOC_DEVICEMAP)")?;
        // Owned from here: freed on every path out (and only once: the value itself is returned).
        let mut alloc = HostAlloc { host: host as *mut T, device: 0, ctx: self.ctx };
        // SAFETY: `bytes` bytes were just allocated at `host`.
        unsafe { std::ptr::write_bytes(host as *mut u8, 0, bytes) };
        // SAFETY: writes one device pointer for an allocation made with DEVICEMAP.
        let r = unsafe { cust::sys::cuMemHostGetDevicePointer_v2(&mut alloc.device, host, 0) };
        cu(r, "cuMemHostGetDevicePointer")?;
        Ok(alloc)
    }

    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<GpuBuffer<T>> {
        let _bound = self.ctx.bind()?;
        let bytes = std::mem::size_of_val(data);
        // SAFETY: filled immediately below (or zero-length).
        let buf = unsafe { DeviceBuffer::<u8>::uninitialized(bytes.max(16)) }.context("cuMemAlloc")?;
        let stream = StreamRef(self.res.stream.as_inner());
        let buf = GpuBuffer {
            buf: std::mem::ManuallyDrop::new(buf),
            bytes,
            ctx: self.ctx,
            stream,
            _t: std::marker::PhantomData,
        };
        if bytes > 0 {
            // SAFETY: T is a plain scalar type; viewing its bytes is sound.
            let src = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, bytes) };
            buf.buf.index(..bytes).copy_from(src).context("cuMemcpyHtoD")?;
        }
        Ok(buf)
    }

    /// The module entry of kernel `K`: the first loaded module whose `.entry` of `K`'s name has `K`'s
    /// parameters and signature ([`PtxEntries::check_kernel`]). A module built from another definition
    /// of the kernel would run code compiled for other parameters (another element type of the same
    /// size, or another count of them: the argument array read out of bounds); `Ptx`'s contract makes
    /// each module gpu-builder's, whose entries are what their signatures say. When no module has it,
    /// the error of the first module that declares an entry of that name (else of the first module).
    fn function<K: Kernel>(&self, shared: usize) -> Result<cust::sys::CUfunction> {
        let key = std::any::type_name::<K>();
        let mut functions = self.res.functions.borrow_mut();
        let at = match functions.iter().position(|(k, _, _)| *k == key) {
            Some(at) => at,
            None => {
                functions.push((key, self.find_function::<K>()?, 48 * 1024));
                functions.len() - 1
            }
        };
        let (_, f, allowed) = &mut functions[at];
        if shared > *allowed {
            Self::allow_shared(*f, shared, K::NAME)?;
            *allowed = shared;
        }
        Ok(*f)
    }

    /// The entry of the first loaded module whose declaration matches `K` (its name, parameters and
    /// signature).
    fn find_function<K: Kernel>(&self) -> Result<cust::sys::CUfunction> {
        let modules = self.res.modules.borrow();
        let mut first_err: Option<String> = None;
        let mut named_err: Option<String> = None;
        for m in modules.iter() {
            match m.entries.check_kernel::<K>(&m.describe) {
                Ok(()) => {
                    let f = m.module.get_function(K::NAME).with_context(|| {
                        format!(
                            "kernel `{}` is not in {} (rebuild the module from the kernel crate)",
                            K::NAME,
                            m.describe
                        )
                    })?;
                    return Ok(f.to_raw());
                }
                Err(e) => {
                    if named_err.is_none() && m.entries.declares(K::NAME) {
                        named_err = Some(e.clone());
                    }
                    first_err.get_or_insert(e);
                }
            }
        }
        let e = named_err.or(first_err).unwrap_or_else(|| format!("kernel `{}`: no module is loaded", K::NAME));
        if modules.len() > 1 {
            bail!("{e} (none of the {} loaded modules has it)", modules.len());
        }
        bail!("{e}")
    }

    /// Lets `f` take `bytes` of dynamic shared memory: above 48 KiB a kernel must opt in
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`), else its launch fails and its occupancy is 0.
    fn allow_shared(f: cust::sys::CUfunction, bytes: usize, name: &str) -> Result<()> {
        let attr = cust::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        // SAFETY: `f` is a function of a module this context loaded and keeps; sets one attribute.
        let r = unsafe { cust::sys::cuFuncSetAttribute(f, attr, bytes as i32) };
        cu(r, "cuFuncSetAttribute").with_context(|| format!("`{name}` cannot take {bytes} bytes of shared memory"))
    }

    pub fn max_coresident_blocks<K: Kernel>(&self, block: Dim3, shared: usize) -> Result<u32> {
        let _bound = self.ctx.bind()?;
        let f = self.function::<K>(shared)?;
        let mut per_sm = 0i32;
        // SAFETY: writes one int; `f` is a function of a module this context loaded and keeps.
        let r = unsafe {
            cust::sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut per_sm, f, block.volume() as i32, shared)
        };
        cu(r, "cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
        let per_sm = per_sm.max(0) as u32;
        Ok(per_sm * self.sms)
    }

    /// Launches `K` and waits; returns the kernel time in ms (events around the launch).
    ///
    /// # Safety
    /// As [`Gpu::start`].
    pub unsafe fn launch<K: Kernel>(&self, cfg: Launch, args: K::Args<'_>) -> Result<f64> {
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
    pub unsafe fn start<K: Kernel>(&self, cfg: Launch, args: K::Args<'_>) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.queue::<K>(cfg, args, true) }
    }

    /// Queues `K` on the device's stream after what is queued there, between the launch events when
    /// `timed` (for [`Gpu::finish`]), else with no event (for [`Gpu::wait`]: a sequence of launches
    /// queued back to back, whose driver calls are then only the launches').
    ///
    /// # Safety
    /// As [`Gpu::start`], with [`Gpu::wait`] in place of [`Gpu::finish`] when not `timed`.
    pub unsafe fn queue<K: Kernel>(&self, cfg: Launch, mut args: K::Args<'_>, timed: bool) -> Result<()> {
        let name = K::NAME;
        let _bound = self.ctx.bind()?;
        // The entry whose parameters and signature are `K`'s (checked in `function`), allowed the
        // launch's shared memory.
        let f = self.function::<K>(cfg.shared_bytes)?;
        let (g, b) = (cfg.grid, cfg.block);
        if cfg.cooperative {
            let cap = self.max_coresident_blocks::<K>(b, cfg.shared_bytes)?;
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
        let (start, stop) = (&self.res.events.0, &self.res.events.1);
        let stream = &self.res.stream;
        if timed {
            start.record(stream).context("cuEventRecord")?;
        }
        // SAFETY: the module's entry is the code of a definition with this kernel's module path, name and
        // parameter types (its signature, checked above; `Ptx`'s contract), so the argument tuple has the
        // count, sizes and types of its parameters; every view points to a live device buffer of its length that this
        // context may access (the caller's contract: views borrow their buffers, and `Device` checked
        // their memory space), and the launch shape was checked against the arguments. The driver copies
        // the parameter values at the call.
        let r: Result<()> = unsafe {
            if cfg.cooperative {
                let res = cust::sys::cuLaunchCooperativeKernel(
                    f,
                    g.x,
                    g.y,
                    g.z,
                    b.x,
                    b.y,
                    b.z,
                    cfg.shared_bytes as u32,
                    stream.as_inner(),
                    ptrs.as_mut_ptr(),
                );
                cu(res, "cuLaunchCooperativeKernel")
            } else {
                let res = cust::sys::cuLaunchKernel(
                    f,
                    g.x,
                    g.y,
                    g.z,
                    b.x,
                    b.y,
                    b.z,
                    cfg.shared_bytes as u32,
                    stream.as_inner(),
                    ptrs.as_mut_ptr(),
                    std::ptr::null_mut(),
                );
                cu(res, "cuLaunchKernel")
            }
        };
        r.with_context(|| format!("launch of `{name}` with grid {g:?} block {b:?} failed"))?;
        if !timed {
            return Ok(());
        }
        if let Err(e) = stop.record(stream) {
            // The kernel is queued: wait for it before reporting, so that nothing it uses is freed early.
            let _ = stream.synchronize();
            return Err(anyhow::Error::new(e).context("cuEventRecord"));
        }
        Ok(())
    }

    /// Runs `call` (which launches on this device, each launch waited for) between two events on the
    /// device's stream; returns the time between them in ms: what a caller of `call` waits for on the
    /// GPU, from the first launch's enqueueing to the last kernel's end (host work between launches
    /// included).
    pub fn time_region(&self, call: &dyn Fn() -> Result<()>) -> Result<f64> {
        let stream = &self.res.stream;
        {
            let _bound = self.ctx.bind()?;
            self.res.region.0.record(stream).context("cuEventRecord")?;
        }
        call()?;
        let _bound = self.ctx.bind()?;
        self.res.region.1.record(stream).context("cuEventRecord")?;
        stream.synchronize().context("cuStreamSynchronize")?;
        Ok(self.res.region.1.elapsed_time_f32(&self.res.region.0).context("cuEventElapsedTime")? as f64)
    }

    /// Queues a zeroing of `bytes` at `ptr` on the device's stream (after what is queued there), without
    /// waiting.
    ///
    /// # Safety
    /// `ptr .. ptr + bytes` must be device memory of this context that stays alive until the stream is
    /// waited for ([`Gpu::finish`]).
    pub unsafe fn zero_async(&self, ptr: u64, bytes: usize) -> Result<()> {
        let _bound = self.ctx.bind()?;
        if bytes > 0 {
            // SAFETY: the caller's contract; the stream is this context's.
            let r = unsafe { cust::sys::cuMemsetD8Async(ptr, 0, bytes, self.res.stream.as_inner()) };
            cu(r, "cuMemsetD8Async")?;
        }
        Ok(())
    }

    /// Queues a copy of the `T` at device address `ptr` into the page-locked readback word, after what
    /// is queued on the stream; [`Gpu::read_back`] returns it once the stream was waited for.
    ///
    /// # Safety
    /// `ptr .. ptr + size_of::<T>()` must be device memory of this context that stays alive until the
    /// stream is waited for.
    pub unsafe fn queue_read<T: Pod>(&self, ptr: u64) -> Result<()> {
        let size = std::mem::size_of::<T>();
        if size > 8 {
            bail!("a read back on the stream takes at most 8 bytes ({size} asked)");
        }
        let _bound = self.ctx.bind()?;
        let dst = self.res.readback.as_ptr() as *mut std::ffi::c_void;
        // SAFETY: the caller's contract for the source; the destination is our own page-locked word of
        // 8 bytes, read only after the stream is waited for.
        let r = unsafe { cust::sys::cuMemcpyDtoHAsync_v2(dst, ptr, size, self.res.stream.as_inner()) };
        cu(r, "cuMemcpyDtoHAsync")
    }

    /// The word [`Gpu::queue_read`] copied (the stream must have been waited for since).
    pub fn read_back<T: Pod>(&self) -> T {
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
    pub fn wait(&self, what: &str) -> Result<()> {
        let _bound = self.ctx.bind()?;
        self.res.stream.synchronize().with_context(|| format!("{what} failed while running (cuStreamSynchronize)"))
    }

    /// Waits for the kernel [`Gpu::start`] queued; returns its time in ms.
    pub fn finish(&self, name: &str) -> Result<f64> {
        self.wait(&format!("kernel `{name}`"))?;
        let _bound = self.ctx.bind()?;
        let ms = self.res.events.1.elapsed_time_f32(&self.res.events.0).context("cuEventElapsedTime")?;
        Ok(ms as f64)
    }

    /// Launches, then polls the stream (`cuStreamQuery`, every millisecond) for at most `limit`:
    /// `Ok(None)` if the kernel was still running then (it cannot be stopped: the caller must not
    /// touch the device again, and ends the process), else the kernel time in ms.
    ///
    /// # Safety
    /// As [`Gpu::start`]; on `Ok(None)` the kernel still runs, so nothing it uses may be freed: the
    /// caller ends the process without returning.
    pub unsafe fn launch_within<K: Kernel>(
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
            let r = {
                let _bound = self.ctx.bind()?;
                // SAFETY: the stream is alive (owned by `self`).
                unsafe { cust::sys::cuStreamQuery(self.res.stream.as_inner()) }
            };
            if r != cust::sys::CUresult::CUDA_ERROR_NOT_READY {
                cu(r, "cuStreamQuery").with_context(|| format!("kernel `{name}` failed while running"))?;
                return self.finish(name).map(Some);
            }
            if started.elapsed() > limit {
                return Ok(None);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
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
    ctx: Ctx,
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
        let _bound = self.ctx.bind();
        // SAFETY: allocated by cuMemHostAlloc; no view or launch uses it any more (they borrow the
        // buffer that owns this). A failure cannot be reported from a destructor; the memory is then
        // leaked, never freed twice.
        unsafe { cust::sys::cuMemFreeHost(self.host as *mut std::ffi::c_void) };
    }
}

/// A device allocation of `bytes` (typed views are made from its address). Its reads, writes and
/// zeroings run on the device's stream ([`StreamRef`]), so that they come after every kernel queued
/// before them, and are waited for before they return.
pub struct GpuBuffer<T> {
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
    pub fn device_ptr(&self) -> u64 {
        self.buf.as_device_ptr().as_raw()
    }
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    pub fn read(&self, len: usize) -> Result<Vec<T>> {
        let mut out = vec![T::default(); len];
        // SAFETY: `out` has `len` elements, the buffer's (the caller's `len`), so `bytes` bytes.
        unsafe { self.copy_out(self.device_ptr(), out.as_mut_ptr() as *mut u8, self.bytes.min(len * size_of::<T>())) }?;
        Ok(out)
    }
    /// Copies element `i` (in bounds: checked by the caller) to the host.
    pub fn read_at(&self, i: usize) -> Result<T> {
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
        // SAFETY: the caller's contract; the stream is this context's. `T` is `Pod`: any bytes are a value.
        let r = unsafe { cust::sys::cuMemcpyDtoHAsync_v2(dst as *mut std::ffi::c_void, src, bytes, self.stream.0) };
        cu(r, "cuMemcpyDtoHAsync")?;
        self.stream.synchronize()
    }

    /// Zeroes the allocation's `bytes` (`cuMemsetD8Async` on the device's stream, after what is queued
    /// there, then waited for).
    pub fn zero(&self) -> Result<()> {
        let _bound = self.ctx.bind()?;
        if self.bytes > 0 {
            // SAFETY: our own allocation of at least `bytes` bytes, on the device's stream.
            let r = unsafe { cust::sys::cuMemsetD8Async(self.device_ptr(), 0, self.bytes, self.stream.0) };
            cu(r, "cuMemsetD8Async")?;
            self.stream.synchronize()?;
        }
        Ok(())
    }

    /// Overwrites the allocation's `bytes` from `src` (of the buffer's length), on the device's stream
    /// after what is queued there, then waited for.
    pub fn write(&self, src: &[T]) -> Result<()> {
        let _bound = self.ctx.bind()?;
        let bytes = self.bytes.min(std::mem::size_of_val(src));
        if bytes > 0 {
            // SAFETY: `src` has at least `bytes` bytes, which the copy reads before the wait below
            // returns; the destination is our own allocation; the stream is this context's.
            let r = unsafe {
                cust::sys::cuMemcpyHtoDAsync_v2(
                    self.device_ptr(),
                    src.as_ptr() as *const std::ffi::c_void,
                    bytes,
                    self.stream.0,
                )
            };
            cu(r, "cuMemcpyHtoDAsync")?;
            self.stream.synchronize()?;
        }
        Ok(())
    }
}
