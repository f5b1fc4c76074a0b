//! The scheduler's loop: picks, with the launch's seeded generator, which runnable thread (or the
//! host agent) runs next, until every thread of the wave has exited, or the launch fails (a
//! detector's report, a panic, a stack overflow, no thread able to make progress, a spin loop
//! without progress, the time limit).
//!
//! Names the launch state, the context, the stacks, the host agent's coroutine and the polls' park
//! bound; the barriers, collectives and polls act on the state, not through this file.

use super::context;
use super::host_agent::HostRun;
use super::poll::PARK_BOUND;
use super::stack::{self, Co, Guard};
use super::state::Emu;
use crate::emu::report::EmuError;
use crate::vocab::dim3::Dim3;
use corosensei::CoroutineResult;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

pub(super) fn schedule(
    emu: &Emu,
    cos: &mut [Option<Co>],
    guards: &[Guard],
    bdim: Dim3,
    gdim: Dim3,
    start: Instant,
    mut host: Option<&mut HostRun>,
) -> Result<(), EmuError> {
    emu.st.borrow_mut().parked.clear();
    loop {
        let pick = {
            let st = &mut *emu.st.borrow_mut();
            if let Some(e) = st.error.take() {
                return Err(e);
            }
            if st.runnable.is_empty() || st.steps.is_multiple_of(PARK_BOUND) {
                // Parked spinners run again when no other GPU thread can, or after a bounded wait
                // (the host agent's writes wake the threads parked on what they change).
                st.wake_all();
            }
            let host_ready = st.host_ready();
            if st.runnable.is_empty() && !host_ready {
                if st.wave_live == 0 {
                    return Ok(());
                }
                return Err(EmuError::Deadlock(st.deadlock_report("no thread can make progress")));
            }
            st.steps += 1;
            if st.steps.is_multiple_of(4096) {
                let el = start.elapsed();
                if el > st.opts.time_limit {
                    return Err(EmuError::TimeLimit {
                        kernel: st.kernel.clone(),
                        seconds: el.as_secs_f64(),
                        steps: st.steps,
                        threads: st.with_host_group(st.unfinished_threads()),
                    });
                }
            }
            if st.steps.is_multiple_of(1024) && st.livelocked() && st.host_spinning_or_done() {
                return Err(EmuError::Livelock(st.livelock_report_with_host()));
            }
            let n = st.runnable.len() + host_ready as usize;
            let k = st.rng.below(n);
            if k == st.runnable.len() {
                // The host agent's turn.
                None
            } else {
                let t = st.runnable[k];
                let who = st.make_current(t, bdim, gdim);
                st.running.set(who);
                Some((t, who))
            }
        };
        let Some((next, who)) = pick else {
            host.as_mut().expect("a launch with a host agent has its coroutine").resume(emu)?;
            continue;
        };
        let co = cos[next].as_mut().expect("runnable thread has a coroutine");
        stack::running(Some((guards[next], who)));
        context::set_in_kernel(true);
        let r = catch_unwind(AssertUnwindSafe(|| co.resume(())));
        context::set_in_kernel(false);
        stack::running(None);
        // The yielder is valid only while its coroutine runs: nothing may suspend on it now.
        context::set_yielder(std::ptr::null());
        let overflow = || {
            let st = emu.st.borrow();
            EmuError::StackOverflow {
                kernel: st.kernel.clone(),
                thread: st.tid(next),
                stack_bytes: st.opts.stack_bytes,
            }
        };
        match r {
            Ok(CoroutineResult::Yield(())) => {}
            Ok(CoroutineResult::Return(())) => {}
            Err(payload) if payload.is::<stack::Overflow>() => return Err(overflow()),
            Err(payload) => {
                let message = context::panic_report(payload);
                let st = emu.st.borrow();
                if let Some(e) = st.error.clone() {
                    return Err(e);
                }
                return Err(EmuError::KernelPanic { kernel: st.kernel.clone(), thread: st.tid(next), message });
            }
        }
    }
}
