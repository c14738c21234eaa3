/* test_topk: top-k largest and smallest against a CPU reference (qsort of
 * (key, index) pairs: ties to the lowest indices), for every type and path
 * the device runs: uniform, all equal, 16 distinct values and special
 * values (NaN largest, -0.0 equal to +0.0); k = 0, 1, 2, n/2, n-1, n;
 * unordered (input order) and sorted output, values and / or uint32 /
 * uint64 indices; outputs at an unaligned offset of their buffers, the
 * elements around them untouched; the input unchanged; errors write
 * nothing. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { DIST_UNIFORM, DIST_EQUAL, DIST_FEW16, DIST_SPECIAL, DIST_COUNT };
static const char *const dist_names[DIST_COUNT] = {"uniform", "all equal", "16 distinct",
                                                   "special values"};

static void fill(clprim_type type, void *data, size_t n, unsigned dist) {
  test_random(type, data, n, 1);
  if (dist == DIST_UNIFORM) return;
  const size_t es = clprim_type_size(type);
  for (size_t i = 0; i < n; ++i) {
    int64_t v = dist == DIST_EQUAL ? 3 : (int64_t)(test_rand() % 16) - 5;
    double d = (double)v;
    if (dist == DIST_SPECIAL) {
      unsigned r = (unsigned)(test_rand() % 8);
      d = r == 0   ? NAN
          : r == 1 ? INFINITY
          : r == 2 ? -INFINITY
          : r == 3 ? -0.0
          : r == 4 ? 0.0
          : r == 5 ? 1e-310
                   : d;
    }
    switch (type) {
    case CLPRIM_INT32:
      ((int32_t *)data)[i] = (int32_t)v;
      break;
    case CLPRIM_UINT32:
      ((uint32_t *)data)[i] = (uint32_t)(v + 5);
      break;
    case CLPRIM_INT64:
      ((int64_t *)data)[i] = v;
      break;
    case CLPRIM_UINT64:
      ((uint64_t *)data)[i] = (uint64_t)(v + 5);
      break;
    case CLPRIM_FLOAT:
      ((float *)data)[i] = (float)d;
      break;
    case CLPRIM_DOUBLE:
      ((double *)data)[i] = d;
      break;
    }
  }
  (void)es;
}

/* Top-k of data against the reference; the outputs (values and / or
 * indices, as want_values and want_indices say) go to element `at` of
 * buffers filled with a poison: the elements before them and 8 bytes after
 * the k written must keep it. The input stays as it was. */
static void check_topk_at(clprim_context *ctx, clprim_type type, const void *data, size_t n,
                          uint64_t k, unsigned flags, int want_values, int want_indices, size_t at,
                          const char *what) {
  const size_t es = clprim_type_size(type);
  const int i64 = (flags & CLPRIM_INDICES_64) != 0;
  const size_t is = i64 ? 8 : 4;
  struct test_keyed *ref = malloc(n * sizeof *ref);
  for (size_t i = 0; i < n; ++i)
    ref[i].key = test_order_key(type, data, i), ref[i].index = i;
  qsort(ref, n, sizeof *ref, (flags & CLPRIM_TOPK_SMALLEST) ? test_by_key_asc : test_by_key_desc);
  if (!(flags & CLPRIM_TOPK_SORTED)) qsort(ref, (size_t)k, sizeof *ref, test_by_index);

  cl_mem in = test_buffer(ctx, n * es, data);
  const size_t vbytes = (at + (size_t)k) * es + 8, ibytes = (at + (size_t)k) * 8 + 8;
  unsigned char *poison = malloc(ibytes), *got_v = malloc(vbytes), *got_i = malloc(ibytes);
  memset(poison, 0xA5, ibytes);
  cl_mem values = want_values ? test_buffer(ctx, vbytes, poison) : NULL;
  cl_mem indices = want_indices ? test_buffer(ctx, ibytes, poison) : NULL;
  TEST_OK(clprim_topk(ctx, n, type, clprim_buf(in), k, flags, clprim_buf_at(values, at),
                      clprim_buf_at(indices, at)));
  if (values) test_read(ctx, values, vbytes, got_v);
  if (indices) test_read(ctx, indices, ibytes, got_i);
  for (uint64_t j = 0; j < k; ++j) {
    uint64_t idx = ref[j].index;
    if (indices) {
      uint64_t g = i64 ? ((uint64_t *)got_i)[at + j] : ((uint32_t *)got_i)[at + j];
      if (g != idx)
        fail_msg("%s %s n=%zu k=%llu flags=%u at=%zu: index %llu is %llu, expected %llu",
                 clprim_type_name(type), what, n, (unsigned long long)k, flags, at,
                 (unsigned long long)j, (unsigned long long)g, (unsigned long long)idx);
    }
    if (values && memcmp(got_v + (at + j) * es, (const unsigned char *)data + idx * es, es) != 0)
      fail_msg("%s %s n=%zu k=%llu flags=%u at=%zu: value %llu wrong", clprim_type_name(type), what,
               n, (unsigned long long)k, flags, at, (unsigned long long)j);
  }
  /* nothing written before the range or past k */
  if (values && at) assert_memory_equal(got_v, poison, at * es);
  if (indices && at) assert_memory_equal(got_i, poison, at * is);
  if (values) assert_memory_equal(got_v + (at + k) * es, poison, 8);
  if (indices) assert_memory_equal(got_i + (at + k) * is, poison, 8);
  void *after = malloc(n * es);
  test_read(ctx, in, n * es, after);
  assert_memory_equal(after, data, n * es);
  free(after);
  free(ref);
  free(poison);
  free(got_v);
  free(got_i);
  clReleaseMemObject(in);
  if (values) clReleaseMemObject(values);
  if (indices) clReleaseMemObject(indices);
}

