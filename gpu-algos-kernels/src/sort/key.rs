//! What the radix sort needs from a key: its bits in sort order ([`SortKey::ordered`]) and one digit
//! of them ([`SortKey::digit`]); and from a value: that it is 4 or 8 bytes of bits to move
//! ([`ValueBits`]).
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
    /// `(ordered(self) ^ flip) >> begin` in the key's own width (`flip` as in [`SortKey::digit`]),
    /// zero-extended: the bits of a range that starts at `begin < BITS`, lowest first.
    fn bits_from(self, begin: u32, flip: bool) -> u64;
    /// The key whose [`SortKey::ordered`] bits are `o` (the inverse).
    fn from_ordered(o: u64) -> Self;
}

macro_rules! sort_key {
    ($($t:ty, $bits:ty, $n:literal: |$x:ident| $ordered:expr, |$o:ident| $back:expr;)*) => {$(
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
            #[inline(always)]
            fn bits_from(self, begin: u32, flip: bool) -> u64 {
                let $x = self;
                let o: $bits = $ordered;
                let o = if flip { !o } else { o };
                (o >> begin) as u64
            }
            #[inline(always)]
            fn from_ordered(o: u64) -> $t {
                let $o = o as $bits;
                $back
            }
        }
    )*};
}
sort_key! {
    u32, u32, 32: |x| x, |o| o;
    i32, u32, 32: |x| (x as u32) ^ (1 << 31), |o| (o ^ (1 << 31)) as i32;
    f32, u32, 32: |x| { let b = x.to_bits(); b ^ (((b as i32) >> 31) as u32 | (1 << 31)) },
        |o| f32::from_bits(if o >> 31 != 0 { o ^ (1 << 31) } else { !o });
    u64, u64, 64: |x| x, |o| o;
    i64, u64, 64: |x| (x as u64) ^ (1 << 63), |o| (o ^ (1 << 63)) as i64;
    f64, u64, 64: |x| { let b = x.to_bits(); b ^ (((b as i64) >> 63) as u64 | (1 << 63)) },
        |o| f64::from_bits(if o >> 63 != 0 { o ^ (1 << 63) } else { !o });
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

/// The bits of a value the sort's kernels move (`u32` for 4-byte values, `u64` for 8-byte ones;
/// gpu-algos' `SortValue` types are viewed as these).
pub trait ValueBits: Element {}
impl ValueBits for u32 {}
impl ValueBits for u64 {}

#[cfg(test)]
mod tests {
    use super::SortKey;

    /// `from_ordered` undoes `ordered` for every key type, on the values at the edges of each order.
    #[test]
    fn from_ordered_inverts_ordered() {
        fn round_trip<K: SortKey + core::fmt::Debug>(keys: &[K]) {
            for &k in keys {
                let back = K::from_ordered(k.ordered());
                assert!(back.to_word() == k.to_word(), "{k:?} came back as {back:?}");
            }
        }
        round_trip(&[0u32, 1, u32::MAX, 1 << 31]);
        round_trip(&[0i32, -1, i32::MIN, i32::MAX]);
        round_trip(&[
            0.0f32,
            -0.0,
            1.5,
            -1.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::MIN_POSITIVE,
        ]);
        round_trip(&[0u64, 1, u64::MAX, 1 << 63]);
        round_trip(&[0i64, -1, i64::MIN, i64::MAX]);
        round_trip(&[0.0f64, -0.0, 2.5, -2.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN]);
    }
}
