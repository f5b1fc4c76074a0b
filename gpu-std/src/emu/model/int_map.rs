//! `IntMap`: the model's hash map for integer keys (thread keys, addresses), with a multiplicative
//! hasher (`IntHasher`) that is fast and deterministic, so that a schedule seed replays the same
//! reports.
//!
//! The model's lowest file with `kind`: names nothing of gpu-std.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hasher for integer keys: fast, and deterministic, so that a schedule seed replays
/// the same reports.
#[derive(Default, Clone, Copy)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(b as u64);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.add(v as u64)
    }
    fn write_u64(&mut self, v: u64) {
        self.add(v)
    }
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64)
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl IntHasher {
    #[inline]
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A hash map with integer keys and [`IntHasher`].
pub(crate) type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;
