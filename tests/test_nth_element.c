/* test_nth_element: nth_element, median, quantiles and approximate
 * selection against a CPU reference (qsort of a copy, NaN after +inf, -0.0
 * equal to +0.0), for every type and path the device runs: distributions
 * uniform, normal, sorted, reverse-sorted, all equal, 16 / 128 / 1024
 * distinct values, heavy duplicates of the answer, adversarial (most
 * elements in one narrow range), special values (NaN, +-inf, denormals,
 * -0.0); ranks 0, 1, n/2, n-1, n/100, 9n/10; sizes around the base case
 * (2048), the one-launch small case (65536) and the vector width; the NaN
 * policy; the approximate call's device result alone (value NULL); the
 * median of a range at an unaligned offset; input unchanged; errors write
 * nothing. */
#include "../cl/internal/layout.h"
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qsort comparators on the values themselves: the reference. */
#define CMP_INT(name, CT)                                                                          \
  static int name(const void *a, const void *b) {                                                  \
    CT x = *(const CT *)a, y = *(const CT *)b;                                                     \
    return x < y ? -1 : x > y;                                                                     \
  }
CMP_INT(cmp_i32, int32_t)
CMP_INT(cmp_u32, uint32_t)
CMP_INT(cmp_i64, int64_t)
CMP_INT(cmp_u64, uint64_t)
#define CMP_FLOAT(name, CT)                                                                        \
  static int name(const void *a, const void *b) {                                                  \
    CT x = *(const CT *)a, y = *(const CT *)b;                                                     \
    if (isnan(x) || isnan(y)) return isnan(x) - isnan(y); /* NaN last */                           \
    return x < y ? -1 : x > y;                                                                     \
  }
CMP_FLOAT(cmp_f32, float)
CMP_FLOAT(cmp_f64, double)

static void *sorted_copy(clprim_type type, const void *data, size_t n) {
  size_t es = clprim_type_size(type);
  void *s = malloc(n * es + 1);
  memcpy(s, data, n * es);
  int (*const cmps[6])(const void *, const void *) = {cmp_i32, cmp_u32, cmp_i64,
                                                      cmp_u64, cmp_f32, cmp_f64};
  qsort(s, n, es, cmps[type]);
  return s;
}

/* Equal as the selection calls define it (NaN == NaN, -0 == +0). */
static int same(clprim_type type, clprim_value v, const void *ref, size_t i) {
  clprim_value w;
  memset(&w, 0, sizeof w);
  memcpy(&w, (const unsigned char *)ref + i * clprim_type_size(type), clprim_type_size(type));
  return test_order_key(type, &v, 0) == test_order_key(type, &w, 0);
}

enum {
  DIST_UNIFORM,
  DIST_NORMAL,
  DIST_SORTED,
  DIST_REVERSE,
  DIST_EQUAL,
  DIST_FEW16,
  DIST_FEW128,
  DIST_FEW1024,
  DIST_DUP_ANSWER,
  DIST_ADVERSARIAL,
  DIST_SPECIAL,
  DIST_COUNT
};
static const char *const dist_names[DIST_COUNT] = {
    "uniform",      "normal",        "sorted",
    "reverse",      "all equal",     "16 distinct",
    "128 distinct", "1024 distinct", "duplicates of the median",
    "adversarial",  "special values"};

/* Element i as a double-ish number v, stored in the type. */
static void put(clprim_type type, void *data, size_t i, double v) {
  switch (type) {
  case CLPRIM_INT32:
    ((int32_t *)data)[i] = (int32_t)v;
    break;
  case CLPRIM_UINT32:
    ((uint32_t *)data)[i] = (uint32_t)(v < 0 ? -v : v);
    break;
  case CLPRIM_INT64:
    ((int64_t *)data)[i] = (int64_t)v;
    break;
  case CLPRIM_UINT64:
    ((uint64_t *)data)[i] = (uint64_t)(v < 0 ? -v : v);
    break;
  case CLPRIM_FLOAT:
    ((float *)data)[i] = (float)v;
    break;
  case CLPRIM_DOUBLE:
    ((double *)data)[i] = v;
    break;
  }
}

