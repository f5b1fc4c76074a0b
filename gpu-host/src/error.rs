//! The crate's errors.
//!
//! A leaf: imports nothing of the crate.

/// Why a GPU could not be opened when the reason is that there is none to open: a build without the
/// `cuda` feature, no driver, or no device. Other failures (an unreadable or rejected PTX module, a
/// failing CUDA call) are plain errors. Find it with `error.downcast_ref::<NoGpu>()`.
#[derive(Debug)]
pub struct NoGpu(pub String);

impl std::fmt::Display for NoGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoGpu {}
