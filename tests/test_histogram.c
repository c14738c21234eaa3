/* test_histogram: dense reduce-by-key (sums and counts per key), keys-only
 * histograms and even-width value histograms against a CPU reference, for
 * every key / value type and path the device runs: few keys (1, 2, 256),
 * keys around the local-memory limit (both kernels), 2^20 keys, sizes around
 * the vector and work-group boundaries, random / sorted / partly sorted
 * keys, keys out of range (negative, == K, huge), values below lo, at lo,
 * at hi, above, NaN; float sums within the bound of docs/ACCURACY.md, integer
 * sums exact; every error case with nothing written; the binned path forced
 * at small sizes; the device results (outside_out, invalid_out) against the
 * host ones at aligned and unaligned offsets; subnormal float sums with
 * CLPRIM_SUMS_KEEP_SUBNORMALS (exact) and without it. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "common.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ctx_path(clprim_context *ctx) {
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  return clprim_path_name(info.path);
}

/* With $CLPRIM_TEST_VERBOSE set, each call is printed (and flushed) before it
 * runs: a crash inside a runtime then names its call. */
static void announce(const char *fmt, ...) {
  if (!getenv("CLPRIM_TEST_VERBOSE")) return;
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
}

static int is_float(clprim_type t) {
  return t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE;
}

/* Sizes around 4-element quads and work-group tiles (256 or 64 work-items
 * times 4). */
static size_t test_sizes(size_t *sizes) {
  size_t k = 0;
  const size_t fixed[] = {0, 1, 3, 4, 5, 255, 256, 257, 1023, 1024, 1025};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i)
    sizes[k++] = fixed[i];
  if (!test_small()) sizes[k++] = 100003, sizes[k++] = ((size_t)1 << 20) + 5;
  return k;
}

/* The last two (skewed: every key in one bin, keys random in the first 16)
 * only for the binned path's tests. */
enum key_order {
  KEYS_RANDOM,
  KEYS_SORTED,
  KEYS_PARTLY_SORTED,
  KEY_ORDERS,
  KEYS_ONE_BIN = KEY_ORDERS,
  KEYS_FIRST_16
};
static const char *const order_name[KEY_ORDERS + 2] = {"random", "sorted", "partly sorted",
                                                       "one bin", "first 16"};

/* n keys in [0, K), with about 1 in 16 out of range (negative when signed,
 * K, huge) when `invalid` is set. */
static void make_keys(uint32_t *keys, size_t n, size_t K, enum key_order order, int invalid,
                      int is_signed) {
  for (size_t i = 0; i < n; ++i) {
    if (order == KEYS_RANDOM)
      keys[i] = (uint32_t)(test_rand() % K);
    else if (order == KEYS_ONE_BIN)
      keys[i] = (uint32_t)(K / 2);
    else if (order == KEYS_FIRST_16)
      keys[i] = (uint32_t)(test_rand() % (K < 16 ? K : 16));
    else
      keys[i] = (uint32_t)((uint64_t)i * K / (n ? n : 1));
  }
  if (order == KEYS_PARTLY_SORTED) /* each key moves to a neighbour with probability 1/2 */
    for (size_t i = 0; i + 1 < n; ++i)
      if (test_rand() % 2) {
        uint32_t t = keys[i];
        keys[i] = keys[i + 1], keys[i + 1] = t;
      }
  if (invalid)
    for (size_t i = 0; i < n; ++i) {
      uint64_t r = test_rand();
      if (r % 16) continue;
      switch ((r >> 8) % 3) {
      case 0:
        keys[i] = is_signed ? (uint32_t) - (int32_t)(1 + (r >> 16) % 1000) : 0xFFFFFFFFu;
        break;
      case 1:
        keys[i] = (uint32_t)K;
        break;
      default:
        keys[i] = is_signed ? 0x7FFFFFFFu : 0x80000000u + (uint32_t)(r >> 40);
        break;
      }
    }
}

static int key_valid(uint32_t key, size_t K) {
  return key < K;
}

/* --------------------------------------------------- reduce-by-key */

/* One dense reduce-by-key (sums, and counts when with_counts), checked. */
static void check_rbk(clprim_context *ctx, clprim_type kt, clprim_type vt, size_t n, size_t K,
                      enum key_order order, int with_counts) {
  const size_t vs = clprim_type_size(vt);
  uint32_t *keys = malloc((n ? n : 1) * 4);
  unsigned char *values = malloc((n ? n : 1) * vs);
  unsigned char *sums = malloc(K * vs);
  uint32_t *counts = malloc(K * 4), *want_counts = calloc(K, 4);
  uint64_t *want_u = calloc(K, 8);
  double *want_f = calloc(K, sizeof(double)), *abs_f = calloc(K, sizeof(double));
  assert_true(keys && values && sums && counts && want_counts && want_u && want_f && abs_f);
  make_keys(keys, n, K, order, 1, kt == CLPRIM_INT32);
  test_random(vt, values, n, 1);
  uint64_t want_invalid = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!key_valid(keys[i], K)) {
      ++want_invalid;
      continue;
    }
    want_counts[keys[i]]++;
    if (is_float(vt)) {
      double x = test_value_f(vt, values, i);
      want_f[keys[i]] += x, abs_f[keys[i]] += fabs(x);
    } else {
      want_u[keys[i]] += test_value_u(vt, values, i);
    }
  }
  cl_mem dkeys = test_buffer(ctx, (n ? n : 1) * 4, keys);
  cl_mem dvalues = test_buffer(ctx, (n ? n : 1) * vs, values);
  /* Outputs start as garbage: they are overwritten. */
  memset(sums, 0xA5, K * vs);
  memset(counts, 0xA5, K * 4);
  cl_mem dsums = test_buffer(ctx, K * vs, sums), dcounts = test_buffer(ctx, K * 4, counts);
  uint64_t invalid = 12345;
  announce("reduce_by_key_dense %s keys, %s values, n=%zu, K=%zu, %s%s, path %s",
           clprim_type_name(kt), clprim_type_name(vt), n, K, order_name[order],
           with_counts ? ", counts" : "", ctx_path(ctx));
  TEST_OK(clprim_reduce_by_key_dense(ctx, n, kt, clprim_buf(dkeys), vt, clprim_buf(dvalues), K, 0,
                                     clprim_buf(dsums), clprim_buf(with_counts ? dcounts : NULL),
                                     &invalid, clprim_buf(NULL)));
  test_read(ctx, dsums, K * vs, sums);
  test_read(ctx, dcounts, K * 4, counts);
  char what[200];
  snprintf(what, sizeof what, "reduce_by_key_dense %s keys, %s values, n=%zu, K=%zu, %s%s, path %s",
           clprim_type_name(kt), clprim_type_name(vt), n, K, order_name[order],
           with_counts ? ", counts" : "", ctx_path(ctx));
  if (invalid != want_invalid)
    fail_msg("%s: invalid %llu, expected %llu", what, (unsigned long long)invalid,
             (unsigned long long)want_invalid);
  const double u = vt == CLPRIM_FLOAT ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
  for (size_t k = 0; k < K; ++k) {
    if (with_counts && counts[k] != want_counts[k])
      fail_msg("%s: count[%zu] = %u, expected %u", what, k, counts[k], want_counts[k]);
    if (!with_counts && counts[k] != 0xA5A5A5A5u) fail_msg("%s: counts written", what);
    if (is_float(vt)) {
      double g = test_value_f(vt, sums, k);
      /* Any order of m additions: within m u sum|x| (docs/ACCURACY.md). */
      double bound =
          (double)want_counts[k] * u * abs_f[k] + (vt == CLPRIM_FLOAT ? FLT_MIN : DBL_MIN);
      if (!(fabs(g - want_f[k]) <= bound))
        fail_msg("%s: sum[%zu] = %.17g, expected %.17g (bound %.3g)", what, k, g, want_f[k], bound);
    } else {
      uint64_t g = test_value_u(vt, sums, k), w = want_u[k];
      if (vs == 4) g = (uint32_t)g, w = (uint32_t)w;
      if (g != w)
        fail_msg("%s: sum[%zu] = %llu, expected %llu", what, k, (unsigned long long)g,
                 (unsigned long long)w);
    }
  }
  clReleaseMemObject(dkeys);
  clReleaseMemObject(dvalues);
  clReleaseMemObject(dsums);
  clReleaseMemObject(dcounts);
  free(keys), free(values), free(sums), free(counts), free(want_counts), free(want_u);
  free(want_f), free(abs_f);
}

