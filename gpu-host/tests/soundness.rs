//! What the launch library refuses before a launch: views of another device's memory, a block larger
//! than the kernel's launch bounds, and (on a GPU) a module whose kernel takes other parameters than
//! the launch passes; what it refuses to make: a buffer whose size in bytes overflows; and a sequence
//! of launches that a panic leaves (the GPU half is `tests/tests/sequence_unwind.rs`).

use gpu_host::{Device, cover};
use gpu_std::emu::{self, EmuError, LaunchConfig};
use gpu_std::{Arg, GlobalMut, MemorySpace, Output, kernel};

kernel! {
    /// Thread 0 writes 7 to `x[0]`.
    pub fn poke<'a>(x: GlobalMut<'a, u32>) {
        if gpu_std::thread::global_index_x() == 0 {
            x.set(0, 7);
        }
    }
}

kernel! {
    /// `poke` with launch bounds: at most 64 threads per block.
    #[launch_bounds(64, 4)]
    pub fn poke_bounded<'a>(x: GlobalMut<'a, u32>) {
        if gpu_std::thread::global_index_x() == 0 {
            x.set(0, 7);
        }
    }
}

kernel! {
    /// Each thread writes `v` to the element it owns.
    pub fn fill_out<'a>(out: Output<'a, u32>, v: u32) {
        if let Some(o) = out.mine() {
            o.set(v);
        }
    }
}

#[test]
fn one_output_given_to_both_launches_of_a_pair_is_refused() {
    // `Arg` is `Copy`, so one `output()` fits in both tuples: each launch alone is fine, together they
    // are two writers per element.
    let (d0, d1) = (Device::emulator(Default::default()), Device::emulator(Default::default()));
    let mut b = d0.filled("b", 32, 0u32).unwrap();
    let out = b.output();
    let cfg = cover(32, 32, 1, 0);
    let e = Device::launch_pair::<fill_out, fill_out>(&d0, cfg, (out, 1u32), &d1, cfg, (out, 2u32)).unwrap_err();
    let msg = format!("{e:#}");
    assert!(
        msg.contains("parameter `out` of the first launch (kernel `fill_out`)")
            && msg.contains("overlaps parameter `out` of the second launch"),
        "{msg}"
    );
    assert_eq!(b.read().unwrap(), [0; 32], "nothing ran");
    // Two buffers: both launches run.
    let mut c = d0.filled("c", 32, 0u32).unwrap();
    Device::launch_pair::<fill_out, fill_out>(&d0, cfg, (b.output(), 1u32), &d1, cfg, (c.output(), 2u32)).unwrap();
    assert_eq!((b.read().unwrap(), c.read().unwrap()), (vec![1; 32], vec![2; 32]));
}

#[test]
fn a_block_past_the_launch_bounds_is_refused_before_the_launch() {
    let dev = Device::emulator(Default::default());
    let b = dev.filled("b", 1, 0u32).unwrap();
    let e = dev.launch::<poke_bounded>(cover(1, 128, 1, 0), (b.view_mut(),)).unwrap_err();
    let msg = format!("{e:#}");
    assert!(msg.contains("`poke_bounded`") && msg.contains("launch bounds") && msg.contains("at most 64"), "{msg}");
    assert_eq!(b.read().unwrap(), [0], "nothing ran");
    dev.launch::<poke_bounded>(cover(1, 64, 1, 0), (b.view_mut(),)).unwrap();
    assert_eq!(b.read().unwrap(), [7]);
}

#[test]
fn a_view_of_another_memory_space_is_refused_before_the_launch() {
    let mut host = vec![0u32; 4];
    // SAFETY (of the construction): `host` outlives the argument. The space is deliberately wrong: that
    // is what both launchers must refuse, before touching the memory.
    let foreign = unsafe { Arg::in_space(GlobalMut::from_raw_parts(host.as_mut_ptr(), 4), MemorySpace::unique()) };
    let e = emu::launch::<poke>(&LaunchConfig::linear(1, 32, 0), &Default::default(), (foreign,)).unwrap_err();
    let EmuError::InvalidLaunch(msg) = e else { panic!("expected an invalid launch, got {e}") };
    assert!(msg.contains("parameter `x`") && msg.contains("another device's memory"), "{msg}");

    let dev = Device::emulator(Default::default());
    let e = dev.launch::<poke>(cover(1, 32, 1, 0), (foreign,)).unwrap_err();
    assert!(format!("{e:#}").contains("another device's memory"), "{e:#}");
    assert_eq!(host, [0; 4], "nothing ran");

    // The device's own buffer is accepted.
    let mine = dev.filled("mine", 4, 0u32).unwrap();
    dev.launch::<poke>(cover(1, 32, 1, 0), (mine.view_mut(),)).unwrap();
    assert_eq!(mine.read().unwrap(), [7, 0, 0, 0]);
}

