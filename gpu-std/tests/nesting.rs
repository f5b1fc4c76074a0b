//! Launches do not nest: a launch from inside a kernel is refused with an error before it touches the
//! running launch, whose access check stays on — memory it was not given is still refused afterwards.

use gpu_std::emu::{self, EmuError, LaunchConfig, Options, Outcome, ThreadId};
use gpu_std::thread::thread_idx;
use gpu_std::{GlobalMut, kernel};
use std::cell::RefCell;

thread_local! {
    /// What the launch from inside the kernel returned (kernels run on the launching OS thread).
    static NESTED: RefCell<Option<Result<Outcome, EmuError>>> = const { RefCell::new(None) };
}

kernel! {
    /// Sets `v[0]`.
    pub fn inner<'a>(v: GlobalMut<'a, u32>) {
        v.set(0, 1);
    }
}

kernel! {
    /// Thread 0 launches `inner` on a buffer of its own and keeps the result; every thread then writes
    /// its slot of `out`, and thread 0 writes the `u32` at address `stray`, which the launch was not
    /// given.
    pub fn launches_inside<'a>(out: GlobalMut<'a, u32>, stray: u64) {
        let me = thread_idx().x as usize;
        if me == 0 {
            let scratch = emu::buffer("scratch", vec![0u32]);
            let r = emu::launch::<inner>(&LaunchConfig::linear(1, 1, 0), &Options::default(), (scratch.view_mut(),));
            NESTED.with(|n| *n.borrow_mut() = Some(r));
            assert_eq!(scratch.to_vec(), [0], "the inner kernel never ran");
        }
        out.set(me, 1);
        if me == 0 {
            // SAFETY: `stray` is the address of a live, aligned `u32` of the test. The launch was not
            // given it: the emulator must refuse the access.
            let v = unsafe { GlobalMut::from_raw_parts(stray as *mut u32, 1) };
            v.set(0, 7);
        }
    }
}

#[test]
fn a_launch_inside_a_kernel_is_refused_and_the_access_check_stays_on() {
    for seed in 1..=3 {
        let out = emu::buffer("out", vec![0u32; 4]);
        let mut stray = Box::new(0u32);
        let addr = &mut *stray as *mut u32 as u64;
        let opts = Options { schedule_seed: seed, ..Options::default() };
        let e = emu::launch::<launches_inside>(&LaunchConfig::linear(1, 4, 0), &opts, (out.view_mut(), addr))
            .expect_err("the stray access must be refused");

        let nested = NESTED.with(|n| n.borrow_mut().take()).expect("thread 0 tried to launch");
        assert_eq!(
            nested.expect_err("the nested launch must be refused"),
            EmuError::InvalidLaunch(
                "kernel `inner`: launched from inside a thread of kernel `launches_inside`; emulated launches \
                 cannot nest (launch kernels from the host, one at a time)"
                    .into()
            )
        );
        let EmuError::KernelPanic { kernel, thread, message } = &e else { panic!("expected a refused access: {e}") };
        assert_eq!((kernel.as_str(), *thread), ("launches_inside", ThreadId { block: (0, 0, 0), thread: (0, 0, 0) }));
        assert!(message.starts_with("global access at "), "{message}");
        assert!(
            message.contains(&format!("to {addr:#x} (4 bytes) lies outside every view passed to this launch")),
            "{message}"
        );
        assert_eq!(*stray, 0, "the stray write never happened");
    }
    // The emulator is left ready for the next launch.
    let v = emu::buffer("v", vec![0u32]);
    emu::launch::<inner>(&LaunchConfig::linear(1, 1, 0), &Options::default(), (v.view_mut(),)).expect("launch");
    assert_eq!(v.to_vec(), [1]);
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
