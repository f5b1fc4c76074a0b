//! Double-precision atomic add two ways (000's `atomicAddDouble`): the compare-and-swap loop on the
//! 64-bit pattern that GPUs before sm_60 needed, next to the native `atom.add.f64`.
//!
//! The CAS loop reads the current pattern, computes `old + val`, and installs it with `atomicCAS` only
//! if the cell still holds what it read; otherwise another thread got in between, and it retries with
//! the value the CAS returned. Each success is one indivisible add, so both versions produce a serial
//! order of adds — but under contention most CAS attempts fail and retry, which the host measures.
//!
//! Decision procedure (§5.7):
//! 1. Who writes? Every thread writes the same cell (or one of `sums.len()` cells): atomics, either
//!    the native add or the CAS loop. Each thread's old value goes to its own element of an `Output`.
//! 2. Who reads after whom? The CAS loop reads the cell with a volatile load (the seed's plain read
//!    races with the other threads' CAS) and lets the CAS decide; no thread reads another's plain write.
//! 3. Across blocks? The atomics are device-scope: every block of the grid adds to the same cells.
//! 4. Deterministic? No: the hardware picks the order of the adds, so a float sum may differ in its
//!    last bits between runs (`fp_determinism`). With integer-valued doubles every order gives the same
//!    exact sum, which the host uses to check the old values exactly.
use gpu_std::thread::global_index_x;
use gpu_std::{Global, GlobalMut, Output, kernel};

/// Threads per block.
pub const BLOCK: u32 = 256;
/// Cells of the spread measurement (thread `i` adds to cell `i % 1024`).
pub const SPREAD: usize = 1024;

/// The cell thread `i` adds to: `i mod cells` in 32-bit arithmetic (the host keeps both below 2^31).
#[inline(always)]
fn cell(i: usize, cells: usize) -> usize {
    (i as u32 % cells as u32) as usize
}

kernel! {
    /// The chapter's `atomicAddDouble`: thread `i < vals.len()` adds `vals[i]` to
    /// `sums[i % sums.len()]` with the CAS loop and writes the old value it replaced to `olds[i]`.
    pub fn atomic_add_double_cas<'a>(vals: Global<'a, f64>, sums: GlobalMut<'a, f64>, olds: Output<'a, f64>) {
        let i = global_index_x();
        if i < vals.len() {
            let old = sums.atomic(cell(i, sums.len())).fetch_add_cas_loop(vals.get(i));
            if let Some(o) = olds.mine() {
                o.set(old);
            }
        }
    }
}

kernel! {
    /// The same with the native `atom.add.f64` (sm_60 and later).
    pub fn atomic_add_double_native<'a>(vals: Global<'a, f64>, sums: GlobalMut<'a, f64>, olds: Output<'a, f64>) {
        let i = global_index_x();
        if i < vals.len() {
            let old = sums.atomic(cell(i, sums.len())).fetch_add_float(vals.get(i));
            if let Some(o) = olds.mine() {
                o.set(old);
            }
        }
    }
}
