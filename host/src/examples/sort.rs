//! Host side of `sort` (example 22): gpu-algos' radix sort — `u32` keys alone and with their
//! positions as values (exact and stable against the CPU's stable sort), descending, by a bit range,
//! `f32` keys with both zeros, infinities and NaNs in IEEE total order, `u64` keys; and on the
//! emulator the pass's variants whose status words are stored or loaded plainly, which the race
//! detector must name.

use super::{Example, RunParams, check_n, finish, flagged, measure_call, mismatch};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_algos::Algos;
use gpu_algos::sort::Order;
use gpu_algos_kernels::sort::onesweep::{SHARED_BYTES_KEYS4, sort_keys_u32};
use gpu_algos_kernels::sort::variants::{sort_no_acquire_u32, sort_no_release_u32};
use gpu_algos_kernels::sort::{self, Digits, SortKey};
use gpu_host::Device;
use gpu_host::Launch;
use rand::{Rng, SeedableRng, rngs::StdRng};
use std::cell::RefCell;

/// This example's entry in the catalogue (`host list`, `host run sort`).
pub const EXAMPLE: Example = Example {
    name: "sort",
    row: Some(22),
    section: "§5.4–5.7",
    about: "gpu-algos' stable radix sort: one histogram pass, then per 8-bit digit a pass whose tiles rank keys with warp ballots and find their offsets by decoupled look-back over strong status words; pairs stable, descending, bit ranges, f32 total order; variants with plain status words are races",
    gpu_sizes: &[1, 7, 33, 257, 4096, 4097, (1 << 20) + 1, 1 << 24],
    emu_sizes: &[1, 7, 33, 257, 4097, 3 * 512 + 5],
    keeps_races: true,
    kept_bugs: &[],
    run,
};

