//! The emulator backend: gpu-std's CPU SIMT emulator with its options ([`Emu`]), which runs every
//! launch to its end under a seeded scheduler, keeps what its detectors found ([`Findings`]) and the
//! synchronisation sites the launches executed; and host memory as the emulator's buffers hold it
//! ([`HostCells`]).
//!
//! May import the crate's leaves (`error`, `findings`, `launch`); never the device layer above it.

use crate::error::{Error, Result};
use crate::findings::{Findings, merge_sites};
use crate::launch::Launch;
use gpu_std::emu::{self, EmuError};
use gpu_std::{Kernel, Pod};
use std::cell::{RefCell, UnsafeCell};

/// The emulator with its options, and what its launches found.
pub(crate) struct Emu {
    opts: emu::Options,
    findings: RefCell<Findings>,
    /// The synchronisation sites emulated launches executed (with `record_sites`), kept apart from
    /// the findings: taking the findings does not clear them.
    sites: RefCell<Vec<emu::SyncSite>>,
}

impl Emu {
    pub(crate) fn new(opts: emu::Options) -> Emu {
        Emu { opts, findings: RefCell::default(), sites: RefCell::default() }
    }

    pub(crate) fn options(&self) -> &emu::Options {
        &self.opts
    }

    pub(crate) fn take_findings(&self) -> Findings {
        std::mem::take(&mut self.findings.borrow_mut())
    }

    pub(crate) fn take_sites(&self) -> Vec<emu::SyncSite> {
        std::mem::take(&mut self.sites.borrow_mut())
    }

    /// Runs `K` to its end.
    ///
    /// # Safety
    /// The views in `params` come from `Arg`s in host memory whose buffers outlive this call.
    pub(crate) unsafe fn launch<K: Kernel>(&self, cfg: &Launch, params: K::Args<'_>) -> Result<()> {
        // SAFETY: the caller's contract; the launch completes before it returns.
        let r = unsafe { emu::launch_params::<K>(cfg, &self.opts, params) };
        self.absorb(r)
    }

    /// Runs `K` with `agent` as the launch's host agent (see `gpu_std::emu::launch_with_host`).
    ///
    /// # Safety
    /// As [`Emu::launch`].
    pub(crate) unsafe fn launch_with_host<K: Kernel>(
        &self,
        cfg: &Launch,
        params: K::Args<'_>,
        agent: &mut (dyn FnMut() + Send),
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        let r = unsafe { emu::launch_params_with_host::<K>(cfg, &self.opts, params, agent) };
        self.absorb(r)
    }

    /// Runs `K0` and `K1` as two devices' grids under one scheduler, with this emulator's options;
    /// what the detectors find is this emulator's.
    ///
    /// # Safety
    /// As [`Emu::launch`], for both tuples.
    pub(crate) unsafe fn launch_pair<K0: Kernel, K1: Kernel>(
        &self,
        cfg0: &Launch,
        p0: K0::Args<'_>,
        cfg1: &Launch,
        p1: K1::Args<'_>,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        let r = unsafe { emu::launch_params_two_devices::<K0, K1>(cfg0, p0, cfg1, p1, &self.opts) };
        self.absorb(r)
    }

    /// Keeps what an emulated launch found; a deadlock or livelock is also an error.
    fn absorb(&self, r: std::result::Result<emu::Outcome, EmuError>) -> Result<()> {
        match r {
            Ok(out) => {
                merge_sites(&mut self.sites.borrow_mut(), &out.sites);
                self.findings.borrow_mut().absorb(out);
                Ok(())
            }
            Err(e) => {
                if matches!(e, EmuError::Deadlock(_) | EmuError::Livelock(_)) {
                    self.findings.borrow_mut().deadlocks.push(e.to_string());
                }
                Err(Error::Emulator(e))
            }
        }
    }
}

/// Host memory an emulated kernel reads and writes: `len` cells, registered with the emulator under a
/// name that its reports use.
pub(crate) struct HostCells<T> {
    data: Box<[UnsafeCell<T>]>,
    _name: emu::BufferName,
}

impl<T: Pod> HostCells<T> {
    /// A copy of `data`, named `name` (a `what`: "buffer", "mapped buffer") in reports; an error when
    /// the host has not the memory.
    pub(crate) fn copy_of(what: &str, name: &str, data: impl ExactSizeIterator<Item = T>) -> Result<HostCells<T>> {
        let len = data.len();
        let mut cells = Vec::new();
        cells
            .try_reserve_exact(len)
            .map_err(|e| Error::OutOfMemory(format!("{what} `{name}`: cannot allocate {len} {}: {e}", unit(what))))?;
        cells.extend(data.map(UnsafeCell::new));
        let data: Box<[UnsafeCell<T>]> = cells.into_boxed_slice();
        let reg = emu::register_buffer(name, elements(&data), data.len());
        Ok(HostCells { data, _name: reg })
    }

    /// A pointer to the first element that may address every element.
    pub(crate) fn ptr(&self) -> *mut T {
        elements(&self.data)
    }

    // SAFETY (of the accessors below): no launch runs while the host reads or writes: launches are
    // synchronous, and a kernel cannot hold a buffer's view past its launch.

    pub(crate) fn read(&self) -> Vec<T> {
        // SAFETY: as above.
        self.data.iter().map(|c| unsafe { *c.get() }).collect()
    }

    /// Element `i` (in bounds: checked by the caller).
    pub(crate) fn read_at(&self, i: usize) -> T {
        // SAFETY: as above.
        unsafe { *self.data[i].get() }
    }

    pub(crate) fn zero(&self) {
        for c in self.data.iter() {
            // SAFETY: as above.
            unsafe { *c.get() = T::default() };
        }
    }

    pub(crate) fn write(&self, src: &[T]) {
        for (c, v) in self.data.iter().zip(src) {
            // SAFETY: as above.
            unsafe { *c.get() = *v };
        }
    }
}

/// What a `what` holds: elements of a buffer, words of a mapped buffer.
fn unit(what: &str) -> &'static str {
    if what == "mapped buffer" { "words" } else { "elements" }
}

/// A pointer to the first element that may address every element: derived from the whole slice, not
/// from a reference to its first element (whose provenance covers that element only).
fn elements<T>(data: &[UnsafeCell<T>]) -> *mut T {
    if data.is_empty() { std::ptr::NonNull::dangling().as_ptr() } else { UnsafeCell::raw_get(data.as_ptr()) }
}
