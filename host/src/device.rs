//! Where kernels run: a CUDA GPU (through `cust`, with the `cuda` feature) or the CPU SIMT emulator.
//! Both take the same kernel, the same launch shape and the same argument tuple.
//!
//! Kernel arguments that point to device memory are made from a [`Buffer`] and *borrow* it
//! ([`Arg`]), so a launch can never be given a buffer that was already freed:
//!
//! ```
//! use host::device::{Device, DeviceChoice, cover};
//! use gpu_kernels::warp_reduce::{BLOCK, warp_reduce};
//! let (dev, _) = Device::open(DeviceChoice::Emu, Default::default()).unwrap();
//! let input = dev.upload("input", &[1.0f32; 64]).unwrap();
//! let mut sums = dev.filled("sums", 2, 0.0f32).unwrap();
//! dev.launch::<warp_reduce>(cover(64, BLOCK, 1, 0), (input.view(), sums.output())).unwrap();
//! assert_eq!(sums.read().unwrap(), [32.0, 32.0]);
//! ```
//!
//! A view that outlives its buffer does not compile:
//!
//! ```compile_fail,E0597
//! use host::device::{Device, DeviceChoice, cover};
//! use gpu_kernels::warp_reduce::{BLOCK, warp_reduce};
//! let (dev, _) = Device::open(DeviceChoice::Emu, Default::default()).unwrap();
//! let mut sums = dev.filled("sums", 2, 0.0f32).unwrap();
//! let input = {
//!     let buffer = dev.upload("input", &[1.0f32; 64]).unwrap();
//!     buffer.view() // error: `buffer` does not live long enough
//! };
//! dev.launch::<warp_reduce>(cover(64, BLOCK, 1, 0), (input, sums.output())).unwrap();
//! ```
//!
//! An [`Output`] borrows its buffer exclusively, so no other argument of the launch can alias the
//! elements its threads own:
//!
//! ```compile_fail,E0502
//! use host::device::{Device, DeviceChoice, cover};
//! use gpu_kernels::warp_reduce::{BLOCK, warp_reduce};
//! let (dev, _) = Device::open(DeviceChoice::Emu, Default::default()).unwrap();
//! let mut data = dev.filled("data", 64, 1.0f32).unwrap();
//! // error: cannot borrow `data` as mutable because it is also borrowed as immutable
//! dev.launch::<warp_reduce>(cover(64, BLOCK, 1, 0), (data.view(), data.output())).unwrap();
//! ```
//!
//! Nor can safe code take the view out of its [`Arg`], which would drop the borrow:
//!
//! ```compile_fail,E0133
//! use gpu_std::IntoParam;
//! use host::device::{Device, DeviceChoice};
//! let (dev, _) = Device::open(DeviceChoice::Emu, Default::default()).unwrap();
//! let buffer = dev.upload("input", &[1.0f32; 64]).unwrap();
//! let view = buffer.view().into_param(); // error: call to unsafe function
//! drop(buffer);
//! # let _ = view;
//! ```

use anyhow::{Result, bail};
use gpu_std::emu::{self, EmuError, LaunchConfig, Race, UninitRead};
use gpu_std::memory::Owner;
pub use gpu_std::{Arg, IntoArgs};
use gpu_std::{Dim3, Global, GlobalMut, Kernel, KernelArgs, KernelParam, Output, Pod};
use std::cell::{RefCell, UnsafeCell};
use std::ffi::c_void;
use std::path::{Path, PathBuf};

/// The kernel crate whose PTX module [`Device::open`] loads.
pub const DEFAULT_KERNEL_CRATE: &str = "gpu_kernels";

