//! The sort's pass and its variants on the emulator: the pass exact and race-free over many tiles, and
//! a pass whose keys all share their digit moving none of them, with no status word, and tiles whose
//! keys share one digit among tiles that rank; the
//! variants that publish the status words with a plain store or read them with a plain load reported as
//! races on the status words, across blocks; the variant that takes its tile from `blockIdx` reported as
//! a livelock when fewer blocks are resident than the grid has, while the ticketed pass completes.

#[path = "../../gpu-std/tests/common/mod.rs"]
mod common;

use common::{Buf, SEEDS, launch_raw, seed};
use gpu_algos_kernels::sort::histogram::{self, sort_histogram_u32};
use gpu_algos_kernels::sort::onesweep::{SHARED_BYTES_KEYS4, sort_keys_u32};
use gpu_algos_kernels::sort::variants::{sort_blockidx_u32, sort_no_acquire_u32, sort_no_release_u32};
use gpu_algos_kernels::sort::{self, Digits, RADIX, STATE_HEADER};
use gpu_std::emu::{EmuError, LaunchConfig, Options, Outcome};
use gpu_std::{Global, GlobalMut, Kernel};

/// Blocks of 64 threads: tiles of `TILE` keys.
const BLOCK: u32 = 64;
const TILE: usize = BLOCK as usize * sort::ITEMS;
/// The lowest 8 bits, ascending: one pass.
const DIGITS: Digits = Digits::new(0, 8, false);

type PassArgs<'a> = (Global<'a, u32>, GlobalMut<'a, u32>, Global<'a, u32>, GlobalMut<'a, u32>, u32, u32);

fn keys(n: usize, s: u64) -> Vec<u32> {
    (0..n as u64).map(|i| (i.wrapping_mul(0x9e37_79b9).wrapping_add(s) >> 7) as u32).collect()
}

/// The digit counts of `x` (the histogram kernel, checked against the CPU).
fn counts(x: &[u32]) -> Vec<u32> {
    let mut input = Buf::new("keys", x.to_vec());
    let mut c = Buf::new("counts", vec![0u32; RADIX]);
    let cfg = LaunchConfig::linear(2, histogram::BLOCK, histogram::SHARED_BYTES);
    let o = launch_raw::<sort_histogram_u32>(&cfg, &seed(1), (input.view(), c.view_mut(), DIGITS.to_arg()))
        .unwrap_or_else(|e| panic!("histogram: {e}"));
    assert_eq!(o.racy_addresses, 0, "histogram race-free");
    let mut want = vec![0u32; RADIX];
    x.iter().for_each(|&k| want[(k & 0xff) as usize] += 1);
    assert_eq!(c.data, want, "histogram counts");
    c.data
}

/// Pass 0 of `K` over `x`: the outcome, the output and the state.
fn run<K>(x: &[u32], opts: &Options) -> (Result<Outcome, EmuError>, Vec<u32>, Vec<u32>)
where
    K: for<'a> Kernel<Args<'a> = PassArgs<'a>>,
{
    let n = x.len();
    let mut c = Buf::new("counts", counts(x));
    let mut input = Buf::new("keys_in", x.to_vec());
    let mut out = Buf::new("keys_out", vec![0u32; n]);
    let mut state = Buf::new("state", vec![0u32; sort::state_len(n, BLOCK, 1)]);
    let cfg = LaunchConfig::linear(sort::tiles(n, BLOCK) as u32, BLOCK, SHARED_BYTES_KEYS4);
    let r = launch_raw::<K>(&cfg, opts, (input.view(), out.view_mut(), c.view(), state.view_mut(), DIGITS.to_arg(), 0));
    (r, out.data, state.data)
}

fn stable_by_low_byte(x: &[u32]) -> Vec<u32> {
    let mut w = x.to_vec();
    w.sort_by_key(|k| k & 0xff);
    w
}

#[test]
fn the_pass_is_exact_and_race_free_over_many_tiles() {
    for n in [0, 1, TILE - 1, TILE + 1, 35 * TILE + 3] {
        let x = keys(n, n as u64);
        let want = stable_by_low_byte(&x);
        for s in SEEDS {
            let (r, got, state) = run::<sort_keys_u32>(&x, &seed(s));
            let o = r.unwrap_or_else(|e| panic!("n = {n}, seed {s}: {e}"));
            assert_eq!(o.racy_addresses, 0, "n = {n}, seed {s}: {:?}", o.races.first().map(ToString::to_string));
            assert_eq!(o.uninit_elements, 0, "no uninitialised shared memory read");
            assert_eq!(got, want, "n = {n}, seed {s}");
            assert_eq!(state[1], 0, "no tile gave up");
            // Every tile published its inclusive prefix of every digit: the last tile's is the end of
            // the digit's run in the output. (One key has one digit: its pass moves it in place, and
            // publishes nothing.)
            let last = sort::tiles(n, BLOCK) - 1;
            for d in 0..RADIX {
                let end = want.iter().filter(|&&k| (k & 0xff) as usize <= d).count() as u32;
                let word = if n == 1 { 0 } else { sort::status(true, end) };
                assert_eq!(state[STATE_HEADER + last * RADIX + d], word, "n = {n}, digit {d}");
            }
        }
    }
}

