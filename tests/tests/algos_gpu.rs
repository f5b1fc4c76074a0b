//! gpu-algos on the GPU: every call and element type against the CPU, on sizes that take each launch
//! path (the one-block kernels, the grid-wide ones, the scan's zeroed state from 2^25 elements), one
//! `Algos` kept across calls; the deterministic sum's bits equal to the emulator's. Without a GPU each
//! test prints "skipped: no CUDA device".
use gpu_algos::{Algos, histogram, reduce, scan};
use rand::{Rng, SeedableRng, rngs::StdRng};

#[path = "../../gpu-algos/tests/common/mod.rs"]
mod common;
use common::gpu_or_skip;
use gpu_host::Device;

/// One element; a partial vector; the small kernels' sizes; past them (grid-wide); large.
const SIZES: [usize; 5] = [1, 1_001, 65_537, (1 << 20) + 3, (1 << 24) + 5];

macro_rules! int_reductions {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() -> anyhow::Result<()> {
            let Some(dev) = gpu_or_skip(stringify!($name)) else { return Ok(()) };
            let algos = Algos::new(&dev)?;
            let mut rng = StdRng::seed_from_u64(1);
            for &n in &SIZES {
                let x: Vec<$t> = (0..n).map(|_| rng.r#gen()).collect();
                let b = dev.upload("x", &x)?;
                assert_eq!(algos.sum(&b)?, x.iter().fold(0 as $t, |a, &v| a.wrapping_add(v)), "sum of {n}");
                assert_eq!(algos.min(&b)?, *x.iter().min().unwrap(), "min of {n}");
                assert_eq!(algos.max(&b)?, *x.iter().max().unwrap(), "max of {n}");
            }
            Ok(())
        }
    )*};
}
int_reductions! {
    u32_reductions_are_exact: u32;
    i32_reductions_are_exact: i32;
    u64_reductions_are_exact: u64;
    i64_reductions_are_exact: i64;
}

macro_rules! float_reductions {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() -> anyhow::Result<()> {
            let Some(dev) = gpu_or_skip(stringify!($name)) else { return Ok(()) };
            let algos = Algos::new(&dev)?;
            let mut rng = StdRng::seed_from_u64(2);
            for &n in &SIZES {
                let x: Vec<$t> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
                let b = dev.upload("x", &x)?;
                let exact: f64 = x.iter().map(|&v| v as f64).sum();
                let abs: f64 = x.iter().map(|&v| (v as f64).abs()).sum();
                let bound = 2.0 * (n as f64).log2().max(1.0) * (<$t>::EPSILON as f64) * abs;
                let got = algos.sum(&b)? as f64;
                assert!((got - exact).abs() <= bound, "sum of {n}: {got} against {exact}");
                let det = algos.deterministic_sum(&b)?;
                assert!((det as f64 - exact).abs() <= bound, "deterministic sum of {n}");
                assert_eq!(algos.deterministic_sum(&b)?.to_bits(), det.to_bits(), "deterministic sum of {n}, twice");
                if n <= 65_537 {
                    // The same bits on the emulator (another grid, another schedule).
                    let emu = Device::emulator(Default::default());
                    let e = reduce::deterministic_sum(&emu, &emu.upload("x", &x)?)?;
                    assert_eq!(e.to_bits(), det.to_bits(), "deterministic sum of {n}: GPU {det} emulator {e}");
                }
                assert_eq!(algos.min(&b)?, x.iter().copied().fold(<$t>::INFINITY, <$t>::min), "min of {n}");
                assert_eq!(algos.max(&b)?, x.iter().copied().fold(<$t>::NEG_INFINITY, <$t>::max), "max of {n}");
            }
            Ok(())
        }
    )*};
}
float_reductions! {
    f32_reductions_are_within_their_bounds: f32;
    f64_reductions_are_within_their_bounds: f64;
}

macro_rules! float_specials {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() -> anyhow::Result<()> {
            // On the GPU as on the emulator: a NaN anywhere makes the minimum and the maximum NaN, and
            // -0.0 orders before +0.0; on the one-block and on the grid-wide kernels.
            let Some(dev) = gpu_or_skip(stringify!($name)) else { return Ok(()) };
            let algos = Algos::new(&dev)?;
            for n in [1_000usize, (1 << 20) + 3] {
                let mut x = vec![0.0 as $t; n];
                x[n / 3] = -0.0;
                let b = dev.upload("x", &x)?;
                assert!(algos.min(&b)?.is_sign_negative(), "min of zeros with one -0.0, n = {n}");
                assert!(algos.max(&b)?.is_sign_positive(), "max of zeros with one -0.0, n = {n}");
                let mut x = vec![-0.0 as $t; n];
                x[n / 2] = 0.0;
                let b = dev.upload("x", &x)?;
                assert!(algos.min(&b)?.is_sign_negative(), "min of -0.0s with one +0.0, n = {n}");
                assert!(algos.max(&b)?.is_sign_positive(), "max of -0.0s with one +0.0, n = {n}");
                let mut x: Vec<$t> = (0..n).map(|i| i as $t).collect();
                x[n - 7] = <$t>::NAN;
                let b = dev.upload("x", &x)?;
                assert!(algos.min(&b)?.is_nan() && algos.max(&b)?.is_nan(), "a NaN, n = {n}");
            }
            Ok(())
        }
    )*};
}
float_specials! {
    f32_minima_and_maxima_see_nan_and_signed_zeros: f32;
    f64_minima_and_maxima_see_nan_and_signed_zeros: f64;
}