/* Key counts: few, around the local-memory limit (both kernels), many. */
static size_t key_counts(clprim_context *ctx, int has_counts, size_t sum_size, size_t *ks) {
  size_t k = 0, local_max = clprim__histogram_local_max(ctx, has_counts, sum_size);
  ks[k++] = 1, ks[k++] = 2, ks[k++] = 256;
  if (!test_small()) {
    ks[k++] = local_max, ks[k++] = local_max + 1;
    ks[k++] = (size_t)1 << 20;
  } else {
    ks[k++] = local_max + 1;
  }
  return k;
}

static void test_rbk_type(clprim_type vt) {
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    if (!clprim__type_supported(ctx, vt) ||
        (clprim_type_size(vt) == 8 && !ctx->info.has_int64_atomics)) {
      printf("%s sums on %s: skipped (no fp64 or 64-bit atomics)\n", clprim_type_name(vt),
             clprim_path_name((clprim_path)p));
      continue;
    }
    size_t sizes[20], ns = test_sizes(sizes), ks[8];
    for (int with_counts = 0; with_counts < 2; ++with_counts) {
      size_t nk = key_counts(ctx, with_counts, clprim_type_size(vt), ks);
      for (size_t ki = 0; ki < nk; ++ki)
        for (size_t s = 0; s < ns; ++s) {
          /* Large K with the largest sizes only; under Oclgrind few sizes. */
          if (ks[ki] > 4096 && sizes[s] < 100000 && sizes[s] != 1025) continue;
          if (test_small() && s % 3 != 1) continue;
          enum key_order order = (enum key_order)((s + ki + (size_t)with_counts) % KEY_ORDERS);
          clprim_type kt = (s + ki) % 2 ? CLPRIM_INT32 : CLPRIM_UINT32;
          check_rbk(ctx, kt, vt, sizes[s], ks[ki], order, with_counts);
        }
    }
  }
}

static void test_rbk_int32(void **state) {
  (void)state, test_rbk_type(CLPRIM_INT32);
}
static void test_rbk_uint32(void **state) {
  (void)state, test_rbk_type(CLPRIM_UINT32);
}
static void test_rbk_int64(void **state) {
  (void)state, test_rbk_type(CLPRIM_INT64);
}
static void test_rbk_uint64(void **state) {
  (void)state, test_rbk_type(CLPRIM_UINT64);
}
static void test_rbk_float(void **state) {
  (void)state, test_rbk_type(CLPRIM_FLOAT);
}
static void test_rbk_double(void **state) {
  (void)state, test_rbk_type(CLPRIM_DOUBLE);
}

/* ---------------------------------------------------- keys histogram */

static void check_keys_hist(clprim_context *ctx, clprim_type kt, size_t n, size_t K,
                            enum key_order order) {
  uint32_t *keys = malloc((n ? n : 1) * 4), *counts = malloc(K * 4), *want = calloc(K, 4);
  assert_true(keys && counts && want);
  make_keys(keys, n, K, order, 1, kt == CLPRIM_INT32);
  uint64_t want_invalid = 0;
  for (size_t i = 0; i < n; ++i)
    if (key_valid(keys[i], K))
      want[keys[i]]++;
    else
      ++want_invalid;
  memset(counts, 0x5A, K * 4);
  cl_mem dkeys = test_buffer(ctx, (n ? n : 1) * 4, keys), dcounts = test_buffer(ctx, K * 4, counts);
  uint64_t invalid = 999;
  announce("histogram_keys %s, n=%zu, K=%zu, %s, path %s", clprim_type_name(kt), n, K,
           order_name[order], ctx_path(ctx));
  TEST_OK(clprim_histogram_keys(ctx, n, kt, clprim_buf(dkeys), K, clprim_buf(dcounts),
                                n % 2 ? &invalid : NULL, clprim_buf(NULL)));
  test_read(ctx, dcounts, K * 4, counts);
  for (size_t k = 0; k < K; ++k)
    if (counts[k] != want[k])
      fail_msg("histogram_keys %s, n=%zu, K=%zu, %s, path %s: count[%zu] = %u, expected %u",
               clprim_type_name(kt), n, K, order_name[order], ctx_path(ctx), k, counts[k], want[k]);
  if (n % 2 && invalid != want_invalid)
    fail_msg("histogram_keys n=%zu K=%zu: invalid %llu, expected %llu", n, K,
             (unsigned long long)invalid, (unsigned long long)want_invalid);
  if (!(n % 2) && invalid != 999) fail_msg("histogram_keys: invalid written though not asked for");
  clReleaseMemObject(dkeys);
  clReleaseMemObject(dcounts);
  free(keys), free(counts), free(want);
}

static void test_keys(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    size_t sizes[20], ns = test_sizes(sizes), ks[8], nk = key_counts(ctx, 1, 0, ks);
    for (size_t ki = 0; ki < nk; ++ki)
      for (size_t s = 0; s < ns; ++s) {
        if (ks[ki] > 4096 && sizes[s] < 100000 && sizes[s] != 257) continue;
        if (test_small() && s % 2) continue;
        for (int kt = 0; kt < 2; ++kt)
          check_keys_hist(ctx, (clprim_type)kt, sizes[s], ks[ki],
                          (enum key_order)((s + ki + (size_t)kt) % KEY_ORDERS));
      }
  }
}

/* ---------------------------------------------------- value histogram */

/* The reference bin of element i, or -1 below, -2 above, -3 NaN. */
static long ref_bin(clprim_type t, const void *p, size_t i, clprim_value lo, clprim_value hi,
                    size_t bins) {
  switch (t) {
  case CLPRIM_FLOAT: {
    float x = ((const float *)p)[i];
    if (isnan(x)) return -3;
    if (x < lo.f32) return -1;
    if (x >= hi.f32) return -2;
    float scale = (float)bins / (hi.f32 - lo.f32);
    float r = (x - lo.f32) * scale;
    uint32_t b = (uint32_t)r;
    return b < bins ? (long)b : (long)bins - 1;
  }
  case CLPRIM_DOUBLE: {
    double x = ((const double *)p)[i];
    if (isnan(x)) return -3;
    if (x < lo.f64) return -1;
    if (x >= hi.f64) return -2;
    double scale = (double)bins / (hi.f64 - lo.f64);
    double r = (x - lo.f64) * scale;
    uint32_t b = (uint32_t)r;
    return b < bins ? (long)b : (long)bins - 1;
  }
  case CLPRIM_INT32:
  case CLPRIM_INT64: {
    int64_t x = t == CLPRIM_INT32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
    int64_t l = t == CLPRIM_INT32 ? lo.i32 : lo.i64, h = t == CLPRIM_INT32 ? hi.i32 : hi.i64;
    if (x < l) return -1;
    if (x >= h) return -2;
    unsigned __int128 d = (uint64_t)x - (uint64_t)l, range = (uint64_t)h - (uint64_t)l;
    return (long)(d * bins / range);
  }
  default: {
    uint64_t x = t == CLPRIM_UINT32 ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
    uint64_t l = t == CLPRIM_UINT32 ? lo.u32 : lo.u64, h = t == CLPRIM_UINT32 ? hi.u32 : hi.u64;
    if (x < l) return -1;
    if (x >= h) return -2;
    unsigned __int128 d = x - l, range = h - l;
    return (long)(d * bins / range);
  }
  }
}

static void set_elem(clprim_type t, void *p, size_t i, double f, int64_t v) {
  switch (t) {
  case CLPRIM_FLOAT:
    ((float *)p)[i] = (float)f;
    break;
  case CLPRIM_DOUBLE:
    ((double *)p)[i] = f;
    break;
  case CLPRIM_INT32:
  case CLPRIM_UINT32:
    ((int32_t *)p)[i] = (int32_t)v;
    break;
  default:
    ((int64_t *)p)[i] = v;
    break;
  }
}

