//! Times the library's sort on this machine's GPU: `sort_keys` and `sort_pairs` of uniform random keys,
//! of keys with few distinct values and of all-equal keys (`u32` keys and pairs, `u64` keys; `f32` keys uniform), `n = 4^k` from `2^kmin` to `2^kmax`, as the
//! caller waits for it (device events around the call, host work between its launches included),
//! with the data possibly in L2 from the call before (`host`) and after an L2 flush (`flushed`: a
//! 256 MiB memset, finished before the call starts). Every output is checked: sorted, and a
//! permutation of the input (pairs: each value is its key's input position, so the keys must be those
//! positions' keys and equal keys' positions must rise: stability; keys alone: the sum and the xor of
//! a 64-bit hash of every key are the input's).
//!
//! ```text
//! cargo run --release -p gpu-algos --features cuda --example sort_bench -- [--kmin 10] [--kmax 30] [--csv FILE] [--only W,W] [--dists D,D]
//! ```
//!
//! `--only keys_u32,pairs_u32` (say) times only those workloads (`keys_u32`, `pairs_u32`, `keys_f32`,
//! `keys_u64`), every distribution of each. `--dists` names the distributions (default
//! `uniform,few,equal`; also `narrow`, keys below 2^16, and `sorted`; `f32` keys take `uniform` only).
//!
//! CSV columns: timing,workload,dist,n,impl,ms,gkeys (keys per second over the median, in 10^9).
//!
//! With `SORT_BENCH_BLOCKS=256,384` (say) it times instead `sort_keys` of uniform `u32` keys with
//! the passes on each of those block sizes (rows `keys_u32_b<threads>`, host-timed): the tuning rows
//! of the passes' block size.
use anyhow::{Context, Result, bail};
use gpu_algos::sort::Order;
use gpu_algos::{Algos, Sortable};
use gpu_host::{Buffer, Device, DeviceChoice};
use std::io::Write;

/// A fast deterministic generator (splitmix64), so that 2^30 keys take a second.
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A key type of the bench: how to make one from 64 random bits.
trait BenchKey: Sortable + Send + Sync {
    const LABEL: &'static str;
    fn from_random(r: u64) -> Self;
}
impl BenchKey for u32 {
    const LABEL: &'static str = "u32";
    fn from_random(r: u64) -> u32 {
        r as u32
    }
}
impl BenchKey for u64 {
    const LABEL: &'static str = "u64";
    fn from_random(r: u64) -> u64 {
        r
    }
}
impl BenchKey for f32 {
    const LABEL: &'static str = "f32";
    fn from_random(r: u64) -> f32 {
        // Uniform in [-1, 1): finite values of both signs.
        ((r >> 40) as f32 / (1u64 << 23) as f32) - 1.0
    }
}

/// The distributions `--dists` takes; the first three are the default.
const DISTS: [&str; 5] = ["uniform", "few", "equal", "narrow", "sorted"];

/// The keys of distribution `dist`: `uniform`, `few` (16 distinct values), `equal`, `narrow` (below
/// 2^16: the high digits of every key are equal), `sorted` (uniform keys, sorted).
fn make_keys<K: BenchKey>(n: usize, dist: &str, seed: u64) -> Vec<K> {
    let mut s = seed;
    let few: Vec<K> = (0..16).map(|_| K::from_random(splitmix(&mut s))).collect();
    let one = K::from_random(splitmix(&mut s));
    let mut keys: Vec<K> = (0..n)
        .map(|_| {
            let r = splitmix(&mut s);
            match dist {
                "few" => few[(r >> 60) as usize],
                "equal" => one,
                "narrow" => K::from_random(r >> 48),
                _ => K::from_random(r),
            }
        })
        .collect();
    if dist == "sorted" {
        keys.sort_by_key(|k| k.ordered());
    }
    keys
}

fn hash(k: u64) -> u64 {
    let mut x = k;
    splitmix(&mut x)
}

