// Performance benchmark on one GPU, the study behind the library's kernels: the Rust kernels
// (rustc's NVPTX backend: the chapter's from gpu_kernels.ptx, the library's and their variants from
// gpu_algos_kernels.ptx, loaded through the driver API), the same algorithms compiled by nvcc, CUB,
// and a read-limit proxy, all on the same device buffers. (bench/algos.cu times every call of the
// library against CUB; this program keeps the nvcc twins and the tuning rows.)
//
// Build and run (on a machine with the CUDA toolkit):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o bench bench/bench.cu -lcuda
//   ./bench target/ptx/gpu_kernels.ptx gpu-algos/ptx/gpu_algos_kernels.ptx --csv bench/study/results.csv
//           [--reps 50] [--hist-blocks-per-sm 1]
//           [--only WORKLOAD-SUBSTRING] [--sweep [--kmin K] [--kmax K]] [--tune] [--timing cold|host]
//   --sweep: every power of two from 2^10 to 2^30 (f64 to 2^29) for reduce f32/f64/i32 (fast and
//            deterministic tiers), the histogram (uniform, one-bin, Zipf) and the scan, without the
//            chapter kernels' rows (bench/sweep-cold.csv with the default timing, bench/sweep.csv with
//            --timing host; bench/sweep.md);
//   --tune:  extra rows with launch shapes other than the launchers' (named "tune ..."), to choose them.
//
// For each workload one table is printed, with a row per implementation:
//   time ms  median of --reps (default 50; 200 up to 2^20 in --sweep) launches, each timed with CUDA
//            events, after 5 warm-ups; the rows of a table are timed interleaved (round k launches
//            every implementation once, starting with the k-th), so that a drift of the GPU's clocks or
//            of the host during a table weighs on every row alike (the proxies are timed before);
//            cold (default): L2 flushed before each launch and the launch enqueued behind a kernel that
//            holds the stream, so the events time the GPU's work only (NVBench's cold measurement);
//            --timing host: events around the host's launch, data left in L2 (see "timing" below; the
//            committed bench/results.csv is host-timed);
//            a launch includes the memset of the output where the kernel needs a zeroed output;
//   GB/s     the bytes the workload reads (and writes, for warp_reduce) over the median time;
//   %limit   this row's GB/s over the read-limit proxy's GB/s, x 100;
//   vs CUB   CUB's time over this row's time (above 1: faster than CUB).
// Every implementation's result is checked before it is timed, and again after all timed launches;
// a mismatch stops the run with the workload and the implementation named. All rows are written to
// the CSV file; a summary line per workload closes the run (the fastest Rust tier against CUB and
// against the nvcc build of the same algorithm).
#include "timing.cuh"
#include <cuda.h>
#include <cuda_runtime.h>
#include <cub/cub.cuh>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

static const int WARMUP = 5;
static int g_reps = 50;
static int g_sms = 0;
// --sweep: only the rows that compare tiers (proxy, CUB, nvcc twins, Rust tiers), at every size.
static bool g_sweep = false;
// --tune: extra rows with other launch shapes than the launchers choose (labelled "tune ...").
static bool g_tune = false;
// --kmin K, --kmax K: the sweep's smallest and largest log2 n (default 10 and 30).
static int g_kmin = 10, g_kmax = 30;

// gpu_kernels::Global<T> / GlobalMut<T> / Output<T, _>: #[repr(C)] {ptr, len}, passed by value (16 bytes).
struct View { const void* ptr; size_t len; };

// ==== device code ==================================================================================

// ---- read-limit proxy ----------------------------------------------------------------------------
// Reads the workload's input bytes as 16-byte read-only vectors (ld.global.nc.v4) in a grid-stride loop
// and xors them into a register. It computes nothing and so is not checked: it only measures how fast
// these bytes can be read. The xor is written out only if it equals a sentinel passed at run time (a
// practically impossible match, which the compiler cannot rule out), so no load can be removed.
static const int PROXY_BLOCK = 256, PROXY_BLOCKS_PER_SM = 8;
static const unsigned PROXY_SENTINEL = 0x9e3779b9u;
__device__ __forceinline__ unsigned xor4(uint4 v) { return (v.x ^ v.y) ^ (v.z ^ v.w); }
// One vector load per iteration.
__global__ void __launch_bounds__(PROXY_BLOCK) proxy_read1(const uint4* p, size_t nv, unsigned sentinel, unsigned* sink) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned acc = 0;
#pragma unroll 1
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += stride) acc ^= xor4(__ldg(p + i));
    if (acc == sentinel) *sink = acc;
}
// Two independent vector loads per iteration.
__global__ void __launch_bounds__(PROXY_BLOCK) proxy_read2(const uint4* p, size_t nv, unsigned sentinel, unsigned* sink) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned a0 = 0, a1 = 0;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll 1
    for (; i + stride < nv; i += 2 * stride) {
        const uint4 v0 = __ldg(p + i), v1 = __ldg(p + i + stride);
        a0 ^= xor4(v0);
        a1 ^= xor4(v1);
    }
    if (i < nv) a0 ^= xor4(__ldg(p + i));
    const unsigned acc = a0 ^ a1;
    if (acc == sentinel) *sink = acc;
}

// ---- copy proxy (read + write, for the scan) ------------------------------------------------------
// Copies the scan's input to its output with 16-byte loads and stores in a grid-stride loop: the bytes a
// scan must move, without the scan. The proxy row of a scan table is the faster of this kernel and
// cudaMemcpyAsync (device to device).
static const char* COPY_PROXY_NAME = "copy proxy (read + write)";
__global__ void __launch_bounds__(PROXY_BLOCK) proxy_copy(const uint4* __restrict__ p, uint4* __restrict__ q, size_t nv) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll 1
    for (; i + stride < nv; i += 2 * stride) {
        const uint4 a = __ldg(p + i), b = __ldg(p + i + stride);
        q[i] = a;
        q[i + stride] = b;
    }
    if (i < nv) q[i] = __ldg(p + i);
}

// ---- chapter kernels (nvcc twins of reduce_sum, histogram_privatised, warp_reduce) ----------------
static const int BLOCK = 256;
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

// ---- reduce_fast / reduce_deterministic (nvcc twin of gpu_kernels::reduce_fast) --------------------
// The vectors of the input are cut into tiles of 4 x 512 vectors; tile k belongs to virtual block
// k mod vblocks. Block b sums virtual blocks b, b + gridDim.x, ...: each thread loads its four vectors of
// a tile (t, t + B, t + 2B, t + 3B) before adding any, into four accumulators; then a block tree gives
// one partial per virtual block. The last block to draw a ticket adds the partials, the head and the
// tail in a fixed order. The bits depend on the input and `vblocks` only. Up to 256 KiB both tiers
// launch nv_reduce_small (below: one block, the bits of vblocks = 1). Above, the fast tier launches
// vblocks = grid = one block per resident slot (fewer for small inputs); the deterministic tier
// launches vblocks = clamp(ceil(n / 4096), 1, 396), on one block up to 2 virtual blocks, else on at
// most that many blocks.
static const int RF_BLOCK = 512, RF_MIN_BLOCKS = 3, RF_SHARED = 256, RF_UNROLL = 4, RF_MAX_DET_VBLOCKS = 396;
static const size_t RF_MIN_VBLOCK_ELEMS = 4096;
// gpu_kernels::reduce_fast::fast_grid: one block up to RF_ONE_BLOCK_MAX_VECTORS (128 KiB); above, one
// block per resident slot, but no more blocks than ceil(vectors / RF_MIN_BLOCK_VECTORS), so that a
// small input is not spread over hundreds of nearly idle blocks whose partials the last block must add.
static const size_t RF_MIN_BLOCK_VECTORS = 2048, RF_ONE_BLOCK_MAX_VECTORS = 4 * RF_MIN_BLOCK_VECTORS;
static unsigned rf_fast_grid(size_t nv, unsigned resident) {
    if (nv <= RF_ONE_BLOCK_MAX_VECTORS) return 1;
    const size_t want = std::max<size_t>(1, (nv + RF_MIN_BLOCK_VECTORS - 1) / RF_MIN_BLOCK_VECTORS);
    return (unsigned)std::min<size_t>(want, resident);
}
// gpu_kernels::reduce_fast::deterministic_grid: one block up to RF_DET_ONE_BLOCK_VBLOCKS virtual
// blocks, else one block per virtual block, at most one per resident slot.
static const unsigned RF_DET_ONE_BLOCK_VBLOCKS = 2;
static unsigned rf_det_grid(unsigned vblocks, unsigned resident) {
    return vblocks <= RF_DET_ONE_BLOCK_VBLOCKS ? 1 : std::min(vblocks, resident);
}

template <typename T> __device__ __forceinline__ T add(T a, T b) { return a + b; }
template <> __device__ __forceinline__ int add<int>(int a, int b) { return (int)((unsigned)a + (unsigned)b); }  // wraps

// V: the 16-byte vector of T; vsum: its lanes added in a fixed order.
template <typename T> struct Vec;
template <> struct Vec<float> {
    using V = float4;
    __device__ static __forceinline__ float vsum(float4 v) { return (v.x + v.y) + (v.z + v.w); }
};
template <> struct Vec<double> {
    using V = double2;
    __device__ static __forceinline__ double vsum(double2 v) { return v.x + v.y; }
};
template <> struct Vec<int> {
    using V = int4;
    __device__ static __forceinline__ int vsum(int4 v) { return add(add(v.x, v.y), add(v.z, v.w)); }
};

