//! Where kernels run: a CUDA GPU (through `cust`, with the `cuda` feature) or the CPU SIMT emulator.
//! Both take the same kernel, the same launch shape and the same argument tuple.
//!
//! A view that outlives its buffer does not compile:
//!
//! ```compile_fail,E0597
//! # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
//! gpu_std::kernel! { pub fn fill<'a>(out: gpu_std::GlobalMut<'a, u32>) { out.set(0, 1); } }
//! use gpu_host::{Device, cover};
//! let dev = Device::emulator(Default::default());
//! let view = {
//!     let buffer = dev.filled("b", 4, 0u32).unwrap();
//!     buffer.view_mut() // error: `buffer` does not live long enough
//! };
//! dev.launch::<fill>(cover(1, 1, 1, 0), (view,)).unwrap();
//! ```
//!
//! nor does a buffer that outlives its device:
//!
//! ```compile_fail,E0597
//! use gpu_host::Device;
//! let buffer = {
//!     let dev = Device::emulator(Default::default());
//!     dev.filled("b", 4, 0u32).unwrap() // error: `dev` does not live long enough
//! };
//! # drop(buffer);
//! ```
//!
//! An [`Output`](gpu_std::Output) borrows its buffer exclusively, so no other argument of the launch
//! can alias the elements its threads own:
//!
//! ```compile_fail,E0502
//! # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
//! gpu_std::kernel! {
//!     pub fn copy<'a>(src: gpu_std::Global<'a, u32>, out: gpu_std::Output<'a, u32>) {
//!         if let Some(o) = out.mine() { o.set(src.get(o.index())); }
//!     }
//! }
//! use gpu_host::{Device, cover};
//! let dev = Device::emulator(Default::default());
//! let mut b = dev.filled("b", 32, 0u32).unwrap();
//! // error: cannot borrow `b` as mutable because it is also borrowed as immutable
//! dev.launch::<copy>(cover(32, 32, 1, 0), (b.view(), b.output())).unwrap();
//! ```
//!
//! Nor can safe code take the view out of its [`Arg`](gpu_std::Arg), which would drop the borrow:
//!
//! ```compile_fail,E0133
//! use gpu_std::IntoParam;
//! let dev = gpu_host::Device::emulator(Default::default());
//! let buffer = dev.upload("input", &[1.0f32; 64]).unwrap();
//! let view = buffer.view().into_param(); // error: call to unsafe function
//! drop(buffer);
//! # let _ = view;
//! ```

use crate::buffer::Buffer;
use crate::findings::Findings;
use crate::launch::{Launch, Timing};
use crate::mapped::MappedBuffer;
use crate::profile::{Profile, Scale};
use crate::ptx::Ptx;
use anyhow::{Result, bail};
use gpu_std::emu::host_agent::HostWord;
use gpu_std::emu::{self, EmuError};
use gpu_std::{Dim3, IntoArgs, Kernel, KernelArgs, MemorySpace, Pod};
use std::cell::RefCell;

/// Which device to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The GPU if a CUDA driver and device are present, else the emulator.
    Auto,
    /// The GPU, or an error.
    Gpu,
    /// The CPU SIMT emulator.
    Emu,
}

impl std::str::FromStr for DeviceChoice {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "auto" => DeviceChoice::Auto,
            "gpu" => DeviceChoice::Gpu,
            "emu" => DeviceChoice::Emu,
            _ => bail!("unknown device `{s}` (expected auto, gpu or emu)"),
        })
    }
}

/// Why a GPU could not be opened when the reason is that there is none to open: a build without the
/// `cuda` feature, no driver, or no device. Other failures (an unreadable or rejected PTX module, a
/// failing CUDA call) are plain errors. Find it with `error.downcast_ref::<NoGpu>()`.
#[derive(Debug)]
pub struct NoGpu(pub String);

impl std::fmt::Display for NoGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoGpu {}

/// What a GPU promises about memory shared with the host (device attributes), which decides which
/// host↔GPU protocols are legal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemAttributes {
    /// `CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY`: kernels can address mapped page-locked host memory.
    pub can_map_host_memory: bool,
    /// `CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING`: host and device share one virtual address space.
    pub unified_addressing: bool,
    /// `CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED`: the link to the host supports native atomics,
    /// so the GPU's system-scope read-modify-writes are atomic with the host's on the same word.
    pub host_native_atomics: bool,
    /// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS`: kernels can access pageable (malloc'd) host memory.
    pub pageable_memory_access: bool,
    /// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES`: and through the host's page
    /// tables.
    pub pageable_uses_host_page_tables: bool,
    /// `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`: managed memory may be accessed by the host while
    /// a kernel runs.
    pub concurrent_managed_access: bool,
}

