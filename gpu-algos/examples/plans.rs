//! Prints the launch each call of the library takes on this device, for every workload of a
//! benchmark and `n = 2^kmin ..= 2^kmax`, as tab-separated lines: what a benchmark written in CUDA C++
//! can replay, so that the times it reports are of the library's own launches.
//!
//! ```text
//! cargo run --release -p gpu-algos --features cuda --example plans -- [--kmin 10] [--kmax 30] [--emu]
//! ```
//!
//! Columns: workload, n, kernel (the PTX entry), grid, block, dynamic shared bytes, `arg` (a reduce's
//! virtual blocks, an even histogram's bins, else 0), `scratch` (a reduce's partial words, a scan's
//! state words, else 0) and `zero` (1 when the call zeroes its output or state before the launch).
use anyhow::{Context, Result, bail};
use gpu_algos::kernels::{EvenSample, Reducible, Scannable};
use gpu_algos::{Algos, Max, Min, Sum, plan};
use gpu_algos_kernels::histogram::{bytes as hb, even as he, small as hs};
use gpu_algos_kernels::{reduce as rk, scan as sk};
use gpu_host::{Device, DeviceChoice};
use gpu_std::Kernel;

/// The bins of the benchmark's even histograms.
const EVEN_BINS: usize = 256;

/// One launch, as a line of the output.
struct Line {
    kernel: &'static str,
    grid: u32,
    block: u32,
    shared: usize,
    arg: u64,
    scratch: usize,
    zero: bool,
}

fn print(workload: &str, n: usize, l: Line) {
    let Line { kernel, grid, block, shared, arg, scratch, zero } = l;
    println!("{workload}\t{n}\t{kernel}\t{grid}\t{block}\t{shared}\t{arg}\t{scratch}\t{}", u8::from(zero));
}

fn reduce<T: Reducible<O> + 'static, O: 'static>(algos: &Algos, name: &str, n: usize, det: bool) -> Result<()> {
    let line = match algos.reduce_plan::<T, O>(n, det)? {
        plan::Reduce::Empty => bail!("{name}: no launch for n = {n}"),
        plan::Reduce::Small => Line {
            kernel: T::SMALL_KERNEL,
            grid: 1,
            block: rk::BLOCK,
            shared: rk::SHARED_BYTES,
            arg: 0,
            scratch: 0,
            zero: false,
        },
        p @ plan::Reduce::Fast { grid, vblocks } => Line {
            kernel: T::FAST_KERNEL,
            grid,
            block: rk::BLOCK,
            shared: rk::SHARED_BYTES,
            arg: vblocks.into(),
            scratch: plan::reduce_partials(p),
            zero: false,
        },
    };
    print(name, n, line);
    Ok(())
}

fn reduce_all<T>(algos: &Algos, ty: &str, n: usize) -> Result<()>
where
    T: Reducible<Sum> + Reducible<Min> + Reducible<Max> + 'static,
{
    reduce::<T, Sum>(algos, &format!("reduce sum {ty}"), n, false)?;
    reduce::<T, Min>(algos, &format!("reduce min {ty}"), n, false)?;
    reduce::<T, Max>(algos, &format!("reduce max {ty}"), n, false)
}

fn even<T: EvenSample + 'static>(algos: &Algos, ty: &str, n: usize) -> Result<()> {
    let grid = algos.histogram_even_grid::<T>(n)?;
    let line = Line {
        kernel: T::KERNEL,
        grid,
        block: plan::EVEN_BLOCK,
        shared: he::SHARED_BYTES,
        arg: EVEN_BINS as u64,
        scratch: 0,
        zero: true,
    };
    print(&format!("histogram even {ty}"), n, line);
    Ok(())
}

fn scan<T: Scannable>(ty: &str, n: usize) {
    let p = plan::scan::<T>(n);
    for (kind, kernel) in [("inclusive", T::KERNELS[0]), ("exclusive", T::KERNELS[1])] {
        let line = Line {
            kernel,
            grid: p.tiles,
            block: p.block,
            shared: sk::shared_bytes_of::<T>(),
            arg: 0,
            scratch: p.state_words,
            zero: p.zero_state,
        };
        print(&format!("scan {kind} {ty}"), n, line);
    }
}

fn main() -> Result<()> {
    let (mut kmin, mut kmax, mut choice) = (10u32, 30u32, DeviceChoice::Auto);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |flag: &str| -> Result<u32> {
            args.next()
                .with_context(|| format!("{flag} needs a value"))?
                .parse()
                .with_context(|| format!("{flag}: not a number"))
        };
        match a.as_str() {
            "--kmin" => kmin = value("--kmin")?,
            "--kmax" => kmax = value("--kmax")?,
            "--emu" => choice = DeviceChoice::Emu,
            other => bail!("unknown argument {other:?} (usage: plans [--kmin K] [--kmax K] [--emu])"),
        }
    }
    if kmin > kmax || kmax > 32 {
        bail!("need kmin <= kmax <= 32 (got {kmin}, {kmax})");
    }
    let (dev, note) = Device::open(choice, &gpu_algos::ptx(), Default::default())?;
    if let Some(note) = note {
        eprintln!("plans: {note}");
    }
    let algos = Algos::new(&dev)?;
    println!("# device\t{}\tsms\t{}", dev.name(), dev.sm_count()?);
    println!("# workload\tn\tkernel\tgrid\tblock\tshared\targ\tscratch\tzero");
    for k in kmin..=kmax {
        let n = 1usize << k;
        reduce_all::<u32>(&algos, "u32", n)?;
        reduce_all::<i32>(&algos, "i32", n)?;
        reduce_all::<u64>(&algos, "u64", n)?;
        reduce_all::<i64>(&algos, "i64", n)?;
        reduce_all::<f32>(&algos, "f32", n)?;
        reduce_all::<f64>(&algos, "f64", n)?;
        reduce::<f32, Sum>(&algos, "reduce deterministic_sum f32", n, true)?;
        reduce::<f64, Sum>(&algos, "reduce deterministic_sum f64", n, true)?;
        let h = algos.histogram_bytes_plan(n)?;
        let (kernel, block, shared) = if h.small {
            (<hs::histogram_bytes_small as Kernel>::NAME, hs::BLOCK, hs::SHARED_BYTES)
        } else {
            (<hb::histogram_bytes as Kernel>::NAME, hb::BLOCK, hb::SHARED_BYTES)
        };
        print("histogram bytes", n, Line { kernel, grid: h.grid, block, shared, arg: 256, scratch: 0, zero: true });
        even::<u16>(&algos, "u16", n)?;
        even::<u32>(&algos, "u32", n)?;
        even::<f32>(&algos, "f32", n)?;
        scan::<u32>("u32", n);
        scan::<i32>("i32", n);
        scan::<u64>("u64", n);
        scan::<i64>("i64", n);
        scan::<f32>("f32", n);
        scan::<f64>("f64", n);
    }
    Ok(())
}
