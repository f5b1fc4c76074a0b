//! A launch that fails (deadlock, livelock, kernel panic) unwinds every thread it leaves unfinished, so
//! their destructors run — and a destructor may call the emulator like any kernel code (a store, a
//! fence, `thread_idx`, a block barrier, an atomic). Each destructor runs as its own thread (it sees
//! its own index), nothing in it waits, the launch returns its error, and the process goes on.

use gpu_std::block::sync_threads;
use gpu_std::emu::{self, EmuError, LaunchConfig, Options, ThreadId};
use gpu_std::fence::threadfence;
use gpu_std::thread::thread_idx;
use gpu_std::{GlobalMut, kernel};

/// What a kernel thread holds: its destructor marks the thread in `marks`, fences, waits at a block
/// barrier (which cannot complete while the launch is being torn down) and gives back its share of
/// `lock`.
struct Held<'a> {
    lock: GlobalMut<'a, u32>,
    marks: GlobalMut<'a, u32>,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let me = thread_idx().x as usize;
        self.marks.set(me, self.marks.get(me) + 1);
        threadfence();
        sync_threads();
        self.lock.atomic(0).fetch_sub(1);
    }
}

kernel! {
    /// The thread that takes the lock waits at a block barrier while it holds it; the others spin on
    /// the lock and never reach the barrier: a livelock.
    pub fn lock_held_across_barrier<'a>(lock: GlobalMut<'a, u32>, marks: GlobalMut<'a, u32>) {
        while lock.atomic(0).compare_and_swap(0, 1) != 0 {}
        let _held = Held { lock, marks };
        sync_threads();
    }
}

kernel! {
    /// Even threads take a share of `lock` and wait at a block barrier that odd threads skip: they read
    /// their mark and exit without reaching it (barrier divergence, which ends the launch).
    pub fn even_threads_wait_holding<'a>(lock: GlobalMut<'a, u32>, marks: GlobalMut<'a, u32>) {
        if thread_idx().x.is_multiple_of(2) {
            lock.atomic(0).fetch_add(1);
            let _held = Held { lock, marks };
            sync_threads();
        } else {
            let _ = marks.get(thread_idx().x as usize);
        }
    }
}

kernel! {
    /// Every thread takes a share of `lock` and passes a barrier; then thread 0 panics while the
    /// others go on to a second barrier.
    pub fn thread_zero_panics_holding<'a>(lock: GlobalMut<'a, u32>, marks: GlobalMut<'a, u32>) {
        lock.atomic(0).fetch_add(1);
        let _held = Held { lock, marks };
        sync_threads();
        if thread_idx().x == 0 {
            panic!("thread 0 gives up");
        }
        sync_threads();
    }
}

const THREADS: u32 = 8;

fn t(thread: u32) -> ThreadId {
    ThreadId { block: (0, 0, 0), thread: (thread, 0, 0) }
}

fn run<K: for<'a> gpu_std::Kernel<Args<'a> = (GlobalMut<'a, u32>, GlobalMut<'a, u32>)>>(
    seed: u64,
) -> (EmuError, Vec<u32>, Vec<u32>) {
    let lock = emu::buffer("lock", vec![0u32]);
    let marks = emu::buffer("marks", vec![0u32; THREADS as usize]);
    let opts = Options { schedule_seed: seed, poll_limit: 20_000, ..Options::default() };
    let e = emu::launch::<K>(&LaunchConfig::linear(1, THREADS, 0), &opts, (lock.view_mut(), marks.view_mut()))
        .expect_err("the launch cannot complete");
    (e, lock.to_vec(), marks.to_vec())
}

