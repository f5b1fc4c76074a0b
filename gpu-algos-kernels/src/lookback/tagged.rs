//! The scan's status words: 64 bits per tile, tagged with the launch's *epoch*, and the warp-wide walk
//! over them ([`crate::scan`] has the algorithm and its decision procedure).
//!
//! A word holds the flag ([`FLAG_AGGREGATE`] or [`FLAG_PREFIX`]) and the launch's epoch in its high
//! half (`epoch * 4 + flag`); for 4-byte elements the value's bits are the low half, so no reader can
//! see a flag without its value. For 8-byte elements the value cannot share the word: each tile has
//! two value words after its status word, one per flag, each written with a plain store before the
//! release store of the flag that announces it, and read with a plain load after the acquire load
//! that saw that flag. A word holding another epoch (or zero) is not published yet: the words need no
//! zeroing between launches, only a new epoch per launch ([`Epochs`]).
//!
//! Owns: the word's layout and flags, epochs, the scan's publish and walk. Imports gpu-std,
//! [`crate::element`], [`crate::warp`] and its sibling [`super::wait`].
use gpu_std::GlobalMut;
use gpu_std::fence::nanosleep;
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE};

use super::wait::{self, Access, STATE_HEADER, Strength, Wait, poll};
use crate::element::{Element, ScanValue};

/// Status flag: the word holds the tile's aggregate.
pub const FLAG_AGGREGATE: u64 = 1;
/// Status flag: the word holds the tile's inclusive prefix.
pub const FLAG_PREFIX: u64 = 2;
/// The largest epoch a launch may be tagged with (the status word's high half holds `epoch * 4 + flag`).
pub const MAX_EPOCH: u32 = (1 << 30) - 1;
/// `state[1]` after a launch in which some tile gave up waiting ([`wait::ERROR_GAVE_UP`] in 64 bits).
pub const ERROR_GAVE_UP: u64 = wait::ERROR_GAVE_UP as u64;

/// The epoch tags of successive launches on one `state`, so that it need not be zeroed before each:
/// 1, 2, …, [`MAX_EPOCH`], then the state is zeroed once and the tags start again at 1.
///
/// ```
/// use gpu_algos_kernels::scan::{Epochs, MAX_EPOCH};
/// let mut e = Epochs::new(); // for a state that is all zero now
/// assert_eq!(e.advance(), (1, false));
/// assert_eq!(e.advance(), (2, false));
/// let mut e = Epochs::after(MAX_EPOCH);
/// assert_eq!(e.advance(), (1, true)); // zero the state, then launch with epoch 1
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Epochs {
    last: u32,
}
impl Epochs {
    /// Tags for a state whose words are all zero.
    pub const fn new() -> Self {
        Epochs { last: 0 }
    }
    /// Tags for a state last launched on with epoch `last` (and never with a later one since it was
    /// zeroed).
    pub const fn after(last: u32) -> Self {
        Epochs { last }
    }
    /// The next launch's epoch, and whether the state must be zeroed before that launch (when the tags
    /// start again).
    pub fn advance(&mut self) -> (u32, bool) {
        if self.last >= MAX_EPOCH {
            self.last = 1;
            (1, true)
        } else {
            self.last += 1;
            (self.last, false)
        }
    }
}

/// Status-and-value words per tile: 1 for 4-byte elements (the value shares the status word), 3 for
/// 8-byte ones (the status word, the aggregate, the inclusive prefix).
pub const fn words_per_tile<T: Element>() -> usize {
    if T::WIDE { 3 } else { 1 }
}

/// A status word of a launch tagged `epoch`: `epoch * 4 + flag` in the high half, and for 4-byte
/// elements the value's bits in the low half (8-byte elements keep theirs in the tile's value words).
#[inline(always)]
pub fn pack<T: ScanValue>(flag: u64, epoch: u32, v: T) -> u64 {
    let low = if T::WIDE { 0 } else { v.to_word() };
    ((((epoch as u64) << 2) | flag) << 32) | low
}
/// The flag of `word` for a launch tagged `epoch`: 0 (not published) if another launch wrote it.
#[inline(always)]
fn flag_of(word: u64, epoch: u32) -> u64 {
    let hi = (word >> 32) as u32;
    if hi >> 2 == epoch { (hi & 3) as u64 } else { 0 }
}
/// Where tile `tile`'s status word is in `state`; for 8-byte elements its aggregate and inclusive
/// prefix follow it (at `+ FLAG_AGGREGATE` and `+ FLAG_PREFIX`).
#[inline(always)]
fn status_index<T: ScanValue>(tile: usize) -> usize {
    STATE_HEADER + words_per_tile::<T>() * tile
}
/// The value that `word` (tile `tile`'s status word, published: its flag is not 0) announces: its low
/// half, or for 8-byte elements the value word of its flag, read after the acquire that saw the flag.
#[inline(always)]
fn value_of<T: ScanValue>(state: GlobalMut<u64>, tile: usize, word: u64, epoch: u32) -> T {
    if T::WIDE {
        T::from_word(state.get(status_index::<T>(tile) + flag_of(word, epoch) as usize))
    } else {
        T::from_word(word & 0xffff_ffff)
    }
}

