//! The sort's status words: 32 bits per tile and digit, and the walk of one thread per digit over
//! them ([`crate::sort`] has the algorithm and its decision procedure).
//!
//! A word is 0 while unpublished, else `value + 1` with the prefix flag in bit 31 ([`FLAG_PREFIX`]):
//! a count (at most the sort's `MAX_LEN`) fits below it. The value travels in the word itself and
//! nothing else is published through it, so the words are written and read with volatile accesses
//! (`Strength::Volatile`), which order nothing (a release or an acquire would be a fence per digit
//! and tile). The words carry no epoch: a sort zeroes its state once, before its first pass.
//!
//! Owns: the word's layout and flag, the sort's publish and walk. Imports gpu-std and its sibling
//! [`super::wait`].
use gpu_std::GlobalMut;

use super::wait::{self, Access, ERROR_GAVE_UP, STATE_HEADER, Strength, poll};

/// Status flag (bit 31): the word holds the tile's inclusive prefix of its digit, not its count.
pub const FLAG_PREFIX: u32 = 1 << 31;
/// Status words a look-back step loads at once: the words of the [`WINDOW`] tiles before the
/// nearest not yet added, issued together, so that a walk over many tiles that have published only
/// their counts waits for the memory once per window instead of once per tile.
pub const WINDOW: usize = 8;

/// A status word: `value + 1`, with [`FLAG_PREFIX`] for an inclusive prefix.
#[inline(always)]
pub const fn status(prefix: bool, value: u32) -> u32 {
    (value + 1) | if prefix { FLAG_PREFIX } else { 0 }
}

/// Writes status word `at` of `state`.
#[inline(always)]
pub(crate) fn publish(state: GlobalMut<u32>, at: usize, word: u32, access: Access) {
    wait::store(state, at, word, Strength::Volatile, access)
}
#[inline(always)]
fn read_status(state: GlobalMut<u32>, at: usize, access: Access) -> u32 {
    wait::load(state, at, Strength::Volatile, access)
}

/// The exclusive prefix of digit `d` for tile `tile > 0` of the pass whose state starts at `at`, with
/// `stride` status words per tile (tile `i`'s word of digit `d` is `at + STATE_HEADER + i * stride +
/// d`): the counts of the tiles before it back to the nearest that published its
/// inclusive prefix, and that prefix. The words are loaded [`WINDOW`] at a time, then taken nearest
/// first; one not yet published is polled until it is (bounded: on giving up, sets the error word,
/// `state[1]`, and returns what it has).
#[inline(always)]
pub(crate) fn look_back(state: GlobalMut<u32>, at: usize, stride: usize, d: usize, tile: usize, access: Access) -> u32 {
    let mut excl = 0u32;
    let mut next = tile; // the tiles before `next` are not added yet
    loop {
        let mut words = [0u32; WINDOW];
        unrolled!(WINDOW, j => {
            if next > j {
                words[j] = read_status(state, at + STATE_HEADER + (next - 1 - j) * stride + d, access);
            }
        });
        let mut found = false;
        unrolled!(WINDOW, j => {
            if !found && next > j {
                let word_at = at + STATE_HEADER + (next - 1 - j) * stride + d;
                let word = poll!(from words[j], |w| w != 0, read_status(state, word_at, access));
                if word == 0 {
                    wait::give_up(state, ERROR_GAVE_UP);
                    return excl;
                }
                excl = excl.wrapping_add((word & !FLAG_PREFIX) - 1);
                found = word & FLAG_PREFIX != 0;
            }
        });
        if found {
            return excl;
        }
        if next <= WINDOW {
            // Tile 0 always publishes its prefix: the walk ended above.
            return excl;
        }
        next -= WINDOW;
    }
}
