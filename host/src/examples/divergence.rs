//! Host side of `divergence` (§5.2, exercise 1): `conditionalAdd` with its guard (threads past `n` leave
//! their elements untouched), without it at a multiple of the block, and the branch on `threadIdx % 2`
//! against the branch on `blockIdx % 2`. Every output is exact: the CPU reference performs the same
//! correctly rounded f32 operations in the same order. On a GPU the divergent and the warp-uniform
//! branch are timed (the chapter expects about 2x), and so is the guard.

use super::{EMU_SIZES, Example, RunParams, check_n, finish};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::divergence::{
    BLOCK, PATH_ITERS, branch_by_block, branch_by_thread, conditional_add, conditional_add_unguarded, path_a, path_b,
};
use gpu_std::emu::LaunchConfig;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run divergence`).
pub const EXAMPLE: Example = Example {
    name: "divergence",
    row: Some(9),
    section: "§5.2; ex. 1",
    about: "conditionalAdd's guard; branch on threadIdx % 2 (divergent) vs blockIdx % 2 (warp-uniform), timed on a GPU",
    gpu_sizes: &[1, 7, 31, 33, 255, 256, 257, 1 << 20, (1 << 20) + 1],
    emu_sizes: EMU_SIZES,
    keeps_races: false,
    kept_bugs: &[],
    run,
};

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("divergence", n, 8)?;
    let b = BLOCK as usize;
    let mut rng = StdRng::seed_from_u64(p.seed);
    // A multiple of the block for the unguarded kernel; its first n inputs are the guarded kernel's.
    let m = n.next_multiple_of(b);
    let a: Vec<f32> = (0..m).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let mut r = ExampleResult::new("divergence", dev.kind(), n, p.seed);

    // conditionalAdd over n elements; `out` has an element for every thread of the grid, so the
    // elements past n show whether the guard held.
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, 0);
    let threads = cfg.grid.x as usize * b;
    let a_n = dev.upload("a", &a[..n])?;
    let mut out = dev.filled("out", threads, f32::NAN)?;
    dev.launch::<conditional_add>(cfg, (a_n.view(), out.output()))?;
    // a + 1 is one correctly rounded f32 add on both sides: the same bits.
    let want: Vec<f32> = (0..threads).map(|i| if i < n { a[i] + 1.0 } else { f32::NAN }).collect();
    let got = out.read()?;
    let m1 = exact(&got[..n], &want[..n], "out[..n]");
    let untouched = got[n..].iter().all(|x| x.is_nan());
    r.check(
        m1.is_none() && untouched,
        format!(
            "conditional_add: {n} outputs a[i] + 1 exact; the {} elements past n untouched (the guard){}",
            threads - n,
            super::mismatch(m1)
        ),
    );

    // The same body without the guard, at a multiple of the block.
    let cfg_m = LaunchConfig::linear((m / b) as u32, BLOCK, 0);
    let a_m = dev.upload("a", &a)?;
    let out_m = dev.filled("out", m, f32::NAN)?;
    dev.launch::<conditional_add_unguarded>(cfg_m, (a_m.view(), out_m.view_mut()))?;
    let want_m: Vec<f32> = a.iter().map(|x| x + 1.0).collect();
    let m2 = exact(&out_m.read()?, &want_m, "out");
    r.check(m2.is_none(), format!("conditional_add_unguarded at n = {m}: every output exact{}", super::mismatch(m2)));

    // The two branch kernels over the same n inputs. Each path is a fixed sequence of f32 operations;
    // path_a / path_b are the kernel's own functions, compiled for the CPU without FMA contraction, so
    // the reference is bit-exact. What the reference decides on its own is which path each element takes.
    let ref_a: Vec<f32> = a[..n].iter().map(|&x| path_a(x, PATH_ITERS)).collect();
    let ref_b: Vec<f32> = a[..n].iter().map(|&x| path_b(x, PATH_ITERS)).collect();
    let pick = |i: usize, take_a: bool| if take_a { ref_a[i] } else { ref_b[i] };
    let mut out_n = dev.filled("out", n, f32::NAN)?;
    dev.launch::<branch_by_thread>(cfg, (a_n.view(), out_n.output(), PATH_ITERS))?;
    let want: Vec<f32> = (0..n).map(|i| pick(i, (i % b).is_multiple_of(2))).collect();
    let m3 = exact(&out_n.read()?, &want, "out");
    r.check(
        m3.is_none(),
        format!("branch on threadIdx % 2 (divergent): {n} outputs exact, even threads path A{}", super::mismatch(m3)),
    );
    out_n.write(&vec![f32::NAN; n])?;
    dev.launch::<branch_by_block>(cfg, (a_n.view(), out_n.output(), PATH_ITERS))?;
    let want: Vec<f32> = (0..n).map(|i| pick(i, (i / b).is_multiple_of(2))).collect();
    let m4 = exact(&out_n.read()?, &want, "out");
    r.check(
        m4.is_none(),
        format!("branch on blockIdx % 2 (warp-uniform): {n} outputs exact, even blocks path A{}", super::mismatch(m4)),
    );

    if dev.profile().can_time && p.reps > 0 {
        let ok = || -> Result<()> { Ok(()) };
        let div = dev.time::<branch_by_thread, _>(cfg, (a_n.view(), out_n.output(), PATH_ITERS), p.reps, &ok)?;
        let uni = dev.time::<branch_by_block, _>(cfg, (a_n.view(), out_n.output(), PATH_ITERS), p.reps, &ok)?;
        if let (Some(div), Some(uni)) = (div, uni) {
            r.show.push(format!(
                "divergent (threadIdx % 2) {:.4} ms / warp-uniform (blockIdx % 2) {:.4} ms = {:.2}x (the chapter expects about 2x)",
                div.median_ms,
                uni.median_ms,
                div.median_ms / uni.median_ms
            ));
            r.time_ms = Some(div.median_ms);
        }
        let mut out_g = dev.filled("out", m, f32::NAN)?;
        let guarded = dev.time::<conditional_add, _>(cfg_m, (a_m.view(), out_g.output()), p.reps, &ok)?;
        let unguarded = dev.time::<conditional_add_unguarded, _>(cfg_m, (a_m.view(), out_m.view_mut()), p.reps, &ok)?;
        if let (Some(g), Some(u)) = (guarded, unguarded) {
            r.show.push(format!(
                "guard at n = {m} (a multiple of the block): guarded {:.4} ms / unguarded {:.4} ms = {:.3}x",
                g.median_ms,
                u.median_ms,
                g.median_ms / u.median_ms
            ));
        }
    }
    Ok(finish(dev, r, false))
}
