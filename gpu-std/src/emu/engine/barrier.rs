//! Block and grid barriers. A block barrier (`__syncthreads` and its count/and/or forms) completes
//! when every live thread of the block waits at it (threads that exited before it, without touching
//! memory in its interval, are not waited for, as in the PTX ISA; a warning says so); a grid barrier completes when every thread of the
//! (cooperative) launch waits at it. Threads that pass a barrier together share what they acquired.
//! A thread's exit is handled here too: it may be the last one a barrier waits for, or prove that
//! the barrier can never complete.
//!
//! Acts on the launch state (`state`); names no other file of the engine but `deadlock`'s formatting.

use super::deadlock::fmt_dim;
use super::state::{Bar, BarOp, State, Status};
use crate::Site;
use crate::emu::report::Warning;

impl State {
    // ---- thread exit ---------------------------------------------------------------------------

    pub fn thread_exit(&mut self, t: usize) {
        self.progress();
        self.block_thread(t, Status::Exited);
        self.wave_live -= 1;
        let b = self.threads[t].block;
        self.blocks[b].live -= 1;
        self.blocks[b].exited += 1;
        // Waiters that were waiting only for this thread can now be judged: collectives wait only for
        // the lanes of their mask that have not exited.
        let w = (self.threads[t].rank / 32) as usize;
        if !self.blocks[b].warps[w].is_empty() {
            self.warp_lane_exited(b, w);
        }
        if self.blocks[b].bar.arrived > 0 {
            self.try_complete_barrier(b);
        }
        if self.grid_arrived > 0 && self.grid_arrived == self.wave_live {
            self.try_complete_grid();
        }
    }

    // ---- block barrier -------------------------------------------------------------------------

    pub fn barrier_arrive(&mut self, t: usize, op: BarOp, pred: bool, site: Site) {
        let b = self.threads[t].block;
        let bar = &mut self.blocks[b].bar;
        if bar.arrived == 0 {
            *bar = Bar { arrived: 0, sites: vec![], op: Some(op), count: 0, all: true, any: false };
        }
        if !bar.sites.contains(&site) {
            bar.sites.push(site);
        }
        bar.arrived += 1;
        bar.count += pred as u32;
        bar.all &= pred;
        bar.any |= pred;
        self.block_thread(t, Status::Barrier(site));
        self.try_complete_barrier(b);
    }

    /// Completes block `b`'s barrier once every live thread waits at it. Threads that wait at
    /// different barriers are an error; so are threads that exited without reaching it after touching
    /// memory in its interval (they skipped it while they ran). Threads that exited before it without
    /// touching memory in its interval are not waited for (the PTX ISA: a barrier waits only for the
    /// threads that have not exited), with a warning: `bar.sync 0` is an aligned barrier, undefined in
    /// PTX as in CUDA C++ unless every thread of the block executes it.
    fn try_complete_barrier(&mut self, b: usize) {
        let blk = &self.blocks[b];
        if blk.bar.arrived < blk.live {
            return;
        }
        let idx = blk.idx;
        let sites: Vec<String> = blk.bar.sites.iter().map(|&s| Self::site_str(s)).collect();
        const UB: &str = "undefined behaviour: on sm_70+ hardware a barrier can release without the threads \
                          missing from it, so nothing they do is ordered by it";
        if blk.bar.sites.len() > 1 {
            let summary = format!(
                "barrier divergence in block {}: threads wait at {} different block barriers ({}); {UB} (every \
                 thread of the block must reach the same __syncthreads the same number of times)",
                fmt_dim(idx),
                sites.len(),
                sites.join(", ")
            );
            self.fail(summary);
            return;
        }
        if blk.exited > 0 {
            let (first, n) = (blk.first, blk.n);
            let exited = |u: &usize| matches!(self.threads[*u].status, Status::Exited);
            let skipped: Vec<usize> =
                (first..first + n).filter(exited).filter(|&u| self.threads[u].first_access.is_some()).collect();
            if let Some(&u) = skipped.first() {
                let at = self.threads[u].first_access.map(Self::site_str).unwrap_or_default();
                let summary = format!(
                    "barrier divergence in block {}: {} thread(s) wait at the block barrier {} but {} thread(s) \
                     skipped it: they accessed memory in its barrier interval ({} first at {at}) and exited \
                     without reaching it; {UB} (every thread of the block must reach __syncthreads the same \
                     number of times)",
                    fmt_dim(idx),
                    blk.bar.arrived,
                    sites[0],
                    skipped.len(),
                    self.tid(u),
                );
                self.fail(summary);
                return;
            }
            let gone = (first..first + n).filter(exited).count();
            let site = blk.bar.sites[0];
            self.barrier_without_exited(b, site, gone);
        }
        let blk = &self.blocks[b];
        let result = match blk.bar.op.unwrap_or(BarOp::Sync) {
            BarOp::Sync => 0,
            BarOp::Count => blk.bar.count,
            BarOp::And => blk.bar.all as u32,
            BarOp::Or => blk.bar.any as u32,
        };
        let (first, n) = (blk.first, blk.n);
        let blk = &mut self.blocks[b];
        blk.bar.arrived = 0;
        blk.bar.sites.clear();
        let threads = &self.threads;
        self.model.block_barrier(b, |u| !matches!(threads[u].status, Status::Exited));
        for u in first..first + n {
            if matches!(self.threads[u].status, Status::Exited) {
                continue;
            }
            self.threads[u].first_access = None;
            self.threads[u].result = result;
            self.make_runnable(u);
        }
        self.progress();
    }

