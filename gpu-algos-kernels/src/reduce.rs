//! Device-wide reductions at the memory's bandwidth: the sum, the minimum and the maximum of `u32`,
//! `i32`, `u64`, `i64`, `f32` and `f64` ([`Element`], [`Op`]), and a deterministic sum whose bits
//! depend only on the input.
//!
//! What changes from the chapter's `reduceSum`:
//! - **16-byte loads.** The input is read as 16-byte vectors ([`gpu_std::vector`]), four independent
//!   loads per thread in flight, so a thread issues a quarter of the load instructions and the memory
//!   system sees enough bytes in flight to stay busy.
//! - **Tiles dealt to virtual blocks.** The vectors are cut into tiles of `UNROLL * BLOCK`
//!   (4 x 512 = 2048 vectors, 32 KiB); tile `k` belongs to virtual block `k mod vblocks`. A
//!   block sums whole virtual blocks (block `b` takes `b`, `b + gridDim.x`, …) and writes one partial
//!   sum per virtual block. Each thread loads four vectors of a tile before adding any. The fast tier
//!   launches one block per resident slot with `vblocks = gridDim.x`: a single wave that sweeps the
//!   input front to back, a grid-stride loop over tiles. (Giving each block one contiguous range instead
//!   measured up to 5% slower on an H200.) The kernels must be launched with `BLOCK` threads per
//!   block: the tile arithmetic uses the constant, so that four loads share one address register.
//! - **Four loads in flight, three blocks per SM.** A tile's four loads follow one bounds check
//!   ([`Vectors::get_strided`]) and the kernels declare `#[launch_bounds(512, 3)]`: the assembler
//!   may then use up to 42 registers (it takes 36–38) and issues the four loads together. Without
//!   the bounds it kept to 32 registers (four blocks per SM) by issuing them two and two, and the sum
//!   measured 0.5–1% slower at 2^26–2^30 on an H200 than with them.
//! - **One kernel, no atomics on the data.** The last block to finish adds the partial sums in a fixed
//!   order (the chapter's `__threadfence` + ticket pattern, §5.4): no second launch, no zeroed output.
//!   A grid of one block (small inputs) is its own last block: no ticket, no fence; with one virtual
//!   block, thread 0 turns the block's sum into the result (no partial written and read back, no
//!   second block sum). A thread's last, cut-short tile issues its four loads together too (those
//!   past the end read the last vector, and their values are not added): a small input waits for
//!   the memory once.
//! - **Small inputs: `reduce_small_*`.** Up to 256 KiB ([`small_input`]) the launchers use a kernel
//!   of its own: the one-block path above with 32-bit indices and one barrier fewer, a one-tile
//!   input's code straight from its loads to the block sum, longer inputs in a loop out of line with
//!   four tiles' loads in flight at once. It adds in the same order as `reduce_fast` with one virtual
//!   block, so its bits are the deterministic sum's.
//! - **Integers, minima, maxima: one accumulator.** Wrapping addition, `min` and `max` are associative, so a thread combines its four vectors
//!   into one accumulator instead of four: the same bits, and fewer registers.
//!
//! **Deterministic sum.** Each virtual block is summed in a fixed order (each thread's four
//! accumulators over its tiles, then a fixed shuffle tree and a fixed tree over warps), and the
//! partials in a fixed order, so the bits of the result depend only on the input
//! and `vblocks` — never on the grid, the schedule or the timing. [`deterministic_vblocks`] picks
//! `vblocks` from `n` and the element type alone: launched with it, every grid gives the same bits.
//! [`deterministic_grid`] runs up to two virtual blocks on one block (no ticket, no fences: faster
//! for small inputs), more on one block per virtual block.
//! (With `vblocks = gridDim.x`, as the fast tier launches, the bits depend on the grid.)
//!
//! Decision procedure (§5.7): partial sums cross blocks, so each is published with a device-scope fence
//! before the ticket's atomic add (release), and the thread that draws the last ticket fences right
//! after its add (acquire). A block barrier then passes what that thread acquired to its block. (A
//! device-scope fence in every thread after the barrier is correct too, through Fence-SC order: each
//! writer's fence precedes it, and the earlier synchronizes with the later; this kernel fences once,
//! in one thread.) Within a block, warp sums cross warps
//! through shared memory between two barriers.
use gpu_std::block::{sync_threads, sync_threads_or};
use gpu_std::fence::threadfence;
use gpu_std::shared::SharedSlice;
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::vector::Vectors;
use gpu_std::warp::{self, WARP_SIZE};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

