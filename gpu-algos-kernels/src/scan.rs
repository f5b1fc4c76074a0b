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
//! drawn before it, by blocks that are already running, so the wait always ends. (The twin
//! `scan_blockidx_u32` in [`crate::scan_twins`] takes `blockIdx.x` instead: a resident block can wait for a tile whose block
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
//! elements, the same 128 bytes per thread). [`crate::scan_twins`] holds the same kernel with 4 and 6
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
//! release store publishes it and device-scope acquire loads read it (the twins
//! `scan_no_release_u32` and `scan_no_acquire_u32` in [`crate::scan_twins`] use a plain store or
//! load there, a data race that the emulator reports); flag and value share the word, so no fence is needed to order them;
//! (3) within a block, warp totals and the tile's prefix cross warps through shared memory between
//! barriers; within a warp, shuffles and votes. The result is exact for `u32` and, for `f32`, depends
//! on the grid and the schedule (a tile's prefix may come from a nearer or a farther window).
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

use crate::element::Element;
pub use crate::element::ScanValue;
pub use crate::lookback::tagged::{
    ERROR_GAVE_UP, Epochs, FLAG_AGGREGATE, FLAG_PREFIX, MAX_EPOCH, pack, words_per_tile,
};
use crate::lookback::tagged::{look_back, publish};
pub use crate::lookback::wait::STATE_HEADER;
use crate::lookback::wait::{Access, Wait};

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
/// Elements per thread of the tuning variants [`scan_items16_u32`](crate::scan_twins::scan_items16_u32) and [`scan_items24_u32`](crate::scan_twins::scan_items24_u32).
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

shared_layout! {
    /// Warp totals (then their exclusive prefixes) and the tile's exclusive prefix, as
    /// [`Element::to_word`] bits, and the tile id.
    pub struct ScanShared { pub warps: [u64; 32], pub prefix: [u64; 1], pub tile: [u32; 1] }
}
/// Dynamic shared memory per block (4-byte elements; [`shared_bytes_of`] for any).
pub const SHARED_BYTES: usize = ScanShared::BYTES;

/// Warps of a block that stage their stores through shared memory (8-byte elements).
pub const STAGE_WARPS: usize = 16;
/// Words of a warp's staging area: one chunk (128 elements), a padding word after every 16.
pub const STAGE_STRIDE: usize = 128 + 128 / 16;
shared_layout! {
    /// The scan's shared memory for 8-byte elements: [`ScanShared`]'s (`head`, never read through
    /// this view), then each warp's staging area, through which a chunk's results are rearranged so
    /// that each 16-byte store instruction of the warp writes 512 contiguous bytes.
    pub struct ScanStage { pub head: [u64; ScanShared::BYTES.div_ceil(8)], pub stage: [u64; STAGE_WARPS * STAGE_STRIDE] }
}
/// Dynamic shared memory per block for 8-byte elements.
pub const SHARED_BYTES_WIDE: usize = ScanStage::BYTES;
/// Dynamic shared memory per block of the scans of `T`.
pub const fn shared_bytes_of<T: Element>() -> usize {
    if T::WIDE { SHARED_BYTES_WIDE } else { SHARED_BYTES }
}
/// Where element `e` (0 to 127) of a chunk lies in a warp's staging area: a padding word after every
/// 16, so that neither the lanes' writes (4 consecutive elements each) nor their reads (2 each) meet
/// in a bank.
#[inline(always)]
fn staged_at(e: usize) -> usize {
    e + e / 16
}

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

