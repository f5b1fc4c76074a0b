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

/// The PTX module gpu-algos ships (`gpu-algos/ptx/gpu_algos_kernels.ptx`, checked current by `cargo
/// xtask test`).
pub fn algos_ptx_text() -> String {
    let path = root().join("gpu-algos/ptx/gpu_algos_kernels.ptx");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {} ({e})", path.display()))
}

/// Opens the GPU with the chapter's kernels, or prints `skipped: no CUDA device (...)` and returns
/// `None`.
pub fn gpu_or_skip(test: &str) -> Option<gpu_host::Device> {
    gpu_with_crate_or_skip(test, host::open::DEFAULT_KERNEL_CRATE)
}

/// Opens the GPU with the PTX module of the workspace's kernel crate `crate_name`
/// (`host::open::crate_ptx`), or, when there is no GPU, prints `skipped: no CUDA device (...)` and
/// returns `None`. Any other failure to open it (e.g. a PTX module that is missing or that the driver
/// rejects) fails the test.
pub fn gpu_with_crate_or_skip(test: &str, crate_name: &str) -> Option<gpu_host::Device> {
    match host::open::open_crate(gpu_host::DeviceChoice::Gpu, Default::default(), crate_name) {
        Ok((d, _)) => Some(d),
        Err(e) if !e.downcast_ref::<gpu_host::Error>().is_some_and(gpu_host::Error::is_no_gpu) => {
            panic!("{test}: cannot open the GPU: {e:#}")
        }
        Err(e) => {
            // Written to the real stderr (not the test harness's captured output) so that the skip is
            // visible in every test run.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{test}: skipped: no CUDA device ({e:#})");
            None
        }
    }
}