use crate::element::{Element, Max, Min, Op, Sum, vector_fold};

/// Threads per block (a multiple of 32).
pub const BLOCK: u32 = 512;
/// Most virtual blocks [`deterministic_vblocks`] picks: one per resident block on an H100 or H200
/// (132 SMs x 3 blocks of 512 threads), so that large inputs run there in one even round, as the fast
/// tier does. A constant, not the device's slot count, so that the bits stay the same on every GPU
/// (on another GPU the round is uneven; the bits are not). 512 (two uneven rounds) measured 2% slower
/// at 2^27–2^30 on an H200; 256 (a third of the slots idle) 0.5–1% slower.
pub const MAX_DETERMINISTIC_VBLOCKS: u32 = 396;
/// Elements per virtual block [`deterministic_vblocks`] aims for below that cap.
pub const MIN_VBLOCK_ELEMS: usize = 4096;

/// Fewest 16-byte vectors per block the fast tier is launched with (one tile of `UNROLL * BLOCK`):
/// below `resident * MIN_BLOCK_VECTORS` vectors, [`fast_grid`] launches fewer blocks than resident slots.
pub const MIN_BLOCK_VECTORS: usize = 2048;
/// Most 16-byte vectors [`fast_grid`] gives one block (four tiles, 128 KiB), which with one virtual
/// block returns its block sum without a ticket, fences or partials. Measured on an H200: one block
/// summing 64–128 KiB took 4.9–6.2 µs, cold, against 6.1–6.7 µs on one block per tile with the
/// ticket; at 256 KiB it took 8.2 µs against 6.5 µs. (The launchers sum up to 256 KiB with
/// `reduce_small_*` instead: [`small_input`].)
pub const ONE_BLOCK_MAX_VECTORS: usize = 4 * MIN_BLOCK_VECTORS;

/// The fast tier's grid (and `vblocks`) for `n_vectors` 16-byte vectors on a device with `resident`
/// resident slots: one block up to [`ONE_BLOCK_MAX_VECTORS`]; above, one block per slot, but no more
/// than `ceil(n_vectors / MIN_BLOCK_VECTORS)`, so that a small input is not spread over hundreds of
/// nearly idle blocks whose partials the last block must add.
pub fn fast_grid(n_vectors: usize, resident: u32) -> u32 {
    if n_vectors <= ONE_BLOCK_MAX_VECTORS {
        return 1;
    }
    n_vectors.div_ceil(MIN_BLOCK_VECTORS).clamp(1, resident.max(1) as usize) as u32
}

/// The virtual-block count of the deterministic sum of `n` elements of `T`: 1 for the small inputs
/// of [`small_input`] (up to 256 KiB, which the launchers sum with `reduce_small_*`, whose bits are
/// those of one virtual block), else `ceil(n / 4096)`, at most [`MAX_DETERMINISTIC_VBLOCKS`]. It
/// depends on `n` and `T` only, so the result's bits do not depend on the grid it is launched with.
pub fn deterministic_vblocks<T>(n: usize) -> u32 {
    if small_input::<T>(n) {
        return 1;
    }
    n.div_ceil(MIN_VBLOCK_ELEMS).clamp(1, MAX_DETERMINISTIC_VBLOCKS as usize) as u32
}

/// Most virtual blocks the deterministic sum sums on a single block: below this many, one block
/// summing them in turn is faster than a ticket and two fences across blocks.
pub const DETERMINISTIC_ONE_BLOCK_VBLOCKS: u32 = 2;

/// The deterministic sum's grid for `n` elements of `T` on a device with `resident` resident slots:
/// one block for up to [`DETERMINISTIC_ONE_BLOCK_VBLOCKS`] virtual blocks, else one block per virtual
/// block, at most one per slot. (The bits are those of [`deterministic_vblocks`]`::<T>(n)` on any grid.)
pub fn deterministic_grid<T>(n: usize, resident: u32) -> u32 {
    let vblocks = deterministic_vblocks::<T>(n);
    if vblocks <= DETERMINISTIC_ONE_BLOCK_VBLOCKS { 1 } else { vblocks.min(resident.max(1)) }
}

