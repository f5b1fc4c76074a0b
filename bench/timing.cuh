// Timing of one GPU call for the benches (bench.cu, algos.cu): CUDA events around it, in one of two
// ways (cold: L2 flushed and the stream held while enqueuing; host: on an idle stream), and the median.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = nullptr; cuGetErrorName(r_, &s_); \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); exit(1); } } while (0)

// ---- timing --------------------------------------------------------------------------------------
// Two ways to time one launch (--timing):
//   cold (default), as CUB's own benchmarks (NVBench) time a cold measurement: the L2 cache is
//     flushed (a memset of twice its size) before each launch, and a kernel holds the stream while the
//     host enqueues the start event, the launch and the stop event, so the events time what the GPU
//     does between them, without the host's launch latency;
//   host: the start event, the launch and the stop event are enqueued on an idle stream, so the time
//     also holds the host's launch latency and the data may still be in L2 from the launch before.
enum class Timing { Cold, Host };
static Timing g_timing = Timing::Cold;
static cudaEvent_t g_ev0, g_ev1;
static volatile int* g_release;   // host-mapped: the host sets it to release the stream
static volatile int* g_held_out;  // host-mapped: the holding kernel sets it when it gave up waiting
static int *g_release_dev, *g_held_out_dev;  // their device addresses
static void* g_flush;
static size_t g_flush_bytes;
// Holds the stream until *release is set, at most limit_ns (then it sets *held_out and returns, so
// that a launch that waits for the host cannot hang the run).
__global__ void hold_stream(volatile int* release, volatile int* held_out, unsigned long long limit_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*release == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > limit_ns) { *held_out = 1; return; }
        __nanosleep(500);
    }
}
static void timing_init() {
    CK(cudaEventCreate(&g_ev0));
    CK(cudaEventCreate(&g_ev1));
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    g_flush_bytes = 2 * (size_t)l2;
    CK(cudaMalloc(&g_flush, g_flush_bytes));
    int* h;
    CK(cudaHostAlloc(&h, 2 * sizeof(int), cudaHostAllocMapped));
    h[0] = h[1] = 0;
    g_release = h;
    g_held_out = h + 1;
    CK(cudaHostGetDevicePointer((void**)&g_release_dev, h, 0));
    CK(cudaHostGetDevicePointer((void**)&g_held_out_dev, h + 1, 0));
}
static void timing_free() {
    CK(cudaEventDestroy(g_ev0));
    CK(cudaEventDestroy(g_ev1));
    CK(cudaFree(g_flush));
    CK(cudaFreeHost((void*)g_release));
}
// The time of one call of `launch` (everything it enqueues), timed as --timing says; `k` varies the
// flush's fill byte.
static float time_one(const std::function<void()>& launch, int k) {
    const bool cold = g_timing == Timing::Cold;
    if (cold) {
        CK(cudaMemsetAsync(g_flush, k & 0xff, g_flush_bytes));
        *g_release = 0;
        hold_stream<<<1, 1>>>(g_release_dev, g_held_out_dev, 2000000000ull);
        CK(cudaGetLastError());
    }
    CK(cudaEventRecord(g_ev0));
    launch();
    CK(cudaGetLastError());
    CK(cudaEventRecord(g_ev1));
    if (cold) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        *g_release = 1;
    }
    CK(cudaEventSynchronize(g_ev1));
    if (cold && *g_held_out) {
        fprintf(stderr, "--timing cold: the launch could not be enqueued while the stream was held (it waits for the "
                        "device?); time it with --timing host\n");
        exit(1);
    }
    float ms;
    CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1));
    return ms;
}
static double median(std::vector<float> t) {
    std::sort(t.begin(), t.end());
    const size_t m = t.size() / 2;
    return t.size() % 2 ? t[m] : 0.5 * ((double)t[m - 1] + t[m]);
}
