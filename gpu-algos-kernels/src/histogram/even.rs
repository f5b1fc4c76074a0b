//! Histograms of evenly spaced bins over `[lower, upper)` for `u16`, `u32` and `f32` samples, as CUB's
//! `DeviceHistogram::HistogramEven`: `hist.len()` bins of equal width; a sample outside the range (or
//! a NaN) is not counted.
//!
//! **The bin of a sample.** Integers: `floor((x - lower) * bins / (upper - lower))`, exactly (a
//! product in `f64` by the range's reciprocal, then corrected by one either way with 64-bit integer
//! products, so no division per sample). `f32`: `floor((x - lower) * (bins / (upper - lower)))` in
//! `f64` (each `f32` is exact in `f64`; one rounding in the product), at most `bins - 1`.
//!
//! **Counters.** Up to [`COLUMN_MAX_BINS`] bins a block keeps one column of bins per lane, as the byte
//! histogram does ([`super::bytes`]): no bank conflicts and no same-address contention whatever the
//! input. Up to [`SHARED_MAX_BINS`] bins, one set per block in shared memory, updated with shared
//! atomics. Above, global atomics on `hist` directly. Samples are read as 16-byte vectors through the
//! read-only cache (`ld.global.nc`), four in flight per thread.
//!
//! Decision procedure (§5.7): as the byte histogram's: every counter update is atomic (many threads
//! update one counter), barriers separate zeroing, counting and merging, and blocks meet only through
//! global atomic adds. Integer adds commute: the counts are exact and deterministic.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, global_index_x, grid_stride_x, thread_idx};
use gpu_std::vector::{Lanes, Split};
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE};
use gpu_std::{Global, GlobalMut, SharedSlice, kernel, shared_layout};

use super::ends::count_ends;

/// Threads per block.
pub const BLOCK: u32 = 1024;
/// Most bins counted in per-lane columns (32 words per bin).
pub const COLUMN_MAX_BINS: usize = 256;
/// Most bins counted in one shared set per block; above, in global memory.
pub const SHARED_MAX_BINS: usize = 8192;
/// 16-byte loads a thread issues together.
pub const LOADS: usize = 4;

shared_layout! {
    /// The block's counters: `COLUMN_MAX_BINS` columns of 32 lanes, or `SHARED_MAX_BINS` bins.
    pub struct EvenCounts { pub words: [u32; SHARED_MAX_BINS] }
}
/// Dynamic shared memory per block: 32 KiB.
pub const SHARED_BYTES: usize = EvenCounts::BYTES;

/// Bytes of the byte histogram whose work one sample stands for, in [`grid`]: a sample's bin takes
/// some fifteen instructions where a byte's takes one, so the grid grows with the samples, not their
/// bytes. (Measured on an H200 against the samples' own bytes: faster for `u16` at 2^18 and 2^19
/// samples, slower at 2^20 for every type, the same from 2^22 on; a rule between the two is not yet
/// measured.)
pub const WORK_BYTES_PER_SAMPLE: usize = 8;

/// The grid for `n` samples: the byte histogram's rule ([`super::bytes::grid`]) for
/// `n * WORK_BYTES_PER_SAMPLE` bytes.
pub fn grid(n: usize, sms: u32, resident: u32) -> u32 {
    super::bytes::grid(n.saturating_mul(WORK_BYTES_PER_SAMPLE), sms, resident)
}

/// A sample type of the even histogram: how to find a sample's bin.
pub trait Sample: Lanes {
    /// What the kernel computes once from the range and the bin count.
    type Scale: Copy;
    /// The scale of `bins` bins over `[lower, upper)` (`lower < upper`, checked by the caller).
    fn scale(lower: Self, upper: Self, bins: u32) -> Self::Scale;
    /// The bin of `x`, or `None` outside `[lower, upper)`.
    fn bin(x: Self, lower: Self, upper: Self, bins: u32, scale: Self::Scale) -> Option<u32>;
}

/// The exact integer bin `floor(d * bins / range)` for `0 <= d < range`: a product by `inv = 1 /
/// range` in `f64` (within one of the exact quotient), corrected with 64-bit integer products.
#[inline(always)]
pub fn int_bin(d: u64, range: u64, bins: u32, inv: f64) -> u32 {
    let num = d * bins as u64;
    let mut b = (num as f64 * inv) as u64;
    if b * range > num {
        b -= 1;
    } else if (b + 1) * range <= num {
        b += 1;
    }
    b as u32
}

macro_rules! int_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            type Scale = f64;
            #[inline(always)]
            fn scale(lower: $t, upper: $t, _bins: u32) -> f64 {
                1.0 / (upper - lower) as f64
            }
            #[inline(always)]
            fn bin(x: $t, lower: $t, upper: $t, bins: u32, inv: f64) -> Option<u32> {
                if x < lower || x >= upper {
                    return None;
                }
                Some(int_bin((x - lower) as u64, (upper - lower) as u64, bins, inv))
            }
        }
    )*};
}
int_sample!(u16, u32);

