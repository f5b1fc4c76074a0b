//! The sort on the emulator, race-checked: exact and stable against a CPU reference for every key type,
//! keys alone and with 4-byte and 8-byte values, ascending and descending, by all bits and by a range,
//! at sizes with partial tiles and on inputs that are random, all equal, already sorted and reverse
//! sorted, or whose keys share some digits (passes that move no key), on schedule seeds 1 to 5; and
//! the errors for bad input.
use gpu_algos::sort::{self, Order};
use gpu_algos::{Algos, Sortable};
use gpu_algos_kernels::sort::SortKey;
use gpu_host::Device;
use rand::distributions::{Distribution, Standard};
use rand::{Rng, SeedableRng, rngs::StdRng};

mod common;
use common::{check_pairs, clean, reference};

fn emu(seed: u64) -> Device {
    Device::emulator(gpu_host::EmuOptions { schedule_seed: seed, ..Default::default() })
}

/// Tiles on the emulator hold `EMU_SORT_BLOCK * ITEMS` keys.
const TILE: usize = gpu_algos::plan::EMU_SORT_BLOCK as usize * gpu_algos_kernels::sort::ITEMS;

/// The inputs of one size: random, all equal, sorted, reverse sorted (by the key's order).
fn inputs<K: SortKey>(n: usize, rng: &mut StdRng) -> Vec<(&'static str, Vec<K>)>
where
    Standard: Distribution<K>,
{
    let random: Vec<K> = (0..n).map(|_| rng.r#gen()).collect();
    let one: K = rng.r#gen();
    let mut sorted = random.clone();
    sorted.sort_by_key(|k| k.ordered());
    let mut reversed = sorted.clone();
    reversed.reverse();
    vec![("random", random), ("all equal", vec![one; n]), ("sorted", sorted), ("reverse sorted", reversed)]
}

fn check_keys<K: Sortable>(dev: &Device, keys: &[K], order: &Order, what: &str) -> anyhow::Result<()> {
    let n = keys.len();
    let kb = dev.upload("keys", keys)?;
    let mut ko = dev.filled("keys_out", n, K::from_word(0))?;
    Algos::new(dev)?.sort_keys_by(&kb, &mut ko, order)?;
    let want = reference(keys, order);
    let got = ko.read()?;
    for (j, &i) in want.iter().enumerate() {
        assert_eq!(got[j].to_word(), keys[i].to_word(), "{what}: key {j} of {n}");
    }
    clean(dev, what);
    Ok(())
}

/// Sizes: one key, a few, a tile ± 1, several tiles (all these on the one-block sort, up to `SMALL_MAX_LEN`
/// keys), the one-block sort's largest, one more (the passes), several tiles with a partial last one.
const SIZES: [usize; 9] = [1, 7, TILE - 1, TILE + 1, 3 * TILE + 17, SMALL, SMALL + 1, 9 * TILE + 1, 12 * TILE + 5];
const SMALL: usize = gpu_algos_kernels::sort::small::SMALL_MAX_LEN;

macro_rules! key_sorts {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() -> anyhow::Result<()> {
            let mut rng = StdRng::seed_from_u64(5);
            for &n in &SIZES {
                for (kind, keys) in inputs::<$t>(n, &mut rng) {
                    for seed in 1..=5u64 {
                        let dev = emu(seed);
                        let what = format!("{} {kind} n = {n}, seed {seed}", stringify!($t));
                        // Each seed sorts one way: keys up and down, pairs with 4-byte and 8-byte values.
                        match seed {
                            1 => check_keys::<$t>(&dev, &keys, &Order::ascending(), &what)?,
                            2 => check_keys::<$t>(&dev, &keys, &Order::descending(), &what)?,
                            3 => check_pairs::<$t, u32>(&dev, &keys, &Order::ascending(), &what)?,
                            4 => check_pairs::<$t, u64>(&dev, &keys, &Order::descending(), &what)?,
                            _ => check_pairs::<$t, u32>(&dev, &keys, &Order::ascending().bits(3..<$t>::BITS - 5), &what)?,
                        }
                    }
                }
            }
            Ok(())
        }
    )*};
}
key_sorts! {
    u32_keys_sort_exactly_and_stably: u32;
    i32_keys_sort_exactly_and_stably: i32;
    u64_keys_sort_exactly_and_stably: u64;
    i64_keys_sort_exactly_and_stably: i64;
}

/// Float keys from a mix of specials and random values: both zeros, both infinities, NaNs of both
/// signs, subnormals.
fn float_keys<F: Copy>(n: usize, rng: &mut StdRng, specials: &[F], random: impl Fn(&mut StdRng) -> F) -> Vec<F> {
    (0..n).map(|i| if i % 5 == 0 { specials[rng.gen_range(0..specials.len())] } else { random(rng) }).collect()
}

#[test]
fn float_keys_sort_in_ieee_total_order() -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(9);
    let s32 = [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, f32::MIN_POSITIVE / 4.0, 1.0, -1.0];
    let s64 = [0.0f64, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN, f64::MIN_POSITIVE / 4.0, 1.0, -1.0];
    for (k, &n) in SIZES.iter().enumerate() {
        let dev = emu(k as u64 + 1);
        let x32 = float_keys(n, &mut rng, &s32, |r| r.gen_range(-1e3f32..1e3));
        let x64 = float_keys(n, &mut rng, &s64, |r| r.gen_range(-1e3f64..1e3));
        check_pairs::<f32, u32>(&dev, &x32, &Order::ascending(), &format!("f32 n = {n}"))?;
        check_pairs::<f64, u64>(&dev, &x64, &Order::descending(), &format!("f64 n = {n}"))?;
        // The reference's order is `total_cmp`'s.
        let mut by_total = x32.clone();
        by_total.sort_by(|a, b| a.total_cmp(b));
        let order = reference(&x32, &Order::ascending());
        assert!(order.iter().zip(&by_total).all(|(&i, b)| x32[i].to_bits() == b.to_bits()), "total order, n = {n}");
    }
    Ok(())
}

