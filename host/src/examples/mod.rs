//! The chapter's examples, one file each, named like its kernel file: inputs, launch, CPU reference,
//! checks, and the example's own entry in the catalogue (its `pub const EXAMPLE: Example`).
//!
//! This file holds the registry: one `pub mod NAME;` line per example, between the `// registry:`
//! and `// end of the registry` lines. From that one list `host/build.rs` writes [`ALL`] (what
//! `host list` and `host run` walk, in the order of the chapter's catalogue: by row, then
//! `primitives`) and [`for_each_example!`](crate::for_each_example), from which
//! `tests/tests/examples.rs` makes each example's tests. What the examples share is in `example`
//! (what an example declares), `check` (run parameters, size checks, findings) and `timing` (timed
//! launches), re-exported here; an example may import those and another example's helpers, never an
//! item defined in this file.

mod check;
mod example;
mod timing;

pub use check::{RunParams, Skip, check_n, finish, flagged, mismatch};
pub use example::{EMU_SIZES, Example, GPU_SIZES, KeptBug};
pub use timing::{measure, measure_call, measure_tier};

// The optimised tiers of `histogram_privatised` and `reduce_sum`: helpers of those examples, not examples.
pub mod histogram_fast;
pub mod reduce_fast;

// registry: every example, one line each (in rustfmt's order; `ALL` is in the catalogue's).
pub mod atomic_add_f64;
pub mod atomic_tour;
pub mod block_reduce_demo;
pub mod divergence;
pub mod divergent_barrier;
pub mod fp_determinism;
pub mod grid_sync;
pub mod histogram_global;
pub mod histogram_privatised;
pub mod lost_update;
pub mod multi_gpu;
pub mod primitives;
pub mod producer_consumer;
pub mod reduce_sum;
pub mod running_max;
pub mod scan;
pub mod sort;
pub mod spinlock;
pub mod stencil;
pub mod sync_variants;
pub mod system_scope;
pub mod tile_reduce;
pub mod warp_reduce;
// end of the registry

// `ALL` and `for_each_example!`, which host/build.rs writes from the registry.
include!(concat!(env!("OUT_DIR"), "/examples_registry.rs"));

/// The example named `name` (its module's name).
pub fn find(name: &str) -> Option<&'static Example> {
    ALL.iter().find(|e| e.name == name)
}
