//! The single-pass scan on the emulator: every element exact (`u32`) or within the stated bound (`f32`)
//! at odd sizes and on several schedules, race-free, the look-back reaching back over more than one
//! window; the reduce-then-scan baseline exact; the variants that drop the release or the acquire
//! reported as races on the status words; the variant that takes its tile from `blockIdx` reported as a
//! livelock when fewer blocks are resident than the grid has, while the ticketed scan completes.

#[path = "../../gpu-std/tests/common/mod.rs"]
mod common;

use common::{Buf, SEEDS, launch, launch_raw, seed};
use gpu_algos_kernels::scan::{self, SHARED_BYTES, scan_inclusive_f32 as scan_f32, scan_inclusive_u32 as scan_u32};
use gpu_algos_kernels::scan_variants::{
    SPINE_BLOCK, SPINE_SHARED_BYTES, scan_blockidx_u32, scan_downsweep_u32, scan_items16_u32, scan_items24_u32,
    scan_no_acquire_u32, scan_no_release_u32, scan_reduce_u32, scan_sleeps_u32, scan_spine_u32,
};
use gpu_std::emu::{EmuError, LaunchConfig, Options, Outcome};
use gpu_std::{Global, GlobalMut, Kernel};

/// Blocks of 32 threads on the emulator: tiles of `TILE` elements, so that a few tens of thousands of
/// elements make many tiles.
const EMU_BLOCK: u32 = 32;
const TILE: usize = scan::tile_elems(EMU_BLOCK);

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::linear(scan::tiles(n, EMU_BLOCK) as u32, EMU_BLOCK, SHARED_BYTES)
}

fn clean(o: &Outcome, what: &str) {
    assert_eq!(o.racy_addresses, 0, "{what}: {:?}", o.races.first().map(ToString::to_string));
    assert_eq!(o.uninit_elements, 0, "{what}: uninitialised shared memory read");
}

fn input_u32(n: usize, s: u64) -> Vec<u32> {
    // Large values, so that the sums wrap.
    (0..n as u64).map(|i| (i.wrapping_mul(0x9e37_79b9).wrapping_add(s) as u32) | 0x8000_0000).collect()
}

fn prefix_u32(x: &[u32]) -> Vec<u32> {
    x.iter()
        .scan(0u32, |acc, &v| {
            *acc = acc.wrapping_add(v);
            Some(*acc)
        })
        .collect()
}

type ScanArgs<'a, T> = (Global<'a, T>, GlobalMut<'a, T>, GlobalMut<'a, u64>, u32);

/// The epoch of the tests' launches on a zeroed state (any epoch but 0 tests the tag more than 0).
const EPOCH: u32 = 1;

/// One single-pass launch of `K` over `x` with schedule options `opts`, on a zeroed state tagged
/// [`EPOCH`]: the outcome (or the error), the output and the state words.
fn run<K, T>(x: &[T], opts: &Options) -> (Result<Outcome, EmuError>, Vec<T>, Vec<u64>)
where
    K: for<'a> Kernel<Args<'a> = ScanArgs<'a, T>>,
    T: gpu_std::Pod,
{
    let n = x.len();
    let mut input = Buf::new("input", x.to_vec());
    let mut out = Buf::new("out", vec![T::default(); n]);
    let mut state = Buf::new("state", vec![0u64; scan::state_len(n, EMU_BLOCK)]);
    let r = launch_raw::<K>(&cfg(n), opts, (input.view(), out.view_mut(), state.view_mut(), EPOCH));
    (r, out.data, state.data)
}

/// Sizes: one element, a few, a vector plus one, tiles ± 1, and more than 33 tiles (the look-back
/// crosses a whole window of 32 when the nearest prefixes are not yet published).
const SIZES: &[usize] = &[1, 7, 33, TILE - 1, TILE, TILE + 1, 3 * TILE + 5, 35 * TILE + 3];

