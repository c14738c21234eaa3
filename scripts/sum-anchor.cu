// sum-anchor.cu: CUB's float and double sums on 2^K elements, the anchors of
// clprim's reduce_sum and reduce_sum_exact rows (docs/PERFORMANCE.md): the
// default DeviceReduce::Sum (run-to-run deterministic) and, where CUB has
// it (CCCL 3.1 and later, built with -DGPU_TO_GPU), the sum with the
// gpu_to_gpu determinism requirement (a reproducible accumulator).
// Device time by CUDA events: 3 warm-ups, then the median of 25 runs.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 [-DGPU_TO_GPU] scripts/sum-anchor.cu -o sum-anchor
// Run:   ./sum-anchor 28
#include <cub/device/device_reduce.cuh>
#ifdef GPU_TO_GPU
#include <cuda/std/execution>
#include <cuda/execution>
#endif
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      std::printf("CUDA %s at line %d\n", cudaGetErrorString(e_), __LINE__);                       \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

template <typename T> __global__ void fill(T *x, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] = (T)((i * 2654435761u) % 1000003u) / (T)1000003; // in [0, 1)
}

template <typename F> static float median_ms(F f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int r = 0; r < 3; ++r) f();
  std::vector<float> t;
  for (int r = 0; r < 25; ++r) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <typename T> static void run(size_t n, const char *name) {
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, sizeof(T)));
  fill<<<(unsigned)((n + 255) / 256), 256>>>(in, n);
  CK(cudaDeviceSynchronize());
  size_t bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, bytes, in, out, (int64_t)n));
  void *tmp;
  CK(cudaMalloc(&tmp, bytes));
  float ms = median_ms([&] { CK(cub::DeviceReduce::Sum(tmp, bytes, in, out, (int64_t)n)); });
  std::printf("cub_sum %s n=%zu ms=%.4f\n", name, n, ms);
#ifdef GPU_TO_GPU
  auto env = cuda::execution::require(cuda::execution::determinism::gpu_to_gpu);
  ms = median_ms([&] { CK(cub::DeviceReduce::Sum(in, out, (int64_t)n, env)); });
  std::printf("cub_sum_gpu_to_gpu %s n=%zu ms=%.4f\n", name, n, ms);
#endif
  CK(cudaFree(tmp));
  CK(cudaFree(in));
  CK(cudaFree(out));
}

int main(int argc, char **argv) {
  const size_t n = (size_t)1 << (argc > 1 ? std::atoi(argv[1]) : 28);
  run<float>(n, "float");
  run<double>(n, "double");
  return 0;
}
