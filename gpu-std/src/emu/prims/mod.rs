//! The primitives: the emulator side of every `gpu_std` function (the counterpart of the PTX layer),
//! and the host agent's operations. Each primitive checks the memory it touches against what the
//! launch was given (`access_check`), asks the engine to run or suspend the calling thread, performs
//! the operation, and tells the memory model what it did.

pub(crate) mod access_check;
pub(crate) mod backend;
pub mod host_agent;
pub(crate) mod memory;