template <typename T> __device__ __forceinline__ T warp_xor_sum(T v) {
    for (int o = 16; o > 0; o >>= 1) v = add(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// The block's sum, valid in thread 0; every thread must call it; warp_sums may be reused on return.
template <typename T> __device__ __forceinline__ T block_sum(T v, T* warp_sums) {
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    v = warp_xor_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    T total = T(0);
    if (warp == 0) total = warp_xor_sum(lane < nwarps ? warp_sums[lane] : T(0));
    __syncthreads();
    return total;
}

// Tuning switches of the nvcc build (0 in the twin): HINT, how the vectors are loaded: 0 ld.global,
// 1 ld.global.nc, 2 ld.global.cs, 3 ld.global.nc.L2::256B; CONTIG: virtual block c sums a contiguous
// run of tiles instead of tiles c, c + vblocks, ...
template <int HINT, typename V> __device__ __forceinline__ V rf_load(const V* p) {
    if (HINT == 1) return __ldg(p);
    if (HINT == 2) return __ldcs(p);
    if (HINT == 3) {
        if constexpr (sizeof(typename std::remove_reference<decltype(p->x)>::type) == 8) {
            double2 r;
            asm volatile("ld.global.nc.L2::256B.v2.f64 {%0, %1}, [%2];" : "=d"(r.x), "=d"(r.y) : "l"(p));
            return *reinterpret_cast<V*>(&r);
        } else {
            uint4 r;
            asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
            return *reinterpret_cast<V*>(&r);
        }
    }
    return *p;
}
template <typename T, int HINT = 0, int U = RF_UNROLL, int CONTIG = 0>
__global__ void __launch_bounds__(RF_BLOCK, RF_MIN_BLOCKS)  // as the Rust kernel: #[launch_bounds(512, 3)]
nv_reduce_fast(const T* in, size_t n, unsigned vblocks, T* partials, unsigned* ticket, T* out) {
    using V = typename Vec<T>::V;
    constexpr size_t L = 16 / sizeof(T), B = RF_BLOCK, TILE = U * B;
    extern __shared__ __align__(16) unsigned char rf_shared[];
    T* warp_sums = reinterpret_cast<T*>(rf_shared);
    // head: elements before the first 16-byte boundary; nv: whole vectors after it; tail: the rest.
    const size_t mis = (size_t)((uintptr_t)in % 16);
    size_t head = mis ? (16 - mis) / sizeof(T) : 0;
    if (head > n) head = n;
    const size_t nv = (n - head) / L, tail = n - head - nv * L;
    const V* vin = reinterpret_cast<const V*>(in + head);  // plain 16-byte loads (ld.global.v4 / .v2)

    const size_t ntiles = (nv + TILE - 1) / TILE, per = (ntiles + vblocks - 1) / vblocks;
    // One block, one virtual block: the block's sum is the result (no partial, no second block sum).
    const bool alone = gridDim.x == 1 && vblocks == 1;
    for (unsigned c = blockIdx.x; c < vblocks; c += gridDim.x) {
        T acc[U];
#pragma unroll
        for (size_t u = 0; u < U; u++) acc[u] = T(0);
        size_t i = (CONTIG ? (size_t)c * per : (size_t)c) * TILE + threadIdx.x;
        const size_t step = CONTIG ? TILE : (size_t)vblocks * TILE;
        const size_t end = CONTIG && ((size_t)c + 1) * per * TILE < nv ? ((size_t)c + 1) * per * TILE : nv;
        while (i + (U - 1) * B < end) {  // all of this thread's vectors of the tile exist
            V v[U];
#pragma unroll
            for (size_t u = 0; u < U; u++) v[u] = rf_load<HINT>(&vin[i + u * B]);
#pragma unroll
            for (size_t u = 0; u < U; u++) acc[u] = add(acc[u], Vec<T>::vsum(v[u]));
            i += step;
        }
        if (i < end) {  // the last, cut-short tile: all loads issued together, those past the end not added
            V v[U];
#pragma unroll
            for (size_t u = 0; u < U; u++) v[u] = vin[i + u * B < end ? i + u * B : end - 1];
#pragma unroll
            for (size_t u = 0; u < U; u++) acc[u] = add(acc[u], i + u * B < end ? Vec<T>::vsum(v[u]) : T(0));
        }
#pragma unroll
        for (size_t u = 4; u < U; u++) acc[u % 4] = add(acc[u % 4], acc[u]);
        const T s = block_sum(add(add(acc[0], acc[1]), add(acc[2], acc[3])), warp_sums);
        if (alone) {
            if (threadIdx.x == 0) {
                T r = add(T(0), s);
                for (size_t j = 0; j < head; j++) r = add(r, in[j]);
                for (size_t j = 0; j < tail; j++) r = add(r, in[head + nv * L + j]);
                *out = r;
            }
            return;
        }
        if (threadIdx.x == 0) partials[c] = s;
    }
    // Publish the partials (fence, then the ticket), draw a ticket; the last block's thread 0 fences
    // after its add, and the barrier passes what it acquired on to its block.
    // One block: it is the last; no ticket, no fences.
    int last = gridDim.x == 1;
    if (!last && threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
        if (last) __threadfence();
    }
    if (__syncthreads_or(last)) {
        T s = T(0);
        for (size_t k = threadIdx.x; k < vblocks; k += B) s = add(s, partials[k]);
        s = block_sum(s, warp_sums);
        if (threadIdx.x == 0) {
            for (size_t j = 0; j < head; j++) s = add(s, in[j]);
            for (size_t j = 0; j < tail; j++) s = add(s, in[head + nv * L + j]);
            *out = s;
            if (gridDim.x > 1) atomicExch(ticket, 0u);  // every block has drawn its ticket: ready for the next launch
        }
    }
}

// Twin of gpu_kernels::reduce_fast::reduce_small_*: reduce_fast's one-block sum (vblocks = 1: the
// same additions in the same order, so the same bits) with 32-bit indices; a one-tile input in line,
// longer ones RF_SMALL_AHEAD tiles at a time in a function of its own (all their loads in flight
// together); one barrier. The launchers use it up to RF_SMALL_MAX_VECTORS (256 KiB).
static const size_t RF_SMALL_MAX_VECTORS = 16384;
static const int RF_SMALL_AHEAD = 4;
template <typename T, int AHEAD>
__device__ __forceinline__ void rf_small_tiles(T (&acc)[RF_UNROLL], const typename Vec<T>::V* vin, unsigned nv, unsigned base) {
    using V = typename Vec<T>::V;
    constexpr unsigned B = RF_BLOCK, U = RF_UNROLL;
    V v[AHEAD][U];
#pragma unroll
    for (int k = 0; k < AHEAD; k++)
#pragma unroll
        for (int u = 0; u < (int)U; u++) {
            const unsigned i = base + threadIdx.x + k * U * B + u * B;
            v[k][u] = vin[i < nv ? i : nv - 1];
        }
#pragma unroll
    for (int k = 0; k < AHEAD; k++)
#pragma unroll
        for (int u = 0; u < (int)U; u++) {
            const unsigned i = base + threadIdx.x + k * U * B + u * B;
            acc[u] = add(acc[u], i < nv ? Vec<T>::vsum(v[k][u]) : T(0));
        }
}
template <typename T>
__device__ __noinline__ void rf_small_tiles_loop(T (&acc)[RF_UNROLL], const typename Vec<T>::V* vin, unsigned nv) {
    for (unsigned base = 0; base < nv; base += RF_SMALL_AHEAD * RF_UNROLL * RF_BLOCK)
        rf_small_tiles<T, RF_SMALL_AHEAD>(acc, vin, nv, base);
}
template <typename T>
__global__ void __launch_bounds__(RF_BLOCK, 1) nv_reduce_small(const T* in, size_t n, T* out) {
    using V = typename Vec<T>::V;
    constexpr size_t L = 16 / sizeof(T);
    extern __shared__ __align__(16) unsigned char rf_shared[];
    T* warp_sums = reinterpret_cast<T*>(rf_shared);
    const size_t mis = (size_t)((uintptr_t)in % 16);
    size_t head = mis ? (16 - mis) / sizeof(T) : 0;
    if (head > n) head = n;
    const size_t nv64 = (n - head) / L, tail = n - head - nv64 * L;
    if (nv64 > ((size_t)1 << 31)) __trap();  // 32-bit indices, as the Rust kernel's limit
    const unsigned nv = (unsigned)nv64;
    const V* vin = reinterpret_cast<const V*>(in + head);
    T acc[RF_UNROLL] = {T(0), T(0), T(0), T(0)};
    if (nv > RF_UNROLL * RF_BLOCK) rf_small_tiles_loop<T>(acc, vin, nv);
    else if (nv > 0) rf_small_tiles<T, 1>(acc, vin, nv, 0);
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const T s = warp_xor_sum(add(add(acc[0], acc[1]), add(acc[2], acc[3])));
    if (lane == 0) warp_sums[warp] = s;
    __syncthreads();
    if (warp == 0) {
        T r = warp_xor_sum(lane < RF_BLOCK / 32 ? warp_sums[lane] : T(0));
        if (lane == 0) {
            r = add(T(0), r);
            for (size_t j = 0; j < head; j++) r = add(r, in[j]);
            for (size_t j = 0; j < tail; j++) r = add(r, in[head + nv64 * L + j]);
            *out = r;
        }
    }
}


// ---- histogram_fast (nvcc twin of gpu_kernels::histogram_fast) -------------------------------------
// One column of 256 shared bins per lane, counts[bin * 32 + lane]: lane l only touches bank l, so warp
// updates have no bank conflicts and no same-address contention on any input. 16-byte loads, four in
// flight per thread, grid-stride. Each warp then folds the 32 columns of its bins with a butterfly and
// adds the non-zero totals to the global bins.
static const int HF_BLOCK = 1024, HF_SHARED = 256 * 32 * 4;
// gpu_kernels::histogram_fast::grid: BLOCKS_PER_SM blocks per SM (at most what fits), but no more
// blocks than ceil(n / HF_MIN_BLOCK_BYTES) (at least one): each block zeroes and merges 32 KiB of
// counters, worth it only over enough bytes.
// Small inputs: one block per HF_SMALL_BLOCK_BYTES up to HF_SMALL_GRID blocks when that is more.
static const size_t HF_MIN_BLOCK_BYTES = 64 * 1024, HF_SMALL_BLOCK_BYTES = 16 * 1024, HF_SMALL_GRID = 16;
static unsigned hf_grid(size_t n, unsigned full) {
    const size_t small = std::min<size_t>((n + HF_SMALL_BLOCK_BYTES - 1) / HF_SMALL_BLOCK_BYTES, HF_SMALL_GRID);
    const size_t want = std::max<size_t>({1, (n + HF_MIN_BLOCK_BYTES - 1) / HF_MIN_BLOCK_BYTES, small});
    return (unsigned)std::min<size_t>(want, full);
}
__device__ __forceinline__ void hf_count_word(unsigned* counts, unsigned lane, unsigned w) {
#pragma unroll
    for (int k = 0; k < 4; k++) atomicAdd(&counts[((w >> (8 * k)) & 0xffu) * 32 + lane], 1u);
}
__device__ __forceinline__ void hf_count_vec(unsigned* counts, unsigned lane, uint4 v) {
    hf_count_word(counts, lane, v.x);
    hf_count_word(counts, lane, v.y);
    hf_count_word(counts, lane, v.z);
    hf_count_word(counts, lane, v.w);
}
// The counting phase both kernels below share: zero the block's 256 x 32 counters, count this block's
// share of the vectors (LOADS 16-byte read-only loads in flight per thread, grid-stride) and, in block 0,
// the bytes before the first and after the last 16-byte boundary; ends with a barrier.
template <int LOADS>
__device__ __forceinline__ void hf_count_block(const unsigned char* data, size_t n, unsigned* counts) {
    for (unsigned k = threadIdx.x; k < 256 * 32; k += blockDim.x) counts[k] = 0;
    __syncthreads();
    const unsigned lane = threadIdx.x & 31;
    const size_t mis = (size_t)((uintptr_t)data % 16);
    size_t head = mis ? 16 - mis : 0;
    if (head > n) head = n;
    const size_t nv = (n - head) / 16, tail = n - head - nv * 16;
    const uint4* vp = reinterpret_cast<const uint4*>(data + head);  // 16-byte loads, read-only cache (ld.global.nc)
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    while (i + (LOADS - 1) * stride < nv) {
        uint4 v[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; u++) v[u] = __ldg(vp + i + u * stride);
#pragma unroll
        for (int u = 0; u < LOADS; u++) hf_count_vec(counts, lane, v[u]);
        i += LOADS * stride;
    }
    for (; i < nv; i += stride) hf_count_vec(counts, lane, __ldg(vp + i));
    // The bytes before the first and after the last 16-byte boundary (fewer than 32): block 0 counts them.
    if (blockIdx.x == 0 && threadIdx.x < head + tail) {
        const size_t t = threadIdx.x;
        const unsigned b = t < head ? data[t] : data[head + nv * 16 + (t - head)];
        atomicAdd(&counts[b * 32 + lane], 1u);
    }
    __syncthreads();
}
// LOADS: 16-byte loads in flight per thread (the Rust kernel's histogram_fast::LOADS); ROT: block b starts
// its merge at bin 32 * b mod 256 (as the Rust kernel), else at bin 0.
template <int LOADS = 4, int ROT = 1>
__global__ void __launch_bounds__(HF_BLOCK) nv_histogram_fast(const unsigned char* data, size_t n, unsigned* hist) {
    extern __shared__ unsigned hf_counts[];  // 256 bins x 32 lanes
    hf_count_block<LOADS>(data, n, hf_counts);
    const unsigned lane = threadIdx.x & 31, nwarps = blockDim.x >> 5, first = ROT ? (blockIdx.x * 32) % 256 : 0;
    for (unsigned k = threadIdx.x >> 5; k < 256; k += nwarps) {
        const unsigned b = (first + k) % 256;
        unsigned c = hf_counts[b * 32 + lane];
        for (int o = 16; o > 0; o >>= 1) c += __shfl_xor_sync(0xffffffffu, c, o);
        if (lane == 0 && c) atomicAdd(&hist[b], c);
    }
}

// ---- histogram_small (nvcc twin of gpu_kernels::histogram_small: COPIES = 1) ----------------------
// Blocks of 256 threads with COPIES histograms of 256 shared bins (1 KiB each; warp w counts into copy
// w % COPIES), 16-byte read-only loads, one vector per thread per iteration, grid-stride; then each
// thread adds bin t of every copy and adds the total to the global bin. Few counters to zero and merge
// per block, so small inputs can be spread over many blocks. The launcher's grid (hs_grid): one block
// per 4 KiB up to 1 MiB, per 16 KiB up to HS_MAX_BYTES, at most 8 per SM; above, histogram_fast runs.
static const size_t HS_MAX_BYTES = (size_t)1 << 23;
static unsigned hs_grid(size_t n) {
    const size_t per = n <= ((size_t)1 << 20) ? 4096 : 16384;
    return (unsigned)std::min<size_t>(std::max<size_t>(1, (n + per - 1) / per), (size_t)g_sms * 8);
}
template <int COPIES>
__global__ void __launch_bounds__(256) nv_histogram_small(const unsigned char* data, size_t n, unsigned* hist) {
    __shared__ unsigned h[COPIES * 256];
    for (unsigned k = threadIdx.x; k < COPIES * 256; k += blockDim.x) h[k] = 0;
    __syncthreads();
    unsigned* mine = h + ((threadIdx.x >> 5) % COPIES) * 256;
    const size_t mis = (size_t)((uintptr_t)data % 16);
    size_t head = mis ? 16 - mis : 0;
    if (head > n) head = n;
    const size_t nv = (n - head) / 16, tail = n - head - nv * 16;
    const uint4* vp = reinterpret_cast<const uint4*>(data + head);
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += stride) {
        const uint4 v = __ldg(vp + i);
        const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int k = 0; k < 4; k++) atomicAdd(&mine[(w[j] >> (8 * k)) & 0xffu], 1u);
    }
    if (blockIdx.x == 0 && threadIdx.x < head + tail) {
        const size_t t = threadIdx.x;
        atomicAdd(&mine[t < head ? data[t] : data[head + nv * 16 + (t - head)]], 1u);
    }
    __syncthreads();
    unsigned c = 0;
#pragma unroll
    for (int k = 0; k < COPIES; k++) c += h[k * 256 + threadIdx.x];
    if (c) atomicAdd(&hist[threadIdx.x], c);
}

