//! Spin loops: which accesses are polls, and when a launch is stuck polling.
//!
//! A *poll* is an access that leaves memory as it was: a volatile or acquire load, a read-modify-write
//! that writes back the value it found (a compare-and-swap whose compare fails, an exchange, add, or,
//! and, min or max that changes nothing), or a `nanosleep`. A *write* (a store, or a read-modify-write
//! that changes the value), a completed barrier or collective, and a thread's exit are progress.
//!
//! The launch is *livelocked* when [`Options::poll_limit`](super::Options::poll_limit) polls happened
//! since the last progress and every runnable thread is in a run of polls (a thread that did anything
//! else since its last poll may be about to write). Each thread remembers the last memory it polled
//! and the value it saw, so the report says what it waits for: "wait at `site` for `lock`[0] to change
//! from 1". The last atomic, volatile or release writer of each address is remembered too, so the
//! report can say who set that value.

use super::buffer;
use super::deadlock::fmt_dim;
use super::sched::State;
use crate::Site;
use crate::atomic::SpaceKind;

/// A polled memory location and the value the poll saw.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Polled {
    pub addr: usize,
    pub space: SpaceKind,
    pub size: usize,
    /// The value's bytes, little-endian, zero-extended.
    pub bits: u64,
    /// The element type (`u32`, `f32`, ...), to print the value.
    pub ty: &'static str,
}

impl Polled {
    /// The location `p` of type `T` holding `value`.
    pub fn of<T: Copy>(p: *const T, space: SpaceKind, value: T) -> Polled {
        Polled { addr: p as usize, space, size: size_of::<T>(), bits: bits_of(value), ty: std::any::type_name::<T>() }
    }
}

/// The bytes of a scalar of at most 8 bytes, little-endian, zero-extended.
pub(crate) fn bits_of<T: Copy>(v: T) -> u64 {
    let n = size_of::<T>();
    assert!(n <= 8, "scalars are at most 8 bytes");
    let mut b = [0u8; 8];
    // SAFETY: `v` is a plain scalar of `n <= 8` bytes with no padding.
    unsafe { std::ptr::copy_nonoverlapping(&v as *const T as *const u8, b.as_mut_ptr(), n) };
    u64::from_le_bytes(b)
}

/// `bits` printed as a value of type `ty`.
pub(crate) fn fmt_value(bits: u64, ty: &str) -> String {
    match ty {
        "i8" => (bits as u8 as i8).to_string(),
        "i16" => (bits as u16 as i16).to_string(),
        "i32" => (bits as u32 as i32).to_string(),
        "i64" => (bits as i64).to_string(),
        "f32" => f32::from_bits(bits as u32).to_string(),
        "f64" => f64::from_bits(bits).to_string(),
        _ => bits.to_string(),
    }
}

/// Who last changed an address with an atomic, volatile or release write, and the value written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Writer {
    pub thread: usize,
    pub site: Site,
    pub bits: u64,
}

impl State {
    /// Marks a forward step: a write, a completed barrier, an exit. Resets the spin detector.
    pub fn progress(&mut self) {
        self.polls = 0;
    }

    /// Thread `t` entered the emulator at `site` for something other than a poll: it is not spinning.
    pub fn busy(&mut self, t: usize, site: Site) {
        let th = &mut self.threads[t];
        th.at = Some(site);
        th.spins = 0;
        th.polled = None;
    }

    /// Thread `t` wrote memory at `site`: progress. `strong` writes (atomic, volatile, release) of
    /// `bits` to `addr` are remembered as that address's last writer.
    pub fn wrote(&mut self, t: usize, site: Site, strong: Option<(usize, u64)>) {
        self.progress();
        self.busy(t, site);
        if let Some((addr, bits)) = strong {
            self.writers.insert(addr, Writer { thread: t, site, bits });
        }
    }

    /// A poll by thread `t` at `site`: of memory (`mem`, with the value seen), or a sleep (`None`).
    pub fn poll(&mut self, t: usize, site: Site, mem: Option<Polled>) {
        self.polls += 1;
        let th = &mut self.threads[t];
        th.at = Some(site);
        th.spins += 1;
        if let Some(m) = mem {
            th.polled = Some((site, m));
        }
    }

    /// Whether the launch is stuck: enough polls since the last progress, and every runnable thread
    /// is polling.
    pub(super) fn livelocked(&self) -> bool {
        self.polls > self.opts.poll_limit && self.runnable.iter().all(|&t| self.threads[t].spins > 0)
    }

    /// What a polling thread waits for: `wait at <site> for `lock`[0] to change from 1 (set by block 0
    /// thread 3 at <site>)`, or, for a thread that only sleeps, where it sleeps.
    pub(super) fn spin_what(&self, t: usize) -> String {
        let th = &self.threads[t];
        let Some((site, m)) = th.polled else {
            let at = th.at.map(Self::site_str).unwrap_or_default();
            return format!("poll at {at} without reading memory (nanosleep)");
        };
        let place = match m.space {
            SpaceKind::Global => {
                let (name, index) = buffer::describe(m.addr, m.size);
                format!("`{name}`[{index}]")
            }
            SpaceKind::Shared => {
                let blk = &self.blocks[th.block];
                let index = (m.addr - blk.shared.as_ptr() as usize) / m.size.max(1);
                format!("shared memory element [{index}] of block {}", fmt_dim(blk.idx))
            }
        };
        let mut what =
            format!("wait at {} for {place} to change from {}", Self::site_str(site), fmt_value(m.bits, m.ty));
        if let Some(w) = self.writers.get(&m.addr).filter(|w| w.bits == m.bits) {
            what += &format!(" (set by {} at {})", self.tid(w.thread), Self::site_str(w.site));
        }
        what
    }
}
