// gpu-algos against CUB, every call of the library and every element type, n = 2^kmin .. 2^kmax, on
// one GPU, in one process, on the same device buffers.
//
// The library's launches are not re-derived here: `plans.tsv` is what the library itself prints for
// this device (`cargo run --release -p gpu-algos --features cuda --example plans`, its `Algos` calls'
// own planning functions, occupancy included), one line per workload and n: the PTX entry, grid,
// block, shared bytes, the reduce's virtual blocks, the scratch words, and whether the call zeroes
// its output or state first. This program launches exactly that from gpu_algos_kernels.ptx, with the
// zeroing the call does (a memset inside the timed region) and the scan's epochs as `Algos` keeps
// them, and times it against CUB's call for the same job (`DeviceReduce::Sum/Min/Max`,
// `DeviceHistogram::HistogramEven`, `DeviceScan::InclusiveSum/ExclusiveSum`, temporary storage
// allocated once, outside the timing, as a CUB user does).
//
// Build and run (CUDA toolkit and an NVIDIA GPU):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o algos bench/algos.cu -lcuda
//   ./algos gpu_algos_kernels.ptx plans.tsv --csv bench/algos.csv [--timing cold|host|both] [--kmin 10]
//           [--kmax 30] [--only SUBSTRING]
//
// Timing (bench/timing.cuh): `host` puts the events around the call on an idle stream (the caller's
// wait, with the launch latency, data possibly in L2); `cold` flushes L2 and holds the stream while
// enqueuing (the GPU's time alone). Each row is the median of 200 calls up to 2^20, 50 up to 2^26,
// 20 above, after 5 warm-ups, the two implementations interleaved (round k starts with the k-th).
// Every result is checked against a CPU reference before the timed calls and again after them
// (integers and histograms exactly; float sums within 2 (log2 n + 16) eps sum|x|; float scans of
// integer-valued inputs exactly while the prefixes are exact, else within the library's stated bound
// (t + 64) u prefix, t the 1024-element tile; the deterministic sum's bits must not change between
// the two checks). A failed check prints CHECK FAILED, marks the row, and the run exits 1 at the end.
//
// CSV columns: timing,workload,n,impl,ms,gbps (bytes read, plus written for scans, over the median).
#include "timing.cuh"
#include <cub/cub.cuh>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

static const int WARMUP = 5;
static int g_kmin = 10, g_kmax = 30;
static std::string g_only;
static int g_failures = 0;

// gpu_std::Global<T> / GlobalMut<T>: #[repr(C)] {ptr, len}, passed by value (16 bytes).
struct View { const void* ptr; size_t len; };

// ---- the library's launches (plans.tsv) -----------------------------------------------------------
struct Plan {
    std::string kernel;
    unsigned grid = 0, block = 0;
    unsigned shared = 0;
    unsigned long long arg = 0;
    size_t scratch = 0;
    bool zero = false;
    CUfunction fn = nullptr;
};
static std::map<std::pair<std::string, size_t>, Plan> g_plans;
static CUmodule g_mod;

static void load_plans(const char* path) {
    FILE* f = fopen(path, "r");
    if (!f) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        std::vector<std::string> col;
        for (char* tok = strtok(line, "\t\n"); tok; tok = strtok(nullptr, "\t\n")) col.push_back(tok);
        if (col.size() != 9) { fprintf(stderr, "%s: a line without 9 columns: %s\n", path, line); exit(1); }
        Plan p;
        p.kernel = col[2];
        p.grid = (unsigned)strtoul(col[3].c_str(), nullptr, 10);
        p.block = (unsigned)strtoul(col[4].c_str(), nullptr, 10);
        p.shared = (unsigned)strtoul(col[5].c_str(), nullptr, 10);
        p.arg = strtoull(col[6].c_str(), nullptr, 10);
        p.scratch = strtoull(col[7].c_str(), nullptr, 10);
        p.zero = col[8] == "1";
        g_plans[{col[0], strtoull(col[1].c_str(), nullptr, 10)}] = p;
    }
    fclose(f);
}
// The library's launch for (workload, n), its function looked up in the module.
static Plan& plan_of(const std::string& workload, size_t n) {
    auto it = g_plans.find({workload, n});
    if (it == g_plans.end()) {
        fprintf(stderr, "plans.tsv has no line for \"%s\" n = %zu (print it with the plans example)\n", workload.c_str(), n);
        exit(1);
    }
    Plan& p = it->second;
    if (!p.fn && cuModuleGetFunction(&p.fn, g_mod, p.kernel.c_str()) != CUDA_SUCCESS) {
        fprintf(stderr, "the PTX module has no entry \"%s\"\n", p.kernel.c_str());
        exit(1);
    }
    return p;
}
static void launch(const Plan& p, std::vector<void*> args) {
    CU(cuLaunchKernel(p.fn, p.grid, 1, 1, p.block, 1, 1, p.shared, 0, args.data(), nullptr));
}

