//! A kernel thread that overflows its stack while calling into the emulator ends the launch with
//! `EmuError::StackOverflow` naming the kernel and the thread, and the process (and the next launch)
//! carries on; the stack size is an option. A thread that overflows in its own code, onto its stack's
//! guard page, cannot be unwound: the process aborts with the same report on stderr (tested in a child
//! process).

use gpu_std::emu::{self, EmuError, LaunchConfig, Options, ThreadId};
use gpu_std::thread::{block_idx, thread_idx};
use gpu_std::{GlobalMut, kernel};
use std::hint::black_box;

/// Recursion that reads memory through the emulator at every level on the way down.
fn deep_with_accesses(n: u32, v: GlobalMut<u32>) -> u32 {
    let here = v.get(0);
    if n == 0 { here } else { deep_with_accesses(n - 1, v).wrapping_add(black_box(here)) }
}

/// As [`deep_with_accesses`], with 4 KiB of locals per level.
fn deep_padded_with_accesses(n: u32, v: GlobalMut<u32>) -> u32 {
    let pad = black_box([v.get(0); 1024]);
    if n == 0 { 0 } else { deep_padded_with_accesses(n - 1, v).wrapping_add(pad[n as usize % 1024] + 1) }
}

/// Recursion in the kernel's own code: 4 KiB of locals per level, no call into the emulator.
fn deep_without_accesses(n: u32) -> u32 {
    let pad = black_box([n; 1024]);
    if n == 0 { 0 } else { deep_without_accesses(n - 1).wrapping_add(pad[n as usize % 1024]) }
}

kernel! {
    /// Block 1, thread 5 recurses `depth` levels with an access per level; everyone else returns.
    pub fn recurse_with_accesses<'a>(v: GlobalMut<'a, u32>, depth: u32) {
        if block_idx().x == 1 && thread_idx().x == 5 {
            let r = deep_with_accesses(depth, v);
            v.set(1, r);
        }
    }
}

kernel! {
    /// Thread 3 recurses `depth` levels of 4 KiB with an access per level; everyone else returns.
    pub fn recurse_padded<'a>(v: GlobalMut<'a, u32>, depth: u32) {
        if thread_idx().x == 3 {
            let r = deep_padded_with_accesses(depth, v);
            v.set(0, r);
        }
    }
}

kernel! {
    /// Block 0, thread 3 recurses `depth` levels in its own code; everyone else returns.
    pub fn recurse_in_registers<'a>(v: GlobalMut<'a, u32>, depth: u32) {
        if block_idx().x == 0 && thread_idx().x == 3 {
            let r = deep_without_accesses(depth);
            v.set(0, r);
        }
    }
}

fn t(block: u32, thread: u32) -> ThreadId {
    ThreadId { block: (block, 0, 0), thread: (thread, 0, 0) }
}

#[test]
fn an_overflow_inside_an_emulator_call_is_reported_and_the_process_goes_on() {
    for seed in 1..=3 {
        let v = emu::buffer("v", vec![1u32, 0]);
        let o = Options { schedule_seed: seed, ..Options::default() };
        let cfg = LaunchConfig::linear(2, 8, 0);
        let e = emu::launch::<recurse_with_accesses>(&cfg, &o, (v.view_mut(), 1_000_000)).unwrap_err();
        println!("{e}");
        assert_eq!(
            e,
            EmuError::StackOverflow {
                kernel: "recurse_with_accesses".into(),
                thread: t(1, 5),
                stack_bytes: 256 * 1024
            }
        );
        // The same kernel with a depth that fits runs to completion afterwards.
        emu::launch::<recurse_with_accesses>(&cfg, &o, (v.view_mut(), 100)).expect("a shallow recursion fits");
        assert_eq!(v.to_vec(), [1, 101]);
    }
}

#[test]
fn the_stack_size_is_an_option() {
    let v = emu::buffer("v", vec![0u32]);
    let cfg = LaunchConfig::linear(1, 4, 0);
    // About 400 KiB of frames: more than the default 256 KiB, less than 1 MiB.
    let depth = 100;
    let e = emu::launch::<recurse_padded>(&cfg, &Options::default(), (v.view_mut(), depth)).unwrap_err();
    assert_eq!(e, EmuError::StackOverflow { kernel: "recurse_padded".into(), thread: t(0, 3), stack_bytes: 262_144 });
    let big = Options { stack_bytes: 1 << 20, ..Options::default() };
    emu::launch::<recurse_padded>(&cfg, &big, (v.view_mut(), depth)).expect("fits in 1 MiB");
    assert_eq!(v.to_vec(), [depth]);
    let tiny = Options { stack_bytes: 4096, ..Options::default() };
    let e = emu::launch::<recurse_padded>(&cfg, &tiny, (v.view_mut(), 1)).unwrap_err();
    assert_eq!(e.to_string(), "invalid launch: kernel `recurse_padded`: stack_bytes 4096 is below the 16 KiB minimum");
}

#[test]
fn stack_overflow_wording_is_its_own() {
    let v = emu::buffer("v", vec![0u32]);
    let e = emu::launch::<recurse_padded>(&LaunchConfig::linear(1, 4, 0), &Options::default(), (v.view_mut(), 1000))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "stack overflow in kernel `recurse_padded`, block 0 thread 3: the thread needed more than its 262144 bytes of \
         stack (raise emu::Options::stack_bytes, or recurse less: a GPU thread's stack is small too)"
    );
}

/// Set in the child process that runs the overflow onto the guard page.
const CHILD: &str = "GPU_STD_GUARD_PAGE_CHILD";

#[test]
fn an_overflow_onto_the_guard_page_aborts_the_process_with_the_report() {
    const NAME: &str = "an_overflow_onto_the_guard_page_aborts_the_process_with_the_report";
    if std::env::var_os(CHILD).is_some() {
        // The child: block 0 thread 3 overflows in its own code, without calling the emulator, on a
        // stack kept from the launch before (the OS thread reuses its stacks): its guard page is there.
        let v = emu::buffer("v", vec![0u32]);
        emu::launch::<recurse_in_registers>(&LaunchConfig::linear(2, 8, 0), &Options::default(), (v.view_mut(), 2))
            .expect("a shallow recursion fits");
        let r = emu::launch::<recurse_in_registers>(
            &LaunchConfig::linear(2, 8, 0),
            &Options::default(),
            (v.view_mut(), 100_000),
        );
        eprintln!("the launch returned instead of aborting: {r:?}");
        std::process::exit(3);
    }
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("the child runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    #[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{:?}\n{stderr}", out.status);
        assert!(
            stderr.contains(
                "gpu-std emulator: stack overflow in kernel `recurse_in_registers`, block 0 thread 3: the thread \
                 needed more than its 262144 bytes of stack (raise emu::Options::stack_bytes, or recurse less: a GPU \
                 thread's stack is small too)\ngpu-std emulator: the thread overflowed in its own code, onto its \
                 stack's guard page, where its frames cannot be unwound; aborting the process\n"
            ),
            "{stderr}"
        );
    }
    // Elsewhere there is no handler: the overflow ends the process as any stack overflow does.
    #[cfg(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))))]
    assert!(!out.status.success(), "{stderr}");
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
