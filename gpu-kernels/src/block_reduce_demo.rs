//! One shared slot per thread, a barrier, thread 0 sums the block (§5.3 `blockReduceDemo`).
//!
//! Without the barrier, thread 0 may read `s_partial[k]` before thread k wrote it: the read returns
//! whatever was there. [`block_reduce_demo_no_barrier`] is that bug, kept for the race detector.
//!
//! Decision procedure (§5.7): each thread writes its own slot (no atomics needed); thread 0 reads the
//! others' slots, so a block barrier separates the writes from the read; blocks write distinct
//! outputs; the order of the sum is fixed.
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, global_index_x, thread_idx};
use gpu_std::{Global, Output, PerBlock, kernel, shared_layout};

/// Threads per block: one shared slot each (`s_partial[256]`).
pub const BLOCK: u32 = 256;
shared_layout! {
    /// The block's shared memory.
    pub struct Scratch {
        /// `s_partial`: one slot per thread.
        pub partial: [f32; BLOCK as usize],
    }
}
pub const SHARED_BYTES: usize = Scratch::BYTES;

fn body(input: Global<f32>, out: Output<f32, PerBlock>, barrier: bool) {
    let s = Scratch::view().partial;
    let i = global_index_x();
    let t = thread_idx().x as usize;
    s.set(t, if i < input.len() { input.get(i) } else { 0.0 });
    if barrier {
        sync_threads();
    }
    // Thread 0 owns the block's element of `out`.
    if let Some(o) = out.mine() {
        let mut sum = 0.0f32;
        for k in 0..block_dim().x as usize {
            sum += s.get(k);
        }
        o.set(sum);
    }
}

kernel! {
    /// `out[b]` = sum of block b's inputs (0 past `n`). Launch `BLOCK` threads, `SHARED_BYTES`.
    pub fn block_reduce_demo<'a>(input: Global<'a, f32>, out: Output<'a, f32, PerBlock>) {
        body(input, out, true)
    }
}

kernel! {
    /// RACY: the same without `__syncthreads()`.
    pub fn block_reduce_demo_no_barrier<'a>(input: Global<'a, f32>, out: Output<'a, f32, PerBlock>) {
        body(input, out, false)
    }
}