/// Where a tile's id and exclusive prefix come from.
#[derive(Clone, Copy)]
pub(crate) enum Carry<'a, T: ScanValue> {
    /// The ticket and the look-back over `state` with the launch's epoch (the single-pass scan), with
    /// the status word's accesses and the look-back's sleeps.
    LookBack(GlobalMut<'a, u64>, u32, Access, Wait),
    /// `blockIdx.x` as the tile id, then the look-back (the forward-progress twin).
    LookBackBlockIdx(GlobalMut<'a, u64>, u32),
    /// Tile `blockIdx.x`; only its sum is written, to `sums[tile]` (reduce-then-scan, pass 1).
    ReduceOnly(GlobalMut<'a, T>),
    /// Tile `blockIdx.x`; its prefix is `sums[tile]` (reduce-then-scan, pass 3).
    Given(GlobalMut<'a, T>),
}

/// What a scan writes, and where from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mode {
    /// `out[i]` leaves `in[i]` out.
    pub(crate) exclusive: bool,
    /// `out` is the input's own memory: loads never go through the read-only cache.
    pub(crate) in_place: bool,
}
/// The inclusive scan into another buffer.
pub(crate) const INCLUSIVE: Mode = Mode { exclusive: false, in_place: false };

/// Four consecutive elements from vector `i` of `body` on (one vector, or two of 8-byte elements),
/// loaded with `load`.
#[inline(always)]
fn gather<T: ScanValue>(load: impl Fn(usize) -> T::Vector, i: usize) -> [T; 4] {
    let a = load(i);
    let b = if T::LANES == 2 { load(i + 1) } else { a };
    let (a, b) = (a.as_ref(), b.as_ref());
    core::array::from_fn(|j| if j < T::LANES { a[j] } else { b[j - T::LANES] })
}
/// `r` as the vectors [`gather`] reads: the first, and for 8-byte elements the second.
#[inline(always)]
fn vectors_of<T: ScanValue>(r: [T; 4]) -> (T::Vector, T::Vector) {
    let (mut a, mut b) = (T::Vector::default(), T::Vector::default());
    for j in 0..T::LANES {
        a.as_mut()[j] = r[j];
        if T::LANES == 2 {
            b.as_mut()[j] = r[j + 2];
        }
    }
    (a, b)
}

/// One tile of the scan, `N` chunks (`4 * N` elements) per thread: see the module docs. `out` is `None`
/// for the reduce pass; with `mode.in_place`, `out` is `input`'s memory.
// The carry update of the last chunk, written out by `unrolled!` but skipped, is never read.
#[allow(unused_assignments)]
#[inline(always)]
pub(crate) fn scan_tile<T: ScanValue, const N: usize>(
    input: Global<T>,
    out: Option<GlobalMut<T>>,
    carry: Carry<T>,
    mode: Mode,
) {
    let threads = block_dim().x;
    let n = input.len();
    let t = thread_idx().x;
    let (lane, w) = (warp::lane_id(), warp::warp_id());
    let nwarps = threads / WARP_SIZE;
    let items = 4 * N;
    let tile_len = threads as usize * items;

    // The tile id: a ticket (single pass, more than one block), else the block index. The block that
    // draws the last ticket resets the counter for the next launch (every block has drawn by then).
    let tile = match carry {
        Carry::LookBack(state, ..) if grid_dim().x > 1 => {
            let sh = ScanShared::view();
            if t == 0 {
                let ticket = state.atomic(0).fetch_add(1);
                if ticket == grid_dim().x as u64 - 1 {
                    state.atomic(0).swap(0);
                }
                sh.tile.set(0, ticket as u32);
            }
            sync_threads();
            sh.tile.get(0) as usize
        }
        _ => block_idx().x as usize,
    };
    // Past the last tile (`tiles_of(n, threads, items)`, at least 1), without dividing.
    if tile > 0 && tile * tile_len >= n {
        return;
    }

    // Load: lane `lane` of warp `w` holds elements e .. e + 4 of each chunk. Where the warp's whole
    // segment is in range and the view starts on a 16-byte boundary (on a GPU, every tile but the
    // last), one 16-byte load per chunk (two of 8-byte elements), all issued before any is used;
    // elsewhere chunk by chunk, element by element where a vector is not whole.
    let seg = tile * tile_len + w as usize * (32 * items);
    let src = input.split_vectors();
    let whole = src.head.is_empty() && seg + 32 * items <= n;
    // Vectors per lane and chunk: 1, or 2 of 8-byte elements.
    let per = 4 / T::LANES;
    let first = seg / T::LANES + per * lane as usize;
    let mut v = [[T::zero(); 4]; N];
    // The single pass reads and writes every element once: streaming accesses (evict-first), which keep
    // the status words in the caches. Reduce-then-scan reads its input twice: read-only loads there.
    let streaming = matches!(carry, Carry::LookBack(..) | Carry::LookBackBlockIdx(..));
    // The warp's vectors: `first`, `first + 32 * per`, …, one bounds check for all of them.
    let span = 32 * per * (N - 1) + per;
    if whole && streaming {
        let body = src.body.sub(first, span);
        unrolled!(N, k => v[k] = gather::<T>(|i| body.get_streaming(i), 32 * per * k));
    } else if whole {
        let body = src.body.sub(first, span);
        unrolled!(N, k => v[k] = gather::<T>(|i| body.get_nc(i), 32 * per * k));
    } else {
        unrolled!(N, k => v[k] = load_partial(input, seg + k * 128 + 4 * lane as usize, mode.in_place));
    }
    // The launch's preconditions, checked once this thread's loads are issued and before any warp
    // collective or any write: the checks read the launch configuration (the block size, the dynamic
    // shared memory size), and done first they delayed the first loads of a small scan.
    if !threads.is_multiple_of(WARP_SIZE) || threads > 1024 {
        panic!("scan kernels are launched with a multiple of 32 threads, at most 1024");
    }
    if out.is_some_and(|o| o.len() != n) {
        panic!("scan: `out` must have as many elements as `input`");
    }
    if let Carry::LookBack(_, epoch, ..) | Carry::LookBackBlockIdx(_, epoch) = carry
        && epoch > MAX_EPOCH
    {
        panic!("scan: the epoch must be at most MAX_EPOCH (2^30 - 1)");
    }
    let sh = ScanShared::view();
    // Reduce: the thread's sum (a tree over its elements), the warp's (a butterfly). Only the loaded
    // values stay live across the look-back; the scan comes after it.
    let mut sums = [T::zero(); N];
    unrolled!(N, k => sums[k] = T::add(T::add(v[k][0], v[k][1]), T::add(v[k][2], v[k][3])));
    // A tree over the chunk sums: the upper half added onto the lower, until one is left.
    let mut len = N;
    while len > 1 {
        let half = len / 2;
        for i in 0..half {
            sums[i] = T::add(sums[i], sums[i + (len - half)]);
        }
        len -= half;
    }
    let warp_total = crate::warp::reduce(sums[0], T::add);
    if lane == 0 {
        sh.warps.set(w as usize, warp_total.to_word());
    }
    sync_threads();
    // Warp 0: the warps' exclusive prefixes, the tile's aggregate, and the tile's exclusive prefix.
    if w == 0 {
        let total = if lane < nwarps { T::from_word(sh.warps.get(lane as usize)) } else { T::zero() };
        let inclusive = crate::warp::inclusive_scan(total, T::add);
        let up = warp::shfl_up(FULL_MASK, inclusive, 1);
        let aggregate = warp::shfl_idx(FULL_MASK, inclusive, WARP_SIZE - 1);
        if lane < nwarps {
            sh.warps.set(lane as usize, if lane == 0 { T::zero() } else { up }.to_word());
        }
        let (state, epoch, access, wait) = match carry {
            Carry::LookBack(state, epoch, access, wait) => (Some(state), epoch, access, wait),
            Carry::LookBackBlockIdx(state, epoch) => (Some(state), epoch, Access::Strong, WAIT),
            _ => (None, 0, Access::Strong, WAIT),
        };
        let prefix = match (carry, state) {
            (Carry::ReduceOnly(sums), _) => {
                if lane == 0 {
                    sums.set(tile, aggregate);
                }
                T::zero()
            }
            (Carry::Given(sums), _) => sums.get(tile),
            (_, Some(state)) if tile > 0 => look_back(state, epoch, tile, aggregate, access, wait.for_grid()),
            (_, Some(state)) => {
                if lane == 0 && grid_dim().x > 1 {
                    publish(state, 0, FLAG_PREFIX, epoch, aggregate, access);
                }
                T::zero()
            }
            (_, None) => T::zero(),
        };
        if lane == 0 {
            sh.prefix.set(0, prefix.to_word());
        }
    }
    sync_threads();
    let Some(out) = out else { return };
    // Scan, chunk by chunk, from the warp's exclusive prefix: the thread's four elements, the warp's 32
    // vector totals (shfl.up), a running carry over the chunks; then the 16-byte store.
    let dst = out.split_vectors_mut();
    let whole = whole && dst.head.is_empty();
    // 8-byte elements: a lane's four results are two adjacent vectors, so each of its two stores would
    // write half of 32 sectors; staged through the warp's area of shared memory, each store of the warp
    // writes 32 whole vectors in a row (on an H200, L2 took 1.5x the write requests unstaged). The
    // staged stores index the warp's segment; the others the lane's first vector on.
    let staged = whole && per == 2 && (w as usize) < STAGE_WARPS;
    let stage = if staged { Some(ScanStage::view().stage) } else { None };
    let body = if staged {
        dst.body.sub(seg / T::LANES, 64 * N)
    } else if whole {
        dst.body.sub(first, span)
    } else {
        dst.body.sub(0, 0)
    };
    let base = w as usize * STAGE_STRIDE;
    let mut carry = T::add(T::from_word(sh.prefix.get(0)), T::from_word(sh.warps.get(w as usize)));
    // One loop, the store chosen per chunk: with a loop per kind of store, LLVM hoists the scans out of
    // the branches and keeps every chunk's results live at once (72 registers: one block per SM).
    unrolled!(N, k => {
        let r = scan_chunk(v[k], &mut carry, k + 1 < N, mode.exclusive);
        if let Some(st) = stage {
            // Lane `lane` holds elements 4 lane .. 4 lane + 4 of the chunk, and stores 2 lane, 2 lane + 1
            // (vector `lane`) and 64 + 2 lane, 65 + 2 lane (vector 32 + `lane`).
            // `staged_at(4 lane + j)` is `write + j`, `staged_at(2 lane + j)` is `read + j` and
            // `staged_at(64 + 2 lane + j)` is `read + 68 + j`: two addresses for the whole chunk.
            let (write, read) = (base + staged_at(4 * lane as usize), base + staged_at(2 * lane as usize));
            st.set(write, r[0].to_word());
            st.set(write + 1, r[1].to_word());
            st.set(write + 2, r[2].to_word());
            st.set(write + 3, r[3].to_word());
            warp::sync_warp(FULL_MASK);
            // One vector read and stored at a time (fewer registers live than both at once).
            let at = 64 * k + lane as usize;
            let copy = |to: usize, from: usize| {
                let mut x = T::Vector::default();
                x.as_mut()[0] = T::from_word(st.get(from));
                x.as_mut()[1] = T::from_word(st.get(from + 1));
                if streaming { body.set_streaming(to, x) } else { body.set(to, x) }
            };
            copy(at, read);
            copy(at + 32, read + 68);
            // Every lane has read before the next chunk's results overwrite the area.
            warp::sync_warp(FULL_MASK);
        } else if whole && streaming {
            let (a, b) = vectors_of::<T>(r);
            let at = 32 * per * k;
            body.set_streaming(at, a);
            if per == 2 {
                body.set_streaming(at + 1, b);
            }
        } else if whole {
            let (a, b) = vectors_of::<T>(r);
            let at = 32 * per * k;
            body.set(at, a);
            if per == 2 {
                body.set(at + 1, b);
            }
        } else {
            store_partial(out, seg + k * 128 + 4 * lane as usize, r);
        }
    });
}

/// One chunk of a warp's segment scanned from `carry` (the sum of everything before the chunk): the
/// thread's four elements, then the warp's 32 four-element totals (`shfl.up`). With `more` (a chunk
/// follows), `carry` becomes the sum up to the chunk's end. With `exclusive`, each element's result
/// is the sum the inclusive result adds it to.
#[inline(always)]
fn scan_chunk<T: ScanValue>(x: [T; 4], carry: &mut T, more: bool, exclusive: bool) -> [T; 4] {
    let lane = warp::lane_id();
    let mut c = x;
    c[1] = T::add(c[0], c[1]);
    c[2] = T::add(c[1], c[2]);
    c[3] = T::add(c[2], c[3]);
    let inclusive = crate::warp::inclusive_scan(c[3], T::add);
    let up = warp::shfl_up(FULL_MASK, inclusive, 1);
    let before = if lane == 0 { *carry } else { T::add(*carry, up) };
    if more {
        *carry = T::add(*carry, warp::shfl_idx(FULL_MASK, inclusive, WARP_SIZE - 1));
    }
    if exclusive {
        [before, T::add(before, c[0]), T::add(before, c[1]), T::add(before, c[2])]
    } else {
        c.map(|x| T::add(before, x))
    }
}

/// Elements `e .. e + 4` of `input`, those past its end read as zero: 16-byte loads where the four
/// are in range and the view starts on a 16-byte boundary (through the read-only cache unless
/// `in_place`), single elements elsewhere.
#[inline(always)]
fn load_partial<T: ScanValue>(input: Global<T>, e: usize, in_place: bool) -> [T; 4] {
    let src = input.split_vectors();
    let mut x = [T::zero(); 4];
    if src.head.is_empty() && e + 4 <= input.len() {
        let i = e / T::LANES;
        x = if in_place { gather::<T>(|i| src.body.get(i), i) } else { gather::<T>(|i| src.body.get_nc(i), i) };
    } else {
        for (j, y) in x.iter_mut().enumerate() {
            if e + j < input.len() {
                *y = input.get(e + j);
            }
        }
    }
    x
}
/// Writes `r` to elements `e .. e + 4` of `out`, leaving out those past its end, the way
/// [`load_partial`] reads them.
#[inline(always)]
fn store_partial<T: ScanValue>(out: GlobalMut<T>, e: usize, r: [T; 4]) {
    let dst = out.split_vectors_mut();
    if dst.head.is_empty() && e + 4 <= out.len() {
        let (a, b) = vectors_of::<T>(r);
        dst.body.set(e / T::LANES, a);
        if T::LANES == 2 {
            dst.body.set(e / T::LANES + 1, b);
        }
    } else {
        for (j, &x) in r.iter().enumerate() {
            if e + j < out.len() {
                out.set(e + j, x);
            }
        }
    }
}

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