static void check_topk(clprim_context *ctx, clprim_type type, const void *data, size_t n,
                       uint64_t k, unsigned flags, int want_values, int want_indices,
                       const char *what) {
  check_topk_at(ctx, type, data, n, k, flags, want_values, want_indices, 0, what);
}

static void test_type(clprim_type type) {
  const size_t big[] = {1, 3, 2048, 2049, 4097, 5001, 100003};
  const size_t small[] = {7, 2500};
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
      const size_t n = sizes[s];
      void *data = malloc(n * es);
      for (unsigned d = 0; d < DIST_COUNT; ++d) {
        if (test_small() && d != DIST_SPECIAL) continue; /* Oclgrind: fewer calls */
        fill(type, data, n, d);
        const uint64_t ks[7] = {0, 1, 2, n / 2, n - 1, n, 1000};
        for (int j = 0; j < 7; ++j) {
          uint64_t k = ks[j];
          if (k > n || (test_small() && (j == 2 || j == 4 || j == 6))) continue;
          /* rotate through the output modes */
          unsigned m = (unsigned)(j + d + s);
          unsigned flags = ((m & 1) ? CLPRIM_TOPK_SMALLEST : 0) |
                           ((m & 2) ? CLPRIM_TOPK_SORTED : 0) |
                           ((m % 3 == 0) ? CLPRIM_INDICES_64 : 0);
          if (test_small() && (flags & CLPRIM_TOPK_SORTED) && k > 600) flags &= ~CLPRIM_TOPK_SORTED;
          check_topk(ctx, type, data, n, k, flags, m % 4 != 3, m % 4 != 2, dist_names[d]);
          check_topk(ctx, type, data, n, k, flags ^ CLPRIM_TOPK_SMALLEST, 1, 1, dist_names[d]);
        }
      }
      free(data);
    }
  }
}

/* k <= 2048 on n >= 32768 takes the candidate path (one counting level,
 * then work on the threshold's bucket and those beyond it); with 16
 * distinct values the ties need a selection on indices. */
static void test_candidates(void **state) {
  (void)state;
  const size_t n = test_small() ? 40000 : 300007;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx || (p == CLPRIM_PATH_AUTO && contexts.ctx[ctx->info.path])) continue;
    const clprim_type types[2] = {CLPRIM_FLOAT, CLPRIM_INT64};
    for (int t = 0; t < (test_small() ? 1 : 2); ++t) {
      void *data = malloc(n * 8);
      fill(types[t], data, n, DIST_SPECIAL);
      check_topk(ctx, types[t], data, n, 5, CLPRIM_TOPK_SORTED, 1, 1, "candidates");
      check_topk(ctx, types[t], data, n, 2048, CLPRIM_TOPK_SMALLEST, 1, 1, "candidates");
      if (!test_small()) {
        fill(types[t], data, n, DIST_UNIFORM);
        check_topk(ctx, types[t], data, n, 1000, 0, 1, 1, "candidates");
        check_topk(ctx, types[t], data, n, 1, CLPRIM_TOPK_SMALLEST | CLPRIM_TOPK_SORTED, 1, 1,
                   "candidates");
      }
      free(data);
    }
  }
}