// ---- element types -------------------------------------------------------------------------------
template <typename T> struct Ty;
template <> struct Ty<uint16_t> { static constexpr const char* name = "u16"; };
template <> struct Ty<uint32_t> { static constexpr const char* name = "u32"; };
template <> struct Ty<int32_t> { static constexpr const char* name = "i32"; };
template <> struct Ty<uint64_t> { static constexpr const char* name = "u64"; };
template <> struct Ty<int64_t> { static constexpr const char* name = "i64"; };
template <> struct Ty<float> { static constexpr const char* name = "f32"; };
template <> struct Ty<double> { static constexpr const char* name = "f64"; };

__host__ __device__ inline uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
// Inputs, a function of the index and the seed: integers over their whole range, floats uniform in
// [0, 1) or (`small`) integer values 0 to 3.
template <typename T> __global__ void fill(T* p, size_t n, uint64_t seed, bool small) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t r = mix(i ^ seed);
        if constexpr (std::is_floating_point<T>::value) p[i] = small ? (T)(r >> 62) : (T)(r >> 11) * (T)0x1p-53;
        else p[i] = (T)r;
    }
}

// ---- rows ----------------------------------------------------------------------------------------
struct Row { std::string timing, workload, impl; size_t n; double ms, gbps; bool ok; };
static std::vector<Row> g_rows;
struct Impl {
    std::string name;
    std::function<void()> call;
    std::function<std::string()> verify;  // "" when the result is right
};
static int reps_for(size_t n) { return n <= (1u << 20) ? 200 : n <= (1u << 26) ? 50 : 20; }

static bool check(const std::string& wl, size_t n, const Impl& x, const char* when) {
    CK(cudaDeviceSynchronize());
    x.call();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const std::string err = x.verify();
    if (err.empty()) return true;
    fprintf(stderr, "CHECK FAILED: %s n = %zu, %s (%s): %s\n", wl.c_str(), n, x.name.c_str(), when, err.c_str());
    g_failures++;
    return false;
}
// Checks each implementation, times them interleaved in each timing asked for, checks them again.
static void run_table(const std::string& wl, size_t n, double bytes, std::vector<Impl> impls, const std::vector<Timing>& timings) {
    std::vector<bool> ok(impls.size());
    for (size_t c = 0; c < impls.size(); c++) ok[c] = check(wl, n, impls[c], "before timing");
    const int reps = reps_for(n);
    for (Timing tm : timings) {
        g_timing = tm;
        std::vector<std::vector<float>> times(impls.size());
        for (int k = 0; k < WARMUP + reps; k++)
            for (size_t j = 0; j < impls.size(); j++) {
                const size_t c = (j + (size_t)k) % impls.size();
                const float ms = time_one(impls[c].call, k);
                if (k >= WARMUP) times[c].push_back(ms);
            }
        const char* tname = tm == Timing::Cold ? "cold" : "host";
        printf("%-4s %-30s 2^%-2d", tname, wl.c_str(), (int)std::log2((double)n));
        for (size_t c = 0; c < impls.size(); c++) {
            const double ms = median(times[c]);
            g_rows.push_back(Row{tname, wl, impls[c].name, n, ms, bytes / (ms * 1e6), ok[c]});
            printf("  %s %9.4f ms", impls[c].name.c_str(), ms);
        }
        if (impls.size() >= 2) printf("  CUB/ours %.3f", median(times[1]) / median(times[0]));
        printf("\n");
        fflush(stdout);
    }
    for (size_t c = 0; c < impls.size(); c++)
        if (!check(wl, n, impls[c], "after timing")) ok[c] = false;
    for (size_t r = g_rows.size() - impls.size() * timings.size(); r < g_rows.size(); r++)
        for (size_t c = 0; c < impls.size(); c++)
            if (g_rows[r].impl == impls[c].name) g_rows[r].ok = ok[c];
}
static bool selected(const std::string& wl) { return g_only.empty() || wl.find(g_only) != std::string::npos; }

