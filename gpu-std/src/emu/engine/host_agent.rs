//! The host agent in the engine: one more coroutine of a launch, scheduled with the GPU threads
//! under the same seeded generator, outside every block. This file runs it (`HostRun`), keeps what
//! the scheduler and the livelock reports need (`HostAgent`: alive, spinning, where), and receives
//! its operations — the public `emu::host_agent` module, in `prims::host_agent` — which it tells the
//! memory model as system-scope operations of `Agent::Host`.
//!
//! Limits: a launch with a host agent runs in one wave (all blocks resident, at most
//! [`Options::max_resident_blocks`]) and is not cooperative; the agent may not launch kernels.
//!
//! Names the launch state, the context, the stacks and what polls saw; not the scheduler's loop or
//! the launch, which run it.

use super::context::{self, host_state};
use super::polled::{Polled, fmt_value};
use super::stack::{self, Co, Guard, Overflow};
use super::state::{Emu, HostAgent, Info, NOT_A_GPU_THREAD, State};
use crate::Site;
use crate::atomic::{ScopeKind, SpaceKind};
use crate::emu::config::{LaunchConfig, Options};
use crate::emu::model::{Agent, HOST_GID, Kind};
use crate::emu::report::{EmuError, Livelock, ThreadId, WaitGroup, names};
use corosensei::{CoroutineResult, Yielder};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The host agent's coroutine, owned by the launch.
pub(crate) struct HostRun {
    co: Option<Co>,
    guard: Guard,
}

/// What the stack guard reports for the agent (block and thread indices of no GPU thread).
const WHO: [u32; 6] = [u32::MAX, u32::MAX, u32::MAX, 0, 0, 0];

