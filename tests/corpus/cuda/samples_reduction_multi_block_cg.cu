// Twin of tests/corpus/src/samples/reduction_multi_block_cg.rs: cuda-samples reductionMultiBlockCG's
// reduceSinglePassMultiBlockCG, 256 threads per block, a cooperative launch of as many blocks as are
// co-resident, small integer inputs (exact sum). Usage: samples_reduction_multi_block_cg [n] (default 4096).
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_reduction_multi_block_cg.cu && ./a.out 4096
//
// MUTANT 1: barrier after the tile reduction's write-back removed — Rust: reduction_multi_block_cg.rs line 44 removed
// MUTANT 2: barrier ending reduceBlock removed — Rust: reduction_multi_block_cg.rs line 54 removed (redundant)
// MUTANT 3: barrier before reduceBlock removed — Rust: reduction_multi_block_cg.rs line 75 removed (redundant)
// MUTANT 4: grid.sync() removed — Rust: reduction_multi_block_cg.rs line 80 removed
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include "samples_common.cuh"
namespace cg = cooperative_groups;

__device__ void reduceBlock(double *sdata, const cg::thread_block &cta) {
    const unsigned int tid = cta.thread_rank();
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
    sdata[tid] = cg::reduce(tile32, sdata[tid], cg::plus<double>());
#if MUTANT != 1
    cg::sync(cta);
#endif
    double beta = 0.0;
    if (cta.thread_rank() == 0) {
        for (int i = 0; i < blockDim.x; i += tile32.size()) beta += sdata[i];
        sdata[0] = beta;
    }
#if MUTANT != 2
    cg::sync(cta);
#endif
}

extern "C" __global__ void reduceSinglePassMultiBlockCG(const float *g_idata, float *g_odata, unsigned int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    extern double __shared__ sdata[];
    sdata[block.thread_rank()] = 0;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) sdata[block.thread_rank()] += g_idata[i];
#if MUTANT != 3
    cg::sync(block);
#endif
    reduceBlock(sdata, block);
    if (block.thread_rank() == 0) g_odata[blockIdx.x] = sdata[0];
#if MUTANT != 4
    cg::sync(grid);
#endif
    if (grid.thread_rank() == 0) {
        for (int block = 1; block < gridDim.x; block++) g_odata[0] += g_odata[block];
    }
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 4096);
    const int threads = 256;
    int smem = threads * sizeof(double), perSm = 0, sms = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, reduceSinglePassMultiBlockCG, threads, smem));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int blocks = perSm * sms;
    Lcg rng(n ^ 0x5eed);
    std::vector<float> in(n);
    double want = 0;
    for (int i = 0; i < n; i++) {
        in[i] = (float)rng.below(16);
        want += in[i];
    }
    float *d_in = to_device(in), *d_out;
    CK(cudaMalloc(&d_out, blocks * sizeof(float)));
    unsigned un = n;
    void *args[] = {(void *)&d_in, (void *)&d_out, (void *)&un};
    CK(cudaLaunchCooperativeKernel((void *)reduceSinglePassMultiBlockCG, dim3(blocks), dim3(threads), args, smem, 0));
    CK(cudaDeviceSynchronize());
    float got = from_device(d_out, 1)[0];
    if (got != (float)want) {
        printf("FAIL n=%d: sum %g, expected %g (%d blocks)\n", n, got, want, blocks);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
