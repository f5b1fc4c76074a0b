// Twin of tests/corpus/src/samples/scalar_prod.rs: cuda-samples scalarProd's scalarProdGPU (ACCUM_N 1024,
// 256 threads), n / elementN vectors of elementN = min(n, 4096), ceil(vectors / 2) blocks (at most 128),
// small integer inputs (exact). Usage: samples_scalar_prod [n] (default 16384).
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_scalar_prod.cu && ./a.out 16384
//
// MUTANT 1: barrier at the top of each tree step removed — Rust: scalar_prod.rs line 61 removed
// MUTANT 2: barrier after the tree removed — Rust: scalar_prod.rs line 69 removed
#include <cooperative_groups.h>
#include "samples_common.cuh"
namespace cg = cooperative_groups;

#define IMUL(a, b) __mul24(a, b)
#define ACCUM_N 1024

__global__ void scalarProdGPU(float *d_C, float *d_A, float *d_B, int vectorN, int elementN) {
    cg::thread_block cta = cg::this_thread_block();
    __shared__ float accumResult[ACCUM_N];
    for (int vec = blockIdx.x; vec < vectorN; vec += gridDim.x) {
        int vectorBase = IMUL(elementN, vec);
        int vectorEnd = vectorBase + elementN;
        for (int iAccum = threadIdx.x; iAccum < ACCUM_N; iAccum += blockDim.x) {
            float sum = 0;
            for (int pos = vectorBase + iAccum; pos < vectorEnd; pos += ACCUM_N) sum += d_A[pos] * d_B[pos];
            accumResult[iAccum] = sum;
        }
        for (int stride = ACCUM_N / 2; stride > 0; stride >>= 1) {
#if MUTANT != 1
            cg::sync(cta);
#endif
            for (int iAccum = threadIdx.x; iAccum < stride; iAccum += blockDim.x)
                accumResult[iAccum] += accumResult[stride + iAccum];
        }
#if MUTANT != 2
        cg::sync(cta);
#endif
        if (threadIdx.x == 0) d_C[vec] = accumResult[0];
    }
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 16384);
    int elementN = n < 1 ? 1 : (n > 4096 ? 4096 : n);
    int vectorN = n / elementN;
    if (vectorN < 1) vectorN = 1;
    int len = vectorN * elementN;
    Lcg rng(n ^ 0xab);
    std::vector<float> a(len), b(len), want(vectorN, 0.0f);
    for (auto &x : a) x = (float)rng.below(8);
    for (auto &x : b) x = (float)rng.below(8);
    for (int v = 0; v < vectorN; v++) {
        double s = 0;
        for (int i = v * elementN; i < (v + 1) * elementN; i++) s += a[i] * b[i];
        want[v] = (float)s;
    }
    int blocks = (vectorN + 1) / 2;
    if (blocks > 128) blocks = 128;
    float *d_A = to_device(a), *d_B = to_device(b), *d_C;
    CK(cudaMalloc(&d_C, vectorN * sizeof(float)));
    scalarProdGPU<<<blocks, 256>>>(d_C, d_A, d_B, vectorN, elementN);
    CK(cudaGetLastError());
    std::vector<float> got = from_device(d_C, vectorN);
    for (int v = 0; v < vectorN; v++)
        if (got[v] != want[v]) {
            printf("FAIL n=%d: d_C[%d] = %g, expected %g\n", n, v, got[v], want[v]);
            return 1;
        }
    printf("PASS\n");
    return 0;
}
