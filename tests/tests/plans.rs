//! `bench/plans-h200.tsv` (what the `plans` example of gpu-algos printed on the H200 of
//! `bench/algos.csv`, and what `bench/algos.cu` launched there) is what the library's launch rules
//! give now for that GPU: every line recomputed from `gpu_algos::plan` with 132 SMs and the resident
//! blocks the file shows (a kernel's largest grid). A change of the rules fails here until the bench
//! is run again.
use gpu_algos::kernels::{EvenSample, Reducible, Scannable};
use gpu_algos::plan::{self, Target};
use gpu_algos::{Element, Max, Min, Sum};
use gpu_algos_kernels::histogram::{bytes as hb, even as he, small as hs};
use gpu_algos_kernels::{reduce as rk, scan as sk};
use gpu_std::Kernel;

const H200: Target = Target { gpu: true, sms: 132 };

/// One launch: kernel, grid, block, shared bytes, arg, scratch words, zeroed first.
type Launch = (String, u32, u32, usize, u64, usize, bool);

fn reduce<T: Reducible<O>, O>(n: usize, resident: u32, det: bool) -> Launch {
    match plan::reduce::<T>(n, H200, resident, det) {
        plan::Reduce::Small => (T::SMALL_KERNEL.into(), 1, rk::BLOCK, rk::SHARED_BYTES, 0, 0, false),
        p @ plan::Reduce::Fast { grid, vblocks } => {
            (T::FAST_KERNEL.into(), grid, rk::BLOCK, rk::SHARED_BYTES, vblocks.into(), plan::reduce_partials(p), false)
        }
        plan::Reduce::Empty => panic!("no launch for n = {n}"),
    }
}

fn scan<T: Scannable>(n: usize, exclusive: bool) -> Launch {
    let p = plan::scan::<T>(n);
    let kernel = T::KERNELS[usize::from(exclusive)];
    (kernel.into(), p.tiles, p.block, sk::shared_bytes_of::<T>(), 0, p.state_words, p.zero_state)
}

fn even<T: EvenSample>(n: usize, resident: u32) -> Launch {
    (T::KERNEL.into(), plan::histogram_even(n, H200, resident), he::BLOCK, he::SHARED_BYTES, 256, 0, true)
}

fn expected(workload: &str, n: usize, resident: &dyn Fn(&str) -> u32) -> Launch {
    macro_rules! by_type {
        ($ty:expr, $f:ident ($($arg:expr),*)) => {
            match $ty {
                "u32" => $f::<u32>($($arg),*),
                "i32" => $f::<i32>($($arg),*),
                "u64" => $f::<u64>($($arg),*),
                "i64" => $f::<i64>($($arg),*),
                "f32" => $f::<f32>($($arg),*),
                "f64" => $f::<f64>($($arg),*),
                other => panic!("type {other}"),
            }
        };
    }
    fn reduce_op<T: Reducible<Sum> + Reducible<Min> + Reducible<Max> + Element>(
        op: &str,
        n: usize,
        resident: u32,
    ) -> Launch {
        match op {
            "sum" => reduce::<T, Sum>(n, resident, false),
            "min" => reduce::<T, Min>(n, resident, false),
            "max" => reduce::<T, Max>(n, resident, false),
            "deterministic_sum" => reduce::<T, Sum>(n, resident, true),
            other => panic!("op {other}"),
        }
    }
    let words: Vec<&str> = workload.split(' ').collect();
    match words.as_slice() {
        ["reduce", op, ty] => {
            let fast = format!("reduce_{}_{ty}", if *op == "deterministic_sum" { "sum" } else { op });
            by_type!(*ty, reduce_op(op, n, resident(&fast)))
        }
        ["scan", kind, ty] => by_type!(*ty, scan(n, *kind == "exclusive")),
        ["histogram", "bytes"] => {
            let p = plan::histogram_bytes(n, H200, resident(<hb::histogram_bytes as Kernel>::NAME));
            let (kernel, block, shared) = if p.small {
                (<hs::histogram_bytes_small as Kernel>::NAME, hs::BLOCK, hs::SHARED_BYTES)
            } else {
                (<hb::histogram_bytes as Kernel>::NAME, hb::BLOCK, hb::SHARED_BYTES)
            };
            (kernel.into(), p.grid, block, shared, 256, 0, true)
        }
        ["histogram", "even", "u16"] => even::<u16>(n, resident("histogram_even_u16")),
        ["histogram", "even", "u32"] => even::<u32>(n, resident("histogram_even_u32")),
        ["histogram", "even", "f32"] => even::<f32>(n, resident("histogram_even_f32")),
        _ => panic!("workload {workload}"),
    }
}

#[test]
fn the_benchs_launches_are_the_librarys() {
    let path = tests::root().join("bench/plans-h200.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rows: Vec<Vec<&str>> =
        text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).map(|l| l.split('\t').collect()).collect();
    assert!(text.lines().next().is_some_and(|l| l.contains("H200") && l.ends_with("sms\t132")), "{}", path.display());
    let resident =
        |kernel: &str| rows.iter().filter(|r| r[2] == kernel).map(|r| r[3].parse::<u32>().unwrap()).max().unwrap_or(1);
    assert_eq!(rows.len(), 21 * 36, "21 sizes of 36 workloads");
    for r in &rows {
        let n: usize = r[1].parse().unwrap();
        let (kernel, grid, block, shared, arg, scratch, zero) = expected(r[0], n, &resident);
        let got = (r[2], r[3], r[4], r[5], r[6], r[7], r[8]);
        let want = (
            kernel.as_str(),
            grid.to_string(),
            block.to_string(),
            shared.to_string(),
            arg.to_string(),
            scratch.to_string(),
            if zero { "1" } else { "0" },
        );
        assert_eq!(
            got,
            (want.0, want.1.as_str(), want.2.as_str(), want.3.as_str(), want.4.as_str(), want.5.as_str(), want.6),
            "{} n = {n}",
            r[0]
        );
    }
}
