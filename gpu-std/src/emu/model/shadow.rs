//! Shadow memory: the race detector's record ([`Slot`]) of every byte a launch touched, and, for shared
//! memory, which bytes a thread of the block has written.
//!
//! Records of global memory live in pages of 4 KiB of address space, each a dense array of slots at
//! the finest granularity its accesses used (4 bytes for a `u32` buffer: 1024 slots of 56 bytes),
//! found through a hash of the page number with the last page cached. A block's shared memory is one
//! such array, as long as the launch's shared memory.
//!
//! Every access is checked against, and recorded in, every slot its bytes cover, so accesses of
//! different widths that share bytes meet in a slot (a `u8` write and a `u32` read of the word holding
//! it; views of one memory with different element types may overlap). An access narrower than the
//! array's granularity, or not aligned to it, first refines the array: each slot is split, and every
//! part keeps a copy of the whole record — exact, because no access is recorded in a slot wider than
//! itself, so each recorded access covered every byte of its slot.

use super::int_map::IntMap;
use super::race::Slot;

const PAGE_BITS: u32 = 12;
const PAGE: usize = 1 << PAGE_BITS;
/// Coarsest granularity: 16 bytes (no access is wider).
const MAX_SHIFT: u32 = 4;

/// Records of a contiguous range of bytes, one slot per `2^shift` bytes.
#[derive(Debug)]
struct Page {
    /// log2 of the bytes per slot.
    shift: u32,
    /// Bytes covered.
    len: usize,
    slots: Vec<Slot>,
}

fn empty_slots(n: usize) -> Vec<Slot> {
    let mut v = Vec::with_capacity(n);
    v.resize_with(n, Slot::default);
    v
}

/// log2 of the widest granularity at which an access of `size` bytes at offset `off` covers whole
/// slots.
fn granularity(off: usize, size: usize) -> u32 {
    size.max(1).trailing_zeros().min(off.trailing_zeros()).min(MAX_SHIFT)
}

impl Page {
    /// Records for `len` bytes at the granularity of the first access: `size` bytes at offset `off`.
    fn new(len: usize, off: usize, size: usize) -> Self {
        let shift = granularity(off, size);
        Page { shift, len, slots: empty_slots(len.div_ceil(1 << shift)) }
    }
    /// The records of the bytes `[off, off + size)`, and how many records the refinement this needed
    /// (if any) copied into new slots.
    #[inline]
    fn slots(&mut self, off: usize, size: usize) -> (&mut [Slot], usize) {
        let want = granularity(off, size);
        let copied = if want < self.shift { self.refine(want) } else { 0 };
        let first = off >> self.shift;
        // Accesses are aligned and never cross a page; the clamp only keeps a stray one in bounds.
        let last = ((off + size.max(1) - 1) >> self.shift).min(self.slots.len() - 1);
        (&mut self.slots[first..=last], copied)
    }
    /// Splits every slot into `2^(shift - new)` slots, each with a copy of the record. Returns the
    /// number of copies of records made.
    #[cold]
    fn refine(&mut self, new: u32) -> usize {
        let parts = 1usize << (self.shift - new);
        let n = self.len.div_ceil(1 << new);
        let mut slots = Vec::with_capacity(n);
        let mut copied = 0;
        for s in self.slots.drain(..) {
            for _ in 1..parts.min(n - slots.len()) {
                copied += !s.is_untouched() as usize;
                slots.push(s.clone());
            }
            slots.push(s);
        }
        self.slots = slots;
        self.shift = new;
        copied
    }
    fn bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Slot>() + self.slots.iter().map(Slot::heap_bytes).sum::<usize>()
    }
}

/// Counts, in `touched`, the slots of `slots` that have no record yet (the access about to be recorded
/// gives them one) and the records a refinement copied.
#[inline]
fn count_touched(touched: &mut usize, slots: &[Slot], copied: usize) {
    *touched += copied + slots.iter().filter(|s| s.is_untouched()).count();
}

/// The records of one address space (global memory, or one block's shared memory).
#[derive(Debug, Default)]
pub(crate) struct Shadow {
    index: IntMap<usize, u32>,
    pages: Vec<Page>,
    /// Page number + 1 and index of the page used last (0: none yet).
    last: (usize, u32),
    touched: usize,
}

impl Shadow {
    /// The records of the bytes an access of `size` bytes at `addr` touches.
    #[inline]
    pub fn slots(&mut self, addr: usize, size: usize) -> &mut [Slot] {
        let key = addr >> PAGE_BITS;
        let off = addr & (PAGE - 1);
        let i = if self.last.0 == key + 1 { self.last.1 } else { self.page_index(key, off, size) };
        let (slots, copied) = self.pages[i as usize].slots(off, size);
        count_touched(&mut self.touched, slots, copied);
        slots
    }

    fn page_index(&mut self, key: usize, off: usize, size: usize) -> u32 {
        let n = self.pages.len() as u32;
        let i = *self.index.entry(key).or_insert(n);
        if i == n {
            self.pages.push(Page::new(PAGE, off, size));
        }
        self.last = (key + 1, i);
        i
    }

    /// Slots (elements, or parts of elements) with a record.
    pub fn touched(&self) -> usize {
        self.touched
    }

    /// Bytes the records take: slots, their extensions, the page index.
    pub fn bytes(&self) -> usize {
        self.pages.iter().map(Page::bytes).sum::<usize>()
            + self.pages.capacity() * size_of::<Page>()
            + self.index.capacity() * (size_of::<(usize, u32)>() + 1)
    }
}

/// The records of one block's shared memory: one run of slots over the whole of it, made at the first
/// access.
#[derive(Debug, Default)]
pub(crate) struct SharedShadow {
    records: Option<Page>,
    touched: usize,
}

impl SharedShadow {
    /// The records of the bytes an access of `size` bytes at byte `off` of shared memory of `len`
    /// bytes touches.
    #[inline]
    pub fn slots(&mut self, off: usize, size: usize, len: usize) -> &mut [Slot] {
        let (slots, copied) = self.records.get_or_insert_with(|| Page::new(len, off, size)).slots(off, size);
        count_touched(&mut self.touched, slots, copied);
        slots
    }

    /// Slots (elements, or parts of elements) with a record.
    pub fn touched(&self) -> usize {
        self.touched
    }

    /// Bytes the records take.
    pub fn bytes(&self) -> usize {
        self.records.as_ref().map_or(0, Page::bytes)
    }
}

/// Which bytes of a block's shared memory a thread of the block has written in this launch.
#[derive(Debug)]
pub(crate) struct Written {
    base: usize,
    bits: Vec<u64>,
}

impl Written {
    /// For shared memory of `bytes` bytes at `base`, nothing written yet.
    pub fn new(base: usize, bytes: usize) -> Self {
        Written { base, bits: vec![0; bytes.div_ceil(64)] }
    }

    /// Records an access of `size` bytes at `addr` that reads and/or writes; returns whether it read a
    /// byte that no thread had written.
    pub fn access(&mut self, addr: usize, size: usize, reads: bool, writes: bool) -> bool {
        let off = addr - self.base;
        let mut unwritten = false;
        for b in off..off + size {
            let (w, m) = (b / 64, 1u64 << (b % 64));
            unwritten |= reads && self.bits[w] & m == 0;
            if writes {
                self.bits[w] |= m;
            }
        }
        unwritten
    }

    pub fn bytes(&self) -> usize {
        self.bits.capacity() * size_of::<u64>()
    }
}
