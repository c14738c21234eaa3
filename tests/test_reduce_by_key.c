/* test_reduce_by_key: reduce-by-key over runs of equal consecutive keys
 * against a CPU reference, for every key and value type and path the device
 * runs: one run, all keys distinct, random run lengths (short, around the
 * tile size, longer than several tiles), sizes around the tile boundaries,
 * the count on the host and in a device buffer, and every error case with
 * nothing written. Integer sums exact, float sums within m u sum|x|. */
#include "common.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ctx_path(clprim_context *ctx) {
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  return clprim_path_name(info.path);
}

static int is_float(clprim_type t) {
  return t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE;
}

static uint64_t get_key(clprim_type t, const void *p, size_t i) {
  return clprim_type_size(t) == 4 ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
}
/* Key k as an element of t: integers as they are; float and double as the
 * number k mod 2^20 (exact, normal), or NaN for k = KEY_NAN. */
#define KEY_NAN 7777u
static void set_key(clprim_type t, void *p, size_t i, uint64_t k) {
  if (t == CLPRIM_FLOAT)
    ((float *)p)[i] = k == KEY_NAN ? NAN : (float)(k % (1u << 20));
  else if (t == CLPRIM_DOUBLE)
    ((double *)p)[i] = k == KEY_NAN ? NAN : (double)(k % (1u << 20));
  else if (clprim_type_size(t) == 4)
    ((uint32_t *)p)[i] = (uint32_t)k;
  else
    ((uint64_t *)p)[i] = k;
}
/* Whether keys i and j are in one run: == in the type (NaN never). */
static int same_key(clprim_type t, const void *p, size_t i, size_t j) {
  if (t == CLPRIM_FLOAT) return ((const float *)p)[i] == ((const float *)p)[j];
  if (t == CLPRIM_DOUBLE) return ((const double *)p)[i] == ((const double *)p)[j];
  return get_key(t, p, i) == get_key(t, p, j);
}

enum runs { ONE_RUN, ALL_DISTINCT, SHORT_RUNS, TILE_RUNS, LONG_RUNS, RUN_KINDS };
static const char *const runs_name[RUN_KINDS] = {"one run", "all distinct", "short runs",
                                                 "tile-sized runs", "long runs"};

/* Keys with runs of random lengths (mean `mean`); a new run gets a random
 * key different from the last one (so keys are not sorted). */
static void make_keys(clprim_type kt, void *keys, size_t n, enum runs kind) {
  const double mean[RUN_KINDS] = {0, 1, 3, 700, 5000};
  uint64_t key = test_rand();
  for (size_t i = 0; i < n; ++i) {
    int new_run =
        kind == ALL_DISTINCT || (kind != ONE_RUN && i > 0 && test_uniform() * mean[kind] < 1.0);
    if (new_run) {
      uint64_t next;
      do /* short runs of float keys: some NaN keys, each a run of its own */
        next = is_float(kt) && kind == SHORT_RUNS && test_rand() % 4 == 0
                   ? KEY_NAN
                   : test_rand() % (kind == ALL_DISTINCT ? UINT64_MAX : 5);
      while (next == key && next != KEY_NAN);
      key = kind == ALL_DISTINCT ? (uint64_t)i * 2654435761u : next;
    }
    set_key(kt, keys, i, key);
  }
}