/// A device: a GPU with a loaded PTX module, or the emulator. Buffers and their views belong to the
/// device that made them.
pub struct Device {
    inner: Inner,
    /// The memory its buffers live in: host memory for the emulator, one context's for a GPU.
    space: MemorySpace,
    /// Other GPUs' memory this GPU's kernels may reach: peer access to their contexts is enabled
    /// ([`Device::enable_peer_access`]).
    peers: RefCell<Vec<MemorySpace>>,
    findings: RefCell<Findings>,
    /// The synchronisation sites emulated launches executed (with `record_sites`), kept apart from
    /// the findings: [`Device::take_findings`] does not clear them.
    sites: RefCell<Vec<emu::SyncSite>>,
}

/// What the driver reports about one GPU's kernels reaching another GPU's memory
/// ([`Device::peer_attributes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerAttributes {
    /// `cuDeviceCanAccessPeer`: peer access from this GPU to the other can be enabled.
    pub can_access_peer: bool,
    /// `CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED`: peer access over the link is supported.
    pub access_supported: bool,
    /// `CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED`: atomics on the peer's memory are native over
    /// the link, so the two GPUs' system-scope atomics on one word are atomic with each other.
    pub native_atomics: bool,
    /// `CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK`: the link's relative performance (lower is better).
    pub performance_rank: i32,
}

enum Inner {
    #[cfg(feature = "cuda")]
    Gpu(crate::gpu::Gpu),
    Emu(emu::Options),
}

impl Device {
    /// The CPU SIMT emulator with `opts` (schedule seed, race detection, bounds).
    pub fn emulator(opts: emu::Options) -> Device {
        Device {
            inner: Inner::Emu(opts),
            space: MemorySpace::HOST,
            peers: RefCell::default(),
            findings: RefCell::default(),
            sites: RefCell::default(),
        }
    }

    /// GPU 0 with the kernels of `ptx`. A [`NoGpu`] error when there is no GPU to open (a build
    /// without the `cuda` feature, no driver, no device); any other error (a module that cannot be
    /// read or that the driver rejects) names the module.
    pub fn gpu(ptx: &Ptx) -> Result<Device> {
        Device::open_gpu(ptx, 0)
    }

    /// GPU `ordinal` (as `cuDeviceGet` numbers them) with the kernels of `ptx`. A [`NoGpu`] error when
    /// there is no such GPU; otherwise as [`Device::gpu`]. Every driver call of the device runs with its
    /// own context current, so several GPUs may be open in one process, each with its own buffers.
    pub fn gpu_ordinal(ptx: &Ptx, ordinal: u32) -> Result<Device> {
        Device::open_gpu(ptx, ordinal)
    }

    /// How many CUDA GPUs the driver reports: 0 without a driver or without the `cuda` feature.
    pub fn gpu_count() -> Result<u32> {
        #[cfg(feature = "cuda")]
        match crate::gpu::count() {
            Ok(n) => Ok(n),
            Err(e) if e.downcast_ref::<NoGpu>().is_some() => Ok(0),
            Err(e) => Err(e),
        }
        #[cfg(not(feature = "cuda"))]
        Ok(0)
    }

    /// Opens the requested device. Returns the device and, when [`DeviceChoice::Auto`] falls back to the
    /// emulator, a one-line note saying why. Only a missing GPU falls back: with a GPU present, a
    /// missing, stale or rejected PTX module is an error, never a silent switch to the emulator.
    pub fn open(choice: DeviceChoice, ptx: &Ptx, emu_opts: emu::Options) -> Result<(Device, Option<String>)> {
        match choice {
            DeviceChoice::Emu => Ok((Device::emulator(emu_opts), None)),
            DeviceChoice::Gpu => Ok((Device::open_gpu(ptx, 0)?, None)),
            DeviceChoice::Auto => match Device::open_gpu(ptx, 0) {
                Ok(d) => Ok((d, None)),
                Err(e) if e.downcast_ref::<NoGpu>().is_some() => Ok((
                    Device::emulator(emu_opts),
                    Some(format!("no CUDA GPU available ({e:#}); running on the CPU SIMT emulator")),
                )),
                Err(e) => Err(e),
            },
        }
    }

    #[cfg(feature = "cuda")]
    fn open_gpu(ptx: &Ptx, ordinal: u32) -> Result<Device> {
        Ok(Device {
            inner: Inner::Gpu(crate::gpu::Gpu::open(ptx, ordinal)?),
            space: MemorySpace::unique(),
            peers: RefCell::default(),
            findings: RefCell::default(),
            sites: RefCell::default(),
        })
    }
    #[cfg(not(feature = "cuda"))]
    fn open_gpu(_ptx: &Ptx, _ordinal: u32) -> Result<Device> {
        Err(NoGpu("this program was built without CUDA support (the `cuda` feature of gpu-host)".into()).into())
    }