// --tune variant of the twin: no zeroed output and no global atomics. Each block writes its 256 totals
// to partials[blockIdx.x * 256 + bin] (plain stores), publishes them (fence, then a ticket), and the last
// block adds the partials of every block per bin and stores the bins (the reduce's fence + ticket pattern).
__global__ void __launch_bounds__(HF_BLOCK) nv_histogram_ticket(const unsigned char* data, size_t n, unsigned* partials,
                                                                unsigned* ticket, unsigned* hist) {
    extern __shared__ unsigned hf_counts[];
    hf_count_block<4>(data, n, hf_counts);
    const unsigned lane = threadIdx.x & 31, nwarps = blockDim.x >> 5;
    for (unsigned b = threadIdx.x >> 5; b < 256; b += nwarps) {
        unsigned c = hf_counts[b * 32 + lane];
        for (int o = 16; o > 0; o >>= 1) c += __shfl_xor_sync(0xffffffffu, c, o);
        if (lane == 0) partials[(size_t)blockIdx.x * 256 + b] = c;
    }
    __shared__ int last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
        if (last) __threadfence();
    }
    __syncthreads();
    if (!last) return;
    // 4 threads per bin, each adding every 4th block's total; shared memory adds the 4.
    const unsigned bin = threadIdx.x & 255, part = threadIdx.x >> 8;
    unsigned c = 0;
    for (unsigned g = part; g < gridDim.x; g += 4) c += partials[(size_t)g * 256 + bin];
    hf_counts[part * 256 + bin] = c;
    __syncthreads();
    if (threadIdx.x < 256) {
        hist[bin] = hf_counts[bin] + hf_counts[256 + bin] + hf_counts[512 + bin] + hf_counts[768 + bin];
        if (threadIdx.x == 0) *ticket = 0;
    }
}

