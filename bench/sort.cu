// CUB's radix sort on the workloads of gpu-algos' `sort_bench` example, timed the same way, so that the
// two runs in one session give the ratios: `cub::DeviceRadixSort::SortKeys` and `SortPairs` (u32 keys
// and values, f32 and u64 keys), uniform random keys, keys with 16 distinct values, all-equal keys
// (u32 keys and pairs, u64 keys; f32 keys uniform),
// n = 4^k from 2^kmin to 2^kmax; temporary storage allocated once per size, outside the timing, as a
// CUB user does. Beside CUB, the nvcc twin of the library's own algorithm (`sort_twin.cuh`, rows
// `nvcc-twin`, u32 keys and pairs above 4096 keys; `--no-twin` leaves it out), timed the same way.
//
// Build and run (CUDA toolkit and an NVIDIA GPU):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o sort bench/sort.cu
//   ./sort --csv sort-cub.csv [--kmin 10] [--kmax 30] [--no-twin] [--only keys_u32,pairs_u32] [--dists D,D]
// (`--only`: those workloads alone, every distribution of each. `--dists`: the distributions, default
// uniform,few,equal; also narrow, keys below 2^16, and sorted; f32 keys take uniform only.)
//
// Timing, as the example's: device events around the call on an idle stream (`host`: the data may
// be in L2 from the call before), and the same after a 256 MiB memset that has finished before the
// call starts (`flushed`). Medians of 50 calls up to 2^20, 20 up to 2^26, 10 above, after 3 warm-ups.
// Every output is checked (sorted, and a permutation: pairs through their values, the input
// positions, with equal keys' positions rising; keys by the sum and xor of a hash of every key);
// a failed check prints CHECK FAILED and the run exits 1.
//
// CSV columns: timing,workload,dist,n,impl,ms,gkeys.
#include <cub/cub.cuh>
#include "sort_twin.cuh"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static FILE* g_csv = nullptr;
static bool g_twin = true;
static std::string g_only;  // comma-separated workloads; empty: all
// The distributions timed (--dists): any of uniform, few, equal, narrow (keys below 2^16), sorted.
static std::vector<std::string> g_dists = {"uniform", "few", "equal"};
static bool split_dists(const std::string& list) {
    g_dists.clear();
    size_t at = 0;
    while (at <= list.size()) {
        size_t end = list.find(',', at);
        if (end == std::string::npos) end = list.size();
        std::string d = list.substr(at, end - at);
        if (d != "uniform" && d != "few" && d != "equal" && d != "narrow" && d != "sorted") return false;
        g_dists.push_back(d);
        at = end + 1;
    }
    return true;
}
static bool wanted(const std::string& workload) {
    if (g_only.empty()) return true;
    std::string list = "," + g_only + ",";
    return list.find("," + workload + ",") != std::string::npos;
}
static int g_failures = 0;
static void* g_flush;
static const size_t FLUSH_BYTES = 256u << 20;
static cudaEvent_t g_ev0, g_ev1;

static uint64_t splitmix(uint64_t& x) {
    x += 0x9e3779b97f4a7c15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint64_t hash64(uint64_t k) { return splitmix(k); }

template <class K> K from_random(uint64_t r);
template <> uint32_t from_random<uint32_t>(uint64_t r) { return (uint32_t)r; }
template <> uint64_t from_random<uint64_t>(uint64_t r) { return r; }
template <> float from_random<float>(uint64_t r) { return (float)(r >> 40) / (float)(1u << 23) - 1.0f; }
template <class K> const char* label();
template <> const char* label<uint32_t>() { return "u32"; }
template <> const char* label<uint64_t>() { return "u64"; }
template <> const char* label<float>() { return "f32"; }

template <class K> static std::vector<K> make_keys(size_t n, const std::string& dist, uint64_t seed) {
    uint64_t s = seed;
    K few[16];
    for (auto& f : few) f = from_random<K>(splitmix(s));
    K one = from_random<K>(splitmix(s));
    std::vector<K> k(n);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix(s);
        k[i] = dist == "few" ? few[r >> 60] : dist == "equal" ? one : dist == "narrow" ? from_random<K>(r >> 48) : from_random<K>(r);
    }
    if (dist == "sorted") std::sort(k.begin(), k.end(), [](K a, K b) { return a < b; });
    return k;
}
template <class K> static uint64_t bits(K k) {
    uint64_t b = 0;
    memcpy(&b, &k, sizeof k);
    return b;
}