static void check_even(clprim_context *ctx, clprim_type t, size_t n, size_t bins) {
  const size_t es = clprim_type_size(t);
  unsigned char *data = malloc((n ? n : 1) * es);
  uint32_t *counts = malloc(bins * 4), *want = calloc(bins, 4);
  assert_true(data && counts && want);
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
  /* Data spread over [lo - w/8, hi + w/8) and the edge cases. */
  double flo = -0.75, fhi = 1.25;
  int64_t ilo = t == CLPRIM_UINT32 || t == CLPRIM_UINT64 ? 1000 : -1000, ihi = ilo + 12345;
  switch (t) {
  case CLPRIM_FLOAT:
    lo.f32 = (float)flo, hi.f32 = (float)fhi;
    break;
  case CLPRIM_DOUBLE:
    lo.f64 = flo, hi.f64 = fhi;
    break;
  case CLPRIM_INT32:
  case CLPRIM_UINT32:
    lo.i32 = (int32_t)ilo, hi.i32 = (int32_t)ihi;
    break;
  default:
    lo.i64 = ilo, hi.i64 = ihi;
    break;
  }
  for (size_t i = 0; i < n; ++i) {
    double u = test_uniform() * 1.25 - 0.125;
    set_elem(t, data, i, flo + u * (fhi - flo), ilo + (int64_t)(u * (double)(ihi - ilo)));
    uint64_t r = test_rand() % 64;
    if (r == 0) set_elem(t, data, i, flo, ilo);     /* exactly lo: bin 0 */
    if (r == 1) set_elem(t, data, i, fhi, ihi);     /* exactly hi: above */
    if (r == 2) set_elem(t, data, i, fhi, ihi - 1); /* hi (above) / the last bin */
    if (r == 3 && is_float(t)) set_elem(t, data, i, NAN, 0);
    if (r == 4 && is_float(t)) set_elem(t, data, i, -INFINITY, 0);
    if (r == 5 && is_float(t)) {
      /* Just below hi: rounds to bin `bins`, clamped. */
      if (t == CLPRIM_FLOAT)
        ((float *)data)[i] = nextafterf((float)fhi, 0.0f);
      else
        ((double *)data)[i] = nextafter(fhi, 0.0);
    }
  }
  uint64_t want_out[3] = {0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    long b = ref_bin(t, data, i, lo, hi, bins);
    if (b >= 0)
      want[b]++;
    else
      want_out[-b - 1]++;
  }
  /* Counts start as garbage (they are overwritten); created from host data,
   * as Oclgrind sees a recycled buffer's bytes as uninitialised even after a
   * kernel writes them. */
  memset(counts, 0x3C, bins * 4);
  cl_mem din = test_buffer(ctx, (n ? n : 1) * es, data),
         dcounts = test_buffer(ctx, bins * 4, counts);
  uint64_t outside[3] = {7, 7, 7};
  announce("histogram_even %s, n=%zu, bins=%zu, path %s", clprim_type_name(t), n, bins,
           ctx_path(ctx));
  TEST_OK(clprim_histogram_even(ctx, n, t, clprim_buf(din), lo, hi, bins, clprim_buf(dcounts),
                                outside, clprim_buf(NULL)));
  test_read(ctx, dcounts, bins * 4, counts);
  for (size_t b = 0; b < bins; ++b)
    if (counts[b] != want[b])
      fail_msg("histogram_even %s, n=%zu, bins=%zu, path %s: count[%zu] = %u, expected %u",
               clprim_type_name(t), n, bins, ctx_path(ctx), b, counts[b], want[b]);
  for (int k = 0; k < 3; ++k)
    if (outside[k] != want_out[k])
      fail_msg("histogram_even %s, n=%zu, bins=%zu, path %s: outside[%d] = %llu, expected %llu",
               clprim_type_name(t), n, bins, ctx_path(ctx), k, (unsigned long long)outside[k],
               (unsigned long long)want_out[k]);
  clReleaseMemObject(din);
  clReleaseMemObject(dcounts);
  free(data), free(counts), free(want);
}

static void test_even(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    size_t local_max = clprim__histogram_local_max(ctx, 1, 0);
    size_t sizes[20], ns = test_sizes(sizes);
    const size_t bin_counts[] = {1, 7, 256, local_max + 1, (size_t)1 << 20};
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      if (!clprim__type_supported(ctx, (clprim_type)t)) continue;
      for (size_t bi = 0; bi < 5; ++bi)
        for (size_t s = 0; s < ns; ++s) {
          if (bin_counts[bi] > 4096 && (test_small() || (sizes[s] < 100000 && sizes[s] != 1025)))
            continue;
          /* Under Oclgrind a third of the sizes, and of those half, drawn
           * from the seed. */
          if (test_small() && ((s + (size_t)t) % 3 || test_rand() % 2)) continue;
          check_even(ctx, (clprim_type)t, sizes[s], bin_counts[bi]);
        }
    }
  }
}

/* ------------------------------------------------------- the binned path */

/* The binned path (partition by range of bins, then local bins per range),
 * forced with the knob histogram.binned=1 at small sizes: ranges of 16 bins
 * (histogram.range_shift=4; the host widens them where more than 512
 * would be needed), slices of the local pass that cross range boundaries,
 * sizes around its tiles (work-group size times 16 elements, 8 with
 * values), skewed keys. */
static void test_binned(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    TEST_OK(clprim__tune(ctx, "histogram.binned=1"));
    /* The binned program's work-group size (plan_binned in histogram.c). */
    const int gpu = (ctx->info.device_type & CL_DEVICE_TYPE_GPU) != 0;
    const size_t wg = gpu && ctx->info.max_work_group_size >= 512 ? 512 : gpu ? 256 : 64;
    const size_t t16 = wg * 16, t8 = wg * 8;
    const size_t sizes[] = {1, 5, t8 - 1, t8, t8 + 1, t16 - 1, t16, t16 + 1, 3 * t16 + 7, 100003};
    const size_t ks[] = {1, 7, 300, 5000};
    const size_t ns = test_small() ? 7 : sizeof sizes / sizeof sizes[0];
    /* Ranges of 16 bins, slices of 100 elements: many ranges, slices that
     * cross them. Each value type with one key type and either with or
     * without counts (every program build costs seconds on PoCL). */
    TEST_OK(clprim__tune(ctx, "histogram.range_shift=4,histogram.slice=100"));
    /* The largest call first: the binned path's scratch buffers are then
     * allocated once (Oclgrind sees a buffer's bytes as uninitialised, even
     * after a kernel writes them, where the buffer is made after another
     * was released). */
    check_rbk(ctx, CLPRIM_UINT32, ctx->info.has_int64_atomics ? CLPRIM_UINT64 : CLPRIM_UINT32,
              sizes[ns - 1], 7, KEYS_RANDOM, 1);
    /* Under Oclgrind up to 300 keys: 19 ranges of 16 bins already. */
    const size_t nk = test_small() ? 3 : sizeof ks / sizeof ks[0];
    for (size_t ki = 0; ki < nk; ++ki)
      for (size_t s = 0; s < ns; ++s) {
        if (test_small() && (s + ki) % 2) continue;
        const enum key_order order = (enum key_order)((s + ki) % (KEY_ORDERS + 2));
        check_keys_hist(ctx, (s + ki) % 2 ? CLPRIM_INT32 : CLPRIM_UINT32, sizes[s], ks[ki], order);
        for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
          const clprim_type vt = (clprim_type)t;
          if (!clprim__type_supported(ctx, vt) ||
              (clprim_type_size(vt) == 8 && !ctx->info.has_int64_atomics))
            continue;
          /* Under Oclgrind a third of the types, and of those a quarter,
           * drawn from the seed (each call there takes about a second). */
          if (test_small() && ((s + (size_t)t) % 3 || test_rand() % 4)) continue;
          check_rbk(ctx, t / 2 % 2 ? CLPRIM_INT32 : CLPRIM_UINT32, vt, sizes[s], ks[ki],
                    (enum key_order)((s + ki + (size_t)t) % (KEY_ORDERS + 2)), t % 2 == 0);
          if (test_small() && (s + ki + (size_t)t) % 2) continue;
          check_even(ctx, vt, sizes[s], ks[ki]);
        }
      }
    /* The default plan (ranges as large as local memory allows), 2^20
     * bins. */
    TEST_OK(clprim__tune(ctx, "histogram.range_shift=-1,histogram.slice=-1"));
    if (!test_small())
      for (size_t s = 0; s < ns; ++s) {
        const size_t K = s + 1 == ns ? (size_t)1 << 20 : 5000;
        check_keys_hist(ctx, s % 2 ? CLPRIM_INT32 : CLPRIM_UINT32, sizes[s], K,
                        (enum key_order)(s % (KEY_ORDERS + 2)));
        if (ctx->info.has_int64_atomics && clprim__type_supported(ctx, CLPRIM_DOUBLE))
          check_rbk(ctx, CLPRIM_INT32, CLPRIM_DOUBLE, sizes[s], K,
                    (enum key_order)((s + 1) % (KEY_ORDERS + 2)), 0);
      }
    TEST_OK(clprim__tune(ctx, "histogram.binned=-1"));
  }
}

