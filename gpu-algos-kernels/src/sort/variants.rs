//! Twins of the sort's pass ([`super::onesweep`]) for `u32` keys, each without one of its
//! synchronisation choices: a status word published with a plain store, read with a plain load,
//! tiles taken by `blockIdx.x`. None is launched by gpu-algos; the tests run them on the emulator to
//! show what each choice prevents. Launch as [`sort_keys_u32`](super::onesweep::sort_keys_u32).
use gpu_std::{Global, GlobalMut, kernel};

use super::Digits;
use super::onesweep::{Variant, sort_tile};
use super::tile::PassKeys4;
use crate::lookback::wait::Access;

/// The variants' pass, with `variant`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn variant_pass(
    keys_in: Global<u32>,
    keys_out: GlobalMut<u32>,
    counts: Global<u32>,
    state: GlobalMut<u32>,
    digits: u32,
    pass: u32,
    variant: Variant,
) {
    let digits = Digits::from_arg(digits);
    sort_tile::<u32, u32, PassKeys4>(keys_in, keys_out, None, counts, state, digits, pass, variant)
}

kernel! {
    /// RACY variant of `sort_keys_u32`: publishes the status words with plain stores, not strong ones.
    pub fn sort_no_release_u32<'a>(keys_in: Global<'a, u32>, keys_out: GlobalMut<'a, u32>, counts: Global<'a, u32>,
        state: GlobalMut<'a, u32>, digits: u32, pass: u32) {
        let variant = Variant { access: Access::PlainStore, block_idx: false };
        variant_pass(keys_in, keys_out, counts, state, digits, pass, variant)
    }
}
kernel! {
    /// RACY variant of `sort_keys_u32`: reads the status words with plain loads, not strong ones.
    pub fn sort_no_acquire_u32<'a>(keys_in: Global<'a, u32>, keys_out: GlobalMut<'a, u32>, counts: Global<'a, u32>,
        state: GlobalMut<'a, u32>, digits: u32, pass: u32) {
        let variant = Variant { access: Access::PlainLoad, block_idx: false };
        variant_pass(keys_in, keys_out, counts, state, digits, pass, variant)
    }
}
kernel! {
    /// BROKEN variant of `sort_keys_u32`: tile `blockIdx.x` instead of a ticket. A resident block may wait
    /// for a tile whose block has not started: it hangs when fewer blocks are resident than the grid
    /// has. Never launched on a GPU.
    pub fn sort_blockidx_u32<'a>(keys_in: Global<'a, u32>, keys_out: GlobalMut<'a, u32>, counts: Global<'a, u32>,
        state: GlobalMut<'a, u32>, digits: u32, pass: u32) {
        let variant = Variant { access: Access::Strong, block_idx: true };
        variant_pass(keys_in, keys_out, counts, state, digits, pass, variant)
    }
}
