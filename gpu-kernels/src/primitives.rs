//! Kernels that exercise every primitive of the device layer, so that the host can compare each one,
//! on a GPU and on the emulator, with its CPU model: all shuffle modes, types and widths; votes; the
//! reducing barriers; every atomic with its old values, at every scope, in global and shared memory;
//! fences with volatile and acquire/release flags; the grid barrier; warp tiles.
use gpu_std::atomic::{Atomic, AtomicFloat, AtomicInt, AtomicRef, Block, Device, Scope, Space, System};
use gpu_std::block::{sync_threads, sync_threads_and, sync_threads_count, sync_threads_or};
use gpu_std::fence::{threadfence, threadfence_block, threadfence_system};
use gpu_std::grid::{this_grid, tiled_partition};
use gpu_std::spin::SPIN_LIMIT;
use gpu_std::thread::{block_idx, global_index_x, thread_idx};
use gpu_std::warp::{self, FULL_MASK, ShflValue};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// Threads per block for the warp and barrier checks (several warps, one partial-free block).
pub const BLOCK: u32 = 128;

/// Shuffle modes as passed to [`prim_shfl`].
pub const MODE_DOWN: u32 = 0;
pub const MODE_UP: u32 = 1;
pub const MODE_XOR: u32 = 2;
pub const MODE_IDX: u32 = 3;
/// Types as passed to [`prim_shfl`]: the u64 input's low bits reinterpreted.
pub const TY_U32: u32 = 0;
pub const TY_I32: u32 = 1;
pub const TY_F32: u32 = 2;
pub const TY_U64: u32 = 3;
pub const TY_F64: u32 = 4;
pub const TY_I64: u32 = 5;

/// The lane-dependent operand of an idx shuffle (exercises arbitrary sources).
pub const fn idx_operand(lane: u32, b: u32) -> u32 {
    (lane * 5 + b) & 31
}

fn shfl_mode<T: ShflValue>(v: T, mode: u32, b: u32, width: u32) -> T {
    match mode {
        MODE_DOWN => warp::shfl_down_width(FULL_MASK, v, b, width),
        MODE_UP => warp::shfl_up_width(FULL_MASK, v, b, width),
        MODE_XOR => warp::shfl_xor_width(FULL_MASK, v, b, width),
        _ => warp::shfl_idx_width(FULL_MASK, v, idx_operand(warp::lane_id(), b), width),
    }
}

kernel! {
    /// `out[i]` = the shuffle of `input[i]` (mode, operand `b`, width, type as bit patterns in u64).
    /// Launch with whole warps.
    pub fn prim_shfl<'a>(input: Global<'a, u64>, out: GlobalMut<'a, u64>, mode: u32, b: u32, width: u32, ty: u32) {
        let i = global_index_x();
        let x = input.get(i);
        let r = match ty {
            TY_U32 => shfl_mode(x as u32, mode, b, width) as u64,
            TY_I32 => shfl_mode(x as u32 as i32, mode, b, width) as u32 as u64,
            TY_F32 => shfl_mode(f32::from_bits(x as u32), mode, b, width).to_bits() as u64,
            TY_U64 => shfl_mode(x, mode, b, width),
            TY_I64 => shfl_mode(x as i64, mode, b, width) as u64,
            _ => shfl_mode(f64::from_bits(x), mode, b, width).to_bits(),
        };
        out.set(i, r);
    }
}

/// Words written per thread by [`prim_shfl_table`].
pub const SHFL_TABLE_WORDS: usize = 3;

/// A shuffle in `mode` with the caller's own operand `b` (for idx too: the source lane as given).
fn shfl_own_operand<T: ShflValue>(v: T, mode: u32, b: u32, width: u32) -> T {
    match mode {
        MODE_DOWN => warp::shfl_down_width(FULL_MASK, v, b, width),
        MODE_UP => warp::shfl_up_width(FULL_MASK, v, b, width),
        MODE_XOR => warp::shfl_xor_width(FULL_MASK, v, b, width),
        _ => warp::shfl_idx_width(FULL_MASK, v, b, width),
    }
}

