//! Block and grid barriers. A block barrier (`__syncthreads` and its count/and/or forms) completes
//! when every live thread of the block waits at it; a grid barrier completes when every thread of the
//! (cooperative) launch waits at it. Threads that pass a barrier together share what they acquired.
//! A thread's exit is handled here too: it may be the last one a barrier waits for, or prove that
//! the barrier can never complete.

use super::deadlock::fmt_dim;
use super::sched::{State, Status};
use crate::Site;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarOp {
    Sync,
    Count,
    And,
    Or,
}

#[derive(Default)]
pub(super) struct Bar {
    pub(super) arrived: u32,
    /// Call sites threads wait at (more than one is divergence).
    pub(super) sites: Vec<Site>,
    op: Option<BarOp>,
    count: u32,
    all: bool,
    any: bool,
}

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

    /// Completes block `b`'s barrier once every live thread waits at it, or reports divergence if
    /// threads exited without reaching it or wait at different barriers.
    fn try_complete_barrier(&mut self, b: usize) {
        let blk = &self.blocks[b];
        if blk.bar.arrived < blk.live {
            return;
        }
        if blk.exited > 0 || blk.bar.sites.len() > 1 {
            let idx = blk.idx;
            let sites: Vec<String> = blk.bar.sites.iter().map(|&s| Self::site_str(s)).collect();
            let summary = if blk.bar.sites.len() > 1 {
                format!(
                    "barrier divergence in block {}: threads wait at {} different block barriers ({}); \
                     __syncthreads must be the same barrier for every thread of the block",
                    fmt_dim(idx),
                    sites.len(),
                    sites.join(", ")
                )
            } else {
                format!(
                    "barrier divergence in block {}: {} thread(s) wait at the block barrier {} but {} thread(s) exited \
                     without reaching it; on a GPU the block hangs (every thread must reach __syncthreads the same \
                     number of times)",
                    fmt_dim(idx),
                    blk.bar.arrived,
                    sites[0],
                    blk.exited
                )
            };
            self.fail(summary);
            return;
        }
        let result = match blk.bar.op.unwrap_or(BarOp::Sync) {
            BarOp::Sync => 0,
            BarOp::Count => blk.bar.count,
            BarOp::And => blk.bar.all as u32,
            BarOp::Or => blk.bar.any as u32,
        };
        let (first, n) = (blk.first, blk.n);
        let blk = &mut self.blocks[b];
        blk.epoch += 1;
        blk.bar.arrived = 0;
        blk.bar.sites.clear();
        let epoch = blk.epoch;
        self.block_barrier_clocks(b);
        for u in first..first + n {
            if matches!(self.threads[u].status, Status::Exited) {
                continue;
            }
            self.threads[u].bepoch = epoch;
            self.threads[u].result = result;
            self.make_runnable(u);
        }
        self.progress();
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
        self.grid_epoch += 1;
        let ge = self.grid_epoch;
        let n = self.threads.len();
        self.grid_barrier_clocks();
        for u in 0..n {
            self.threads[u].gepoch = ge;
            self.make_runnable(u);
        }
        self.progress();
    }
}