#[test]
fn histograms_are_exact() -> anyhow::Result<()> {
    let Some(dev) = gpu_or_skip("histograms_are_exact") else { return Ok(()) };
    let algos = Algos::new(&dev)?;
    let mut rng = StdRng::seed_from_u64(3);
    for &n in &SIZES {
        let data: Vec<u8> = (0..n).map(|_| if rng.gen_bool(0.3) { 42 } else { rng.r#gen() }).collect();
        let mut want = vec![0u32; 256];
        data.iter().for_each(|&b| want[b as usize] += 1);
        let mut hist = dev.filled("hist", 256, 7u32)?;
        algos.histogram_bytes(&dev.upload("data", &data)?, &mut hist)?;
        assert_eq!(hist.read()?, want, "bytes, n = {n}");
        // 100 bins: one shared set per block; 256: per-lane columns; 10_000: global atomics.
        for bins in [100usize, 256, 10_000] {
            let x: Vec<u32> = (0..n).map(|_| rng.gen_range(0..5_000_000)).collect();
            let mut want = vec![0u32; bins];
            for &v in &x {
                if (1_000..4_000_001).contains(&v) {
                    want[((v - 1_000) as u64 * bins as u64 / 4_000_001u64.wrapping_sub(1_000)) as usize] += 1;
                }
            }
            let mut hist = dev.filled("hist", bins, 0u32)?;
            histogram::even(&dev, &dev.upload("x", &x)?, 1_000u32, 4_000_001u32, &mut hist)?;
            assert_eq!(hist.read()?, want, "even u32, n = {n}, {bins} bins");
            let x: Vec<u16> = (0..n).map(|_| rng.r#gen()).collect();
            let mut want = vec![0u32; bins];
            for &v in &x {
                if v < 65_535 {
                    want[(v as u64 * bins as u64 / 65_535) as usize] += 1;
                }
            }
            algos.histogram_even(&dev.upload("x", &x)?, 0u16, 65_535u16, &mut hist)?;
            assert_eq!(hist.read()?, want, "even u16, n = {n}, {bins} bins");
            let x: Vec<f32> = (0..n).map(|i| if i % 97 == 0 { f32::NAN } else { rng.gen_range(-1.5..1.5) }).collect();
            let mut want = vec![0u32; bins];
            for &v in &x {
                if (-1.0..1.0).contains(&v) {
                    want[(((v as f64 + 1.0) * (bins as f64 / 2.0)) as usize).min(bins - 1)] += 1;
                }
            }
            algos.histogram_even(&dev.upload("x", &x)?, -1.0f32, 1.0f32, &mut hist)?;
            assert_eq!(hist.read()?, want, "even f32, n = {n}, {bins} bins");
        }
    }
    Ok(())
}

/// Scan sizes: the zeroed-state path from 2^25 on as well.
const SCAN_SIZES: [usize; 5] = [1, 1_001, 70_003, (1 << 22) + 9, (1 << 25) + 11];

macro_rules! int_scans {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() -> anyhow::Result<()> {
            let Some(dev) = gpu_or_skip(stringify!($name)) else { return Ok(()) };
            let algos = Algos::new(&dev)?;
            let mut rng = StdRng::seed_from_u64(4);
            for &n in &SCAN_SIZES {
                let x: Vec<$t> = (0..n).map(|_| rng.r#gen()).collect();
                let (incl, excl) = common::prefixes(&x, <$t>::wrapping_add);
                let b = dev.upload("x", &x)?;
                let mut out = dev.filled("out", n, 0 as $t)?;
                // Twice each with the kept state: the second launch is tagged with the next epoch.
                for _ in 0..2 {
                    algos.inclusive_sum(&b, &mut out)?;
                    assert_eq!(out.read()?, incl, "inclusive, n = {n}");
                    algos.exclusive_sum(&b, &mut out)?;
                    assert_eq!(out.read()?, excl, "exclusive, n = {n}");
                }
                let mut d = dev.upload("d", &x)?;
                scan::inclusive_sum_in_place(&dev, &mut d)?;
                assert_eq!(d.read()?, incl, "inclusive in place, n = {n}");
                let mut d = dev.upload("d", &x)?;
                algos.exclusive_sum_in_place(&mut d)?;
                assert_eq!(d.read()?, excl, "exclusive in place, n = {n}");
            }
            Ok(())
        }
    )*};
}
int_scans! {
    u32_scans_are_exact: u32;
    i32_scans_are_exact: i32;
    u64_scans_are_exact: u64;
    i64_scans_are_exact: i64;
}

macro_rules! float_scans {
    ($($name:ident: $t:ty, $u:expr;)*) => {$(
        #[test]
        fn $name() -> anyhow::Result<()> {
            let Some(dev) = gpu_or_skip(stringify!($name)) else { return Ok(()) };
            let algos = Algos::new(&dev)?;
            let mut rng = StdRng::seed_from_u64(5);
            for &n in &SCAN_SIZES {
                let x: Vec<$t> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
                let b = dev.upload("x", &x)?;
                let p = gpu_algos::plan::scan::<$t>(n);
                let tile = (p.block as usize) * gpu_algos_kernels::scan::items::<$t>();
                for exclusive in [false, true] {
                    let mut out = dev.filled("out", n, 0.0 as $t)?;
                    if exclusive { algos.exclusive_sum(&b, &mut out)? } else { algos.inclusive_sum(&b, &mut out)? }
                    common::assert_float_scan(&x, &out.read()?, exclusive, tile, $u);
                }
            }
            Ok(())
        }
    )*};
}
float_scans! {
    f32_scans_are_within_the_bound: f32, (f32::EPSILON / 2.0) as f64;
    f64_scans_are_within_the_bound: f64, f64::EPSILON / 2.0;
}
