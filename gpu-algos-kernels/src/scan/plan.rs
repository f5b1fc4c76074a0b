//! The scan's launch shape: threads per block and elements per thread (by input size and element
//! width), tiles and state words, when to zero the state, the look-back's sleeps, and the `f32`
//! error bound the shape implies ([`super`] has the algorithm).
//!
//! Owns: the constants and functions of `n` a launcher applies. Imports [`crate::element`],
//! [`crate::tiles`] and [`crate::lookback`]; never the scan's tile code or kernels.
use crate::element::Element;
use crate::lookback::tagged::words_per_tile;
use crate::lookback::wait::{STATE_HEADER, Wait};

/// Threads per block of large scans (any multiple of 32 up to 1024 is accepted; [`launch_block`]
/// picks): with [`ITEMS`], tiles of 16384 elements; two blocks per SM on an H200 (at most 64
/// registers per thread).
pub const BLOCK: u32 = 512;
/// Threads per block of mid-sized scans ([`launch_block`]): tiles of 8192 elements.
pub const MID_BLOCK: u32 = 256;
/// Most elements [`launch_block`] scans on [`MID_BLOCK`]-thread blocks.
pub const MID_MAX_N: usize = 1 << 18;

/// The launchers' threads per block for `n` elements. An input that fits one tile of at most `BLOCK`
/// threads takes the fewest threads (at least 128) whose tile holds it: one block, no look-back, and
/// fewer warps to start and to add up. Up to [`MID_MAX_N`] elements, [`MID_BLOCK`]: tiles of half the
/// size, so twice as many SMs share the work (the input spans few tiles). Above, `BLOCK`.
/// (Measured on an H200, cold L2: `bench/sweep.md`.)
pub const fn launch_block(n: usize) -> u32 {
    launch_block_of(n, ITEMS)
}
/// [`launch_block`] for `items` elements per thread ([`items`]`::<T>()`).
pub const fn launch_block_of(n: usize, items: usize) -> u32 {
    if n <= 128 * items {
        128
    } else if n <= 256 * items {
        256
    } else if n <= BLOCK as usize * items {
        BLOCK
    } else if n <= MID_MAX_N {
        MID_BLOCK
    } else {
        BLOCK
    }
}
/// Elements per thread of 4-byte types: `ITEMS / 4` 16-byte vectors, held in registers from the load
/// to the store.
pub const ITEMS: usize = 32;
/// Elements per thread of 8-byte types (the same 128 bytes).
pub const WIDE_ITEMS: usize = 16;
/// Chunks (of four elements) per thread of the launchers' kernels, 4-byte types.
pub(crate) const CHUNKS: usize = ITEMS / 4;
/// Chunks per thread, 8-byte types.
pub(crate) const WIDE_CHUNKS: usize = WIDE_ITEMS / 4;
/// Elements per thread for `T`: [`ITEMS`], or [`WIDE_ITEMS`] for 8-byte types.
pub const fn items<T: Element>() -> usize {
    if T::WIDE { WIDE_ITEMS } else { ITEMS }
}
/// Elements per thread of the tuning variants [`scan_items16_u32`](crate::scan_variants::scan_items16_u32) and [`scan_items24_u32`](crate::scan_variants::scan_items24_u32).
pub const VARIANT_ITEMS: [usize; 2] = [16, 24];

/// Nanoseconds the look-back sleeps after publishing a tile's aggregate, before its first poll.
pub const PRE_SLEEP_NS: u32 = 1500;
/// Nanoseconds the look-back sleeps between polls.
pub const POLL_SLEEP_NS: u32 = 650;
/// Grids of fewer tiles than this look back without sleeping.
pub const SLEEP_MIN_TILES: usize = 512;
/// Fewest elements from which a launcher had better zero the state before each launch (and tag it 0)
/// than tag it with a new epoch. Zeroing is an operation of its own before the scan (0.5–2.7 µs on an
/// H200); but it leaves the status words in L2, whereas those an earlier launch left may have been
/// evicted by then (always, when L2 is flushed between launches, as a cold measurement does), and then
/// polls on the look-back's critical path wait for DRAM. Measured on an H200 with a cold L2: epochs
/// faster up to 2^24 elements (by 0.5–2.7 µs), zeroing from 2^25 on (by 1–3%); host-timed, epochs
/// faster up to 2^26 and zeroing from 2^27 on (by 1–2%).
pub const ZERO_STATE_MIN_N: usize = 1 << 25;

/// Elements per tile for blocks of `block` threads.
pub const fn tile_elems(block: u32) -> usize {
    block as usize * ITEMS
}
/// Tiles (= blocks of the single-pass launch) for `n` elements and blocks of `block` threads; at
/// least 1.
pub const fn tiles(n: usize, block: u32) -> usize {
    tiles_of(n, block, ITEMS)
}
/// Tiles for `n` elements, blocks of `block` threads and `items` elements per thread; at least 1.
pub const fn tiles_of(n: usize, block: u32, items: usize) -> usize {
    crate::tiles::count(n, block as usize * items)
}
/// `state` words the single-pass scan of `n` 4-byte elements needs: the header and one status word per
/// tile.
pub const fn state_len(n: usize, block: u32) -> usize {
    STATE_HEADER + tiles(n, block)
}
/// `state` words the single-pass scan of `n` elements of `T` needs on blocks of `block` threads.
pub const fn state_len_of<T: Element>(n: usize, block: u32) -> usize {
    STATE_HEADER + words_per_tile::<T>() * tiles_of(n, block, items::<T>())
}
/// `k` in the `f32` bound `|out[i] - exact| <= k * 2^-24 * sum(|in[0..=i]|)` for an element of tile
/// `tile`: rounded additions on the longest path from an input to the result.
pub fn f32_error_bound_terms(tile: usize) -> usize {
    tile + 64
}

/// The launchers' look-back sleeps (tuned on an H200: `bench/sweep.md`).
pub(crate) const WAIT: Wait = Wait { pre_ns: PRE_SLEEP_NS, poll_ns: POLL_SLEEP_NS, min_tiles: SLEEP_MIN_TILES };