// ---- scan (nvcc twin of gpu_kernels::scan, with variants for --tune) ------------------------------
// Tiles of blockDim.x * ITEMS elements; warp w owns 32 * ITEMS consecutive elements, read as ITEMS / 4
// chunks of 32 uint4 (lane l: vector l of each chunk). Before the look-back each thread sums its
// elements and the warp sums those (butterfly); warp totals go through shared memory and warp 0 scans
// them; after it, per chunk: thread scan of 4, warp scan (shfl.up) of the vector totals, a carry over
// chunks from the warp's prefix, then the store. Tile ids
// from a ticket (TICKET) or blockIdx; status words: flag << 32 | value, published with st.release.gpu,
// polled per lane with ld.acquire.gpu (ACQ = 1) or ld.relaxed.gpu and one fence.acq_rel.gpu after the
// wait (ACQ = 0), with a nanosleep(SLEEP) back-off after 8 polls (every poll from SLEEP >= 256; SLEEP = 0:
// none); PRE: nanosleep(PRE) after publishing the aggregate, before the first poll; EARLY: the warp polls
// its window together and stops as soon as every tile from the nearest one holding its inclusive prefix
// is published (instead of each lane waiting for its tile); MINT: grids of fewer tiles do not sleep.
// CS: bit 0 streaming stores (st.global.cs), bit 1 streaming loads (ld.global.cs); SCANFIRST: the in-tile
// scan before the look-back (only the prefix is added after it). The twin of scan_u32 (SC_TWIN): SLEEP
// 650, PRE 1500, per-lane polling, CS 3, MINT 512, no SCANFIRST. Every variant takes the launch's
// epoch: a status word's high half is epoch * 4 + flag, and a word of another epoch reads as not
// published, so the words need no zeroing between launches with different epochs (epoch 0: zeroed
// words); the block that draws the last ticket resets the ticket.
__device__ __forceinline__ unsigned long long sc_ld_acquire(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned long long sc_ld_relaxed(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void sc_st_release(unsigned long long* p, unsigned long long v) {
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned sc_warp_incl(unsigned v, unsigned lane) {
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned u = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= (unsigned)o) v += u;
    }
    return v;
}
__device__ __forceinline__ unsigned sc_warp_sum(unsigned x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}
// One chunk of a warp's segment scanned from `carry` (the sum before it), which becomes the sum up to
// its end: the thread's four elements, then the warp's 32 vector totals (shfl.up).
__device__ __forceinline__ void sc_scan_chunk(uint4& r, unsigned& carry, unsigned lane) {
    r.y += r.x; r.z += r.y; r.w += r.z;
    const unsigned inc = sc_warp_incl(r.w, lane);
    const unsigned up = __shfl_up_sync(0xffffffffu, inc, 1);
    const unsigned before = lane == 0 ? carry : carry + up;
    carry += __shfl_sync(0xffffffffu, inc, 31);
    r.x += before; r.y += before; r.z += before; r.w += before;
}
template <int SLEEP>
__device__ __forceinline__ void sc_backoff(int spins) {
    if (SLEEP > 0 && spins > (SLEEP >= 256 ? 0 : 8)) __nanosleep(SLEEP);
}
// A status word's state for a launch with tag `epoch`: the high half holds epoch * 4 + flag, so a word
// written by a launch with another epoch reads as 0 (not published). Epoch 0 (the words zeroed before
// the launch) reads the flag as it is.
__device__ __forceinline__ unsigned sc_flag(unsigned long long word, unsigned epoch) {
    const unsigned hi = (unsigned)(word >> 32);
    return (hi >> 2) == epoch ? (hi & 3u) : 0u;
}
__device__ __forceinline__ unsigned long long sc_pack(unsigned flag, unsigned epoch, unsigned v) {
    return ((unsigned long long)(epoch * 4u + flag) << 32) | v;
}
// Warp 0's look-back for tile > 0 (see the switches above); returns the tile's exclusive prefix.
template <int ACQ, int SLEEP, int PRE, int EARLY>
__device__ __forceinline__ unsigned sc_look_back(unsigned long long* state, size_t tile, unsigned agg, unsigned lane, unsigned epoch) {
    unsigned long long* status = state + 2;
    if (lane == 0) sc_st_release(status + tile, sc_pack(1, epoch, agg));
    if (PRE > 0) __nanosleep(PRE);
    unsigned prefix = 0;
    long long hi = (long long)tile - 1;
    while (true) {
        const long long me = hi - (long long)lane;
        unsigned long long word = sc_pack(2, epoch, 0);
        unsigned pre;
        if (EARLY) {
            int spins = 0;
            while (true) {
                if (me >= 0) word = sc_ld_acquire(status + me);
                const unsigned inv = __ballot_sync(0xffffffffu, sc_flag(word, epoch) == 0);
                pre = __ballot_sync(0xffffffffu, sc_flag(word, epoch) == 2);
                const unsigned need = pre ? ((pre & (0u - pre)) << 1) - 1u : 0xffffffffu;
                if ((inv & need) == 0) break;
                if (++spins >= (1 << 22)) {
                    if (lane == 0) atomicOr(state + 1, 1ull);
                    return prefix;
                }
                sc_backoff<SLEEP>(spins);
            }
        } else {
            if (me >= 0) {
                int spins = 0;
                while (true) {
                    word = ACQ ? sc_ld_acquire(status + me) : sc_ld_relaxed(status + me);
                    if (sc_flag(word, epoch) != 0 || spins >= (1 << 22)) break;
                    spins++;
                    sc_backoff<SLEEP>(spins);
                }
            }
            if (!ACQ) __threadfence();
            if (__any_sync(0xffffffffu, sc_flag(word, epoch) == 0)) {
                if (lane == 0) atomicOr(state + 1, 1ull);
                return prefix;
            }
            pre = __ballot_sync(0xffffffffu, sc_flag(word, epoch) == 2);
        }
        if (pre) {
            const unsigned nearest = __ffs(pre) - 1;
            prefix += sc_warp_sum(lane <= nearest ? (unsigned)word : 0);
            break;
        }
        prefix += sc_warp_sum((unsigned)word);
        hi -= 32;
    }
    if (lane == 0) sc_st_release(status + tile, sc_pack(2, epoch, prefix + agg));
    return prefix;
}
template <int ITEMS, int ACQ, int SLEEP, int TICKET, int PRE = 0, int EARLY = 0, int CS = 0, int SCANFIRST = 0, int MINT = 0>
__global__ void nv_scan(const unsigned* __restrict__ in, unsigned* __restrict__ out, size_t n, unsigned long long* state, unsigned epoch) {
    constexpr int CH = ITEMS / 4;
    __shared__ unsigned s_warps[32], s_tile, s_prefix;
    const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const size_t tile_len = (size_t)blockDim.x * ITEMS, tiles = n == 0 ? 1 : (n + tile_len - 1) / tile_len;
    size_t tile = blockIdx.x;
    if (TICKET && gridDim.x > 1) {
        if (threadIdx.x == 0) {
            const unsigned long long t = atomicAdd(state, 1ull);
            // The last ticket: every block has drawn one; reset the counter for the next launch.
            if (t == gridDim.x - 1) atomicExch(state, 0ull);
            s_tile = (unsigned)t;
        }
        __syncthreads();
        tile = s_tile;
    }
    if (tile >= tiles) return;
    const size_t seg = tile * tile_len + (size_t)w * 32 * ITEMS;
    uint4 v[CH];
#pragma unroll
    for (int k = 0; k < CH; k++) {
        const size_t e = seg + k * 128 + 4 * lane;
        if (e + 4 <= n) v[k] = (CS & 2) ? __ldcs(reinterpret_cast<const uint4*>(in) + e / 4) : reinterpret_cast<const uint4*>(in)[e / 4];
        else {
            v[k] = make_uint4(0, 0, 0, 0);
            if (e < n) v[k].x = in[e];
            if (e + 1 < n) v[k].y = in[e + 1];
            if (e + 2 < n) v[k].z = in[e + 2];
        }
    }
    unsigned wt = 0;
    if (SCANFIRST) {
        // The warp's segment scanned in place, from 0; wt: the warp's total.
#pragma unroll
        for (int k = 0; k < CH; k++) sc_scan_chunk(v[k], wt, lane);
    } else {
        // Reduce before the look-back (only the loaded values stay live across it); scan after it.
#pragma unroll
        for (int k = 0; k < CH; k++) wt += (v[k].x + v[k].y) + (v[k].z + v[k].w);
        wt = sc_warp_sum(wt);
    }
    if (lane == 0) s_warps[w] = wt;
    __syncthreads();
    if (w == 0) {
        const unsigned total = lane < nwarps ? s_warps[lane] : 0;
        const unsigned inc = sc_warp_incl(total, lane);
        const unsigned up = __shfl_up_sync(0xffffffffu, inc, 1);
        const unsigned agg = __shfl_sync(0xffffffffu, inc, 31);
        if (lane < nwarps) s_warps[lane] = lane == 0 ? 0 : up;
        unsigned prefix = 0;
        if (gridDim.x > 1) {
            if (tile == 0) {
                if (lane == 0) sc_st_release(state + 2, sc_pack(2, epoch, agg));
            } else {
                prefix = gridDim.x >= MINT ? sc_look_back<ACQ, SLEEP, PRE, EARLY>(state, tile, agg, lane, epoch)
                                           : sc_look_back<ACQ, 0, 0, EARLY>(state, tile, agg, lane, epoch);
            }
        }
        if (lane == 0) s_prefix = prefix;
    }
    __syncthreads();
    unsigned carry = s_prefix + s_warps[w];
#pragma unroll
    for (int k = 0; k < CH; k++) {
        const size_t e = seg + k * 128 + 4 * lane;
        uint4 r = v[k];
        if (SCANFIRST) {
            r.x += carry; r.y += carry; r.z += carry; r.w += carry;
        } else {
            sc_scan_chunk(r, carry, lane);
        }
        if (e + 4 <= n) {
            if (CS & 1) __stcs(reinterpret_cast<uint4*>(out) + e / 4, r);
            else reinterpret_cast<uint4*>(out)[e / 4] = r;
        } else {
            if (e < n) out[e] = r.x;
            if (e + 1 < n) out[e + 1] = r.y;
            if (e + 2 < n) out[e + 2] = r.z;
        }
    }
}

// ==== host code ====================================================================================

// Median time of one call of `launch`, over g_reps calls after WARMUP, one after the other (the
// proxies; the rows of a table are timed by close_table, interleaved).
static double time_ms(const std::function<void()>& launch) {
    std::vector<float> t;
    for (int k = 0; k < WARMUP + g_reps; k++) {
        const float ms = time_one(launch, k);
        if (k >= WARMUP) t.push_back(ms);
    }
    return median(t);
}

// ---- rows and tables -----------------------------------------------------------------------------
static const char* PROXY_NAME = "read-limit proxy (vec4 read-only sum)";
struct Row {
    std::string workload, impl, twin;  // twin: the nvcc row of the same algorithm (Rust rows)
    size_t n;
    double bytes, ms, gbps, pct, ratio;
};
// An implementation checked and waiting to be timed (close_table times a table's together).
struct Candidate {
    std::string impl, twin;
    std::function<void()> poison, launch;
    std::function<std::string()> verify;
};
struct Table {
    std::string workload;
    size_t n;
    double bytes;
    std::vector<Row> rows;
    std::vector<Candidate> pending;
    double proxy_gbps = 0, cub_ms = 0;
    size_t printed = 0;
};
static std::vector<Row> g_rows;
static std::vector<std::string> g_summary;

// --only SUBSTRING: run only the workloads whose name contains it (e.g. "histogram u8 2^28").
static std::string g_only;
static bool selected(const std::string& workload) { return g_only.empty() || workload.find(g_only) != std::string::npos; }

static Table open_table(const std::string& workload, size_t n, double bytes) {
    printf("\n== %s (%.0f bytes) ==\n", workload.c_str(), bytes);
    fflush(stdout);
    Table t;
    t.workload = workload;
    t.n = n;
    t.bytes = bytes;
    return t;
}

// Prints the rows not printed yet, once the table has its proxy row and its CUB row (every row's
// %limit and vs CUB are measured against them).
static void print_rows(Table& t) {
    if (t.proxy_gbps <= 0 || t.cub_ms <= 0) return;
    for (; t.printed < t.rows.size(); t.printed++) {
        Row& r = t.rows[t.printed];
        r.pct = r.gbps / t.proxy_gbps * 100.0;
        r.ratio = t.cub_ms / r.ms;
        if (t.printed == 0) printf("%-38s %9s %9s %7s %7s\n", "implementation", "time ms", "GB/s", "%limit", "vs CUB");
        printf("%-38s %9.4f %9.1f %7.1f %7.3f\n", r.impl.c_str(), r.ms, r.gbps, r.pct, r.ratio);
    }
    fflush(stdout);
}
// Adds a row (GB/s from its own bytes) and prints what can be printed.
static void add_row(Table& t, const std::string& impl, const std::string& twin, double ms, double bytes) {
    if (impl.find(',') != std::string::npos || t.workload.find(',') != std::string::npos) {
        fprintf(stderr, "row name with a comma (the CSV has no quoting): \"%s\" / \"%s\"\n", t.workload.c_str(), impl.c_str());
        exit(1);
    }
    const double gbps = bytes / (ms * 1e6);  // bytes / (ms * 1e-3 s) / 1e9
    if (impl == PROXY_NAME || impl == COPY_PROXY_NAME) t.proxy_gbps = gbps;
    else if (impl.rfind("CUB ", 0) == 0) t.cub_ms = ms;
    t.rows.push_back(Row{t.workload, impl, twin, t.n, bytes, ms, gbps, 0.0, 0.0});
    print_rows(t);
}

// The proxy row: both variants are timed, the faster is the proxy. bytes must be a multiple of 16.
static unsigned* g_sink;
static void add_proxy(Table& t, const void* p, size_t bytes) {
    if (bytes % 16) { fprintf(stderr, "%s: proxy needs a multiple of 16 bytes\n", t.workload.c_str()); exit(1); }
    const size_t nv = bytes / 16;
    const unsigned grid = g_sms * PROXY_BLOCKS_PER_SM;
    const uint4* v = static_cast<const uint4*>(p);
    const double m1 = time_ms([&] { proxy_read1<<<grid, PROXY_BLOCK>>>(v, nv, PROXY_SENTINEL, g_sink); CK(cudaGetLastError()); });
    const double m2 = time_ms([&] { proxy_read2<<<grid, PROXY_BLOCK>>>(v, nv, PROXY_SENTINEL, g_sink); CK(cudaGetLastError()); });
    printf("(proxy over %zu bytes: 1 load/iteration %.4f ms, 2 loads/iteration %.4f ms; the faster is the proxy)\n", bytes, m1, m2);
    add_row(t, PROXY_NAME, "", std::min(m1, m2), (double)bytes);
}

[[noreturn]] static void check_failed(const std::string& workload, const std::string& impl, const char* when, const std::string& what) {
    fprintf(stderr, "\nCHECK FAILED: workload \"%s\", implementation \"%s\" (%s): %s\n", workload.c_str(), impl.c_str(), when,
            what.c_str());
    exit(1);
}

// One implementation: poison its output, run it once and check the result (now: what runs next may
// read the output); close_table times it with the table's other implementations and checks it again.
static void measure(Table& t, const std::string& impl, const std::string& twin, const std::function<void()>& poison,
                    const std::function<void()>& launch, const std::function<std::string()>& verify) {
    poison();
    CK(cudaDeviceSynchronize());
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const std::string err = verify();
    if (!err.empty()) check_failed(t.workload, impl, "before timing", err);
    t.pending.push_back(Candidate{impl, twin, poison, launch, verify});
}

// Times the table's checked implementations interleaved: WARMUP + g_reps rounds, each launching every
// implementation once (round k starts with implementation k mod count), so that a drift of the clocks
// or of the host during the table weighs on every row alike; a row's time is the median of its
// g_reps timed launches. Then each implementation runs once more and is checked: a launch after
// g_reps launches of its own and of the others (the same buffers) must still be right.
static void time_pending(Table& t) {
    const size_t count = t.pending.size();
    std::vector<std::vector<float>> times(count);
    for (int k = 0; k < WARMUP + g_reps; k++)
        for (size_t j = 0; j < count; j++) {
            const size_t c = (j + (size_t)k) % count;
            const float ms = time_one(t.pending[c].launch, k);
            if (k >= WARMUP) times[c].push_back(ms);
        }
    CK(cudaDeviceSynchronize());
    for (size_t c = 0; c < count; c++) {
        const Candidate& x = t.pending[c];
        x.poison();
        CK(cudaDeviceSynchronize());
        x.launch();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        const std::string err = x.verify();
        if (!err.empty()) check_failed(t.workload, x.impl, "after the timed launches", err);
        add_row(t, x.impl, x.twin, median(times[c]), t.bytes);
    }
    t.pending.clear();
}

// The summary line of a finished table: the fastest Rust row against CUB and against its nvcc twin.
static void close_table(Table& t) {
    time_pending(t);
    print_rows(t);
    if (t.printed != t.rows.size()) { fprintf(stderr, "%s: no proxy row or no CUB row\n", t.workload.c_str()); exit(1); }
    const Row* best = nullptr;
    for (const Row& r : t.rows)
        if (r.impl.rfind("Rust ", 0) == 0 && (!best || r.ms < best->ms)) best = &r;
    char line[512];
    if (!best) {
        snprintf(line, sizeof line, "%-28s no Rust row", t.workload.c_str());
    } else {
        const Row* twin = nullptr;
        for (const Row& r : t.rows)
            if (r.impl == best->twin) twin = &r;
        char tw[160] = "";
        if (twin) snprintf(tw, sizeof tw, ", %6.3f x %s", twin->ms / best->ms, twin->impl.c_str());
        snprintf(line, sizeof line, "%-28s best %-30s %8.4f ms: %6.3f x CUB%s", t.workload.c_str(), best->impl.c_str(), best->ms,
                 best->ratio, tw);
    }
    g_summary.push_back(line);
    g_rows.insert(g_rows.end(), t.rows.begin(), t.rows.end());
}

static void write_csv(const std::string& path, const cudaDeviceProp& prop) {
    FILE* f = fopen(path.c_str(), "w");
    if (!f) { fprintf(stderr, "cannot write %s\n", path.c_str()); exit(1); }
    fprintf(f, "# device: %s, %d SMs; timing: %s\n", prop.name, prop.multiProcessorCount, g_timing == Timing::Cold ? "cold" : "host");
    fprintf(f, "workload,implementation,n,bytes,time_ms,gbps,pct_of_read_limit,ratio_to_cub\n");
    for (const Row& r : g_rows)
        fprintf(f, "%s,%s,%zu,%.0f,%.6f,%.3f,%.3f,%.4f\n", r.workload.c_str(), r.impl.c_str(), r.n, r.bytes, r.ms, r.gbps, r.pct,
                r.ratio);
    if (fclose(f) != 0) { fprintf(stderr, "cannot write %s\n", path.c_str()); exit(1); }
}

// ---- host helpers --------------------------------------------------------------------------------
// The modules loaded: gpu_kernels.ptx (the chapter's kernels) and gpu_algos_kernels.ptx (the library's).
static std::vector<CUmodule> g_mods;
static CUfunction get_fn(CUmodule, const char* name) {
    CUfunction f;
    for (CUmodule m : g_mods)
        if (cuModuleGetFunction(&f, m, name) == CUDA_SUCCESS) return f;
    fprintf(stderr, "no PTX module loaded has a kernel entry \"%s\"\n", name);
    exit(1);
}
static int rust_blocks_per_sm(CUfunction f, int block, size_t shared, const char* name) {
    int b = 0;
    CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&b, f, block, shared));
    if (b < 1) { fprintf(stderr, "%s: no block of %d threads and %zu shared bytes fits on an SM\n", name, block, shared); exit(1); }
    return b;
}

// Runs f(chunk, begin, end) over fixed chunks of [0, n) on up to 16 threads. Chunk boundaries, and so
// seeded data generated per chunk, do not depend on the number of threads.
static const size_t HOST_CHUNK = size_t(1) << 20;
static void parallel_chunks(size_t n, const std::function<void(size_t, size_t, size_t)>& f) {
    const size_t chunks = (n + HOST_CHUNK - 1) / HOST_CHUNK;
    const unsigned nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::atomic<size_t> next{0};
    std::vector<std::thread> ts;
    for (unsigned k = 0; k < nt; k++)
        ts.emplace_back([&] {
            for (size_t c; (c = next++) < chunks;) f(c, c * HOST_CHUNK, std::min(n, (c + 1) * HOST_CHUNK));
        });
    for (auto& t : ts) t.join();
}
static std::mt19937_64 chunk_rng(uint64_t seed, size_t chunk) { return std::mt19937_64(seed ^ (0x9e3779b97f4a7c15ull * (chunk + 1))); }

