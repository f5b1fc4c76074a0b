//! One pass of the radix sort: every key (and value) of a tile moved to its place by one digit, with
//! the tile's digit offsets found by decoupled look-back ([`super`] has the algorithm and the decision
//! procedure).
// The pairs' kernels take 8 parameters (keys, values, counts and state in and out, digits, pass).
#![allow(clippy::too_many_arguments)]
use gpu_std::block::sync_threads;
use gpu_std::kernel;
use gpu_std::thread::{block_dim, block_idx, thread_idx};
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE};
use gpu_std::{Global, GlobalMut};

use super::key::{SortKey, StageWord, ValueBits};
use super::tile::{Layout, PassKeys4, PassKeys8, PassPairs44, PassPairs48, PassPairs84, PassPairs88, exclusive_digits};
use super::{Digits, ITEMS, MAX_LEN, RADIX, RADIX_BITS, STATE_HEADER};
pub use crate::lookback::counted::WINDOW;
use crate::lookback::counted::{look_back, publish, status};
use crate::lookback::wait::Access;
use crate::tiles::tile_count;

/// Dynamic shared memory per block of the `u32` keys' pass and its variants (4-byte keys, no values).
pub const SHARED_BYTES_KEYS4: usize = PassKeys4::BYTES;
/// Dynamic shared memory per block of the pass of keys of `key_bytes` and values of `value_bytes` (0: no
/// values).
pub use super::tile::pass::shared_bytes;

/// How a tile takes its id and accesses the status words: the launchers' way, or a variant's.
#[derive(Clone, Copy)]
pub(crate) struct Variant {
    pub(crate) access: Access,
    /// Tile `blockIdx.x` instead of a ticket.
    pub(crate) block_idx: bool,
}
/// The launchers' variant: a ticket, strong stores and loads.
pub(crate) const CORRECT: Variant = Variant { access: Access::Strong, block_idx: false };