/* ------------------------------------------------ device results */

/* Poisons the nw words of buf, for a call's device result. */
static const uint64_t RESULT_POISON = 0x5A5AC3C3DEADBEEFull;
static void poison_words(clprim_context *ctx, cl_mem buf, size_t nw) {
  uint64_t w[256];
  assert_true(nw <= 256);
  for (size_t i = 0; i < nw; ++i)
    w[i] = RESULT_POISON ^ i;
  test_write(ctx, buf, nw * 8, w);
}

/* The nw words of buf: words [off, off + k) equal want, every other word
 * still poisoned. */
static void check_words(clprim_context *ctx, cl_mem buf, size_t nw, size_t off, size_t k,
                        const uint64_t *want, const char *what) {
  uint64_t w[256];
  test_read(ctx, buf, nw * 8, w);
  for (size_t i = 0; i < nw; ++i) {
    const uint64_t expect = i >= off && i < off + k ? want[i - off] : RESULT_POISON ^ i;
    if (w[i] != expect)
      fail_msg("%s, path %s, offset %zu: word %zu = %#llx, expected %#llx", what, ctx_path(ctx),
               off, i, (unsigned long long)w[i], (unsigned long long)expect);
  }
}

/* histogram_even's outside_out and histogram_keys' (and
 * reduce_by_key_dense's) invalid_out: the device words equal the host ones
 * and the reference, at offset 0, at unaligned element offsets (through a
 * temporary copy) and at an aligned one (a sub-buffer), with the words
 * around untouched; alone (the call only enqueues) and with the host
 * pointer; n = 0 writes zeros. */
static void test_device_results(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    const size_t n = 3001, K = 7, bins = 7;
    float data[3001];
    uint32_t keys[3001];
    int32_t values[3001];
    uint64_t want_out[3] = {0, 0, 0}, want_invalid = 0;
    clprim_value lo, hi;
    memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
    lo.f32 = -0.5f, hi.f32 = 0.5f;
    make_keys(keys, n, K, KEYS_RANDOM, 1, 1);
    test_random(CLPRIM_FLOAT, data, n, 1);
    test_random(CLPRIM_INT32, values, n, 0);
    for (size_t i = 0; i < n; ++i) {
      if (test_rand() % 50 == 0) data[i] = NAN;
      const long b = ref_bin(CLPRIM_FLOAT, data, i, lo, hi, bins);
      if (b < 0) want_out[-b - 1]++;
      if (!key_valid(keys[i], K)) ++want_invalid;
    }
    assert_true(want_out[0] && want_out[1] && want_out[2] && want_invalid);
    cl_mem din = test_buffer(ctx, sizeof data, data), dkeys = test_buffer(ctx, sizeof keys, keys);
    cl_mem dvalues = test_buffer(ctx, sizeof values, values);
    cl_mem dcounts = test_buffer(ctx, K * 4, NULL), dsums = test_buffer(ctx, K * 4, NULL);
    /* Offsets in words: 0, unaligned ones, and the device's base alignment
     * (a sub-buffer) when it is a whole number of words. */
    const size_t align_words = ctx->base_align / 8;
    size_t offsets[5] = {0, 1, 3}, no = 3;
    if (align_words > 0 && align_words * 8 == ctx->base_align && align_words + 5 <= 250)
      offsets[no++] = align_words, offsets[no++] = align_words + 1;
    const size_t nw = offsets[no - 1] + 3 + 2;
    cl_mem dres = test_buffer(ctx, nw * 8, NULL);
    for (size_t o = 0; o < no; ++o)
      for (int with_host = 0; with_host < 2; ++with_host) {
        const size_t off = offsets[o];
        char what[160];
        /* histogram_even: 3 words. */
        uint64_t outside[3] = {11, 12, 13};
        poison_words(ctx, dres, nw);
        snprintf(what, sizeof what, "histogram_even outside_out%s", with_host ? " and host" : "");
        announce("%s, offset %zu, path %s", what, off, ctx_path(ctx));
        TEST_OK(clprim_histogram_even(ctx, n, CLPRIM_FLOAT, clprim_buf(din), lo, hi, bins,
                                      clprim_buf(dcounts), with_host ? outside : NULL,
                                      clprim_buf_at(dres, off)));
        check_words(ctx, dres, nw, off, 3, want_out, what);
        if (with_host && memcmp(outside, want_out, sizeof outside))
          fail_msg("%s, path %s: host outside %llu %llu %llu, expected %llu %llu %llu", what,
                   ctx_path(ctx), (unsigned long long)outside[0], (unsigned long long)outside[1],
                   (unsigned long long)outside[2], (unsigned long long)want_out[0],
                   (unsigned long long)want_out[1], (unsigned long long)want_out[2]);
        if (!with_host && (outside[0] != 11 || outside[1] != 12 || outside[2] != 13))
          fail_msg("%s: host words written though not asked for", what);
        /* histogram_keys and reduce_by_key_dense: 1 word. */
        for (int rbk = 0; rbk < 2; ++rbk) {
          uint64_t invalid = 99;
          poison_words(ctx, dres, nw);
          snprintf(what, sizeof what, "%s invalid_out%s",
                   rbk ? "reduce_by_key_dense" : "histogram_keys", with_host ? " and host" : "");
          announce("%s, offset %zu, path %s", what, off, ctx_path(ctx));
          if (rbk)
            TEST_OK(clprim_reduce_by_key_dense(
                ctx, n, CLPRIM_INT32, clprim_buf(dkeys), CLPRIM_INT32, clprim_buf(dvalues), K, 0,
                clprim_buf(dsums), clprim_buf(dcounts), with_host ? &invalid : NULL,
                clprim_buf_at(dres, off)));
          else
            TEST_OK(clprim_histogram_keys(ctx, n, CLPRIM_INT32, clprim_buf(dkeys), K,
                                          clprim_buf(dcounts), with_host ? &invalid : NULL,
                                          clprim_buf_at(dres, off)));
          check_words(ctx, dres, nw, off, 1, &want_invalid, what);
          if (invalid != (with_host ? want_invalid : 99))
            fail_msg("%s, path %s: host invalid %llu, expected %llu", what, ctx_path(ctx),
                     (unsigned long long)invalid,
                     (unsigned long long)(with_host ? want_invalid : 99));
        }
      }
    /* n = 0: zero words, at an unaligned offset. */
    const uint64_t zeros[3] = {0, 0, 0};
    poison_words(ctx, dres, nw);
    TEST_OK(clprim_histogram_even(ctx, 0, CLPRIM_FLOAT, clprim_buf(din), lo, hi, bins,
                                  clprim_buf(dcounts), NULL, clprim_buf_at(dres, 1)));
    check_words(ctx, dres, nw, 1, 3, zeros, "histogram_even n=0 outside_out");
    poison_words(ctx, dres, nw);
    TEST_OK(clprim_histogram_keys(ctx, 0, CLPRIM_UINT32, clprim_buf(dkeys), K, clprim_buf(dcounts),
                                  NULL, clprim_buf_at(dres, 3)));
    check_words(ctx, dres, nw, 3, 1, zeros, "histogram_keys n=0 invalid_out");
    clReleaseMemObject(din), clReleaseMemObject(dkeys), clReleaseMemObject(dvalues);
    clReleaseMemObject(dcounts), clReleaseMemObject(dsums), clReleaseMemObject(dres);
  }
}

/* ------------------------------------------------ subnormal float sums */

