//! The optimised tiers of `reduce_sum` (gpu-kernels' `reduce_fast`): `f32`, `f64` and `i32` sums at
//! the memory's bandwidth, and the deterministic `f32` sum, each checked (and timed on a GPU) next to
//! the chapter's kernel. Each tier is launched as a user's launcher would: `reduce_small_*` on one
//! block for small inputs ([`small_input`]), else `reduce_fast_*` on the tier's grid.

use super::{RunParams, measure_tier};
use crate::device::{Buffer, Device, Launch};
use crate::report::ExampleResult;
use crate::verify::{kahan_sum, within};
use anyhow::Result;
use gpu_kernels::reduce_fast::{
    BLOCK, SHARED_BYTES, Summand, UNROLL, deterministic_grid, deterministic_vblocks, fast_grid, reduce_fast_f32,
    reduce_fast_f64, reduce_fast_i32, reduce_small_f32, reduce_small_f64, reduce_small_i32, small_input,
};
use gpu_std::{Dim3, Global, GlobalMut, Kernel, Pod};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// Grids the deterministic sum is launched with besides the launcher's: its bits must not change.
const OTHER_GRIDS: &[u32] = &[1, 7, 64];
/// Blocks per launch on the emulator, whose cost grows with the number of threads.
const EMU_GRID: u32 = 4;

/// A sum kernel of `reduce_fast`, with its element type and its small-input kernel.
trait SumKernel:
    for<'a> Kernel<
    Args<'a> = (Global<'a, Self::T>, u32, GlobalMut<'a, Self::T>, GlobalMut<'a, u32>, GlobalMut<'a, Self::T>),
>
{
    type T: Summand + Pod;
    /// `reduce_small_*` of the same type.
    type Small: for<'a> Kernel<Args<'a> = (Global<'a, Self::T>, GlobalMut<'a, Self::T>)>;
}
impl SumKernel for reduce_fast_f32 {
    type T = f32;
    type Small = reduce_small_f32;
}
impl SumKernel for reduce_fast_f64 {
    type T = f64;
    type Small = reduce_small_f64;
}
impl SumKernel for reduce_fast_i32 {
    type T = i32;
    type Small = reduce_small_i32;
}

/// What a launcher launches for one sum: `reduce_small_*` on one block, or `reduce_fast_*` with
/// `vblocks` virtual blocks on `grid` blocks.
#[derive(Clone, Copy, Debug)]
enum Plan {
    Small,
    Fast { vblocks: u32, grid: u32 },
}

impl Plan {
    /// `reduce_small` for the small inputs, else `reduce_fast` on `(vblocks, grid)`.
    fn for_input<T>(n: usize, vblocks: u32, grid: u32) -> Plan {
        if small_input::<T>(n) { Plan::Small } else { Plan::Fast { vblocks, grid } }
    }
    /// The virtual blocks whose bits the launch gives (one for `reduce_small`).
    fn vblocks(self) -> u32 {
        match self {
            Plan::Small => 1,
            Plan::Fast { vblocks, .. } => vblocks,
        }
    }
}

/// The input and the kernel's workspace: one partial per virtual block, the ticket (zero between launches),
/// the result.
struct Sum<'d, T: Pod> {
    dev: &'d Device,
    input: Buffer<'d, T>,
    partials: Buffer<'d, T>,
    ticket: Buffer<'d, u32>,
    out: Buffer<'d, T>,
}