// CUB's temporary storage, grown as needed (outside the timing).
static void* g_temp = nullptr;
static size_t g_temp_bytes = 0;
static void* cub_temp(size_t bytes) {
    if (bytes > g_temp_bytes) {
        CK(cudaFree(g_temp));
        CK(cudaMalloc(&g_temp, bytes));
        g_temp_bytes = bytes;
    }
    return g_temp;
}

template <typename T> static std::vector<T> to_host(const T* d, size_t n) {
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}
template <typename T> static T read1(const T* d) {
    T v;
    CK(cudaMemcpy(&v, d, sizeof(T), cudaMemcpyDeviceToHost));
    return v;
}
// Runs f(begin, end) over chunks of `chunk` elements of [0, n) on up to 16 threads, in chunk order per thread.
static void parallel(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& f) {
    const size_t chunks = (n + chunk - 1) / chunk;
    const unsigned nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::atomic<size_t> next{0};
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < nt; t++)
        ts.emplace_back([&] {
            for (size_t c; (c = next++) < chunks;) f(c * chunk, std::min(n, (c + 1) * chunk));
        });
    for (auto& t : ts) t.join();
}

// ---- reduce --------------------------------------------------------------------------------------
// The reference of the first 2^k elements for every k: the wrapping or long double sum, the sum of
// magnitudes, the minimum and the maximum.
template <typename T> struct Stats { long double sum = 0, abs = 0; T wsum = 0, lo, hi; };
// a + b wrapping for integers (unsigned arithmetic), rounded for floats.
template <typename T> static T wrap_add(T a, T b) {
    if constexpr (std::is_floating_point<T>::value) return a + b;
    else return (T)((std::make_unsigned_t<T>)a + (std::make_unsigned_t<T>)b);
}
static const size_t REF_CHUNK = 1024;  // 2^kmin at the smallest
template <typename T> static std::vector<Stats<T>> prefix_stats(const std::vector<T>& h) {
    const size_t chunks = h.size() / REF_CHUNK;
    std::vector<Stats<T>> part(chunks);
    parallel(chunks, 256, [&](size_t b, size_t e) {
        for (size_t c = b; c < e; c++) {
            Stats<T> s;
            s.lo = s.hi = h[c * REF_CHUNK];
            for (size_t i = c * REF_CHUNK; i < (c + 1) * REF_CHUNK; i++) {
                const T x = h[i];
                if constexpr (std::is_floating_point<T>::value) { s.sum += x; s.abs += std::fabs((long double)x); }
                else s.wsum = wrap_add(s.wsum, x);
                s.lo = std::min(s.lo, x);
                s.hi = std::max(s.hi, x);
            }
            part[c] = s;
        }
    });
    std::vector<Stats<T>> pre;  // pre[j]: the first REF_CHUNK * 2^j elements
    Stats<T> acc = part[0];
    pre.push_back(acc);
    for (size_t c = 1; c < chunks; c++) {
        const Stats<T>& s = part[c];
        acc.sum += s.sum;
        acc.abs += s.abs;
        acc.wsum = wrap_add(acc.wsum, s.wsum);
        acc.lo = std::min(acc.lo, s.lo);
        acc.hi = std::max(acc.hi, s.hi);
        if (((c + 1) & c) == 0) pre.push_back(acc);  // c + 1 chunks added, a power of two
    }
    return pre;
}

