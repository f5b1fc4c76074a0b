//! The chapter's examples, one file each. Every file holds the kernel(s) and their launch contract
//! (block size, shared bytes, grid cap) as consts that the host reads. Kernels named `*_seed`,
//! `*_racy`, `*_broken`, `*_no_*` keep a bug of the chapter on purpose, for the emulator's detectors;
//! their fixed twins sit beside them.
pub mod block_reduce_demo;
pub mod divergent_barrier;
pub mod grid_sync;
pub mod histogram_privatised;
pub mod lost_update;
pub mod primitives;
pub mod producer_consumer;
pub mod reduce_sum;
pub mod spinlock;
pub mod tile_reduce;
pub mod warp_reduce;
