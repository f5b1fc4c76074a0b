// Shared by the cuda-samples twins: the LCG the Rust checks use (tests/corpus/src/samples/common.rs),
// and the argument and error handling of every twin's main.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef MUTANT
#define MUTANT 0
#endif

struct Lcg {
    uint32_t s;
    explicit Lcg(uint32_t seed) : s(seed) {}
    uint32_t next() { return s = s * 1664525u + 1013904223u; }
    uint32_t below(uint32_t m) { return (uint32_t)(((uint64_t)(next() >> 8) * m) >> 24); }
};

#define CK(call)                                                                                    \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            printf("FAIL cuda error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);    \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

static inline int arg_n(int argc, char **argv, int dflt) { return argc > 1 ? atoi(argv[1]) : dflt; }

static inline unsigned nextPow2(unsigned x) {
    --x;
    x |= x >> 1;
    x |= x >> 2;
    x |= x >> 4;
    x |= x >> 8;
    x |= x >> 16;
    return ++x;
}

template <class T> static T *to_device(const std::vector<T> &h) {
    T *d = nullptr;
    CK(cudaMalloc(&d, h.size() * sizeof(T) + 16));
    if (!h.empty()) CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
template <class T> static std::vector<T> from_device(const T *d, size_t n) {
    std::vector<T> h(n);
    if (n) CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}