    /// Makes the kernels of `ptx` launchable on this device too, next to those of the module it opened
    /// with (a library's module, say); a module of the same text is loaded once. A launch runs the entry
    /// of the first loaded module whose name, parameters and signature are the kernel's, so two
    /// modules may hold kernels of the same name from different crates. Returns whether the module
    /// was loaded by this call. On the emulator it does nothing (every kernel runs from its host
    /// code) and returns `false`.
    pub fn load_module(&self, ptx: &Ptx) -> Result<bool> {
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => g.load_module(ptx),
            Inner::Emu(_) => {
                let _ = ptx;
                Ok(false)
            }
        }
    }

    /// What the device can do and how much work suits it: ask it what a choice depends on (whether
    /// to time, how much work to give, whether the detectors run, which schedule seed runs).
    pub fn profile(&self) -> Profile {
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => Profile {
                can_time: true,
                scale: Scale::Full,
                sms: g.sm_count(),
                schedule_seed: None,
                detectors: false,
            },
            Inner::Emu(o) => Profile {
                can_time: false,
                scale: Scale::Small,
                sms: o.max_resident_blocks,
                schedule_seed: Some(o.schedule_seed),
                detectors: true,
            },
        }
    }

    /// Whether this is a GPU (for the crate's own dispatch; callers ask [`Device::profile`]).
    pub(crate) fn is_gpu(&self) -> bool {
        !matches!(self.inner, Inner::Emu(_))
    }

    /// `gpu` or `emu`, for tables.
    pub fn kind(&self) -> &'static str {
        if self.is_gpu() { "gpu" } else { "emu" }
    }

    /// The device's name: the GPU's with its architecture and SM count, or the emulator's with its
    /// schedule seed.
    pub fn name(&self) -> String {
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => g.name(),
            Inner::Emu(o) => format!("CPU SIMT emulator (schedule seed {})", o.schedule_seed),
        }
    }

    /// The GPU's number of streaming multiprocessors; on the emulator, the blocks it runs at once
    /// (`max_resident_blocks`).
    pub fn sm_count(&self) -> Result<u32> {
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => Ok(g.sm_count()),
            Inner::Emu(o) => Ok(o.max_resident_blocks),
        }
    }

    /// Grid cap for this device: `kernel_cap` on a GPU; at most 32 blocks on the emulator, whose cost
    /// grows with the number of threads (grid-stride loops cover the rest).
    pub fn grid_cap(&self, kernel_cap: u32) -> u32 {
        if self.is_gpu() { kernel_cap } else { kernel_cap.min(32) }
    }

    /// The emulator's options (`None` on a GPU).
    pub fn emu_options(&self) -> Option<&emu::Options> {
        match &self.inner {
            Inner::Emu(o) => Some(o),
            #[cfg(feature = "cuda")]
            Inner::Gpu(_) => None,
        }
    }

    /// What the driver reports about this GPU's kernels reaching `peer`'s memory
    /// (`cuDeviceCanAccessPeer`, `cuDeviceGetP2PAttribute`); `None` when either is the emulator. An
    /// error when both are the same GPU.
    pub fn peer_attributes(&self, peer: &Device) -> Result<Option<PeerAttributes>> {
        match (&self.inner, &peer.inner) {
            #[cfg(feature = "cuda")]
            (Inner::Gpu(a), Inner::Gpu(b)) => {
                if a.ordinal() == b.ordinal() {
                    bail!("GPU {} and GPU {} are the same device: peer access needs two", a.ordinal(), b.ordinal());
                }
                let p = a.peer(b)?;
                Ok(Some(PeerAttributes {
                    can_access_peer: p.can_access_peer,
                    access_supported: p.access_supported,
                    native_atomics: p.native_atomics,
                    performance_rank: p.performance_rank,
                }))
            }
            _ => Ok(None),
        }
    }

    /// Lets this GPU's kernels access `peer`'s memory (`cuCtxEnablePeerAccess` from this GPU's context
    /// to `peer`'s): from then on a launch on this device accepts views of `peer`'s buffers (and of its
    /// mapped memory), which it refuses before. One direction only: call it on each device for both.
    /// An error, with the driver's answer, when the two are not GPUs that can reach each other (the same
    /// GPU, or `cuDeviceCanAccessPeer` / `CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED` is 0). On two
    /// emulators it does nothing: their memory is host memory, which both reach.
    pub fn enable_peer_access(&self, peer: &Device) -> Result<()> {
        match (&self.inner, &peer.inner) {
            #[cfg(feature = "cuda")]
            (Inner::Gpu(a), Inner::Gpu(b)) => {
                let p = self.peer_attributes(peer)?.expect("two GPUs");
                if !(p.can_access_peer && p.access_supported) {
                    bail!(
                        "GPU {} cannot access the memory of GPU {} (cuDeviceCanAccessPeer = {}, \
                         CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED = {})",
                        a.ordinal(),
                        b.ordinal(),
                        p.can_access_peer as u8,
                        p.access_supported as u8
                    );
                }
                a.enable_peer_access(b)?;
                let mut peers = self.peers.borrow_mut();
                if !peers.contains(&peer.space) {
                    peers.push(peer.space);
                }
                Ok(())
            }
            (Inner::Emu(_), Inner::Emu(_)) => Ok(()),
            #[allow(unreachable_patterns)]
            _ => bail!("peer access needs two GPUs (or two emulators); got {} and {}", self.kind(), peer.kind()),
        }
    }

    /// Launches `K0` on `d0` and `K1` on `d1` at the same time and waits for both; returns each
    /// kernel's time in ms on GPUs (device events), `None` on the emulator. On GPUs each launch is
    /// queued on its device's stream without waiting, then both are waited for (the second is waited
    /// for even when the first failed while running, and the first even when the second could not be
    /// queued), so the call returns only when neither kernel runs. Each argument tuple is checked as
    /// [`Device::launch`] checks it: views of the device's own memory, or of a peer's it enabled
    /// access to ([`Device::enable_peer_access`]); and the two against each other: an
    /// [`Output`](gpu_std::Output) of one may overlap no view of the other
    /// ([`gpu_std::check_concurrent_views`]). Kernels that wait for each other must bound their
    /// waits: the two grids start at different times, and one may fail to start.
    ///
    /// On two emulators it is one emulated launch of both grids under one scheduler
    /// (`gpu_std::emu::launch_two_devices`): device scope covers one device's threads only, and what
    /// the detectors find goes to `d0`'s findings.
    pub fn launch_pair<'a, 'b, K0: Kernel, K1: Kernel>(
        d0: &Device,
        cfg0: Launch,
        args0: impl IntoArgs<Params = K0::Args<'a>>,
        d1: &Device,
        cfg1: Launch,
        args1: impl IntoArgs<Params = K1::Args<'b>>,
    ) -> Result<(Option<f64>, Option<f64>)> {
        let p0 = d0.checked_args::<K0>(&cfg0, args0)?;
        let p1 = d1.checked_args::<K1>(&cfg1, args1)?;
        // `Arg` is `Copy`: one `output()` can be given to both tuples, which each launch's own check
        // cannot see.
        gpu_std::check_concurrent_views(K0::NAME, K0::PARAMS, &p0.views(), K1::NAME, K1::PARAMS, &p1.views())
            .map_err(anyhow::Error::msg)?;
        match (&d0.inner, &d1.inner) {
            #[cfg(feature = "cuda")]
            (Inner::Gpu(g0), Inner::Gpu(g1)) => {
                if g0.ordinal() == g1.ordinal() {
                    bail!("launch_pair needs two GPUs; both devices are GPU {}", g0.ordinal());
                }
                // SAFETY: the views in `p0` and `p1` point into memory each device may access (checked
                // above: its own, or a peer's with access enabled) and borrow their buffers until this
                // call returns; each started kernel is finished below before it does.
                unsafe { g0.start::<K0>(cfg0, p0)? };
                // SAFETY: as above.
                let started1 = unsafe { g1.start::<K1>(cfg1, p1) };
                let t0 = g0.finish(K0::NAME);
                let t1 = match started1 {
                    Ok(()) => g1.finish(K1::NAME),
                    Err(e) => Err(e),
                };
                Ok((Some(t0?), Some(t1?)))
            }
            (Inner::Emu(opts), Inner::Emu(_)) => {
                // SAFETY: as in `launch`, for both tuples.
                let r = unsafe { emu::launch_params_two_devices::<K0, K1>(&cfg0, p0, &cfg1, p1, opts) };
                d0.absorb(r)?;
                Ok((None, None))
            }
            #[allow(unreachable_patterns)]
            _ => bail!("launch_pair needs two GPUs (or two emulators); got {} and {}", d0.kind(), d1.kind()),
        }
    }

    /// What the GPU promises about memory shared with the host; `None` on the emulator (which models
    /// the PTX memory model: mapped memory, and system-scope atomics atomic with the host agent's).
    pub fn system_attributes(&self) -> Result<Option<SystemAttributes>> {
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => {
                use cust::sys::CUdevice_attribute as A;
                let on = |a: A| g.attribute(a).map(|v| v != 0);
                Ok(Some(SystemAttributes {
                    can_map_host_memory: on(A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY)?,
                    unified_addressing: on(A::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING)?,
                    host_native_atomics: on(A::CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED)?,
                    pageable_memory_access: on(A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS)?,
                    pageable_uses_host_page_tables: on(
                        A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
                    )?,
                    concurrent_managed_access: on(A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)?,
                }))
            }
            Inner::Emu(_) => Ok(None),
        }
    }

    /// `len` zeroed words of page-locked host memory mapped into this device's address space, for a
    /// kernel and a host thread to share while the kernel runs (see [`MappedBuffer`]). `name` appears in
    /// the emulator's reports. On a GPU that cannot map host memory, an error; and an error naming the
    /// buffer when `len` words cannot be allocated (their size in bytes overflows, or there is not the
    /// memory), never a smaller allocation than [`MappedBuffer::len`] says.
    pub fn mapped<T: HostWord + Pod>(&self, name: &str, len: usize) -> Result<MappedBuffer<'_, T>> {
        crate::buffer::byte_len::<T>("mapped buffer", name, len)?;
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => {
                if !self.system_attributes()?.is_some_and(|a| a.can_map_host_memory) {
                    bail!("{} cannot map host memory (CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY is 0)", g.name());
                }
                Ok(MappedBuffer::new(len, self.space, crate::mapped::MapInner::Gpu(g.host_alloc(name, len)?)))
            }
            Inner::Emu(_) => MappedBuffer::host_memory(name, len),
        }
    }

    /// Launches `K` with a host thread running `agent` at the same time, and waits for both. On a GPU,
    /// `agent` runs on a new OS thread started just before the launch, and the call returns once the
    /// kernel has finished and the thread has returned. On the emulator it is the launch's host agent
    /// (see `gpu_std::emu::launch_with_host`): scheduled with the kernel's threads, its accesses through
    /// [`MappedBuffer::host`] checked by the race detector as system-scope operations.
    ///
    /// Every wait on either side must be bounded: a kernel waiting for a host that gave up, or a host
    /// waiting for a kernel that failed to launch, must give up too.
    pub fn launch_with_host<'a, K: Kernel>(
        &self,
        cfg: Launch,
        args: impl IntoArgs<Params = K::Args<'a>>,
        agent: &mut (dyn FnMut() + Send),
    ) -> Result<()> {
        let params = self.checked_args::<K>(&cfg, args)?;
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => std::thread::scope(|s| {
                let host = s.spawn(agent);
                // SAFETY: as in `launch`.
                let launched = unsafe { g.launch::<K>(cfg, params) }.map(|_| ());
                let joined = host.join();
                launched?;
                joined.map_err(|p| {
                    let msg = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "panic".into());
                    anyhow::anyhow!("the host thread next to kernel `{}` panicked: {msg}", K::NAME)
                })
            }),
            Inner::Emu(opts) => {
                // SAFETY: as in `launch`.
                let r = unsafe { emu::launch_params_with_host::<K>(&cfg, opts, params, agent) };
                self.absorb(r)
            }
        }
    }

    /// Takes what the emulator's detectors found since the last call.
    pub fn take_findings(&self) -> Findings {
        std::mem::take(&mut self.findings.borrow_mut())
    }

    /// The synchronisation sites (barriers, fences, atomics, volatile, acquire and release accesses)
    /// the emulated launches executed since the last call, in source order with their counts summed,
    /// when the emulator's options set `record_sites`; always empty on a GPU. [`Device::take_findings`]
    /// does not clear them. [`crate::mutation_test`] uses them.
    pub fn take_sites(&self) -> Vec<emu::SyncSite> {
        std::mem::take(&mut self.sites.borrow_mut())
    }

    /// A buffer holding a copy of `data`. `name` appears in race reports.
    pub fn upload<T: Pod>(&self, name: &str, data: &[T]) -> Result<Buffer<'_, T>> {
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => Ok(Buffer::new(data.len(), self.space, crate::buffer::BufInner::Gpu(g.upload(data)?))),
            Inner::Emu(_) => Buffer::host(name, data),
        }
    }

    /// A buffer of `n` copies of `v`. An error, naming the buffer, when `n` elements cannot be
    /// allocated (their size in bytes overflows, or the host has not the memory for them).
    pub fn filled<T: Pod>(&self, name: &str, n: usize, v: T) -> Result<Buffer<'_, T>> {
        crate::buffer::byte_len::<T>("buffer", name, n)?;
        let mut data = Vec::new();
        data.try_reserve_exact(n).map_err(|e| anyhow::anyhow!("buffer `{name}`: cannot allocate {n} elements: {e}"))?;
        data.resize(n, v);
        self.upload(name, &data)
    }

    /// The checks every launch makes before it starts: the arguments live in this device's memory,
    /// the launch shape fits them (an `Output` needs a 1-D launch and no overlapping view), and the
    /// block is within the kernel's launch bounds.
    fn checked_args<'a, K: Kernel>(
        &self,
        cfg: &Launch,
        args: impl IntoArgs<Params = K::Args<'a>>,
    ) -> Result<K::Args<'a>> {
        args.check_space_with_peers(K::NAME, K::PARAMS, self.space, &self.peers.borrow())
            .map_err(anyhow::Error::msg)?;
        // SAFETY: every launch of this device is synchronous: it completes before the launcher that
        // called this returns, while `args`, and with it every borrow of a buffer, is still alive.
        let params = unsafe { args.into_args() };
        params.check_launch(K::NAME, K::PARAMS, cfg.grid, cfg.block).map_err(anyhow::Error::msg)?;
        gpu_std::launch_bounds::check_block::<K>(cfg.block).map_err(anyhow::Error::msg)?;
        Ok(params)
    }

    /// Launches `K` and waits for it; every CUDA call and the launch itself are checked. On the
    /// emulator, races are collected (see [`Device::take_findings`]) and deadlocks become errors.
    pub fn launch<'a, K: Kernel>(&self, cfg: Launch, args: impl IntoArgs<Params = K::Args<'a>>) -> Result<()> {
        let params = self.checked_args::<K>(&cfg, args)?;
        match &self.inner {
            #[cfg(feature = "cuda")]
            // SAFETY: the views in `params` point into memory this GPU may access (checked above) and
            // borrow their buffers for the whole call; the launch is waited for before it returns.
            Inner::Gpu(g) => unsafe { g.launch::<K>(cfg, params) }.map(|_| ()),
            Inner::Emu(opts) => {
                // SAFETY: the views in `params` come from `Arg`s in host memory (checked above) whose
                // buffers outlive this call; the launch completes before it returns.
                let r = unsafe { emu::launch_params::<K>(&cfg, opts, params) };
                self.absorb(r)
            }
        }
    }

    /// Runs `f`, whose [`Sequence::launch`]es and [`Sequence::zero`]s are queued one after another on
    /// the device's stream without waiting for each, then waits once for all of them: a call of
    /// several launches (a library's) pays one wait instead of one per launch. Everything they use
    /// was made before the call (the arguments borrow for `'s`, which outlives `f`), so nothing a
    /// queued kernel uses can be freed before the wait. The wait happens also when `f` fails; the
    /// first error is returned. On the emulator each launch runs as [`Device::launch`] runs it.
    ///
    /// ```
    /// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
    /// gpu_std::kernel! { pub fn bump<'a>(x: gpu_std::GlobalMut<'a, u32>) { x.atomic(0).add(1); } }
    /// use gpu_host::{Device, Launch};
    /// let dev = Device::emulator(Default::default());
    /// let counter = dev.filled("counter", 1, 7u32)?;
    /// dev.sequence(|s| {
    ///     s.zero(&counter)?;
    ///     s.launch::<bump>(Launch::linear(1, 32, 0), (counter.view_mut(),))?;
    ///     s.launch::<bump>(Launch::linear(2, 32, 0), (counter.view_mut(),))
    /// })?;
    /// assert_eq!(counter.read()?, [96]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    ///
    /// A buffer made inside the closure cannot be given to a queued launch: it would be freed before
    /// the wait.
    ///
    /// ```compile_fail,E0597
    /// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
    /// gpu_std::kernel! { pub fn bump<'a>(x: gpu_std::GlobalMut<'a, u32>) { x.atomic(0).add(1); } }
    /// use gpu_host::{Device, Launch};
    /// let dev = Device::emulator(Default::default());
    /// dev.sequence(|s| {
    ///     let counter = dev.filled("counter", 1, 0u32)?;
    ///     s.launch::<bump>(Launch::linear(1, 32, 0), (counter.view_mut(),)) // error: `counter` does not live long enough
    /// })?;
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    pub fn sequence<'s, R>(&'s self, f: impl FnOnce(&Sequence<'s>) -> Result<R>) -> Result<R> {
        self.run_sequence(f, |_| Ok(())).map(|(r, ())| r)
    }

    /// [`Device::sequence`], then element `i` of `buf` as the sequence left it: on a GPU copied back on
    /// the stream after the last launch, so that the one wait covers it (a library's error word, read
    /// without a second round trip). `i` past the end is an error, before anything is queued.
    ///
    /// ```
    /// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
    /// gpu_std::kernel! { pub fn bump<'a>(x: gpu_std::GlobalMut<'a, u32>) { x.atomic(1).add(1); } }
    /// use gpu_host::{Device, Launch};
    /// let dev = Device::emulator(Default::default());
    /// let counter = dev.filled("counter", 2, 7u32)?;
    /// let ((), after) = dev.sequence_then_read(&counter, 1, |s| {
    ///     s.zero(&counter)?;
    ///     s.launch::<bump>(Launch::linear(2, 32, 0), (counter.view_mut(),))
    /// })?;
    /// assert_eq!(after, 64);
    /// assert!(dev.sequence_then_read(&counter, 2, |_| Ok(())).is_err());
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    pub fn sequence_then_read<'s, R, T: Pod>(
        &'s self,
        buf: &'s Buffer<'_, T>,
        i: usize,
        f: impl FnOnce(&Sequence<'s>) -> Result<R>,
    ) -> Result<(R, T)> {
        if i >= buf.len() {
            bail!("read of element {i} of a buffer of {}", buf.len());
        }
        let (r, read_on_stream) = self.run_sequence(f, |seq| {
            #[cfg(feature = "cuda")]
            if let (Inner::Gpu(g), Some((ptr, _))) = (&self.inner, buf.gpu_region()) {
                // SAFETY: element `i` (in bounds, checked above) of the buffer's own allocation, borrowed
                // for `'s` (it outlives the wait below).
                unsafe { g.queue_read::<T>(ptr + (i * size_of::<T>()) as u64)? };
                seq.queued.set(true);
                return Ok(true);
            }
            let _ = seq;
            Ok(false)
        })?;
        let value = match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) if read_on_stream => g.read_back::<T>(),
            _ => {
                let _ = read_on_stream;
                buf.read_at(i)?
            }
        };
        Ok((r, value))
    }

    /// Runs `f`'s sequence, then `after` (when `f` succeeded), then waits once if anything was queued.
    /// A panic in `f` or `after` waits too, as the [`Sequence`] drops: nothing a queued kernel uses is
    /// freed before it ends.
    fn run_sequence<'s, R, A>(
        &'s self,
        f: impl FnOnce(&Sequence<'s>) -> Result<R>,
        after: impl FnOnce(&Sequence<'s>) -> Result<A>,
    ) -> Result<(R, A)> {
        let seq = Sequence { dev: self, _invariant: std::marker::PhantomData, queued: std::cell::Cell::new(false) };
        let r = f(&seq).and_then(|r| after(&seq).map(|a| (r, a)));
        let waited = seq.wait();
        let r = r?;
        waited?;
        Ok(r)
    }

    /// Keeps what an emulated launch found; a deadlock or livelock is also an error.
    fn absorb(&self, r: std::result::Result<emu::Outcome, EmuError>) -> Result<()> {
        match r {
            Ok(out) => {
                crate::findings::merge_sites(&mut self.sites.borrow_mut(), &out.sites);
                self.findings.borrow_mut().absorb(out);
                Ok(())
            }
            Err(e) => {
                if matches!(e, EmuError::Deadlock(_) | EmuError::Livelock(_)) {
                    self.findings.borrow_mut().deadlocks.push(e.to_string());
                }
                Err(anyhow::Error::new(e))
            }
        }
    }

    /// Launches `K` and waits for it at most `limit`, for kernels that may hang (a divergent barrier, a
    /// spin on a flag nobody sets); returns the kernel time in ms on a GPU, `None` on the emulator
    /// (which bounds every launch itself, with `Options::time_limit`, and reports like [`launch`](Self::launch)).
    ///
    /// A GPU kernel still running after `limit` cannot be stopped, and the buffers it uses cannot be
    /// freed or reused under it: the process then ends (exit status 3) with a message on stderr.
    pub fn launch_within<'a, K: Kernel>(
        &self,
        cfg: Launch,
        args: impl IntoArgs<Params = K::Args<'a>>,
        limit: std::time::Duration,
    ) -> Result<Option<f64>> {
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => {
                let params = self.checked_args::<K>(&cfg, args)?;
                // SAFETY: as in `launch`; a kernel still running at the limit ends the process below,
                // before anything it uses is freed.
                match unsafe { g.launch_within::<K>(cfg, params, limit) }? {
                    Some(ms) => Ok(Some(ms)),
                    None => {
                        eprintln!(
                            "kernel `{}` was still running after {:.1} s: it hangs, and a running kernel cannot be \
                             stopped; ending the process",
                            K::NAME,
                            limit.as_secs_f64()
                        );
                        std::process::exit(3)
                    }
                }
            }
            Inner::Emu(_) => {
                let _ = limit;
                self.launch::<K>(cfg, args).map(|()| None)
            }
        }
    }

    /// Times `reps` launches of `K` with device events after 3 warm-up launches; `reset` runs on the
    /// host before each launch (outside the timed region). GPU only: `None` on the emulator.
    pub fn time<'a, K: Kernel>(
        &self,
        cfg: Launch,
        args: impl IntoArgs<Params = K::Args<'a>>,
        reps: usize,
        reset: &dyn Fn() -> Result<()>,
    ) -> Result<Option<Timing>> {
        let params = self.checked_args::<K>(&cfg, args)?;
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => {
                let mut times = Vec::with_capacity(reps);
                for k in 0..reps.max(1) + 3 {
                    reset()?;
                    // SAFETY: as in `launch`.
                    let ms = unsafe { g.launch::<K>(cfg, params)? };
                    if k >= 3 {
                        times.push(ms);
                    }
                }
                times.sort_by(|a, b| a.total_cmp(b));
                Ok(Some(Timing { median_ms: times[times.len() / 2], reps: times.len() }))
            }
            Inner::Emu(_) => {
                let _ = (cfg, params, reps, reset);
                Ok(None)
            }
        }
    }

    /// Times `reps` runs of `call` (which launches on this device: a library's call, several launches)
    /// after 3 warm-up runs, with device events on the device's stream around each run; `reset` runs on
    /// the host before each (outside the timed region). A run's time is what a caller waits for on the
    /// GPU: from the first launch's enqueueing to the last kernel's end, the host's work between
    /// launches included. GPU only: `None` on the emulator (where `call` is not run).
    pub fn time_calls(
        &self,
        reps: usize,
        reset: &dyn Fn() -> Result<()>,
        call: &dyn Fn() -> Result<()>,
    ) -> Result<Option<Timing>> {
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => {
                let mut times = Vec::with_capacity(reps);
                for k in 0..reps.max(1) + 3 {
                    reset()?;
                    let ms = g.time_region(call)?;
                    if k >= 3 {
                        times.push(ms);
                    }
                }
                times.sort_by(|a, b| a.total_cmp(b));
                Ok(Some(Timing { median_ms: times[times.len() / 2], reps: times.len() }))
            }
            Inner::Emu(_) => {
                let _ = (reps, reset, call);
                Ok(None)
            }
        }
    }

    /// Most blocks of `K` that can be resident at once with this launch shape (the cap of a cooperative
    /// launch): occupancy x SMs on a GPU, `max_resident_blocks` on the emulator.
    pub fn max_coresident_blocks<K: Kernel>(&self, block: Dim3, shared_bytes: usize) -> Result<u32> {
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => g.max_coresident_blocks::<K>(block, shared_bytes),
            Inner::Emu(o) => {
                let _ = (block, shared_bytes);
                Ok(o.max_resident_blocks)
            }
        }
    }
}