/// `2^23`: added to a float in `[0, 2^22)`, it rounds it to an integer, which then sits in the low
/// mantissa bits.
const MAGIC: f32 = 8_388_608.0;
/// Below this, [`Sample::bin`] of `f32` may take the `f32` estimate.
const F32_FAST_MAX: f32 = 1_048_576.0;

impl Sample for f32 {
    /// The scale in `f64` (the definition) and rounded to `f32` (the estimate).
    type Scale = (f64, f32);
    #[inline(always)]
    fn scale(lower: f32, upper: f32, bins: u32) -> (f64, f32) {
        let s = bins as f64 / (upper as f64 - lower as f64);
        (s, s as f32)
    }
    /// `floor((x - lower) * scale)` in `f64`, found from an `f32` estimate `y` where that is certain:
    /// `y` is within `3 * 2^-24 * y` of the `f64` product (three roundings against two far smaller
    /// ones), so where `y` is farther than `2^-21 * y` from the integer nearest to it, both lie between
    /// the same two integers (`y < 2^20` keeps that margin under 1/2). Elsewhere, and for NaN or
    /// infinite estimates, the product in `f64`. The estimate takes no conversion instruction: adding
    /// `2^23` rounds `y` to the nearest integer, which the low mantissa bits then hold.
    #[inline(always)]
    fn bin(x: f32, lower: f32, upper: f32, bins: u32, scale: (f64, f32)) -> Option<u32> {
        // `!(x < upper)` also leaves out NaN.
        if !(x >= lower && x < upper) {
            return None;
        }
        let y = (x - lower) * scale.1;
        let t = y + MAGIC;
        let nearest = t - MAGIC;
        let b = if y < F32_FAST_MAX && (y - nearest).abs() > y * (1.0 / 2_097_152.0) {
            (t.to_bits() & 0x7f_ffff) - u32::from(nearest > y)
        } else {
            ((x as f64 - lower as f64) * scale.0) as u32
        };
        Some(if b >= bins { bins - 1 } else { b })
    }
}

/// Where [`count_all`] counts: per-lane columns in shared memory, one shared set, or `hist` itself.
const IN_COLUMNS: u8 = 0;
const IN_SHARED: u8 = 1;
const IN_GLOBAL: u8 = 2;

/// Counts every sample of `split` into the counters `WHERE` names: 16-byte loads, [`LOADS`] in
/// flight, each vector's samples one after the other (unrolled), then the ends.
#[inline(always)]
fn count_all<T: Sample, const WHERE: u8>(
    split: &Split<'_, T>,
    (lower, upper, nbins, scale): (T, T, u32, T::Scale),
    words: SharedSlice<u32>,
    hist: GlobalMut<u32>,
    lane: usize,
) {
    let count = |x: T| {
        if let Some(b) = T::bin(x, lower, upper, nbins, scale) {
            let b = b as usize;
            match WHERE {
                IN_COLUMNS => words.atomic(b * 32 + lane).add(1),
                IN_SHARED => words.atomic(b).add(1),
                _ => hist.atomic(b).add(1),
            }
        }
    };
    let (nv, stride) = (split.body.len(), grid_stride_x());
    let mut i = global_index_x();
    while i + (LOADS - 1) * stride < nv {
        let v: [T::Vector; LOADS] = split.body.get_strided_nc(i, stride);
        unrolled!(LOADS, k => unrolled!(T::LANES, j => count(v[k].as_ref()[j])));
        i += LOADS * stride;
    }
    while i < nv {
        let v = split.body.get_nc(i);
        unrolled!(T::LANES, j => count(v.as_ref()[j]));
        i += stride;
    }
    count_ends(split, count);
}