impl<'d, T: Summand + Pod> Sum<'d, T> {
    fn new(dev: &'d Device, input: &[T], max_vblocks: u32) -> Result<Self> {
        Ok(Sum {
            dev,
            input: dev.upload("input", input)?,
            partials: dev.filled("partials", max_vblocks as usize, T::ZERO)?,
            ticket: dev.filled("ticket", 1, 0u32)?,
            out: dev.filled("out", 1, T::ZERO)?,
        })
    }
    fn cfg(grid: u32) -> Launch {
        Launch::linear(grid, BLOCK, SHARED_BYTES)
    }
    /// One launch of `plan`; the result.
    fn run<K: SumKernel<T = T>>(&self, plan: Plan) -> Result<T> {
        match plan {
            Plan::Small => self.dev.launch::<K::Small>(Self::cfg(1), (self.input.view(), self.out.view_mut()))?,
            Plan::Fast { vblocks, grid } => {
                let args =
                    (self.input.view(), vblocks, self.partials.view_mut(), self.ticket.view_mut(), self.out.view_mut());
                self.dev.launch::<K>(Self::cfg(grid), args)?
            }
        }
        Ok(self.out.read()?[0])
    }
    /// Times `plan` (GPU) as tier `name`, then checks that the result after the timed launches has the
    /// bits of `first` (the ticket was reset by every launch).
    fn time<K: SumKernel<T = T>>(
        &self,
        p: &RunParams,
        r: &mut ExampleResult,
        name: &str,
        plan: Plan,
        first: T,
    ) -> Result<()> {
        let bytes = self.input.len() * size_of::<T>();
        match plan {
            Plan::Small => {
                let args = (self.input.view(), self.out.view_mut());
                measure_tier::<K::Small>(self.dev, p, r, name, Self::cfg(1), args, bytes, &|| Ok(()))?
            }
            Plan::Fast { vblocks, grid } => {
                let args =
                    (self.input.view(), vblocks, self.partials.view_mut(), self.ticket.view_mut(), self.out.view_mut());
                measure_tier::<K>(self.dev, p, r, name, Self::cfg(grid), args, bytes, &|| Ok(()))?
            }
        }
        if p.reps > 0 && self.dev.is_gpu() {
            let again = self.out.read()?[0];
            r.check(
                bits(again) == bits(first),
                format!("{name}: the result after {} timed launches has the same bits ({again:?})", p.reps),
            );
        }
        Ok(())
    }
}

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

/// Blocks of the fast tier of `K`: one per resident slot on a GPU (occupancy x SMs), a few on the
/// emulator.
fn resident_grid<K: Kernel>(dev: &Device) -> Result<u32> {
    let resident = dev.max_coresident_blocks::<K>(Dim3::x(BLOCK), SHARED_BYTES)?;
    Ok(if dev.is_gpu() { resident } else { resident.min(EMU_GRID) })
}

/// Blocks (and virtual blocks) of the fast tier of `K` for `n` elements of `lanes` per vector: on a GPU
/// [`fast_grid`] (one per resident slot, fewer for small inputs), a few on the emulator.
fn launcher_grid<K: Kernel>(dev: &Device, n: usize, lanes: usize) -> Result<u32> {
    let resident = resident_grid::<K>(dev)?;
    Ok(if dev.is_gpu() { fast_grid(n / lanes, resident) } else { resident })
}

/// The launcher's plan for the deterministic sum of `n` elements of `T` on `dev`.
fn deterministic_plan<K: SumKernel>(dev: &Device, n: usize) -> Result<Plan> {
    let vblocks = deterministic_vblocks::<K::T>(n);
    Ok(Plan::for_input::<K::T>(n, vblocks, deterministic_grid::<K::T>(n, resident_grid::<K>(dev)?)))
}

/// `reduce_fast` with the deterministic sum's virtual blocks on each of [`OTHER_GRIDS`] (on the
/// emulator, those of at most `2 * EMU_GRID` blocks): its bits must be the launcher's.
fn other_grid_plans(dev: &Device, n: usize) -> impl Iterator<Item = Plan> + '_ {
    let vblocks = deterministic_vblocks::<f32>(n);
    OTHER_GRIDS
        .iter()
        .copied()
        .filter(|&g| dev.is_gpu() || g <= 2 * EMU_GRID)
        .map(move |grid| Plan::Fast { vblocks, grid })
}

/// A launch's name in a report: `reduce_small`, or `reduce_fast` on its grid.
fn plan_name(plan: Plan) -> String {
    match plan {
        Plan::Small => "reduce_small".to_string(),
        Plan::Fast { grid, .. } => format!("grid {grid}"),
    }
}

