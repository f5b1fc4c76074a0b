//! The device code of `gpu-algos`: device-wide reduce ([`reduce`]), histogram ([`histogram`]), scan
//! ([`scan`]) and sort ([`sort`]) kernels, with the launch rules (grids, tiles, block sizes) the
//! library applies, as constants and functions of `n` and the device.
//!
//! By scope, lowest first: [`element`] (the element types and operators), [`warp`] (reductions and
//! scans over a warp's lanes), [`tiles`] (how many tiles an input takes), [`lookback`] (the decoupled
//! look-back's status words and bounded poll, shared by the scan and the sort's passes); then the
//! algorithms, each importing only those and never another algorithm's kernels (the sort's digit
//! histogram shares [`histogram`]'s count of a view's unaligned ends). An algorithm keeps its launch
//! shape apart from its tile's code where both are large ([`scan::plan`], [`scan::tile`]).
//!
//! A kernel crate like any other, written against `gpu-std` only: `no_std` on nvptx, where
//! gpu-builder builds it to the PTX module that gpu-algos ships;
//! plain Rust on the host, where every kernel runs on the emulator, race-checked. Call the kernels
//! through `gpu-algos`, which owns their temporary storage and checks their inputs.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_gpu_kernel, float_minimum_maximum, asm_experimental_arch))]

/// This crate's promise about thread-locals, which every `kernel!` needs (see `gpu_std::KernelCrate`).
pub struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}

/// `$body` for `$k = 0, 1, …, $n - 1` (`$n` a constant up to 16), written out, not looped: per-thread
/// arrays indexed only by constants stay in registers, where a loop the compiler leaves rolled
/// indexes them at run time, which puts them in local memory (and makes each load wait for the one
/// before).
macro_rules! unrolled {
    ($n:expr, $k:ident => $body:expr) => {{
        const { assert!($n <= 24, "unrolled! writes out 0 ..= 23") };
        unrolled!(@ $n, $k => $body; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23)
    }};
    (@ $n:expr, $k:ident => $body:expr; $($i:literal)*) => {{
        $(if $i < $n {
            let $k: usize = $i;
            $body;
        })*
    }};
}

pub mod element;
pub mod histogram;
pub mod lookback;
pub mod reduce;
pub mod scan;
pub mod scan_variants;
pub mod sort;
pub mod tiles;
pub mod warp;