template <class K>
static bool check(const std::vector<K>& keys, const std::vector<K>& out, const std::vector<uint32_t>* vals,
                  const std::string& what) {
    for (size_t j = 1; j < out.size(); j++)
        if (out[j] < out[j - 1]) { fprintf(stderr, "CHECK FAILED %s: out[%zu] > out[%zu]\n", what.c_str(), j - 1, j); return false; }
    if (vals) {
        for (size_t j = 0; j < out.size(); j++) {
            uint32_t i = (*vals)[j];
            if (i >= keys.size() || bits(keys[i]) != bits(out[j])) {
                fprintf(stderr, "CHECK FAILED %s: value %zu is not its key's position\n", what.c_str(), j);
                return false;
            }
            if (j > 0 && bits(out[j - 1]) == bits(out[j]) && (*vals)[j - 1] >= i) {
                fprintf(stderr, "CHECK FAILED %s: unstable at %zu\n", what.c_str(), j);
                return false;
            }
        }
    } else {
        uint64_t s0 = 0, x0 = 0, s1 = 0, x1 = 0;
        for (auto k : keys) { uint64_t h = hash64(bits(k)); s0 += h; x0 ^= h; }
        for (auto k : out) { uint64_t h = hash64(bits(k)); s1 += h; x1 ^= h; }
        if (s0 != s1 || x0 != x1) { fprintf(stderr, "CHECK FAILED %s: not a permutation\n", what.c_str()); return false; }
    }
    return true;
}

static double time_calls(int reps, bool flush, const std::function<void()>& call) {
    std::vector<float> t;
    for (int k = 0; k < reps + 3; k++) {
        if (flush) CK(cudaMemset(g_flush, k & 0xff, FLUSH_BYTES));
        CK(cudaDeviceSynchronize());
        CK(cudaEventRecord(g_ev0));
        call();
        CK(cudaGetLastError());
        CK(cudaEventRecord(g_ev1));
        CK(cudaEventSynchronize(g_ev1));
        float ms;
        CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1));
        if (k >= 3) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}
static int reps_for(size_t n) { return n <= (1u << 20) ? 50 : n <= (1u << 26) ? 20 : 10; }

static void row(const char* timing, const std::string& workload, const std::string& dist, size_t n, double ms,
                const char* impl = "cub") {
    double gkeys = n / (ms * 1e-3) / 1e9;
    printf("%-7s %-12s %-7s %-9s n = 2^%2d  %10.4f ms  %7.2f Gkeys/s\n", timing, workload.c_str(), dist.c_str(), impl,
           __builtin_ctzll(n), ms, gkeys);
    if (g_csv) {
        fprintf(g_csv, "%s,%s,%s,%zu,%s,%.6f,%.4f\n", timing, workload.c_str(), dist.c_str(), n, impl, ms, gkeys);
        fflush(g_csv);  // a run cut short by a time limit keeps every row it finished
    }
}

// Checks the output of `call` before and after its timed calls, times it both ways, and writes its rows.
template <class K, class Call>
static void measure(const std::string& workload, const std::string& dist, size_t n, const std::string& what,
                    const std::vector<K>& keys, const K* kout, const uint32_t* vout, bool pairs, const Call& call,
                    const char* impl) {
    auto verify = [&](const std::string& w) {
        call();
        CK(cudaDeviceSynchronize());
        std::vector<K> out(n);
        std::vector<uint32_t> v(n);
        CK(cudaMemcpy(out.data(), kout, n * sizeof(K), cudaMemcpyDeviceToHost));
        if (pairs) CK(cudaMemcpy(v.data(), vout, n * 4, cudaMemcpyDeviceToHost));
        if (!check(keys, out, pairs ? &v : nullptr, w)) g_failures++;
    };
    verify(what);
    double host = time_calls(reps_for(n), false, call);
    double flushed = time_calls(reps_for(n), true, call);
    verify(what + " (after the timed calls)");
    row("host", workload, dist, n, host, impl);
    row("flushed", workload, dist, n, flushed, impl);
}