/// `x`, computed anew where it is used: on nvptx, through an empty `asm!` the compiler cannot see
/// through, so that it does not keep a value from an earlier use in a register across the barriers
/// between (the ranking's digits are the counting's: recomputing them from the keys is cheaper than
/// holding 20 more registers).
#[inline(always)]
fn fresh(x: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let y: u32;
        // SAFETY: an empty instruction sequence; `y` is `x`.
        unsafe {
            core::arch::asm!("mov.b32 {y}, {x};", y = out(reg32) y, x = in(reg32) x, options(pure, nomem, nostack))
        };
        y
    }
    #[cfg(not(target_arch = "nvptx64"))]
    x
}
/// [`fresh`] for a staged key of either width.
#[inline(always)]
fn fresh_key<W: StageWord>(k: W) -> W {
    if size_of::<W>() == 4 {
        return W::from_word(fresh(k.to_word() as u32) as u64);
    }
    #[cfg(target_arch = "nvptx64")]
    {
        let y: u64;
        // SAFETY: as in `fresh`.
        unsafe {
            core::arch::asm!("mov.b64 {y}, {x};", y = out(reg64) y, x = in(reg64) k.to_word(), options(pure, nomem, nostack))
        };
        W::from_word(y)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    k
}

/// One tile of pass `pass` (see [`super`]): `keys_in` (and `vals`' input) to `keys_out` (and its
/// output), stably by the pass's digit.
#[inline(always)]
pub(crate) fn sort_tile<K: SortKey, V: ValueBits, L: Layout>(
    keys_in: Global<K>,
    keys_out: GlobalMut<K>,
    vals: Option<(Global<V>, GlobalMut<V>)>,
    counts: Global<u32>,
    state: GlobalMut<u32>,
    digits: Digits,
    pass: u32,
    variant: Variant,
) {
    let threads = block_dim().x;
    let n = keys_in.len();
    // More threads than the launch bound never start (the launch is refused); the tile's shared
    // layout holds the bound's.
    if !threads.is_multiple_of(WARP_SIZE) || threads as usize > 32 * L::WARPS {
        panic!("sort passes are launched with a multiple of 32 threads, at most their launch bound");
    }
    if keys_out.len() != n || vals.is_some_and(|(i, o)| i.len() != n || o.len() != n) {
        panic!("sort: every key and value buffer must have as many elements as `keys_in`");
    }
    if pass >= digits.passes() || digits.end > K::BITS || counts.len() < (pass as usize + 1) * RADIX {
        panic!("sort: `pass` must be one of the bit range's passes, with its counts");
    }
    if n > MAX_LEN {
        panic!("sort: at most MAX_LEN keys");
    }
    // `tiles(n, threads)` and `pass_state_len(n, threads)` with one division, in 32 bits (`n` and the
    // tile's length are below 2^31).
    let tiles = tile_count!(n as u32, threads * ITEMS as u32) as usize;
    let pass_len = STATE_HEADER + tiles * RADIX;
    let at = pass as usize * pass_len;
    if state.len() < at + pass_len {
        panic!("sort: `state` must hold state_len(n, threads, passes) words");
    }
    let t = thread_idx().x as usize;
    // The lane is below 32; the `%` (one `and`) tells the compiler so, which keeps the indices built
    // from it (`lane + 32 * i`) in 32 bits.
    let (lane, w) = (warp::lane_id() % WARP_SIZE, warp::warp_id() as usize);
    let sh = L::views();

    // Each warp zeroes its counters; the barrier after the ticket orders that before every count.
    unrolled!(RADIX / 32, j => sh.warps.set(L::counter(w, 32 * j + lane as usize), 0));
    // The tile id: a ticket, in the order blocks start (or the variant's blockIdx.x).
    let tile = if variant.block_idx {
        sync_threads();
        block_idx().x as usize
    } else {
        if t == 0 {
            sh.tile.set(0, state.atomic(at).fetch_add(1));
        }
        sync_threads();
        sh.tile.get(0) as usize
    };
    if tile >= tiles {
        return;
    }
    let tile_len = threads as usize * ITEMS;
    let first = tile * tile_len;
    // Every tile but the last is full: its code has no check of which keys exist.
    if n - first >= tile_len {
        rank_and_move::<K, V, L, true>(keys_in, keys_out, vals, counts, state, digits, pass, variant, tile, at);
    } else {
        rank_and_move::<K, V, L, false>(keys_in, keys_out, vals, counts, state, digits, pass, variant, tile, at);
    }
}

/// The body of [`sort_tile`] for tile `tile` of the pass whose state starts at `at`, once the tile is
/// known (its counters zeroed, the barrier after the ticket passed); `FULL`: the tile has
/// `blockDim.x * ITEMS` keys.
#[inline(always)]
fn rank_and_move<K: SortKey, V: ValueBits, L: Layout, const FULL: bool>(
    keys_in: Global<K>,
    keys_out: GlobalMut<K>,
    vals: Option<(Global<V>, GlobalMut<V>)>,
    counts: Global<u32>,
    state: GlobalMut<u32>,
    digits: Digits,
    pass: u32,
    variant: Variant,
    tile: usize,
    at: usize,
) {
    let threads = block_dim().x;
    let n = keys_in.len();
    let t = thread_idx().x as usize;
    // The lane is below 32; the `%` (one `and`) tells the compiler so, which keeps the indices built
    // from it (`lane + 32 * i`) in 32 bits.
    let (lane, w) = (warp::lane_id() % WARP_SIZE, warp::warp_id() as usize);
    let sh = L::views();
    let tile_len = threads as usize * ITEMS;
    let first = tile * tile_len;
    let valid = if FULL { tile_len } else { tile_len.min(n - first) };
    let (shift, mask) = digits.pass(pass);
    // A descending sort flips the ordered bits: the digit of the flipped bits is the digit `^ mask`.
    let flip = if digits.descending { mask } else { 0 };
    // The digit of a key's ordered bits `o` (keys are held and staged as those bits).
    let digit = move |o: L::Key| ((o.to_word() >> shift) as u32 & mask ^ flip) as usize % RADIX;
    // A last tile's keys past the end are held as a key whose digit is the pass's highest (`mask`): they
    // come last in the tile's order, so they count, rank and stage after every real key, at the
    // positions `valid ..`, which are never written out; only the highest digit's published count
    // leaves them out.
    let missing = (tile_len - valid) as u32;
    let past_end = L::Key::from_word(if digits.descending { 0 } else { u64::MAX });

    // Load: lane `lane` of warp `w` holds keys seg + 32 i + lane, as their ordered bits.
    let seg = first + w * 32 * ITEMS;
    // The segment's keys that exist (all `32 * ITEMS` but in the last tile), and whether lane `lane`'s
    // key of step `i` is one of them.
    let room = if FULL {
        (32 * ITEMS) as u32
    } else if seg >= n {
        0
    } else {
        (n - seg).min(32 * ITEMS) as u32
    };
    let here = |i: usize| FULL || (32 * i) as u32 + lane < room;
    let mut keys = [L::Key::from_word(0); ITEMS];
    let ordered = |k: K| L::Key::from_word(k.ordered());
    if FULL {
        // One bounds check for the warp's whole segment.
        let raw: [K; ITEMS] = keys_in.get_strided(seg + lane as usize, 32);
        unrolled!(ITEMS, i => keys[i] = ordered(raw[i]));
    } else {
        unrolled!(ITEMS, i => {
            keys[i] = if here(i) { ordered(keys_in.get(seg + 32 * i + lane as usize)) } else { past_end };
        });
    }
    let digit_of = |i: usize| digit(keys[i]);
    // A pass whose keys all share one digit moves none of them: its count of that digit is `n`. Every
    // tile reads the same counts, so every tile writes its keys back to their own positions, and none
    // publishes or waits. The tile's first key names the digit; its load flies with the tile's. (No
    // key at all: tile 0 of an empty input, which publishes its empty counts as any tile.)
    let lone =
        (FULL || first < n) && counts.get(pass as usize * RADIX + digit(ordered(keys_in.get(first)))) == n as u32;

    // Early counts: each warp counts its keys' digits (shared-memory atomic adds), ...
    unrolled!(ITEMS, i => sh.warps.atomic(L::counter(w, digit_of(i))).add(1));
    sync_threads();
    if lone {
        return in_place::<K, V, L, FULL>(keys, keys_out, vals, seg, room);
    }
    // ... per digit the warps' counts add up to the tile's count, which tiles after the first publish
    // as their aggregate before they rank a key ...
    let nwarps = threads as usize / 32;
    let word_of = |d: usize| at + STATE_HEADER + tile * RADIX + d;
    let aggregate = |d: usize, total: u32| if d == mask as usize { total - missing } else { total };
    let mut d = t;
    while d < RADIX {
        let mut total = 0u32;
        unrolled!(L::WARPS, v => if v < nwarps {
            total += sh.warps.get(L::counter(v, d));
        });
        sh.count.set(d, total);
        if tile > 0 {
            publish(state, word_of(d), status(false, aggregate(d, total)), variant.access);
        }
        d += threads as usize;
    }
    sync_threads();
    // ... warp 0 scans the counts into the tile's digit starts (and, for tile 0, the pass's digit
    // offsets into `base`) ...
    if w == 0 {
        exclusive_digits(|d| sh.count.get(d), sh.start);
        if tile == 0 {
            exclusive_digits(|d| counts.get(pass as usize * RADIX + d), sh.base);
        }
    }
    sync_threads();
    // The keys' places, two per word (a place is below `L::TILE`, at most 2^16): the values need them
    // after the look-back, and 10 registers hold them instead of 20.
    const { assert!(L::TILE <= 1 << 16) };
    let mut places = [0u32; ITEMS.div_ceil(2)];
    let place = |places: &[u32; ITEMS.div_ceil(2)], i: usize| ((places[i / 2] >> (16 * (i % 2))) & 0xffff) as usize;
    // A tile whose keys all share one digit (every thread's first key's digit has the tile's count)
    // keeps their order: each key's place is its position, and no key is ranked.
    if sh.count.get(digit_of(0)) == tile_len as u32 {
        unrolled!(ITEMS, i => {
            let p = (w * 32 * ITEMS + 32 * i) as u32 + lane;
            places[i / 2] |= p << (16 * (i % 2));
            sh.keys.set((p as usize).min(L::TILE - 1), keys[i]);
        });
    } else {
        rank_and_stage::<L>(&keys, &mut places, digit);
    }
    // Only the packed words are kept (not the places the compiler still has in registers).
    let places = places.map(fresh);
    // Per digit: the exclusive prefix (look-back), the inclusive one published, and the base that
    // turns a staged position into the key's place in the output.
    let mut d = t;
    while d < RADIX {
        let excl = if tile == 0 { sh.base.get(d) } else { look_back(state, at, RADIX, d, tile, variant.access) };
        publish(state, word_of(d), status(true, excl.wrapping_add(aggregate(d, sh.count.get(d)))), variant.access);
        sh.base.set(d, excl.wrapping_sub(sh.start.get(d)));
        d += threads as usize;
    }
    sync_threads();
    // Out, in staged order: thread t takes positions t, t + threads, …; a key's place is its digit's
    // base plus its position. With values, each position's place is kept in its staged key's slot
    // (the thread's own slot: no other thread reads it before the barrier below).
    let place_of = |j: usize| {
        let o = sh.keys.get(j);
        (o, sh.base.get(digit(o)).wrapping_add(j as u32) as usize)
    };
    if FULL {
        // In batches of `BATCH`: the batch's loads first, then its stores after one bounds check.
        unrolled!(ITEMS / BATCH, b => {
            let mut to = [0usize; BATCH];
            let mut out = [K::from_ordered(0); BATCH];
            unrolled!(BATCH, u => {
                let j = ((b * BATCH + u) * threads as usize + t).min(L::TILE - 1);
                let (o, p) = place_of(j);
                (out[u], to[u]) = (K::from_ordered(o.to_word()), p);
                if vals.is_some() {
                    sh.keys.set(j, L::Key::from_word(p as u64));
                }
            });
            keys_out.scatter(to, out);
        });
    } else {
        // The last tile: a loop over the positions that exist.
        let mut j = t;
        while j < valid {
            let (o, p) = place_of(j);
            keys_out.set(p, K::from_ordered(o.to_word()));
            if vals.is_some() {
                sh.keys.set(j, L::Key::from_word(p as u64));
            }
            j += threads as usize;
        }
    }
    let Some((vals_in, vals_out)) = vals else { return };
    // Values, once the keys are out (their registers are free for them): loaded as the keys were,
    // staged at their keys' places, then written to the places their positions' slots hold.
    if FULL {
        let v: [V; ITEMS] = vals_in.get_strided(seg + lane as usize, 32);
        unrolled!(ITEMS, i => sh.vals.set(place(&places, i).min(L::TILE - 1), L::Value::from_word(v[i].to_word())));
    } else {
        // One value at a time (the last tile's code: fewer registers than all 20 in flight).
        unrolled!(ITEMS, i => {
            if here(i) {
                let v = vals_in.get(seg + 32 * i + lane as usize);
                sh.vals.set(place(&places, i).min(L::TILE - 1), L::Value::from_word(v.to_word()));
            }
        });
    }
    sync_threads();
    if FULL {
        unrolled!(ITEMS / BATCH, b => {
            let mut to = [0usize; BATCH];
            let mut out = [V::from_word(0); BATCH];
            unrolled!(BATCH, u => {
                let j = ((b * BATCH + u) * threads as usize + t).min(L::TILE - 1);
                (out[u], to[u]) = (V::from_word(sh.vals.get(j).to_word()), sh.keys.get(j).to_word() as usize);
            });
            vals_out.scatter(to, out);
        });
    } else {
        let mut j = t;
        while j < valid {
            vals_out.set(sh.keys.get(j).to_word() as usize, V::from_word(sh.vals.get(j).to_word()));
            j += threads as usize;
        }
    }
}

/// Ranks and stages a tile's keys (once the barrier after the digit starts has passed): per digit the
/// warps' counts become their places, and at each step the lanes with the same digit find each other
/// (`match_bits`), the highest of them takes their places from the warp's counter (an atomic add of
/// their number) and hands the first to its peers (a shuffle); a key's place is that plus its peers
/// below it. Each key is written to its place in `keys` of the tile's shared memory, and its place
/// into `places` (two to a word).
#[inline(always)]
fn rank_and_stage<L: Layout>(
    keys: &[L::Key; ITEMS],
    places: &mut [u32; ITEMS.div_ceil(2)],
    digit: impl Fn(L::Key) -> usize,
) {
    let threads = block_dim().x as usize;
    let t = thread_idx().x as usize;
    let (lane, w) = (warp::lane_id() % WARP_SIZE, warp::warp_id() as usize);
    let sh = L::views();
    // Per digit the warps' counts become their places: warp `v`'s counter of a digit holds the place
    // in the tile of its first key of that digit (the digit's start plus the warps' before it).
    let mut d = t;
    while d < RADIX {
        let mut run = sh.start.get(d);
        unrolled!(L::WARPS, v => if v < threads / 32 {
            let c = sh.warps.get(L::counter(v, d));
            sh.warps.set(L::counter(v, d), run);
            run += c;
        });
        d += threads;
    }
    sync_threads();
    let below = (1u32 << lane) - 1;
    unrolled!(ITEMS, i => {
        let d = digit(fresh_key(keys[i]));
        let peers = warp::match_bits(FULL_MASK, d as u32, RADIX_BITS);
        let highest = 31 - peers.leading_zeros();
        let mut first = 0u32;
        if lane == highest {
            first = sh.warps.atomic(L::counter(w, d)).fetch_add(peers.count_ones());
        }
        let p = warp::shfl_idx(FULL_MASK, first, highest) + (peers & below).count_ones();
        places[i / 2] |= p << (16 * (i % 2));
        sh.keys.set((p as usize).min(L::TILE - 1), keys[i]);
        // This step's atomic add comes before the next step's on the same counter, whichever lanes
        // make them (atomics on one address are ordered, but not by lane: the barrier orders them).
        warp::sync_warp(FULL_MASK);
    });
}

/// The tile of a pass whose keys all share one digit: lane `lane` of each warp writes its keys (held as
/// their ordered bits, from positions `seg + 32 i + lane`) back to those positions, and moves the
/// values there alike; `room`: the segment's keys that exist.
#[inline(always)]
fn in_place<K: SortKey, V: ValueBits, L: Layout, const FULL: bool>(
    keys: [L::Key; ITEMS],
    keys_out: GlobalMut<K>,
    vals: Option<(Global<V>, GlobalMut<V>)>,
    seg: usize,
    room: u32,
) {
    let lane = warp::lane_id() % WARP_SIZE;
    let at = seg + lane as usize;
    let key = |i: usize| K::from_ordered(keys[i].to_word());
    if FULL {
        keys_out.set_strided::<ITEMS>(at, 32, core::array::from_fn(key));
        if let Some((vals_in, vals_out)) = vals {
            let v: [V; ITEMS] = vals_in.get_strided(at, 32);
            vals_out.set_strided(at, 32, v);
        }
    } else {
        unrolled!(ITEMS, i => {
            if (32 * i) as u32 + lane < room {
                keys_out.set(at + 32 * i, key(i));
                if let Some((vals_in, vals_out)) = vals {
                    vals_out.set(at + 32 * i, vals_in.get(at + 32 * i));
                }
            }
        });
    }
}

/// Keys (or values) a thread writes out of a full tile after one bounds check: [`ITEMS`] in batches,
/// so that a batch's shared-memory loads are all issued before its global stores.
const BATCH: usize = 5;
const _: () = assert!(ITEMS.is_multiple_of(BATCH));

/// The kernels of one key type: keys only, and with 4-byte and 8-byte values. 4-byte keys, alone or
/// with 4-byte values, take two blocks of 384 threads per SM (at most 80 registers); 8-byte keys or
/// values, which would spill at 80, two blocks of 256 threads (at most 128): [`super::pass_block`].
macro_rules! sort_kernels {
    ($($k:ty, $lk:ident, $l4:ident, $l8:ident, $keys_block:literal: $keys:ident, $pairs4:ident, $pairs8:ident;)*) => {$(
        kernel! {
            #[doc = concat!("Pass `pass` of the sort of `", stringify!($k), "` keys by the bits and direction `digits` \
              names ([`Digits::to_arg`]): `keys_in` to `keys_out`, stably by the pass's digit. Launch: `pass_block(key bytes, value bytes)` \
              threads (any multiple of 32 up to that), `shared_bytes(key bytes, value bytes)` bytes, `tiles(n, threads)` \
              blocks; `counts` holds the histogram's `passes * 256` counts; `state` holds \
              `state_len(n, threads, passes)` words, zeroed before the sort's first pass. After the launch the \
              sort's error word `state[1]` is `ERROR_GAVE_UP` if a tile of any pass gave up waiting (the output \
              is then wrong).")]
            #[launch_bounds($keys_block, 2)]
            pub fn $keys<'a>(keys_in: Global<'a, $k>, keys_out: GlobalMut<'a, $k>, counts: Global<'a, u32>,
                state: GlobalMut<'a, u32>, digits: u32, pass: u32) {
                let digits = Digits::from_arg(digits);
                sort_tile::<$k, u32, $lk>(keys_in, keys_out, None, counts, state, digits, pass, CORRECT)
            }
        }
        kernel! {
            #[doc = concat!("[`", stringify!($keys), "`] with 4-byte values moved with their keys.")]
            #[launch_bounds($keys_block, 2)]
            pub fn $pairs4<'a>(keys_in: Global<'a, $k>, keys_out: GlobalMut<'a, $k>, vals_in: Global<'a, u32>,
                vals_out: GlobalMut<'a, u32>, counts: Global<'a, u32>, state: GlobalMut<'a, u32>, digits: u32, pass: u32) {
                let digits = Digits::from_arg(digits);
                sort_tile::<$k, u32, $l4>(keys_in, keys_out, Some((vals_in, vals_out)), counts, state, digits, pass, CORRECT)
            }
        }
        kernel! {
            #[doc = concat!("[`", stringify!($keys), "`] with 8-byte values moved with their keys.")]
            #[launch_bounds(256, 2)]
            pub fn $pairs8<'a>(keys_in: Global<'a, $k>, keys_out: GlobalMut<'a, $k>, vals_in: Global<'a, u64>,
                vals_out: GlobalMut<'a, u64>, counts: Global<'a, u32>, state: GlobalMut<'a, u32>, digits: u32, pass: u32) {
                let digits = Digits::from_arg(digits);
                sort_tile::<$k, u64, $l8>(keys_in, keys_out, Some((vals_in, vals_out)), counts, state, digits, pass, CORRECT)
            }
        }
    )*};
}
sort_kernels! {
    u32, PassKeys4, PassPairs44, PassPairs48, 384: sort_keys_u32, sort_pairs4_u32, sort_pairs8_u32;
    i32, PassKeys4, PassPairs44, PassPairs48, 384: sort_keys_i32, sort_pairs4_i32, sort_pairs8_i32;
    f32, PassKeys4, PassPairs44, PassPairs48, 384: sort_keys_f32, sort_pairs4_f32, sort_pairs8_f32;
    u64, PassKeys8, PassPairs84, PassPairs88, 256: sort_keys_u64, sort_pairs4_u64, sort_pairs8_u64;
    i64, PassKeys8, PassPairs84, PassPairs88, 256: sort_keys_i64, sort_pairs4_i64, sort_pairs8_i64;
    f64, PassKeys8, PassPairs84, PassPairs88, 256: sort_keys_f64, sort_pairs4_f64, sort_pairs8_f64;
}
