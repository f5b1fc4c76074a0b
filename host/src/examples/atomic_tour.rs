//! Host side of `atomic_tour` (§5.5): every atomic of the chapter on `int`, `unsigned int`,
//! `unsigned long long`, `float` and `double`, all threads on one cell per operation. Each final value
//! and each thread's old value is checked against the models shared with `primitives`; the old values
//! of `atomicAdd(p, 1)` must be exactly `{0, ..., n-1}`; elements of threads past `n` stay untouched.

use super::{EMU_SIZES, Example, RunParams, Skip, check_n, finish};
use crate::models::{IntOp, ModelFloat, Num, exch_order_ok, float_add_order_ok, int_op_ok, sorted};
use crate::report::ExampleResult;
use anyhow::Result;
use gpu_host::{Device, Launch, cover};
use gpu_kernels::atomic_tour::*;
use gpu_std::{Global, GlobalMut, Kernel, Output, Pod};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run atomic_tour`).
pub const EXAMPLE: Example = Example {
    name: "atomic_tour",
    row: Some(15),
    section: "§5.5; 002",
    about: "every atomic on int, unsigned, u64, float, double under contention; atomicAdd(1) olds = {0..n-1}",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, 4097, MAX_N],
    emu_sizes: EMU_SIZES,
    keeps_races: false,
    kept_bugs: &[],
    run,
};

/// Largest n: every thread of the launch contends for one cell per operation, including the
/// compare-and-swap loops, whose retries grow with the square of the contending threads (2^20
/// threads would take minutes); and the float sums must stay exact (`float` holds every integer up
/// to 2^24, and its operands add at most 8 per thread). The same cap as `primitives`.
pub const MAX_N: usize = super::primitives::MAX_ATOMIC_THREADS;

/// Launches a tour kernel with the cells at `inits`; returns the cells and the old values
/// (operation `k`, thread `i` at `k * threads + i`), poisoned before the launch.
fn launch<T: Pod, K: for<'a> Kernel<Args<'a> = (Global<'a, T>, Global<'a, T>, GlobalMut<'a, T>, Output<'a, T>)>>(
    dev: &Device,
    cfg: Launch,
    small: &[T],
    bits: &[T],
    inits: &[T],
    poison: T,
) -> Result<(Vec<T>, Vec<T>)> {
    let threads = cfg.grid.x as usize * cfg.block.x as usize;
    let s = dev.upload("small", small)?;
    let b = dev.upload("bits", bits)?;
    let cells = dev.upload("cells", inits)?;
    let mut olds = dev.filled("olds", inits.len() * threads, poison)?;
    dev.launch::<K>(cfg, (s.view(), b.view(), cells.view_mut(), olds.output()))?;
    Ok((cells.read()?, olds.read()?))
}

/// Operation `k`'s old values, one per thread below `n`.
fn row<T: Copy>(olds: &[T], k: usize, threads: usize, n: usize) -> Vec<T> {
    olds[k * threads..k * threads + n].to_vec()
}

/// Runs the integer tour of `T` (`ops` operations) and checks every cell and every old value.
fn int_tour<T: Num, K: for<'a> Kernel<Args<'a> = (Global<'a, T>, Global<'a, T>, GlobalMut<'a, T>, Output<'a, T>)>>(
    dev: &Device,
    cfg: Launch,
    rng: &mut StdRng,
    n: usize,
    ops: usize,
    name: &str,
    r: &mut ExampleResult,
) -> Result<()> {
    let small: Vec<T> = (0..n).map(|_| T::from_i(rng.gen_range(1..100))).collect();
    let bits: Vec<T> = (0..n).map(|_| T::from_i(rng.r#gen::<u64>() as i128)).collect();
    let (lo, hi) =
        if T::SIGNED { (-(1i128 << (T::BITS - 1)), (1i128 << (T::BITS - 1)) - 1) } else { (0, (1i128 << T::BITS) - 1) };
    // (operation, name, model, initial value, operands); the cells are in operation order.
    let ones = vec![T::from_i(1); n];
    let mut rows: Vec<(usize, &str, IntOp, i128, &[T])> = vec![
        (ADD_ONE, "atomicAdd(p, 1)", IntOp::Add, 0, &ones[..]),
        (ADD, "atomicAdd", IntOp::Add, 5, &small[..]),
        (SUB, "atomicSub", IntOp::Sub, 1 << 30, &small[..]),
        (EXCH, "atomicExch", IntOp::Exch, 77, &bits[..]),
        (MIN, "atomicMin", IntOp::Min, hi, &bits[..]),
        (MAX, "atomicMax", IntOp::Max, lo, &bits[..]),
        (AND, "atomicAnd", IntOp::And, -1, &bits[..]),
        (OR, "atomicOr", IntOp::Or, 0, &bits[..]),
        (XOR, "atomicXor", IntOp::Xor, 12345, &bits[..]),
        (CAS, "atomicCAS loop (+1)", IntOp::CasIncrement, 0, &small[..]),
    ];
    if ops == U32_OPS {
        rows.push((INC, "atomicInc(limit 1000)", IntOp::Inc(INC_LIMIT), 990, &small));
        rows.push((DEC, "atomicDec(limit 1000)", IntOp::Dec(INC_LIMIT), 3, &small));
    }
    assert_eq!(rows.len(), ops);
    let inits: Vec<T> = rows.iter().map(|row| T::from_i(row.3)).collect();
    let poison = T::from_i(0x5a5a_5a5a);
    let (cells, olds) = launch::<T, K>(dev, cfg, &small, &bits, &inits, poison)?;
    let threads = cfg.grid.x as usize * cfg.block.x as usize;
    let mut bad = Vec::new();
    for &(k, op_name, op, init, vals) in &rows {
        let o = row(&olds, k, threads, n);
        let mut ok = int_op_ok(op, T::from_i(init), vals, &o, cells[k]);
        if k == ADD_ONE {
            ok &= sorted(&o) == (0..n as i128).collect::<Vec<_>>();
        }
        if !ok {
            bad.push(format!("{op_name}: final {:?}", cells[k]));
        }
        if olds[k * threads + n..(k + 1) * threads].iter().any(|x| x.to_i() != poison.to_i()) {
            bad.push(format!("{op_name}: a thread past n wrote an old value"));
        }
    }
    r.check(
        bad.is_empty(),
        format!(
            "{name}: {ops} operations x {n} threads on {ops} cells: final values exact, old values a serial order, \
             atomicAdd(p, 1) olds exactly {{0..{}}}{}",
            n - 1,
            super::warp_reduce::fmt_bad(&bad)
        ),
    );
    Ok(())
}

/// Runs the float tour of `F` on its operands (`small`: integers to add; `bits`: values to exchange)
/// and checks every cell and every old value.
fn float_tour<
    F: ModelFloat,
    K: for<'a> Kernel<Args<'a> = (Global<'a, F>, Global<'a, F>, GlobalMut<'a, F>, Output<'a, F>)>,
>(
    dev: &Device,
    cfg: Launch,
    n: usize,
    name: &str,
    (small, bits): (Vec<F>, Vec<F>),
    r: &mut ExampleResult,
) -> Result<()> {
    let inits = [F::from_f64(0.0), F::from_f64(0.0), F::from_f64(0.5), F::from_f64(0.0)];
    let poison = F::from_f64(f64::NAN);
    let (cells, olds) = launch::<F, K>(dev, cfg, &small, &bits, &inits, poison)?;
    let threads = cfg.grid.x as usize * cfg.block.x as usize;
    let mut bad = Vec::new();
    let counted: Vec<f64> = (0..n).map(|i| i as f64).collect();
    // atomicAdd(p, 1.0) and the CAS add of 1.0: every partial sum is an integer below 2^24, exact, so
    // the old values are exactly 0, 1, ..., n-1 and the final value n.
    for (k, op_name) in [(F_ADD_ONE, "atomicAdd(p, 1.0)"), (F_CAS_ADD, "atomicCAS loop (+1.0)")] {
        let mut o: Vec<f64> = row(&olds, k, threads, n).iter().map(|x| x.as_f64()).collect();
        o.sort_by(|a, b| a.total_cmp(b));
        if o != counted || cells[k].as_f64() != n as f64 {
            bad.push(format!("{op_name}: final {}", cells[k].as_f64()));
        }
    }
    // atomicAdd of integers: the exact integer sum, and a serial order of the adds, bit for bit.
    let exact: f64 = small.iter().map(|x| x.as_f64()).sum();
    if !float_add_order_ok(inits[F_ADD], &small, &row(&olds, F_ADD, threads, n), cells[F_ADD])
        || cells[F_ADD].as_f64() != exact
    {
        bad.push(format!("atomicAdd: final {} want {exact}", cells[F_ADD].as_f64()));
    }
    // atomicExch: a serial order of the swaps, on bit patterns.
    let keys = |v: &[F]| v.iter().map(|x| x.key()).collect::<Vec<u64>>();
    if !exch_order_ok(inits[F_EXCH].key(), &keys(&bits), &keys(&row(&olds, F_EXCH, threads, n)), cells[F_EXCH].key()) {
        bad.push("atomicExch: no serial order of the swaps gives these old values".into());
    }
    for k in 0..FLOAT_OPS {
        if olds[k * threads + n..(k + 1) * threads].iter().any(|x| x.key() != poison.key()) {
            bad.push(format!("operation {k}: a thread past n wrote an old value"));
        }
    }
    r.check(
        bad.is_empty(),
        format!(
            "{name}: {FLOAT_OPS} operations x {n} threads: final values exact, old values a serial order, \
             atomicAdd(p, 1.0) olds exactly {{0..{}}}{}",
            n - 1,
            super::warp_reduce::fmt_bad(&bad)
        ),
    );
    Ok(())
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("atomic_tour", n, 8 * U32_OPS)?;
    if n > MAX_N {
        return Err(Skip(format!(
            "n = {n} is more than the {MAX_N} threads that may contend for one cell (compare-and-swap loops \
             retry quadratically in the contenders)"
        ))
        .into());
    }
    let mut rng = StdRng::seed_from_u64(p.seed);
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, 0);
    let mut r = ExampleResult::new("atomic_tour", dev.kind(), n, p.seed);
    int_tour::<i32, atomic_tour_i32>(dev, cfg, &mut rng, n, INT_OPS, "int", &mut r)?;
    int_tour::<u32, atomic_tour_u32>(dev, cfg, &mut rng, n, U32_OPS, "unsigned int", &mut r)?;
    int_tour::<u64, atomic_tour_u64>(dev, cfg, &mut rng, n, INT_OPS, "unsigned long long", &mut r)?;
    // Operands: integers (1..=8 for float, whose sums must stay below 2^24; 1..=1000 for double) and
    // random finite values to exchange.
    let f32_ops =
        ((0..n).map(|_| rng.gen_range(1..=8) as f32).collect(), (0..n).map(|_| rng.gen_range(-1e6f32..1e6)).collect());
    float_tour::<f32, atomic_tour_f32>(dev, cfg, n, "float", f32_ops, &mut r)?;
    let f64_ops = (
        (0..n).map(|_| rng.gen_range(1..=1000) as f64).collect(),
        (0..n).map(|_| rng.gen_range(-1e6f64..1e6)).collect(),
    );
    float_tour::<f64, atomic_tour_f64>(dev, cfg, n, "double", f64_ops, &mut r)?;
    Ok(finish(dev, r, false))
}
