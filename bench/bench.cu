// Same-run comparison on one GPU: the Rust kernels (rustc's NVPTX backend, loaded from
// target/ptx/gpu_kernels.ptx through the driver API), the same algorithms compiled by nvcc, and CUB.
// Every implementation runs on the same device buffers; each result is checked against the others
// before it is timed. Times: CUDA events around one launch, 5 warm-up launches, median of REPS.
//
// Build and run (on a machine with the CUDA toolkit):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o bench bench/bench.cu -lcuda
//   ./bench target/ptx/gpu_kernels.ptx
#include <cuda.h>
#include <cuda_runtime.h>
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = nullptr; cuGetErrorName(r_, &s_); \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); exit(1); } } while (0)

static const int REPS = 50;
static const int BLOCK = 256;

// ---- nvcc versions of the same algorithms --------------------------------------------------------
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__global__ void nv_warp_reduce(const float* in, float* out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0 && i / 32 < (n + 31) / 32) out[i / 32] = v;
}
__global__ void nv_reduce_sum(const float* in, float* out, int n) {
    __shared__ float ws[32];
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) s += in[i];
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    s = warp_sum(s);
    if (lane == 0) ws[wid] = s;
    __syncthreads();
    s = (threadIdx.x < (blockDim.x >> 5)) ? ws[threadIdx.x] : 0.0f;
    if (wid == 0) s = warp_sum(s);
    if (threadIdx.x == 0) atomicAdd(out, s);
}
__global__ void nv_histogram(const unsigned char* data, int n, unsigned int* hist) {
    __shared__ unsigned int h[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) h[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&h[data[i]], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) if (h[i] > 0) atomicAdd(&hist[i], h[i]);
}
// CUB's warp-level primitive for the per-warp sums.
__global__ void cub_warp_reduce(const float* in, float* out, size_t n) {
    using WR = cub::WarpReduce<float>;
    __shared__ typename WR::TempStorage tmp[BLOCK / 32];
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    float s = WR(tmp[threadIdx.x / 32]).Sum(v);
    if ((threadIdx.x & 31) == 0) out[i / 32] = s;
}

// ---- timing --------------------------------------------------------------------------------------
static double median_ms(const std::function<void()>& reset, const std::function<void()>& launch) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int k = 0; k < REPS + 5; k++) {
        reset();
        CK(cudaEventRecord(a));
        launch();
        CK(cudaGetLastError());
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (k >= 5) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return t[t.size() / 2];
}

struct View { const void* ptr; size_t len; };  // gpu_kernels::Global<T> / GlobalMut<T>: #[repr(C)] {ptr, len}

struct Row { std::string algo, impl; double ms, gbps; };
static std::vector<Row> rows;
static void row(const char* algo, const char* impl, double ms, double bytes) {
    rows.push_back({algo, impl, ms, bytes / (ms * 1e6)});
}

