//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420
//! Samples/2_Concepts_and_Techniques/sortingNetworks/bitonicSort.cu (bitonicSortShared, Comparator,
//! bitonicSort)`.
//!
//! Kept: the shared-memory bitonic sort of key/value pairs for arrays of at most 1024
//! (`SHARED_SIZE_LIMIT`) elements: blocks of 512 threads, each block loading 1024 consecutive pairs
//! (two per thread, at `tid` and `tid + 512`), the bitonic merge steps for sizes 2..arrayLength with a
//! barrier before every comparator step, the final merge in direction `dir`, a barrier, and the
//! store; `batchSize * arrayLength / 1024` blocks. Changed: the batch comes from `n` (a multiple of
//! 1024): 1, 2 or 3 blocks' worth of pairs give arrays of 1024, 512 or 256 elements (then again),
//! and the direction alternates with the block count, so both directions and several arrays per
//! block are tested; keys are random, values their indices. The reference runs the same network on
//! the CPU, so keys and values are compared exactly (and the keys are also checked to be sorted).
//!
//! Synchronisation. In each step every thread compares and swaps the pair `(pos, pos + stride)`; the
//! pairs of one step are disjoint, and a thread's pair in the next step was written by other threads
//! in this one: the barrier at the top of each step orders them. The loads before the first step and
//! the stores after the last are ordered by the barrier before the first step and the barrier after
//! the loop.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_idx, thread_idx};
use gpu_std::{Global, GlobalMut, SharedSlice, kernel, shared_layout};

/// `SHARED_SIZE_LIMIT`.
pub const SHARED_SIZE_LIMIT: usize = 1024;

shared_layout! {
    /// `__shared__ uint s_key[SHARED_SIZE_LIMIT], s_val[SHARED_SIZE_LIMIT]`.
    pub struct Pairs {
        /// Keys.
        pub s_key: [u32; SHARED_SIZE_LIMIT],
        /// Values.
        pub s_val: [u32; SHARED_SIZE_LIMIT],
    }
}

/// `Comparator` on the shared pairs `a` and `b`: swapped when `(key a > key b) == dir`.
#[inline(always)]
fn comparator(s_key: SharedSlice<u32>, s_val: SharedSlice<u32>, a: usize, b: usize, dir: u32) {
    let (key_a, key_b) = (s_key.get(a), s_key.get(b));
    let (val_a, val_b) = (s_val.get(a), s_val.get(b));
    if (key_a > key_b) as u32 == dir {
        s_key.set(a, key_b);
        s_key.set(b, key_a);
        s_val.set(a, val_b);
        s_val.set(b, val_a);
    }
}

kernel! {
    /// `bitonicSortShared`: sorts each `array_length`-element array of keys (with their values) in
    /// direction `dir` (1: ascending).
    pub fn bitonic_sort_shared<'a>(
        d_dst_key: GlobalMut<'a, u32>,
        d_dst_val: GlobalMut<'a, u32>,
        d_src_key: Global<'a, u32>,
        d_src_val: Global<'a, u32>,
        array_length: u32,
        dir: u32,
    ) {
        let Pairs { s_key, s_val } = Pairs::view();
        let tid = thread_idx().x;
        let t = tid as usize;
        let base = block_idx().x as usize * SHARED_SIZE_LIMIT + t;
        const HALF: usize = SHARED_SIZE_LIMIT / 2;
        s_key.set(t, d_src_key.get(base));
        s_val.set(t, d_src_val.get(base));
        s_key.set(t + HALF, d_src_key.get(base + HALF));
        s_val.set(t + HALF, d_src_val.get(base + HALF));
        let mut size = 2;
        while size < array_length {
            let ddd = dir ^ ((tid & (size / 2)) != 0) as u32;
            let mut stride = size / 2;
            while stride > 0 {
                sync_threads();
                let pos = (2 * tid - (tid & (stride - 1))) as usize;
                comparator(s_key, s_val, pos, pos + stride as usize, ddd);
                stride >>= 1;
            }
            size <<= 1;
        }
        let mut stride = array_length / 2;
        while stride > 0 {
            sync_threads();
            let pos = (2 * tid - (tid & (stride - 1))) as usize;
            comparator(s_key, s_val, pos, pos + stride as usize, dir);
            stride >>= 1;
        }
        sync_threads();
        d_dst_key.set(base, s_key.get(t));
        d_dst_val.set(base, s_val.get(t));
        d_dst_key.set(base + HALF, s_key.get(t + HALF));
        d_dst_val.set(base + HALF, s_val.get(t + HALF));
    }
}

