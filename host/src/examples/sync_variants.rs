//! Host side of `sync_variants` (§5.3, §5.7; 002): `__syncthreads_count/and/or`, `__ballot_sync`,
//! `__any_sync`, `__all_sync` and a `__syncwarp`-ordered exchange, with partial last warps and blocks.
//! Every word of every thread is compared exactly with the CPU's counts and predicates; the warp words
//! of threads past `n` must stay untouched.

use super::{Example, GPU_SIZES, RunParams, check_n, finish};
use crate::report::ExampleResult;
use crate::verify::exact;
use anyhow::Result;
use gpu_host::{Device, cover};
use gpu_kernels::sync_variants::*;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// This example's entry in the catalogue (`host list`, `host run sync_variants`).
pub const EXAMPLE: Example = Example {
    name: "sync_variants",
    row: Some(18),
    section: "§5.3, §5.7; 002",
    about: "__syncthreads_count/and/or, ballot/any/all, __syncwarp, with partial last warps and blocks",
    gpu_sizes: GPU_SIZES,
    emu_sizes: &[1, 7, 31, 33, 255, 257, 1000, 4097],
    keeps_races: false,
    kept_bugs: &[],
    run,
};

/// Marks words no thread may write.
const POISON: u32 = 0xdead_beef;

/// Predicates with every case in reach of small sizes: block `b` follows pattern `[2, 0, 1, 3][b % 4]`
/// — 0: all true, 1: all false, 2: per warp (random, all true, all false, random), 3: one true element.
/// True is a random nonzero word, false is 0.
fn predicates(rng: &mut StdRng, n: usize) -> Vec<u32> {
    let b = BLOCK as usize;
    let mut preds = vec![0u32; n];
    for (blk, chunk) in preds.chunks_mut(b).enumerate() {
        let yes = |rng: &mut StdRng| rng.gen_range(1..=u32::MAX);
        match [2, 0, 1, 3][blk % 4] {
            0 => chunk.iter_mut().for_each(|x| *x = yes(rng)),
            1 => {}
            2 => {
                for (t, x) in chunk.iter_mut().enumerate() {
                    *x = match (t / 32) % 4 {
                        1 => yes(rng),
                        2 => 0,
                        _ => {
                            if rng.r#gen() {
                                yes(rng)
                            } else {
                                0
                            }
                        }
                    };
                }
            }
            _ => {
                let k = rng.gen_range(0..chunk.len());
                chunk[k] = yes(rng);
            }
        }
    }
    preds
}

pub fn run(dev: &Device, p: &RunParams) -> Result<ExampleResult> {
    let n = p.n;
    check_n("sync_variants", n, 4 * (1 + WORDS))?;
    let mut rng = StdRng::seed_from_u64(p.seed);
    let preds = predicates(&mut rng, n);
    let cfg = cover(n, BLOCK, u32::MAX / BLOCK, SHARED_BYTES);
    let threads = cfg.grid.x as usize * BLOCK as usize;
    let pr = dev.upload("preds", &preds)?;
    let mut out = dev.filled("out", WORDS * threads, POISON)?;
    dev.launch::<sync_variants>(cfg, (pr.view(), out.output()))?;
    let got = out.read()?;

    // The reference, thread by thread.
    let pred = |g: usize| g < n && preds[g] != 0;
    let mut want = vec![POISON; WORDS * threads];
    let b = BLOCK as usize;
    for blk in 0..threads / b {
        let ts = blk * b..(blk + 1) * b;
        let count = ts.clone().filter(|&g| pred(g)).count() as u32;
        let and = ts.clone().all(|g| g >= n || pred(g));
        let or = ts.clone().any(pred);
        for g in ts {
            want[W_COUNT * threads + g] = count;
            want[W_AND * threads + g] = and as u32;
            want[W_OR * threads + g] = or as u32;
        }
    }
    for w0 in (0..threads).step_by(32) {
        let lanes: Vec<usize> = (w0..w0 + 32).filter(|&g| g < n).collect();
        let ballot = lanes.iter().filter(|&&g| pred(g)).fold(0u32, |m, &g| m | 1 << (g - w0));
        for (l, &g) in lanes.iter().enumerate() {
            want[W_BALLOT * threads + g] = ballot;
            want[W_ANY * threads + g] = (ballot != 0) as u32;
            want[W_ALL * threads + g] = (ballot.count_ones() as usize == lanes.len()) as u32;
            want[W_NEXT * threads + g] = preds[lanes[(l + 1) % lanes.len()]];
        }
    }
    let mut r = ExampleResult::new("sync_variants", dev.kind(), n, p.seed);
    let blocks = threads / b;
    let partial_warp = if n.is_multiple_of(32) { "none".to_string() } else { format!("{} lane(s)", n % 32) };
    for (what, words) in [
        ("__syncthreads_count/and/or (threads past n pass the identity)", W_COUNT..W_BALLOT),
        ("__ballot_sync/__any_sync/__all_sync over the lanes with an element", W_BALLOT..W_NEXT),
        ("__syncwarp-ordered exchange with the next lane", W_NEXT..WORDS),
    ] {
        let range = words.start * threads..words.end * threads;
        let m = exact(&got[range.clone()], &want[range], "words");
        r.check(
            m.is_none(),
            format!(
                "{what}: {} words of {threads} threads in {blocks} block(s), last warp partial: {partial_warp}{}",
                (words.end - words.start) * threads,
                super::mismatch(m)
            ),
        );
    }
    let counts: Vec<u32> = (0..blocks).map(|blk| got[W_COUNT * threads + blk * b]).collect();
    r.show.push(format!(
        "__syncthreads_count per block: {:?}{}",
        &counts[..counts.len().min(8)],
        if counts.len() > 8 { " ..." } else { "" }
    ));
    Ok(finish(dev, r, false))
}
