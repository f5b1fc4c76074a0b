//! How many tiles a tiled pass cuts its input into: the one formula behind the scan's and the sort's
//! grids (`scan::tiles_of`, `sort::tiles`, the sort pass's own count of its tiles) and gpu-algos'
//! launch plans.
//!
//! Owns: the tile count. Imports nothing.

/// Tiles of `tile_len` elements that hold `n` elements: `ceil(n / tile_len)`, and at least 1 (an
/// empty input still takes one tile, which publishes the empty prefix).
#[inline(always)]
pub const fn count(n: usize, tile_len: usize) -> usize {
    let t = n.div_ceil(tile_len);
    if t == 0 { 1 } else { t }
}
