// The CUDA original of tests/corpus/src/cub/device_scan_lookback.rs: CUB's single-pass DeviceScan::ExclusiveSum
// of unsigned ints by decoupled look-back (NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
// cub/cub/agent/single_pass_scan_operators.cuh: ScanTileState<unsigned, true>, TilePrefixCallbackOp;
// cub/cub/agent/agent_scan.cuh: AgentScan::ConsumeTile), written out without CUB headers: an init
// kernel (InitializeStatus), then one block of 128 threads x 4 items per tile of 512, tile =
// blockIdx.x. The tile descriptor is CUB's 8-byte word {status, value}, stored and polled with
// st.relaxed.gpu.v2.u32 / ld.relaxed.gpu.v2.u32 as CUB's MemoryOrder::relaxed does (the Rust port has
// no relaxed access and uses ld/st.volatile.b64). The polls are bounded: after 2^20 a warp gives up,
// sets the error word and the run prints FAIL.
//
// MUTANT 1: __threadfence_block of the polls' back-off (grids under 500 blocks) removed — Rust: device_scan_lookback.rs line 110 removed (argued redundant)
// MUTANT 2: first relaxed load of WaitForValid made plain — Rust: device_scan_lookback.rs line 121 made plain
// MUTANT 3: relaxed reload in WaitForValid's spin loop made plain — Rust: device_scan_lookback.rs line 132 made plain
// MUTANT 4: relaxed store of SetPartial made plain — Rust: device_scan_lookback.rs line 153 made plain
// MUTANT 5: relaxed store of SetInclusive (look-back) made plain — Rust: device_scan_lookback.rs line 174 made plain
// MUTANT 6: __syncthreads of the load's StripedToBlocked removed — Rust: device_scan_lookback.rs line 237 removed
// MUTANT 7: __syncthreads after the load removed — Rust: device_scan_lookback.rs line 243 removed
// MUTANT 8: __syncthreads of ComputeWarpPrefix removed — Rust: device_scan_lookback.rs line 188 removed
// MUTANT 9: relaxed store of tile 0's SetInclusive made plain — Rust: device_scan_lookback.rs line 268 made plain
// MUTANT 10: __syncthreads after the block prefix store removed — Rust: device_scan_lookback.rs line 286 removed
// MUTANT 11: __syncthreads before the store removed — Rust: device_scan_lookback.rs line 304 removed
// MUTANT 12: __syncthreads of the store's BlockedToStriped removed — Rust: device_scan_lookback.rs line 311 removed
//
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] cub_device_scan_lookback.cu && ./a.out 1300
#include "cub_common.cuh"

constexpr int BLOCK = 128;
constexpr int ITEMS = 4;
constexpr int TILE_ITEMS = BLOCK * ITEMS;
constexpr int TILE_STATUS_PADDING = 32;
constexpr unsigned SPIN_LIMIT = 1u << 20;
constexpr unsigned SCAN_TILE_OOB = 0, SCAN_TILE_INVALID = 99, SCAN_TILE_PARTIAL = 100, SCAN_TILE_INCLUSIVE = 101;
constexpr int WARPS = BLOCK / 32;
// The scan storage's words in the union with the exchange buffer.
constexpr int WARP_AGGREGATES = 0, BLOCK_PREFIX = WARPS, EXCLUSIVE_PREFIX = WARPS + 1, INCLUSIVE_PREFIX = WARPS + 2,
              PREFIX_BLOCK_AGGREGATE = WARPS + 3;

