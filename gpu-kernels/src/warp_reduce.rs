//! Warp reduction by shuffle (the chapter's `warpReduce` / `warpReduceSum`).
//!
//! Each warp sums its 32 inputs with `shfl.sync.down` (offsets 16, 8, 4, 2, 1) and lane 0 writes the
//! warp's sum. No barrier is needed: the exchange happens in registers, within the warp.
//!
//! Decision procedure (§5.7): each output is written by one lane (lane 0 of its warp); no thread reads
//! another's write through memory; nothing crosses blocks; the order of additions is fixed, so the
//! result is deterministic. Inputs past `n` count as 0 so every lane of the warp takes part in the
//! full-mask shuffle.
use gpu_std::warp::{self, WARP_SIZE};
use gpu_std::{Global, GlobalMut, Output, PerWarp, kernel, thread};

/// Threads per block.
pub const BLOCK: u32 = 256;

kernel! {
    /// `output[w] = sum(input[32w .. 32w+32])` for every warp `w` of the grid (missing inputs are 0).
    pub fn warp_reduce<'a>(input: Global<'a, f32>, output: Output<'a, f32, PerWarp>) {
        let i = thread::global_index_x();
        let v = if i < input.len() { input.get(i) } else { 0.0 };
        let sum = warp::reduce_sum_f32(v);
        // Lane 0 of each warp owns the warp's element.
        if let Some(o) = output.mine() {
            o.set(sum);
        }
    }
}

kernel! {
    /// A common bug, kept to show what the emulator reports: threads past `n` return before the
    /// full-mask shuffle, so lanes read values from exited lanes. On a GPU the shuffle does not wait
    /// for exited lanes, and the values read from them are unspecified: wrong sums, silently. The
    /// emulator gives them `POISON` and warns, naming the lane read and the call site.
    /// Never launched on a GPU.
    pub fn warp_reduce_early_exit<'a>(input: Global<'a, f32>, output: GlobalMut<'a, f32>) {
        let i = thread::global_index_x();
        if i >= input.len() {
            return;
        }
        let sum = warp::reduce_sum_f32(input.get(i));
        if warp::lane_id() == 0 {
            output.set(i / WARP_SIZE as usize, sum);
        }
    }
}
