//! What the detectors found in one launch — races (once per address, and per block for shared memory)
//! and reads of uninitialised shared memory (once per element and block), with the place of each
//! (`buffer[index]`, named through `report::names`), and what the lock prediction learnt (see `predict`).

use super::predict::Locks;
use super::race::Epoch;
use super::topology::Topology;
use crate::atomic::SpaceKind;
use crate::emu::config::AcceptedRace;
use crate::emu::report::{Accepted, AccessInfo, Place, Race, UninitRead};
use crate::shared::SharedField;
use std::collections::HashSet;

/// The findings of one launch.
pub(crate) struct Findings {
    pub kernel: String,
    /// Reports kept in full per kind (all are counted).
    max: usize,
    pub races: Vec<Race>,
    pub racy_addresses: usize,
    reported: HashSet<(u8, usize, u32)>,
    pub uninit_reads: Vec<UninitRead>,
    /// Ordering hazards (volatile accesses of shared memory that nothing orders), once per address.
    pub hazards: Vec<Race>,
    pub hazard_addresses: usize,
    hazard_seen: HashSet<(usize, u32)>,
    pub uninit_elements: usize,
    uninit_seen: HashSet<(usize, u32)>,
    /// Shadow bytes and touched element addresses of the blocks of finished waves.
    pub retired_shadow: (usize, usize),
    /// The arrays of the kernel's shared layouts (one, unless the kernel overlaps several), once a
    /// thread has made a view.
    pub shared_layouts: Vec<&'static [SharedField]>,
    /// What critical sections touched, for predicted races (see `predict`).
    pub locks: Locks,
    /// The races declared intended (`Options::accepted_races`), each with what matched it.
    pub accepted: Vec<Accepted>,
    accepted_seen: HashSet<(usize, (u8, usize, u32))>,
}

impl Findings {
    pub fn new(kernel: &str, max: usize) -> Self {
        Findings {
            kernel: kernel.to_string(),
            max,
            races: vec![],
            racy_addresses: 0,
            reported: Default::default(),
            uninit_reads: vec![],
            hazards: vec![],
            hazard_addresses: 0,
            hazard_seen: Default::default(),
            uninit_elements: 0,
            uninit_seen: Default::default(),
            retired_shadow: (0, 0),
            shared_layouts: Vec::new(),
            locks: Locks::default(),
            accepted: Vec::new(),
            accepted_seen: Default::default(),
        }
    }

    /// Races matching one of `rules` are counted against it instead of reported.
    pub fn accept(&mut self, rules: &[AcceptedRace]) {
        self.accepted = rules.iter().map(|r| Accepted { rule: r.clone(), addresses: 0, first: None }).collect();
    }

    /// Whether a race (or ordering hazard) at `place` between `first` and `second` is one the
    /// program declared intended; if so it is counted against the first rule that matches it.
    pub fn accepted(&mut self, topo: &Topology, place: &Place, block: u32, (first, second): (&Epoch, &Epoch)) -> bool {
        if self.accepted.is_empty() {
            return false;
        }
        let (buffer, index) = place.buffer_index(&self.shared_layouts);
        let sites = [site_str(first.site()), site_str(second.site())];
        let Some(k) = self.accepted.iter().position(|a| a.rule.matches(&buffer, [&sites[0], &sites[1]])) else {
            return false;
        };
        if self.accepted_seen.insert((k, key_of(place, block))) {
            let why = format!("accepted: {}", self.accepted[k].rule.why);
            let a = &mut self.accepted[k];
            a.addresses += 1;
            if a.first.is_none() {
                a.first = Some(Race {
                    kernel: self.kernel.clone(),
                    space: place.space,
                    buffer,
                    index,
                    first: access_info(topo, first),
                    second: access_info(topo, second),
                    why,
                    predicted: false,
                    hazard: false,
                });
            }
        }
        true
    }

    /// Counts a race at `place` (accessed by block `block`) if it is the first there; returns whether
    /// to report it in full.
    pub fn count_race(&mut self, place: &Place, block: u32) -> bool {
        if !self.reported.insert(key_of(place, block)) {
            return false;
        }
        self.racy_addresses += 1;
        self.races.len() < self.max
    }

    /// Counts an ordering hazard at shared byte `offset` of block `block` if it is the first there;
    /// returns whether to report it in full.
    pub fn count_hazard(&mut self, offset: usize, block: u32) -> bool {
        if !self.hazard_seen.insert((offset, block)) {
            return false;
        }
        self.hazard_addresses += 1;
        self.hazards.len() < self.max
    }

    /// Counts an uninitialised read of the shared element at byte `offset` of block `block` if it is
    /// the first there; returns whether to report it in full.
    pub fn count_uninit(&mut self, offset: usize, block: u32) -> bool {
        if !self.uninit_seen.insert((offset, block)) {
            return false;
        }
        self.uninit_elements += 1;
        self.uninit_reads.len() < self.max
    }
}

/// The key a racy address is counted once by: shared addresses are per block, so keyed by block too.
fn key_of(place: &Place, block: u32) -> (u8, usize, u32) {
    match place.space {
        SpaceKind::Global => (0u8, place.addr, 0),
        SpaceKind::Shared => (1u8, place.addr - place.shared_base, block),
    }
}

/// `file:line:column` of a source location.
pub(crate) fn site_str(s: crate::Site) -> String {
    format!("{}:{}:{}", s.file(), s.line(), s.column())
}

/// What a report says of the access `e`.
pub(crate) fn access_info(topo: &Topology, e: &Epoch) -> AccessInfo {
    AccessInfo {
        thread: topo.thread_of(e.gid),
        device: topo.device_of_thread(e.gid),
        kind: e.kind().name(),
        site: site_str(e.site()),
        barrier_interval: e.bar,
        grid_interval: e.grid(),
    }
}