shared_layout! {
    /// A block's warp results (as [`Element::to_word`] bits).
    pub struct WarpWords { pub words: [u64; 32] }
}
/// Dynamic shared memory per block.
pub const SHARED_BYTES: usize = WarpWords::BYTES;

/// The block's sum of `v`, valid in thread 0, in a fixed order: a butterfly in each warp, then one
/// over the warp sums. Every thread of the block must call it (two barriers); `sums` may be reused
/// when it returns.
#[inline(always)]
fn block_sum<T: Element, O: Op<T>>(v: T, sums: SharedSlice<u64>) -> T {
    let total = block_sum_once::<T, O>(v, sums);
    sync_threads();
    total
}

/// [`block_sum`] without its last barrier: `sums` must not be written again in this launch.
#[inline(always)]
fn block_sum_once<T: Element, O: Op<T>>(v: T, sums: SharedSlice<u64>) -> T {
    let v = crate::warp::reduce(v, O::apply);
    let (lane, wid) = (warp::lane_id(), warp::warp_id());
    if lane == 0 {
        sums.set(wid as usize, v.to_word());
    }
    sync_threads();
    let mut total = O::identity();
    if wid == 0 {
        let nwarps = block_dim().x / WARP_SIZE;
        total = crate::warp::reduce(
            if lane < nwarps { T::from_word(sums.get(lane as usize)) } else { O::identity() },
            O::apply,
        );
    }
    total
}

/// Vectors each thread loads per tile: four independent 16-byte loads in flight.
pub const UNROLL: usize = 4;

/// This thread's share of virtual block `c` of `vblocks`: in each of the virtual block's tiles (tiles
/// `c`, `c + vblocks`, …, of `UNROLL * BLOCK` vectors each), vectors `t`, `t + B`, `t + 2B`, `t + 3B`,
/// one accumulator each (one for all four if `O::ASSOCIATIVE`), added at the end in a fixed order. The block size is the constant `BLOCK`, so
/// the four loads share one address with constant offsets (few registers).
#[inline(always)]
fn virtual_block_sum<T: Element, O: Op<T>>(body: Vectors<T>, c: usize, vblocks: usize) -> T {
    const B: usize = BLOCK as usize;
    const TILE: usize = UNROLL * B;
    let nv = body.len();
    let mut acc = [O::identity(); UNROLL];
    let mut i = c * TILE + thread_idx().x as usize;
    // Tiles where all four of this thread's vectors exist: four loads after one bounds check
    // (`get_strided`), all in flight before any is used.
    let whole = nv.saturating_sub((UNROLL - 1) * B);
    while i < whole {
        let v: [T::Vector; UNROLL] = body.get_strided(i, B);
        // Indexed, not iterated: `into_iter` over the loaded vectors measured 4–8 more registers and a
        // stack frame.
        #[allow(clippy::needless_range_loop)]
        for u in 0..UNROLL {
            let a = if O::ASSOCIATIVE { 0 } else { u };
            acc[a] = O::apply(acc[a], vector_fold::<T, O>(v[u]));
        }
        i += vblocks * TILE;
    }
    // The end of the input may cut this thread's last tile short (later tiles lie past the end). The
    // four loads are issued together, those past the end reading the last vector instead, and only
    // the vectors that exist are added: a small input (one such tile) waits for the memory once, not
    // once per vector.
    if i < nv {
        let v: [T::Vector; UNROLL] = core::array::from_fn(|u| body.get((i + u * B).min(nv - 1)));
        // Combining with the identity leaves an accumulator's bits as they are (a sum starts at +0.0,
        // never -0.0), and every loaded value is used, so the compiler cannot move a load behind its
        // range test.
        for (u, a) in acc.iter_mut().enumerate() {
            let x = vector_fold::<T, O>(v[u]);
            *a = O::apply(*a, if i + u * B < nv { x } else { O::identity() });
        }
    }
    O::apply(O::apply(acc[0], acc[1]), O::apply(acc[2], acc[3]))
}