kernel! {
    /// Every thread `i` shuffles its own lane id with its own operand `b = ops[i]` (mode and width as
    /// for [`prim_shfl`]), once as u32 and once as the u64 `lane | (lane + 100) << 32` (two 32-bit
    /// shuffles). Writes `out[3i..3i+3]` = `[u32 result, u64 result low word, u64 result high word]`:
    /// the lane read (the caller's own when the source is out of range), then that lane and it + 100.
    /// Launch with whole warps.
    pub fn prim_shfl_table<'a>(ops: Global<'a, u32>, out: GlobalMut<'a, u32>, mode: u32, width: u32) {
        let i = global_index_x();
        let lane = warp::lane_id();
        let b = ops.get(i);
        let narrow = shfl_own_operand(lane, mode, b, width);
        let wide = shfl_own_operand(lane as u64 | ((lane as u64 + 100) << 32), mode, b, width);
        let o = i * SHFL_TABLE_WORDS;
        out.set(o, narrow);
        out.set(o + 1, wide as u32);
        out.set(o + 2, (wide >> 32) as u32);
    }
}

/// Words written per thread by [`prim_vote`].
pub const VOTE_WORDS: usize = 9;

kernel! {
    /// Per thread `i` with predicate `preds[i] != 0`, writes `out[9i..9i+9]` =
    /// `[ballot(full), any(full), all(full), ballot(own half-warp), lane_id, active_mask, warp_id,
    /// match_bits(full, v, 4), match_bits(own half-warp, v, 32)]` with `v = lane / 4 + 8 preds[i]`.
    pub fn prim_vote<'a>(preds: Global<'a, u32>, out: GlobalMut<'a, u32>) {
        let i = global_index_x();
        let p = preds.get(i) != 0;
        let lane = warp::lane_id();
        let half = if lane < 16 { 0x0000_ffff } else { 0xffff_0000 };
        let ballot = warp::ballot(FULL_MASK, p);
        let any = warp::any(FULL_MASK, p);
        let all = warp::all(FULL_MASK, p);
        let half_ballot = warp::ballot(half, p);
        warp::sync_warp(FULL_MASK);
        let active = warp::active_mask();
        let o = i * VOTE_WORDS;
        out.set(o, ballot);
        out.set(o + 1, any as u32);
        out.set(o + 2, all as u32);
        out.set(o + 3, half_ballot);
        out.set(o + 4, lane);
        out.set(o + 5, active);
        out.set(o + 6, warp::warp_id());
        let v = lane / 4 + 8 * preds.get(i);
        out.set(o + 7, warp::match_bits(FULL_MASK, v, 4));
        out.set(o + 8, warp::match_bits(half, v, 32));
    }
}

kernel! {
    /// Per thread: `out[3i..3i+3]` = `[sync_threads_count(p), sync_threads_and(p), sync_threads_or(p)]`
    /// with `p = preds[i] != 0`.
    pub fn prim_barrier<'a>(preds: Global<'a, u32>, out: GlobalMut<'a, u32>) {
        let i = global_index_x();
        let p = preds.get(i) != 0;
        let c = sync_threads_count(p);
        let a = sync_threads_and(p);
        let o = sync_threads_or(p);
        sync_threads();
        out.set(3 * i, c);
        out.set(3 * i + 1, a as u32);
        out.set(3 * i + 2, o as u32);
    }
}

/// Atomic operations as passed to the `prim_atomic_*` kernels.
pub const OP_ADD: u32 = 0;
pub const OP_SUB: u32 = 1;
pub const OP_MIN: u32 = 2;
pub const OP_MAX: u32 = 3;
pub const OP_INC: u32 = 4;
pub const OP_DEC: u32 = 5;
pub const OP_AND: u32 = 6;
pub const OP_OR: u32 = 7;
pub const OP_XOR: u32 = 8;
pub const OP_EXCH: u32 = 9;
/// Increment by a compare-and-swap loop; the old value is the one the successful CAS replaced.
pub const OP_CAS_INC: u32 = 10;
/// f64 add by the chapter's CAS loop (`atomicAddDouble`).
pub const OP_CAS_ADD_F64: u32 = 11;
/// Scopes as passed to the `prim_atomic_*` kernels. With `SCOPE_BLOCK` every block uses its own cell
/// (`cells[blockIdx.x]`), since block scope promises atomicity only within a block.
pub const SCOPE_BLOCK: u32 = 0;
pub const SCOPE_DEVICE: u32 = 1;
pub const SCOPE_SYSTEM: u32 = 2;
/// `inc`/`dec` limit.
pub const INC_LIMIT: u32 = 1000;

