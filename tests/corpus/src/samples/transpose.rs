//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420 Samples/6_Performance/transpose/transpose.cu
//! (transposeCoalesced, transposeNoBankConflicts)`.
//!
//! Kept: a 32x32 tile in shared memory (`[32][33]`, padded by one column, in
//! transposeNoBankConflicts), blocks of 32x16 threads that each load two rows of the tile
//! (`BLOCK_ROWS = 16`), a barrier, and each thread storing two elements of the transposed tile, read
//! down a column of the shared tile; grid `(size_x / 32, size_y / 32)`; the matrix sides are
//! multiples of 32, as the sample requires (no bounds checks). Changed: the sides come from `n`
//! (`size_x` about `sqrt(n)` rounded to tiles, `size_y` enough tiles for `n` elements, so that most
//! test matrices are not square); the elements are their own indices, so the check is exact.
//!
//! Synchronisation. Thread `(tx, ty)` writes tile rows `ty` and `ty + 16` at column `tx`, and after
//! the barrier reads row `tx` at columns `ty` and `ty + 16`: elements written by other threads
//! (mostly of other warps), which the barrier orders. Each element of `odata` is written
//! once, by one thread; `idata` is only read.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_idx, thread_idx};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// `TILE_DIM`.
pub const TILE_DIM: usize = 32;
/// `BLOCK_ROWS`.
pub const BLOCK_ROWS: usize = 16;

shared_layout! {
    /// `__shared__ float tile[TILE_DIM][TILE_DIM]`.
    pub struct Tile {
        /// The tile, row-major.
        pub tile: [f32; TILE_DIM * TILE_DIM],
    }
}

shared_layout! {
    /// `__shared__ float tile[TILE_DIM][TILE_DIM + 1]`.
    pub struct PaddedTile {
        /// The tile, row-major with rows of 33.
        pub tile: [f32; TILE_DIM * (TILE_DIM + 1)],
    }
}

kernel! {
    /// `transposeCoalesced`: `odata` (`height` columns, `width` rows) = the transpose of `idata`
    /// (`width` columns, `height` rows).
    pub fn transpose_coalesced<'a>(odata: GlobalMut<'a, f32>, idata: Global<'a, f32>, width: u32, height: u32) {
        let tile = Tile::view().tile;
        let (bx, by) = (block_idx().x as usize, block_idx().y as usize);
        let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
        let (w, h) = (width as usize, height as usize);
        let index_in = (bx * TILE_DIM + tx) + (by * TILE_DIM + ty) * w;
        let index_out = (by * TILE_DIM + tx) + (bx * TILE_DIM + ty) * h;
        let mut i = 0;
        while i < TILE_DIM {
            tile.set((ty + i) * TILE_DIM + tx, idata.get(index_in + i * w));
            i += BLOCK_ROWS;
        }
        sync_threads();
        let mut i = 0;
        while i < TILE_DIM {
            odata.set(index_out + i * h, tile.get(tx * TILE_DIM + ty + i));
            i += BLOCK_ROWS;
        }
    }
}

kernel! {
    /// `transposeNoBankConflicts`: `transposeCoalesced` with the tile's rows padded to 33 elements.
    pub fn transpose_no_bank_conflicts<'a>(odata: GlobalMut<'a, f32>, idata: Global<'a, f32>, width: u32, height: u32) {
        let tile = PaddedTile::view().tile;
        let (bx, by) = (block_idx().x as usize, block_idx().y as usize);
        let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
        let (w, h) = (width as usize, height as usize);
        let index_in = (bx * TILE_DIM + tx) + (by * TILE_DIM + ty) * w;
        let index_out = (by * TILE_DIM + tx) + (bx * TILE_DIM + ty) * h;
        let mut i = 0;
        while i < TILE_DIM {
            tile.set((ty + i) * (TILE_DIM + 1) + tx, idata.get(index_in + i * w));
            i += BLOCK_ROWS;
        }
        sync_threads();
        let mut i = 0;
        while i < TILE_DIM {
            odata.set(index_out + i * h, tile.get(tx * (TILE_DIM + 1) + ty + i));
            i += BLOCK_ROWS;
        }
    }
}

/// The matrix for `n` elements: `(size_x, size_y)`, multiples of 32.
#[cfg(not(target_arch = "nvptx64"))]
fn sides(n: usize) -> (usize, usize) {
    let tiles = n.div_ceil(TILE_DIM * TILE_DIM).max(1);
    let tx = tiles.isqrt().max(1);
    (tx * TILE_DIM, tiles.div_ceil(tx) * TILE_DIM)
}

/// One launch of `padded` or not, compared with `computeTransposeGold`.
#[cfg(not(target_arch = "nvptx64"))]
fn check(dev: &gpu_host::Device, n: usize, padded: bool) -> anyhow::Result<crate::Checked> {
    use gpu_std::Dim3;
    let (sx, sy) = sides(n);
    let input: Vec<f32> = (0..sx * sy).map(|i| i as f32).collect();
    let mut gold = vec![0.0f32; sx * sy];
    for y in 0..sy {
        for x in 0..sx {
            gold[x * sy + y] = input[y * sx + x];
        }
    }
    let d_in = dev.upload("idata", &input)?;
    let d_out = dev.filled("odata", sx * sy, -1.0f32)?;
    let shared = if padded { PaddedTile::BYTES } else { Tile::BYTES };
    let cfg = gpu_host::Launch {
        grid: Dim3::new((sx / TILE_DIM) as u32, (sy / TILE_DIM) as u32, 1),
        block: Dim3::new(TILE_DIM as u32, BLOCK_ROWS as u32, 1),
        shared_bytes: shared,
        cooperative: false,
    };
    let args = (d_out.view_mut(), d_in.view(), sx as u32, sy as u32);
    if padded {
        dev.launch::<transpose_no_bank_conflicts>(cfg, args)?;
    } else {
        dev.launch::<transpose_coalesced>(cfg, args)?;
    }
    Ok(super::common::first_mismatch("odata", &d_out.read()?, &gold))
}

/// The transposeCoalesced entry's check.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check_coalesced(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    check(dev, n, false)
}

/// The transposeNoBankConflicts entry's check.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check_no_bank_conflicts(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    check(dev, n, true)
}
