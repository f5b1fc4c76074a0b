//! Two GPUs under one scheduler: a launch of one kernel on GPU 0 and one on GPU 1 that run at the same
//! time and talk through memory both can reach (peer memory), as one emulated launch.
//!
//! The two grids become one launch whose blocks each carry a device index: the first `grid0` blocks are
//! GPU 0's, the next `grid1` GPU 1's. A thread sees its own device's coordinates (`block_idx()` and
//! `grid_dim()` count within its grid) and runs its device's kernel. For the detectors the device is
//! the scope boundary that `.gpu` stops at: a device-scope fence, atomic or release/acquire orders
//! memory only among the threads of one GPU, so an edge between threads of the two GPUs forms only
//! when every operation of the pattern is system-scoped (`.sys`), and two strong accesses of the two
//! GPUs are morally strong only when both are system-scoped; race reports name the GPU of each
//! thread (`GPU 1 block 0 thread 0`).
//!
//! Limits: both grids are 1-D with the same block shape and dynamic shared memory, run in one wave
//! (all blocks resident: their kernels may wait for each other), not cooperatively, and without a
//! host agent. Deadlock and livelock reports number the blocks of the combined launch (GPU 1's after
//! GPU 0's).

use super::host_agent::HOST_BLOCK;
use super::race::Kind;
use super::sched::with_state;
use crate::Dim3;
use crate::atomic::ScopeKind;
use std::cell::Cell;

thread_local! {
    /// Blocks of GPU 0 and of GPU 1 while a two-device launch runs on this OS thread.
    static SPLIT: Cell<Option<[u32; 2]>> = const { Cell::new(None) };
}

/// Marks a two-device launch with `grids` blocks per device as running on this OS thread until dropped.
pub(crate) struct TwoDevices(());

impl TwoDevices {
    pub(crate) fn set(grids: [u32; 2]) -> TwoDevices {
        SPLIT.with(|s| s.set(Some(grids)));
        TwoDevices(())
    }
}

impl Drop for TwoDevices {
    fn drop(&mut self) {
        SPLIT.with(|s| s.set(None));
    }
}

/// Whether the running launch spans two devices.
pub(crate) fn active() -> bool {
    SPLIT.with(|s| s.get().is_some())
}

/// The device of the block with linear index `block` in a two-device launch (`None` otherwise, and
/// for the host agent).
pub(crate) fn device_of(block: u32) -> Option<u32> {
    let grids = SPLIT.with(|s| s.get())?;
    (block != HOST_BLOCK).then_some((block >= grids[0]) as u32)
}

/// Whether blocks `a` and `b` (linear indices) are on different GPUs: then only system scope
/// includes both.
pub(crate) fn other_device(a: u32, b: u32) -> bool {
    matches!((device_of(a), device_of(b)), (Some(x), Some(y)) if x != y)
}

/// The index and grid a thread of block `linear` sees: within its device's grid in a two-device
/// launch, else `idx` and `grid` themselves.
pub(crate) fn local(linear: u32, idx: Dim3, grid: Dim3) -> (Dim3, Dim3) {
    match SPLIT.with(|s| s.get()) {
        Some([g0, _]) if linear < g0 => (Dim3 { x: linear, y: 0, z: 0 }, Dim3::x(g0)),
        Some([g0, g1]) => (Dim3 { x: linear - g0, y: 0, z: 0 }, Dim3::x(g1)),
        None => (idx, grid),
    }
}

/// The device of the running GPU thread (0 outside a two-device launch).
pub(crate) fn current() -> u32 {
    let linear = with_state(|st, me| st.blocks[st.threads[me].block].linear);
    device_of(linear).unwrap_or(0)
}

/// Why nothing orders two accesses of threads on different GPUs.
pub(crate) const UNORDERED: &str = "threads of two GPUs, and no release/acquire edge at system scope between the accesses \
     (publish with __threadfence_system() or a system-scope release, acquire with a system-scope load or fence): a \
     device-scope (.gpu) operation orders memory only among the threads of one GPU; needs system scope";

/// Two strong accesses of threads on different GPUs that are not morally strong: one of them is not
/// system-scoped.
pub(crate) fn strong_pair(a: Kind, b: Kind) -> String {
    let narrow = if a.scope() != ScopeKind::System { a } else { b };
    format!(
        "the threads are on different GPUs, and the {} is {}-scoped: only system-scope (.sys) atomics, volatile \
         accesses and release/acquire operations are strong between threads of two GPUs; needs system scope",
        narrow.name(),
        if narrow.scope() == ScopeKind::Block { "block" } else { "device" }
    )
}
