// The nvcc twin of gpu-algos' radix sort: the same algorithm, tile shape and launches as the Rust
// kernels in `gpu-algos-kernels/src/sort/` (histogram.rs, onesweep.rs), written in CUDA C++, so that
// `sort.cu` can time the two side by side and show whether the Rust code or the algorithm is the
// limit. `u32` keys, alone or with `u32` values, ascending, all 32 bits (four passes).
//
// One call: zero the counts and every pass's state, count the digits of all four passes in one read
// (`twin_histogram`), then four passes (`twin_pass`) that each take a tile by ticket, count its
// digits per warp (shared atomic adds) and publish the tile's digit counts before ranking, turn the
// warps' counts into their places in the tile, rank and stage each key in one step (8 ballots per
// key; the highest peer takes the places by an atomic add and shuffles the first to its peers),
// find each digit's exclusive prefix by decoupled look-back over volatile status words (8 words
// loaded at once), publish the inclusive prefix, write the staged keys out (full tiles compiled
// apart from the last, with no check of which keys exist), then load the values, stage them at
// their keys' places and write them to the places kept in the keys' slots; then read the error
// word, as the library's call does. As the library's pass, a pass whose keys all share one digit
// writes every key back in place, and a tile whose keys share one digit takes their positions as
// their places instead of ranking them.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>
#include <type_traits>

namespace twin {

constexpr int RADIX = 256, PASSES = 4;
// The library's tile shapes (gpu-algos-kernels/src/sort/mod.rs: ITEMS, BLOCK for 4-byte keys alone
// or with 4-byte values) and ranking (ballots).
constexpr int ITEMS = 20, BLOCK = 384;
constexpr int HIST_BLOCK = 512, COLUMNS = 4, MIN_BLOCK_KEYS = 16 * 1024, WINDOW = 8, HEADER = 2;
constexpr uint32_t FLAG_PREFIX = 1u << 31, SPIN_LIMIT = 1u << 22, ERROR_GAVE_UP = 1;

__host__ __device__ inline size_t tiles(size_t n, int tile) { return n == 0 ? 1 : (n + tile - 1) / tile; }
__host__ __device__ inline size_t pass_state_len(size_t n, int tile) { return HEADER + tiles(n, tile) * RADIX; }

// How a warp finds the lanes whose digit equals its own: the library's `warp::match_bits` (a ballot
// of the lanes present, then one ballot per bit, complemented where the lane's bit is clear), or
// `match.any.sync` (one instruction).
enum Rank { BALLOTS = 0, MATCH = 1 };
template <int RANK> __device__ __forceinline__ uint32_t peers_of(uint32_t d) {
    if (RANK == MATCH) return __match_any_sync(0xffffffffu, d);
    uint32_t peers = __ballot_sync(0xffffffffu, true);
#pragma unroll
    for (int b = 0; b < 8; b++) {
        asm("{ .reg .pred p; .reg .b32 t; and.b32 t, %1, %2; setp.ne.u32 p, t, 0; vote.sync.ballot.b32 t, p, 0xffffffff;"
            " @!p not.b32 t, t; and.b32 %0, %0, t; }" : "+r"(peers) : "r"(d), "r"(1u << b));
    }
    return peers;
}
__device__ __forceinline__ uint32_t status(bool prefix, uint32_t v) { return (v + 1) | (prefix ? FLAG_PREFIX : 0); }

__global__ void __launch_bounds__(HIST_BLOCK) twin_histogram(const uint32_t* keys, size_t n, uint32_t* counts) {
    __shared__ uint32_t sh[PASSES * RADIX * COLUMNS];
    for (int k = threadIdx.x; k < PASSES * RADIX * COLUMNS; k += blockDim.x) sh[k] = 0;
    __syncthreads();
    const int column = (threadIdx.x & 31) % COLUMNS;
    auto count = [&](uint32_t key) {
#pragma unroll
        for (int p = 0; p < PASSES; p++) atomicAdd(&sh[(p * RADIX + ((key >> (8 * p)) & 0xff)) * COLUMNS + column], 1u);
    };
    const size_t nv = n / 4, stride = (size_t)gridDim.x * blockDim.x;
    const uint4* v = reinterpret_cast<const uint4*>(keys);
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    // Four 16-byte loads in flight per thread, as the library's LOADS.
    for (; i + 3 * stride < nv; i += 4 * stride) {
        uint4 q[4];
#pragma unroll
        for (int l = 0; l < 4; l++) q[l] = __ldg(&v[i + l * stride]);
#pragma unroll
        for (int l = 0; l < 4; l++) { count(q[l].x); count(q[l].y); count(q[l].z); count(q[l].w); }
    }
    for (; i < nv; i += stride) {
        uint4 q = __ldg(&v[i]);
        count(q.x); count(q.y); count(q.z); count(q.w);
    }
    if (blockIdx.x == 0)
        for (size_t i = nv * 4 + threadIdx.x; i < n; i += blockDim.x) count(keys[i]);
    __syncthreads();
    for (int k = threadIdx.x; k < PASSES * RADIX; k += blockDim.x) {
        uint32_t c = 0;
        for (int col = 0; col < COLUMNS; col++) c += sh[k * COLUMNS + col];
        if (c > 0) atomicAdd(&counts[k], c);
    }
}

// Warp 0: dst[d] = src[0] + ... + src[d - 1].
__device__ __forceinline__ void exclusive_digits(const uint32_t* src, uint32_t* dst) {
    const int lane = threadIdx.x & 31;
    uint32_t v[8], total = 0;
#pragma unroll
    for (int j = 0; j < 8; j++) { v[j] = src[8 * lane + j]; total += v[j]; }
    uint32_t run = total;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        uint32_t x = __shfl_up_sync(0xffffffffu, run, o);
        if (lane >= o) run += x;
    }
    run -= total;
#pragma unroll
    for (int j = 0; j < 8; j++) { dst[8 * lane + j] = run; run += v[j]; }
}