/* reduce_by_key_dense with float values that are subnormal: random
 * non-negative multiples of 2^-149 below 1e-39, capped so that each key's
 * sum stays below 2^-126. Such additions are exact in any order, so with
 * CLPRIM_SUMS_KEEP_SUBNORMALS every sum equals the CPU's float sum bit for
 * bit. Without the flag: the documented bound (m u sum|x|, no slack for
 * underflow) except on nv_ptx, whose hardware float atomics flush
 * subnormals (there the sums that differ are only counted). Both kernels:
 * sums alone (hist_local where 7872 keys fit in local memory) and with
 * counts (hist_global). */
static void test_rbk_subnormal(void **state) {
  (void)state;
  /* Not under Oclgrind (small sizes): run after test_rbk_float on the same
   * context, it reports uninitialised values in hist_global's
   * compare-and-swap adds into the zeroed sums (alone it reports nothing,
   * and the sums are right either way); not understood yet. This test is
   * about the arithmetic of real devices. */
  if (test_small()) {
    printf("subnormal sums: skipped at small sizes (Oclgrind, see the test)\n");
    return;
  }
  const size_t n = 32769, K = 7872;
  const uint32_t max_units = 713623;                  /* 713623 * 2^-149 < 1e-39 */
  const uint32_t key_limit = ((uint32_t)1 << 23) - 1; /* a key's sum below 2^-126 */
  uint32_t *keys = malloc(n * 4), *units = calloc(K, 4), *counts = malloc(K * 4);
  uint32_t *want_counts = calloc(K, 4);
  float *values = malloc(n * 4), *want = calloc(K, 4), *sums = malloc(K * 4);
  assert_true(keys && units && counts && want_counts && values && want && sums);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = (uint32_t)(test_rand() % K);
    const uint64_t r = test_rand();
    uint32_t u = r % 16 == 0 ? 0 : r % 16 == 1 ? 1 : (uint32_t)((r >> 8) % (max_units + 1));
    if (u > key_limit - units[keys[i]]) u = key_limit - units[keys[i]];
    units[keys[i]] += u;
    values[i] = ldexpf((float)u, -149);
    want[keys[i]] += values[i]; /* the reference: float additions, in order */
    want_counts[keys[i]]++;
  }
  size_t subnormal_sums = 0;
  for (size_t k = 0; k < K; ++k) {
    /* The host adds subnormals exactly (no flush to zero here). */
    assert_true(want[k] == ldexpf((float)units[k], -149));
    assert_true(want[k] < FLT_MIN);
    subnormal_sums += want[k] > 0.0f;
  }
  assert_true(subnormal_sums > K / 2);
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    /* Float additions keep subnormals where the device says it supports
     * them (optional for float in OpenCL 1.2). */
    cl_device_fp_config fp = 0;
    assert_int_equal(clGetDeviceInfo(clprim_context_device(ctx), CL_DEVICE_SINGLE_FP_CONFIG,
                                     sizeof fp, &fp, NULL),
                     CL_SUCCESS);
    const int denorm = (fp & CL_FP_DENORM) != 0;
    const int nv = ctx->info.path == CLPRIM_PATH_NV_PTX;
    cl_mem dkeys = test_buffer(ctx, n * 4, keys), dvalues = test_buffer(ctx, n * 4, values);
    cl_mem dsums = test_buffer(ctx, K * 4, NULL), dcounts = test_buffer(ctx, K * 4, NULL);
    for (int keep = 1; keep >= 0; --keep)
      for (int with_counts = 0; with_counts < 2; ++with_counts) {
        char what[160];
        snprintf(what, sizeof what,
                 "reduce_by_key_dense subnormal float sums%s%s, n=%zu, K=%zu, path %s",
                 keep ? ", CLPRIM_SUMS_KEEP_SUBNORMALS" : "", with_counts ? ", counts" : "", n, K,
                 ctx_path(ctx));
        announce("%s", what);
        uint64_t invalid = 5;
        TEST_OK(clprim_reduce_by_key_dense(
            ctx, n, CLPRIM_UINT32, clprim_buf(dkeys), CLPRIM_FLOAT, clprim_buf(dvalues), K,
            keep ? CLPRIM_SUMS_KEEP_SUBNORMALS : 0, clprim_buf(dsums),
            clprim_buf(with_counts ? dcounts : NULL), &invalid, clprim_buf(NULL)));
        test_read(ctx, dsums, K * 4, sums);
        if (invalid != 0)
          fail_msg("%s: invalid %llu, expected 0", what, (unsigned long long)invalid);
        if (with_counts) {
          test_read(ctx, dcounts, K * 4, counts);
          for (size_t k = 0; k < K; ++k)
            if (counts[k] != want_counts[k])
              fail_msg("%s: count[%zu] = %u, expected %u", what, k, counts[k], want_counts[k]);
        }
        size_t differ = 0, first = K;
        for (size_t k = 0; k < K; ++k)
          if (memcmp(&sums[k], &want[k], 4)) {
            if (!differ) first = k;
            ++differ;
          }
        if (keep && denorm) {
          if (differ)
            fail_msg("%s: %zu sums differ from the exact ones, first sum[%zu] = %a, expected %a",
                     what, differ, first, (double)sums[first], (double)want[first]);
        } else if (!keep && !nv) {
          const double u = FLT_EPSILON / 2;
          for (size_t k = 0; k < K; ++k) {
            const double bound = (double)want_counts[k] * u * (double)want[k];
            if (!(fabs((double)sums[k] - (double)want[k]) <= bound))
              fail_msg("%s: sum[%zu] = %a, expected %a (bound %.3g)", what, k, (double)sums[k],
                       (double)want[k], bound);
          }
        }
        if (differ || !denorm || (!keep && nv))
          printf("%s: %zu of %zu sums differ from the exact ones%s\n", what, differ, K,
                 !denorm ? " (the device does not report CL_FP_DENORM: not checked)"
                 : keep  ? ""
                         : " (no flag on nv_ptx: float atomics flush subnormals, not checked)");
      }
    clReleaseMemObject(dkeys), clReleaseMemObject(dvalues), clReleaseMemObject(dsums);
    clReleaseMemObject(dcounts);
  }
  free(keys), free(units), free(counts), free(want_counts), free(values), free(want), free(sums);
}

/* ------------------------------------------------------ exact sums */

/* Data of the exact dense sums: the shared kinds (uniform, every
 * exponent, subnormals, near the largest: sums overflow), and three of
 * this test's: pairs that cancel within their key (x and -x on one key,
 * a few small ones left: many sums exactly 0), integers just above the
 * significand's reach (sums that round, ties among them), and every
 * exponent with -0 alone on keys = 3 (mod 7), +0 and -0 on keys = 5
 * (mod 7) and infinities and NaNs sprinkled in. */
enum exact_data { EXACT_KEY_CANCEL = TEST_EX_KINDS, EXACT_TIES, EXACT_SPECIALS, EXACT_DATA };
static const char *exact_data_name(int d) {
  return d < TEST_EX_KINDS    ? test_exact_kind_name[d]
         : d == EXACT_KEY_CANCEL ? "cancelling within keys"
         : d == EXACT_TIES       ? "integers past the significand (ties)"
                                 : "signed zeros, infinities and NaN";
}

static void set_fv(clprim_type t, void *p, size_t i, double v) {
  if (t == CLPRIM_FLOAT)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}

