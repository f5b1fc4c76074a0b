//! The sort of an input that fits one tile (at most [`SMALL_MAX_LEN`] keys), in one launch of one
//! block: every pass in shared memory, no histogram, no status words, no look-back. Each pass ranks
//! the block's keys as a pass of [`super::onesweep`] ranks a tile's (warp ranking by `warp::match_bits`, the
//! warps' counts summed per digit, warp 0 scanning them into the digit starts), stages each key (and
//! value) at its place in shared memory, and reads them back in that order for the next pass; the
//! last pass writes the staged tile out in order, consecutive threads to consecutive addresses. A
//! pass whose keys all have one digit (the digit of the key first in the current order) moves none
//! and is skipped: the block learns it from one `bar.red.and` of each thread's "all my keys have
//! it" (`sync_threads_and`), which is also the barrier between one pass's reads of the staged tile
//! and the next pass's writes. When no pass ranked, the keys are written out from registers.
//!
//! Decision procedure (§5.7): one block, so nothing crosses blocks; keys, counters, starts and the
//! staged tile cross threads through shared memory between barriers, and within a warp the ranking's
//! counter of a digit is read by its peers and written by one of them, `bar.warp.sync` between;
//! whether a pass moves no key is a block-wide vote, the same answer in every thread.
use gpu_std::block::{sync_threads, sync_threads_and};
use gpu_std::shared::SharedSlice;
use gpu_std::thread::{block_dim, thread_idx};
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE};
use gpu_std::{Global, GlobalMut, kernel};

use super::key::{SortKey, StageWord, ValueBits};
use super::tile::{
    Layout, SmallKeys4, SmallKeys8, SmallPairs44, SmallPairs48, SmallPairs84, SmallPairs88, Views, digit_totals,
    exclusive_digits,
};
use super::{Digits, RADIX, RADIX_BITS};

pub use super::small_shape::{ITEMS, MAX_BLOCK, MAX_TILE, MAX_WARPS, SMALL_MAX_LEN};
/// Dynamic shared memory of the one-block sort of keys of `key_bytes` and values of `value_bytes`
/// (0: no values).
pub use super::tile::small::shared_bytes;

/// Threads of the one-block sort of `n` keys: the fewest multiple of 32 (at least 32) whose tile of
/// `ITEMS` keys per thread holds them.
pub const fn block_for(n: usize) -> u32 {
    let warps = n.div_ceil(32 * ITEMS);
    let warps = if warps == 0 { 1 } else { warps };
    (warps * 32) as u32
}

/// Sorts `keys_in` (and `vals`' input) into `keys_out` (and its output) by every pass of `digits`.
/// A key's rank among its warp's keys of its digit, with the digit: `rank | digit << 16`.
#[derive(Clone, Copy)]
struct Ranked(u32);
impl Ranked {
    #[inline(always)]
    fn digit(self) -> usize {
        (self.0 >> 16) as usize % RADIX
    }
    #[inline(always)]
    fn rank(self) -> u32 {
        self.0 & 0xffff
    }
}

/// Ranks warp `w`'s keys of one step after another (`digit(i)`: the digit of this lane's key of step
/// `i`, below [`RADIX`]): the warp's counters (`warps[L::counter(w, 0) ..][.. 256]`) are zeroed, then at
/// each step the lanes with the same digit find each other (`warp::match_bits`), each reads its
/// digit's count, and after a warp barrier the highest adds their number to it; a key's rank is that
/// count plus its peers below it: its place among the warp's keys of its digit, in step-then-lane
/// order. The counters end as the warp's digit counts.
#[inline(always)]
fn rank_in_warp<L: Layout>(warps: SharedSlice<u32>, w: usize, digit: impl Fn(usize) -> usize) -> [Ranked; ITEMS] {
    let lane = warp::lane_id();
    unrolled!(RADIX / 32, j => warps.set(L::counter(w, 32 * j + lane as usize), 0));
    warp::sync_warp(FULL_MASK);
    let below = (1u32 << lane) - 1;
    let mut ranked = [Ranked(0); ITEMS];
    unrolled!(ITEMS, i => {
        let d = digit(i) % RADIX;
        let peers = warp::match_bits(FULL_MASK, d as u32, RADIX_BITS);
        let old = warps.get(L::counter(w, d));
        // Every peer has read the count before the highest of them writes it.
        warp::sync_warp(FULL_MASK);
        let highest = peers >> lane == 1;
        if highest {
            warps.set(L::counter(w, d), old + peers.count_ones());
        }
        // The count is written before the next step reads it.
        warp::sync_warp(FULL_MASK);
        ranked[i] = Ranked((old + (peers & below).count_ones()) | (d as u32) << 16);
    });
    ranked
}

