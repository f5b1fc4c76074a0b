//! The launch rules: which kernel, on what grid, for `n` elements on a device. Pure functions of `n`,
//! the element size and what the device reports, shared by every call of the library (and printed by
//! `cargo run -p gpu-algos --example plans`, for a benchmark that launches the same).
use gpu_algos_kernels::element::Element;
use gpu_algos_kernels::histogram::{bytes, even, small};
use gpu_algos_kernels::{reduce, scan, sort};

/// What a device reports that the rules depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// A GPU (else the emulator, whose cost grows with the threads: few blocks).
    pub gpu: bool,
    /// Streaming multiprocessors (on the emulator, the blocks it runs at once).
    pub sms: u32,
}

/// Blocks of the reduce on the emulator.
pub const EMU_GRID: u32 = 2;

/// A reduction's launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    /// No elements: the identity, no launch.
    Empty,
    /// `reduce_small_*`: one block of `reduce::BLOCK` threads.
    Small,
    /// `reduce_*` on `grid` blocks of `reduce::BLOCK` threads, summing `vblocks` virtual blocks.
    Fast { grid: u32, vblocks: u32 },
}

/// The reduction of `n` elements of `T` when `resident` blocks of `reduce_*` fit at once: the small
/// kernel up to [`reduce::small_input`], else one block per resident slot ([`reduce::fast_grid`]) with
/// `vblocks = grid`; `deterministic`: the virtual blocks of [`reduce::deterministic_vblocks`] on
/// [`reduce::deterministic_grid`], whose bits depend on `n` and `T` only.
pub fn reduce<T: Element>(n: usize, target: Target, resident: u32, deterministic: bool) -> Reduce {
    if n == 0 {
        return Reduce::Empty;
    }
    if reduce::small_input::<T>(n) {
        return Reduce::Small;
    }
    if deterministic {
        let slots = if target.gpu { resident } else { resident.min(EMU_GRID) };
        return Reduce::Fast {
            grid: reduce::deterministic_grid::<T>(n, slots),
            vblocks: reduce::deterministic_vblocks::<T>(n),
        };
    }
    let grid = if target.gpu { reduce::fast_grid(n / T::LANES, resident) } else { resident.min(EMU_GRID) };
    Reduce::Fast { grid, vblocks: grid }
}

/// Partial-sum words a reduction plan needs.
pub fn reduce_partials(plan: Reduce) -> usize {
    match plan {
        Reduce::Fast { vblocks, .. } => vblocks as usize,
        _ => 0,
    }
}

/// A byte histogram's launch: `small` (`histogram_bytes_small`, [`small::BLOCK`] threads) or not
/// (`histogram_bytes`, [`bytes::BLOCK`] threads), on `grid` blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Histogram {
    pub small: bool,
    pub grid: u32,
}

/// Blocks of a histogram on the emulator.
pub const EMU_HISTOGRAM_GRID: u32 = 2;

/// The byte histogram of `n` bytes when `resident` blocks of `histogram_bytes` fit at once:
/// `histogram_bytes_small` on [`small::grid`] up to [`small::MAX_BYTES`], else `histogram_bytes` on
/// [`bytes::grid`].
pub fn histogram_bytes(n: usize, target: Target, resident: u32) -> Histogram {
    if !target.gpu {
        return Histogram { small: n <= small::MAX_BYTES, grid: EMU_HISTOGRAM_GRID };
    }
    match small::grid(n, target.sms) {
        Some(grid) => Histogram { small: true, grid },
        None => Histogram { small: false, grid: bytes::grid(n, target.sms, resident) },
    }
}

/// Blocks of the even histogram of `n` samples: [`even::grid`], at most `resident`.
pub fn histogram_even(n: usize, target: Target, resident: u32) -> u32 {
    if !target.gpu {
        return EMU_HISTOGRAM_GRID;
    }
    even::grid(n, target.sms, resident)
}

/// Threads per block of the even histogram.
pub const EVEN_BLOCK: u32 = even::BLOCK;

/// A scan's launch: `tiles` blocks of `block` threads, a state of `state_words` words, zeroed before
/// the launch (and tagged 0) when `zero_state`, else tagged with the next epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scan {
    pub block: u32,
    pub tiles: u32,
    pub state_words: usize,
    pub zero_state: bool,
}

