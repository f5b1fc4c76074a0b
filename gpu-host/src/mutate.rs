//! Mutation testing of a program's launches on the emulator: which barriers, fences, atomics and
//! strong accesses does a test show to be needed? See [`mutation_test`].

use crate::Device;
use gpu_std::emu::{self, MutationReport, Trial};

/// Runs `test` on a fresh emulator [`Device`] made with `opts` for each schedule seed (the clean runs:
/// each must compute the right result with no race), then once per *mutant* of every synchronisation
/// site they executed — that site's barrier or fence removed, a fence's scope narrowed, an atomic made
/// a plain load and store, a volatile access made plain, an acquire or release made relaxed — on the
/// seeds in order until one shows it (a race, an ordering hazard, a failed launch, or `Ok(false)`).
/// `test` uploads its inputs, launches (any number of kernels, through the device it is given), reads
/// the result back and says whether it is right; an error it returns counts as the mutant caught.
///
/// This is [`gpu_std::emu::mutation_test`] with the device made for each run; the report and the
/// meaning of its verdicts are that function's. A mutant with *no effect seen* may be redundant, or
/// the inputs and seeds may not exercise it: a hint, not a proof. `test`'s error is any error
/// (`?` converts this crate's [`Error`](crate::Error) and `anyhow::Error`); its text with its causes
/// is the mutant's.
///
/// ```
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// use gpu_host::{Device, EmuOptions, cover, mutation_test};
/// use gpu_std::{Global, GlobalMut};
/// gpu_std::kernel! {
///     /// `total[0] += x[i]` for every `i`, one device-scope atomic add per thread.
///     pub fn add_all<'a>(x: Global<'a, u32>, total: GlobalMut<'a, u32>) {
///         let i = gpu_std::thread::global_index_x();
///         if i < x.len() {
///             total.atomic(0).fetch_add(x.get(i));
///         }
///     }
/// }
/// let report = mutation_test(&EmuOptions::default(), 1..=3, |dev: &Device| {
///     let x = dev.upload("x", &[1u32; 100])?;
///     let total = dev.filled("total", 1, 0u32)?;
///     dev.launch::<add_all>(cover(100, 32, 4, 0), (x.view(), total.view_mut()))?;
///     Ok(total.read()? == [100])
/// })
/// .unwrap();
/// // One site, the atomic add; made a plain load and store it loses updates, a race.
/// assert_eq!((report.sites(), report.caught()), (1, 1));
/// println!("{report}");
/// ```
pub fn mutation_test(
    opts: &emu::Options,
    seeds: impl IntoIterator<Item = u64>,
    mut test: impl FnMut(&Device) -> Result<bool, Box<dyn std::error::Error + Send + Sync>>,
) -> Result<MutationReport, String> {
    emu::mutation_test(opts, seeds, |o| {
        let dev = Device::emulator(o.clone());
        let correct = test(&dev).map_err(|e| chain(e.as_ref()))?;
        let outcome = dev.take_findings().into_outcome(dev.take_sites());
        Ok(Trial::one(outcome, correct))
    })
}

/// `e` and its causes, `: `-separated (as `anyhow` prints a chain with `{:#}`).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    std::iter::successors(Some(e), |e| e.source()).map(ToString::to_string).collect::<Vec<_>>().join(": ")
}