// The nvcc twin of the library's sort (sort_twin.cuh) on u32 keys or pairs: rows `nvcc-twin`.
static void run_twin(size_t n, const std::string& dist, bool pairs) {
    std::string workload = std::string(pairs ? "pairs_" : "keys_") + "u32";
    if (!wanted(workload)) return;
    std::string what = "nvcc-twin " + workload + " " + dist + " n = " + std::to_string(n);
    std::vector<uint32_t> keys = make_keys<uint32_t>(n, dist, n ^ 0x5eed);
    std::vector<uint32_t> vals(n);
    for (size_t i = 0; i < n; i++) vals[i] = (uint32_t)i;
    uint32_t *kin, *kout, *vin, *vout;
    CK(cudaMalloc(&kin, n * 4));
    CK(cudaMalloc(&kout, n * 4));
    CK(cudaMalloc(&vin, n * 4));
    CK(cudaMalloc(&vout, n * 4));
    CK(cudaMemcpy(kin, keys.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(vin, vals.data(), n * 4, cudaMemcpyHostToDevice));
    twin::Scratch s;
    CK(pairs ? twin::init<twin::LibraryPairs>(s, n) : twin::init<twin::Library>(s, n));
    bool gave_up = false;
    auto call = [&] {
        gave_up |= pairs ? !twin::sort<twin::LibraryPairs>(s, kin, kout, vin, vout)
                         : !twin::sort<twin::Library>(s, kin, kout, nullptr, nullptr);
    };
    measure<uint32_t>(workload, dist, n, what, keys, kout, vout, pairs, call, "nvcc-twin");
    if (gave_up) { fprintf(stderr, "CHECK FAILED %s: a tile gave up waiting\n", what.c_str()); g_failures++; }
    twin::release(s);
    CK(cudaFree(kin)); CK(cudaFree(kout)); CK(cudaFree(vin)); CK(cudaFree(vout));
}

template <class K> static void run(size_t n, const std::string& dist, bool pairs) {
    std::string workload = std::string(pairs ? "pairs_" : "keys_") + label<K>();
    if (!wanted(workload)) return;
    std::string what = workload + " " + dist + " n = " + std::to_string(n);
    std::vector<K> keys = make_keys<K>(n, dist, n ^ 0x5eed);
    std::vector<uint32_t> vals(n);
    for (size_t i = 0; i < n; i++) vals[i] = (uint32_t)i;
    K *kin, *kout;
    uint32_t *vin, *vout;
    CK(cudaMalloc(&kin, n * sizeof(K)));
    CK(cudaMalloc(&kout, n * sizeof(K)));
    CK(cudaMalloc(&vin, n * 4));
    CK(cudaMalloc(&vout, n * 4));
    CK(cudaMemcpy(kin, keys.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(vin, vals.data(), n * 4, cudaMemcpyHostToDevice));
    size_t temp_bytes = 0;
    void* temp = nullptr;
    if (pairs) CK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, kin, kout, vin, vout, (int)n));
    else CK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, kin, kout, (int)n));
    CK(cudaMalloc(&temp, temp_bytes));
    auto call = [&] {
        if (pairs) CK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, kin, kout, vin, vout, (int)n));
        else CK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, kin, kout, (int)n));
    };
    measure<K>(workload, dist, n, what, keys, kout, vout, pairs, call, "cub");
    CK(cudaFree(kin)); CK(cudaFree(kout)); CK(cudaFree(vin)); CK(cudaFree(vout)); CK(cudaFree(temp));
}

int main(int argc, char** argv) {
    int kmin = 10, kmax = 30;
    setvbuf(stdout, nullptr, _IOLBF, 0);  // rows appear as they are measured, also into a file
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--kmin" && i + 1 < argc) kmin = atoi(argv[++i]);
        else if (a == "--kmax" && i + 1 < argc) kmax = atoi(argv[++i]);
        else if (a == "--no-twin") g_twin = false;
        else if (a == "--only" && i + 1 < argc) g_only = argv[++i];
        else if (a == "--dists" && i + 1 < argc) {
            if (!split_dists(argv[++i])) { fprintf(stderr, "--dists takes uniform, few, equal, narrow, sorted\n"); return 1; }
        }
        else if (a == "--csv" && i + 1 < argc) {
            g_csv = fopen(argv[++i], "w");
            if (!g_csv) { fprintf(stderr, "cannot write %s\n", argv[i]); return 1; }
            fprintf(g_csv, "timing,workload,dist,n,impl,ms,gkeys\n");
        } else { fprintf(stderr, "usage: %s [--kmin K] [--kmax K] [--csv FILE] [--no-twin] [--only W,W] [--dists D,D]\n", argv[0]); return 1; }
    }
    CK(cudaMalloc(&g_flush, FLUSH_BYTES));
    CK(cudaEventCreate(&g_ev0));
    CK(cudaEventCreate(&g_ev1));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    fprintf(stderr, "CUB %d.%d.%d radix sort on %s\n", CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, p.name);
    for (int k = kmin; k <= kmax; k += 2) {
        size_t n = (size_t)1 << k;
        for (const std::string& dist : g_dists) {
            run<uint32_t>(n, dist, false);
            run<uint32_t>(n, dist, true);
            if (g_twin && n > 4096) {
                run_twin(n, dist, false);
                run_twin(n, dist, true);
            }
        }
        if (std::find(g_dists.begin(), g_dists.end(), "uniform") != g_dists.end()) run<float>(n, "uniform", false);
        if (k <= 28)
            for (const std::string& dist : g_dists) run<uint64_t>(n, dist, false);
        if (g_csv) fflush(g_csv);
    }
    if (g_csv) fclose(g_csv);
    if (g_failures) { fprintf(stderr, "%d CHECK FAILED\n", g_failures); return 1; }
    return 0;
}
