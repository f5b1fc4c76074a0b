//! The detector's memory of accesses has no bound: a race is found whatever the number of ordered
//! accesses in between. Also here: reads of uninitialised shared memory, and races between lanes of
//! one warp, which suggest `__syncwarp()`. Every case, must-flag and must-not-flag, runs under several
//! schedules.

mod common;

use common::{Buf, SEEDS, launch, pair, reports, seed, seed_all_reports, t};
use gpu_std::block::sync_threads;
use gpu_std::emu::LaunchConfig;
use gpu_std::fence::{nanosleep, threadfence};
use gpu_std::thread::{global_index_x, thread_idx};
use gpu_std::warp::{FULL_MASK, sync_warp};
use gpu_std::{GlobalMut, shared_layout};

/// Readers of [`many_readers`] ordered between the early read and the write: more than the 64 the
/// detector once remembered per address.
const READERS: u32 = 100;
/// The thread of [`many_readers`] whose read is not ordered before the write (unless `join`).
const EARLY: u32 = 127;

gpu_std::kernel! {
    /// Test-only, one block of 128 threads: thread `EARLY` reads `x[0]`, then lets `READERS` threads
    /// read it after it (through `go`, a relaxed atomic that orders nothing); each of them releases to
    /// thread 0 (a fence, then an atomic add on `done`), which waits for all, acquires, and writes
    /// `x[0]`. With `join != 0` thread `EARLY` releases to thread 0 too; otherwise its read races with
    /// the write.
    pub fn many_readers<'a>(x: GlobalMut<'a, u32>, go: GlobalMut<'a, u32>, done: GlobalMut<'a, u32>, sink: GlobalMut<'a, u32>, join: u32) {
        let me = thread_idx().x;
        if me == EARLY {
            sink.set(me as usize, x.get(0));
            if join != 0 {
                threadfence();
                done.atomic(0).fetch_add(1);
            }
            go.atomic(0).swap(1);
        } else if (1..=READERS).contains(&me) {
            while go.get_volatile(0) == 0 {
                nanosleep(8);
            }
            sink.set(me as usize, x.get(0));
            threadfence();
            done.atomic(0).fetch_add(1);
        } else if me == 0 {
            while done.get_volatile(0) < READERS + join {
                nanosleep(8);
            }
            threadfence();
            x.set(0, 7);
        }
    }
}

fn run_many_readers(join: u32, s: u64) -> gpu_std::emu::Outcome {
    let mut x = Buf::new("x", vec![3u32]);
    let mut go = Buf::new("go", vec![0u32]);
    let mut done = Buf::new("done", vec![0u32]);
    let mut sink = Buf::new("sink", vec![0u32; 128]);
    let args = (x.view_mut(), go.view_mut(), done.view_mut(), sink.view_mut(), join);
    let o = launch::<many_readers>(LaunchConfig::linear(1, 128, 0), &seed(s), args);
    assert_eq!((x.data[0], done.data[0]), (7, READERS + join));
    assert!(sink.data[1..=READERS as usize].iter().all(|&v| v == 3), "the readers read before the write");
    o
}

#[test]
fn write_after_read_is_flagged_after_more_than_64_ordered_readers() {
    for s in SEEDS {
        let o = run_many_readers(0, s);
        println!("{}", o.races[0]);
        assert_eq!(o.racy_addresses, 1, "{}", reports(&o));
        let r = &o.races[0];
        assert_eq!((r.kernel.as_str(), r.buffer.as_str(), r.index), ("many_readers", "x", 0));
        assert_eq!((r.first.thread, r.second.thread), (t(0, EARLY), t(0, 0)), "{r}");
        assert_eq!((r.first.kind, r.second.kind), ("read", "write"), "{r}");
        assert!(r.why.contains("same block, same barrier interval (0): no __syncthreads()"), "{r}");
    }
}

#[test]
fn write_after_many_ordered_readers_is_clean() {
    for s in SEEDS {
        let o = run_many_readers(1, s);
        assert_eq!(o.racy_addresses, 0, "seed {s}: {}", reports(&o));
    }
}

shared_layout! {
    /// Test-only shared memory: one word per thread of a 64-thread block.
    pub struct Tile {
        pub v: [u32; 64],
    }
}