#[test]
fn a_livelocked_launch_unwinds_the_lock_holder_as_itself() {
    for seed in 1..=5 {
        let (e, lock, marks) = run::<lock_held_across_barrier>(seed);
        let EmuError::Livelock(l) = &e else { panic!("expected a livelock, got: {e}") };
        // The holder waits at the barrier; its destructor ran as the holder, marked it, and released the
        // lock.
        assert_eq!(l.blocked.len(), 1, "{e}");
        assert_eq!(l.blocked[0].threads.len(), 1, "{e}");
        let holder = l.blocked[0].threads[0].thread.0 as usize;
        let mut want = vec![0u32; THREADS as usize];
        want[holder] = 1;
        assert_eq!(marks, want, "seed {seed}: only the holder's destructor ran, as the holder");
        assert_eq!(lock, [0], "seed {seed}: the destructor released the lock");
    }
}

#[test]
fn a_deadlocked_launch_unwinds_every_waiting_thread_as_itself() {
    for seed in 1..=5 {
        let (e, lock, marks) = run::<even_threads_wait_holding>(seed);
        assert!(matches!(e, EmuError::Deadlock(_)), "expected a deadlock, got: {e}");
        let want: Vec<u32> = (0..THREADS).map(|x| x.is_multiple_of(2) as u32).collect();
        assert_eq!(marks, want, "seed {seed}: each even thread's destructor ran once, as that thread");
        assert_eq!(lock, [0], "seed {seed}: every share was given back");
    }
}

#[test]
fn a_panicking_launch_unwinds_the_panicking_thread_and_every_other_one() {
    for seed in 1..=5 {
        let (e, lock, marks) = run::<thread_zero_panics_holding>(seed);
        let EmuError::KernelPanic { kernel, thread, message } = &e else { panic!("expected a panic, got: {e}") };
        assert_eq!((kernel.as_str(), *thread), ("thread_zero_panics_holding", t(0)));
        assert!(message.starts_with("thread 0 gives up"), "{message}");
        assert_eq!(marks, vec![1; THREADS as usize], "seed {seed}: every destructor ran once, as its own thread");
        assert_eq!(lock, [0], "seed {seed}: every share was given back");
    }
}

#[test]
fn the_next_launch_after_a_torn_down_one_runs_normally() {
    let (e, _, _) = run::<lock_held_across_barrier>(1);
    assert!(matches!(e, EmuError::Livelock(_)), "{e}");
    let lock = emu::buffer("lock", vec![0u32]);
    let marks = emu::buffer("marks", vec![0u32; THREADS as usize]);
    // One thread: it takes the lock, passes the barrier alone, and its destructor releases the lock.
    emu::launch::<lock_held_across_barrier>(
        &LaunchConfig::linear(1, 1, 0),
        &Options::default(),
        (lock.view_mut(), marks.view_mut()),
    )
    .expect("a single thread completes");
    assert_eq!((lock.to_vec(), marks.to_vec()[0]), (vec![0], 1));
}

/// Launches `lock_held_across_barrier` on one thread when dropped, and keeps the result.
struct LaunchOnDrop(std::rc::Rc<std::cell::RefCell<Option<Result<emu::Outcome, EmuError>>>>);

impl Drop for LaunchOnDrop {
    fn drop(&mut self) {
        let lock = emu::buffer("lock", vec![0u32]);
        let marks = emu::buffer("marks", vec![0u32]);
        let r = emu::launch::<lock_held_across_barrier>(
            &LaunchConfig::linear(1, 1, 0),
            &Options::default(),
            (lock.view_mut(), marks.view_mut()),
        );
        *self.0.borrow_mut() = Some(r);
    }
}

#[test]
fn a_launch_while_the_host_thread_panics_is_refused() {
    // Every emulated thread would look like one that unwinds, and nothing in it would wait.
    let result = std::rc::Rc::new(std::cell::RefCell::new(None));
    let guard = LaunchOnDrop(result.clone());
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _guard = guard;
        panic!("the host gives up");
    }));
    assert!(caught.is_err());
    let r = result.borrow_mut().take().expect("the destructor ran");
    assert_eq!(
        r.expect_err("refused"),
        EmuError::InvalidLaunch(
            "kernel `lock_held_across_barrier`: launched while the calling thread panics (from a destructor during \
             unwinding); launch it before or after the panic"
                .into()
        )
    );
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
