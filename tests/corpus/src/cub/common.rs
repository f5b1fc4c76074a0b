//! What the CUB ports' checks share: their inputs (deterministic, so a failing size can be rerun) and
//! the check of one sum per block. It names the corpus's types ([`crate::Checked`]) and the
//! cuda-samples' comparison; it may not import the ports, nor `cub/mod.rs`, which lists them.

use crate::Checked;

/// Deterministic `u32` inputs: small values (sums stay exact, and wrap the same on both sides).
pub(crate) fn input_u32(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 22).collect()
}

/// Deterministic `u64` inputs with high bits set (a sum that dropped a half would show).
pub(crate) fn input_u64(n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 8) | (1 << 40)).collect()
}

/// `Ok(())` when `got == want`, else the first differing index with both values.
pub(crate) use crate::samples::first_mismatch as compare;

/// Launches `K` (one `u64` sum per block of `block` threads, written to
/// `sums[block]`) over `n` inputs with `shared` bytes of shared memory, and compares every block's
/// sum with the CPU's (wrapping, as `u64` addition on the device).
pub(crate) fn check_block_sums<K>(
    dev: &gpu_host::Device,
    n: usize,
    block: u32,
    shared: usize,
) -> anyhow::Result<Checked>
where
    K: for<'a> gpu_std::Kernel<Args<'a> = (gpu_std::Global<'a, u64>, gpu_std::Output<'a, u64, gpu_std::PerBlock>)>,
{
    let input = input_u64(n);
    let ib = dev.upload("input", &input)?;
    let mut sb = dev.filled("sums", n.div_ceil(block as usize), 0u64)?;
    let cfg = gpu_host::cover(n, block, u32::MAX, shared);
    dev.launch::<K>(cfg, (ib.view(), sb.output()))?;
    let want: Vec<u64> = input.chunks(block as usize).map(|c| c.iter().fold(0u64, |a, &b| a.wrapping_add(b))).collect();
    Ok(compare("sums", &sb.read()?, &want))
}
