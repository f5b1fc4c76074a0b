//! Attacks on the emulator from safe code, each of which once reached undefined behaviour or hung:
//! a panic payload whose destructor calls a primitive or panics, a launch after a panic escaped an
//! earlier one, a registered buffer whose length overflows the address space, and an OS lock held
//! across a barrier (which ends the process with a report instead of hanging it).

use gpu_std::block::sync_threads;
use gpu_std::emu::{self, EmuError, LaunchConfig, Options};
use gpu_std::fence::threadfence;
use gpu_std::thread::thread_idx;
use gpu_std::{GlobalMut, kernel};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Destructors of [`FencingPayload`] that ran to their end.
static FENCED: AtomicU32 = AtomicU32::new(0);

/// A panic payload whose destructor calls primitives: a fence, a barrier, the thread index.
struct FencingPayload;

impl Drop for FencingPayload {
    fn drop(&mut self) {
        threadfence();
        sync_threads();
        FENCED.fetch_add(1 + thread_idx().x, Ordering::Relaxed);
    }
}

/// A panic payload whose destructor panics.
struct PanickingPayload;

impl Drop for PanickingPayload {
    fn drop(&mut self) {
        panic!("the payload's destructor panics");
    }
}

kernel! {
    /// Thread 5 panics with a payload whose destructor calls primitives (`how` 0) or panics (`how` 1);
    /// the others wait at a barrier.
    pub fn panics_with_a_payload<'a>(x: GlobalMut<'a, u32>, how: u32) {
        if thread_idx().x == 5 {
            if how == 0 {
                std::panic::panic_any(FencingPayload);
            }
            std::panic::panic_any(PanickingPayload);
        }
        sync_threads();
        x.set(0, 1);
    }
}

fn cfg() -> LaunchConfig {
    LaunchConfig::linear(1, 32, 0)
}

#[test]
fn a_payload_whose_destructor_calls_a_primitive_ends_the_launch_with_its_report() {
    let x = emu::buffer("x", vec![0u32]);
    let e = emu::launch::<panics_with_a_payload>(&cfg(), &Options::default(), (x.view_mut(), 0)).unwrap_err();
    let EmuError::KernelPanic { thread, message, .. } = &e else { panic!("expected a kernel panic, got {e}") };
    assert_eq!(thread.thread, (5, 0, 0), "{e}");
    assert!(message.starts_with("panic at ") && message.contains("emu_soundness.rs"), "{e}");
    // The destructor ran to its end, as thread 5 (its fence and barrier completed at once).
    assert_eq!(FENCED.load(Ordering::Relaxed), 6);
    // The OS thread's emulator state is whole: the next launch runs.
    let y = emu::buffer("y", vec![0u32]);
    let e = emu::launch::<panics_with_a_payload>(&cfg(), &Options::default(), (y.view_mut(), 0)).unwrap_err();
    assert!(matches!(e, EmuError::KernelPanic { .. }), "{e}");
}

#[test]
fn a_payload_whose_destructor_panics_is_reported_and_the_next_launch_runs() {
    let x = emu::buffer("x", vec![0u32]);
    let e = emu::launch::<panics_with_a_payload>(&cfg(), &Options::default(), (x.view_mut(), 1)).unwrap_err();
    let EmuError::KernelPanic { message, .. } = &e else { panic!("expected a kernel panic, got {e}") };
    assert!(message.contains("the destructor of its panic payload panicked too"), "{e}");
    for _ in 0..3 {
        let e = emu::launch::<panics_with_a_payload>(&cfg(), &Options::default(), (x.view_mut(), 1)).unwrap_err();
        assert!(matches!(e, EmuError::KernelPanic { ref kernel, .. } if kernel == "panics_with_a_payload"), "{e}");
    }
}

kernel! {
    /// Every thread spins on `flag[0]`, which nobody sets.
    pub fn spins_forever<'a>(flag: GlobalMut<'a, u32>) {
        while flag.get_volatile(0) == 0 {}
    }
}

