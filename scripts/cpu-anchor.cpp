// cpu-anchor.cpp: the CPU anchors of docs/PERFORMANCE.md's CPU rows: plain
// loops on one thread, and the same work spread over every core with OpenMP
// (libstdc++'s parallel mode for sort and nth_element), on the data of
// clprim-bench's rows of the same names:
//   scan         inclusive sum of floats
//   select       the floats above 0.5 of uniform data in [0, 1), in order
//   reduce_sum   sum of floats (double accumulator)
//   argmax       the largest float and its first index
//   histogram    256 even bins over [0, 1)
//   sort_keys    uint32 keys over their whole range
//   median       the lower median of floats
//   topk         the 1000 largest floats, best first
//   reduce_by_key  float values by sorted int32 keys in min(n, 2^20) runs
// Wall time per row, median of 20 runs after 3 warm-ups; every parallel
// result is checked against the one-thread result.
// Build and run (OMP_NUM_THREADS sets the threads, default every core):
//   g++ -O3 -march=native -fopenmp -o /tmp/cpu-anchor scripts/cpu-anchor.cpp
//   /tmp/cpu-anchor 22 24        (sizes 2^22 and 2^24)
#include <omp.h>
#include <parallel/algorithm>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

static double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The median of 20 timed runs after 3 warm-ups; prepare() runs untimed first.
static double time_ms(const std::function<void()> &prepare, const std::function<void()> &run) {
  std::vector<double> t;
  for (int r = 0; r < 23; ++r) {
    prepare();
    const double t0 = now_ms();
    run();
    if (r >= 3) t.push_back(now_ms() - t0);
  }
  std::sort(t.begin(), t.end());
  return (t[9] + t[10]) / 2;
}

static int failures = 0;
static void check(bool ok, const char *row, size_t n) {
  if (!ok) {
    std::printf("MISMATCH: %s n=%zu: the threads' result differs from one thread's\n", row, n);
    ++failures;
  }
}

static void row(const char *name, size_t n, double one, double all, int threads) {
  std::printf("%-14s n=2^%-2d  one thread %9.3f ms   %2d threads %9.3f ms   speed-up %5.2f\n", name,
              (int)std::lround(std::log2((double)n)), one, threads, all, one / all);
}

// Chunk t of `threads` equal chunks of [0, n).
static void chunk(size_t n, int t, int threads, size_t *b, size_t *e) {
  *b = n * (size_t)t / (size_t)threads, *e = n * (size_t)(t + 1) / (size_t)threads;
}

