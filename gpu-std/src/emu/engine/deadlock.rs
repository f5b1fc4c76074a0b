//! Reports of launches that cannot finish: for a deadlock, what every unfinished thread waits for (a
//! block barrier, a warp collective, the grid barrier) and which threads it waits for; for a livelock,
//! where each spinning thread polls and the value it waits to change; at the time limit, what every
//! unfinished thread was doing. A launch fails at most once; the first report stands.
//!
//! Acts on the launch state (`state`); names no other file of the engine.

use super::state::{State, Status};
use crate::Dim3;
use crate::Site;
use crate::emu::report::{Deadlock, EmuError, Livelock, ThreadId, WaitGroup};
use std::collections::BTreeMap;

impl State {
    pub fn fail(&mut self, summary: String) {
        if self.error.is_none() {
            let d = self.deadlock_report(&summary);
            self.error = Some(EmuError::Deadlock(d));
        }
        // Stop everyone: the scheduler sees the error before picking again.
    }

    pub(super) fn site_str(s: Site) -> String {
        format!("{}:{}:{}", s.file(), s.line(), s.column())
    }

    fn status_str(&self, s: Status) -> String {
        match s {
            Status::Runnable => "are runnable".into(),
            Status::Barrier(site) => format!("wait at block barrier {}", Self::site_str(site)),
            Status::Warp(site, k, mask) => {
                format!("wait in {} at {} (mask {mask:#010x})", k.name(), Self::site_str(site))
            }
            Status::Grid(site) => format!("wait at grid barrier {}", Self::site_str(site)),
            Status::Exited => "exited".into(),
        }
    }

    /// What every unfinished thread waits for, and which threads the waiters wait for.
    pub fn deadlock_report(&self, summary: &str) -> Deadlock {
        let mut waiting: BTreeMap<String, Vec<ThreadId>> = BTreeMap::new();
        for (t, th) in self.threads.iter().enumerate() {
            if !matches!(th.status, Status::Exited) {
                waiting.entry(self.status_str(th.status)).or_default().push(self.tid(t));
            }
        }
        let mut missing: BTreeMap<String, std::collections::BTreeSet<ThreadId>> = BTreeMap::new();
        let mut causes = Vec::new();
        for blk in &self.blocks {
            if blk.bar.arrived > 0 {
                let mut n = 0;
                for u in blk.first..blk.first + blk.n {
                    if !matches!(self.threads[u].status, Status::Barrier(_)) {
                        missing.entry(self.status_str(self.threads[u].status)).or_default().insert(self.tid(u));
                        n += 1;
                    }
                }
                let site = blk.bar.sites.first().map(|&s| Self::site_str(s)).unwrap_or_default();
                causes.push(format!(
                    "the block barrier {site} in block {} waits for {n} thread(s) that never arrive",
                    fmt_dim(blk.idx)
                ));
            }
            for (w, colls) in blk.warps.iter().enumerate() {
                for c in colls {
                    let absent = c.mask & !c.arrived;
                    for l in 0..32 {
                        if absent & (1 << l) != 0 {
                            let u = blk.first + w * 32 + l;
                            missing.entry(self.status_str(self.threads[u].status)).or_default().insert(self.tid(u));
                        }
                    }
                    causes.push(format!(
                        "{} at {} (mask {:#010x}) in block {} warp {w} waits for lanes {absent:#010x} that never arrive",
                        c.kind.name(),
                        Self::site_str(c.site),
                        c.mask,
                        fmt_dim(blk.idx)
                    ));
                }
            }
        }
        if self.grid_arrived > 0 {
            for (t, th) in self.threads.iter().enumerate() {
                if !matches!(th.status, Status::Grid(_)) {
                    missing.entry(self.status_str(th.status)).or_default().insert(self.tid(t));
                }
            }
            causes.push(format!(
                "the grid barrier waits for {} thread(s)",
                self.threads.len() as u32 - self.grid_arrived
            ));
        }
        let summary = if causes.is_empty() || !summary.starts_with("no thread") {
            summary.to_string()
        } else {
            format!("{summary}: {}", causes.join("; "))
        };
        Deadlock {
            kernel: self.kernel.clone(),
            summary,
            waiting: waiting.into_iter().map(|(what, threads)| WaitGroup { what, threads }).collect(),
            missing: missing
                .into_iter()
                .map(|(what, threads)| WaitGroup { what, threads: threads.into_iter().collect() })
                .collect(),
        }
    }

