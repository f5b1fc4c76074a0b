// Twin of tests/corpus/src/samples/histogram256.rs: cuda-samples histogram256 (per-warp sub-histograms
// with shared atomicAdd, mergeHistogram256Kernel), bytes from 0..32 so that a warp's bins collide, a grid
// of min(240, words / 192) blocks. Usage: samples_histogram256 [n] (bytes, a multiple of 4, default 65536).
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_histogram256.cu && ./a.out 65536
//
// MUTANT 1: barrier after zeroing the sub-histograms removed — Rust: histogram256.rs line 66 removed
// MUTANT 2: shared atomicAdd on the warp's bin made a plain read and write — Rust: histogram256.rs line 72 made a plain load and store
// MUTANT 3: barrier before summing the sub-histograms removed — Rust: histogram256.rs line 76 removed
// MUTANT 4: merge tree's barrier removed — Rust: histogram256.rs line 107 removed
#include "samples_common.cuh"

#define HISTOGRAM256_BIN_COUNT 256
#define LOG2_WARP_SIZE 5U
#define WARP_COUNT 6
#define HISTOGRAM256_THREADBLOCK_SIZE (WARP_COUNT * 32)
#define HISTOGRAM256_THREADBLOCK_MEMORY (WARP_COUNT * HISTOGRAM256_BIN_COUNT)
#define MERGE_THREADBLOCK_SIZE 256
typedef unsigned int uint;

inline __device__ void addByte(uint *s_WarpHist, uint data) {
#if MUTANT != 2
    atomicAdd(s_WarpHist + data, 1);
#else
    uint v = s_WarpHist[data];
    s_WarpHist[data] = v + 1;
#endif
}
inline __device__ void addWord(uint *s_WarpHist, uint data) {
    addByte(s_WarpHist, (data >> 0) & 0xFFU);
    addByte(s_WarpHist, (data >> 8) & 0xFFU);
    addByte(s_WarpHist, (data >> 16) & 0xFFU);
    addByte(s_WarpHist, (data >> 24) & 0xFFU);
}

__global__ void histogram256Kernel(uint *d_PartialHistograms, uint *d_Data, uint dataCount) {
    __shared__ uint s_Hist[HISTOGRAM256_THREADBLOCK_MEMORY];
    uint *s_WarpHist = s_Hist + (threadIdx.x >> LOG2_WARP_SIZE) * HISTOGRAM256_BIN_COUNT;
    for (uint i = 0; i < (HISTOGRAM256_THREADBLOCK_MEMORY / HISTOGRAM256_THREADBLOCK_SIZE); i++)
        s_Hist[threadIdx.x + i * HISTOGRAM256_THREADBLOCK_SIZE] = 0;
#if MUTANT != 1
    __syncthreads();
#endif
    for (uint pos = blockIdx.x * blockDim.x + threadIdx.x; pos < dataCount; pos += blockDim.x * gridDim.x)
        addWord(s_WarpHist, d_Data[pos]);
#if MUTANT != 3
    __syncthreads();
#endif
    for (uint bin = threadIdx.x; bin < HISTOGRAM256_BIN_COUNT; bin += HISTOGRAM256_THREADBLOCK_SIZE) {
        uint sum = 0;
        for (uint i = 0; i < WARP_COUNT; i++) sum += s_Hist[bin + i * HISTOGRAM256_BIN_COUNT];
        d_PartialHistograms[blockIdx.x * HISTOGRAM256_BIN_COUNT + bin] = sum;
    }
}

__global__ void mergeHistogram256Kernel(uint *d_Histogram, uint *d_PartialHistograms, uint histogramCount) {
    uint sum = 0;
    for (uint i = threadIdx.x; i < histogramCount; i += MERGE_THREADBLOCK_SIZE)
        sum += d_PartialHistograms[blockIdx.x + i * HISTOGRAM256_BIN_COUNT];
    __shared__ uint data[MERGE_THREADBLOCK_SIZE];
    data[threadIdx.x] = sum;
    for (uint stride = MERGE_THREADBLOCK_SIZE / 2; stride > 0; stride >>= 1) {
#if MUTANT != 4
        __syncthreads();
#endif
        if (threadIdx.x < stride) data[threadIdx.x] += data[threadIdx.x + stride];
    }
    if (threadIdx.x == 0) d_Histogram[blockIdx.x] = data[0];
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 65536);
    if (n <= 0 || n % 4 != 0) {
        printf("FAIL n = %d bytes: a positive multiple of 4\n", n);
        return 1;
    }
    Lcg rng(n ^ 256);
    std::vector<unsigned char> bytes(n);
    std::vector<uint> want(HISTOGRAM256_BIN_COUNT, 0), words(n / 4);
    for (int i = 0; i < n; i++) want[bytes[i] = (unsigned char)rng.below(32)]++;
    for (int w = 0; w < n / 4; w++)
        words[w] = bytes[4 * w] | bytes[4 * w + 1] << 8 | bytes[4 * w + 2] << 16 | (uint)bytes[4 * w + 3] << 24;
    uint count = (n / 4) / HISTOGRAM256_THREADBLOCK_SIZE;
    if (count < 1) count = 1;
    if (count > 240) count = 240;
    uint *d_Data = to_device(words), *d_Partial, *d_Hist;
    CK(cudaMalloc(&d_Partial, count * HISTOGRAM256_BIN_COUNT * sizeof(uint)));
    CK(cudaMalloc(&d_Hist, HISTOGRAM256_BIN_COUNT * sizeof(uint)));
    histogram256Kernel<<<count, HISTOGRAM256_THREADBLOCK_SIZE>>>(d_Partial, d_Data, n / 4);
    mergeHistogram256Kernel<<<HISTOGRAM256_BIN_COUNT, MERGE_THREADBLOCK_SIZE>>>(d_Hist, d_Partial, count);
    CK(cudaGetLastError());
    std::vector<uint> got = from_device(d_Hist, HISTOGRAM256_BIN_COUNT);
    for (int b = 0; b < HISTOGRAM256_BIN_COUNT; b++)
        if (got[b] != want[b]) {
            printf("FAIL n=%d: bin %d = %u, expected %u\n", n, b, got[b], want[b]);
            return 1;
        }
    printf("PASS\n");
    return 0;
}
