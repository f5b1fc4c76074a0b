//! Cooperative groups: the whole grid as one group with a barrier, and fixed-size warp tiles.
//!
//! A grid barrier is valid only when every block of the grid is resident on the device at once, which
//! only a *cooperative launch* (`cuLaunchCooperativeKernel`) guarantees; it caps the grid at the number
//! of blocks that fit (occupancy x SM count). With more blocks, a grid barrier can never complete. The
//! host refuses such launches with a clear error; the emulator does the same.
//!
//! On the GPU the barrier is a counter and a generation word in global memory (a workspace of
//! [`GRID_BARRIER_WORDS`] `u32`s, zeroed by the host): thread 0 of each block releases its block's
//! writes with a fence, arrives with an atomic add, and the last block to arrive publishes the next
//! generation with a release store; the others spin on an acquire load, with back-off and a bound.
//! If the bound is hit (a grid that was not co-resident), word 2 is set and the barrier gives up instead
//! of hanging; the host checks it.

use crate::GlobalMut;
#[cfg(target_arch = "nvptx64")]
use crate::block::sync_threads;
use crate::thread::{block_dim, block_idx, block_rank, grid_dim};
use crate::warp::{self, FULL_MASK, ShflValue, WARP_SIZE};

/// `u32` words of the grid-barrier workspace: arrival counter, generation, timeout flag.
pub const GRID_BARRIER_WORDS: usize = 3;
/// Spin iterations (with `nanosleep` back-off) before a grid barrier reports a timeout on the GPU.
pub const GRID_BARRIER_SPIN_LIMIT: u32 = 1 << 24;

/// The grid as a cooperative group (`cg::this_grid()`).
#[derive(Clone, Copy, Debug)]
pub struct Grid<'a> {
    workspace: GlobalMut<'a, u32>,
}

/// The grid of the current launch, with its barrier workspace.
#[inline(always)]
pub fn this_grid(workspace: GlobalMut<'_, u32>) -> Grid<'_> {
    Grid { workspace }
}

impl Grid<'_> {
    /// Threads in the grid.
    #[inline(always)]
    pub fn size(&self) -> u64 {
        grid_dim().volume() * block_dim().volume()
    }
    /// The calling thread's rank in the grid: `block_linear * block_threads + block_rank`.
    #[inline(always)]
    pub fn thread_rank(&self) -> u64 {
        grid_dim().linear(block_idx()) as u64 * block_dim().volume() + block_rank() as u64
    }
    /// `grid.sync()`: waits until every thread of the grid has arrived; orders memory grid-wide.
    /// Call it from every thread (uniformly reachable, like a block barrier) of a cooperative launch.
    /// PTX: `bar.sync 0`, `atom.relaxed.gpu.global.add.u32`, `ld.acquire.gpu.global.u32`, `st.release.gpu.global.u32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn sync(&self) {
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = self.workspace;
            crate::backend::grid_sync(crate::site())
        }
        #[cfg(target_arch = "nvptx64")]
        {
            sync_threads();
            if block_rank() == 0 {
                let blocks = grid_dim().volume() as u32;
                let generation = self.workspace.atomic(1).load_acquire();
                crate::fence::threadfence();
                let arrived = self.workspace.atomic(0).fetch_add(1);
                if arrived == blocks - 1 {
                    self.workspace.atomic(0).swap(0);
                    self.workspace.atomic(1).store_release(generation.wrapping_add(1));
                } else {
                    let mut spins = 0u32;
                    while self.workspace.atomic(1).load_acquire() == generation {
                        spins += 1;
                        if spins >= GRID_BARRIER_SPIN_LIMIT {
                            self.workspace.atomic(2).swap(1);
                            break;
                        }
                        crate::fence::nanosleep(64);
                    }
                }
                crate::fence::threadfence();
            }
            sync_threads();
        }
    }
}

/// A tile of `N` consecutive threads of a block (`cg::tiled_partition<N>(block)`), `N` a power of two
/// up to 32, so that a tile never spans two warps.
#[derive(Clone, Copy, Debug)]
pub struct Tile<const N: u32>;

/// Splits the block into tiles of `N` threads.
#[inline(always)]
pub fn tiled_partition<const N: u32>() -> Tile<N> {
    const { assert!(N.is_power_of_two() && N <= WARP_SIZE) };
    Tile
}

impl<const N: u32> Tile<N> {
    /// Threads in the tile.
    #[inline(always)]
    pub fn size(&self) -> u32 {
        N
    }
    /// Rank of the calling thread in its tile.
    #[inline(always)]
    pub fn thread_rank(&self) -> u32 {
        block_rank() % N
    }
    /// Index of the calling thread's tile in the block.
    #[inline(always)]
    pub fn meta_group_rank(&self) -> u32 {
        block_rank() / N
    }
    /// Number of tiles in the block.
    #[inline(always)]
    pub fn meta_group_size(&self) -> u32 {
        (block_dim().volume() as u32).div_ceil(N)
    }
    /// The warp lanes of the calling thread's tile.
    #[inline(always)]
    pub fn mask(&self) -> u32 {
        if N == WARP_SIZE { FULL_MASK } else { ((1u32 << N) - 1) << (warp::lane_id() / N * N) }
    }
    /// `tile.shfl_down(v, delta)`. PTX: `shfl.sync.down.b32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn shfl_down<T: ShflValue>(&self, v: T, delta: u32) -> T {
        warp::shfl_down_width(self.mask(), v, delta, N)
    }
    /// `tile.sync()`. PTX: `bar.warp.sync`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn sync(&self) {
        warp::sync_warp(self.mask())
    }
    /// Shuffle-down sum over the tile (the classic `tileReduceSum`), valid in `thread_rank() == 0`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn reduce_sum(&self, mut v: f32) -> f32 {
        let mut offset = N / 2;
        while offset > 0 {
            v += self.shfl_down(v, offset);
            offset /= 2;
        }
        v
    }
}
