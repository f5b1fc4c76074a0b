//! The optimised tiers of `reduce_sum`: gpu-algos' device-wide sums (`gpu_algos::reduce`) of `f32`,
//! `f64` and `i32` at the memory's bandwidth, and its deterministic `f32` sum, each checked (and timed
//! on a GPU) next to the chapter's kernel. The runner calls the library exactly as a user would
//! ([`gpu_algos::Algos::reduce_into`]), so every tier's figure is the library's; only the check that
//! the deterministic sum's bits do not depend on the grid launches its kernel directly, on other grids.

use super::{RunParams, measure_call};
use crate::report::ExampleResult;
use crate::verify::{kahan_sum, within};
use anyhow::Result;
use gpu_algos::{Algos, Reducible, Sum, plan};
use gpu_algos_kernels::reduce::{BLOCK, SHARED_BYTES, UNROLL, deterministic_vblocks, reduce_sum_f32};
use gpu_host::{Buffer, Device, Launch};
use gpu_std::Pod;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// Grids the deterministic sum's kernel is launched with besides the library's: its bits must not
/// change.
const OTHER_GRIDS: &[u32] = &[1, 7, 64];

fn bits<T: Pod>(v: T) -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: `T` is a Pod scalar of at most 8 bytes, without padding.
    unsafe { std::ptr::copy_nonoverlapping(&v as *const T as *const u8, b.as_mut_ptr(), size_of::<T>()) };
    u64::from_le_bytes(b)
}

/// Rounding steps on the longest path from an element to the result, for `n` elements of `lanes`
/// per vector over `vblocks` virtual blocks: the vector's lanes, the thread's accumulator (one term per
/// tile of its virtual block), the four accumulators, the warp and block trees, the partials in the last
/// block, its two trees, the head and tail.
fn depth(n: usize, lanes: usize, vblocks: u32) -> usize {
    let tile = UNROLL * BLOCK as usize;
    let tiles_per_vblock = (n / lanes).div_ceil(tile).div_ceil(vblocks as usize);
    2 + tiles_per_vblock + 2 + 10 + (vblocks as usize).div_ceil(BLOCK as usize) + 10 + 2 * lanes
}

/// The virtual blocks whose bits the library's sum of `n` elements of `T` gives on `dev`.
fn library_vblocks<T: Reducible<Sum>>(dev: &Device, n: usize, deterministic: bool) -> Result<u32> {
    let profile = dev.profile();
    let target = plan::Target { gpu: profile.full_scale(), sms: profile.sms };
    let resident = T::resident(dev)?;
    Ok(match plan::reduce::<T>(n, target, resident, deterministic) {
        plan::Reduce::Fast { vblocks, .. } => vblocks,
        _ => 1,
    })
}

/// One tier: the library's sum of `x` into `out`, checked by `check`, then timed as `name` (and checked
/// again: the result after the timed calls has the same bits).
struct Tier<'a, 'd, T: Pod> {
    algos: &'a Algos<'d>,
    x: Buffer<'d, T>,
    out: Buffer<'d, T>,
}

impl<'a, 'd, T: Reducible<Sum>> Tier<'a, 'd, T> {
    fn new(algos: &'a Algos<'d>, input: &[T]) -> Result<Self> {
        let dev = algos.device();
        Ok(Tier { algos, x: dev.upload("input", input)?, out: dev.filled("out", 1, T::default())? })
    }
    fn run(&self, deterministic: bool) -> Result<T> {
        self.algos.reduce_into::<T, Sum>(&self.x, &self.out, deterministic)?;
        Ok(self.out.read_at(0)?)
    }
    fn time(&self, p: &RunParams, r: &mut ExampleResult, name: &str, deterministic: bool, first: T) -> Result<()> {
        let dev = self.algos.device();
        let bytes = self.x.len() * size_of::<T>();
        let call = || Ok(self.algos.reduce_into::<T, Sum>(&self.x, &self.out, deterministic)?);
        measure_call(dev, p, r, name, bytes, &|| Ok(()), &call)?;
        if p.reps > 0 && dev.profile().can_time {
            let again = self.out.read_at(0)?;
            r.check(
                bits(again) == bits(first),
                format!("{name}: the result after {} timed calls has the same bits ({again:?})", p.reps),
            );
        }
        Ok(())
    }
}

/// `reduce_sum_f32` with `vblocks` virtual blocks on `grid` blocks (a grid the library does not
/// choose): the result.
fn on_grid(dev: &Device, x: &Buffer<'_, f32>, vblocks: u32, grid: u32) -> Result<f32> {
    let partials = dev.filled("partials", vblocks as usize, 0u64)?;
    let ticket = dev.filled("ticket", 1, 0u32)?;
    let out = dev.filled("out", 1, 0f32)?;
    let args = (x.view(), vblocks, partials.view_mut(), ticket.view_mut(), out.view_mut());
    dev.launch::<reduce_sum_f32>(Launch::linear(grid, BLOCK, SHARED_BYTES), args)?;
    Ok(out.read_at(0)?)
}

