//! What the radix sort needs from a key: its bits in sort order ([`SortKey::ordered`]) and one digit
//! of them ([`SortKey::digit`]); and from a value: that it is 4 or 8 bytes of bits to move
//! ([`SortValue`]).
use crate::element::Element;

/// A key type of the radix sort: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`. The sort orders keys by
/// [`SortKey::ordered`] as an unsigned integer: unsigned keys as they are, signed ones with the sign
/// bit flipped (two's complement order), floats in IEEE 754 total order (`f32::total_cmp`): all bits
/// flipped when the sign is set, else the sign bit, so that `-NaN < -inf < … < -0.0 < +0.0 < … < +inf
/// < +NaN` (NaNs with the sign bit clear, as `f32::NAN` and the GPU's own NaNs, sort last).
pub trait SortKey: Element {
    /// Bits in the key (32 or 64): the largest `end_bit`.
    const BITS: u32;
    /// The key's bits in sort order, zero-extended to 64.
    fn ordered(self) -> u64;
    /// Digit `(ordered(self) ^ flip) >> shift & mask` (`flip` all ones for a descending sort, else
    /// zero), in the key's own width: `shift < BITS`.
    fn digit(self, shift: u32, mask: u32, flip: bool) -> u32;
}

macro_rules! sort_key {
    ($($t:ty, $bits:ty, $n:literal: |$x:ident| $ordered:expr;)*) => {$(
        impl SortKey for $t {
            const BITS: u32 = $n;
            #[inline(always)]
            fn ordered(self) -> u64 {
                let $x = self;
                let o: $bits = $ordered;
                o as u64
            }
            #[inline(always)]
            fn digit(self, shift: u32, mask: u32, flip: bool) -> u32 {
                let $x = self;
                let o: $bits = $ordered;
                let o = if flip { !o } else { o };
                (o >> shift) as u32 & mask
            }
        }
    )*};
}
sort_key! {
    u32, u32, 32: |x| x;
    i32, u32, 32: |x| (x as u32) ^ (1 << 31);
    f32, u32, 32: |x| { let b = x.to_bits(); b ^ (((b as i32) >> 31) as u32 | (1 << 31)) };
    u64, u64, 64: |x| x;
    i64, u64, 64: |x| (x as u64) ^ (1 << 63);
    f64, u64, 64: |x| { let b = x.to_bits(); b ^ (((b as i64) >> 63) as u64 | (1 << 63)) };
}

/// The element type a block stages its tile through in shared memory: `u32` when keys and values
/// are 4 bytes, `u64` when either is 8.
pub trait StageWord: gpu_std::Pod {
    /// The low bits of `w`.
    fn from_word(w: u64) -> Self;
    /// The bits, zero-extended.
    fn to_word(self) -> u64;
}
impl StageWord for u32 {
    #[inline(always)]
    fn from_word(w: u64) -> u32 {
        w as u32
    }
    #[inline(always)]
    fn to_word(self) -> u64 {
        self as u64
    }
}
impl StageWord for u64 {
    #[inline(always)]
    fn from_word(w: u64) -> u64 {
        w
    }
    #[inline(always)]
    fn to_word(self) -> u64 {
        self
    }
}

/// A value type the sort's kernels move: its bits only (`u32` for 4-byte values, `u64` for 8-byte
/// ones; gpu-algos views other value types of those sizes as these).
pub trait SortValue: Element {}
impl SortValue for u32 {}
impl SortValue for u64 {}