template <typename T> static std::string fmt(T v) {
    char b[64];
    if constexpr (std::is_floating_point<T>::value) snprintf(b, sizeof b, "%.17g", (double)v);
    else if constexpr (std::is_signed<T>::value) snprintf(b, sizeof b, "%" PRId64, (int64_t)v);
    else snprintf(b, sizeof b, "%" PRIu64, (uint64_t)v);
    return b;
}

enum class Op { Sum, Min, Max, DetSum };
template <typename T> static void bench_reduce(const T* d, const std::vector<Stats<T>>& ref, const std::vector<Timing>& timings) {
    const std::string tn = Ty<T>::name;
    T *ours_out, *cub_out;
    CK(cudaMalloc(&ours_out, sizeof(T)));
    CK(cudaMalloc(&cub_out, sizeof(T)));
    uint64_t* partials;
    unsigned* ticket;
    CK(cudaMalloc(&partials, 4096 * sizeof(uint64_t)));
    CK(cudaMalloc(&ticket, sizeof(unsigned)));
    CK(cudaMemset(ticket, 0, sizeof(unsigned)));  // 0 between launches: every launch leaves it 0
    std::vector<Op> ops = {Op::Sum, Op::Min, Op::Max};
    if (std::is_floating_point<T>::value) ops.push_back(Op::DetSum);
    for (Op op : ops) {
        const char* on = op == Op::Sum ? "sum" : op == Op::Min ? "min" : op == Op::Max ? "max" : "deterministic_sum";
        const std::string wl = std::string("reduce ") + on + " " + tn;
        if (!selected(wl)) continue;
        for (int k = g_kmin; k <= g_kmax; k++) {
            const size_t n = size_t(1) << k;
            const Stats<T>& r = ref[k - 10];
            Plan& p = plan_of(wl, n);
            if (p.scratch > 4096) { fprintf(stderr, "%s: %zu partials\n", wl.c_str(), p.scratch); exit(1); }
            View vin{d, n}, vpart{partials, p.scratch}, vticket{ticket, 1}, vout{ours_out, 1};
            unsigned vblocks = (unsigned)p.arg;
            auto ours = [&, vin, vpart, vticket, vout, vblocks]() mutable {
                if (p.kernel.rfind("reduce_small_", 0) == 0) launch(p, {&vin, &vout});
                else launch(p, {&vin, &vblocks, &vpart, &vticket, &vout});
            };
            auto cub = [&, n] {
                size_t tb = 0;
                if (op == Op::Min) {
                    CK(cub::DeviceReduce::Min(nullptr, tb, d, cub_out, (int64_t)n));
                    CK(cub::DeviceReduce::Min(cub_temp(tb), tb, d, cub_out, (int64_t)n));
                } else if (op == Op::Max) {
                    CK(cub::DeviceReduce::Max(nullptr, tb, d, cub_out, (int64_t)n));
                    CK(cub::DeviceReduce::Max(cub_temp(tb), tb, d, cub_out, (int64_t)n));
                } else {
                    CK(cub::DeviceReduce::Sum(nullptr, tb, d, cub_out, (int64_t)n));
                    CK(cub::DeviceReduce::Sum(cub_temp(tb), tb, d, cub_out, (int64_t)n));
                }
            };
            // The size query is host work only; a CUB user who keeps the temporary storage pays it too.
            auto verify = [&, k](const T* out, std::shared_ptr<std::string> first_bits) {
                return [&, out, first_bits, k]() -> std::string {
                    const T got = read1(out);
                    if (op == Op::Min || op == Op::Max) {
                        const T want = op == Op::Min ? r.lo : r.hi;
                        return got == want ? "" : "got " + fmt(got) + ", expected " + fmt(want);
                    }
                    if constexpr (std::is_floating_point<T>::value) {
                        const long double eps = std::numeric_limits<T>::epsilon();
                        const long double tol = 2 * (k + 16) * eps * r.abs;
                        if (std::fabs((long double)got - r.sum) > tol)
                            return "sum " + fmt(got) + ", reference " + fmt((double)r.sum) + ", beyond " + fmt((double)tol);
                        if (op == Op::DetSum && first_bits) {
                            std::string bits((const char*)&got, sizeof got);
                            if (first_bits->empty()) *first_bits = bits;
                            else if (*first_bits != bits) return "deterministic sum changed bits between calls";
                        }
                        return "";
                    } else {
                        return got == r.wsum ? "" : "sum " + fmt(got) + ", expected (wrapping) " + fmt(r.wsum);
                    }
                };
            };
            auto bits = std::make_shared<std::string>();
            run_table(wl, n, (double)(n * sizeof(T)),
                      {Impl{"gpu-algos", ours, verify(ours_out, op == Op::DetSum ? bits : std::shared_ptr<std::string>())},
                       Impl{"CUB", cub, verify(cub_out, std::shared_ptr<std::string>())}},
                      timings);
        }
    }
    CK(cudaFree(ours_out));
    CK(cudaFree(cub_out));
    CK(cudaFree(partials));
    CK(cudaFree(ticket));
}

