//! What the detectors found in one launch — races (once per address, and per block for shared memory)
//! and reads of uninitialised shared memory (once per element and block), with the place of each
//! (`buffer[index]`, named through [`super::buffer`]).

use super::predict::Locks;
use super::report::{Race, UninitRead};
use crate::atomic::SpaceKind;
use crate::shared::SharedField;
use std::collections::HashSet;

/// Where an access landed, for reports.
pub(crate) struct Place {
    pub space: SpaceKind,
    pub addr: usize,
    pub size: usize,
    /// Base of the block's shared memory (shared space only).
    pub shared_base: usize,
}

impl Place {
    /// The buffer name and element index: for shared memory, the array of the kernel's shared layout
    /// that holds the bytes (`Scratch.sums` and the index in it; where layouts overlap, the array whose
    /// elements have the access's width), else `shared` and the element of the block's shared memory.
    /// A shared-memory place as reports name it: `` shared memory `Tile.v`[3] `` when a shared layout
    /// holds it, else `shared memory element [i]`.
    pub fn shared_name(&self, layouts: &[&[SharedField]]) -> String {
        match self.buffer_index(layouts) {
            (name, index) if name != "shared" => format!("shared memory `{name}`[{index}]"),
            (_, index) => format!("shared memory element [{index}]"),
        }
    }

    pub fn buffer_index(&self, layouts: &[&[SharedField]]) -> (String, usize) {
        match self.space {
            SpaceKind::Shared => {
                let off = self.addr - self.shared_base;
                let holds = |f: &&SharedField| off >= f.offset && off < f.offset + f.elem * f.len;
                let fields = || layouts.iter().flat_map(|l| l.iter());
                let field = fields().filter(holds).find(|f| f.elem == self.size).or_else(|| fields().find(holds));
                match field {
                    Some(f) => (f.name.to_string(), (off - f.offset) / f.elem.max(1)),
                    None => ("shared".to_string(), off / self.size.max(1)),
                }
            }
            SpaceKind::Global => super::buffer::describe(self.addr, self.size),
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
