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
use gpu_std::thread::{block_dim, block_idx, global_index_x, grid_stride_x, thread_idx};
use gpu_std::vector::{Lanes, Split};
use gpu_std::warp::{self, FULL_MASK, WARP_SIZE};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

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

impl Sample for f32 {
    type Scale = f64;
    #[inline(always)]
    fn scale(lower: f32, upper: f32, bins: u32) -> f64 {
        bins as f64 / (upper as f64 - lower as f64)
    }
    #[inline(always)]
    fn bin(x: f32, lower: f32, _upper: f32, bins: u32, scale: f64) -> Option<u32> {
        // `!(x < upper)` also leaves out NaN.
        if !(x >= lower && x < _upper) {
            return None;
        }
        let b = ((x as f64 - lower as f64) * scale) as u32;
        Some(if b >= bins { bins - 1 } else { b })
    }
}

/// The elements before the first and after the last 16-byte boundary of `split`: block 0 counts them,
/// its threads taking one element each in turn.
#[inline(always)]
pub(crate) fn count_ends<T: Lanes>(split: &Split<'_, T>, count: impl Fn(T)) {
    if block_idx().x == 0 {
        let (head, tail) = (split.head.len(), split.tail.len());
        let mut j = thread_idx().x as usize;
        while j < head + tail {
            count(if j < head { split.head.get(j) } else { split.tail.get(j - head) });
            j += block_dim().x as usize;
        }
    }
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
    let count = |x: T| {
        if let Some(b) = T::bin(x, lower, upper, nbins, scale) {
            let b = b as usize;
            if columns {
                words.atomic(b * 32 + lane).add(1);
            } else if shared {
                words.atomic(b).add(1);
            } else {
                hist.atomic(b).add(1);
            }
        }
    };
    let split = data.split_vectors();
    let (nv, stride) = (split.body.len(), grid_stride_x());
    let mut i = global_index_x();
    while i + (LOADS - 1) * stride < nv {
        let v: [T::Vector; LOADS] = split.body.get_strided_nc(i, stride);
        v.into_iter().for_each(|v| v.as_ref().iter().for_each(|&x| count(x)));
        i += LOADS * stride;
    }
    while i < nv {
        split.body.get_nc(i).as_ref().iter().for_each(|&x| count(x));
        i += stride;
    }
    count_ends(&split, count);
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
    fn float_bins_leave_out_nan_and_the_upper_bound() {
        let s = f32::scale(0.0, 1.0, 10);
        assert_eq!(f32::bin(0.0, 0.0, 1.0, 10, s), Some(0));
        assert_eq!(f32::bin(0.99999994, 0.0, 1.0, 10, s), Some(9));
        assert_eq!(f32::bin(1.0, 0.0, 1.0, 10, s), None);
        assert_eq!(f32::bin(f32::NAN, 0.0, 1.0, 10, s), None);
        assert_eq!(f32::bin(-0.5, 0.0, 1.0, 10, s), None);
    }
}