// ---- scan ----------------------------------------------------------------------------------------
// The check of a scan: integers by the recurrence out[i] = out[i-1] + x[i] (inclusive; exclusive
// shifted), which with out[0] fixes every element exactly; floats against the exact integer prefix
// `exact` of integer-valued inputs, equal while it is exact in T, else within (i / 1024 + 64) u prefix.
template <typename T>
__global__ void check_scan(const T* x, const T* out, const uint64_t* exact, size_t n, bool exclusive, unsigned long long* bad) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        bool ok;
        if constexpr (std::is_floating_point<T>::value) {
            const uint64_t s = exclusive ? (i ? exact[i - 1] : 0) : exact[i];
            const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
            const double limit = sizeof(T) == 4 ? 0x1p24 : 0x1p53;
            const double got = (double)out[i], want = (double)s;
            ok = want < limit ? got == want : fabs(got - want) <= ((double)(i / 1024) + 64.0) * u * want;
        } else {
            using U = std::make_unsigned_t<T>;
            const U want = exclusive ? (i ? (U)out[i - 1] + (U)x[i - 1] : (U)0) : (i ? (U)out[i - 1] + (U)x[i] : (U)x[0]);
            ok = (U)out[i] == want;
        }
        if (!ok) atomicAdd(bad, 1ull);
    }
}

template <typename T> __global__ void to_u64(const T* x, uint64_t* y, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) y[i] = (uint64_t)x[i];
}

