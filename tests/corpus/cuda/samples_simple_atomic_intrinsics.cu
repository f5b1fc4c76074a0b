// Twin of tests/corpus/src/samples/simple_atomic_intrinsics.rs: cuda-samples simpleAtomicIntrinsics'
// testKernel (eleven atomics on global memory) with the sample's initial values and computeGold, n / 256
// blocks of 256 threads. Usage: samples_simple_atomic_intrinsics [n] (a multiple of 256, default 16384,
// the sample's 64 x 256).
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_simple_atomic_intrinsics.cu && ./a.out 16384
//
// Each MUTANT k (1..11) makes the k-th atomic a plain read and write (atomicExch: a plain store):
// MUTANT 1: atomicAdd — Rust: simple_atomic_intrinsics.rs line 31 made a plain load and store
// MUTANT 2: atomicSub — Rust: simple_atomic_intrinsics.rs line 32 made a plain load and store
// MUTANT 3: atomicExch — Rust: simple_atomic_intrinsics.rs line 33 made a plain load and store
// MUTANT 4: atomicMax — Rust: simple_atomic_intrinsics.rs line 34 made a plain load and store
// MUTANT 5: atomicMin — Rust: simple_atomic_intrinsics.rs line 35 made a plain load and store
// MUTANT 6: atomicInc — Rust: simple_atomic_intrinsics.rs line 36 made a plain load and store
// MUTANT 7: atomicDec — Rust: simple_atomic_intrinsics.rs line 37 made a plain load and store
// MUTANT 8: atomicCAS — Rust: simple_atomic_intrinsics.rs line 38 made a plain load and store
// MUTANT 9: atomicAnd — Rust: simple_atomic_intrinsics.rs line 39 made a plain load and store
// MUTANT 10: atomicOr — Rust: simple_atomic_intrinsics.rs line 40 made a plain load and store
// MUTANT 11: atomicXor — Rust: simple_atomic_intrinsics.rs line 41 made a plain load and store
#include "samples_common.cuh"

__global__ void testKernel(int *g_odata) {
    const unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int *u = (unsigned int *)g_odata;
    int v;
#if MUTANT != 1
    atomicAdd(&g_odata[0], 10);
#else
    v = g_odata[0]; g_odata[0] = v + 10;
#endif
#if MUTANT != 2
    atomicSub(&g_odata[1], 10);
#else
    v = g_odata[1]; g_odata[1] = v - 10;
#endif
#if MUTANT != 3
    atomicExch(&g_odata[2], tid);
#else
    v = g_odata[2]; g_odata[2] = tid;
#endif
#if MUTANT != 4
    atomicMax(&g_odata[3], tid);
#else
    v = g_odata[3]; g_odata[3] = max(v, (int)tid);
#endif
#if MUTANT != 5
    atomicMin(&g_odata[4], tid);
#else
    v = g_odata[4]; g_odata[4] = min(v, (int)tid);
#endif
#if MUTANT != 6
    atomicInc(&u[5], 17);
#else
    { unsigned o = u[5]; u[5] = (o >= 17) ? 0 : o + 1; }
#endif
#if MUTANT != 7
    atomicDec(&u[6], 137);
#else
    { unsigned o = u[6]; u[6] = ((o == 0) || (o > 137)) ? 137 : o - 1; }
#endif
#if MUTANT != 8
    atomicCAS(&g_odata[7], tid - 1, tid);
#else
    v = g_odata[7]; if (v == (int)(tid - 1)) g_odata[7] = tid;
#endif
#if MUTANT != 9
    atomicAnd(&g_odata[8], 2 * tid + 7);
#else
    v = g_odata[8]; g_odata[8] = v & (2 * tid + 7);
#endif
#if MUTANT != 10
    atomicOr(&g_odata[9], 1 << tid);
#else
    v = g_odata[9]; g_odata[9] = v | (1 << tid);
#endif
#if MUTANT != 11
    atomicXor(&g_odata[10], tid);
#else
    v = g_odata[10]; g_odata[10] = v ^ tid;
#endif
    (void)v;
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 16384);
    if (n <= 0 || n % 256 != 0) {
        printf("FAIL n = %d: a positive multiple of 256\n", n);
        return 1;
    }
    std::vector<int> h(11, 0);
    h[8] = h[10] = 0xff;
    int *d = to_device(h);
    testKernel<<<n / 256, 256>>>(d);
    CK(cudaGetLastError());
    std::vector<int> g = from_device(d, 11);
    int len = n;
    int val;
    const char *fail = nullptr;
    val = 0; for (int i = 0; i < len; ++i) val += 10; if (val != g[0]) fail = "atomicAdd";
    val = 0; for (int i = 0; i < len; ++i) val -= 10; if (!fail && val != g[1]) fail = "atomicSub";
    if (!fail && !(g[2] >= 0 && g[2] < len)) fail = "atomicExch";
    val = -(1 << 8); for (int i = 0; i < len; ++i) val = max(val, i); if (!fail && val != g[3]) fail = "atomicMax";
    val = 1 << 8; for (int i = 0; i < len; ++i) val = min(val, i); if (!fail && val != g[4]) fail = "atomicMin";
    val = 0; for (int i = 0; i < len; ++i) val = (val >= 17) ? 0 : val + 1; if (!fail && val != g[5]) fail = "atomicInc";
    val = 0; for (int i = 0; i < len; ++i) val = ((val == 0) || (val > 137)) ? 137 : val - 1; if (!fail && val != g[6]) fail = "atomicDec";
    if (!fail && !(g[7] >= 0 && g[7] < len)) fail = "atomicCAS";
    val = 0xff; for (int i = 0; i < len; ++i) val &= (2 * i + 7); if (!fail && val != g[8]) fail = "atomicAnd";
    val = 0; for (int i = 0; i < len; ++i) val |= (1u << (i & 31)); if (!fail && val != g[9]) fail = "atomicOr";
    val = 0xff; for (int i = 0; i < len; ++i) val ^= i; if (!fail && val != g[10]) fail = "atomicXor";
    if (fail) {
        printf("FAIL n=%d: %s\n", n, fail);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
