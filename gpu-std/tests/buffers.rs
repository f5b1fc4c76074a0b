//! Host memory for emulator launches: a `Buffer` names itself in reports (by a given name or by the
//! line that made it), memory no name covers is reported by kernel parameter, base address and the
//! right element index, and a launch whose `Output` overlaps another view is refused.

use gpu_std::emu::{self, Buffer, EmuError, LaunchConfig, Options, Outcome};
use gpu_std::{GlobalMut, Output, kernel};

kernel! {
    /// Every thread increments `x[5]` with a plain load and store: a race on element 5.
    pub fn racy_increment<'a>(x: GlobalMut<'a, u32>) {
        x.set(5, x.get(5) + 1);
    }
}

/// Raw views go through the `unsafe` launcher.
fn race_on(args: (GlobalMut<u32>,)) -> Outcome {
    // SAFETY: the callers' views point to memory that outlives the launch, untouched by the host.
    unsafe { emu::launch_params::<racy_increment>(&LaunchConfig::linear(1, 4, 0), &Options::default(), args) }
        .expect("launch")
}

#[test]
fn a_named_buffer_is_named_in_race_reports() {
    let x = emu::buffer("x", vec![0u32; 8]);
    let o = emu::launch::<racy_increment>(&LaunchConfig::linear(1, 4, 0), &Options::default(), (x.view_mut(),))
        .expect("launch");
    assert_eq!(o.racy_addresses, 1);
    assert_eq!((o.races[0].buffer.as_str(), o.races[0].index), ("x", 5));
    assert!(o.races[0].to_string().starts_with("data race in kernel `racy_increment` on global `x`[5]"));
}

#[test]
fn an_unnamed_buffer_is_named_by_the_line_that_made_it() {
    let line = line!() + 1;
    let x = Buffer::new(vec![0u32; 8]);
    assert_eq!(x.name(), format!("buffer at {}:{line}:13", file!()));
    let o = emu::launch::<racy_increment>(&LaunchConfig::linear(1, 4, 0), &Options::default(), (x.view_mut(),))
        .expect("launch");
    assert_eq!((o.races[0].buffer.as_str(), o.races[0].index), (x.name(), 5));
}

#[test]
fn memory_no_name_covers_is_reported_by_parameter_address_and_index() {
    let mut v = vec![0u32; 8];
    // SAFETY: `v` outlives the launch and the host does not touch it meanwhile.
    let x = unsafe { GlobalMut::from_raw_parts(v.as_mut_ptr(), v.len()) };
    let o = race_on((x,));
    let r = &o.races[0];
    assert_eq!(r.buffer, format!("parameter `x` at {:#x}", v.as_ptr() as usize));
    assert_eq!(r.index, 5, "the element index counts from the view's base");
    assert!(v[5] > 0);
}

kernel! {
    /// Copies `src` into `out`, one element per thread.
    pub fn copy<'a>(src: GlobalMut<'a, u32>, out: Output<'a, u32>) {
        if let Some(o) = out.mine() {
            o.set(src.get(o.index()));
        }
    }
}

#[test]
fn an_output_that_overlaps_another_view_is_refused() {
    let mut v = vec![1u32; 16];
    let base = v.as_mut_ptr();
    // SAFETY (of the views): `v` outlives the launch. The overlap breaks `Output`'s contract, which is
    // what the launch must refuse.
    let (src, out) = unsafe { (GlobalMut::from_raw_parts(base, 16), Output::from_raw_parts(base.add(8), 8)) };
    // SAFETY: the launch is refused before it starts.
    let e = unsafe { emu::launch_params::<copy>(&LaunchConfig::linear(1, 8, 0), &Options::default(), (src, out)) }
        .unwrap_err();
    assert_eq!(
        e,
        EmuError::InvalidLaunch(format!(
            "kernel `copy`: parameter `out` (an Output view of 32 bytes at {:#x}) overlaps parameter `src`; an Output \
             must be the only view of its elements in a launch, or two threads could write one element",
            base as usize + 32
        ))
    );
    // Disjoint halves of one allocation are fine.
    // SAFETY: as above, without the overlap.
    let (src, out) = unsafe { (GlobalMut::from_raw_parts(base, 8), Output::from_raw_parts(base.add(8), 8)) };
    // SAFETY: `v` outlives the launch.
    unsafe { emu::launch_params::<copy>(&LaunchConfig::linear(1, 8, 0), &Options::default(), (src, out)) }
        .expect("disjoint views");
}

#[test]
fn buffers_lend_views_and_read_back() {
    let src = emu::buffer("src", (0..8).collect::<Vec<u32>>());
    let mut out = emu::buffer("out", vec![0u32; 8]);
    emu::launch::<copy>(&LaunchConfig::linear(1, 8, 0), &Options::default(), (src.view_mut(), out.output()))
        .expect("launch");
    assert_eq!(out.to_vec(), (0..8).collect::<Vec<u32>>());
    assert_eq!(out.as_slice(), &[0, 1, 2, 3, 4, 5, 6, 7]);
    out.as_mut_slice().fill(9);
    assert_eq!(out.to_vec(), [9; 8]);
    assert_eq!((out.len(), out.is_empty(), out.name()), (8, false, "out"));
    let empty = emu::buffer::<u32>("empty", vec![]);
    assert!(empty.is_empty());
    assert_eq!(format!("{out:?}"), "Buffer { name: \"out\", data: [9, 9, 9, 9, 9, 9, 9, 9] }");
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
