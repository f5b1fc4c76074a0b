//! Device-wide prefix sums in one pass over the data, by *decoupled look-back*: inclusive
//! (`out[i] = in[0] + … + in[i]`) and exclusive (`out[i] = in[0] + … + in[i - 1]`, `out[0] = 0`), into
//! another buffer or in place, for `u32`, `i32`, `u64`, `i64` (wrapping, exact), `f32` and `f64`
//! (rounded: the bound is below).
//!
//! **Tiles.** The input is cut into tiles of `blockDim.x * items` elements, one per block ([`ITEMS`]
//! for 4-byte elements, [`WIDE_ITEMS`] for 8-byte ones, the same bytes per thread). In a tile, warp
//! `w` owns a contiguous segment of `32 * items` elements, read as `items / 4` chunks of 128
//! elements (lane `l` holds elements `4l .. 4l + 4` of each chunk: one 16-byte vector, or two for
//! 8-byte elements), all loads issued before the first is used. Before the look-back a thread only *sums* its elements and the
//! warp sums those (a butterfly); warp totals cross warps through shared memory between two
//! barriers, and warp 0 scans them: the tile's *aggregate* (its own sum) is then known. After the
//! look-back each warp scans its chunks in turn, from its exclusive prefix: a thread scans its four
//! elements, the warp scans the 32 vector totals with `shfl.up` (a Kogge–Stone scan), a running carry
//! joins the chunks, and the results are written back as 16-byte vectors. Every element is read once
//! and written once, so loads and stores are *streaming* (`.cs`: evicted first, which leaves the
//! caches to the status words), and across the look-back a thread holds only the `ITEMS` values it
//! loaded (the registers decide how many blocks an SM holds, and so how many bytes are in flight).
//!
//! **Tile ids from a ticket.** A block does not take tile `blockIdx.x`: its thread 0 draws the next
//! tile id from a global counter (`atomicAdd`, one ticket per block). Blocks start in any order and only
//! some of a large grid are resident at once; with tickets, a tile only ever waits for tiles that were
//! drawn before it, by blocks that are already running, so the wait always ends. (The variant
//! `scan_blockidx_u32` in [`crate::scan_variants`] takes `blockIdx.x` instead: a resident block can wait for a tile whose block
//! has not started and cannot start until a slot frees — a deadlock on a GPU, a livelock report on the
//! emulator when it runs fewer blocks at once than the grid has.)
//!
//! **Decoupled look-back.** Each tile has a 64-bit status word: the flag (1: aggregate, 2: inclusive
//! prefix) and the launch's *epoch* in the high half (`epoch * 4 + flag`). For 4-byte elements the
//! value's bits are the low half, so no reader can see a flag without its value. For 8-byte elements
//! the value cannot share the word: each tile has two value words next to its status word, one for
//! the aggregate and one for the inclusive prefix, each written once per launch with a plain store
//! *before* the release store of the flag that announces it, and read with a plain load *after* the
//! acquire load that saw that flag (so the write happens before the read: no race, and no fence). A word holding another epoch (or zero) is not
//! published yet: the words need no zeroing between launches, only a new epoch per launch
//! ([`Epochs`]; zeroing them is a separate operation before the launch, which cost 0.5–2.7 µs of a
//! 7–52 µs scan on an H200, `bench/sweep.md`), and the block that draws the last ticket resets the
//! ticket. Large scans zero the state all the same ([`ZERO_STATE_MIN_N`]). A tile publishes its
//! aggregate as soon as it knows it, then its warp 0
//! looks back over the 32 preceding tiles at once (lane `l` reads tile `tile - 1 - l`, polling until
//! its word is published), and finds with `vote.ballot` the nearest tile that has its
//! inclusive prefix: the exclusive prefix is that prefix plus the aggregates of the tiles in between,
//! summed with a butterfly. If no tile of the window has its prefix, the window's 32 aggregates are
//! added and the window moves 32 tiles back. The tile then publishes its own inclusive prefix, which
//! the next tiles pick up without looking further. Tile 0 publishes its prefix directly.
//! On grids of [`SLEEP_MIN_TILES`] tiles or more, warp 0 sleeps [`PRE_SLEEP_NS`] after publishing its
//! aggregate and [`POLL_SLEEP_NS`] between polls: the tiles before it have mostly published by then, and
//! polls that would fail only load the status words' cache lines and take issue slots from the warps
//! that load (on an H200 this made the scan 8–10% faster from 2^26 elements on, `bench/sweep.md`).
//! The wait is bounded ([`SPIN_LIMIT`](gpu_std::spin::SPIN_LIMIT) polls); a tile that gives up sets the launch's error word
//! (`state[1]`), which the host checks.
//!
//! **Shape.** The launchers' kernels take 8 chunks (32 elements) per thread, on [`launch_block`]`(n)`
//! threads per block (128 to 512: small inputs take one tile of as few threads as hold them, and
//! inputs of a few tiles take half-size tiles, for more SMs); 8-byte elements take 4 chunks (16
//! elements, the same 128 bytes per thread). [`crate::scan_variants`] holds the same kernel with 4 and 6
//! chunks, kept to measure the shape (fewer registers and more blocks per SM, but smaller tiles:
//! slower on an H200, `bench/sweep.md`), one that takes the look-back's sleeps as arguments, and the
//! three-kernel reduce-then-scan this replaces (no block ever waits for another, and the input is
//! read twice).
//!
//! **Floats.** Additions are rounded, in an order fixed by the tile shape and the look-back (an element
//! of tile `t` reaches its prefix through at most `t + 1` tile-prefix additions and `63` others: with
//! 8 chunks, at most 15 rounded additions make a tile's aggregate, 25 an element's in-tile part (the
//! warp's prefix, the chunk carries, the scans) and 6 each look-back window; fewer with 4). So
//! `|out[i] - exact| <= (t + 64) * u * sum(|in[0..=i]|)` with `u = 2^-24` for `f32`, `2^-53` for `f64`
//! ([`f32_error_bound_terms`]); the same for the exclusive scan's `in[0..i]`.
//!
//! **Exclusive and in place.** The exclusive scan adds the same values in the same order, leaving each
//! element's own out: `out[i]` is the sum that the inclusive scan adds `in[i]` to. In place, a tile
//! reads its elements before it writes them, and no other tile reads them, so one buffer serves as
//! both (its loads are plain or streaming, never through the read-only cache).
//!
//! Decision procedure (§5.7): tiles cross blocks, and a block waits for others, so (1) tile ids come
//! from an atomic ticket, in start order, not from `blockIdx` (forward progress); (2) a status word is
//! written by one block and polled by others, so every access to it is a strong one: a device-scope
//! release store publishes it and device-scope acquire loads read it (the variants
//! `scan_no_release_u32` and `scan_no_acquire_u32` in [`crate::scan_variants`] use a plain store or
//! load there, a data race that the emulator reports); flag and value share the word, so no fence is needed to order them;
//! (3) within a block, warp totals and the tile's prefix cross warps through shared memory between
//! barriers; within a warp, shuffles and votes. The result is exact for `u32` and, for `f32`, depends
//! on the grid and the schedule (a tile's prefix may come from a nearer or a farther window).
//!
//! **Files.** This module holds the kernels; [`plan`] the launch shape (threads and elements per
//! thread, tiles, state words, the look-back's sleeps); [`tile`] one tile's work (load, reduce, the
//! carry in, scan, store) and its shared memory. The status words and the look-back itself are
//! [`crate::lookback::tagged`]'s.
use gpu_std::{Global, GlobalMut, kernel};