/// `s` plus the elements before the first and after the last whole 16-byte vector, in order. Not
/// inlined: it splits `input` again, so the kernel need not keep the head and the tail in registers
/// through its loop (`input` is a kernel parameter, which the code can read again at any time).
#[inline(never)]
fn add_ends<T: Element, O: Op<T>>(s: T, input: Global<T>) -> T {
    add_ends_inline::<T, O>(s, input)
}

/// [`add_ends`] in line (the small-input kernels, which have no loop to keep registers through).
#[inline(always)]
fn add_ends_inline<T: Element, O: Op<T>>(mut s: T, input: Global<T>) -> T {
    let split = input.split_vectors();
    for i in 0..split.head.len() {
        s = O::apply(s, split.head.get(i));
    }
    for i in 0..split.tail.len() {
        s = O::apply(s, split.tail.get(i));
    }
    s
}

/// The warp sums' shared memory, once the block size is checked. The kernels call it after a thread's
/// first loads are issued: the two checks read the launch configuration (the block size, the dynamic
/// shared memory size), and done first they delayed the first loads of a small launch. (The loads
/// before it are bounds-checked whatever the block size; only the tile arithmetic assumes `BLOCK`.)
#[inline(always)]
fn checked_warp_sums() -> SharedSlice<u64> {
    if block_dim().x != BLOCK {
        panic!("reduce kernels are launched with BLOCK threads per block");
    }
    WarpWords::view().words
}

/// The kernel body shared by every element type and operation: see the module docs.
#[inline(always)]
fn reduce_fast<T: Element, O: Op<T>>(
    input: Global<T>,
    vblocks: u32,
    partials: GlobalMut<u64>,
    ticket: GlobalMut<u32>,
    out: GlobalMut<T>,
) {
    let split = input.split_vectors();
    let t = thread_idx().x;
    // One block, one virtual block (small inputs): the block's sum is the result. No partial, no
    // barrier, no second block sum, no ticket. `ZERO + s` is the general path's first addition (the
    // last block adds the one partial to zero; its further additions of zeros change no bits after
    // that one), so both paths give the same bits.
    if grid_dim().x == 1 && vblocks == 1 {
        let v = virtual_block_sum::<T, O>(split.body, 0, 1);
        let s = block_sum::<T, O>(v, checked_warp_sums());
        if t == 0 {
            out.set(0, add_ends::<T, O>(O::apply(O::identity(), s), input));
        }
        return;
    }
    let mut c = block_idx().x;
    while c < vblocks {
        let v = virtual_block_sum::<T, O>(split.body, c as usize, vblocks as usize);
        let s = block_sum::<T, O>(v, checked_warp_sums());
        if t == 0 {
            partials.set(c as usize, s.to_word());
        }
        c += grid_dim().x;
    }
    // Publish this block's partials (fence, then the ticket's add: a release), and draw a ticket. The
    // thread that draws the last one fences right after its add (an acquire: it now sees every block's
    // partials), and the barrier passes that on to the rest of its block.
    // A grid of one block is its own last block: no ticket, no fences.
    let mut last = grid_dim().x == 1;
    if !last && t == 0 {
        threadfence();
        last = ticket.atomic(0).fetch_add(1) == grid_dim().x - 1;
        if last {
            threadfence();
        }
    }
    if sync_threads_or(last) {
        let sums = checked_warp_sums();
        let mut s = O::identity();
        let mut k = t;
        while k < vblocks {
            s = O::apply(s, T::from_word(partials.get(k as usize)));
            k += block_dim().x;
        }
        let s = block_sum::<T, O>(s, sums);
        if t == 0 {
            out.set(0, add_ends::<T, O>(s, input));
            // Every block has drawn its ticket: reset it for the next launch.
            if grid_dim().x > 1 {
                ticket.atomic(0).swap(0);
            }
        }
    }
}

/// Most 16-byte vectors (256 KiB) for which the launchers use the small-input kernels
/// (`reduce_small_*`, one block) instead of `reduce_fast_*`. Measured on an H200, cold
/// (bench/experiments/reduce_small_cold.csv): `reduce_small` took 3.9–6.3 µs up to 256 KiB, `reduce_fast` on one
/// block 4.0–8.2 µs, and `reduce_fast` as it was launched before (one block up to 128 KiB, a few
/// above) 4.2–6.7 µs; at 512 KiB a first form of `reduce_small` took 7.6 µs against 6.7 µs for
/// `reduce_fast` on its grid (bench/experiments/reduce_small_variants_cold.csv).
pub const SMALL_MAX_VECTORS: usize = 16384;

