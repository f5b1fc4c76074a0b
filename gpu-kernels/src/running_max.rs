//! A global running maximum without a lock (exercise 4; 002's `atomicMax`), and its relatives.
//!
//! `atomicMax(&cell, v)` raises the cell to `v` if `v` is larger, indivisibly, and returns the old
//! value — the maximum of everything applied before it. So every thread can fold its value into one
//! global maximum with a single instruction, and no lock.
//! - [`running_max_i32`], [`running_min_i32`]: `atomicMax` / `atomicMin` on ints;
//!   [`countdown_sub_i32`]: `atomicSub`.
//! - Floats have no `atomicMax`. [`running_max_f32_bits`] maps each float to a `u32` whose unsigned
//!   order is the float order ([`float_key`]) and uses the integer `atomicMax`.
//!   [`running_max_f32_cas`] keeps the float in the cell and raises it with a compare-and-swap loop.
//!
//! Float order and NaN policy (both float kernels): `-0.0 < +0.0` (so the maximum of the two zeros is
//! `+0.0`, whichever comes first), and NaN inputs are ignored, as IEEE 754's `maxNum` and C's `fmaxf`
//! do; the maximum of nothing but NaNs is the initial `-inf`. The cell therefore never holds a NaN.
//!
//! Decision procedure (§5.7):
//! 1. Who writes? Every thread writes the one cell: atomics (max/min/sub, or CAS). Each thread's old
//!    value goes to its own element of an `Output`.
//! 2. Who reads after whom? The CAS loop reads the cell with a volatile load and lets the CAS decide;
//!    a stale read costs one more iteration, never a wrong result.
//! 3. Across blocks? Device-scope atomics: every block updates the same cell.
//! 4. Deterministic? The final value is (max, min and sub are associative and commutative); the old
//!    values each thread sees depend on the order the hardware picks.
use gpu_std::thread::global_index_x;
use gpu_std::{Global, GlobalMut, Output, kernel};

/// Threads per block.
pub const BLOCK: u32 = 256;

/// The order-preserving key of a float: for non-NaN `a`, `b`, `a < b` (with `-0.0 < +0.0`) exactly
/// when `float_key(a) < float_key(b)`. Negative floats have their bits flipped (a larger magnitude
/// becomes a smaller key); non-negative ones get the sign bit set (above every negative).
#[inline(always)]
pub const fn float_key(x: f32) -> u32 {
    let b = x.to_bits();
    if b & 0x8000_0000 != 0 { !b } else { b | 0x8000_0000 }
}

/// The float of a key: the inverse of [`float_key`], bit for bit.
#[inline(always)]
pub const fn float_of_key(k: u32) -> f32 {
    f32::from_bits(if k & 0x8000_0000 != 0 { k & 0x7fff_ffff } else { !k })
}

/// The initial maximum, `-inf`, as a key: a NaN input is applied as this key, which raises nothing.
pub const KEY_NEG_INF: u32 = float_key(f32::NEG_INFINITY);

kernel! {
    /// `atomicMax(&cell[0], vals[i])` for every `i`; `olds[i]` = the maximum before thread i's update.
    pub fn running_max_i32<'a>(vals: Global<'a, i32>, cell: GlobalMut<'a, i32>, olds: Output<'a, i32>) {
        let i = global_index_x();
        if i < vals.len() {
            let old = cell.atomic(0).fetch_max(vals.get(i));
            if let Some(o) = olds.mine() {
                o.set(old);
            }
        }
    }
}

kernel! {
    /// `atomicMin(&cell[0], vals[i])` for every `i`; `olds[i]` = the minimum before.
    pub fn running_min_i32<'a>(vals: Global<'a, i32>, cell: GlobalMut<'a, i32>, olds: Output<'a, i32>) {
        let i = global_index_x();
        if i < vals.len() {
            let old = cell.atomic(0).fetch_min(vals.get(i));
            if let Some(o) = olds.mine() {
                o.set(old);
            }
        }
    }
}

kernel! {
    /// `atomicSub(&cell[0], vals[i])` for every `i`; `olds[i]` = the value before.
    pub fn countdown_sub_i32<'a>(vals: Global<'a, i32>, cell: GlobalMut<'a, i32>, olds: Output<'a, i32>) {
        let i = global_index_x();
        if i < vals.len() {
            let old = cell.atomic(0).fetch_sub(vals.get(i));
            if let Some(o) = olds.mine() {
                o.set(old);
            }
        }
    }
}

kernel! {
    /// Float running maximum through keys: `cell[0]` holds [`float_key`] of the maximum (initially
    /// [`KEY_NEG_INF`]); `olds[i]` = the maximum before thread i's update, as a float.
    pub fn running_max_f32_bits<'a>(vals: Global<'a, f32>, cell: GlobalMut<'a, u32>, olds: Output<'a, f32>) {
        let i = global_index_x();
        if i < vals.len() {
            let v = vals.get(i);
            let key = if v.is_nan() { KEY_NEG_INF } else { float_key(v) };
            let old = cell.atomic(0).fetch_max(key);
            if let Some(o) = olds.mine() {
                o.set(float_of_key(old));
            }
        }
    }
}

kernel! {
    /// Float running maximum by a CAS loop on the float cell (initially `-inf`): while `v` is above the
    /// current value, try to swap it in. `olds[i]` = the value thread i's update replaced, or the
    /// value it found at least as large (then it writes nothing).
    pub fn running_max_f32_cas<'a>(vals: Global<'a, f32>, cell: GlobalMut<'a, f32>, olds: Output<'a, f32>) {
        let i = global_index_x();
        if i < vals.len() {
            let v = vals.get(i);
            let a = cell.atomic(0);
            let mut cur = cell.get_volatile(0);
            let old = if v.is_nan() {
                cur
            } else {
                loop {
                    if float_key(v) <= float_key(cur) {
                        break cur;
                    }
                    // Compares bit patterns: succeeds only if the cell still holds exactly `cur`.
                    let seen = a.compare_and_swap(cur, v);
                    if seen.to_bits() == cur.to_bits() {
                        break cur;
                    }
                    cur = seen;
                }
            };
            if let Some(o) = olds.mine() {
                o.set(old);
            }
        }
    }
}
