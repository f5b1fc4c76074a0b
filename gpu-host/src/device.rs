//! The [`Device`]: where kernels run, a CUDA GPU (through `cust`, with the `cuda` feature) or the CPU
//! SIMT emulator. Both take the same kernel, the same launch shape and the same argument tuple. This
//! file owns opening a device, what it says of itself ([`Device::profile`], its name), the checks
//! every launch makes, and the launches that wait for one kernel ([`Device::launch`],
//! [`Device::launch_within`], [`Device::time`], [`Device::time_calls`]).
//!
//! Imports the backend seam (`backend`) and the crate's leaves; never the files that extend a device
//! (`buffer`, `mapped`, `peer`, `sequence`), which import it.
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

use crate::backend::Backend;
use crate::choice::DeviceChoice;
use crate::error::{Error, Result};
use crate::findings::Findings;
use crate::launch::{Launch, Timing};
use crate::profile::{Profile, Scale};
use crate::ptx_module::Ptx;
use gpu_std::emu;
use gpu_std::{Dim3, IntoArgs, Kernel, KernelArgs, MemorySpace};
use std::cell::RefCell;

/// A device: a GPU with a loaded PTX module, or the emulator. Buffers and their views belong to the
/// device that made them.
pub struct Device {
    pub(crate) backend: Backend,
    /// The memory its buffers live in: host memory for the emulator, one context's for a GPU.
    pub(crate) space: MemorySpace,
    /// Other GPUs' memory this GPU's kernels may reach: peer access to their contexts is enabled
    /// ([`Device::enable_peer_access`]).
    pub(crate) peers: RefCell<Vec<MemorySpace>>,
}

impl Device {
    /// The CPU SIMT emulator with `opts` (schedule seed, race detection, bounds).
    pub fn emulator(opts: emu::Options) -> Device {
        Device { backend: Backend::emulator(opts), space: MemorySpace::HOST, peers: RefCell::default() }
    }

    /// GPU 0 with the kernels of `ptx`. An [`Error::NoGpu`] when there is no GPU to open (a build
    /// without the `cuda` feature, no driver, no device); any other error (a module that cannot be
    /// read or that the driver rejects) names the module.
    pub fn gpu(ptx: &Ptx) -> Result<Device> {
        Device::open_gpu(ptx, 0)
    }

    /// GPU `ordinal` (as `cuDeviceGet` numbers them) with the kernels of `ptx`. An [`Error::NoGpu`] when
    /// there is no such GPU; otherwise as [`Device::gpu`]. Every driver call of the device runs with its
    /// own context current, so several GPUs may be open in one process, each with its own buffers.
    pub fn gpu_ordinal(ptx: &Ptx, ordinal: u32) -> Result<Device> {
        Device::open_gpu(ptx, ordinal)
    }

