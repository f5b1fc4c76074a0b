//! The optimised tiers on the emulator: `reduce_fast` (every element type, a head before the first
//! 16-byte boundary, several tiles per virtual block, the deterministic sum on many grids) and
//! `histogram_fast` and `histogram_small` (exact bins on uneven, misaligned inputs). Every launch must
//! be race-free.

#[path = "../../gpu-std/tests/common/mod.rs"]
mod common;

use common::{Buf, launch, seed};
use gpu_algos_kernels::histogram::bytes::{self as hf, histogram_bytes};
use gpu_algos_kernels::histogram::small::{self as hs, histogram_bytes_small};
use gpu_algos_kernels::reduce::{
    self as reduce_fast, BLOCK, SHARED_BYTES, UNROLL, reduce_sum_f32, reduce_sum_f64, reduce_sum_i32,
};
use gpu_std::emu::{LaunchConfig, Outcome};
use gpu_std::{Global, GlobalMut, Pod};

/// Elements of `T` in one tile of the fast sum.
fn tile_elems<T>() -> usize {
    UNROLL * BLOCK as usize * 16 / size_of::<T>()
}

/// A view of `buf.data[skip..]`: with `skip` not a multiple of 16 bytes, the input has a head.
fn from<T: Pod>(buf: &Buf<T>, skip: usize) -> Global<'_, T> {
    // SAFETY: a sub-range of the Vec, which outlives the launch and is not written during it.
    unsafe { Global::from_raw_parts(buf.data.as_ptr().add(skip), buf.data.len() - skip) }
}

/// The sum kernel's workspace and result for one launch.
struct Work<T: Pod> {
    partials: Buf<u64>,
    ticket: Buf<u32>,
    out: Buf<T>,
}
impl<T: Pod> Work<T> {
    fn new(vblocks: u32) -> Self {
        Work {
            partials: Buf::new("partials", vec![0u64; vblocks as usize]),
            ticket: Buf::new("ticket", vec![0]),
            out: Buf::new("out", vec![T::default()]),
        }
    }
    fn args<'a>(
        &mut self,
        input: Global<'a, T>,
        vblocks: u32,
    ) -> (Global<'a, T>, u32, GlobalMut<'a, u64>, GlobalMut<'a, u32>, GlobalMut<'a, T>) {
        (input, vblocks, self.partials.view_mut(), self.ticket.view_mut(), self.out.view_mut())
    }
}

fn cfg(grid: u32) -> LaunchConfig {
    LaunchConfig::linear(grid, BLOCK, SHARED_BYTES)
}

fn clean(o: &Outcome, what: &str) {
    assert_eq!(o.racy_addresses, 0, "{what}: {:?}", o.races.first().map(ToString::to_string));
    assert_eq!(o.uninit_elements, 0, "{what}: uninitialised shared memory read");
}

