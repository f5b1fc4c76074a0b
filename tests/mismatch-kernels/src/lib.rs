//! Kernels whose GPU and host definitions differ on purpose. Each is a way, open to safe code in a
//! kernel crate, for a host kernel type to carry the name of an `.entry` compiled from another
//! definition, with parameters of the same sizes (a `GlobalMut<u8>` and a `GlobalMut<u64>` are both
//! one 16-byte parameter): launched, the `u64` code would write 8 × `len` bytes into a buffer of
//! `len`. The signature `kernel!` writes next to every `.entry` names the definition's module path,
//! name and parameter types, and a GPU launch refuses a module whose signature for the kernel is not
//! the host type's (`tests/tests/signatures.rs` checks that over the built module;
//! `tests/tests/gpu_open.rs` launches them on a GPU). [`scalars`] is, for comparison, a kernel whose
//! two definitions agree.
//!
//! `cargo xtask build-ptx -p mismatch-kernels` builds this crate to `target/ptx/mismatch_kernels.ptx`.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_gpu_kernel))]

use gpu_std::thread::global_index_x;
use gpu_std::{GlobalMut, kernel};

/// `fill`'s element type: 8 bytes on the GPU, 1 on the host.
#[cfg(target_arch = "nvptx64")]
pub type Elem = u64;
/// `fill`'s element type: 8 bytes on the GPU, 1 on the host.
#[cfg(not(target_arch = "nvptx64"))]
pub type Elem = u8;

kernel! {
    /// Sets element `i` to 1 in thread `i`: of a `GlobalMut<u64>` on the GPU, of a `GlobalMut<u8>` on
    /// the host, through a type alias that each target resolves its own way.
    pub fn fill<'a>(x: GlobalMut<'a, Elem>) {
        let i = global_index_x();
        if i < x.len() {
            x.set(i, 1);
        }
    }
}

/// A kernel of 8-byte elements.
pub mod wide {
    use super::*;

    kernel! {
        /// Sets element `i` to 1 in thread `i`.
        pub fn fill_wide<'a>(x: GlobalMut<'a, u64>) {
            let i = global_index_x();
            if i < x.len() {
                x.set(i, 1);
            }
        }
    }
}

/// A kernel of 1-byte elements with the name of [`wide::fill_wide`], defined on the host only: the
/// module has no `.entry` of its own for it, only `wide`'s.
pub mod narrow {
    #[cfg(not(target_arch = "nvptx64"))]
    use super::*;

    #[cfg(not(target_arch = "nvptx64"))]
    kernel! {
        /// Sets element `i` to 1 in thread `i`.
        pub fn fill_wide<'a>(x: GlobalMut<'a, u8>) {
            let i = global_index_x();
            if i < x.len() {
                x.set(i, 1);
            }
        }
    }
}

/// A kernel defined where `stringify!` is another macro, which would give it the name of
/// [`wide::fill_wide`] if `kernel!` used the `stringify!` in scope.
pub mod shadowed {
    use super::*;

    #[allow(unused_macros)]
    macro_rules! stringify {
        ($($t:tt)*) => {
            "fill_wide"
        };
    }

    kernel! {
        /// Sets element `i` to 1 in thread `i`.
        pub fn fill_shadowed<'a>(x: GlobalMut<'a, u8>) {
            let i = global_index_x();
            if i < x.len() {
                x.set(i, 1);
            }
        }
    }
}

/// A parameter type written as a macro that expands to `u8` the first time and `u64` after
/// (`stateful_macro::widens!`): `kernel!` expands it once per target, so the `.entry`, its signature
/// and the body all take `GlobalMut<u8>` (a macro that expanded it again for the `.entry` than for
/// the signature would let a `u64` body pass a `u8` signature check).
pub mod widening {
    use super::*;

    kernel! {
        /// Sets element `i` to 1 in thread `i`.
        pub fn fill_widening<'a>(x: GlobalMut<'a, stateful_macro::widens!()>) {
            let i = global_index_x();
            if i < x.len() {
                x.set(i, 1);
            }
        }
    }
}

/// For comparison, a kernel of scalars only (no views, no lifetime), whose definitions agree.
pub mod scalars {
    use super::*;

    kernel! {
        /// Does nothing with its two scalars.
        pub fn scalars_only(n: u32, scale: f64) {
            let _ = (n, scale);
        }
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