/// The deterministic sum of `input` on `dev`, run `k` of several: run `k` uses the `k`-th launch of
/// the launcher's and `reduce_fast` on 1, 7 and 64 blocks (on the emulator, at most `2 * EMU_GRID`).
/// The sum and the launch's name.
pub(crate) fn deterministic_sum(dev: &Device, input: &[f32], k: usize) -> Result<(f32, String)> {
    let n = input.len();
    let plans: Vec<Plan> =
        std::iter::once(deterministic_plan::<reduce_fast_f32>(dev, n)?).chain(other_grid_plans(dev, n)).collect();
    let plan = plans[k % plans.len()];
    let s = Sum::new(dev, input, plan.vblocks())?;
    Ok((s.run::<reduce_fast_f32>(plan)?, plan_name(plan)))
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
    let grid = launcher_grid::<reduce_fast_f32>(dev, n, 4)?;
    let fast = Plan::for_input::<f32>(n, grid, grid);
    let det_plan = deterministic_plan::<reduce_fast_f32>(dev, n)?;
    let det_vblocks = det_plan.vblocks();
    let sum_abs = kahan_sum(input.iter().map(|&x| (x as f64).abs()));
    let want = kahan_sum(input.iter().map(|&x| x as f64));

    // f32, fast: one virtual block per block.
    let s = Sum::new(dev, input, fast.vblocks().max(det_vblocks))?;
    let got = s.run::<reduce_fast_f32>(fast)?;
    check_f32(r, "reduce_fast_f32", got, want, sum_abs, n, fast.vblocks(), seed_case);
    s.time::<reduce_fast_f32>(p, r, "reduce_fast_f32", fast, got)?;

    // f32, deterministic: virtual blocks from n alone; the bits must not depend on the grid (nor on
    // whether reduce_small or reduce_fast sums one virtual block).
    let det = s.run::<reduce_fast_f32>(det_plan)?;
    check_f32(r, "reduce_deterministic_f32", det, want, sum_abs, n, det_vblocks, seed_case);
    let mut same = true;
    let mut launches = vec![plan_name(det_plan)];
    for plan in other_grid_plans(dev, n) {
        same &= bits(s.run::<reduce_fast_f32>(plan)?) == bits(det);
        launches.push(plan_name(plan));
    }
    r.check(
        same,
        format!(
            "reduce_deterministic_f32: {det_vblocks} virtual blocks give the same bits ({:#010x}) on {}",
            det.to_bits(),
            launches.join(", ")
        ),
    );
    s.time::<reduce_fast_f32>(p, r, "reduce_deterministic_f32", det_plan, det)?;
    drop(s);

    // f64: the same values.
    let wide: Vec<f64> = input.iter().map(|&x| x as f64).collect();
    let grid = launcher_grid::<reduce_fast_f64>(dev, n, 2)?;
    let plan = Plan::for_input::<f64>(n, grid, grid);
    let s = Sum::new(dev, &wide, plan.vblocks())?;
    let got = s.run::<reduce_fast_f64>(plan)?;
    let bound = (depth(n, 2, plan.vblocks()) + 4) as f64 * (f64::EPSILON / 2.0) * sum_abs;
    r.check(
        within(got, want, bound) && (!seed_case || got == n as f64),
        format!("reduce_fast_f64: sum {got} vs Kahan {want:.6} (|err| {:.3e} <= {bound:.3e})", (got - want).abs()),
    );
    s.time::<reduce_fast_f64>(p, r, "reduce_fast_f64", plan, got)?;
    drop(s);

    // i32: seeded integers in [-1000, 1000]; the wrapping sum is exact.
    let mut rng = StdRng::seed_from_u64(p.seed.wrapping_add(0x132));
    let ints: Vec<i32> = (0..n).map(|_| rng.gen_range(-1000..=1000)).collect();
    let want_i = ints.iter().fold(0i32, |a, &x| a.wrapping_add(x));
    let grid = launcher_grid::<reduce_fast_i32>(dev, n, 4)?;
    let plan = Plan::for_input::<i32>(n, grid, grid);
    let s = Sum::new(dev, &ints, plan.vblocks())?;
    let got = s.run::<reduce_fast_i32>(plan)?;
    r.check(got == want_i, format!("reduce_fast_i32: sum {got} (exactly {want_i} expected)"));
    s.time::<reduce_fast_i32>(p, r, "reduce_fast_i32", plan, got)?;
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
