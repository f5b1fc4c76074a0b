//! What the emulator's detectors found, collected over a device's launches.

use gpu_std::emu::{Outcome, Race, UninitRead};

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
    }
}
