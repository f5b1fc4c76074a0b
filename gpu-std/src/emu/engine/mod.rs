//! The execution engine: runs a launch's threads with CUDA's execution model, and tells the memory
//! model (`super::model`) what they did.
//!
//! Every GPU thread is a stackful coroutine (`stack`) on one OS thread; a seeded scheduler (`sched`)
//! picks which runnable thread runs next; blocks run in waves of resident blocks (`launch`). The
//! launch's state is plain data (`state`, with what polls saw in `polled`); a running thread reaches
//! it through the one thread-local context of its OS thread (`context`), never through another
//! file's globals.
//! Threads wait at block and grid barriers (`barrier`) and warp collectives (`collectives`); spin
//! loops are polls, parked until their location changes (`poll`); the host agent is one more
//! coroutine under the same scheduler (`host_agent`). A launch that cannot finish ends in a report
//! (`deadlock`), never a hang. The engine knows nothing of happens-before: it tells the model of
//! every access, fence and completed barrier through the model's event API.

pub(crate) mod barrier;
pub(crate) mod collectives;
pub(crate) mod context;
pub(crate) mod deadlock;
pub(crate) mod host_agent;
pub(crate) mod launch;
pub(crate) mod poll;
pub(crate) mod polled;
pub(crate) mod sched;
pub(crate) mod stack;
pub(crate) mod state;
pub(crate) mod watchdog;