pub mod plan;
pub mod tile;

pub use crate::element::ScanValue;
pub use crate::lookback::tagged::{
    ERROR_GAVE_UP, Epochs, FLAG_AGGREGATE, FLAG_PREFIX, MAX_EPOCH, pack, words_per_tile,
};
use crate::lookback::wait::Access;
pub use crate::lookback::wait::STATE_HEADER;
pub use plan::{
    BLOCK, ITEMS, MID_BLOCK, MID_MAX_N, POLL_SLEEP_NS, PRE_SLEEP_NS, SLEEP_MIN_TILES, VARIANT_ITEMS, WIDE_ITEMS,
    ZERO_STATE_MIN_N, f32_error_bound_terms, items, launch_block, launch_block_of, state_len, state_len_of, tile_elems,
    tiles, tiles_of,
};
pub(crate) use plan::{CHUNKS, WAIT, WIDE_CHUNKS};
pub(crate) use tile::{Carry, INCLUSIVE, Mode, scan_tile};
pub use tile::{SHARED_BYTES, SHARED_BYTES_WIDE, STAGE_STRIDE, STAGE_WARPS, ScanShared, ScanStage, shared_bytes_of};

/// The four kernels of one element type: inclusive and exclusive, into `out` and in place.
macro_rules! scan_kernels {
    ($($t:ty, $chunks:ident, { $($bounds:tt)* }: $incl:ident, $excl:ident, $incl_ip:ident, $excl_ip:ident;)*) => {$(
        kernel! {
            #[doc = concat!("`out[i] = in[0] + … + in[i]` in `", stringify!($t), "`, in one pass. Launch: any multiple of 32 \
              threads up to 1024 (512 for 8-byte elements; [`launch_block_of`]), `shared_bytes_of::<", stringify!($t), ">()` bytes, `tiles_of(n, threads, items::<", stringify!($t), ">())` \
              blocks; `state` holds `state_len_of::<", stringify!($t), ">(n, threads)` words (with a grid of one block, `state` is \
              not touched). At launch the ticket `state[0]` and the error word `state[1]` are 0 (every launch leaves the \
              ticket 0), and no status word was written by a launch tagged with the same `epoch` (at most [`MAX_EPOCH`]): \
              zero the state once, then tag launches 1, 2, … ([`Epochs`]); a state zeroed before each launch may always be \
              tagged 0. After the launch, `state[1]` is `ERROR_GAVE_UP` if a tile gave up waiting (the result is then \
              wrong). `input` is read with streaming loads (`ld.global.cs`; a partial last tile through the read-only \
              data cache, `ld.global.nc`).")]
            $($bounds)*
            pub fn $incl<'a>(input: Global<'a, $t>, out: GlobalMut<'a, $t>, state: GlobalMut<'a, u64>, epoch: u32) {
                scan_tile::<_, $chunks>(input, Some(out), Carry::LookBack(state, epoch, Access::Strong, WAIT), INCLUSIVE)
            }
        }
        kernel! {
            #[doc = concat!("`out[i] = in[0] + … + in[i - 1]` (`out[0] = 0`) in `", stringify!($t), "`; launch as [`", stringify!($incl), "`].")]
            $($bounds)*
            pub fn $excl<'a>(input: Global<'a, $t>, out: GlobalMut<'a, $t>, state: GlobalMut<'a, u64>, epoch: u32) {
                let mode = Mode { exclusive: true, in_place: false };
                scan_tile::<_, $chunks>(input, Some(out), Carry::LookBack(state, epoch, Access::Strong, WAIT), mode)
            }
        }
        kernel! {
            #[doc = concat!("[`", stringify!($incl), "`] in place: `data` is the input and the output.")]
            $($bounds)*
            pub fn $incl_ip<'a>(data: GlobalMut<'a, $t>, state: GlobalMut<'a, u64>, epoch: u32) {
                let mode = Mode { exclusive: false, in_place: true };
                scan_tile::<_, $chunks>(data.as_global(), Some(data), Carry::LookBack(state, epoch, Access::Strong, WAIT), mode)
            }
        }
        kernel! {
            #[doc = concat!("[`", stringify!($excl), "`] in place: `data` is the input and the output.")]
            $($bounds)*
            pub fn $excl_ip<'a>(data: GlobalMut<'a, $t>, state: GlobalMut<'a, u64>, epoch: u32) {
                let mode = Mode { exclusive: true, in_place: true };
                scan_tile::<_, $chunks>(data.as_global(), Some(data), Carry::LookBack(state, epoch, Access::Strong, WAIT), mode)
            }
        }
    )*};
}

