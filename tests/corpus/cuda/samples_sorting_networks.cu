// Twin of tests/corpus/src/samples/sorting_networks.rs: cuda-samples sortingNetworks' bitonicSortShared
// (arrays of at most 1024 = SHARED_SIZE_LIMIT pairs, 512 threads per block), with the Rust check's batch
// rule: n / 1024 blocks, arrays of 1024 >> ((blocks - 1) % 3), direction blocks % 2; keys from the LCG,
// values their indices; the result compared with the same network run on the CPU.
// Usage: samples_sorting_networks [n] (a multiple of 1024, default 3072).
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_sorting_networks.cu && ./a.out 3072
//
// MUTANT 1: barrier before each step of the merges for sizes below arrayLength removed — Rust: sorting_networks.rs line 75 removed
// MUTANT 2: barrier before each step of the final merge removed — Rust: sorting_networks.rs line 84 removed
// MUTANT 3: barrier before the stores removed — Rust: sorting_networks.rs line 89 removed
#include <cooperative_groups.h>
#include "samples_common.cuh"
namespace cg = cooperative_groups;
typedef unsigned int uint;
#define SHARED_SIZE_LIMIT 1024U

__device__ __host__ inline void Comparator(uint &keyA, uint &valA, uint &keyB, uint &valB, uint dir) {
    uint t;
    if ((keyA > keyB) == dir) {
        t = keyA; keyA = keyB; keyB = t;
        t = valA; valA = valB; valB = t;
    }
}

__global__ void bitonicSortShared(uint *d_DstKey, uint *d_DstVal, uint *d_SrcKey, uint *d_SrcVal, uint arrayLength, uint dir) {
    cg::thread_block cta = cg::this_thread_block();
    __shared__ uint s_key[SHARED_SIZE_LIMIT];
    __shared__ uint s_val[SHARED_SIZE_LIMIT];
    d_SrcKey += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_SrcVal += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstKey += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstVal += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    s_key[threadIdx.x + 0] = d_SrcKey[0];
    s_val[threadIdx.x + 0] = d_SrcVal[0];
    s_key[threadIdx.x + (SHARED_SIZE_LIMIT / 2)] = d_SrcKey[(SHARED_SIZE_LIMIT / 2)];
    s_val[threadIdx.x + (SHARED_SIZE_LIMIT / 2)] = d_SrcVal[(SHARED_SIZE_LIMIT / 2)];
    for (uint size = 2; size < arrayLength; size <<= 1) {
        uint ddd = dir ^ ((threadIdx.x & (size / 2)) != 0);
        for (uint stride = size / 2; stride > 0; stride >>= 1) {
#if MUTANT != 1
            cg::sync(cta);
#endif
            uint pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
            Comparator(s_key[pos + 0], s_val[pos + 0], s_key[pos + stride], s_val[pos + stride], ddd);
        }
    }
    for (uint stride = arrayLength / 2; stride > 0; stride >>= 1) {
#if MUTANT != 2
        cg::sync(cta);
#endif
        uint pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
        Comparator(s_key[pos + 0], s_val[pos + 0], s_key[pos + stride], s_val[pos + stride], dir);
    }
#if MUTANT != 3
    cg::sync(cta);
#endif
    d_DstKey[0] = s_key[threadIdx.x + 0];
    d_DstVal[0] = s_val[threadIdx.x + 0];
    d_DstKey[(SHARED_SIZE_LIMIT / 2)] = s_key[threadIdx.x + (SHARED_SIZE_LIMIT / 2)];
    d_DstVal[(SHARED_SIZE_LIMIT / 2)] = s_val[threadIdx.x + (SHARED_SIZE_LIMIT / 2)];
}

// The network of one block, thread by thread within each step.
static void cpuBlock(uint *key, uint *val, uint arrayLength, uint dir) {
    for (uint size = 2; size < arrayLength; size <<= 1)
        for (uint stride = size / 2; stride > 0; stride >>= 1)
            for (uint tid = 0; tid < SHARED_SIZE_LIMIT / 2; tid++) {
                uint ddd = dir ^ ((tid & (size / 2)) != 0);
                uint pos = 2 * tid - (tid & (stride - 1));
                Comparator(key[pos], val[pos], key[pos + stride], val[pos + stride], ddd);
            }
    for (uint stride = arrayLength / 2; stride > 0; stride >>= 1)
        for (uint tid = 0; tid < SHARED_SIZE_LIMIT / 2; tid++) {
            uint pos = 2 * tid - (tid & (stride - 1));
            Comparator(key[pos], val[pos], key[pos + stride], val[pos + stride], dir);
        }
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 3072);
    if (n <= 0 || n % SHARED_SIZE_LIMIT != 0) {
        printf("FAIL n = %d: a positive multiple of 1024\n", n);
        return 1;
    }
    uint blocks = n / SHARED_SIZE_LIMIT;
    uint arrayLength = SHARED_SIZE_LIMIT >> ((blocks - 1) % 3), dir = blocks % 2;
    Lcg rng(n ^ 0xb170);
    std::vector<uint> key(n), val(n);
    for (int i = 0; i < n; i++) {
        key[i] = rng.next();
        val[i] = i;
    }
    std::vector<uint> wk = key, wv = val;
    for (uint b = 0; b < blocks; b++) cpuBlock(&wk[b * SHARED_SIZE_LIMIT], &wv[b * SHARED_SIZE_LIMIT], arrayLength, dir);
    uint *d_sk = to_device(key), *d_sv = to_device(val), *d_dk, *d_dv;
    CK(cudaMalloc(&d_dk, n * sizeof(uint)));
    CK(cudaMalloc(&d_dv, n * sizeof(uint)));
    bitonicSortShared<<<blocks, SHARED_SIZE_LIMIT / 2>>>(d_dk, d_dv, d_sk, d_sv, arrayLength, dir);
    CK(cudaGetLastError());
    std::vector<uint> gk = from_device(d_dk, n), gv = from_device(d_dv, n);
    for (int i = 0; i < n; i++)
        if (gk[i] != wk[i] || gv[i] != wv[i]) {
            printf("FAIL n=%d: pair %d = (%u, %u), expected (%u, %u)\n", n, i, gk[i], gv[i], wk[i], wv[i]);
            return 1;
        }
    printf("PASS\n");
    return 0;
}