static void fill(clprim_type type, void *data, size_t n, unsigned dist) {
  const int fl = type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE;
  const double scale = fl ? 1.0 : 1e9;
  if (dist == DIST_UNIFORM) {
    test_random(type, data, n, 1);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    double u = test_uniform(), v = 0;
    switch (dist) {
    case DIST_NORMAL: {
      double u2 = test_uniform();
      v = sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * u2) * (fl ? 1.0 : 1e6);
      break;
    }
    case DIST_SORTED:
      v = (double)i - (double)n / 2;
      break;
    case DIST_REVERSE:
      v = (double)n / 2 - (double)i;
      break;
    case DIST_EQUAL:
      v = 42;
      break;
    case DIST_FEW16:
      v = (double)(test_rand() % 16) * 7 - 50;
      break;
    case DIST_FEW128:
      v = (double)(test_rand() % 128) * 3 - 100;
      break;
    case DIST_FEW1024:
      v = (double)(test_rand() % 1024) - 500;
      break;
    case DIST_DUP_ANSWER:
      v = u < 0.5 ? 7 : (u - 0.5) * scale * 4 - scale;
      break;
    case DIST_ADVERSARIAL:
      /* 99% in a range narrower than any bucket of the other 1%'s spread. */
      v = u < 0.99 ? (fl ? 1e-30 * test_uniform() : (double)(test_rand() % 5000))
                   : (test_uniform() - 0.5) * scale * 1e6;
      break;
    case DIST_SPECIAL:
      v = (u - 0.5) * 100;
      break;
    }
    put(type, data, i, v);
  }
  if (dist == DIST_SPECIAL && (type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE)) {
    for (size_t i = 0; i < n; ++i) {
      unsigned r = (unsigned)(test_rand() % 10);
      double v = r == 0   ? NAN
                 : r == 1 ? INFINITY
                 : r == 2 ? -INFINITY
                 : r == 3 ? -0.0
                 : r == 4 ? 0.0
                 : r == 5 ? (type == CLPRIM_FLOAT ? 1e-40 : 1e-310)
                          : -1;
      if (v != -1) put(type, data, i, v);
      if (r == 0 && (test_rand() & 1)) /* a negative NaN */
        put(type, data, i, -NAN);
    }
  }
}

/* Checks nth_element at ranks, quantiles of all of them at once, and the
 * approximate call's bound, on data (n elements). */