static void make_exact_data(clprim_type vt, uint32_t *keys, void *values, size_t n, size_t K,
                            int d) {
  const int dbl = vt == CLPRIM_DOUBLE;
  if (d < TEST_EX_KINDS) {
    test_exact_input(vt, values, n, (enum test_exact_kind)d);
  } else if (d == EXACT_KEY_CANCEL) {
    for (size_t i = 0; i < n; ++i) {
      const double x =
          (test_rand() % 2 ? -1 : 1) * ldexp(1 + test_uniform(), (int)(test_rand() % 90) - 30);
      set_fv(vt, values, i, x);
    }
    for (size_t i = 0; i + 1 < n; i += 2) { /* a pair: one key, x and -x */
      keys[i + 1] = keys[i];
      set_fv(vt, values, i + 1, -test_value_f(vt, values, i));
    }
    for (size_t i = 0; i < n / 50; ++i) /* a few left over */
      set_fv(vt, values, test_rand() % n, ldexp(test_uniform(), -(int)(test_rand() % 40)));
    const size_t es = clprim_type_size(vt); /* pairs shuffled, key with value */
    for (size_t i = n > 0 ? n - 1 : 0; i > 0; --i) {
      const size_t j = test_rand() % (i + 1);
      test_swap(values, es, i, j);
      test_swap(keys, 4, i, j);
    }
  } else if (d == EXACT_TIES) {
    const int p = dbl ? 53 : 24;
    for (size_t i = 0; i < n; ++i) { /* integers in [2^p, 2^(p+1)), some with few low bits */
      const uint64_t m = ((uint64_t)1 << p) | (test_rand() & (((uint64_t)1 << p) - 1));
      const uint64_t v = test_rand() % 4 ? m >> 2 << 2 : m;
      set_fv(vt, values, i, (test_rand() % 3 ? 1.0 : -1.0) * (double)v);
    }
  } else {
    test_exact_input(vt, values, n, TEST_EX_WIDE);
    for (size_t i = 0; i < n; ++i) {
      if (keys[i] < K && keys[i] % 7 == 3) set_fv(vt, values, i, -0.0);
      if (keys[i] < K && keys[i] % 7 == 5) set_fv(vt, values, i, test_rand() % 2 ? 0.0 : -0.0);
      const uint64_t r = test_rand() % 400;
      if (r < 3 && keys[i] % 7 != 3)
        set_fv(vt, values, i, r == 0 ? INFINITY : r == 1 ? -INFINITY : NAN);
    }
  }
}

/* The exactly rounded sum of each key's values (gathered by key, then the
 * shared reference), its count, and the keys out of range. */
static void exact_by_key(clprim_type vt, const uint32_t *keys, const void *values, size_t n,
                         size_t K, uint64_t *want, uint32_t *want_counts, uint64_t *invalid) {
  const size_t es = clprim_type_size(vt);
  size_t *at = calloc(K + 1, sizeof *at);
  unsigned char *gathered = malloc((n ? n : 1) * es);
  assert_true(at && gathered);
  *invalid = 0;
  for (size_t i = 0; i < n; ++i)
    if (keys[i] < K)
      ++at[keys[i] + 1];
    else
      ++*invalid;
  for (size_t k = 0; k < K; ++k) {
    want_counts[k] = (uint32_t)at[k + 1];
    at[k + 1] += at[k];
  }
  for (size_t i = 0; i < n; ++i)
    if (keys[i] < K) memcpy(gathered + at[keys[i]]++ * es, (const char *)values + i * es, es);
  for (size_t k = 0; k < K; ++k) { /* at[k] is now key k's end */
    const size_t begin = k ? at[k - 1] : 0;
    want[k] = test_exact_reference(vt, gathered + begin * es, at[k] - begin);
  }
  free(at), free(gathered);
}

/* One exact dense reduce-by-key against the reference, bit for bit; counts
 * when with_counts, invalid on the host or (odd n) in a device word. */
static void check_rbk_exact(clprim_context *ctx, clprim_type kt, clprim_type vt, size_t n, size_t K,
                            enum key_order order, int d, int with_counts, const char *config) {
  const size_t es = clprim_type_size(vt), m = n ? n : 1;
  uint32_t *keys = malloc(m * 4), *counts = malloc(K * 4), *want_counts = malloc(K * 4);
  unsigned char *values = malloc(m * es), *sums = malloc(K * es);
  uint64_t *want = malloc(K * 8);
  assert_true(keys && counts && want_counts && values && sums && want);
  make_keys(keys, n, K, order, 1, kt == CLPRIM_INT32);
  make_exact_data(vt, keys, values, n, K, d);
  uint64_t want_invalid;
  exact_by_key(vt, keys, values, n, K, want, want_counts, &want_invalid);
  memset(sums, 0xA5, K * es), memset(counts, 0xA5, K * 4);
  cl_mem dkeys = test_buffer(ctx, m * 4, keys), dvalues = test_buffer(ctx, m * es, values);
  cl_mem dsums = test_buffer(ctx, K * es, sums), dcounts = test_buffer(ctx, K * 4, counts);
  cl_mem dinvalid = test_buffer(ctx, 8, NULL);
  uint64_t invalid = 12345;
  const int on_device = n % 2;
  /* CLPRIM_SUMS_KEEP_SUBNORMALS with the flag: allowed, redundant. */
  const unsigned flags = CLPRIM_EXACT | (n % 3 == 1 ? CLPRIM_SUMS_KEEP_SUBNORMALS : 0u);
  char what[240];
  snprintf(what, sizeof what,
           "exact reduce_by_key_dense %s keys, %s values (%s), n=%zu, K=%zu, %s%s%s, path %s",
           clprim_type_name(kt), clprim_type_name(vt), exact_data_name(d), n, K, order_name[order],
           with_counts ? ", counts" : "", config, ctx_path(ctx));
  announce("%s", what);
  TEST_OK(clprim_reduce_by_key_dense(
      ctx, n, kt, clprim_buf(dkeys), vt, clprim_buf(dvalues), K, flags, clprim_buf(dsums),
      clprim_buf(with_counts ? dcounts : NULL), on_device ? NULL : &invalid,
      clprim_buf(on_device ? dinvalid : NULL)));
  test_read(ctx, dsums, K * es, sums);
  test_read(ctx, dcounts, K * 4, counts);
  if (on_device) test_read(ctx, dinvalid, 8, &invalid);
  if (invalid != want_invalid)
    test_report("%s: invalid %llu, expected %llu", what, (unsigned long long)invalid,
                (unsigned long long)want_invalid);
  size_t wrong = 0, first = 0;
  for (size_t k = 0; k < K; ++k) {
    uint64_t bits = 0;
    memcpy(&bits, sums + k * es, es);
    if (bits != want[k] && !(test_nan_bits(vt, bits) && test_nan_bits(vt, want[k])))
      if (wrong++ == 0) first = k;
    if (with_counts ? counts[k] != want_counts[k] : counts[k] != 0xA5A5A5A5u)
      test_report("%s: count[%zu] = %u, expected %u", what, k, counts[k],
                  with_counts ? want_counts[k] : 0xA5A5A5A5u);
  }
  if (wrong) {
    uint64_t bits = 0;
    memcpy(&bits, sums + first * es, es);
    test_report("%s: %zu of %zu sums wrong, the first sum[%zu] = %#llx, exact %#llx", what, wrong,
                K, first, (unsigned long long)bits, (unsigned long long)want[first]);
  }
  clReleaseMemObject(dkeys), clReleaseMemObject(dvalues), clReleaseMemObject(dsums);
  clReleaseMemObject(dcounts), clReleaseMemObject(dinvalid);
  free(keys), free(counts), free(want_counts), free(values), free(sums), free(want);
}

/* CLPRIM_EXACT: every key's sum bit for bit against the exact reference,
 * float and double, every data kind, on each path in three configurations:
 * the default (keys in local memory where they fit, else global windows);
 * 32-bit atomic pairs instead of 64-bit atomics (exact.atomics64=0, and the
 * device's 64-bit atomics hidden, as a device without them has), over
 * spans of 1000 elements (the words normalised between them); global
 * windows only, in ranges of 7 keys (several passes over the data), over
 * spans of 1000 elements. Sizes 0, 1
 * and around the work-groups' shares; few keys, around the local limit,
 * many. Integer value types refuse the flag, with nothing written. */
/* Under Oclgrind the global windows of test_rbk_exact's third configuration
 * (7-key ranges) cover at most 17 keys: two whole windows and a part one run
 * every kernel, and each window costs seconds there. */
static size_t window_cap(int config, size_t K) {
  return test_small() && config == 2 && K > 17 ? 17 : K;
}

