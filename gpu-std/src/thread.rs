//! Thread hierarchy: a grid of blocks, each a block of threads, indexed in up to three dimensions.
//!
//! `thread_idx` is the thread's position in its block, `block_idx` the block's position in the grid,
//! `block_dim`/`grid_dim` their extents (CUDA's `threadIdx`, `blockIdx`, `blockDim`, `gridDim`).
//! All of them are uniform for the whole launch except the two indices.
//!
//! Floor of the views and primitives: names gpu-std's vocabulary, the backend (`crate::backend`: the PTX
//! layer on the GPU, the emulator on the host) and other primitives; nothing of the kernel floor
//! (`Kernel`, signatures, launch arguments) nor the emulator's launch API.

use crate::backend;
pub use crate::vocab::dim3::Dim3;

/// `threadIdx`. PTX: `%tid.x`, `%tid.y`, `%tid.z`.
#[inline(always)]
pub fn thread_idx() -> Dim3 {
    backend::thread_idx()
}
/// `blockIdx`. PTX: `%ctaid.x`, `%ctaid.y`, `%ctaid.z`.
#[inline(always)]
pub fn block_idx() -> Dim3 {
    backend::block_idx()
}
/// `blockDim`. PTX: `%ntid.x`, `%ntid.y`, `%ntid.z`.
#[inline(always)]
pub fn block_dim() -> Dim3 {
    backend::block_dim()
}
/// `gridDim`. PTX: `%nctaid.x`, `%nctaid.y`, `%nctaid.z`.
#[inline(always)]
pub fn grid_dim() -> Dim3 {
    backend::grid_dim()
}

/// The thread's linear rank in its block (`threadIdx.x + blockDim.x * (threadIdx.y + ...)`).
#[inline(always)]
pub fn block_rank() -> u32 {
    block_dim().linear(thread_idx())
}

/// `blockIdx.x * blockDim.x + threadIdx.x` as usize (1-D launches).
#[inline(always)]
pub fn global_index_x() -> usize {
    block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize
}

/// `blockDim.x * gridDim.x`: the stride of a 1-D grid-stride loop.
#[inline(always)]
pub fn grid_stride_x() -> usize {
    block_dim().x as usize * grid_dim().x as usize
}

/// The indices `global_index_x(), + stride, ...` below `n`: a 1-D grid-stride loop.
#[inline(always)]
pub fn grid_stride(n: usize) -> GridStride {
    GridStride { next: global_index_x(), step: grid_stride_x(), end: n }
}

/// Iterator returned by [`grid_stride`].
#[derive(Clone, Copy, Debug)]
pub struct GridStride {
    next: usize,
    step: usize,
    end: usize,
}

impl Iterator for GridStride {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.next < self.end {
            let i = self.next;
            self.next += self.step;
            Some(i)
        } else {
            None
        }
    }
}