/// Where the PTX module of kernel crate `crate_name` (`gpu_kernels`, `user_kernels`, ...) is:
/// `$<CRATE_NAME>_PTX` (e.g. `$GPU_KERNELS_PTX`), else `ptx/<crate_name>.ptx` next to the executable
/// (a bundle), else `target/ptx/<crate_name>.ptx` of the workspace, where `cargo xtask build-ptx`
/// writes it.
pub fn ptx_path(crate_name: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(ptx_env(crate_name)).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let file = format!("{crate_name}.ptx");
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        let p = dir.join("ptx").join(&file);
        if p.exists() {
            return p;
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ptx").join(file)
}

/// The environment variable that overrides [`ptx_path`]: `GPU_KERNELS_PTX` for `gpu_kernels`.
pub fn ptx_env(crate_name: &str) -> String {
    format!("{}_PTX", crate_name.replace('-', "_").to_ascii_uppercase())
}

/// Which device the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The GPU if a CUDA driver and device are present, else the emulator.
    Auto,
    Gpu,
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

/// What the detectors of the emulator found over the launches of one example.
#[derive(Default, Debug, Clone)]
pub struct Findings {
    pub races: Vec<Race>,
    pub racy_addresses: usize,
    /// Reads of shared memory that no thread of the block had written (reported in part, all counted).
    pub uninit_reads: Vec<UninitRead>,
    pub uninit_elements: usize,
    pub deadlocks: Vec<String>,
    /// Values that are undefined on a GPU (a shuffle from a lane outside its mask), one per call site.
    pub warnings: Vec<String>,
}

/// Kernel argument tuples, marshalled for `cuLaunchKernel` (a pointer to each argument).
pub trait ParamList: Copy {
    fn pointers(&mut self) -> Vec<*mut c_void>;
}

macro_rules! param_list {
    ($($n:ident : $i:tt),*) => {
        impl<$($n: KernelParam),*> ParamList for ($($n,)*) {
            fn pointers(&mut self) -> Vec<*mut c_void> {
                vec![$(&mut self.$i as *mut $n as *mut c_void),*]
            }
        }
    };
}
param_list!(A: 0);
param_list!(A: 0, B: 1);
param_list!(A: 0, B: 1, C: 2);
param_list!(A: 0, B: 1, C: 2, D: 3);
param_list!(A: 0, B: 1, C: 2, D: 3, E: 4);
param_list!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5);

/// Median kernel time over repeated launches.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub median_ms: f64,
    pub reps: usize,
}

/// A device: GPU or emulator.
pub struct Device {
    inner: Inner,
    findings: RefCell<Findings>,
}

enum Inner {
    #[cfg(feature = "cuda")]
    Gpu(crate::gpu::Gpu),
    Emu(emu::Options),
}

/// A device buffer of `len` [`Pod`] elements.
pub struct Buffer<T: Pod> {
    len: usize,
    inner: BufInner<T>,
}

enum BufInner<T: Pod> {
    #[cfg(feature = "cuda")]
    Gpu(crate::gpu::GpuBuffer<T>),
    Emu {
        data: Box<[UnsafeCell<T>]>,
        _name: emu::BufferName,
    },
}

impl<T: Pod> Buffer<T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    fn ptr(&self) -> *mut T {
        match &self.inner {
            #[cfg(feature = "cuda")]
            BufInner::Gpu(b) => b.device_ptr() as *mut T,
            BufInner::Emu { data, .. } => {
                if data.is_empty() {
                    std::ptr::NonNull::dangling().as_ptr()
                } else {
                    data[0].get()
                }
            }
        }
    }
    /// Read-only view for a kernel argument, borrowing the buffer.
    pub fn view(&self) -> Arg<'_, Global<T>> {
        // SAFETY: the pointer addresses `len` elements owned by this buffer, which the returned
        // argument borrows, so it stays alive for every launch the view is passed to.
        unsafe { Arg::new(Global::from_raw_parts(self.ptr(), self.len)) }
    }
    /// Writable view (any thread may write any element: for atomics, flags and racy demonstrations),
    /// borrowing the buffer.
    pub fn view_mut(&self) -> Arg<'_, GlobalMut<T>> {
        // SAFETY: as in `view`.
        unsafe { Arg::new(GlobalMut::from_raw_parts(self.ptr(), self.len)) }
    }
    /// One-writer-per-element output view, borrowing the buffer exclusively: no other argument of
    /// the launch can view it. `O` says who owns which element (inferred from the kernel).
    pub fn output<O: Owner>(&mut self) -> Arg<'_, Output<T, O>> {
        // SAFETY: as in `view`; the exclusive borrow keeps every other view of this buffer out of the
        // launch.
        unsafe { Arg::new(Output::from_raw_parts(self.ptr(), self.len)) }
    }
    /// Copies the buffer to the host (after the device finished all work).
    pub fn read(&self) -> Result<Vec<T>> {
        match &self.inner {
            #[cfg(feature = "cuda")]
            BufInner::Gpu(b) => b.read(self.len),
            // SAFETY: no launch runs while the host reads (launches are synchronous on the emulator).
            BufInner::Emu { data, .. } => Ok(data.iter().map(|c| unsafe { *c.get() }).collect()),
        }
    }
    /// Overwrites the buffer from the host.
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

/// A launch: grid, block, dynamic shared bytes, cooperative or not.
pub type Launch = LaunchConfig;

