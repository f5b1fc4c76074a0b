//! The sort of an input that fits one tile (at most [`SMALL_MAX_LEN`] keys), in one launch of one
//! block: every pass in shared memory, no histogram, no status words, no look-back. Each pass ranks
//! the block's keys as a pass of [`super::onesweep`] ranks a tile's (warp ranking by `warp::match_bits`, the
//! warps' counts summed per digit, warp 0 scanning them into the digit starts), stages each key (and
//! value) at its place in shared memory, and reads them back in that order for the next pass; the
//! last pass writes the staged tile out in order, consecutive threads to consecutive addresses.
//!
//! Decision procedure (§5.7): one block, so nothing crosses blocks; keys, counters, starts and the
//! staged tile cross threads through shared memory between barriers, and within a warp the ranking's
//! counter of a digit is read by its peers and written by one of them, `bar.warp.sync` between.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, thread_idx};
use gpu_std::warp::{self, WARP_SIZE};
use gpu_std::{Global, GlobalMut, kernel};

use super::key::{SortKey, SortValue, StageWord};
use super::onesweep::{
    Layout, TileKeys4, TileKeys8, TilePairs44, TilePairs48, TilePairs84, TilePairs88, digit_totals, exclusive_digits,
    rank_in_warp, staged_at,
};
use super::{Digits, ITEMS, MAX_BLOCK, MAX_TILE, RADIX};

/// Most keys the one-block sort takes: one tile of [`MAX_BLOCK`] threads.
pub const SMALL_MAX_LEN: usize = MAX_TILE;

/// Threads of the one-block sort of `n` keys: the fewest multiple of 32 (at least 32) whose tile of
/// `ITEMS` keys per thread holds them.
pub const fn block_for(n: usize) -> u32 {
    let warps = n.div_ceil(32 * ITEMS);
    let warps = if warps == 0 { 1 } else { warps };
    (warps * 32) as u32
}

/// Sorts `keys_in` (and `vals`' input) into `keys_out` (and its output) by every pass of `digits`.
#[inline(always)]
pub(crate) fn sort_block<K: SortKey, V: SortValue, L: Layout>(
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
    for pass in 0..passes {
        let (shift, mask) = digits.pass(pass);
        // Keys past the end rank as digit 255 after every real key: they take the places from `n` on,
        // which are never staged nor read.
        let digit_of = |i: usize, key: K| {
            if valid(i) { key.digit(shift, mask, digits.descending) as usize } else { RADIX - 1 }
        };
        let ranked = rank_in_warp(sh.warps, w, |i| digit_of(i, keys[i]));
        sync_threads();
        digit_totals(&sh, |_, _| {});
        sync_threads();
        if w == 0 {
            exclusive_digits(|d| sh.count.get(d), sh.start);
        }
        sync_threads();
        unrolled!(ITEMS, i => {
            if valid(i) {
                let at = staged_at(&sh, w, ranked[i]);
                sh.keys.set(at, L::Key::from_word(keys[i].to_word()));
                if vals.is_some() {
                    sh.vals.set(at, L::Value::from_word(v[i].to_word()));
                }
            }
        });
        sync_threads();
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
            // Every staged key is read, and every warp's offsets used, before the next pass writes.
            sync_threads();
        }
    }
    unrolled!(ITEMS, s => {
        let j = s * threads as usize + t;
        if j < n {
            keys_out.set(j, K::from_word(sh.keys.get(j).to_word()));
            if let Some((_, vals_out)) = vals {
                vals_out.set(j, V::from_word(sh.vals.get(j).to_word()));
            }
        }
    });
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
    u32, TileKeys4, TilePairs44, TilePairs48: sort_small_keys_u32, sort_small_pairs4_u32, sort_small_pairs8_u32;
    i32, TileKeys4, TilePairs44, TilePairs48: sort_small_keys_i32, sort_small_pairs4_i32, sort_small_pairs8_i32;
    f32, TileKeys4, TilePairs44, TilePairs48: sort_small_keys_f32, sort_small_pairs4_f32, sort_small_pairs8_f32;
    u64, TileKeys8, TilePairs84, TilePairs88: sort_small_keys_u64, sort_small_pairs4_u64, sort_small_pairs8_u64;
    i64, TileKeys8, TilePairs84, TilePairs88: sort_small_keys_i64, sort_small_pairs4_i64, sort_small_pairs8_i64;
    f64, TileKeys8, TilePairs84, TilePairs88: sort_small_keys_f64, sort_small_pairs4_f64, sort_small_pairs8_f64;
}
