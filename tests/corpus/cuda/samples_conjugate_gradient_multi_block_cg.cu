// Twin of tests/corpus/src/samples/conjugate_gradient_multi_block_cg.rs: cuda-samples
// conjugateGradientMultiBlockCG's gpuConjugateGradient (the whole solver in one cooperative kernel),
// 512 threads per block, ceil(N / 512) blocks capped at the co-resident count, the sample's tridiagonal
// system from the same LCG as the Rust check, the sample's checks (sqrt(r1) < tol, max |A x - rhs|).
// Usage: samples_conjugate_gradient_multi_block_cg [N] (default 4096).
// Build and run: nvcc -arch=sm_90 [-DMUTANT=k] samples_conjugate_gradient_multi_block_cg.cu && ./a.out 4096
// Timeout: 40 s (a missing grid.sync() can leave threads at a later grid.sync() that others never reach)
//
// MUTANT 1: block barrier in gpuDotProduct removed — Rust: conjugate_gradient_multi_block_cg.rs line 135 removed
// MUTANT 2: atomicAdd of the block's dot product as a plain load and store — Rust: conjugate_gradient_multi_block_cg.rs line 141 made a plain load and store
// MUTANT 3: grid.sync() after the first SpMV removed — Rust: conjugate_gradient_multi_block_cg.rs line 168 removed (redundant)
// MUTANT 4: grid.sync() after the first saxpy removed — Rust: conjugate_gradient_multi_block_cg.rs line 170 removed (redundant)
// MUTANT 5: grid.sync() after the first dot product removed — Rust: conjugate_gradient_multi_block_cg.rs line 172 removed
// MUTANT 6: grid.sync() after the copy / scale-and-saxpy removed — Rust: conjugate_gradient_multi_block_cg.rs line 188 removed
// MUTANT 7: grid.sync() after the SpMV and the zeroing removed — Rust: conjugate_gradient_multi_block_cg.rs line 193 removed
// MUTANT 8: grid.sync() after the dot product p.Ax removed — Rust: conjugate_gradient_multi_block_cg.rs line 195 removed
// MUTANT 9: grid.sync() after the two saxpys removed — Rust: conjugate_gradient_multi_block_cg.rs line 200 removed
// MUTANT 10: grid.sync() after the second zeroing removed — Rust: conjugate_gradient_multi_block_cg.rs line 204 removed
// MUTANT 11: grid.sync() after the dot product r.r removed — Rust: conjugate_gradient_multi_block_cg.rs line 206 removed
#include <cmath>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include "samples_common.cuh"
namespace cg = cooperative_groups;

#define THREADS_PER_BLOCK 512

// grid.sync() number k of the kernel, unless this build removes it.
#define GRID_SYNC(k)                                                                                \
    do {                                                                                            \
        if (MUTANT != (k)) cg::sync(grid);                                                          \
    } while (0)

__device__ void gpuSpMV(int *I, int *J, float *val, int num_rows, float alpha, float *inputVecX,
                        float *outputVecY, const cg::grid_group &grid) {
    for (int i = grid.thread_rank(); i < num_rows; i += grid.size()) {
        int row_elem = I[i];
        int next_row_elem = I[i + 1];
        int num_elems_this_row = next_row_elem - row_elem;
        float output = 0.0;
        for (int j = 0; j < num_elems_this_row; j++) output += alpha * val[row_elem + j] * inputVecX[J[row_elem + j]];
        outputVecY[i] = output;
    }
}

__device__ void gpuSaxpy(float *x, float *y, float a, int size, const cg::grid_group &grid) {
    for (int i = grid.thread_rank(); i < size; i += grid.size()) y[i] = a * x[i] + y[i];
}

__device__ void gpuDotProduct(float *vecA, float *vecB, double *result, int size, const cg::thread_block &cta,
                              const cg::grid_group &grid) {
    extern __shared__ double tmp[];
    double temp_sum = 0.0;
    for (int i = grid.thread_rank(); i < size; i += grid.size()) temp_sum += static_cast<double>(vecA[i] * vecB[i]);
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
    temp_sum = cg::reduce(tile32, temp_sum, cg::plus<double>());
    if (tile32.thread_rank() == 0) tmp[tile32.meta_group_rank()] = temp_sum;
#if MUTANT != 1
    cg::sync(cta);
#endif
    if (tile32.meta_group_rank() == 0) {
        temp_sum = tile32.thread_rank() < tile32.meta_group_size() ? tmp[tile32.thread_rank()] : 0.0;
        temp_sum = cg::reduce(tile32, temp_sum, cg::plus<double>());
        if (tile32.thread_rank() == 0) {
#if MUTANT != 2
            atomicAdd(result, temp_sum);
#else
            *result = *result + temp_sum;
#endif
        }
    }
}

__device__ void gpuCopyVector(float *srcA, float *destB, int size, const cg::grid_group &grid) {
    for (int i = grid.thread_rank(); i < size; i += grid.size()) destB[i] = srcA[i];
}

__device__ void gpuScaleVectorAndSaxpy(const float *x, float *y, float a, float scale, int size,
                                       const cg::grid_group &grid) {
    for (int i = grid.thread_rank(); i < size; i += grid.size()) y[i] = a * x[i] + scale * y[i];
}

