// The CUDA original of tests/corpus/src/cub/block_reduce_raking.rs: CUB's BlockReduce<unsigned long long, 128,
// BLOCK_REDUCE_RAKING> and <..., BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY>::Sum(input, num_valid)
// (NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f cub/cub/block/specializations/
// block_reduce_raking.cuh, block_reduce_raking_commutative_only.cuh, cub/cub/block/block_raking_layout.cuh),
// written out without CUB headers. Both kernels run; one sum per block, written by thread 0.
//
// MUTANT 1: BlockReduceRaking: __syncthreads after the placement stores removed — Rust: block_reduce_raking.rs line 59 removed
// MUTANT 2: BlockReduceRaking: __syncwarp of the raking warp removed — Rust: block_reduce_raking.rs line 78 removed (argued redundant)
// MUTANT 3: BlockReduceRakingCommutativeOnly: __syncthreads after the placement stores removed — Rust: block_reduce_raking.rs line 94 removed
//
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] cub_block_reduce_raking.cu && ./a.out 300
#include "cub_common.cuh"

constexpr int BLOCK = 128;
// BlockRakingLayout<u64, 128>.
constexpr int SEGMENT_LENGTH = (BLOCK + 31) / 32;
constexpr int RAKING_THREADS = (BLOCK + SEGMENT_LENGTH - 1) / SEGMENT_LENGTH;
constexpr int USE_SEGMENT_PADDING = (SEGMENT_LENGTH % 2 == 0 && SEGMENT_LENGTH > 2) ? 1 : 0;
constexpr int GRID_ELEMENTS = RAKING_THREADS * (SEGMENT_LENGTH + USE_SEGMENT_PADDING);
constexpr bool RAKING_UNGUARDED = BLOCK % RAKING_THREADS == 0;
// BlockRakingLayout<u64, 96> of the commutative-only variant.
constexpr int COMMUTATIVE_SEGMENT_LENGTH = (BLOCK - 32) / 32;

__device__ __forceinline__ u64 warp_reduce(u64 input, int valid_items, bool all_lanes_valid) {
  const int lane = threadIdx.x % 32;
  const int last_lane = all_lanes_valid ? 31 : valid_items - 1;
  u64 output = input;
  for (int step = 0; step < 5; ++step) {
    const int offset = 1 << step;
    u64 peer = __shfl_down_sync(0xffffffffu, output, offset);
    if (lane + offset <= last_lane) output += peer;
  }
  return output;
}

__device__ __forceinline__ u64 raking_sum(u64* grid, u64 partial, int num_valid, bool full_tile) {
  const int linear_tid = threadIdx.x;
  grid[linear_tid + USE_SEGMENT_PADDING * (linear_tid / SEGMENT_LENGTH)] = partial;
#if MUTANT != 1
  __syncthreads();
#endif
  if (linear_tid < RAKING_THREADS) {
    u64* segment = grid + linear_tid * (SEGMENT_LENGTH + USE_SEGMENT_PADDING);
    partial = segment[0];
    for (int it = 1; it < SEGMENT_LENGTH; ++it) {
      if ((full_tile && RAKING_UNGUARDED) || linear_tid * SEGMENT_LENGTH + it < num_valid) partial += segment[it];
    }
    int valid_raking_threads = full_tile ? RAKING_THREADS : (num_valid + SEGMENT_LENGTH - 1) / SEGMENT_LENGTH;
    unsigned mask = (unsigned)((1ull << RAKING_THREADS) - 1);
#if MUTANT != 2
    __syncwarp(mask);
#else
    (void)mask;
#endif
    partial = warp_reduce(partial, valid_raking_threads, full_tile && RAKING_UNGUARDED);
  }
  return partial;
}

__device__ __forceinline__ u64 commutative_sum(u64* grid, u64 partial, int num_valid, bool full_tile) {
  if (!full_tile) return raking_sum(grid, partial, num_valid, full_tile);
  const int linear_tid = threadIdx.x;
  if (linear_tid >= 32) grid[linear_tid - 32] = partial;
#if MUTANT != 3
  __syncthreads();
#endif
  if (linear_tid < 32) {
    u64* segment = grid + linear_tid * COMMUTATIVE_SEGMENT_LENGTH;
    for (int k = 0; k < COMMUTATIVE_SEGMENT_LENGTH; ++k) partial += segment[k];
    partial = warp_reduce(partial, 32, true);
  }
  return partial;
}

template <bool COMMUTATIVE_ONLY>
__global__ void cub_block_reduce_raking(const u64* input, long long n, u64* sums) {
  __shared__ __align__(16) u64 grid[GRID_ELEMENTS];
  const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  u64 item = i < n ? input[i] : 0;
  long long rest = n - (long long)blockIdx.x * BLOCK;
  const int num_valid = (int)(rest > BLOCK ? BLOCK : rest);
  const bool full = num_valid >= BLOCK;
  u64 total = COMMUTATIVE_ONLY ? commutative_sum(grid, item, num_valid, full) : raking_sum(grid, item, num_valid, full);
  if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

template <bool COMMUTATIVE_ONLY>
int run(const std::vector<u64>& h, long long n, const u64* d_in, u64* d_sums) {
  return check_block_sums(COMMUTATIVE_ONLY ? "commutative-only" : "raking", h, n, BLOCK, d_in, d_sums,
                          [](const u64* in, long long n, u64* sums, unsigned blocks) {
                            cub_block_reduce_raking<COMMUTATIVE_ONLY><<<blocks, BLOCK>>>(in, n, sums);
                          });
}

int main(int argc, char** argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 300;
  if (n < 1) n = 1;
  std::vector<u64> h = input_u64(n);
  u64 *d_in, *d_sums;
  if (upload_u64(h, BLOCK, &d_in, &d_sums)) return 1;
  if (run<false>(h, n, d_in, d_sums) || run<true>(h, n, d_in, d_sums)) return 1;
  printf("PASS\n");
  return 0;
}
