//! The chapter's examples, one file each. Every file holds the kernel(s) and their launch contract
//! (block size, shared bytes, grid cap) as consts that the host reads.
pub mod histogram_privatised;
pub mod primitives;
pub mod reduce_sum;
pub mod warp_reduce;