/// Whether the launchers sum `n` elements of `T` with a `reduce_small_*` kernel: up to
/// [`SMALL_MAX_VECTORS`] 16-byte vectors (256 KiB).
pub fn small_input<T>(n: usize) -> bool {
    n.saturating_mul(size_of::<T>()) <= SMALL_MAX_VECTORS * 16
}

/// Most 16-byte vectors a `reduce_small_*` kernel accepts (its indices are 32-bit); more is refused
/// with a panic.
pub const SMALL_KERNEL_LIMIT: usize = 1 << 31;

/// Tiles whose loads the small-input kernels issue together when the input has more than one (16
/// loads in flight per thread).
pub const SMALL_TILES_AHEAD: usize = 4;

/// `AHEAD` tiles of the small-input sum, from vector `base` on: this thread's vectors
/// `base + k * UNROLL * BLOCK + t + u * BLOCK`, every load issued before any is added (those past the
/// end read the last vector, and are not added), added tile by tile to accumulator `u` (`acc[0]` only
/// if `O::ASSOCIATIVE`). Adding zero leaves an accumulator's bits as they are (it starts at +0.0,
/// never -0.0), so this is [`virtual_block_sum`]'s arithmetic for one virtual block.
#[inline(always)]
fn small_tiles<T: Element, O: Op<T>, const AHEAD: usize>(acc: &mut [T; UNROLL], body: Vectors<T>, nv: u32, base: u32) {
    let i = |k: usize, u: usize| base + thread_idx().x + (k * UNROLL * BLOCK as usize + u * BLOCK as usize) as u32;
    let v: [[T::Vector; UNROLL]; AHEAD] =
        core::array::from_fn(|k| core::array::from_fn(|u| body.get(i(k, u).min(nv - 1) as usize)));
    // Indexed, not iterated: `into_iter` over the loaded vectors put them in a stack frame.
    #[allow(clippy::needless_range_loop)]
    for k in 0..AHEAD {
        for u in 0..UNROLL {
            let a = if O::ASSOCIATIVE { 0 } else { u };
            let x = vector_fold::<T, O>(v[k][u]);
            acc[a] = O::apply(acc[a], if i(k, u) < nv { x } else { O::identity() });
        }
    }
}

/// The sum of an input of more than one tile, [`SMALL_TILES_AHEAD`] tiles at a time. Not inlined and
/// marked cold, so that the machine code of a one-tile input runs straight from its loads to its
/// block sum: measured on an H200, cold, the kernel with this loop in line took one step of the clock
/// longer (4.16 µs against 3.94 µs for the nvcc twin, whose loop stayed small).
#[inline(never)]
#[cold]
fn small_tiles_loop<T: Element, O: Op<T>>(mut acc: [T; UNROLL], body: Vectors<T>, nv: u32) -> [T; UNROLL] {
    const TILE: u32 = UNROLL as u32 * BLOCK;
    // One check that `nv` is the length, so that the loads' checks (of indices below `nv`) fold away.
    let body = body.sub(0, nv as usize);
    let mut base = 0;
    while base < nv {
        small_tiles::<T, O, SMALL_TILES_AHEAD>(&mut acc, body, nv, base);
        base += SMALL_TILES_AHEAD as u32 * TILE;
    }
    acc
}

/// The small-input sum: [`reduce_fast`]'s one-block path (one virtual block on one block, so the
/// same additions in the same order and the same bits) with 32-bit indices, and the tiles after the
/// first out of line (see the module docs).
#[inline(always)]
fn reduce_small<T: Element, O: Op<T>>(input: Global<T>, out: GlobalMut<T>) {
    let body = input.split_vectors().body;
    if body.len() > SMALL_KERNEL_LIMIT {
        panic!("reduce_small kernels sum at most SMALL_KERNEL_LIMIT vectors");
    }
    // 32-bit indices: below SMALL_KERNEL_LIMIT + SMALL_TILES_AHEAD tiles, they never wrap.
    let nv = body.len() as u32;
    let mut acc = [O::identity(); UNROLL];
    if nv > (UNROLL * BLOCK as usize) as u32 {
        acc = small_tiles_loop::<T, O>(acc, body, nv);
    } else if nv > 0 {
        small_tiles::<T, O, 1>(&mut acc, body, nv, 0);
    }
    if grid_dim().x != 1 {
        panic!("reduce_small kernels are launched on one block");
    }
    let s = block_sum_once::<T, O>(O::apply(O::apply(acc[0], acc[1]), O::apply(acc[2], acc[3])), checked_warp_sums());
    if thread_idx().x == 0 {
        out.set(0, add_ends_inline::<T, O>(O::apply(O::identity(), s), input));
    }
}

