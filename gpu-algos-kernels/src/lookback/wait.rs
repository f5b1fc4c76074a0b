//! What the look-back's two word formats share: the state's header, how a status word is written and
//! read, the sleeps between polls, and the bounded poll itself.
//!
//! Owns: [`STATE_HEADER`] and the error word, [`Access`], [`Strength`], [`Wait`], [`poll`].
//! Imports gpu-std only.
use gpu_std::GlobalMut;
use gpu_std::atomic::{Atomic, AtomicInt};
use gpu_std::fence::nanosleep;
use gpu_std::spin::SPIN_LIMIT;
use gpu_std::thread::grid_dim;

/// `state` words before the status words: the ticket (`state[0]`) and the error word (`state[1]`).
pub const STATE_HEADER: usize = 2;
/// Where the error word is in `state`.
pub const ERROR_WORD: usize = 1;
/// The error word after a launch in which some tile gave up waiting.
pub const ERROR_GAVE_UP: u32 = 1;

/// How the status words are written and read: with the format's strong accesses (the launchers'), or
/// one side plain (a racy twin's, which the emulator reports).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Strong,
    PlainStore,
    PlainLoad,
}

/// What a format's strong accesses are.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strength {
    /// A device-scope release store publishes, an acquire load polls: what the writer stored before
    /// the word (the scan's 8-byte values, in words of their own) is visible to a reader that saw it.
    ReleaseAcquire,
    /// Volatile stores and loads (relaxed at system scope in the PTX memory model): strong, ordering
    /// nothing, for a word that carries its value in itself (the sort's counts).
    Volatile,
}

/// Writes status word `at` of `state`.
#[inline(always)]
pub(crate) fn store<W: Atomic>(state: GlobalMut<W>, at: usize, word: W, strength: Strength, access: Access) {
    if access == Access::PlainStore {
        state.set(at, word)
    } else if strength == Strength::Volatile {
        state.set_volatile(at, word)
    } else {
        state.atomic(at).store_release(word)
    }
}
/// Reads status word `at` of `state`.
#[inline(always)]
pub(crate) fn load<W: Atomic>(state: GlobalMut<W>, at: usize, strength: Strength, access: Access) -> W {
    if access == Access::PlainLoad {
        state.get(at)
    } else if strength == Strength::Volatile {
        state.get_volatile(at)
    } else {
        state.atomic(at).load_acquire()
    }
}

/// Sets the error word of `state` to say that a tile gave up waiting.
#[inline(always)]
pub(crate) fn give_up<W: AtomicInt + From<u32>>(state: GlobalMut<W>) {
    state.atomic(ERROR_WORD).fetch_or(W::from(ERROR_GAVE_UP));
}

/// The look-back's sleeps, in nanoseconds: before the first poll, and between polls.
#[derive(Clone, Copy)]
pub(crate) struct Wait {
    pub(crate) pre_ns: u32,
    pub(crate) poll_ns: u32,
    /// Grids of fewer tiles look back without sleeping.
    pub(crate) min_tiles: usize,
}
impl Wait {
    /// No sleep at all.
    pub(crate) const NONE: Wait = Wait { pre_ns: 0, poll_ns: 0, min_tiles: 0 };
    /// The sleeps for this launch: none on grids of fewer than `min_tiles` tiles, where few tiles wait
    /// and a sleep would only add to the launch's time.
    #[inline(always)]
    pub(crate) fn for_grid(self) -> Wait {
        if (grid_dim().x as usize) < self.min_tiles { Wait::NONE } else { self }
    }
}

/// The word `read` reads, read again while it is not `published`, sleeping `poll_ns` between reads
/// (none with 0): after [`SPIN_LIMIT`] reads more than the first, the last word read is returned,
/// published or not (the caller then gives up).
#[inline(always)]
pub(crate) fn poll<W: Copy>(poll_ns: u32, published: impl Fn(W) -> bool, read: impl Fn() -> W) -> W {
    let mut spins = 0u32;
    loop {
        let word = read();
        if published(word) || spins >= SPIN_LIMIT {
            return word;
        }
        spins += 1;
        if poll_ns > 0 {
            nanosleep(poll_ns);
        }
    }
}
