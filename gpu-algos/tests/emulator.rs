//! Every call of the library on the emulator, race-checked: exact against the CPU for integers and
//! within the stated bounds for floats, at sizes with partial vectors and tiles, on the fast and the
//! small paths; and the errors for bad input.
use gpu_algos::{histogram, reduce, scan};
use gpu_host::Device;
use rand::{Rng, SeedableRng, rngs::StdRng};

mod common;

fn emu(seed: u64) -> Device {
    Device::emulator(gpu_host::EmuOptions { schedule_seed: seed, ..Default::default() })
}

fn clean(dev: &Device, what: &str) {
    let f = dev.take_findings();
    assert!(f.is_clean(), "{what}: the emulator found {:?}", f.races);
}

/// Sizes: empty, one element, a partial vector, below and above one tile, and one past the small
/// reduce kernel's limit for 4-byte elements (65536 of them), which takes the multi-block path.
const SIZES: [usize; 6] = [0, 1, 7, 1_001, 20_011, 70_003];

macro_rules! int_reductions {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() -> anyhow::Result<()> {
            let mut rng = StdRng::seed_from_u64(7);
            for (k, &n) in SIZES.iter().enumerate() {
                let dev = emu(k as u64 + 1);
                let x: Vec<$t> = (0..n).map(|_| rng.r#gen()).collect();
                let b = dev.upload("x", &x)?;
                let sum = x.iter().fold(0 as $t, |a, &v| a.wrapping_add(v));
                assert_eq!(reduce::sum(&dev, &b)?, sum, "sum of {n}");
                assert_eq!(reduce::min(&dev, &b)?, x.iter().copied().min().unwrap_or(<$t>::MAX), "min of {n}");
                assert_eq!(reduce::max(&dev, &b)?, x.iter().copied().max().unwrap_or(<$t>::MIN), "max of {n}");
                clean(&dev, stringify!($t));
            }
            Ok(())
        }
    )*};
}
int_reductions! {
    reductions_of_u32_are_exact: u32;
    reductions_of_i32_are_exact: i32;
    reductions_of_u64_are_exact: u64;
    reductions_of_i64_are_exact: i64;
}

macro_rules! float_reductions {
    ($($name:ident: $t:ty, $eps:expr;)*) => {$(
        #[test]
        fn $name() -> anyhow::Result<()> {
            let mut rng = StdRng::seed_from_u64(11);
            for (k, &n) in SIZES.iter().enumerate() {
                let dev = emu(k as u64 + 1);
                let x: Vec<$t> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
                let b = dev.upload("x", &x)?;
                let exact: f64 = x.iter().map(|&v| v as f64).sum();
                let abs: f64 = x.iter().map(|&v| (v as f64).abs()).sum();
                let bound = 2.0 * (n as f64).log2().max(1.0) * $eps * abs + f64::MIN_POSITIVE;
                let got = reduce::sum(&dev, &b)? as f64;
                assert!((got - exact).abs() <= bound, "sum of {n}: {got} against {exact} (bound {bound})");
                let det = reduce::deterministic_sum(&dev, &b)?;
                assert!((det as f64 - exact).abs() <= bound, "deterministic sum of {n}");
                // Its bits depend on the input only: another schedule, the same bits.
                let other = emu(99);
                let b2 = other.upload("x", &x)?;
                assert_eq!(reduce::deterministic_sum(&other, &b2)?.to_bits(), det.to_bits(), "n = {n}");
                let min = x.iter().copied().fold(<$t>::INFINITY, <$t>::min);
                let max = x.iter().copied().fold(<$t>::NEG_INFINITY, <$t>::max);
                assert_eq!(reduce::min(&dev, &b)?, min, "min of {n}");
                assert_eq!(reduce::max(&dev, &b)?, max, "max of {n}");
                clean(&dev, stringify!($t));
                clean(&other, stringify!($t));
            }
            Ok(())
        }
    )*};
}
float_reductions! {
    reductions_of_f32_are_within_their_bounds: f32, f32::EPSILON as f64;
    reductions_of_f64_are_within_their_bounds: f64, f64::EPSILON;
}

#[test]
fn float_minima_and_maxima_see_nan_and_signed_zeros() -> anyhow::Result<()> {
    let dev = emu(3);
    let mut x = vec![1.0f32; 70_003];
    x[40_000] = f32::NAN;
    let b = dev.upload("x", &x)?;
    assert!(reduce::min(&dev, &b)?.is_nan() && reduce::max(&dev, &b)?.is_nan());
    let z = dev.upload("z", &[0.0f64, -0.0, 0.0])?;
    assert!(reduce::min(&dev, &z)?.is_sign_negative());
    assert!(reduce::max(&dev, &z)?.is_sign_positive());
    clean(&dev, "nan");
    Ok(())
}