/// The whole-warp-aligned 1-D launch that covers `n` items with `block` threads per block, capped at
/// `max_grid` blocks (the kernels loop grid-stride over the rest).
pub fn cover(n: usize, block: u32, max_grid: u32, shared_bytes: usize) -> Launch {
    let blocks = n.div_ceil(block as usize).clamp(1, max_grid as usize) as u32;
    LaunchConfig::linear(blocks, block, shared_bytes)
}

impl Device {
    /// Opens the requested device with the chapter's kernels (the PTX module at
    /// `ptx_path("gpu_kernels")` on a GPU). Returns the device and, for `Auto` falling back to the
    /// emulator, a one-line note saying why.
    pub fn open(choice: DeviceChoice, emu_opts: emu::Options) -> Result<(Device, Option<String>)> {
        Device::open_with_ptx(choice, emu_opts, &ptx_path(DEFAULT_KERNEL_CRATE))
    }

    /// Opens the requested device with the kernels of another kernel crate: on a GPU it loads the PTX
    /// module at `ptx` (e.g. `ptx_path("user_kernels")`), so [`Device::launch`] finds that crate's
    /// kernels by name. The emulator runs kernels from their Rust source and needs no module.
    pub fn open_with_ptx(choice: DeviceChoice, emu_opts: emu::Options, ptx: &Path) -> Result<(Device, Option<String>)> {
        let emu = || Device { inner: Inner::Emu(emu_opts.clone()), findings: RefCell::default() };
        match choice {
            DeviceChoice::Emu => Ok((emu(), None)),
            DeviceChoice::Gpu => Ok((Device::open_gpu(ptx)?, None)),
            // Only a missing GPU falls back; with a GPU present, a missing, stale or rejected PTX module
            // is an error, never a silent switch to the emulator.
            DeviceChoice::Auto => match Device::open_gpu(ptx) {
                Ok(d) => Ok((d, None)),
                Err(e) if e.downcast_ref::<NoGpu>().is_some() => {
                    Ok((emu(), Some(format!("no CUDA GPU available ({e:#}); running on the CPU SIMT emulator"))))
                }
                Err(e) => Err(e),
            },
        }
    }

    #[cfg(feature = "cuda")]
    fn open_gpu(ptx: &Path) -> Result<Device> {
        Ok(Device { inner: Inner::Gpu(crate::gpu::Gpu::open(ptx)?), findings: RefCell::default() })
    }
    #[cfg(not(feature = "cuda"))]
    fn open_gpu(_ptx: &Path) -> Result<Device> {
        Err(NoGpu(
            "this build has no CUDA support: no NVIDIA driver was found when it was built (`cargo xtask run` \
             enables it automatically on a machine with the driver; or build `host` with `--features cuda`)"
                .into(),
        )
        .into())
    }

    pub fn is_gpu(&self) -> bool {
        !matches!(self.inner, Inner::Emu(_))
    }

