//! Who a thread is, and which scopes include which pairs of threads — computed from values, never
//! read from the running launch.
//!
//! A GPU thread is its global rank `gid` (block-major: `block * threads per block + rank in the
//! block`); its block is `gid / threads per block`. The host agent is [`HOST_GID`] in block
//! [`HOST_BLOCK`], outside every block. In a two-device launch the first `grid0` blocks are GPU 0's
//! and the next `grid1` GPU 1's, so a block's device is a comparison.
//!
//! Scopes: `.cta` includes the threads of one block; `.gpu` every thread of one device (the whole
//! launch, on one device); `.sys` every thread of both devices and the host agent. So between a GPU
//! thread and the host agent, or between threads of two GPUs, only system scope includes both sides
//! ([`Topology::only_system_between`]).

use crate::Dim3;
use crate::emu::report::ThreadId;

/// The host agent's thread number in the detector's records (no GPU thread has it: launches with a
/// host agent have fewer than 2^32 - 1 threads).
pub(crate) const HOST_GID: u32 = u32::MAX;
/// The host agent's block in the detector's records: none of the grid's.
pub(crate) const HOST_BLOCK: u32 = u32::MAX;

/// The shape of a launch as the memory model needs it: the grid (both devices' blocks, in a
/// two-device launch), the block, the dynamic shared memory of a block, and the split between two
/// devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Topology {
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_bytes: usize,
    /// Blocks of GPU 0 and of GPU 1 in a two-device launch.
    pub devices: Option<[u32; 2]>,
}

impl Topology {
    /// Threads per block.
    #[inline]
    pub fn block_threads(&self) -> u32 {
        self.block.volume() as u32
    }

    /// Whether the launch spans two devices.
    #[inline]
    pub fn two_devices(&self) -> bool {
        self.devices.is_some()
    }

    /// The device of the block with linear index `block` in a two-device launch (`None` otherwise,
    /// and for the host agent).
    pub fn device_of(&self, block: u32) -> Option<u32> {
        let grids = self.devices?;
        (block != HOST_BLOCK).then_some((block >= grids[0]) as u32)
    }

    /// Whether blocks `a` and `b` (linear indices) are on different GPUs: then only system scope
    /// includes both.
    #[inline]
    pub fn other_device(&self, a: u32, b: u32) -> bool {
        self.devices.is_some() && matches!((self.device_of(a), self.device_of(b)), (Some(x), Some(y)) if x != y)
    }

    /// Whether only system scope includes a thread of block `a` and one of block `b`: one is the host
    /// agent, or they are on different GPUs.
    #[inline]
    pub fn only_system_between(&self, a: u32, b: u32) -> bool {
        a == HOST_BLOCK || b == HOST_BLOCK || self.other_device(a, b)
    }

    /// The block index and grid a thread of block `linear` sees: within its device's grid in a
    /// two-device launch, else the block's index in the grid and the grid itself.
    pub fn local(&self, linear: u32) -> (Dim3, Dim3) {
        match self.devices {
            Some([g0, _]) if linear < g0 => (Dim3 { x: linear, y: 0, z: 0 }, Dim3::x(g0)),
            Some([g0, g1]) => (Dim3 { x: linear - g0, y: 0, z: 0 }, Dim3::x(g1)),
            None => (self.grid.delinear(linear), self.grid),
        }
    }

    /// The thread with global rank `gid`, as reports name it (the host agent for [`HOST_GID`]).
    pub fn thread_of(&self, gid: u32) -> ThreadId {
        if gid == HOST_GID {
            return ThreadId::HOST;
        }
        let n = self.block_threads();
        let (block, _) = self.local(gid / n);
        ThreadId::new(block, self.block.delinear(gid % n))
    }

    /// The device of the thread with global rank `gid` in a two-device launch.
    pub fn device_of_thread(&self, gid: u32) -> Option<u32> {
        if gid == HOST_GID { None } else { self.device_of(gid / self.block_threads()) }
    }
}
