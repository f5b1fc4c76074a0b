//! [`Algos`]: the library's calls on one device, with the temporary storage they keep between calls
//! (the sort's: [`SortScratch`]).
//!
//! Imports `device` (the library's module on a device) and nothing else of the crate: the calls that
//! use the storage (`reduce`, `histogram`, `scan`, `sort`) import it.
use crate::error::Result;
use gpu_algos_kernels::scan::Epochs;
use gpu_host::{Buffer, Device};
use std::cell::{Cell, RefCell};

/// The library's calls on one device, keeping their temporary storage between calls: the reduce's
/// ticket and partials, the scan's state (whose epochs spare it a zeroing per call), the sort's counts,
/// state and temporary buffers. Each free
/// function of [`crate::reduce`], [`crate::histogram`] and [`crate::scan`] makes one for its call;
/// a program that calls often keeps one. Not `Sync`: one thread's calls at a time, as the device's.
pub struct Algos<'d> {
    pub(crate) dev: &'d Device,
    /// The reduce's ticket: one word, 0 between launches (every launch leaves it 0).
    ticket: RefCell<Option<Buffer<'d, u32>>>,
    /// The reduce's partials.
    partials: RefCell<Option<Buffer<'d, u64>>>,
    /// The scan's state and the epoch its last launch was tagged with.
    state: RefCell<Option<Buffer<'d, u64>>>,
    epochs: Cell<Epochs>,
    /// The sort's counts, state and temporary keys and values.
    pub(crate) sort_scratch: RefCell<SortScratch<'d>>,
    /// Resident blocks per kernel (an occupancy query costs microseconds: once per kernel).
    resident: RefCell<Vec<(std::any::TypeId, u32)>>,
}

impl<'d> Algos<'d> {
    /// The calls on `dev`; loads the library's module on a GPU.
    pub fn new(dev: &'d Device) -> Result<Algos<'d>> {
        crate::device::ensure_module(dev)?;
        Ok(Algos {
            dev,
            ticket: RefCell::default(),
            partials: RefCell::default(),
            state: RefCell::default(),
            epochs: Cell::new(Epochs::new()),
            sort_scratch: RefCell::default(),
            resident: RefCell::default(),
        })
    }

    /// `query()` the first time for `key`, the kept answer after.
    pub(crate) fn resident<K: 'static>(&self, query: impl FnOnce() -> Result<u32>) -> Result<u32> {
        let key = std::any::TypeId::of::<K>();
        if let Some(&(_, r)) = self.resident.borrow().iter().find(|(k, _)| *k == key) {
            return Ok(r);
        }
        let r = query()?;
        self.resident.borrow_mut().push((key, r));
        Ok(r)
    }

    /// The device.
    pub fn device(&self) -> &'d Device {
        self.dev
    }

    /// Runs `f` with the ticket word and at least `len` partial words.
    pub(crate) fn with_reduce_scratch<R>(
        &self,
        len: usize,
        f: impl FnOnce(&Buffer<'d, u32>, &Buffer<'d, u64>) -> Result<R>,
    ) -> Result<R> {
        let mut ticket = self.ticket.borrow_mut();
        if ticket.is_none() {
            *ticket = Some(self.dev.filled("reduce ticket", 1, 0u32)?);
        }
        let mut partials = self.partials.borrow_mut();
        if partials.as_ref().is_none_or(|p| p.len() < len) {
            *partials = Some(self.dev.filled("reduce partials", len.max(1), 0u64)?);
        }
        f(ticket.as_ref().expect("made above"), partials.as_ref().expect("made above"))
    }

    /// Runs `f` with a scan state of at least `len` words and the epoch to tag the launch with:
    /// 0 on a state zeroed for it (`zero`, a new state, or the epochs starting again), else the next
    /// epoch.
    pub(crate) fn with_scan_state<R>(
        &self,
        len: usize,
        zero: bool,
        f: impl FnOnce(&Buffer<'d, u64>, u32) -> Result<R>,
    ) -> Result<R> {
        let mut state = self.state.borrow_mut();
        let mut epochs = self.epochs.get();
        let epoch = if state.as_ref().is_none_or(|s| s.len() < len) {
            // A new state is zeroed: its first launch may take epoch 1 as well as 0.
            *state = Some(self.dev.filled("scan state", len, 0u64)?);
            epochs = Epochs::new();
            epochs.advance().0
        } else if zero {
            state.as_ref().expect("checked above").zero()?;
            0
        } else {
            let (epoch, restart) = epochs.advance();
            if restart {
                state.as_ref().expect("checked above").zero()?;
            }
            epoch
        };
        self.epochs.set(epochs);
        f(state.as_ref().expect("made above"), epoch)
    }
}

/// A sort's temporary storage: the digit counts, the passes' state, and a buffer of keys and one of
/// values of each width.
#[derive(Default)]
pub(crate) struct SortScratch<'d> {
    pub(crate) counts: Option<Buffer<'d, u32>>,
    pub(crate) state: Option<Buffer<'d, u32>>,
    pub(crate) keys4: Option<Buffer<'d, u32>>,
    pub(crate) keys8: Option<Buffer<'d, u64>>,
    pub(crate) vals4: Option<Buffer<'d, u32>>,
    pub(crate) vals8: Option<Buffer<'d, u64>>,
}