gpu_std::kernel! {
    /// Test-only: the first `filled` threads of each block write their word of the shared tile; after
    /// a barrier every thread copies its own word to `out`.
    pub fn partial_tile<'a>(out: GlobalMut<'a, u32>, filled: u32) {
        let s = Tile::view().v;
        let me = thread_idx().x;
        if me < filled {
            s.set(me as usize, me + 1);
        }
        sync_threads();
        out.set(global_index_x(), s.get(me as usize));
    }
}

#[test]
fn uninitialised_shared_reads_are_reported_per_block_and_element() {
    for s in SEEDS {
        let mut out = Buf::new("out", vec![0u32; 128]);
        let cfg = LaunchConfig::linear(2, 64, Tile::BYTES);
        let o = launch::<partial_tile>(cfg, &seed_all_reports(s), (out.view_mut(), 32));
        println!("{}", o.uninit_reads[0]);
        assert_eq!((o.racy_addresses, o.uninit_elements, o.uninit_reads.len()), (0, 64, 64), "{}", reports(&o));
        let mut seen: Vec<_> = o.uninit_reads.iter().map(|u| (u.thread, u.index)).collect();
        seen.sort();
        let want: Vec<_> = (0..2).flat_map(|b| (32..64).map(move |k| (t(b, k), k as usize))).collect();
        assert_eq!(seen, want, "each unwritten word, read by its own thread in each block");
        for u in &o.uninit_reads {
            assert_eq!((u.kernel.as_str(), u.kind, u.offset, u.size), ("partial_tile", "read", u.index * 4, 4), "{u}");
            assert!(u.site.contains("detector_history.rs"), "{u}");
            // Named by the shared layout's array, as race reports are.
            assert_eq!(u.array.as_deref(), Some("Tile.v"), "{u}");
            let place = format!("of shared memory `Tile.v`[{}] of block {}", u.index, u.thread.block.0);
            assert!(u.to_string().contains(&place), "{u}");
        }
    }
}

#[test]
fn shared_memory_written_before_the_barrier_is_clean() {
    for s in SEEDS {
        let mut out = Buf::new("out", vec![0u32; 128]);
        let cfg = LaunchConfig::linear(2, 64, Tile::BYTES);
        let o = launch::<partial_tile>(cfg, &seed(s), (out.view_mut(), 64));
        assert_eq!((o.racy_addresses, o.uninit_elements), (0, 0), "{}", reports(&o));
        assert_eq!(out.data, (0..128).map(|i| i % 64 + 1).collect::<Vec<_>>());
    }
}

gpu_std::kernel! {
    /// Test-only: every thread adds 1 to bin `thread % 4` of a shared tile with a shared atomic, the
    /// bins cleared first by thread 0 (and a barrier) when `clear != 0`; thread 0 then copies the bins.
    pub fn shared_bins<'a>(out: GlobalMut<'a, u32>, clear: u32) {
        let bins = Tile::view().v;
        let me = thread_idx().x as usize;
        if clear != 0 && me == 0 {
            for b in 0..4 {
                bins.set(b, 0);
            }
        }
        sync_threads();
        bins.atomic(me % 4).fetch_add(1);
        sync_threads();
        if me == 0 {
            for b in 0..4 {
                out.set(b, bins.get(b));
            }
        }
    }
}

#[test]
fn atomics_on_uninitialised_shared_memory_are_reported_and_cleared_bins_are_clean() {
    for s in SEEDS {
        let mut out = Buf::new("out", vec![0u32; 4]);
        let cfg = LaunchConfig::linear(1, 64, Tile::BYTES);
        let o = launch::<shared_bins>(cfg, &seed(s), (out.view_mut(), 0));
        assert_eq!((o.racy_addresses, o.uninit_elements), (0, 4), "{}", reports(&o));
        let mut bins: Vec<_> =
            o.uninit_reads.iter().map(|u| (u.index, u.kind, u.thread.thread.0 as usize % 4)).collect();
        bins.sort();
        assert_eq!(bins, (0..4).map(|b| (b, "atomic (block)", b)).collect::<Vec<_>>(), "{}", reports(&o));

        let o = launch::<shared_bins>(cfg, &seed(s), (out.view_mut(), 1));
        assert_eq!((o.racy_addresses, o.uninit_elements), (0, 0), "{}", reports(&o));
        assert_eq!(out.data, vec![16; 4]);
    }
}