#[test]
fn a_pass_whose_keys_share_their_digit_moves_none_and_publishes_nothing() {
    // Every key's low byte is 0x5a: the counts say so, and every tile (a partial last one too) writes
    // its keys back where they were, without a status word or a wait.
    for n in [TILE - 1, 35 * TILE + 3] {
        let x: Vec<u32> = keys(n, 3).iter().map(|k| k & !0xff | 0x5a).collect();
        for s in SEEDS {
            let (r, got, state) = run::<sort_keys_u32>(&x, &seed(s));
            let o = r.unwrap_or_else(|e| panic!("n = {n}, seed {s}: {e}"));
            assert_eq!(o.racy_addresses, 0, "n = {n}, seed {s}: {:?}", o.races.first().map(ToString::to_string));
            assert_eq!(got, x, "n = {n}, seed {s}: every key in place");
            assert_eq!(state[0] as usize, sort::tiles(n, BLOCK), "every tile drew its ticket");
            assert!(state[1..].iter().all(|&w| w == 0), "n = {n}, seed {s}: no status word published, no error");
        }
    }
}

#[test]
fn tiles_whose_keys_share_one_digit_keep_their_order_between_tiles_that_rank() {
    // Even tiles' keys share a low byte (their tile's), odd tiles' keys are random; the last, partial
    // tile's share the highest digit (255, the digit its keys past the end are held as) or a low one.
    for (n, last_digit) in [(6 * TILE + 100, 255u32), (5 * TILE + 7, 3)] {
        let tiles = sort::tiles(n, BLOCK);
        let x: Vec<u32> = keys(n, 7)
            .iter()
            .enumerate()
            .map(|(i, &k)| match i / TILE {
                t if t == tiles - 1 => k & !0xff | last_digit,
                t if t % 2 == 0 => k & !0xff | (t as u32 * 37) & 0xff,
                _ => k,
            })
            .collect();
        let want = stable_by_low_byte(&x);
        for s in SEEDS {
            let (r, got, state) = run::<sort_keys_u32>(&x, &seed(s));
            let o = r.unwrap_or_else(|e| panic!("n = {n}, seed {s}: {e}"));
            assert_eq!(o.racy_addresses, 0, "n = {n}, seed {s}: {:?}", o.races.first().map(ToString::to_string));
            assert_eq!(got, want, "n = {n}, seed {s}");
            assert_eq!(state[1], 0, "no tile gave up");
            for d in 0..RADIX {
                let end = want.iter().filter(|&&k| (k & 0xff) as usize <= d).count() as u32;
                assert_eq!(state[STATE_HEADER + (tiles - 1) * RADIX + d], sort::status(true, end), "digit {d}");
            }
        }
    }
}

/// Races of a variant: at least one, each on a status word of `state`, between different blocks.
fn assert_status_word_race(o: &Outcome, what: &str) {
    assert!(o.racy_addresses > 0, "{what}: the status word race is reported");
    for r in &o.races {
        println!("{r}");
        assert_eq!(r.buffer, "state", "{what}: {r}");
        assert!(r.index >= STATE_HEADER, "{what}: a status word: {r}");
        assert_ne!(r.first.thread.block, r.second.thread.block, "{what}: across blocks: {r}");
    }
}

#[test]
fn publishing_without_release_is_a_race() {
    let x = keys(3 * TILE + 5, 1);
    for s in SEEDS {
        let (r, _, _) = run::<sort_no_release_u32>(&x, &seed(s));
        assert_status_word_race(&r.unwrap_or_else(|e| panic!("{e}")), &format!("no release, seed {s}"));
    }
}

#[test]
fn reading_without_acquire_is_a_race() {
    let x = keys(3 * TILE + 5, 1);
    for s in SEEDS {
        let (r, _, _) = run::<sort_no_acquire_u32>(&x, &seed(s));
        assert_status_word_race(&r.unwrap_or_else(|e| panic!("{e}")), &format!("no acquire, seed {s}"));
    }
}

#[test]
fn tiles_from_block_idx_livelock_when_blocks_are_not_all_resident() {
    // 12 tiles, 3 blocks resident at once, started in a seeded order: a resident block waits for a
    // tile whose block has not started. The ticketed pass completes under the same options.
    let x = keys(12 * TILE, 2);
    let want = stable_by_low_byte(&x);
    for s in SEEDS {
        let opts = Options { max_resident_blocks: 3, poll_limit: 20_000, ..seed(s) };
        let (r, got, _) = run::<sort_keys_u32>(&x, &opts);
        let o = r.unwrap_or_else(|e| panic!("ticketed pass, seed {s}: {e}"));
        assert_eq!(o.racy_addresses, 0, "ticketed pass race-free");
        assert_eq!(got, want, "ticketed pass, seed {s}");

        let (r, _, _) = run::<sort_blockidx_u32>(&x, &opts);
        match r {
            Err(EmuError::Livelock(l)) => {
                println!("seed {s}:\n{l}");
                assert_eq!(l.kernel, "sort_blockidx_u32");
                assert!(!l.spinning.is_empty(), "the waiting threads are named");
                for g in &l.spinning {
                    assert!(g.what.contains("`state`"), "they wait on a status word: {}", g.what);
                }
            }
            Err(e) => panic!("seed {s}: expected a livelock, got: {e}"),
            Ok(_) => panic!("seed {s}: the blockIdx variant completed; expected a livelock"),
        }
    }
}
