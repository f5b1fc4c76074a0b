//! An inclusive prefix sum in one pass over the data: `out[i] = in[0] + … + in[i]`, for `u32`
//! (wrapping, exact) and `f32`, by *decoupled look-back*; and the three-kernel reduce-then-scan it
//! replaces, as the baseline.
//!
//! **Tiles.** The input is cut into tiles of `blockDim.x * ITEMS` elements, one per block. In a tile,
//! warp `w` owns a contiguous segment of `32 * ITEMS` elements, read as `ITEMS / 4` chunks of 32
//! 16-byte vectors (lane `l` holds vector `l` of each chunk: four consecutive elements), all loads
//! issued before the first is used. Before the look-back a thread only *sums* its elements and the
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
//! [`scan_blockidx_u32`] takes `blockIdx.x` instead: a resident block can wait for a tile whose block
//! has not started and cannot start until a slot frees — a deadlock on a GPU, a livelock report on the
//! emulator when it runs fewer blocks at once than the grid has.)
//!
//! **Decoupled look-back.** Each tile has a 64-bit status word: the flag (1: aggregate, 2: inclusive
//! prefix) and the launch's *epoch* in the high half (`epoch * 4 + flag`), the value's bits in the low
//! half, so no reader can see a flag without its value. A word holding another epoch (or zero) is not
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
//! The wait is bounded ([`SPIN_LIMIT`] polls); a tile that gives up sets the launch's error word
//! (`state[1]`), which the host checks.
//!
//! **Shape.** The launchers' kernels take 8 chunks (32 elements) per thread, on [`launch_block`]`(n)`
//! threads per block (128 to 512: small inputs take one tile of as few threads as hold them, and
//! inputs of a few tiles take half-size tiles, for more SMs); [`scan_items16_u32`] and
//! [`scan_items24_u32`] are the same kernel with 4 and 6 chunks, kept to measure the shape (fewer
//! registers and more blocks per SM, but smaller tiles: slower on an H200, `bench/sweep.md`), and
//! [`scan_sleeps_u32`] takes the look-back's sleeps as arguments.
//!
//! **Reduce-then-scan.** [`scan_reduce_u32`] writes each tile's sum, [`scan_spine_u32`] (one block)
//! turns the sums into exclusive prefixes, [`scan_downsweep_u32`] rescans each tile from its prefix:
//! three launches, no block ever waits for another, and the input is read twice.
//!
//! **`f32`.** Additions are rounded, in an order fixed by the tile shape and the look-back (an element
//! of tile `t` reaches its prefix through at most `t + 1` tile-prefix additions and `63` others: with
//! 8 chunks, at most 15 rounded additions make a tile's aggregate, 25 an element's in-tile part (the
//! warp's prefix, the chunk carries, the scans) and 6 each look-back window). So
//! `|out[i] - exact| <= (t + 64) * 2^-24 * sum(|in[0..=i]|)` ([`f32_error_bound_terms`]).
//!
//! Decision procedure (§5.7): tiles cross blocks, and a block waits for others, so (1) tile ids come
//! from an atomic ticket, in start order, not from `blockIdx` (forward progress); (2) a status word is
//! written by one block and polled by others, so every access to it is a strong one: a device-scope
//! release store publishes it and device-scope acquire loads read it (the twins
//! [`scan_no_release_u32`] and [`scan_no_acquire_u32`] use a plain store or load there, a data race
//! that the emulator reports); flag and value share the word, so no fence is needed to order them;
//! (3) within a block, warp totals and the tile's prefix cross warps through shared memory between
//! barriers; within a warp, shuffles and votes. The result is exact for `u32` and, for `f32`, depends
//! on the grid and the schedule (a tile's prefix may come from a nearer or a farther window).
use gpu_std::block::sync_threads;
use gpu_std::fence::nanosleep;
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

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
    if n <= tile_elems(128) {
        128
    } else if n <= tile_elems(256) {
        256
    } else if n <= tile_elems(BLOCK) {
        BLOCK
    } else if n <= MID_MAX_N {
        MID_BLOCK
    } else {
        BLOCK
    }
}
/// Elements per thread: `ITEMS / 4` 16-byte vectors, held in registers from the load to the store.
pub const ITEMS: usize = 32;
/// Vectors per thread (chunks per warp segment) of the launchers' kernels.
const CHUNKS: usize = ITEMS / 4;
/// Elements per thread of the tuning variants [`scan_items16_u32`] and [`scan_items24_u32`].
pub const VARIANT_ITEMS: [usize; 2] = [16, 24];

