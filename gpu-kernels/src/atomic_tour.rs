//! A tour of the atomics of §5.5 on every type the chapter names — `int`, `unsigned int`,
//! `unsigned long long`, `float`, `double` — under full contention: every thread of the grid applies
//! every operation of its type to one shared cell per operation, and records each old value.
//!
//! Integer types: `atomicAdd(p, 1)`, `atomicAdd`, `atomicSub`, `atomicExch`, `atomicMin`, `atomicMax`,
//! `atomicAnd`, `atomicOr`, `atomicXor`, and an increment built from `atomicCAS`; `unsigned int` also
//! `atomicInc` and `atomicDec`. (CUDA has no 64-bit `atomicSub`: for `u64` it is the add of the two's
//! complement, as CUDA code writes it, and as `atomicSub` itself compiles.) Float types: `atomicAdd(p, 1)`,
//! `atomicAdd`, `atomicExch`, and an add built from `atomicCAS` on the bit pattern (for `double`, the
//! chapter's `atomicAddDouble`).
//!
//! Thread `i` writes the old value of operation `k` to `olds[k * T + i]`, `T` = threads in the grid:
//! the elements it owns in an `Output`'s grid-stride order, so no two threads share one.
//!
//! Decision procedure (§5.7):
//! 1. Who writes? Every thread writes every cell: atomics, one per update. Old values: one writer per
//!    element (`Output`).
//! 2. Who reads after whom? The CAS loops read their cell with a volatile load and let the CAS decide;
//!    no thread reads another's plain write.
//! 3. Across blocks? Device-scope atomics: all blocks update the same cells.
//! 4. Deterministic? The final values are (every integer operation here is order-independent in its
//!    final value except exchange, whose final value is whichever operand came last; the float adds are
//!    of integers, exact in any order); the old values depend on the order the hardware picks.
use gpu_std::thread::global_index_x;
use gpu_std::{Global, GlobalMut, Output, kernel};

/// Threads per block.
pub const BLOCK: u32 = 256;

/// Integer operations, in the order each thread applies them; operation `k` uses cell `k`.
/// `atomicAdd(p, 1)`.
pub const ADD_ONE: usize = 0;
/// `atomicAdd(p, small[i])`.
pub const ADD: usize = 1;
/// `atomicSub(p, small[i])`.
pub const SUB: usize = 2;
/// `atomicExch(p, bits[i])`.
pub const EXCH: usize = 3;
/// `atomicMin(p, bits[i])`.
pub const MIN: usize = 4;
/// `atomicMax(p, bits[i])`.
pub const MAX: usize = 5;
/// `atomicAnd(p, bits[i])`.
pub const AND: usize = 6;
/// `atomicOr(p, bits[i])`.
pub const OR: usize = 7;
/// `atomicXor(p, bits[i])`.
pub const XOR: usize = 8;
/// `+1` by an `atomicCAS` loop.
pub const CAS: usize = 9;
/// Operations of `int` and `unsigned long long`.
pub const INT_OPS: usize = 10;
/// `atomicInc(p, INC_LIMIT)` (`unsigned int` only).
pub const INC: usize = 10;
/// `atomicDec(p, INC_LIMIT)` (`unsigned int` only).
pub const DEC: usize = 11;
/// Operations of `unsigned int`.
pub const U32_OPS: usize = 12;
/// The wrap limit of `atomicInc` / `atomicDec`.
pub const INC_LIMIT: u32 = 1000;

/// Float operations; operation `k` uses cell `k`. `atomicAdd(p, 1.0)`.
pub const F_ADD_ONE: usize = 0;
/// `atomicAdd(p, small[i])`.
pub const F_ADD: usize = 1;
/// `atomicExch(p, bits[i])`.
pub const F_EXCH: usize = 2;
/// `+1.0` by an `atomicCAS` loop on the bit pattern.
pub const F_CAS_ADD: usize = 3;
/// Operations of `float` and `double`.
pub const FLOAT_OPS: usize = 4;

