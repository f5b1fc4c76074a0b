//! With a GPU present, a PTX module the driver cannot use is a failure with one clear message — never
//! "skipped: no CUDA device", and never a silent fall-back to the emulator.

use host::device::{DeviceChoice, NoGpu, ptx_path};
use std::path::{Path, PathBuf};
use tests::gpu_or_skip;

/// Writes `text` to a file of its own and returns the path.
fn module_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpu-open-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write module");
    path
}

/// Opening `path` on the GPU, explicitly and with `auto`, must fail with a message that names it.
fn must_fail(path: &Path) {
    for choice in [DeviceChoice::Gpu, DeviceChoice::Auto] {
        let e = match host::device::open_with_ptx(choice, Default::default(), path) {
            Ok((dev, note)) => panic!("{choice:?} opened {} with {} ({note:?})", path.display(), dev.name()),
            Err(e) => e,
        };
        assert!(e.downcast_ref::<NoGpu>().is_none(), "{choice:?}: reported as no GPU: {e:#}");
        let msg = format!("{e:#}");
        assert!(msg.contains(&path.display().to_string()), "{choice:?}: the message does not name the module: {msg}");
        println!("{choice:?}: {msg}");
    }
}

#[test]
fn a_corrupt_module_fails_on_the_gpu() {
    if gpu_or_skip("a_corrupt_module_fails_on_the_gpu").is_none() {
        return;
    }
    must_fail(&module_file("corrupt.ptx", ".version 8.5\n.target sm_90\n.address_size 64\nthis is not PTX\n"));
}

#[test]
fn a_module_for_a_newer_gpu_fails_on_the_gpu() {
    if gpu_or_skip("a_module_for_a_newer_gpu_fails_on_the_gpu").is_none() {
        return;
    }
    let ptx = std::fs::read_to_string(ptx_path("gpu_kernels")).expect("the built module");
    assert!(ptx.contains(".target sm_90"), "expected an sm_90 module");
    must_fail(&module_file("newer.ptx", &ptx.replace(".target sm_90", ".target sm_120")));
}

#[test]
fn a_missing_module_fails_on_the_gpu() {
    if gpu_or_skip("a_missing_module_fails_on_the_gpu").is_none() {
        return;
    }
    must_fail(&std::env::temp_dir().join("no-such-module.ptx"));
}

/// A module whose `saxpy` has one `u32` parameter: what a stale module built from another version of
/// the kernel looks like to the driver.
const STALE_SAXPY: &str = ".version 7.8\n.target sm_90\n.address_size 64\n\
    .visible .entry saxpy(.param .u32 saxpy_param_0)\n{\n\tret;\n}\n";

#[test]
fn a_stale_module_whose_kernel_takes_other_parameters_is_refused_before_the_launch() {
    if gpu_or_skip("a_stale_module_whose_kernel_takes_other_parameters_is_refused_before_the_launch").is_none() {
        return;
    }
    // The driver loads the module: only the parameter check stands between the launch and an argument
    // array read out of bounds.
    let dev = gpu_host::Device::gpu(&gpu_host::Ptx::text("stale", STALE_SAXPY)).expect("the stale module loads");
    let x = dev.upload("x", &[1.0f32; 32]).unwrap();
    let y = dev.filled("y", 32, 2.0f32).unwrap();
    let e =
        dev.launch::<user_kernels::saxpy>(gpu_host::cover(32, 32, 1, 0), (3.0f32, x.view(), y.view_mut())).unwrap_err();
    let msg = format!("{e:#}");
    println!("{msg}");
    assert!(
        msg.contains("kernel `saxpy`") && msg.contains("takes 1 parameters of [4] bytes") && msg.contains("passes 3"),
        "{msg}"
    );
    assert_eq!(y.read().unwrap(), [2.0; 32], "nothing ran");
}

#[test]
fn a_gpu_buffer_is_refused_by_the_emulator() {
    let Some(gpu) = gpu_or_skip("a_gpu_buffer_is_refused_by_the_emulator") else { return };
    let emu = gpu_host::Device::emulator(Default::default());
    let on_gpu = gpu.upload("x", &[1.0f32; 32]).unwrap();
    let y = emu.filled("y", 32, 2.0f32).unwrap();
    let e = emu
        .launch::<user_kernels::saxpy>(gpu_host::cover(32, 32, 1, 0), (3.0f32, on_gpu.view(), y.view_mut()))
        .unwrap_err();
    assert!(format!("{e:#}").contains("parameter `x` is a view of another device's memory"), "{e:#}");
    // And an emulator buffer is refused by the GPU.
    let host_x = emu.upload("x", &[1.0f32; 32]).unwrap();
    let gpu_y = gpu.filled("y", 32, 2.0f32).unwrap();
    let e = gpu
        .launch::<user_kernels::saxpy>(gpu_host::cover(32, 32, 1, 0), (3.0f32, host_x.view(), gpu_y.view_mut()))
        .unwrap_err();
    assert!(format!("{e:#}").contains("another device's memory"), "{e:#}");
}