/// `$body` once for each chunk `$k` in `0..$n` (`$n` at most 8), written out, not looped: the
/// per-thread arrays are indexed only by constants, so they stay in registers (a loop the compiler
/// leaves rolled indexes them at run time, which puts them in local memory and makes each load wait
/// for the one before).
macro_rules! each_chunk {
    ($n:ident, $k:ident => $body:expr) => {{
        const { assert!($n >= 1 && $n <= 8, "each_chunk! writes out chunks 0 ..= 7") };
        each_chunk!(@ $n, $k => $body; 0 1 2 3 4 5 6 7)
    }};
    (@ $n:ident, $k:ident => $body:expr; $($i:literal)*) => {{
        $(if $i < $n {
            let $k: usize = $i;
            $body;
        })*
    }};
}
/// Nanoseconds the look-back sleeps after publishing a tile's aggregate, before its first poll.
pub const PRE_SLEEP_NS: u32 = 1500;
/// Nanoseconds the look-back sleeps between polls.
pub const POLL_SLEEP_NS: u32 = 650;
/// Grids of fewer tiles than this look back without sleeping.
pub const SLEEP_MIN_TILES: usize = 512;
/// Polls of one look-back window before a tile gives up and sets the error word.
pub const SPIN_LIMIT: u32 = 1 << 22;
/// Status flag: the word holds the tile's aggregate.
pub const FLAG_AGGREGATE: u64 = 1;
/// Status flag: the word holds the tile's inclusive prefix.
pub const FLAG_PREFIX: u64 = 2;
/// `state` words before the status words: the ticket (`state[0]`) and the error word (`state[1]`).
pub const STATE_HEADER: usize = 2;
/// The largest epoch a launch may be tagged with (the status word's high half holds `epoch * 4 + flag`).
pub const MAX_EPOCH: u32 = (1 << 30) - 1;
/// Fewest elements from which a launcher had better zero the state before each launch (and tag it 0)
/// than tag it with a new epoch. Zeroing is an operation of its own before the scan (0.5–2.7 µs on an
/// H200); but it leaves the status words in L2, whereas those an earlier launch left may have been
/// evicted by then (always, when L2 is flushed between launches, as a cold measurement does), and then
/// polls on the look-back's critical path wait for DRAM. Measured on an H200 with a cold L2: epochs
/// faster up to 2^24 elements (by 0.5–2.7 µs), zeroing from 2^25 on (by 1–3%); host-timed, epochs
/// faster up to 2^26 and zeroing from 2^27 on (by 1–2%).
pub const ZERO_STATE_MIN_N: usize = 1 << 25;

/// The epoch tags of successive launches on one `state`, so that it need not be zeroed before each:
/// 1, 2, …, [`MAX_EPOCH`], then the state is zeroed once and the tags start again at 1.
///
/// ```
/// use gpu_kernels::scan::{Epochs, MAX_EPOCH};
/// let mut e = Epochs::new(); // for a state that is all zero now
/// assert_eq!(e.advance(), (1, false));
/// assert_eq!(e.advance(), (2, false));
/// let mut e = Epochs::after(MAX_EPOCH);
/// assert_eq!(e.advance(), (1, true)); // zero the state, then launch with epoch 1
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Epochs {
    last: u32,
}
impl Epochs {
    /// Tags for a state whose words are all zero.
    pub const fn new() -> Self {
        Epochs { last: 0 }
    }
    /// Tags for a state last launched on with epoch `last` (and never with a later one since it was
    /// zeroed).
    pub const fn after(last: u32) -> Self {
        Epochs { last }
    }
    /// The next launch's epoch, and whether the state must be zeroed before that launch (when the tags
    /// start again).
    pub fn advance(&mut self) -> (u32, bool) {
        if self.last >= MAX_EPOCH {
            self.last = 1;
            (1, true)
        } else {
            self.last += 1;
            (self.last, false)
        }
    }
}
/// `state[1]` after a launch in which some tile gave up waiting.
pub const ERROR_GAVE_UP: u64 = 1;