/* Outputs at element 5 of their buffers (20 or 40 bytes: below any
 * device's sub-buffer alignment, so the call writes a copy that goes back
 * into the range): the k written land there, the elements around them are
 * untouched. Every type, both selection paths (n below and above 32768),
 * uint32 and uint64 indices, values alone or with indices. */
static void test_at_offset(void **state) {
  (void)state;
  const size_t big[] = {3, 2049, 5001, 40000};
  const size_t small[] = {7, 2500};
  const size_t *sizes = test_small() ? small : big;
  const size_t count = test_small() ? 2 : sizeof big / sizeof big[0];
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx || (p == CLPRIM_PATH_AUTO && contexts.ctx[ctx->info.path])) continue;
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!clprim__type_supported(ctx, type)) continue;
      const size_t es = clprim_type_size(type);
      for (size_t s = 0; s < count; ++s) {
        const size_t n = sizes[s];
        void *data = malloc(n * es);
        const unsigned d = s % 2 ? DIST_SPECIAL : DIST_UNIFORM;
        fill(type, data, n, d);
        const uint64_t ks[3] = {1, n / 2, n < 1000 ? n : 1000};
        for (unsigned j = 0; j < 3; ++j) {
          const unsigned m = (unsigned)(j + s + (unsigned)t);
          if (test_small() && m % 3 == 2) continue; /* Oclgrind: two k of the three, in turn */
          unsigned flags = ((m & 1) ? CLPRIM_TOPK_SMALLEST : 0) |
                           ((m & 2) ? CLPRIM_TOPK_SORTED : 0) |
                           ((m % 3 == 0) ? CLPRIM_INDICES_64 : 0);
          /* Oclgrind: as test_type, no long sorts */
          if (test_small() && (flags & CLPRIM_TOPK_SORTED) && ks[j] > 600)
            flags &= ~CLPRIM_TOPK_SORTED;
          check_topk_at(ctx, type, data, n, ks[j], flags, 1, j != 1, 5, dist_names[d]);
        }
        free(data);
      }
    }
  }
}

TEST_EVERY_TYPE