/// The deterministic sum of `input` on `dev`, run `k` of several: run `k` uses the `k`-th of the
/// library's call and `reduce_sum_f32` on 1, 7 and 64 blocks (on the emulator, at most 8) with the
/// same virtual blocks. The sum and the launch's name.
pub(crate) fn deterministic_sum(dev: &Device, input: &[f32], k: usize) -> Result<(f32, String)> {
    let grids = other_grids(dev);
    let n = input.len();
    let x = dev.upload("input", input)?;
    if k.is_multiple_of(grids.len() + 1) || reduce_small(n) {
        return Ok((gpu_algos::reduce::deterministic_sum(dev, &x)?, "gpu_algos::reduce::deterministic_sum".into()));
    }
    let grid = grids[k % (grids.len() + 1) - 1];
    Ok((on_grid(dev, &x, deterministic_vblocks::<f32>(n), grid)?, format!("grid {grid}")))
}

fn reduce_small(n: usize) -> bool {
    gpu_algos_kernels::reduce::small_input::<f32>(n)
}

fn other_grids(dev: &Device) -> Vec<u32> {
    OTHER_GRIDS.iter().copied().filter(|&g| dev.profile().full_scale() || g <= 8).collect()
}

/// The error bound of the deterministic sum of `n` elements whose magnitudes add to `sum_abs`.
pub(crate) fn deterministic_bound(n: usize, sum_abs: f64) -> f64 {
    depth(n, 4, deterministic_vblocks::<f32>(n)) as f64 * (f32::EPSILON as f64 / 2.0) * sum_abs
}

/// Runs every tier on `input` (the chapter example's input) and records the checks and times in `r`.
pub(crate) fn run_tiers(
    dev: &Device,
    p: &RunParams,
    r: &mut ExampleResult,
    input: &[f32],
    seed_case: bool,
) -> Result<()> {
    let n = input.len();
    let algos = Algos::new(dev)?;
    let sum_abs = kahan_sum(input.iter().map(|&x| (x as f64).abs()));
    let want = kahan_sum(input.iter().map(|&x| x as f64));

    // f32: one virtual block per block.
    let t = Tier::new(&algos, input)?;
    let got = t.run(false)?;
    let vblocks = library_vblocks::<f32>(dev, n, false)?;
    check_f32(r, "reduce::sum f32", got, want, sum_abs, n, vblocks, seed_case);
    t.time(p, r, "reduce::sum f32", false, got)?;

    // f32, deterministic: virtual blocks from n alone; the bits must not depend on the grid.
    let det = t.run(true)?;
    let det_vblocks = library_vblocks::<f32>(dev, n, true)?;
    check_f32(r, "reduce::deterministic_sum f32", det, want, sum_abs, n, det_vblocks, seed_case);
    if !reduce_small(n) {
        let mut same = true;
        let mut launches = vec!["the library's grid".to_string()];
        for grid in other_grids(dev) {
            same &= bits(on_grid(dev, &t.x, det_vblocks, grid)?) == bits(det);
            launches.push(format!("grid {grid}"));
        }
        r.check(
            same,
            format!(
                "reduce::deterministic_sum f32: {det_vblocks} virtual blocks give the same bits ({:#010x}) on {}",
                det.to_bits(),
                launches.join(", ")
            ),
        );
    }
    t.time(p, r, "reduce::deterministic_sum f32", true, det)?;
    drop(t);

    // f64: the same values.
    let wide: Vec<f64> = input.iter().map(|&x| x as f64).collect();
    let t = Tier::new(&algos, &wide)?;
    let got = t.run(false)?;
    let bound = (depth(n, 2, library_vblocks::<f64>(dev, n, false)?) + 4) as f64 * (f64::EPSILON / 2.0) * sum_abs;
    r.check(
        within(got, want, bound) && (!seed_case || got == n as f64),
        format!("reduce::sum f64: sum {got} vs Kahan {want:.6} (|err| {:.3e} <= {bound:.3e})", (got - want).abs()),
    );
    t.time(p, r, "reduce::sum f64", false, got)?;
    drop(t);

    // i32: seeded integers in [-1000, 1000]; the wrapping sum is exact.
    let mut rng = StdRng::seed_from_u64(p.seed.wrapping_add(0x132));
    let ints: Vec<i32> = (0..n).map(|_| rng.gen_range(-1000..=1000)).collect();
    let want_i = ints.iter().fold(0i32, |a, &x| a.wrapping_add(x));
    let t = Tier::new(&algos, &ints)?;
    let got = t.run(false)?;
    r.check(got == want_i, format!("reduce::sum i32: sum {got} (exactly {want_i} expected)"));
    t.time(p, r, "reduce::sum i32", false, got)?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn check_f32(
    r: &mut ExampleResult,
    name: &str,
    got: f32,
    want: f64,
    sum_abs: f64,
    n: usize,
    vblocks: u32,
    seed_case: bool,
) {
    if seed_case {
        r.check(got == n as f32, format!("{name}: sum of {n} ones = {got} (exactly {n} expected)"));
        return;
    }
    let bound = depth(n, 4, vblocks) as f64 * (f32::EPSILON as f64 / 2.0) * sum_abs + 1e-30;
    let err = (got as f64 - want).abs();
    r.check(
        within(got as f64, want, bound),
        format!("{name}: sum {got} vs Kahan f64 {want:.3} (|err| {err:.3e} <= bound {bound:.3e})"),
    );
}