#[test]
fn deterministic_sum_has_the_same_bits_on_every_grid() {
    // Three whole tiles and part of a fourth, after a 1-element head: with 3 virtual blocks, virtual
    // block 0 owns tiles 0 and 3.
    let n = 3 * tile_elems::<f32>() + 1001;
    let input = Buf::new("input", (0..n + 1).map(|i| ((i * 7919) % 1000) as f32 / 997.0).collect::<Vec<_>>());
    let want: f64 = input.data[1..].iter().map(|&x| x as f64).sum();
    let vblocks = 3;
    let mut first: Option<u32> = None;
    for (grid, s) in [(1, 1), (2, 2), (3, 3), (5, 1), (3, 4)] {
        let mut w = Work::<f32>::new(vblocks);
        let o = launch::<reduce_sum_f32>(cfg(grid), &seed(s), w.args(from(&input, 1), vblocks));
        clean(&o, &format!("grid {grid}"));
        let got = w.out.data[0];
        assert!((got as f64 - want).abs() < 1e-5 * want, "grid {grid}: {got} vs {want}");
        assert_eq!(w.ticket.data[0], 0, "the last block resets the ticket");
        let bits = *first.get_or_insert(got.to_bits());
        assert_eq!(got.to_bits(), bits, "grid {grid}, schedule {s}: the bits depend on the grid");
    }
    // `deterministic_vblocks` depends on n and the element type alone: one virtual block for the small
    // inputs (up to 256 KiB), one per 4096 elements above, at most MAX_DETERMINISTIC_VBLOCKS.
    use reduce_fast::{
        MAX_DETERMINISTIC_VBLOCKS, MIN_VBLOCK_ELEMS, SMALL_MAX_VECTORS, deterministic_vblocks, small_input,
    };
    assert_eq!(SMALL_MAX_VECTORS * 16, 256 * 1024);
    assert_eq!(deterministic_vblocks::<f32>(n), 1, "{n} f32 fit 256 KiB");
    assert_eq!(deterministic_vblocks::<f32>(1 << 16), 1);
    assert!(small_input::<f32>(1 << 16) && !small_input::<f32>((1 << 16) + 1));
    assert_eq!(deterministic_vblocks::<f32>((1 << 16) + 1), ((1usize << 16) + 1).div_ceil(MIN_VBLOCK_ELEMS) as u32);
    assert_eq!(deterministic_vblocks::<f64>(1 << 15), 1);
    assert_eq!(deterministic_vblocks::<f64>((1 << 15) + 1), 9);
    assert_eq!(deterministic_vblocks::<i32>(1 << 30), MAX_DETERMINISTIC_VBLOCKS);
}

#[test]
fn one_virtual_block_on_one_block_gives_the_bits_of_every_other_grid() {
    // Grid 1 with one virtual block writes its block sum as the result (no partial, no ticket); other
    // grids take the ticket path. A head and a tail of odd elements, and values whose sum rounds.
    let n = tile_elems::<f32>() / 2 + 6;
    let input = Buf::new("input", (0..n + 3).map(|i| ((i * 7919) % 1000) as f32 / 997.0 - 0.4).collect::<Vec<_>>());
    let mut first: Option<u32> = None;
    for (grid, s) in [(1, 1), (2, 2), (4, 3), (1, 4)] {
        let mut w = Work::<f32>::new(grid.max(1));
        let o = launch::<reduce_sum_f32>(cfg(grid), &seed(s), w.args(from(&input, 3), 1));
        clean(&o, &format!("grid {grid}"));
        assert_eq!(w.ticket.data[0], 0, "grid {grid}: the ticket is left 0");
        let bits = *first.get_or_insert(w.out.data[0].to_bits());
        assert_eq!(w.out.data[0].to_bits(), bits, "grid {grid}, schedule {s}: the bits depend on the grid");
    }
    // The deterministic sum runs on one block up to two virtual blocks, on one per virtual block above;
    // the fast tier on one block up to ONE_BLOCK_MAX_VECTORS vectors.
    let one = reduce_fast::SMALL_MAX_VECTORS * 4;
    assert_eq!(reduce_fast::deterministic_grid::<f32>(one, 528), 1);
    assert_eq!(reduce_fast::deterministic_grid::<f32>(one + 1, 528), 17);
    assert_eq!(reduce_fast::deterministic_grid::<f32>(1 << 30, 396), 396);
    assert_eq!(reduce_fast::fast_grid(reduce_fast::ONE_BLOCK_MAX_VECTORS, 396), 1);
    assert_eq!(reduce_fast::fast_grid(reduce_fast::ONE_BLOCK_MAX_VECTORS + 1, 396), 5);
    assert_eq!(reduce_fast::fast_grid(1 << 28, 396), 396);
}

/// `reduce_small_*` on `input[skip..]`: the result, after checking the launch is race-free.
fn small<K, T>(input: &Buf<T>, skip: usize, s: u64) -> T
where
    K: for<'a> gpu_std::Kernel<Args<'a> = (Global<'a, T>, GlobalMut<'a, T>)>,
    T: Pod,
{
    let mut out = Buf::new("out", vec![T::default()]);
    let o = launch::<K>(cfg(1), &seed(s), (from(input, skip), out.view_mut()));
    clean(&o, "reduce_small");
    out.data[0]
}

