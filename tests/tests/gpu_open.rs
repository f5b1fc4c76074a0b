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
