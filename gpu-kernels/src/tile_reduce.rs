//! Cooperative-groups tile reduction (000 `tileReduceSum`): `tiled_partition<32>`, shuffle-down sum,
//! rank 0 of each tile writes the tile's sum.
//!
//! The seed writes the sum back into `data[tile]` — in place — while threads of other tiles may not yet
//! have read `data[tile]` as their input: tile 1's leader writes `data[1]`, which thread 1 of tile 0
//! reads. [`tile_reduce_seed`] keeps that race; [`tile_reduce`] writes to a separate output.
//!
//! Decision procedure (§5.7): one writer per output; inputs and outputs must not overlap unless a
//! barrier separates all reads from all writes.
use gpu_std::grid::tiled_partition;
use gpu_std::thread::{block_idx, block_rank};
use gpu_std::{Global, GlobalMut, Output, PerWarp, kernel};

pub const BLOCK: u32 = 256;

kernel! {
    /// RACY (the seed, one block): `data[tile] = sum(data[32*tile .. 32*tile+32])` in place.
    pub fn tile_reduce_seed<'a>(data: GlobalMut<'a, f32>) {
        let tile = tiled_partition::<32>();
        let val = data.get(block_rank() as usize);
        let sum = tile.reduce_sum(val);
        if tile.thread_rank() == 0 {
            data.set(tile.meta_group_rank() as usize, sum);
        }
    }
}

kernel! {
    /// `out[t]` = sum of the 32 inputs of tile t of the grid (inputs past `n` count 0).
    pub fn tile_reduce<'a>(input: Global<'a, f32>, out: Output<'a, f32, PerWarp>) {
        let tile = tiled_partition::<32>();
        let i = block_idx().x as usize * gpu_std::thread::block_dim().x as usize + block_rank() as usize;
        let val = if i < input.len() { input.get(i) } else { 0.0 };
        let sum = tile.reduce_sum(val);
        // A tile of 32 is a warp: its rank 0 (lane 0) owns the tile's element.
        if let Some(o) = out.mine() {
            o.set(sum);
        }
    }
}