/// Checks that `out` is `keys` sorted ascending; with `vals`, that `vals[j]` is the input position of
/// `out[j]` and positions of equal keys rise.
fn check<K: BenchKey>(keys: &[K], out: &[K], vals: Option<&[u32]>, what: &str) -> Result<()> {
    if out.len() != keys.len() {
        bail!("{what}: {} keys out of {}", out.len(), keys.len());
    }
    for j in 1..out.len() {
        if out[j - 1].ordered() > out[j].ordered() {
            bail!("CHECK FAILED {what}: out[{}] > out[{j}]", j - 1);
        }
    }
    match vals {
        Some(v) => {
            for j in 0..out.len() {
                let i = v[j] as usize;
                if i >= keys.len() || keys[i].to_word() != out[j].to_word() {
                    bail!("CHECK FAILED {what}: value {j} ({i}) is not the position of its key");
                }
                if j > 0 && out[j - 1].to_word() == out[j].to_word() && v[j - 1] >= v[j] {
                    bail!("CHECK FAILED {what}: equal keys at {} and {j} out of their input order", j - 1);
                }
            }
        }
        None => {
            let sums = |x: &[K]| {
                x.iter().fold((0u64, 0u64), |(s, o), k| (s.wrapping_add(hash(k.to_word())), o ^ hash(k.to_word())))
            };
            if sums(keys) != sums(out) {
                bail!("CHECK FAILED {what}: the output is not a permutation of the input");
            }
        }
    }
    Ok(())
}

fn reps(n: usize) -> usize {
    if n <= 1 << 20 {
        50
    } else if n <= 1 << 26 {
        20
    } else {
        10
    }
}

struct Bench<'d> {
    dev: &'d Device,
    algos: Algos<'d>,
    flush: Buffer<'d, u32>,
    csv: Option<std::fs::File>,
    /// The workloads `--only` names (`None`: all).
    only: Option<Vec<String>>,
}

impl Bench<'_> {
    fn row(&mut self, timing: &str, workload: &str, dist: &str, n: usize, ms: f64) -> Result<()> {
        let gkeys = n as f64 / (ms * 1e-3) / 1e9;
        println!("{timing:7} {workload:12} {dist:7} n = 2^{:2}  {ms:10.4} ms  {gkeys:7.2} Gkeys/s", n.trailing_zeros());
        if let Some(f) = &mut self.csv {
            writeln!(f, "{timing},{workload},{dist},{n},gpu-algos,{ms},{gkeys}")?;
        }
        Ok(())
    }

    /// Times the sort of `n` keys of `dist`, alone or (`pairs`) with `u32` values, both timings.
    fn run<K: BenchKey>(&mut self, n: usize, dist: &str, pairs: bool) -> Result<()> {
        let workload = format!("{}_{}", if pairs { "pairs" } else { "keys" }, K::LABEL);
        if self.only.as_ref().is_some_and(|only| !only.contains(&workload)) {
            return Ok(());
        }
        let what = format!("{workload} {dist} n = {n}");
        let keys = make_keys::<K>(n, dist, n as u64 ^ 0x5eed);
        let dev = self.dev;
        let kin = dev.upload("keys", &keys)?;
        let kout = dev.filled("keys_out", n, K::from_word(0))?;
        let vin = dev.upload("vals", &(0..n as u32).collect::<Vec<_>>())?;
        let vout = dev.filled("vals_out", n, 0u32)?;
        let order = Order::ascending();
        // `&mut` buffers inside a `Fn`: the call takes them through cells.
        let (kout, vout) = (std::cell::RefCell::new(kout), std::cell::RefCell::new(vout));
        let call = || -> Result<()> {
            let (mut ko, mut vo) = (kout.borrow_mut(), vout.borrow_mut());
            if pairs {
                Ok(self.algos.sort_pairs_by(&kin, &vin, &mut ko, &mut vo, &order)?)
            } else {
                Ok(self.algos.sort_keys_by(&kin, &mut ko, &order)?)
            }
        };
        call()?;
        let vals = if pairs { Some(vout.borrow().read()?) } else { None };
        check(&keys, &kout.borrow().read()?, vals.as_deref(), &what)?;
        let none = || Ok(());
        let flush = || -> Result<()> { Ok(self.flush.zero()?) };
        let host = dev.time_calls(reps(n), &none, &call)?.context("timing needs a GPU")?;
        let flushed = dev.time_calls(reps(n), &flush, &call)?.context("timing needs a GPU")?;
        let vals = if pairs { Some(vout.borrow().read()?) } else { None };
        check(&keys, &kout.borrow().read()?, vals.as_deref(), &format!("{what} (after the timed calls)"))?;
        self.row("host", &workload, dist, n, host.median_ms)?;
        self.row("flushed", &workload, dist, n, flushed.median_ms)?;
        Ok(())
    }
}

