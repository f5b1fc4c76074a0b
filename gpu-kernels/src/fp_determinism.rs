//! Floating-point non-determinism (§5.6): an atomic float sum against a fixed-order tree sum.
//!
//! Float addition is not associative: `(a + b) + c` may differ from `a + (b + c)` in the last bits.
//! [`sum_atomic`] adds every element to one cell with its own `atomicAdd`: the hardware picks the order,
//! so the bits of the result may change from run to run. [`sum_tree`] adds in one fixed order — the
//! pairwise tree over the element indices: `x0 + x1`, `x2 + x3`, then `(x0 + x1) + (x2 + x3)`, ... —
//! so its result is a function of the input alone.
//!
//! The tree is the same whatever the launch shape. A block of `B` threads (a power of two) reduces the
//! `2B` elements `[2Bb, 2B(b+1))`, an aligned node of the global tree, level by level in shared
//! memory; the host then reduces the block sums with the same kernel until one value is left. Missing
//! elements (past `n`) are `+0.0`, and adding `+0.0` changes no value but `-0.0`, which no partial sum
//! of inputs without `-0.0` can be; so every block size, hence every grid size, gives the same bits —
//! those of the pairwise sum the CPU computes.
//!
//! Decision procedure (§5.7):
//! 1. Who writes? `sum_atomic`: every thread writes the one result, so atomics. `sum_tree`: each thread
//!    writes its own shared slot and thread 0 of each block its block's sum (an `Output`).
//! 2. Who reads after whom? In the tree, a thread reads the slot its neighbour wrote on the level
//!    before: a block barrier between levels, reached by every thread (the loop bound is uniform).
//! 3. Across blocks? Block sums meet in the next launch, not through memory shared during one: kernel
//!    boundaries order them.
//! 4. Deterministic? The atomic sum: no. The tree: yes, bit for bit, for any grid.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, block_idx, grid_stride, thread_idx};
use gpu_std::{Global, GlobalMut, Output, PerBlock, kernel, shared_layout};

/// Threads per block of [`sum_atomic`].
pub const BLOCK: u32 = 256;
/// Grid cap of [`sum_atomic`] (a grid-stride loop covers the rest).
pub const MAX_GRID: u32 = 1024;
/// Largest block of [`sum_tree`] (its shared array has one slot per thread).
pub const TREE_MAX_BLOCK: u32 = 1024;

shared_layout! {
    /// One slot per thread of the tree.
    pub struct TreeScratch {
        pub slots: [f32; TREE_MAX_BLOCK as usize],
    }
}
/// Dynamic shared memory of [`sum_tree`], for every block size.
pub const TREE_SHARED_BYTES: usize = TreeScratch::BYTES;

kernel! {
    /// `out[0] += x` for every element `x` of `input`, one `atomicAdd` each (`out[0]` zeroed by the host).
    pub fn sum_atomic<'a>(input: Global<'a, f32>, out: GlobalMut<'a, f32>) {
        for i in grid_stride(input.len()) {
            out.atomic(0).fetch_add_float(input.get(i));
        }
    }
}

/// Element `j`, or `+0.0` past the end.
#[inline(always)]
fn load(input: Global<f32>, j: usize) -> f32 {
    if j < input.len() { input.get(j) } else { 0.0 }
}

kernel! {
    /// `sums[b]` = the pairwise-tree sum of `input[2Bb .. 2B(b+1))` (`+0.0` past the end), with
    /// `B = blockDim.x` a power of two up to `TREE_MAX_BLOCK`. Launch `TREE_SHARED_BYTES` and one block
    /// per `2B` elements.
    pub fn sum_tree<'a>(input: Global<'a, f32>, sums: Output<'a, f32, PerBlock>) {
        let s = TreeScratch::view().slots;
        let b = block_dim().x as usize;
        let t = thread_idx().x as usize;
        let base = block_idx().x as usize * 2 * b;
        // Level 1: adjacent pairs.
        s.set(t, load(input, base + 2 * t) + load(input, base + 2 * t + 1));
        // Level k + 1: slot t (t a multiple of 2d) absorbs slot t + d, the node to its right.
        let mut d = 1;
        while d < b {
            sync_threads();
            if t.is_multiple_of(2 * d) {
                s.set(t, s.get(t) + s.get(t + d));
            }
            d *= 2;
        }
        // Slot 0 was last written by thread 0 itself.
        if let Some(o) = sums.mine() {
            o.set(s.get(0));
        }
    }
}
