//! What the emulator's race detector costs: `reduce_sum` on 2^22 floats (or `N`), launched on the
//! emulator without and with the detector, with the time of each (median of `REPS` launches), their
//! ratio, and the shadow memory the detector used per element address it recorded.
//!
//! ```text
//! cargo run --release -p gpu-kernels --example detector_cost [-- N [REPS]]
//! ```

use gpu_kernels::reduce_sum::{BLOCK, MAX_GRID, SHARED_BYTES, reduce_sum};
use gpu_std::emu::{self, LaunchConfig, Options, Outcome};
use gpu_std::{Global, GlobalMut};
use std::time::Instant;

fn arg(k: usize, default: usize) -> usize {
    std::env::args()
        .nth(k)
        .map_or(default, |s| s.parse().unwrap_or_else(|_| panic!("argument {k}: `{s}` is not a count")))
}

/// Median time in seconds of `reps` launches, and the outcome of the last one.
fn run(input: &[f32], detect: bool, reps: usize) -> (f64, Outcome) {
    let n = input.len();
    let cfg = LaunchConfig::linear((n as u32).div_ceil(BLOCK).min(MAX_GRID), BLOCK, SHARED_BYTES);
    let opts = Options { detect_races: detect, ..Options::default() };
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..reps {
        let mut out = [0.0f32];
        let start = Instant::now();
        // SAFETY: both buffers outlive the launch, and the host does not touch them during it.
        let o = unsafe {
            let args = (Global::from_raw_parts(input.as_ptr(), n), GlobalMut::from_raw_parts(out.as_mut_ptr(), 1));
            emu::launch_params::<reduce_sum>(&cfg, &opts, args)
        }
        .unwrap_or_else(|e| panic!("launch failed: {e}"));
        times.push(start.elapsed().as_secs_f64());
        assert_eq!(out[0], n as f32, "the sum of {n} ones");
        assert_eq!(o.racy_addresses, 0, "{:?}", o.races.first().map(|r| r.to_string()));
        last = Some(o);
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], last.expect("at least one launch"))
}

fn main() {
    let n = arg(1, 1 << 22);
    let reps = arg(2, 3).max(1);
    let input = vec![1.0f32; n];
    println!("reduce_sum on the emulator, n = {n}, median of {reps} launch(es)");
    let (plain, _) = run(&input, false, reps);
    let (checked, o) = run(&input, true, reps);
    println!("  without the race detector: {plain:8.3} s");
    println!("  with the race detector:    {checked:8.3} s   ({:.2}x)", checked / plain);
    println!(
        "  shadow memory: {} bytes for {} element addresses ({:.1} bytes per element)",
        o.shadow_bytes,
        o.touched_addresses,
        o.shadow_bytes as f64 / o.touched_addresses.max(1) as f64
    );
}
