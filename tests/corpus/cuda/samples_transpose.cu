// Twin of tests/corpus/src/samples/transpose.rs: cuda-samples transpose's transposeCoalesced and
// transposeNoBankConflicts (32x32 tiles, 32x16 threads), sides from n as the Rust check computes them.
// Usage: samples_transpose [n] (elements, default 5000); runs both kernels.
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_transpose.cu && ./a.out 5000
//
// MUTANT 1: transposeCoalesced's barrier removed — Rust: transpose.rs line 56 removed
// MUTANT 2: transposeNoBankConflicts' barrier removed — Rust: transpose.rs line 79 removed
#include <cmath>
#include <cooperative_groups.h>
#include "samples_common.cuh"
namespace cg = cooperative_groups;

#define TILE_DIM 32
#define BLOCK_ROWS 16

__global__ void transposeCoalesced(float *odata, float *idata, int width, int height) {
    cg::thread_block cta = cg::this_thread_block();
    __shared__ float tile[TILE_DIM][TILE_DIM];
    int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
    int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
    int index_in = xIndex + (yIndex)*width;
    xIndex = blockIdx.y * TILE_DIM + threadIdx.x;
    yIndex = blockIdx.x * TILE_DIM + threadIdx.y;
    int index_out = xIndex + (yIndex)*height;
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) tile[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];
#if MUTANT != 1
    cg::sync(cta);
#endif
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) odata[index_out + i * height] = tile[threadIdx.x][threadIdx.y + i];
}

__global__ void transposeNoBankConflicts(float *odata, float *idata, int width, int height) {
    cg::thread_block cta = cg::this_thread_block();
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
    int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
    int index_in = xIndex + (yIndex)*width;
    xIndex = blockIdx.y * TILE_DIM + threadIdx.x;
    yIndex = blockIdx.x * TILE_DIM + threadIdx.y;
    int index_out = xIndex + (yIndex)*height;
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) tile[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];
#if MUTANT != 2
    cg::sync(cta);
#endif
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) odata[index_out + i * height] = tile[threadIdx.x][threadIdx.y + i];
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 5000);
    int tiles = (n + TILE_DIM * TILE_DIM - 1) / (TILE_DIM * TILE_DIM);
    if (tiles < 1) tiles = 1;
    int tx = (int)std::sqrt((double)tiles);
    while ((tx + 1) * (tx + 1) <= tiles) tx++;
    while (tx * tx > tiles) tx--;
    if (tx < 1) tx = 1;
    int size_x = tx * TILE_DIM, size_y = ((tiles + tx - 1) / tx) * TILE_DIM;
    std::vector<float> in(size_x * size_y), gold(size_x * size_y);
    for (int i = 0; i < size_x * size_y; i++) in[i] = (float)i;
    for (int y = 0; y < size_y; ++y)
        for (int x = 0; x < size_x; ++x) gold[(x * size_y) + y] = in[(y * size_x) + x];
    float *d_in = to_device(in), *d_out;
    CK(cudaMalloc(&d_out, in.size() * sizeof(float)));
    dim3 grid(size_x / TILE_DIM, size_y / TILE_DIM), threads(TILE_DIM, BLOCK_ROWS);
    for (int k = 0; k < 2; k++) {
        CK(cudaMemset(d_out, 0xff, in.size() * sizeof(float)));
        if (k == 0)
            transposeCoalesced<<<grid, threads>>>(d_out, d_in, size_x, size_y);
        else
            transposeNoBankConflicts<<<grid, threads>>>(d_out, d_in, size_x, size_y);
        CK(cudaGetLastError());
        std::vector<float> got = from_device(d_out, in.size());
        for (size_t i = 0; i < got.size(); i++)
            if (got[i] != gold[i]) {
                printf("FAIL %s %dx%d: odata[%zu] = %g, expected %g\n", k ? "transposeNoBankConflicts" : "transposeCoalesced",
                       size_x, size_y, i, got[i], gold[i]);
                return 1;
            }
    }
    printf("PASS\n");
    return 0;
}
