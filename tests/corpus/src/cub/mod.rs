//! Ports of CCCL/CUB's block and warp algorithms (each used by one kernel, as CUB's own tests do).
//!
//! All follow `NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f`. Each module names the file and
//! the class it ports, what was specialised, and why each barrier, fence and atomic is there.
//!
//! This file lists the ports as the corpus's entries ([`entries`]); what their checks share is in
//! `common`, which they import. A port may not import this file.

pub mod block_exchange;
pub mod block_histogram_atomic;
pub mod block_reduce_raking;
pub mod block_reduce_warp_reductions;
pub mod block_scan_raking;
pub mod block_scan_warp_scans;
pub mod device_scan_lookback;
pub mod warp_reduce_smem;
pub mod warp_scan_smem;
pub mod warp_shfl;

#[cfg(not(target_arch = "nvptx64"))]
mod common;
#[cfg(not(target_arch = "nvptx64"))]
use crate::{Entry, Redundant};

/// `NVIDIA/cccl@<commit> <path (class)>`.
#[cfg(not(target_arch = "nvptx64"))]
macro_rules! cccl {
    ($path:literal) => {
        concat!("NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f ", $path)
    };
}

/// The CUB entries of the corpus.
#[cfg(not(target_arch = "nvptx64"))]
pub fn entries() -> Vec<Entry> {
    vec![
        Entry {
            name: "cub::WarpReduceSmem",
            source: cccl!("cub/cub/warp/specializations/warp_reduce_smem.cuh (WarpReduceSmem::Reduce)"),
            sizes: &[200, 300],
            mutate_size: 300,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: warp_reduce_smem::check,
            redundant: &[],
        },
        Entry {
            name: "cub::WarpScanSmem",
            source: cccl!("cub/cub/warp/specializations/warp_scan_smem.cuh (WarpScanSmem::InclusiveScan, Update)"),
            sizes: &[200, 300],
            mutate_size: 300,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: warp_scan_smem::check,
            redundant: &[
                Redundant {
                    line: 51,
                    mutation: "made plain",
                    why: "the identity store is ordered before every lane's read of it by the __syncwarp(FULL) that follows it, and before the step stores that overwrite it by the same barrier; volatile only keeps the compiler from caching the value, which the barrier's memory clobber already forbids, so a plain st.shared is ordered the same under every schedule",
                },
                Redundant {
                    line: 57,
                    mutation: "made plain",
                    why: "each step's store is separated from the other lanes' loads of it by the step's first __syncwarp(FULL) and from the earlier loads of the same element by the previous step's second one; volatility adds no ordering the barriers do not already give (and a volatile access gives none between lanes by itself)",
                },
                Redundant {
                    line: 59,
                    mutation: "made plain",
                    why: "each step's load reads an element stored before the step's first __syncwarp(FULL) and not stored again until after its second; between the two barriers no lane writes it, so a plain ld.shared reads the same value in every schedule",
                },
            ],
        },
        Entry {
            name: "cub::BlockReduceWarpReductions",
            source: cccl!(
                "cub/cub/block/specializations/block_reduce_warp_reductions.cuh (BlockReduceWarpReductions::Sum)"
            ),
            sizes: &[200, 300],
            mutate_size: 300,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: block_reduce_warp_reductions::check,
            redundant: &[],
        },
        Entry {
            name: "cub::BlockReduceWarpReductionsNondeterministic",
            source: cccl!(
                "cub/cub/block/specializations/block_reduce_warp_reductions.cuh (BlockReduceWarpReductions::ApplyWarpAggregatesNonDeterministic)"
            ),
            sizes: &[200, 300],
            mutate_size: 300,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: block_reduce_warp_reductions::check_nondeterministic,
            redundant: &[],
        },
        Entry {
            name: "cub::BlockReduceRaking",
            source: cccl!("cub/cub/block/specializations/block_reduce_raking.cuh (BlockReduceRaking::Reduce)"),
            sizes: &[200, 300],
            mutate_size: 300,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: block_reduce_raking::check,
            redundant: &[Redundant {
                line: 78,
                mutation: "removed",
                why: "the __syncwarp of the raking lanes orders their reads of the raking grid before the warp reduction's writes to its TempStorage, which CUB's union lets alias the grid; for u64 on 32 lanes the warp reduction is WarpReduceShfl, whose TempStorage is empty: after the reads the warp only shuffles registers and no thread of the block writes shared memory again, so no access is left for the barrier to order",
            }],
        },
        Entry {
            name: "cub::BlockReduceRakingCommutativeOnly",
            source: cccl!(
                "cub/cub/block/specializations/block_reduce_raking_commutative_only.cuh (BlockReduceRakingCommutativeOnly::Sum)"
            ),
            sizes: &[200, 300],
            mutate_size: 300,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: block_reduce_raking::check_commutative,
            redundant: &[Redundant {
                line: 78,
                mutation: "removed",
                why: "the __syncwarp of the raking lanes (on the partial last tile, which falls back to BlockReduceRaking) orders their reads of the raking grid before the warp reduction's writes to its TempStorage, which CUB's union lets alias the grid; for u64 on 32 lanes the warp reduction is WarpReduceShfl, whose TempStorage is empty: after the reads the warp only shuffles registers and no thread of the block writes shared memory again, so no access is left for the barrier to order",
            }],
        },
        Entry {
            name: "cub::BlockScanWarpScans",
            source: cccl!(
                "cub/cub/block/specializations/block_scan_warp_scans.cuh (BlockScanWarpScans::ExclusiveScan with BlockPrefixCallbackOp)"
            ),
            sizes: &[200, 600],
            mutate_size: 600,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: block_scan_warp_scans::check,
            redundant: &[],
        },
        Entry {
            name: "cub::BlockScanRaking",
            source: cccl!("cub/cub/block/specializations/block_scan_raking.cuh (BlockScanRaking::ExclusiveScan)"),
            sizes: &[200, 300],
            mutate_size: 300,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: block_scan_raking::check,
            redundant: &[],
        },
        Entry {
            name: "cub::BlockScanRakingMemoize",
            source: cccl!(
                "cub/cub/block/specializations/block_scan_raking.cuh (BlockScanRaking<Memoize = true>::ExclusiveScan)"
            ),
            sizes: &[200, 300],
            mutate_size: 300,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: block_scan_raking::check_memoize,
            redundant: &[],
        },
        Entry {
            name: "cub::BlockExchangeStripedToBlocked",
            source: cccl!("cub/cub/block/block_exchange.cuh (BlockExchange::StripedToBlocked)"),
            sizes: &[700, 2100],
            mutate_size: 2100,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: block_exchange::check_striped_to_blocked,
            redundant: &[],
        },
        Entry {
            name: "cub::BlockExchangeBlockedToStriped",
            source: cccl!("cub/cub/block/block_exchange.cuh (BlockExchange::BlockedToStriped)"),
            sizes: &[700, 2100],
            mutate_size: 2100,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: block_exchange::check_blocked_to_striped,
            redundant: &[],
        },
        Entry {
            name: "cub::BlockHistogramAtomic",
            source: cccl!("cub/cub/block/specializations/block_histogram_atomic.cuh (BlockHistogramAtomic::Composite)"),
            sizes: &[700, 1200],
            mutate_size: 1200,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: block_histogram_atomic::check,
            redundant: &[],
        },
        Entry {
            name: "cub::DeviceScanDecoupledLookBack",
            source: cccl!(
                "cub/cub/agent/single_pass_scan_operators.cuh (ScanTileState, TilePrefixCallbackOp::lookback) with cub/cub/agent/agent_scan.cuh (AgentScan::ConsumeTile)"
            ),
            sizes: &[1300, 2600],
            mutate_size: 1300,
            gpu_sizes: &[1, 1000, (1 << 20) + 77],
            check: device_scan_lookback::check,
            redundant: &[Redundant {
                line: 110,
                mutation: "removed",
                why: "on grids under 500 blocks CUB's back-off between polls is __threadfence_block, which keeps the compiler from hoisting the status load out of the spin loop; the poll is a volatile load, which cannot be hoisted or merged anyway, and a block-scope fence orders this thread's accesses only as its own block sees them, while the only accesses around it are the polls of other blocks' status words (strong accesses, which do not race) and no thread of the block reads anything the fence would order",
            }],
        },
    ]
}
