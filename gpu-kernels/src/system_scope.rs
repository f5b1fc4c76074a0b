//! A kernel and a running host thread talking through mapped, page-locked host memory (§5.4:
//! `__threadfence_system()` orders memory "for host and device").
//!
//! - [`gpu_to_host`]: the block writes a payload into host memory; after a block barrier, thread 0
//!   releases at system scope (`__threadfence_system()`, then a volatile flag store) while the host
//!   waits for the flag with `Acquire` loads and then checks the payload. The kernel then waits
//!   (bounded) for the host's acknowledgement, so the host provably read it while the kernel ran.
//! - [`host_to_gpu`]: the host writes a payload and raises a flag with a `Release` store; thread 0
//!   polls it with a system-scope acquire load (`ld.acquire.sys`), or volatile loads followed by
//!   `__threadfence_system()`; after a block barrier every thread copies the payload out.
//! - [`ping_pong`]: one GPU thread and one host thread bounce a counter through two flags, one volatile
//!   flag each way and one `__threadfence_system()` per round trip, for the round-trip latency; [`bump`] is the naive
//!   alternative (one launch, synchronise and copy per round trip).
//! - [`sys_atomics`]: system-scope atomic adds on one word, with the host adding to the same word —
//!   atomic only where the device reports host-native atomics.
//!
//! Every wait is bounded by `max_polls`: a kernel whose host never answers writes [`TIMED_OUT`] into its
//! status word and exits, instead of hanging the GPU.
//!
//! Twins for the emulator's detector: `how` = [`DEVICE_FENCE`] publishes with `__threadfence()` and
//! [`GPU_RELEASE`] with `st.release.gpu` (device scope: the host is outside it), [`GPU_ACQUIRE`]
//! acquires with `ld.acquire.gpu`.
//!
//! Decision procedure (§5.7): the host is neither in a block nor in the device, so nothing but
//! system-scope release/acquire orders the payload against it; the flag is a strong access on both sides
//! (volatile or atomic on the GPU, an atomic on the host); every spin is bounded.
use gpu_std::block::sync_threads;
use gpu_std::fence::{threadfence, threadfence_system};
use gpu_std::thread::{block_dim, thread_idx};
use gpu_std::{Global, GlobalMut, System, kernel};

/// Threads per block of [`gpu_to_host`], [`host_to_gpu`] and [`sys_atomics`].
pub const BLOCK: u32 = 256;

/// `how`: release with `__threadfence_system()` + volatile flag store; acquire with volatile polls +
/// `__threadfence_system()`.
pub const SYSTEM_FENCE: u32 = 0;
/// `how`: release with `store_release` at system scope (`st.release.sys`); acquire with `load_acquire`
/// at system scope (`ld.acquire.sys`).
pub const SYSTEM_RELEASE_ACQUIRE: u32 = 1;
/// `how` (racy variant): `__threadfence()` (`fence.sc.gpu`) + volatile flag, either way.
pub const DEVICE_FENCE: u32 = 2;
/// `how` (racy variant): `store_release` at device scope (`st.release.gpu`).
pub const GPU_RELEASE: u32 = 3;
/// `how` (racy variant): `load_acquire` at device scope (`ld.acquire.gpu`).
pub const GPU_ACQUIRE: u32 = 4;

/// `status[0]`: the awaited flag came.
pub const RECEIVED: u32 = 1;
/// `status[0]`: the wait gave up after `max_polls` polls.
pub const TIMED_OUT: u32 = 2;

/// The payload word `i` of round `round`: distinct per element and per run.
#[inline]
pub fn payload_value(i: usize, round: u32) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) ^ round.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995
}

/// Polls `flag[0]` until it equals `want` (at most `max_polls` polls), acquiring as `how` says.
/// Returns whether it came.
#[inline(always)]
pub(crate) fn wait_flag(flag: &GlobalMut<u32>, want: u32, max_polls: u32, how: u32) -> bool {
    let mut polls = 0u32;
    loop {
        let v = match how {
            SYSTEM_RELEASE_ACQUIRE => flag.atomic_scoped::<System>(0).load_acquire(),
            GPU_ACQUIRE => flag.atomic(0).load_acquire(),
            _ => flag.get_volatile(0),
        };
        if v == want {
            break;
        }
        polls += 1;
        if polls >= max_polls {
            return false;
        }
    }
    match how {
        SYSTEM_FENCE => threadfence_system(),
        DEVICE_FENCE => threadfence(),
        _ => {}
    }
    true
}

/// Sets `flag[0] = v`, releasing what the thread knows as `how` says.
#[inline(always)]
pub(crate) fn raise_flag(flag: &GlobalMut<u32>, v: u32, how: u32) {
    match how {
        SYSTEM_RELEASE_ACQUIRE => flag.atomic_scoped::<System>(0).store_release(v),
        GPU_RELEASE => flag.atomic(0).store_release(v),
        DEVICE_FENCE => {
            threadfence();
            flag.set_volatile(0, v);
        }
        _ => {
            threadfence_system();
            flag.set_volatile(0, v);
        }
    }
}

