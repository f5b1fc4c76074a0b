// Twin of tests/corpus/src/samples/shfl_scan.rs: cuda-samples shfl_scan's shuffle_simple_test (the three
// launches: shfl_scan_test over 256-element blocks with partial sums, shfl_scan_test over the partial sums
// in one block, uniform_add), small integer inputs. Usage: samples_shfl_scan [n] (a multiple of 256 from
// 512 to 65536, default 10240).
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_shfl_scan.cu && ./a.out 10240
//
// MUTANT 1: barrier after the warps' totals are stored removed — Rust: shfl_scan.rs line 54 removed
// MUTANT 2: barrier after warp 0's scan of the totals removed — Rust: shfl_scan.rs line 69 removed
// MUTANT 3: uniform_add's barrier after thread 0 loads buf removed — Rust: shfl_scan.rs line 102 removed
#include "samples_common.cuh"

__global__ void shfl_scan_test(int *data, int width, int *partial_sums = NULL) {
    extern __shared__ int sums[];
    int id = ((blockIdx.x * blockDim.x) + threadIdx.x);
    int lane_id = id % warpSize;
    int warp_id = threadIdx.x / warpSize;
    int value = data[id];
#pragma unroll
    for (int i = 1; i <= width; i *= 2) {
        unsigned int mask = 0xffffffff;
        int n = __shfl_up_sync(mask, value, i, width);
        if (lane_id >= i) value += n;
    }
    if (threadIdx.x % warpSize == warpSize - 1) sums[warp_id] = value;
#if MUTANT != 1
    __syncthreads();
#endif
    if (warp_id == 0 && lane_id < (blockDim.x / warpSize)) {
        int warp_sum = sums[lane_id];
        int mask = (1 << (blockDim.x / warpSize)) - 1;
        for (int i = 1; i <= (blockDim.x / warpSize); i *= 2) {
            int n = __shfl_up_sync(mask, warp_sum, i, (blockDim.x / warpSize));
            if (lane_id >= i) warp_sum += n;
        }
        sums[lane_id] = warp_sum;
    }
#if MUTANT != 2
    __syncthreads();
#endif
    int blockSum = 0;
    if (warp_id > 0) blockSum = sums[warp_id - 1];
    value += blockSum;
    data[id] = value;
    if (partial_sums != NULL && threadIdx.x == blockDim.x - 1) partial_sums[blockIdx.x] = value;
}

__global__ void uniform_add(int *data, int *partial_sums, int len) {
    __shared__ int buf;
    int id = ((blockIdx.x * blockDim.x) + threadIdx.x);
    if (id > len) return;
    if (threadIdx.x == 0) buf = partial_sums[blockIdx.x];
#if MUTANT != 3
    __syncthreads();
#endif
    data[id] += buf;
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 10240);
    const int blockSize = 256;
    if (n % blockSize != 0 || n < 2 * blockSize || n > 65536) {
        printf("FAIL n = %d: a multiple of 256 from 512 to 65536\n", n);
        return 1;
    }
    Lcg rng(n);
    std::vector<int> in(n), want(n);
    for (int i = 0, s = 0; i < n; i++) {
        in[i] = (int)rng.below(10);
        want[i] = s += in[i];
    }
    int gridSize = n / blockSize, nWarps = blockSize / 32, shmem_sz = nWarps * sizeof(int);
    int n_partialSums = n / blockSize;
    int p_blockSize = n_partialSums < blockSize ? n_partialSums : blockSize;
    int p_gridSize = (n_partialSums + p_blockSize - 1) / p_blockSize;
    int *d_data = to_device(in), *d_partial;
    CK(cudaMalloc(&d_partial, n_partialSums * sizeof(int)));
    CK(cudaMemset(d_partial, 0, n_partialSums * sizeof(int)));
    shfl_scan_test<<<gridSize, blockSize, shmem_sz>>>(d_data, 32, d_partial);
    shfl_scan_test<<<p_gridSize, p_blockSize, shmem_sz>>>(d_partial, 32);
    uniform_add<<<gridSize - 1, blockSize>>>(d_data + blockSize, d_partial, n);
    CK(cudaGetLastError());
    std::vector<int> got = from_device(d_data, n);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) {
            printf("FAIL n=%d: data[%d] = %d, expected %d\n", n, i, got[i], want[i]);
            return 1;
        }
    printf("PASS\n");
    return 0;
}