/// The network of one block on the CPU, thread by thread within each step (the steps' pairs are
/// disjoint, so this is exactly what the block computes).
#[cfg(not(target_arch = "nvptx64"))]
fn cpu_block(key: &mut [u32], val: &mut [u32], array_length: u32, dir: u32) {
    let mut cmp = |a: usize, b: usize, d: u32| {
        if (key[a] > key[b]) as u32 == d {
            key.swap(a, b);
            val.swap(a, b);
        }
    };
    let mut size = 2;
    while size < array_length {
        let mut stride = size / 2;
        while stride > 0 {
            for tid in 0..(SHARED_SIZE_LIMIT / 2) as u32 {
                let ddd = dir ^ ((tid & (size / 2)) != 0) as u32;
                let pos = (2 * tid - (tid & (stride - 1))) as usize;
                cmp(pos, pos + stride as usize, ddd);
            }
            stride >>= 1;
        }
        size <<= 1;
    }
    let mut stride = array_length / 2;
    while stride > 0 {
        for tid in 0..(SHARED_SIZE_LIMIT / 2) as u32 {
            let pos = (2 * tid - (tid & (stride - 1))) as usize;
            cmp(pos, pos + stride as usize, dir);
        }
        stride >>= 1;
    }
}

/// `n` (a multiple of 1024) random keys with their indices as values; the launch of `bitonicSort`
/// for arrays of at most 1024; keys and values compared with the CPU network, keys checked sorted.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    anyhow::ensure!(n.is_multiple_of(SHARED_SIZE_LIMIT) && n > 0, "bitonicSortShared: n = {n}");
    let blocks = n / SHARED_SIZE_LIMIT;
    let array_length = (SHARED_SIZE_LIMIT >> ((blocks - 1) % 3)) as u32;
    let dir = (blocks % 2) as u32;
    let mut rng = super::common::Lcg(n as u32 ^ 0xb170);
    let keys: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let vals: Vec<u32> = (0..n as u32).collect();
    let (mut want_k, mut want_v) = (keys.clone(), vals.clone());
    for b in 0..blocks {
        let r = b * SHARED_SIZE_LIMIT..(b + 1) * SHARED_SIZE_LIMIT;
        cpu_block(&mut want_k[r.clone()], &mut want_v[r], array_length, dir);
    }
    for (a, arr) in want_k.chunks(array_length as usize).enumerate() {
        if arr.windows(2).any(|w| (w[0] > w[1]) == (dir == 1) && w[0] != w[1]) {
            anyhow::bail!("the CPU network left array {a} unsorted");
        }
    }
    let (d_sk, d_sv) = (dev.upload("d_SrcKey", &keys)?, dev.upload("d_SrcVal", &vals)?);
    let (d_dk, d_dv) = (dev.filled("d_DstKey", n, 0u32)?, dev.filled("d_DstVal", n, 0u32)?);
    dev.launch::<bitonic_sort_shared>(
        gpu_host::Launch::linear(blocks as u32, (SHARED_SIZE_LIMIT / 2) as u32, Pairs::BYTES),
        (d_dk.view_mut(), d_dv.view_mut(), d_sk.view(), d_sv.view(), array_length, dir),
    )?;
    let (got_k, got_v) = (d_dk.read()?, d_dv.read()?);
    Ok(super::common::first_mismatch("d_DstKey", &got_k, &want_k)
        .and_then(|()| super::common::first_mismatch("d_DstVal", &got_v, &want_v)))
}