int main(int argc, char **argv) {
  std::vector<int> logs;
  for (int a = 1; a < argc; ++a) logs.push_back(std::atoi(argv[a]));
  if (logs.empty()) logs = {22, 24};
  const int threads = omp_get_max_threads();
  std::printf("cpu-anchor: %d threads (OMP_NUM_THREADS), wall time, median of 20 runs after 3 "
              "warm-ups\n",
              threads);
  std::mt19937_64 rng(20261129);
  for (int lg : logs) {
    const size_t n = (size_t)1 << lg;
    std::vector<float> x(n), y(n), z(n);
    std::vector<uint32_t> u(n), uk(n), uk2(n);
    std::uniform_real_distribution<float> unif(0.0f, 1.0f);
    for (size_t i = 0; i < n; ++i) x[i] = unif(rng), u[i] = (uint32_t)rng();
    const auto none = [] {};

    // scan: inclusive sums; threads: chunk totals, their scan, then each chunk again.
    {
      const double one = time_ms(none, [&] {
        float s = 0;
        for (size_t i = 0; i < n; ++i) y[i] = s += x[i];
      });
      std::vector<float> totals(threads + 1);
      const double all = time_ms(none, [&] {
#pragma omp parallel num_threads(threads)
        {
          const int t = omp_get_thread_num();
          size_t b, e;
          chunk(n, t, threads, &b, &e);
          float s = 0;
          for (size_t i = b; i < e; ++i) s += x[i];
          totals[t + 1] = s;
#pragma omp barrier
#pragma omp single
          for (int k = 0; k < threads; ++k) totals[k + 1] += totals[k];
          s = totals[t];
          for (size_t i = b; i < e; ++i) z[i] = s += x[i];
        }
      });
      bool ok = true; // float sums in another order: close, not equal
      for (size_t i = 0; i < n; i += n / 64) ok = ok && std::fabs(y[i] - z[i]) <= 1e-3f * y[i];
      check(ok, "scan", n);
      row("scan", n, one, all, threads);
    }
    // select: x > 0.5, in input order.
    {
      size_t m1 = 0, m2 = 0;
      const double one = time_ms(none, [&] {
        size_t m = 0;
        for (size_t i = 0; i < n; ++i) /* branch-free: half of them pass */
          y[m] = x[i], m += x[i] > 0.5f;
        m1 = m;
      });
      std::vector<size_t> counts(threads + 1);
      const double all = time_ms(none, [&] {
#pragma omp parallel num_threads(threads)
        {
          const int t = omp_get_thread_num();
          size_t b, e, c = 0;
          chunk(n, t, threads, &b, &e);
          size_t last = b;
          for (size_t i = b; i < e; ++i) {
            const bool pass = x[i] > 0.5f;
            c += pass, last = pass ? i : last;
          }
          counts[t + 1] = c;
#pragma omp barrier
#pragma omp single
          for (int k = 0; k < threads; ++k) counts[k + 1] += counts[k];
          /* Branch-free up to the chunk's last passing element (a failing
           * one after it would write past the chunk's part). */
          size_t at = counts[t];
          for (size_t i = b; c > 0 && i <= last; ++i) z[at] = x[i], at += x[i] > 0.5f;
        }
        m2 = counts[threads];
      });
      check(m1 == m2 && std::memcmp(y.data(), z.data(), m1 * 4) == 0, "select", n);
      row("select", n, one, all, threads);
    }
    // reduce_sum
    {
      double s1 = 0, s2 = 0;
      const double one = time_ms(none, [&] {
        double s = 0;
        for (size_t i = 0; i < n; ++i) s += x[i];
        s1 = s;
      });
      const double all = time_ms(none, [&] {
        double s = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : s)
        for (size_t i = 0; i < n; ++i) s += x[i];
        s2 = s;
      });
      check(std::fabs(s1 - s2) <= 1e-9 * s1, "reduce_sum", n);
      row("reduce_sum", n, one, all, threads);
    }
    // argmax: the largest and its first index.
    {
      size_t i1 = 0, i2 = 0;
      const double one = time_ms(none, [&] {
        size_t best = 0;
        for (size_t i = 1; i < n; ++i)
          if (x[i] > x[best]) best = i;
        i1 = best;
      });
      std::vector<size_t> bests(threads);
      const double all = time_ms(none, [&] {
#pragma omp parallel num_threads(threads)
        {
          const int t = omp_get_thread_num();
          size_t b, e;
          chunk(n, t, threads, &b, &e);
          size_t best = b;
          for (size_t i = b + 1; i < e; ++i)
            if (x[i] > x[best]) best = i;
          bests[t] = best;
        }
        size_t best = bests[0];
        for (int t = 1; t < threads; ++t)
          if (x[bests[t]] > x[best]) best = bests[t];
        i2 = best;
      });
      check(i1 == i2, "argmax", n);
      row("argmax", n, one, all, threads);
    }
    // histogram: 256 even bins over [0, 1).
    {
      std::vector<uint32_t> h1(256), h2(256);
      const double one = time_ms([&] { std::fill(h1.begin(), h1.end(), 0); }, [&] {
        for (size_t i = 0; i < n; ++i) ++h1[(unsigned)(x[i] * 256.0f)];
      });
      std::vector<uint32_t> part((size_t)threads * 256);
      const double all = time_ms(none, [&] {
#pragma omp parallel num_threads(threads)
        {
          const int t = omp_get_thread_num();
          uint32_t *h = part.data() + (size_t)t * 256;
          std::fill(h, h + 256, 0);
          size_t b, e;
          chunk(n, t, threads, &b, &e);
          for (size_t i = b; i < e; ++i) ++h[(unsigned)(x[i] * 256.0f)];
        }
        for (int k = 0; k < 256; ++k) {
          uint32_t s = 0;
          for (int t = 0; t < threads; ++t) s += part[(size_t)t * 256 + k];
          h2[k] = s;
        }
      });
      check(h1 == h2, "histogram", n);
      row("histogram 256", n, one, all, threads);
    }
    // sort_keys: uint32.
    {
      const double one = time_ms([&] { uk = u; }, [&] { std::sort(uk.begin(), uk.end()); });
      const double all =
          time_ms([&] { uk2 = u; }, [&] { __gnu_parallel::sort(uk2.begin(), uk2.end()); });
      check(uk == uk2, "sort_keys", n);
      row("sort uint32", n, one, all, threads);
    }
    // median: the lower median, (n - 1) / 2.
    {
      const size_t k = (n - 1) / 2;
      float v1 = 0, v2 = 0;
      const double one = time_ms([&] { y = x; }, [&] {
        std::nth_element(y.begin(), y.begin() + (long)k, y.end());
        v1 = y[k];
      });
      const double all = time_ms([&] { z = x; }, [&] {
        __gnu_parallel::nth_element(z.begin(), z.begin() + (long)k, z.end());
        v2 = z[k];
      });
      check(v1 == v2, "median", n);
      row("median", n, one, all, threads);
    }
    // topk: the 1000 largest, best first; threads: each its own 1000, then those merged.
    {
      const size_t k = 1000;
      std::vector<float> t1(k), t2(k);
      const auto greater = std::greater<float>();
      const double one = time_ms(none, [&] {
        std::partial_sort_copy(x.begin(), x.end(), t1.begin(), t1.end(), greater);
      });
      std::vector<float> cand((size_t)threads * k);
      const double all = time_ms(none, [&] {
#pragma omp parallel num_threads(threads)
        {
          const int t = omp_get_thread_num();
          size_t b, e;
          chunk(n, t, threads, &b, &e);
          std::partial_sort_copy(x.begin() + (long)b, x.begin() + (long)e,
                                 cand.begin() + (long)((size_t)t * k),
                                 cand.begin() + (long)((size_t)(t + 1) * k), greater);
        }
        std::partial_sort_copy(cand.begin(), cand.end(), t2.begin(), t2.end(), greater);
      });
      check(t1 == t2, "topk", n);
      row("topk 1000", n, one, all, threads);
    }
    // reduce_by_key: sorted int32 keys in min(n, 2^20) runs of equal length.
    {
      const size_t runs = std::min(n, (size_t)1 << 20), len = n / runs;
      std::vector<int32_t> keys(n);
      for (size_t i = 0; i < n; ++i) keys[i] = (int32_t)(i / len);
      std::vector<int32_t> ok1(runs), ok2(runs);
      std::vector<float> s1(runs), s2(runs);
      size_t r1 = 0, r2 = 0;
      const double one = time_ms(none, [&] {
        size_t r = 0;
        float s = x[0];
        for (size_t i = 1; i < n; ++i) {
          if (keys[i] != keys[i - 1]) ok1[r] = keys[i - 1], s1[r++] = s, s = 0;
          s += x[i];
        }
        ok1[r] = keys[n - 1], s1[r++] = s;
        r1 = r;
      });
      // threads: chunks start at run heads (a chunk's first run is its own);
      // each chunk's runs counted, their places scanned, then written.
      std::vector<size_t> starts(threads + 1), places(threads + 1);
      const double all = time_ms(none, [&] {
#pragma omp parallel num_threads(threads)
        {
          const int t = omp_get_thread_num();
          size_t b, e;
          chunk(n, t, threads, &b, &e);
          while (b > 0 && b < n && keys[b] == keys[b - 1]) ++b;
          starts[t] = b;
#pragma omp barrier
          const size_t end = t + 1 < threads ? starts[t + 1] : n;
          size_t c = 0;
          for (size_t i = b; i < end; ++i) c += i == b || keys[i] != keys[i - 1];
          places[t + 1] = c;
#pragma omp barrier
#pragma omp single
          {
            places[0] = 0;
            for (int q = 0; q < threads; ++q) places[q + 1] += places[q];
          }
          size_t r = places[t];
          float s = 0;
          for (size_t i = b; i < end; ++i) {
            if (i > b && keys[i] != keys[i - 1]) ok2[r] = keys[i - 1], s2[r++] = s, s = 0;
            s += x[i];
          }
          if (end > b) ok2[r] = keys[end - 1], s2[r] = s;
        }
        r2 = places[threads];
      });
      check(r1 == r2 && ok1 == ok2 && s1 == s2, "reduce_by_key", n);
      row("reduce_by_key", n, one, all, threads);
    }
  }
  return failures ? 1 : 0;
}
