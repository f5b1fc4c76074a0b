//! Device-wide reduce, histogram, scan and radix sort in one call each, on a CUDA GPU or on the CPU
//! SIMT emulator: what CUB's `DeviceReduce`, `DeviceHistogram`, `DeviceScan` and `DeviceRadixSort` are
//! to CUDA C++, for [`gpu_host::Device`].
//!
//! ```
//! use gpu_host::Device;
//! // The emulator here; `Device::open(DeviceChoice::Auto, &gpu_algos::ptx(), ..)` picks the GPU when
//! // there is one. A device opened with a module of one's own takes the library's too.
//! let dev = Device::emulator(Default::default());
//! let x = dev.upload("x", &[3u32, 1, 4, 1, 5, 9, 2, 6])?;
//! assert_eq!(gpu_algos::reduce::sum(&dev, &x)?, 31);
//! assert_eq!(gpu_algos::reduce::max(&dev, &x)?, 9);
//! let mut prefix = dev.filled("prefix", 8, 0u32)?;
//! gpu_algos::scan::inclusive_sum(&dev, &x, &mut prefix)?;
//! assert_eq!(prefix.read()?, [3, 4, 8, 9, 14, 23, 25, 31]);
//! let mut sorted = dev.filled("sorted", 8, 0u32)?;
//! gpu_algos::sort::sort_keys(&dev, &x, &mut sorted)?;
//! assert_eq!(sorted.read()?, [1, 1, 2, 3, 4, 5, 6, 9]);
//! assert!(dev.take_findings().is_clean()); // on the emulator, race-checked
//! # Ok::<(), gpu_algos::Error>(())
//! ```
//!
//! Every call picks its launch shape from `n` and the device ([`plan`]), owns its temporary storage
//! (an [`Algos`] keeps it between calls; the free functions make one per call), and checks its
//! input: an empty input gives the identity (or nothing to sort), and a length past what the kernels
//! index, a histogram range with `lower >= upper` or an output of the wrong length is an error
//! ([`Error::Input`]), as is a buffer of another device (the launch refuses it: [`Error::Device`]),
//! never a wrong answer. On the emulator every launch is race-checked, so a test of a pipeline that
//! calls the library checks the library's synchronisation too ([`Device::take_findings`]).
//!
//! **The kernels' PTX.** On a GPU the calls load the library's module ([`ptx`]) next to whatever
//! module the device was opened with ([`Device::load_module`]), once. The module is built from
//! `gpu-algos-kernels` and kept in this crate's source (`ptx/gpu_algos_kernels.ptx`), so a user's
//! build needs no GPU toolchain for it; the crate's tests in its repository check that it is what
//! the kernels' source builds to.
//!
//! [`Device::take_findings`]: gpu_host::Device::take_findings
//! [`Device::load_module`]: gpu_host::Device::load_module
mod device;
mod error;
pub mod histogram;
pub mod kernels;
pub mod plan;
pub mod reduce;
pub mod scan;
mod scratch;
pub mod sort;

pub use gpu_algos_kernels::element::{Element, Max, Min, Op, Sum};
pub use kernels::{EvenSample, Reducible, Scannable, SortValue, Sortable};
pub use scratch::Algos;

pub use device::ptx;
pub use error::{Error, Result};
