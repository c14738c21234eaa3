// boost-pipeline-anchor.cpp: the pipeline's chains in Boost.Compute, clprim's
// same-ecosystem peer, on uniform floats in [0, 1) (the inputs of
// `clprim-bench --op pipeline`): transform (x = 2 a) -> copy_if (x > 2 (1 -
// p)) -> accumulate, and transform -> copy_if alone (the collect), at p =
// 0.5 and 0.01. Wall time per chain (each ends with a finish), median of
// reps after one warm-up run.
// Build, with Boost's headers (Boost.Compute is header-only) in $BOOST_INCLUDE:
//   g++ -O2 -std=c++14 -isystem "$BOOST_INCLUDE" -o /tmp/boost-pipeline-anchor
//       scripts/boost-pipeline-anchor.cpp -lOpenCL
//   BOOST_COMPUTE_DEFAULT_PLATFORM=NVIDIA /tmp/boost-pipeline-anchor 268435456 20
#define CL_TARGET_OPENCL_VERSION 120
#include <boost/compute/algorithm/accumulate.hpp>
#include <boost/compute/algorithm/copy_if.hpp>
#include <boost/compute/algorithm/transform.hpp>
#include <boost/compute/container/vector.hpp>
#include <boost/compute/core.hpp>
#include <boost/compute/lambda.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
namespace compute = boost::compute;
using compute::lambda::_1;

template <class F> static double median_ms(compute::command_queue &q, F f, int reps) {
  f();
  q.finish();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    q.finish();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char **argv) {
  const size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : (size_t)1 << 24;
  const int reps = argc > 2 ? atoi(argv[2]) : 20;
  compute::device dev = compute::system::default_device();
  compute::context ctx(dev);
  compute::command_queue q(ctx, dev);
  printf("device: %s (%s)\n", dev.name().c_str(), dev.platform().name().c_str());
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> uniform(0, 1);
  std::vector<float> h(n);
  for (float &x : h) x = uniform(rng);
  compute::vector<float> a(h.begin(), h.end(), q), x(n, ctx), out(n, ctx);
  q.finish();
  const double copy = median_ms(q, [&] {
    q.enqueue_copy_buffer(a.get_buffer(), x.get_buffer(), 0, 0, n * sizeof(float));
  }, reps);
  printf("bc copy_buffer n=%zu ms=%.3f\n", n, copy);
  for (const double p : {0.5, 0.01}) {
    const float threshold = (float)(2.0 * (1.0 - p));
    float sum = 0;
    const double sum_ms = median_ms(q, [&] {
      compute::transform(a.begin(), a.end(), x.begin(), _1 * 2.0f, q);
      auto end = compute::copy_if(x.begin(), x.end(), out.begin(), _1 > threshold, q);
      sum = compute::accumulate(out.begin(), end, 0.0f, q);
    }, reps);
    printf("bc transform+copy_if+accumulate p=%.2f ms=%.3f (sum %.6g)\n", p, sum_ms, sum);
    size_t kept = 0;
    const double collect_ms = median_ms(q, [&] {
      compute::transform(a.begin(), a.end(), x.begin(), _1 * 2.0f, q);
      kept = (size_t)(compute::copy_if(x.begin(), x.end(), out.begin(), _1 > threshold, q) -
                      out.begin());
    }, reps);
    printf("bc transform+copy_if p=%.2f ms=%.3f (kept %zu)\n", p, collect_ms, kept);
  }
  return 0;
}
