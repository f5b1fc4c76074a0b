//! Mapped page-locked host memory: one allocation that a running kernel reads and writes through a
//! device pointer while a host thread reads and writes it too — the memory of flags and mailboxes
//! between the GPU and the host (`cuMemHostAlloc` with `CU_MEMHOSTALLOC_DEVICEMAP`, and
//! `cuMemHostGetDevicePointer`).
//!
//! The host side touches the elements only through atomics ([`HostView`]), so a kernel that writes
//! while the host reads is never a data race in Rust's sense; what the values mean, and in which order
//! they become visible, is the protocol's business (fences and release/acquire at system scope), and the
//! emulator checks it: in a launch with a host agent ([`Device::launch_with_host`]) the same
//! [`HostView`] calls are the agent's system-scope operations.
//!
//! A host view cannot outlive its allocation, nor an allocation its device:
//!
//! ```compile_fail,E0597
//! let dev = gpu_host::Device::emulator(Default::default());
//! let host = {
//!     let m = dev.mapped::<u32>("flags", 2).unwrap();
//!     m.host() // error: `m` does not live long enough
//! };
//! # let _ = host;
//! ```
//!
//! Owns the [`MappedBuffer`], its [`HostView`], and the [`Device`] calls for memory shared with the
//! host: [`Device::system_attributes`], [`Device::mapped`], [`Device::launch_with_host`]. Imports the
//! device (`device`), the backend (`backend`) and the leaves; the device layer does not import it.

use crate::attributes::SystemAttributes;
use crate::backend::Mapped;
use crate::device::Device;
use crate::error::Result;
use crate::launch::Launch;
use gpu_std::emu::host_agent::{self, HostWord};
use gpu_std::{Arg, Global, GlobalMut, IntoArgs, Kernel, MemorySpace, Pod};
use std::marker::PhantomData;
use std::sync::atomic::Ordering;

impl Device {
    /// What the GPU promises about memory shared with the host; `None` on the emulator (which models
    /// the PTX memory model: mapped memory, and system-scope atomics atomic with the host agent's).
    pub fn system_attributes(&self) -> Result<Option<SystemAttributes>> {
        self.backend.system_attributes()
    }

    /// `len` zeroed words of page-locked host memory mapped into this device's address space, for a
    /// kernel and a host thread to share while the kernel runs (see [`MappedBuffer`]). `name` appears in
    /// the emulator's reports. On a GPU that cannot map host memory, an error; and an error naming the
    /// buffer when `len` words cannot be allocated (their size in bytes overflows, or there is not the
    /// memory), never a smaller allocation than [`MappedBuffer::len`] says.
    pub fn mapped<T: HostWord + Pod>(&self, name: &str, len: usize) -> Result<MappedBuffer<'_, T>> {
        crate::size::byte_len::<T>("mapped buffer", name, len)?;
        Ok(MappedBuffer { len, space: self.space, inner: self.backend.mapped(name, len)?, _device: PhantomData })
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
        // SAFETY: as in `Device::launch`.
        unsafe { self.backend.launch_with_host::<K>(cfg, params, agent) }
    }
}

/// `len` words of page-locked host memory mapped into the device `'dev`'s address space: kernels see
/// it through [`MappedBuffer::view`] / [`MappedBuffer::view_mut`], the host through
/// [`MappedBuffer::host`], at the same time. On the emulator it is host memory the kernel's threads
/// and the host agent share.
pub struct MappedBuffer<'dev, T: HostWord + Pod> {
    len: usize,
    space: MemorySpace,
    inner: Mapped<T>,
    _device: PhantomData<&'dev Device>,
}

// SAFETY: the elements are touched only through atomics on the host (`HostView`) and by kernels
// through views: on a GPU by the device, on the emulator by its threads, whose every access is an
// atomic of the element's width and whose read-modify-writes are atomic (see gpu-std's
// `emu::prims::memory`), so a host thread using the buffer during an emulated launch is no data race.
// Sharing the buffer between host threads is what it is for.
unsafe impl<T: HostWord + Pod> Sync for MappedBuffer<'_, T> {}
// SAFETY: as above; the allocation is not tied to the thread that made it.
unsafe impl<T: HostWord + Pod> Send for MappedBuffer<'_, T> {}

impl<'dev, T: HostWord + Pod> MappedBuffer<'dev, T> {
    /// Words in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no words.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address kernels use.
    fn device_ptr(&self) -> *mut T {
        self.inner.device_ptr()
    }

    /// The address the host uses.
    fn host_ptr(&self) -> *mut T {
        self.inner.host_ptr()
    }

    /// Read-only view for a kernel argument, borrowing the buffer.
    pub fn view(&self) -> Arg<'_, Global<'_, T>> {
        // SAFETY: the device pointer addresses `len` words of this allocation, mapped into the device's
        // memory `space`; the argument borrows the buffer, so the allocation outlives every launch the
        // view is passed to.
        unsafe { Arg::in_space(Global::from_raw_parts(self.device_ptr(), self.len), self.space) }
    }

    /// Writable view for a kernel argument (flags, payloads), borrowing the buffer.
    pub fn view_mut(&self) -> Arg<'_, GlobalMut<'_, T>> {
        // SAFETY: as in `view`; the words are `UnsafeCell`s or foreign memory, written only through
        // atomics by the host.
        unsafe { Arg::in_space(GlobalMut::from_raw_parts(self.device_ptr(), self.len), self.space) }
    }