/// The single-pass scan of `n` elements of `T` (`n >= 1`): blocks of [`scan::launch_block_of`]
/// threads, one per tile; the state zeroed before each launch from [`scan::ZERO_STATE_MIN_N`] on.
pub fn scan<T: Element>(n: usize) -> Scan {
    let items = scan::items::<T>();
    let block = scan::launch_block_of(n, items);
    let tiles = scan::tiles_of(n, block, items);
    Scan {
        block,
        tiles: tiles as u32,
        state_words: scan::state_len_of::<T>(n, block),
        zero_state: n >= scan::ZERO_STATE_MIN_N,
    }
}

/// Most elements a scan takes: its tiles must fit a 1-D grid (`2^31 - 1` blocks).
pub fn scan_max_len<T: Element>() -> usize {
    (i32::MAX as usize).saturating_mul(scan::BLOCK as usize * scan::items::<T>())
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: Target = Target { gpu: true, sms: 132 };

    #[test]
    fn reductions_pick_the_small_kernel_then_one_block_per_slot() {
        assert_eq!(reduce::<f32>(0, H200, 396, false), Reduce::Empty);
        assert_eq!(reduce::<f32>(1000, H200, 396, false), Reduce::Small);
        assert_eq!(reduce::<f32>(1 << 28, H200, 396, false), Reduce::Fast { grid: 396, vblocks: 396 });
        assert_eq!(reduce::<f64>(1 << 28, H200, 396, true), Reduce::Fast { grid: 396, vblocks: 396 });
        // The deterministic virtual blocks do not depend on the device.
        let a = reduce::<f32>(1 << 20, H200, 396, true);
        let b = reduce::<f32>(1 << 20, Target { gpu: true, sms: 16 }, 48, true);
        assert!(matches!((a, b), (Reduce::Fast { vblocks: x, .. }, Reduce::Fast { vblocks: y, .. }) if x == y));
    }

    #[test]
    fn scans_of_wide_elements_take_half_the_elements_per_tile() {
        let narrow = scan::<u32>(1 << 24);
        let wide = scan::<u64>(1 << 24);
        assert_eq!(narrow.block, wide.block);
        assert_eq!(wide.tiles, 2 * narrow.tiles);
        assert_eq!(wide.state_words, 2 + 3 * wide.tiles as usize);
        assert!(scan::<f32>(1 << 25).zero_state && !scan::<f32>(1 << 24).zero_state);
    }
}

/// Threads per block of the sort's passes on the emulator (tiles of `64 * ITEMS` keys: many tiles at
/// the sizes a test affords).
pub const EMU_SORT_BLOCK: u32 = 64;

/// A sort's launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sort {
    /// One launch of the one-block sort (`sort_small_*`, one block of `block` threads): no histogram,
    /// no state; the other fields are 0.
    pub small: bool,
    /// Passes (one per 8 bits of the range).
    pub passes: u32,
    /// Blocks of the histogram (of `sort::histogram::BLOCK` threads).
    pub histogram_grid: u32,
    /// Threads per block of the passes.
    pub block: u32,
    /// Tiles (= blocks) of each pass.
    pub tiles: usize,
    /// Words of the passes' state (zeroed before the first pass).
    pub state_words: usize,
}

/// The sort of `n` keys by `digits` when `resident` blocks of the histogram fit at once: up to
/// [`sort::small::SMALL_MAX_LEN`] keys the one-block sort on [`sort::small::block_for`]`(n)` threads;
/// above, the histogram on [`sort::histogram::grid`], then each pass on tiles of `gpu_block` threads
/// (`sort::pass_block` of the key and value sizes; [`EMU_SORT_BLOCK`] on the emulator).
pub fn sort(n: usize, digits: sort::Digits, target: Target, resident: u32, gpu_block: u32) -> Sort {
    if n <= sort::small::SMALL_MAX_LEN {
        let block = sort::small::block_for(n);
        return Sort { small: true, passes: digits.passes(), histogram_grid: 0, block, tiles: 1, state_words: 0 };
    }
    let block = if target.gpu { gpu_block } else { EMU_SORT_BLOCK };
    let histogram_grid = if target.gpu { sort::histogram::grid(n, target.sms, resident) } else { EMU_GRID };
    let passes = digits.passes();
    Sort {
        small: false,
        passes,
        histogram_grid,
        block,
        tiles: sort::tiles(n, block),
        state_words: sort::state_len(n, block, passes),
    }
}
