//! One tile of the scan: its loads, its reduce (thread, warp, block), its carry in (the ticket and the
//! look-back, or a given prefix), its scan and its stores, and the shared memory they cross warps
//! through ([`super`] has the algorithm and the decision procedure).
//!
//! Owns: `scan_tile` (for this crate's kernels) and what it is made of, and the shared layouts. Imports [`crate::element`], [`crate::warp`],
//! [`crate::lookback`] and [`super::plan`]; never the kernels.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE};
use gpu_std::{Global, GlobalMut, shared_layout};

use super::plan::WAIT;
use crate::element::{Element, ScanValue};
use crate::lookback::tagged::{FLAG_PREFIX, MAX_EPOCH, look_back, publish};
use crate::lookback::wait::{Access, Wait};

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

/// Where a tile's id and exclusive prefix come from.
#[derive(Clone, Copy)]
pub(crate) enum Carry<'a, T: ScanValue> {
    /// The ticket and the look-back over `state` with the launch's epoch (the single-pass scan), with
    /// the status word's accesses and the look-back's sleeps.
    LookBack(GlobalMut<'a, u64>, u32, Access, Wait),
    /// `blockIdx.x` as the tile id, then the look-back (the forward-progress variant).
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
