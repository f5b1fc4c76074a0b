//! What the detectors found in one launch — races (once per address, and per block for shared memory)
//! and reads of uninitialised shared memory (once per element and block) — and the names of host
//! buffers, so that reports say `buffer[index]` instead of an address.

use super::report::{Race, UninitRead};
use crate::atomic::SpaceKind;
use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

/// Where an access landed, for reports.
pub(crate) struct Place {
    pub space: SpaceKind,
    pub addr: usize,
    pub size: usize,
    /// Base of the block's shared memory (shared space only).
    pub shared_base: usize,
}

impl Place {
    /// The buffer name and element index (`shared` and the element of the block's shared memory).
    pub fn buffer_index(&self) -> (String, usize) {
        match self.space {
            SpaceKind::Shared => ("shared".to_string(), (self.addr - self.shared_base) / self.size.max(1)),
            SpaceKind::Global => lookup_buffer(self.addr),
        }
    }
}

/// The findings of one launch.
pub(crate) struct Findings {
    pub kernel: String,
    /// Reports kept in full per kind (all are counted).
    max: usize,
    pub races: Vec<Race>,
    pub racy_addresses: usize,
    reported: HashSet<(u8, usize, u32)>,
    pub uninit_reads: Vec<UninitRead>,
    pub uninit_elements: usize,
    uninit_seen: HashSet<(usize, u32)>,
    /// Shadow bytes and touched element addresses of the blocks of finished waves.
    pub retired_shadow: (usize, usize),
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
            uninit_elements: 0,
            uninit_seen: Default::default(),
            retired_shadow: (0, 0),
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

// ---- buffer names ---------------------------------------------------------------------------------

struct Named {
    name: String,
    bytes: usize,
    elem: usize,
}

static BUFFERS: Mutex<BTreeMap<usize, Named>> = Mutex::new(BTreeMap::new());

pub(crate) fn register_buffer(name: &str, base: usize, bytes: usize, elem: usize) -> super::BufferName {
    let mut m = BUFFERS.lock().unwrap_or_else(|e| e.into_inner());
    m.insert(base, Named { name: name.to_string(), bytes, elem });
    super::BufferName { base }
}

pub(crate) fn unregister_buffer(base: usize) {
    let mut m = BUFFERS.lock().unwrap_or_else(|e| e.into_inner());
    m.remove(&base);
}

fn lookup_buffer(addr: usize) -> (String, usize) {
    let m = BUFFERS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((&base, n)) = m.range(..=addr).next_back()
        && addr < base + n.bytes.max(1)
    {
        return (n.name.clone(), (addr - base) / n.elem.max(1));
    }
    (format!("{addr:#x}"), 0)
}
