//! What a poll saw (`Polled`: a location and the value read there, with the bytes of a scalar as
//! `bits_of` takes them and `fmt_value` prints them), and who last changed a polled address
//! (`Writer`). Kept in the launch state, for the scheduler's parking and the livelock reports.
//!
//! Names only gpu-std's vocabulary: below the launch state, which holds these.

use crate::vocab::scope::SpaceKind;
use crate::vocab::site::Site;

/// A polled memory location and the value the poll saw.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Polled {
    pub addr: usize,
    pub space: SpaceKind,
    pub size: usize,
    /// The value's bytes, little-endian, zero-extended.
    pub bits: u64,
    /// The element type (`u32`, `f32`, ...), to print the value.
    pub ty: &'static str,
    /// For a failed compare-and-swap, the bits it compares with: it succeeds once memory holds them.
    pub compare: Option<u64>,
}

impl Polled {
    /// The location `p` of type `T` holding `value`.
    pub fn of<T: Copy>(p: *const T, space: SpaceKind, value: T) -> Polled {
        Polled {
            addr: p as usize,
            space,
            size: size_of::<T>(),
            bits: bits_of(value),
            ty: std::any::type_name::<T>(),
            compare: None,
        }
    }

    /// The same location, polled by a compare-and-swap that compares with `compare`.
    pub fn comparing<T: Copy>(self, compare: T) -> Polled {
        Polled { compare: Some(bits_of(compare)), ..self }
    }

    /// Whether `other` is a poll of the same location that saw the same value.
    pub(super) fn same(&self, other: &Polled) -> bool {
        self.addr == other.addr && self.size == other.size && self.bits == other.bits
    }
}

/// The bytes of a scalar of at most 8 bytes, little-endian, zero-extended.
pub(crate) fn bits_of<T: Copy>(v: T) -> u64 {
    let n = size_of::<T>();
    assert!(n <= 8, "scalars are at most 8 bytes");
    let mut b = [0u8; 8];
    // SAFETY: `v` is a plain scalar of `n <= 8` bytes with no padding.
    unsafe { std::ptr::copy_nonoverlapping(&v as *const T as *const u8, b.as_mut_ptr(), n) };
    u64::from_le_bytes(b)
}

/// `bits` printed as a value of type `ty`.
pub(crate) fn fmt_value(bits: u64, ty: &str) -> String {
    match ty {
        "i8" => (bits as u8 as i8).to_string(),
        "i16" => (bits as u16 as i16).to_string(),
        "i32" => (bits as u32 as i32).to_string(),
        "i64" => (bits as i64).to_string(),
        "f32" => f32::from_bits(bits as u32).to_string(),
        "f64" => f64::from_bits(bits).to_string(),
        _ => bits.to_string(),
    }
}

/// Who last changed an address with an atomic, volatile or release write, and the value written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Writer {
    pub thread: usize,
    pub site: Site,
    pub bits: u64,
}