template <typename T> static void bench_scan(const T* d, const std::vector<Timing>& timings) {
    const std::string tn = Ty<T>::name;
    const size_t nmax = size_t(1) << g_kmax;
    T *ours_out, *cub_out;
    CK(cudaMalloc(&ours_out, nmax * sizeof(T)));
    CK(cudaMalloc(&cub_out, nmax * sizeof(T)));
    uint64_t* exact = nullptr;
    if (std::is_floating_point<T>::value) {
        // The exact prefix of the integer-valued input, by CUB on u64 (exact: the u64 scan's check holds it).
        uint64_t* wide;
        CK(cudaMalloc(&wide, nmax * sizeof(uint64_t)));
        CK(cudaMalloc(&exact, nmax * sizeof(uint64_t)));
        to_u64<T><<<1024, 256>>>(d, wide, nmax);
        CK(cudaGetLastError());
        size_t tb = 0;
        CK(cub::DeviceScan::InclusiveSum(nullptr, tb, wide, exact, (int64_t)nmax));
        CK(cub::DeviceScan::InclusiveSum(cub_temp(tb), tb, wide, exact, (int64_t)nmax));
        CK(cudaDeviceSynchronize());
        CK(cudaFree(wide));
    }
    unsigned long long* bad;
    CK(cudaMalloc(&bad, sizeof *bad));
    // The library's scan state: one buffer, zeroed once, tagged by epochs as `Algos` does.
    size_t state_words = 0;
    for (int k = g_kmin; k <= g_kmax; k++) state_words = std::max(state_words, plan_of("scan inclusive " + tn, size_t(1) << k).scratch);
    uint64_t* state;
    CK(cudaMalloc(&state, state_words * sizeof(uint64_t)));
    CK(cudaMemset(state, 0, state_words * sizeof(uint64_t)));
    unsigned epoch = 0;
    const unsigned MAX_EPOCH = (1u << 30) - 1;  // gpu_algos_kernels::scan::MAX_EPOCH
    for (bool exclusive : {false, true}) {
        const std::string wl = std::string("scan ") + (exclusive ? "exclusive " : "inclusive ") + tn;
        if (!selected(wl)) continue;
        for (int k = g_kmin; k <= g_kmax; k++) {
            const size_t n = size_t(1) << k;
            Plan& p = plan_of(wl, n);
            auto ours = [&, n] {
                View vin{d, n}, vout{ours_out, n}, vstate{state, p.scratch};
                unsigned e;
                if (p.zero) {
                    CK(cudaMemsetAsync(state, 0, p.scratch * sizeof(uint64_t)));
                    e = 0;
                } else if (epoch >= MAX_EPOCH) {
                    CK(cudaMemsetAsync(state, 0, state_words * sizeof(uint64_t)));
                    e = epoch = 1;
                } else {
                    e = ++epoch;
                }
                launch(p, {&vin, &vout, &vstate, &e});
            };
            auto cub = [&, n] {
                size_t tb = 0;
                if (exclusive) {
                    CK(cub::DeviceScan::ExclusiveSum(nullptr, tb, d, cub_out, (int64_t)n));
                    CK(cub::DeviceScan::ExclusiveSum(cub_temp(tb), tb, d, cub_out, (int64_t)n));
                } else {
                    CK(cub::DeviceScan::InclusiveSum(nullptr, tb, d, cub_out, (int64_t)n));
                    CK(cub::DeviceScan::InclusiveSum(cub_temp(tb), tb, d, cub_out, (int64_t)n));
                }
            };
            auto verify = [&, n](const T* out, bool is_ours) {
                return [&, out, n, is_ours]() -> std::string {
                    if (is_ours && p.grid > 1 && (read1(state + 1) & 1))  // ERROR_GAVE_UP, as the library checks
                        return "a tile gave up waiting (error word set)";
                    CK(cudaMemset(bad, 0, sizeof *bad));
                    check_scan<T><<<1024, 256>>>(d, out, exact, n, exclusive, bad);
                    CK(cudaGetLastError());
                    const unsigned long long b = read1(bad);
                    return b == 0 ? "" : std::to_string(b) + " elements wrong";
                };
            };
            run_table(wl, n, 2.0 * n * sizeof(T), {Impl{"gpu-algos", ours, verify(ours_out, true)}, Impl{"CUB", cub, verify(cub_out, false)}},
                      timings);
        }
    }
    CK(cudaFree(ours_out));
    CK(cudaFree(cub_out));
    CK(cudaFree(exact));
    CK(cudaFree(bad));
    CK(cudaFree(state));
}

// ---- histograms ----------------------------------------------------------------------------------
// The 256 bins of the first 2^k samples for every k, with bin(x) in [0, 256) or -1 (not counted).
template <typename T>
static std::vector<std::vector<uint64_t>> prefix_bins(const std::vector<T>& h, const std::function<int(T)>& bin) {
    const size_t n = h.size(), chunk = size_t(1) << 16;
    std::vector<std::vector<uint64_t>> pre;
    std::vector<uint64_t> acc(256, 0);
    size_t done = 0;
    auto add = [&](size_t b, size_t e, std::vector<uint64_t>& into) {
        for (size_t i = b; i < e; i++) {
            const int c = bin(h[i]);
            if (c >= 0) into[c]++;
        }
    };
    for (int k = g_kmin; k <= g_kmax && (size_t(1) << k) <= std::min(n, chunk); k++) {
        add(done, size_t(1) << k, acc);
        done = size_t(1) << k;
        pre.push_back(acc);
    }
    if (done < n) {
        const size_t chunks = (n - done) / chunk;
        std::vector<std::vector<uint64_t>> part(chunks, std::vector<uint64_t>(256, 0));
        parallel(chunks, 1, [&](size_t b, size_t) { add(done + b * chunk, done + (b + 1) * chunk, part[b]); });
        for (size_t c = 0; c < chunks; c++) {
            for (int j = 0; j < 256; j++) acc[j] += part[c][j];
            const size_t upto = done + (c + 1) * chunk;
            if ((upto & (upto - 1)) == 0 && upto >= (size_t(1) << g_kmin)) pre.push_back(acc);
        }
    }
    return pre;
}

