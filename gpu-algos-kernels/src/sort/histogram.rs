//! The sort's first pass: one read of the keys that counts the digits of every later pass at once.
//!
//! Each block keeps, per pass, [`COLUMNS`] columns of 256 counters in shared memory
//! (`counts[(pass * 256 + digit) * COLUMNS + lane % COLUMNS]`): lanes that share a digit then meet at
//! one address at most `32 / COLUMNS` at a time, so an input of one repeated key is counted at a
//! quarter of the contention of one shared set (shared-memory atomic adds on one address are
//! serialised). Keys are read as 16-byte vectors through the read-only data cache in a grid-stride
//! loop, [`LOADS`] per thread in flight; a key's bits are shifted down to the range once, and each
//! pass's digit is then a shift by a constant and a mask. At the end each block adds its columns and adds the totals to the global counts
//! (`red.global.add.u32`), one per non-empty digit and block.
//!
//! Decision procedure (§5.7): many threads update one counter, so every update is atomic; the shared
//! counters are zeroed, filled and read by different threads, so barriers separate the three phases;
//! blocks meet only through global atomics, which the next launch reads (a launch boundary orders them).
use gpu_std::block::sync_threads;
use gpu_std::thread::{block_dim, global_index_x, grid_stride_x, thread_idx};
use gpu_std::warp;
use gpu_std::{Global, GlobalMut, SharedSlice, kernel, shared_layout};

use crate::histogram::ends::count_ends;

use super::key::SortKey;
use super::{Digits, MAX_PASSES, RADIX, RADIX_BITS};

/// Threads per block.
pub const BLOCK: u32 = 512;
/// Counter columns per pass and digit: lanes `l`, `l + COLUMNS`, … share one.
pub const COLUMNS: usize = 4;
/// Blocks per SM the launcher asks for.
pub const BLOCKS_PER_SM: u32 = 2;
/// Vectors of 16 bytes each thread loads at once (one bounds check for them), so that several are in
/// flight while the last ones are counted.
pub const LOADS: usize = 4;
/// Fewest keys per block the launcher aims for (each block zeroes and merges its counters).
pub const MIN_BLOCK_KEYS: usize = 16 * 1024;

shared_layout! {
    /// The block's counters: `counts[(pass * RADIX + digit) * COLUMNS + column]`.
    pub struct HistShared { pub counts: [u32; MAX_PASSES * RADIX * COLUMNS] }
}
/// Dynamic shared memory per block.
pub const SHARED_BYTES: usize = HistShared::BYTES;

/// The grid for `n` keys: one block per [`MIN_BLOCK_KEYS`], at least 1, at most `BLOCKS_PER_SM` per SM
/// (and `resident`).
pub fn grid(n: usize, sms: u32, resident: u32) -> u32 {
    let full = (sms * BLOCKS_PER_SM).min(resident).max(1);
    n.div_ceil(MIN_BLOCK_KEYS).clamp(1, full as usize) as u32
}

/// `counts[pass * 256 + d] += ` the keys of `keys` whose digit of `pass` is `d`, for every pass of
/// `digits`.
#[inline(always)]
pub(crate) fn count_digits<K: SortKey>(keys: Global<K>, counts: GlobalMut<u32>, digits: Digits) {
    let sh = HistShared::view().counts;
    let (t, threads) = (thread_idx().x as usize, block_dim().x as usize);
    let passes = digits.passes() as usize;
    let used = passes * RADIX * COLUMNS;
    let mut k = t;
    while k < used {
        sh.set(k, 0);
        k += threads;
    }
    sync_threads();
    // The common case, every pass of the key's width, with the pass count a constant.
    if passes == K::BITS as usize / RADIX_BITS as usize {
        count_keys::<K, true>(keys, digits, sh);
    } else {
        count_keys::<K, false>(keys, digits, sh);
    }
    sync_threads();
    let mut k = t;
    while k < passes * RADIX {
        let mut c = 0;
        for col in 0..COLUMNS {
            c += sh.get(k * COLUMNS + col);
        }
        if c > 0 {
            counts.atomic(k).add(c);
        }
        k += threads;
    }
}

/// Every key's digits of every pass counted into the block's columns `sh`; `ALL`: the bit range has
/// as many passes as the key has bytes.
#[inline(always)]
fn count_keys<K: SortKey, const ALL: bool>(keys: Global<K>, digits: Digits, sh: SharedSlice<u32>) {
    let passes = if ALL { K::BITS as usize / RADIX_BITS as usize } else { digits.passes() as usize };
    let column = warp::lane_id() as usize % COLUMNS;
    // A key's bits are shifted down to the range's first once; each pass's digit is then a shift by a
    // constant and a mask (every pass's is 255 but the last's): a count is a shift, a mask, an address
    // and the atomic add.
    let last_mask = digits.pass(passes as u32 - 1).1 & (RADIX as u32 - 1);
    let count = |key: K| {
        let bits = key.bits_from(digits.begin, digits.descending);
        // A constant trip count: the loop is unrolled.
        for p in 0..K::BITS as usize / RADIX_BITS as usize {
            if p < passes {
                let mask = if p + 1 == passes { last_mask } else { RADIX as u32 - 1 };
                let d = ((bits >> (RADIX_BITS as usize * p)) as u32 & mask) as usize;
                sh.atomic((p * RADIX + d) * COLUMNS + column).add(1);
            }
        }
    };
    let split = keys.split_vectors();
    let (nv, stride) = (split.body.len(), grid_stride_x());
    let mut i = global_index_x();
    while i + (LOADS - 1) * stride < nv {
        let v: [K::Vector; LOADS] = split.body.get_strided_nc(i, stride);
        unrolled!(LOADS, l => v[l].as_ref().iter().for_each(|&key| count(key)));
        i += LOADS * stride;
    }
    while i < nv {
        split.body.get_nc(i).as_ref().iter().for_each(|&key| count(key));
        i += stride;
    }
    count_ends(&split, count);
}

/// The histogram kernel of one key type.
macro_rules! histogram_kernels {
    ($($t:ty: $name:ident;)*) => {$(
        kernel! {
            #[doc = concat!("`counts[p * 256 + d] +=` the `", stringify!($t), "` keys whose digit of pass `p` is `d` \
              (`digits`: [`Digits::to_arg`]), for every pass; `counts` holds \
              `passes * 256` words, zeroed by the host. Launch: [`BLOCK`] threads (any multiple of 32), \
              [`SHARED_BYTES`], any 1-D grid ([`grid`]).")]
            pub fn $name<'a>(keys: Global<'a, $t>, counts: GlobalMut<'a, u32>, digits: u32) {
                count_digits(keys, counts, Digits::from_arg(digits))
            }
        }
    )*};
}
histogram_kernels! {
    u32: sort_histogram_u32;
    i32: sort_histogram_i32;
    f32: sort_histogram_f32;
    u64: sort_histogram_u64;
    i64: sort_histogram_i64;
    f64: sort_histogram_f64;
}
