//! The memory model: what the race detector knows of a launch, as plain data behind an event API.
//!
//! The execution engine (or a test, see [`Trace`]) tells the model what each agent did — an access of
//! some bytes with its kind and scope, a read-modify-write that takes or releases a lock, a fence, a
//! warp barrier of some lanes, a block barrier, a grid barrier, the host agent's accesses — in the
//! order they happened, and the model judges each access by the PTX memory model (`docs/memory-model.md`)
//! and keeps what it found (`Findings`: races, reads of uninitialised shared memory). Who acts is a
//! value (`Agent`: the host agent, or a GPU thread of the current wave, whose device, block and
//! rank the model knows from the launch's `Topology`); which scope includes which pair of threads is
//! computed from those values. This layer imports nothing of the engine or the primitives, only the
//! reports, the settings and gpu-std's vocabulary. This file declares the model's files and names
//! what the engine uses; it defines nothing, so that no file of the model names it.
//!
//! - `detector`: the `Model` of a launch, which the events are told to.
//! - `kind`: how an access touched memory (read, write, volatile, atomic, acquire, release).
//! - `lock`: a lock a thread holds, and the handoff that orders two critical sections.
//! - `int_map`: the hash map for integer keys the model's tables use.
//! - `clock`: happens-before knowledge (sparse vector clocks, what a release publishes, scopes).
//! - `race`: the record of one range of bytes and the race test.
//! - `explain`: why a race is one, in words.
//! - `predict`: races that the order of taking a lock hides.
//! - `shadow`: the records of every byte a launch touched.
//! - `topology`: who a thread is, and which scopes include whom.
//! - `findings`: what the detectors found.
//! - `trace`: the public event API for tests ([`Trace`]).

mod clock;
mod detector;
mod explain;
mod findings;
mod int_map;
mod kind;
mod lock;
mod predict;
mod race;
mod shadow;
pub(crate) mod topology;
mod trace;

pub(crate) use detector::{Agent, Model};
pub(crate) use kind::Kind;
pub(crate) use topology::{HOST_GID, Topology};
pub use trace::{Location, Op, Trace, TraceBuffer, Who};
