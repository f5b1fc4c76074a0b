//! What the emulator's detectors found, collected over a device's launches.
//!
//! A leaf: imports nothing of the crate (the emulator backend fills it in).

use gpu_std::emu::{Accepted, Outcome, Race, SyncSite, UninitRead};

/// What the detectors of the emulator found over the launches since the last
/// [`Device::take_findings`](crate::Device::take_findings). Always empty on a GPU.
#[derive(Default, Debug, Clone)]
pub struct Findings {
    /// Data races, one report per racy address (reported in part, all counted in `racy_addresses`).
    pub races: Vec<Race>,
    /// Addresses with at least one race.
    pub racy_addresses: usize,
    /// Reads of shared memory that no thread of the block had written (reported in part, all counted).
    pub uninit_reads: Vec<UninitRead>,
    /// Elements read uninitialised.
    pub uninit_elements: usize,
    /// Ordering hazards: conflicting volatile accesses of shared memory that nothing orders (no data
    /// race under PTX, but their values depend on the schedule; see `gpu_std::emu::Outcome::hazards`).
    pub hazards: Vec<Race>,
    /// Shared addresses (per block) with an ordering hazard.
    pub hazard_addresses: usize,
    /// Deadlock and livelock reports of launches that failed with one.
    pub deadlocks: Vec<String>,
    /// Values that are undefined on a GPU (a shuffle from a lane outside its mask), one per call site.
    pub warnings: Vec<String>,
    /// The races declared intended (`EmuOptions::accepted_races`), one entry per declaration with the
    /// addresses it matched summed over the launches: counted here, not in `races`. An entry with no
    /// address is a declared race that did not happen.
    pub accepted: Vec<Accepted>,
}

impl Findings {
    /// Whether nothing was found.
    pub fn is_clean(&self) -> bool {
        self.racy_addresses == 0
            && self.uninit_elements == 0
            && self.hazard_addresses == 0
            && self.deadlocks.is_empty()
            && self.warnings.is_empty()
    }

    pub(crate) fn absorb(&mut self, out: Outcome) {
        self.racy_addresses += out.racy_addresses;
        self.races.extend(out.races);
        self.uninit_elements += out.uninit_elements;
        self.uninit_reads.extend(out.uninit_reads);
        self.hazard_addresses += out.hazard_addresses;
        self.hazards.extend(out.hazards);
        self.warnings.extend(out.warnings.iter().map(ToString::to_string));
        for a in out.accepted {
            match self.accepted.iter_mut().find(|b| b.rule == a.rule) {
                Some(b) => {
                    b.addresses += a.addresses;
                    b.first = b.first.take().or(a.first);
                }
                None => self.accepted.push(a),
            }
        }
    }

    /// The launches' findings as one emulator outcome (races, hazards, uninitialised reads) with the
    /// synchronisation sites `sites` (see [`Device::take_sites`](crate::Device::take_sites)).
    pub fn into_outcome(self, sites: Vec<SyncSite>) -> Outcome {
        Outcome {
            races: self.races,
            racy_addresses: self.racy_addresses,
            uninit_reads: self.uninit_reads,
            uninit_elements: self.uninit_elements,
            hazards: self.hazards,
            hazard_addresses: self.hazard_addresses,
            sites,
            accepted: self.accepted,
            ..Outcome::default()
        }
    }
}

/// Adds `more` to `sites` (both in source order), summing the counts of a site in both.
pub(crate) fn merge_sites(sites: &mut Vec<SyncSite>, more: &[SyncSite]) {
    let key = |t: &SyncSite| (t.file, t.line, t.column, t.kind);
    for s in more {
        match sites.binary_search_by_key(&key(s), key) {
            Ok(k) => sites[k].count += s.count,
            Err(k) => sites.insert(k, *s),
        }
    }
}