int main(int argc, char** argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s gpu_kernels.ptx\n", argv[0]); return 2; }
    CK(cudaFree(0));  // creates the primary context, shared with the driver API below
    CUmodule mod;
    CU(cuModuleLoad(&mod, argv[1]));
    CUfunction rs_reduce, rs_hist, rs_warp;
    CU(cuModuleGetFunction(&rs_reduce, mod, "reduce_sum"));
    CU(cuModuleGetFunction(&rs_hist, mod, "histogram_privatised"));
    CU(cuModuleGetFunction(&rs_warp, mod, "warp_reduce"));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs; %d timed launches per row, median\n", prop.name, prop.multiProcessorCount, REPS);
    std::mt19937 rng(42);

    // ---- reduce_sum: 2^26 floats ----
    {
        const int n = 1 << 26;
        std::vector<float> h(n);
        std::uniform_real_distribution<float> u(0.f, 1.f);
        double ref = 0;
        for (auto& x : h) { x = u(rng); ref += x; }
        float *in, *out;
        CK(cudaMalloc(&in, n * 4));
        CK(cudaMalloc(&out, 4));
        CK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
        int grid = std::min((n + BLOCK - 1) / BLOCK, 1024);
        View vin{in, (size_t)n}, vout{out, 1};
        void* args[] = {&vin, &vout};
        auto zero = [&] { CK(cudaMemsetAsync(out, 0, 4)); };
        auto rs = [&] { CU(cuLaunchKernel(rs_reduce, grid, 1, 1, BLOCK, 1, 1, 32 * 4, 0, args, nullptr)); };
        auto nv = [&] { nv_reduce_sum<<<grid, BLOCK>>>(in, out, n); };
        void* tmp = nullptr; size_t tmp_bytes = 0;
        CK(cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, n));
        CK(cudaMalloc(&tmp, tmp_bytes));
        auto cb = [&] { CK(cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, n)); };
        for (const std::function<void()>& f : std::vector<std::function<void()>>{rs, nv}) {
            zero(); f(); CK(cudaDeviceSynchronize());
            float got; CK(cudaMemcpy(&got, out, 4, cudaMemcpyDeviceToHost));
            if (std::abs(got - ref) > 1e-4 * ref) { fprintf(stderr, "reduce mismatch %f vs %f\n", got, ref); return 1; }
        }
        cb(); CK(cudaDeviceSynchronize());
        float got; CK(cudaMemcpy(&got, out, 4, cudaMemcpyDeviceToHost));
        if (std::abs(got - ref) > 1e-4 * ref) { fprintf(stderr, "cub reduce mismatch %f vs %f\n", got, ref); return 1; }
        double bytes = (double)n * 4;
        row("reduce_sum f32 2^26", "rust (rustc nvptx)", median_ms(zero, rs), bytes);
        row("reduce_sum f32 2^26", "nvcc, same algorithm", median_ms(zero, nv), bytes);
        row("reduce_sum f32 2^26", "CUB DeviceReduce::Sum", median_ms([] {}, cb), bytes);
        CK(cudaFree(tmp)); CK(cudaFree(in)); CK(cudaFree(out));
    }
    // ---- histogram: 2^28 bytes, 256 bins ----
    {
        const int n = 1 << 28;
        std::vector<unsigned char> h(n);
        std::vector<unsigned> ref(256, 0);
        for (auto& x : h) { x = rng() & 0xff; ref[x]++; }
        unsigned char* d; unsigned* hist;
        CK(cudaMalloc(&d, n));
        CK(cudaMalloc(&hist, 256 * 4));
        CK(cudaMemcpy(d, h.data(), n, cudaMemcpyHostToDevice));
        int grid = 1024;
        View vd{d, (size_t)n}, vh{hist, 256};
        void* args[] = {&vd, &vh};
        auto zero = [&] { CK(cudaMemsetAsync(hist, 0, 256 * 4)); };
        auto rs = [&] { CU(cuLaunchKernel(rs_hist, grid, 1, 1, BLOCK, 1, 1, 256 * 4, 0, args, nullptr)); };
        auto nv = [&] { nv_histogram<<<grid, BLOCK>>>(d, n, hist); };
        void* tmp = nullptr; size_t tmp_bytes = 0;
        CK(cub::DeviceHistogram::HistogramEven(tmp, tmp_bytes, d, hist, 257, 0, 256, n));
        CK(cudaMalloc(&tmp, tmp_bytes));
        auto cb = [&] { CK(cub::DeviceHistogram::HistogramEven(tmp, tmp_bytes, d, hist, 257, 0, 256, n)); };
        for (const std::function<void()>& f : std::vector<std::function<void()>>{rs, nv, cb}) {
            zero(); f(); CK(cudaDeviceSynchronize());
            std::vector<unsigned> got(256);
            CK(cudaMemcpy(got.data(), hist, 256 * 4, cudaMemcpyDeviceToHost));
            if (got != ref) { fprintf(stderr, "histogram mismatch\n"); return 1; }
        }
        double bytes = (double)n;
        row("histogram u8 2^28", "rust (rustc nvptx)", median_ms(zero, rs), bytes);
        row("histogram u8 2^28", "nvcc, same algorithm", median_ms(zero, nv), bytes);
        row("histogram u8 2^28", "CUB HistogramEven", median_ms(zero, cb), bytes);
        CK(cudaFree(tmp)); CK(cudaFree(d)); CK(cudaFree(hist));
    }
    // ---- warp_reduce: 2^26 floats, one sum per warp ----
    {
        const size_t n = 1 << 26, w = n / 32;
        std::vector<float> h(n);
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        for (auto& x : h) x = u(rng);
        float *in, *out;
        CK(cudaMalloc(&in, n * 4));
        CK(cudaMalloc(&out, w * 4));
        CK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
        unsigned grid = (unsigned)(n / BLOCK);
        View vin{in, n}, vout{out, w};
        void* args[] = {&vin, &vout};
        auto rs = [&] { CU(cuLaunchKernel(rs_warp, grid, 1, 1, BLOCK, 1, 1, 0, 0, args, nullptr)); };
        auto nv = [&] { nv_warp_reduce<<<grid, BLOCK>>>(in, out, n); };
        auto cb = [&] { cub_warp_reduce<<<grid, BLOCK>>>(in, out, n); };
        std::vector<float> first;
        for (const std::function<void()>& f : std::vector<std::function<void()>>{rs, nv, cb}) {
            CK(cudaMemset(out, 0xff, w * 4)); f(); CK(cudaDeviceSynchronize());
            std::vector<float> got(w);
            CK(cudaMemcpy(got.data(), out, w * 4, cudaMemcpyDeviceToHost));
            for (size_t k = 0; k < w; k += 997) {
                double ref = 0, mag = 0;
                for (int j = 0; j < 32; j++) { ref += h[k * 32 + j]; mag += std::abs(h[k * 32 + j]); }
                if (!(std::abs(got[k] - ref) <= 32 * 6e-8 * mag)) { fprintf(stderr, "warp sum mismatch at %zu\n", k); return 1; }
            }
        }
        double bytes = (double)(n + w) * 4;
        row("warp_reduce f32 2^26", "rust (rustc nvptx)", median_ms([] {}, rs), bytes);
        row("warp_reduce f32 2^26", "nvcc, same algorithm", median_ms([] {}, nv), bytes);
        row("warp_reduce f32 2^26", "CUB WarpReduce", median_ms([] {}, cb), bytes);
        CK(cudaFree(in)); CK(cudaFree(out));
    }
    printf("%-22s %-24s %10s %9s %12s\n", "algorithm", "implementation", "time ms", "GB/s", "time/rust");
    for (size_t i = 0; i < rows.size(); i++) {
        const Row& rust = rows[i - i % 3];
        printf("%-22s %-24s %10.4f %9.1f %12.3f\n", rows[i].algo.c_str(), rows[i].impl.c_str(), rows[i].ms, rows[i].gbps,
               rows[i].ms / rust.ms);
    }
    printf("(time/rust: this row's median time over the Rust kernel's; above 1 means the Rust kernel is faster)\n");
    return 0;
}