static void test_rbk_exact(void **state) {
  (void)state;
  const size_t exact_phase = (size_t)(test_rand() % 16);
  static const char *const config_name[3] = {"", ", 32-bit pairs, spans of 1000",
                                             ", global windows in 7-key ranges, spans of 1000"};
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    const int had_atomics = ctx->info.has_int64_atomics;
    const size_t wg = ctx->info.path == CLPRIM_PATH_CPU     ? 64
                      : ctx->info.max_work_group_size < 256 ? 64
                                                            : 256;
    for (int config = 0; config < 3; ++config) {
      if (config == 1) {
        TEST_OK(clprim__tune(ctx, "exact.atomics64=0,histogram.exact_span=1000"));
        ctx->info.has_int64_atomics = 0;
      }
      if (config == 2)
        TEST_OK(clprim__tune(ctx, "histogram.exact_local=0,histogram.exact_keys=7,"
                                  "histogram.exact_span=1000"));
      for (clprim_type vt = CLPRIM_FLOAT; vt <= CLPRIM_DOUBLE; ++vt) {
        if (!clprim__type_supported(ctx, vt)) continue;
        const size_t local_max = clprim__histogram_exact_local_max(ctx, vt);
        const size_t ks[] = {1, 2, 64 < local_max ? 64 : local_max, local_max, local_max + 1, 5000};
        const size_t sizes[] = {0,       1,           2,    4 * wg - 1, 4 * wg + 1,
                                64 * wg, 64 * wg + 1, 3001, 100003};
        const size_t nk = sizeof ks / sizeof ks[0], ns = sizeof sizes / sizeof sizes[0];
        for (size_t ki = 0; ki < nk; ++ki)
          for (size_t s = 0; s < ns; ++s) {
            /* Every data kind over the sizes in turn; under Oclgrind (small
             * sizes) one in 16, from a phase the seed draws, for races and
             * bounds. */
            if (test_small() ? (s + ki + (size_t)config + exact_phase) % 16 != 0 || sizes[s] > 5000
                             : (s + ki + config) % 2)
              continue;
            if (config == 2 && ks[ki] > 100) continue;
            const int d = (int)((s + 3 * ki + (size_t)config) % EXACT_DATA);
            check_rbk_exact(ctx, (s + ki) % 2 ? CLPRIM_INT32 : CLPRIM_UINT32, vt, sizes[s],
                            window_cap(config, ks[ki]),
                            (enum key_order)((s + ki) % KEY_ORDERS), d, (s + ki) % 3 != 0,
                            config_name[config]);
          }
        /* Every data kind once at a middle size (and keys in local memory
         * and beyond it), random and sorted keys (a work-item's elements
         * then mostly of one key: what it has sent is skipped). Under
         * Oclgrind one case: random keys for float, sorted for double. */
        for (int d = 0; d < 2 * EXACT_DATA; ++d)
          if (!test_small() ||
              d == (vt == CLPRIM_FLOAT ? config : EXACT_DATA + 3 + config))
            check_rbk_exact(ctx, CLPRIM_INT32, vt, test_small() ? 777 : 20011,
                            window_cap(config, d % 2 ? 50 : local_max + 3),
                            d < EXACT_DATA ? KEYS_RANDOM : KEYS_SORTED, d % EXACT_DATA,
                            d % 3 == 0, config_name[config]);
        /* Many keys (global windows), once per type. */
        if (!test_small() && config == 0)
          check_rbk_exact(ctx, CLPRIM_UINT32, vt, ((size_t)1 << 20) + 5,
                          vt == CLPRIM_FLOAT ? (size_t)1 << 20 : (size_t)1 << 17, KEYS_RANDOM,
                          TEST_EX_WIDE, 1, config_name[config]);
      }
      if (config == 1) {
        TEST_OK(clprim__tune(ctx, "exact.atomics64=-1,histogram.exact_span=-1"));
        ctx->info.has_int64_atomics = had_atomics;
      }
      if (config == 2)
        TEST_OK(clprim__tune(ctx, "histogram.exact_local=-1,histogram.exact_keys=-1,"
                                  "histogram.exact_span=-1"));
    }
  }
  /* Integer value types refuse the flag, and nothing is written. */
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  uint32_t keys[16] = {0, 1, 2, 3}, poison[16];
  for (int i = 0; i < 16; ++i)
    poison[i] = 0xC0FFEE00u + (uint32_t)i;
  cl_mem dkeys = test_buffer(ctx, sizeof keys, keys), dvalues = test_buffer(ctx, 128, NULL);
  cl_mem dsums = test_buffer(ctx, sizeof poison, poison), dcounts = test_buffer(ctx, 64, poison);
  cl_mem dinvalid = test_buffer(ctx, 8, poison);
  for (clprim_type vt = CLPRIM_INT32; vt <= CLPRIM_UINT64; ++vt) {
    uint64_t invalid = 77;
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_reduce_by_key_dense(ctx, 16, CLPRIM_UINT32, clprim_buf(dkeys), vt,
                                           clprim_buf(dvalues), 4, CLPRIM_EXACT, clprim_buf(dsums),
                                           clprim_buf(dcounts), &invalid, clprim_buf(dinvalid)));
    test_text_has(ctx, "value_type", "exact reduce_by_key_dense of an integer type");
    if (invalid != 77)
      fail_msg("exact %s reduce_by_key_dense: invalid written", clprim_type_name(vt));
  }
  uint32_t after[16];
  test_read(ctx, dsums, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, dcounts, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, dinvalid, 8, after);
  assert_memory_equal(after, poison, 8);
  clReleaseMemObject(dkeys), clReleaseMemObject(dvalues), clReleaseMemObject(dsums);
  clReleaseMemObject(dcounts), clReleaseMemObject(dinvalid);
  test_report_end();
}

/* ----------------------------------------------------------------- errors */