#[test]
fn byte_histograms_are_exact_on_both_kernels() -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(5);
    for (k, &n) in SIZES.iter().enumerate() {
        let dev = emu(k as u64 + 1);
        let data: Vec<u8> = (0..n).map(|_| if rng.gen_bool(0.3) { 42 } else { rng.r#gen() }).collect();
        let mut want = vec![0u32; 256];
        data.iter().for_each(|&b| want[b as usize] += 1);
        let d = dev.upload("data", &data)?;
        let mut hist = dev.filled("hist", 256, 7u32)?;
        histogram::bytes(&dev, &d, &mut hist)?;
        assert_eq!(hist.read()?, want, "n = {n}");
        clean(&dev, "bytes");
    }
    Ok(())
}

/// The CPU's even histogram, by the documented rule.
fn even_cpu_int(x: &[u64], lower: u64, upper: u64, bins: usize) -> Vec<u32> {
    let mut h = vec![0u32; bins];
    for &v in x {
        if v >= lower && v < upper {
            h[((v - lower) as u128 * bins as u128 / (upper - lower) as u128) as usize] += 1;
        }
    }
    h
}

#[test]
fn even_histograms_count_by_the_documented_rule() -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(9);
    // 100 bins: one shared set per block; 256: per-lane columns; 10_000: global atomics.
    for (k, &(n, bins)) in [(0usize, 3usize), (1, 1), (1_001, 256), (20_011, 100), (9_999, 10_000)].iter().enumerate() {
        let dev = emu(k as u64 + 1);
        let x16: Vec<u16> = (0..n).map(|_| rng.r#gen()).collect();
        let x32: Vec<u32> = (0..n).map(|_| rng.gen_range(0..5_000_000)).collect();
        let xf: Vec<f32> = (0..n).map(|i| if i % 97 == 0 { f32::NAN } else { rng.gen_range(-1.5..1.5) }).collect();
        let mut hist = dev.filled("hist", bins, 0u32)?;
        histogram::even(&dev, &dev.upload("x16", &x16)?, 100u16, 60_000u16, &mut hist)?;
        let w: Vec<u64> = x16.iter().map(|&v| v as u64).collect();
        assert_eq!(hist.read()?, even_cpu_int(&w, 100, 60_000, bins), "u16, n = {n}, {bins} bins");
        histogram::even(&dev, &dev.upload("x32", &x32)?, 1_000u32, 4_000_001u32, &mut hist)?;
        let w: Vec<u64> = x32.iter().map(|&v| v as u64).collect();
        assert_eq!(hist.read()?, even_cpu_int(&w, 1_000, 4_000_001, bins), "u32, n = {n}, {bins} bins");
        histogram::even(&dev, &dev.upload("xf", &xf)?, -1.0f32, 1.0f32, &mut hist)?;
        let scale = bins as f64 / 2.0;
        let mut want = vec![0u32; bins];
        for &v in &xf {
            if (-1.0..1.0).contains(&v) {
                want[(((v as f64 + 1.0) * scale) as usize).min(bins - 1)] += 1;
            }
        }
        assert_eq!(hist.read()?, want, "f32, n = {n}, {bins} bins");
        clean(&dev, "even");
    }
    Ok(())
}

#[test]
fn histograms_refuse_bad_ranges_and_outputs() -> anyhow::Result<()> {
    let dev = emu(1);
    let x = dev.upload("x", &[1.0f32, 2.0])?;
    let mut hist = dev.filled("hist", 4, 0u32)?;
    let e = histogram::even(&dev, &x, 2.0, 2.0, &mut hist).unwrap_err();
    assert!(e.to_string().contains("lower < upper"), "{e}");
    assert!(histogram::even(&dev, &x, f32::NAN, 2.0, &mut hist).is_err());
    let mut none = dev.filled("none", 0, 0u32)?;
    assert!(histogram::even(&dev, &x, 0.0, 2.0, &mut none).unwrap_err().to_string().contains("0 bins"));
    let bytes = dev.upload("b", &[1u8, 2])?;
    let e = histogram::bytes(&dev, &bytes, &mut hist).unwrap_err();
    assert!(e.to_string().contains("256"), "{e}");
    Ok(())
}

macro_rules! int_scans {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() -> anyhow::Result<()> {
            let mut rng = StdRng::seed_from_u64(13);
            let algos_dev = emu(4);
            let algos = gpu_algos::Algos::new(&algos_dev)?;
            for (k, &n) in SIZES.iter().enumerate() {
                let dev = emu(k as u64 + 1);
                let x: Vec<$t> = (0..n).map(|_| rng.r#gen()).collect();
                let (incl, excl) = common::prefixes(&x, <$t>::wrapping_add);
                let b = dev.upload("x", &x)?;
                let mut out = dev.filled("out", n, 0 as $t)?;
                scan::inclusive_sum(&dev, &b, &mut out)?;
                assert_eq!(out.read()?, incl, "inclusive, n = {n}");
                scan::exclusive_sum(&dev, &b, &mut out)?;
                assert_eq!(out.read()?, excl, "exclusive, n = {n}");
                let mut d = dev.upload("d", &x)?;
                scan::inclusive_sum_in_place(&dev, &mut d)?;
                assert_eq!(d.read()?, incl, "inclusive in place, n = {n}");
                let mut d = dev.upload("d", &x)?;
                scan::exclusive_sum_in_place(&dev, &mut d)?;
                assert_eq!(d.read()?, excl, "exclusive in place, n = {n}");
                clean(&dev, stringify!($t));
                // One `Algos` for every size: its state and epochs carry over from call to call.
                let b = algos_dev.upload("x", &x)?;
                let mut out = algos_dev.filled("out", n, 0 as $t)?;
                algos.inclusive_sum(&b, &mut out)?;
                assert_eq!(out.read()?, incl, "inclusive with a kept state, n = {n}");
            }
            clean(&algos_dev, "kept state");
            Ok(())
        }
    )*};
}
int_scans! {
    scans_of_u32_are_exact: u32;
    scans_of_i32_are_exact: i32;
    scans_of_u64_are_exact: u64;
    scans_of_i64_are_exact: i64;
}

