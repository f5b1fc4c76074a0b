// Twin of tests/corpus/src/samples/thread_fence_reduction.rs: cuda-samples threadFenceReduction's
// reduceSinglePass (float, small integer inputs, so the sum is exact), 128 threads max, 64 blocks max,
// with one __threadfence() added in the last block before it reads the partials (see the Rust module:
// without it the last block's reads race with the other blocks' partial writes under the PTX model;
// MUTANT 9 is the sample as published). Usage: samples_thread_fence_reduction [n] (n >= 64, default 4096).
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_thread_fence_reduction.cu && ./a.out 4096
//
// MUTANT 1: tile32.sync() after the first store removed — Rust: thread_fence_reduction.rs line 62 removed
// MUTANT 2: tile32.sync() of the warp tree removed — Rust: thread_fence_reduction.rs line 72 removed
// MUTANT 3: block barrier before thread 0 adds the warps removed — Rust: thread_fence_reduction.rs line 75 removed
// MUTANT 4: block barrier ending reduceBlock removed — Rust: thread_fence_reduction.rs line 85 removed (redundant)
// MUTANT 5: __threadfence() before the ticket removed — Rust: thread_fence_reduction.rs line 117 removed
// MUTANT 6: __threadfence() before the ticket narrowed to __threadfence_block() — Rust: thread_fence_reduction.rs line 117 scope narrowed
// MUTANT 7: atomicInc made a plain read and write — Rust: thread_fence_reduction.rs line 119 made a plain load and store
// MUTANT 8: block barrier after the ticket removed — Rust: thread_fence_reduction.rs line 122 removed
// MUTANT 9: added __threadfence() in the last block removed (= the sample) — Rust: thread_fence_reduction.rs line 125 removed
// MUTANT 10: added __threadfence() narrowed to __threadfence_block() — Rust: thread_fence_reduction.rs line 125 scope narrowed
// MUTANT 11: volatile store sdata[tid] = mySum made plain — Rust: thread_fence_reduction.rs line 61 made plain (redundant)
// MUTANT 12: volatile load sdata[tid + i] made plain — Rust: thread_fence_reduction.rs line 68 made plain (redundant)
// MUTANT 13: volatile store sdata[tid] = beta made plain — Rust: thread_fence_reduction.rs line 70 made plain (redundant)
// MUTANT 14: volatile load sdata[i] by thread 0 made plain — Rust: thread_fence_reduction.rs line 80 made plain (redundant)
// MUTANT 15: volatile store sdata[0] made plain — Rust: thread_fence_reduction.rs line 83 made plain (redundant)
#include <cooperative_groups.h>
#include "samples_common.cuh"
namespace cg = cooperative_groups;

__device__ void reduceBlock(volatile float *sdata, float mySum, const unsigned tid, cg::thread_block cta) {
    float *plain = (float *)sdata; // the same shared memory without volatile, for MUTANT 11..15
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
#if MUTANT != 11
    sdata[tid] = mySum;
#else
    plain[tid] = mySum;
#endif
#if MUTANT != 1
    cg::sync(tile32);
#endif
    const int VEC = 32;
    const int vid = tid & (VEC - 1);
    float beta = mySum;
    float temp;
    for (int i = VEC / 2; i > 0; i >>= 1) {
        if (vid < i) {
#if MUTANT != 12
            temp = sdata[tid + i];
#else
            temp = plain[tid + i];
#endif
            beta += temp;
#if MUTANT != 13
            sdata[tid] = beta;
#else
            plain[tid] = beta;
#endif
        }
#if MUTANT != 2
        cg::sync(tile32);
#endif
    }
#if MUTANT != 3
    cg::sync(cta);
#endif
    if (cta.thread_rank() == 0) {
        beta = 0;
        for (int i = 0; i < blockDim.x; i += VEC) {
#if MUTANT != 14
            beta += sdata[i];
#else
            beta += plain[i];
#endif
        }
#if MUTANT != 15
        sdata[0] = beta;
#else
        plain[0] = beta;
#endif
    }
#if MUTANT != 4
    cg::sync(cta);
#endif
}

__device__ unsigned int retirementCount = 0;

__global__ void reduceSinglePass(const float *g_idata, float *g_odata, unsigned n, bool nIsPow2) {
    cg::thread_block cta = cg::this_thread_block();
    extern __shared__ float sdata[];
    __shared__ bool amLast;
    const unsigned blockSize = blockDim.x;
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    unsigned gridSize = blockSize * 2 * gridDim.x;
    float mySum = 0;
    while (i < n) {
        mySum += g_idata[i];
        if (nIsPow2 || i + blockSize < n) mySum += g_idata[i + blockSize];
        i += gridSize;
    }
    reduceBlock(sdata, mySum, tid, cta);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
    if (gridDim.x > 1) {
#if MUTANT == 6
        __threadfence_block();
#elif MUTANT != 5
        __threadfence();
#endif
        if (tid == 0) {
#if MUTANT != 7
            unsigned int ticket = atomicInc(&retirementCount, gridDim.x);
#else
            unsigned int ticket = retirementCount;
            retirementCount = (ticket >= gridDim.x) ? 0 : ticket + 1;
#endif
            amLast = (ticket == gridDim.x - 1);
        }
#if MUTANT != 8
        cg::sync(cta);
#endif
        if (amLast) {
#if MUTANT == 10
            __threadfence_block();
#elif MUTANT != 9
            __threadfence(); // added by the port
#endif
            int i = tid;
            float mySum = 0;
            while (i < gridDim.x) {
                mySum += g_odata[i];
                i += blockSize;
            }
            reduceBlock(sdata, mySum, tid, cta);
            if (tid == 0) {
                g_odata[0] = sdata[0];
                retirementCount = 0;
            }
        }
    }
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 4096);
    if (n < 64) {
        printf("FAIL n = %d: the sample's reduceBlock needs blocks of at least 32 threads (n >= 64)\n", n);
        return 1;
    }
    const unsigned maxThreads = 128, maxBlocks = 64;
    unsigned threads = (n < (int)maxThreads * 2) ? nextPow2(n / 2) : maxThreads;
    unsigned blocks = n / (threads * 2);
    if (blocks < 1) blocks = 1;
    if (blocks > maxBlocks) blocks = maxBlocks;
    Lcg rng(n);
    std::vector<float> in(n);
    float want = 0;
    for (int i = 0; i < n; i++) {
        in[i] = (float)rng.below(8);
        want += in[i];
    }
    float *d_in = to_device(in), *d_out;
    CK(cudaMalloc(&d_out, blocks * sizeof(float)));
    reduceSinglePass<<<blocks, threads, threads * sizeof(float)>>>(d_in, d_out, n, (n & (n - 1)) == 0);
    CK(cudaGetLastError());
    float got = from_device(d_out, 1)[0];
    unsigned count;
    CK(cudaMemcpyFromSymbol(&count, retirementCount, sizeof(count)));
    if (got != want || count != 0) {
        printf("FAIL n=%d: sum %g, expected %g; retirementCount %u\n", n, got, want, count);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