shared_layout! {
    /// Warp totals (then their exclusive prefixes), the tile id and the tile's exclusive prefix.
    pub struct ScanShared { pub warps: [u32; 32], pub tile: [u32; 1], pub prefix: [u32; 1] }
}
/// Dynamic shared memory per block.
pub const SHARED_BYTES: usize = ScanShared::BYTES;

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
    let t = n.div_ceil(block as usize * items);
    if t == 0 { 1 } else { t }
}
/// `state` words the single-pass scan of `n` elements needs: the header and one status word per tile.
pub const fn state_len(n: usize, block: u32) -> usize {
    STATE_HEADER + tiles(n, block)
}
/// `k` in the `f32` bound `|out[i] - exact| <= k * 2^-24 * sum(|in[0..=i]|)` for an element of tile
/// `tile`: rounded additions on the longest path from an input to the result.
pub fn f32_error_bound_terms(tile: usize) -> usize {
    tile + 64
}

/// An element type the scan adds: `u32` (wrapping) or `f32`, carried as 32 bits in the status word.
pub trait ScanValue: Copy + gpu_std::Pod + gpu_std::Lanes<Vector = [Self; 4]> + warp::ShflValue {
    /// The additive identity.
    const ZERO: Self;
    /// `a + b` (wrapping for `u32`).
    fn add(a: Self, b: Self) -> Self;
    /// The value's bits.
    fn to_bits(self) -> u32;
    /// The value of `bits`.
    fn from_bits(bits: u32) -> Self;
}
impl ScanValue for u32 {
    const ZERO: u32 = 0;
    #[inline(always)]
    fn add(a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> u32 {
        bits
    }
}
impl ScanValue for f32 {
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline(always)]
    fn to_bits(self) -> u32 {
        f32::to_bits(self)
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
}

/// A status word of a launch tagged `epoch`: `epoch * 4 + flag` in the high half, the value's bits in
/// the low half.
#[inline(always)]
pub fn pack<T: ScanValue>(flag: u64, epoch: u32, v: T) -> u64 {
    ((((epoch as u64) << 2) | flag) << 32) | v.to_bits() as u64
}
/// The flag of `word` for a launch tagged `epoch`: 0 (not published) if another launch wrote it.
#[inline(always)]
fn flag_of(word: u64, epoch: u32) -> u64 {
    let hi = (word >> 32) as u32;
    if hi >> 2 == epoch { (hi & 3) as u64 } else { 0 }
}
#[inline(always)]
fn value_of<T: ScanValue>(word: u64) -> T {
    T::from_bits(word as u32)
}

/// Inclusive scan over the warp (`shfl.up`, offsets 1, 2, 4, 8, 16).
#[inline(always)]
fn warp_inclusive<T: ScanValue>(mut v: T) -> T {
    let lane = warp::lane_id();
    let mut offset = 1;
    while offset < WARP_SIZE {
        let up = warp::shfl_up(FULL_MASK, v, offset);
        if lane >= offset {
            v = T::add(up, v);
        }
        offset <<= 1;
    }
    v
}
/// Sum over the warp by a butterfly: every lane gets it.
#[inline(always)]
fn warp_sum<T: ScanValue>(mut v: T) -> T {
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        v = T::add(v, warp::shfl_xor(FULL_MASK, v, offset));
        offset >>= 1;
    }
    v
}

/// How the status word is written and read: the correct accesses, or a twin's plain ones.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    ReleaseAcquire,
    PlainStore,
    PlainLoad,
}

#[inline(always)]
fn publish(state: GlobalMut<u64>, tile: usize, word: u64, access: Access) {
    if access == Access::PlainStore {
        state.set(STATE_HEADER + tile, word);
    } else {
        state.atomic(STATE_HEADER + tile).store_release(word);
    }
}
#[inline(always)]
fn read_status(state: GlobalMut<u64>, tile: usize, access: Access) -> u64 {
    if access == Access::PlainLoad {
        state.get(STATE_HEADER + tile)
    } else {
        state.atomic(STATE_HEADER + tile).load_acquire()
    }
}

