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
  TEST_OK(clprim_reduce_by_key(ctx, n, kt, clprim_buf(dkeys), vt, clprim_buf(dvalues), 0,
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
              clprim_reduce_by_key(NULL, n, i32, K, i32, V, 0, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, (clprim_type)7, K, i32, V, 0, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, (clprim_type)-2, V, 0, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, none, i32, V, 0, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, i32, none, 0, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, i32, V, 0, none, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, i32, V, 0, U, none, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, i32, V, 0, U, U, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_by_key(ctx, n, i32, K, i32, V, 0, K, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_reduce_by_key(ctx, n + 1, i32, K, i32, V, 0, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_reduce_by_key(ctx, n, i32, K, CLPRIM_INT64, V, 0, U, S, &count, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_reduce_by_key(ctx, n, i32, K, i32, V, 0, U, S, &count, clprim_buf(small)));
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE,
              clprim_reduce_by_key(ctx, SIZE_MAX / 4, CLPRIM_INT64, K, i32, V, 0, U, S, &count, C));
  int had_fp64 = ctx->info.has_fp64;
  ctx->info.has_fp64 = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE,
              clprim_reduce_by_key(ctx, n / 2, i32, K, CLPRIM_DOUBLE, V, 0, U, S, &count, C));
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
  TEST_OK(clprim_reduce_by_key(ctx, 0, i32, K, i32, V, 0, U, S, &count, C));
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
      clprim_reduce_by_key(ctx, 100, CLPRIM_INT32, A, (clprim_type)-3, B, 0, O, O2, &count, NONE),
      "reduce_by_key: value_type (-3)");
  TEST_TEXT(ctx, SMALL,
            clprim_reduce_by_key(ctx, 100, CLPRIM_INT32, A, CLPRIM_INT32, B, 0, O,
                                 clprim_buf_at(o2, 1000), &count, NONE),
            "sums holds 24 elements from offset 1000");
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

/* ------------------------------------------------ CLPRIM_EXACT over runs */

/* How the exact test's runs are laid out. */
enum exact_runs { EX_ONE_RUN, EX_SINGLES, EX_SHORT, EX_AROUND_WG, EX_LONG, EX_RUN_KINDS };
static const char *const exact_runs_name[EX_RUN_KINDS] = {
    "one run", "runs of 1", "short runs", "runs around the work-group size", "long runs"};

/* Keys of kt in runs of the kind's lengths (wg: the work-group size). A
 * run's key differs from the last; float keys: some runs of NaN keys (each
 * NaN a run of its own) and some of 0 keys written as -0 or +0 at random
 * (one run). The reference finds the runs with == (same_key), not from
 * these lengths. */
static void make_exact_keys(clprim_type kt, void *keys, size_t n, enum exact_runs kind, size_t wg) {
  const size_t around[5] = {wg - 1, wg, wg + 1, 2 * wg + 1, 1};
  uint64_t key = 3;
  for (size_t i = 0; i < n;) {
    size_t len = kind == EX_ONE_RUN     ? n
                 : kind == EX_SINGLES   ? 1
                 : kind == EX_SHORT     ? 1 + test_rand() % 5
                 : kind == EX_AROUND_WG ? around[test_rand() % 5]
                                        : 1 + test_rand() % 10000;
    uint64_t next;
    do
      next = is_float(kt) && kind == EX_SHORT && test_rand() % 6 == 0 ? KEY_NAN
             : kind == EX_SINGLES                                     ? (uint64_t)i * 2654435761u
                                                                      : test_rand() % 6;
    while (next == key && next != KEY_NAN);
    key = next;
    for (size_t j = 0; j < len && i < n; ++j, ++i) {
      set_key(kt, keys, i, key);
      if (key == 0 && is_float(kt) && test_rand() % 2) { /* -0 == +0: the same run */
        if (kt == CLPRIM_FLOAT)
          ((float *)keys)[i] = -0.0f;
        else
          ((double *)keys)[i] = -0.0;
      }
    }
  }
}

/* Values of the exact test: the standard kinds (common.c), then values
 * whose sums often fall on ties (1, 1 + 2 ulp and halves of an ulp),
 * infinities and NaN among uniform values, -0 only, and -0 with some +0. */
enum { EXV_TIES = TEST_EX_KINDS, EXV_SPECIAL, EXV_NEG_ZERO, EXV_ZEROS, EXV_KINDS };
static const char *exact_values_name(int k) {
  static const char *const more[] = {"ties", "inf and NaN", "-0 only", "-0 and +0"};
  return k < TEST_EX_KINDS ? test_exact_kind_name[k] : more[k - TEST_EX_KINDS];
}

static void make_exact_values(clprim_type vt, void *values, size_t n, int kind) {
  if (kind < TEST_EX_KINDS) {
    test_exact_input(vt, values, n, (enum test_exact_kind)kind);
    return;
  }
  const double ulp = vt == CLPRIM_FLOAT ? 0x1p-23 : 0x1p-52;
  for (size_t i = 0; i < n; ++i) {
    double x = 0;
    const unsigned r = (unsigned)(test_rand() % 8);
    switch (kind) {
    case EXV_TIES: {
      const double pick[8] = {1.0, 1.0 + 2 * ulp, ulp / 2, ulp / 2, -ulp / 2, 1.5 * ulp, 1.0, 2.0};
      x = pick[r];
      break;
    }
    case EXV_SPECIAL:
      x = test_rand() % 40 == 0 ? (r < 3   ? INFINITY
                                   : r < 6 ? -INFINITY
                                           : NAN)
                                : 2 * test_uniform() - 1;
      break;
    case EXV_NEG_ZERO:
      x = -0.0;
      break;
    default:
      x = r == 0 ? 0.0 : -0.0;
      break;
    }
    if (vt == CLPRIM_FLOAT)
      ((float *)values)[i] = (float)x;
    else
      ((double *)values)[i] = x;
  }
}

/* One exact reduce-by-key against the references: keys and count as the
 * runs are (==), each run's sum bit for bit as test_exact_reference rounds it.
 * where: the count to the host (0), to a device buffer (1), or both (2). */
static void check_exact(clprim_context *ctx, clprim_type kt, clprim_type vt, size_t n,
                        enum exact_runs runs, int values_kind, int where, const char *how) {
  const size_t ks = clprim_type_size(kt), vs = clprim_type_size(vt), m = n ? n : 1;
  const size_t wg = ctx->info.path == CLPRIM_PATH_CPU ? 1 : clprim__launch(ctx).wg;
  unsigned char *keys = malloc(m * ks), *values = malloc(m * vs);
  unsigned char *got_keys = malloc(m * ks), *got_sums = malloc(m * vs);
  size_t *heads = malloc((m + 1) * sizeof *heads);
  assert_true(keys && values && got_keys && got_sums && heads);
  make_exact_keys(kt, keys, n, runs, wg < 2 ? 64 : wg);
  make_exact_values(vt, values, n, values_kind);
  size_t segments = 0;
  for (size_t i = 0; i < n; ++i)
    if (i == 0 || !same_key(kt, keys, i, i - 1)) heads[segments++] = i;
  heads[segments] = n;
  cl_mem dkeys = test_buffer(ctx, m * ks, keys), dvalues = test_buffer(ctx, m * vs, values);
  cl_mem dunique = test_pattern(ctx, m * ks), dsums = test_pattern(ctx, m * vs);
  cl_mem dcount = test_pattern(ctx, 8);
  unsigned char *pattern_keys = malloc(m * ks), *pattern_sums = malloc(m * vs);
  assert_true(pattern_keys && pattern_sums);
  test_read(ctx, dunique, m * ks, pattern_keys);
  test_read(ctx, dsums, m * vs, pattern_sums);
  uint64_t count = 12345, count_dev = 0;
  TEST_OK(clprim_reduce_by_key(ctx, n, kt, clprim_buf(dkeys), vt, clprim_buf(dvalues), CLPRIM_EXACT,
                               clprim_buf(dunique), clprim_buf(dsums), where != 1 ? &count : NULL,
                               clprim_buf(where ? dcount : NULL)));
  if (where) test_read(ctx, dcount, 8, &count_dev);
  if (where == 1) count = count_dev;
  char what[256];
  snprintf(what, sizeof what, "exact reduce_by_key %s keys, %s values (%s), n=%zu, %s, path %s%s",
           clprim_type_name(kt), clprim_type_name(vt), exact_values_name(values_kind), n,
           exact_runs_name[runs], ctx_path(ctx), how);
  if (count != segments || (where == 2 && count_dev != segments)) {
    test_report("%s: count %llu (device %llu), expected %zu", what, (unsigned long long)count,
                (unsigned long long)count_dev, segments);
    segments = 0;
  }
  test_read(ctx, dunique, m * ks, got_keys);
  test_read(ctx, dsums, m * vs, got_sums);
  for (size_t s = 0; s < segments; ++s) {
    const uint64_t want_key = get_key(kt, keys, heads[s]);
    if (get_key(kt, got_keys, s) != want_key) {
      test_report("%s: key %zu wrong", what, s);
      break;
    }
    uint64_t bits = 0;
    memcpy(&bits, got_sums + s * vs, vs);
    const uint64_t want = test_exact_reference(vt, values + heads[s] * vs, heads[s + 1] - heads[s]);
    if (bits != want && !(test_nan_bits(vt, bits) && test_nan_bits(vt, want))) {
      test_report("%s: run %zu [%zu, %zu): %#llx, exact %#llx", what, s, heads[s], heads[s + 1],
                  (unsigned long long)bits, (unsigned long long)want);
      break;
    }
  }
  /* Nothing past the runs is written. */
  if (memcmp(got_keys + segments * ks, pattern_keys + segments * ks, (m - segments) * ks) ||
      memcmp(got_sums + segments * vs, pattern_sums + segments * vs, (m - segments) * vs))
    test_report("%s: written past the %zu runs", what, segments);
  clReleaseMemObject(dkeys), clReleaseMemObject(dvalues), clReleaseMemObject(dunique);
  clReleaseMemObject(dsums), clReleaseMemObject(dcount);
  free(keys), free(values), free(got_keys), free(got_sums), free(heads);
  free(pattern_keys), free(pattern_sums);
}

static void test_exact(void **state) {
  (void)state;
  static const clprim_type key_types[4] = {CLPRIM_INT32, CLPRIM_FLOAT, CLPRIM_UINT64,
                                           CLPRIM_DOUBLE};
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    const size_t wg = clprim__launch(ctx).wg;
    const size_t sizes[] = {1, 2, 3, wg - 1, wg, wg + 1, 3 * wg + 5, 20000, 100003};
    const size_t count = sizeof sizes / sizeof sizes[0] - (test_small() ? 2 : 0);
    /* Pieces of 2^16 (the default: one run of 100003 is cut in two) and
     * the default teams, then pieces of the work-group size (64 at least:
     * runs around it, and every long run in many pieces) and teams of 2;
     * the 32-bit pairs with the work-group as the team. */
    for (int small = 0; small < 2; ++small) {
      char piece[96], whole[96];
      snprintf(piece, sizeof piece, "reduce_by_key.exact_piece=%zu,reduce_by_key.exact_team=2",
               wg < 64 ? 64 : wg);
      snprintf(whole, sizeof whole, "exact.atomics64=0,reduce_by_key.exact_team=%zu", wg);
      if (small) TEST_OK(clprim__tune(ctx, piece));
      const char *how = small ? ", small pieces" : "";
      for (clprim_type vt = CLPRIM_FLOAT; vt <= CLPRIM_DOUBLE; ++vt) {
        if (!clprim__type_supported(ctx, vt)) continue;
        unsigned turn = 0;
        for (size_t s = 0; s < count; ++s)
          for (int r = 0; r < EX_RUN_KINDS; ++r) {
            /* every kind of values at one size in the middle, else one a
             * run kind and size, in turn; the key types in turn */
            const int mid = sizes[s] == 3 * wg + 5, every = !small && mid;
            /* Under Oclgrind (small sizes): at the middle size each kind of
             * values once (run kinds in turn), and with small pieces one
             * run and long runs (each configuration still runs every
             * kernel); of the rest an eighth, drawn from the seed (the
             * whole set took 2 minutes there, a quarter 40 s). */
            const int keep = mid && (!small || r == EX_ONE_RUN || r == EX_LONG);
            if (test_small() && !keep && test_rand() % 8) continue;
            for (int v = 0; v < EXV_KINDS; ++v) {
              if (!every && v != (int)((s + (size_t)r + (size_t)small) % EXV_KINDS)) continue;
              if (every && test_small() && v % EX_RUN_KINDS != r) continue;
              const clprim_type kt = key_types[turn % 4];
              if (!clprim__type_supported(ctx, kt)) continue;
              check_exact(ctx, kt, vt, sizes[s], (enum exact_runs)r, v, (int)(turn++ % 3), how);
            }
          }
        /* The pairs of 32-bit words that every device has, where 64-bit
         * local atomics are the default. */
        TEST_OK(clprim__tune(ctx, whole));
        for (int v = 0; v < EXV_KINDS; ++v)
          if (!test_small() || v % 4 == small)
          check_exact(ctx, CLPRIM_INT32, vt, 4 * wg + 3, (enum exact_runs)(v % EX_RUN_KINDS), v,
                      2, small ? ", small pieces, 32-bit pairs" : ", 32-bit pairs");
        TEST_OK(clprim__tune(ctx, "exact.atomics64=-1,reduce_by_key.exact_team=-1"));
        if (small) TEST_OK(clprim__tune(ctx, piece));
      }
      if (small)
        TEST_OK(clprim__tune(ctx, "reduce_by_key.exact_piece=-1,reduce_by_key.exact_team=-1"));
    }
  }
  test_report_end();
}

/* CLPRIM_EXACT: n = 0 (a count of 0, nothing else written), integer
 * values refused with nothing written and the argument named, an unknown
 * flag refused. */
static void test_exact_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  uint64_t count = 99;
  for (clprim_type vt = 0; vt < CLPRIM_TYPE_COUNT; ++vt) {
    if (vt == CLPRIM_FLOAT || vt == CLPRIM_DOUBLE) continue;
    TEST_TEXT(ctx, INVALID,
              clprim_reduce_by_key(ctx, 100, CLPRIM_INT32, A, vt, B, CLPRIM_EXACT, O, O2, &count,
                                   clprim_buf_at(o, 2048)),
              "CLPRIM_EXACT is for float and double sums (value_type is");
  }
  TEST_TEXT(ctx, INVALID,
            clprim_reduce_by_key(ctx, 100, CLPRIM_INT32, A, CLPRIM_FLOAT, B,
                                 CLPRIM_EXACT | CLPRIM_INDICES_64, O, O2, &count, NONE),
            "reduce_by_key: flag 0x8 (CLPRIM_INDICES_64)");
  TEST_TEXT(ctx, INVALID,
            clprim_reduce_by_key(ctx, 0, CLPRIM_INT32, A, CLPRIM_INT64, B, CLPRIM_EXACT, O, O2,
                                 &count, NONE),
            "value_type is int64");
  assert_int_equal(count, 99);
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  /* n = 0: the count, nothing else. */
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *c = contexts.ctx[p];
    if (!c) continue;
    cl_mem in = test_pattern(c, 64), u = test_pattern(c, 64), sm = test_pattern(c, 64);
    cl_mem cnt = test_pattern(c, 8);
    count = 99;
    TEST_OK(clprim_reduce_by_key(c, 0, CLPRIM_INT32, clprim_buf(in), CLPRIM_DOUBLE, clprim_buf(in),
                                 CLPRIM_EXACT, clprim_buf(u), clprim_buf(sm), &count,
                                 clprim_buf(cnt)));
    uint64_t dev = 5;
    test_read(c, cnt, 8, &dev);
    assert_int_equal(count, 0);
    assert_int_equal(dev, 0);
    test_pattern_intact(c, u, 64, "unique_keys");
    test_pattern_intact(c, sm, 64, "sums");
    clReleaseMemObject(in), clReleaseMemObject(u), clReleaseMemObject(sm);
    clReleaseMemObject(cnt);
  }
  TEST_TEXT_BUFFERS_FREE();
}

int main(void) {
  test_init("test_reduce_by_key");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_errors),
                                     cmocka_unit_test(test_error_texts),
                                     cmocka_unit_test(test_types), cmocka_unit_test(test_exact),
                                     cmocka_unit_test(test_exact_errors)};
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