// ---- reduce workloads ----------------------------------------------------------------------------
template <typename T> struct Ty;
template <> struct Ty<float> { static constexpr const char* name = "f32"; static constexpr double rtol = 1e-5; };
template <> struct Ty<double> { static constexpr const char* name = "f64"; static constexpr double rtol = 1e-12; };
template <> struct Ty<int> { static constexpr const char* name = "i32"; static constexpr double rtol = 0; };

// Seeded inputs: f32 / f64 uniform in [0, 1), i32 uniform in [-1000, 1000].
static void fill(float* h, size_t n, uint64_t seed) {
    parallel_chunks(n, [&](size_t c, size_t b, size_t e) {
        auto g = chunk_rng(seed, c);
        for (size_t i = b; i < e; i++) h[i] = (float)(g() >> 40) * 0x1p-24f;
    });
}
static void fill(double* h, size_t n, uint64_t seed) {
    parallel_chunks(n, [&](size_t c, size_t b, size_t e) {
        auto g = chunk_rng(seed, c);
        for (size_t i = b; i < e; i++) h[i] = (double)(g() >> 11) * 0x1p-53;
    });
}
static void fill(int* h, size_t n, uint64_t seed) {
    parallel_chunks(n, [&](size_t c, size_t b, size_t e) {
        auto g = chunk_rng(seed, c);
        std::uniform_int_distribution<int> d(-1000, 1000);
        for (size_t i = b; i < e; i++) h[i] = d(g);
    });
}
// Reference sums: Kahan in long double for floats (per chunk, then over the chunks in order); the
// wrapping uint32 sum for i32.
template <typename T> static long double ref_float_sum(const T* h, size_t n) {
    std::vector<long double> part((n + HOST_CHUNK - 1) / HOST_CHUNK);
    parallel_chunks(n, [&](size_t c, size_t b, size_t e) {
        long double s = 0, comp = 0;
        for (size_t i = b; i < e; i++) { long double y = (long double)h[i] - comp, t = s + y; comp = (t - s) - y; s = t; }
        part[c] = s;
    });
    long double s = 0, comp = 0;
    for (long double x : part) { long double y = x - comp, t = s + y; comp = (t - s) - y; s = t; }
    return s;
}
static uint32_t ref_int_sum(const int* h, size_t n) {
    std::vector<uint32_t> part((n + HOST_CHUNK - 1) / HOST_CHUNK);
    parallel_chunks(n, [&](size_t c, size_t b, size_t e) {
        uint32_t s = 0;
        for (size_t i = b; i < e; i++) s += (uint32_t)h[i];
        part[c] = s;
    });
    uint32_t s = 0;
    for (uint32_t x : part) s += x;
    return s;
}

template <typename T>
static void bench_reduce(CUmodule mod, int log2n, uint64_t seed) {
    const size_t n = size_t(1) << log2n;
    const std::string tn = Ty<T>::name;
    const std::string wl = "reduce " + tn + " 2^" + std::to_string(log2n);
    if (!selected(wl)) return;
    const size_t bytes = n * sizeof(T);

    std::vector<T> h(n);
    fill(h.data(), n, seed);
    long double ref_f = 0;
    uint32_t ref_i = 0;
    if constexpr (std::is_same<T, int>::value) ref_i = ref_int_sum(h.data(), n);
    else ref_f = ref_float_sum(h.data(), n);
    T* in;
    T* out;
    CK(cudaMalloc(&in, bytes));
    CK(cudaMalloc(&out, sizeof(T)));
    CK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
    std::vector<T>().swap(h);

    auto read_out = [&] { T v; CK(cudaMemcpy(&v, out, sizeof(T), cudaMemcpyDeviceToHost)); return v; };
    auto poison = [&] { CK(cudaMemset(out, 0xff, sizeof(T))); };  // NaN for floats, -1 for i32
    auto check_sum = [&]() -> std::string {
        const T got = read_out();
        char msg[256];
        if constexpr (std::is_same<T, int>::value) {
            if ((uint32_t)got == ref_i) return "";
            snprintf(msg, sizeof msg, "sum %d, expected %d (wrapping)", got, (int)ref_i);
        } else {
            const long double err = std::fabs((long double)got - ref_f);
            if (err <= (long double)Ty<T>::rtol * std::fabs(ref_f)) return "";
            snprintf(msg, sizeof msg, "sum %.17g, reference %.17Lg (relative error %.3Lg > %.0e)", (double)got, ref_f,
                     err / std::fabs(ref_f), Ty<T>::rtol);
        }
        return msg;
    };

    // Launch shapes of reduce_fast: the Rust kernel's occupancy sets the grid of both builds.
    const std::string entry = "reduce_sum_" + tn;
    CUfunction rs_fast = get_fn(mod, entry.c_str());
    const int bps = rust_blocks_per_sm(rs_fast, RF_BLOCK, RF_SHARED, entry.c_str());
    int nv_bps = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nv_bps, nv_reduce_fast<T>, RF_BLOCK, RF_SHARED));
    const unsigned resident = g_sms * bps;
    const unsigned grid_fast = rf_fast_grid(n / (16 / sizeof(T)), resident), vblocks_fast = grid_fast;
    // gpu_kernels::reduce_fast::small_input: both tiers launch reduce_small up to 256 KiB.
    const bool small = bytes <= RF_SMALL_MAX_VECTORS * 16;
    // gpu_kernels::reduce_fast::deterministic_vblocks: 1 up to 256 KiB, else ceil(n / 4096) up to 396.
    const size_t min_vblocks = small ? 1 : (n + RF_MIN_VBLOCK_ELEMS - 1) / RF_MIN_VBLOCK_ELEMS;
    const unsigned vblocks_det = (unsigned)std::min<size_t>(std::max<size_t>(min_vblocks, 1), RF_MAX_DET_VBLOCKS);
    const unsigned grid_det = rf_det_grid(vblocks_det, resident);
    const size_t cap = std::max<size_t>({(size_t)resident, (size_t)vblocks_det, g_tune ? (size_t)4 * 4096 : 0});
    T* partials;  // cap words of 8 bytes: the Rust kernel's are u64 words, the nvcc twin's are T
    unsigned* tickets;  // [0]: Rust, [1]: nvcc; zeroed once here, every launch leaves its ticket 0
    CK(cudaMalloc(&partials, cap * sizeof(uint64_t)));
    CK(cudaMalloc(&tickets, 2 * sizeof(unsigned)));
    CK(cudaMemset(tickets, 0, 2 * sizeof(unsigned)));
    CK(cudaDeviceSynchronize());

    auto rs_launch = [&](unsigned grid, unsigned vblocks) {
        View vin{in, n}, vpart{partials, cap}, vticket{tickets, 1}, vout{out, 1};
        uint32_t ch = vblocks;
        void* args[] = {&vin, &ch, &vpart, &vticket, &vout};
        CU(cuLaunchKernel(rs_fast, grid, 1, 1, RF_BLOCK, 1, 1, RF_SHARED, 0, args, nullptr));
    };
    auto nv_launch = [&](unsigned grid, unsigned vblocks) {
        nv_reduce_fast<T><<<grid, RF_BLOCK, RF_SHARED>>>(in, n, vblocks, partials, tickets + 1, out);
        CK(cudaGetLastError());
    };
    const std::string small_entry = "reduce_small_sum_" + tn;
    CUfunction rs_small = get_fn(mod, small_entry.c_str());
    // The launchers' choice: reduce_small for small inputs, else reduce_fast on (grid, vblocks).
    auto rs_tier = [&](unsigned grid, unsigned vblocks) {
        if (!small) return rs_launch(grid, vblocks);
        View vin{in, n}, vout{out, 1};
        void* args[] = {&vin, &vout};
        CU(cuLaunchKernel(rs_small, 1, 1, 1, RF_BLOCK, 1, 1, RF_SHARED, 0, args, nullptr));
    };
    auto nv_tier = [&](unsigned grid, unsigned vblocks) {
        if (!small) return nv_launch(grid, vblocks);
        nv_reduce_small<T><<<1, RF_BLOCK, RF_SHARED>>>(in, n, out);
        CK(cudaGetLastError());
    };
    auto check_fast = [&](int which) {
        return [&, which]() -> std::string {
            std::string e = check_sum();
            unsigned tk;
            CK(cudaMemcpy(&tk, tickets + which, sizeof tk, cudaMemcpyDeviceToHost));
            if (e.empty() && tk != 0) e = "the ticket is " + std::to_string(tk) + " after the launch, not 0";
            return e;
        };
    };

    Table t = open_table(wl, n, (double)bytes);
    if (small)
        printf("(both tiers: reduce_small on one block of %d threads, %d shared bytes: up to %zu bytes)\n", RF_BLOCK, RF_SHARED,
               RF_SMALL_MAX_VECTORS * 16);
    else
        printf("(fast tier: grid = vblocks = min(%d SMs x %d blocks, ceil(vectors / %zu)) = %u; deterministic tier: %u virtual blocks on %u "
               "blocks; %d threads, %d shared bytes; nvcc build occupancy %d blocks/SM)\n",
               g_sms, bps, RF_MIN_BLOCK_VECTORS, grid_fast, vblocks_det, grid_det, RF_BLOCK, RF_SHARED, nv_bps);
    add_proxy(t, in, bytes);

    void* tmp = nullptr;
    size_t tmp_bytes = 0;
    CK(cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, (int)n));
    CK(cudaMalloc(&tmp, tmp_bytes));
    measure(t, "CUB DeviceReduce::Sum", "", poison, [&] { CK(cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, (int)n)); }, check_sum);

    // The chapter's kernel (f32 only): the output must be zeroed, so the memset is part of each launch.
    const unsigned grid_ch = (unsigned)std::min<size_t>((n + BLOCK - 1) / BLOCK, 1024);
    if constexpr (std::is_same<T, float>::value) if (!g_sweep) {
        measure(t, "nvcc reduce_sum (chapter)", "", poison, [&] {
            CK(cudaMemsetAsync(out, 0, sizeof(float)));
            nv_reduce_sum<<<grid_ch, BLOCK>>>(in, out, (int)n);
            CK(cudaGetLastError());
        }, check_sum);
    }
    measure(t, "nvcc reduce_fast", "", poison, [&] { nv_tier(grid_fast, vblocks_fast); }, check_fast(1));
    measure(t, "nvcc reduce_deterministic", "", poison, [&] { nv_tier(grid_det, vblocks_det); }, check_fast(1));
    const T nv_det = read_out();

    if constexpr (std::is_same<T, float>::value) if (!g_sweep) {
        CUfunction rs_reduce = get_fn(mod, "reduce_sum");
        measure(t, "Rust reduce_sum (chapter)", "nvcc reduce_sum (chapter)", poison, [&, rs_reduce] {
            View vin{in, n}, vout{out, 1};
            void* args[] = {&vin, &vout};
            CK(cudaMemsetAsync(out, 0, sizeof(float)));
            CU(cuLaunchKernel(rs_reduce, grid_ch, 1, 1, BLOCK, 1, 1, 32 * sizeof(float), 0, args, nullptr));
        }, check_sum);
    }
    measure(t, "Rust reduce_sum_" + tn, "nvcc reduce_fast", poison, [&] { rs_tier(grid_fast, vblocks_fast); }, check_fast(0));
    measure(t, "Rust reduce_deterministic_" + tn, "nvcc reduce_deterministic", poison, [&] { rs_tier(grid_det, vblocks_det); },
            check_fast(0));

    // The deterministic tier's bits depend on the chunk count only, not on the grid.
    const T det = read_out();
    for (unsigned g : {1u, 7u, 64u}) {
        poison();
        rs_launch(g, vblocks_det);
        CK(cudaDeviceSynchronize());
        const T other = read_out();
        if (memcmp(&other, &det, sizeof(T)) != 0) {
            char msg[200];
            snprintf(msg, sizeof msg, "%u virtual blocks on grid %u give %.17g, on grid %u %.17g (bits differ)", vblocks_det, g, (double)other,
                     grid_det, (double)det);
            check_failed(wl, "Rust reduce_deterministic_" + tn, "determinism", msg);
        }
    }
    if (small) printf("deterministic: reduce_small and reduce_fast with 1 virtual block on grids 1, 7, 64 bit-identical");
    else printf("deterministic: bit-identical over grids 1, 7, 64, %u (%u virtual blocks)", grid_det, vblocks_det);
    printf("; nvcc reduce_deterministic gives %s bits\n", memcmp(&nv_det, &det, sizeof(T)) == 0 ? "the same" : "different");
    if (g_tune) {
        for (unsigned g : {1u, resident, rf_fast_grid(n / (16 / sizeof(T)), resident) * 4, (unsigned)std::max<size_t>(1, n / (16 / sizeof(T)) / 512)}) {
            g = std::min(g, resident);
            if (g == grid_fast && !small) continue;
            measure(t, "tune reduce_fast_" + tn + " grid " + std::to_string(g), "", poison, [&, g] { rs_launch(g, g); }, check_fast(0));
        }
        // nvcc variants of the fast tier: load hints, loads in flight, contiguous runs of tiles.
        struct RV { const char* name; void (*k)(const T*, size_t, unsigned, T*, unsigned*, T*); };
        const RV rvs[] = {
            {"tune nvcc reduce_fast ld.nc", nv_reduce_fast<T, 1>},
            {"tune nvcc reduce_fast ld.cs", nv_reduce_fast<T, 2>},
            {"tune nvcc reduce_fast ld.nc.L2::256B", nv_reduce_fast<T, 3>},
            {"tune nvcc reduce_fast 8 loads in flight", nv_reduce_fast<T, 0, 8>},
            {"tune nvcc reduce_fast contiguous tiles", nv_reduce_fast<T, 0, 4, 1>},
            {"tune nvcc reduce_fast contiguous ld.cs", nv_reduce_fast<T, 2, 4, 1>},
        };
        for (const RV& x : rvs) {
            int b = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, x.k, RF_BLOCK, RF_SHARED));
            const unsigned g = rf_fast_grid(n / (16 / sizeof(T)), g_sms * b);
            measure(t, x.name, "", poison, [&, x, g] {
                x.k<<<g, RF_BLOCK, RF_SHARED>>>(in, n, g, partials, tickets + 1, out);
                CK(cudaGetLastError());
            }, check_fast(1));
        }
        // The deterministic tier on other grids than the launcher's (same bits, checked above).
        for (unsigned g : {1u, std::min(vblocks_det, resident)}) {
            if (g == grid_det) continue;
            measure(t, "tune reduce_deterministic_" + tn + " grid " + std::to_string(g), "", poison, [&, g] { rs_launch(g, vblocks_det); },
                    check_fast(0));
        }
        // Other virtual-block counts (other bits), on one block per slot and on one block per virtual block.
        for (unsigned v : {resident, 256u, 512u, 1024u, 2048u, 4096u}) {
            if ((size_t)v * RF_MIN_VBLOCK_ELEMS > n) continue;
            for (unsigned g : {std::min(v, resident), v}) {
                if (v == vblocks_det && g == grid_det) continue;
                measure(t, "tune reduce_deterministic_" + tn + " vblocks " + std::to_string(v) + " grid " + std::to_string(g), "", poison,
                        [&, g, v] { rs_launch(g, v); }, check_fast(0));
                if (v <= resident) break;
            }
        }
    }

    close_table(t);
    CK(cudaFree(tmp));
    CK(cudaFree(partials));
    CK(cudaFree(tickets));
    CK(cudaFree(in));
    CK(cudaFree(out));
}