__device__ __forceinline__ uint32_t look_back(volatile uint32_t* state, size_t at, size_t tile, int d) {
    uint32_t excl = 0;
    size_t next = tile;
    for (;;) {
        uint32_t words[WINDOW];
#pragma unroll
        for (int j = 0; j < WINDOW; j++) words[j] = next > (size_t)j ? state[at + HEADER + (next - 1 - j) * RADIX + d] : 0;
        bool found = false;
#pragma unroll
        for (int j = 0; j < WINDOW; j++) {
            if (!found && next > (size_t)j) {
                size_t word_at = at + HEADER + (next - 1 - j) * RADIX + d;
                uint32_t word = words[j];
                uint32_t spins = 0;
                while (word == 0 && spins < SPIN_LIMIT) { spins++; word = state[word_at]; }
                if (word == 0) { atomicOr((uint32_t*)&state[1], ERROR_GAVE_UP); return excl; }
                excl += (word & ~FLAG_PREFIX) - 1;
                found = (word & FLAG_PREFIX) != 0;
            }
        }
        if (found || next <= WINDOW) return excl;
        next -= WINDOW;
    }
}

template <int BLOCK, int ITEMS, int RANK, bool PAIRS, int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
twin_pass(const uint32_t* keys_in, uint32_t* keys_out, const uint32_t* vals_in, uint32_t* vals_out, size_t n,
          const uint32_t* counts, uint32_t* state_all, int pass) {
    constexpr int WARPS = BLOCK / 32, TILE = BLOCK * ITEMS;
    extern __shared__ uint32_t smem[];
    uint32_t* warps = smem;                   // WARPS * RADIX
    uint32_t* count = warps + WARPS * RADIX;  // RADIX
    uint32_t* start = count + RADIX;
    uint32_t* base = start + RADIX;
    uint32_t* tile_sh = base + RADIX;         // 1
    uint32_t* skeys = tile_sh + 1;            // TILE
    uint32_t* svals = skeys + TILE;           // TILE (pairs)
    volatile uint32_t* state = state_all;
    const size_t at = (size_t)pass * pass_state_len(n, TILE);
    const size_t ntiles = tiles(n, TILE);
    const int t = threadIdx.x, lane = t & 31, w = t >> 5;
    uint32_t* counters = warps + w * RADIX;
#pragma unroll
    for (int j = 0; j < RADIX / 32; j++) counters[32 * j + lane] = 0;
    if (t == 0) *tile_sh = atomicAdd(&state_all[at], 1u);
    __syncthreads();
    const size_t tile = *tile_sh;
    if (tile >= ntiles) return;
    const size_t first = tile * TILE;
    // Every tile but the last is full: its code (FULL) has no check of which keys exist.
    auto body = [&](auto full_tag) {
        constexpr bool FULL = decltype(full_tag)::value;
        const size_t valid = FULL ? TILE : n - first < (size_t)TILE ? n - first : TILE;
        const uint32_t missing = TILE - (uint32_t)valid;
        const int shift = 8 * pass;
        const size_t seg = first + (size_t)w * 32 * ITEMS;
        const bool whole = FULL || seg + 32 * ITEMS <= n;
        uint32_t keys[ITEMS];
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            size_t idx = seg + 32 * i + lane;
            keys[i] = (whole || idx < n) ? keys_in[idx] : 0;
        }
        auto here = [&](int i) { return whole || seg + 32 * i + lane < n; };
        auto digit_of = [&](int i) -> uint32_t { return here(i) ? (keys[i] >> shift) & 0xff : RADIX - 1; };
        // A pass whose keys all share one digit (its count is n) moves none: every tile writes its keys
        // back in place, with no status word and no wait.
        const bool lone = counts[pass * RADIX + ((keys_in[first] >> shift) & 0xff)] == n;
        // Early counts: the warp's digits, then per digit the warps' offsets and the tile's count, published.
#pragma unroll
        for (int i = 0; i < ITEMS; i++) atomicAdd(&counters[digit_of(i)], 1u);
        __syncthreads();
        if (lone) {
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                size_t idx = seg + 32 * i + lane;
                if (here(i)) {
                    keys_out[idx] = keys[i];
                    if (PAIRS) vals_out[idx] = vals_in[idx];
                }
            }
            return;
        }
        auto aggregate = [&](int d, uint32_t total) { return d == RADIX - 1 ? total - missing : total; };
        for (int d = t; d < RADIX; d += blockDim.x) {
            uint32_t total = 0;
#pragma unroll
            for (int u = 0; u < WARPS; u++) total += warps[u * RADIX + d];
            count[d] = total;
            if (tile > 0) state[at + HEADER + tile * RADIX + d] = status(false, aggregate(d, total));
        }
        __syncthreads();
        if (w == 0) {
            exclusive_digits(count, start);
            if (tile == 0) exclusive_digits(counts + pass * RADIX, base);
        }
        __syncthreads();
        uint32_t place[ITEMS];
        if (count[digit_of(0)] == TILE) {
            // The tile's keys share one digit: each key's place is its position, none is ranked.
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                place[i] = w * 32 * ITEMS + 32 * i + lane;
                if (here(i)) skeys[place[i]] = keys[i];
            }
        } else {
            // Per digit the warps' counts become their places: the digit's start plus the warps' before.
            for (int d = t; d < RADIX; d += blockDim.x) {
                uint32_t run = start[d];
#pragma unroll
                for (int u = 0; u < WARPS; u++) { uint32_t c = warps[u * RADIX + d]; warps[u * RADIX + d] = run; run += c; }
            }
            __syncthreads();
            // Rank and stage: the highest peer takes the places (atomic add), a shuffle hands out the first.
            const uint32_t below = (1u << lane) - 1;
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                uint32_t d = digit_of(i);
                uint32_t peers = peers_of<RANK>(d);
                int highest = 31 - __clz(peers);
                uint32_t f = 0;
                if (lane == highest) f = atomicAdd(&counters[d], (uint32_t)__popc(peers));
                uint32_t p = __shfl_sync(0xffffffffu, f, highest) + __popc(peers & below);
                place[i] = p;
                if (here(i)) skeys[p] = keys[i];
                __syncwarp();
            }
        }
        for (int d = t; d < RADIX; d += blockDim.x) {
            uint32_t excl = tile == 0 ? base[d] : look_back(state, at, tile, d);
            state[at + HEADER + tile * RADIX + d] = status(true, excl + aggregate(d, count[d]));
            base[d] = excl - start[d];
        }
        __syncthreads();
        // Keys out; with values, each position's place kept in its key's slot (the thread's own).
