//! A 3-point stencil through a shared-memory tile (000's `tile` + `__syncthreads()` sample, §5.3).
//!
//! Phase 1: each thread loads one element into the block's tile. Barrier. Phase 2: each thread reads
//! its neighbours' slots and writes `0.25 left + 0.5 centre + 0.25 right`.
//!
//! - [`stencil_tile`] is the seed as written: a neighbour outside the *tile* reads 0, so at the first
//!   and last element of every block the result is not the global stencil. Past the end of the array
//!   a thread loads 0 (the seed has no bounds guard; its `N` is a multiple of the block).
//! - [`stencil_halo`] also loads one halo cell on each side of the tile — the last element of the
//!   previous block and the first of the next — so it equals the true global 3-point stencil
//!   everywhere, with 0 outside the array.
//! - [`stencil_no_barrier`] is the seed without the barrier: a thread may read its neighbour's slot
//!   before the neighbour wrote it. A data race; the emulator names it.
//!
//! Decision procedure (§5.7):
//! 1. Who writes? Each thread writes its own tile slot (the halo cells: thread 0 and the last thread)
//!    and its own output element, through an `Output`: one writer per location, no atomics.
//! 2. Who reads after whom? Every thread reads slots its neighbours wrote, so a block barrier sits
//!    between the writes and the reads, reached by every thread of the block (threads past the end of
//!    the array still load 0 and reach it).
//! 3. Across blocks? Tiles never cross blocks. The halo version reads the neighbouring blocks'
//!    *inputs* from global memory, which nothing writes during the launch, never their tiles: no
//!    ordering across blocks is needed.
//! 4. Deterministic? Each output is one fixed expression of three inputs: the same bits every run.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_idx, global_index_x, thread_idx};
use gpu_std::{Global, Output, kernel, shared_layout};

/// Threads per block: the seed's `BLOCK_SIZE`, one tile slot each. Launch with exactly this.
pub const BLOCK: u32 = 256;
const B: usize = BLOCK as usize;

shared_layout! {
    /// The seed's `__shared__ float tile[BLOCK_SIZE]`.
    pub struct Tile {
        pub tile: [f32; B],
    }
}
/// Dynamic shared memory of [`stencil_tile`] and [`stencil_no_barrier`].
pub const SHARED_BYTES: usize = Tile::BYTES;

shared_layout! {
    /// The tile with one halo cell on each side: slot `t + 1` holds the block's element `t`.
    pub struct HaloTile {
        pub tile: [f32; B + 2],
    }
}
/// Dynamic shared memory of [`stencil_halo`].
pub const HALO_SHARED_BYTES: usize = HaloTile::BYTES;

/// The seed's weights: `0.25 left + 0.5 centre + 0.25 right`, in this order.
#[inline(always)]
pub fn smooth(left: f32, centre: f32, right: f32) -> f32 {
    0.25 * left + 0.5 * centre + 0.25 * right
}

/// Element `j` of `input`, or 0 outside the array.
#[inline(always)]
fn load(input: Global<f32>, j: usize) -> f32 {
    if j < input.len() { input.get(j) } else { 0.0 }
}

fn tile_body(input: Global<f32>, output: Output<f32>, barrier: bool) {
    let tile = Tile::view().tile;
    let t = thread_idx().x as usize;
    // Phase 1: each thread loads one element.
    tile.set(t, load(input, global_index_x()));
    // Barrier: every load is complete before any thread reads a neighbour's slot.
    if barrier {
        sync_threads();
    }
    // Phase 2: neighbours inside the tile; 0 outside it, as the seed writes it.
    if let Some(o) = output.mine() {
        let left = if t > 0 { tile.get(t - 1) } else { 0.0 };
        let right = if t < B - 1 { tile.get(t + 1) } else { 0.0 };
        o.set(smooth(left, tile.get(t), right));
    }
}

kernel! {
    /// The seed: `output[i]` = the stencil over the block's tile, neighbours outside the tile read as 0.
    /// Launch `BLOCK` threads per block, `SHARED_BYTES`, a grid covering `output.len()`.
    pub fn stencil_tile<'a>(input: Global<'a, f32>, output: Output<'a, f32>) {
        tile_body(input, output, true)
    }
}

kernel! {
    /// RACY: the seed without `__syncthreads()`.
    pub fn stencil_no_barrier<'a>(input: Global<'a, f32>, output: Output<'a, f32>) {
        tile_body(input, output, false)
    }
}

kernel! {
    /// The true global stencil: `output[i] = 0.25 x[i-1] + 0.5 x[i] + 0.25 x[i+1]`, 0 outside the
    /// array. Launch `BLOCK` threads per block, `HALO_SHARED_BYTES`, a grid covering `output.len()`.
    pub fn stencil_halo<'a>(input: Global<'a, f32>, output: Output<'a, f32>) {
        let tile = HaloTile::view().tile;
        let t = thread_idx().x as usize;
        let start = block_idx().x as usize * B;
        tile.set(t + 1, load(input, start + t));
        if t == 0 {
            // Left halo: the previous block's last element (none before the array).
            tile.set(0, if start > 0 { load(input, start - 1) } else { 0.0 });
        }
        if t == B - 1 {
            // Right halo: the next block's first element (0 past the array).
            tile.set(B + 1, load(input, start + B));
        }
        sync_threads();
        if let Some(o) = output.mine() {
            o.set(smooth(tile.get(t), tile.get(t + 1), tile.get(t + 2)));
        }
    }
}
