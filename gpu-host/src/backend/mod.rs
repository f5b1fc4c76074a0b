//! The one seam between the device layer and where kernels run: a [`Backend`] is the CUDA backend
//! (`cuda`, with the `cuda` feature) or the emulator (`emu`), and a buffer's memory is a [`Memory`]
//! (or a [`Mapped`]) of one or the other (`memory`). Every `cfg(feature = "cuda")` of the crate is
//! in this file and `memory`: the layer above asks the backend, and never matches on what it is.
//!
//! Names its children and the crate's leaves (`attributes`, `error`, `findings`, `launch`,
//! `profile`, `ptx`); its children never name it, and nothing here names the device layer above.

#[cfg(feature = "cuda")]
pub(crate) mod cuda;
pub(crate) mod emu;
mod memory;

use crate::attributes::{PeerAttributes, SystemAttributes};
use crate::error::{Error, Result, fail};
use crate::findings::Findings;
use crate::launch::Launch;
use crate::profile::{Profile, Scale};
use crate::ptx_module::Ptx;
use emu::{Emu, HostCells};
use gpu_std::emu::{Options, SyncSite};
use gpu_std::{Dim3, Kernel, Pod};
pub(crate) use memory::{Mapped, Memory};

/// Where a device's kernels run.
pub(crate) enum Backend {
    #[cfg(feature = "cuda")]
    Cuda(cuda::Gpu),
    Emu(Emu),
}

impl Backend {
    /// The emulator with `opts`.
    pub(crate) fn emulator(opts: Options) -> Backend {
        Backend::Emu(Emu::new(opts))
    }

    /// GPU `ordinal` with the kernels of `ptx`; a [`NoGpu`](crate::NoGpu) error when there is none to
    /// open (always, without the `cuda` feature).
    pub(crate) fn gpu(ptx: &Ptx, ordinal: u32) -> Result<Backend> {
        #[cfg(feature = "cuda")]
        return Ok(Backend::Cuda(cuda::Gpu::open(ptx, ordinal)?));
        #[cfg(not(feature = "cuda"))]
        {
            let _ = (ptx, ordinal);
            Err(Error::NoGpu("this program was built without CUDA support (the `cuda` feature of gpu-host)".into()))
        }
    }

    /// How many CUDA GPUs the driver reports: 0 without a driver or without the `cuda` feature.
    pub(crate) fn gpu_count() -> Result<u32> {
        #[cfg(feature = "cuda")]
        match cuda::count() {
            Ok(n) => Ok(n),
            Err(e) if e.is_no_gpu() => Ok(0),
            Err(e) => Err(e),
        }
        #[cfg(not(feature = "cuda"))]
        Ok(0)
    }

