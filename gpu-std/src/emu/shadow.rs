//! Shadow memory: the race detector's record ([`Slot`]) of every element address a launch touched, and,
//! for shared memory, which bytes a thread of the block has written.
//!
//! Records of global memory live in pages of 4 KiB of address space, each a dense array of slots at the
//! finest alignment its accesses used (4 bytes for a `u32` buffer: 1024 slots of 56 bytes), found
//! through a hash of the page number with the last page cached. A block's shared memory is one such
//! array, as long as the launch's shared memory. An array refines its granularity when an access
//! arrives at an address its slots do not separate, so every element address keeps its own record.

use super::clock::IntMap;
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

impl Page {
    /// Records for `len` bytes at the granularity of the first access: `size` bytes at offset `off`.
    fn new(len: usize, off: usize, size: usize) -> Self {
        let shift = size.max(1).trailing_zeros().min(off.trailing_zeros()).min(MAX_SHIFT);
        Page { shift, len, slots: empty_slots(len.div_ceil(1 << shift)) }
    }
    /// The record of the element at byte `off`.
    #[inline]
    fn slot(&mut self, off: usize) -> &mut Slot {
        if off & ((1 << self.shift) - 1) != 0 {
            self.refine(off.trailing_zeros());
        }
        &mut self.slots[off >> self.shift]
    }
    /// Splits every slot into `2^(shift - new)` slots; the record stays with the element address.
    fn refine(&mut self, new: u32) {
        let ratio = self.shift - new;
        let mut slots = empty_slots(self.len.div_ceil(1 << new));
        for (i, s) in self.slots.drain(..).enumerate() {
            slots[i << ratio] = s;
        }
        self.slots = slots;
        self.shift = new;
    }
    fn bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Slot>() + self.slots.iter().map(Slot::heap_bytes).sum::<usize>()
    }
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
    /// The record of the element at `addr` (accessed with `size` bytes).
    #[inline]
    pub fn slot(&mut self, addr: usize, size: usize) -> &mut Slot {
        let key = addr >> PAGE_BITS;
        let off = addr & (PAGE - 1);
        let i = if self.last.0 == key + 1 { self.last.1 } else { self.page_index(key, off, size) };
        let slot = self.pages[i as usize].slot(off);
        if slot.is_untouched() {
            self.touched += 1;
        }
        slot
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

    /// Element addresses with a record.
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
    /// The record of the element at byte `off` of shared memory of `len` bytes, accessed with `size`
    /// bytes.
    #[inline]
    pub fn slot(&mut self, off: usize, size: usize, len: usize) -> &mut Slot {
        let slot = self.records.get_or_insert_with(|| Page::new(len, off, size)).slot(off);
        if slot.is_untouched() {
            self.touched += 1;
        }
        slot
    }

    /// Element addresses with a record.
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
