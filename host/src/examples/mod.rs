//! The chapter's examples, one file each, named like its kernel file: inputs, launch, CPU reference,
//! checks, and the example's own entry in the catalogue (its `pub const EXAMPLE: Example`).
//!
//! This file is the registry: [`for_each_example!`](crate::for_each_example) names every example once,
//! in the order of the chapter's catalogue (then `primitives`), and from that one list come the
//! example modules, [`ALL`] (what `host list` and `host run` walk) and the tests of
//! `tests/tests/examples.rs`. What the examples share is in `example` (what an example declares),
//! `check` (run parameters, size checks, findings) and `timing` (timed launches), re-exported here;
//! an example may import those and another example's helpers, never an item defined in this file.

mod check;
mod example;
mod timing;

pub use check::{RunParams, Skip, check_n, finish, flagged, mismatch};
pub use example::{EMU_SIZES, Example, GPU_SIZES, KeptBug};
pub use timing::{measure, measure_call, measure_tier};

// The optimised tiers of `histogram_privatised` and `reduce_sum`: helpers of those examples, not examples.
pub mod histogram_fast;
pub mod reduce_fast;

/// Calls the macro `$callback` with the module name of every example, in catalogue order:
/// `$callback! { stencil, warp_reduce, ..., primitives }`. The one list of the examples; adding an
/// example is adding its name here.
#[macro_export]
macro_rules! for_each_example {
    ($callback:ident) => {
        $callback! {
            stencil,
            warp_reduce,
            block_reduce_demo,
            reduce_sum,
            atomic_add_f64,
            histogram_global,
            histogram_privatised,
            lost_update,
            divergence,
            divergent_barrier,
            producer_consumer,
            spinlock,
            fp_determinism,
            running_max,
            atomic_tour,
            tile_reduce,
            grid_sync,
            sync_variants,
            system_scope,
            scan,
            multi_gpu,
            sort,
            primitives,
        }
    };
}

/// The example modules and [`ALL`], from the list of [`for_each_example!`](crate::for_each_example).
macro_rules! declare_examples {
    ($($name:ident),* $(,)?) => {
        $(pub mod $name;)*

        /// Every example, in the order of the chapter's catalogue (then `primitives`): each module's
        /// `EXAMPLE`.
        pub const ALL: &[Example] = &[$($name::EXAMPLE),*];
    };
}
for_each_example!(declare_examples);

/// The example named `name` (its module's name).
pub fn find(name: &str) -> Option<&'static Example> {
    ALL.iter().find(|e| e.name == name)
}