/// A ranked key's place in its tile (after [`digit_totals`] and [`exclusive_digits`] into `start`):
/// its digit's start, its warp's offset and its rank, below the tile's length (the `%` lets the compiler
/// see it).
#[inline(always)]
fn staged_at<L: Layout>(sh: &Views<L::Key, L::Value>, w: usize, r: Ranked) -> usize {
    let d = r.digit();
    ((sh.start.get(d) + sh.warps.get(L::counter(w, d)) + r.rank()) as usize).min(L::TILE - 1)
}

#[inline(always)]
pub(crate) fn sort_block<K: SortKey, V: ValueBits, L: Layout>(
    keys_in: Global<K>,
    keys_out: GlobalMut<K>,
    vals: Option<(Global<V>, GlobalMut<V>)>,
    digits: Digits,
) {
    let threads = block_dim().x;
    let n = keys_in.len();
    if !threads.is_multiple_of(WARP_SIZE) || threads > MAX_BLOCK || n > threads as usize * ITEMS {
        panic!("the one-block sort takes a multiple of 32 threads, at most 512, holding every key");
    }
    if keys_out.len() != n || vals.is_some_and(|(i, o)| i.len() != n || o.len() != n) {
        panic!("sort: every key and value buffer must have as many elements as `keys_in`");
    }
    if digits.passes() == 0 || digits.end > K::BITS {
        panic!("sort: the bit range must be non-empty and within the key");
    }
    let t = thread_idx().x as usize;
    let (lane, w) = (warp::lane_id() as usize, warp::warp_id() as usize);
    let sh = L::views();
    // Lane `lane` of warp `w` holds keys seg + 32 i + lane, in every pass.
    let seg = w * 32 * ITEMS;
    let valid = |i: usize| seg + 32 * i + lane < n;
    let mut keys = [K::from_word(0); ITEMS];
    let mut v = [V::from_word(0); ITEMS];
    unrolled!(ITEMS, i => {
        if valid(i) {
            keys[i] = keys_in.get(seg + 32 * i + lane);
            if let Some((vals_in, _)) = vals {
                v[i] = vals_in.get(seg + 32 * i + lane);
            }
        }
    });
    let passes = digits.passes();
    // The key first in the current order (the input's, then the staged tile's), whose digit every key
    // of a pass that moves none has; whether the last pass ranked (its order is staged in shared
    // memory, not held in registers).
    let mut first = if n > 0 { keys_in.get(0) } else { K::from_word(0) };
    let mut staged = false;
    for pass in 0..passes {
        let (shift, mask) = digits.pass(pass);
        // Keys past the end rank as digit 255 after every real key: they take the places from `n` on,
        // which are never staged nor read.
        let digit_of = |i: usize, key: K| {
            if valid(i) { key.digit(shift, mask, digits.descending) as usize } else { RADIX - 1 }
        };
        // A pass whose keys all have the first key's digit moves none: it is skipped, keys and values
        // staying in registers in their order. (The barrier also orders the last pass's reads of the
        // staged tile and the warps' offsets before this pass writes them.)
        let d0 = first.digit(shift, mask, digits.descending) as usize;
        let mut mine = true;
        unrolled!(ITEMS, i => mine &= !valid(i) || digit_of(i, keys[i]) == d0);
        if sync_threads_and(mine) {
            staged = false;
            continue;
        }
        let ranked = rank_in_warp::<L>(sh.warps, w, |i| digit_of(i, keys[i]));
        sync_threads();
        digit_totals(&sh);
        sync_threads();
        if w == 0 {
            exclusive_digits(|d| sh.count.get(d), sh.start);
        }
        sync_threads();
        unrolled!(ITEMS, i => {
            if valid(i) {
                let at = staged_at::<L>(&sh, w, ranked[i]);
                sh.keys.set(at, L::Key::from_word(keys[i].to_word()));
                if vals.is_some() {
                    sh.vals.set(at, L::Value::from_word(v[i].to_word()));
                }
            }
        });
        sync_threads();
        staged = true;
        if pass + 1 < passes {
            // Back in staged order, for the next pass.
            unrolled!(ITEMS, i => {
                if valid(i) {
                    keys[i] = K::from_word(sh.keys.get(seg + 32 * i + lane).to_word());
                    if vals.is_some() {
                        v[i] = V::from_word(sh.vals.get(seg + 32 * i + lane).to_word());
                    }
                }
            });
            first = K::from_word(sh.keys.get(0).to_word());
        }
    }
    if staged {
        // The last pass's order, from shared memory: consecutive threads write consecutive keys.
        unrolled!(ITEMS, s => {
            let j = s * threads as usize + t;
            if j < n {
                keys_out.set(j, K::from_word(sh.keys.get(j).to_word()));
                if let Some((_, vals_out)) = vals {
                    vals_out.set(j, V::from_word(sh.vals.get(j).to_word()));
                }
            }
        });
    } else {
        // The last pass moved no key: the order is the one in registers.
        unrolled!(ITEMS, i => {
            if valid(i) {
                keys_out.set(seg + 32 * i + lane, keys[i]);
                if let Some((_, vals_out)) = vals {
                    vals_out.set(seg + 32 * i + lane, v[i]);
                }
            }
        });
    }
}

