// Twin of tests/corpus/src/samples/matrix_mul.rs: cuda-samples matrixMul's MatrixMulCUDA<16>, wA = 48,
// wB = 32, hA = 16 * ceil(n / 512) rows, small integer entries (exact).
// Usage: samples_matrix_mul [n] (about n elements of C, default 4096).
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_matrix_mul.cu && ./a.out 4096
//
// MUTANT 1: barrier after loading the tiles removed — Rust: matrix_mul.rs line 52 removed
// MUTANT 2: barrier after the tiles' partial product removed — Rust: matrix_mul.rs line 56 removed
#include "samples_common.cuh"

template <int BLOCK_SIZE> __global__ void MatrixMulCUDA(float *C, float *A, float *B, int wA, int wB) {
    int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    int aBegin = wA * BLOCK_SIZE * by;
    int aEnd = aBegin + wA - 1;
    int aStep = BLOCK_SIZE;
    int bBegin = BLOCK_SIZE * bx;
    int bStep = BLOCK_SIZE * wB;
    float Csub = 0;
    for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[ty][tx] = A[a + wA * ty + tx];
        Bs[ty][tx] = B[b + wB * ty + tx];
#if MUTANT != 1
        __syncthreads();
#endif
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) Csub += As[ty][k] * Bs[k][tx];
#if MUTANT != 2
        __syncthreads();
#endif
    }
    int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
    C[c + wB * ty + tx] = Csub;
}

int main(int argc, char **argv) {
    int n = arg_n(argc, argv, 4096);
    const int BS = 16, wA = 3 * BS, wB = 2 * BS;
    int hA = ((n + wB * BS - 1) / (wB * BS)) * BS;
    if (hA < BS) hA = BS;
    Lcg rng(n ^ 0x3a3);
    std::vector<float> A(hA * wA), B(wA * wB), want(hA * wB);
    for (auto &x : A) x = (float)rng.below(4);
    for (auto &x : B) x = (float)rng.below(4);
    for (int r = 0; r < hA; r++)
        for (int c = 0; c < wB; c++) {
            float s = 0;
            for (int k = 0; k < wA; k++) s += A[r * wA + k] * B[k * wB + c];
            want[r * wB + c] = s;
        }
    float *d_A = to_device(A), *d_B = to_device(B), *d_C;
    CK(cudaMalloc(&d_C, want.size() * sizeof(float)));
    dim3 threads(BS, BS), grid(wB / BS, hA / BS);
    MatrixMulCUDA<16><<<grid, threads>>>(d_C, d_A, d_B, wA, wB);
    CK(cudaGetLastError());
    std::vector<float> got = from_device(d_C, want.size());
    for (size_t i = 0; i < got.size(); i++)
        if (got[i] != want[i]) {
            printf("FAIL n=%d: C[%zu] = %g, expected %g\n", n, i, got[i], want[i]);
            return 1;
        }
    printf("PASS\n");
    return 0;
}
