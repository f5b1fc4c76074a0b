//! How many tiles a tiled pass cuts its input into: the one formula behind the scan's and the sort's
//! grids (`scan::tiles_of`, `sort::tiles`, the sort pass's own count of its tiles) and gpu-algos'
//! launch plans.
//!
//! Owns: the tile count. Imports nothing.

/// `ceil(n / tile_len)`, and at least 1 (an empty input still takes one tile), in the type of its
/// operands: [`count`] on `usize`; the sort's pass takes it on `u32` (its `n` is below 2^31), where
/// it is one 32-bit division.
macro_rules! tile_count {
    ($n:expr, $tile_len:expr) => {{
        let t = $n.div_ceil($tile_len);
        if t == 0 { 1 } else { t }
    }};
}
pub(crate) use tile_count;

/// Tiles of `tile_len` elements that hold `n` elements: `ceil(n / tile_len)`, and at least 1.
#[inline(always)]
pub const fn count(n: usize, tile_len: usize) -> usize {
    tile_count!(n, tile_len)
}