/// Publishes `v` with `flag` for tile `tile`: for 8-byte elements the value word first (a plain store),
/// then the status word (a release store, which orders the value's store before it).
#[inline(always)]
pub(crate) fn publish<T: ScanValue>(state: GlobalMut<u64>, tile: usize, flag: u64, epoch: u32, v: T, access: Access) {
    let at = status_index::<T>(tile);
    if T::WIDE {
        state.set(at + flag as usize, v.to_word());
    }
    wait::store(state, at, pack(flag, epoch, v), Strength::ReleaseAcquire, access);
}
#[inline(always)]
fn read_status<T: ScanValue>(state: GlobalMut<u64>, tile: usize, access: Access) -> u64 {
    wait::load(state, status_index::<T>(tile), Strength::ReleaseAcquire, access)
}

/// Warp 0's look-back for tile `tile > 0` with aggregate `aggregate`: publishes the aggregate, finds the
/// exclusive prefix (every lane gets it), publishes the inclusive prefix. On giving up, sets the error
/// word and returns the prefix found so far.
///
/// The window: lane `l` reads tile `tile - 1 - l`, polling until its word is published, and
/// `vote.ballot` finds the nearest tile of the window that has its inclusive prefix: the exclusive
/// prefix is that prefix plus the aggregates of the tiles in between (a butterfly). If no tile of the
/// window has its prefix, the window's 32 aggregates are added and the window moves 32 tiles back.
///
/// The wait: after publishing its aggregate the warp sleeps `pre_ns` before its first poll (by then the
/// tiles before it have usually published, so the first poll mostly ends the search; polling earlier
/// only adds traffic to the status words' cache lines and issue slots the loading warps could use),
/// then each lane polls its tile's word, sleeping `poll_ns` between polls. (Polling the window as a
/// warp, with a vote per poll, and stopping once the tiles up to the nearest inclusive prefix are
/// published measured no faster on an H200, and a vote in a spin loop would hide the spin from the
/// emulator's livelock detection.)
#[inline(always)]
pub(crate) fn look_back<T: ScanValue>(
    state: GlobalMut<u64>,
    epoch: u32,
    tile: usize,
    aggregate: T,
    access: Access,
    wait: Wait,
) -> T {
    let lane = warp::lane_id() as usize;
    if lane == 0 {
        publish(state, tile, FLAG_AGGREGATE, epoch, aggregate, access);
    }
    if wait.pre_ns > 0 {
        nanosleep(wait.pre_ns);
    }
    let mut prefix = T::zero();
    // The window: tiles hi, hi - 1, …, hi - 31 (lane l reads tile hi - l); tiles below 0 read as an
    // inclusive prefix of zero, so every window from tile 0 on ends the search.
    let mut hi = tile as isize - 1;
    loop {
        let me = hi - lane as isize;
        let mut word = pack(FLAG_PREFIX, epoch, T::zero());
        let mut value = T::zero();
        if me >= 0 {
            // Each lane waits for its own tile's word (bounded), then the warp meets at the votes.
            word = poll!(|w| flag_of(w, epoch) != 0, read_status::<T>(state, me as usize, access), wait.poll_ns);
            if flag_of(word, epoch) != 0 {
                value = value_of::<T>(state, me as usize, word, epoch);
            }
        }
        if warp::any(FULL_MASK, flag_of(word, epoch) == 0) {
            if lane == 0 {
                wait::give_up(state, ERROR_GAVE_UP);
            }
            return prefix;
        }
        let prefixes = warp::ballot(FULL_MASK, flag_of(word, epoch) == FLAG_PREFIX);
        if prefixes != 0 {
            // The nearest tile with its inclusive prefix, and the aggregates of the tiles after it.
            let nearest = prefixes.trailing_zeros() as usize;
            let v = if lane <= nearest { value } else { T::zero() };
            prefix = T::add(crate::warp::reduce(v, T::add), prefix);
            break;
        }
        prefix = T::add(crate::warp::reduce(value, T::add), prefix);
        hi -= WARP_SIZE as isize;
    }
    if lane == 0 {
        publish(state, tile, FLAG_PREFIX, epoch, T::add(prefix, aggregate), access);
    }
    prefix
}
