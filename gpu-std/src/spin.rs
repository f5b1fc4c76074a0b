//! The bound of every spin-wait a kernel writes: a lock, a flag, a look-back window.
//!
//! A kernel that waits for another thread (a lock holder, a producer's flag, an earlier tile's
//! status word) polls at most [`SPIN_LIMIT`] times and then gives up, setting an error word the host
//! reads, instead of hanging the device. On a GPU a poll takes from tens of nanoseconds to about a
//! microsecond (with a `nanosleep` between polls), so the bound is seconds, far beyond any wait a
//! correct kernel makes; on the emulator a waiting thread is parked until the word changes, and a
//! wait nobody can end is reported as a livelock long before the bound.
//!
//! Owns: the one bound. Imports nothing of gpu-std.

/// Polls of one spin-wait before a kernel gives up (2^22).
pub const SPIN_LIMIT: u32 = 1 << 22;
