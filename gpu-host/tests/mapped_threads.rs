//! Mapped host memory shared by an emulated launch and a real second OS thread: the host view's
//! atomics on one OS thread and the kernel's on the launching one are atomic with respect to each
//! other (no update lost), and no access of either is a data race.

use gpu_host::{Device, cover};
use gpu_std::{GlobalMut, kernel};
use std::sync::atomic::{AtomicBool, Ordering};

/// Atomic adds each thread of the kernel makes.
const ADDS: u32 = 200;

kernel! {
    /// Every thread adds 1 to `counter[0]` `ADDS` times with a system-scope atomic, and reads
    /// `counter[1]` (which the host writes) with volatile loads.
    pub fn count_with_the_host<'a>(counter: GlobalMut<'a, u32>) {
        for _ in 0..ADDS {
            counter.atomic_scoped::<gpu_std::System>(0).fetch_add(1);
            let _ = counter.get_volatile(1);
        }
    }
}

#[test]
fn a_host_thread_and_an_emulated_launch_add_to_one_word_and_lose_nothing() {
    let dev = Device::emulator(Default::default());
    let m = dev.mapped::<u32>("counter", 2).unwrap();
    let host = m.host();
    let launched = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let threads = 256u32;
    let host_adds = std::thread::scope(|s| {
        let h = s.spawn(|| {
            // Adds until the launch is over, at least 100k (most of them while it runs).
            let mut n = 0u32;
            while !launched.load(Ordering::Acquire) {
                std::hint::spin_loop();
            }
            while !done.load(Ordering::Acquire) || n < 100_000 {
                host.fetch_add(0, 1, Ordering::Relaxed);
                host.store(1, n, Ordering::Relaxed);
                n += 1;
            }
            n
        });
        launched.store(true, Ordering::Release);
        dev.launch::<count_with_the_host>(cover(threads as usize, 128, 1024, 0), (m.view_mut(),)).unwrap();
        done.store(true, Ordering::Release);
        h.join().unwrap()
    });
    assert_eq!(host.load(0, Ordering::Relaxed), host_adds + threads * ADDS, "updates were lost");
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
