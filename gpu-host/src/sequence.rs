//! Launches queued on a device's stream and waited for once ([`Device::sequence`], [`Sequence`]): a
//! library's call of several launches pays one wait instead of one per launch.
//!
//! Imports the device (`device`), its buffers (`buffer`), the backend (`backend`) and the leaves; the
//! device layer does not import it.

use crate::buffer::Buffer;
use crate::device::Device;
use crate::error::{Result, fail};
use crate::launch::Launch;
use gpu_std::{IntoArgs, Kernel, Pod};
use std::cell::Cell;
use std::marker::PhantomData;

impl Device {
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
    /// # Ok::<(), gpu_host::Error>(())
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
    /// # Ok::<(), gpu_host::Error>(())
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
    /// # Ok::<(), gpu_host::Error>(())
    /// ```
    pub fn sequence_then_read<'s, R, T: Pod>(
        &'s self,
        buf: &'s Buffer<'_, T>,
        i: usize,
        f: impl FnOnce(&Sequence<'s>) -> Result<R>,
    ) -> Result<(R, T)> {
        if i >= buf.len() {
            fail!(Bounds, "read of element {i} of a buffer of {}", buf.len());
        }
        let (r, read_on_stream) = self.run_sequence(f, |seq| {
            // SAFETY: element `i` (in bounds, checked above) of the buffer's own memory, borrowed for
            // `'s` (it outlives the wait that follows).
            let queued = unsafe { self.backend.queue_read(buf.memory(), i)? };
            seq.queued.set(seq.queued.get() | queued);
            Ok(queued)
        })?;
        let value = match self.backend.read_back::<T>() {
            Some(v) if read_on_stream => v,
            _ => buf.read_at(i)?,
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
        let seq = Sequence { dev: self, _invariant: PhantomData, queued: Cell::new(false) };
        let r = f(&seq).and_then(|r| after(&seq).map(|a| (r, a)));
        let waited = seq.wait();
        let r = r?;
        waited?;
        Ok(r)
    }
}

/// Launches and zeroings queued on one device and waited for together ([`Device::sequence`]); the
/// views they take borrow for `'s`.
pub struct Sequence<'s> {
    dev: &'s Device,
    /// Invariant in `'s`: a covariant `Sequence<'s>` could be taken as a `Sequence` of a shorter
    /// lifetime inside the closure, and then accept views of buffers made (and freed) there, before
    /// the wait.
    _invariant: PhantomData<fn(&'s ()) -> &'s ()>,
    /// Whether anything was queued (and so must be waited for).
    queued: Cell<bool>,
}

impl Sequence<'_> {
    /// Waits for everything the sequence queued (nothing to wait for when nothing was queued: on the
    /// emulator every launch ran when it was asked for).
    fn wait(&self) -> Result<()> {
        if !self.queued.replace(false) {
            return Ok(());
        }
        self.dev.backend.wait("a sequence of launches")
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
        let params = self.dev.checked_args::<K>(&cfg, args)?;
        // SAFETY: the views in `params` point into memory this device may access (checked above) and
        // borrow their buffers for `'s`, which outlives the closure of `Device::sequence`; that call
        // waits for the queue before it returns.
        let queued = unsafe { self.dev.backend.queue::<K>(cfg, params)? };
        self.queued.set(self.queued.get() | queued);
        Ok(())
    }

    /// Queues the zeroing of every byte of `buf` after what this sequence queued before (on the
    /// emulator: zeroes it now).
    pub fn zero<T: Pod>(&self, buf: &'s Buffer<'_, T>) -> Result<()> {
        // SAFETY: the buffer's own memory, borrowed for `'s` (it outlives the wait of
        // `Device::sequence`).
        let queued = unsafe { self.dev.backend.queue_zero(buf.memory())? };
        self.queued.set(self.queued.get() | queued);
        Ok(())
    }
}