static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t n = 3000;
  float *x = malloc(n * 4);
  for (size_t i = 0; i < n; ++i)
    x[i] = (float)i;
  x[10] = NAN;
  cl_mem in = test_buffer(ctx, n * 4, x), values = test_buffer(ctx, n * 4, NULL),
         indices = test_buffer(ctx, n * 4, NULL), small = test_buffer(ctx, 16, NULL);
  unsigned char *before = malloc(n * 4), *after = malloc(n * 4);
  memset(before, 0x5A, n * 4);
  test_write(ctx, values, n * 4, before);
  test_write(ctx, indices, n * 4, before);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_topk(NULL, n, CLPRIM_FLOAT, clprim_buf(in), 5, 0, clprim_buf(values),
                          clprim_buf(indices)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(NULL), 5, 0, clprim_buf(values),
                          clprim_buf(indices)));
  TEST_OK(clprim_topk(ctx, 0, CLPRIM_FLOAT, clprim_buf(in), 0, 0, clprim_buf(values),
                      clprim_buf(indices))); /* n = 0, k = 0: empty */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_topk(ctx, 0, CLPRIM_FLOAT, clprim_buf(in), 1, 0, clprim_buf(values),
                          clprim_buf(indices))); /* k > n */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), n + 1, 0, clprim_buf(values),
                          clprim_buf(indices)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 5, 0x40000000u, clprim_buf(values),
                          clprim_buf(indices)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 5, 0,
                                                         clprim_buf(NULL), clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 5, 0,
                                                         clprim_buf(in), clprim_buf(indices)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 5, 0,
                                                         clprim_buf(values), clprim_buf(values)));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 5, 0,
                                                         clprim_buf(small), clprim_buf(indices)));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3, CLPRIM_INDICES_64,
                          clprim_buf(values), clprim_buf(small)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 5, CLPRIM_NTH_REJECT_NAN,
                          clprim_buf(values), clprim_buf(indices)));
  TEST_OK(clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 0, 0, clprim_buf(values),
                      clprim_buf(indices))); /* k = 0: nothing */
  test_read(ctx, values, n * 4, after);
  assert_memory_equal(after, before, n * 4);
  test_read(ctx, indices, n * 4, after);
  assert_memory_equal(after, before, n * 4);
  /* NaN is the largest. */
  uint32_t top;
  TEST_OK(clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 1, 0, clprim_buf(NULL),
                      clprim_buf(indices)));
  test_read(ctx, indices, 4, &top);
  assert_int_equal(top, 10);
  /* A NaN among more elements than nth_small's size: rejected by the
   * candidate path's counting pass (a build that counts NaNs), nothing
   * written; without the NaN the same call succeeds. */
  const size_t big_n = 70000;
  float *y = malloc(big_n * 4);
  for (size_t i = 0; i < big_n; ++i)
    y[i] = (float)(i % 1000);
  y[big_n / 3] = NAN;
  cl_mem big = test_buffer(ctx, big_n * 4, y);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_topk(ctx, big_n, CLPRIM_FLOAT, clprim_buf(big), 5, CLPRIM_NTH_REJECT_NAN,
                          clprim_buf(values), clprim_buf(indices)));
  test_read(ctx, values, n * 4, after);
  assert_memory_equal(after, before, n * 4);
  y[big_n / 3] = 1.5f;
  test_write(ctx, big, big_n * 4, y);
  TEST_OK(clprim_topk(ctx, big_n, CLPRIM_FLOAT, clprim_buf(big), 5, CLPRIM_NTH_REJECT_NAN,
                      clprim_buf(values), clprim_buf(NULL)));
  float got[5];
  test_read(ctx, values, sizeof got, got);
  for (int j = 0; j < 5; ++j)
    assert_true(got[j] == 999.0f);
  clReleaseMemObject(big);
  free(y);
  cl_mem all[4] = {in, values, indices, small};
  for (int j = 0; j < 4; ++j)
    clReleaseMemObject(all[j]);
  free(x);
  free(before);
  free(after);
}

/* One long-lived context, as an application keeps it: the other families
 * grow their scratch buffers over many sizes first, then top-k runs on
 * duplicate-heavy data. Top-k once took a buffer from a scratch slot that a
 * later step of the same call grew, and used the old handle: a segmentation
 * fault once more than 64 outgrown buffers had piled up (int32, n = 40000,
 * two distinct values, k = 1, local path, PoCL 3.1). */
