//! Warp collectives: `shfl.sync`, `vote.sync` and `bar.warp.sync`. The lanes named in the mask meet
//! at one instruction (same call site, kind, mask and clamp); as the PTX ISA says, a collective waits
//! only for the lanes of its mask that exist and have not exited, so a full mask in a partial warp (a
//! block of 100 threads: its last warp has 4 lanes), or after some lanes returned, completes. When the
//! last live lane arrives, every lane gets its result and runs on. Absent and exited lanes vote 0 (a
//! ballot of 4 lanes is `0x0000000f`). A warp barrier also orders the memory accesses of the lanes that
//! took part.
//!
//! A shuffle lane whose source lane is outside the mask, does not exist or has exited gets
//! [`POISON`]: the PTX ISA leaves only that value undefined, so the launch goes on and the outcome
//! carries a warning (a kernel that never uses the value is correct). A lane outside its own mask is a
//! trap, as on a GPU.
//!
//! Acts on the launch state (`state`); names no other file of the engine.

use super::state::{Coll, CollKind, State, Status};
use crate::Site;
use crate::emu::report::Warning;
use crate::vocab::lanes::shfl_source_lane;

/// What a shuffle lane receives, per 32-bit word, when its source lane is outside the mask (a 64-bit
/// value is shuffled as two words: `0xDEADBEEF_DEADBEEF`). On a GPU the value is undefined.
pub const POISON: u32 = 0xDEAD_BEEF;

impl State {
    /// A lane arrives at a warp collective. `Err` (with the reason) if the calling lane is not in its
    /// own mask: a GPU traps there, and the calling thread ends.
    #[allow(clippy::too_many_arguments)] // the operands of one shfl.sync/vote.sync, plus who and where
    pub fn warp_arrive(
        &mut self,
        t: usize,
        kind: CollKind,
        mask: u32,
        val: u32,
        b_arg: u32,
        c_arg: u32,
        site: Site,
    ) -> Result<(), String> {
        self.threads[t].at = Some(site);
        let th = &self.threads[t];
        let (b, rank) = (th.block, th.rank);
        let (w, lane) = ((rank / 32) as usize, rank % 32);
        if mask & (1 << lane) == 0 {
            return Err(format!(
                "{} at {}: lane {lane} of warp {w} is not in its own mask {mask:#010x} (a GPU traps here)",
                kind.name(),
                Self::site_str(site),
            ));
        }
        let colls = &mut self.blocks[b].warps[w];
        // Lanes meet at the same collective: same instruction (call site), kind, mask and clamp. Lanes
        // at different call sites wait separately and, if they never meet, end in the no-progress report.
        let pos = match colls.iter().position(|c| c.mask == mask && c.kind == kind && c.site == site && c.c == c_arg) {
            Some(p) => p,
            None => {
                colls.push(Coll { kind, site, mask, arrived: 0, vals: [0; 32], bs: [0; 32], c: c_arg });
                colls.len() - 1
            }
        };
        let coll = &mut colls[pos];
        coll.arrived |= 1 << lane;
        coll.vals[lane as usize] = val;
        coll.bs[lane as usize] = b_arg;
        self.block_thread(t, Status::Warp(site, kind, mask));
        self.try_complete_collective(b, w, pos);
        Ok(())
    }

    /// The lanes of warp `w` of block `b` that exist and have not exited.
    fn live_lanes(&self, b: usize, w: usize) -> u32 {
        let blk = &self.blocks[b];
        let first = blk.first + w * 32;
        let lanes = (blk.n - w * 32).min(32);
        (0..lanes).filter(|&l| !matches!(self.threads[first + l].status, Status::Exited)).fold(0, |m, l| m | 1 << l)
    }

    /// A lane of warp `w` of block `b` exited: collectives that waited only for it complete.
    pub(super) fn warp_lane_exited(&mut self, b: usize, w: usize) {
        let mut pos = 0;
        while pos < self.blocks[b].warps[w].len() {
            if !self.try_complete_collective(b, w, pos) {
                pos += 1;
            }
        }
    }

