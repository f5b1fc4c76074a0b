//! Device-wide reductions: [`sum`], [`min`], [`max`] of `u32`, `i32`, `u64`, `i64`, `f32`, `f64`, and
//! [`deterministic_sum`] of `f32` and `f64`.
//!
//! Integer sums wrap (as CUB's and torch's). Float sums are rounded in an order that depends on the
//! grid, so their bits may differ between GPUs (the relative error is at most about `log2(n) * eps`
//! times the sum of magnitudes); [`deterministic_sum`]'s bits depend only on the input, the same on
//! every GPU and on the emulator. Float minima and maxima are NaN when any element is, and order -0.0
//! before +0.0. An empty input gives the identity: 0, the type's largest value (`min`; `+inf` for
//! floats) or smallest (`max`; `-inf`).
use crate::error::{Result, fail};
use crate::kernels::Reducible;
use crate::{Algos, Max, Min, Sum, plan};
use gpu_algos_kernels::reduce as rk;
use gpu_host::{Buffer, Device, Launch};

/// The wrapping (integers) or rounded (floats) sum of `x`.
pub fn sum<T: Reducible<Sum>>(dev: &Device, x: &Buffer<'_, T>) -> Result<T> {
    Algos::new(dev)?.sum(x)
}
/// The smallest element of `x`.
pub fn min<T: Reducible<Min>>(dev: &Device, x: &Buffer<'_, T>) -> Result<T> {
    Algos::new(dev)?.min(x)
}
/// The largest element of `x`.
pub fn max<T: Reducible<Max>>(dev: &Device, x: &Buffer<'_, T>) -> Result<T> {
    Algos::new(dev)?.max(x)
}
/// The sum of `x` whose bits depend only on `x`: the same on any GPU and on the emulator.
pub fn deterministic_sum<T: Reducible<Sum> + DeterministicFloat>(dev: &Device, x: &Buffer<'_, T>) -> Result<T> {
    Algos::new(dev)?.deterministic_sum(x)
}

/// The float types of [`deterministic_sum`]: `f32`, `f64`.
pub trait DeterministicFloat: Copy {}
impl DeterministicFloat for f32 {}
impl DeterministicFloat for f64 {}

impl<'d> Algos<'d> {
    /// [`sum`] with this object's storage.
    pub fn sum<T: Reducible<Sum>>(&self, x: &Buffer<'_, T>) -> Result<T> {
        self.reduce::<T, Sum>(x, false)
    }
    /// [`min`] with this object's storage.
    pub fn min<T: Reducible<Min>>(&self, x: &Buffer<'_, T>) -> Result<T> {
        self.reduce::<T, Min>(x, false)
    }
    /// [`max`] with this object's storage.
    pub fn max<T: Reducible<Max>>(&self, x: &Buffer<'_, T>) -> Result<T> {
        self.reduce::<T, Max>(x, false)
    }
    /// [`deterministic_sum`] with this object's storage.
    pub fn deterministic_sum<T: Reducible<Sum> + DeterministicFloat>(&self, x: &Buffer<'_, T>) -> Result<T> {
        self.reduce::<T, Sum>(x, true)
    }

    /// The reduction of `x` with `O` into `out[0]` (a buffer of one element), without copying it to
    /// the host: for a pipeline whose next kernel reads it.
    pub fn reduce_into<T: Reducible<O> + 'static, O: 'static>(
        &self,
        x: &Buffer<'_, T>,
        out: &Buffer<'_, T>,
        deterministic: bool,
    ) -> Result<()> {
        if out.len() != 1 {
            fail!(Input, "reduce: the output holds one element, not {}", out.len());
        }
        let dev = self.dev;
        let n = x.len();
        let p = self.reduce_plan::<T, O>(n, deterministic)?;
        match p {
            plan::Reduce::Empty => Ok(out.write(&[T::identity()])?),
            plan::Reduce::Small => {
                if n / T::LANES > rk::SMALL_KERNEL_LIMIT {
                    fail!(Input, "reduce: {n} elements are more than the small kernel indexes");
                }
                Ok(T::launch_small(dev, Launch::linear(1, rk::BLOCK, rk::SHARED_BYTES), x, out)?)
            }
            plan::Reduce::Fast { grid, vblocks } => {
                self.with_reduce_scratch(plan::reduce_partials(p), |ticket, partials| {
                    let cfg = Launch::linear(grid, rk::BLOCK, rk::SHARED_BYTES);
                    Ok(T::launch_fast(dev, cfg, x, vblocks, partials, ticket, out)?)
                })
            }
        }
    }

    /// The launch a reduction of `n` elements of `T` with `O` takes on this device ([`plan::reduce`] with
    /// the kernel's occupancy): what [`Algos::reduce_into`] launches.
    pub fn reduce_plan<T: Reducible<O> + 'static, O: 'static>(
        &self,
        n: usize,
        deterministic: bool,
    ) -> Result<plan::Reduce> {
        let dev = self.dev;
        // The occupancy query only where the grid depends on it.
        let resident =
            if n > 0 && !rk::small_input::<T>(n) { self.resident::<(T, O)>(|| Ok(T::resident(dev)?))? } else { 1 };
        Ok(plan::reduce::<T>(n, crate::device::target(dev)?, resident, deterministic))
    }

    fn reduce<T: Reducible<O> + 'static, O: 'static>(&self, x: &Buffer<'_, T>, deterministic: bool) -> Result<T> {
        if x.is_empty() {
            return Ok(T::identity());
        }
        let out = self.dev.filled("reduce result", 1, T::identity())?;
        self.reduce_into::<T, O>(x, &out, deterministic)?;
        Ok(out.read_at(0)?)
    }
}
