// The CUDA original of tests/corpus/src/cub/block_exchange.rs: CUB's BlockExchange<unsigned, 128, 4>
// ::StripedToBlocked and ::BlockedToStriped without warp time slicing
// (NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f cub/cub/block/block_exchange.cuh), written out
// without CUB headers. Two kernels, both run: each block exchanges TILES = 2 tiles of 512 one after
// the other in one shared buffer, with __syncthreads between the tiles (the reuse barrier).
//
// MUTANT 1: StripedToBlocked: __syncthreads between the stores and the loads removed — Rust: block_exchange.rs line 52 removed
// MUTANT 2: BlockedToStriped: __syncthreads between the stores and the loads removed — Rust: block_exchange.rs line 69 removed
// MUTANT 3: striped-to-blocked kernel: reuse __syncthreads between tiles removed — Rust: block_exchange.rs line 107 removed
// MUTANT 4: blocked-to-striped kernel: reuse __syncthreads between tiles removed — Rust: block_exchange.rs line 142 removed
//
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] cub_block_exchange.cu && ./a.out 2100
#include "cub_common.cuh"

constexpr int BLOCK = 128;
constexpr int ITEMS = 4;
constexpr int TILES = 2;
constexpr int TILE_ITEMS = BLOCK * ITEMS;

__device__ __forceinline__ void striped_to_blocked(unsigned* buff, unsigned (&items)[ITEMS]) {
  const int linear_tid = threadIdx.x;
  for (int i = 0; i < ITEMS; ++i) buff[i * BLOCK + linear_tid] = items[i];
#if MUTANT != 1
  __syncthreads();
#endif
  for (int i = 0; i < ITEMS; ++i) items[i] = buff[linear_tid * ITEMS + i];
}

__device__ __forceinline__ void blocked_to_striped(unsigned* buff, unsigned (&items)[ITEMS]) {
  const int linear_tid = threadIdx.x;
  for (int i = 0; i < ITEMS; ++i) buff[linear_tid * ITEMS + i] = items[i];
#if MUTANT != 2
  __syncthreads();
#endif
  for (int i = 0; i < ITEMS; ++i) items[i] = buff[i * BLOCK + linear_tid];
}

__global__ void cub_block_exchange_striped_to_blocked(const unsigned* input, long long n, unsigned* output) {
  __shared__ __align__(16) unsigned buff[TILE_ITEMS];
  const int linear_tid = threadIdx.x;
  for (int t = 0; t < TILES; ++t) {
    const long long tile = ((long long)blockIdx.x * TILES + t) * TILE_ITEMS;
    unsigned items[ITEMS];
    for (int i = 0; i < ITEMS; ++i) {
      long long g = tile + i * BLOCK + linear_tid;
      items[i] = g < n ? input[g] : 0;
    }
    striped_to_blocked(buff, items);
    for (int i = 0; i < ITEMS; ++i) {
      if (i > 0) items[i] += items[i - 1];
      long long g = tile + linear_tid * ITEMS + i;
      if (g < n) output[g] = items[i];
    }
#if MUTANT != 3
    __syncthreads();
#endif
  }
}

__global__ void cub_block_exchange_blocked_to_striped(const unsigned* input, long long n, unsigned* output) {
  __shared__ __align__(16) unsigned buff[TILE_ITEMS];
  const int linear_tid = threadIdx.x;
  for (int t = 0; t < TILES; ++t) {
    const long long tile = ((long long)blockIdx.x * TILES + t) * TILE_ITEMS;
    unsigned items[ITEMS];
    for (int i = 0; i < ITEMS; ++i) {
      long long g = tile + linear_tid * ITEMS + i;
      items[i] = g < n ? input[g] : 0;
      if (i > 0) items[i] += items[i - 1];
    }
    blocked_to_striped(buff, items);
    for (int i = 0; i < ITEMS; ++i) {
      long long g = tile + i * BLOCK + linear_tid;
      if (g < n) output[g] = items[i];
    }
#if MUTANT != 4
    __syncthreads();
#endif
  }
}

int check(const char* what, const std::vector<unsigned>& h, const std::vector<unsigned>& got) {
  unsigned run = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    if (i % ITEMS == 0) run = 0;
    run += h[i];
    if (got[i] != run) {
      printf("FAIL %s output[%zu] = %u, expected %u\n", what, i, got[i], run);
      return 1;
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 2100;
  if (n < 1) n = 1;
  std::vector<unsigned> h(n), got(n);
  for (long long i = 0; i < n; ++i) h[i] = ((unsigned)i * 2654435761u) >> 22;
  unsigned *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_out, n * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  const unsigned blocks = (unsigned)((n + (long long)TILES * TILE_ITEMS - 1) / ((long long)TILES * TILE_ITEMS));
  CHECK(cudaMemset(d_out, 0, n * sizeof(unsigned)));
  cub_block_exchange_striped_to_blocked<<<blocks, BLOCK>>>(d_in, n, d_out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  if (check("striped-to-blocked", h, got)) return 1;
  CHECK(cudaMemset(d_out, 0, n * sizeof(unsigned)));
  cub_block_exchange_blocked_to_striped<<<blocks, BLOCK>>>(d_in, n, d_out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  if (check("blocked-to-striped", h, got)) return 1;
  printf("PASS\n");
  return 0;
}
