//! Every fragment a macro of gpu-std takes is expanded once: a length or a type written as a macro
//! that expands differently each time (`stateful_macro::grows!()` is 1 the first time, 64 after;
//! `widens!()` is `u8` the first time, `u64` after) cannot make a shared view longer than the layout
//! the launch was checked against, nor give a kernel's parts different parameter types.

use gpu_std::emu::{self, LaunchConfig, Options};
use gpu_std::{GlobalMut, Kernel, kernel, shared_layout};
use std::sync::Mutex;

shared_layout! {
    /// One array whose length is a macro that changes between expansions.
    pub struct Grows {
        pub a: [u32; stateful_macro::grows!()],
    }
}

kernel! {
    /// Writes the length of the layout's view, as the kernel sees it.
    pub fn view_length<'a>(out: GlobalMut<'a, u32>) {
        let view = Grows::view();
        if gpu_std::thread::thread_idx().x == 0 {
            out.set(0, view.a.len() as u32);
        }
    }
}

#[test]
fn a_shared_length_that_expands_differently_is_expanded_once() {
    let out = emu::buffer("out", vec![0u32; 1]);
    let cfg = LaunchConfig::linear(1, 32, Grows::BYTES);
    let o = emu::launch::<view_length>(&cfg, &Options::default(), (out.view_mut(),)).expect("launch");
    assert!(o.races.is_empty());
    let len = out.to_vec()[0] as usize;
    assert_eq!(len * 4, Grows::BYTES, "the view has the layout's length: {len} u32s in {} bytes", Grows::BYTES);
    assert_eq!(len, 1, "the first (and only) expansion");
}

/// The element type the body of `typed_once` saw, by name.
static SEEN: Mutex<Option<&'static str>> = Mutex::new(None);

fn element_name<T: gpu_std::Pod>(_: &GlobalMut<'_, T>) -> &'static str {
    std::any::type_name::<T>()
}

kernel! {
    /// Records the element type its parameter has in the body.
    pub fn typed_once<'a>(x: GlobalMut<'a, stateful_macro::widens!()>) {
        if gpu_std::thread::thread_idx().x == 0 {
            *SEEN.lock().unwrap() = Some(element_name(&x));
        }
    }
}

#[test]
fn a_parameter_type_that_expands_differently_is_expanded_once() {
    // The host type's parameters, its signature (what a GPU launch compares with the module's) and
    // the body's parameter are one type.
    let sig = gpu_std::signature::of::<typed_once>();
    assert!(sig.ends_with("typed_once(GlobalMut<u8>)"), "{sig}");
    let x = emu::buffer("x", vec![0u8; 4]);
    emu::launch::<typed_once>(&LaunchConfig::linear(1, 1, 0), &Options::default(), (x.view_mut(),)).expect("launch");
    assert_eq!(*SEEN.lock().unwrap(), Some("u8"));
    assert_eq!(<typed_once as Kernel>::PARAMS, ["x"]);
}

pub struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