impl Bench<'_> {
    /// Times `sort_keys` of `n` uniform `u32` keys with the passes on blocks of `block` threads.
    fn run_blocks(&mut self, n: usize, block: u32) -> Result<()> {
        let keys = make_keys::<u32>(n, "uniform", n as u64 ^ 0x5eed);
        let dev = self.dev;
        let kin = dev.upload("keys", &keys)?;
        let kout = std::cell::RefCell::new(dev.filled("keys_out", n, 0u32)?);
        let order = Order::ascending();
        let call = || self.algos.sort_keys_on_blocks(&kin, &mut kout.borrow_mut(), &order, block);
        call()?;
        check(&keys, &kout.borrow().read()?, None, &format!("keys_u32 block {block} n = {n}"))?;
        let host = dev.time_calls(reps(n), &|| Ok(()), &call)?.context("timing needs a GPU")?;
        self.row("host", &format!("keys_u32_b{block}"), "uniform", n, host.median_ms)
    }
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let (mut kmin, mut kmax, mut csv, mut only) = (10u32, 30u32, None, None);
    let mut dists: Vec<String> = DISTS[..3].iter().map(|d| d.to_string()).collect();
    while let Some(a) = args.next() {
        let mut value = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--kmin" => kmin = value()?.parse()?,
            "--kmax" => kmax = value()?.parse()?,
            "--csv" => csv = Some(value()?),
            "--only" => only = Some(value()?.split(',').map(|w| w.trim().to_string()).collect::<Vec<_>>()),
            "--dists" => dists = value()?.split(',').map(|d| d.trim().to_string()).collect(),
            _ => bail!("unknown argument {a} (--kmin K, --kmax K, --csv FILE, --only W,W, --dists D,D)"),
        }
    }
    if let Some(d) = dists.iter().find(|d| !DISTS.contains(&d.as_str())) {
        bail!("unknown distribution {d} (--dists takes {})", DISTS.join(", "));
    }
    let (dev, note) = Device::open(DeviceChoice::Gpu, &gpu_algos::ptx(), Default::default())?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    let csv = match csv {
        Some(path) => {
            let mut f = std::fs::File::create(&path).with_context(|| format!("cannot write {path}"))?;
            writeln!(f, "timing,workload,dist,n,impl,ms,gkeys")?;
            Some(f)
        }
        None => None,
    };
    let blocks: Vec<u32> = match std::env::var("SORT_BENCH_BLOCKS") {
        Ok(v) => v.split(',').map(|b| b.trim().parse()).collect::<Result<_, _>>().context("SORT_BENCH_BLOCKS")?,
        Err(_) => Vec::new(),
    };
    let mut b =
        Bench { dev: &dev, algos: Algos::new(&dev)?, flush: dev.filled("l2 flush", 64 << 20, 0u32)?, csv, only };
    eprintln!("gpu-algos sort on {}", dev.name());
    if !blocks.is_empty() {
        // The tuning rows: keys_u32 of uniform keys with the passes on each block size.
        for k in (kmin..=kmax).step_by(2) {
            for &block in &blocks {
                b.run_blocks(1usize << k, block)?;
            }
        }
        return Ok(());
    }
    for k in (kmin..=kmax).step_by(2) {
        let n = 1usize << k;
        for dist in &dists {
            b.run::<u32>(n, dist, false)?;
            b.run::<u32>(n, dist, true)?;
        }
        if dists.iter().any(|d| d == "uniform") {
            b.run::<f32>(n, "uniform", false)?;
        }
        if k <= 28 {
            for dist in &dists {
                b.run::<u64>(n, dist, false)?;
            }
        }
    }
    Ok(())
}
