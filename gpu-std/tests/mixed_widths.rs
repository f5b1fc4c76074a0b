//! The race detector tracks memory per byte: accesses of different widths that share bytes (a `u8`
//! write and a `u32` read of the word holding it, through two shared layouts or two views of one
//! buffer) conflict like accesses of one width, and a barrier orders them like any other accesses.

use gpu_std::block::sync_threads;
use gpu_std::emu::{self, LaunchConfig, Options, Outcome, ThreadId};
use gpu_std::thread::thread_idx;
use gpu_std::{GlobalMut, kernel, shared_layout};

// Each layout covers the block's dynamic shared memory from its first byte, so these overlap.
shared_layout! {
    struct Bytes { b: [u8; 16] }
}
shared_layout! {
    struct Words { w: [u32; 4] }
}
shared_layout! {
    struct Floats { f: [f32; 4] }
}

kernel! {
    /// Thread 0 writes shared byte 1; thread 1 reads the word holding it. No barrier.
    pub fn byte_write_word_read<'a>(out: GlobalMut<'a, u32>) {
        match thread_idx().x {
            0 => Bytes::view().b.set(1, 7),
            1 => out.set(0, Words::view().w.get(0)),
            _ => {}
        }
    }
}

kernel! {
    /// Thread 0 writes shared word 0 as an `f32`; thread 1 reads it as a `u32`. No barrier.
    pub fn float_write_word_read<'a>(out: GlobalMut<'a, u32>) {
        match thread_idx().x {
            0 => Floats::view().f.set(0, 1.5),
            1 => out.set(0, Words::view().w.get(0)),
            _ => {}
        }
    }
}

kernel! {
    /// Thread 0 writes shared bytes 0..4; after a barrier, thread 1 reads the word they make up.
    pub fn byte_writes_barrier_word_read<'a>(out: GlobalMut<'a, u32>) {
        let me = thread_idx().x;
        if me == 0 {
            let b = Bytes::view().b;
            for i in 0..4 {
                b.set(i, i as u8 + 1);
            }
        }
        sync_threads();
        if me == 1 {
            out.set(0, Words::view().w.get(0));
        }
    }
}

kernel! {
    /// Thread 0 writes byte 2 of a global word through a byte view; thread 1 reads the word through a
    /// word view of the same memory. No barrier.
    pub fn global_byte_write_word_read<'a>(bytes: GlobalMut<'a, u8>, words: GlobalMut<'a, u32>, out: GlobalMut<'a, u32>) {
        match thread_idx().x {
            0 => bytes.set(2, 9),
            1 => out.set(0, words.get(0)),
            _ => {}
        }
    }
}

fn t(thread: u32) -> ThreadId {
    ThreadId { block: (0, 0, 0), thread: (thread, 0, 0) }
}

fn shared_launch<K: for<'a> gpu_std::Kernel<Args<'a> = (GlobalMut<'a, u32>,)>>(seed: u64) -> (Outcome, u32) {
    let out = emu::buffer("out", vec![0u32]);
    let opts = Options { schedule_seed: seed, ..Options::default() };
    let o = emu::launch::<K>(&LaunchConfig::linear(1, 2, 16), &opts, (out.view_mut(),)).expect("launch");
    (o, out.to_vec()[0])
}

/// The one race of `o`: between a write by thread 0 and a read by thread 1.
fn assert_write_read_race(o: &Outcome, seed: u64) {
    assert_eq!(o.racy_addresses, 1, "seed {seed}: {:?}", o.races);
    let r = &o.races[0];
    let mut sides = [(r.first.thread, r.first.kind), (r.second.thread, r.second.kind)];
    sides.sort();
    assert_eq!(sides, [(t(0), "write"), (t(1), "read")], "seed {seed}: {r}");
}

#[test]
fn a_byte_write_and_an_overlapping_word_read_race_on_every_seed() {
    for seed in 1..=20 {
        let (o, _) = shared_launch::<byte_write_word_read>(seed);
        assert_write_read_race(&o, seed);
        // The layouts overlap: the race is named by the array of the width of the access that found it.
        let r = o.races[0].to_string();
        let by = |name: &str| {
            r.starts_with(&format!("data race in kernel `byte_write_word_read` on shared memory {name} of block 0"))
        };
        assert!(by("`Words.w`[0]") || by("`Bytes.b`[1]"), "{r}");
    }
}

#[test]
fn a_float_write_and_a_word_read_of_the_same_bytes_race_on_every_seed() {
    for seed in 1..=20 {
        let (o, _) = shared_launch::<float_write_word_read>(seed);
        assert_write_read_race(&o, seed);
    }
}

#[test]
fn byte_writes_and_a_word_read_separated_by_a_barrier_are_clean() {
    for seed in 1..=20 {
        let (o, word) = shared_launch::<byte_writes_barrier_word_read>(seed);
        assert_eq!(o.racy_addresses, 0, "seed {seed}: {:?}", o.races);
        assert_eq!(o.uninit_elements, 0, "seed {seed}: every byte read was written");
        assert_eq!(word, u32::from_le_bytes([1, 2, 3, 4]));
    }
}

#[test]
fn a_byte_write_and_an_overlapping_word_read_race_in_global_memory_too() {
    for seed in 1..=20 {
        let mut words = vec![0u32];
        let _name = emu::register_buffer("words", words.as_ptr(), 1);
        let mut out = vec![0u32];
        let base = words.as_mut_ptr();
        // SAFETY: both views reach the four bytes of `words`, which outlives the launch and which the
        // host does not touch during it; so does `out`. Raw views go through
        // the `unsafe` launcher.
        let o = unsafe {
            let (bytes, w) = (GlobalMut::from_raw_parts(base as *mut u8, 4), GlobalMut::from_raw_parts(base, 1));
            let out = GlobalMut::from_raw_parts(out.as_mut_ptr(), 1);
            let opts = Options { schedule_seed: seed, ..Options::default() };
            emu::launch_params::<global_byte_write_word_read>(&LaunchConfig::linear(1, 2, 0), &opts, (bytes, w, out))
        }
        .expect("launch");
        assert_write_read_race(&o, seed);
        assert_eq!(o.races[0].buffer, "words", "seed {seed}");
        assert_eq!(words, [9 << 16]);
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
