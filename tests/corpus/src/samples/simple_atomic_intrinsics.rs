//! `NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420
//! Samples/0_Introduction/simpleAtomicIntrinsics/simpleAtomicIntrinsics_kernel.cuh (testKernel)`, with
//! the host's inputs and `computeGold` of `simpleAtomicIntrinsics.cu` / `simpleAtomicIntrinsics_cpu.cpp`.
//!
//! Kept: every thread applies the eleven atomics of the sample, one per element of `g_odata`: add
//! 10, sub 10, exchange with its index, max and min of its index, inc with limit 17, dec with limit
//! 137, CAS of `tid - 1` to `tid`, and with `2 tid + 7`, or with `1 << tid`, xor with its index; the
//! initial values (all zero, `0xff` for the and and the xor); 256 threads per block. Changed: the
//! grid is `n / 256` blocks (the sample fixes 64), `n` a multiple of 256 since the kernel has no
//! bounds check. The words are `u32` throughout (the sample casts its `int *` to `unsigned int *`
//! for inc and dec; every operand is non-negative, so the unsigned max and min the port uses give
//! the signed ones' results). `1 << tid` is `1u32.wrapping_shl(tid)`, as the x86 host reference
//! computes it (the final or is all ones either way once 32 threads ran). The checks are the
//! sample's: exact for add, sub, max, min, and, or, xor, and for inc and dec (every thread applies
//! the same step, so the final value does not depend on the order), membership in `0..n` for the
//! exchange and the CAS.
//!
//! Synchronisation. Every access is a device-scope atomic read-modify-write of one word that every
//! thread updates: morally strong with each other, so no pair races, and each update is applied
//! exactly once. Nothing else is read or written.
use gpu_std::thread::{block_dim, block_idx, thread_idx};
use gpu_std::{GlobalMut, kernel};

/// Threads per block.
pub const THREADS: u32 = 256;

kernel! {
    /// `testKernel`: eleven atomics per thread on `g_odata[0..11]`.
    pub fn test_kernel<'a>(g_odata: GlobalMut<'a, u32>) {
        let tid = block_dim().x * block_idx().x + thread_idx().x;
        g_odata.atomic(0).fetch_add(10);
        g_odata.atomic(1).fetch_sub(10);
        g_odata.atomic(2).swap(tid);
        g_odata.atomic(3).fetch_max(tid);
        g_odata.atomic(4).fetch_min(tid);
        g_odata.atomic(5).fetch_inc(17);
        g_odata.atomic(6).fetch_dec(137);
        g_odata.atomic(7).compare_and_swap(tid.wrapping_sub(1), tid);
        g_odata.atomic(8).fetch_and(2 * tid + 7);
        g_odata.atomic(9).fetch_or(1u32.wrapping_shl(tid));
        g_odata.atomic(10).fetch_xor(tid);
    }
}

/// `computeGold`: `Err` naming the first operation whose result is wrong.
#[cfg(not(target_arch = "nvptx64"))]
fn compute_gold(got: &[u32], len: u32) -> crate::Checked {
    let g = |k: usize| got[k] as i32;
    let mut want = [0i32; 11];
    want[0] = (0..len).fold(0i32, |v, _| v.wrapping_add(10));
    want[1] = (0..len).fold(0i32, |v, _| v.wrapping_sub(10));
    want[3] = (0..len as i32).fold(-(1 << 8), |v, i| v.max(i));
    want[4] = (0..len as i32).fold(1 << 8, |v, i| v.min(i));
    want[5] = (0..len).fold(0u32, |v, _| if v >= 17 { 0 } else { v + 1 }) as i32;
    want[6] = (0..len).fold(0u32, |v, _| if v == 0 || v > 137 { 137 } else { v - 1 }) as i32;
    want[8] = (0..len as i32).fold(0xff, |v, i| v & (2 * i + 7));
    want[9] = (0..len).fold(0i32, |v, i| v | 1i32.wrapping_shl(i));
    want[10] = (0..len as i32).fold(0xff, |v, i| v ^ i);
    let names = [
        "atomicAdd",
        "atomicSub",
        "atomicExch",
        "atomicMax",
        "atomicMin",
        "atomicInc",
        "atomicDec",
        "atomicCAS",
        "atomicAnd",
        "atomicOr",
        "atomicXor",
    ];
    for k in 0..11 {
        let ok = match k {
            // Exchange and CAS: the sample only asks for some thread's index.
            2 | 7 => (0..len as i32).contains(&g(k)),
            _ => g(k) == want[k],
        };
        if !ok {
            return Err(format!("{} failed: g_odata[{k}] = {}, expected {}", names[k], g(k), want[k]));
        }
    }
    Ok(())
}

/// The sample's initial values, `n / 256` blocks of 256 threads (`n` a multiple of 256), `computeGold`.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    anyhow::ensure!(n.is_multiple_of(THREADS as usize) && n > 0, "simpleAtomicIntrinsics: n = {n}");
    let mut h = [0u32; 11];
    h[8] = 0xff;
    h[10] = 0xff;
    let d = dev.upload("g_odata", &h)?;
    dev.launch::<test_kernel>(gpu_host::Launch::linear((n / THREADS as usize) as u32, THREADS, 0), (d.view_mut(),))?;
    Ok(compute_gold(&d.read()?, n as u32))
}