// ---- histogram workloads -------------------------------------------------------------------------
enum class Dist { Uniform, OneBin, Zipf };
// Seeded bytes: uniform; all 42; or Zipf (s = 1): byte k with probability proportional to 1 / (k + 1),
// through a 65536-entry table sampled from that distribution and indexed by random 16-bit values.
static void fill_bytes(std::vector<unsigned char>& h, Dist d, uint64_t seed) {
    const size_t n = h.size();
    unsigned char* p = h.data();
    if (d == Dist::OneBin) { memset(p, 42, n); return; }
    if (d == Dist::Uniform) {
        parallel_chunks(n, [&](size_t c, size_t b, size_t e) {
            auto g = chunk_rng(seed, c);
            size_t i = b;
            for (; i + 8 <= e; i += 8) { uint64_t r = g(); memcpy(p + i, &r, 8); }
            for (; i < e; i++) p[i] = (unsigned char)g();
        });
        return;
    }
    std::vector<double> w(256);
    for (int k = 0; k < 256; k++) w[k] = 1.0 / (k + 1);
    std::discrete_distribution<int> zipf(w.begin(), w.end());
    std::mt19937_64 tg(seed);
    std::vector<unsigned char> table(65536);
    for (auto& x : table) x = (unsigned char)zipf(tg);
    parallel_chunks(n, [&](size_t c, size_t b, size_t e) {
        auto g = chunk_rng(seed + 1, c);
        size_t i = b;
        for (; i + 4 <= e; i += 4) {
            const uint64_t r = g();
            for (int k = 0; k < 4; k++) p[i + k] = table[(r >> (16 * k)) & 0xffff];
        }
        for (; i < e; i++) p[i] = table[g() & 0xffff];
    });
}
static std::vector<unsigned> count_bytes(const std::vector<unsigned char>& h) {
    const size_t n = h.size();
    std::vector<uint64_t> part(((n + HOST_CHUNK - 1) / HOST_CHUNK) * 256, 0);
    parallel_chunks(n, [&](size_t c, size_t b, size_t e) { uint64_t* cnt = &part[c * 256]; for (size_t i = b; i < e; i++) cnt[h[i]]++; });
    std::vector<uint64_t> total(256, 0);
    for (size_t i = 0; i < part.size(); i++) total[i % 256] += part[i];
    return std::vector<unsigned>(total.begin(), total.end());
}

static void bench_histogram(CUmodule mod, int log2n, int hist_bpsm, uint64_t seed) {
    const size_t n = size_t(1) << log2n;
    std::vector<unsigned char> h(n);
    unsigned char* d;
    unsigned* hist;
    CK(cudaMalloc(&d, n));
    CK(cudaMalloc(&hist, 256 * sizeof(unsigned)));
    unsigned *hf_partials, *hf_ticket;  // --tune: nv_histogram_ticket's per-block totals and its ticket (left 0)
    CK(cudaMalloc(&hf_partials, (size_t)g_sms * 2 * 256 * sizeof(unsigned)));
    CK(cudaMalloc(&hf_ticket, sizeof(unsigned)));
    CK(cudaMemset(hf_ticket, 0, sizeof(unsigned)));
    CUfunction rs_priv = get_fn(mod, "histogram_privatised");
    CUfunction rs_fast = get_fn(mod, "histogram_bytes");
    CUfunction rs_small = get_fn(mod, "histogram_bytes_small");
    const int occ = rust_blocks_per_sm(rs_fast, HF_BLOCK, HF_SHARED, "histogram_fast");
    const int bps = std::min(occ, hist_bpsm);
    const unsigned grid_full = g_sms * bps, grid_fast = hf_grid(n, grid_full);
    int nv_occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nv_occ, nv_histogram_fast<4>, HF_BLOCK, HF_SHARED));
    const unsigned grid_ch = 1024;  // the chapter kernel's grid

    void* tmp = nullptr;
    size_t tmp_bytes = 0;
    CK(cub::DeviceHistogram::HistogramEven(tmp, tmp_bytes, d, hist, 257, 0, 256, (int)n));
    CK(cudaMalloc(&tmp, tmp_bytes));

    const struct { Dist d; const char* name; } dists[] = {{Dist::Uniform, "uniform"}, {Dist::OneBin, "one bin"}, {Dist::Zipf, "zipf"}};
    for (const auto& dist : dists) {
        const std::string wl = "histogram u8 2^" + std::to_string(log2n) + " " + dist.name;
        if (!selected(wl)) continue;
        fill_bytes(h, dist.d, seed);
        const std::vector<unsigned> ref = count_bytes(h);
        CK(cudaMemcpy(d, h.data(), n, cudaMemcpyHostToDevice));

        auto poison = [&] { CK(cudaMemset(hist, 0xff, 256 * sizeof(unsigned))); };
        auto check = [&]() -> std::string {
            std::vector<unsigned> got(256);
            CK(cudaMemcpy(got.data(), hist, 256 * sizeof(unsigned), cudaMemcpyDeviceToHost));
            for (int b = 0; b < 256; b++)
                if (got[b] != ref[b])
                    return "bin " + std::to_string(b) + ": " + std::to_string(got[b]) + ", expected " + std::to_string(ref[b]);
            return "";
        };
        auto zero = [&] { CK(cudaMemsetAsync(hist, 0, 256 * sizeof(unsigned))); };
        // A Rust histogram kernel (data, bins) on `grid` blocks of `block` threads, the bins zeroed first.
        auto rs_hist = [&](CUfunction f, unsigned grid, int block, size_t shared) {
            View vd{d, n}, vh{hist, 256};
            void* args[] = {&vd, &vh};
            zero();
            CU(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, 0, args, nullptr));
        };

        Table t = open_table(wl, n, (double)n);
        printf("(histogram_fast: grid = min(%d SMs x min(occupancy %d, %d), ceil(n / %zu)) = %u, %d threads, %d shared bytes; nvcc build occupancy %d; "
               "chapter kernels: grid %u of %d threads)\n",
               g_sms, occ, hist_bpsm, HF_MIN_BLOCK_BYTES, grid_fast, HF_BLOCK, HF_SHARED, nv_occ, grid_ch, BLOCK);
        add_proxy(t, d, n);
        // CUB zeroes its own output: nothing else in its timed launch.
        measure(t, "CUB HistogramEven", "", poison,
                [&] { CK(cub::DeviceHistogram::HistogramEven(tmp, tmp_bytes, d, hist, 257, 0, 256, (int)n)); }, check);
        if (!g_sweep)
            measure(t, "nvcc histogram_privatised (chapter)", "", poison, [&] {
                zero();
                nv_histogram<<<grid_ch, BLOCK>>>(d, (int)n, hist);
                CK(cudaGetLastError());
            }, check);
        measure(t, "nvcc histogram_fast", "", poison, [&] {
            zero();
            nv_histogram_fast<4><<<grid_fast, HF_BLOCK, HF_SHARED>>>(d, n, hist);
            CK(cudaGetLastError());
        }, check);
        if (!g_sweep)
            measure(t, "Rust histogram_privatised (chapter)", "nvcc histogram_privatised (chapter)", poison, [&] { rs_hist(rs_priv, grid_ch, BLOCK, 256 * sizeof(unsigned)); }, check);
        measure(t, "Rust histogram_bytes", "nvcc histogram_fast", poison, [&] { rs_hist(rs_fast, grid_fast, HF_BLOCK, HF_SHARED); }, check);
        if (n <= HS_MAX_BYTES) {  // the launcher's kernel up to 8 MiB
            measure(t, "nvcc histogram_small", "", poison, [&] {
                zero();
                nv_histogram_small<1><<<hs_grid(n), 256>>>(d, n, hist);
                CK(cudaGetLastError());
            }, check);
            measure(t, "Rust histogram_bytes_small", "nvcc histogram_small", poison, [&] { rs_hist(rs_small, hs_grid(n), 256, 1024); }, check);
        }
        if (g_tune) {
            const unsigned two = g_sms * std::min(occ, 2);
            for (unsigned g : {grid_full, two, hf_grid(n, grid_full) * 4, (unsigned)std::max<size_t>(1, n / (16 * 1024))}) {
                g = std::min(g, two);
                if (g == grid_fast) continue;
                measure(t, "tune histogram_fast grid " + std::to_string(g), "", poison, [&, g] { rs_hist(rs_fast, g, HF_BLOCK, HF_SHARED); }, check);
            }
            // The nvcc twin with two and eight loads in flight instead of four, and with every block
            // merging from bin 0.
            struct HV { const char* name; void (*k)(const unsigned char*, size_t, unsigned*); };
            const HV hvs[] = {
                {"tune nvcc histogram_fast 2 loads in flight", nv_histogram_fast<2>},
                {"tune nvcc histogram_fast 8 loads in flight", nv_histogram_fast<8>},
                {"tune nvcc histogram_fast merges from bin 0 in every block", nv_histogram_fast<4, 0>},
            };
            for (const HV& x : hvs) {
                measure(t, x.name, "", poison, [&, x] {
                    zero();
                    x.k<<<grid_fast, HF_BLOCK, HF_SHARED>>>(d, n, hist);
                    CK(cudaGetLastError());
                }, check);
            }
            // histogram_small with 8 sets of bins (one per warp), on the launcher's grid.
            if (n <= HS_MAX_BYTES) {
                measure(t, "tune nvcc histogram_small 8 copies", "", poison, [&] {
                    zero();
                    nv_histogram_small<8><<<hs_grid(n), 256>>>(d, n, hist);
                    CK(cudaGetLastError());
                }, check);
            }
            measure(t, "tune nvcc histogram_fast partials + ticket (no memset)", "", poison, [&] {
                nv_histogram_ticket<<<grid_fast, HF_BLOCK, HF_SHARED>>>(d, n, hf_partials, hf_ticket, hist);
                CK(cudaGetLastError());
            }, check);
            for (unsigned g : {grid_fast * 2, grid_fast * 4}) {
                if (g > (unsigned)g_sms) continue;
                measure(t, "tune nvcc histogram_fast partials + ticket (no memset) grid " + std::to_string(g), "", poison, [&, g] {
                    nv_histogram_ticket<<<g, HF_BLOCK, HF_SHARED>>>(d, n, hf_partials, hf_ticket, hist);
                    CK(cudaGetLastError());
                }, check);
            }
        }
        close_table(t);
    }
    CK(cudaFree(tmp));
    CK(cudaFree(d));
    CK(cudaFree(hist));
    CK(cudaFree(hf_partials));
    CK(cudaFree(hf_ticket));
}