/// How [`ring`] reads its neighbour: right after the write.
const NO_SYNC: u32 = 0;
/// After `__syncwarp()`.
const SYNC_WARP: u32 = 1;
/// The same lane of the other warp, right after the write.
const OTHER_WARP: u32 = 2;

/// The word [`ring`]'s thread `k` reads.
fn neighbour(k: usize, how: u32) -> usize {
    if how == OTHER_WARP { (k + 32) % 64 } else { k / 32 * 32 + (k + 1) % 32 }
}

gpu_std::kernel! {
    /// Test-only, one block of 64 threads: each thread clears its word of a shared tile (then a
    /// barrier), writes it, and reads its neighbour's word (see `neighbour`) as `how` says.
    pub fn ring<'a>(out: GlobalMut<'a, u32>, how: u32) {
        let s = Tile::view().v;
        let me = thread_idx().x as usize;
        s.set(me, 0);
        sync_threads();
        s.set(me, me as u32 + 1);
        if how == SYNC_WARP {
            sync_warp(FULL_MASK);
        }
        out.set(me, s.get(neighbour(me, how)));
    }
}

#[test]
fn race_between_lanes_of_one_warp_suggests_syncwarp() {
    for s in SEEDS {
        let mut out = Buf::new("out", vec![0u32; 64]);
        let cfg = LaunchConfig::linear(1, 64, Tile::BYTES);
        let o = launch::<ring>(cfg, &seed_all_reports(s), (out.view_mut(), NO_SYNC));
        println!("{}", o.races[0]);
        assert_eq!((o.racy_addresses, o.races.len(), o.uninit_elements), (64, 64, 0), "{}", reports(&o));
        for r in &o.races {
            let k = r.index;
            let reader = (0..64).find(|&j| neighbour(j, NO_SYNC) == k).expect("a reader") as u32;
            assert_eq!((r.kernel.as_str(), r.buffer.as_str()), ("ring", "Tile.v"), "{r}");
            let head = format!("data race in kernel `ring` on shared memory `Tile.v`[{k}] of block 0\n");
            assert!(r.to_string().starts_with(&head), "the race names the shared layout's array: {r}");
            assert_eq!(pair(r), [t(0, reader.min(k as u32)), t(0, reader.max(k as u32))], "{r}");
            assert_eq!(r.first.barrier_interval, 1, "{r}");
            let (w, l) = (k / 32, k % 32);
            assert!(r.why.contains(&format!("same warp (warp {w}, lanes ")) && r.why.contains(&format!("{l}")), "{r}");
            assert!(r.why.contains("same barrier interval (1): no __syncwarp() between the accesses"), "{r}");
            assert!(!r.why.contains("__syncthreads"), "{r}");
        }
    }
}

#[test]
fn syncwarp_between_lanes_is_clean_and_across_warps_needs_syncthreads() {
    for s in SEEDS {
        let mut out = Buf::new("out", vec![0u32; 64]);
        let cfg = LaunchConfig::linear(1, 64, Tile::BYTES);
        let o = launch::<ring>(cfg, &seed(s), (out.view_mut(), SYNC_WARP));
        assert_eq!((o.racy_addresses, o.uninit_elements), (0, 0), "{}", reports(&o));
        assert_eq!(out.data, (0..64).map(|k| neighbour(k, SYNC_WARP) as u32 + 1).collect::<Vec<_>>());

        let o = launch::<ring>(cfg, &seed_all_reports(s), (out.view_mut(), OTHER_WARP));
        assert_eq!((o.racy_addresses, o.races.len()), (64, 64), "{}", reports(&o));
        for r in &o.races {
            let k = r.index as u32;
            assert_eq!(pair(r), [t(0, k.min((k + 32) % 64)), t(0, k.max((k + 32) % 64))], "{r}");
            assert!(
                r.why.contains("same block, same barrier interval (1): no __syncthreads() between the accesses"),
                "{r}"
            );
            assert!(!r.why.contains("__syncwarp"), "{r}");
        }
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