static void check_case(clprim_context *ctx, clprim_type type, const void *data, size_t n,
                       const char *what) {
  const size_t es = clprim_type_size(type);
  void *ref = sorted_copy(type, data, n);
  cl_mem in = test_buffer(ctx, n * es, data);
  cl_mem result = test_buffer(ctx, 8 * 8, NULL);
  uint64_t ranks[6] = {0, n / 2, n - 1, n > 1 ? 1 : 0, n / 100, (n * 9) / 10};
  const int nranks = test_small() ? 3 : 6; /* Oclgrind: fewer calls */
  for (int r = 0; r < nranks; ++r) {
    clprim_value v;
    TEST_OK(clprim_nth_element(ctx, n, type, clprim_buf(in), ranks[r], 0, &v,
                               clprim_buf(r == 1 ? result : NULL)));
    if (!same(type, v, ref, ranks[r]))
      fail_msg("%s %s n=%zu: rank %llu wrong", clprim_type_name(type), what, n,
               (unsigned long long)ranks[r]);
    if (r == 1) {
      clprim_value d;
      memset(&d, 0, sizeof d);
      test_read(ctx, result, es, &d);
      if (!same(type, d, ref, ranks[r]))
        fail_msg("%s %s: result buffer wrong", what, clprim_type_name(type));
    }
    /* approximate: the returned element really holds a rank at the reported
     * distance (Oclgrind: at the third rank only, with the device result) */
    if (test_small() && r != 2) continue;
    uint64_t err = 99;
    TEST_OK(clprim_nth_element_approx(ctx, n, type, clprim_buf(in), ranks[r], 0, &v, &err,
                                      clprim_buf(NULL)));
    uint64_t vkey = test_order_key(type, &v, 0), lo = n, hi = 0;
    for (size_t i = 0; i < n; ++i)
      if (test_order_key(type, ref, i) == vkey) {
        if (lo == n) lo = i;
        hi = i;
      }
    if (lo == n)
      fail_msg("%s %s: approximate value not in the input", clprim_type_name(type), what);
    uint64_t dist = ranks[r] < lo ? lo - ranks[r] : ranks[r] > hi ? ranks[r] - hi : 0;
    if (dist != err)
      fail_msg("%s %s n=%zu: approximate error %llu reported, %llu true", clprim_type_name(type),
               what, n, (unsigned long long)err, (unsigned long long)dist);
    if (n > 4096 && dist > n / 16)
      fail_msg("%s %s: approximate error %llu too large", what, clprim_type_name(type),
               (unsigned long long)dist);
    if (r == 2) {
      /* The device result alone (value NULL): the bits of the host answer
       * above, and the same reported error. */
      unsigned char poison[8], got[8];
      memset(poison, 0xA5, sizeof poison);
      test_write(ctx, result, es, poison);
      uint64_t err_dev = 99;
      TEST_OK(clprim_nth_element_approx(ctx, n, type, clprim_buf(in), ranks[r], 0, NULL, &err_dev,
                                        clprim_buf(result)));
      test_read(ctx, result, es, got);
      if (memcmp(got, v.bytes, es) != 0 || err_dev != err)
        fail_msg("%s %s n=%zu: approximate rank %llu: the result buffer alone differs from the "
                 "host answer",
                 clprim_type_name(type), what, n, (unsigned long long)ranks[r]);
    }
  }
  /* All ranks, plus repeats and the 9 deciles, in one call. */
  uint64_t q[17];
  clprim_value qv[17];
  for (int r = 0; r < 6; ++r)
    q[r] = ranks[r];
  for (int d = 1; d <= 9; ++d)
    q[5 + d] = clprim_quantile_rank(n, d / 10.0);
  q[15] = ranks[2], q[16] = ranks[0];
  TEST_OK(clprim_quantiles(ctx, n, type, clprim_buf(in), q, 8, 0, qv, clprim_buf(result)));
  unsigned char dev[8 * 8];
  test_read(ctx, result, 8 * es, dev);
  for (int r = 0; r < 8; ++r) {
    clprim_value d;
    memset(&d, 0, sizeof d);
    memcpy(&d, dev + r * es, es);
    if (!same(type, qv[r], ref, q[r]) || !same(type, d, ref, q[r]))
      fail_msg("%s %s n=%zu: quantile rank %llu wrong", clprim_type_name(type), what, n,
               (unsigned long long)q[r]);
  }
  if (test_small()) goto done;
  TEST_OK(clprim_quantiles(ctx, n, type, clprim_buf(in), q, 17, 0, qv, clprim_buf(NULL)));
  for (int r = 0; r < 17; ++r)
    if (!same(type, qv[r], ref, q[r]))
      fail_msg("%s %s n=%zu: quantile %d wrong", clprim_type_name(type), what, n, r);
  clprim_value med;
  TEST_OK(clprim_median(ctx, n, type, clprim_buf(in), 0, &med, clprim_buf(NULL)));
  assert_true(same(type, med, ref, (n - 1) / 2));

done:; /* C11: a label precedes a statement, not a declaration */
  /* The input is unchanged. */
  void *after = malloc(n * es);
  test_read(ctx, in, n * es, after);
  assert_memory_equal(after, data, n * es);
  free(after);
  free(ref);
  clReleaseMemObject(in);
  clReleaseMemObject(result);
}

/* Under CLPRIM_TEST_SMALL: which half of the types runs the all-equal
 * case (drawn from the seed, so that successive runs take the other). */
static unsigned small_phase;