// ---- scan workloads --------------------------------------------------------------------------------
// gpu_kernels::scan: tiles of SC_ITEMS elements per thread; the launcher (host/src/examples/scan.rs,
// scan::launch) uses blocks of sc_launch_block(n) threads, one block per tile, on a state zeroed once
// and tagged with a new epoch per launch (the block that draws the last ticket resets the ticket).
static const int SC_BLOCK = 512, SC_ITEMS = 32, SC_SPINE_BLOCK = 1024, SC_MID_BLOCK = 256;
static const size_t SC_MID_MAX_N = (size_t)1 << 18;
// gpu_kernels::scan::ZERO_STATE_MIN_N: from this many elements the launcher zeroes the state before
// each launch (epoch 0) instead of tagging the launch with a new epoch.
static const size_t SC_ZERO_STATE_MIN_N = (size_t)1 << 25;
// gpu_kernels::scan::launch_block: one tile of the fewest threads (at least 128) that hold n, up to
// SC_BLOCK threads; then SC_MID_BLOCK up to SC_MID_MAX_N elements; SC_BLOCK above.
static int sc_launch_block(size_t n) {
    for (int b : {128, 256, SC_BLOCK})
        if (n <= (size_t)b * SC_ITEMS) return b;
    return n <= SC_MID_MAX_N ? SC_MID_BLOCK : SC_BLOCK;
}
// The nvcc twin of scan_u32 (its look-back sleeps: gpu_kernels::scan::{PRE,POLL}_SLEEP_NS, SLEEP_MIN_TILES).
#define SC_TWIN (nv_scan<SC_ITEMS, 1, 650, 1, 1500, 0, 3, 0, 512>)
static const size_t SC_STATE_HEADER = 2;
static size_t sc_tiles(size_t n, int block) {
    const size_t te = (size_t)block * SC_ITEMS;
    return std::max<size_t>(1, (n + te - 1) / te);
}

// The epoch tag of the next launch that does not zero the status words: 1, 2, …, below 2^30 (the high
// half of a word holds epoch * 4 + flag); before the tags wrap, the words are zeroed.
static unsigned g_scan_epoch = 0;
static unsigned next_scan_epoch(uint64_t* state, size_t words) {
    if (++g_scan_epoch >= (1u << 30)) {
        CK(cudaMemsetAsync(state, 0, words * 8));
        g_scan_epoch = 1;
    }
    return g_scan_epoch;
}
static void bench_scan(CUmodule mod, int log2n, uint64_t seed) {
    const size_t n = size_t(1) << log2n;
    const std::string wl = "scan u32 2^" + std::to_string(log2n);
    if (!selected(wl)) return;
    std::vector<uint32_t> h(n);
    parallel_chunks(n, [&](size_t c, size_t b, size_t e) {
        auto g = chunk_rng(seed, c);
        for (size_t i = b; i < e; i++) h[i] = (uint32_t)g();
    });
    // The reference: chunk sums, their exclusive prefix, then each chunk's prefix (wrapping).
    std::vector<uint32_t> ref(n);
    const size_t chunks = (n + HOST_CHUNK - 1) / HOST_CHUNK;
    std::vector<uint32_t> csum(chunks);
    parallel_chunks(n, [&](size_t c, size_t b, size_t e) {
        uint32_t s = 0;
        for (size_t i = b; i < e; i++) s += h[i];
        csum[c] = s;
    });
    uint32_t run = 0;
    for (auto& x : csum) { const uint32_t v = x; x = run; run += v; }
    parallel_chunks(n, [&](size_t c, size_t b, size_t e) {
        uint32_t s = csum[c];
        for (size_t i = b; i < e; i++) { s += h[i]; ref[i] = s; }
    });

    const size_t bytes = n * 4;
    uint32_t *in, *out, *sums;
    uint64_t* state;
    const size_t max_tiles = (n + 64 * 16 - 1) / (64 * 16) + 1;  // the smallest tiles measured: 64 threads x 16
    CK(cudaMalloc(&in, bytes));
    CK(cudaMalloc(&out, bytes));
    CK(cudaMalloc(&sums, max_tiles * 4));
    CK(cudaMalloc(&state, (SC_STATE_HEADER + max_tiles) * 8));
    CK(cudaMemset(state, 0, (SC_STATE_HEADER + max_tiles) * 8));  // epoch 0 everywhere: older than any tag
    g_scan_epoch = 0;
    CK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
    std::vector<uint32_t>().swap(h);

    CUfunction rs_scan = get_fn(mod, "scan_inclusive_u32");
    CUfunction rs_reduce = get_fn(mod, "scan_reduce_u32");
    CUfunction rs_spine = get_fn(mod, "scan_spine_u32");
    CUfunction rs_down = get_fn(mod, "scan_downsweep_u32");
    const size_t sc_shared = 32 * 4 + 8, spine_shared = 32 * 4 + 4;

    std::vector<uint32_t> got(n);
    auto poison = [&] { CK(cudaMemset(out, 0xff, bytes)); };
    auto check = [&](bool state_used) {
        return [&, state_used]() -> std::string {
            CK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
            std::atomic<size_t> bad{n};
            parallel_chunks(n, [&](size_t, size_t b, size_t e) {
                for (size_t i = b; i < e; i++)
                    if (got[i] != ref[i]) { size_t cur = bad.load(); while (i < cur && !bad.compare_exchange_weak(cur, i)) {} break; }
            });
            if (bad.load() < n) {
                const size_t i = bad.load();
                return "out[" + std::to_string(i) + "] = " + std::to_string(got[i]) + ", expected " + std::to_string(ref[i]);
            }
            if (state_used) {
                uint64_t err;
                CK(cudaMemcpy(&err, state + 1, 8, cudaMemcpyDeviceToHost));
                if (err != 0) return "the error word is " + std::to_string(err) + " (a tile gave up waiting)";
            }
            return "";
        };
    };
    // Tiles (= blocks) of `block` threads x `items` elements over the n elements; at least 1.
    auto tiles_of = [&](int block, int items) { return std::max<size_t>(1, (n + (size_t)block * items - 1) / ((size_t)block * items)); };
    // A launch of a scan kernel with the launchers' arguments on blocks of `block` threads and `items`
    // elements per thread: a new epoch (no zeroing), or (zeroed) the state zeroed first and epoch 0.
    const int sc_block = sc_launch_block(n);
    auto rs_launch_scan = [&](CUfunction f, int block, int items, bool zeroed) {
        const size_t tiles = tiles_of(block, items);
        View vin{in, n}, vout{out, n}, vstate{state, SC_STATE_HEADER + tiles};
        unsigned epoch = 0;
        if (!zeroed) epoch = next_scan_epoch(state, SC_STATE_HEADER + max_tiles);
        else if (tiles > 1) CK(cudaMemsetAsync(state, 0, (SC_STATE_HEADER + tiles) * 8));
        void* args[] = {&vin, &vout, &vstate, &epoch};
        CU(cuLaunchKernel(f, (unsigned)tiles, 1, 1, block, 1, 1, sc_shared, 0, args, nullptr));
    };
    auto rs_single = [&](int block, bool zeroed = false) { rs_launch_scan(rs_scan, block, SC_ITEMS, zeroed); };

    Table t = open_table(wl, n, 2.0 * bytes);
    printf("(scan_u32: %zu tiles of %d threads x %d elements, %s)\n", sc_tiles(n, sc_block), sc_block, SC_ITEMS,
           n >= SC_ZERO_STATE_MIN_N ? "the state zeroed before each launch (epoch 0)" : "a new epoch per launch, the state zeroed once");
    {
        const size_t nv = bytes / 16;
        const unsigned grid = g_sms * PROXY_BLOCKS_PER_SM;
        const double m1 = time_ms([&] { CK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); });
        const double m2 = time_ms([&] {
            proxy_copy<<<grid, PROXY_BLOCK>>>(reinterpret_cast<const uint4*>(in), reinterpret_cast<uint4*>(out), nv);
            CK(cudaGetLastError());
        });
        printf("(copy proxy over %zu bytes: cudaMemcpyAsync %.4f ms, vec4 copy kernel %.4f ms; the faster is the proxy)\n", bytes, m1, m2);
        add_row(t, COPY_PROXY_NAME, "", std::min(m1, m2), 2.0 * bytes);
    }
    void* tmp = nullptr;
    size_t tmp_bytes = 0;
    CK(cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, in, out, (int)n));
    CK(cudaMalloc(&tmp, tmp_bytes));
    measure(t, "CUB DeviceScan::InclusiveSum", "", poison, [&] { CK(cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, in, out, (int)n)); },
            check(false));
    const bool sc_zeroed = n >= SC_ZERO_STATE_MIN_N;
    measure(t, "Rust scan_inclusive_u32 (single pass)", "nvcc scan_u32 (single pass)", poison, [&] { rs_single(sc_block, sc_zeroed); },
            check(sc_tiles(n, sc_block) > 1));
    {
        const size_t tiles = sc_tiles(n, SC_BLOCK);
        measure(t, "Rust reduce-then-scan (3 kernels)", "", poison, [&, tiles] {
            View vin{in, n}, vs{sums, tiles}, vout{out, n};
            void* a1[] = {&vin, &vs};
            void* a2[] = {&vs};
            void* a3[] = {&vin, &vs, &vout};
            CU(cuLaunchKernel(rs_reduce, (unsigned)tiles, 1, 1, SC_BLOCK, 1, 1, sc_shared, 0, a1, nullptr));
            CU(cuLaunchKernel(rs_spine, 1, 1, 1, SC_SPINE_BLOCK, 1, 1, spine_shared, 0, a2, nullptr));
            CU(cuLaunchKernel(rs_down, (unsigned)tiles, 1, 1, SC_BLOCK, 1, 1, sc_shared, 0, a3, nullptr));
        }, check(false));
    }
    // epochs: a new tag per launch instead of zeroing the status words (--tune rows "... epochs").
    auto nv_single = [&](auto kernel, int items, int block, bool epochs = false) {
        const size_t tiles = tiles_of(block, items);
        unsigned epoch = 0;
        if (epochs) epoch = next_scan_epoch(state, SC_STATE_HEADER + max_tiles);
        else if (tiles > 1) CK(cudaMemsetAsync(state, 0, (SC_STATE_HEADER + tiles) * 8));
        kernel<<<(unsigned)tiles, block>>>(in, out, n, reinterpret_cast<unsigned long long*>(state), epoch);
        CK(cudaGetLastError());
    };
    measure(t, "nvcc scan_u32 (single pass)", "", poison, [&] { nv_single(SC_TWIN, SC_ITEMS, sc_block, !sc_zeroed); },
            check(sc_tiles(n, sc_block) > 1));
    if (g_tune) {
        measure(t, sc_zeroed ? "tune scan_u32 new epoch (state not zeroed)" : "tune scan_u32 zeroed state (epoch 0)", "", poison,
                [&] { rs_single(sc_block, !sc_zeroed); }, check(sc_tiles(n, sc_block) > 1));
        for (int b : {128, 256, 512, 1024})
            if (b != sc_block) measure(t, "tune scan_u32 block " + std::to_string(b), "", poison, [&, b] { rs_single(b); }, check(sc_tiles(n, b) > 1));
        // The look-back's sleeps (scan_sleeps_u32: the launchers' kernel with the sleeps as arguments, on
        // every grid): nanoseconds before the first poll, and between polls.
        {
            CUfunction f = get_fn(mod, "scan_sleeps_u32");
            const size_t tiles = sc_tiles(n, SC_BLOCK);
            const unsigned sleeps[][2] = {{0, 0}, {1000, 650}, {1500, 650}, {2000, 650}, {3000, 650}, {1500, 300}, {1500, 1000}};
            for (const auto& sl : sleeps) {
                const std::string name = "tune scan_sleeps_u32 pre " + std::to_string(sl[0]) + " poll " + std::to_string(sl[1]);
                measure(t, name, "", poison, [&, f, tiles, sl] {
                    View vin{in, n}, vout{out, n}, vstate{state, SC_STATE_HEADER + tiles};
                    unsigned epoch = next_scan_epoch(state, SC_STATE_HEADER + max_tiles), pre = sl[0], poll = sl[1];
                    void* args[] = {&vin, &vout, &vstate, &epoch, &pre, &poll};
                    CU(cuLaunchKernel(f, (unsigned)tiles, 1, 1, SC_BLOCK, 1, 1, sc_shared, 0, args, nullptr));
                }, check(tiles > 1));
            }
        }
        // The Rust tuning variants: other elements per thread (scan_items16_u32, scan_items24_u32).
        struct RV { const char* entry; int items, block; };
        const RV rvs[] = {{"scan_items16_u32", 16, 512}, {"scan_items24_u32", 24, 384}};
        for (const RV& x : rvs) {
            CUfunction f = get_fn(mod, x.entry);
            const size_t tiles = tiles_of(x.block, x.items);
            if (tiles > max_tiles) continue;
            if (n == ((size_t)1 << 20)) {
                int bps = 0, regs = 0;
                CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&bps, f, x.block, sc_shared));
                CU(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
                printf("(%s: %d registers, %d blocks of %d per SM)\n", x.entry, regs, bps, x.block);
            }
            const std::string name = std::string("tune ") + x.entry + " block " + std::to_string(x.block);
            measure(t, name, "", poison, [&, f, x] { rs_launch_scan(f, x.block, x.items, false); }, check(tiles > 1));
        }
        measure(t, sc_zeroed ? "tune nvcc new epoch (state not zeroed)" : "tune nvcc zeroed state (epoch 0)", "", poison,
                [&] { nv_single(SC_TWIN, SC_ITEMS, sc_block, sc_zeroed); }, check(sc_tiles(n, sc_block) > 1));
        struct V { const char* name; void (*k)(const unsigned*, unsigned*, size_t, unsigned long long*, unsigned); int items, block; };
        const V vs[] = {
            {"tune nvcc no sleeps", nv_scan<32, 1, 0, 1, 0, 0, 3>, 32, 512},
            {"tune nvcc warp polling with early exit", nv_scan<32, 1, 650, 1, 1500, 1, 3, 0, 512>, 32, 512},
            {"tune nvcc read-only loads and plain stores", nv_scan<32, 1, 650, 1, 1500, 0, 0, 0, 512>, 32, 512},
            {"tune nvcc streaming stores only", nv_scan<32, 1, 650, 1, 1500, 0, 1, 0, 512>, 32, 512},
            {"tune nvcc block 256", SC_TWIN, 32, 256},
            {"tune nvcc block 1024", SC_TWIN, 32, 1024},
            {"tune nvcc items 24 block 384", nv_scan<24, 1, 650, 1, 1500, 0, 3, 0, 512>, 24, 384},
            {"tune nvcc scan first", nv_scan<32, 1, 650, 1, 1500, 0, 3, 1, 512>, 32, 512},
            {"tune nvcc block 128", SC_TWIN, 32, 128},
            {"tune nvcc block 512", SC_TWIN, 32, 512},
        };
        for (const V& x : vs) {
            const size_t tiles = tiles_of(x.block, x.items);
            if (tiles > max_tiles) continue;
            if (log2n == g_kmin || !g_sweep) {
                cudaFuncAttributes fa;
                int bps = 0;
                CK(cudaFuncGetAttributes(&fa, x.k));
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, x.k, x.block, 0));
                printf("(%s: %d registers, %d blocks of %d per SM)\n", x.name, fa.numRegs, bps, x.block);
            }
            measure(t, x.name, "", poison, [&, x] { nv_single(x.k, x.items, x.block, true); }, check(tiles > 1));
        }
    }
    close_table(t);
    CK(cudaFree(tmp));
    CK(cudaFree(in));
    CK(cudaFree(out));
    CK(cudaFree(sums));
    CK(cudaFree(state));
}