    /// `gpu` or `emu`, for tables.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(_) => "gpu",
            Backend::Emu(_) => "emu",
        }
    }

    pub(crate) fn name(&self) -> String {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => g.name(),
            Backend::Emu(e) => format!("CPU SIMT emulator (schedule seed {})", e.options().schedule_seed),
        }
    }

    pub(crate) fn profile(&self) -> Profile {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => {
                Profile { can_time: true, scale: Scale::Full, sms: g.sm_count(), schedule_seed: None, detectors: false }
            }
            Backend::Emu(e) => Profile {
                can_time: false,
                scale: Scale::Small,
                sms: e.options().max_resident_blocks,
                schedule_seed: Some(e.options().schedule_seed),
                detectors: true,
            },
        }
    }

    pub(crate) fn emu_options(&self) -> Option<&Options> {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(_) => None,
            Backend::Emu(e) => Some(e.options()),
        }
    }

    /// Loads `ptx` next to the modules loaded (once per text); `false` on the emulator, whose kernels
    /// run from their host code.
    pub(crate) fn load_module(&self, ptx: &Ptx) -> Result<bool> {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => g.load_module(ptx),
            Backend::Emu(_) => {
                let _ = ptx;
                Ok(false)
            }
        }
    }

    pub(crate) fn take_findings(&self) -> Findings {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(_) => Findings::default(),
            Backend::Emu(e) => e.take_findings(),
        }
    }

    pub(crate) fn take_sites(&self) -> Vec<SyncSite> {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(_) => Vec::new(),
            Backend::Emu(e) => e.take_sites(),
        }
    }

    /// A copy of `data` in the device's memory, named `name` in the emulator's reports.
    pub(crate) fn upload<T: Pod>(&self, name: &str, data: &[T]) -> Result<Memory<T>> {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => Ok(Memory::Cuda(g.upload(data)?)),
            Backend::Emu(_) => Ok(Memory::Emu(HostCells::copy_of("buffer", name, data.iter().copied())?)),
        }
    }

    /// `len` zeroed words of host memory the device's kernels reach while the host uses them.
    pub(crate) fn mapped<T: Pod>(&self, name: &str, len: usize) -> Result<Mapped<T>> {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => Ok(Mapped::Cuda(g.host_alloc(name, len)?)),
            Backend::Emu(_) => {
                Ok(Mapped::Emu(HostCells::copy_of("mapped buffer", name, (0..len).map(|_| T::default()))?))
            }
        }
    }

    pub(crate) fn system_attributes(&self) -> Result<Option<SystemAttributes>> {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => g.system_attributes().map(Some),
            Backend::Emu(_) => Ok(None),
        }
    }

    /// What this GPU's kernels reaching `peer`'s memory would be; `None` unless both are GPUs.
    pub(crate) fn peer_attributes(&self, peer: &Backend) -> Result<Option<PeerAttributes>> {
        match (self, peer) {
            #[cfg(feature = "cuda")]
            (Backend::Cuda(a), Backend::Cuda(b)) => a.peer_attributes(b).map(Some),
            _ => Ok(None),
        }
    }

    /// Lets this device's kernels reach `peer`'s memory: on two GPUs `cuCtxEnablePeerAccess`, on two
    /// emulators nothing (host memory, which both reach); an error otherwise.
    pub(crate) fn enable_peer_access(&self, peer: &Backend) -> Result<()> {
        match (self, peer) {
            #[cfg(feature = "cuda")]
            (Backend::Cuda(a), Backend::Cuda(b)) => a.enable_peer_access(b),
            (Backend::Emu(_), Backend::Emu(_)) => Ok(()),
            #[allow(unreachable_patterns)]
            _ => fail!(
                Unsupported,
                "peer access needs two GPUs (or two emulators); got {} and {}",
                self.kind(),
                peer.kind()
            ),
        }
    }

    /// Most blocks of `K` resident at once with this shape: occupancy x SMs on a GPU,
    /// `max_resident_blocks` on the emulator.
    pub(crate) fn max_coresident_blocks<K: Kernel>(&self, block: Dim3, shared_bytes: usize) -> Result<u32> {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => g.max_coresident_blocks::<K>(block, shared_bytes),
            Backend::Emu(e) => {
                // The same number for every kernel.
                let _ = (block, shared_bytes, K::NAME);
                Ok(e.options().max_resident_blocks)
            }
        }
    }

    /// Launches `K` and waits for it: the kernel time in ms on a GPU, `None` on the emulator.
    ///
    /// # Safety
    /// The views in `params` point into memory this device may access and borrow their buffers for
    /// the whole call.
    pub(crate) unsafe fn launch<K: Kernel>(&self, cfg: Launch, params: K::Args<'_>) -> Result<Option<f64>> {
        match self {
            // SAFETY: the caller's contract; the launch is waited for before it returns.
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => unsafe { g.launch::<K>(cfg, params) }.map(Some),
            // SAFETY: the caller's contract; the launch completes before it returns.
            Backend::Emu(e) => unsafe { e.launch::<K>(&cfg, params) }.map(|()| None),
        }
    }

    /// [`Backend::launch`], waiting at most `limit` on a GPU: a kernel still running then ends the
    /// process (exit status 3) with a message, as it cannot be stopped and what it uses cannot be
    /// freed. The emulator bounds every launch itself (`Options::time_limit`).
    ///
    /// # Safety
    /// As [`Backend::launch`].
    pub(crate) unsafe fn launch_within<K: Kernel>(
        &self,
        cfg: Launch,
        params: K::Args<'_>,
        limit: std::time::Duration,
    ) -> Result<Option<f64>> {
        match self {
            // SAFETY: the caller's contract; a kernel still running at the limit ends the process below,
            // before anything it uses is freed.
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => match unsafe { g.launch_within::<K>(cfg, params, limit) }? {
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
            },
            Backend::Emu(e) => {
                let _ = limit;
                // SAFETY: the caller's contract.
                unsafe { e.launch::<K>(&cfg, params) }.map(|()| None)
            }
        }
    }

    /// Launches `K` with a host thread running `agent` at the same time, and waits for both: on a GPU
    /// a new OS thread; on the emulator the launch's host agent.
    ///
    /// # Safety
    /// As [`Backend::launch`].
    pub(crate) unsafe fn launch_with_host<K: Kernel>(
        &self,
        cfg: Launch,
        params: K::Args<'_>,
        agent: &mut (dyn FnMut() + Send),
    ) -> Result<()> {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => std::thread::scope(|s| {
                let host = s.spawn(agent);
                // SAFETY: the caller's contract.
                let launched = unsafe { g.launch::<K>(cfg, params) }.map(|_| ());
                let joined = host.join();
                launched?;
                joined.map_err(|p| {
                    let msg = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "panic".into());
                    Error::HostThread(format!("the host thread next to kernel `{}` panicked: {msg}", K::NAME))
                })
            }),
            // SAFETY: the caller's contract.
            Backend::Emu(e) => unsafe { e.launch_with_host::<K>(&cfg, params, agent) },
        }
    }

    /// Launches `K0` on `b0` and `K1` on `b1` at the same time and waits for both (see
    /// [`Device::launch_pair`](crate::Device::launch_pair)).
    ///
    /// # Safety
    /// As [`Backend::launch`], for each tuple on its device.
    pub(crate) unsafe fn launch_pair<K0: Kernel, K1: Kernel>(
        b0: &Backend,
        cfg0: Launch,
        p0: K0::Args<'_>,
        b1: &Backend,
        cfg1: Launch,
        p1: K1::Args<'_>,
    ) -> Result<(Option<f64>, Option<f64>)> {
        match (b0, b1) {
            #[cfg(feature = "cuda")]
            (Backend::Cuda(g0), Backend::Cuda(g1)) => {
                if g0.ordinal() == g1.ordinal() {
                    fail!(Unsupported, "launch_pair needs two GPUs; both devices are GPU {}", g0.ordinal());
                }
                // SAFETY: the caller's contract; each started kernel is finished below before this
                // returns.
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
            (Backend::Emu(e), Backend::Emu(_)) => {
                // SAFETY: the caller's contract.
                unsafe { e.launch_pair::<K0, K1>(&cfg0, p0, &cfg1, p1)? };
                Ok((None, None))
            }
            #[allow(unreachable_patterns)]
            _ => {
                fail!(Unsupported, "launch_pair needs two GPUs (or two emulators); got {} and {}", b0.kind(), b1.kind())
            }
        }
    }

    /// The time in ms of `call` between two events on the GPU's stream; `None` on the emulator, where
    /// `call` is not run.
    pub(crate) fn time_region<E: From<Error>>(&self, call: &dyn Fn() -> Result<(), E>) -> Result<Option<f64>, E> {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => g.time_region(call).map(Some),
            Backend::Emu(_) => {
                let _ = call;
                Ok(None)
            }
        }
    }

    /// Queues `K` after what was queued before, without waiting, on a GPU (returns `true`: the queue
    /// must be waited for, [`Backend::wait`]); runs it now on the emulator (`false`).
    ///
    /// # Safety
    /// The views in `params` point into memory this device may access and borrow their buffers until
    /// the queue is waited for.
    pub(crate) unsafe fn queue<K: Kernel>(&self, cfg: Launch, params: K::Args<'_>) -> Result<bool> {
        match self {
            #[cfg(feature = "cuda")]
            // SAFETY: the caller's contract; the caller waits for the queue before the buffers go.
            Backend::Cuda(g) => unsafe { g.queue::<K>(cfg, params, false) }.map(|()| true),
            // SAFETY: the caller's contract; the launch completes before it returns.
            Backend::Emu(e) => unsafe { e.launch::<K>(&cfg, params) }.map(|()| false),
        }
    }

    /// Queues the zeroing of `mem` after what was queued before on a GPU (`true`), zeroes it now on
    /// the emulator (`false`).
    ///
    /// # Safety
    /// `mem` stays alive until the queue is waited for.
    pub(crate) unsafe fn queue_zero<T: Pod>(&self, mem: &Memory<T>) -> Result<bool> {
        match (self, mem) {
            #[cfg(feature = "cuda")]
            // SAFETY: the buffer's own allocation, alive until the queue is waited for (the caller's
            // contract).
            (Backend::Cuda(g), Memory::Cuda(b)) => unsafe { g.zero_async(b.device_ptr(), b.bytes()) }.map(|()| true),
            #[cfg(feature = "cuda")]
            (Backend::Cuda(_), Memory::Emu(_)) => fail!(Unsupported, "a buffer of the emulator in a sequence of a GPU"),
            (Backend::Emu(_), _) => mem.zero().map(|()| false),
        }
    }

    /// Queues a copy of element `i` (in bounds) of `mem` after what was queued before, on a GPU
    /// (`true`: [`Backend::read_back`] has it after the wait); nothing on the emulator (`false`: read
    /// the buffer).
    ///
    /// # Safety
    /// `mem` stays alive until the queue is waited for.
    pub(crate) unsafe fn queue_read<T: Pod>(&self, mem: &Memory<T>, i: usize) -> Result<bool> {
        match (self, mem) {
            #[cfg(feature = "cuda")]
            // SAFETY: element `i` (in bounds: the caller's) of the buffer's own allocation, alive until
            // the queue is waited for (the caller's contract).
            (Backend::Cuda(g), Memory::Cuda(b)) => {
                unsafe { g.queue_read::<T>(b.device_ptr() + (i * size_of::<T>()) as u64) }.map(|()| true)
            }
            _ => {
                let _ = (mem, i);
                Ok(false)
            }
        }
    }

    /// The word [`Backend::queue_read`] queued, once the queue was waited for.
    pub(crate) fn read_back<T: Pod>(&self) -> Option<T> {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => Some(g.read_back::<T>()),
            Backend::Emu(_) => None,
        }
    }

    /// Waits for everything queued (nothing on the emulator), naming `what` if a kernel of it failed.
    pub(crate) fn wait(&self, what: &str) -> Result<()> {
        match self {
            #[cfg(feature = "cuda")]
            Backend::Cuda(g) => g.wait(what),
            Backend::Emu(_) => {
                let _ = what;
                Ok(())
            }
        }
    }
}