/// Warp 0's look-back for tile `tile > 0` with aggregate `aggregate`: publishes the aggregate, finds the
/// exclusive prefix (every lane gets it), publishes the inclusive prefix. On giving up, sets the error
/// word and returns the prefix found so far.
///
/// The wait: after publishing its aggregate the warp sleeps `pre_ns` before its first poll (by then the
/// tiles before it have usually published, so the first poll mostly ends the search; polling earlier
/// only adds traffic to the status words' cache lines and issue slots the loading warps could use),
/// then each lane polls its tile's word, sleeping `poll_ns` between polls. (Polling the window as a
/// warp, with a vote per poll, and stopping once the tiles up to the nearest inclusive prefix are
/// published measured no faster on an H200, and a vote in a spin loop would hide the spin from the
/// emulator's livelock detection.)
#[inline(always)]
fn look_back<T: ScanValue>(
    state: GlobalMut<u64>,
    epoch: u32,
    tile: usize,
    aggregate: T,
    access: Access,
    wait: Wait,
) -> T {
    let lane = warp::lane_id() as usize;
    if lane == 0 {
        publish(state, tile, pack(FLAG_AGGREGATE, epoch, aggregate), access);
    }
    if wait.pre_ns > 0 {
        nanosleep(wait.pre_ns);
    }
    let mut prefix = T::ZERO;
    // The window: tiles hi, hi - 1, …, hi - 31 (lane l reads tile hi - l); tiles below 0 read as an
    // inclusive prefix of zero, so every window from tile 0 on ends the search.
    let mut hi = tile as isize - 1;
    loop {
        let me = hi - lane as isize;
        let mut word = pack(FLAG_PREFIX, epoch, T::ZERO);
        if me >= 0 {
            // Each lane waits for its own tile's word (bounded), then the warp meets at the votes.
            let mut spins = 0u32;
            loop {
                word = read_status(state, me as usize, access);
                if flag_of(word, epoch) != 0 || spins >= SPIN_LIMIT {
                    break;
                }
                spins += 1;
                if wait.poll_ns > 0 {
                    nanosleep(wait.poll_ns);
                }
            }
        }
        if warp::any(FULL_MASK, flag_of(word, epoch) == 0) {
            if lane == 0 {
                state.atomic(1).fetch_or(ERROR_GAVE_UP);
            }
            return prefix;
        }
        let prefixes = warp::ballot(FULL_MASK, flag_of(word, epoch) == FLAG_PREFIX);
        if prefixes != 0 {
            // The nearest tile with its inclusive prefix, and the aggregates of the tiles after it.
            let nearest = prefixes.trailing_zeros() as usize;
            let v = if lane <= nearest { value_of::<T>(word) } else { T::ZERO };
            prefix = T::add(warp_sum(v), prefix);
            break;
        }
        prefix = T::add(warp_sum(value_of::<T>(word)), prefix);
        hi -= WARP_SIZE as isize;
    }
    if lane == 0 {
        publish(state, tile, pack(FLAG_PREFIX, epoch, T::add(prefix, aggregate)), access);
    }
    prefix
}

/// The look-back's sleeps, in nanoseconds: before the first poll, and between polls.
#[derive(Clone, Copy)]
struct Wait {
    pre_ns: u32,
    poll_ns: u32,
    /// Grids of fewer tiles look back without sleeping.
    min_tiles: usize,
}
/// The launchers' look-back sleeps (tuned on an H200: `bench/sweep.md`).
const WAIT: Wait = Wait { pre_ns: PRE_SLEEP_NS, poll_ns: POLL_SLEEP_NS, min_tiles: SLEEP_MIN_TILES };
impl Wait {
    /// The sleeps for this launch: none on grids of fewer than `min_tiles` tiles, where few tiles wait
    /// and a sleep would only add to the launch's time.
    #[inline(always)]
    fn for_grid(self) -> Wait {
        if (grid_dim().x as usize) < self.min_tiles { Wait { pre_ns: 0, poll_ns: 0, min_tiles: 0 } } else { self }
    }
}

/// Where a tile's id and exclusive prefix come from.
#[derive(Clone, Copy)]
enum Carry<'a, T: ScanValue> {
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

