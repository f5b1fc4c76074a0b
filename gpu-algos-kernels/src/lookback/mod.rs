//! *Decoupled look-back*: how a tile of a one-pass device-wide algorithm learns what the tiles
//! before it add up to, without a second pass over the data. The scan ([`crate::scan`]) and the
//! sort's passes ([`crate::sort::onesweep`]) both use it.
//!
//! A launch's `state` starts with a header ([`wait::STATE_HEADER`] words: the ticket from which
//! blocks draw their tile ids, and the error word), then holds status words, one per tile (per digit,
//! for the sort). A tile publishes its *aggregate* (its own sum) as soon as it knows it, then walks
//! back over the tiles before it, adding aggregates until it meets a tile that has published its
//! *inclusive prefix*; it then publishes its own. A tile polls a word not yet published, at most
//! [`gpu_std::spin::SPIN_LIMIT`] times (`wait::poll!`): a tile that gives up sets the error word,
//! which the host checks.
//!
//! - [`wait`]: the header, how the words are written and read (`wait::Access`: strong, or one side
//!   plain in a racy variant), the sleeps, and the bounded poll: what both formats share;
//! - [`tagged`]: the scan's 64-bit words, tagged with the launch's epoch so that a state is reused
//!   without zeroing ([`tagged::Epochs`]), and its warp-wide walk over 32 tiles at a time;
//! - [`counted`]: the sort's 32-bit words (a count plus one, the prefix flag in bit 31), zeroed once
//!   per sort, and its walk of one thread per digit.
//!
//! Owns: the status words' formats and accesses, epochs, the poll and its bound. Imports gpu-std,
//! [`crate::element`] and [`crate::warp`] only: the algorithms import it, never the reverse.
pub mod counted;
pub mod tagged;
pub mod wait;