#pragma unroll
        for (int s = 0; s < ITEMS; s++) {
            int j = s * blockDim.x + t;
            if (FULL || (size_t)j < valid) {
                uint32_t key = skeys[j];
                uint32_t p = base[(key >> shift) & 0xff] + j;
                keys_out[p] = key;
                if (PAIRS) skeys[j] = p;
            }
        }
        if (!PAIRS) return;
        // Values once the keys are out: loaded, staged at their keys' places, written to the places.
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            size_t idx = seg + 32 * i + lane;
            if (here(i)) svals[place[i]] = vals_in[idx];
        }
        __syncthreads();
#pragma unroll
        for (int s = 0; s < ITEMS; s++) {
            int j = s * blockDim.x + t;
            if (FULL || (size_t)j < valid) vals_out[skeys[j]] = svals[j];
        }
    };
    if (first + TILE <= n) body(std::true_type{});
    else body(std::false_type{});
}

// A variant of the pass: its tile shape, ranking and blocks per SM.
template <int BLOCK_, int ITEMS_, int RANK_, int MIN_BLOCKS_KEYS_ = 2, int MIN_BLOCKS_PAIRS_ = 1>
struct Shape {
    static constexpr int block = BLOCK_, items = ITEMS_, tile = BLOCK_ * ITEMS_;
    static size_t shared_bytes(bool pairs) { return (size_t)(BLOCK_ / 32 * RADIX + 3 * RADIX + 1 + tile * (pairs ? 2 : 1)) * 4; }
    static constexpr auto keys = twin_pass<BLOCK_, ITEMS_, RANK_, false, MIN_BLOCKS_KEYS_>;
    static constexpr auto pairs = twin_pass<BLOCK_, ITEMS_, RANK_, true, MIN_BLOCKS_PAIRS_>;
};
// The library's shapes: keys alone and pairs of 4-byte keys and values on 384 threads, two blocks per SM.
using Library = Shape<BLOCK, ITEMS, BALLOTS, 2, 2>;
using LibraryPairs = Shape<BLOCK, ITEMS, BALLOTS, 2, 2>;