    /// `gpu` or `emu`, for tables.
    pub fn kind(&self) -> &'static str {
        if self.is_gpu() { "gpu" } else { "emu" }
    }

    /// The device's name.
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

    /// Grid cap for this device: the kernel's cap on a GPU; at most 32 blocks on the emulator, whose
    /// cost grows with the number of threads (the grid-stride loops cover the rest).
    pub fn grid_cap(&self, kernel_cap: u32) -> u32 {
        if self.is_gpu() { kernel_cap } else { kernel_cap.min(32) }
    }

    pub fn emu_options(&self) -> Option<&emu::Options> {
        match &self.inner {
            Inner::Emu(o) => Some(o),
            #[cfg(feature = "cuda")]
            Inner::Gpu(_) => None,
        }
    }

    /// Takes what the emulator's detectors found since the last call.
    pub fn take_findings(&self) -> Findings {
        std::mem::take(&mut self.findings.borrow_mut())
    }

    /// A buffer holding a copy of `data`. `name` appears in race reports.
    pub fn upload<T: Pod>(&self, name: &str, data: &[T]) -> Result<Buffer<T>> {
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => Ok(Buffer { len: data.len(), inner: BufInner::Gpu(g.upload(data)?) }),
            Inner::Emu(_) => {
                let data: Box<[UnsafeCell<T>]> = data.iter().map(|v| UnsafeCell::new(*v)).collect();
                let ptr = if data.is_empty() { std::ptr::null() } else { data[0].get() as *const T };
                let reg = emu::register_buffer(name, ptr, data.len());
                let len = data.len();
                Ok(Buffer { len, inner: BufInner::Emu { data, _name: reg } })
            }
        }
    }

    /// A buffer of `n` copies of `v`.
    pub fn filled<T: Pod>(&self, name: &str, n: usize, v: T) -> Result<Buffer<T>> {
        self.upload(name, &vec![v; n])
    }

    /// Launches `K` and waits for it; every CUDA call and the launch itself are checked. On the
    /// emulator, races are collected (see [`Device::take_findings`]) and deadlocks become errors.
    pub fn launch<K: Kernel>(&self, cfg: Launch, args: impl IntoArgs<Params = K::Args>) -> Result<()>
    where
        K::Args: ParamList,
    {
        // SAFETY: the launch below is synchronous: it completes before this function returns, while
        // `args`, and with it every borrow of a buffer, is still alive.
        let args = unsafe { args.into_args() };
        args.check_launch(K::NAME, K::PARAMS, cfg.grid, cfg.block).map_err(anyhow::Error::msg)?;
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => g.launch(K::NAME, cfg, args, 1).map(|_| ()),
            Inner::Emu(opts) => match emu::launch::<K>(&cfg, opts, args) {
                Ok(out) => {
                    let mut f = self.findings.borrow_mut();
                    f.racy_addresses += out.racy_addresses;
                    f.races.extend(out.races);
                    f.uninit_elements += out.uninit_elements;
                    f.uninit_reads.extend(out.uninit_reads);
                    f.warnings.extend(out.warnings.iter().map(ToString::to_string));
                    Ok(())
                }
                Err(e) => {
                    if matches!(e, EmuError::Deadlock(_) | EmuError::Livelock(_)) {
                        self.findings.borrow_mut().deadlocks.push(e.to_string());
                    }
                    Err(anyhow::Error::new(e))
                }
            },
        }
    }

    /// Times `reps` launches of `K` with device events after 3 warm-up launches; `reset` runs on the
    /// host before each launch (outside the timed region). GPU only: `None` on the emulator.
    pub fn time<K: Kernel>(
        &self,
        cfg: Launch,
        args: impl IntoArgs<Params = K::Args>,
        reps: usize,
        reset: &dyn Fn() -> Result<()>,
    ) -> Result<Option<Timing>>
    where
        K::Args: ParamList,
    {
        // SAFETY: the launch below is synchronous: it completes before this function returns, while
        // `args`, and with it every borrow of a buffer, is still alive.
        let args = unsafe { args.into_args() };
        args.check_launch(K::NAME, K::PARAMS, cfg.grid, cfg.block).map_err(anyhow::Error::msg)?;
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => {
                let mut times = Vec::with_capacity(reps);
                for k in 0..reps + 3 {
                    reset()?;
                    let ms = g.launch(K::NAME, cfg, args, 1)?;
                    if k >= 3 {
                        times.push(ms);
                    }
                }
                times.sort_by(|a, b| a.total_cmp(b));
                Ok(Some(Timing { median_ms: times[times.len() / 2], reps }))
            }
            Inner::Emu(_) => {
                let _ = (cfg, args, reps, reset);
                Ok(None)
            }
        }
    }

    /// Most blocks of `K` that can be resident at once with this launch shape (the cap of a cooperative
    /// launch): occupancy x SMs on a GPU, `max_resident_blocks` on the emulator.
    pub fn max_coresident_blocks<K: Kernel>(&self, block: Dim3, shared_bytes: usize) -> Result<u32> {
        match &self.inner {
            #[cfg(feature = "cuda")]
            Inner::Gpu(g) => g.max_coresident_blocks(K::NAME, block, shared_bytes),
            Inner::Emu(o) => {
                let _ = (block, shared_bytes);
                Ok(o.max_resident_blocks)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_modules_are_found_by_crate_name() {
        assert_eq!(ptx_env("gpu_kernels"), "GPU_KERNELS_PTX");
        assert_eq!(ptx_env("user-kernels"), "USER_KERNELS_PTX");
        // Without its variable, a module is looked up where `cargo xtask build-ptx` writes it.
        if std::env::var_os("NO_SUCH_CRATE_PTX").is_none() {
            assert!(ptx_path("no_such_crate").ends_with("target/ptx/no_such_crate.ptx"));
        }
    }

    #[test]
    fn only_a_missing_gpu_is_no_gpu() {
        let missing = Path::new("/nonexistent/user_kernels.ptx");
        let Err(err) = Device::open_with_ptx(DeviceChoice::Gpu, Default::default(), missing) else {
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
        let (dev, note) =
            Device::open_with_ptx(DeviceChoice::Auto, Default::default(), missing).expect("Auto falls back");
        assert!(!dev.is_gpu());
        assert!(note.is_some_and(|n| n.contains("running on the CPU SIMT emulator")));
    }
}
