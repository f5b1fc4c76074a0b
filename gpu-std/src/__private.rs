//! What the exported macros (`kernel!`, `shared_layout!`) reach through `$crate`: the real `core`,
//! which a kernel crate cannot replace (`extern crate self as core;` changes what `::core` means in
//! that crate, not here). Not part of the API.
//!
//! Ground floor: imports nothing of gpu-std.

pub use ::core;