/// `reduce_fast_*` with one virtual block on `grid` blocks: the result.
fn one_vblock<K, T>(input: &Buf<T>, skip: usize, grid: u32) -> T
where
    K: for<'a> gpu_std::Kernel<
            Args<'a> = (Global<'a, T>, u32, GlobalMut<'a, u64>, GlobalMut<'a, u32>, GlobalMut<'a, T>),
        >,
    T: Pod,
{
    let mut w = Work::<T>::new(1);
    clean(&launch::<K>(cfg(grid), &seed(1), w.args(from(input, skip), 1)), "reduce_fast");
    w.out.data[0]
}

#[test]
fn reduce_small_has_the_bits_of_one_virtual_block() {
    use reduce_fast::{SMALL_TILES_AHEAD, reduce_small_sum_f32, reduce_small_sum_f64, reduce_small_sum_i32};
    let t = tile_elems::<f32>();
    // Less than a tile, one tile and a bit (the loop's first round, mostly past the end), and more
    // tiles than one round of the loop loads; heads of 0, 1 and 3 elements.
    for (n, skip) in [(1000, 1), (t + 5, 3), ((SMALL_TILES_AHEAD + 1) * t + 777, 0), (0, 0), (3, 1)] {
        let input =
            Buf::new("input", (0..n + skip).map(|i| ((i * 7919) % 1000) as f32 / 997.0 - 0.4).collect::<Vec<_>>());
        let want = one_vblock::<reduce_sum_f32, f32>(&input, skip, 2);
        for s in [1, 2] {
            let got = small::<reduce_small_sum_f32, f32>(&input, skip, s);
            assert_eq!(got.to_bits(), want.to_bits(), "n = {n}, head {skip}, seed {s}: {got} vs {want}");
        }
        let wide = Buf::new("wide", input.data.iter().map(|&x| x as f64 * 1.000001).collect::<Vec<_>>());
        let got = small::<reduce_small_sum_f64, f64>(&wide, skip, 3);
        let want = one_vblock::<reduce_sum_f64, f64>(&wide, skip, 1);
        assert_eq!(got.to_bits(), want.to_bits(), "f64 n = {n}: {got} vs {want}");
        let ints = Buf::new("ints", (0..n + skip).map(|i| (i as i32).wrapping_mul(0x2f0f_1e03)).collect::<Vec<_>>());
        let want = ints.data[skip..].iter().fold(0i32, |a, &x| a.wrapping_add(x));
        assert_eq!(small::<reduce_small_sum_i32, i32>(&ints, skip, 4), want, "i32 n = {n}: wraps exactly");
    }
}

