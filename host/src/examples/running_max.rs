//! Host side of `running_max` (exercise 4; 002's `atomicMax`): `atomicMax`, `atomicMin` and `atomicSub`
//! on ints, and the float running maximum by order-preserving keys and by a CAS loop, over inputs with
//! negatives, both zeros, subnormals, infinities and NaNs. Final values are exact, and every thread's
//! old value is checked against the serial-order models.

use super::{EMU_SIZES, Example, GPU_SIZES, RunParams, check_n, finish};
use crate::models::{IntOp, int_op_ok, max_order_ok};
use crate::report::ExampleResult;
use anyhow::Result;
use gpu_host::{Device, Launch, cover};
use gpu_kernels::running_max::{
    BLOCK, KEY_NEG_INF, countdown_sub_i32, float_of_key, running_max_f32_bits, running_max_f32_cas, running_max_i32,
    running_min_i32,
};
use gpu_std::{Global, GlobalMut, Kernel, Output};
use rand::{Rng, SeedableRng, rngs::StdRng};
use std::cmp::Ordering;

/// This example's entry in the catalogue (`host list`, `host run running_max`).
pub const EXAMPLE: Example = Example {
    name: "running_max",
    row: Some(14),
    section: "ex. 4; 002 atomicMax",
    about: "lock-free running max: atomicMax/atomicMin/atomicSub on ints; float max by ordered bits and by CAS (NaN ignored, -0 < +0)",
    gpu_sizes: GPU_SIZES,
    emu_sizes: EMU_SIZES,
    keeps_races: false,
    kept_bugs: &[],
    run,
};