macro_rules! float_scans {
    ($($name:ident: $t:ty, $u:expr;)*) => {$(
        #[test]
        fn $name() -> anyhow::Result<()> {
            let mut rng = StdRng::seed_from_u64(17);
            for (k, &n) in SIZES.iter().enumerate() {
                let dev = emu(k as u64 + 1);
                let x: Vec<$t> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
                let b = dev.upload("x", &x)?;
                let p = gpu_algos::plan::scan::<$t>(n.max(1));
                let tile = (p.block as usize) * gpu_algos_kernels::scan::items::<$t>();
                for exclusive in [false, true] {
                    let mut out = dev.filled("out", n, 0.0 as $t)?;
                    if exclusive { scan::exclusive_sum(&dev, &b, &mut out)? } else { scan::inclusive_sum(&dev, &b, &mut out)? }
                    common::assert_float_scan(&x, &out.read()?, exclusive, tile, $u);
                }
                clean(&dev, stringify!($t));
            }
            Ok(())
        }
    )*};
}
float_scans! {
    scans_of_f32_are_within_the_bound: f32, (f32::EPSILON / 2.0) as f64;
    scans_of_f64_are_within_the_bound: f64, f64::EPSILON / 2.0;
}

#[test]
fn scans_and_reductions_refuse_outputs_of_the_wrong_length() -> anyhow::Result<()> {
    let dev = emu(1);
    let x = dev.upload("x", &[1u32, 2, 3])?;
    let mut short = dev.filled("short", 2, 0u32)?;
    let e = scan::inclusive_sum(&dev, &x, &mut short).unwrap_err();
    assert!(e.to_string().contains("output holds 2 elements, the input 3"), "{e}");
    let algos = gpu_algos::Algos::new(&dev)?;
    let two = dev.filled("two", 2, 0u32)?;
    let e = algos.reduce_into::<u32, gpu_algos::Sum>(&x, &two, false).unwrap_err();
    assert!(e.to_string().contains("one element, not 2"), "{e}");
    Ok(())
}

/// One `Algos` lends its ticket and partials to every reduction it runs: sealed on the pair (element
/// type, operation), `Reducible` has no implementation outside the library that could be handed them
/// (the `compile_fail` doctest of `Reducible` tries one). Here every pair the library has, on the
/// grid-wide path, one after the other on one `Algos`, each exact: no call leaves the shared storage
/// in a state that changes a later result.
#[test]
fn one_algos_lends_its_storage_to_every_reduction_pair_and_each_result_is_exact() -> anyhow::Result<()> {
    let dev = emu(1);
    let algos = gpu_algos::Algos::new(&dev)?;
    let mut rng = StdRng::seed_from_u64(11);
    let n = 70_003;
    let u: Vec<u32> = (0..n).map(|_| rng.r#gen()).collect();
    let i: Vec<i64> = (0..n).map(|_| rng.r#gen()).collect();
    let f: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let (bu, bi, bf) = (dev.upload("u", &u)?, dev.upload("i", &i)?, dev.upload("f", &f)?);
    for round in 0..2 {
        assert_eq!(algos.sum(&bu)?, u.iter().fold(0u32, |a, &v| a.wrapping_add(v)), "round {round}");
        assert_eq!(algos.min(&bi)?, *i.iter().min().unwrap(), "round {round}");
        assert_eq!(algos.max(&bf)?, f.iter().copied().fold(f64::NEG_INFINITY, f64::max), "round {round}");
        assert_eq!(algos.max(&bu)?, *u.iter().max().unwrap(), "round {round}");
        assert_eq!(algos.sum(&bi)?, i.iter().fold(0i64, |a, &v| a.wrapping_add(v)), "round {round}");
        assert_eq!(algos.min(&bf)?, f.iter().copied().fold(f64::INFINITY, f64::min), "round {round}");
    }
    clean(&dev, "reductions on one Algos");
    Ok(())
}