static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t n = 64, K = 16;
  uint32_t keys[64];
  double values[64];
  for (size_t i = 0; i < n; ++i)
    keys[i] = (uint32_t)(i % K), values[i] = (double)i;
  uint32_t poison[16];
  for (size_t k = 0; k < K; ++k)
    poison[k] = 0xDEADBEEFu;
  cl_mem dkeys = test_buffer(ctx, sizeof keys, keys),
         dvalues = test_buffer(ctx, sizeof values, values);
  cl_mem counts = test_buffer(ctx, K * 4, poison), sums = test_buffer(ctx, K * 8, NULL);
  test_write(ctx, sums, K * 4, poison);
  uint32_t sums_before[32];
  test_read(ctx, sums, K * 8, sums_before);
  cl_mem small = test_buffer(ctx, K * 4 - 1, NULL);
  uint64_t invalid = 77, outside[3] = {5, 6, 7};
  const clprim_type i32 = CLPRIM_INT32, f64 = CLPRIM_DOUBLE;
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
  lo.f32 = 0.0f, hi.f32 = 1.0f;
  /* The calls' buffers as ranges from element 0. */
  const clprim_buffer kb = clprim_buf(dkeys), vb = clprim_buf(dvalues), cb = clprim_buf(counts),
                      sb = clprim_buf(sums), smallb = clprim_buf(small), none = clprim_buf(NULL);
  /* Device results (uint64 words) for the error cases of invalid_out and
   * outside_out: poisoned, and checked untouched below. */
  const uint64_t dev_poison[4] = {0x1111111111111111ull, 0x2222222222222222ull,
                                  0x3333333333333333ull, 0x4444444444444444ull};
  cl_mem dev = test_buffer(ctx, sizeof dev_poison, dev_poison),
         dev_small = test_buffer(ctx, 7, NULL);

  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_keys(NULL, n, i32, kb, K, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_keys(ctx, n, i32, none, K, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_keys(ctx, n, i32, kb, K, none, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_keys(ctx, n, CLPRIM_FLOAT, kb, K, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_keys(ctx, n, CLPRIM_INT64, kb, K, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_keys(ctx, n, (clprim_type)9, kb, K, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_keys(ctx, n, i32, kb, 0, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_keys(ctx, n, i32, kb, K, kb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE,
              clprim_histogram_keys(ctx, n, i32, kb, ((size_t)1 << 31) + 1, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE,
              clprim_histogram_keys(ctx, (size_t)1 << 32, i32, kb, K, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_histogram_keys(ctx, n + 1, i32, kb, K, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_histogram_keys(ctx, n, i32, kb, K + 1, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_histogram_keys(ctx, n, i32, kb, K, smallb, &invalid, none));
  /* The device result: too small (7 bytes; one word past the end), over an
   * input or the other output. */
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_histogram_keys(ctx, n, i32, kb, K, cb, &invalid, clprim_buf(dev_small)));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_histogram_keys(ctx, n, i32, kb, K, cb, &invalid, clprim_buf_at(dev, 4)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_keys(ctx, n, i32, kb, K, cb, &invalid, kb));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_keys(ctx, n, i32, kb, K, cb, &invalid, clprim_buf_at(counts, 1)));

  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, none, K, 0, sb, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, 0, none, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, (clprim_type)-1, vb, K, 0, sb, cb,
                                         &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, 0, sb, sb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, 0, vb, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, 0, 0, sb, cb, &invalid, none));
  TEST_STATUS(
      CLPRIM_ERROR_BUFFER_TOO_SMALL,
      clprim_reduce_by_key_dense(ctx, n + 1, i32, kb, f64, vb, K, 0, sb, cb, &invalid, none));
  TEST_STATUS(
      CLPRIM_ERROR_BUFFER_TOO_SMALL,
      clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, 0, smallb, cb, &invalid, none));
  TEST_STATUS(
      CLPRIM_ERROR_BUFFER_TOO_SMALL,
      clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, 0, sb, smallb, &invalid, none));
  /* Unknown flags bits (alone, and with the known one). */
  const unsigned bad_flags[] = {1u, 2u, 4u, 8u, 32u, 0x80000000u, CLPRIM_SUMS_KEEP_SUBNORMALS | 1u,
                                ~0u};
  for (size_t f = 0; f < sizeof bad_flags / sizeof bad_flags[0]; ++f)
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, bad_flags[f], sb, cb,
                                           &invalid, clprim_buf(dev)));
  /* The device result: too small, over an input or an output. */
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, 0, sb, cb, &invalid,
                                         clprim_buf(dev_small)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, 0, sb, cb, &invalid, vb));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, 0, sb, cb, &invalid,
                                         clprim_buf_at(sums, K - 1)));

  /* No 64-bit atomics: int64 and double sums refused; no fp64: double. */
  int had = ctx->info.has_int64_atomics, had_fp64 = ctx->info.has_fp64;
  ctx->info.has_int64_atomics = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_OPERATION,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, 0, sb, cb, &invalid, none));
  TEST_STATUS(
      CLPRIM_ERROR_UNSUPPORTED_OPERATION,
      clprim_reduce_by_key_dense(ctx, n, i32, kb, CLPRIM_INT64, vb, K, 0, sb, cb, &invalid, none));
  ctx->info.has_int64_atomics = had;
  ctx->info.has_fp64 = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, 0, sb, cb, &invalid, none));
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE,
              clprim_histogram_even(ctx, n, f64, vb, lo, hi, K, cb, outside, none));
  ctx->info.has_fp64 = had_fp64;

  /* Bad bounds. */
  clprim_value nan_v = lo;
  nan_v.f32 = NAN;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, hi, lo, K, cb, outside, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, lo, lo, K, cb, outside, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, nan_v, hi, K, cb, outside, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, lo, nan_v, K, cb, outside, none));
  clprim_value big_lo = lo, big_hi = hi;
  big_lo.f32 = -FLT_MAX, big_hi.f32 = FLT_MAX;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, big_lo,
                                                                   big_hi, K, cb, outside, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, lo, hi, 0, cb, outside, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, lo, hi, K, none, outside, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_even(ctx, n, (clprim_type)6, vb, lo, hi, K, cb, outside, none));
  clprim_value ilo, ihi;
  memset(&ilo, 0, sizeof ilo), memset(&ihi, 0, sizeof ihi);
  ilo.i64 = INT64_MIN, ihi.i64 = INT64_MAX;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_even(ctx, n / 2, CLPRIM_INT64, vb, ilo, ihi, 2, cb, outside, none));
  memset(&ilo, 0, sizeof ilo), memset(&ihi, 0, sizeof ihi);
  ilo.i32 = 5, ihi.i32 = 5;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_even(ctx, n, CLPRIM_INT32, vb, ilo, ihi, K, cb, outside, none));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_histogram_even(ctx, 2 * n + 1, CLPRIM_FLOAT, vb,
                                                                   lo, hi, K, cb, outside, none));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, lo, hi, K, smallb, outside, none));
  /* outside_out: 3 words, so 2 left past offset 2 are too few; over the
   * input or the counts. */
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, lo, hi, K, cb, outside,
                                    clprim_buf_at(dev, 2)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, lo, hi, K, cb, outside,
                                    clprim_buf_at(dvalues, 5)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, lo, hi, K, cb, outside, cb));

  /* Buffers of another OpenCL context. */
  cl_mem foreign = test_foreign_buffer(ctx, K * 8);
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_histogram_keys(ctx, n, i32, kb, K, clprim_buf(foreign), &invalid, none));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_reduce_by_key_dense(ctx, n, i32, kb, f64, vb, K, 0, clprim_buf(foreign), cb,
                                         &invalid, none));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_histogram_keys(ctx, n, i32, kb, K, cb, &invalid, clprim_buf(foreign)));
  TEST_STATUS(CL_INVALID_CONTEXT, clprim_histogram_even(ctx, n, CLPRIM_FLOAT, vb, lo, hi, K, cb,
                                                        outside, clprim_buf(foreign)));
  clReleaseMemObject(foreign);

  /* Nothing was written. */
  uint32_t after[32];
  test_read(ctx, counts, K * 4, after);
  assert_memory_equal(after, poison, K * 4);
  test_read(ctx, sums, K * 8, after);
  assert_memory_equal(after, sums_before, K * 8);
  uint64_t dev_after[4];
  test_read(ctx, dev, sizeof dev_after, dev_after);
  assert_memory_equal(dev_after, dev_poison, sizeof dev_poison);
  assert_int_equal(invalid, 77);
  assert_int_equal(outside[0], 5);
  assert_int_equal(outside[2], 7);

  /* n = 0 works and zeroes the outputs. */
  TEST_OK(clprim_histogram_keys(ctx, 0, i32, kb, K, cb, &invalid, none));
  test_read(ctx, counts, K * 4, after);
  for (size_t k = 0; k < K; ++k)
    assert_int_equal(after[k], 0);
  assert_int_equal(invalid, 0);
  clReleaseMemObject(dkeys);
  clReleaseMemObject(dvalues);
  clReleaseMemObject(counts);
  clReleaseMemObject(sums);
  clReleaseMemObject(small);
  clReleaseMemObject(dev);
  clReleaseMemObject(dev_small);
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, a flag of another family is refused with nothing written, and a
 * call that succeeds leaves "". */
static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  uint64_t invalid[3];
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo);
  memset(&hi, 0, sizeof hi);
  lo.i32 = 10, hi.i32 = 5;
  TEST_TEXT(ctx, INVALID, clprim_histogram_keys(ctx, 100, CLPRIM_INT32, A, 16, NONE, invalid, NONE),
            "histogram_keys: counts is required");
  TEST_TEXT(ctx, INVALID, clprim_histogram_keys(ctx, 100, CLPRIM_FLOAT, A, 16, O, invalid, NONE),
            "key_type is float");
  TEST_TEXT(ctx, SMALL, clprim_histogram_keys(ctx, 100, CLPRIM_INT32, A, 2000, O, invalid, NONE),
            "counts holds 1024 elements from offset 0, the call needs 2000");
  TEST_TEXT(ctx, INVALID,
            clprim_histogram_even(ctx, 100, CLPRIM_INT32, A, lo, hi, 16, O, invalid, NONE),
            "histogram_even: lo (10) is not below hi (5)");
  TEST_TEXT(ctx, INVALID,
            clprim_histogram_even(ctx, 100, CLPRIM_INT32, A, lo, hi, 0, O, invalid, NONE),
            "bins is 0");
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(void) {
  test_init("test_histogram");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),        cmocka_unit_test(test_error_texts),
      cmocka_unit_test(test_keys),          cmocka_unit_test(test_rbk_int32),
      cmocka_unit_test(test_rbk_uint32),    cmocka_unit_test(test_rbk_int64),
      cmocka_unit_test(test_rbk_uint64),    cmocka_unit_test(test_rbk_float),
      cmocka_unit_test(test_rbk_double),    cmocka_unit_test(test_even),
      cmocka_unit_test(test_binned),        cmocka_unit_test(test_device_results),
      cmocka_unit_test(test_rbk_subnormal), cmocka_unit_test(test_rbk_exact),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