fn cas_increment<T: Atomic + PartialEq, S: Scope, Sp: Space>(a: AtomicRef<T, S, Sp>, one: fn(T) -> T) -> T {
    let mut old = a.compare_and_swap(T::zero(), T::zero());
    loop {
        let seen = a.compare_and_swap(old, one(old));
        if seen == old {
            return old;
        }
        old = seen;
    }
}

fn int_op<T: AtomicInt + PartialEq, S: Scope, Sp: Space>(a: AtomicRef<T, S, Sp>, op: u32, v: T, one: fn(T) -> T) -> T {
    match op {
        OP_ADD => a.fetch_add(v),
        OP_SUB => a.fetch_sub(v),
        OP_MIN => a.fetch_min(v),
        OP_MAX => a.fetch_max(v),
        OP_AND => a.fetch_and(v),
        OP_OR => a.fetch_or(v),
        OP_XOR => a.fetch_xor(v),
        OP_EXCH => a.swap(v),
        _ => cas_increment(a, one),
    }
}

fn int_scoped<T: AtomicInt + PartialEq>(cells: GlobalMut<T>, op: u32, scope: u32, v: T, one: fn(T) -> T) -> T {
    match scope {
        SCOPE_BLOCK => int_op(cells.atomic_scoped::<Block>(block_idx().x as usize), op, v, one),
        SCOPE_SYSTEM => int_op(cells.atomic_scoped::<System>(0), op, v, one),
        _ => int_op(cells.atomic_scoped::<Device>(0), op, v, one),
    }
}

macro_rules! int_kernel {
    ($name:ident, $t:ty) => {
        kernel! {
            /// Every thread `i` applies `op` with `vals[i]` to one cell at `scope` and writes the old
            /// value to `olds[i]`.
            pub fn $name<'a>(vals: Global<'a, $t>, cells: GlobalMut<'a, $t>, olds: GlobalMut<'a, $t>, op: u32, scope: u32) {
                let i = global_index_x();
                if i < vals.len() {
                    let old = int_scoped(cells, op, scope, vals.get(i), |x| x.wrapping_add(1));
                    olds.set(i, old);
                }
            }
        }
    };
}
int_kernel!(prim_atomic_i32, i32);
int_kernel!(prim_atomic_u64, u64);
int_kernel!(prim_atomic_i64, i64);

fn u32_op<S: Scope, Sp: Space>(a: AtomicRef<u32, S, Sp>, op: u32, v: u32) -> u32 {
    match op {
        OP_INC => a.fetch_inc(INC_LIMIT),
        OP_DEC => a.fetch_dec(INC_LIMIT),
        _ => int_op(a, op, v, |x| x.wrapping_add(1)),
    }
}

kernel! {
    /// As the other `prim_atomic_*` kernels, plus `inc`/`dec` with limit `INC_LIMIT`.
    pub fn prim_atomic_u32<'a>(vals: Global<'a, u32>, cells: GlobalMut<'a, u32>, olds: GlobalMut<'a, u32>, op: u32, scope: u32) {
        let i = global_index_x();
        if i < vals.len() {
            let v = vals.get(i);
            let old = match scope {
                SCOPE_BLOCK => u32_op(cells.atomic_scoped::<Block>(block_idx().x as usize), op, v),
                SCOPE_SYSTEM => u32_op(cells.atomic_scoped::<System>(0), op, v),
                _ => u32_op(cells.atomic(0), op, v),
            };
            olds.set(i, old);
        }
    }
}

fn float_op<T: AtomicFloat + PartialEq, S: Scope, Sp: Space>(a: AtomicRef<T, S, Sp>, op: u32, v: T) -> T {
    match op {
        OP_EXCH => a.swap(v),
        _ => a.fetch_add_float(v),
    }
}

