//! A race declared intended in the emulator's options is counted in `Findings::accepted` over a
//! device's launches, not in its races; the device's findings are then clean.

use gpu_host::{Device, EmuOptions, cover};
use gpu_std::emu::AcceptedRace;
use gpu_std::{GlobalMut, Output};

gpu_std::kernel! {
    /// Every thread sets `done[0] = 1` (a same-value flag, plain stores) and writes its element of `out`.
    pub fn set_flag<'a>(done: GlobalMut<'a, u32>, out: Output<'a, u32>) {
        done.set(0, 1);
        if let Some(o) = out.mine() {
            o.set(7);
        }
    }
}

#[test]
fn an_accepted_race_is_summed_over_launches_and_the_findings_are_clean() {
    let opts = EmuOptions { accepted_races: vec![AcceptedRace::on("done", "same-value flag")], ..Default::default() };
    let dev = Device::emulator(opts);
    let done = dev.filled("done", 1, 0u32).unwrap();
    let mut out = dev.filled("out", 100, 0u32).unwrap();
    for _ in 0..2 {
        dev.launch::<set_flag>(cover(100, 32, 4, 0), (done.view_mut(), out.output())).unwrap();
    }
    let f = dev.take_findings();
    assert!(f.is_clean(), "{:?}", f.races);
    assert_eq!(f.accepted.len(), 1);
    assert_eq!(f.accepted[0].addresses, 2, "one address per launch");
    assert!(f.accepted[0].first.is_some());
    // Without the declaration the same launch races on `done`.
    let dev = Device::emulator(Default::default());
    let done = dev.filled("done", 1, 0u32).unwrap();
    let mut out = dev.filled("out", 100, 0u32).unwrap();
    dev.launch::<set_flag>(cover(100, 32, 4, 0), (done.view_mut(), out.output())).unwrap();
    let f = dev.take_findings();
    assert_eq!((f.racy_addresses, f.races[0].buffer.as_str()), (1, "done"));
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
