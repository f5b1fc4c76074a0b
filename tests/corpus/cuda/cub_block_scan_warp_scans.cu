// The CUDA original of tests/corpus/src/cub/block_scan_warp_scans.rs: CUB's BlockScan<unsigned, 128,
// BLOCK_SCAN_WARP_SCANS>::ExclusiveSum(input, output, block_prefix_callback_op)
// (NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f cub/cub/block/specializations/block_scan_warp_scans.cuh),
// written out without CUB headers: each block scans TILES = 2 consecutive tiles, a running-total
// prefix callback carrying the sum from one tile to the next.
//
// MUTANT 1: __syncthreads of ComputeWarpPrefix removed — Rust: block_scan_warp_scans.rs line 77 removed
// MUTANT 2: __syncthreads after the block prefix store removed — Rust: block_scan_warp_scans.rs line 103 removed
//
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] cub_block_scan_warp_scans.cu && ./a.out 600
#include "cub_common.cuh"

constexpr int BLOCK = 128;
constexpr int TILES = 2;
constexpr int WARPS = BLOCK / 32;

// WarpScanShfl<unsigned, 32>::InclusiveScan, then Update for an integer sum.
__device__ __forceinline__ void warp_scan(unsigned input, unsigned& inclusive, unsigned& exclusive) {
  const int lane = threadIdx.x % 32;
  inclusive = input;
  for (int step = 0; step < 5; ++step) {
    const int offset = 1 << step;
    unsigned temp = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive = temp + inclusive;
  }
  exclusive = inclusive - input;
}

// CUB's test BlockPrefixCallbackOp.
struct RunningPrefix {
  unsigned running_total;
  __device__ unsigned operator()(unsigned block_aggregate) {
    unsigned old_prefix = running_total;
    running_total += block_aggregate;
    return old_prefix;
  }
};

__global__ void cub_block_scan_warp_scans(const unsigned* input, long long n, unsigned* output) {
  __shared__ unsigned warp_aggregates[WARPS];
  __shared__ unsigned block_prefix_storage;
  const unsigned linear_tid = threadIdx.x;
  const unsigned warp_id = linear_tid / 32;
  const unsigned lane_id = linear_tid % 32;
  RunningPrefix prefix_op{0};
  for (int tile = 0; tile < TILES; ++tile) {
    const long long i = ((long long)blockIdx.x * TILES + tile) * BLOCK + linear_tid;
    unsigned item = i < n ? input[i] : 0;
    unsigned inclusive_output, exclusive_output;
    warp_scan(item, inclusive_output, exclusive_output);
    if (lane_id == 31) warp_aggregates[warp_id] = inclusive_output;
#if MUTANT != 1
    __syncthreads();
#endif
    unsigned warp_prefix = 0;
    unsigned block_aggregate = warp_aggregates[0];
    for (int w = 1; w < WARPS; ++w) {
      if (warp_id == w) warp_prefix = block_aggregate;
      block_aggregate += warp_aggregates[w];
    }
    if (warp_id != 0) {
      exclusive_output = warp_prefix + exclusive_output;
      if (lane_id == 0) exclusive_output = warp_prefix;
    }
    if (warp_id == 0) {
      unsigned block_prefix = prefix_op(block_aggregate);
      if (lane_id == 0) {
        block_prefix_storage = block_prefix;
        exclusive_output = block_prefix;
      }
    }
#if MUTANT != 2
    __syncthreads();
#endif
    unsigned block_prefix = block_prefix_storage;
    if (linear_tid > 0) exclusive_output = block_prefix + exclusive_output;
    if (i < n) output[i] = exclusive_output;
  }
}

int main(int argc, char** argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 600;
  if (n < 1) n = 1;
  std::vector<unsigned> h(n);
  for (long long i = 0; i < n; ++i) h[i] = ((unsigned)i * 2654435761u) >> 22;
  unsigned *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_out, n * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  long long seg = (long long)TILES * BLOCK;
  cub_block_scan_warp_scans<<<(unsigned)((n + seg - 1) / seg), BLOCK>>>(d_in, n, d_out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> got(n);
  CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned run = 0;
  for (long long i = 0; i < n; ++i) {
    if (i % seg == 0) run = 0;
    if (got[i] != run) {
      printf("FAIL output[%lld] = %u, expected %u\n", i, got[i], run);
      return 1;
    }
    run += h[i];
  }
  printf("PASS\n");
  return 0;
}
