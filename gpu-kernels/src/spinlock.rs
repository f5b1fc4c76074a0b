//! Spinlocks built from `atomicCAS` (§5.5.2 `lockedCriticalSection`).
//!
//! [`locked_critical_section`]: a lock in shared memory per block, taken with a CAS loop; the critical
//! section updates `g_data[i] = g_data[i] * 2 + 1`; a `__threadfence_block()` orders the section's
//! writes before the release. The seed releases with a plain `s_lock = 0`, which races with other
//! threads' CAS on the lock (a plain store concurrent with atomics is a data race in the PTX memory
//! model); this version releases with an atomic exchange.
//!
//! [`global_lock_counter`]: one lock in global memory across all blocks protecting a counter that is
//! updated with *plain* loads and stores: acquire = CAS loop then `__threadfence()`, release =
//! `__threadfence()` then atomic exchange. The counter must end exactly at the number of threads.
//!
//! Both spin loops are bounded: a thread that cannot take the lock within [`SPIN_LIMIT`] attempts
//! counts itself in `errors` instead of hanging the GPU.
//!
//! Decision procedure (§5.7): the lock serialises the writers; fences make each holder's writes visible
//! to the next. Locks serialise a machine built for parallelism — privatise or use atomics instead.
use gpu_std::block::sync_threads;
use gpu_std::fence::{threadfence, threadfence_block};
use gpu_std::spin::SPIN_LIMIT;
use gpu_std::thread::{grid_stride, thread_idx};
use gpu_std::{GlobalMut, kernel, shared_layout};

pub const BLOCK: u32 = 128;
pub const MAX_GRID: u32 = 64;
shared_layout! {
    /// The block's shared memory.
    pub struct Scratch {
        /// The block's lock word: 0 free, 1 held.
        pub lock: [u32; 1],
    }
}
pub const SHARED_BYTES: usize = Scratch::BYTES;

kernel! {
    /// `g_data[i] = g_data[i] * 2 + 1` for every i, each under the block's shared-memory lock.
    /// `errors[0]` counts lock attempts that gave up.
    pub fn locked_critical_section<'a>(g_data: GlobalMut<'a, f32>, errors: GlobalMut<'a, u32>) {
        let lock = Scratch::view().lock;
        if thread_idx().x == 0 {
            lock.set(0, 0);
        }
        sync_threads();
        for i in grid_stride(g_data.len()) {
            let mut spins = 0;
            while lock.atomic(0).compare_and_swap(0, 1) != 0 {
                spins += 1;
                if spins == SPIN_LIMIT {
                    break;
                }
            }
            if spins == SPIN_LIMIT {
                errors.atomic(0).fetch_add(1);
                continue;
            }
            threadfence_block();
            g_data.set(i, g_data.get(i) * 2.0 + 1.0);
            threadfence_block();
            lock.atomic(0).swap(0);
        }
    }
}

kernel! {
    /// `counter[0] += 1` by every thread of the grid with a plain load and store, under a global lock
    /// (`lock[0]`). `errors[0]` counts threads that gave up on the lock.
    pub fn global_lock_counter<'a>(lock: GlobalMut<'a, u32>, counter: GlobalMut<'a, u32>, errors: GlobalMut<'a, u32>) {
        let mut spins = 0;
        loop {
            if lock.atomic(0).compare_and_swap(0, 1) == 0 {
                threadfence(); // acquire: the previous holder's writes are visible from here on
                counter.set(0, counter.get(0) + 1);
                threadfence(); // release: the counter write is visible before the lock is free
                lock.atomic(0).swap(0);
                break;
            }
            spins += 1;
            if spins == SPIN_LIMIT {
                errors.atomic(0).fetch_add(1);
                break;
            }
            gpu_std::fence::nanosleep(16);
        }
    }
}