    /// The host's access to the words, usable from any host thread (and, on the emulator, by the
    /// host agent) while a kernel runs.
    pub fn host(&self) -> HostView<'_, T> {
        HostView { ptr: self.host_ptr(), len: self.len, _buffer: PhantomData }
    }

    /// A copy of the words (relaxed atomic loads).
    pub fn read(&self) -> Vec<T> {
        let h = self.host();
        (0..self.len).map(|i| h.load(i, Ordering::Relaxed)).collect()
    }

    /// Sets every word to `v` (relaxed atomic stores).
    pub fn fill(&self, v: T) {
        let h = self.host();
        for i in 0..self.len {
            h.store(i, v, Ordering::Relaxed);
        }
    }
}

/// The host's side of a [`MappedBuffer`]: atomic loads, stores and adds of its words, with the
/// orderings of `std::sync::atomic`. `Copy`, `Send` and `Sync`, borrowing the buffer. An index out of
/// bounds panics, as slice indexing does.
///
/// On the emulator, inside a host agent, each call is modelled at system scope (see
/// `gpu_std::emu::host_agent`): `Relaxed` is a volatile access, an `Acquire` load is `ld.acquire.sys`,
/// a `Release` store `st.release.sys`.
pub struct HostView<'a, T> {
    ptr: *mut T,
    len: usize,
    _buffer: PhantomData<&'a ()>,
}

impl<T> Clone for HostView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for HostView<'_, T> {}
// SAFETY: every access through the view is atomic, and the view borrows the buffer.
unsafe impl<T: HostWord> Send for HostView<'_, T> {}
// SAFETY: as above.
unsafe impl<T: HostWord> Sync for HostView<'_, T> {}

impl<T: HostWord> HostView<'_, T> {
    /// Words in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no words.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[track_caller]
    fn at(&self, i: usize) -> *mut T {
        assert!(i < self.len, "index {i} out of bounds of a mapped buffer of {} words", self.len);
        // SAFETY: `i < len`, inside the allocation.
        unsafe { self.ptr.add(i) }
    }

    /// Loads word `i`. `order` may not be `Release` or `AcqRel` (panics, as `AtomicU32::load`).
    #[track_caller]
    pub fn load(&self, i: usize, order: Ordering) -> T {
        // SAFETY: in bounds and aligned; the allocation outlives the view; every host access is atomic.
        unsafe { host_agent::load(self.at(i), order) }
    }

    /// Stores `v` into word `i`. `order` may not be `Acquire` or `AcqRel` (panics).
    #[track_caller]
    pub fn store(&self, i: usize, v: T, order: Ordering) {
        // SAFETY: as in `load`.
        unsafe { host_agent::store(self.at(i), v, order) }
    }

    /// Adds `v` to word `i` and returns the old value. Atomic with the host's other atomics; atomic
    /// with a GPU's system-scope atomics on the same word only where the device reports host-native
    /// atomics ([`SystemAttributes::host_native_atomics`](crate::SystemAttributes)).
    #[track_caller]
    pub fn fetch_add(&self, i: usize, v: T, order: Ordering) -> T {
        // SAFETY: as in `load`.
        unsafe { host_agent::fetch_add(self.at(i), v, order) }
    }

    /// Waits until `ready(load(i, Acquire))` holds, for at most `max_polls` polls and `timeout`;
    /// returns the value, or `None` on a timeout. A tight loop of loads (each one is a poll, and in a
    /// host agent a scheduling point); the clock is read every 1024 polls.
    #[track_caller]
    pub fn wait_until(
        &self,
        i: usize,
        max_polls: u64,
        timeout: std::time::Duration,
        ready: impl Fn(T) -> bool,
    ) -> Option<T> {
        let start = std::time::Instant::now();
        for k in 0..max_polls {
            let v = self.load(i, Ordering::Acquire);
            if ready(v) {
                return Some(v);
            }
            if k % 1024 == 1023 && start.elapsed() > timeout {
                return None;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_views_load_store_and_add() {
        let dev = Device::emulator(Default::default());
        let m = dev.mapped::<u64>("m", 3).unwrap();
        assert_eq!(m.read(), [0, 0, 0]);
        let h = m.host();
        h.store(1, 5, Ordering::Release);
        assert_eq!(h.fetch_add(1, 2, Ordering::AcqRel), 5);
        assert_eq!(h.load(1, Ordering::Acquire), 7);
        m.fill(9);
        assert_eq!(m.read(), [9, 9, 9]);
        // Another host thread may use the view while this one does.
        std::thread::scope(|s| {
            s.spawn(|| h.store(0, 1, Ordering::Release));
        });
        assert_eq!(h.wait_until(0, 10, std::time::Duration::from_secs(1), |v| v == 1), Some(1));
        assert_eq!(h.wait_until(2, 100, std::time::Duration::from_secs(1), |v| v == 0), None);
    }

    #[test]
    #[should_panic(expected = "index 3 out of bounds of a mapped buffer of 3 words")]
    fn an_index_out_of_bounds_panics() {
        let dev = Device::emulator(Default::default());
        let m = dev.mapped::<u32>("m", 3).unwrap();
        m.host().load(3, Ordering::Relaxed);
    }
}
