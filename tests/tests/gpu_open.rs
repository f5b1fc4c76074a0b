//! With a GPU present, a PTX module the driver cannot use is a failure with one clear message — never
//! "skipped: no CUDA device", and never a silent fall-back to the emulator.

use gpu_host::{DeviceChoice, Error};
use host::open::ptx_path;
use std::path::{Path, PathBuf};
use tests::{gpu_or_skip, gpu_with_crate_or_skip};

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
        // SAFETY: every module given here is missing, or one the driver refuses to load (what this
        // test checks): nothing of it runs.
        let e = match unsafe { host::open::open_with_ptx(choice, Default::default(), path) } {
            Ok((dev, note)) => panic!("{choice:?} opened {} with {} ({note:?})", path.display(), dev.name()),
            Err(e) => e,
        };
        assert!(!e.downcast_ref::<Error>().is_some_and(Error::is_no_gpu), "{choice:?}: reported as no GPU: {e:#}");
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
    // SAFETY: the module's one kernel carries no signature, so no launch can reach it (the refusal of
    // such a launch is what this test checks).
    let stale = unsafe { gpu_host::Ptx::text("stale", STALE_SAXPY) };
    let dev = gpu_host::Device::gpu(&stale).expect("the stale module loads");
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

/// `saxpy` with the parameter sizes of `user_kernels::saxpy` but no signature: a module not built by
/// gpu-builder from a `kernel!` definition (hand-written, or by another compiler).
const UNSIGNED_SAXPY: &str = ".version 7.8\n.target sm_90\n.address_size 64\n\
    .visible .entry saxpy(\n\t.param .f32 saxpy_param_0,\n\t.param .align 8 .b8 saxpy_param_1[16],\n\
    \t.param .align 8 .b8 saxpy_param_2[16]\n)\n{\n\tret;\n}\n";

#[test]
fn a_kernel_without_a_signature_is_refused_before_the_launch() {
    if gpu_or_skip("a_kernel_without_a_signature_is_refused_before_the_launch").is_none() {
        return;
    }
    // SAFETY: the module's one kernel carries no signature, so no launch can reach it (what this test
    // checks).
    let unsigned = unsafe { gpu_host::Ptx::text("unsigned", UNSIGNED_SAXPY) };
    let dev = gpu_host::Device::gpu(&unsigned).expect("the module loads");
    let x = dev.upload("x", &[1.0f32; 32]).unwrap();
    let y = dev.filled("y", 32, 2.0f32).unwrap();
    let e =
        dev.launch::<user_kernels::saxpy>(gpu_host::cover(32, 32, 1, 0), (3.0f32, x.view(), y.view_mut())).unwrap_err();
    let msg = format!("{e:#}");
    println!("{msg}");
    assert!(msg.contains("kernel `saxpy`") && msg.contains("has no signature"), "{msg}");
    assert_eq!(y.read().unwrap(), [2.0; 32], "nothing ran");
}

#[test]
fn a_kernel_compiled_from_another_definition_is_refused_on_the_gpu() {
    let Some(dev) =
        gpu_with_crate_or_skip("a_kernel_compiled_from_another_definition_is_refused_on_the_gpu", "mismatch_kernels")
    else {
        return;
    };
    let cfg = gpu_host::cover(32, 32, 1, 0);
    // `fill` takes a `GlobalMut<u64>` on the GPU and a `GlobalMut<u8>` on the host: launched, it would
    // write 8 × 32 bytes into this 32-byte buffer.
    let bytes = dev.filled("bytes", 32, 0u8).unwrap();
    let e = dev.launch::<mismatch_kernels::fill>(cfg, (bytes.view_mut(),)).unwrap_err();
    let msg = format!("{e:#}");
    println!("{msg}");
    assert!(msg.contains("compiled from another definition") && msg.contains("fill(GlobalMut<u64>)"), "{msg}");
    // `narrow::fill_wide` (host only, `u8`) has the name of `wide::fill_wide`'s `.entry` (`u64`).
    let e = dev.launch::<mismatch_kernels::narrow::fill_wide>(cfg, (bytes.view_mut(),)).unwrap_err();
    assert!(format!("{e:#}").contains("mismatch_kernels::wide::fill_wide(GlobalMut<u64>)"), "{e:#}");
    assert_eq!(bytes.read().unwrap(), [0; 32], "nothing ran");
    // The definitions the module was built from run.
    let words = dev.filled("words", 32, 0u64).unwrap();
    dev.launch::<mismatch_kernels::wide::fill_wide>(cfg, (words.view_mut(),)).unwrap();
    assert_eq!(words.read().unwrap(), [1; 32]);
    dev.launch::<mismatch_kernels::shadowed::fill_shadowed>(cfg, (bytes.view_mut(),)).unwrap();
    assert_eq!(bytes.read().unwrap(), [1; 32]);
}

#[test]
fn declarations_in_comments_do_not_change_which_kernel_is_launched() {
    let Some(_) = gpu_or_skip("declarations_in_comments_do_not_change_which_kernel_is_launched") else { return };
    // The user crate's module with a one-`u32` `saxpy`, and a signature for it, in comments above the
    // real ones: the launch reads (as the driver does) the three-parameter entry.
    let real = std::fs::read_to_string(ptx_path("user_kernels")).expect("the built module");
    let at = real.find(".visible .entry").expect("an entry");
    let text = format!(
        "{}// .visible .entry saxpy(.param .u32 saxpy_param_0)\n/* .visible .global .align 1 .b8 \
         __gpu_std_signature_saxpy[1] = {{0}};\n.visible .entry saxpy(.param .u32 p) {{ ret; }} */\n{}",
        &real[..at],
        &real[at..]
    );
    // SAFETY: the module gpu-builder built from `user-kernels`, with comments added.
    let ptx = unsafe { gpu_host::Ptx::text("commented", text) };
    let dev = gpu_host::Device::gpu(&ptx).expect("the module loads");
    let x = dev.upload("x", &[1.0f32; 32]).unwrap();
    let y = dev.filled("y", 32, 2.0f32).unwrap();
    dev.launch::<user_kernels::saxpy>(gpu_host::cover(32, 32, 1, 0), (3.0f32, x.view(), y.view_mut())).unwrap();
    assert_eq!(y.read().unwrap(), [5.0; 32]);
}