/// The one-block kernels of one key type: keys only, and with 4-byte and 8-byte values.
macro_rules! small_kernels {
    ($($k:ty, $lk:ident, $l4:ident, $l8:ident: $keys:ident, $pairs4:ident, $pairs8:ident;)*) => {$(
        kernel! {
            #[doc = concat!("The sort of at most [`SMALL_MAX_LEN`] `", stringify!($k), "` keys in one block, by the bits and \
              direction `digits` names ([`Digits::to_arg`]): `keys_in` to `keys_out`, stable. Launch: one block of \
              [`block_for`]`(n)` threads, `shared_bytes(key bytes, value bytes)` bytes.")]
            #[launch_bounds(512, 1)]
            pub fn $keys<'a>(keys_in: Global<'a, $k>, keys_out: GlobalMut<'a, $k>, digits: u32) {
                sort_block::<$k, u32, $lk>(keys_in, keys_out, None, Digits::from_arg(digits))
            }
        }
        kernel! {
            #[doc = concat!("[`", stringify!($keys), "`] with 4-byte values moved with their keys.")]
            #[launch_bounds(512, 1)]
            pub fn $pairs4<'a>(keys_in: Global<'a, $k>, keys_out: GlobalMut<'a, $k>, vals_in: Global<'a, u32>,
                vals_out: GlobalMut<'a, u32>, digits: u32) {
                sort_block::<$k, u32, $l4>(keys_in, keys_out, Some((vals_in, vals_out)), Digits::from_arg(digits))
            }
        }
        kernel! {
            #[doc = concat!("[`", stringify!($keys), "`] with 8-byte values moved with their keys.")]
            #[launch_bounds(512, 1)]
            pub fn $pairs8<'a>(keys_in: Global<'a, $k>, keys_out: GlobalMut<'a, $k>, vals_in: Global<'a, u64>,
                vals_out: GlobalMut<'a, u64>, digits: u32) {
                sort_block::<$k, u64, $l8>(keys_in, keys_out, Some((vals_in, vals_out)), Digits::from_arg(digits))
            }
        }
    )*};
}
small_kernels! {
    u32, SmallKeys4, SmallPairs44, SmallPairs48: sort_small_keys_u32, sort_small_pairs4_u32, sort_small_pairs8_u32;
    i32, SmallKeys4, SmallPairs44, SmallPairs48: sort_small_keys_i32, sort_small_pairs4_i32, sort_small_pairs8_i32;
    f32, SmallKeys4, SmallPairs44, SmallPairs48: sort_small_keys_f32, sort_small_pairs4_f32, sort_small_pairs8_f32;
    u64, SmallKeys8, SmallPairs84, SmallPairs88: sort_small_keys_u64, sort_small_pairs4_u64, sort_small_pairs8_u64;
    i64, SmallKeys8, SmallPairs84, SmallPairs88: sort_small_keys_i64, sort_small_pairs4_i64, sort_small_pairs8_i64;
    f64, SmallKeys8, SmallPairs84, SmallPairs88: sort_small_keys_f64, sort_small_pairs4_f64, sort_small_pairs8_f64;
}
