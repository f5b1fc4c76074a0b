//! Two GPUs in one host, talking through each other's memory with peer access (§5.4–5.5 applied
//! across devices: system scope is the only scope that reaches another GPU).
//!
//! - [`peer_add`]: launched on both GPUs at the same time, every thread adds to counters that live in
//!   GPU 0's memory with system-scope atomics (`atom.add.sys`, `red.add.sys`), and keeps the old value
//!   its add returned: the totals are exact and the old values form a serial order of all adds of
//!   both GPUs.
//! - [`handshake_send`] (GPU 0) and [`handshake_recv`] (GPU 1): GPU 0 writes a payload into its own
//!   memory, `__threadfence_system()`, and raises a flag in GPU 1's memory; GPU 1 polls the flag with a
//!   system-scope acquire load (`ld.acquire.sys`), checks every payload word through peer access, and
//!   answers into GPU 0's memory with `st.release.sys`. Both waits are bounded.
//! - [`ping`] (GPU 0) and [`pong`] (GPU 1): one thread on each bounces a counter through two flags,
//!   one in each GPU's memory, for the round-trip latency between the GPUs.
//!
//! The racy variant for the emulator's detector: [`handshake_send`] with `how` = [`DEVICE_FENCE`] publishes
//! with `__threadfence()` (`fence.sc.gpu`), which orders memory for GPU 0's threads only: GPU 1's read
//! of the payload is a race.
//!
//! Decision procedure (§5.7): writers and readers are on different devices, so nothing but
//! system-scope release/acquire orders the payload; the flags are strong accesses on both sides
//! (volatile or atomic); the counters' adds are atomic with each other only at system scope (and on
//! hardware only where the driver reports native peer atomics); every spin is bounded by `max_polls`
//! and reports [`TIMED_OUT`] instead of hanging.
use crate::system_scope::{SYSTEM_RELEASE_ACQUIRE, publish_and_wait, raise_flag, wait_flag};
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::{Device, Global, GlobalMut, System, kernel};

pub use crate::system_scope::{DEVICE_FENCE, RECEIVED, SYSTEM_FENCE, TIMED_OUT, payload_value};

/// Threads per block of every kernel here but [`ping`] / [`pong`] (one thread each).
pub const BLOCK: u32 = 256;

/// What element `i` of device `device` adds to `counters[0]` in [`peer_add`]: 1..=8 on GPU 0, 9..=16
/// on GPU 1 (nonzero, so that the old values of all adds are distinct).
#[inline]
pub fn add_value(device: u32, i: usize) -> u32 {
    1 + ((i as u32).wrapping_mul(2_654_435_761) >> 29) + 8 * (device & 1)
}

kernel! {
    /// Grid-stride over `olds`: element `i` adds [`add_value`]`(device, i)` to `counters[0]` with
    /// `atom.add.sys` and stores the old value it got in `olds[i]`, and adds 1 to `counters[1]` with
    /// `red.add.sys`. `counters` may be another GPU's memory (peer access).
    pub fn peer_add<'a>(counters: GlobalMut<'a, u32>, olds: GlobalMut<'a, u32>, device: u32) {
        let stride = (grid_dim().x * block_dim().x) as usize;
        let mut i = (block_idx().x * block_dim().x + thread_idx().x) as usize;
        while i < olds.len() {
            let old = counters.atomic_scoped::<System>(0).fetch_add(add_value(device, i));
            olds.set(i, old);
            counters.atomic_scoped::<System>(1).add(1);
            i += stride;
        }
    }
}

kernel! {
    /// GPU 0, one block. Every thread writes `payload[i] = payload_value(i, round)` (GPU 0's memory);
    /// after a block barrier thread 0 raises `flag[0] = round` (GPU 1's memory), releasing with
    /// `__threadfence_system()` (`how` = [`SYSTEM_FENCE`]) or, the racy variant, `__threadfence()`
    /// ([`DEVICE_FENCE`]), then waits (bounded, `ld.acquire.sys`) for GPU 1's `ack[0] == round` (GPU 0's
    /// memory). `status[0]` = [`RECEIVED`] or [`TIMED_OUT`].
    pub fn handshake_send<'a>(payload: GlobalMut<'a, u32>, flag: GlobalMut<'a, u32>, ack: GlobalMut<'a, u32>, status: GlobalMut<'a, u32>, round: u32, how: u32, max_polls: u32) {
        publish_and_wait(&payload, &flag, &ack, &status, round, how, max_polls);
    }
}

