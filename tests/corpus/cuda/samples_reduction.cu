// Twin of tests/corpus/src/samples/reduction.rs: cuda-samples reduction's reduce2..reduce6 (int), with
// the sample's launch rules (maxThreads 256, maxBlocks 64); reduce2/3 finish on the device, reduce4..6
// on the host (--cpufinal). Usage: samples_reduction [n] (default 4096); runs all five kernels.
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_reduction.cu && ./a.out 4096
//
// MUTANT 1: reduce2 barrier after the load removed — Rust: reduction.rs line 41 removed
// MUTANT 2: reduce2 barrier of the tree step removed — Rust: reduction.rs line 47 removed
// MUTANT 3: reduce3 barrier after the load removed — Rust: reduction.rs line 69 removed
// MUTANT 4: reduce3 barrier of the tree step removed — Rust: reduction.rs line 76 removed
// MUTANT 5: reduce4 barrier after the load removed — Rust: reduction.rs line 98 removed
// MUTANT 6: reduce4 barrier of the tree step removed — Rust: reduction.rs line 105 removed
// MUTANT 7: reduce5 barrier after the load removed — Rust: reduction.rs line 138 removed (redundant at <= 256 threads)
// MUTANT 8: reduce5 barrier after the 512 step removed — Rust: reduction.rs line 143 removed (redundant at <= 256 threads)
// MUTANT 9: reduce5 barrier after the 256 step removed — Rust: reduction.rs line 148 removed
// MUTANT 10: reduce5 barrier after the 128 step removed — Rust: reduction.rs line 153 removed
// MUTANT 11: reduce6 barrier after the load removed — Rust: reduction.rs line 199 removed (redundant at <= 256 threads)
// MUTANT 12: reduce6 barrier after the 512 step removed — Rust: reduction.rs line 204 removed (redundant at <= 256 threads)
// MUTANT 13: reduce6 barrier after the 256 step removed — Rust: reduction.rs line 209 removed
// MUTANT 14: reduce6 barrier after the 128 step removed — Rust: reduction.rs line 214 removed
#include <cooperative_groups.h>
#include "samples_common.cuh"
namespace cg = cooperative_groups;

// SYNC(k): the barrier, left out when MUTANT == k (k is a compile-time constant at every use, so
// this is the `#if MUTANT != k` guard written once).
#define SYNC(k)                                                                                     \
    if (MUTANT != (k)) cg::sync(cta)

__global__ void reduce2(const int *g_idata, int *g_odata, unsigned n) {
    cg::thread_block cta = cg::this_thread_block();
    extern __shared__ int sdata[];
    unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    SYNC(1);
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        SYNC(2);
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

__global__ void reduce3(const int *g_idata, int *g_odata, unsigned n) {
    cg::thread_block cta = cg::this_thread_block();
    extern __shared__ int sdata[];
    unsigned tid = threadIdx.x, i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    int mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    SYNC(3);
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
        SYNC(4);
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

__global__ void reduce4(const int *g_idata, int *g_odata, unsigned n) {
    cg::thread_block cta = cg::this_thread_block();
    extern __shared__ int sdata[];
    const unsigned blockSize = blockDim.x;
    unsigned tid = threadIdx.x, i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    int mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockSize < n) mySum += g_idata[i + blockSize];
    sdata[tid] = mySum;
    SYNC(5);
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
        SYNC(6);
    }
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
    if (cta.thread_rank() < 32) {
        if (blockSize >= 64) mySum += sdata[tid + 32];
        for (int offset = tile32.size() / 2; offset > 0; offset /= 2) mySum += tile32.shfl_down(mySum, offset);
    }
    if (cta.thread_rank() == 0) g_odata[blockIdx.x] = mySum;
}

// reduce5 and reduce6 share the unrolled tree; the mutant numbers of its four barriers are m0..m0+3.
template <int m0>
__device__ void tree_and_tail(cg::thread_block cta, int *sdata, int mySum, unsigned tid, unsigned blockSize,
                              int *g_odata) {
    sdata[tid] = mySum;
    SYNC(m0);
    if ((blockSize >= 512) && (tid < 256)) sdata[tid] = mySum = mySum + sdata[tid + 256];
    SYNC(m0 + 1);
    if ((blockSize >= 256) && (tid < 128)) sdata[tid] = mySum = mySum + sdata[tid + 128];
    SYNC(m0 + 2);
    if ((blockSize >= 128) && (tid < 64)) sdata[tid] = mySum = mySum + sdata[tid + 64];
    SYNC(m0 + 3);
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
    if (cta.thread_rank() < 32) {
        if (blockSize >= 64) mySum += sdata[tid + 32];
        for (int offset = tile32.size() / 2; offset > 0; offset /= 2) mySum += tile32.shfl_down(mySum, offset);
    }
    if (cta.thread_rank() == 0) g_odata[blockIdx.x] = mySum;
}