static void test_type(clprim_type type) {
  const size_t big[] = {1, 2, 3, 7, 2047, 2048, 2049, 2051, 5000, 65536, 65536 + 3, 300001};
  const size_t small[] = {5, 2500};
  const size_t *sizes = test_small() ? small : big;
  const size_t count = test_small() ? 2 : sizeof big / sizeof big[0];
  const size_t es = clprim_type_size(type);
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx || (p == CLPRIM_PATH_AUTO && contexts.ctx[ctx->info.path])) continue;
    if (!clprim__type_supported(ctx, type)) {
      printf("%s: skipped (no fp64)\n", clprim_type_name(type));
      return;
    }
    for (size_t s = 0; s < count; ++s) {
      size_t n = sizes[s];
      void *data = malloc(n * es);
      for (unsigned d = 0; d < DIST_COUNT; ++d) {
        /* every distribution at a few sizes, uniform at all */
        if (d != DIST_UNIFORM && n != 2049 && n != 5000 && n != 300001 && n != 2500) continue;
        /* Oclgrind: special values at both sizes; all equal at the larger
         * for every other type, which the seed's phase picks. */
        if (test_small() && d != DIST_SPECIAL &&
            (d != DIST_EQUAL || n < 100 || ((unsigned)type + small_phase) % 2))
          continue;
        fill(type, data, n, d);
        check_case(ctx, type, data, n, dist_names[d]);
      }
      free(data);
    }
    /* Large and few-distinct, once per path. */
    if (!test_small()) {
      size_t n = ((size_t)1 << 20) + 5;
      void *data = malloc(n * es);
      fill(type, data, n, DIST_FEW16);
      check_case(ctx, type, data, n, "16 distinct, 2^20");
      fill(type, data, n, DIST_UNIFORM);
      check_case(ctx, type, data, n, "uniform, 2^20");
      free(data);
    }
  }
}

TEST_EVERY_TYPE

/* The largest (top set) or smallest element of type, as the selection calls
 * order them (NaN above +inf). */
static void put_extreme(clprim_type type, void *data, size_t i, int top) {
  switch (type) {
  case CLPRIM_INT32:
    ((int32_t *)data)[i] = top ? INT32_MAX : INT32_MIN;
    break;
  case CLPRIM_UINT32:
    ((uint32_t *)data)[i] = top ? UINT32_MAX : 0;
    break;
  case CLPRIM_INT64:
    ((int64_t *)data)[i] = top ? INT64_MAX : INT64_MIN;
    break;
  case CLPRIM_UINT64:
    ((uint64_t *)data)[i] = top ? UINT64_MAX : 0;
    break;
  case CLPRIM_FLOAT:
    ((float *)data)[i] = top ? NAN : -INFINITY;
    break;
  case CLPRIM_DOUBLE:
    ((double *)data)[i] = top ? NAN : -INFINITY;
    break;
  }
}

/* clprim_median of the m elements of a buffer from element 5 (20 or 40
 * bytes: below any device's sub-buffer alignment, so the call works on a
 * copy of the range), against the CPU
 * reference of that range alone. The 5 elements before the range are the
 * largest of the type and the 3 after it the smallest, so that reading from
 * the wrong place shifts the answer. The median also goes to element 3 of a
 * device buffer (unaligned too); the rest of it and the input stay as they
 * were. */
static void check_median_at(clprim_context *ctx, clprim_type type, size_t m, unsigned dist) {
  const size_t es = clprim_type_size(type), at = 5, tail = 3, total = at + m + tail;
  unsigned char *data = malloc(total * es);
  assert_non_null(data);
  fill(type, data + at * es, m, dist);
  for (size_t i = 0; i < at; ++i)
    put_extreme(type, data, i, 1);
  for (size_t i = at + m; i < total; ++i)
    put_extreme(type, data, i, 0);
  void *ref = sorted_copy(type, data + at * es, m);
  cl_mem in = test_buffer(ctx, total * es, data);
  unsigned char poison[8 * 8], got[8 * 8];
  memset(poison, 0xA5, sizeof poison);
  cl_mem result = test_buffer(ctx, 8 * es, poison);
  clprim_value med;
  TEST_OK(clprim_median(ctx, m, type, clprim_buf_at(in, at), 0, &med, clprim_buf_at(result, 3)));
  if (!same(type, med, ref, (m - 1) / 2))
    fail_msg("%s %s m=%zu: median of the range at element %zu wrong", clprim_type_name(type),
             dist_names[dist], m, at);
  test_read(ctx, result, 8 * es, got);
  if (memcmp(got + 3 * es, med.bytes, es) != 0)
    fail_msg("%s m=%zu: median at result element 3 differs from the host's", clprim_type_name(type),
             m);
  assert_memory_equal(got, poison, 3 * es);
  assert_memory_equal(got + 4 * es, poison, 4 * es);
  unsigned char *after = malloc(total * es);
  test_read(ctx, in, total * es, after);
  assert_memory_equal(after, data, total * es);
  free(after);
  free(ref);
  free(data);
  clReleaseMemObject(in);
  clReleaseMemObject(result);
}

