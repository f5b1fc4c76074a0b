//! Device-wide histograms: [`bytes`] (256 bins, one per byte value) and [`even`] (`hist.len()` bins of
//! equal width over `[lower, upper)`, for `u16`, `u32` and `f32` samples, as CUB's `HistogramEven`).
//! Each overwrites `hist` with the counts, which are exact: integer adds commute.
use crate::error::{Result, fail};
use crate::kernels::EvenSample;
use crate::{Algos, plan};
use gpu_algos_kernels::histogram::{bytes as hb, even as he, small as hs};
use gpu_host::{Buffer, Device, Launch};
use gpu_std::Dim3;

/// `hist[b]` = how many bytes of `data` are `b`; `hist` holds 256 bins.
pub fn bytes(dev: &Device, data: &Buffer<'_, u8>, hist: &mut Buffer<'_, u32>) -> Result<()> {
    Algos::new(dev)?.histogram_bytes(data, hist)
}

/// `hist[b]` = how many samples of `data` lie in bin `b` of `hist.len()` even bins over
/// `[lower, upper)`: integers in bin `floor((x - lower) * bins / (upper - lower))`, floats in bin
/// `floor((x - lower) * (bins / (upper - lower)))` computed in `f64` (at most `bins - 1`). Samples
/// outside the range, and NaN, are not counted. An error when `lower >= upper` (or either is NaN), when
/// `hist` is empty, or when it has more than [`MAX_EVEN_BINS`] bins.
pub fn even<T: EvenSample + 'static>(
    dev: &Device,
    data: &Buffer<'_, T>,
    lower: T,
    upper: T,
    hist: &mut Buffer<'_, u32>,
) -> Result<()> {
    Algos::new(dev)?.histogram_even(data, lower, upper, hist)
}

/// Most bins of [`even`].
pub const MAX_EVEN_BINS: usize = 1 << 24;

/// Most samples one histogram counts: every count fits its `u32` bin.
pub const MAX_SAMPLES: usize = u32::MAX as usize;

fn check_len(n: usize) -> Result<()> {
    if n > MAX_SAMPLES {
        fail!(Input, "histogram: {n} samples are more than a u32 count holds ({MAX_SAMPLES})");
    }
    Ok(())
}

impl<'d> Algos<'d> {
    /// [`bytes`] with this object's device.
    pub fn histogram_bytes(&self, data: &Buffer<'_, u8>, hist: &mut Buffer<'_, u32>) -> Result<()> {
        if hist.len() != hb::NUM_BINS {
            fail!(Input, "histogram::bytes: the histogram holds {} bins, not {}", hb::NUM_BINS, hist.len());
        }
        check_len(data.len())?;
        let dev = self.dev;
        hist.zero()?;
        if data.is_empty() {
            return Ok(());
        }
        let p = self.histogram_bytes_plan(data.len())?;
        if p.small {
            dev.launch::<hs::histogram_bytes_small>(
                Launch::linear(p.grid, hs::BLOCK, hs::SHARED_BYTES),
                (data.view(), hist.view_mut()),
            )?;
        } else {
            dev.launch::<hb::histogram_bytes>(
                Launch::linear(p.grid, hb::BLOCK, hb::SHARED_BYTES),
                (data.view(), hist.view_mut()),
            )?;
        }
        Ok(())
    }

    /// [`even`] with this object's device.
    pub fn histogram_even<T: EvenSample + 'static>(
        &self,
        data: &Buffer<'_, T>,
        lower: T,
        upper: T,
        hist: &mut Buffer<'_, u32>,
    ) -> Result<()> {
        // Anything but `Less` (`None` for a NaN bound) is refused.
        if lower.partial_cmp(&upper) != Some(std::cmp::Ordering::Less) {
            fail!(Input, "histogram::even: the range needs lower < upper (got {lower:?} and {upper:?})");
        }
        if hist.is_empty() || hist.len() > MAX_EVEN_BINS {
            fail!(Input, "histogram::even: {} bins; a histogram holds 1 to {MAX_EVEN_BINS}", hist.len());
        }
        check_len(data.len())?;
        let dev = self.dev;
        hist.zero()?;
        if data.is_empty() {
            return Ok(());
        }
        let grid = self.histogram_even_grid::<T>(data.len())?;
        Ok(T::launch(dev, Launch::linear(grid, he::BLOCK, he::SHARED_BYTES), data, lower, upper, hist)?)
    }

    /// The launch of [`bytes`] for `n` bytes on this device ([`plan::histogram_bytes`] with the
    /// kernel's occupancy), after the zeroing of the bins.
    pub fn histogram_bytes_plan(&self, n: usize) -> Result<plan::Histogram> {
        let dev = self.dev;
        let resident = if dev.profile().full_scale() && n > hs::MAX_BYTES {
            self.resident::<hb::histogram_bytes>(|| {
                Ok(dev.max_coresident_blocks::<hb::histogram_bytes>(Dim3::x(hb::BLOCK), hb::SHARED_BYTES)?)
            })?
        } else {
            1
        };
        Ok(plan::histogram_bytes(n, crate::device::target(dev)?, resident))
    }

    /// The blocks of [`even`] for `n` samples of `T` on this device ([`plan::histogram_even`] with the
    /// kernel's occupancy; [`plan::EVEN_BLOCK`] threads each), after the zeroing of the bins.
    pub fn histogram_even_grid<T: EvenSample + 'static>(&self, n: usize) -> Result<u32> {
        let dev = self.dev;
        let resident = if dev.profile().full_scale() { self.resident::<T>(|| Ok(T::resident(dev)?))? } else { 1 };
        Ok(plan::histogram_even(n, crate::device::target(dev)?, resident))
    }
}