__global__ void reduce5(const int *g_idata, int *g_odata, unsigned n) {
    cg::thread_block cta = cg::this_thread_block();
    extern __shared__ int sdata[];
    const unsigned blockSize = blockDim.x;
    unsigned tid = threadIdx.x, i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    int mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockSize < n) mySum += g_idata[i + blockSize];
    tree_and_tail<7>(cta, sdata, mySum, tid, blockSize, g_odata);
}

__global__ void reduce6(const int *g_idata, int *g_odata, unsigned n, bool nIsPow2) {
    cg::thread_block cta = cg::this_thread_block();
    extern __shared__ int sdata[];
    const unsigned blockSize = blockDim.x;
    unsigned tid = threadIdx.x, gridSize = blockSize * gridDim.x;
    int mySum = 0;
    if (nIsPow2) {
        unsigned i = blockIdx.x * blockSize * 2 + threadIdx.x;
        gridSize = gridSize << 1;
        while (i < n) {
            mySum += g_idata[i];
            if ((i + blockSize) < n) mySum += g_idata[i + blockSize];
            i += gridSize;
        }
    } else {
        unsigned i = blockIdx.x * blockSize + threadIdx.x;
        while (i < n) {
            mySum += g_idata[i];
            i += gridSize;
        }
    }
    tree_and_tail<11>(cta, sdata, mySum, tid, blockSize, g_odata);
}

static void blocksAndThreads(int which, unsigned n, unsigned &blocks, unsigned &threads) {
    const unsigned maxThreads = 256, maxBlocks = 64;
    if (which < 3) {
        threads = (n < maxThreads) ? nextPow2(n) : maxThreads;
        blocks = (n + threads - 1) / threads;
    } else {
        threads = (n < maxThreads * 2) ? nextPow2((n + 1) / 2) : maxThreads;
        blocks = (n + (threads * 2 - 1)) / (threads * 2);
    }
    if (which >= 6 && blocks > maxBlocks) blocks = maxBlocks;
}

static std::vector<int> pass(int which, const std::vector<int> &in) {
    unsigned n = in.size(), blocks, threads;
    blocksAndThreads(which, n, blocks, threads);
    int smem = (threads <= 32) ? 2 * threads * sizeof(int) : threads * sizeof(int);
    int *d_in = to_device(in), *d_out;
    CK(cudaMalloc(&d_out, blocks * sizeof(int)));
    switch (which) {
    case 2: reduce2<<<blocks, threads, smem>>>(d_in, d_out, n); break;
    case 3: reduce3<<<blocks, threads, smem>>>(d_in, d_out, n); break;
    case 4: reduce4<<<blocks, threads, smem>>>(d_in, d_out, n); break;
    case 5: reduce5<<<blocks, threads, smem>>>(d_in, d_out, n); break;
    default: reduce6<<<blocks, threads, smem>>>(d_in, d_out, n, (n & (n - 1)) == 0); break;
    }
    CK(cudaGetLastError());
    std::vector<int> out = from_device(d_out, blocks);
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
    return out;
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 4096);
    for (int which = 2; which <= 6; which++) {
        Lcg rng(which * 7919 + n);
        std::vector<int> in(n);
        int want = 0;
        for (int i = 0; i < n; i++) {
            in[i] = (int)rng.below(256) - 128;
            want += in[i];
        }
        std::vector<int> s = pass(which, in);
        int got = 0;
        if (which <= 3) {
            while (s.size() > 1) s = pass(which, s);
            got = s[0];
        } else {
            for (int x : s) got += x;
        }
        if (got != want) {
            printf("FAIL reduce%d n=%d: sum %d, expected %d\n", which, n, got, want);
            return 1;
        }
    }
    printf("PASS\n");
    return 0;
}
