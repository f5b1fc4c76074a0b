//! The checks that the library's emulator tests and its GPU tests (`tests/tests/algos_gpu.rs`, which
//! includes this file) share.
#![allow(dead_code)]

/// The inclusive and the exclusive prefix sums of `x` by `add` (wrapping, for integers).
pub fn prefixes<T: Copy + Default>(x: &[T], add: impl Fn(T, T) -> T) -> (Vec<T>, Vec<T>) {
    let mut incl = Vec::with_capacity(x.len());
    let mut acc = T::default();
    for &v in x {
        acc = add(acc, v);
        incl.push(acc);
    }
    let excl = (0..x.len()).map(|i| if i == 0 { T::default() } else { incl[i - 1] }).collect();
    (incl, excl)
}

/// Asserts that `got`, the float scan of `x` (`exclusive` or inclusive) on tiles of `tile` elements,
/// is within the library's stated bound of the exact prefix: `(t + 64) u sum|x[..=i]|` for an
/// element of tile `t`, `u` the unit roundoff.
pub fn assert_float_scan<T: Copy + Into<f64> + std::fmt::Debug>(
    x: &[T],
    got: &[T],
    exclusive: bool,
    tile: usize,
    u: f64,
) {
    let n = x.len();
    let (mut exact, mut abs) = (0.0f64, 0.0f64);
    for i in 0..n {
        if !exclusive {
            exact += x[i].into();
            abs += x[i].into().abs();
        }
        let bound = ((i / tile) as f64 + 64.0) * u * abs;
        let g: f64 = got[i].into();
        assert!((g - exact).abs() <= bound, "exclusive {exclusive}, n = {n}, i = {i}: {g} against {exact}");
        if exclusive {
            exact += x[i].into();
            abs += x[i].into().abs();
        }
    }
}

use gpu_algos::sort::Order;
use gpu_algos::{Algos, SortValue, Sortable};
use gpu_algos_kernels::sort::SortKey;
use gpu_host::Device;

/// Asserts that the emulator found nothing on `dev` (nothing to find on a GPU).
pub fn clean(dev: &Device, what: &str) {
    let f = dev.take_findings();
    assert!(f.is_clean(), "{what}: the emulator found {:?}", f.races);
}

/// The sort key of `k` under `order`: its ordered bits (flipped when descending) in the range.
pub fn rank_bits<K: SortKey>(k: K, order: &Order) -> u64 {
    let bits = order.bits.clone().unwrap_or(0..K::BITS);
    let all = if K::BITS == 64 { u64::MAX } else { (1u64 << K::BITS) - 1 };
    let o = if order.descending { k.ordered() ^ all } else { k.ordered() };
    let width = bits.end - bits.start;
    let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
    (o >> bits.start) & mask
}

/// The stable order of `keys` under `order`: the input positions, in output order.
pub fn reference<K: SortKey>(keys: &[K], order: &Order) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.sort_by_key(|&i| rank_bits(keys[i], order)); // `sort_by_key` is stable
    idx
}

/// Sorts `keys` (with their positions as values, so that stability shows) on `dev` and checks the keys'
/// bits and the values against [`reference`].
pub fn check_pairs<K: Sortable, V: SortValue + From<u32> + PartialEq + std::fmt::Debug>(
    dev: &Device,
    keys: &[K],
    order: &Order,
    what: &str,
) -> anyhow::Result<()> {
    let n = keys.len();
    let vals: Vec<V> = (0..n as u32).map(V::from).collect();
    let (kb, vb) = (dev.upload("keys", keys)?, dev.upload("vals", &vals)?);
    let (mut ko, mut vo) = (dev.filled("keys_out", n, K::from_word(0))?, dev.filled("vals_out", n, V::default())?);
    Algos::new(dev)?.sort_pairs_by(&kb, &vb, &mut ko, &mut vo, order)?;
    let want = reference(keys, order);
    let (got_k, got_v) = (ko.read()?, vo.read()?);
    for (j, &i) in want.iter().enumerate() {
        assert_eq!(got_k[j].to_word(), keys[i].to_word(), "{what}: key {j} of {n}");
        assert_eq!(got_v[j], vals[i], "{what}: value {j} of {n} (stability)");
    }
    assert_eq!(
        kb.read()?.iter().map(|k| k.to_word()).collect::<Vec<_>>(),
        keys.iter().map(|k| k.to_word()).collect::<Vec<_>>(),
        "{what}: the input is unchanged"
    );
    clean(dev, what);
    Ok(())
}

/// The GPU with the library's module, or `None` after printing "skipped: no CUDA device" (a GPU that
/// is there but cannot be opened is a failure).
pub fn gpu_or_skip(test: &str) -> Option<Device> {
    match Device::open(gpu_host::DeviceChoice::Gpu, &gpu_algos::ptx(), Default::default()) {
        Ok((d, _)) => Some(d),
        Err(e @ gpu_host::Error::NoGpu(_)) => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{test}: skipped: no CUDA device ({e:#})");
            None
        }
        Err(e) => panic!("{test}: cannot open the GPU: {e:#}"),
    }
}