    /// What unfinished thread `t` is doing, in a report: what it waits for if it spins, where it last
    /// was if it runs, else its status.
    fn doing(&self, t: usize) -> String {
        let th = &self.threads[t];
        match th.status {
            Status::Runnable if th.spins > 0 => self.spin_what(t),
            Status::Runnable => match th.at {
                Some(site) => format!("run (last seen at {})", Self::site_str(site)),
                None => "have not started".into(),
            },
            s => self.status_str(s),
        }
    }

    /// Unfinished threads grouped by what they do, threads and groups in order of block and thread; `spinning` picks the
    /// runnable threads in a run of polls (`Some(true)`), the others (`Some(false)`), or all (`None`).
    fn grouped(&self, spinning: Option<bool>) -> Vec<WaitGroup> {
        let mut groups: Vec<WaitGroup> = Vec::new();
        for (t, th) in self.threads.iter().enumerate() {
            if matches!(th.status, Status::Exited) {
                continue;
            }
            let spins = matches!(th.status, Status::Runnable) && th.spins > 0;
            if spinning.is_some_and(|s| s != spins) {
                continue;
            }
            let what = self.doing(t);
            match groups.iter_mut().find(|g| g.what == what) {
                Some(g) => g.threads.push(self.tid(t)),
                None => groups.push(WaitGroup { what, threads: vec![self.tid(t)] }),
            }
        }
        for g in &mut groups {
            g.threads.sort();
        }
        groups.sort_by_key(|g| g.threads[0]);
        groups
    }

    pub(super) fn livelock_report(&self) -> Livelock {
        Livelock {
            kernel: self.kernel.clone(),
            polls: self.polls,
            spinning: self.grouped(Some(true)),
            blocked: self.grouped(Some(false)),
            divergent_barriers: self.barriers_waiting_for_spinners(),
        }
    }

    /// Block barriers that threads wait at while other threads of the block spin: on a GPU the
    /// barrier can release without the spinners (sm_70+), so a launch stuck here in the emulator may
    /// run on — with nothing ordered by the barrier.
    fn barriers_waiting_for_spinners(&self) -> Vec<String> {
        let mut out = Vec::new();
        for blk in &self.blocks {
            if blk.bar.arrived == 0 {
                continue;
            }
            let spinning = (blk.first..blk.first + blk.n)
                .filter(|&u| matches!(self.threads[u].status, Status::Runnable) && self.threads[u].spins > 0)
                .count();
            if spinning == 0 {
                continue;
            }
            let site = blk.bar.sites.first().map(|&s| Self::site_str(s)).unwrap_or_default();
            out.push(format!(
                "the block barrier {site} in block {} waits for {spinning} thread(s) of its block that spin instead \
                 of reaching it: barrier divergence, undefined behaviour; on sm_70+ hardware the barrier can release \
                 without them, so on a GPU this may not hang, but the barrier orders nothing they do",
                fmt_dim(blk.idx)
            ));
        }
        out
    }

    /// What every unfinished thread was doing, for the time-limit report.
    pub(super) fn unfinished_threads(&self) -> Vec<WaitGroup> {
        self.grouped(None)
    }
}

pub(crate) fn fmt_dim(d: Dim3) -> String {
    if d.y == 0 && d.z == 0 { format!("{}", d.x) } else { format!("({},{},{})", d.x, d.y, d.z) }
}