kernel! {
    /// GPU 1, one block. Thread 0 waits (bounded, `ld.acquire.sys`) for `flag[0] == round` (GPU 1's
    /// memory); after a block barrier every thread checks its words of `payload` (GPU 0's memory,
    /// through peer access) and counts the wrong ones into `status[1]`; after another barrier thread 0
    /// answers `ack[0] = round` (GPU 0's memory) with `st.release.sys`. `status[0]` = [`RECEIVED`] or
    /// [`TIMED_OUT`] (then nothing is checked and nothing answered).
    pub fn handshake_recv<'a>(payload: Global<'a, u32>, flag: GlobalMut<'a, u32>, ack: GlobalMut<'a, u32>, status: GlobalMut<'a, u32>, round: u32, max_polls: u32) {
        let t = thread_idx().x as usize;
        if t == 0 {
            let ok = wait_flag(&flag, round, max_polls, SYSTEM_RELEASE_ACQUIRE);
            status.set(0, if ok { RECEIVED } else { TIMED_OUT });
        }
        sync_threads();
        if status.get(0) == RECEIVED {
            let step = block_dim().x as usize;
            let mut wrong = 0;
            let mut i = t;
            while i < payload.len() {
                if payload.get(i) != payload_value(i, round) {
                    wrong += 1;
                }
                i += step;
            }
            if wrong > 0 {
                status.atomic_scoped::<Device>(1).add(wrong);
            }
            sync_threads();
            if t == 0 {
                raise_flag(&ack, round, SYSTEM_RELEASE_ACQUIRE);
            }
        }
    }
}

kernel! {
    /// GPU 0, one thread. For `r` in `1..=rounds`: raise `to_peer[0] = r` (GPU 1's memory) with
    /// `__threadfence_system()` + a volatile store, then wait (bounded, volatile polls +
    /// `__threadfence_system()`) for `back[0] == r` (GPU 0's memory). `status[0]` = rounds completed;
    /// `status[1]` = [`RECEIVED`], or [`TIMED_OUT`] if a wait gave up.
    pub fn ping<'a>(to_peer: GlobalMut<'a, u32>, back: GlobalMut<'a, u32>, status: GlobalMut<'a, u32>, rounds: u32, max_polls: u32) {
        let mut done = 0;
        let mut ok = true;
        while done < rounds {
            let r = done + 1;
            raise_flag(&to_peer, r, SYSTEM_FENCE);
            if !wait_flag(&back, r, max_polls, SYSTEM_FENCE) {
                ok = false;
                break;
            }
            done = r;
        }
        status.set(0, done);
        status.set(1, if ok { RECEIVED } else { TIMED_OUT });
    }
}

kernel! {
    /// GPU 1, one thread. For `r` in `1..=rounds`: wait (bounded, volatile polls +
    /// `__threadfence_system()`) for `flag[0] == r` (GPU 1's memory), then answer `back[0] = r` (GPU 0's
    /// memory) with a volatile store (the fence after the poll also releases the answer). `status` as
    /// in [`ping`].
    pub fn pong<'a>(flag: GlobalMut<'a, u32>, back: GlobalMut<'a, u32>, status: GlobalMut<'a, u32>, rounds: u32, max_polls: u32) {
        let mut done = 0;
        let mut ok = true;
        while done < rounds {
            let r = done + 1;
            if !wait_flag(&flag, r, max_polls, SYSTEM_FENCE) {
                ok = false;
                break;
            }
            back.set_volatile(0, r);
            done = r;
        }
        status.set(0, done);
        status.set(1, if ok { RECEIVED } else { TIMED_OUT });
    }
}