    /// How many CUDA GPUs the driver reports: 0 without a driver or without the `cuda` feature.
    pub fn gpu_count() -> Result<u32> {
        Backend::gpu_count()
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
                Err(e) if e.is_no_gpu() => Ok((
                    Device::emulator(emu_opts),
                    Some(format!("no CUDA GPU available ({e:#}); running on the CPU SIMT emulator")),
                )),
                Err(e) => Err(e),
            },
        }
    }

    fn open_gpu(ptx: &Ptx, ordinal: u32) -> Result<Device> {
        Ok(Device { backend: Backend::gpu(ptx, ordinal)?, space: MemorySpace::unique(), peers: RefCell::default() })
    }

    /// Makes the kernels of `ptx` launchable on this device too, next to those of the module it opened
    /// with (a library's module, say); a module of the same text is loaded once. A launch runs the entry
    /// of the first loaded module whose name, parameters and signature are the kernel's, so two
    /// modules may hold kernels of the same name from different crates. Returns whether the module
    /// was loaded by this call. On the emulator it does nothing (every kernel runs from its host
    /// code) and returns `false`.
    pub fn load_module(&self, ptx: &Ptx) -> Result<bool> {
        self.backend.load_module(ptx)
    }

    /// What the device can do and how much work suits it: ask it what a choice depends on (whether
    /// to time, how much work to give, whether the detectors run, which schedule seed runs).
    pub fn profile(&self) -> Profile {
        self.backend.profile()
    }

    /// `gpu` or `emu`, for tables.
    pub fn kind(&self) -> &'static str {
        self.backend.kind()
    }

    /// The device's name: the GPU's with its architecture and SM count, or the emulator's with its
    /// schedule seed.
    pub fn name(&self) -> String {
        self.backend.name()
    }

    /// The GPU's number of streaming multiprocessors; on the emulator, the blocks it runs at once
    /// (`max_resident_blocks`).
    pub fn sm_count(&self) -> Result<u32> {
        Ok(self.profile().sms)
    }

    /// Grid cap for this device: `kernel_cap` at full scale (a GPU); at most 32 blocks on the
    /// emulator, whose cost grows with the number of threads (grid-stride loops cover the rest).
    pub fn grid_cap(&self, kernel_cap: u32) -> u32 {
        match self.profile().scale {
            Scale::Full => kernel_cap,
            Scale::Small => kernel_cap.min(32),
        }
    }

    /// The emulator's options (`None` on a GPU): to make another emulator like this one.
    pub fn emu_options(&self) -> Option<&emu::Options> {
        self.backend.emu_options()
    }

    /// Takes what the emulator's detectors found since the last call.
    pub fn take_findings(&self) -> Findings {
        self.backend.take_findings()
    }

    /// The synchronisation sites (barriers, fences, atomics, volatile, acquire and release accesses)
    /// the emulated launches executed since the last call, in source order with their counts summed,
    /// when the emulator's options set `record_sites`; always empty on a GPU. [`Device::take_findings`]
    /// does not clear them. [`crate::mutation_test`] uses them.
    pub fn take_sites(&self) -> Vec<emu::SyncSite> {
        self.backend.take_sites()
    }

    /// The checks every launch makes before it starts: the arguments live in this device's memory,
    /// the launch shape fits them (an `Output` needs a 1-D launch and no overlapping view), and the
    /// block is within the kernel's launch bounds.
    pub(crate) fn checked_args<'a, K: Kernel>(
        &self,
        cfg: &Launch,
        args: impl IntoArgs<Params = K::Args<'a>>,
    ) -> Result<K::Args<'a>> {
        args.check_space_with_peers(K::NAME, K::PARAMS, self.space, &self.peers.borrow()).map_err(Error::Refused)?;
        // SAFETY: every launch of this device is synchronous: it completes before the launcher that
        // called this returns, while `args`, and with it every borrow of a buffer, is still alive.
        let params = unsafe { args.into_args() };
        params.check_launch(K::NAME, K::PARAMS, cfg.grid, cfg.block).map_err(Error::Refused)?;
        gpu_std::launch_bounds::check_block::<K>(cfg.block).map_err(Error::Refused)?;
        Ok(params)
    }

    /// Launches `K` and waits for it; every CUDA call and the launch itself are checked. On the
    /// emulator, races are collected (see [`Device::take_findings`]) and deadlocks become errors.
    pub fn launch<'a, K: Kernel>(&self, cfg: Launch, args: impl IntoArgs<Params = K::Args<'a>>) -> Result<()> {
        let params = self.checked_args::<K>(&cfg, args)?;
        // SAFETY: the views in `params` point into memory this device may access (checked above) and
        // borrow their buffers for the whole call; the launch completes before it returns.
        unsafe { self.backend.launch::<K>(cfg, params) }.map(|_| ())
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
        let params = self.checked_args::<K>(&cfg, args)?;
        // SAFETY: as in `launch`; a kernel still running at the limit ends the process, before
        // anything it uses is freed.
        unsafe { self.backend.launch_within::<K>(cfg, params, limit) }
    }

    /// Times `reps` launches of `K` with device events after 3 warm-up launches; `reset` runs on the
    /// host before each launch (outside the timed region). Where launches cannot be timed
    /// ([`Profile::can_time`]: the emulator) `None`, without launching.
    ///
    /// `reset`'s error type is the call's (any that an [`Error`] converts into: this crate's, or
    /// `anyhow::Error`).
    pub fn time<'a, K: Kernel, E: From<Error>>(
        &self,
        cfg: Launch,
        args: impl IntoArgs<Params = K::Args<'a>>,
        reps: usize,
        reset: &dyn Fn() -> Result<(), E>,
    ) -> Result<Option<Timing>, E> {
        let params = self.checked_args::<K>(&cfg, args)?;
        if !self.profile().can_time {
            return Ok(None);
        }
        median_of(reps, reset, &|| {
            // SAFETY: as in `launch`.
            Ok(unsafe { self.backend.launch::<K>(cfg, params) }?)
        })
    }

    /// Times `reps` runs of `call` (which launches on this device: a library's call, several launches)
    /// after 3 warm-up runs, with device events on the device's stream around each run; `reset` runs on
    /// the host before each (outside the timed region). A run's time is what a caller waits for on the
    /// GPU: from the first launch's enqueueing to the last kernel's end, the host's work between
    /// launches included. Where launches cannot be timed ([`Profile::can_time`]: the emulator) `None`,
    /// and `call` is not run. The error type is `reset`'s and `call`'s, as in [`Device::time`].
    pub fn time_calls<E: From<Error>>(
        &self,
        reps: usize,
        reset: &dyn Fn() -> Result<(), E>,
        call: &dyn Fn() -> Result<(), E>,
    ) -> Result<Option<Timing>, E> {
        if !self.profile().can_time {
            return Ok(None);
        }
        median_of(reps, reset, &|| self.backend.time_region(call))
    }

    /// Most blocks of `K` that can be resident at once with this launch shape (the cap of a cooperative
    /// launch): occupancy x SMs on a GPU, `max_resident_blocks` on the emulator.
    pub fn max_coresident_blocks<K: Kernel>(&self, block: Dim3, shared_bytes: usize) -> Result<u32> {
        self.backend.max_coresident_blocks::<K>(block, shared_bytes)
    }
}