macro_rules! int_tour {
    ($(#[$($m:tt)*])* $name:ident, $t:ty, |$cells:ident, $put:ident| $extra:block) => {
        kernel! {
            $(#[$($m)*])*
            pub fn $name<'a>(small: Global<'a, $t>, bits: Global<'a, $t>, cells: GlobalMut<'a, $t>, olds: Output<'a, $t>) {
                let i = global_index_x();
                if i < small.len() {
                    let (v, w) = (small.get(i), bits.get(i));
                    let mut row = olds.grid_stride();
                    let mut $put = |old: $t| {
                        if let Some(slot) = row.next() {
                            slot.set(old);
                        }
                    };
                    $put(cells.atomic(ADD_ONE).fetch_add(1));
                    $put(cells.atomic(ADD).fetch_add(v));
                    $put(cells.atomic(SUB).fetch_sub(v));
                    $put(cells.atomic(EXCH).swap(w));
                    $put(cells.atomic(MIN).fetch_min(w));
                    $put(cells.atomic(MAX).fetch_max(w));
                    $put(cells.atomic(AND).fetch_and(w));
                    $put(cells.atomic(OR).fetch_or(w));
                    $put(cells.atomic(XOR).fetch_xor(w));
                    // +1 by compare-and-swap: retry with the value the failed CAS saw.
                    let cas = cells.atomic(CAS);
                    let mut old = cells.get_volatile(CAS);
                    loop {
                        let seen = cas.compare_and_swap(old, old.wrapping_add(1));
                        if seen == old {
                            break;
                        }
                        old = seen;
                    }
                    $put(old);
                    let $cells = cells;
                    $extra
                }
            }
        }
    };
}

int_tour!(
    /// `int`: the ten integer operations, old values to `olds[k * threads + i]`.
    atomic_tour_i32,
    i32,
    |_cells, _put| {}
);
int_tour!(
    /// `unsigned long long`: the ten integer operations.
    atomic_tour_u64,
    u64,
    |_cells, _put| {}
);
int_tour!(
    /// `unsigned int`: the ten integer operations, then `atomicInc` and `atomicDec`.
    atomic_tour_u32,
    u32,
    |cells, put| {
        put(cells.atomic(INC).fetch_inc(INC_LIMIT));
        put(cells.atomic(DEC).fetch_dec(INC_LIMIT));
    }
);

/// `+v` on float cell `k` by a CAS loop on its 32-bit pattern (`atomicAddDouble` for `float`).
#[inline(always)]
fn add_f32_by_cas(cells: GlobalMut<f32>, k: usize, v: f32) -> f32 {
    let cas = cells.atomic(k);
    let mut old = cells.get_volatile(k);
    loop {
        let seen = cas.compare_and_swap(old, old + v);
        if seen.to_bits() == old.to_bits() {
            return old;
        }
        old = seen;
    }
}

/// `+v` on double cell `k` by the chapter's `atomicAddDouble`.
#[inline(always)]
fn add_f64_by_cas(cells: GlobalMut<f64>, k: usize, v: f64) -> f64 {
    cells.atomic(k).fetch_add_cas_loop(v)
}

macro_rules! float_tour {
    ($(#[$($m:tt)*])* $name:ident, $t:ty, $cas_add:ident) => {
        kernel! {
            $(#[$($m)*])*
            pub fn $name<'a>(small: Global<'a, $t>, bits: Global<'a, $t>, cells: GlobalMut<'a, $t>, olds: Output<'a, $t>) {
                let i = global_index_x();
                if i < small.len() {
                    let (v, w) = (small.get(i), bits.get(i));
                    let mut row = olds.grid_stride();
                    let mut put = |old: $t| {
                        if let Some(slot) = row.next() {
                            slot.set(old);
                        }
                    };
                    put(cells.atomic(F_ADD_ONE).fetch_add_float(1.0));
                    put(cells.atomic(F_ADD).fetch_add_float(v));
                    put(cells.atomic(F_EXCH).swap(w));
                    put($cas_add(cells, F_CAS_ADD, 1.0));
                }
            }
        }
    };
}

float_tour!(
    /// `float`: the four float operations, old values to `olds[k * threads + i]`.
    atomic_tour_f32,
    f32,
    add_f32_by_cas
);
float_tour!(
    /// `double`: the four float operations; the CAS add is `atomicAddDouble`.
    atomic_tour_f64,
    f64,
    add_f64_by_cas
);
