//! What the look-back's two word formats share: the state's header, how a status word is written and
//! read, the sleeps between polls, and the bounded poll itself.
//!
//! Owns: [`STATE_HEADER`] and the error word, and (for this crate) `Access`, `Strength`, `Wait`
//! and the `poll!` loop.
//! Imports gpu-std only.
use gpu_std::GlobalMut;
use gpu_std::atomic::{Atomic, AtomicInt};
#[cfg(doc)]
use gpu_std::spin::SPIN_LIMIT;
use gpu_std::thread::grid_dim;

/// `state` words before the status words: the ticket (`state[0]`) and the error word (`state[1]`).
pub const STATE_HEADER: usize = 2;
/// Where the error word is in `state`.
pub const ERROR_WORD: usize = 1;
/// The error word after a launch in which some tile gave up waiting.
pub const ERROR_GAVE_UP: u32 = 1;

/// How the status words are written and read: with the format's strong accesses (the launchers'), or
/// one side plain (a racy variant's, which the emulator reports).
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

/// Sets the error word of `state` to say that a tile gave up waiting: `error` is [`ERROR_GAVE_UP`] in
/// the state's word type (passed in, not converted here: a conversion inside cost the sort's pass some
/// 16 instructions).
#[inline(always)]
pub(crate) fn give_up<W: AtomicInt>(state: GlobalMut<W>, error: W) {
    state.atomic(ERROR_WORD).fetch_or(error);
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
    /// The sleeps for this launch: none on grids of fewer than `min_tiles` tiles, where few tiles wait
    /// and a sleep would only add to the launch's time.
    #[inline(always)]
    pub(crate) fn for_grid(self) -> Wait {
        // Written field by field, not as a named constant: the compiler then keeps the two sleeps
        // apart (from a constant, it selected both at once as one 64-bit word, a few instructions more).
        if (grid_dim().x as usize) < self.min_tiles { Wait { pre_ns: 0, poll_ns: 0, min_tiles: 0 } } else { self }
    }
}

/// The bounded poll: the status word `$read` reads, read anew while it is not published
/// (`$published`, with the word bound to `$w`), sleeping `$poll_ns` nanoseconds between reads (none
/// with 0), at most [`SPIN_LIMIT`] times more; after that the last word read is the result, published
/// or not (the caller then gives up). `from $word`: the first word is `$word`, loaded before (the sort
/// loads a window of words at once), every poll reads anew, and none sleeps (the sort's never did).
///
/// A macro, not a function: written out in the walk, the loop compiles to the code of one written
/// there by hand, where through an (always inlined) function the compiler laid out the sort's pass
/// differently (some 20 more instructions per kernel).
macro_rules! poll {
    (|$w:ident| $published:expr, $read:expr, $poll_ns:expr) => {{
        let poll_ns: u32 = $poll_ns;
        let mut spins = 0u32;
        loop {
            let word = $read;
            if {
                let $w = word;
                $published
            } || spins >= ::gpu_std::spin::SPIN_LIMIT
            {
                break word;
            }
            spins += 1;
            if poll_ns > 0 {
                ::gpu_std::fence::nanosleep(poll_ns);
            }
        }
    }};
    (from $word:expr, |$w:ident| $published:expr, $read:expr) => {{
        let mut word = $word;
        let mut spins = 0u32;
        while {
            let $w = word;
            !$published
        } && spins < ::gpu_std::spin::SPIN_LIMIT
        {
            spins += 1;
            word = $read;
        }
        word
    }};
}
pub(crate) use poll;