    /// Block `b`'s barrier at `site` completes without `gone` threads that exited before it (without
    /// touching memory in its interval): exited threads do not hold a barrier, but an aligned barrier
    /// that not every thread executes is undefined in PTX as in CUDA C++; a warning, once per site.
    fn barrier_without_exited(&mut self, b: usize, site: Site, gone: usize) {
        let at = Self::site_str(site);
        if let Some(w) = self.warnings.iter_mut().find(|w| w.site == at) {
            w.count += 1;
            return;
        }
        let blk = &self.blocks[b];
        let thread = self.tid(blk.first + blk.n - 1);
        let thread = (blk.first..blk.first + blk.n)
            .find(|&u| !matches!(self.threads[u].status, Status::Exited))
            .map_or(thread, |u| self.tid(u));
        let message = format!(
            "block barrier at {at} in block {}: {gone} thread(s) exited before it without touching memory in its \
             interval; exited threads do not hold a barrier (the PTX ISA counts only threads that have not \
             exited, and so does the emulator), but __syncthreads() is bar.sync 0, an aligned barrier \
             (barrier.sync.aligned), which PTX, like CUDA C++, leaves undefined unless every thread of the block \
             executes it",
            fmt_dim(blk.idx)
        );
        self.warnings.push(Warning { kernel: self.kernel.clone(), site: at, thread, message, count: 1 });
    }

    // ---- grid barrier --------------------------------------------------------------------------

    pub fn grid_arrive(&mut self, t: usize, site: Site) {
        if !self.cfg.cooperative {
            self.block_thread(t, Status::Grid(site));
            self.fail(format!(
                "grid.sync() at {} in a launch that is not cooperative: blocks are not guaranteed to be resident \
                 together, so the grid barrier can never be relied on (launch it cooperatively)",
                Self::site_str(site)
            ));
            return;
        }
        if self.grid_arrived == 0 {
            self.grid_site = Some(site);
        }
        if self.grid_site != Some(site) {
            let other = self.grid_site.map(Self::site_str).unwrap_or_default();
            self.block_thread(t, Status::Grid(site));
            self.fail(format!("grid barrier divergence: threads wait at {} and at {}", other, Self::site_str(site)));
            return;
        }
        self.grid_arrived += 1;
        self.block_thread(t, Status::Grid(site));
        self.try_complete_grid();
    }

    fn try_complete_grid(&mut self) {
        if self.grid_arrived < self.wave_live {
            return;
        }
        if self.wave_live as usize != self.threads.len() {
            let site = self.grid_site.map(Self::site_str).unwrap_or_default();
            self.fail(format!(
                "grid barrier divergence: {} thread(s) wait at the grid barrier {site} but {} exited without reaching it",
                self.grid_arrived,
                self.threads.len() - self.wave_live as usize
            ));
            return;
        }
        self.grid_arrived = 0;
        let n = self.threads.len();
        self.model.grid_barrier();
        for u in 0..n {
            // A grid barrier ends the block barrier interval too.
            self.threads[u].first_access = None;
            self.make_runnable(u);
        }
        self.progress();
    }
}