/// Launches and zeroings queued on one device and waited for together ([`Device::sequence`]); the
/// views they take borrow for `'s`.
pub struct Sequence<'s> {
    dev: &'s Device,
    /// Invariant in `'s`: a covariant `Sequence<'s>` could be taken as a `Sequence` of a shorter
    /// lifetime inside the closure, and then accept views of buffers made (and freed) there, before
    /// the wait.
    _invariant: std::marker::PhantomData<fn(&'s ()) -> &'s ()>,
    /// Whether anything was queued on a GPU (and so must be waited for).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    queued: std::cell::Cell<bool>,
}

impl Sequence<'_> {
    /// Waits for everything the sequence queued on a GPU (nothing to wait for on the emulator, or when
    /// nothing was queued).
    fn wait(&self) -> Result<()> {
        match &self.dev.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) if self.queued.get() => {
                self.queued.set(false);
                g.wait("a sequence of launches")
            }
            _ => Ok(()),
        }
    }
}

/// The wait on every path out of [`Device::sequence`]: when the closure panics after queuing launches,
/// the unwinding drops the sequence here, before the buffers its kernels use (which outlive it) can be
/// freed. A wait that fails then (a kernel faulted) cannot be returned, and the kernels' state is not
/// known: the process ends rather than free memory a kernel may still use.
impl Drop for Sequence<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.wait() {
            eprintln!(
                "error: a sequence of launches unwound while its kernels ran, and waiting for them failed: {e:#}"
            );
            std::process::abort();
        }
    }
}