#[test]
fn an_emulator_buffer_goes_to_the_emulator_launch_of_gpu_std_too() {
    // Both kinds of host buffer are host memory: an emulator device's buffer may be given to
    // `gpu_std::emu::launch`, and an `emu::Buffer` to an emulator device.
    let dev = Device::emulator(Default::default());
    let b = dev.filled("b", 1, 0u32).unwrap();
    emu::launch::<poke>(&LaunchConfig::linear(1, 1, 0), &Default::default(), (b.view_mut(),)).unwrap();
    assert_eq!(b.read().unwrap(), [7]);
    let e = emu::buffer("e", vec![0u32]);
    dev.launch::<poke>(cover(1, 1, 1, 0), (e.view_mut(),)).unwrap();
    assert_eq!(e.to_vec(), [7]);
}

#[test]
fn a_mapped_buffer_whose_size_in_bytes_overflows_is_an_error_not_a_short_allocation() {
    // (2^61 + 1) * 8 bytes wrap round to 8: unchecked, that allocates 16 bytes for a buffer whose
    // `len()` (and so its host view's bounds check) says 2^61 + 1 words.
    let dev = Device::emulator(Default::default());
    let len = (1usize << 61) + 1;
    let Err(e) = dev.mapped::<u64>("flags", len) else { panic!("a mapped buffer of {len} u64 words was made") };
    let msg = format!("{e:#}");
    assert!(msg.contains("mapped buffer `flags`") && msg.contains("more than one allocation can hold"), "{msg}");
    // Past isize::MAX bytes without overflowing usize: refused too.
    assert!(dev.mapped::<u32>("flags", isize::MAX as usize / 4 + 1).is_err());
    // A size that is possible but not available is an error as well, not an abort.
    let Err(e) = dev.mapped::<u64>("flags", 1 << 59) else { panic!("4 EiB were allocated") };
    assert!(format!("{e:#}").contains("cannot allocate"), "{e:#}");
    // A small one works.
    assert_eq!(dev.mapped::<u64>("flags", 3).unwrap().len(), 3);
}

#[test]
fn a_filled_buffer_whose_size_in_bytes_overflows_is_an_error() {
    let dev = Device::emulator(Default::default());
    let Err(e) = dev.filled("big", (1usize << 61) + 1, 0u64) else { panic!("a buffer of 2^61 + 1 u64 was made") };
    let msg = format!("{e:#}");
    assert!(msg.contains("buffer `big`") && msg.contains("more than one allocation can hold"), "{msg}");
    let Err(e) = dev.filled("big", 1 << 59, 0u64) else { panic!("4 EiB were allocated") };
    assert!(format!("{e:#}").contains("buffer `big`: cannot allocate"), "{e:#}");
}

kernel! {
    /// Thread 0 adds 1 to `x[0]`.
    pub fn bump<'a>(x: GlobalMut<'a, u32>) {
        if gpu_std::thread::global_index_x() == 0 {
            x.set(0, x.get(0) + 1);
        }
    }
}

#[test]
fn a_panic_inside_a_sequence_unwinds_through_it_and_leaves_the_device_usable() {
    let dev = Device::emulator(Default::default());
    let x = dev.filled("x", 1, 0u32).expect("alloc");
    let cfg = LaunchConfig::linear(1, 32, 0);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = dev.sequence(|s| {
            s.launch::<bump>(cfg, (x.view_mut(),))?;
            s.launch::<bump>(cfg, (x.view_mut(),))?;
            // An `expect` failing between launches: the sequence must unwind, not hang nor abort.
            std::hint::black_box(None::<()>).expect("a panic between the launches of a sequence");
            s.launch::<bump>(cfg, (x.view_mut(),))
        });
    }));
    let payload = caught.expect_err("the panic reaches the caller");
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("a panic between the launches of a sequence")
    );
    // The two launches before the panic ran, the one after did not; the buffer and the device work.
    assert_eq!(x.read().expect("read"), [2]);
    x.write(&[40]).expect("write");
    let ((), after) = dev
        .sequence_then_read(&x, 0, |s| {
            s.launch::<bump>(cfg, (x.view_mut(),))?;
            s.launch::<bump>(cfg, (x.view_mut(),))
        })
        .expect("a sequence after the panic");
    assert_eq!(after, 42);
    let f = dev.take_findings();
    assert!(f.races.is_empty() && f.deadlocks.is_empty(), "{f:?}");
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
