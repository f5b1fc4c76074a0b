//! Helpers shared by the detector tests: named host buffers, launch options, thread ids.
#![allow(dead_code)] // each test file uses a different subset

use gpu_std::emu::{self, LaunchConfig, Options, Outcome, Race, ThreadId};
use gpu_std::memory::Owner;
use gpu_std::{Global, GlobalMut, Kernel, Output, Pod};

/// The schedule seeds every must-flag and must-not-flag case runs under.
pub const SEEDS: std::ops::RangeInclusive<u64> = 1..=4;

/// A host buffer the emulator's kernels read and write, named for reports.
pub struct Buf<T: Pod> {
    pub data: Vec<T>,
    _name: emu::BufferName,
}

impl<T: Pod> Buf<T> {
    pub fn new(name: &str, data: Vec<T>) -> Self {
        let _name = emu::register_buffer(name, data.as_ptr(), data.len());
        Buf { data, _name }
    }
    /// A raw view (no borrow of the buffer: it goes to `launch_raw`, whose caller keeps the buffer alive).
    pub fn view<'v>(&mut self) -> Global<'v, T> {
        // SAFETY: the Vec outlives the launch and is not touched by the host during it.
        unsafe { Global::from_raw_parts(self.data.as_ptr(), self.data.len()) }
    }
    pub fn view_mut<'v>(&mut self) -> GlobalMut<'v, T> {
        // SAFETY: as above.
        unsafe { GlobalMut::from_raw_parts(self.data.as_mut_ptr(), self.data.len()) }
    }
    pub fn output<'v, O: Owner>(&mut self) -> Output<'v, T, O> {
        // SAFETY: as above, and the launch is given no other view of this Vec.
        unsafe { Output::from_raw_parts(self.data.as_mut_ptr(), self.data.len()) }
    }
}

/// Default options with schedule seed `s`.
pub fn seed(s: u64) -> Options {
    Options { schedule_seed: s, ..Options::default() }
}

/// Seed `s`, every report kept (up to 256).
pub fn seed_all_reports(s: u64) -> Options {
    Options { max_race_reports: 256, ..seed(s) }
}

/// Thread `thread` of block `block` of a 1-D launch.
pub fn t(block: u32, thread: u32) -> ThreadId {
    ThreadId { block: (block, 0, 0), thread: (thread, 0, 0) }
}

pub fn launch<'a, K: Kernel>(cfg: LaunchConfig, opts: &Options, args: K::Args<'a>) -> Outcome {
    launch_raw::<K>(&cfg, opts, args).unwrap_or_else(|e| panic!("launch failed: {e}"))
}

/// Launches `K` with [`Buf`] views, which are raw views: they go through the emulator's `unsafe`
/// launcher.
pub fn launch_raw<'a, K: Kernel>(
    cfg: &LaunchConfig,
    opts: &Options,
    args: K::Args<'a>,
) -> Result<Outcome, emu::EmuError> {
    // SAFETY: every view of these tests comes from a `Buf` that the test keeps alive, untouched by the
    // host, until the launch returns.
    unsafe { emu::launch_params::<K>(cfg, opts, args) }
}

/// The two threads of a race, sorted.
pub fn pair(r: &Race) -> [ThreadId; 2] {
    let mut p = [r.first.thread, r.second.thread];
    p.sort();
    p
}

/// Every report of an outcome, for assertion messages.
pub fn reports(o: &Outcome) -> String {
    o.races
        .iter()
        .map(|r| r.to_string())
        .chain(o.uninit_reads.iter().map(|u| u.to_string()))
        .collect::<Vec<_>>()
        .join("\n")
}
