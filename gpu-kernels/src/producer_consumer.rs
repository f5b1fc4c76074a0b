//! A producer and a consumer in different blocks of one launch, meeting through a flag (§5.4).
//!
//! Block 0 fills `buffer`; a block barrier makes every thread's writes happen before thread 0 goes
//! on; thread 0 executes `__threadfence()` (the release: everything ordered before it becomes visible
//! device-wide before what follows) and sets the flag with a volatile store. (The seed fences in every
//! thread but lets thread 0 raise the flag without waiting for the others, so thread 0 can set it
//! before thread 5 has written `g_buffer[5]`; each thread's fence orders only its own writes.) Block 1's thread 0 polls the flag with volatile loads
//! (bounded: a flag that never comes is reported in `status`, not waited for forever), executes
//! `__threadfence()` (the acquire half of the pattern in the PTX memory model), and the block copies the
//! buffer. Both blocks must be resident at once; two always are.
//! [`producer_consumer_no_fence`] drops the producer's fence — the race the chapter warns about.
//! [`wait_for_flag`] polls a flag no one sets: on the emulator, a spin without progress is reported.
//!
//! Decision procedure (§5.7): across blocks there is no barrier: a fence + flag (release/acquire)
//! orders the buffer writes before the consumer's reads; never spin on a non-volatile flag.
use gpu_std::block::sync_threads;
use gpu_std::fence::{nanosleep, threadfence};
use gpu_std::spin::SPIN_LIMIT;
use gpu_std::thread::{block_dim, block_idx, thread_idx};
use gpu_std::{GlobalMut, kernel};

pub const BLOCK: u32 = 256;
/// `status[0]` values.
pub const RECEIVED: u32 = 1;
pub const TIMED_OUT: u32 = 2;

fn run(buffer: GlobalMut<f32>, flag: GlobalMut<u32>, copy: GlobalMut<f32>, status: GlobalMut<u32>, fence: bool) {
    let t = thread_idx().x as usize;
    let step = block_dim().x as usize;
    let n = buffer.len();
    if block_idx().x == 0 {
        let mut i = t;
        while i < n {
            buffer.set(i, i as f32);
            i += step;
        }
        sync_threads();
        if t == 0 {
            if fence {
                threadfence();
            }
            flag.set_volatile(0, 1);
        }
    } else {
        if t == 0 {
            let mut spins = 0u32;
            while flag.get_volatile(0) == 0 && spins < SPIN_LIMIT {
                spins += 1;
                nanosleep(32);
            }
            threadfence();
            status.set(0, if spins < SPIN_LIMIT { RECEIVED } else { TIMED_OUT });
        }
        sync_threads();
        let mut i = t;
        while i < n {
            copy.set(i, buffer.get(i));
            i += step;
        }
    }
}

kernel! {
    /// Launch 2 blocks: block 0 produces `buffer[i] = i`, block 1 copies it into `copy` once flagged.
    pub fn producer_consumer<'a>(buffer: GlobalMut<'a, f32>, flag: GlobalMut<'a, u32>, copy: GlobalMut<'a, f32>, status: GlobalMut<'a, u32>) {
        run(buffer, flag, copy, status, true)
    }
}

kernel! {
    /// RACY: the producer's thread 0 sets the flag without `__threadfence()` first.
    pub fn producer_consumer_no_fence<'a>(buffer: GlobalMut<'a, f32>, flag: GlobalMut<'a, u32>, copy: GlobalMut<'a, f32>, status: GlobalMut<'a, u32>) {
        run(buffer, flag, copy, status, false)
    }
}

kernel! {
    /// Thread 0 waits (bounded) for a flag that nothing sets; `status[0]` = `TIMED_OUT` after
    /// `SPIN_LIMIT` polls on a GPU. The emulator reports the spin long before.
    pub fn wait_for_flag<'a>(flag: GlobalMut<'a, u32>, status: GlobalMut<'a, u32>) {
        if thread_idx().x == 0 {
            let mut spins = 0u32;
            while flag.get_volatile(0) == 0 && spins < SPIN_LIMIT {
                spins += 1;
                nanosleep(32);
            }
            status.set(0, if spins < SPIN_LIMIT { RECEIVED } else { TIMED_OUT });
        }
    }
}