// Scratch of one size, allocated once outside the timing (as the library keeps its scratch).
struct Scratch {
    uint32_t *counts = nullptr, *state = nullptr, *temp_keys = nullptr, *temp_vals = nullptr, *error = nullptr;
    size_t n = 0;
    int hist_grid = 1;
};

template <class S = Library> inline cudaError_t init(Scratch& s, size_t n) {
    s.n = n;
    cudaError_t e;
    if ((e = cudaMalloc(&s.counts, PASSES * RADIX * 4))) return e;
    if ((e = cudaMalloc(&s.state, PASSES * pass_state_len(n, S::tile) * 4))) return e;
    if ((e = cudaMalloc(&s.temp_keys, n * 4))) return e;
    if ((e = cudaMalloc(&s.temp_vals, n * 4))) return e;
    if ((e = cudaMallocHost(&s.error, 4))) return e;
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    size_t grid = (n + MIN_BLOCK_KEYS - 1) / MIN_BLOCK_KEYS;
    s.hist_grid = (int)(grid < 1 ? 1 : grid > (size_t)(2 * sms) ? 2 * sms : grid);
    if ((e = cudaFuncSetAttribute(S::keys, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::shared_bytes(false)))) return e;
    return cudaFuncSetAttribute(S::pairs, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::shared_bytes(true));
}
inline void release(Scratch& s) {
    cudaFree(s.counts); cudaFree(s.state); cudaFree(s.temp_keys); cudaFree(s.temp_vals); cudaFreeHost(s.error);
}

// One sort: keys (and values) from `kin` (`vin`) to `kout` (`vout`); false if a tile gave up waiting.
template <class S = Library>
inline bool sort(Scratch& s, const uint32_t* kin, uint32_t* kout, const uint32_t* vin, uint32_t* vout) {
    const size_t n = s.n;
    const bool pairs = vin != nullptr;
    cudaMemsetAsync(s.counts, 0, PASSES * RADIX * 4);
    cudaMemsetAsync(s.state, 0, PASSES * pass_state_len(n, S::tile) * 4);
    twin_histogram<<<s.hist_grid, HIST_BLOCK>>>(kin, n, s.counts);
    const uint32_t* ksrc[PASSES] = {kin, s.temp_keys, kout, s.temp_keys};
    uint32_t* kdst[PASSES] = {s.temp_keys, kout, s.temp_keys, kout};
    const uint32_t* vsrc[PASSES] = {vin, s.temp_vals, vout, s.temp_vals};
    uint32_t* vdst[PASSES] = {s.temp_vals, vout, s.temp_vals, vout};
    const unsigned grid = (unsigned)tiles(n, S::tile);
    for (int p = 0; p < PASSES; p++) {
        auto kernel = pairs ? S::pairs : S::keys;
        kernel<<<grid, S::block, S::shared_bytes(pairs)>>>(ksrc[p], kdst[p], pairs ? vsrc[p] : nullptr,
                                                           pairs ? vdst[p] : nullptr, n, s.counts, s.state, p);
    }
    cudaMemcpy(s.error, s.state + 1, 4, cudaMemcpyDeviceToHost);
    return (*s.error & ERROR_GAVE_UP) == 0;
}

}  // namespace twin
