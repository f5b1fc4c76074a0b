// Shared by the CUB twins: the MUTANT default, error handling, the u64 inputs of the Rust checks
// (tests/corpus/src/cub/mod.rs, input_u64) and the check of one u64 sum per block.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef MUTANT
#define MUTANT 0
#endif

// Returns 1 from the calling function (main or a helper returning int) on a CUDA error.
#define CHECK(x)                                                                               \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      printf("FAIL CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);     \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

typedef unsigned long long u64;

// input_u64 of the Rust checks: high bits set, so that a sum that dropped a half would show.
static std::vector<u64> input_u64(long long n) {
  std::vector<u64> h(n);
  for (long long i = 0; i < n; ++i) h[i] = (((u64)i * 0x9e3779b97f4a7c15ull) >> 8) | (1ull << 40);
  return h;
}

// Launches `launch(d_in, n, d_sums, blocks)` (one u64 sum per block of `block` elements into
// d_sums[block]) and compares every sum with the CPU's; prints FAIL naming `what` and returns 1 on a
// difference.
template <class Launch>
int check_block_sums(const char* what, const std::vector<u64>& h, long long n, int block, const u64* d_in,
                     u64* d_sums, Launch launch) {
  long long blocks = (n + block - 1) / block;
  CHECK(cudaMemset(d_sums, 0, blocks * sizeof(u64)));
  launch(d_in, n, d_sums, (unsigned)blocks);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<u64> got(blocks);
  CHECK(cudaMemcpy(got.data(), d_sums, blocks * sizeof(u64), cudaMemcpyDeviceToHost));
  for (long long b = 0; b < blocks; ++b) {
    u64 want = 0;
    for (long long i = b * block; i < n && i < (b + 1) * block; ++i) want += h[i];
    if (got[b] != want) {
      printf("FAIL %s sums[%lld] = %llu, expected %llu\n", what, b, got[b], want);
      return 1;
    }
  }
  return 0;
}

// The inputs on the device and room for one sum per block: 0, or 1 on a CUDA error.
static int upload_u64(const std::vector<u64>& h, int block, u64** d_in, u64** d_sums) {
  long long n = (long long)h.size();
  CHECK(cudaMalloc(d_in, n * sizeof(u64)));
  CHECK(cudaMalloc(d_sums, ((n + block - 1) / block) * sizeof(u64)));
  CHECK(cudaMemcpy(*d_in, h.data(), n * sizeof(u64), cudaMemcpyHostToDevice));
  return 0;
}
