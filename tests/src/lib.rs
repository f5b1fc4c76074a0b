//! Shared helpers of the integration tests.
use std::path::PathBuf;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The built PTX (`cargo xtask build-ptx`); `$GPU_KERNELS_PTX` overrides the path.
pub fn ptx_text() -> String {
    let path = std::env::var("GPU_KERNELS_PTX")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join("target/ptx/gpu_kernels.ptx"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {} ({e}): run `cargo xtask build-ptx` first", path.display()))
}

/// Opens the GPU, or prints `skipped: no CUDA device (...)` and returns `None`.
pub fn gpu_or_skip(test: &str) -> Option<host::device::Device> {
    match host::device::Device::open(host::device::DeviceChoice::Gpu, Default::default()) {
        Ok((d, _)) => Some(d),
        Err(e) => {
            // Written to the real stderr (not the test harness's captured output) so that the skip is
            // visible in every test run.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{test}: skipped: no CUDA device ({e:#})");
            None
        }
    }
}