// 8-byte elements: two blocks of 512 threads per SM (64 registers), as 4-byte elements take unbounded.
scan_kernels! {
    u32, CHUNKS, {}: scan_inclusive_u32, scan_exclusive_u32, scan_inclusive_in_place_u32, scan_exclusive_in_place_u32;
    i32, CHUNKS, {}: scan_inclusive_i32, scan_exclusive_i32, scan_inclusive_in_place_i32, scan_exclusive_in_place_i32;
    f32, CHUNKS, {}: scan_inclusive_f32, scan_exclusive_f32, scan_inclusive_in_place_f32, scan_exclusive_in_place_f32;
    u64, WIDE_CHUNKS, { #[launch_bounds(512, 2)] }: scan_inclusive_u64, scan_exclusive_u64, scan_inclusive_in_place_u64, scan_exclusive_in_place_u64;
    i64, WIDE_CHUNKS, { #[launch_bounds(512, 2)] }: scan_inclusive_i64, scan_exclusive_i64, scan_inclusive_in_place_i64, scan_exclusive_in_place_i64;
    f64, WIDE_CHUNKS, { #[launch_bounds(512, 2)] }: scan_inclusive_f64, scan_exclusive_f64, scan_inclusive_in_place_f64, scan_exclusive_in_place_f64;
}
