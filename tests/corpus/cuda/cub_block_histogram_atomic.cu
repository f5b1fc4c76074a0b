// The CUDA original of tests/corpus/src/cub/block_histogram_atomic.rs: CUB's BlockHistogram<unsigned char, 128,
// 4, 256, BLOCK_HISTO_ATOMIC>::Histogram (NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
// cub/cub/block/specializations/block_histogram_atomic.cuh, cub/cub/block/block_histogram.cuh),
// written out without CUB headers, then merged into a global histogram as CUB's documentation shows.
//
// MUTANT 1: __syncthreads after InitHistogram removed — Rust: block_histogram_atomic.rs line 51 removed
// MUTANT 2: shared atomicAdd_block made a plain load and store — Rust: block_histogram_atomic.rs line 56 made a plain load and store
// MUTANT 3: __syncthreads before the merge removed — Rust: block_histogram_atomic.rs line 60 removed
// MUTANT 4: global atomicAdd of the merge made a plain load and store — Rust: block_histogram_atomic.rs line 64 made a plain load and store
//
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] cub_block_histogram_atomic.cu && ./a.out 1200
#include "cub_common.cuh"

constexpr int BLOCK = 128;
constexpr int ITEMS = 4;
constexpr int BINS = 256;

__global__ void cub_block_histogram_atomic(const unsigned char* samples, long long n, unsigned* histogram) {
  __shared__ unsigned smem[BINS];
  const int linear_tid = threadIdx.x;
  const long long first = ((long long)blockIdx.x * BLOCK + linear_tid) * ITEMS;
  // InitHistogram.
  for (int histo_offset = 0; histo_offset + BLOCK <= BINS; histo_offset += BLOCK) smem[histo_offset + linear_tid] = 0;
#if MUTANT != 1
  __syncthreads();
#endif
  // Composite.
  for (int i = 0; i < ITEMS; ++i) {
    if (first + i < n) {
      unsigned bin = samples[first + i];
#if MUTANT != 2
      atomicAdd_block(&smem[bin], 1u);
#else
      smem[bin] = smem[bin] + 1u;
#endif
    }
  }
#if MUTANT != 3
  __syncthreads();
#endif
  for (int bin = linear_tid; bin < BINS; bin += BLOCK) {
#if MUTANT != 4
    atomicAdd(&histogram[bin], smem[bin]);
#else
    histogram[bin] = histogram[bin] + smem[bin];
#endif
  }
}

int main(int argc, char** argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 1200;
  if (n < 1) n = 1;
  std::vector<unsigned char> h(n);
  for (long long i = 0; i < n; ++i) {
    unsigned u = (unsigned)i;
    h[i] = (u % 3 == 0) ? (unsigned char)(u % 5) : (unsigned char)((u * 2654435761u) >> 24);
  }
  unsigned char* d_samples;
  unsigned* d_hist;
  CHECK(cudaMalloc(&d_samples, n));
  CHECK(cudaMalloc(&d_hist, BINS * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_samples, h.data(), n, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_hist, 0, BINS * sizeof(unsigned)));
  const long long tile = (long long)BLOCK * ITEMS;
  cub_block_histogram_atomic<<<(unsigned)((n + tile - 1) / tile), BLOCK>>>(d_samples, n, d_hist);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> got(BINS), want(BINS, 0);
  CHECK(cudaMemcpy(got.data(), d_hist, BINS * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (long long i = 0; i < n; ++i) want[h[i]]++;
  for (int b = 0; b < BINS; ++b) {
    if (got[b] != want[b]) {
      printf("FAIL histogram[%d] = %u, expected %u\n", b, got[b], want[b]);
      return 1;
    }
  }
  printf("PASS\n");
  return 0;
}