/// The kernel body: see the module docs.
#[inline(always)]
fn histogram_even<T: Sample>(data: Global<T>, lower: T, upper: T, hist: GlobalMut<u32>) {
    let bins = hist.len();
    if bins == 0 || bins > u32::MAX as usize || !block_dim().x.is_multiple_of(WARP_SIZE) {
        panic!("histogram_even: at least one bin, at most u32::MAX, and a multiple of 32 threads");
    }
    let nbins = bins as u32;
    let scale = T::scale(lower, upper, nbins);
    let words = EvenCounts::view().words;
    let (t, threads) = (thread_idx().x as usize, block_dim().x as usize);
    let columns = bins <= COLUMN_MAX_BINS;
    let shared = bins <= SHARED_MAX_BINS;
    let used = if columns {
        bins * 32
    } else if shared {
        bins
    } else {
        0
    };
    let mut k = t;
    while k < used {
        words.set(k, 0);
        k += threads;
    }
    sync_threads();
    let lane = warp::lane_id() as usize;
    // One counting loop per kind of counter, chosen once: with the choice inside the loop, LLVM kept
    // the loaded vectors in local memory and looped over them (about 44 instructions per sample).
    let split = data.split_vectors();
    let range = (lower, upper, nbins, scale);
    if columns {
        count_all::<T, IN_COLUMNS>(&split, range, words, hist, lane);
    } else if shared {
        count_all::<T, IN_SHARED>(&split, range, words, hist, lane);
    } else {
        count_all::<T, IN_GLOBAL>(&split, range, words, hist, lane);
    }
    sync_threads();
    if columns {
        // One warp per bin: the 32 lanes' columns added by a butterfly, one global add.
        let mut b = warp::warp_id() as usize;
        while b < bins {
            let mut c = words.get(b * 32 + lane);
            let mut offset = WARP_SIZE / 2;
            while offset > 0 {
                c += warp::shfl_xor(FULL_MASK, c, offset);
                offset >>= 1;
            }
            if lane == 0 && c > 0 {
                hist.atomic(b).add(c);
            }
            b += threads / 32;
        }
    } else if shared {
        let mut b = t;
        while b < bins {
            let c = words.get(b);
            if c > 0 {
                hist.atomic(b).add(c);
            }
            b += threads;
        }
    }
}

kernel! {
    /// `hist[b] += count of samples in bin b` of `hist.len()` even bins over `[lower, upper)` (`lower <
    /// upper`; `hist` zeroed by the host). Launch: a multiple of 32 threads up to `BLOCK`, `SHARED_BYTES`,
    /// any 1-D grid.
    pub fn histogram_even_u16<'a>(data: Global<'a, u16>, lower: u16, upper: u16, hist: GlobalMut<'a, u32>) {
        histogram_even(data, lower, upper, hist)
    }
}
kernel! {
    /// As [`histogram_even_u16`], for `u32` samples.
    pub fn histogram_even_u32<'a>(data: Global<'a, u32>, lower: u32, upper: u32, hist: GlobalMut<'a, u32>) {
        histogram_even(data, lower, upper, hist)
    }
}
kernel! {
    /// As [`histogram_even_u16`], for `f32` samples (NaN, and values outside the range, not counted).
    pub fn histogram_even_f32<'a>(data: Global<'a, f32>, lower: f32, upper: f32, hist: GlobalMut<'a, u32>) {
        histogram_even(data, lower, upper, hist)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_bins_are_exact() {
        for (lower, upper, bins) in [(0u32, 256u32, 256u32), (10, 1000, 7), (0, u32::MAX, 1000), (5, 6, 1), (0, 3, 100)]
        {
            let range = (upper - lower) as u64;
            let inv = u32::scale(lower, upper, bins);
            let step = (range / 5000).max(1);
            let mut x = lower as u64;
            while x < upper as u64 {
                let want = ((x - lower as u64) * bins as u64 / range) as u32;
                assert_eq!(
                    u32::bin(x as u32, lower, upper, bins, inv),
                    Some(want),
                    "{x} in [{lower}, {upper}) / {bins}"
                );
                x += step;
            }
            assert_eq!(u32::bin(upper, lower, upper, bins, inv), None);
        }
    }

    #[test]
    fn float_bins_take_the_f64_rule_through_the_estimate() {
        // Every bin edge and its neighbours, and a sweep, against the definition in f64.
        for (lower, upper, bins) in [(0.0f32, 1.0f32, 256u32), (-1.5, 2.25, 100), (3.0, 1e6, 7), (-1e-3, 1e-3, 4096)] {
            let s = f32::scale(lower, upper, bins);
            let want = |x: f32| {
                let b = ((x as f64 - lower as f64) * s.0) as u32;
                if b >= bins { bins - 1 } else { b }
            };
            let mut xs: Vec<f32> = (0..=bins)
                .flat_map(|b| {
                    let edge = (lower as f64 + b as f64 / s.0) as f32;
                    [edge.next_down(), edge, edge.next_up()]
                })
                .collect();
            xs.extend((0..100_000).map(|i| lower + (upper - lower) * (i as f32 / 100_000.0)));
            for x in xs {
                if x >= lower && x < upper {
                    assert_eq!(f32::bin(x, lower, upper, bins, s), Some(want(x)), "{x} in [{lower}, {upper}) / {bins}");
                }
            }
        }
    }

    #[test]
    fn float_bins_leave_out_nan_and_the_upper_bound() {
        let s = f32::scale(0.0, 1.0, 10);
        assert_eq!(f32::bin(0.0, 0.0, 1.0, 10, s), Some(0));
        assert_eq!(f32::bin(0.99999994, 0.0, 1.0, 10, s), Some(9));
        assert_eq!(f32::bin(1.0, 0.0, 1.0, 10, s), None);
        assert_eq!(f32::bin(f32::NAN, 0.0, 1.0, 10, s), None);
        assert_eq!(f32::bin(-0.5, 0.0, 1.0, 10, s), None);
    }
}