/// One tile of the scan, `N` chunks (`4 * N` elements) per thread: see the module docs. `out` is `None`
/// for the reduce pass.
// The carry update of the last chunk, written out by `each_chunk!` but skipped, is never read.
#[allow(unused_assignments)]
#[inline(always)]
fn scan_tile<T: ScanValue, const N: usize>(input: Global<T>, out: Option<GlobalMut<T>>, carry: Carry<T>) {
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
    // last), one 16-byte load per chunk, all issued before any is used;
    // elsewhere chunk by chunk, element by element where a vector is not whole.
    let seg = tile * tile_len + w as usize * (32 * items);
    let src = input.split_vectors();
    let whole = src.head.is_empty() && seg + 32 * items <= n;
    let first = seg / 4 + lane as usize;
    let mut v = [[T::ZERO; 4]; N];
    // The single pass reads and writes every element once: streaming accesses (evict-first), which keep
    // the status words in the caches. Reduce-then-scan reads its input twice: read-only loads there.
    let streaming = matches!(carry, Carry::LookBack(..) | Carry::LookBackBlockIdx(..));
    // The warp's vectors: `first`, `first + 32`, …, one bounds check for all of them.
    let span = 32 * (N - 1) + 1;
    if whole && streaming {
        let body = src.body.sub(first, span);
        each_chunk!(N, k => v[k] = body.get_streaming(32 * k));
    } else if whole {
        let body = src.body.sub(first, span);
        each_chunk!(N, k => v[k] = body.get_nc(32 * k));
    } else {
        each_chunk!(N, k => v[k] = load_partial(input, seg + k * 128 + 4 * lane as usize));
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
    let mut sums = [T::ZERO; N];
    each_chunk!(N, k => sums[k] = T::add(T::add(v[k][0], v[k][1]), T::add(v[k][2], v[k][3])));
    // A tree over the chunk sums: the upper half added onto the lower, until one is left.
    let mut len = N;
    while len > 1 {
        let half = len / 2;
        for i in 0..half {
            sums[i] = T::add(sums[i], sums[i + (len - half)]);
        }
        len -= half;
    }
    let warp_total = warp_sum(sums[0]);
    if lane == 0 {
        sh.warps.set(w as usize, warp_total.to_bits());
    }
    sync_threads();
    // Warp 0: the warps' exclusive prefixes, the tile's aggregate, and the tile's exclusive prefix.
    if w == 0 {
        let total = if lane < nwarps { T::from_bits(sh.warps.get(lane as usize)) } else { T::ZERO };
        let inclusive = warp_inclusive(total);
        let up = warp::shfl_up(FULL_MASK, inclusive, 1);
        let aggregate = warp::shfl_idx(FULL_MASK, inclusive, WARP_SIZE - 1);
        if lane < nwarps {
            sh.warps.set(lane as usize, if lane == 0 { T::ZERO } else { up }.to_bits());
        }
        let (state, epoch, access, wait) = match carry {
            Carry::LookBack(state, epoch, access, wait) => (Some(state), epoch, access, wait),
            Carry::LookBackBlockIdx(state, epoch) => (Some(state), epoch, Access::ReleaseAcquire, WAIT),
            _ => (None, 0, Access::ReleaseAcquire, WAIT),
        };
        let prefix = match (carry, state) {
            (Carry::ReduceOnly(sums), _) => {
                if lane == 0 {
                    sums.set(tile, aggregate);
                }
                T::ZERO
            }
            (Carry::Given(sums), _) => sums.get(tile),
            (_, Some(state)) if tile > 0 => look_back(state, epoch, tile, aggregate, access, wait.for_grid()),
            (_, Some(state)) => {
                if lane == 0 && grid_dim().x > 1 {
                    publish(state, 0, pack(FLAG_PREFIX, epoch, aggregate), access);
                }
                T::ZERO
            }
            (_, None) => T::ZERO,
        };
        if lane == 0 {
            sh.prefix.set(0, prefix.to_bits());
        }
    }
    sync_threads();
    let Some(out) = out else { return };
    // Scan, chunk by chunk, from the warp's exclusive prefix: the thread's four elements, the warp's 32
    // vector totals (shfl.up), a running carry over the chunks; then the 16-byte store.
    let dst = out.split_vectors_mut();
    let whole = whole && dst.head.is_empty();
    let body = if whole { dst.body.sub(first, span) } else { dst.body.sub(0, 0) };
    let mut carry = T::add(T::from_bits(sh.prefix.get(0)), T::from_bits(sh.warps.get(w as usize)));
    // One loop, the store chosen per chunk: with a loop per kind of store, LLVM hoists the scans out of
    // the branches and keeps every chunk's results live at once (72 registers: one block per SM).
    each_chunk!(N, k => {
        let r = scan_chunk(v[k], &mut carry, k + 1 < N);
        if whole && streaming {
            body.set_streaming(32 * k, r);
        } else if whole {
            body.set(32 * k, r);
        } else {
            store_partial(out, seg + k * 128 + 4 * lane as usize, r);
        }
    });
}

/// One chunk of a warp's segment scanned from `carry` (the sum of everything before the chunk): the
/// thread's four elements, then the warp's 32 vector totals (`shfl.up`). With `more` (a chunk
/// follows), `carry` becomes the sum up to the chunk's end.
#[inline(always)]
fn scan_chunk<T: ScanValue>(mut c: [T; 4], carry: &mut T, more: bool) -> [T; 4] {
    let lane = warp::lane_id();
    c[1] = T::add(c[0], c[1]);
    c[2] = T::add(c[1], c[2]);
    c[3] = T::add(c[2], c[3]);
    let inclusive = warp_inclusive(c[3]);
    let up = warp::shfl_up(FULL_MASK, inclusive, 1);
    let before = if lane == 0 { *carry } else { T::add(*carry, up) };
    if more {
        *carry = T::add(*carry, warp::shfl_idx(FULL_MASK, inclusive, WARP_SIZE - 1));
    }
    c.map(|x| T::add(before, x))
}

/// Elements `e .. e + 4` of `input`, those past its end read as zero: one 16-byte load where the four
/// are in range and the view starts on a 16-byte boundary, single elements elsewhere.
#[inline(always)]
fn load_partial<T: ScanValue>(input: Global<T>, e: usize) -> [T; 4] {
    let src = input.split_vectors();
    let mut x = [T::ZERO; 4];
    if src.head.is_empty() && e + 4 <= input.len() {
        x = src.body.get_nc(e / 4);
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
        dst.body.set(e / 4, r);
    } else {
        for (j, &x) in r.iter().enumerate() {
            if e + j < out.len() {
                out.set(e + j, x);
            }
        }
    }
}

kernel! {
    /// `out[i] = in[0] + … + in[i]` (wrapping), in one pass. Launch: any multiple of 32 threads up to
    /// 1024 ([`launch_block`]), `SHARED_BYTES`, `tiles(n, threads)` blocks; `state` holds `state_len`
    /// words (with a grid of one block, `state` is not touched). At launch the ticket `state[0]` and
    /// the error word `state[1]` are 0 (every launch leaves the ticket 0), and no status word was
    /// written by a launch tagged with the same `epoch` (at most [`MAX_EPOCH`]): zero the state once,
    /// then tag launches 1, 2, … ([`Epochs`]); a state zeroed before each launch may always be tagged
    /// 0. After the launch, `state[1]` is `ERROR_GAVE_UP` if a tile gave up waiting (the result is then
    /// wrong). `input` is
    /// read with streaming loads (`ld.global.cs`; a partial last tile through the read-only data cache,
    /// `ld.global.nc`): it must not overlap `out` (the result would be unspecified, never undefined
    /// behaviour).
    pub fn scan_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::LookBack(state, epoch, Access::ReleaseAcquire, WAIT))
    }
}
kernel! {
    /// `out[i] = in[0] + … + in[i]` in `f32`, in one pass; launch as [`scan_u32`].
    pub fn scan_f32<'a>(input: Global<'a, f32>, out: GlobalMut<'a, f32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::LookBack(state, epoch, Access::ReleaseAcquire, WAIT))
    }
}
kernel! {
    /// Tuning variant of [`scan_u32`]: 16 elements per thread (tiles of `blockDim.x * 16`, so
    /// [`tiles_of`]`(n, threads, 16)` blocks); fewer registers, more blocks per SM. Otherwise launch as
    /// [`scan_u32`]. The bench measures it against the launchers' shape.
    pub fn scan_items16_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, 4>(input, Some(out), Carry::LookBack(state, epoch, Access::ReleaseAcquire, WAIT))
    }
}
kernel! {
    /// Tuning variant of [`scan_u32`]: 24 elements per thread (tiles of `blockDim.x * 24`, so
    /// [`tiles_of`]`(n, threads, 24)` blocks); launch as [`scan_items16_u32`].
    pub fn scan_items24_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, 6>(input, Some(out), Carry::LookBack(state, epoch, Access::ReleaseAcquire, WAIT))
    }
}
kernel! {
    /// Tuning variant of [`scan_u32`]: the look-back sleeps `pre_ns` before its first poll and `poll_ns`
    /// between polls, on any grid (the launchers' kernel: [`PRE_SLEEP_NS`], [`POLL_SLEEP_NS`], from
    /// [`SLEEP_MIN_TILES`] tiles on). Launch as [`scan_u32`].
    pub fn scan_sleeps_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32, pre_ns: u32, poll_ns: u32) {
        let wait = Wait { pre_ns, poll_ns, min_tiles: 0 };
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::LookBack(state, epoch, Access::ReleaseAcquire, wait))
    }
}
kernel! {
    /// RACY twin of [`scan_u32`]: publishes the status word with a plain store, no release.
    pub fn scan_no_release_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::LookBack(state, epoch, Access::PlainStore, WAIT))
    }
}
kernel! {
    /// RACY twin of [`scan_u32`]: reads the status words with plain loads, no acquire.
    pub fn scan_no_acquire_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::LookBack(state, epoch, Access::PlainLoad, WAIT))
    }
}
kernel! {
    /// BROKEN twin of [`scan_u32`]: tile `blockIdx.x` instead of a ticket. A resident block may wait for
    /// a tile whose block has not started: it hangs when fewer blocks are resident than the grid has.
    /// Never launched on a GPU.
    pub fn scan_blockidx_u32<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>, state: GlobalMut<'a, u64>, epoch: u32) {
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::LookBackBlockIdx(state, epoch))
    }
}
kernel! {
    /// Reduce-then-scan, pass 1: `sums[b]` = the sum of tile `b`. Launch: as [`scan_u32`] (tiles by
    /// `blockIdx`), `sums` holds `tiles(n, threads)` elements.
    pub fn scan_reduce_u32<'a>(input: Global<'a, u32>, sums: GlobalMut<'a, u32>) {
        scan_tile::<_, CHUNKS>(input, None, Carry::ReduceOnly(sums))
    }
}
kernel! {
    /// Reduce-then-scan, pass 2: `sums` becomes its exclusive prefix sum (wrapping). Launch: 1 block of
    /// `SPINE_BLOCK` threads, `SPINE_SHARED_BYTES`.
    pub fn scan_spine_u32<'a>(sums: GlobalMut<'a, u32>) {
        spine(sums)
    }
}
kernel! {
    /// Reduce-then-scan, pass 3: tile `b` scanned from the prefix `sums[b]`. Launch as
    /// [`scan_reduce_u32`].
    pub fn scan_downsweep_u32<'a>(input: Global<'a, u32>, sums: GlobalMut<'a, u32>, out: GlobalMut<'a, u32>) {
        scan_tile::<_, CHUNKS>(input, Some(out), Carry::Given(sums))
    }
}

