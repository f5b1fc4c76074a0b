//! The kernels on the CPU SIMT emulator: `dot` is exact and race-free under several schedules, and the
//! race detector names the race in `dot_missing_barrier`.

use gpu_std::emu::{self, LaunchConfig, Options};
use kernels::{BLOCK, SHARED_BYTES, dot, dot_missing_barrier};

fn inputs(n: usize) -> (Vec<u32>, Vec<u32>, u32) {
    let x: Vec<u32> = (0..n).map(|i| (i % 10) as u32).collect();
    let y: Vec<u32> = (0..n).map(|i| (i % 3) as u32 + 1).collect();
    let expected = x.iter().zip(&y).map(|(a, b)| a * b).sum();
    (x, y, expected)
}

#[test]
fn dot_is_exact_and_race_free() {
    for n in [0, 1, 31, 33, 257, 5000] {
        let (x, y, expected) = inputs(n);
        for seed in 1..=3 {
            let (xb, yb) = (emu::buffer("x", x.clone()), emu::buffer("y", y.clone()));
            let result = emu::buffer("result", vec![0u32]);
            let cfg = LaunchConfig::linear(n.div_ceil(BLOCK as usize).clamp(1, 4) as u32, BLOCK, SHARED_BYTES);
            let opts = Options { schedule_seed: seed, ..Options::default() };
            let out = emu::launch::<dot>(&cfg, &opts, (xb.view(), yb.view(), result.view_mut())).expect("launch");
            assert_eq!(out.racy_addresses, 0, "n={n} seed={seed}: {:?}", out.races);
            assert_eq!(result.to_vec()[0], expected, "n={n} seed={seed}");
        }
    }
}

#[test]
fn the_missing_barrier_is_reported() {
    let (x, y, _) = inputs(4096);
    let (xb, yb) = (emu::buffer("x", x), emu::buffer("y", y));
    let result = emu::buffer("result", vec![0u32]);
    let cfg = LaunchConfig::linear(2, BLOCK, SHARED_BYTES);
    let out = emu::launch::<dot_missing_barrier>(&cfg, &Options::default(), (xb.view(), yb.view(), result.view_mut()))
        .expect("launch");
    assert!(out.racy_addresses > 0, "the race on the warp sums was not reported");
    let report = out.races[0].to_string();
    println!("{report}");
    // Shared memory is named by the layout's array: `WarpSums.sums`[w].
    assert!(report.contains("dot_missing_barrier") && report.contains("shared memory `WarpSums.sums`["), "{report}");
}
