// Twin of tests/corpus/src/samples/histogram64.rs: cuda-samples histogram64 (histogram64Kernel with
// per-thread byte counters, mergeHistogram64Kernel), random bytes. Usage: samples_histogram64 [n]
// (bytes, a multiple of 16, default 65536).
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_histogram64.cu && ./a.out 65536
//
// MUTANT 1: barrier after zeroing the counters removed — Rust: histogram64.rs line 72 removed
// MUTANT 2: barrier before summing the counters removed — Rust: histogram64.rs line 80 removed
// MUTANT 3: merge tree's barrier removed — Rust: histogram64.rs line 114 removed
#include "samples_common.cuh"

#define HISTOGRAM64_BIN_COUNT 64
#define SHARED_MEMORY_BANKS 16
#define HISTOGRAM64_THREADBLOCK_SIZE (4 * SHARED_MEMORY_BANKS)
#define MERGE_THREADBLOCK_SIZE 256
typedef unsigned int uint;
typedef unsigned char uchar;

inline __device__ void addByte(uchar *s_ThreadBase, uint data) { s_ThreadBase[data * HISTOGRAM64_THREADBLOCK_SIZE]++; }
inline __device__ void addWord(uchar *s_ThreadBase, uint data) {
    addByte(s_ThreadBase, (data >> 2) & 0x3FU);
    addByte(s_ThreadBase, (data >> 10) & 0x3FU);
    addByte(s_ThreadBase, (data >> 18) & 0x3FU);
    addByte(s_ThreadBase, (data >> 26) & 0x3FU);
}

__global__ void histogram64Kernel(uint *d_PartialHistograms, uint4 *d_Data, uint dataCount) {
    const uint threadPos = ((threadIdx.x & ~(SHARED_MEMORY_BANKS * 4 - 1)) << 0) |
                           ((threadIdx.x & (SHARED_MEMORY_BANKS - 1)) << 2) |
                           ((threadIdx.x & (SHARED_MEMORY_BANKS * 3)) >> 4);
    __shared__ __align__(16) uchar s_Hist[HISTOGRAM64_THREADBLOCK_SIZE * HISTOGRAM64_BIN_COUNT];
    uchar *s_ThreadBase = s_Hist + threadPos;
    for (uint i = 0; i < (HISTOGRAM64_BIN_COUNT / 4); i++) ((uint *)s_Hist)[threadIdx.x + i * HISTOGRAM64_THREADBLOCK_SIZE] = 0;
#if MUTANT != 1
    __syncthreads();
#endif
    for (uint pos = blockIdx.x * blockDim.x + threadIdx.x; pos < dataCount; pos += blockDim.x * gridDim.x) {
        uint4 data = d_Data[pos];
        addWord(s_ThreadBase, data.x);
        addWord(s_ThreadBase, data.y);
        addWord(s_ThreadBase, data.z);
        addWord(s_ThreadBase, data.w);
    }
#if MUTANT != 2
    __syncthreads();
#endif
    if (threadIdx.x < HISTOGRAM64_BIN_COUNT) {
        uchar *s_HistBase = s_Hist + threadIdx.x * HISTOGRAM64_THREADBLOCK_SIZE;
        uint sum = 0;
        uint pos = 4 * (threadIdx.x & (SHARED_MEMORY_BANKS - 1));
        for (uint i = 0; i < (HISTOGRAM64_THREADBLOCK_SIZE / 4); i++) {
            sum += s_HistBase[pos + 0] + s_HistBase[pos + 1] + s_HistBase[pos + 2] + s_HistBase[pos + 3];
            pos = (pos + 4) & (HISTOGRAM64_THREADBLOCK_SIZE - 1);
        }
        d_PartialHistograms[blockIdx.x * HISTOGRAM64_BIN_COUNT + threadIdx.x] = sum;
    }
}

__global__ void mergeHistogram64Kernel(uint *d_Histogram, uint *d_PartialHistograms, uint histogramCount) {
    __shared__ uint data[MERGE_THREADBLOCK_SIZE];
    uint sum = 0;
    for (uint i = threadIdx.x; i < histogramCount; i += MERGE_THREADBLOCK_SIZE)
        sum += d_PartialHistograms[blockIdx.x + i * HISTOGRAM64_BIN_COUNT];
    data[threadIdx.x] = sum;
    for (uint stride = MERGE_THREADBLOCK_SIZE / 2; stride > 0; stride >>= 1) {
#if MUTANT != 3
        __syncthreads();
#endif
        if (threadIdx.x < stride) data[threadIdx.x] += data[threadIdx.x + stride];
    }
    if (threadIdx.x == 0) d_Histogram[blockIdx.x] = data[0];
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 65536);
    if (n <= 0 || n % 16 != 0) {
        printf("FAIL n = %d bytes: a positive multiple of 16\n", n);
        return 1;
    }
    Lcg rng(n ^ 64);
    std::vector<uint> words(n / 4);
    std::vector<uint> want(HISTOGRAM64_BIN_COUNT, 0);
    for (auto &w : words) {
        w = rng.next();
        for (int k = 0; k < 4; k++) want[((w >> (8 * k)) & 0xff) >> 2]++;
    }
    uint histogramCount = (n + HISTOGRAM64_THREADBLOCK_SIZE * 240 - 1) / (HISTOGRAM64_THREADBLOCK_SIZE * 240);
    uint *d_Data = to_device(words), *d_Partial, *d_Hist;
    CK(cudaMalloc(&d_Partial, histogramCount * HISTOGRAM64_BIN_COUNT * sizeof(uint)));
    CK(cudaMalloc(&d_Hist, HISTOGRAM64_BIN_COUNT * sizeof(uint)));
    histogram64Kernel<<<histogramCount, HISTOGRAM64_THREADBLOCK_SIZE>>>(d_Partial, (uint4 *)d_Data, n / 16);
    mergeHistogram64Kernel<<<HISTOGRAM64_BIN_COUNT, MERGE_THREADBLOCK_SIZE>>>(d_Hist, d_Partial, histogramCount);
    CK(cudaGetLastError());
    std::vector<uint> got = from_device(d_Hist, HISTOGRAM64_BIN_COUNT);
    for (int b = 0; b < HISTOGRAM64_BIN_COUNT; b++)
        if (got[b] != want[b]) {
            printf("FAIL n=%d: bin %d = %u, expected %u\n", n, b, got[b], want[b]);
            return 1;
        }
    printf("PASS\n");
    return 0;
}