#[test]
fn a_registered_length_that_overflows_names_nothing_and_the_livelock_report_is_built() {
    let mut flag = emu::buffer("flag", vec![0u32; 4]);
    // A name for memory that cannot exist (its bytes overflow the address space), over the flag's
    // address: it is not registered, so the report names the flag's own buffer.
    let _bogus = emu::register_buffer("bogus", flag.as_mut_slice().as_ptr(), usize::MAX / 2);
    let opts = Options { poll_limit: 2_000, ..Options::default() };
    let e = emu::launch::<spins_forever>(&cfg(), &opts, (flag.view_mut(),)).unwrap_err();
    let EmuError::Livelock(l) = &e else { panic!("expected a livelock, got {e}") };
    assert!(e.to_string().contains("`flag`[0]"), "{e}");
    assert!(!l.spinning.is_empty());
    // And the next launch on this OS thread runs.
    let e = emu::launch::<spins_forever>(&cfg(), &opts, (flag.view_mut(),)).unwrap_err();
    assert!(matches!(e, EmuError::Livelock(_)), "{e}");
}

static LOCK: std::sync::Mutex<u32> = std::sync::Mutex::new(0);

kernel! {
    /// Thread 0 holds an OS lock across a barrier; thread 1 waits for the lock: the OS thread that runs
    /// both blocks for ever.
    pub fn os_lock_across_a_barrier<'a>(x: GlobalMut<'a, u32>) {
        let t = thread_idx().x;
        if t == 0 {
            let g = LOCK.lock().unwrap();
            sync_threads();
            x.set(0, *g);
        } else {
            if t == 1 {
                drop(LOCK.lock().unwrap());
            }
            sync_threads();
        }
    }
}

/// Set in the child process that runs the launch that blocks its OS thread.
const CHILD: &str = "GPU_STD_OS_LOCK_CHILD";

#[test]
fn an_os_lock_held_across_a_barrier_ends_the_process_with_a_report_instead_of_hanging() {
    const NAME: &str = "an_os_lock_held_across_a_barrier_ends_the_process_with_a_report_instead_of_hanging";
    if std::env::var_os(CHILD).is_some() {
        let x = emu::buffer("x", vec![0u32]);
        let opts = Options { time_limit: Duration::from_millis(200), ..Options::default() };
        let r = emu::launch::<os_lock_across_a_barrier>(&cfg(), &opts, (x.view_mut(),));
        eprintln!("the launch returned: {r:?}");
        std::process::exit(3);
    }
    let start = std::time::Instant::now();
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("the child runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(6), "{:?}\n{stderr}", out.status);
    }
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("gpu-std emulator: kernel `os_lock_across_a_barrier` has run")
            && stderr.contains("past its time limit of 0.2 s")
            && stderr.contains("block (0, 0, 0) thread (1, 0, 0) ran last")
            && stderr.contains("a std::sync::Mutex")
            && stderr.contains("aborting the process"),
        "{stderr}"
    );
    // The limit and the watchdog's grace (2 s), not a hang.
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
}

kernel! {
    /// Each thread writes its global index to its own element.
    pub fn write_own<'a>(out: gpu_std::Output<'a, u32>) {
        if let Some(o) = out.mine() {
            o.set(o.index() as u32);
        }
    }
}

#[test]
fn one_output_given_to_both_devices_of_a_two_device_launch_is_refused() {
    let mut b = emu::buffer("out", vec![0u32; 32]);
    let out = b.output();
    let cfg = LaunchConfig::linear(1, 32, 0);
    // `Arg` is `Copy`: the same output in both tuples would give every element two writers.
    let e =
        emu::launch_two_devices::<write_own, write_own>(&cfg, (out,), &cfg, (out,), &Options::default()).unwrap_err();
    let EmuError::InvalidLaunch(msg) = &e else { panic!("expected an invalid launch, got {e}") };
    assert!(msg.contains("parameter `out`") && msg.contains("overlaps"), "{msg}");
    assert_eq!(b.to_vec(), vec![0; 32], "nothing ran");
    // Two buffers: both grids run.
    let (mut b0, mut b1) = (emu::buffer("out0", vec![0u32; 32]), emu::buffer("out1", vec![0u32; 32]));
    emu::launch_two_devices::<write_own, write_own>(&cfg, (b0.output(),), &cfg, (b1.output(),), &Options::default())
        .unwrap();
    assert_eq!(b0.to_vec(), (0..32).collect::<Vec<u32>>());
    assert_eq!(b1.to_vec(), (0..32).collect::<Vec<u32>>());
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