static void test_median_at_offset(void **state) {
  (void)state;
  const size_t big[] = {1, 2, 2049, 5000, 70001};
  const size_t small[] = {1, 2500};
  const size_t *sizes = test_small() ? small : big;
  const size_t count = test_small() ? 2 : sizeof big / sizeof big[0];
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx || (p == CLPRIM_PATH_AUTO && contexts.ctx[ctx->info.path])) continue;
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!clprim__type_supported(ctx, type)) continue;
      for (size_t s = 0; s < count; ++s) {
        check_median_at(ctx, type, sizes[s], DIST_UNIFORM);
        if (sizes[s] > 1000) check_median_at(ctx, type, sizes[s], DIST_SPECIAL);
      }
    }
  }
}

/* NaN policy, and the key order against plain comparisons. */
static void test_nan(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t sizes[2] = {100, 5000};
  for (int s = 0; s < 2; ++s) {
    size_t n = sizes[s];
    float *x = malloc(n * 4);
    for (size_t i = 0; i < n; ++i)
      x[i] = (float)i;
    x[n / 3] = NAN;
    x[n / 2] = -NAN;
    x[7] = INFINITY;
    x[8] = -0.0f;
    cl_mem in = test_buffer(ctx, n * 4, x);
    cl_mem result = test_buffer(ctx, 4, NULL);
    float poison = 123.0f, got;
    test_write(ctx, result, 4, &poison);
    clprim_value v;
    v.f32 = 5.0f;
    TEST_OK(
        clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), n - 1, 0, &v, clprim_buf(NULL)));
    assert_true(isnan(v.f32));
    TEST_OK(
        clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), n - 3, 0, &v, clprim_buf(NULL)));
    assert_true(v.f32 == INFINITY);
    TEST_OK(clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 0, 0, &v, clprim_buf(NULL)));
    assert_true(v.f32 == 0.0f && !signbit(v.f32)); /* -0.0 and 0.0 equal, +0.0 returned */
    v.f32 = 5.0f;
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3, CLPRIM_NTH_REJECT_NAN,
                                   &v, clprim_buf(result)));
    assert_true(v.f32 == 5.0f);
    test_read(ctx, result, 4, &got);
    assert_true(got == poison);
    uint64_t err;
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_nth_element_approx(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3,
                                          CLPRIM_NTH_REJECT_NAN, &v, &err, clprim_buf(NULL)));
    /* Without NaN the flag changes nothing. */
    x[n / 3] = 1.5f, x[n / 2] = 2.5f;
    test_write(ctx, in, n * 4, x);
    TEST_OK(clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), n - 1, CLPRIM_NTH_REJECT_NAN,
                               &v, clprim_buf(NULL)));
    assert_true(v.f32 == INFINITY);
    clReleaseMemObject(in);
    clReleaseMemObject(result);
    free(x);
  }
}