// ---- warp_reduce: one sum per warp of 32 floats ----------------------------------------------------
static void bench_warp_reduce(CUmodule mod, uint64_t seed) {
    if (!selected("warp_reduce f32 2^26")) return;
    const size_t n = size_t(1) << 26, w = n / 32;
    std::vector<float> h(n);
    parallel_chunks(n, [&](size_t c, size_t b, size_t e) {
        auto g = chunk_rng(seed, c);
        for (size_t i = b; i < e; i++) h[i] = (float)(g() >> 40) * 0x1p-23f - 1.0f;  // uniform in [-1, 1)
    });
    float *in, *out;
    CK(cudaMalloc(&in, n * sizeof(float)));
    CK(cudaMalloc(&out, w * sizeof(float)));
    CK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUfunction rs_warp = get_fn(mod, "warp_reduce");
    const unsigned grid = (unsigned)(n / BLOCK);

    auto poison = [&] { CK(cudaMemset(out, 0xff, w * sizeof(float))); };
    auto check = [&]() -> std::string {
        std::vector<float> got(w);
        CK(cudaMemcpy(got.data(), out, w * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t k = 0; k < w; k++) {
            double ref = 0, mag = 0;
            for (int j = 0; j < 32; j++) { ref += h[k * 32 + j]; mag += std::fabs(h[k * 32 + j]); }
            if (!(std::fabs(got[k] - ref) <= 32 * 6e-8 * mag)) {
                char msg[160];
                snprintf(msg, sizeof msg, "warp %zu: sum %.9g, reference %.9g", k, got[k], ref);
                return msg;
            }
        }
        return "";
    };

    // Bytes: the input read and the per-warp sums written (the proxy reads the input only).
    Table t = open_table("warp_reduce f32 2^26", n, (double)(n + w) * sizeof(float));
    add_proxy(t, in, n * sizeof(float));
    measure(t, "CUB WarpReduce", "", poison, [&] { cub_warp_reduce<<<grid, BLOCK>>>(in, out, n); CK(cudaGetLastError()); }, check);
    measure(t, "nvcc warp_reduce", "", poison, [&] { nv_warp_reduce<<<grid, BLOCK>>>(in, out, n); CK(cudaGetLastError()); }, check);
    measure(t, "Rust warp_reduce", "nvcc warp_reduce", poison, [&] {
        View vin{in, n}, vout{out, w};
        void* args[] = {&vin, &vout};
        CU(cuLaunchKernel(rs_warp, grid, 1, 1, BLOCK, 1, 1, 0, 0, args, nullptr));
    }, check);
    close_table(t);
    CK(cudaFree(in));
    CK(cudaFree(out));
}

// ---- main ----------------------------------------------------------------------------------------
static void usage(const char* argv0) {
    fprintf(stderr, "usage: %s gpu_kernels.ptx gpu_algos_kernels.ptx [--csv bench/results.csv] [--reps 50] [--hist-blocks-per-sm 1] [--only WORKLOAD-SUBSTRING]\n"
                    "       [--sweep [--kmin 10] [--kmax 30]] [--tune] [--timing cold|host]\n", argv0);
    exit(2);
}

int main(int argc, char** argv) {
    const char* ptx = nullptr;
    const char* algos_ptx = nullptr;
    std::string csv = "bench/results.csv";
    int hist_bpsm = 1;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--sweep") {
            g_sweep = true;
        } else if (a == "--tune") {
            g_tune = true;
        } else if (a == "--kmin" && i + 1 < argc) {
            g_kmin = atoi(argv[++i]);
        } else if (a == "--kmax" && i + 1 < argc) {
            g_kmax = atoi(argv[++i]);
        } else if ((a == "--csv" || a == "--reps" || a == "--timing" || a == "--hist-blocks-per-sm" || a == "--only") && i + 1 < argc) {
            const char* v = argv[++i];
            if (a == "--csv") csv = v;
            else if (a == "--only") g_only = v;
            else if (a == "--reps") g_reps = atoi(v);
            else if (a == "--timing") {
                if (std::string(v) == "cold") g_timing = Timing::Cold;
                else if (std::string(v) == "host") g_timing = Timing::Host;
                else usage(argv[0]);
            }
            else hist_bpsm = atoi(v);
        } else if (a.rfind("--", 0) == 0 || algos_ptx) {
            usage(argv[0]);
        } else if (!ptx) {
            ptx = argv[i];
        } else {
            algos_ptx = argv[i];
        }
    }
    if (!ptx || !algos_ptx || g_reps < 1 || hist_bpsm < 1) usage(argv[0]);
    if (g_reps < 50) fprintf(stderr, "warning: --reps %d: medians of fewer than 50 launches\n", g_reps);
    {  // fail now, not after the run, if the CSV cannot be written
        FILE* f = fopen(csv.c_str(), "a");
        if (!f) { fprintf(stderr, "cannot write %s\n", csv.c_str()); return 1; }
        fclose(f);
    }

    CK(cudaFree(0));  // creates the primary context, shared with the driver API below
    CUmodule mod, algos_mod;
    CU(cuModuleLoad(&mod, ptx));
    CU(cuModuleLoad(&algos_mod, algos_ptx));
    g_mods = {mod, algos_mod};
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    printf("device: %s, %d SMs; each row: median of %d timed launches after %d warm-ups; timing: %s\n", prop.name, g_sms, g_reps,
           WARMUP, g_timing == Timing::Cold ? "cold (L2 flushed, stream held while enqueuing)" : "host (events around the host's launch)");
    timing_init();
    CK(cudaMalloc(&g_sink, sizeof(unsigned)));

    if (g_sweep) {
        // Every power of two from 2^10 to 2^30 (f64 to 2^29); more timed launches where launches are short.
        const int reps = g_reps;
        for (int k = g_kmin; k <= g_kmax; k++) {
            g_reps = k <= 20 ? std::max(reps, 200) : reps;
            bench_reduce<float>(mod, k, 1000 + k);
            if (k <= 29) bench_reduce<double>(mod, k, 2000 + k);
            bench_reduce<int>(mod, k, 3000 + k);
            bench_histogram(mod, k, hist_bpsm, 4000 + k);
            bench_scan(mod, k, 5000 + k);
        }
        g_reps = reps;
    } else {
        bench_reduce<float>(mod, 26, 101);
        bench_reduce<float>(mod, 28, 102);
        bench_reduce<double>(mod, 26, 201);
        bench_reduce<double>(mod, 28, 202);
        bench_reduce<int>(mod, 26, 301);
        bench_reduce<int>(mod, 28, 302);
        bench_histogram(mod, 28, hist_bpsm, 401);
        bench_histogram(mod, 30, hist_bpsm, 402);
        bench_scan(mod, 20, 601);
        bench_scan(mod, 26, 602);
        bench_scan(mod, 30, 603);
        bench_warp_reduce(mod, 501);
    }

    write_csv(csv, prop);
    printf("\n== summary: the fastest Rust tier per workload (x CUB, x nvcc: their time over the Rust time; above 1: "
           "Rust faster) ==\n");
    for (const std::string& s : g_summary) printf("%s\n", s.c_str());
    printf("\n%zu rows written to %s\n", g_rows.size(), csv.c_str());

    CK(cudaFree(g_sink));
    timing_free();
    CU(cuModuleUnload(mod));
    CU(cuModuleUnload(algos_mod));
    return 0;
}