extern "C" __global__ void gpuConjugateGradient(int *I, int *J, float *val, float *x, float *Ax, float *p, float *r,
                                                double *dot_result, int nnz, int N, float tol) {
    cg::thread_block cta = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    int max_iter = 10000;
    float alpha = 1.0, alpham1 = -1.0, r0 = 0.0, r1, b, a, na;
    gpuSpMV(I, J, val, N, alpha, x, Ax, grid);
    GRID_SYNC(3);
    gpuSaxpy(Ax, r, alpham1, N, grid);
    GRID_SYNC(4);
    gpuDotProduct(r, r, dot_result, N, cta, grid);
    GRID_SYNC(5);
    r1 = *dot_result;
    int k = 1;
    while (r1 > tol * tol && k <= max_iter) {
        if (k > 1) {
            b = r1 / r0;
            gpuScaleVectorAndSaxpy(r, p, alpha, b, N, grid);
        } else {
            gpuCopyVector(r, p, N, grid);
        }
        GRID_SYNC(6);
        gpuSpMV(I, J, val, N, alpha, p, Ax, grid);
        if (threadIdx.x == 0 && blockIdx.x == 0) *dot_result = 0.0;
        GRID_SYNC(7);
        gpuDotProduct(p, Ax, dot_result, N, cta, grid);
        GRID_SYNC(8);
        a = r1 / *dot_result;
        gpuSaxpy(p, x, a, N, grid);
        na = -a;
        gpuSaxpy(Ax, r, na, N, grid);
        r0 = r1;
        GRID_SYNC(9);
        if (threadIdx.x == 0 && blockIdx.x == 0) *dot_result = 0.0;
        GRID_SYNC(10);
        gpuDotProduct(r, r, dot_result, N, cta, grid);
        GRID_SYNC(11);
        r1 = *dot_result;
        k++;
    }
}

// genTridiag with the LCG of the Rust check (seed N ^ 0xc9, values in steps of 1/1024).
static void genTridiag(std::vector<int> &I, std::vector<int> &J, std::vector<float> &val, int N) {
    Lcg rng((uint32_t)N ^ 0xc9);
    auto unit = [&] { return (float)rng.below(1024) / 1024.0f; };
    int nz = N == 1 ? 1 : (N - 2) * 3 + 4;
    I.assign(N + 1, 0);
    J.assign(nz, 0);
    val.assign(nz, 0.0f);
    val[0] = unit() + 10.0f;
    if (N > 1) {
        J[1] = 1;
        val[1] = unit();
    }
    for (int i = 1; i < N; i++) {
        I[i] = i > 1 ? I[i - 1] + 3 : 2;
        int start = (i - 1) * 3 + 2;
        J[start] = i - 1;
        J[start + 1] = i;
        if (i < N - 1) J[start + 2] = i + 1;
        val[start] = val[start - 1];
        val[start + 1] = unit() + 10.0f;
        if (i < N - 1) val[start + 2] = unit();
    }
    I[N] = nz;
}

int main(int argc, char **argv) {
    int N = arg_n(argc, argv, 4096);
    const float tol = 1e-5f;
    std::vector<int> I, J;
    std::vector<float> val;
    genTridiag(I, J, val, N);
    int nnz = (int)val.size();
    std::vector<float> zeros(N, 0.0f), ones(N, 1.0f);
    int *d_I = to_device(I), *d_J = to_device(J);
    float *d_val = to_device(val), *d_x = to_device(zeros), *d_Ax = to_device(zeros), *d_p = to_device(zeros);
    float *d_r = to_device(ones);
    double *d_dot = nullptr;
    CK(cudaMalloc(&d_dot, sizeof(double)));
    CK(cudaMemset(d_dot, 0, sizeof(double)));
    int smem = sizeof(double) * (THREADS_PER_BLOCK / 32 + 1), perSm = 0, sms = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, gpuConjugateGradient, THREADS_PER_BLOCK, smem));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int blocks = (N + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
    if (blocks > perSm * sms) blocks = perSm * sms;
    void *args[] = {&d_I, &d_J, &d_val, &d_x, &d_Ax, &d_p, &d_r, &d_dot, &nnz, &N, (void *)&tol};
    CK(cudaLaunchCooperativeKernel((void *)gpuConjugateGradient, dim3(blocks), dim3(THREADS_PER_BLOCK), args, smem, 0));
    CK(cudaDeviceSynchronize());
    std::vector<float> x = from_device(d_x, N);
    float r1 = (float)from_device(d_dot, 1)[0];
    float err = 0.0f;
    for (int i = 0; i < N; i++) {
        float rsum = 0.0f;
        for (int j = I[i]; j < I[i + 1]; j++) rsum += val[j] * x[J[j]];
        err = fmaxf(err, fabsf(rsum - 1.0f));
    }
    if (!(sqrtf(r1) < tol) || !(err <= 1e-4f)) {
        printf("FAIL N=%d: sqrt(r1) = %g (tol %g), max |A x - rhs| = %g (%d blocks)\n", N, sqrtf(r1), tol, err, blocks);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