static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t n = 3000;
  float *x = malloc(n * 4);
  for (size_t i = 0; i < n; ++i)
    x[i] = (float)(n - i);
  cl_mem in = test_buffer(ctx, n * 4, x), result = test_buffer(ctx, 64, NULL);
  unsigned char before[64], after[64];
  memset(before, 0xA5, sizeof before);
  test_write(ctx, result, 64, before);
  clprim_value v;
  v.u64 = 0x1234;
  uint64_t k = 5, bad_ranks[2] = {3, n}, many[17] = {0};
  TEST_STATUS(
      CLPRIM_ERROR_INVALID_ARGUMENT,
      clprim_nth_element(NULL, n, CLPRIM_FLOAT, clprim_buf(in), k, 0, &v, clprim_buf(result)));
  TEST_STATUS(
      CLPRIM_ERROR_INVALID_ARGUMENT,
      clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(NULL), k, 0, &v, clprim_buf(result)));
  TEST_STATUS(
      CLPRIM_ERROR_INVALID_ARGUMENT,
      clprim_nth_element(ctx, n, (clprim_type)9, clprim_buf(in), k, 0, &v, clprim_buf(result)));
  TEST_STATUS(
      CLPRIM_ERROR_INVALID_ARGUMENT,
      clprim_nth_element(ctx, 0, CLPRIM_FLOAT, clprim_buf(in), 0, 0, &v, clprim_buf(result)));
  TEST_STATUS(
      CLPRIM_ERROR_INVALID_ARGUMENT,
      clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), n, 0, &v, clprim_buf(result)));
  TEST_STATUS(
      CLPRIM_ERROR_INVALID_ARGUMENT,
      clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), k, 0x100, &v, clprim_buf(result)));
  TEST_STATUS(
      CLPRIM_ERROR_INVALID_ARGUMENT,
      clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), k, 0, NULL, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), k, 0, &v, clprim_buf(in)));
  TEST_STATUS(
      CLPRIM_ERROR_BUFFER_TOO_SMALL,
      clprim_nth_element(ctx, n + 1, CLPRIM_FLOAT, clprim_buf(in), k, 0, &v, clprim_buf(result)));
  {
    /* 8n bytes > 4n */
    int st =
        clprim_nth_element(ctx, n, CLPRIM_DOUBLE, clprim_buf(in), k, 0, &v, clprim_buf(result));
    assert_true(st == CLPRIM_ERROR_BUFFER_TOO_SMALL || st == CLPRIM_ERROR_UNSUPPORTED_TYPE);
  }
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE,
              clprim_nth_element(ctx, (size_t)1 << 32, CLPRIM_FLOAT, clprim_buf(in), k, 0, &v,
                                 clprim_buf(result)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_quantiles(ctx, n, CLPRIM_FLOAT, clprim_buf(in), bad_ranks, 2, 0, &v,
                               clprim_buf(result)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_quantiles(ctx, n, CLPRIM_FLOAT, clprim_buf(in),
                                                              NULL, 2, 0, &v, clprim_buf(result)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_quantiles(ctx, n, CLPRIM_FLOAT, clprim_buf(in), bad_ranks, 0, 0, &v,
                               clprim_buf(result)));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_quantiles(ctx, n, CLPRIM_FLOAT, clprim_buf(in),
                                                              many, 17, 0, &v, clprim_buf(result)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_nth_element_approx(ctx, n, CLPRIM_FLOAT, clprim_buf(in), n, 0, &v, NULL,
                                        clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_nth_element_approx(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 1, 0, NULL, NULL,
                                        clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_median(ctx, 0, CLPRIM_FLOAT, clprim_buf(in), 0, &v, clprim_buf(NULL)));
  assert_true(v.u64 == 0x1234);
  test_read(ctx, result, 64, after);
  assert_memory_equal(after, before, 64);

  /* A buffer of another OpenCL context. */
  cl_mem foreign = test_foreign_buffer(ctx, n * 4);
  TEST_STATUS(CL_INVALID_CONTEXT, clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(foreign), k,
                                                     0, &v, clprim_buf(NULL)));
  TEST_STATUS(CL_INVALID_CONTEXT, clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), k, 0, &v,
                                                     clprim_buf(foreign)));
  clReleaseMemObject(foreign);

  /* k = n - 1 on a reversed array; the quantile rank helper. */
  TEST_OK(clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), n - 1, 0, &v, clprim_buf(NULL)));
  assert_true(v.f32 == (float)n);
  assert_int_equal(clprim_quantile_rank(101, 0.5), 50);
  /* p50 is the median's rank, the lower median for even n; other ties to
   * the lower rank too, the rest to the nearest. */
  for (uint64_t n = 1; n <= 1000; ++n)
    assert_int_equal(clprim_quantile_rank(n, 0.5), (n - 1) / 2);
  assert_int_equal(clprim_quantile_rank(5, 0.125), 0);  /* 0.5 */
  assert_int_equal(clprim_quantile_rank(5, 0.375), 1);  /* 1.5 */
  assert_int_equal(clprim_quantile_rank(5, 0.376), 2);  /* 1.504 */
  assert_int_equal(clprim_quantile_rank(101, 0.994), 99); /* 99.4 */
  assert_int_equal(clprim_quantile_rank(101, 0.996), 100); /* 99.6 */
  assert_int_equal(clprim_quantile_rank(101, 1.5), 100);
  assert_int_equal(clprim_quantile_rank(101, -1), 0);
  assert_int_equal(clprim_quantile_rank(0, 0.5), 0);
  clReleaseMemObject(in);
  clReleaseMemObject(result);
  free(x);
}