#[test]
fn reduce_small_refuses_a_grid_of_more_than_one_block() {
    use gpu_std::emu::EmuError;
    let input = Buf::new("input", vec![1.0f32; 100]);
    let mut out = Buf::new("out", vec![0.0f32]);
    match common::launch_raw::<reduce_fast::reduce_small_sum_f32>(&cfg(2), &seed(1), (from(&input, 0), out.view_mut()))
    {
        Err(EmuError::KernelPanic { message, .. }) => assert!(message.contains("one block"), "{message}"),
        other => panic!("expected the kernel to refuse two blocks, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn the_ticket_lets_one_workspace_serve_launch_after_launch() {
    let n = tile_elems::<f32>() + 3;
    let input = Buf::new("input", vec![1.0f32; n]);
    let mut w = Work::<f32>::new(2);
    for _ in 0..3 {
        let o = launch::<reduce_sum_f32>(cfg(2), &seed(1), w.args(from(&input, 0), 2));
        clean(&o, "repeat");
        assert_eq!(w.out.data[0], n as f32);
    }
}

#[test]
fn integer_and_double_sums_are_exact_with_a_misaligned_head() {
    let n = 2 * tile_elems::<i32>() + 777;
    let ints = Buf::new("ints", (0..n as i64).map(|i| ((i * 31) % 2001 - 1000) as i32).collect::<Vec<_>>());
    let want = ints.data[3..].iter().fold(0i32, |a, &x| a.wrapping_add(x));
    let mut w = Work::<i32>::new(3);
    let o = launch::<reduce_sum_i32>(cfg(3), &seed(2), w.args(from(&ints, 3), 3));
    clean(&o, "i32");
    assert_eq!(w.out.data[0], want);

    // Small integers in f64: every partial sum is exact.
    let n = tile_elems::<f64>() + 5;
    let wide = Buf::new("wide", (0..n).map(|i| (i % 100) as f64).collect::<Vec<_>>());
    let want: f64 = wide.data[1..].iter().sum();
    let mut w = Work::<f64>::new(2);
    let o = launch::<reduce_sum_f64>(cfg(2), &seed(3), w.args(from(&wide, 1), 2));
    clean(&o, "f64");
    assert_eq!(w.out.data[0], want);
}

/// Uneven inputs for the histograms: mixed bytes after a 5-byte head, and one repeated byte; with the
/// bins a CPU counts for each.
fn histogram_cases() -> Vec<(&'static str, Vec<u8>, usize, Vec<u32>)> {
    let n = 50_001;
    let bytes: Vec<u8> = (0..n).map(|i| ((i * 2654435761usize) >> 13) as u8).collect();
    [("mixed", bytes, 5), ("one bin", vec![42u8; n], 0)]
        .into_iter()
        .map(|(what, data, skip)| {
            let mut want = vec![0u32; hf::NUM_BINS];
            data[skip..].iter().for_each(|&x| want[x as usize] += 1);
            (what, data, skip, want)
        })
        .collect()
}

#[test]
fn histogram_fast_counts_every_byte_exactly() {
    for (what, data, skip, want) in histogram_cases() {
        let data = Buf::new("data", data);
        let mut hist = Buf::new("hist", vec![0u32; hf::NUM_BINS]);
        let cfg = LaunchConfig::linear(2, hf::BLOCK, hf::SHARED_BYTES);
        let o = launch::<histogram_bytes>(cfg, &seed(1), (from(&data, skip), hist.view_mut()));
        clean(&o, what);
        assert_eq!(hist.data, want, "{what}");
    }
}

#[test]
fn histogram_small_counts_every_byte_exactly_on_every_schedule() {
    // Three blocks of 256 threads over 3125 vectors: a grid-stride loop with a cut-short last round.
    for (what, data, skip, want) in histogram_cases() {
        let data = Buf::new("data", data);
        for s in 1..=3 {
            let mut hist = Buf::new("hist", vec![0u32; hf::NUM_BINS]);
            let cfg = LaunchConfig::linear(3, hs::BLOCK, hs::SHARED_BYTES);
            let o = launch::<histogram_bytes_small>(cfg, &seed(s), (from(&data, skip), hist.view_mut()));
            clean(&o, what);
            assert_eq!(hist.data, want, "{what}, schedule {s}");
        }
    }
}

#[test]
fn the_small_histogram_takes_inputs_up_to_8_mib() {
    // One block per 4 KiB up to 1 MiB, per 16 KiB up to 8 MiB, at most 8 per SM; above, none.
    let g = |n: usize| hs::grid(n, 132);
    assert_eq!(g(1), Some(1));
    assert_eq!(g(4096), Some(1));
    assert_eq!(g(4097), Some(2));
    assert_eq!(g(1 << 20), Some(256));
    assert_eq!(g((1 << 20) + 1), Some(65));
    assert_eq!(g(1 << 23), Some(512));
    assert_eq!(g((1 << 23) + 1), None);
    assert_eq!(hs::grid(1 << 23, 16), Some(128), "at most 8 blocks per SM");
}

mod last_block {
    //! The last-block pattern of `reduce_fast`, with the acquire fence right after the ticket (in the
    //! thread that drew it) and after the barrier (in every thread of the last block). Both are
    //! race-free under the PTX model: the first acquires what the ticket's add observed; in the
    //! second each reader's `__threadfence()` is a fence.sc.gpu that every writer's fence precedes in
    //! Fence-SC order (the last ticket is drawn after them all), and the earlier synchronizes with
    //! the later. (Readers without a device-scope fence: the litmus suite's last-block cases.)
    use gpu_std::block::sync_threads_or;
    use gpu_std::fence::threadfence;
    use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
    use gpu_std::{GlobalMut, kernel};

    /// Thread 0 of each block publishes `block + 1`; the last block's threads each read all of them.
    fn body(partials: GlobalMut<u32>, ticket: GlobalMut<u32>, out: GlobalMut<u32>, fence_after_barrier: bool) {
        let t = thread_idx().x;
        let mut last = false;
        if t == 0 {
            partials.set(block_idx().x as usize, block_idx().x + 1);
            threadfence();
            last = ticket.atomic(0).fetch_add(1) == grid_dim().x - 1;
            if last && !fence_after_barrier {
                threadfence();
            }
        }
        if sync_threads_or(last) {
            if fence_after_barrier {
                threadfence();
            }
            let mut s = 0;
            let mut k = t as usize;
            while k < partials.len() {
                s += partials.get(k);
                k += block_dim().x as usize;
            }
            out.atomic(0).fetch_add(s);
        }
    }
    kernel! {
        pub fn last_block_acquires<'a>(partials: GlobalMut<'a, u32>, ticket: GlobalMut<'a, u32>, out: GlobalMut<'a, u32>) {
            body(partials, ticket, out, false)
        }
    }
    kernel! {
        pub fn last_block_fence_after_barrier<'a>(partials: GlobalMut<'a, u32>, ticket: GlobalMut<'a, u32>, out: GlobalMut<'a, u32>) {
            body(partials, ticket, out, true)
        }
    }
}

