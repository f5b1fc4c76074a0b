//! Ports of kernels of NVIDIA's cuda-samples.
//!
//! This file lists the ports as the corpus's entries ([`entries`]); what their checks share is in
//! `common`, which they import. A port may not import this file.

#[cfg(not(target_arch = "nvptx64"))]
mod common;
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use common::first_mismatch;
pub mod conjugate_gradient_multi_block_cg;
pub mod histogram256;
pub mod histogram64;
pub mod matrix_mul;
pub mod reduction;
pub mod reduction_multi_block_cg;
pub mod scalar_prod;
pub mod shfl_scan;
pub mod simple_atomic_intrinsics;
pub mod sorting_networks;
pub mod thread_fence_reduction;
pub mod transpose;
pub mod warp_aggregated_atomics_cg;

#[cfg(not(target_arch = "nvptx64"))]
use crate::{Entry, Redundant};

/// The cuda-samples commit every port follows.
#[cfg(not(target_arch = "nvptx64"))]
macro_rules! src {
    ($path:literal ($($f:tt)*)) => {
        concat!("NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420 ", $path, " (", stringify!($($f)*), ")")
    };
}

/// The cuda-samples entries of the corpus.
#[cfg(not(target_arch = "nvptx64"))]
pub fn entries() -> Vec<Entry> {
    const TFR_VOL: &str = "every conflicting pair of sdata accesses in reduceBlock is ordered by tile32.sync() or a block barrier (checked: removing either is caught), so the volatile strength orders nothing; it only kept old compilers from caching sdata in registers, which plain inline-PTX accesses cannot be either";
    const R56: &str = "with at most 256 threads per block (the sample's maxThreads) the 512-thread step has no accesses, so this barrier and the next one are adjacent with nothing between them: either one orders the loaded sdata before the 256-step reads (the 512-thread instantiation, never launched here, needs both)";
    vec![
        Entry {
            name: "reduction.reduce2",
            source: src!("Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu"(reduce2)),
            sizes: &[1, 1000, 3000],
            mutate_size: 600,
            gpu_sizes: &[1000, (1 << 20) + 77],
            check: reduction::check2,
            redundant: &[],
        },
        Entry {
            name: "reduction.reduce3",
            source: src!("Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu"(reduce3)),
            sizes: &[1, 1000, 3000],
            mutate_size: 1300,
            gpu_sizes: &[1000, (1 << 20) + 77],
            check: reduction::check3,
            redundant: &[],
        },
        Entry {
            name: "reduction.reduce4",
            source: src!("Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu"(reduce4)),
            sizes: &[200, 1000, 3000],
            mutate_size: 1300,
            gpu_sizes: &[1000, (1 << 20) + 77],
            check: reduction::check4,
            redundant: &[],
        },
        Entry {
            name: "reduction.reduce5",
            source: src!("Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu"(reduce5)),
            sizes: &[200, 1000, 3000],
            mutate_size: 1300,
            gpu_sizes: &[1000, (1 << 20) + 77],
            check: reduction::check5,
            redundant: &[
                Redundant { line: 138, mutation: "removed", why: R56 },
                Redundant { line: 143, mutation: "removed", why: R56 },
            ],
        },
        Entry {
            name: "reduction.reduce6",
            source: src!("Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu"(reduce6)),
            sizes: &[200, 1000, 3000],
            mutate_size: 1300,
            gpu_sizes: &[1000, (1 << 20) + 77],
            check: reduction::check6,
            redundant: &[
                Redundant { line: 199, mutation: "removed", why: R56 },
                Redundant { line: 204, mutation: "removed", why: R56 },
            ],
        },
        Entry {
            name: "threadFenceReduction",
            source: src!("Samples/2_Concepts_and_Techniques/threadFenceReduction/threadFenceReduction_kernel.cuh"(
                reduceSinglePass,
                reduceBlocks,
                reduceBlock
            )),
            sizes: &[64, 1000, 4000],
            mutate_size: 1280,
            gpu_sizes: &[1000, 1 << 20, (1 << 20) + 77],
            check: thread_fence_reduction::check,
            redundant: &[
                Redundant { line: 61, mutation: "made plain", why: TFR_VOL },
                Redundant { line: 68, mutation: "made plain", why: TFR_VOL },
                Redundant { line: 70, mutation: "made plain", why: TFR_VOL },
                Redundant { line: 80, mutation: "made plain", why: TFR_VOL },
                Redundant { line: 83, mutation: "made plain", why: TFR_VOL },
                Redundant {
                    line: 85,
                    mutation: "removed",
                    why: "after reduceBlock's last barrier only thread 0 reads sdata[0], its own write; the next writes of sdata by other threads (the last block's second reduceBlock) come after the amLast barrier, which orders them after every read of the first",
                },
            ],
        },
        Entry {
            name: "reductionMultiBlockCG",
            source: src!("Samples/2_Concepts_and_Techniques/reductionMultiBlockCG/reductionMultiBlockCG.cu"(
                reduceSinglePassMultiBlockCG,
                reduceBlock
            )),
            sizes: &[1, 5000],
            mutate_size: 3000,
            gpu_sizes: &[1 << 20, (1 << 20) + 77],
            check: reduction_multi_block_cg::check,
            redundant: &[
                Redundant {
                    line: 54,
                    mutation: "removed",
                    why: "after reduceBlock's last barrier only thread 0 reads sdata[0], which it wrote itself; nothing else touches shared memory for the rest of the launch",
                },
                Redundant {
                    line: 75,
                    mutation: "removed",
                    why: "before this barrier each thread has touched only sdata[rank], and reduceBlock's first access is each thread's read of its own sdata[rank]: program order already orders it",
                },
            ],
        },
        Entry {
            name: "shfl_scan",
            source: src!("Samples/2_Concepts_and_Techniques/shfl_scan/shfl_scan.cu"(shfl_scan_test, uniform_add)),
            sizes: &[2560, 10240],
            mutate_size: 2560,
            gpu_sizes: &[65536, 256 * 130],
            check: shfl_scan::check,
            redundant: &[],
        },
        Entry {
            name: "histogram64",
            source: src!("Samples/2_Concepts_and_Techniques/histogram/histogram64.cu"(
                histogram64Kernel,
                mergeHistogram64Kernel
            )),
            sizes: &[16, 16000],
            mutate_size: 16000,
            gpu_sizes: &[1 << 20, (1 << 20) + 16 * 77],
            check: histogram64::check,
            redundant: &[],
        },
        Entry {
            name: "histogram256",
            source: src!("Samples/2_Concepts_and_Techniques/histogram/histogram256.cu"(
                histogram256Kernel,
                mergeHistogram256Kernel
            )),
            sizes: &[4, 4000],
            mutate_size: 4000,
            gpu_sizes: &[1 << 20, (1 << 20) + 4 * 77],
            check: histogram256::check,
            redundant: &[],
        },
        Entry {
            name: "simpleAtomicIntrinsics",
            source: src!("Samples/0_Introduction/simpleAtomicIntrinsics/simpleAtomicIntrinsics_kernel.cuh"(testKernel)),
            sizes: &[256, 768, 2048],
            mutate_size: 512,
            gpu_sizes: &[64 * 256, 1 << 20],
            check: simple_atomic_intrinsics::check,
            redundant: &[],
        },
        Entry {
            name: "warpAggregatedAtomicsCG",
            source: src!("Samples/3_CUDA_Features/warpAggregatedAtomicsCG/warpAggregatedAtomicsCG.cu"(
                filter_arr,
                atomicAggInc
            )),
            sizes: &[1, 1000, 3000],
            mutate_size: 1000,
            gpu_sizes: &[1 << 20, (1 << 20) + 77],
            check: warp_aggregated_atomics_cg::check,
            redundant: &[],
        },
        Entry {
            name: "transposeCoalesced",
            source: src!("Samples/6_Performance/transpose/transpose.cu"(transposeCoalesced)),
            sizes: &[1024, 3000, 5000],
            mutate_size: 3000,
            gpu_sizes: &[1 << 20, 1000 * 1000],
            check: transpose::check_coalesced,
            redundant: &[],
        },
        Entry {
            name: "transposeNoBankConflicts",
            source: src!("Samples/6_Performance/transpose/transpose.cu"(transposeNoBankConflicts)),
            sizes: &[1024, 3000, 5000],
            mutate_size: 3000,
            gpu_sizes: &[1 << 20, 1000 * 1000],
            check: transpose::check_no_bank_conflicts,
            redundant: &[],
        },
        Entry {
            name: "scalarProd",
            source: src!("Samples/2_Concepts_and_Techniques/scalarProd/scalarProd_kernel.cuh"(scalarProdGPU)),
            sizes: &[1000, 8192, 16384],
            mutate_size: 8192,
            gpu_sizes: &[256 * 4096, (1 << 20) + 77],
            check: scalar_prod::check,
            redundant: &[],
        },
        Entry {
            name: "bitonicSortShared",
            source: src!("Samples/2_Concepts_and_Techniques/sortingNetworks/bitonicSort.cu"(
                bitonicSortShared,
                Comparator
            )),
            sizes: &[1024, 2048, 3072],
            mutate_size: 2048,
            gpu_sizes: &[1 << 20, 1024 * 1027],
            check: sorting_networks::check,
            redundant: &[],
        },
        Entry {
            name: "matrixMul",
            source: src!("Samples/0_Introduction/matrixMul/matrixMul.cu"(MatrixMulCUDA)),
            sizes: &[100, 3000],
            mutate_size: 1000,
            gpu_sizes: &[1 << 20, 1000 * 1000],
            check: matrix_mul::check,
            redundant: &[],
        },
        Entry {
            name: "conjugateGradientMultiBlockCG",
            source: src!("Samples/4_CUDA_Libraries/conjugateGradientMultiBlockCG/conjugateGradientMultiBlockCG.cu"(
                gpuConjugateGradient,
                gpuSpMV,
                gpuSaxpy,
                gpuDotProduct,
                gpuCopyVector,
                gpuScaleVectorAndSaxpy
            )),
            sizes: &[1, 1000, 3000],
            mutate_size: 1000,
            gpu_sizes: &[1 << 20, (1 << 20) + 77],
            check: conjugate_gradient_multi_block_cg::check,
            redundant: &[
                Redundant {
                    line: 168,
                    mutation: "removed",
                    why: "every phase strides over the grid the same way, so the saxpy after it reads only the Ax[i] its own thread wrote in the product before it; the product's reads of other rows are of x, which no thread writes until four grid barriers later",
                },
                Redundant {
                    line: 170,
                    mutation: "removed",
                    why: "the dot product after it reads only the r[i] its own thread wrote in the saxpy before it (the same grid-stride indices), and dot_result was zeroed by the host before the launch; nothing else crosses it",
                },
            ],
        },
    ]
}