template <typename T, typename Level>
static void bench_histogram(const std::string& wl, const T* d, const std::vector<std::vector<uint64_t>>& ref, Level lower,
                            Level upper, const std::vector<Timing>& timings) {
    if (!selected(wl)) return;
    unsigned *ours_hist, *cub_hist;
    CK(cudaMalloc(&ours_hist, 256 * sizeof(unsigned)));
    CK(cudaMalloc(&cub_hist, 256 * sizeof(unsigned)));
    const bool bytes = std::is_same<T, uint8_t>::value;
    for (int k = g_kmin; k <= g_kmax; k++) {
        const size_t n = size_t(1) << k;
        Plan& p = plan_of(wl, n);
        auto ours = [&, n] {
            View vin{d, n}, vhist{ours_hist, 256};
            CK(cudaMemsetAsync(ours_hist, 0, 256 * sizeof(unsigned)));  // the call zeroes the bins
            T lo = (T)lower, hi = (T)upper;
            if (bytes) launch(p, {&vin, &vhist});
            else launch(p, {&vin, &lo, &hi, &vhist});
        };
        auto cub = [&, n] {
            size_t tb = 0;
            CK(cub::DeviceHistogram::HistogramEven(nullptr, tb, d, cub_hist, 257, lower, upper, (int64_t)n));
            CK(cub::DeviceHistogram::HistogramEven(cub_temp(tb), tb, d, cub_hist, 257, lower, upper, (int64_t)n));
        };
        auto verify = [&, k](unsigned* hist) {
            return [&, hist, k]() -> std::string {
                const std::vector<unsigned> got = to_host(hist, 256);
                const std::vector<uint64_t>& want = ref[k - g_kmin];
                for (int b = 0; b < 256; b++)
                    if (got[b] != want[b]) return "bin " + std::to_string(b) + ": " + std::to_string(got[b]) + ", expected " + std::to_string(want[b]);
                return "";
            };
        };
        run_table(wl, n, (double)(n * sizeof(T)), {Impl{"gpu-algos", ours, verify(ours_hist)}, Impl{"CUB", cub, verify(cub_hist)}}, timings);
    }
    CK(cudaFree(ours_hist));
    CK(cudaFree(cub_hist));
}

// ---- driver --------------------------------------------------------------------------------------
template <typename T> static T* make_input(size_t n, uint64_t seed, bool small) {
    T* d;
    CK(cudaMalloc(&d, n * sizeof(T)));
    fill<T><<<4 * 132, 256>>>(d, n, seed, small);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    return d;
}
static bool any_selected(const std::string& prefix, const char* tn) {
    for (const char* w : {"reduce sum ", "reduce min ", "reduce max ", "reduce deterministic_sum ", "scan inclusive ", "scan exclusive "})
        if (std::string(w).rfind(prefix, 0) == 0 && selected(w + std::string(tn))) return true;
    return false;
}
template <typename T> static void bench_type(uint64_t seed, const std::vector<Timing>& timings) {
    const size_t nmax = size_t(1) << g_kmax;
    const char* tn = Ty<T>::name;
    if (any_selected("reduce", tn)) {
        T* d = make_input<T>(nmax, seed, false);
        const auto ref = prefix_stats(to_host(d, nmax));
        bench_reduce<T>(d, ref, timings);
        CK(cudaFree(d));
    }
    if (any_selected("scan", tn)) {
        // Integers over their range (wrapping sums); floats integer-valued, so the exact prefix is known.
        T* d = make_input<T>(nmax, seed + 1, true);
        bench_scan<T>(d, timings);
        CK(cudaFree(d));
    }
}