/* The counting pass alone (nth_table, then nth_count), as the MPI library
 * runs it: splitters written by the host, each key's bucket against a
 * binary search on the CPU. Both bucket searches: the table (default) and
 * the tree alone (-DNTH_TABLE_BITS=0, which no call builds: kept for
 * comparisons, and checked here so that it stays right). Splitters: a
 * sample of the keys; the 255 smallest (nearly every key above every
 * splitter); all equal; 7 distinct values. */
static unsigned bucket_ref(uint64_t key, const uint64_t *s) {
  unsigned lo = 0, hi = 255; /* splitters below key */
  while (lo < hi) {
    const unsigned mid = (lo + hi) / 2;
    if (s[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 2 * lo + (lo < 255 && s[lo] == key);
}
static int cmp_key(const void *a, const void *b) {
  return cmp_u64(a, b);
}

static void count_pass(clprim_context *ctx, clprim_type type, const char *search) {
  const struct clprim_nth_config c = clprim__nth_config(ctx);
  const size_t es = clprim_type_size(type);
  char options[300];
  clprim__nth_options(type, &c, 0, options, 200);
  strcat(options, search);
  cl_kernel table, count;
  const struct clprim_kernel_request req[2] = {
      {"nth_element.cl", NULL, options, "nth_table", NULL, &table, CLPRIM__SELECTION_FILES, NULL},
      {"nth_element.cl", NULL, options, "nth_count", NULL, &count, CLPRIM__SELECTION_FILES, NULL}};
  TEST_OK(clprim__kernels(ctx, req, 2));
  static const size_t sizes[] = {1, 3, 7, 1000, 4099, 70001};
  const unsigned nsizes = test_small() ? 4 : sizeof sizes / sizeof *sizes; /* Oclgrind */
  cl_mem meta = test_buffer(ctx, NTH_META_WORDS * 8, NULL);
  unsigned char *meta_host = calloc(NTH_META_WORDS, 8);
  for (unsigned si = 0; si < nsizes; ++si)
    for (int dist = 0; dist < 4; ++dist) {
      const size_t n = sizes[si];
      unsigned char *data = malloc(n * es + 8);
      test_random(type, data, n, 1);
      uint64_t *keys = malloc(n * 8), *sorted = malloc(n * 8), s[255];
      for (size_t i = 0; i < n; ++i)
        keys[i] = sorted[i] = test_order_key(type, data, i);
      qsort(sorted, n, 8, cmp_key);
      for (unsigned j = 0; j < 255; ++j) {
        const size_t at = dist == 0   ? (size_t)(test_rand() % n)
                          : dist == 1 ? (j < n ? j : n - 1)
                          : dist == 2 ? n / 2
                                      : (size_t)(test_rand() % 7) * (n - 1) / 6;
        s[j] = sorted[at];
      }
      qsort(s, 255, 8, cmp_key);
      unsigned char tree[255 * 8];
      for (unsigned j = 0; j < 255; ++j)
        memcpy(tree + j * es, &s[j], es); /* little-endian hosts */
      size_t groups = (n / 4 + c.wg - 1) / c.wg;
      if (groups > c.max_groups) groups = c.max_groups;
      if (groups == 0) groups = 1;
      cl_mem in = test_buffer(ctx, n * es, data);
      cl_mem counts = test_buffer(ctx, groups * NTH_BUCKETS * 4, NULL);
      const cl_ulong zero = 0, n64 = n;
      const cl_uint no_subs = 0;
      uint32_t totals[NTH_BUCKETS], ref[NTH_BUCKETS];
      /* The whole meta buffer from the host (the MPI library writes the
       * tree alone, at its offset: Oclgrind 21.10 then takes the tree for
       * uninitialised, though PoCL counts right). */
      memcpy(meta_host + NTH_META_TREE_AT * 8, tree, 255 * es);
      test_write(ctx, meta, NTH_META_WORDS * 8, meta_host);
      TEST_OK(clprim__call_begin(ctx, "test"));
      clprim_status st = clprim__set_args(table, 1, sizeof meta, &meta);
      if (!st) st = clprim__enqueue(ctx, table, 1, c.wg);
      if (!st)
        st = clprim__set_args(count, 10, sizeof in, &in, sizeof zero, &zero, sizeof n64, &n64,
                              sizeof meta, &meta, sizeof zero, &zero, sizeof counts, &counts,
                              sizeof zero, &zero, sizeof meta, &meta, sizeof zero, &zero,
                              sizeof no_subs, &no_subs);
      if (!st) st = clprim__enqueue(ctx, count, groups, c.wg);
      if (!st) st = clprim__read(ctx, meta, NTH_META_TOTALS_AT * 8, sizeof totals, totals);
      TEST_OK(clprim__call_end(ctx, st));
      memset(ref, 0, sizeof ref);
      for (size_t i = 0; i < n; ++i)
        ++ref[bucket_ref(keys[i], s)];
      for (unsigned b = 0; b < NTH_BUCKETS - 1; ++b)
        if (totals[b] != ref[b])
          fail_msg("nth_count (%s%s), n %zu, splitters %d: bucket %u holds %u, expected %u",
                   clprim_type_name(type), search, n, dist, b, totals[b], ref[b]);
      clReleaseMemObject(in), clReleaseMemObject(counts);
      free(data), free(keys), free(sorted);
    }
  clReleaseMemObject(meta);
  free(meta_host);
}

static void test_count_pass(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  static const clprim_type types[] = {CLPRIM_INT32, CLPRIM_UINT64, CLPRIM_FLOAT, CLPRIM_DOUBLE};
  for (unsigned t = 0; t < sizeof types / sizeof *types; ++t) {
    if (!clprim__type_supported(ctx, types[t])) continue;
    if (test_small() && types[t] != CLPRIM_FLOAT) continue; /* Oclgrind */
    count_pass(ctx, types[t], "");
    /* the tree search for one type of each key width (its builds cost) */
    if (types[t] == CLPRIM_FLOAT || types[t] == CLPRIM_UINT64)
      count_pass(ctx, types[t], " -DNTH_TABLE_BITS=0");
  }
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, a flag of another family is refused with nothing written, and a
 * call that succeeds leaves "". */
static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  clprim_value v;
  const uint64_t ranks[2] = {3, 100};
  TEST_TEXT(ctx, INVALID,
            clprim_nth_element(ctx, 100, CLPRIM_INT32, A, 3, CLPRIM_SORT_DESCENDING, &v, O),
            "nth_element: flag 0x100 (CLPRIM_SORT_DESCENDING)");
  TEST_TEXT(ctx, INVALID, clprim_nth_element(ctx, 100, CLPRIM_INT32, A, 100, 0, &v, O),
            "nth_element: k (100) is not below n (100)");
  TEST_TEXT(ctx, INVALID, clprim_quantiles(ctx, 100, CLPRIM_INT32, A, ranks, 2, 0, NULL, O),
            "quantiles: ranks[1] (100) is not below n (100)");
  TEST_TEXT(ctx, INVALID, clprim_median(ctx, 100, CLPRIM_INT32, A, CLPRIM_TOPK_SMALLEST, &v, O),
            "median: flag 0x80 (CLPRIM_TOPK_SMALLEST)");
  TEST_TEXT(ctx, INVALID, clprim_nth_element_approx(ctx, 0, CLPRIM_INT32, A, 0, 0, &v, NULL, O),
            "nth_element_approx: n is 0");
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(int argc, char **argv) {
  test_init("test_nth_element");
  small_phase = (unsigned)(test_rand() % 2);
  test_with_cpu_path();
  /* --levels: sub-problems above 64 keys go through the levels that share
   * launches (sample_select.small_max=64), reached by small inputs. */
  if (argc > 1 && strcmp(argv[1], "--levels") == 0) test_tune("sample_select.small_max=64");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),     cmocka_unit_test(test_error_texts),
      cmocka_unit_test(test_nan),        cmocka_unit_test(test_int32),
      cmocka_unit_test(test_uint32),     cmocka_unit_test(test_int64),
      cmocka_unit_test(test_uint64),     cmocka_unit_test(test_float),
      cmocka_unit_test(test_double),     cmocka_unit_test(test_median_at_offset),
      cmocka_unit_test(test_count_pass),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
