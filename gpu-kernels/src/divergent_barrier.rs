//! A barrier that only some threads reach (§5.3, exercise 2).
//!
//! [`divergent_barrier_broken`] puts `__syncthreads()` in the branch of odd threads: the even ones
//! skip it. CUDA C++ calls that undefined; on sm_70+ hardware the block does not hang, the barrier
//! releases without the even threads, so it orders nothing they do (the host runs it on a GPU under a
//! time limit and prints what happened). The emulator reports the waiting and the missing threads. [`divergent_barrier_fixed`] does the per-thread work in
//! the branch and reaches the barrier from every thread exactly once.
//!
//! Decision procedure (§5.7): threads read their neighbour's shared slot, so a barrier is needed — and
//! it must be uniformly reachable.
use gpu_std::block::sync_threads;
use gpu_std::thread::thread_idx;
use gpu_std::{Output, kernel, shared_layout};

pub const BLOCK: u32 = 256;
shared_layout! {
    /// The block's shared memory.
    pub struct Scratch {
        /// One slot per thread.
        pub slots: [u32; BLOCK as usize],
    }
}
pub const SHARED_BYTES: usize = Scratch::BYTES;

kernel! {
    /// BROKEN: odd threads wait at a barrier the even threads skip.
    pub fn divergent_barrier_broken<'a>(out: Output<'a, u32>) {
        let s = Scratch::view().slots;
        let t = thread_idx().x as usize;
        s.set(t, t as u32 * 3);
        if t % 2 == 1 {
            sync_threads();
            if let Some(o) = out.mine() {
                o.set(s.get(t - 1));
            }
        } else if let Some(o) = out.mine() {
            o.set(s.get(t) + 1);
        }
    }
}

kernel! {
    /// Every thread reaches the barrier once: `out[i]` = `3 * (t - 1)` for odd t (its neighbour's slot),
    /// `3t + 1` for even t.
    pub fn divergent_barrier_fixed<'a>(out: Output<'a, u32>) {
        let s = Scratch::view().slots;
        let t = thread_idx().x as usize;
        s.set(t, t as u32 * 3);
        sync_threads();
        let v = if t % 2 == 1 { s.get(t - 1) } else { s.get(t) + 1 };
        if let Some(o) = out.mine() {
            o.set(v);
        }
    }
}
