//! What the detectors found in one launch — races (once per address, and per block for shared memory)
//! and reads of uninitialised shared memory (once per element and block), with the place of each
//! (`buffer[index]`, named through `report::names`), and what the lock prediction learnt (see `predict`).

use super::predict::Locks;
use crate::atomic::SpaceKind;
use crate::emu::report::{Place, Race, UninitRead};
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
        }
    }

    /// Counts a race at `place` (accessed by block `block`) if it is the first there; returns whether
    /// to report it in full.
    pub fn count_race(&mut self, place: &Place, block: u32) -> bool {
        // Shared addresses are per block; key them by block too.
        let key = match place.space {
            SpaceKind::Global => (0u8, place.addr, 0),
            SpaceKind::Shared => (1u8, place.addr - place.shared_base, block),
        };
        if !self.reported.insert(key) {
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