impl HostRun {
    /// The agent's coroutine, running `agent` on a stack of `stack_bytes`.
    ///
    /// # Safety
    /// `agent` must stay valid until the coroutine is completed or dropped (the launch does both
    /// before it returns).
    pub(crate) unsafe fn new(agent: *mut (dyn FnMut() + '_), stack_bytes: usize) -> Result<HostRun, EmuError> {
        let stack = stack::allocate(stack_bytes).map_err(|e| {
            EmuError::InvalidLaunch(format!("cannot allocate a {stack_bytes}-byte stack for the host agent: {e}"))
        })?;
        let guard = Guard::new(stack::limit_of(&stack));
        // SAFETY: lifetime erased for the coroutine; the caller keeps `agent` valid while it exists.
        let agent: *mut (dyn FnMut() + 'static) = unsafe { std::mem::transmute(agent) };
        // SAFETY: the closure touches `agent` only, which outlives the coroutine (caller's contract).
        let co = unsafe {
            corosensei::Coroutine::with_stack_unchecked(stack, move |y: &Yielder<(), ()>, ()| {
                context::set_yielder(y as *const _);
                host_state(|st| {
                    if let Some(h) = st.host.as_mut() {
                        h.yielder = y as *const _;
                    }
                });
                (*agent)();
            })
        };
        Ok(HostRun { co: Some(co), guard })
    }

    /// Runs the agent until its next scheduling point. `Err` when it panicked or overflowed its
    /// stack (or a detector stopped the launch meanwhile).
    pub(crate) fn resume(&mut self, emu: &Emu) -> Result<(), EmuError> {
        let Some(co) = self.co.as_mut() else { return Ok(()) };
        {
            let st = emu.st.borrow();
            let y = st.host.as_ref().map_or(std::ptr::null(), |h| h.yielder);
            context::set_yielder(y);
        }
        // GPU primitives called by the agent find no GPU thread (and say so).
        context::set_info(Info { index: NOT_A_GPU_THREAD, ..Info::default() });
        stack::running(Some((self.guard, WHO)));
        emu.st.borrow().running.set(WHO);
        context::set_in_host_agent(true);
        context::set_in_kernel(true);
        let r = catch_unwind(AssertUnwindSafe(|| co.resume(())));
        context::set_in_kernel(false);
        context::set_in_host_agent(false);
        stack::running(None);
        context::set_yielder(std::ptr::null());
        // A panic payload is dropped before the launch state is borrowed: its destructor may call
        // anything (see `context::drop_payload`).
        let r = r.map_err(|payload| match payload.downcast::<Overflow>() {
            Ok(_) => None,
            Err(payload) => Some(context::panic_report(payload)),
        });
        let st = &mut *emu.st.borrow_mut();
        match r {
            Ok(CoroutineResult::Yield(())) => Ok(()),
            Ok(CoroutineResult::Return(())) => {
                if let Some(h) = st.host.as_mut() {
                    h.live = false;
                }
                // The agent's return is progress, as a thread's exit.
                st.progress();
                Ok(())
            }
            Err(None) => Err(EmuError::StackOverflow {
                kernel: st.kernel.clone(),
                thread: ThreadId::HOST,
                stack_bytes: st.opts.stack_bytes,
            }),
            Err(Some(message)) => {
                if let Some(e) = st.error.take() {
                    return Err(e);
                }
                Err(EmuError::KernelPanic { kernel: st.kernel.clone(), thread: ThreadId::HOST, message })
            }
        }
    }

    /// Unwinds the agent if a failed launch left it suspended, so that its destructors run (every
    /// operation completes at once meanwhile, see `context::unwinding`).
    pub(crate) fn teardown(&mut self, emu: &Emu) {
        let Some(co) = self.co.take() else { return };
        if co.done() {
            return;
        }
        let y = emu.st.borrow().host.as_ref().map_or(std::ptr::null(), |h| h.yielder);
        context::set_yielder(y);
        context::set_info(Info { index: NOT_A_GPU_THREAD, ..Info::default() });
        stack::running(Some((self.guard, WHO)));
        context::set_in_host_agent(true);
        context::set_teardown(true);
        drop(co);
        context::set_teardown(false);
        context::set_in_host_agent(false);
        stack::running(None);
        context::set_yielder(std::ptr::null());
    }
}

/// `Err` unless a launch with a host agent can run: not cooperative (grid barriers are not modelled
/// with a host agent), and fewer than 2^32 - 1 threads (the agent's number is the last).
pub(crate) fn validate(name: &str, cfg: &LaunchConfig, _opts: &Options) -> Result<(), EmuError> {
    if cfg.cooperative {
        return Err(EmuError::InvalidLaunch(format!(
            "kernel `{name}`: a cooperative launch cannot have a host agent (grid barriers are not modelled with one)"
        )));
    }
    if cfg.grid.volume() * cfg.block.volume() >= HOST_GID as u64 {
        return Err(EmuError::InvalidLaunch(format!(
            "kernel `{name}`: too many threads for a launch with a host agent"
        )));
    }
    Ok(())
}

// ---- the scheduler's view -------------------------------------------------------------------------

impl State {
    /// Whether the launch has a host agent that has not returned.
    pub(crate) fn host_ready(&self) -> bool {
        self.host.as_ref().is_some_and(|h| h.live)
    }

    /// Whether the host agent, if it still runs, is in a run of polls (a livelock needs it to be).
    pub(crate) fn host_spinning_or_done(&self) -> bool {
        self.host.as_ref().is_none_or(|h| !h.live || h.spins > 0)
    }

    /// What the agent does, for reports.
    fn host_doing(&self) -> String {
        let Some(h) = &self.host else { return String::new() };
        if h.spins > 0 {
            let Some((site, m)) = h.polled else {
                let at = h.at.map(Self::site_str).unwrap_or_default();
                return format!("poll at {at} without reading memory (host agent pause)");
            };
            let (name, index) = names::describe(m.addr, m.size);
            let mut what = format!(
                "wait at {} for `{name}`[{index}] to change from {}",
                Self::site_str(site),
                fmt_value(m.bits, m.ty)
            );
            if let Some(w) = self.writers.get(&m.addr).filter(|w| w.bits == m.bits) {
                what += &format!(" (set by {} at {})", self.tid(w.thread), Self::site_str(w.site));
            }
            return what;
        }
        match h.at {
            Some(site) => format!("run (last seen at {})", Self::site_str(site)),
            None => "have not started".into(),
        }
    }

    /// The livelock report, with the host agent among the spinning (or the other) threads while it
    /// runs.
    pub(crate) fn livelock_report_with_host(&self) -> Livelock {
        let mut r = self.livelock_report();
        if self.host_ready() {
            let g = WaitGroup { what: self.host_doing(), threads: vec![ThreadId::HOST] };
            let spinning = self.host.as_ref().is_some_and(|h| h.spins > 0);
            if spinning { r.spinning.push(g) } else { r.blocked.push(g) }
        }
        r
    }

    /// Groups of unfinished threads for the time-limit report, with the host agent if it runs.
    pub(crate) fn with_host_group(&self, mut groups: Vec<WaitGroup>) -> Vec<WaitGroup> {
        if self.host_ready() {
            groups.push(WaitGroup { what: self.host_doing(), threads: vec![ThreadId::HOST] });
        }
        groups
    }

    fn host_mut(&mut self) -> &mut HostAgent {
        self.host.as_mut().expect("the host agent runs in a launch with a host agent")
    }

    pub(crate) fn host_poll(&mut self, site: Site, mem: Option<Polled>) {
        self.polls += 1;
        let h = self.host_mut();
        h.ops += 1;
        h.at = Some(site);
        h.spins += 1;
        if let Some(m) = mem {
            h.polled = Some((site, m));
        }
    }

    fn host_busy(&mut self, site: Site) {
        let h = self.host_mut();
        h.ops += 1;
        h.at = Some(site);
        h.spins = 0;
        h.polled = None;
    }

    /// The agent wrote `bits` (`size` bytes) to `addr`: progress, and GPU threads parked on that
    /// location may run again.
    pub(crate) fn host_wrote(&mut self, site: Site, (addr, size, bits): (usize, usize, u64)) {
        self.progress();
        self.host_busy(site);
        // The last strong writer of a flag is remembered for GPU threads only; the agent's write
        // replaces theirs.
        self.writers.remove(&addr);
        self.changed(addr, size, bits);
    }

    pub(crate) fn host_fence(&mut self, site: Site) {
        self.host_busy(site);
        self.model.fence(Agent::Host, ScopeKind::System);
    }

    /// Tells the memory model of an access of the agent (global memory only: the agent has no shared
    /// memory).
    pub(crate) fn host_access(&mut self, addr: usize, size: usize, kind: Kind, site: Site) {
        self.model.access(Agent::Host, addr, size, SpaceKind::Global, kind, site);
    }
}
