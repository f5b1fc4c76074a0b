//! Deadlock and livelock reports: what every unfinished thread waits for (a block barrier, a warp
//! collective, the grid barrier) and which threads it waits for, or, for a spin loop without
//! progress, where each spinning thread polls. A launch fails at most once; the first report stands.

use super::report::{Deadlock, EmuError, ThreadId, WaitGroup};
use super::sched::{State, Status};
use crate::Dim3;
use crate::Site;
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

    pub(super) fn livelock_report(&self) -> Deadlock {
        let mut groups: BTreeMap<String, Vec<ThreadId>> = BTreeMap::new();
        for (t, th) in self.threads.iter().enumerate() {
            if matches!(th.status, Status::Runnable) {
                let what = match th.last_poll {
                    Some(s) => format!("spin polling at {}", Self::site_str(s)),
                    None => "are runnable".into(),
                };
                groups.entry(what).or_default().push(self.tid(t));
            } else if !matches!(th.status, Status::Exited) {
                groups.entry(self.status_str(th.status)).or_default().push(self.tid(t));
            }
        }
        Deadlock {
            kernel: self.kernel.clone(),
            summary: format!(
                "spin loop without progress: {} polls and no thread wrote memory (a flag nobody sets, or a lock \
                 nobody releases)",
                self.polls
            ),
            waiting: groups.into_iter().map(|(what, threads)| WaitGroup { what, threads }).collect(),
            missing: vec![],
        }
    }
}

pub(crate) fn fmt_dim(d: Dim3) -> String {
    if d.y == 0 && d.z == 0 { format!("{}", d.x) } else { format!("({},{},{})", d.x, d.y, d.z) }
}