__device__ __forceinline__ void store_relaxed(uint2* ptr, uint2 v) {
  asm volatile("st.relaxed.gpu.v2.u32 [%0], {%1, %2};" : : "l"(ptr), "r"(v.x), "r"(v.y) : "memory");
}
__device__ __forceinline__ uint2 load_relaxed(const uint2* ptr) {
  uint2 r;
  asm volatile("ld.relaxed.gpu.v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(ptr) : "memory");
  return r;
}

__global__ void cub_scan_init(uint2* tile_status, int num_tiles) {
  int tile_idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (tile_idx < num_tiles) tile_status[TILE_STATUS_PADDING + tile_idx] = make_uint2(SCAN_TILE_INVALID, 0);
  if (blockIdx.x == 0 && threadIdx.x < TILE_STATUS_PADDING) tile_status[threadIdx.x] = make_uint2(SCAN_TILE_OOB, 0);
}

__device__ __forceinline__ void delay(unsigned ns) {
  if (gridDim.x < 500) {
#if MUTANT != 1
    __threadfence_block();
#endif
  } else {
    __nanosleep(ns);
  }
}

__device__ __forceinline__ unsigned warp_reduce_to(unsigned input, int last_lane) {
  const int lane = threadIdx.x % 32;
  unsigned output = input;
  for (int step = 0; step < 5; ++step) {
    const int offset = 1 << step;
    unsigned peer = __shfl_down_sync(0xffffffffu, output, offset);
    if (lane + offset <= last_lane) output += peer;
  }
  return output;
}

// WarpReduce::TailSegmentedReduce(value, tail_flag, plus).
__device__ __forceinline__ unsigned tail_segmented_sum(unsigned input, bool tail_flag) {
  unsigned lanemask_ge = 0xffffffffu << (threadIdx.x % 32);
  unsigned warp_flags = __ballot_sync(0xffffffffu, tail_flag);
  warp_flags &= lanemask_ge;
  warp_flags |= 1u << 31;
  return warp_reduce_to(input, __ffs(warp_flags) - 1);
}

// WaitForValid, then ProcessWindow's reduction. Returns whether the warp gave up.
__device__ __forceinline__ bool process_window(uint2* tile_status, int predecessor_idx, unsigned& status,
                                               unsigned& window_aggregate) {
  uint2* at = tile_status + TILE_STATUS_PADDING + predecessor_idx;
#if MUTANT != 2
  uint2 word = load_relaxed(at);
#else
  uint2 word = *at;
#endif
  unsigned polls = 0;
  bool gave_up = false;
  while (__any_sync(0xffffffffu, word.x == SCAN_TILE_INVALID)) {
    if (++polls >= SPIN_LIMIT) {
      gave_up = true;
      break;
    }
    delay(350);
#if MUTANT != 3
    word = load_relaxed(at);
#else
    word = *at;
#endif
  }
  status = word.x;
  window_aggregate = tail_segmented_sum(word.y, status == SCAN_TILE_INCLUSIVE);
  return gave_up;
}

// TilePrefixCallbackOp::lookback, by warp 0.
__device__ __forceinline__ unsigned lookback(unsigned* smem, uint2* tile_status, unsigned* error, int tile_idx,
                                             unsigned block_aggregate) {
  const int tid = threadIdx.x;
  if (tid == 0) {
    smem[PREFIX_BLOCK_AGGREGATE] = block_aggregate;
#if MUTANT != 4
    store_relaxed(tile_status + TILE_STATUS_PADDING + tile_idx, make_uint2(SCAN_TILE_PARTIAL, block_aggregate));
#else
    tile_status[TILE_STATUS_PADDING + tile_idx] = make_uint2(SCAN_TILE_PARTIAL, block_aggregate);
#endif
  }
  int predecessor_idx = tile_idx - tid - 1;
  delay(450);
  unsigned predecessor_status, window_aggregate;
  bool gave_up = process_window(tile_status, predecessor_idx, predecessor_status, window_aggregate);
  unsigned exclusive_prefix = window_aggregate;
  while (!gave_up && __all_sync(0xffffffffu, predecessor_status != SCAN_TILE_INCLUSIVE)) {
    predecessor_idx -= 32;
    gave_up = process_window(tile_status, predecessor_idx, predecessor_status, window_aggregate);
    exclusive_prefix = window_aggregate + exclusive_prefix;
  }
  if (gave_up && tid == 0) atomicOr(error, 1u);
  if (tid == 0) {
    unsigned inclusive_prefix = exclusive_prefix + block_aggregate;
#if MUTANT != 5
    store_relaxed(tile_status + TILE_STATUS_PADDING + tile_idx, make_uint2(SCAN_TILE_INCLUSIVE, inclusive_prefix));
#else
    tile_status[TILE_STATUS_PADDING + tile_idx] = make_uint2(SCAN_TILE_INCLUSIVE, inclusive_prefix);
#endif
    smem[EXCLUSIVE_PREFIX] = exclusive_prefix;
    smem[INCLUSIVE_PREFIX] = inclusive_prefix;
  }
  return exclusive_prefix;
}

__device__ __forceinline__ void compute_warp_prefix(unsigned* smem, unsigned warp_aggregate, unsigned& warp_prefix,
                                                    unsigned& block_aggregate) {
  const int warp_id = threadIdx.x / 32;
  if (threadIdx.x % 32 == 31) smem[WARP_AGGREGATES + warp_id] = warp_aggregate;
#if MUTANT != 8
  __syncthreads();
#endif
  warp_prefix = 0;
  block_aggregate = smem[WARP_AGGREGATES];
  for (int w = 1; w < WARPS; ++w) {
    if (warp_id == w) warp_prefix = block_aggregate;
    block_aggregate += smem[WARP_AGGREGATES + w];
  }
}

__global__ void cub_device_scan(const unsigned* input, long long n, unsigned* output, uint2* tile_status,
                                unsigned* error) {
  __shared__ __align__(16) unsigned smem[TILE_ITEMS];
  const int linear_tid = threadIdx.x;
  const int warp_id = linear_tid / 32;
  const int lane_id = linear_tid % 32;
  const int tile_idx = blockIdx.x;
  const long long tile_offset = (long long)TILE_ITEMS * tile_idx;
  const long long num_remaining = n - tile_offset;
  const bool is_last_tile = num_remaining <= TILE_ITEMS;
  unsigned items[ITEMS];
  const unsigned oob_default = input[tile_offset];
  for (int i = 0; i < ITEMS; ++i) {
    int k = i * BLOCK + linear_tid;
    items[i] = (!is_last_tile || k < num_remaining) ? input[tile_offset + k] : oob_default;
  }
  for (int i = 0; i < ITEMS; ++i) smem[i * BLOCK + linear_tid] = items[i];
#if MUTANT != 6
  __syncthreads();
#endif
  for (int i = 0; i < ITEMS; ++i) items[i] = smem[linear_tid * ITEMS + i];
#if MUTANT != 7
  __syncthreads();
#endif
  unsigned thread_prefix = items[0];
  for (int i = 1; i < ITEMS; ++i) thread_prefix += items[i];
  // WarpScanShfl::InclusiveScan, Update.
  unsigned inclusive_output = thread_prefix;
  for (int step = 0; step < 5; ++step) {
    const int offset = 1 << step;
    unsigned temp = __shfl_up_sync(0xffffffffu, inclusive_output, offset);
    if (lane_id >= offset) inclusive_output = temp + inclusive_output;
  }
  unsigned exclusive_output = inclusive_output - thread_prefix;
  if (tile_idx == 0) {
    const unsigned initial_value = 0;
    unsigned warp_prefix, block_aggregate;
    compute_warp_prefix(smem, inclusive_output, warp_prefix, block_aggregate);
    warp_prefix = initial_value + warp_prefix;
    if (warp_id == 0) warp_prefix = initial_value;
    exclusive_output = warp_prefix + exclusive_output;
    if (lane_id == 0) exclusive_output = warp_prefix;
    block_aggregate = initial_value + block_aggregate;
    if (!is_last_tile && linear_tid == 0) {
#if MUTANT != 9
      store_relaxed(tile_status + TILE_STATUS_PADDING, make_uint2(SCAN_TILE_INCLUSIVE, block_aggregate));
#else
      tile_status[TILE_STATUS_PADDING] = make_uint2(SCAN_TILE_INCLUSIVE, block_aggregate);
#endif
    }
  } else {
    unsigned warp_prefix, block_aggregate;
    compute_warp_prefix(smem, inclusive_output, warp_prefix, block_aggregate);
    if (warp_id != 0) {
      exclusive_output = warp_prefix + exclusive_output;
      if (lane_id == 0) exclusive_output = warp_prefix;
    }
    if (warp_id == 0) {
      unsigned block_prefix = lookback(smem, tile_status, error, tile_idx, block_aggregate);
      if (lane_id == 0) {
        smem[BLOCK_PREFIX] = block_prefix;
        exclusive_output = block_prefix;
      }
    }
#if MUTANT != 10
    __syncthreads();
#endif
    unsigned block_prefix = smem[BLOCK_PREFIX];
    if (linear_tid > 0) exclusive_output = block_prefix + exclusive_output;
  }
  thread_prefix = exclusive_output;
  unsigned inclusive = thread_prefix + items[0];
  items[0] = thread_prefix;
  unsigned exclusive = inclusive;
  for (int i = 1; i < ITEMS; ++i) {
    inclusive = exclusive + items[i];
    items[i] = exclusive;
    exclusive = inclusive;
  }
#if MUTANT != 11
  __syncthreads();
#endif
  for (int i = 0; i < ITEMS; ++i) smem[linear_tid * ITEMS + i] = items[i];
#if MUTANT != 12
  __syncthreads();
#endif
  for (int i = 0; i < ITEMS; ++i) {
    int k = i * BLOCK + linear_tid;
    unsigned v = smem[k];
    if (!is_last_tile || k < num_remaining) output[tile_offset + k] = v;
  }
}

int main(int argc, char** argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 1300;
  if (n < 1) n = 1;
  std::vector<unsigned> h(n);
  for (long long i = 0; i < n; ++i) h[i] = ((unsigned)i * 2654435761u) >> 22;
  const int tiles = (int)((n + TILE_ITEMS - 1) / TILE_ITEMS);
  unsigned *d_in, *d_out, *d_error;
  uint2* d_status;
  CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_out, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_status, (TILE_STATUS_PADDING + tiles) * sizeof(uint2)));
  CHECK(cudaMalloc(&d_error, sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_error, 0, sizeof(unsigned)));
  cub_scan_init<<<(tiles + 127) / 128, 128>>>(d_status, tiles);
  CHECK(cudaGetLastError());
  cub_device_scan<<<tiles, BLOCK>>>(d_in, n, d_out, d_status, d_error);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  unsigned error = 0;
  CHECK(cudaMemcpy(&error, d_error, sizeof(unsigned), cudaMemcpyDeviceToHost));
  if (error) {
    printf("FAIL a tile gave up waiting for its predecessors after %u polls\n", SPIN_LIMIT);
    return 1;
  }
  std::vector<unsigned> got(n);
  CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned run = 0;
  for (long long i = 0; i < n; ++i) {
    if (got[i] != run) {
      printf("FAIL output[%lld] = %u, expected %u\n", i, got[i], run);
      return 1;
    }
    run += h[i];
  }
  printf("PASS\n");
  return 0;
}