static void test_long_lived_context(void **state) {
  (void)state;
  clprim_options o;
  clprim_options_init(&o);
  o.path = CLPRIM_PATH_LOCAL;
  clprim_context *ctx;
  TEST_OK(clprim_context_create(&ctx, &o));
  const unsigned top_log = test_small() ? 12 : 20;
  const size_t topk_n = 40000; /* top-k by candidates (n >= TOPK_SMALL_MIN_N) */
  const size_t most = ((size_t)1 << top_log) + 1 > topk_n ? ((size_t)1 << top_log) + 1 : topk_n;
  int32_t *host = malloc(most * sizeof *host);
  assert_non_null(host);
  for (size_t i = 0; i < most; ++i) host[i] = (int32_t)(test_rand() % 1000);
  cl_mem in = test_buffer(ctx, most * 8, NULL), out = test_buffer(ctx, most * 8, NULL);
  cl_mem out2 = test_buffer(ctx, most * 8, NULL), small = test_buffer(ctx, 16, NULL);
  cl_mem values = test_buffer(ctx, most * 8, NULL);
  test_write(ctx, in, most * sizeof *host, host);
  test_write(ctx, values, most * sizeof *host, host);
  for (unsigned lg = 4; lg <= top_log; ++lg) {
    const size_t n = ((size_t)1 << lg) + 1;
    clprim_value v;
    uint64_t count;
    TEST_OK(clprim_scan_exclusive(ctx, n, CLPRIM_INT32, clprim_buf(in), 0, clprim_buf(out)));
    TEST_OK(clprim_reduce_sum(ctx, n, CLPRIM_INT32, clprim_buf(in), 0, &v, clprim_buf(NULL)));
    TEST_OK(clprim_argmax(ctx, n, CLPRIM_INT32, clprim_buf(in), 0, &v, &count, clprim_buf(small)));
    clprim_predicate pred;
    memset(&pred, 0, sizeof pred);
    pred.op = CLPRIM_PRED_GT, pred.a.i32 = 500;
    TEST_OK(clprim_select(ctx, n, CLPRIM_INT32, clprim_buf(in), &pred, 0, clprim_buf(out),
                          clprim_buf(NULL), &count, clprim_buf(NULL)));
    TEST_OK(clprim_reduce_by_key(ctx, n, CLPRIM_INT32, clprim_buf(in), CLPRIM_INT32,
                                 clprim_buf(values), 0, clprim_buf(out), clprim_buf(out2), &count,
                                 clprim_buf(NULL)));
    TEST_OK(
        clprim_nth_element(ctx, n, CLPRIM_INT32, clprim_buf(in), n / 2, 0, &v, clprim_buf(NULL)));
    clprim_value lo, hi;
    memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
    hi.i32 = 1000;
    TEST_OK(clprim_histogram_even(ctx, n, CLPRIM_INT32, clprim_buf(in), lo, hi, 256,
                                  clprim_buf(out), NULL, clprim_buf(NULL)));
  }
  /* Two distinct values; the top 1 is the first 7. */
  const size_t n = topk_n;
  for (size_t i = 0; i < n; ++i) host[i] = (test_rand() & 1) ? 7 : 3;
  host[n - 1] = 7;
  size_t first = 0;
  while (host[first] != 7) ++first;
  test_write(ctx, in, n * sizeof *host, host);
  TEST_OK(
      clprim_topk(ctx, n, CLPRIM_INT32, clprim_buf(in), 1, 0, clprim_buf(out), clprim_buf(out2)));
  int32_t value;
  uint32_t index;
  test_read(ctx, out, 4, &value);
  test_read(ctx, out2, 4, &index);
  assert_int_equal(value, 7);
  assert_int_equal(index, first);
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  clReleaseMemObject(out2);
  clReleaseMemObject(small);
  clReleaseMemObject(values);
  free(host);
  clprim_context_free(ctx);
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, a flag of another family is refused with nothing written, and a
 * call that succeeds leaves "". */
static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  TEST_TEXT(ctx, INVALID, clprim_topk(ctx, 100, CLPRIM_INT32, A, 5000, 0, O, O2),
            "topk: k (5000) is larger than n (100)");
  TEST_TEXT(ctx, INVALID, clprim_topk(ctx, 100, CLPRIM_INT32, A, 5, CLPRIM_REDUCE_ABS, O, O2),
            "topk: flag 0x1 (CLPRIM_REDUCE_ABS)");
  TEST_TEXT(ctx, INVALID, clprim_topk(ctx, 100, CLPRIM_INT32, A, 5, CLPRIM_SORT_DESCENDING, O, O2),
            "CLPRIM_SORT_DESCENDING");
  TEST_TEXT(ctx, INVALID, clprim_topk(ctx, 100, CLPRIM_INT32, A, 5, 0, NONE, NONE), "no output");
  TEST_TEXT(ctx, SMALL,
            clprim_topk(ctx, 100, CLPRIM_INT32, A, 5, CLPRIM_INDICES_64, O, clprim_buf_at(o2, 510)),
            "indices holds 2 elements from offset 510, the call needs 5");
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(int argc, char **argv) {
  test_init("test_topk");
  test_with_cpu_path();
  /* --room: a one-pass candidate gather with room for 16, so that its
   * overflow path (the counted pair of passes) runs (topk.room=16). */
  if (argc > 1 && strcmp(argv[1], "--room") == 0) test_tune("topk.room=16");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),     cmocka_unit_test(test_error_texts),
      cmocka_unit_test(test_candidates), cmocka_unit_test(test_long_lived_context),
      cmocka_unit_test(test_int32),      cmocka_unit_test(test_uint32),
      cmocka_unit_test(test_int64),      cmocka_unit_test(test_uint64),
      cmocka_unit_test(test_float),      cmocka_unit_test(test_double),
      cmocka_unit_test(test_at_offset),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