kernel! {
    /// f32: add (at `scope`) or exch; olds recorded.
    pub fn prim_atomic_f32<'a>(vals: Global<'a, f32>, cells: GlobalMut<'a, f32>, olds: GlobalMut<'a, f32>, op: u32, scope: u32) {
        let i = global_index_x();
        if i < vals.len() {
            let v = vals.get(i);
            let old = match scope {
                SCOPE_BLOCK => float_op(cells.atomic_scoped::<Block>(block_idx().x as usize), op, v),
                SCOPE_SYSTEM => float_op(cells.atomic_scoped::<System>(0), op, v),
                _ => float_op(cells.atomic(0), op, v),
            };
            olds.set(i, old);
        }
    }
}

kernel! {
    /// f64: native add, exch, or the CAS-loop add (`OP_CAS_ADD_F64`); olds recorded.
    pub fn prim_atomic_f64<'a>(vals: Global<'a, f64>, cells: GlobalMut<'a, f64>, olds: GlobalMut<'a, f64>, op: u32, scope: u32) {
        let i = global_index_x();
        if i < vals.len() {
            let v = vals.get(i);
            let old = match (op, scope) {
                (OP_CAS_ADD_F64, _) => cells.atomic(0).fetch_add_cas_loop(v),
                (_, SCOPE_BLOCK) => float_op(cells.atomic_scoped::<Block>(block_idx().x as usize), op, v),
                (_, SCOPE_SYSTEM) => float_op(cells.atomic_scoped::<System>(0), op, v),
                _ => float_op(cells.atomic(0), op, v),
            };
            olds.set(i, old);
        }
    }
}

shared_layout! {
    /// Shared counters for [`prim_atomic_shared`].
    pub struct Cells {
        pub ints: [u32; 4],
        pub float: [f32; 1],
    }
}
pub const SHARED_ATOMIC_BYTES: usize = Cells::BYTES;

kernel! {
    /// Shared-memory atomics per block: add (olds recorded), max, cas-increment, f32 add.
    /// `out[4b..4b+4]` = the block's final `[sum, max, cas count, float sum bits]`.
    pub fn prim_atomic_shared<'a>(vals: Global<'a, u32>, olds: GlobalMut<'a, u32>, out: GlobalMut<'a, u32>) {
        let Cells { ints: c, float: f } = Cells::view();
        let t = thread_idx().x;
        if t == 0 {
            c.set(0, 0);
            c.set(1, 0);
            c.set(2, 0);
            f.set(0, 0.0);
        }
        sync_threads();
        let i = global_index_x();
        let v = vals.get(i);
        olds.set(i, c.atomic(0).fetch_add(v));
        c.atomic(1).fetch_max(v);
        cas_increment(c.atomic(2), |x| x + 1);
        f.atomic(0).fetch_add_float(v as f32);
        sync_threads();
        if t == 0 {
            let b = block_idx().x as usize;
            out.set(4 * b, c.get(0));
            out.set(4 * b + 1, c.get(1));
            out.set(4 * b + 2, c.get(2));
            out.set(4 * b + 3, f.get(0).to_bits());
        }
    }
}

