// The CUDA original of tests/corpus/src/cub/block_scan_raking.rs: CUB's BlockScan<unsigned, 128,
// BLOCK_SCAN_RAKING> and <..., BLOCK_SCAN_RAKING_MEMOIZE>::ExclusiveSum(input, output)
// (NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f cub/cub/block/specializations/block_scan_raking.cuh,
// cub/cub/block/block_raking_layout.cuh, cub/cub/thread/thread_scan.cuh), written out without CUB
// headers. Both kernels run; one tile of 128 per block.
//
// MUTANT 1: __syncthreads after the placement stores removed — Rust: block_scan_raking.rs line 46 removed
// MUTANT 2: __syncthreads after the downsweep removed — Rust: block_scan_raking.rs line 89 removed
//
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] cub_block_scan_raking.cu && ./a.out 300
#include "cub_common.cuh"

constexpr int BLOCK = 128;
constexpr int SEGMENT_LENGTH = (BLOCK + 31) / 32;
constexpr int RAKING_THREADS = (BLOCK + SEGMENT_LENGTH - 1) / SEGMENT_LENGTH;
constexpr int USE_SEGMENT_PADDING = (SEGMENT_LENGTH % 2 == 0 && SEGMENT_LENGTH > 2) ? 1 : 0;
constexpr int GRID_ELEMENTS = RAKING_THREADS * (SEGMENT_LENGTH + USE_SEGMENT_PADDING);
constexpr bool UNGUARDED = BLOCK % RAKING_THREADS == 0;

// WarpScan<unsigned, 32>::ExclusiveScan(input, exclusive, initial_value, plus), shuffle specialisation.
__device__ __forceinline__ unsigned warp_exclusive(unsigned input, unsigned initial_value) {
  const int lane = threadIdx.x % 32;
  unsigned inclusive = input;
  for (int step = 0; step < 5; ++step) {
    const int offset = 1 << step;
    unsigned temp = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive = temp + inclusive;
  }
  inclusive = initial_value + inclusive;
  return inclusive - input;
}

template <bool MEMOIZE>
__global__ void cub_block_scan_raking(const unsigned* input, long long n, unsigned* output) {
  __shared__ __align__(16) unsigned grid[GRID_ELEMENTS];
  const int linear_tid = threadIdx.x;
  const long long i = (long long)blockIdx.x * BLOCK + linear_tid;
  unsigned item = i < n ? input[i] : 0;
  const int placement = linear_tid + USE_SEGMENT_PADDING * (linear_tid / SEGMENT_LENGTH);
  grid[placement] = item;
#if MUTANT != 1
  __syncthreads();
#endif
  if (linear_tid < RAKING_THREADS) {
    unsigned* raking = grid + linear_tid * (SEGMENT_LENGTH + USE_SEGMENT_PADDING);
    unsigned cached_segment[SEGMENT_LENGTH];
    for (int k = 0; k < SEGMENT_LENGTH; ++k) cached_segment[k] = raking[k];
    unsigned upsweep_partial = cached_segment[0];
    for (int it = 1; it < SEGMENT_LENGTH; ++it) {
      if (UNGUARDED || linear_tid * SEGMENT_LENGTH + it < BLOCK) upsweep_partial += cached_segment[it];
    }
    unsigned exclusive_partial = warp_exclusive(upsweep_partial, 0);
    if (!MEMOIZE) {
      for (int k = 0; k < SEGMENT_LENGTH; ++k) cached_segment[k] = raking[k];
    }
    unsigned inclusive = exclusive_partial + cached_segment[0];
    cached_segment[0] = exclusive_partial;
    unsigned exclusive = inclusive;
    for (int k = 1; k < SEGMENT_LENGTH; ++k) {
      inclusive = exclusive + cached_segment[k];
      cached_segment[k] = exclusive;
      exclusive = inclusive;
    }
    for (int k = 0; k < SEGMENT_LENGTH; ++k) raking[k] = cached_segment[k];
  }
#if MUTANT != 2
  __syncthreads();
#endif
  unsigned out = grid[placement];
  if (i < n) output[i] = out;
}

template <bool MEMOIZE>
int run(const std::vector<unsigned>& h, long long n, const unsigned* d_in, unsigned* d_out) {
  CHECK(cudaMemset(d_out, 0, n * sizeof(unsigned)));
  cub_block_scan_raking<MEMOIZE><<<(unsigned)((n + BLOCK - 1) / BLOCK), BLOCK>>>(d_in, n, d_out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> got(n);
  CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned run = 0;
  for (long long i = 0; i < n; ++i) {
    if (i % BLOCK == 0) run = 0;
    if (got[i] != run) {
      printf("FAIL %s output[%lld] = %u, expected %u\n", MEMOIZE ? "memoize" : "raking", i, got[i], run);
      return 1;
    }
    run += h[i];
  }
  return 0;
}

int main(int argc, char** argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 300;
  if (n < 1) n = 1;
  std::vector<unsigned> h(n);
  for (long long i = 0; i < n; ++i) h[i] = ((unsigned)i * 2654435761u) >> 22;
  unsigned *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_out, n * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  if (run<false>(h, n, d_in, d_out) || run<true>(h, n, d_in, d_out)) return 1;
  printf("PASS\n");
  return 0;
}
