//! `NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f cub/cub/block/block_exchange.cuh
//! (BlockExchange::StripedToBlocked, BlockedToStriped, without warp time slicing)`: tiles rearranged
//! between the striped and the blocked arrangement through shared memory, one `TempStorage` reused
//! tile after tile with the barrier CUB requires between two uses.
//!
//! Kept: `StripedToBlocked`: each thread stores item `i` at `i * 128 + tid`, `__syncthreads`, loads
//! items `tid * 4 + i`; `BlockedToStriped`: stores at `tid * 4 + i`, `__syncthreads`, loads from
//! `i * 128 + tid`; 4 items per thread, so no padding (`INSERT_PADDING` needs more than 4). Changed:
//! `u32`, 128 threads, tiles of 512, `TILES` consecutive tiles per block. Two kernels, as CUB's tests
//! use the exchanges: [`cub_block_exchange_striped_to_blocked`] loads each tile striped (coalesced),
//! exchanges it to blocked, scans each thread's 4 items and stores them blocked;
//! [`cub_block_exchange_blocked_to_striped`] loads blocked, scans, exchanges to striped and stores
//! striped. Both compute the inclusive sum of every group of 4 consecutive elements (items past `n`
//! are 0 and are not stored), and both put `__syncthreads` between one tile's exchange and the next
//! tile's, as CUB's documentation says a reused `TempStorage` needs.
//!
//! Synchronisation (block only; tiles are disjoint): each exchange's barrier orders every thread's
//! stores before the other threads' loads of the same elements (read-after-write: in
//! `StripedToBlocked` element `e` is stored by thread `e % 128` and loaded by thread `e / 4`). The
//! reuse barrier orders those loads before the next tile's stores, by thread `e % 128` again
//! (write-after-read between different threads). (Between a `StripedToBlocked` and a
//! `BlockedToStriped` no such barrier would be needed: the second stores each element from the
//! thread that loaded it in the first, so each kernel repeats one exchange.)
use gpu_std::block::sync_threads;
use gpu_std::shared::SharedSlice;
use gpu_std::thread::{block_idx, thread_idx};
use gpu_std::{Global, GlobalMut, kernel, shared_layout};

/// Threads per block.
pub const BLOCK: u32 = 128;
/// `ItemsPerThread`.
pub const ITEMS: usize = 4;
/// Tiles each block exchanges, one after the other.
pub const TILES: usize = 2;
/// `TILE_ITEMS`.
const TILE_ITEMS: usize = BLOCK as usize * ITEMS;

shared_layout! {
    /// `_TempStorage::buff` (`TIME_SLICED_ITEMS + PADDING_ITEMS`, no padding for 4 items).
    pub struct ExchangeShared { pub buff: [u32; TILE_ITEMS] }
}

/// `StripedToBlocked(items, items)`.
#[inline(always)]
fn striped_to_blocked(buff: SharedSlice<u32>, items: &mut [u32; ITEMS]) {
    let linear_tid = thread_idx().x as usize;
    let mut i = 0;
    while i < ITEMS {
        buff.set(i * BLOCK as usize + linear_tid, items[i]);
        i += 1;
    }
    sync_threads();
    let mut i = 0;
    while i < ITEMS {
        items[i] = buff.get(linear_tid * ITEMS + i);
        i += 1;
    }
}

/// `BlockedToStriped(items, items)`.
#[inline(always)]
fn blocked_to_striped(buff: SharedSlice<u32>, items: &mut [u32; ITEMS]) {
    let linear_tid = thread_idx().x as usize;
    let mut i = 0;
    while i < ITEMS {
        buff.set(linear_tid * ITEMS + i, items[i]);
        i += 1;
    }
    sync_threads();
    let mut i = 0;
    while i < ITEMS {
        items[i] = buff.get(i * BLOCK as usize + linear_tid);
        i += 1;
    }
}

