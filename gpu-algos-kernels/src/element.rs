//! The element types the library's kernels take, and the operations they combine them with.
//!
//! An [`Element`] is one of `u32`, `i32`, `u64`, `i64`, `f32`, `f64`: read as 16-byte vectors
//! ([`Lanes`]), shuffled across a warp ([`ShflValue`]), and carried through shared and global scratch
//! words as its bits in a `u64` ([`Element::to_word`]). An [`Op`] is [`Sum`], [`Min`] or [`Max`].
use gpu_std::Pod;
use gpu_std::vector::Lanes;
use gpu_std::warp::ShflValue;

/// An element type of the library's kernels: `u32`, `i32`, `u64`, `i64`, `f32` or `f64`.
pub trait Element: Lanes + ShflValue + Pod {
    /// The value's bits, zero-extended to 64.
    fn to_word(self) -> u64;
    /// The value whose bits are the low `8 * size_of::<Self>()` bits of `w`.
    fn from_word(w: u64) -> Self;
    /// Whether it is 8 bytes wide (two per 16-byte vector).
    const WIDE: bool = size_of::<Self>() == 8;
}

macro_rules! element {
    ($($t:ty => |$x:ident| $to:expr, |$w:ident| $from:expr;)*) => {$(
        impl Element for $t {
            #[inline(always)]
            fn to_word(self) -> u64 {
                let $x = self;
                $to
            }
            #[inline(always)]
            fn from_word($w: u64) -> Self {
                $from
            }
        }
    )*};
}
element! {
    u32 => |x| x as u64, |w| w as u32;
    i32 => |x| x as u32 as u64, |w| w as u32 as i32;
    f32 => |x| x.to_bits() as u64, |w| f32::from_bits(w as u32);
    u64 => |x| x, |w| w;
    i64 => |x| x as u64, |w| w as i64;
    f64 => |x| x.to_bits(), |w| f64::from_bits(w);
}

/// A way to combine two elements: an identity and a binary operation.
pub trait Op<T>: Copy {
    /// `identity ∘ x == x` for every `x` (for [`Min`] and [`Max`] of floats, NaN aside).
    fn identity() -> T;
    /// `a ∘ b`.
    fn apply(a: T, b: T) -> T;
    /// Whether the operation is associative and commutative on the values (wrapping integer sums,
    /// minima, maxima; not float sums, whose rounding depends on the order): then a thread may keep
    /// one accumulator instead of several, in any order.
    const ASSOCIATIVE: bool;
}

/// Addition: wrapping for integers (as CUB's and torch's sums), rounded for floats.
#[derive(Clone, Copy, Debug)]
pub struct Sum;
/// The smaller value. Floats: a NaN if either is NaN, and -0.0 before +0.0, so the result does not
/// depend on the order (as `torch.min`).
#[derive(Clone, Copy, Debug)]
pub struct Min;
/// The larger value. Floats: a NaN if either is NaN, and +0.0 after -0.0 (as `torch.max`).
#[derive(Clone, Copy, Debug)]
pub struct Max;

macro_rules! int_ops {
    ($($t:ty),*) => {$(
        impl Op<$t> for Sum {
            #[inline(always)]
            fn identity() -> $t { 0 }
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a.wrapping_add(b) }
            const ASSOCIATIVE: bool = true;
        }
        impl Op<$t> for Min {
            #[inline(always)]
            fn identity() -> $t { <$t>::MAX }
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { if b < a { b } else { a } }
            const ASSOCIATIVE: bool = true;
        }
        impl Op<$t> for Max {
            #[inline(always)]
            fn identity() -> $t { <$t>::MIN }
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { if b > a { b } else { a } }
            const ASSOCIATIVE: bool = true;
        }
    )*};
}
int_ops!(u32, i32, u64, i64);

