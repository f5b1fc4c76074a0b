//! Warp divergence (§5.2, exercise 1): the boundary guard of `conditionalAdd`, and a branch that splits
//! every warp against one that splits only whole blocks.
//!
//! A warp executes one instruction at a time for its 32 lanes. When lanes disagree on a branch, the
//! warp runs both paths one after the other, each with the other lanes masked off.
//! - [`branch_by_thread`] branches on `threadIdx.x % 2`: every warp holds both parities, so every warp
//!   runs both paths — about twice the time of one.
//! - [`branch_by_block`] branches on `blockIdx.x % 2`: the lanes of a warp always agree, and each warp
//!   runs one path.
//!
//! Both paths do real work: [`PATH_ITERS`] dependent multiply-adds, with different constants and
//! different operation orders so that the compiler cannot merge them into one loop.
//!
//! [`conditional_add`] is the chapter's kernel: its guard `if (i < n)` splits at most one warp of the
//! grid — the one that holds `n` — so its cost is negligible (exercise 1).
//! [`conditional_add_unguarded`] is the same body without the guard, for sizes that are a multiple of
//! the block, so that the host can time the guard: it writes through a `GlobalMut` because an
//! `Output` hands out only elements that pass its own bounds test, which is the guard being measured.
//! (Every view access keeps its bounds check, which traps on a GPU: a thread past the end stops the
//! launch rather than writing out of bounds.)
//!
//! Decision procedure (§5.7):
//! 1. Who writes? Each thread writes its own output element: no atomics.
//! 2. Who reads after whom? No thread reads another's write: no barrier. Divergence costs time, not
//!    correctness — no branch here contains a barrier or a warp collective.
//! 3. Across blocks? Nothing is shared between blocks.
//! 4. Deterministic? Yes: each output is a fixed sequence of f32 operations on one input.
use gpu_std::thread::{block_idx, global_index_x, thread_idx};
use gpu_std::{Global, GlobalMut, Output, kernel};

/// Threads per block.
pub const BLOCK: u32 = 256;
/// Multiply-adds per path in the branch kernels (the host passes it; the GPU timing uses it).
pub const PATH_ITERS: u32 = 256;

/// The work of path A: `x = x * 0.999 + 0.5`, `iters` times. Each step is a multiply and an add, each
/// rounded to nearest (Rust never fuses them into an FMA; the NVPTX backend emits `mul.rn.f32` and
/// `add.rn.f32`, which `ptxas` may not contract), so the CPU computes exactly the same bits.
#[inline(always)]
pub fn path_a(mut x: f32, iters: u32) -> f32 {
    for _ in 0..iters {
        x = x * 0.999 + 0.5;
    }
    x
}

/// The work of path B: `x = (x - 0.25) * 1.001`, `iters` times: other constants, other order.
#[inline(always)]
pub fn path_b(mut x: f32, iters: u32) -> f32 {
    for _ in 0..iters {
        x = (x - 0.25) * 1.001;
    }
    x
}

#[inline(always)]
fn branch_body(input: Global<f32>, out: Output<f32>, iters: u32, take_a: bool) {
    let i = global_index_x();
    if i < input.len() {
        let x = input.get(i);
        let y = if take_a { path_a(x, iters) } else { path_b(x, iters) };
        if let Some(o) = out.mine() {
            o.set(y);
        }
    }
}

kernel! {
    /// Divergent in every warp: even threads take path A, odd threads path B.
    pub fn branch_by_thread<'a>(input: Global<'a, f32>, out: Output<'a, f32>, iters: u32) {
        branch_body(input, out, iters, thread_idx().x.is_multiple_of(2))
    }
}

kernel! {
    /// Warp-uniform: even blocks take path A, odd blocks path B.
    pub fn branch_by_block<'a>(input: Global<'a, f32>, out: Output<'a, f32>, iters: u32) {
        branch_body(input, out, iters, block_idx().x.is_multiple_of(2))
    }
}

kernel! {
    /// The chapter's `conditionalAdd`: `out[i] = a[i] + 1` for `i < n = a.len()`. Threads past `n` do
    /// nothing, even where `out` has an element for them.
    pub fn conditional_add<'a>(a: Global<'a, f32>, out: Output<'a, f32>) {
        let i = global_index_x();
        if i < a.len()
            && let Some(o) = out.mine()
        {
            o.set(a.get(i) + 1.0);
        }
    }
}

kernel! {
    /// `conditionalAdd` without the guard: launch only with `a.len()` a multiple of the block and a grid
    /// that covers it exactly (a thread past the end would trap on the bounds check of `a.get`).
    pub fn conditional_add_unguarded<'a>(a: Global<'a, f32>, out: GlobalMut<'a, f32>) {
        let i = global_index_x();
        out.set(i, a.get(i) + 1.0);
    }
}