static void check(clprim_context *ctx, clprim_type kt, clprim_type vt, size_t n, enum runs kind) {
  const size_t ks = clprim_type_size(kt), vs = clprim_type_size(vt), m = n ? n : 1;
  unsigned char *keys = malloc(m * ks), *values = malloc(m * vs);
  unsigned char *got_keys = malloc(m * ks), *got_sums = malloc(m * vs);
  uint64_t *want_keys = malloc(m * 8), *want_u = calloc(m, 8), *lengths = calloc(m, 8);
  double *want_f = calloc(m, sizeof(double)), *abs_f = calloc(m, sizeof(double));
  assert_true(keys && values && got_keys && got_sums && want_keys && want_u && lengths && want_f &&
              abs_f);
  make_keys(kt, keys, n, kind);
  test_random(vt, values, n, 1);
  size_t segments = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i == 0 || !same_key(kt, keys, i, i - 1))
      want_keys[segments++] = get_key(kt, keys, i);
    size_t s = segments - 1;
    lengths[s]++;
    if (is_float(vt)) {
      double x = test_value_f(vt, values, i);
      want_f[s] += x, abs_f[s] += fabs(x);
    } else {
      want_u[s] += test_value_u(vt, values, i);
    }
  }
  cl_mem dkeys = test_buffer(ctx, m * ks, keys), dvalues = test_buffer(ctx, m * vs, values);
  cl_mem dunique = test_buffer(ctx, m * ks, NULL), dsums = test_buffer(ctx, m * vs, NULL);
  cl_mem dcount = test_buffer(ctx, 8, NULL);
  uint64_t count = 0, count_dev = 0;
  const int via_buffer = n % 2 == 0;
  TEST_OK(clprim_reduce_by_key(ctx, n, kt, clprim_buf(dkeys), vt, clprim_buf(dvalues),
                               clprim_buf(dunique), clprim_buf(dsums), via_buffer ? NULL : &count,
                               clprim_buf(via_buffer ? dcount : NULL)));
  if (via_buffer) test_read(ctx, dcount, 8, &count_dev), count = count_dev;
  char what[200];
  snprintf(what, sizeof what, "reduce_by_key %s keys, %s values, n=%zu, %s, path %s",
           clprim_type_name(kt), clprim_type_name(vt), n, runs_name[kind], ctx_path(ctx));
  if (count != segments)
    fail_msg("%s: count %llu, expected %zu", what, (unsigned long long)count, segments);
  test_read(ctx, dunique, segments * ks, got_keys);
  test_read(ctx, dsums, segments * vs, got_sums);
  const double u = vt == CLPRIM_FLOAT ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
  for (size_t s = 0; s < segments; ++s) {
    if (get_key(kt, got_keys, s) != (ks == 4 ? (uint32_t)want_keys[s] : want_keys[s]))
      fail_msg("%s: key %zu wrong", what, s);
    if (is_float(vt)) {
      double g = test_value_f(vt, got_sums, s);
      double bound = (double)lengths[s] * u * abs_f[s] + (vt == CLPRIM_FLOAT ? FLT_MIN : DBL_MIN);
      if (!(fabs(g - want_f[s]) <= bound))
        fail_msg("%s: sum %zu (length %llu) = %.17g, expected %.17g", what, s,
                 (unsigned long long)lengths[s], g, want_f[s]);
    } else {
      uint64_t g = test_value_u(vt, got_sums, s), w = want_u[s];
      if (vs == 4) g = (uint32_t)g, w = (uint32_t)w;
      if (g != w)
        fail_msg("%s: sum %zu (length %llu) wrong", what, s, (unsigned long long)lengths[s]);
    }
  }
  clReleaseMemObject(dkeys), clReleaseMemObject(dvalues), clReleaseMemObject(dunique);
  clReleaseMemObject(dsums), clReleaseMemObject(dcount);
  free(keys), free(values), free(got_keys), free(got_sums), free(want_keys), free(want_u);
  free(lengths), free(want_f), free(abs_f);
}

static void test_types(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    /* Tiles: 8 elements per work-item, 256 (GPU) or 64 work-items. */
    const size_t tile = (ctx->info.device_type & CL_DEVICE_TYPE_GPU ? 256 : 64) * 8;
    size_t sizes[16], ns = 0;
    const size_t fixed[] = {1, 2, 7, 8, 9};
    for (size_t i = 0; i < 5; ++i)
      sizes[ns++] = fixed[i];
    sizes[ns++] = tile - 1, sizes[ns++] = tile, sizes[ns++] = tile + 1;
    sizes[ns++] = 3 * tile + 5;
    if (!test_small()) sizes[ns++] = 100003, sizes[ns++] = ((size_t)1 << 20) + 3;
    for (int kt = 0; kt < CLPRIM_TYPE_COUNT; ++kt)
      for (int vt = 0; vt < CLPRIM_TYPE_COUNT; ++vt) {
        if (!clprim__type_supported(ctx, (clprim_type)vt) ||
            !clprim__type_supported(ctx, (clprim_type)kt))
          continue;
        /* int32 and float keys with every value type; the other key types
         * with two (one of 4 bytes, one of 8, turning with the key type:
         * each pair is a program to build). */
        static const int v4[3] = {CLPRIM_INT32, CLPRIM_UINT32, CLPRIM_FLOAT},
                         v8[3] = {CLPRIM_INT64, CLPRIM_UINT64, CLPRIM_DOUBLE};
        if (kt != CLPRIM_INT32 && kt != CLPRIM_FLOAT && vt != v4[kt % 3] && vt != v8[kt % 3])
          continue;
        for (size_t s = 0; s < ns; ++s)
          for (int r = 0; r < RUN_KINDS; ++r) {
            /* Every run kind for int32 keys and float / double values; one
             * kind per size for the other combinations. */
            int full = kt == 0 && (vt == CLPRIM_FLOAT || vt == CLPRIM_DOUBLE || vt == CLPRIM_INT32);
            if (!full && (size_t)r != (s + (size_t)vt + (size_t)kt) % RUN_KINDS) continue;
            if (test_small() && (s + (size_t)r) % 2) continue;
            check(ctx, (clprim_type)kt, (clprim_type)vt, sizes[s], (enum runs)r);
          }
      }
  }
}

