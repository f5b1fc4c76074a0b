//! `app [N] [auto|gpu|emu]`: the dot product of two seeded vectors of N elements (default 1000003) by
//! the `dot` kernel, on the GPU when there is one (the PTX that `build.rs` embedded), else on the CPU
//! SIMT emulator; then, next to it, gpu-algos' one-call library on the same buffers (the largest
//! element of `y`, the prefix sums of `x`). Everything is checked against the CPU.

use gpu_host::{Device, DeviceChoice, Ptx, cover};
use kernels::{BLOCK, SHARED_BYTES, dot};

/// The kernels' PTX module, built by `build.rs`.
static KERNELS_PTX: &str = include_str!(env!("KERNELS_PTX"));

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let n: usize = match args.next() {
        Some(a) => a.parse().map_err(|_| format!("N must be a count, not `{a}`"))?,
        None => 1_000_003,
    };
    let choice: DeviceChoice = args.next().as_deref().unwrap_or("auto").parse()?;

    // SAFETY: `KERNELS_PTX` is the module `build.rs` built with gpu-builder from the `kernels` crate
    // (every launch also checks each kernel's signature in it against the kernel's host type).
    let ptx = unsafe { Ptx::text("kernels", KERNELS_PTX) };
    let (dev, note) = Device::open(choice, &ptx, Default::default())?;
    if let Some(note) = note {
        println!("{note}");
    }
    println!("device: {}", dev.name());

    // Small seeded values: every product and the sum fit in a u32, so the check is exact.
    let x: Vec<u32> = (0..n).map(|i| (i * 7 % 13) as u32).collect();
    let y: Vec<u32> = (0..n).map(|i| (i * 5 % 11) as u32).collect();
    let expected = x.iter().zip(&y).fold(0u32, |s, (a, b)| s.wrapping_add(a * b));

    let xb = dev.upload("x", &x)?;
    let yb = dev.upload("y", &y)?;
    let result = dev.filled("result", 1, 0u32)?;
    let grid_cap = dev.grid_cap(4 * dev.sm_count()?);
    dev.launch::<dot>(cover(n, BLOCK, grid_cap, SHARED_BYTES), (xb.view(), yb.view(), result.view_mut()))?;
    let got = result.read()?[0];

    // The library next to the kernel: it loads its own PTX module on a GPU, and on the emulator its
    // launches are race-checked with the kernel's.
    let y_max = gpu_algos::reduce::max(&dev, &yb)?;
    let mut prefix = dev.filled("prefix", n, 0u32)?;
    gpu_algos::scan::inclusive_sum(&dev, &xb, &mut prefix)?;
    let x_total = if n > 0 { prefix.read_at(n - 1)? } else { 0 };
    let (want_max, want_total) = (y.iter().copied().max().unwrap_or(0), x.iter().fold(0u32, |s, &v| s.wrapping_add(v)));
    println!("gpu-algos: max of y {y_max} (CPU: {want_max}), last prefix sum of x {x_total} (CPU: {want_total})");

    let findings = dev.take_findings();
    for race in &findings.races {
        println!("{race}");
    }
    let ok = got == expected && y_max == want_max && x_total == want_total && findings.is_clean();
    println!("dot of {n} elements on {}: {got} (CPU: {expected}): {}", dev.kind(), if ok { "PASS" } else { "FAIL" });
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
