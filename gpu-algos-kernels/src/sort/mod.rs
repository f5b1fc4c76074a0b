//! A stable device-wide LSD radix sort of keys, or of keys with values, in one pass over the data per
//! 8-bit digit (the *onesweep* scheme: Adinets and Merrill, 2022), built from the chapter's tools.
//!
//! **Keys.** `u32`, `i32`, `u64`, `i64`, `f32`, `f64`, sorted by their bits in sort order
//! ([`SortKey::ordered`]: signed integers in two's complement order, floats in IEEE 754 total
//! order), ascending, or descending by flipping those bits; only bits `begin_bit .. end_bit` take
//! part ([`Digits`]). Values (4 or 8 bytes) move with their keys. Equal keys keep their input order
//! (stable), ascending and descending alike.
//!
//! **Passes.** One launch of [`histogram`] reads the keys once and counts, for every 8-bit digit
//! position (every *pass*), how many keys have each of the 256 digits. Then one launch of
//! [`onesweep`] per pass moves every key (and value) from one buffer to the other, stably by that
//! pass's digit. A tile of `blockDim.x * ITEMS` keys:
//! 1. takes its tile id from a ticket (an atomic counter), so that it only ever waits for tiles drawn
//!    before it, by blocks already running (forward progress on any grid);
//! 2. *counts* its keys' digits first (*early counts*): warp `w` owns a contiguous segment of the
//!    tile and holds it 32 keys at a time (lane `l` holds key `32 i + l` of step `i`); each lane adds
//!    1 to its warp's shared counter of each key's digit (a shared-memory atomic add, which the
//!    hardware merges per address within a warp). A pass whose keys all have one digit would move
//!    none: the tile reads the histogram's count of its first key's digit, and when that is `n` it
//!    writes its keys (and values) back to their own positions, after the counting's barrier, and
//!    is done. Every tile reads the same counts, so every tile of such a pass does so, and none
//!    publishes or waits;
//! 3. sums the warps' counters per digit and publishes the tile's 256 digit counts as *aggregates*
//!    in its status words, before it ranks a key, so that the tiles after it can look past it early;
//!    warp 0 scans the counts into the tile's digit starts, and per digit the warps' counts become
//!    their places (the digit's start plus the counts of the warps before): the warp's counter of a
//!    digit is now the place in the tile of its next key of that digit;
//! 4. *ranks and stages* its keys (a tile whose keys share one digit, that digit's count being the
//!    tile's, ranks none: each key's place is its position), step by step: the lanes with the same
//!    digit find each other with `warp::match_bits` (a ballot of the lanes present, then one
//!    `vote.ballot` per digit bit), the highest of them takes their places with one atomic add of
//!    their number to the warp's counter and hands the first place to its peers with a shuffle; a
//!    key's place is that plus its peers below it, and the key is written there in shared memory at
//!    once, so that the keys of one digit lie together in input order;
//! 5. finds, per digit (one thread per digit), where its keys of that digit go: by *decoupled
//!    look-back* over the status words of the tiles before it, adding aggregates until it meets a tile
//!    that has published its *inclusive prefix*; tile 0's prefixes are the digit offsets of the pass
//!    (the exclusive scan of the histogram's counts). It then publishes its own inclusive prefixes;
//! 6. writes the tile out from shared memory in staged order: consecutive threads write consecutive
//!    addresses of one digit's run. With values, each position's output place goes back into its
//!    key's slot (the writing thread's own); the values are loaded only then, when the keys'
//!    registers are free, staged at their keys' places (kept two to a register since the ranking),
//!    and written to the places the slots hold.
//!
//! Every tile but the last is *full* (`blockDim.x * ITEMS` keys): its code is compiled apart, with no
//! check of which keys exist, and a warp loads its segment with one bounds check
//! (`Global::get_strided`) and writes it out in batches under one bounds check each
//! (`GlobalMut::scatter`); the last tile's code holds the keys past the end as a key of the pass's
//! highest digit (counted, ranked and staged after every real key, at positions never written out).
//!
//! **Status words.** 32 bits per tile and digit: 0 while unpublished, else `value + 1` with the
//! prefix flag in bit 31 ([`FLAG_PREFIX`]); a value (a count, at most `n`) is below `2^31 - 1`
//! ([`MAX_LEN`]). The words of all passes are zeroed once per sort, before its first pass; each pass
//! has its own ([`state_len`]): a ticket, a word left for the error, then `tiles * 256` status words;
//! the error word of the whole sort is the first pass's (`state[1]`).
//!
//! Decision procedure (§5.7): (1) tiles cross blocks and a tile waits for others, so tile ids come
//! from an atomic ticket in start order, not `blockIdx` (the variant `sort_blockidx_u32` takes
//! `blockIdx.x`: a livelock report on the emulator when fewer blocks are resident than the grid
//! has); (2) a status word is written by one block and polled by others: every access to it is a
//! strong one (`st.volatile` to publish, `ld.volatile` to poll: relaxed at system scope in the PTX
//! memory model), so the two never race (the variants `sort_no_release_u32` and `sort_no_acquire_u32`
//! make one side plain: a data race the emulator reports); the value travels in the word itself and
//! nothing else is published through it, so no release or acquire is needed (each would be a fence
//! per digit and tile); the polls are
//! bounded ([`SPIN_LIMIT`](gpu_std::spin::SPIN_LIMIT)) and a tile that gives up sets the sort's error word, which the host
//! checks; a pass whose keys share one digit publishes no word, and no tile of it polls one: each
//! tile decides so from the histogram's counts, which every tile reads alike (see (4)); (3) within a
//! block, the warp counters, digit counts, starts and the staged tile cross
//! threads through shared memory between barriers, and within a warp the ranking's counter of a
//! digit is updated by one atomic add per step (the highest of its peers), and a `bar.warp.sync`
//! after each step orders that add before the next step's (atomics on one address never race, but
//! the ranks need this step's to come first); (4) the
//! histogram's counts and each pass's output are read by later launches (a launch boundary orders
//! them); whether a tile's keys share one digit is read from the tile's digit counts after the
//! barrier that follows their sums.
pub mod histogram;
pub mod key;
pub mod onesweep;
pub mod small;
mod small_shape;
pub mod tile;
pub mod variants;