/// The median of the times of `reps` (at least 1) runs of `run` after 3 warm-up runs, `reset` before
/// each.
fn median_of<E>(
    reps: usize,
    reset: &dyn Fn() -> Result<(), E>,
    run: &dyn Fn() -> Result<Option<f64>, E>,
) -> Result<Option<Timing>, E> {
    let mut times = Vec::with_capacity(reps);
    for k in 0..reps.max(1) + 3 {
        reset()?;
        let ms = run()?.unwrap_or(0.0);
        if k >= 3 {
            times.push(ms);
        }
    }
    times.sort_by(|a, b| a.total_cmp(b));
    Ok(Some(Timing { median_ms: times[times.len() / 2], reps: times.len() }))
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
        match err {
            // Without the `cuda` feature, or without a device, there is no GPU to open.
            Error::NoGpu(_) => {}
            // With one, the module is the problem, and the error names it.
            _ if cfg!(feature = "cuda") => {
                let chain = std::iter::successors(Some(&err as &dyn std::error::Error), |e| e.source())
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(": ");
                assert!(chain.contains("/nonexistent/user_kernels.ptx"), "{chain}");
            }
            _ => panic!("a build without the `cuda` feature has no GPU to open: {err}"),
        }
        let (dev, note) = Device::open(DeviceChoice::Auto, &missing, Default::default()).expect("Auto falls back");
        assert!(dev.profile().detectors);
        assert!(note.is_some_and(|n| n.contains("running on the CPU SIMT emulator")));
    }
}