/// The publishing side of a handshake, for one block: every thread writes its words of
/// `payload[i] = payload_value(i, round)`; after a block barrier thread 0 raises `flag[0] = round`,
/// releasing as `how` says, and waits (bounded, `ld.acquire.sys`) for `ack[0] == round`:
/// `status[0]` = [`RECEIVED`] or [`TIMED_OUT`]. Shared by [`gpu_to_host`] and the two-GPU handshake.
#[allow(clippy::too_many_arguments)]
pub(crate) fn publish_and_wait(
    payload: &GlobalMut<'_, u32>,
    flag: &GlobalMut<'_, u32>,
    ack: &GlobalMut<'_, u32>,
    status: &GlobalMut<'_, u32>,
    round: u32,
    how: u32,
    max_polls: u32,
) {
    let t = thread_idx().x as usize;
    let step = block_dim().x as usize;
    let mut i = t;
    while i < payload.len() {
        payload.set(i, payload_value(i, round));
        i += step;
    }
    sync_threads();
    if t == 0 {
        raise_flag(flag, round, how);
        let acked = wait_flag(ack, round, max_polls, SYSTEM_RELEASE_ACQUIRE);
        status.set(0, if acked { RECEIVED } else { TIMED_OUT });
    }
}

kernel! {
    /// Launch 1 block. Writes `payload[i] = payload_value(i, round)` (host memory), then thread 0
    /// raises `flag[0] = round` releasing as `how` says, and waits (bounded, system-scope acquire) for
    /// the host to set `ack[0] = round`: `status[0]` = [`RECEIVED`] or [`TIMED_OUT`].
    pub fn gpu_to_host<'a>(payload: GlobalMut<'a, u32>, flag: GlobalMut<'a, u32>, ack: GlobalMut<'a, u32>, status: GlobalMut<'a, u32>, round: u32, how: u32, max_polls: u32) {
        publish_and_wait(&payload, &flag, &ack, &status, round, how, max_polls);
    }
}

kernel! {
    /// Launch 1 block. Thread 0 waits (bounded) for the host to set `flag[0] = round`, acquiring as
    /// `how` says; after a block barrier every thread copies `payload` (host memory) into `copy`
    /// (device memory). `status[0]` = [`RECEIVED`] or [`TIMED_OUT`] (then `copy` is left as it was).
    pub fn host_to_gpu<'a>(payload: Global<'a, u32>, flag: GlobalMut<'a, u32>, copy: GlobalMut<'a, u32>, status: GlobalMut<'a, u32>, round: u32, how: u32, max_polls: u32) {
        let t = thread_idx().x as usize;
        if t == 0 {
            let ok = wait_flag(&flag, round, max_polls, how);
            status.set(0, if ok { RECEIVED } else { TIMED_OUT });
        }
        sync_threads();
        if status.get(0) == RECEIVED {
            let step = block_dim().x as usize;
            let mut i = t;
            while i < payload.len() {
                copy.set(i, payload.get(i));
                i += step;
            }
        }
    }
}

kernel! {
    /// Launch 1 thread. For `r` in `1..=rounds`: wait (bounded) for `to_gpu[0] == r` with volatile
    /// polls, `__threadfence_system()`, then `to_host[0] = r` (volatile). The one fence between the
    /// poll and the answer is both the acquire of the host's round and the release of the answer.
    /// `status[0]` = rounds completed; `status[1]` = [`TIMED_OUT`] if a wait gave up, else [`RECEIVED`].
    pub fn ping_pong<'a>(to_gpu: GlobalMut<'a, u32>, to_host: GlobalMut<'a, u32>, status: GlobalMut<'a, u32>, rounds: u32, max_polls: u32) {
        let mut done = 0;
        let mut ok = true;
        while done < rounds {
            let r = done + 1;
            // Volatile polls, then `__threadfence_system()`.
            if !wait_flag(&to_gpu, r, max_polls, SYSTEM_FENCE) {
                ok = false;
                break;
            }
            to_host.set_volatile(0, r);
            done = r;
        }
        status.set(0, done);
        status.set(1, if ok { RECEIVED } else { TIMED_OUT });
    }
}

kernel! {
    /// Launch 1 thread: `x[0] += 1`. One round trip of the naive alternative to [`ping_pong`] is a launch
    /// of this, a synchronise, and a copy of `x` back.
    pub fn bump<'a>(x: GlobalMut<'a, u32>) {
        x.set(0, x.get(0) + 1);
    }
}

kernel! {
    /// Every thread adds 1 to `counter[0]` `per_thread` times with system-scope atomics
    /// (`atom.add.sys`), while the host may add to the same word.
    pub fn sys_atomics<'a>(counter: GlobalMut<'a, u32>, per_thread: u32) {
        for _ in 0..per_thread {
            counter.atomic_scoped::<System>(0).add(1);
        }
    }
}
