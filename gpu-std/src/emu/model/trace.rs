//! Driving the memory model with events, without a kernel: a [`Trace`] is one interleaving of the
//! operations of some threads, told to the model in the order given, and judged exactly as the
//! emulator judges a launch that ran in that order. A rule of the model is tested in microseconds,
//! and a question about the PTX memory model ("does this fence order that read?") is answered by
//! writing down the interleaving.
//!
//! ```
//! use gpu_std::atomic::ScopeKind::Device;
//! use gpu_std::emu::model::{Op, Trace, Who};
//! // Message passing between two blocks: a write, __threadfence(), a volatile flag store; a volatile
//! // load that sees the flag, __threadfence(), the read.
//! let mut t = Trace::new(2, 32);
//! let (data, flag) = (t.buffer("data", 1), t.buffer("flag", 1));
//! let (a, b) = (Who::thread(0, 0), Who::thread(1, 0));
//! t.op(a, data.at(0), Op::Write);
//! t.fence(a, Device);
//! t.op(a, flag.at(0), Op::VolatileWrite(1));
//! t.op(b, flag.at(0), Op::VolatileRead);
//! t.fence(b, Device);
//! t.op(b, data.at(0), Op::Read);
//! assert!(t.races().is_empty());
//!
//! // Without the reader's fence, the volatile load observes the flag but acquires nothing.
//! let mut t = Trace::new(2, 32);
//! let (data, flag) = (t.buffer("data", 1), t.buffer("flag", 1));
//! t.op(a, data.at(0), Op::Write);
//! t.fence(a, Device);
//! t.op(a, flag.at(0), Op::VolatileWrite(1));
//! t.op(b, flag.at(0), Op::VolatileRead);
//! t.op(b, data.at(0), Op::Read);
//! assert_eq!(t.racy_buffers(), ["data"]);
//! ```
//!
//! Operations chain; `docs/emulator.md` shows this one:
//!
//! ```
//! use gpu_std::atomic::ScopeKind::Device;
//! use gpu_std::emu::model::{Op, Trace, Who};
//! // Message passing between two blocks, the reader without its fence.
//! let mut t = Trace::new(2, 32);
//! let (data, flag) = (t.buffer("data", 1), t.buffer("flag", 1));
//! let (a, b) = (Who::thread(0, 0), Who::thread(1, 0));
//! t.op(a, data.at(0), Op::Write).fence(a, Device).op(a, flag.at(0), Op::VolatileWrite(1));
//! t.op(b, flag.at(0), Op::VolatileRead).op(b, data.at(0), Op::Read);
//! assert_eq!(t.racy_buffers(), ["data"]);
//! ```

use super::{Agent, Kind, Model, Topology};
use crate::Dim3;
use crate::atomic::{ScopeKind, SpaceKind};
use crate::emu::report::{BufferName, Race, register_buffer};

/// Who makes an operation of a [`Trace`]: a GPU thread (its block's linear index in the combined
/// grid, and its rank in the block), or the host agent (system-scope operations of a thread outside
/// every block, as in [`launch_with_host`](crate::emu::launch_with_host)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// Thread `thread` (linear rank) of block `block` (linear index).
    Thread {
        /// The block's linear index (GPU 1's blocks follow GPU 0's in a two-device trace).
        block: u32,
        /// The thread's linear rank in its block.
        thread: u32,
    },
    /// The host agent.
    Host,
}

impl Who {
    /// Thread `thread` of block `block`.
    pub fn thread(block: u32, thread: u32) -> Who {
        Who::Thread { block, thread }
    }
}

/// One memory operation of a [`Trace`], as the primitives of `gpu_std` tell the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A plain load (`ld`).
    Read,
    /// A plain store (`st`).
    Write,
    /// A volatile load (`ld.volatile`: relaxed, system scope).
    VolatileRead,
    /// A volatile store of a value (`st.volatile`); the value matters where it releases a lock.
    VolatileWrite(u64),
    /// An atomic read-modify-write at a scope (`atom.add` and the like) that is not a compare-and-swap
    /// or exchange.
    Atomic(ScopeKind),
    /// An atomic compare-and-swap or exchange at a scope that found `old` and left `new`: one that
    /// changes the word takes a lock (or releases one the thread holds), as the detector reads locks.
    Swap {
        /// The scope.
        scope: ScopeKind,
        /// The value found.
        old: u64,
        /// The value left.
        new: u64,
    },
    /// An acquire load (`ld.acquire`).
    AcquireLoad(ScopeKind),
    /// A release store of a value (`st.release`).
    ReleaseStore(ScopeKind, u64),
}

/// A `u32` buffer of a trace: its elements are the locations operations name.
#[derive(Clone, Copy, Debug)]
pub struct TraceBuffer {
    base: usize,
    len: usize,
}

/// A location of a trace: one `u32` element of a [`TraceBuffer`].
#[derive(Clone, Copy, Debug)]
pub struct Location {
    addr: usize,
}

impl TraceBuffer {
    /// Element `i`.
    pub fn at(&self, i: usize) -> Location {
        assert!(i < self.len, "element {i} of a {}-element trace buffer", self.len);
        Location { addr: self.base + 4 * i }
    }
}

