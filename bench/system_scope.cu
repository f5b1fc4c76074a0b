// The CUDA C++ twin of example 19's ping-pong (system_scope): one GPU thread and one host thread bounce
// a counter through two flags in mapped page-locked host memory (one volatile flag each way,
// __threadfence_system() on the GPU, acquire/release atomics on the host), next to the naive
// alternative (a kernel launch + cudaMemcpy per round trip). Same protocol and the same measurement as
// `host run system_scope` on a GPU, to compare the Rust kernel with nvcc's in the same session.
//
// Build and run (on a machine with the CUDA toolkit):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o system_scope bench/system_scope.cu
//   ./system_scope [ROUNDS]
#include <cuda_runtime.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CHECK(x)                                                                                     \
    do {                                                                                             \
        cudaError_t e_ = (x);                                                                        \
        if (e_ != cudaSuccess) {                                                                     \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

__global__ void ping_pong(volatile unsigned* to_gpu, volatile unsigned* to_host, unsigned* status, unsigned rounds,
                          unsigned max_polls) {
    unsigned done = 0;
    bool ok = true;
    while (done < rounds) {
        unsigned r = done + 1, polls = 0;
        while (*to_gpu != r) {
            if (++polls >= max_polls) {
                ok = false;
                break;
            }
        }
        if (!ok) break;
        __threadfence_system();  // acquires round r, releases the answer
        *to_host = r;
        done = r;
    }
    status[0] = done;
    status[1] = ok ? 1 : 2;
}

__global__ void bump(unsigned* x) { x[0] += 1; }

static double median_of(std::vector<double> v, double q = 0.5) {
    std::sort(v.begin(), v.end());
    return v[(size_t)((v.size() - 1) * q + 0.5)];
}

int main(int argc, char** argv) {
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 20000;
    const unsigned skip = 1000;
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    unsigned *h_to_gpu, *h_to_host, *d_to_gpu, *d_to_host, *d_status, *d_x;
    CHECK(cudaHostAlloc(&h_to_gpu, 64, cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&h_to_host, 64, cudaHostAllocMapped));
    *h_to_gpu = 0;
    *h_to_host = 0;
    CHECK(cudaHostGetDevicePointer((void**)&d_to_gpu, h_to_gpu, 0));
    CHECK(cudaHostGetDevicePointer((void**)&d_to_host, h_to_host, 0));
    CHECK(cudaMalloc(&d_status, 8));
    CHECK(cudaMalloc(&d_x, 4));
    CHECK(cudaMemset(d_x, 0, 4));
    // One ping-pong run: the kernel, and the host loop on this thread or (`spawned`) on a new one, as
    // `Device::launch_with_host` does.
    auto run_pp = [&](bool spawned) -> std::vector<double> {
        *h_to_gpu = 0;
        *h_to_host = 0;
        std::vector<double> rtt;
        rtt.reserve(rounds);
        bool failed = false;
        auto host = [&]() {
            std::atomic_ref<unsigned> tg(*h_to_gpu), th(*h_to_host);
            auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            for (unsigned r = 1; r <= rounds; r++) {
                auto t0 = std::chrono::steady_clock::now();
                tg.store(r, std::memory_order_release);
                unsigned long polls = 0;
                while (th.load(std::memory_order_acquire) != r) {
                    if ((++polls & 1023) == 0 && std::chrono::steady_clock::now() > deadline) {
                        fprintf(stderr, "host timed out at round %u\n", r);
                        failed = true;
                        return;
                    }
                }
                rtt.push_back(
                    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
            }
        };
        std::thread t;
        if (spawned) t = std::thread(host);
        ping_pong<<<1, 1>>>(d_to_gpu, d_to_host, d_status, rounds, 1u << 24);
        CHECK(cudaGetLastError());
        if (spawned) t.join(); else host();
        CHECK(cudaDeviceSynchronize());
        unsigned status[2];
        CHECK(cudaMemcpy(status, d_status, 8, cudaMemcpyDeviceToHost));
        if (failed || status[0] != rounds || status[1] != 1) {
            fprintf(stderr, "kernel completed %u rounds (status %u)\n", status[0], status[1]);
            exit(1);
        }
        return std::vector<double>(rtt.begin() + skip, rtt.end());
    };
    std::vector<double> tail = run_pp(false);
    std::vector<double> stail = run_pp(true);

    const unsigned naive_rounds = 2000;
    std::vector<double> naive;
    unsigned x = 0;
    for (unsigned k = 0; k < naive_rounds; k++) {
        auto t0 = std::chrono::steady_clock::now();
        bump<<<1, 1>>>(d_x);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(&x, d_x, 4, cudaMemcpyDeviceToHost));
        naive.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    // The same without the explicit synchronise (cudaMemcpy waits for the kernel itself).
    std::vector<double> copy_only;
    for (unsigned k = 0; k < naive_rounds; k++) {
        auto t0 = std::chrono::steady_clock::now();
        bump<<<1, 1>>>(d_x);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(&x, d_x, 4, cudaMemcpyDeviceToHost));
        copy_only.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    if (x != 2 * naive_rounds) {
        fprintf(stderr, "bump counted %u, expected %u\n", x, 2 * naive_rounds);
        return 1;
    }
    std::vector<double> ntail(naive.begin() + 100, naive.end());
    std::vector<double> ctail(copy_only.begin() + 100, copy_only.end());
    printf("%-44s %10s %10s %10s %8s\n", "CUDA C++ round trip", "median us", "p10 us", "p90 us", "rounds");
    printf("%-44s %10.2f %10.2f %10.2f %8zu\n", "mapped-memory flags, __threadfence_system", median_of(tail),
           median_of(tail, 0.1), median_of(tail, 0.9), tail.size());
    printf("%-44s %10.2f %10.2f %10.2f %8zu\n", "the same, host loop on a new std::thread", median_of(stail),
           median_of(stail, 0.1), median_of(stail, 0.9), stail.size());
    printf("%-44s %10.2f %10.2f %10.2f %8zu\n", "kernel launch + synchronise + copy", median_of(ntail),
           median_of(ntail, 0.1), median_of(ntail, 0.9), ntail.size());
    printf("%-44s %10.2f %10.2f %10.2f %8zu\n", "kernel launch + copy (cudaMemcpy waits)", median_of(ctail),
           median_of(ctail, 0.1), median_of(ctail, 0.9), ctail.size());
    printf("ratio launch+sync+copy / mapped flags: %.1fx\n", median_of(ntail) / median_of(tail));
    return 0;
}