int main(int argc, char** argv) {
    const char* ptx = nullptr;
    const char* plans = nullptr;
    std::string csv = "bench/algos.csv", timing = "both";
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if ((a == "--csv" || a == "--timing" || a == "--only" || a == "--kmin" || a == "--kmax") && i + 1 < argc) {
            const std::string v = argv[++i];
            if (a == "--csv") csv = v;
            else if (a == "--timing") timing = v;
            else if (a == "--only") g_only = v;
            else if (a == "--kmin") g_kmin = atoi(v.c_str());
            else g_kmax = atoi(v.c_str());
        } else if (!ptx) ptx = argv[i];
        else if (!plans) plans = argv[i];
        else { fprintf(stderr, "unexpected argument %s\n", argv[i]); return 2; }
    }
    if (!ptx || !plans || g_kmin < 10 || g_kmax > 30 || g_kmin > g_kmax || (timing != "cold" && timing != "host" && timing != "both")) {
        fprintf(stderr, "usage: %s gpu_algos_kernels.ptx plans.tsv [--csv bench/algos.csv] [--timing cold|host|both] [--kmin 10] [--kmax 30] [--only SUBSTRING]\n", argv[0]);
        return 2;
    }
    std::vector<Timing> timings;
    if (timing != "cold") timings.push_back(Timing::Host);
    if (timing != "host") timings.push_back(Timing::Cold);

    CK(cudaSetDevice(0));
    CK(cudaFree(nullptr));
    CU(cuModuleLoad(&g_mod, ptx));
    load_plans(plans);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs; CUB %d.%d.%d; n = 2^%d .. 2^%d; timing: %s\n", prop.name, prop.multiProcessorCount,
           CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, g_kmin, g_kmax, timing.c_str());
    timing_init();

    bench_type<uint32_t>(1, timings);
    bench_type<int32_t>(2, timings);
    bench_type<uint64_t>(3, timings);
    bench_type<int64_t>(4, timings);
    bench_type<float>(5, timings);
    bench_type<double>(6, timings);

    const size_t nmax = size_t(1) << g_kmax;
    if (selected("histogram bytes")) {
        uint8_t* d = make_input<uint8_t>(nmax, 7, false);
        const auto ref = prefix_bins<uint8_t>(to_host(d, nmax), [](uint8_t x) { return (int)x; });
        bench_histogram<uint8_t, int>("histogram bytes", d, ref, 0, 256, timings);
        CK(cudaFree(d));
    }
    if (selected("histogram even u16")) {
        uint16_t* d = make_input<uint16_t>(nmax, 8, false);
        const auto ref = prefix_bins<uint16_t>(to_host(d, nmax), [](uint16_t x) { return x < 65535 ? (int)((uint64_t)x * 256 / 65535) : -1; });
        bench_histogram<uint16_t, int>("histogram even u16", d, ref, 0, 65535, timings);
        CK(cudaFree(d));
    }
    if (selected("histogram even u32")) {
        uint32_t* d = make_input<uint32_t>(nmax, 9, false);
        const auto ref = prefix_bins<uint32_t>(to_host(d, nmax), [](uint32_t x) {
            return x < 4294967295u ? (int)((uint64_t)x * 256 / 4294967295ull) : -1;
        });
        bench_histogram<uint32_t, unsigned>("histogram even u32", d, ref, 0u, 4294967295u, timings);
        CK(cudaFree(d));
    }
    if (selected("histogram even f32")) {
        float* d = make_input<float>(nmax, 10, false);
        const auto ref = prefix_bins<float>(to_host(d, nmax), [](float x) {
            return x >= 0.0f && x < 1.0f ? std::min(255, (int)std::floor((double)x * 256.0)) : -1;
        });
        bench_histogram<float, float>("histogram even f32", d, ref, 0.0f, 1.0f, timings);
        CK(cudaFree(d));
    }

    FILE* f = fopen(csv.c_str(), "w");
    if (!f) { fprintf(stderr, "cannot write %s\n", csv.c_str()); return 1; }
    fprintf(f, "timing,workload,n,impl,ms,gbps\n");
    for (const Row& r : g_rows)
        if (r.ok) fprintf(f, "%s,%s,%zu,%s,%.6f,%.3f\n", r.timing.c_str(), r.workload.c_str(), r.n, r.impl.c_str(), r.ms, r.gbps);
    fclose(f);
    timing_free();
    CK(cudaFree(g_temp));
    printf("%zu rows written to %s; %d check(s) failed (their rows left out)\n", g_rows.size(), csv.c_str(), g_failures);
    return g_failures ? 1 : 0;
}
