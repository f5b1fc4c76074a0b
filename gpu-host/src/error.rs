//! The crate's errors: one [`Error`] enum whose cases say what went wrong (no GPU, a driver call, a
//! refused launch, what the emulator found, memory, a module, ...), and [`Result`].
//!
//! A leaf: imports nothing of the crate.

use gpu_std::emu::EmuError;

/// What a call of this crate returns.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a call of this crate failed. Displayed as one sentence; [`std::error::Error::source`] gives
/// the cause where there is one (so that `anyhow`'s `{:#}` prints the chain).
///
/// ```
/// use gpu_host::{Device, DeviceChoice, Error, Ptx};
/// // SAFETY: the file does not exist: nothing is loaded.
/// let missing = unsafe { Ptx::file("/nonexistent/kernels.ptx") };
/// match Device::open(DeviceChoice::Gpu, &missing, Default::default()) {
///     Err(Error::NoGpu(why)) => println!("no GPU to open: {why}"),
///     Err(e) => println!("the GPU could not be opened: {e}"),
///     Ok(_) => unreachable!("the module does not exist"),
/// }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// There is no GPU to open (the reason): a build without the `cuda` feature, no driver, no such
    /// device. The only error on which [`Device::open`](crate::Device::open) with
    /// [`DeviceChoice::Auto`](crate::DeviceChoice::Auto) falls back to the emulator.
    NoGpu(String),
    /// A CUDA driver call failed: the call (`cuLaunchKernel`, `cuMemHostAlloc(...)`, ...) and the
    /// driver's name of the error (`CUDA_ERROR_ILLEGAL_ADDRESS`, ...).
    Driver {
        /// The call.
        call: String,
        /// The CUDA error.
        code: String,
    },
    /// A launch refused before anything ran: the rule it broke (an argument in another device's
    /// memory, a launch shape its arguments do not fit, a block past the kernel's launch bounds, a
    /// cooperative grid larger than can be resident, two launches' views overlapping).
    Refused(String),
    /// What the emulator found that ends a launch: a deadlock or a livelock (with its report), a
    /// panic in the kernel, an invalid launch. Displayed as the emulator's error.
    Emulator(EmuError),
    /// Memory that cannot be had: more elements than one allocation holds, or not the memory.
    OutOfMemory(String),
    /// A PTX module that cannot be read or that the driver rejects, or no loaded module with the
    /// kernel (its name, parameters and signature).
    Module(String),
    /// An element or a view past a buffer's end, or elements of another size.
    Bounds(String),
    /// What the devices given cannot do (together): peer access between a GPU and the emulator or
    /// within one GPU, mapped memory on a GPU that cannot map host memory, ...
    Unsupported(String),
    /// A name that is not a [`DeviceChoice`](crate::DeviceChoice).
    UnknownDevice(String),
    /// The host thread that ran next to a kernel panicked (its message).
    HostThread(String),
    /// What was being done (`context`) when `source` happened.
    Context {
        /// What was being done.
        context: String,
        /// What went wrong.
        source: Box<Error>,
    },
}

impl Error {
    /// This error, as the cause of `context` (what was being done).
    pub fn context(self, context: impl Into<String>) -> Error {
        Error::Context { context: context.into(), source: Box::new(self) }
    }

    /// Whether the reason is that there is no GPU to open ([`Error::NoGpu`], perhaps under context).
    pub fn is_no_gpu(&self) -> bool {
        match self {
            Error::NoGpu(_) => true,
            Error::Context { source, .. } => source.is_no_gpu(),
            _ => false,
        }
    }
}

/// `{}` is the error's own sentence; `{:#}` adds its causes, `: `-separated (as `anyhow` prints a
/// chain).
impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.fmt_one(f)?;
        if f.alternate() {
            let mut cause = std::error::Error::source(self);
            while let Some(e) = cause {
                write!(f, ": {e}")?;
                cause = e.source();
            }
        }
        Ok(())
    }
}

impl Error {
    fn fmt_one(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NoGpu(s)
            | Error::Refused(s)
            | Error::OutOfMemory(s)
            | Error::Module(s)
            | Error::Bounds(s)
            | Error::Unsupported(s)
            | Error::HostThread(s) => f.write_str(s),
            Error::UnknownDevice(s) => write!(f, "unknown device `{s}` (expected auto, gpu or emu)"),
            Error::Driver { call, code } => write!(f, "{call} failed: {code}"),
            Error::Emulator(e) => std::fmt::Display::fmt(e, f),
            Error::Context { context, .. } => f.write_str(context),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Context { source, .. } => Some(source.as_ref()),
            // Displayed as the emulator's error: its cause is the emulator error's cause.
            Error::Emulator(e) => std::error::Error::source(e),
            _ => None,
        }
    }
}

impl From<EmuError> for Error {
    fn from(e: EmuError) -> Error {
        Error::Emulator(e)
    }
}

/// `return Err(Error::$case(format!(...)))`: `fail!(Refused, "...", args)`.
macro_rules! fail {
    ($case:ident, $($arg:tt)*) => {
        return Err($crate::error::Error::$case(format!($($arg)*)).into())
    };
}
pub(crate) use fail;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_reads_as_a_chain_and_no_gpu_is_found_under_it() {
        let e = Error::NoGpu("no driver".into()).context("opening GPU 0");
        assert_eq!(e.to_string(), "opening GPU 0");
        assert_eq!(std::error::Error::source(&e).map(ToString::to_string).as_deref(), Some("no driver"));
        assert!(e.is_no_gpu());
        assert!(!Error::Refused("x".into()).is_no_gpu());
        assert_eq!(format!("{e:#}"), "opening GPU 0: no driver");
        let d = Error::Driver { call: "cuLaunchKernel".into(), code: "CUDA_ERROR_INVALID_VALUE".into() };
        assert_eq!(d.to_string(), "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE");
    }
}
