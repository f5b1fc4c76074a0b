// The CUDA original of tests/corpus/src/cub/warp_reduce_smem.rs: CUB's WarpReduceSmem<unsigned long long, 32>
// ::Reduce<false>(input, valid_items, plus) (NVIDIA/cccl@571f2fc3bc53cd710e306ad43d58995c1fe4219f
// cub/cub/warp/specializations/warp_reduce_smem.cuh), written out without CUB headers. 128-thread
// blocks, four warps each with its own 48-element storage; lane 0 of each warp writes its sum.
//
// MUTANT 1: first __syncwarp of ReduceStep removed — Rust: warp_reduce_smem.rs line 53 removed
// MUTANT 2: second __syncwarp of ReduceStep removed — Rust: warp_reduce_smem.rs line 58 removed
//
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] cub_warp_reduce_smem.cu && ./a.out 300
#include "cub_common.cuh"

constexpr int BLOCK = 128;
constexpr int WARPS = BLOCK / 32;
constexpr int STEPS = 5;
constexpr int WARP_SMEM_ELEMENTS = 32 + 16;

__global__ void cub_warp_reduce_smem(const u64* input, long long n, u64* sums) {
  __shared__ u64 reduce[WARPS * WARP_SMEM_ELEMENTS];
  const int warp = threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  const unsigned member_mask = 0xffffffffu;
  const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  u64 item = i < n ? input[i] : 0;
  const long long warp_first = (long long)blockIdx.x * BLOCK + warp * 32;
  long long rest = n - warp_first;
  const int valid_items = (int)(rest < 0 ? 0 : (rest > 32 ? 32 : rest));
  u64* temp = reduce + warp * WARP_SMEM_ELEMENTS;
  for (int step = 0; step < STEPS; ++step) {
    const int offset = 1 << step;
    temp[lane] = item;
#if MUTANT != 1
    __syncwarp(member_mask);
#endif
    if ((int)(lane + offset) < valid_items) {
      u64 peer_addend = temp[lane + offset];
      item += peer_addend;
    }
#if MUTANT != 2
    __syncwarp(member_mask);
#endif
  }
  if (lane == 0 && i / 32 < (n + 31) / 32) {
    sums[i / 32] = item;
  }
}

int main(int argc, char** argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 300;
  if (n < 1) n = 1;
  std::vector<u64> h(n);
  for (long long i = 0; i < n; ++i) h[i] = (((u64)i * 0x9e3779b97f4a7c15ull) >> 8) | (1ull << 40);
  long long warps = (n + 31) / 32;
  u64 *d_in, *d_sums;
  CHECK(cudaMalloc(&d_in, n * sizeof(u64)));
  CHECK(cudaMalloc(&d_sums, warps * sizeof(u64)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(u64), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_sums, 0, warps * sizeof(u64)));
  cub_warp_reduce_smem<<<(unsigned)((n + BLOCK - 1) / BLOCK), BLOCK>>>(d_in, n, d_sums);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<u64> got(warps);
  CHECK(cudaMemcpy(got.data(), d_sums, warps * sizeof(u64), cudaMemcpyDeviceToHost));
  for (long long w = 0; w < warps; ++w) {
    u64 want = 0;
    for (long long i = w * 32; i < n && i < w * 32 + 32; ++i) want += h[i];
    if (got[w] != want) {
      printf("FAIL sums[%lld] = %llu, expected %llu\n", w, got[w], want);
      return 1;
    }
  }
  printf("PASS\n");
  return 0;
}
