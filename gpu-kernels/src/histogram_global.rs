//! The global-memory histogram of §5.5.1: one `atomicAdd` on a global bin per input byte.
//!
//! `hist[data[i]] += 1` is a load, an add and a store; done by many threads on one bin, increments
//! would be lost (`lost_update` shows it). `atomicAdd` makes each increment one indivisible
//! read-modify-write, so every bin ends exact — at the price of contention: all threads of the grid
//! meet on 256 addresses (`histogram_privatised` is the fix the chapter points to).
//!
//! Decision procedure (§5.7):
//! 1. Who writes? Many threads write each bin: atomics.
//! 2. Who reads after whom? No thread reads a bin during the launch: no barrier.
//! 3. Across blocks? All blocks update the same bins with device-scope atomics.
//! 4. Deterministic? Yes: integer adds commute, so the bins do not depend on the order.
use gpu_std::{Global, GlobalMut, kernel, thread};

/// Threads per block.
pub const BLOCK: u32 = 256;
/// Bins: one per byte value.
pub const NUM_BINS: usize = 256;

kernel! {
    /// The chapter's §5.5.1 kernel: `atomicAdd(&hist[data[i]], 1)` for every `i < n`.
    pub fn histogram_global<'a>(data: Global<'a, u8>, hist: GlobalMut<'a, u32>) {
        let i = thread::global_index_x();
        if i < data.len() {
            hist.atomic(data.get(i) as usize).fetch_add(1);
        }
    }
}
