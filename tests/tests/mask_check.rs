//! A warp collective called by a lane that is not in its mask is undefined in PTX; the safe functions
//! of `gpu-std` check it. On a GPU the launch must fail (device `printf` of the reason, then `trap`);
//! on the emulator it is reported with the lane and the mask. Its own test binary: a trap leaves the
//! GPU context unusable, so nothing else runs in this process after it.

use gpu_host::Device;
use gpu_kernels::primitives::prim_shfl_lane_not_in_mask;
use gpu_std::emu::LaunchConfig;
use tests::gpu_or_skip;

fn launch(dev: &Device) -> String {
    let out = dev.filled("out", 32, 0u32).expect("alloc");
    let e = dev
        .launch::<prim_shfl_lane_not_in_mask>(LaunchConfig::linear(1, 32, 0), (out.view_mut(),))
        .expect_err("a shuffle by a lane outside its mask must not complete normally");
    format!("{e:#}")
}

#[test]
fn lane_outside_its_mask_is_reported_by_the_emulator() {
    let dev = Device::emulator(Default::default());
    let msg = launch(&dev);
    assert!(msg.contains("lane 0 of warp 0") && msg.contains("not in its own mask 0xfffffffe"), "{msg}");
}

#[test]
fn lane_outside_its_mask_traps_on_the_gpu() {
    let Some(dev) = gpu_or_skip("lane_outside_its_mask_traps_on_the_gpu") else { return };
    let msg = launch(&dev);
    println!("GPU launch failed as it must: {msg}");
    assert!(msg.contains("prim_shfl_lane_not_in_mask"), "{msg}");
}
