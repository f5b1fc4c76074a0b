// The CUDA original of tests/corpus/src/cub/block_reduce_warp_reductions.rs: CUB's
// BlockReduce<unsigned long long, 128, BLOCK_REDUCE_WARP_REDUCTIONS[_NONDETERMINISTIC]>::Sum(input,
// num_valid) (NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
// cub/cub/block/specializations/block_reduce_warp_reductions.cuh), written out without CUB headers:
// the shuffle warp reduction (WarpReduceShfl::Reduce) of each warp, then the warp aggregates combined
// through shared memory. Both kernels run; one sum per block, written by thread 0.
//
// MUTANT 1: deterministic: __syncthreads of ApplyWarpAggregates removed — Rust: block_reduce_warp_reductions.rs line 64 removed
// MUTANT 2: nondeterministic: first __syncthreads removed — Rust: block_reduce_warp_reductions.rs line 81 removed
// MUTANT 3: nondeterministic: shared atomicAdd made a plain load and store — Rust: block_reduce_warp_reductions.rs line 83 made a plain load and store
// MUTANT 4: nondeterministic: second __syncthreads removed — Rust: block_reduce_warp_reductions.rs line 85 removed
//
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] cub_block_reduce_warp_reductions.cu && ./a.out 300
#include "cub_common.cuh"

constexpr int BLOCK = 128;
constexpr int WARPS = BLOCK / 32;
constexpr int LOGICAL_WARP_SIZE = 32;
constexpr bool EVEN_WARP_MULTIPLE = BLOCK % LOGICAL_WARP_SIZE == 0;

// WarpReduceShfl<u64, 32>::Reduce<ALL_LANES_VALID>: lane 0 gets the sum of lanes 0 .. valid_items.
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

template <bool DETERMINISTIC>
__device__ __forceinline__ u64 block_sum(u64* warp_aggregates, u64 input, int num_valid, bool full_tile) {
  const int linear_tid = threadIdx.x;
  const int warp_id = linear_tid / 32;
  const int lane_id = linear_tid % 32;
  const int warp_offset = warp_id * LOGICAL_WARP_SIZE;
  const int warp_num_valid = ((full_tile && EVEN_WARP_MULTIPLE) || warp_offset + LOGICAL_WARP_SIZE <= num_valid)
                               ? LOGICAL_WARP_SIZE
                               : num_valid - warp_offset;
  u64 warp_aggregate = warp_reduce(input, warp_num_valid, full_tile && EVEN_WARP_MULTIPLE);
  if (DETERMINISTIC) {
    if (lane_id == 0) warp_aggregates[warp_id] = warp_aggregate;
#if MUTANT != 1
    __syncthreads();
#endif
    if (linear_tid == 0) {
      for (int w = 1; w < WARPS; ++w) {
        if (full_tile || w * LOGICAL_WARP_SIZE < num_valid) warp_aggregate += warp_aggregates[w];
      }
    }
    return warp_aggregate;
  } else {
    if (linear_tid == 0) warp_aggregates[0] = warp_aggregate;
#if MUTANT != 2
    __syncthreads();
#endif
    if (lane_id == 0 && warp_id != 0) {
#if MUTANT != 3
      atomicAdd_block(&warp_aggregates[0], warp_aggregate);
#else
      warp_aggregates[0] = warp_aggregates[0] + warp_aggregate;
#endif
    }
#if MUTANT != 4
    __syncthreads();
#endif
    return warp_aggregates[0];
  }
}

template <bool DETERMINISTIC>
__global__ void cub_block_reduce_warp_reductions(const u64* input, long long n, u64* sums) {
  __shared__ u64 warp_aggregates[WARPS];
  const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  u64 item = i < n ? input[i] : 0;
  long long rest = n - (long long)blockIdx.x * BLOCK;
  const int num_valid = (int)(rest > BLOCK ? BLOCK : rest);
  u64 total = block_sum<DETERMINISTIC>(warp_aggregates, item, num_valid, num_valid >= BLOCK);
  if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

template <bool DETERMINISTIC>
int run(const std::vector<u64>& h, long long n, const u64* d_in, u64* d_sums) {
  return check_block_sums(DETERMINISTIC ? "deterministic" : "nondeterministic", h, n, BLOCK, d_in, d_sums,
                          [](const u64* in, long long n, u64* sums, unsigned blocks) {
                            cub_block_reduce_warp_reductions<DETERMINISTIC><<<blocks, BLOCK>>>(in, n, sums);
                          });
}

int main(int argc, char** argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 300;
  if (n < 1) n = 1;
  std::vector<u64> h = input_u64(n);
  u64 *d_in, *d_sums;
  if (upload_u64(h, BLOCK, &d_in, &d_sums)) return 1;
  if (run<true>(h, n, d_in, d_sums) || run<false>(h, n, d_in, d_sums)) return 1;
  printf("PASS\n");
  return 0;
}