macro_rules! float_ops {
    ($($t:ty),*) => {$(
        impl Op<$t> for Sum {
            #[inline(always)]
            fn identity() -> $t { 0.0 }
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t { a + b }
            const ASSOCIATIVE: bool = false;
        }
        impl Op<$t> for Min {
            #[inline(always)]
            fn identity() -> $t { <$t>::INFINITY }
            #[inline(always)]
            #[allow(clippy::eq_op)]
            fn apply(a: $t, b: $t) -> $t {
                // IEEE 754-2019 `minimum`: on nvptx LLVM's `llvm.minimum`, which is `min.NaN.f32` for
                // f32 on sm_80 and later (a test checks the built PTX) and a short sequence around
                // `min.f64` for f64; elsewhere the same rule written out.
                #[cfg(target_arch = "nvptx64")]
                return a.minimum(b);
                // NaN first (a NaN is not equal to itself), then the order, then -0.0 before +0.0.
                #[cfg(not(target_arch = "nvptx64"))]
                if a != a { a } else if b != b || b < a || (b == a && b.is_sign_negative()) { b } else { a }
            }
            const ASSOCIATIVE: bool = true;
        }
        impl Op<$t> for Max {
            #[inline(always)]
            fn identity() -> $t { <$t>::NEG_INFINITY }
            #[inline(always)]
            #[allow(clippy::eq_op)]
            fn apply(a: $t, b: $t) -> $t {
                // IEEE 754-2019 `maximum` (`max.NaN.f32` on nvptx, as for `Min`).
                #[cfg(target_arch = "nvptx64")]
                return a.maximum(b);
                #[cfg(not(target_arch = "nvptx64"))]
                if a != a { a } else if b != b || b > a || (b == a && b.is_sign_positive()) { b } else { a }
            }
            const ASSOCIATIVE: bool = true;
        }
    )*};
}
float_ops!(f32, f64);

/// The lanes of one 16-byte vector combined in a fixed order: `(v0 ∘ v1) ∘ (v2 ∘ v3)` for four lanes,
/// `v0 ∘ v1` for two.
#[inline(always)]
pub fn vector_fold<T: Element, O: Op<T>>(v: T::Vector) -> T {
    let s = v.as_ref();
    if T::LANES == 4 { O::apply(O::apply(s[0], s[1]), O::apply(s[2], s[3])) } else { O::apply(s[0], s[1]) }
}

/// An element type the scan adds: every [`Element`], with [`Sum`].
pub trait ScanValue: Element {
    /// The additive identity.
    fn zero() -> Self;
    /// `a + b` (wrapping for integers).
    fn add(a: Self, b: Self) -> Self;
}
impl<T: Element> ScanValue for T
where
    Sum: Op<T>,
{
    #[inline(always)]
    fn zero() -> T {
        <Sum as Op<T>>::identity()
    }
    #[inline(always)]
    fn add(a: T, b: T) -> T {
        <Sum as Op<T>>::apply(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_min_and_max_propagate_nan_and_order_signed_zeros() {
        assert!(<Min as Op<f32>>::apply(1.0, f32::NAN).is_nan());
        assert!(<Min as Op<f32>>::apply(f32::NAN, 1.0).is_nan());
        assert!(<Max as Op<f64>>::apply(f64::NAN, -1.0).is_nan());
        assert!(<Max as Op<f64>>::apply(2.0, f64::NAN).is_nan());
        for (a, b) in [(0.0f32, -0.0f32), (-0.0, 0.0)] {
            assert!(<Min as Op<f32>>::apply(a, b).is_sign_negative(), "min({a}, {b})");
            assert!(<Max as Op<f32>>::apply(a, b).is_sign_positive(), "max({a}, {b})");
        }
        assert_eq!(<Min as Op<f32>>::apply(3.0, -2.0), -2.0);
        assert_eq!(<Max as Op<f32>>::apply(3.0, -2.0), 3.0);
        assert_eq!(<Min as Op<f32>>::apply(f32::INFINITY, 5.0), 5.0);
    }

    #[test]
    fn words_round_trip() {
        assert_eq!(i32::from_word((-5i32).to_word()), -5);
        assert_eq!((-1i32).to_word(), 0xffff_ffff);
        assert_eq!(f64::from_word(1.5f64.to_word()), 1.5);
        assert_eq!(i64::from_word(i64::MIN.to_word()), i64::MIN);
    }

    #[test]
    fn vectors_fold_in_a_fixed_order() {
        assert_eq!(vector_fold::<i32, Sum>([1, 2, 3, 4]), 10);
        assert_eq!(vector_fold::<u64, Max>([7, 9]), 9);
        assert_eq!(vector_fold::<f32, Min>([4.0, -1.0, 2.0, 8.0]), -1.0);
    }
}
