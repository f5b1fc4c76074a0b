//! `#[launch_bounds(MAX_THREADS, MIN_BLOCKS)]` in `kernel!`: the host type reports the bound, the
//! emulator refuses a block of more threads (as the GPU does), and kernels without bounds have none.
//! (That the bounds reach the PTX as `.maxntid` / `.minnctapersm` is checked over the built PTX.)

use gpu_std::emu::{self, EmuError, LaunchConfig, Options};
use gpu_std::thread::global_index_x;
use gpu_std::{GlobalMut, Kernel, kernel};

kernel! {
    /// Writes each thread's index; at most 64 threads per block, 2 blocks per SM.
    #[launch_bounds(64, 2)]
    pub fn bounded<'a>(out: GlobalMut<'a, u32>) {
        let i = global_index_x();
        if i < out.len() {
            out.set(i, i as u32);
        }
    }
}
kernel! {
    #[launch_bounds(128)]
    /// Attributes may come before or after the bounds; `MIN_BLOCKS` may be left out.
    pub fn max_only<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, 1);
    }
}
kernel! {
    pub fn unbounded<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, 1);
    }
}

#[test]
fn the_host_type_reports_the_bound() {
    assert_eq!(bounded::MAX_THREADS_PER_BLOCK, Some(64));
    assert_eq!(max_only::MAX_THREADS_PER_BLOCK, Some(128));
    assert_eq!(unbounded::MAX_THREADS_PER_BLOCK, None);
}

#[test]
fn a_block_within_the_bound_runs() {
    let out = emu::buffer("out", vec![0u32; 128]);
    emu::launch::<bounded>(&LaunchConfig::linear(2, 64, 0), &Options::default(), (out.view_mut(),)).expect("launch");
    assert!(out.to_vec().iter().enumerate().all(|(i, &x)| x == i as u32));
}

#[test]
fn a_block_past_the_bound_is_refused_before_any_thread_runs() {
    let out = emu::buffer("out", vec![7u32; 128]);
    let e = emu::launch::<bounded>(&LaunchConfig::linear(1, 128, 0), &Options::default(), (out.view_mut(),))
        .expect_err("a block of 128 threads exceeds the bound of 64");
    match e {
        EmuError::InvalidLaunch(m) => assert!(m.contains("launch bounds") && m.contains("at most 64"), "{m}"),
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
    assert!(out.to_vec().iter().all(|&x| x == 7), "no thread ran");
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
