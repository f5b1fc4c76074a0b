// Twin of tests/corpus/src/samples/warp_aggregated_atomics_cg.rs: cuda-samples warpAggregatedAtomicsCG's
// filter_arr with atomicAggInc (cg::coalesced_threads(), as the sample writes it), n / 512 + 1 blocks of
// 512, inputs 0..4. Usage: samples_warp_aggregated_atomics_cg [n] (default 100000).
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_warp_aggregated_atomics_cg.cu && ./a.out 100000
//
// MUTANT 1: the group leader's atomicAdd on the counter made a plain read and write — Rust: warp_aggregated_atomics_cg.rs line 46 made a plain load and store
#include <algorithm>
#include <cooperative_groups.h>
#include "samples_common.cuh"
namespace cg = cooperative_groups;

__device__ int atomicAggInc(int *counter) {
    cg::coalesced_group active = cg::coalesced_threads();
    int res = 0;
    if (active.thread_rank() == 0) {
#if MUTANT != 1
        res = atomicAdd(counter, active.size());
#else
        res = *counter;
        *counter = res + active.size();
#endif
    }
    res = active.shfl(res, 0);
    return res + active.thread_rank();
}

__global__ void filter_arr(int *dst, int *nres, const int *src, int n) {
    int id = threadIdx.x + blockIdx.x * blockDim.x;
    for (int i = id; i < n; i += gridDim.x * blockDim.x) {
        if (src[i] > 0) dst[atomicAggInc(nres)] = src[i];
    }
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 100000);
    Lcg rng(n + 5);
    std::vector<int> src(n), want;
    for (int i = 0; i < n; i++) {
        src[i] = (int)rng.below(5);
        if (src[i] > 0) want.push_back(src[i]);
    }
    int *d_src = to_device(src), *d_dst, *d_nres;
    CK(cudaMalloc(&d_dst, (n + 1) * sizeof(int)));
    CK(cudaMalloc(&d_nres, sizeof(int)));
    CK(cudaMemset(d_nres, 0, sizeof(int)));
    filter_arr<<<n / 512 + 1, 512>>>(d_dst, d_nres, d_src, n);
    CK(cudaGetLastError());
    int nres = from_device(d_nres, 1)[0];
    if (nres != (int)want.size()) {
        printf("FAIL n=%d: nres %d, expected %zu\n", n, nres, want.size());
        return 1;
    }
    std::vector<int> got = from_device(d_dst, nres);
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    if (got != want) {
        printf("FAIL n=%d: the filtered values differ\n", n);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
