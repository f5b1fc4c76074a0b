// The CUDA original of tests/corpus/src/cub/warp_scan_smem.rs: CUB's WarpScanSmem<unsigned, 32>::InclusiveScan
// and WarpScan::InclusiveSum / ExclusiveSum (NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
// cub/cub/warp/specializations/warp_scan_smem.cuh), written out without CUB headers. 128-thread
// blocks, four warps each with its own 48-element storage.
//
// MUTANT 1: volatile store of the identity made plain — Rust: warp_scan_smem.rs line 51 made plain
// MUTANT 2: __syncwarp after the identity removed — Rust: warp_scan_smem.rs line 52 removed
// MUTANT 3: volatile store of the step's partial made plain — Rust: warp_scan_smem.rs line 57 made plain
// MUTANT 4: __syncwarp after that store removed — Rust: warp_scan_smem.rs line 58 removed
// MUTANT 5: volatile load of the addend made plain — Rust: warp_scan_smem.rs line 59 made plain
// MUTANT 6: __syncwarp after the step's load removed — Rust: warp_scan_smem.rs line 61 removed
//
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] cub_warp_scan_smem.cu && ./a.out 300
#include "cub_common.cuh"

constexpr int BLOCK = 128;
constexpr int WARPS = BLOCK / 32;
constexpr int STEPS = 5;
constexpr int HALF_WARP_THREADS = 16;
constexpr int WARP_SMEM_ELEMENTS = 32 + HALF_WARP_THREADS;

#if MUTANT == 1
#define IDENTITY_STORE(p, v) (*(p) = (v))
#else
#define IDENTITY_STORE(p, v) (*(volatile unsigned*)(p) = (v))
#endif
#if MUTANT == 3
#define STEP_STORE(p, v) (*(p) = (v))
#else
#define STEP_STORE(p, v) (*(volatile unsigned*)(p) = (v))
#endif
#if MUTANT == 5
#define STEP_LOAD(p) (*(p))
#else
#define STEP_LOAD(p) (*(volatile unsigned*)(p))
#endif

__device__ __forceinline__ unsigned inclusive_scan(unsigned* temp, unsigned lane, unsigned input) {
  const unsigned member_mask = 0xffffffffu;
  IDENTITY_STORE(&temp[lane], 0u);
#if MUTANT != 2
  __syncwarp(member_mask);
#endif
  unsigned partial = input;
  for (int step = 0; step < STEPS; ++step) {
    const int offset = 1 << step;
    STEP_STORE(&temp[HALF_WARP_THREADS + lane], partial);
#if MUTANT != 4
    __syncwarp(member_mask);
#endif
    unsigned addend = STEP_LOAD(&temp[HALF_WARP_THREADS + lane - offset]);
    partial = addend + partial;
#if MUTANT != 6
    __syncwarp(member_mask);
#endif
  }
  return partial;
}

__global__ void cub_warp_scan_smem(const unsigned* input, long long n, unsigned* inclusive, unsigned* exclusive) {
  __shared__ unsigned storage[WARPS * WARP_SMEM_ELEMENTS];
  unsigned* temp = storage + (threadIdx.x / 32) * WARP_SMEM_ELEMENTS;
  const unsigned lane = threadIdx.x % 32;
  const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  unsigned item = i < n ? input[i] : 0;
  unsigned inc = inclusive_scan(temp, lane, item);             // WarpScan::InclusiveSum
  unsigned inc2 = 0u + inclusive_scan(temp, lane, item);       // WarpScan::ExclusiveSum: scan, then Update
  unsigned exc = inc2 - item;
  if (i < n) {
    inclusive[i] = inc;
    exclusive[i] = exc;
  }
}

int main(int argc, char** argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 300;
  if (n < 1) n = 1;
  std::vector<unsigned> h(n);
  for (long long i = 0; i < n; ++i) h[i] = ((unsigned)i * 2654435761u) >> 22;
  unsigned *d_in, *d_inc, *d_exc;
  CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_inc, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_exc, n * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  cub_warp_scan_smem<<<(unsigned)((n + BLOCK - 1) / BLOCK), BLOCK>>>(d_in, n, d_inc, d_exc);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> inc(n), exc(n);
  CHECK(cudaMemcpy(inc.data(), d_inc, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(exc.data(), d_exc, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned run = 0;
  for (long long i = 0; i < n; ++i) {
    if (i % 32 == 0) run = 0;
    if (exc[i] != run) {
      printf("FAIL exclusive[%lld] = %u, expected %u\n", i, exc[i], run);
      return 1;
    }
    run += h[i];
    if (inc[i] != run) {
      printf("FAIL inclusive[%lld] = %u, expected %u\n", i, inc[i], run);
      return 1;
    }
  }
  printf("PASS\n");
  return 0;
}