impl<'s> Sequence<'s> {
    /// Queues `K` after what this sequence queued before (on the emulator: runs it now), with the
    /// checks of [`Device::launch`].
    pub fn launch<K: Kernel>(&self, cfg: Launch, args: impl IntoArgs<Params = K::Args<'s>>) -> Result<()> {
        let dev = self.dev;
        match &dev.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => {
                let params = dev.checked_args::<K>(&cfg, args)?;
                // SAFETY: the views in `params` point into memory this GPU may access (checked above)
                // and borrow their buffers for `'s`, which outlives the closure of `Device::sequence`;
                // that call waits for the stream before it returns.
                unsafe { g.queue::<K>(cfg, params, false)? };
                self.queued.set(true);
                Ok(())
            }
            Inner::Emu(_) => dev.launch::<K>(cfg, args),
        }
    }

    /// Queues the zeroing of every byte of `buf` after what this sequence queued before (on the
    /// emulator: zeroes it now).
    pub fn zero<T: Pod>(&self, buf: &'s Buffer<'_, T>) -> Result<()> {
        match &self.dev.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => match buf.gpu_region() {
                Some((ptr, bytes)) => {
                    // SAFETY: the buffer's own allocation, borrowed for `'s` (it outlives the wait of
                    // `Device::sequence`).
                    unsafe { g.zero_async(ptr, bytes)? };
                    self.queued.set(true);
                    Ok(())
                }
                None => bail!("a buffer of the emulator in a sequence of a GPU"),
            },
            Inner::Emu(_) => buf.zero(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_missing_gpu_is_no_gpu() {
        // SAFETY: the file does not exist: nothing is loaded.
        let missing = unsafe { Ptx::file("/nonexistent/user_kernels.ptx") };
        let Err(err) = Device::open(DeviceChoice::Gpu, &missing, Default::default()) else {
            panic!("a module that does not exist cannot be loaded");
        };
        match err.downcast_ref::<NoGpu>() {
            // Without the `cuda` feature, or without a device, there is no GPU to open.
            Some(_) => {}
            // With one, the module is the problem, and the error names it.
            None if cfg!(feature = "cuda") => {
                assert!(format!("{err:#}").contains("/nonexistent/user_kernels.ptx"), "{err:#}");
            }
            None => panic!("a build without the `cuda` feature has no GPU to open: {err:#}"),
        }
        let (dev, note) = Device::open(DeviceChoice::Auto, &missing, Default::default()).expect("Auto falls back");
        assert!(dev.profile().detectors);
        assert!(note.is_some_and(|n| n.contains("running on the CPU SIMT emulator")));
    }

    #[test]
    fn device_choices_parse() {
        assert_eq!("gpu".parse::<DeviceChoice>().unwrap(), DeviceChoice::Gpu);
        assert!("cpu".parse::<DeviceChoice>().unwrap_err().to_string().contains("expected auto, gpu or emu"));
    }
}
