//! Device-wide prefix sums in one pass: [`inclusive_sum`] (`out[i] = x[0] + … + x[i]`) and
//! [`exclusive_sum`] (`out[i] = x[0] + … + x[i - 1]`, `out[0] = 0`), into another buffer or in place,
//! for `u32`, `i32`, `u64`, `i64` (wrapping, exact), `f32` and `f64`.
//!
//! **Float error.** Additions are rounded in an order fixed by the tile shape and the look-back: for
//! an element of tile `t` (tiles of [`crate::plan::scan`]'s `block * items` elements),
//! `|out[i] - exact| <= (t + 64) * u * sum(|x[0..=i]|)` with `u = 2^-24` (`f32`) or `2^-53` (`f64`).
//! The bits may depend on the schedule (a tile's prefix can come from a nearer or a farther tile).
use crate::error::{Result, fail};
use crate::kernels::Scannable;
use crate::{Algos, plan};
use gpu_algos_kernels::scan::{ERROR_GAVE_UP, shared_bytes_of};
use gpu_host::{Buffer, Device, Launch};

/// `out[i] = x[0] + … + x[i]`; `out` has `x`'s length.
pub fn inclusive_sum<T: Scannable>(dev: &Device, x: &Buffer<'_, T>, out: &mut Buffer<'_, T>) -> Result<()> {
    Algos::new(dev)?.inclusive_sum(x, out)
}
/// `out[i] = x[0] + … + x[i - 1]`, `out[0] = 0`; `out` has `x`'s length.
pub fn exclusive_sum<T: Scannable>(dev: &Device, x: &Buffer<'_, T>, out: &mut Buffer<'_, T>) -> Result<()> {
    Algos::new(dev)?.exclusive_sum(x, out)
}
/// [`inclusive_sum`] of `data` into itself.
pub fn inclusive_sum_in_place<T: Scannable>(dev: &Device, data: &mut Buffer<'_, T>) -> Result<()> {
    Algos::new(dev)?.inclusive_sum_in_place(data)
}
/// [`exclusive_sum`] of `data` into itself.
pub fn exclusive_sum_in_place<T: Scannable>(dev: &Device, data: &mut Buffer<'_, T>) -> Result<()> {
    Algos::new(dev)?.exclusive_sum_in_place(data)
}

impl<'d> Algos<'d> {
    /// [`inclusive_sum`] with this object's storage.
    pub fn inclusive_sum<T: Scannable>(&self, x: &Buffer<'_, T>, out: &mut Buffer<'_, T>) -> Result<()> {
        self.scan(x, Some(out), false)
    }
    /// [`exclusive_sum`] with this object's storage.
    pub fn exclusive_sum<T: Scannable>(&self, x: &Buffer<'_, T>, out: &mut Buffer<'_, T>) -> Result<()> {
        self.scan(x, Some(out), true)
    }
    /// [`inclusive_sum_in_place`] with this object's storage.
    pub fn inclusive_sum_in_place<T: Scannable>(&self, data: &mut Buffer<'_, T>) -> Result<()> {
        self.scan(data, None, false)
    }
    /// [`exclusive_sum_in_place`] with this object's storage.
    pub fn exclusive_sum_in_place<T: Scannable>(&self, data: &mut Buffer<'_, T>) -> Result<()> {
        self.scan(data, None, true)
    }

    /// The scan of `x` into `out`, or in place when `out` is `None`.
    fn scan<T: Scannable>(&self, x: &Buffer<'_, T>, out: Option<&mut Buffer<'_, T>>, exclusive: bool) -> Result<()> {
        let n = x.len();
        if let Some(out) = &out
            && out.len() != n
        {
            fail!(Input, "scan: the output holds {} elements, the input {n}", out.len());
        }
        if n > plan::scan_max_len::<T>() {
            fail!(Input, "scan: {n} elements are more than one launch's tiles hold ({})", plan::scan_max_len::<T>());
        }
        if n == 0 {
            return Ok(());
        }
        let p = plan::scan::<T>(n);
        let cfg = Launch::linear(p.tiles, p.block, shared_bytes_of::<T>());
        let dev = self.dev;
        self.with_scan_state(p.state_words, p.zero_state, |state, epoch| {
            match &out {
                Some(out) => T::launch(dev, cfg, exclusive, x, out, state, epoch)?,
                None => T::launch_in_place(dev, cfg, exclusive, x, state, epoch)?,
            }
            // A tile that waited past its bound for the tile before it set the error word: the result
            // is wrong, and the state must be zeroed before it is used again.
            if p.tiles > 1 && state.read_at(1)? & ERROR_GAVE_UP != 0 {
                state.zero()?;
                fail!(GaveUp, "scan: a tile gave up waiting for the tiles before it (the result is not valid)");
            }
            Ok(())
        })
    }
}