#[test]
fn scan_u32_is_exact_and_race_free_on_every_schedule() {
    for &n in SIZES {
        let x = input_u32(n, n as u64);
        let want = prefix_u32(&x);
        for s in SEEDS {
            let (r, got, state) = run::<scan_u32, u32>(&x, &seed(s));
            let o = r.unwrap_or_else(|e| panic!("n = {n}, seed {s}: {e}"));
            clean(&o, &format!("scan_u32 n = {n}, seed {s}"));
            if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                panic!("n = {n}, seed {s}: out[{i}] = {}, expected {}", got[i], want[i]);
            }
            assert_eq!(state[1], 0, "no tile gave up");
            assert_eq!(state[0], 0, "the block that draws the last ticket resets the counter");
            let tiles = scan::tiles(n, EMU_BLOCK);
            if tiles > 1 {
                // Every tile ends with its inclusive prefix published, tagged with the launch's epoch.
                for t in 0..tiles {
                    let last = want[((t + 1) * TILE).min(n) - 1];
                    assert_eq!(state[scan::STATE_HEADER + t], scan::pack(scan::FLAG_PREFIX, EPOCH, last), "tile {t}");
                }
            }
        }
    }
}

/// A tuning variant with `items` elements per thread: exact and race-free at odd sizes, on two
/// schedules, with every tile's inclusive prefix published.
fn variant_is_exact<K>(name: &str, items: usize)
where
    K: for<'a> Kernel<Args<'a> = ScanArgs<'a, u32>>,
{
    let tile = EMU_BLOCK as usize * items;
    for n in [1, 7, tile - 1, tile + 1, 35 * tile + 3] {
        let x = input_u32(n, n as u64);
        let want = prefix_u32(&x);
        let tiles = scan::tiles_of(n, EMU_BLOCK, items);
        for s in 1..=2 {
            let mut input = Buf::new("input", x.clone());
            let mut out = Buf::new("out", vec![0u32; n]);
            let mut state = Buf::new("state", vec![0u64; scan::STATE_HEADER + tiles]);
            let cfg = LaunchConfig::linear(tiles as u32, EMU_BLOCK, SHARED_BYTES);
            let o = launch_raw::<K>(&cfg, &seed(s), (input.view(), out.view_mut(), state.view_mut(), EPOCH))
                .unwrap_or_else(|e| panic!("{name} n = {n}, seed {s}: {e}"));
            clean(&o, &format!("{name} n = {n}, seed {s}"));
            if let Some(i) = (0..n).find(|&i| out.data[i] != want[i]) {
                panic!("{name} n = {n}, seed {s}: out[{i}] = {}, expected {}", out.data[i], want[i]);
            }
            assert_eq!(state.data[1], 0, "{name}: no tile gave up");
            if tiles > 1 {
                for t in 0..tiles {
                    let last = want[((t + 1) * tile).min(n) - 1];
                    assert_eq!(
                        state.data[scan::STATE_HEADER + t],
                        scan::pack(scan::FLAG_PREFIX, EPOCH, last),
                        "{name} tile {t}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_look_back_sleeps_keep_the_scan_exact_and_race_free() {
    // The launchers' kernel sleeps in its look-back only on grids of `SLEEP_MIN_TILES` tiles or more;
    // `scan_sleeps_u32` takes the sleeps as arguments and sleeps on any grid, so the emulator runs the
    // sleeping path (a sleep is a scheduling point there) at sizes it can afford.
    for &n in &[TILE + 1, 35 * TILE + 3] {
        let x = input_u32(n, 3);
        let want = prefix_u32(&x);
        let tiles = scan::tiles(n, EMU_BLOCK);
        for (s, (pre, poll)) in SEEDS.into_iter().zip([(scan::PRE_SLEEP_NS, scan::POLL_SLEEP_NS), (300, 50), (0, 0)]) {
            let mut input = Buf::new("input", x.clone());
            let mut out = Buf::new("out", vec![0u32; n]);
            let mut state = Buf::new("state", vec![0u64; scan::state_len(n, EMU_BLOCK)]);
            let args = (input.view(), out.view_mut(), state.view_mut(), EPOCH, pre, poll);
            let o = launch_raw::<scan_sleeps_u32>(&cfg(n), &seed(s), args)
                .unwrap_or_else(|e| panic!("n = {n}, sleeps {pre}/{poll} ns, seed {s}: {e}"));
            clean(&o, &format!("scan_sleeps_u32 n = {n}, seed {s}"));
            if let Some(i) = (0..n).find(|&i| out.data[i] != want[i]) {
                panic!("n = {n}, sleeps {pre}/{poll}: out[{i}] = {}, expected {}", out.data[i], want[i]);
            }
            assert_eq!(state.data[1], 0, "no tile gave up");
            assert_eq!(state.data[0], 0, "the last ticket resets the counter ({tiles} tiles)");
        }
    }
}

#[test]
fn the_tuning_variants_are_exact_and_race_free() {
    assert_eq!(scan::VARIANT_ITEMS, [16, 24]);
    variant_is_exact::<scan_items16_u32>("scan_items16_u32", 16);
    variant_is_exact::<scan_items24_u32>("scan_items24_u32", 24);
}

#[test]
fn scan_f32_is_within_its_bound() {
    let n = 35 * TILE + 3;
    // Values of both signs, so that the bound (on the sum of magnitudes) is not the sum itself.
    let x: Vec<f32> = (0..n).map(|i| ((i * 7919 % 2003) as f32 - 1001.0) / 64.0).collect();
    for s in [1, 2] {
        let (r, got, _) = run::<scan_f32, f32>(&x, &seed(s));
        clean(&r.unwrap_or_else(|e| panic!("{e}")), "scan_f32");
        let (mut exact, mut mag) = (0f64, 0f64);
        for i in 0..n {
            exact += x[i] as f64;
            mag += (x[i] as f64).abs();
            let k = scan::f32_error_bound_terms(i / TILE) as f64;
            let err = (got[i] as f64 - exact).abs();
            assert!(
                err <= k * f64::from(f32::EPSILON) / 2.0 * mag,
                "out[{i}] = {}, exact {exact}, error {err}",
                got[i]
            );
        }
    }
}

#[test]
fn a_misaligned_view_is_scanned_element_by_element() {
    // Views starting one element past a 16-byte boundary: every access takes the scalar path.
    let n = 3 * TILE + 5;
    let x = input_u32(n + 1, 9);
    let want = prefix_u32(&x[1..]);
    let mut input = Buf::new("input", x);
    let mut out = Buf::new("out", vec![0u32; n + 1]);
    let mut state = Buf::new("state", vec![0u64; scan::state_len(n, EMU_BLOCK)]);
    // SAFETY: sub-ranges of the Vecs, which outlive the launch and are not touched during it.
    let (iv, ov) = unsafe {
        (
            Global::from_raw_parts(input.data.as_ptr().add(1), n),
            GlobalMut::from_raw_parts(out.data.as_mut_ptr().add(1), n),
        )
    };
    let o = launch::<scan_u32>(cfg(n), &seed(3), (iv, ov, state.view_mut(), EPOCH));
    clean(&o, "misaligned scan");
    assert_eq!(&out.data[1..], &want[..]);
    let _ = input.view();
}

#[test]
fn an_output_aligned_differently_from_its_input_is_exact() {
    // The input on a 16-byte boundary, the output one element past one: the loads take the vector
    // path, the stores the element path.
    let n = 3 * TILE + 5;
    let x = input_u32(n, 11);
    let want = prefix_u32(&x);
    let mut input = Buf::new("input", vec![0u32; n + 4]);
    let mut out = Buf::new("out", vec![0u32; n + 4]);
    let a = (input.data.as_ptr() as usize).wrapping_neg() % 16 / 4;
    let b = (out.data.as_ptr() as usize).wrapping_neg() % 16 / 4 + 1;
    input.data[a..a + n].copy_from_slice(&x);
    let mut state = Buf::new("state", vec![0u64; scan::state_len(n, EMU_BLOCK)]);
    // SAFETY: sub-ranges of the Vecs, which outlive the launch and are not touched during it.
    let (iv, ov) = unsafe {
        (
            Global::from_raw_parts(input.data.as_ptr().add(a), n),
            GlobalMut::from_raw_parts(out.data.as_mut_ptr().add(b), n),
        )
    };
    assert!(iv.split_vectors().head.is_empty() && !ov.split_vectors_mut().head.is_empty());
    let o = launch::<scan_u32>(cfg(n), &seed(4), (iv, ov, state.view_mut(), EPOCH));
    clean(&o, "output misaligned against the input");
    assert_eq!(&out.data[b..b + n], &want[..]);
}

#[test]
fn reduce_then_scan_is_exact() {
    for &n in &[1usize, TILE + 1, 35 * TILE + 3] {
        let x = input_u32(n, 5);
        let want = prefix_u32(&x);
        let tiles = scan::tiles(n, EMU_BLOCK);
        let mut input = Buf::new("input", x);
        let mut sums = Buf::new("sums", vec![0u32; tiles]);
        let mut out = Buf::new("out", vec![0u32; n]);
        let grid = LaunchConfig::linear(tiles as u32, EMU_BLOCK, SHARED_BYTES);
        clean(&launch::<scan_reduce_u32>(grid, &seed(1), (input.view(), sums.view_mut())), "reduce");
        let spine = LaunchConfig::linear(1, SPINE_BLOCK, SPINE_SHARED_BYTES);
        clean(&launch::<scan_spine_u32>(spine, &seed(1), (sums.view_mut(),)), "spine");
        clean(
            &launch::<scan_downsweep_u32>(grid, &seed(1), (input.view(), sums.view_mut(), out.view_mut())),
            "downsweep",
        );
        assert_eq!(out.data, want, "n = {n}");
    }
}

#[test]
fn epochs_let_one_state_serve_launch_after_launch_unzeroed() {
    // One state, zeroed once; scans of other inputs and other sizes (more tiles, then fewer, then
    // more again: words of earlier launches stay behind), each tagged with the next epoch. Every result
    // is exact: a word of an earlier launch never reads as published.
    let sizes = [35 * TILE + 3, 3 * TILE + 5, 7, 36 * TILE, TILE + 1];
    let mut state = Buf::new("state", vec![0u64; scan::state_len(36 * TILE, EMU_BLOCK)]);
    let mut epochs = scan::Epochs::new();
    for (k, &n) in sizes.iter().enumerate() {
        let x = input_u32(n, 100 + k as u64);
        let want = prefix_u32(&x);
        let (epoch, zero) = epochs.advance();
        assert!(!zero);
        let mut input = Buf::new("input", x);
        let mut out = Buf::new("out", vec![0u32; n]);
        let o =
            launch::<scan_u32>(cfg(n), &seed(k as u64 + 1), (input.view(), out.view_mut(), state.view_mut(), epoch));
        clean(&o, &format!("launch {k}, n = {n}, epoch {epoch}"));
        assert_eq!(out.data, want, "launch {k}, n = {n}, epoch {epoch}");
        assert_eq!(state.data[..2], [0, 0], "launch {k}: the ticket is reset, no tile gave up");
    }
}

#[test]
fn an_epoch_used_twice_on_one_state_reads_stale_prefixes() {
    // The precondition matters: a second launch tagged like the first finds the first one's words
    // published, and on some schedules a tile takes a stale prefix. A new epoch on the same, unzeroed
    // state is exact on every schedule.
    let n = 3 * TILE + 5;
    let mut stale = Vec::new();
    for s in 1..=8 {
        let mut state = Buf::new("state", vec![0u64; scan::state_len(n, EMU_BLOCK)]);
        let mut input = Buf::new("input", input_u32(n, 1));
        let mut out = Buf::new("out", vec![0u32; n]);
        clean(&launch::<scan_u32>(cfg(n), &seed(s), (input.view(), out.view_mut(), state.view_mut(), 7)), "first");
        let x = input_u32(n, 2);
        let want = prefix_u32(&x);
        let mut input = Buf::new("input", x);
        clean(&launch::<scan_u32>(cfg(n), &seed(s), (input.view(), out.view_mut(), state.view_mut(), 7)), "second");
        if out.data != want {
            stale.push(s);
        }
        clean(&launch::<scan_u32>(cfg(n), &seed(s), (input.view(), out.view_mut(), state.view_mut(), 8)), "third");
        assert!(out.data == want, "seed {s}: a new epoch on the unzeroed state is exact");
    }
    println!("schedules on which the reused epoch read a stale prefix: {stale:?}");
    assert!(!stale.is_empty(), "no schedule read a stale prefix under the reused epoch");
}

#[test]
fn an_epoch_past_the_largest_is_refused() {
    let n = TILE + 1;
    let mut state = Buf::new("state", vec![0u64; scan::state_len(n, EMU_BLOCK)]);
    let mut input = Buf::new("input", input_u32(n, 1));
    let mut out = Buf::new("out", vec![0u32; n]);
    let args = (input.view(), out.view_mut(), state.view_mut(), scan::MAX_EPOCH + 1);
    match launch_raw::<scan_u32>(&cfg(n), &seed(1), args) {
        Err(EmuError::KernelPanic { message, .. }) => assert!(message.contains("MAX_EPOCH"), "{message}"),
        other => panic!("expected the kernel to refuse the epoch, got {:?}", other.map(|_| ())),
    }
    let mut e = scan::Epochs::after(scan::MAX_EPOCH - 1);
    assert_eq!(e.advance(), (scan::MAX_EPOCH, false));
    assert_eq!(e.advance(), (1, true), "the tags start again after a zeroing");
}

#[test]
fn the_launch_block_covers_small_inputs_with_one_tile() {
    for n in [0, 1, 4096, 4097, 8192, 8193, 16384, 16385, 1 << 18, (1 << 18) + 1, 1 << 30] {
        let b = scan::launch_block(n);
        assert!(b.is_multiple_of(32) && (128..=1024).contains(&b), "n = {n}: {b}");
        if n <= scan::tile_elems(scan::BLOCK) {
            assert_eq!(scan::tiles(n, b), 1, "n = {n}: one tile");
            assert!(b == 128 || n > scan::tile_elems(b / 2), "n = {n}: the fewest threads that hold it ({b})");
        }
    }
    assert_eq!(scan::launch_block(1 << 16), scan::MID_BLOCK);
    assert_eq!(scan::launch_block((1 << 18) + 1), scan::BLOCK);
}

/// Races of a variant: at least one, each on `state`, between different blocks.
fn assert_status_word_race(o: &Outcome, what: &str) {
    assert!(o.racy_addresses > 0, "{what}: the status word race is reported");
    for r in &o.races {
        println!("{r}");
        assert_eq!(r.buffer, "state", "{what}: {r}");
        assert!(r.index >= scan::STATE_HEADER, "{what}: a status word: {r}");
        assert_ne!(r.first.thread.block, r.second.thread.block, "{what}: across blocks: {r}");
    }
}

#[test]
fn publishing_without_release_is_a_race() {
    let n = 3 * TILE + 5;
    let x = input_u32(n, 1);
    for s in SEEDS {
        let (r, _, _) = run::<scan_no_release_u32, u32>(&x, &seed(s));
        assert_status_word_race(&r.unwrap_or_else(|e| panic!("{e}")), &format!("no release, seed {s}"));
    }
}

#[test]
fn reading_without_acquire_is_a_race() {
    let n = 3 * TILE + 5;
    let x = input_u32(n, 1);
    for s in SEEDS {
        let (r, _, _) = run::<scan_no_acquire_u32, u32>(&x, &seed(s));
        assert_status_word_race(&r.unwrap_or_else(|e| panic!("{e}")), &format!("no acquire, seed {s}"));
    }
}

#[test]
fn tiles_from_block_idx_livelock_when_blocks_are_not_all_resident() {
    // 12 tiles, 3 blocks resident at once, started in a seeded order: a resident block waits for a
    // tile whose block has not started. The ticketed scan completes under the same options.
    let n = 12 * TILE;
    let x = input_u32(n, 2);
    let want = prefix_u32(&x);
    for s in SEEDS {
        let opts = Options { max_resident_blocks: 3, poll_limit: 20_000, ..seed(s) };
        let (r, got, _) = run::<scan_u32, u32>(&x, &opts);
        clean(&r.unwrap_or_else(|e| panic!("ticketed scan, seed {s}: {e}")), "ticketed scan");
        assert_eq!(got, want, "ticketed scan, seed {s}");

        let (r, _, _) = run::<scan_blockidx_u32, u32>(&x, &opts);
        match r {
            Err(EmuError::Livelock(l)) => {
                println!("seed {s}:\n{l}");
                assert_eq!(l.kernel, "scan_blockidx_u32");
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
