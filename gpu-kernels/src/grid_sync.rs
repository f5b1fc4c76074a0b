//! A grid-wide barrier between two phases (000 `multiPhaseKernel`, cooperative launch).
//!
//! Phase 1 doubles every element; after `grid.sync()`, phase 2 adds the left neighbour. The seed's
//! phase 2, `data[idx] += data[idx - 1]`, reads `data[idx-1]` while thread idx-1 writes it in the
//! same phase: a race (the result depends on which runs first). [`multi_phase_seed`] keeps it for the
//! race detector; [`multi_phase`] reads the neighbour, syncs the grid again, then writes, so every
//! output is the intended `2a[i] + 2a[i-1]` (and `2a[0]` for i = 0).
//!
//! Decision procedure (§5.7): threads of different blocks read each other's writes → a grid barrier
//! (cooperative launch, grid capped at the co-resident blocks) between every write and the reads.
use gpu_std::grid::this_grid;
use gpu_std::{GlobalMut, kernel};

pub const BLOCK: u32 = 256;

kernel! {
    /// RACY (the seed): phase 2 reads and writes `data` in the same interval.
    pub fn multi_phase_seed<'a>(data: GlobalMut<'a, f32>, workspace: GlobalMut<'a, u32>) {
        let grid = this_grid(workspace);
        let idx = grid.thread_rank() as usize;
        let n = data.len();
        if idx < n {
            data.set(idx, data.get(idx) * 2.0);
        }
        grid.sync();
        if idx < n && idx > 0 {
            data.set(idx, data.get(idx) + data.get(idx - 1));
        }
    }
}

kernel! {
    /// Race-free: read the neighbour, `grid.sync()`, then write.
    pub fn multi_phase<'a>(data: GlobalMut<'a, f32>, workspace: GlobalMut<'a, u32>) {
        let grid = this_grid(workspace);
        let idx = grid.thread_rank() as usize;
        let n = data.len();
        if idx < n {
            data.set(idx, data.get(idx) * 2.0);
        }
        grid.sync();
        let left = if idx < n && idx > 0 { data.get(idx - 1) } else { 0.0 };
        grid.sync();
        if idx < n {
            data.set(idx, data.get(idx) + left);
        }
    }
}