/// The stable CPU order of `x` under `key`: the input positions in output order.
fn order_by<K: Copy, O: Ord>(x: &[K], key: impl Fn(K) -> O) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..x.len() as u32).collect();
    idx.sort_by_key(|&i| key(x[i as usize]));
    idx
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("sort", n, 8)?;
    let mut r = ExampleResult::new("sort", dev.kind(), n, p.seed);
    let mut rng = StdRng::seed_from_u64(p.seed);
    let algos = Algos::new(dev)?;
    let plan = algos.sort_plan::<u32>(n, &Order::ascending(), 0)?;
    let shape = if plan.small {
        format!("one block of {} threads", plan.block)
    } else {
        format!("histogram + {} passes of {} tiles of {} threads", plan.passes, plan.tiles, plan.block)
    };

    // u32 keys with their positions as values: a few distinct high bytes, so that equal digits abound.
    let x: Vec<u32> = (0..n).map(|_| rng.r#gen::<u32>() & 0xff0f_ffff).collect();
    let pos: Vec<u32> = (0..n as u32).collect();
    let want = order_by(&x, |k| k);
    let (keys, vals) = (dev.upload("keys", &x)?, dev.upload("vals", &pos)?);
    let (ko, vo) = (RefCell::new(dev.filled("keys_out", n, 0u32)?), RefCell::new(dev.filled("vals_out", n, 0u32)?));
    algos.sort_pairs_by(&keys, &vals, &mut ko.borrow_mut(), &mut vo.borrow_mut(), &Order::ascending())?;
    let m = exact(&vo.borrow().read()?, &want, "vals_out");
    r.check(
        m.is_none(),
        format!("sort_pairs u32 ({shape}): every value the position of its key, stably{}", mismatch(m)),
    );
    let sorted: Vec<u32> = want.iter().map(|&i| x[i as usize]).collect();
    let m = exact(&ko.borrow().read()?, &sorted, "keys_out");
    r.check(m.is_none(), format!("sort_pairs u32: all {n} keys in order{}", mismatch(m)));
    let desc = order_by(&x, std::cmp::Reverse);
    algos.sort_pairs_by(&keys, &vals, &mut ko.borrow_mut(), &mut vo.borrow_mut(), &Order::descending())?;
    let m = exact(&vo.borrow().read()?, &desc, "vals_out");
    r.check(m.is_none(), format!("sort_pairs u32 descending: stable (equal keys keep their order){}", mismatch(m)));
    let bits = order_by(&x, |k| (k >> 4) & 0xfff);
    algos.sort_pairs_by(&keys, &vals, &mut ko.borrow_mut(), &mut vo.borrow_mut(), &Order::ascending().bits(4..16))?;
    let m = exact(&vo.borrow().read()?, &bits, "vals_out");
    r.check(m.is_none(), format!("sort_pairs u32 by bits 4..16 only (2 passes): stable{}", mismatch(m)));
    measure_call(dev, p, &mut r, "sort_keys u32 (gpu_algos::sort)", 8 * n, &|| Ok(()), &|| {
        Ok(algos.sort_keys_by(&keys, &mut ko.borrow_mut(), &Order::ascending())?)
    })?;
    measure_call(dev, p, &mut r, "sort_pairs u32+u32 (gpu_algos::sort)", 16 * n, &|| Ok(()), &|| {
        Ok(algos.sort_pairs_by(&keys, &vals, &mut ko.borrow_mut(), &mut vo.borrow_mut(), &Order::ascending())?)
    })?;
    drop((keys, vals, ko, vo));

    // f32 with the specials: IEEE total order, as f32::total_cmp.
    let specials = [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, 1e-40];
    let xf: Vec<f32> =
        (0..n).map(|i| if i % 7 == 0 { specials[i / 7 % specials.len()] } else { rng.gen_range(-1e3..1e3) }).collect();
    let kf = dev.upload("keys", &xf)?;
    let mut of = dev.filled("keys_out", n, 0f32)?;
    algos.sort_keys_by(&kf, &mut of, &Order::ascending())?;
    let mut wf = xf.clone();
    wf.sort_by(|a, b| a.total_cmp(b));
    let got: Vec<u32> = of.read()?.iter().map(|v| v.to_bits()).collect();
    let m = exact(&got, &wf.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "keys_out (bits)");
    r.check(
        m.is_none(),
        format!("sort_keys f32: -NaN < -inf < … < -0 < +0 < … < +inf < +NaN (total_cmp){}", mismatch(m)),
    );
    drop((kf, of));

    // u64 keys: eight passes.
    let x64: Vec<u64> = (0..n).map(|_| rng.r#gen()).collect();
    let k64 = dev.upload("keys", &x64)?;
    let mut o64 = dev.filled("keys_out", n, 0u64)?;
    algos.sort_keys_by(&k64, &mut o64, &Order::ascending())?;
    let mut w64 = x64.clone();
    w64.sort_unstable();
    let m = exact(&o64.read()?, &w64, "keys_out");
    r.check(m.is_none(), format!("sort_keys u64 (8 passes): all {n} keys in order{}", mismatch(m)));
    drop((k64, o64));

    // The racy variants, on the emulator only (a race on a GPU fails silently): one pass over four tiles.
    if dev.profile().detectors {
        let _ = dev.take_findings();
        let block = 64;
        let m = 3 * block as usize * sort::ITEMS + 5;
        let xs: Vec<u32> = (0..m).map(|_| rng.r#gen()).collect();
        let digits = Digits::new(0, 8, false);
        let mut counts = vec![0u32; sort::RADIX];
        xs.iter().for_each(|&k| counts[k.digit(0, 0xff, false) as usize] += 1);
        let four_tiles = Launch::linear(sort::tiles(m, block) as u32, block, SHARED_BYTES_KEYS4);
        let (input, out) = (dev.upload("keys_in", &xs)?, dev.filled("keys_out", m, 0u32)?);
        let counts = dev.upload("counts", &counts)?;
        let state = dev.filled("state", sort::state_len(m, block, 1), 0u32)?;
        let args = (input.view(), out.view_mut(), counts.view(), state.view_mut(), digits.to_arg(), 0);
        dev.launch::<sort_keys_u32>(four_tiles, args)?;
        let want = order_by(&xs, |k| k & 0xff).iter().map(|&i| xs[i as usize]).collect::<Vec<_>>();
        let mm = exact(&out.read()?, &want, "keys_out");
        r.check(
            mm.is_none(),
            format!(
                "sort_keys_u32, one pass of {} tiles: stable by the low byte{}",
                sort::tiles(m, block),
                mismatch(mm)
            ),
        );
        flagged(dev, &mut r, "sort_keys_u32 (strong status words)", false);
        state.zero()?;
        dev.launch::<sort_no_release_u32>(four_tiles, args)?;
        flagged(dev, &mut r, "sort_no_release_u32 (status words stored plainly)", true);
        state.zero()?;
        dev.launch::<sort_no_acquire_u32>(four_tiles, args)?;
        flagged(dev, &mut r, "sort_no_acquire_u32 (status words loaded plainly)", true);
    }
    Ok(finish(dev, r, false))
}
