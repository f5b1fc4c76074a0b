//! What the tests know of each ported kernel: where it comes from, the sizes it runs at, how to check
//! it, and which of its mutants are argued redundant. The types only: it may not import the ports,
//! which name it (the list of every entry is [`crate::all`]).

use gpu_host::Device;

/// The result of one check: `Ok(())` when the device computed what the CPU reference computes, else
/// what differs (the first wrong element, with its index and both values).
pub type Checked = Result<(), String>;

/// One kernel (or pipeline of kernels) of the corpus.
pub struct Entry {
    /// Short name, e.g. `threadFenceReduction`.
    pub name: &'static str,
    /// Where the original is: `owner/repo@commit path (function)`.
    pub source: &'static str,
    /// Element counts the emulator tests run, at least one with a partial last block (or tile).
    pub sizes: &'static [usize],
    /// The element count mutation testing runs at (small: every mutant runs the check again).
    pub mutate_size: usize,
    /// Element counts the GPU test runs.
    pub gpu_sizes: &'static [usize],
    /// Uploads inputs of `n` elements to `dev`, launches as the original does, reads back and compares
    /// with the CPU reference. `Err` for an allocation or launch error (a deadlock on the emulator is
    /// one), `Ok(Err(why))` for a wrong result.
    pub check: fn(dev: &Device, n: usize) -> anyhow::Result<Checked>,
    /// The mutants that have no effect, each with the argument why the site is redundant.
    pub redundant: &'static [Redundant],
}

/// A mutant argued redundant: the site by line (of the entry's module file) and mutation (as
/// `gpu_std::emu::MutationKind::describe` names it), and why nothing can observe it.
pub struct Redundant {
    /// The line of the site in the module's file.
    pub line: u32,
    /// The mutation, e.g. `removed`, `made plain`.
    pub mutation: &'static str,
    /// Why no schedule can observe the change.
    pub why: &'static str,
}
