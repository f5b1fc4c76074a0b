//! Device-wide histograms: 256 bins of bytes ([`bytes`] from 8 MiB, [`small`] below), and even bins
//! over a range for `u16`, `u32` and `f32` samples ([`even`]).
pub mod bytes;
pub(crate) mod ends;
pub mod even;
pub mod small;
