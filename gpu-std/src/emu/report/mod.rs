//! What the emulator reports, in the types both the memory model and the execution engine build
//! them from: the outcome of a launch that completed (`outcome`), the errors that end one
//! (`errors`), where an access landed (`place`), and what an address is called (`names`). This
//! layer imports nothing else of the emulator.

pub(crate) mod errors;
pub(crate) mod names;
pub(crate) mod outcome;
pub(crate) mod place;

pub use errors::{Deadlock, EmuError, Livelock, WaitGroup};
pub use names::{BufferName, register_buffer};
pub use outcome::{Accepted, AccessInfo, Outcome, Race, SyncSite, ThreadId, UninitRead, Warning};
pub(crate) use place::Place;