#[test]
fn few_distinct_keys_sort_stably_across_many_tiles() -> anyhow::Result<()> {
    // Three distinct keys over 30 tiles: long runs of one digit, look-backs over many aggregates.
    let mut rng = StdRng::seed_from_u64(3);
    let n = 30 * TILE + 3;
    let keys: Vec<u32> = (0..n).map(|_| [7u32, 0x0100_0000, u32::MAX][rng.gen_range(0..3)]).collect();
    for seed in 1..=2 {
        check_pairs::<u32, u32>(&emu(seed), &keys, &Order::ascending(), &format!("few distinct, seed {seed}"))?;
    }
    Ok(())
}

#[test]
fn passes_whose_keys_share_one_digit_move_none_between_passes_that_rank() -> anyhow::Result<()> {
    // u32 keys below 2^12: the two top passes find one digit (every key stays in place), the two low
    // ones rank. u64 keys that differ only in bits 32..44: passes 4 and 5 rank, the other six find
    // one digit. In every order the macro's tests use.
    let mut rng = StdRng::seed_from_u64(11);
    // The one-block sort (up to `SMALL` keys) skips such passes too.
    for n in [777, SMALL, SMALL + 1, 9 * TILE + 1] {
        let narrow: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1 << 12)).collect();
        let middle: Vec<u64> = (0..n).map(|_| rng.gen_range(0..1u64 << 12) << 32 | 0xabcd).collect();
        for seed in 1..=5u64 {
            let dev = emu(seed);
            let what = format!("n = {n}, seed {seed}");
            match seed {
                1 => check_keys::<u32>(&dev, &narrow, &Order::ascending(), &what)?,
                2 => check_keys::<u64>(&dev, &middle, &Order::descending(), &what)?,
                3 => check_pairs::<u32, u32>(&dev, &narrow, &Order::descending(), &what)?,
                4 => check_pairs::<u64, u64>(&dev, &middle, &Order::ascending(), &what)?,
                _ => check_pairs::<u64, u32>(&dev, &middle, &Order::ascending().bits(3..59), &what)?,
            }
        }
    }
    Ok(())
}

#[test]
fn the_free_functions_sort_and_an_empty_input_is_a_no_op() -> anyhow::Result<()> {
    let dev = emu(1);
    let k = dev.upload("k", &[5u32, 3, 9, 3, 1])?;
    let v = dev.upload("v", &[0.5f32, 0.3, 0.9, 0.31, 0.1])?;
    let (mut ko, mut vo) = (dev.filled("ko", 5, 0u32)?, dev.filled("vo", 5, 0f32)?);
    sort::sort_keys(&dev, &k, &mut ko)?;
    assert_eq!(ko.read()?, [1, 3, 3, 5, 9]);
    sort::sort_keys_descending(&dev, &k, &mut ko)?;
    assert_eq!(ko.read()?, [9, 5, 3, 3, 1]);
    sort::sort_pairs(&dev, &k, &v, &mut ko, &mut vo)?;
    assert_eq!(vo.read()?, [0.1, 0.3, 0.31, 0.5, 0.9]);
    sort::sort_pairs_descending(&dev, &k, &v, &mut ko, &mut vo)?;
    assert_eq!(vo.read()?, [0.9, 0.5, 0.3, 0.31, 0.1], "descending and stable: equal keys keep their order");
    let e = dev.upload("e", &[] as &[u64])?;
    let mut eo = dev.filled("eo", 0, 0u64)?;
    sort::sort_keys(&dev, &e, &mut eo)?;
    clean(&dev, "free functions");
    Ok(())
}

#[test]
fn bad_input_is_an_error() -> anyhow::Result<()> {
    let dev = emu(1);
    let k = dev.upload("k", &[5u32, 3, 9])?;
    let mut short = dev.filled("short", 2, 0u32)?;
    let err = sort::sort_keys(&dev, &k, &mut short).unwrap_err().to_string();
    assert!(err.contains("output holds 2 keys"), "{err}");
    let mut out = dev.filled("out", 3, 0u32)?;
    let v = dev.upload("v", &[1u64, 2])?;
    let mut vo = dev.filled("vo", 3, 0u64)?;
    let err = sort::sort_pairs(&dev, &k, &v, &mut out, &mut vo).unwrap_err().to_string();
    assert!(err.contains("3 keys but 2 values"), "{err}");
    let algos = Algos::new(&dev)?;
    // Empty, reversed (built from its ends: the point is a bad range), past the key's 32 bits.
    for bits in [4..4, std::ops::Range { start: 8, end: 3 }, 0..33] {
        let err = algos.sort_keys_by(&k, &mut out, &Order::ascending().bits(bits.clone())).unwrap_err().to_string();
        assert!(err.contains("bit range"), "{bits:?}: {err}");
    }
    Ok(())
}
