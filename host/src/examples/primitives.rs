//! Host side of `primitives`: every primitive of the device layer run on the device and compared with
//! its CPU model. `n` is the thread count of the atomic checks (not a multiple of the block, so the
//! guards are exercised); the warp checks use fixed shapes.

use super::{Example, RunParams, check_n, finish};
use crate::models::{IntOp, Num, chain_ok, exch_order_ok, int_op_ok};
use crate::report::ExampleResult;
use anyhow::Result;
use gpu_host::Device;
use gpu_kernels::primitives::*;
use gpu_std::emu::LaunchConfig;
use gpu_std::warp::{ShflMode, shfl_source_lane};
use gpu_std::{Dim3, Global, GlobalMut, Kernel, grid::GRID_BARRIER_WORDS};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run primitives`).
pub const EXAMPLE: Example = Example {
    name: "primitives",
    row: None,
    section: "all (device layer)",
    about: "every device primitive against its CPU model: shuffles, votes, barriers, atomics, fences, grid sync, tiles",
    gpu_sizes: &[1, 7, 31, 33, 255, 257, 1000, MAX_ATOMIC_THREADS],
    emu_sizes: &[1, 7, 31, 33, 257, 1000],
    keeps_races: false,
    kept_bugs: &[],
    run,
};

/// Largest thread count of the atomic checks.
pub const MAX_ATOMIC_THREADS: usize = (1 << 16) + 1;

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    check_n("primitives", p.n, 8)?;
    if p.n > MAX_ATOMIC_THREADS {
        return Err(super::Skip(format!(
            "n = {} is more than the {MAX_ATOMIC_THREADS} threads of the atomic checks (every thread of the CAS-loop \
             cases retries against all the others)",
            p.n
        ))
        .into());
    }
    let mut r = ExampleResult::new("primitives", dev.kind(), p.n, p.seed);
    let mut rng = StdRng::seed_from_u64(p.seed);
    shuffles(dev, &mut rng, &mut r)?;
    votes(dev, &mut rng, &mut r)?;
    barriers(dev, &mut rng, &mut r)?;
    atomics(dev, &mut rng, p.n, &mut r)?;
    shared_atomics(dev, &mut rng, p.n, &mut r)?;
    message(dev, &mut r)?;
    grid_sync(dev, &mut rng, &mut r)?;
    tiles(dev, &mut rng, &mut r)?;
    Ok(finish(dev, r, false))
}

fn mode_of(m: u32) -> ShflMode {
    match m {
        MODE_DOWN => ShflMode::Down,
        MODE_UP => ShflMode::Up,
        MODE_XOR => ShflMode::Xor,
        _ => ShflMode::Idx,
    }
}

fn shuffles(dev: &Device, rng: &mut StdRng, r: &mut ExampleResult) -> Result<()> {
    let threads = 2 * BLOCK as usize;
    let input: Vec<u64> = (0..threads).map(|_| rng.r#gen()).collect();
    let inp = dev.upload("shfl_in", &input)?;
    let out = dev.filled("shfl_out", threads, 0xdead_beef_dead_beefu64)?;
    let cfg = LaunchConfig::linear(2, BLOCK, 0);
    let mut failures = Vec::new();
    let mut runs = 0;
    for mode in [MODE_DOWN, MODE_UP, MODE_XOR, MODE_IDX] {
        for width in [32u32, 16, 8, 1] {
            for b in [1u32, 5] {
                for ty in [TY_U32, TY_I32, TY_F32, TY_U64, TY_I64, TY_F64] {
                    out.write(&vec![0xdead_beef_dead_beefu64; threads])?;
                    dev.launch::<prim_shfl>(cfg, (inp.view(), out.view_mut(), mode, b, width, ty))?;
                    let got = out.read()?;
                    runs += 1;
                    let wide = matches!(ty, TY_U64 | TY_I64 | TY_F64);
                    for (i, &g) in got.iter().enumerate() {
                        let lane = (i % 32) as u32;
                        let operand = if mode == MODE_IDX { idx_operand(lane, b) } else { b };
                        let src = match shfl_source_lane(mode_of(mode), lane, operand, width) {
                            Some(j) => i - lane as usize + j as usize,
                            None => i,
                        };
                        let want = if wide { input[src] } else { input[src] as u32 as u64 };
                        if g != want && failures.len() < 5 {
                            failures.push(format!(
                                "mode {mode} width {width} b {b} type {ty} thread {i}: got {g:#x} want {want:#x}"
                            ));
                        }
                    }
                }
            }
        }
    }
    r.check(
        failures.is_empty(),
        format!("shfl down/up/xor/idx x widths 32,16,8,1 x u32,i32,f32,u64,i64,f64: {runs} launches{}", bad(&failures)),
    );
    Ok(())
}

fn bad(f: &[String]) -> String {
    if f.is_empty() { String::new() } else { format!(" — {}", f.join("; ")) }
}

fn votes(dev: &Device, rng: &mut StdRng, r: &mut ExampleResult) -> Result<()> {
    let threads = 2 * BLOCK as usize; // 8 warps
    let preds: Vec<u32> = (0..threads)
        .map(|i| match i / 32 {
            0 => 1,
            2 => 0,
            5 => (i % 32 == 7) as u32,
            _ => rng.gen_range(0..2),
        })
        .collect();
    let pr = dev.upload("preds", &preds)?;
    let out = dev.filled("vote_out", threads * VOTE_WORDS, u32::MAX - 1)?;
    dev.launch::<prim_vote>(LaunchConfig::linear(2, BLOCK, 0), (pr.view(), out.view_mut()))?;
    let mut got = out.read()?;
    for i in 0..threads {
        got[i * VOTE_WORDS + 5] &= 1 << (i % 32);
    }
    let mut want = vec![0u32; threads * VOTE_WORDS];
    for i in 0..threads {
        let w0 = i - i % 32;
        let lane = i % 32;
        let ballot = (0..32).filter(|&k| preds[w0 + k] != 0).fold(0u32, |m, k| m | 1 << k);
        let half = if lane < 16 { 0x0000_ffffu32 } else { 0xffff_0000 };
        let o = i * VOTE_WORDS;
        want[o] = ballot;
        want[o + 1] = (ballot != 0) as u32;
        want[o + 2] = (ballot == u32::MAX) as u32;
        want[o + 3] = ballot & half;
        want[o + 4] = lane as u32;
        // __activemask() promises only the caller's own bit (lanes may diverge at any time under
        // independent thread scheduling); the check below compares `active & own bit`.
        want[o + 5] = 1 << lane;
        want[o + 6] = ((i % BLOCK as usize) / 32) as u32;
        let v = |k: usize| k as u32 / 4 + 8 * preds[w0 + k];
        let matching = |lanes: u32, bits: u32| {
            let low = if bits >= 32 { u32::MAX } else { (1 << bits) - 1 };
            (0..32).filter(|&k| lanes & 1 << k != 0 && (v(k) ^ v(lane)) & low == 0).fold(0u32, |m, k| m | 1 << k)
        };
        want[o + 7] = matching(u32::MAX, 4);
        want[o + 8] = matching(half, 32);
    }
    let m = crate::verify::exact(&got, &want, "vote words");
    r.check(
        m.is_none(),
        format!(
            "ballot/any/all (full and half-warp masks), match_bits (4 and 32 bits), lane_id, activemask (holds the caller), warp_id, sync_warp{}",
            super::mismatch(m)
        ),
    );
    Ok(())
}

fn barriers(dev: &Device, rng: &mut StdRng, r: &mut ExampleResult) -> Result<()> {
    let b = BLOCK as usize;
    let threads = 3 * b;
    let preds: Vec<u32> = (0..threads)
        .map(|i| {
            if i < b {
                1
            } else if i < 2 * b {
                rng.gen_range(0..2)
            } else {
                0
            }
        })
        .collect();
    let pr = dev.upload("preds", &preds)?;
    let out = dev.filled("bar_out", threads * 3, u32::MAX)?;
    dev.launch::<prim_barrier>(LaunchConfig::linear(3, BLOCK, 0), (pr.view(), out.view_mut()))?;
    let got = out.read()?;
    let mut want = vec![0u32; threads * 3];
    for blk in 0..3 {
        let c = preds[blk * b..(blk + 1) * b].iter().filter(|&&x| x != 0).count() as u32;
        for t in blk * b..(blk + 1) * b {
            want[3 * t] = c;
            want[3 * t + 1] = (c == BLOCK) as u32;
            want[3 * t + 2] = (c > 0) as u32;
        }
    }
    let m = crate::verify::exact(&got, &want, "barrier results");
    r.check(
        m.is_none(),
        format!("sync_threads_count/and/or over all-true, random and all-false blocks{}", super::mismatch(m)),
    );
    Ok(())
}

struct AtomicCase<T> {
    label: String,
    op: u32,
    scope: u32,
    init: T,
    vals: Vec<T>,
}

/// The model of operation `op` (an `OP_*` of the `prim_atomic_*` kernels).
fn model_op(op: u32) -> IntOp {
    match op {
        OP_ADD => IntOp::Add,
        OP_SUB => IntOp::Sub,
        OP_MIN => IntOp::Min,
        OP_MAX => IntOp::Max,
        OP_AND => IntOp::And,
        OP_OR => IntOp::Or,
        OP_XOR => IntOp::Xor,
        OP_EXCH => IntOp::Exch,
        OP_INC => IntOp::Inc(INC_LIMIT),
        OP_DEC => IntOp::Dec(INC_LIMIT),
        _ => IntOp::CasIncrement,
    }
}

fn run_int_case<T: Num, K: for<'a> Kernel<Args<'a> = (Global<'a, T>, GlobalMut<'a, T>, GlobalMut<'a, T>, u32, u32)>>(
    dev: &Device,
    c: &AtomicCase<T>,
    fails: &mut Vec<String>,
) -> Result<()> {
    let n = c.vals.len();
    let blocks = n.div_ceil(BLOCK as usize);
    let vals = dev.upload("vals", &c.vals)?;
    let cells = dev.filled("cells", blocks.max(1), c.init)?;
    let olds = dev.filled("olds", n, T::from_i(0x5a5a_5a5a))?;
    dev.launch::<K>(
        LaunchConfig::linear(blocks as u32, BLOCK, 0),
        (vals.view(), cells.view_mut(), olds.view_mut(), c.op, c.scope),
    )?;
    let cells = cells.read()?;
    let olds = olds.read()?;
    // Block scope: every block has its own cell; check each block's threads against it.
    let groups: Vec<(usize, std::ops::Range<usize>)> = if c.scope == SCOPE_BLOCK {
        (0..blocks).map(|b| (b, b * BLOCK as usize..((b + 1) * BLOCK as usize).min(n))).collect()
    } else {
        vec![(0, 0..n)]
    };
    for (cell, range) in groups {
        let (v, o, fin) = (&c.vals[range.clone()], &olds[range.clone()], cells[cell]);
        let ok = int_op_ok(model_op(c.op), c.init, v, o, fin);
        if !ok && fails.len() < 8 {
            fails.push(format!("{} (cell {cell}): final {:?}", c.label, fin));
        }
    }
    Ok(())
}

fn int_cases<T: Num>(rng: &mut StdRng, n: usize, name: &str, u32_ops: bool) -> Vec<AtomicCase<T>> {
    let small = |rng: &mut StdRng| (0..n).map(|_| T::from_i(rng.gen_range(1..100))).collect::<Vec<T>>();
    let signed = |rng: &mut StdRng| {
        (0..n)
            .map(|_| {
                T::from_i(if T::SIGNED {
                    rng.gen_range(-1_000_000i128..1_000_000)
                } else {
                    rng.gen_range(0..2_000_000)
                })
            })
            .collect::<Vec<T>>()
    };
    let bits = |rng: &mut StdRng| (0..n).map(|_| T::from_i(rng.r#gen::<u64>() as i128)).collect::<Vec<T>>();
    let ones = vec![T::from_i(1); n];
    let case = |label: &str, op, scope, init: i128, vals: Vec<T>| AtomicCase {
        label: format!("{name} {label}"),
        op,
        scope,
        init: T::from_i(init),
        vals,
    };
    let mut v = vec![
        case("add(1) device", OP_ADD, SCOPE_DEVICE, 0, ones.clone()),
        case("add(1) block", OP_ADD, SCOPE_BLOCK, 0, ones.clone()),
        case("add(1) system", OP_ADD, SCOPE_SYSTEM, 0, ones.clone()),
        case("add(random)", OP_ADD, SCOPE_DEVICE, 5, small(rng)),
        case("sub(random)", OP_SUB, SCOPE_DEVICE, 1 << 30, small(rng)),
        case("min", OP_MIN, SCOPE_DEVICE, 1_500_000, signed(rng)),
        case("max", OP_MAX, SCOPE_DEVICE, 0, signed(rng)),
        case("and", OP_AND, SCOPE_DEVICE, -1, bits(rng)),
        case("or", OP_OR, SCOPE_DEVICE, 0, bits(rng)),
        case("xor", OP_XOR, SCOPE_DEVICE, 12345, bits(rng)),
        case("exch", OP_EXCH, SCOPE_DEVICE, 77, small(rng)),
        case("cas increment loop", OP_CAS_INC, SCOPE_DEVICE, 0, ones.clone()),
    ];
    if u32_ops {
        v.push(case("inc(limit 1000)", OP_INC, SCOPE_DEVICE, 990, ones.clone()));
        v.push(case("dec(limit 1000)", OP_DEC, SCOPE_DEVICE, 3, ones));
    }
    v
}

fn atomics(dev: &Device, rng: &mut StdRng, n: usize, r: &mut ExampleResult) -> Result<()> {
    let mut fails = Vec::new();
    let mut count = 0;
    for c in int_cases::<u32>(rng, n, "u32", true) {
        run_int_case::<u32, prim_atomic_u32>(dev, &c, &mut fails)?;
        count += 1;
    }
    for c in int_cases::<i32>(rng, n, "i32", false) {
        run_int_case::<i32, prim_atomic_i32>(dev, &c, &mut fails)?;
        count += 1;
    }
    for c in int_cases::<u64>(rng, n, "u64", false) {
        run_int_case::<u64, prim_atomic_u64>(dev, &c, &mut fails)?;
        count += 1;
    }
    for c in int_cases::<i64>(rng, n, "i64", false) {
        run_int_case::<i64, prim_atomic_i64>(dev, &c, &mut fails)?;
        count += 1;
    }
    count += floats(dev, rng, n, &mut fails)?;
    r.check(
        fails.is_empty(),
        format!(
            "{count} atomic cases over {n} threads: final values exact, old values form a serial order{}",
            bad(&fails)
        ),
    );
    Ok(())
}

fn floats(dev: &Device, rng: &mut StdRng, n: usize, fails: &mut Vec<String>) -> Result<usize> {
    let blocks = n.div_ceil(BLOCK as usize) as u32;
    let cfg = LaunchConfig::linear(blocks, BLOCK, 0);
    let mut count = 0;
    // add(1.0): every partial sum is an integer below 2^24, so olds are exactly {0..n-1}.
    for (op, scope, label) in [
        (OP_ADD, SCOPE_DEVICE, "add(1)"),
        (OP_ADD, SCOPE_SYSTEM, "add(1) system"),
        (OP_CAS_ADD_F64, SCOPE_DEVICE, "atomicAddDouble CAS loop"),
    ] {
        let want_olds: Vec<f64> = (0..n).map(|k| k as f64).collect();
        let (v, c, o) = (
            dev.upload("vals", &vec![1.0f64; n])?,
            dev.filled("cells", blocks as usize, 0.0f64)?,
            dev.filled("olds", n, f64::NAN)?,
        );
        dev.launch::<prim_atomic_f64>(cfg, (v.view(), c.view_mut(), o.view_mut(), op, scope))?;
        let mut olds = o.read()?;
        olds.sort_by(|a, b| a.total_cmp(b));
        if olds != want_olds || c.read()?[0] != n as f64 {
            fails.push(format!("f64 {label}: final {}", c.read()?[0]));
        }
        count += 1;
        if op != OP_CAS_ADD_F64 {
            let (v, c, o) = (
                dev.upload("vals", &vec![1.0f32; n])?,
                dev.filled("cells", blocks as usize, 0.0f32)?,
                dev.filled("olds", n, f32::NAN)?,
            );
            dev.launch::<prim_atomic_f32>(cfg, (v.view(), c.view_mut(), o.view_mut(), op, scope))?;
            let mut olds: Vec<f64> = o.read()?.iter().map(|&x| x as f64).collect();
            olds.sort_by(|a, b| a.total_cmp(b));
            if olds != want_olds || c.read()?[0] != n as f32 {
                fails.push(format!("f32 {label}: final {}", c.read()?[0]));
            }
            count += 1;
        }
    }
    // add(random) at block scope: each block's cell within the f32 bound of its f64 sum.
    let vals: Vec<f32> = (0..n).map(|_| rng.gen_range(0.0f32..1.0)).collect();
    let (v, c, o) =
        (dev.upload("vals", &vals)?, dev.filled("cells", blocks as usize, 0.0f32)?, dev.filled("olds", n, f32::NAN)?);
    dev.launch::<prim_atomic_f32>(cfg, (v.view(), c.view_mut(), o.view_mut(), OP_ADD, SCOPE_BLOCK))?;
    let cells = c.read()?;
    for b in 0..blocks as usize {
        let xs = &vals[b * BLOCK as usize..((b + 1) * BLOCK as usize).min(n)];
        let want: f64 = xs.iter().map(|&x| x as f64).sum();
        let bound = xs.len() as f64 * f32::EPSILON as f64 / 2.0 * want + 1e-30;
        if !crate::verify::within(cells[b] as f64, want, bound) {
            fails.push(format!("f32 add(random) block {b}: {} vs {want}", cells[b]));
        }
    }
    count += 1;
    // exch on floats: the old values and the final value form a serial order of the swaps.
    let vals: Vec<f32> = (0..n).map(|_| rng.gen_range(-1e6f32..1e6)).collect();
    let (v, c, o) = (dev.upload("vals", &vals)?, dev.filled("cells", 1, 0.5f32)?, dev.filled("olds", n, f32::NAN)?);
    dev.launch::<prim_atomic_f32>(cfg, (v.view(), c.view_mut(), o.view_mut(), OP_EXCH, SCOPE_DEVICE))?;
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<u32>>();
    if !exch_order_ok(0.5f32.to_bits(), &bits(&vals), &bits(&o.read()?), c.read()?[0].to_bits()) {
        fails.push("f32 exch: no serial order of the swaps gives these old values".into());
    }
    count += 1;
    let vals: Vec<f64> = (0..n).map(|_| rng.gen_range(-1e6f64..1e6)).collect();
    let (v, c, o) = (dev.upload("vals", &vals)?, dev.filled("cells", 1, 0.25f64)?, dev.filled("olds", n, f64::NAN)?);
    dev.launch::<prim_atomic_f64>(cfg, (v.view(), c.view_mut(), o.view_mut(), OP_EXCH, SCOPE_DEVICE))?;
    let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<u64>>();
    if !exch_order_ok(0.25f64.to_bits(), &bits(&vals), &bits(&o.read()?), c.read()?[0].to_bits()) {
        fails.push("f64 exch: no serial order of the swaps gives these old values".into());
    }
    Ok(count + 1)
}

fn shared_atomics(dev: &Device, rng: &mut StdRng, n: usize, r: &mut ExampleResult) -> Result<()> {
    let b = BLOCK as usize;
    let blocks = n.div_ceil(b);
    let threads = blocks * b;
    let vals: Vec<u32> = (0..threads).map(|_| rng.gen_range(1..100)).collect();
    let v = dev.upload("vals", &vals)?;
    let olds = dev.filled("olds", threads, u32::MAX)?;
    let out = dev.filled("out", 4 * blocks, u32::MAX)?;
    dev.launch::<prim_atomic_shared>(
        LaunchConfig::linear(blocks as u32, BLOCK, SHARED_ATOMIC_BYTES),
        (v.view(), olds.view_mut(), out.view_mut()),
    )?;
    let (o, out) = (olds.read()?, out.read()?);
    let mut fails = Vec::new();
    for blk in 0..blocks {
        let vs = &vals[blk * b..(blk + 1) * b];
        let os = &o[blk * b..(blk + 1) * b];
        let sum: u32 = vs.iter().sum();
        let max = *vs.iter().max().expect("non-empty block");
        let fsum: f64 = vs.iter().map(|&x| x as f64).sum();
        let fgot = f32::from_bits(out[4 * blk + 3]) as f64;
        let ok = chain_ok(0, vs, os, out[4 * blk], |a, x| a + x)
            && out[4 * blk] == sum
            && out[4 * blk + 1] == max
            && out[4 * blk + 2] == BLOCK
            && fgot == fsum; // integers below 2^24: exact in f32
        if !ok && fails.len() < 4 {
            fails.push(format!(
                "block {blk}: out {:?} want sum {sum} max {max} count {BLOCK} fsum {fsum}",
                &out[4 * blk..4 * blk + 4]
            ));
        }
    }
    r.check(
        fails.is_empty(),
        format!("shared-memory atomics (add with olds, max, CAS loop, f32 add) in {blocks} blocks{}", bad(&fails)),
    );
    Ok(())
}

fn message(dev: &Device, r: &mut ExampleResult) -> Result<()> {
    let n = 4096;
    let data = dev.filled("data", n, 0u32)?;
    let flags = dev.filled("flags", 6, 0u32)?;
    let copy = dev.filled("copy", 3 * n, u32::MAX)?;
    let status = dev.filled("status", 3, 0u32)?;
    dev.launch::<prim_message>(
        LaunchConfig::linear(2, 256, 0),
        (data.view_mut(), flags.view_mut(), copy.view_mut(), status.view_mut()),
    )?;
    let (c, s) = (copy.read()?, status.read()?);
    let want: Vec<u32> = (0..3).flat_map(|way| (0..n as u32).map(move |i| i * 3 + way + 1)).collect();
    let m = crate::verify::exact(&c, &want, "consumer copies");
    r.check(
        s == [1, 1, 1] && m.is_none(),
        format!(
            "producer/consumer across blocks: fence+volatile flag, release/acquire (device), release/acquire (system); status {s:?} (1 = received, 2 = spin timeout){}",
            super::mismatch(m)
        ),
    );
    Ok(())
}

fn grid_sync(dev: &Device, rng: &mut StdRng, r: &mut ExampleResult) -> Result<()> {
    let cap = dev.max_coresident_blocks::<prim_grid_sync>(Dim3::x(BLOCK), 0)?;
    let blocks = cap.min(8);
    let n = blocks as usize * BLOCK as usize - 3;
    let init: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1 << 20)).collect();
    let mut both = init.clone();
    both.extend(vec![u32::MAX; n]);
    let bufs = dev.upload("bufs", &both)?;
    let ws = dev.filled("grid_workspace", GRID_BARRIER_WORDS, 0u32)?;
    dev.launch::<prim_grid_sync>(
        LaunchConfig::linear(blocks, BLOCK, 0).cooperative(),
        (bufs.view_mut(), ws.view_mut()),
    )?;
    let got = bufs.read()?;
    let (mut a, mut b) = (init, vec![0u32; n]);
    for _ in 0..GRID_ROUNDS {
        for i in 0..n {
            b[i] = a[i].wrapping_add(a[(i + 1) % n]);
        }
        std::mem::swap(&mut a, &mut b);
    }
    // After an even number of rounds the result is in the first half.
    let result = if GRID_ROUNDS.is_multiple_of(2) { &got[..n] } else { &got[n..] };
    let m = crate::verify::exact(result, &a, "grid rounds");
    let timeout = ws.read()?[2];
    r.check(
        m.is_none() && timeout == 0,
        format!(
            "grid.sync(): {GRID_ROUNDS} rounds over {blocks} co-resident blocks, neighbours across blocks{}{}",
            if timeout != 0 { " — barrier timed out" } else { "" },
            super::mismatch(m)
        ),
    );
    // A cooperative grid larger than what fits must be refused with a clear error, never launched.
    let too_big = LaunchConfig::linear(cap + 1, BLOCK, 0).cooperative();
    let e = dev.launch::<prim_grid_sync>(too_big, (bufs.view_mut(), ws.view_mut()));
    let msg = e.as_ref().err().map(|e| format!("{e:#}")).unwrap_or_default();
    r.check(msg.contains("exceeds"), format!("cooperative launch of {} blocks (cap {cap}) refused: {msg}", cap + 1));
    let _ = dev.take_findings(); // the refused launch reported nothing else
    Ok(())
}

fn tiles(dev: &Device, rng: &mut StdRng, r: &mut ExampleResult) -> Result<()> {
    let threads = 2 * BLOCK as usize;
    let input: Vec<f32> = (0..threads).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let i = dev.upload("input", &input)?;
    let o32 = dev.filled("out32", threads / 32, f32::NAN)?;
    let o16 = dev.filled("out16", threads / 16, f32::NAN)?;
    dev.launch::<prim_tile>(LaunchConfig::linear(2, BLOCK, 0), (i.view(), o32.view_mut(), o16.view_mut()))?;
    let (g32, g16) = (o32.read()?, o16.read()?);
    let check = |got: &[f32], w: usize| {
        got.iter().enumerate().all(|(t, &g)| {
            let xs = &input[t * w..(t + 1) * w];
            let want: f64 = xs.iter().map(|&x| x as f64).sum();
            let bound = w as f64 * f32::EPSILON as f64 / 2.0 * xs.iter().map(|x| x.abs() as f64).sum::<f64>();
            crate::verify::within(g as f64, want, bound)
        })
    };
    r.check(check(&g32, 32) && check(&g16, 16), "tiled_partition<32> and <16> shuffle reductions".to_string());
    Ok(())
}
