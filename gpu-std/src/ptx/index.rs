//! The special registers: a thread's and a block's indices, the extents, the lane and the active
//! lanes (`%tid`, `%ctaid`, `%ntid`, `%nctaid`, `%laneid`, `activemask`).
//!
//! Names only gpu-std's vocabulary and `Pod`, like the rest of the PTX layer, and not `ptx.rs`
//! itself, which re-exports it.

use crate::vocab::dim3::Dim3;
use core::arch::asm;
use core::arch::nvptx as nv;

#[inline(always)]
pub fn thread_idx() -> Dim3 {
    // SAFETY: special-register reads, valid in any kernel.
    unsafe { Dim3::new(nv::_thread_idx_x(), nv::_thread_idx_y(), nv::_thread_idx_z()) }
}
#[inline(always)]
pub fn block_idx() -> Dim3 {
    // SAFETY: as above.
    unsafe { Dim3::new(nv::_block_idx_x(), nv::_block_idx_y(), nv::_block_idx_z()) }
}
#[inline(always)]
pub fn block_dim() -> Dim3 {
    // SAFETY: as above.
    unsafe { Dim3::new(nv::_block_dim_x(), nv::_block_dim_y(), nv::_block_dim_z()) }
}
#[inline(always)]
pub fn grid_dim() -> Dim3 {
    // SAFETY: as above.
    unsafe { Dim3::new(nv::_grid_dim_x(), nv::_grid_dim_y(), nv::_grid_dim_z()) }
}
#[inline(always)]
pub fn active_mask() -> u32 {
    let r: u32;
    // SAFETY: reads the active-lane mask.
    unsafe { asm!("activemask.b32 {r};", r = out(reg32) r, options(nostack)) }
    r
}
#[inline(always)]
pub fn lane_id() -> u32 {
    let r: u32;
    // SAFETY: special-register read.
    unsafe { asm!("mov.u32 {r}, %laneid;", r = out(reg32) r, options(nostack, nomem, pure)) }
    r
}