#[test]
fn the_last_block_fences_after_its_ticket_or_after_the_barrier() {
    use last_block::{last_block_acquires, last_block_fence_after_barrier};
    let blocks = 4u32;
    let want = (1..=blocks).sum::<u32>();
    for s in common::SEEDS {
        let (mut p, mut t, mut o) =
            (Buf::new("partials", vec![0u32; 4]), Buf::new("ticket", vec![0]), Buf::new("out", vec![0]));
        let out = launch::<last_block_acquires>(
            LaunchConfig::linear(blocks, 64, 0),
            &seed(s),
            (p.view_mut(), t.view_mut(), o.view_mut()),
        );
        clean(&out, "fence right after the ticket");
        assert_eq!(o.data[0], want);

        let (mut p, mut t, mut o) =
            (Buf::new("partials", vec![0u32; 4]), Buf::new("ticket", vec![0]), Buf::new("out", vec![0]));
        let cfg = LaunchConfig::linear(blocks, 64, 0);
        let out = launch::<last_block_fence_after_barrier>(cfg, &seed(s), (p.view_mut(), t.view_mut(), o.view_mut()));
        clean(&out, "fence after the barrier, in every reader (Fence-SC order)");
        assert_eq!(o.data[0], want);
    }
}

#[test]
fn the_histogram_grid_gives_small_inputs_more_blocks() {
    // One block per 16 KiB up to 16 blocks, else one per 64 KiB, at most one per SM.
    let g = |n: usize| hf::grid(n, 132, 132);
    assert_eq!(g(1), 1);
    assert_eq!(g(16 * 1024), 1);
    assert_eq!(g(16 * 1024 + 1), 2);
    assert_eq!(g(1 << 16), 4);
    assert_eq!(g(1 << 18), 16);
    assert_eq!(g(1 << 20), 16);
    assert_eq!(g(1 << 21), 32);
    assert_eq!(g(1 << 30), 132);
    assert_eq!(hf::grid(1 << 30, 132, 100), 100, "no more blocks than fit");
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
