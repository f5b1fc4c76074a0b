//! The user crate's kernels (`tests/user-kernels`) launched through the host library: on the emulator
//! always, on the GPU (the PTX module `target/ptx/user_kernels.ptx`) when one is present.

use gpu_host::{Device, cover};
use tests::gpu_with_crate_or_skip;
use user_kernels::{BLOCK, SHARED_BYTES, block_sum, saxpy};

/// Sizes that leave a partial last block, and one of over a million elements on the GPU.
const EMU_SIZES: [usize; 4] = [1, 255, 257, 1000];
const GPU_SIZES: [usize; 5] = [1, 255, 257, 1000, (1 << 20) + 1];

/// Runs `saxpy` and `block_sum` on `dev` at size `n` and checks every element against the CPU.
fn run_both(dev: &Device, n: usize) {
    // saxpy: y = a*x + y, exactly as the CPU computes it in f32: rustc does not contract the multiply
    // and the add into an fma (the PTX has `mul.rn.f32` and `add.rn.f32`, which ptxas keeps apart).
    let a = -2.5f32;
    let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11 + 1.0).cos()).collect();
    let xb = dev.upload("x", &x).expect("upload x");
    let yb = dev.upload("y", &y0).expect("upload y");
    let cfg = cover(n, 128, u32::MAX, 0);
    dev.launch::<saxpy>(cfg, (a, xb.view(), yb.view_mut())).expect("saxpy launch");
    let y = yb.read().expect("read y");
    for (i, (&xi, &yi)) in x.iter().zip(&y0).enumerate() {
        let want = a * xi + yi;
        assert_eq!(y[i].to_bits(), want.to_bits(), "saxpy n={n} on {}: y[{i}] = {} vs {want}", dev.kind(), y[i]);
    }

    // block_sum: one u32 sum per block of BLOCK elements, exact.
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) % 1000).collect();
    let blocks = n.div_ceil(BLOCK as usize);
    let ib = dev.upload("input", &input).expect("upload input");
    let mut sb = dev.filled("sums", blocks, u32::MAX).expect("alloc sums");
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, SHARED_BYTES);
    dev.launch::<block_sum>(cfg, (ib.view(), sb.output())).expect("block_sum launch");
    let want: Vec<u32> = input.chunks(BLOCK as usize).map(|c| c.iter().sum()).collect();
    assert_eq!(sb.read().expect("read sums"), want, "block_sum n={n} on {}", dev.kind());

    let findings = dev.take_findings();
    assert_eq!(findings.racy_addresses, 0, "n={n}: races reported: {:?}", findings.races);
    println!("user kernels n={n} on {}: PASS", dev.kind());
}

#[test]
fn on_emulator() {
    let dev = Device::emulator(Default::default());
    for n in EMU_SIZES {
        run_both(&dev, n);
    }
}

#[test]
fn on_gpu() {
    let Some(dev) = gpu_with_crate_or_skip("user kernels on GPU", "user_kernels") else { return };
    for n in GPU_SIZES {
        run_both(&dev, n);
    }
}
