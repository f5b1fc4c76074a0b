//! `Output` views: each element has one owner, so results cannot race; the ownership rule is defined
//! on the 1-D global index, so every safe launcher refuses other launch shapes.

use gpu_host::Device;
use gpu_kernels::warp_reduce::warp_reduce;
use gpu_std::Dim3;
use gpu_std::emu::LaunchConfig;
use tests::gpu_or_skip;

/// Launches `warp_reduce` (which writes through an `Output<f32, PerWarp>`) with 2-D blocks.
fn two_d_launch(dev: &Device) -> String {
    let input = dev.upload("input", &[1.0f32; 64]).expect("upload");
    let mut sums = dev.filled("sums", 2, 0.0f32).expect("alloc");
    let cfg = LaunchConfig { grid: Dim3::x(1), block: Dim3::new(32, 2, 1), shared_bytes: 0, cooperative: false };
    let e = dev.launch::<warp_reduce>(cfg, (input.view(), sums.output())).expect_err("a 2-D launch must be refused");
    format!("{e:#}")
}

#[test]
fn output_views_refuse_launches_that_are_not_1d_on_the_emulator() {
    let dev = Device::emulator(Default::default());
    let msg = two_d_launch(&dev);
    assert!(msg.contains("warp_reduce") && msg.contains("1-D"), "{msg}");
}

#[test]
fn output_views_refuse_launches_that_are_not_1d_on_the_gpu() {
    let Some(dev) = gpu_or_skip("output_views_refuse_launches_that_are_not_1d_on_the_gpu") else { return };
    let msg = two_d_launch(&dev);
    assert!(msg.contains("warp_reduce") && msg.contains("1-D"), "{msg}");
}

#[test]
fn every_owned_element_is_written_once() {
    // Sizes that are not multiples of the block or of a warp (warp_reduce needs whole-warp blocks).
    let dev = Device::emulator(Default::default());
    for (n, block) in [(1usize, 32u32), (100, 32), (257, 64), (1000, 96)] {
        let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let inp = dev.upload("input", &input).expect("upload");
        let warps = n.div_ceil(32);
        let mut sums = dev.filled("sums", warps, f32::NAN).expect("alloc");
        let cfg = LaunchConfig::linear((n as u32).div_ceil(block), block, 0);
        dev.launch::<warp_reduce>(cfg, (inp.view(), sums.output())).expect("launch");
        let got = sums.read().expect("read");
        let f = dev.take_findings();
        assert_eq!(f.racy_addresses, 0, "n={n} block={block}: {:?}", f.races);
        // Every element was written (the NaN poison is gone) by its warp's lane 0, with its warp's sum
        // (small integers: exact in f32).
        for (w, &g) in got.iter().enumerate() {
            let want: f32 = input[w * 32..((w + 1) * 32).min(n)].iter().sum();
            assert_eq!(g, want, "n={n} block={block} warp {w}");
        }
    }
}