/// Threads of the spine kernel.
pub const SPINE_BLOCK: u32 = 1024;
shared_layout! {
    /// Warp totals of the spine and the carry between its rounds.
    pub struct SpineShared { pub warps: [u32; 32], pub carry: [u32; 1] }
}
/// Dynamic shared memory of the spine kernel.
pub const SPINE_SHARED_BYTES: usize = SpineShared::BYTES;

/// Exclusive scan of `sums` in place by one block: rounds of `blockDim.x` consecutive elements (one
/// per thread, coalesced), a block scan per round, a carry between rounds.
#[inline(always)]
fn spine(sums: GlobalMut<u32>) {
    let sh = SpineShared::view();
    let t = thread_idx().x as usize;
    let (lane, w) = (warp::lane_id(), warp::warp_id());
    let threads = block_dim().x as usize;
    let nwarps = block_dim().x / WARP_SIZE;
    if t == 0 {
        sh.carry.set(0, 0);
    }
    let mut base = 0;
    while base < sums.len() {
        let i = base + t;
        let x = if i < sums.len() { sums.get(i) } else { 0 };
        let inclusive = warp_inclusive(x);
        if lane == WARP_SIZE - 1 {
            sh.warps.set(w as usize, inclusive);
        }
        sync_threads();
        if w == 0 {
            let total = if lane < nwarps { sh.warps.get(lane as usize) } else { 0 };
            let incl = warp_inclusive(total);
            if lane < nwarps {
                sh.warps.set(lane as usize, incl.wrapping_sub(total));
            }
        }
        sync_threads();
        let carry = sh.carry.get(0);
        if i < sums.len() {
            sums.set(i, carry.wrapping_add(sh.warps.get(w as usize)).wrapping_add(inclusive).wrapping_sub(x));
        }
        sync_threads();
        if t == threads - 1 {
            sh.carry.set(0, carry.wrapping_add(sh.warps.get(w as usize)).wrapping_add(inclusive));
        }
        sync_threads();
        base += threads;
    }
}