/// One interleaving of operations, judged by the memory model (see the module docs).
pub struct Trace {
    model: Model,
    memory: Vec<(Box<[u32]>, BufferName)>,
    /// Shared memory of each block (the model names it by address).
    _shared: Vec<Box<[u128]>>,
    block_threads: u32,
    blocks: u32,
}

impl Trace {
    /// A launch of `blocks` blocks of `threads` threads each, on one device, all resident at once.
    pub fn new(blocks: u32, threads: u32) -> Trace {
        Trace::with_topology(blocks, threads, None)
    }

    /// A two-device launch: `blocks0` blocks on GPU 0, then `blocks1` on GPU 1, `threads` each (see
    /// [`launch_two_devices`](crate::emu::launch_two_devices)).
    pub fn two_devices(blocks0: u32, blocks1: u32, threads: u32) -> Trace {
        Trace::with_topology(blocks0 + blocks1, threads, Some([blocks0, blocks1]))
    }

    fn with_topology(blocks: u32, threads: u32, devices: Option<[u32; 2]>) -> Trace {
        assert!(blocks >= 1 && (1..=1024).contains(&threads), "a trace needs blocks of 1 to 1024 threads");
        let topo = Topology { grid: Dim3::x(blocks), block: Dim3::x(threads), shared_bytes: 16, devices };
        let mut model = Model::new("trace", topo, true, usize::MAX);
        let shared: Vec<Box<[u128]>> = (0..blocks).map(|_| vec![0u128; 1].into_boxed_slice()).collect();
        model.start_wave(shared.iter().enumerate().map(|(b, s)| (b as u32, s.as_ptr() as usize)));
        Trace { model, memory: Vec::new(), _shared: shared, block_threads: threads, blocks }
    }

    /// A buffer of `len` `u32` elements named `name` in reports.
    pub fn buffer(&mut self, name: &str, len: usize) -> TraceBuffer {
        let data = vec![0u32; len.max(1)].into_boxed_slice();
        let reg = register_buffer(name, data.as_ptr(), len);
        let b = TraceBuffer { base: data.as_ptr() as usize, len };
        self.memory.push((data, reg));
        b
    }

    fn agent(&self, who: Who) -> Agent {
        match who {
            Who::Host => Agent::Host,
            Who::Thread { block, thread } => {
                assert!(block < self.blocks && thread < self.block_threads, "no thread {thread} of block {block}");
                Agent::Gpu((block * self.block_threads + thread) as usize)
            }
        }
    }

    /// `who` performs `op` on `at`.
    #[track_caller]
    pub fn op(&mut self, who: Who, at: Location, op: Op) -> &mut Self {
        let site = crate::site();
        let agent = self.agent(who);
        let kind = match op {
            Op::Read => Kind::Read,
            Op::Write => Kind::Write,
            Op::VolatileRead => Kind::VolatileRead,
            Op::VolatileWrite(_) => Kind::VolatileWrite,
            Op::Atomic(s) | Op::Swap { scope: s, .. } => Kind::Atomic(s),
            Op::AcquireLoad(s) => Kind::AcquireLoad(s),
            Op::ReleaseStore(s, _) => Kind::ReleaseStore(s),
        };
        if let Agent::Gpu(t) = agent {
            match op {
                Op::Swap { old, new, .. } => self.model.lock_rmw(t, at.addr, old, new, site),
                Op::VolatileWrite(v) | Op::ReleaseStore(_, v) => self.model.lock_store(t, at.addr, v),
                _ => {}
            }
        }
        self.model.access(agent, at.addr, 4, SpaceKind::Global, kind, site);
        self
    }

    /// `who` executes a fence at `scope` (`fence.sc`; the host agent's fences are system-scoped).
    pub fn fence(&mut self, who: Who, scope: ScopeKind) -> &mut Self {
        let agent = self.agent(who);
        self.model.fence(agent, if agent == Agent::Host { ScopeKind::System } else { scope });
        self
    }

    /// The lanes in `mask` of warp `warp` of block `block` complete a `__syncwarp(mask)`.
    pub fn sync_warp(&mut self, block: u32, warp: u32, mask: u32) -> &mut Self {
        let Agent::Gpu(first) = self.agent(Who::thread(block, warp * 32)) else { unreachable!() };
        let lanes = (self.block_threads - warp * 32).min(32);
        let live = if lanes == 32 { u32::MAX } else { (1 << lanes) - 1 };
        self.model.warp_barrier(first, mask & live);
        self
    }

    /// Every thread of block `block` completes a `__syncthreads()`.
    pub fn sync_threads(&mut self, block: u32) -> &mut Self {
        assert!(block < self.blocks, "no block {block}");
        self.model.block_barrier(block as usize, |_| true);
        self
    }

    /// Every thread of the grid completes a grid barrier (`grid.sync()`).
    pub fn grid_sync(&mut self) -> &mut Self {
        self.model.grid_barrier();
        self
    }

    /// The races found so far, each with both accesses and why nothing orders them.
    pub fn races(&self) -> &[Race] {
        &self.model.findings().races
    }

    /// The names of the buffers with a race, sorted, each once.
    pub fn racy_buffers(&self) -> Vec<String> {
        let mut v: Vec<String> = self.races().iter().map(|r| r.buffer.clone()).collect();
        v.sort();
        v.dedup();
        v
    }
}