/// The two kernels of one operation and element type: `$small` (one block, small inputs) and `$fast`.
macro_rules! reduce_kernels {
    ($($small:ident, $fast:ident: $op:ident, $t:ty, $what:literal, $blocks:literal;)*) => {$(
        kernel! {
            #[doc = concat!("`out[0]` = ", $what, " of `input` (`", stringify!($t), "`) for small inputs, with the bits of [`", stringify!($fast), "`] on one block with one virtual block. Launch: one block of `BLOCK` threads, `SHARED_BYTES`; at most [`SMALL_KERNEL_LIMIT`] vectors; `input` not empty.")]
            #[launch_bounds(512, 1)]
            pub fn $small<'a>(input: Global<'a, $t>, out: GlobalMut<'a, $t>) {
                reduce_small::<$t, $op>(input, out)
            }
        }
        kernel! {
            #[doc = concat!("`out[0]` = ", $what, " of `input` (`", stringify!($t), "`). Launch: `BLOCK` threads, `SHARED_BYTES`, any 1-D grid; `partials` holds at least `vblocks` words; `ticket[0]` is 0 at launch (every launch leaves it 0); `input` not empty.")]
            #[launch_bounds(512, $blocks)]
            pub fn $fast<'a>(input: Global<'a, $t>, vblocks: u32, partials: GlobalMut<'a, u64>, ticket: GlobalMut<'a, u32>, out: GlobalMut<'a, $t>) {
                reduce_fast::<$t, $op>(input, vblocks, partials, ticket, out)
            }
        }
    )*};
}

// Every kernel on three blocks of 512 threads per SM (42 registers); float minima and maxima fit since
// they take one instruction (`min.NaN.f32`) or LLVM's short sequence for f64 (`element::Min`).
reduce_kernels! {
    reduce_small_sum_u32, reduce_sum_u32: Sum, u32, "the wrapping sum", 3;
    reduce_small_sum_i32, reduce_sum_i32: Sum, i32, "the wrapping sum", 3;
    reduce_small_sum_u64, reduce_sum_u64: Sum, u64, "the wrapping sum", 3;
    reduce_small_sum_i64, reduce_sum_i64: Sum, i64, "the wrapping sum", 3;
    reduce_small_sum_f32, reduce_sum_f32: Sum, f32, "the sum", 3;
    reduce_small_sum_f64, reduce_sum_f64: Sum, f64, "the sum", 3;
    reduce_small_min_u32, reduce_min_u32: Min, u32, "the minimum", 3;
    reduce_small_min_i32, reduce_min_i32: Min, i32, "the minimum", 3;
    reduce_small_min_u64, reduce_min_u64: Min, u64, "the minimum", 3;
    reduce_small_min_i64, reduce_min_i64: Min, i64, "the minimum", 3;
    reduce_small_min_f32, reduce_min_f32: Min, f32, "the minimum (NaN if any element is)", 3;
    reduce_small_min_f64, reduce_min_f64: Min, f64, "the minimum (NaN if any element is)", 3;
    reduce_small_max_u32, reduce_max_u32: Max, u32, "the maximum", 3;
    reduce_small_max_i32, reduce_max_i32: Max, i32, "the maximum", 3;
    reduce_small_max_u64, reduce_max_u64: Max, u64, "the maximum", 3;
    reduce_small_max_i64, reduce_max_i64: Max, i64, "the maximum", 3;
    reduce_small_max_f32, reduce_max_f32: Max, f32, "the maximum (NaN if any element is)", 3;
    reduce_small_max_f64, reduce_max_f64: Max, f64, "the maximum (NaN if any element is)", 3;
}
