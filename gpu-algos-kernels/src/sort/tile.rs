//! What the pass and the one-block sort share: a tile's shared-memory layouts (the warps' digit
//! counters, the tile's digit counts, starts and bases, its id, and the staged keys and values), the
//! per-digit sums over the warps' counters, and warp 0's scan over the 256 digits.
use gpu_std::shared::SharedSlice;
use gpu_std::thread::{block_dim, thread_idx};
use gpu_std::warp::{self, WARP_SIZE};
use gpu_std::{Pod, shared_layout};

use super::key::StageWord;
use super::{BLOCK, ITEMS, RADIX, WIDE_BLOCK};
use crate::warp::inclusive_scan;

/// The layouts of a tile, one per width of keys and values and per block it is laid out for.
macro_rules! tile_layouts {
    ($($name:ident: $k:ty, $v:ty, $warps:expr, $tile:expr, $vlen:expr;)*) => {$(
        shared_layout! {
            #[doc = concat!("A tile's shared memory: ", stringify!($warps), " warps' counters, ", stringify!($tile),
              " staged keys of `", stringify!($k), "` words, values of `", stringify!($v), "`.")]
            pub struct $name {
                pub warps: [u32; $warps * RADIX], pub count: [u32; RADIX], pub start: [u32; RADIX],
                pub base: [u32; RADIX], pub tile: [u32; 1], pub keys: [$k; $tile], pub vals: [$v; $vlen]
            }
        }
        impl Layout for $name {
            type Key = $k;
            type Value = $v;
            const WARPS: usize = $warps;
            const TILE: usize = $tile;
            #[inline(always)]
            fn views() -> Views<$k, $v> {
                let s = $name::view();
                Views { warps: s.warps, count: s.count, start: s.start, base: s.base, tile: s.tile, keys: s.keys, vals: s.vals }
            }
        }
    )*};
}

/// Warps of the pass of 4-byte keys alone, and of the other passes.
const W4: usize = BLOCK as usize / 32;
const WW: usize = WIDE_BLOCK as usize / 32;
/// Keys of their tiles.
const T4: usize = BLOCK as usize * ITEMS;
const TW: usize = WIDE_BLOCK as usize * ITEMS;
tile_layouts! {
    PassKeys4: u32, u32, W4, T4, 0;
    PassKeys8: u64, u32, WW, TW, 0;
    PassPairs44: u32, u32, W4, T4, T4;
    PassPairs48: u32, u64, WW, TW, TW;
    PassPairs84: u64, u32, WW, TW, TW;
    PassPairs88: u64, u64, WW, TW, TW;
}
use super::small_shape::{MAX_TILE as ST, MAX_WARPS as SW};
tile_layouts! {
    SmallKeys4: u32, u32, SW, ST, 0;
    SmallKeys8: u64, u32, SW, ST, 0;
    SmallPairs44: u32, u32, SW, ST, ST;
    SmallPairs48: u32, u64, SW, ST, ST;
    SmallPairs84: u64, u32, SW, ST, ST;
    SmallPairs88: u64, u64, SW, ST, ST;
}

/// The views of a tile's shared memory.
pub(crate) struct Views<K: Pod, V: Pod> {
    pub(crate) warps: SharedSlice<u32>,
    pub(crate) count: SharedSlice<u32>,
    pub(crate) start: SharedSlice<u32>,
    pub(crate) base: SharedSlice<u32>,
    pub(crate) tile: SharedSlice<u32>,
    pub(crate) keys: SharedSlice<K>,
    pub(crate) vals: SharedSlice<V>,
}
/// A tile layout, with the words its keys and values are staged as.
pub(crate) trait Layout {
    type Key: StageWord;
    type Value: StageWord;
    /// Warps it holds counters for (a block of `32 * WARPS` threads at most).
    const WARPS: usize;
    /// Keys it stages.
    const TILE: usize;
    fn views() -> Views<Self::Key, Self::Value>;
    /// Warp `w`'s counter of digit `d` in `warps` (the `%`s are no-ops for a warp of the block the
    /// layout holds and a digit below [`RADIX`]; they let the compiler see the index in bounds).
    #[inline(always)]
    fn counter(w: usize, d: usize) -> usize {
        (w % Self::WARPS) * RADIX + d % RADIX
    }
}

/// Dynamic shared memory of a layout of keys of `key_bytes` and values of `value_bytes` (0: none).
macro_rules! bytes_of {
    ($k4:ident, $k8:ident, $p44:ident, $p48:ident, $p84:ident, $p88:ident) => {
        pub const fn shared_bytes(key_bytes: usize, value_bytes: usize) -> usize {
            match (key_bytes, value_bytes) {
                (4, 0) => $k4::BYTES,
                (8, 0) => $k8::BYTES,
                (4, 4) => $p44::BYTES,
                (4, _) => $p48::BYTES,
                (_, 4) => $p84::BYTES,
                _ => $p88::BYTES,
            }
        }
    };
}
/// The pass's layouts.
pub mod pass {
    use super::*;
    bytes_of!(PassKeys4, PassKeys8, PassPairs44, PassPairs48, PassPairs84, PassPairs88);
}
/// The one-block sort's layouts.
pub mod small {
    use super::*;
    bytes_of!(SmallKeys4, SmallKeys8, SmallPairs44, SmallPairs48, SmallPairs84, SmallPairs88);
}

/// Warp 0: `dst[d] = src(0) + … + src(d - 1)` for the 256 digits (lane `l` takes digits `8l .. 8l + 8`).
// The running sum after the last digit, written out by `unrolled!`, is never read.
#[allow(unused_assignments)]
#[inline(always)]
pub(crate) fn exclusive_digits(src: impl Fn(usize) -> u32, dst: SharedSlice<u32>) {
    let lane = warp::lane_id() as usize;
    const PER: usize = RADIX / WARP_SIZE as usize;
    let mut v = [0u32; PER];
    unrolled!(PER, j => v[j] = src(PER * lane + j));
    let mut total = 0u32;
    unrolled!(PER, j => total = total.wrapping_add(v[j]));
    let mut run = inclusive_scan(total, u32::wrapping_add).wrapping_sub(total);
    unrolled!(PER, j => {
        dst.set(PER * lane + j, run);
        run = run.wrapping_add(v[j]);
    });
}

/// After a barrier that follows every warp's counting: per digit (thread `d`, `d + blockDim.x`, …), the
/// warps' counts become their offsets (warp `w`'s: the counts of warps before it) and the sum, the
/// block's count of the digit, goes to `count[d]`. (The one-block sort's; the pass sums and places
/// apart, around its publishing of the counts.)
#[inline(always)]
pub(crate) fn digit_totals<K: Pod, V: Pod>(sh: &Views<K, V>) {
    let threads = block_dim().x as usize;
    let nwarps = threads / 32;
    let mut d = thread_idx().x as usize;
    while d < RADIX {
        let mut run = 0u32;
        for v in 0..nwarps {
            let c = sh.warps.get(v * RADIX + d);
            sh.warps.set(v * RADIX + d, run);
            run += c;
        }
        sh.count.set(d, run);
        d += threads;
    }
}