/// A float ordered by IEEE 754 `totalOrder` (`f32::total_cmp`): for non-NaN values the order of the
/// numbers, with `-0.0 < +0.0` — the order the kernels use, defined here independently of their keys.
#[derive(Clone, Copy, Debug)]
struct Total(f32);
impl PartialEq for Total {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Total {}
impl PartialOrd for Total {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Total {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// What a thread's value is as an operand of the maximum: NaNs are ignored (they raise nothing).
fn operand(v: f32) -> Total {
    Total(if v.is_nan() { f32::NEG_INFINITY } else { v })
}

/// The float maximum under the policy: NaNs ignored, -0.0 < +0.0, -inf for no value.
fn reference_max(vals: &[f32]) -> f32 {
    vals.iter().map(|&v| operand(v)).max().map_or(f32::NEG_INFINITY, |t| t.0)
}

/// Launches an int kernel on `vals` with the cell at `init`; returns the final value and the olds.
fn int_case<K: for<'a> Kernel<Args<'a> = (Global<'a, i32>, GlobalMut<'a, i32>, Output<'a, i32>)>>(
    dev: &Device,
    cfg: Launch,
    vals: &[i32],
    init: i32,
) -> Result<(i32, Vec<i32>)> {
    let v = dev.upload("vals", vals)?;
    let cell = dev.filled("cell", 1, init)?;
    let mut olds = dev.filled("olds", vals.len(), 0x5a5a_5a5a)?;
    dev.launch::<K>(cfg, (v.view(), cell.view_mut(), olds.output()))?;
    Ok((cell.read()?[0], olds.read()?))
}

/// The float inputs: a named case each.
fn float_cases(rng: &mut StdRng, n: usize) -> Vec<(&'static str, Vec<f32>)> {
    let nans =
        [f32::NAN, -f32::NAN, f32::from_bits(0x7fc0_0001), f32::from_bits(0xffff_ffff), f32::from_bits(0x7f80_0001)];
    let tiny = f32::from_bits(1); // the smallest subnormal
    // Finite floats over the whole exponent range, both signs.
    let finite = |rng: &mut StdRng| loop {
        let x = f32::from_bits(rng.r#gen());
        if x.is_finite() {
            break x;
        }
    };
    let pick = |rng: &mut StdRng, from: &[f32]| from[rng.gen_range(0..from.len())];
    let mut specials = vec![-0.0, 0.0, f32::NEG_INFINITY, tiny, -tiny, f32::MIN_POSITIVE, -f32::MAX];
    specials.extend(nans);
    let mixed: Vec<f32> =
        (0..n).map(|_| if rng.gen_range(0..8) == 0 { pick(rng, &specials) } else { finite(rng) }).collect();
    let mut non_positive_specials = vec![-0.0, f32::NEG_INFINITY, -tiny, -f32::MIN_POSITIVE];
    non_positive_specials.extend(nans);
    let mut non_positive: Vec<f32> = (0..n)
        .map(|_| if rng.gen_range(0..4) == 0 { pick(rng, &non_positive_specials) } else { -finite(rng).abs() })
        .collect();
    non_positive[rng.gen_range(0..n)] = -0.0; // the maximum is -0.0, exactly
    let zeros: Vec<f32> = (0..n).map(|_| pick(rng, &[-0.0, 0.0, f32::NAN, -0.0])).collect();
    let all_nan: Vec<f32> = (0..n).map(|_| pick(rng, &nans)).collect();
    vec![("mixed", mixed), ("non-positive", non_positive), ("zeros", zeros), ("all NaN", all_nan)]
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("running_max", n, 4)?;
    let mut rng = StdRng::seed_from_u64(p.seed);
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, 0);
    let mut r = ExampleResult::new("running_max", dev.kind(), n, p.seed);

    // Ints over the whole range.
    let vals: Vec<i32> = (0..n).map(|_| rng.r#gen()).collect();
    let max = *vals.iter().max().expect("n >= 1");
    let min = *vals.iter().min().expect("n >= 1");
    let (fin, olds) = int_case::<running_max_i32>(dev, cfg, &vals, i32::MIN)?;
    r.check(
        fin == max && int_op_ok(IntOp::Max, i32::MIN, &vals, &olds, fin),
        format!("atomicMax i32: max {fin} (want {max}); old values a serial order of the updates"),
    );
    let (fin, olds) = int_case::<running_min_i32>(dev, cfg, &vals, i32::MAX)?;
    r.check(
        fin == min && int_op_ok(IntOp::Min, i32::MAX, &vals, &olds, fin),
        format!("atomicMin i32: min {fin} (want {min}); old values a serial order of the updates"),
    );
    // atomicSub: from the sum of the operands (1..=1000 each) plus 12345, down to 12345. The start must
    // fit an i32, which holds for n up to about 2 million.
    let subs: Vec<i32> = (0..n).map(|_| rng.gen_range(1..=1000)).collect();
    let total: i64 = subs.iter().map(|&v| v as i64).sum::<i64>() + 12345;
    anyhow::ensure!(total <= i32::MAX as i64, "running_max: n = {n} is too large for the atomicSub countdown");
    let (fin, olds) = int_case::<countdown_sub_i32>(dev, cfg, &subs, total as i32)?;
    r.check(
        fin == 12345 && int_op_ok(IntOp::Sub, total as i32, &subs, &olds, fin),
        format!("atomicSub i32: {total} counted down to {fin} (want 12345); old values a serial order"),
    );

    for (name, vals) in float_cases(&mut rng, n) {
        let want = reference_max(&vals);
        let ops: Vec<Total> = vals.iter().map(|&v| operand(v)).collect();
        let order_ok = |olds: &[f32], fin: f32| {
            !fin.is_nan()
                && olds.iter().all(|o| !o.is_nan())
                && max_order_ok(
                    Total(f32::NEG_INFINITY),
                    &ops,
                    &olds.iter().map(|&o| Total(o)).collect::<Vec<_>>(),
                    Total(fin),
                )
        };
        let v = dev.upload("vals", &vals)?;

        let cell = dev.filled("cell", 1, KEY_NEG_INF)?;
        let mut olds = dev.filled("olds", n, f32::NAN)?;
        dev.launch::<running_max_f32_bits>(cfg, (v.view(), cell.view_mut(), olds.output()))?;
        let key = cell.read()?[0];
        let fin = float_of_key(key);
        let olds_bits = olds.read()?;
        r.check(
            fin.to_bits() == want.to_bits() && order_ok(&olds_bits, fin),
            format!(
                "float max by order-preserving keys + atomicMax, {name}: {fin:e} ({:#010x}), want {want:e} ({:#010x}); \
                 old values a serial order",
                fin.to_bits(),
                want.to_bits()
            ),
        );

        let cell = dev.filled("cell", 1, f32::NEG_INFINITY)?;
        olds.write(&vec![f32::NAN; n])?;
        dev.launch::<running_max_f32_cas>(cfg, (v.view(), cell.view_mut(), olds.output()))?;
        let fin = cell.read()?[0];
        let olds_cas = olds.read()?;
        r.check(
            fin.to_bits() == want.to_bits() && order_ok(&olds_cas, fin),
            format!(
                "float max by CAS loop, {name}: {fin:e} ({:#010x}), want {want:e} ({:#010x}); old values a serial order",
                fin.to_bits(),
                want.to_bits()
            ),
        );
        r.show.push(format!("float max, {name}: {want:e} (bits {:#010x})", want.to_bits()));
    }
    Ok(finish(dev, r, false))
}
