//! Lost updates (§5.1, §5.5.1): a histogram whose bins are incremented with a plain read-modify-write.
//!
//! `bin = bin + 1` is a load, an add and a store. Two threads that load the same old value both store
//! old + 1, and one count is lost — silently: the kernel reports success. [`histogram_racy`] shows it;
//! [`histogram_global`], the chapter's §5.5.1 kernel (in `histogram_global`, re-exported here), makes
//! each increment one atomic operation.
//!
//! Decision procedure (§5.7): many threads write each bin → atomics (or privatisation, see
//! `histogram_privatised`).
pub use crate::histogram_global::histogram_global;
use gpu_std::{Global, GlobalMut, kernel, thread};

/// Threads per block.
pub const BLOCK: u32 = 256;

kernel! {
    /// RACY: `hist[data[i]] += 1` with a plain load and store.
    pub fn histogram_racy<'a>(data: Global<'a, u8>, hist: GlobalMut<'a, u32>) {
        let i = thread::global_index_x();
        if i < data.len() {
            let bin = data.get(i) as usize;
            let old = hist.get(bin);
            hist.set(bin, old + 1);
        }
    }
}
