//! The time limit's last word: a launch whose OS thread stops returning to the scheduler.
//!
//! The scheduler stops a launch at [`Options::time_limit`](crate::emu::Options::time_limit) itself,
//! but only when an emulated thread hands control back, at its next primitive. One that never does —
//! blocked on an OS lock that another emulated thread holds across a barrier (all emulated threads
//! share one OS thread, so that lock is never released), in a blocking call, or in a loop that calls
//! no primitive — would hang the launch forever. So every launch is watched from another OS thread:
//! when a launch has run past its time limit by [`grace`] and is still running, its OS thread cannot
//! be reached any more (nothing can unwind another OS thread), and the watchdog prints what it knows
//! — the kernel, the time, the thread that ran last — and aborts the process. Nothing hangs.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The emulated thread a launch runs: its block and thread index (see `context`'s `make_current`), packed
/// two coordinates to a word, `u64::MAX` for none.
#[derive(Debug)]
pub(crate) struct RunningThread([AtomicU64; 3]);

impl RunningThread {
    /// Thread `who` (`[block x, y, z, thread x, y, z]`) runs from now on.
    #[inline]
    pub fn set(&self, who: [u32; 6]) {
        for k in 0..3 {
            self.0[k].store((who[2 * k] as u64) << 32 | who[2 * k + 1] as u64, Relaxed);
        }
    }
    fn get(&self) -> [u32; 6] {
        let mut who = [0; 6];
        for k in 0..3 {
            let w = self.0[k].load(Relaxed);
            (who[2 * k], who[2 * k + 1]) = ((w >> 32) as u32, w as u32);
        }
        who
    }
}

struct Watched {
    id: u64,
    kernel: String,
    started: Instant,
    limit: Duration,
    running: Arc<RunningThread>,
}

struct Registry {
    next: u64,
    launches: Vec<Watched>,
    started: bool,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry { next: 0, launches: Vec::new(), started: false });
static WAKE: Condvar = Condvar::new();

/// How far past its time limit a launch may run before the watchdog gives up on it: a tenth of the
/// limit, at least 2 s.
pub(crate) fn grace(limit: Duration) -> Duration {
    (limit / 10).max(Duration::from_secs(2))
}

/// A launch being watched, until dropped.
pub(crate) struct Watch {
    id: u64,
    /// The emulated thread the launch runs now (the scheduler sets it).
    pub running: Arc<RunningThread>,
}

impl Watch {
    /// Watches the launch of `kernel`, started now, with time limit `limit`.
    pub fn start(kernel: &str, limit: Duration) -> Watch {
        let running = Arc::new(RunningThread(std::array::from_fn(|_| AtomicU64::new(u64::MAX))));
        let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        let id = r.next;
        r.next += 1;
        r.launches.push(Watched {
            id,
            kernel: kernel.to_string(),
            started: Instant::now(),
            limit,
            running: running.clone(),
        });
        if !r.started {
            r.started = true;
            // Without the watchdog a launch is only as bounded as its threads allow; it still runs.
            let _ = std::thread::Builder::new().name("gpu-std emulator watchdog".into()).spawn(watch);
        }
        drop(r);
        WAKE.notify_all();
        Watch { id, running }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        r.launches.retain(|w| w.id != self.id);
    }
}

/// The watchdog thread: sleeps until a launch's deadline, and aborts the process if it is still running
/// then.
fn watch() {
    let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let now = Instant::now();
        let next = r.launches.iter().filter_map(deadline).min();
        match next {
            None => r = WAKE.wait(r).unwrap_or_else(|e| e.into_inner()),
            Some(deadline) if deadline > now => {
                r = WAKE.wait_timeout(r, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
            }
            Some(_) => {
                let w = r.launches.iter().find(|w| deadline(w).is_some_and(|d| now >= d)).expect("a late launch");
                eprintln!("{}", report(w, now));
                std::process::abort();
            }
        }
    }
}

/// When the watchdog gives up on a launch (never, for a limit past the end of time).
fn deadline(w: &Watched) -> Option<Instant> {
    w.started.checked_add(w.limit.saturating_add(grace(w.limit)))
}

fn report(w: &Watched, now: Instant) -> String {
    let who = w.running.get();
    let thread = if who[0] == u32::MAX && who[3] == 0 {
        "the host agent".to_string()
    } else if who == [u32::MAX; 6] {
        "no emulated thread (the scheduler itself)".to_string()
    } else {
        format!("block ({}, {}, {}) thread ({}, {}, {})", who[0], who[1], who[2], who[3], who[4], who[5])
    };
    format!(
        "gpu-std emulator: kernel `{}` has run {:.1} s, past its time limit of {:.1} s (Options::time_limit), and \
         its OS thread has not returned to the scheduler since: {thread} ran last and is blocked or running \
         outside the emulator — waiting for an OS lock (a std::sync::Mutex) that another emulated thread holds \
         across a barrier or another primitive (all emulated threads share one OS thread, so such a lock is never \
         released), in a blocking call, or in a loop that calls no primitive\ngpu-std emulator: a launch cannot be \
         stopped from outside its OS thread; aborting the process",
        w.kernel,
        (now - w.started).as_secs_f64(),
        w.limit.as_secs_f64()
    )
}
