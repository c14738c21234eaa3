// cub-sort-check.cu: CUB's radix sorts on data whose bits are known, for
// docs/PERFORMANCE.md's sort rows. Run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -std=c++17 scripts/cub-sort-check.cu -o /tmp/cub_sort_check -lcurand
//   /tmp/cub_sort_check 134217728      (N: 2N 32-bit keys, N 64-bit keys)
// First uint32 keys, uniform floats and uint32 / uint32 pairs (2N each, as
// the CUB sort anchor, cub_sort_anchor.cu). Then 64-bit keys: that anchor fills
// them with curandGenerateLongLong on a pseudo-random (XORWOW) generator,
// which the call refuses (CURAND_STATUS_TYPE_ERROR: it is for 64-bit
// quasi-random generators), so the anchor's uint64 row sorts whatever the
// fresh allocation holds. This prints that status, what the buffer then
// holds, and CUB's time on it, on zeros, on random 64-bit keys (two
// curandGenerate words each) and on uniform doubles.
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <curand.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)
template <class F> float med(F f, int reps = 21) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  f(); f(); CK(cudaDeviceSynchronize());
  std::vector<float> v;
  for (int r = 0; r < reps; r++) {
    cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); v.push_back(ms);
  }
  std::sort(v.begin(), v.end()); return v[v.size() / 2];
}
static void describe(const char *what, const unsigned long long *d, size_t n) {
  std::vector<unsigned long long> h(1 << 20);
  CK(cudaMemcpy(h.data(), d, h.size() * 8, cudaMemcpyDeviceToHost));
  size_t zeros = 0; unsigned long long orv = 0;
  for (auto x : h) zeros += x == 0, orv |= x;
  std::sort(h.begin(), h.end());
  size_t distinct = std::unique(h.begin(), h.end()) - h.begin();
  printf("%s: first 2^20 keys: %zu zero, %zu distinct, OR of all 0x%016llx\n", what, zeros, distinct, orv);
  (void)n;
}
int main(int argc, char **argv) {
  size_t N = argc > 1 ? (size_t)atoll(argv[1]) : (1u << 27);
  unsigned long long *d_in, *d_out; double *f_in, *f_out;
  CK(cudaMalloc(&d_in, N * 8)); CK(cudaMalloc(&d_out, N * 8));
  CK(cudaMalloc(&f_in, N * 8)); CK(cudaMalloc(&f_out, N * 8));
  curandGenerator_t g; curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
  curandSetPseudoRandomGeneratorSeed(g, 42);
  {
    size_t M = 2 * N; unsigned *u, *uo, *v, *vo; float *f, *fo; void *t = nullptr; size_t tb = 0, t2 = 0;
    CK(cudaMalloc(&u, M * 4)); CK(cudaMalloc(&uo, M * 4)); CK(cudaMalloc(&v, M * 4)); CK(cudaMalloc(&vo, M * 4));
    CK(cudaMalloc(&f, M * 4)); CK(cudaMalloc(&fo, M * 4));
    curandGenerate(g, u, M); curandGenerate(g, v, M); curandGenerateUniform(g, f, M);
    cub::DeviceRadixSort::SortKeys(nullptr, tb, u, uo, (int)M);
    cub::DeviceRadixSort::SortPairs(nullptr, t2, u, uo, v, vo, (int)M); tb = std::max(tb, t2);
    CK(cudaMalloc(&t, tb + 256));
    printf("N=%zu copy_d2d uint32 ms=%.4f\n", M, med([&] { cudaMemcpyAsync(uo, u, M * 4, cudaMemcpyDeviceToDevice); }));
    printf("cub_radix_sort_keys uint32 random n=%zu ms=%.3f\n", M, med([&] { size_t s = tb; cub::DeviceRadixSort::SortKeys(t, s, u, uo, (int)M); }));
    printf("cub_radix_sort_keys float uniform n=%zu ms=%.3f\n", M, med([&] { size_t s = tb; cub::DeviceRadixSort::SortKeys(t, s, f, fo, (int)M); }));
    printf("cub_radix_sort_pairs uint32/uint32 n=%zu ms=%.3f\n", M, med([&] { size_t s = tb; cub::DeviceRadixSort::SortPairs(t, s, u, uo, v, vo, (int)M); }));
    cudaFree(u); cudaFree(uo); cudaFree(v); cudaFree(vo); cudaFree(f); cudaFree(fo); cudaFree(t);
  }
  curandStatus_t st = curandGenerateLongLong(g, d_in, N);
  printf("curandGenerateLongLong on CURAND_RNG_PSEUDO_DEFAULT: status %d (%s)\n", (int)st,
         st == CURAND_STATUS_SUCCESS ? "success" : st == CURAND_STATUS_TYPE_ERROR ? "CURAND_STATUS_TYPE_ERROR" : "other");
  CK(cudaDeviceSynchronize());
  describe("as the anchor leaves them", d_in, N);
  void *tmp = nullptr; size_t tb = 0, t2 = 0;
  cub::DeviceRadixSort::SortKeys(nullptr, tb, d_in, d_out, (int)N);
  cub::DeviceRadixSort::SortKeys(nullptr, t2, f_in, f_out, (int)N); tb = std::max(tb, t2);
  CK(cudaMalloc(&tmp, tb + 256));
  auto sort64 = [&] { size_t s = tb; cub::DeviceRadixSort::SortKeys(tmp, s, d_in, d_out, (int)N); };
  float t = med([&] { cudaMemcpyAsync(d_out, d_in, N * 8, cudaMemcpyDeviceToDevice); });
  printf("N=%zu copy_d2d of the uint64 keys ms=%.4f\n", N, t);
  printf("cub_radix_sort_keys uint64 as-the-anchor n=%zu ms=%.3f\n", N, med(sort64));
  CK(cudaMemset(d_in, 0, N * 8));
  printf("cub_radix_sort_keys uint64 zeros n=%zu ms=%.3f\n", N, med(sort64));
  if (curandGenerate(g, (unsigned *)d_in, 2 * N) != CURAND_STATUS_SUCCESS) { printf("curandGenerate failed\n"); return 1; }
  CK(cudaDeviceSynchronize());
  describe("curandGenerate, 2N words", d_in, N);
  printf("cub_radix_sort_keys uint64 random n=%zu ms=%.3f\n", N, med(sort64));
  if (curandGenerateUniformDouble(g, f_in, N) != CURAND_STATUS_SUCCESS) { printf("curandGenerateUniformDouble failed\n"); return 1; }
  t = med([&] { size_t s = tb; cub::DeviceRadixSort::SortKeys(tmp, s, f_in, f_out, (int)N); });
  printf("cub_radix_sort_keys double uniform n=%zu ms=%.3f\n", N, t);
  return 0;
}