kernel! {
    /// `output[4k + j] = input[4k] + … + input[4k + j]`: each tile loaded striped, exchanged to blocked,
    /// stored blocked. Launch `BLOCK` threads per block, `ExchangeShared::BYTES` of shared memory, one
    /// block per `TILES * 512` elements.
    pub fn cub_block_exchange_striped_to_blocked<'a>(input: Global<'a, u32>, output: GlobalMut<'a, u32>) {
        let buff = ExchangeShared::view().buff;
        let linear_tid = thread_idx().x as usize;
        let mut t = 0;
        while t < TILES {
            let tile = (block_idx().x as usize * TILES + t) * TILE_ITEMS;
            let mut items = [0u32; ITEMS];
            let mut i = 0;
            while i < ITEMS {
                let g = tile + i * BLOCK as usize + linear_tid;
                items[i] = if g < input.len() { input.get(g) } else { 0 };
                i += 1;
            }
            striped_to_blocked(buff, &mut items);
            let mut i = 0;
            while i < ITEMS {
                if i > 0 {
                    items[i] = items[i].wrapping_add(items[i - 1]);
                }
                let g = tile + linear_tid * ITEMS + i;
                if g < output.len() {
                    output.set(g, items[i]);
                }
                i += 1;
            }
            // The storage is reused by the next tile.
            sync_threads();
            t += 1;
        }
    }
}

kernel! {
    /// As [`cub_block_exchange_striped_to_blocked`], each tile loaded blocked, scanned, exchanged to
    /// striped, stored striped.
    pub fn cub_block_exchange_blocked_to_striped<'a>(input: Global<'a, u32>, output: GlobalMut<'a, u32>) {
        let buff = ExchangeShared::view().buff;
        let linear_tid = thread_idx().x as usize;
        let mut t = 0;
        while t < TILES {
            let tile = (block_idx().x as usize * TILES + t) * TILE_ITEMS;
            let mut items = [0u32; ITEMS];
            let mut i = 0;
            while i < ITEMS {
                let g = tile + linear_tid * ITEMS + i;
                items[i] = if g < input.len() { input.get(g) } else { 0 };
                if i > 0 {
                    items[i] = items[i].wrapping_add(items[i - 1]);
                }
                i += 1;
            }
            blocked_to_striped(buff, &mut items);
            let mut i = 0;
            while i < ITEMS {
                let g = tile + i * BLOCK as usize + linear_tid;
                if g < output.len() {
                    output.set(g, items[i]);
                }
                i += 1;
            }
            // The storage is reused by the next tile.
            sync_threads();
            t += 1;
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
fn run<K>(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked>
where
    K: for<'a> gpu_std::Kernel<Args<'a> = (Global<'a, u32>, GlobalMut<'a, u32>)>,
{
    let input = super::common::input_u32(n);
    let ib = dev.upload("input", &input)?;
    let ob = dev.filled("output", n, 0u32)?;
    let cfg = gpu_host::Launch::linear(n.div_ceil(TILES * TILE_ITEMS).max(1) as u32, BLOCK, ExchangeShared::BYTES);
    dev.launch::<K>(cfg, (ib.view(), ob.view_mut()))?;
    let mut want = Vec::with_capacity(n);
    for c in input.chunks(ITEMS) {
        let mut run = 0u32;
        for &x in c {
            run = run.wrapping_add(x);
            want.push(run);
        }
    }
    Ok(super::common::compare("output", &ob.read()?, &want))
}

/// `StripedToBlocked` tile after tile over `n` inputs.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check_striped_to_blocked(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    run::<cub_block_exchange_striped_to_blocked>(dev, n)
}

/// `BlockedToStriped` tile after tile over `n` inputs.
#[cfg(not(target_arch = "nvptx64"))]
pub fn check_blocked_to_striped(dev: &gpu_host::Device, n: usize) -> anyhow::Result<crate::Checked> {
    run::<cub_block_exchange_blocked_to_striped>(dev, n)
}
