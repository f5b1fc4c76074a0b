//! The library's errors ([`Error`], [`Result`]): a device call's ([`gpu_host::Error`]) and the
//! library's own cases.
//!
//! A leaf: imports nothing of the crate.

/// What a call of this library returns.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a call of the library failed.
///
/// ```
/// use gpu_host::Device;
/// let dev = Device::emulator(Default::default());
/// let x = dev.upload("x", &[1u32, 2, 3])?;
/// let mut out = dev.filled("out", 2, 0u32)?;
/// match gpu_algos::scan::inclusive_sum(&dev, &x, &mut out) {
///     Err(gpu_algos::Error::Input(why)) => assert!(why.contains("the output holds 2 elements, the input 3")),
///     other => panic!("an output of the wrong length: {other:?}"),
/// }
/// # Ok::<(), gpu_host::Error>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A call on the device failed (allocation, launch, copy, what the emulator found). Displayed as
    /// the device's error, whose causes are its causes.
    Device(gpu_host::Error),
    /// An input the call does not take: a length past what the kernels index, an output of another
    /// length, a histogram range with `lower >= upper`, a block size the sort cannot run.
    Input(String),
    /// A kernel's bounded wait for the tiles before it ran out: the output is not valid.
    GaveUp(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Device(e) => std::fmt::Display::fmt(e, f),
            Error::Input(s) | Error::GaveUp(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Displayed as the device's error: its causes are the device error's causes.
            Error::Device(e) => std::error::Error::source(e),
            _ => None,
        }
    }
}

impl From<gpu_host::Error> for Error {
    fn from(e: gpu_host::Error) -> Error {
        Error::Device(e)
    }
}

/// `return Err(Error::$case(format!(...)))`: `fail!(Input, "...", args)`.
macro_rules! fail {
    ($case:ident, $($arg:tt)*) => {
        return Err($crate::error::Error::$case(format!($($arg)*)))
    };
}
pub(crate) use fail;
