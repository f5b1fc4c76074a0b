//! What an example declares about itself: [`Example`], the entry each example's file defines as its
//! `EXAMPLE` (name, catalogue row, section, sizes, races and bugs it keeps, runner), and the default
//! sizes. It may import [`RunParams`](super::RunParams), gpu-host and the report, not the examples.

use super::check::RunParams;
use crate::report::ExampleResult;
use anyhow::Result;
use gpu_host::Device;

/// An example: its name, where it comes from, what it shows, its test sizes, and its runner.
pub struct Example {
    pub name: &'static str,
    /// Its row in the chapter's catalogue of examples (1..=18, then the rows beyond it, from 19 on);
    /// `None` for `primitives`, which checks the device layer itself.
    pub row: Option<u32>,
    /// Where in the chapter it comes from: `§5.x` of the chapter text (001), `ex. k` of its
    /// exercises, or the code samples `000` / `002` by the name they use.
    pub section: &'static str,
    pub about: &'static str,
    /// Sizes `host run` uses when no `--n` is given: on a GPU, and on the emulator.
    pub gpu_sizes: &'static [usize],
    pub emu_sizes: &'static [usize],
    /// Whether a kernel of it keeps one of the chapter's races on purpose, next to its fix (the run
    /// counts that race); when `false`, the race detector must find nothing in it (a test checks).
    pub keeps_races: bool,
    /// Its kernels that keep a bug compute-sanitizer reports (`host sanitize` allows those findings).
    pub kept_bugs: &'static [KeptBug],
    pub run: fn(&Device, &RunParams) -> Result<ExampleResult>,
}

/// The sizes every example is tested at on a GPU (the chapter's edge cases and one past 2^20).
pub const GPU_SIZES: &[usize] = &[1, 7, 31, 33, 255, 257, (1 << 20) + 1];
/// The same edge cases plus a few thousand elements: what the emulator checks in seconds.
pub const EMU_SIZES: &[usize] = &[1, 7, 31, 33, 255, 257, 4097];

/// A kernel that keeps a chapter bug on purpose, and the compute-sanitizer tools that must be allowed
/// to report it (`host sanitize` fails on any other finding). compute-sanitizer's racecheck sees
/// shared-memory hazards only, so the global-memory races kept on purpose (`histogram_racy`,
/// `tile_reduce_seed`, `multi_phase_seed`, `producer_consumer_no_fence`) are the emulator's to find.
pub struct KeptBug {
    pub kernel: &'static str,
    pub tools: &'static [&'static str],
}

/// `examples` in the order of the chapter's catalogue: by row, then those without one (`primitives`),
/// each group in the order given. `ALL` is the registry's examples in this order.
pub const fn in_catalogue_order<const N: usize>(mut examples: [Example; N]) -> [Example; N] {
    const fn before(a: Option<u32>, b: Option<u32>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) => a < b,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
    // Insertion sort (a const fn has no slice sort): stable, and N is a few dozen.
    let mut i = 1;
    while i < N {
        let mut j = i;
        while j > 0 && before(examples[j].row, examples[j - 1].row) {
            examples.swap(j, j - 1);
            j -= 1;
        }
        i += 1;
    }
    examples
}
