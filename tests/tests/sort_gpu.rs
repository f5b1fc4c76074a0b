//! gpu-algos' sort on the GPU: every key type, keys alone and with 4-byte and 8-byte values,
//! ascending, descending and by a bit range, at sizes from one key to several thousand tiles (with
//! partial last tiles), on random keys, three distinct keys, keys that differ only in their lowest
//! 12 bits and sorted keys, exact and stable against the CPU; one `Algos` kept across calls. Without a
//! GPU each test prints "skipped: no CUDA device".
use gpu_algos::sort::Order;
use gpu_algos::{Algos, Sortable};
use rand::distributions::{Distribution, Standard};
use rand::{Rng, SeedableRng, rngs::StdRng};

#[path = "../../gpu-algos/tests/common/mod.rs"]
mod common;
use common::gpu_or_skip;

/// One key; a partial tile; a tile + 1; many tiles; thousands of tiles.
const SIZES: [usize; 5] = [1, 1_001, 4_097, (1 << 20) + 3, (1 << 23) + 5];

/// Random keys, every fifth from `specials`.
fn keys<K: Copy>(n: usize, rng: &mut StdRng, specials: &[K]) -> Vec<K>
where
    Standard: Distribution<K>,
{
    (0..n)
        .map(
            |i| {
                if i % 5 == 0 && !specials.is_empty() {
                    specials[rng.gen_range(0..specials.len())]
                } else {
                    rng.r#gen()
                }
            },
        )
        .collect()
}

fn sorts<K: Sortable>(specials: &[K], name: &str) -> anyhow::Result<()>
where
    Standard: Distribution<K>,
{
    let Some(dev) = gpu_or_skip(name) else { return Ok(()) };
    let mut rng = StdRng::seed_from_u64(K::BITS as u64);
    for &n in &SIZES {
        let x = keys::<K>(n, &mut rng, specials);
        let few: Vec<K> = (0..n).map(|i| x[i % 3]).collect();
        // Keys that differ only in their lowest 12 bits (the passes above move no key), and sorted
        // keys (tiles whose keys share their top digit rank none).
        let narrow: Vec<K> = x.iter().map(|k| K::from_ordered(k.ordered() & 0xfff)).collect();
        let mut sorted = x.clone();
        sorted.sort_by_key(|k| k.ordered());
        for (kind, x) in [("random", &x), ("three distinct", &few), ("narrow", &narrow), ("sorted", &sorted)] {
            let what = format!("{name} {kind} n = {n}");
            common::check_pairs::<K, u32>(&dev, x, &Order::ascending(), &format!("{what}, pairs4 ascending"))?;
            common::check_pairs::<K, u64>(&dev, x, &Order::descending(), &format!("{what}, pairs8 descending"))?;
            let bits = Order::descending().bits(4..K::BITS - 3);
            common::check_pairs::<K, u32>(&dev, x, &bits, &format!("{what}, pairs4 by bits 4..{}", K::BITS - 3))?;
            // Keys alone, one `Algos` for both directions.
            let algos = Algos::new(&dev)?;
            let kb = dev.upload("keys", x)?;
            let mut out = dev.filled("out", n, K::from_word(0))?;
            for order in [Order::ascending(), Order::descending()] {
                algos.sort_keys_by(&kb, &mut out, &order)?;
                let got = out.read()?;
                let want = common::reference(x, &order);
                for (j, &i) in want.iter().enumerate() {
                    assert_eq!(got[j].to_word(), x[i].to_word(), "{what}, keys {order:?}: key {j}");
                }
            }
        }
    }
    Ok(())
}

#[test]
fn u32_keys_sort_exactly_and_stably() -> anyhow::Result<()> {
    sorts::<u32>(&[0, u32::MAX], "u32")
}
#[test]
fn i32_keys_sort_exactly_and_stably() -> anyhow::Result<()> {
    sorts::<i32>(&[0, -1, i32::MIN, i32::MAX], "i32")
}
#[test]
fn u64_keys_sort_exactly_and_stably() -> anyhow::Result<()> {
    sorts::<u64>(&[0, u64::MAX], "u64")
}
#[test]
fn i64_keys_sort_exactly_and_stably() -> anyhow::Result<()> {
    sorts::<i64>(&[0, -1, i64::MIN, i64::MAX], "i64")
}
#[test]
fn f32_keys_sort_in_total_order() -> anyhow::Result<()> {
    sorts::<f32>(&[0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, -1.5, 1e-40], "f32")
}
#[test]
fn f64_keys_sort_in_total_order() -> anyhow::Result<()> {
    sorts::<f64>(&[0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN, -1.5, 1e-310], "f64")
}