static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t n = 32;
  uint32_t keys[32], poison[32];
  for (size_t i = 0; i < n; ++i)
    keys[i] = (uint32_t)(i / 3), poison[i] = 0xC0FFEEu;
  cl_mem dkeys = test_buffer(ctx, sizeof keys, keys), dvalues = test_buffer(ctx, sizeof keys, keys);
  cl_mem unique = test_buffer(ctx, sizeof poison, poison),
         sums = test_buffer(ctx, sizeof poison, poison);
  cl_mem cbuf = test_buffer(ctx, 8, poison), small = test_buffer(ctx, 7, NULL);
  uint64_t count = 99;
  const clprim_type i32 = CLPRIM_INT32;
  const clprim_buffer K = clprim_buf(dkeys), V = clprim_buf(dvalues), U = clprim_buf(unique),
                      S = clprim_buf(sums), C = clprim_buf(cbuf), none = clprim_buf(NULL);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(NULL, n, i32, K, i32, V, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, (clprim_type)7, K, i32, V, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, (clprim_type)-2, V, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, none, i32, V, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, i32, none, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, i32, V, none, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, i32, V, U, none, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, i32, V, U, U, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, i32, V, K, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_reduce_by_key(ctx, n + 1, i32, K, i32, V, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_reduce_by_key(ctx, n, i32, K, CLPRIM_INT64, V, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_reduce_by_key(ctx, n, i32, K, i32, V, U, S, &count, clprim_buf(small)));
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE,
              clprim_reduce_by_key(ctx, SIZE_MAX / 4, CLPRIM_INT64, K, i32, V, U, S, &count, C));
  int had_fp64 = ctx->info.has_fp64;
  ctx->info.has_fp64 = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE,
              clprim_reduce_by_key(ctx, n / 2, i32, K, CLPRIM_DOUBLE, V, U, S, &count, C));
  ctx->info.has_fp64 = had_fp64;
  uint32_t after[32];
  test_read(ctx, unique, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, sums, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, cbuf, 8, after);
  assert_memory_equal(after, poison, 8);
  assert_int_equal(count, 99);
  /* n = 0: count 0. */
  TEST_OK(clprim_reduce_by_key(ctx, 0, i32, K, i32, V, U, S, &count, C));
  assert_int_equal(count, 0);
  uint64_t c64 = 5;
  test_read(ctx, cbuf, 8, &c64);
  assert_int_equal(c64, 0);
  clReleaseMemObject(dkeys), clReleaseMemObject(dvalues), clReleaseMemObject(unique);
  clReleaseMemObject(sums), clReleaseMemObject(cbuf), clReleaseMemObject(small);
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, a flag of another family is refused with nothing written, and a
 * call that succeeds leaves "". */
static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  uint64_t invalid, count;
  TEST_TEXT(ctx, INVALID,
            clprim_reduce_by_key_dense(ctx, 100, CLPRIM_INT32, A, CLPRIM_INT32, B, 16,
                                       CLPRIM_INDICES_64, O, NONE, &invalid, NONE),
            "reduce_by_key_dense: flag 0x8 (CLPRIM_INDICES_64)");
  TEST_TEXT(ctx, INVALID,
            clprim_reduce_by_key_dense(ctx, 100, CLPRIM_INT32, A, CLPRIM_INT32, B, 16, 0, NONE, O2,
                                       &invalid, NONE),
            "sums is required");
  TEST_TEXT(
      ctx, INVALID,
      clprim_reduce_by_key(ctx, 100, CLPRIM_INT32, A, (clprim_type)-3, B, O, O2, &count, NONE),
      "reduce_by_key: value_type (-3)");
  TEST_TEXT(ctx, SMALL,
            clprim_reduce_by_key(ctx, 100, CLPRIM_INT32, A, CLPRIM_INT32, B, O,
                                 clprim_buf_at(o2, 1000), &count, NONE),
            "sums holds 24 elements from offset 1000");
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(void) {
  test_init("test_reduce_by_key");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_errors),
                                     cmocka_unit_test(test_error_texts),
                                     cmocka_unit_test(test_types)};
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