kernel! {
    /// Message passing between block 0 (producer) and block 1 (consumer), three ways:
    /// flag 0: volatile store after `threadfence`, read by volatile polls then `threadfence`;
    /// flag 1: `store_release` / `load_acquire` (device scope);
    /// flag 2: system-scope fence and release/acquire.
    /// The consumer copies `data` into `copy[k * n ..]` for each way k; `status[k]` = 1 on success,
    /// 2 on spin timeout. Needs both blocks resident at once (2 blocks always are).
    pub fn prim_message<'a>(data: GlobalMut<'a, u32>, flags: GlobalMut<'a, u32>, copy: GlobalMut<'a, u32>, status: GlobalMut<'a, u32>) {
        let n = data.len();
        let t = thread_idx().x as usize;
        let step = gpu_std::thread::block_dim().x as usize;
        if block_idx().x == 0 {
            for way in 0..3usize {
                let mut i = t;
                while i < n {
                    data.set(i, (i as u32) * 3 + way as u32 + 1);
                    i += step;
                }
                // Every thread publishes its own writes; the last writer of the block sets the flag.
                match way {
                    0 => threadfence(),
                    1 => threadfence_block(),
                    _ => threadfence_system(),
                }
                sync_threads();
                if t == 0 {
                    match way {
                        0 => { threadfence(); flags.set_volatile(0, 1) }
                        1 => flags.atomic(1).store_release(1),
                        _ => flags.atomic_scoped::<System>(2).store_release(1),
                    }
                    // Wait until the consumer has copied before overwriting data for the next way.
                    let mut spins = 0;
                    while flags.atomic(3 + way).load_acquire() == 0 && spins < SPIN_LIMIT {
                        spins += 1;
                        gpu_std::fence::nanosleep(32);
                    }
                }
                sync_threads();
            }
        } else if block_idx().x == 1 {
            for way in 0..3usize {
                if t == 0 {
                    let mut spins = 0;
                    let ok = loop {
                        let seen = match way {
                            0 => flags.get_volatile(0),
                            1 => flags.atomic(1).load_acquire(),
                            _ => flags.atomic_scoped::<System>(2).load_acquire(),
                        };
                        if seen != 0 {
                            break true;
                        }
                        spins += 1;
                        if spins >= SPIN_LIMIT {
                            break false;
                        }
                        gpu_std::fence::nanosleep(32);
                    };
                    if way == 0 {
                        threadfence();
                    }
                    status.set(way, if ok { 1 } else { 2 });
                }
                sync_threads();
                let mut i = t;
                while i < n {
                    copy.set(way * n + i, data.get(i));
                    i += step;
                }
                threadfence();
                sync_threads();
                if t == 0 {
                    flags.atomic(3 + way).store_release(1);
                }
            }
        }
    }
}

/// Rounds of [`prim_grid_sync`].
pub const GRID_ROUNDS: usize = 4;

kernel! {
    /// `GRID_ROUNDS` rounds of `b[i] = a[i] + a[(i + 1) % n]` ping-ponging between `a` and `b`
    /// (`a` = `bufs[0..n]`, `b` = `bufs[n..2n]`), a grid barrier after each round. One element per thread.
    /// Cooperative launch only.
    pub fn prim_grid_sync<'a>(bufs: GlobalMut<'a, u32>, workspace: GlobalMut<'a, u32>) {
        let grid = this_grid(workspace);
        let n = bufs.len() / 2;
        let i = grid.thread_rank() as usize;
        for r in 0..GRID_ROUNDS {
            let (src, dst) = if r % 2 == 0 { (0, n) } else { (n, 0) };
            if i < n {
                let v = bufs.get(src + i).wrapping_add(bufs.get(src + (i + 1) % n));
                bufs.set(dst + i, v);
            }
            grid.sync();
        }
    }
}

kernel! {
    /// Warp tiles: `out32[t]` = sum over 32-thread tile t, `out16[t]` = sum over 16-thread tile t.
    pub fn prim_tile<'a>(input: Global<'a, f32>, out32: GlobalMut<'a, f32>, out16: GlobalMut<'a, f32>) {
        let i = global_index_x();
        let v = input.get(i);
        let t32 = tiled_partition::<32>();
        let t16 = tiled_partition::<16>();
        let s32 = t32.reduce_sum(v);
        let s16 = t16.reduce_sum(v);
        t16.sync();
        let base32 = block_idx().x as usize * t32.meta_group_size() as usize;
        let base16 = block_idx().x as usize * t16.meta_group_size() as usize;
        if t32.thread_rank() == 0 {
            out32.set(base32 + t32.meta_group_rank() as usize, s32);
        }
        if t16.thread_rank() == 0 {
            out16.set(base16 + t16.meta_group_rank() as usize, s16);
        }
    }
}

kernel! {
    /// Misuse kept on purpose: every lane calls a shuffle whose mask leaves lane 0 out, so lane 0 is
    /// not in its own mask (undefined in PTX). The safe shuffle checks that precondition: on a GPU lane
    /// 0 prints the reason and traps, and the launch fails; the emulator reports the lane and mask.
    pub fn prim_shfl_lane_not_in_mask<'a>(out: GlobalMut<'a, u32>) {
        let lane = warp::lane_id();
        out.set(global_index_x(), warp::shfl_down(!1u32, lane, 1));
    }
}
