//! Where an access landed, as reports name it: `buffer`[index] in global memory, the array of the
//! kernel's shared layout and the index in it in shared memory.

use crate::atomic::SpaceKind;
use crate::shared::SharedField;

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
                // A layout's fields come from its macro, but nothing stops code from making its own:
                // no arithmetic here may overflow.
                let holds = |f: &&SharedField| off >= f.offset && off - f.offset < f.elem.saturating_mul(f.len);
                let fields = || layouts.iter().flat_map(|l| l.iter());
                let field = fields().filter(holds).find(|f| f.elem == self.size).or_else(|| fields().find(holds));
                match field {
                    Some(f) => (f.name.to_string(), (off - f.offset) / f.elem.max(1)),
                    None => ("shared".to_string(), off / self.size.max(1)),
                }
            }
            SpaceKind::Global => super::names::describe(self.addr, self.size),
        }
    }
}