    /// Completes collective `pos` of warp `w` of block `b` once every lane of its mask that exists and
    /// has not exited has arrived (the PTX ISA: `shfl.sync`, `vote.sync` and `bar.warp.sync` wait
    /// only for the non-exited threads of the mask). Returns whether it completed.
    fn try_complete_collective(&mut self, b: usize, w: usize, pos: usize) -> bool {
        let live = self.live_lanes(b, w);
        let coll = &self.blocks[b].warps[w][pos];
        let arrived = coll.arrived;
        if arrived != coll.mask & live {
            return false;
        }
        let coll = self.blocks[b].warps[w].swap_remove(pos);
        let mask = coll.mask;
        let blk = &self.blocks[b];
        let first = blk.first + w * 32;
        let lanes_in_warp = (blk.n - w * 32).min(32) as u32;
        let mut results = [0u32; 32];
        for l in 0..32u32 {
            if arrived & (1 << l) == 0 {
                continue;
            }
            let li = l as usize;
            results[li] = match coll.kind {
                CollKind::Shfl(mode) => {
                    let width = 32 - ((coll.c >> 8) & 0x1f);
                    match shfl_source_lane(mode, l, coll.bs[li], width) {
                        Some(j) if arrived & (1 << j) != 0 => coll.vals[j as usize],
                        Some(j) => {
                            let why = if mask & (1 << j) == 0 {
                                format!("which is not in the mask {mask:#010x}")
                            } else if j >= lanes_in_warp {
                                format!("which does not exist (the warp has {lanes_in_warp} lanes)")
                            } else {
                                "which has exited".to_string()
                            };
                            self.undefined_shuffle(first + li, &coll, j, &why);
                            POISON
                        }
                        None => coll.vals[li],
                    }
                }
                // Only lanes that took part vote: absent and exited lanes add 0 bits, as on a GPU.
                CollKind::Ballot => {
                    (0..32).filter(|&k| arrived & (1 << k) != 0 && coll.vals[k] != 0).fold(0, |a, k| a | (1 << k))
                }
                // The ballots see only lanes that took part: absent and exited lanes never match.
                CollKind::MatchBits => {
                    let low = if coll.c >= 32 { u32::MAX } else { (1u32 << coll.c) - 1 };
                    (0..32)
                        .filter(|&k| arrived & (1 << k) != 0 && (coll.vals[k] ^ coll.vals[li]) & low == 0)
                        .fold(0, |a, k| a | (1 << k))
                }
                CollKind::Any => (0..32).any(|k| arrived & (1 << k) != 0 && coll.vals[k] != 0) as u32,
                CollKind::All => (0..32).all(|k| arrived & (1 << k) == 0 || coll.vals[k] != 0) as u32,
                CollKind::SyncWarp => 0,
            };
        }
        if coll.kind == CollKind::SyncWarp {
            // A warp barrier orders the accesses of the lanes that took part.
            self.model.warp_barrier(first, arrived);
        }
        for l in 0..32 {
            if arrived & (1 << l) != 0 {
                self.threads[first + l].result = results[l];
                self.make_runnable(first + l);
            }
        }
        self.progress();
        true
    }

    /// Thread `t` of a shuffle reads lane `src`, which is outside the mask, does not exist or has
    /// exited (`why`): a warning per call site.
    fn undefined_shuffle(&mut self, t: usize, coll: &Coll, src: u32, why: &str) {
        let site = Self::site_str(coll.site);
        if let Some(w) = self.warnings.iter_mut().find(|w| w.site == site) {
            w.count += 1;
            return;
        }
        let thread = self.tid(t);
        let message = format!(
            "{} at {site}: {thread} (lane {}) reads lane {src}, {why}; its value is undefined on a GPU, and the \
             emulator gives it {POISON:#x}",
            coll.kind.name(),
            self.threads[t].rank % 32,
        );
        self.warnings.push(Warning { kernel: self.kernel.clone(), site, thread, message, count: 1 });
    }
}