pub use key::{SortKey, StageWord, ValueBits};

/// Digits per pass: 8 bits.
pub const RADIX_BITS: u32 = 8;
/// Digit values.
pub const RADIX: usize = 1 << RADIX_BITS;
/// Most passes (64-bit keys).
pub const MAX_PASSES: usize = 8;
/// Most keys a sort takes: a status word holds a count up to `2^31 - 2` beside its flag.
pub const MAX_LEN: usize = (1 << 31) - 2;
/// Keys per thread of a pass's tile.
pub const ITEMS: usize = 20;
/// Threads per block of the pass of 4-byte keys, alone or with 4-byte values (the launchers'): tiles
/// of 7680 keys, two blocks per SM of at most 80 registers per thread. The passes take any multiple of
/// 32 up to their launch bounds ([`pass_block`]).
pub const BLOCK: u32 = 384;
/// Threads per block of the passes of 8-byte keys and of 8-byte values, which need more registers:
/// two blocks of 256 threads per SM (tiles of 5120 keys).
pub const WIDE_BLOCK: u32 = 256;
/// The launchers' threads per block of the pass of keys of `key_bytes` and values of `value_bytes`
/// (0: keys alone), which is also the pass kernel's launch bound and the block its shared memory is
/// laid out for.
pub const fn pass_block(key_bytes: usize, value_bytes: usize) -> u32 {
    if key_bytes == 4 && value_bytes <= 4 { BLOCK } else { WIDE_BLOCK }
}
// The status words' format and the state's header are the look-back's (`crate::lookback`).
pub use crate::lookback::counted::{FLAG_PREFIX, status};
/// The sort's error word (`state[1]`) after a launch in which some tile gave up waiting.
pub use crate::lookback::wait::ERROR_GAVE_UP;
/// Words of a pass's state before its status words: the ticket and the error word (used in the first
/// pass's only: `state[1]` is the whole sort's).
pub use crate::lookback::wait::STATE_HEADER;

/// The bit range a sort orders by and its direction; the passes it takes, and each pass's digit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digits {
    /// First bit (of [`SortKey::ordered`]) that takes part.
    pub begin: u32,
    /// One past the last bit.
    pub end: u32,
    /// Descending order: the ordered bits flipped.
    pub descending: bool,
}
impl Digits {
    /// Bits `begin .. end`, ascending or descending.
    pub const fn new(begin: u32, end: u32, descending: bool) -> Digits {
        Digits { begin, end, descending }
    }
    /// The kernels' argument: `begin | end << 8 | descending << 16`.
    pub const fn to_arg(self) -> u32 {
        self.begin | self.end << 8 | (self.descending as u32) << 16
    }
    /// The range a kernel's argument names ([`Digits::to_arg`]).
    #[inline(always)]
    pub const fn from_arg(a: u32) -> Digits {
        Digits { begin: a & 0xff, end: (a >> 8) & 0xff, descending: (a >> 16) & 1 != 0 }
    }
    /// Passes of 8 bits (the last may have fewer): `ceil((end - begin) / 8)`, 0 for an empty range.
    #[inline(always)]
    pub const fn passes(self) -> u32 {
        if self.end > self.begin { (self.end - self.begin).div_ceil(RADIX_BITS) } else { 0 }
    }
    /// Pass `p`'s shift and digit mask.
    #[inline(always)]
    pub const fn pass(self, p: u32) -> (u32, u32) {
        let shift = self.begin + RADIX_BITS * p;
        let bits = if self.end - shift < RADIX_BITS { self.end - shift } else { RADIX_BITS };
        (shift, (1u32 << bits) - 1)
    }
}

/// Tiles of `n` keys on blocks of `block` threads; at least 1.
pub const fn tiles(n: usize, block: u32) -> usize {
    crate::tiles::count(n, block as usize * ITEMS)
}
/// Words of one pass's state for `n` keys on blocks of `block` threads.
pub const fn pass_state_len(n: usize, block: u32) -> usize {
    STATE_HEADER + tiles(n, block) * RADIX
}
/// Words of the state of a sort of `passes` passes (each pass's after the one before).
pub const fn state_len(n: usize, block: u32, passes: u32) -> usize {
    passes as usize * pass_state_len(n, block)
}
