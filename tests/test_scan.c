/* test_scan: exclusive and inclusive scans against a CPU reference, for
 * every type and path the device runs, sizes around every tile boundary,
 * in place and not, ranges at element offsets (in place too), several
 * recursion levels, float accuracy, n beyond 2^32 where memory allows, and
 * every error case; scan by key for every key and value type (runs of 1, 2,
 * random, about a tile, one run, alternating, NaN and signed-zero keys),
 * in place and at offsets, and its errors; exact scans (CLPRIM_EXACT):
 * every prefix's bits against an exact big-integer reference, and their
 * errors. */
#include "common.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reference scan; integers wrap as on the device, floats in double. */
static void reference(clprim_type type, const void *in, double *exact, void *out, size_t n,
                      int inclusive) {
  uint64_t run = 0;
  double drun = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t x = 0;
    double d = 0;
    switch (type) {
    case CLPRIM_INT32: case CLPRIM_UINT32: x = ((const uint32_t *)in)[i]; break;
    case CLPRIM_INT64: case CLPRIM_UINT64: x = ((const uint64_t *)in)[i]; break;
    case CLPRIM_FLOAT: d = ((const float *)in)[i]; break;
    case CLPRIM_DOUBLE: d = ((const double *)in)[i]; break;
    }
    uint64_t r = inclusive ? run + x : run;
    double dr = inclusive ? drun + d : drun;
    run += x;
    drun += d;
    switch (type) {
    case CLPRIM_INT32: case CLPRIM_UINT32: ((uint32_t *)out)[i] = (uint32_t)r; break;
    case CLPRIM_INT64: case CLPRIM_UINT64: ((uint64_t *)out)[i] = r; break;
    default: exact[i] = dr; break;
    }
  }
}

/* The documented float bound (docs/ACCURACY.md): the error of out[i] is at
 * most (ITEMS + 2 log2(WG) + tiles up to i + 2) * u * sum_{j<=i} |x_j|. */
static void check_float(clprim_type type, const void *in, const void *got, const double *exact,
                        size_t n, size_t tile, const char *what) {
  double u = type == CLPRIM_FLOAT ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
  double abs_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    double x = type == CLPRIM_FLOAT ? ((const float *)in)[i] : ((const double *)in)[i];
    double g = type == CLPRIM_FLOAT ? ((const float *)got)[i] : ((const double *)got)[i];
    abs_sum += fabs(x);
    double k = 16.0 + 2.0 * 12 + (double)(i / tile + 1) + 2.0;
    double bound = k * u * abs_sum + (type == CLPRIM_FLOAT ? FLT_MIN : DBL_MIN);
    if (!(fabs(g - exact[i]) <= bound))
      fail_msg("%s: element %zu is %.17g, expected %.17g (bound %.3g)", what, i, g, exact[i],
               bound);
  }
}

/* One scan of n random elements, in and out both starting at element
 * `offset` of their buffers; checks every element and that nothing before
 * the offset or past n was written. */
static void check_scan_at(clprim_context *ctx, clprim_type type, size_t n, int inclusive,
                          int in_place, size_t offset) {
  const size_t es = clprim_type_size(type), guard = 7, total = offset + n + guard;
  unsigned char *in = malloc(total * es), *want = malloc(total * es), *got = malloc(total * es);
  double *exact = malloc((n + 1) * sizeof *exact);
  assert_non_null(in);
  assert_non_null(want);
  assert_non_null(got);
  assert_non_null(exact);
  test_random(type, in, total, type != CLPRIM_FLOAT && type != CLPRIM_DOUBLE);
  unsigned char *const range = in + offset * es;
  reference(type, range, exact, want + offset * es, n, inclusive);
  /* Before the offset and the guard: must stay as they were. */
  memcpy(want, in, offset * es);
  memcpy(want + (offset + n) * es, range + n * es, guard * es);

  cl_mem src = test_buffer(ctx, total * es, in), dst = src;
  if (!in_place) {
    memset(got, 0xA5, total * es); /* poison */
    memcpy(got, in, offset * es);
    memcpy(got + (offset + n) * es, range + n * es, guard * es);
    dst = test_buffer(ctx, total * es, got);
  }
  TEST_OK(inclusive ? clprim_scan_inclusive(ctx, n, type, clprim_buf_at(src, offset), 0,
                                            clprim_buf_at(dst, offset))
                    : clprim_scan_exclusive(ctx, n, type, clprim_buf_at(src, offset), 0,
                                            clprim_buf_at(dst, offset)));
  test_read(ctx, dst, total * es, got);

  char what[192];
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  snprintf(what, sizeof what, "%s %s scan, n=%zu, path %s%s, offset %zu", clprim_type_name(type),
           inclusive ? "inclusive" : "exclusive", n, clprim_path_name(info.path),
           in_place ? ", in place" : "", offset);
  if (type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE)
    check_float(type, range, got + offset * es, exact, n, clprim__scan_tile(ctx, type), what);
  else
    for (size_t i = 0; i < n; ++i)
      if (memcmp(got + (offset + i) * es, want + (offset + i) * es, es) != 0)
        fail_msg("%s: element %zu differs", what, i);
  if (memcmp(got, want, offset * es) != 0) fail_msg("%s: wrote before the offset", what);
  if (memcmp(got + (offset + n) * es, want + (offset + n) * es, guard * es) != 0)
    fail_msg("%s: wrote past n", what);

  clReleaseMemObject(src);
  if (!in_place) clReleaseMemObject(dst);
  free(in);
  free(want);
  free(got);
  free(exact);
}

static void check_scan(clprim_context *ctx, clprim_type type, size_t n, int inclusive,
                       int in_place) {
  check_scan_at(ctx, type, n, inclusive, in_place, 0);
}

/* Sizes around every tile boundary of ctx for type. */
static size_t scan_sizes(clprim_context *ctx, clprim_type type, size_t *sizes) {
  size_t tile = clprim__scan_tile(ctx, type), k = 0;
  const size_t fixed[] = {0, 1, 2, 31, 32, 33, 63, 64, 65};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i) sizes[k++] = fixed[i];
  sizes[k++] = tile - 1, sizes[k++] = tile, sizes[k++] = tile + 1;
  sizes[k++] = 2 * tile - 1, sizes[k++] = 2 * tile + 1;
  if (!test_small()) {
    sizes[k++] = 33 * tile + 5; /* look-back beyond one warp of tiles */
    sizes[k++] = ((size_t)1 << 20) + 12345;
  }
  return k;
}

static void test_type(clprim_type type) {
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    if (!test_has_type(ctx, type)) continue;
    size_t sizes[32], count = scan_sizes(ctx, type, sizes);
    for (size_t s = 0; s < count; ++s)
      for (int inclusive = 0; inclusive < 2; ++inclusive)
        check_scan(ctx, type, sizes[s], inclusive, (int)(sizes[s] + inclusive) % 2);
  }
}

TEST_EVERY_TYPE

/* ------------------------------------------------------------ scan by key */
static uint64_t bits_at(clprim_type t, const void *p, size_t i) {
  return clprim_type_size(t) == 4 ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
}
static void bits_put(clprim_type t, void *p, size_t i, uint64_t v) {
  if (clprim_type_size(t) == 4)
    ((uint32_t *)p)[i] = (uint32_t)v;
  else
    ((uint64_t *)p)[i] = v;
}
/* Whether keys i and j are in one run (== in the type). */
static int same_key(clprim_type t, const void *p, size_t i, size_t j) {
  if (t == CLPRIM_FLOAT) return ((const float *)p)[i] == ((const float *)p)[j];
  if (t == CLPRIM_DOUBLE) return ((const double *)p)[i] == ((const double *)p)[j];
  return bits_at(t, p, i) == bits_at(t, p, j);
}

enum key_runs { K_ONE, K_TWO, K_RANDOM, K_TILE, K_ALL_EQUAL, K_ALTERNATING, K_SPECIAL, K_KINDS };
static const char *const key_runs_name[K_KINDS] = {"runs of 1", "runs of 2", "random runs",
                                                   "runs about a tile", "one run", "alternating",
                                                   "NaN and signed zero keys"};

static void make_keys(clprim_type t, void *k, size_t n, enum key_runs kind, size_t tile) {
  uint64_t v = test_rand() & 0x3FFFFFFF;
  size_t left = 0;
  for (size_t i = 0; i < n; ++i) {
    if (kind == K_SPECIAL) {
      /* NaN (never equal), -0 / +0 (equal), 1 */
      const uint64_t r = test_rand() % 6;
      const uint64_t f32[3] = {0x7FC00000u, 0x80000000u, 0x3F800000u};
      const uint64_t f64[3] = {0x7FF8000000000000ull, 0x8000000000000000ull,
                               0x3FF0000000000000ull};
      const uint64_t pick = r == 0 ? 0 : r < 3 ? 1 : r == 3 ? 3 : 2; /* 3: +0 */
      uint64_t b = pick == 3 ? 0 : t == CLPRIM_DOUBLE ? f64[pick] : f32[pick];
      if (t != CLPRIM_FLOAT && t != CLPRIM_DOUBLE) b = r % 3;
      bits_put(t, k, i, b);
      continue;
    }
    if (kind == K_ALTERNATING) {
      bits_put(t, k, i, i % 2 ? v : v + 1);
      continue;
    }
    if (left == 0) {
      left = kind == K_ONE ? 1 : kind == K_TWO ? 2 : kind == K_ALL_EQUAL ? n
             : kind == K_TILE ? tile - 3 + (size_t)(test_rand() % 7)
                              : 1 + (size_t)(test_rand() % (test_rand() % 2 ? 5 : 300));
      v = v + 1 + test_rand() % 3; /* ascending: a new run's key differs */
      if (t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE) v &= 0x3FFFFFFF; /* finite, no NaN */
    }
    --left;
    bits_put(t, k, i, t == CLPRIM_DOUBLE ? 0x3FF0000000000000ull + v : v);
  }
}

static void check_by_key(clprim_context *ctx, clprim_type kt, clprim_type vt, size_t n,
                         enum key_runs kind, int inclusive, int in_place, size_t at) {
  const size_t ks = clprim_type_size(kt), vs = clprim_type_size(vt), m = n ? n : 1;
  const size_t tile = clprim__scan_by_key_tile(ctx, kt, vt);
  unsigned char *keys = calloc(at + m, ks), *vals = calloc(at + m + 2, vs);
  unsigned char *want = calloc(at + m + 2, vs), *got = calloc(at + m + 2, vs);
  double *exact = calloc(m, sizeof *exact), *mag = calloc(m, sizeof *mag);
  make_keys(kt, keys + at * ks, n, kind, tile);
  test_random(vt, vals + at * vs, n, 0);
  memset(vals + (at + n) * vs, 0x5A, 2 * vs); /* past n: must stay */
  memcpy(want, vals, (at + m + 2) * vs);
  const unsigned char *kk = keys + at * ks, *x = vals + at * vs;
  uint64_t run = 0;
  double drun = 0, dmag = 0;
  size_t len = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i == 0 || !same_key(kt, kk, i - 1, i)) run = 0, drun = 0, dmag = 0, len = 0;
    const int fl = vt == CLPRIM_FLOAT || vt == CLPRIM_DOUBLE;
    const double d = vt == CLPRIM_FLOAT ? ((const float *)x)[i] : vt == CLPRIM_DOUBLE ? ((const double *)x)[i] : 0;
    const uint64_t u = fl ? 0 : bits_at(vt, x, i);
    if (inclusive) run += u, drun += d, dmag += fabs(d), ++len;
    if (!fl) bits_put(vt, want + at * vs, i, run);
    exact[i] = drun, mag[i] = dmag * (double)(len + 8);
    if (!inclusive) run += u, drun += d, dmag += fabs(d), ++len;
  }
  cl_mem dk = test_buffer(ctx, (at + m) * ks, keys), dv = test_buffer(ctx, (at + m + 2) * vs, vals);
  cl_mem dout = in_place ? dv : test_buffer(ctx, (at + m + 2) * vs, vals);
  const clprim_status st =
      inclusive ? clprim_scan_inclusive_by_key(ctx, n, kt, clprim_buf_at(dk, at), vt,
                                               clprim_buf_at(dv, at), clprim_buf_at(dout, at))
                : clprim_scan_exclusive_by_key(ctx, n, kt, clprim_buf_at(dk, at), vt,
                                               clprim_buf_at(dv, at), clprim_buf_at(dout, at));
  char what[240];
  snprintf(what, sizeof what, "%s scan by key, %s keys, %s values, n=%zu, %s, %s, at %zu, path %s",
           inclusive ? "inclusive" : "exclusive", clprim_type_name(kt), clprim_type_name(vt), n,
           key_runs_name[kind], in_place ? "in place" : "out of place", at,
           clprim_path_name(ctx->info.path));
  if (st != CLPRIM_SUCCESS) fail_msg("%s: returned %s", what, clprim_status_name(st));
  test_read(ctx, dout, (at + m + 2) * vs, got);
  if (memcmp(got, want, at * vs) != 0 || memcmp(got + (at + n) * vs, want + (at + n) * vs, 2 * vs) != 0)
    fail_msg("%s: wrote outside the range", what);
  const double u = vt == CLPRIM_FLOAT ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
  for (size_t i = 0; i < n; ++i) {
    if (vt == CLPRIM_FLOAT || vt == CLPRIM_DOUBLE) {
      const double g = vt == CLPRIM_FLOAT ? ((const float *)(got + at * vs))[i] : ((const double *)(got + at * vs))[i];
      if (!(fabs(g - exact[i]) <= mag[i] * u + (vt == CLPRIM_FLOAT ? FLT_MIN : DBL_MIN)))
        fail_msg("%s: element %zu is %.17g, expected %.17g", what, i, g, exact[i]);
    } else if (bits_at(vt, got + at * vs, i) != bits_at(vt, want + at * vs, i)) {
      fail_msg("%s: element %zu is %llu, expected %llu", what, i,
               (unsigned long long)bits_at(vt, got + at * vs, i),
               (unsigned long long)bits_at(vt, want + at * vs, i));
    }
  }
  if (!in_place) {
    test_read(ctx, dv, (at + m + 2) * vs, got);
    if (memcmp(got, vals, (at + m + 2) * vs) != 0) fail_msg("%s: the values changed", what);
  }
  clReleaseMemObject(dk), clReleaseMemObject(dv);
  if (!in_place) clReleaseMemObject(dout);
  free(keys), free(vals), free(want), free(got), free(exact), free(mag);
}

static void test_by_key(void **state) {
  (void)state;
  unsigned rot = 0;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    for (int kt = 0; kt < CLPRIM_TYPE_COUNT; ++kt)
      for (int vt = 0; vt < CLPRIM_TYPE_COUNT; ++vt) {
        if (!test_has_type(ctx, (clprim_type)kt) || !test_has_type(ctx, (clprim_type)vt)) continue;
        /* Every size for uint32 / float keys and every value type; the
         * other key types with two value types (one of 4 bytes, one of 8,
         * turning with the key type: each pair is a program to build), one
         * size per pair; under Oclgrind a few pairs. */
        const int full = kt == CLPRIM_UINT32 || kt == CLPRIM_FLOAT;
        static const int v4[3] = {CLPRIM_INT32, CLPRIM_UINT32, CLPRIM_FLOAT},
                         v8[3] = {CLPRIM_INT64, CLPRIM_UINT64, CLPRIM_DOUBLE};
        if (!full && vt != v4[kt % 3] && vt != v8[kt % 3]) continue;
        if (test_small() && (kt + vt) % 4 != 0) continue;
        const size_t tile = clprim__scan_by_key_tile(ctx, (clprim_type)kt, (clprim_type)vt);
        const size_t sizes[] = {0, 1, 2, 33, tile - 1, tile, tile + 1, 2 * tile + 3,
                                test_small() ? 3 * tile : 33 * tile + 5,
                                test_small() ? 2 : ((size_t)1 << 20) + 3};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s, ++rot) {
          if (!full && s != rot % 10) continue;
          if (test_small() && sizes[s] > 2500) continue;
          const enum key_runs kind = (enum key_runs)(rot % K_KINDS);
          check_by_key(ctx, (clprim_type)kt, (clprim_type)vt, sizes[s], kind, (int)(rot % 2),
                       rot % 3 == 1, rot % 5 == 2 ? 3 : 0);
        }
      }
  }
}

static void test_by_key_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  enum { N = 64 };
  uint32_t k[N], poison[N];
  for (int i = 0; i < N; ++i) k[i] = (uint32_t)i / 4, poison[i] = 0xC0FFEEu;
  cl_mem keys = test_buffer(ctx, sizeof k, k), vals = test_buffer(ctx, sizeof k, k);
  cl_mem out = test_buffer(ctx, sizeof poison, poison), small = test_buffer(ctx, 4 * N - 4, NULL);
  const clprim_type u32 = CLPRIM_UINT32;
  const clprim_buffer K = clprim_buf(keys), V = clprim_buf(vals), O = clprim_buf(out),
                      none = clprim_buf(NULL);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_inclusive_by_key(NULL, N, u32, K, u32, V, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_inclusive_by_key(ctx, N, (clprim_type)6, K, u32, V, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_exclusive_by_key(ctx, N, u32, K, (clprim_type)-1, V, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_inclusive_by_key(ctx, N, u32, none, u32, V, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_inclusive_by_key(ctx, N, u32, K, u32, none, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_inclusive_by_key(ctx, N, u32, K, u32, V, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_inclusive_by_key(ctx, N, u32, K, u32, V, K));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_scan_inclusive_by_key(ctx, N + 1, u32, K, u32, V, O));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_scan_inclusive_by_key(ctx, N, u32, K, CLPRIM_UINT64, V, O));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_scan_exclusive_by_key(ctx, N, u32, K, u32, V, clprim_buf(small)));
  uint32_t after[N];
  test_read(ctx, out, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  TEST_OK(clprim_scan_inclusive_by_key(ctx, 0, u32, K, u32, V, O));
  test_read(ctx, out, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  clReleaseMemObject(keys), clReleaseMemObject(vals), clReleaseMemObject(out), clReleaseMemObject(small);
}

/* The smallest tiles (32 work-items of 4 elements; on the cpu path shares
 * of 16): two and three levels of tile-sum recursion (and long look-back
 * chains) happen at small n. */
static void test_recursion(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    TEST_OK(clprim__tune(ctx, "scan.items=4,scan.wg=32,scan_by_key.items=4,"
                              "launch.cpu_share_min=16,launch.cpu_shares_per_unit=64"));
    clprim_context_clear_cache(ctx);
    const clprim_type types[] = {CLPRIM_UINT32, CLPRIM_INT64, CLPRIM_FLOAT};
    for (size_t t = 0; t < 3; ++t) {
      size_t tile = clprim__scan_tile(ctx, types[t]);
      size_t sizes[] = {tile * tile - 1, tile * tile, tile * tile + 1, 2 * tile * tile + 3,
                        test_small() ? 0 : tile * tile * tile + 7};
      for (size_t s = 0; s < 5; ++s)
        if (sizes[s] && sizes[s] <= ((size_t)1 << 24)) check_scan(ctx, types[t], sizes[s], s % 2, 0);
    }
    /* Scans by key over many tiles (on the cpu path shares of 16). */
    static const size_t by_key[] = {33, 100, 1000, 2047};
    for (size_t s = 0; s < 4; ++s)
      check_by_key(ctx, CLPRIM_UINT32, s % 2 ? CLPRIM_FLOAT : CLPRIM_INT64, by_key[s],
                   (enum key_runs)(s % K_KINDS), (int)(s % 2), s == 2, 0);
    TEST_OK(clprim__tune(ctx, "scan.items=-1,scan.wg=-1,scan_by_key.items=-1,"
                              "launch.cpu_share_min=-1,launch.cpu_shares_per_unit=-1"));
    clprim_context_clear_cache(ctx);
  }
}

/* Ranges at an element offset, for every type and path: in place (in and
 * out the same range) at offset 3 (unaligned: through a temporary copy) and
 * at the device's base-address alignment (a sub-buffer), and out of place at
 * offset 3; the elements before the offset stay untouched. */
static void test_offsets(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!test_has_type(ctx, type)) continue;
      const size_t tile = clprim__scan_tile(ctx, type), es = clprim_type_size(type);
      const size_t aligned = ctx->base_align % es == 0 ? ctx->base_align / es : 0;
      const size_t sizes[] = {1, 33, tile + 1, 3 * tile + 5};
      for (size_t s = 0; s < (test_small() ? 3 : 4); ++s) /* Oclgrind is slow */
        for (int inclusive = 0; inclusive < 2; ++inclusive) {
          check_scan_at(ctx, type, sizes[s], inclusive, 1, 3);
          if (aligned) check_scan_at(ctx, type, sizes[s], inclusive, 1, aligned);
          check_scan_at(ctx, type, sizes[s], inclusive, 0, 3);
        }
    }
  }
}

/* n beyond 2^32 elements (uint32, in place), where the device has room:
 * every element is v, so out[i] = (i + 1) * v mod 2^32; sampled. */
static void test_beyond_2_32(void **state) {
  (void)state;
  if (test_small()) {
    printf("n > 2^32: skipped (small sizes)\n");
    return;
  }
  const size_t n = ((size_t)1 << 32) + 4099, bytes = n * 4;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    if (!test_has_room(ctx, bytes, bytes + bytes / 4, "n > 2^32")) continue;
    clprim_device_info info;
    clprim_context_get_info(ctx, &info, sizeof info);
    cl_uint v = (cl_uint)(test_rand() | 1);
    cl_mem buf = test_buffer(ctx, bytes, NULL);
    test_fill_u32(ctx, buf, n, v, 0);
    TEST_OK(clprim_scan_inclusive(ctx, n, CLPRIM_UINT32, clprim_buf(buf), 0, clprim_buf(buf)));
    for (int k = 0; k < 2000; ++k) {
      size_t i = k < 1000 ? test_rand() % n : k < 1500 ? ((size_t)1 << 32) - 750 + (k - 1000) : n - 500 + (k - 1500);
      cl_uint got = test_read_u32(ctx, buf, i), want = (cl_uint)((uint64_t)(i + 1) * v);
      if (got != want) fail_msg("n=%zu path %s: element %zu is %u, expected %u", n,
                                clprim_path_name(info.path), i, got, want);
    }
    clReleaseMemObject(buf);
    printf("n > 2^32 on %s: passed\n", clprim_path_name(info.path));
  }
}

/* ------------------------------------------------------------ exact scans */
/* The reference of CLPRIM_EXACT, written apart from the device's method (a
 * record a chunk, carry-save words, exact_round): the positive and the
 * negative elements so far kept as two unsigned big integers (32-bit
 * limbs, each carry propagated at once, limb l weighing 2^(32 l + base),
 * base the smallest subnormal's exponent); for each prefix the smaller
 * taken from the larger, the top 64 bits with the rest OR-ed into the
 * lowest (round to odd), converted by C's own rounding and scaled. */
#define XREF_LIMBS 72
struct xref {
  uint32_t pos[XREF_LIMBS], neg[XREF_LIMBS], mag[XREF_LIMBS];
  int dbl, limbs, nan, pinf, ninf, added, all_neg_zero;
};

static void xref_init(struct xref *r, clprim_type t) {
  memset(r, 0, sizeof *r);
  r->dbl = t == CLPRIM_DOUBLE;
  r->limbs = r->dbl ? XREF_LIMBS : 14; /* 2^(32 * 14 - 149) > 2^64 * FLT_MAX */
  r->all_neg_zero = 1;
}

static void xref_add_bits(struct xref *r, uint32_t *b, uint64_t m, int pos) {
  uint64_t carry = 0;
  for (int l = pos / 32, sh = pos % 32; l < r->limbs; ++l) {
    const uint64_t part = sh ? (m << sh) & 0xFFFFFFFFu : m & 0xFFFFFFFFu;
    m = sh ? m >> (32 - sh) : m >> 32;
    sh = 0;
    const uint64_t v = (uint64_t)b[l] + part + carry;
    b[l] = (uint32_t)v;
    carry = v >> 32;
    if (m == 0 && carry == 0) return;
  }
  fail_msg("exact scan reference: out of limbs");
}

static void xref_add(struct xref *r, double x) {
  r->added = 1;
  if (isnan(x)) r->nan = 1;
  if (isinf(x)) x > 0 ? (r->pinf = 1) : (r->ninf = 1);
  if (!(x == 0 && signbit(x))) r->all_neg_zero = 0;
  if (!isfinite(x) || x == 0) return;
  int e;
  uint64_t m = (uint64_t)ldexp(frexp(fabs(x), &e), 53); /* x = m 2^(e - 53) */
  e -= 53;
  const int base = r->dbl ? -1074 : -149;
  while (e < base) { /* float subnormals: m's low bits are 0 */
    assert_true((m & 1) == 0);
    m >>= 1, ++e;
  }
  xref_add_bits(r, x > 0 ? r->pos : r->neg, m, e - base);
}

/* The bits (float zero-extended) of the sum so far, rounded once. */
static uint64_t xref_bits(struct xref *r) {
  const int dbl = r->dbl, L = r->limbs;
  if (r->nan || (r->pinf && r->ninf)) return dbl ? 0x7FF8000000000000ull : 0x7FC00000u;
  if (r->pinf) return dbl ? 0x7FF0000000000000ull : 0x7F800000u;
  if (r->ninf) return dbl ? 0xFFF0000000000000ull : 0xFF800000u;
  int c = 0;
  for (int l = L - 1; l >= 0 && c == 0; --l)
    if (r->pos[l] != r->neg[l]) c = r->pos[l] < r->neg[l] ? -1 : 1;
  if (c == 0) /* an exact zero: -0 only when every element was -0 */
    return r->added && r->all_neg_zero ? (dbl ? 0x8000000000000000ull : 0x80000000u) : 0;
  const uint32_t *a = c > 0 ? r->pos : r->neg, *b = c > 0 ? r->neg : r->pos;
  int64_t borrow = 0;
  for (int l = 0; l < L; ++l) {
    const int64_t v = (int64_t)a[l] - b[l] - borrow;
    borrow = v < 0;
    r->mag[l] = (uint32_t)(v + (borrow ? ((int64_t)1 << 32) : 0));
  }
  int top = -1;
  for (int l = L - 1; l >= 0 && top < 0; --l)
    if (r->mag[l])
      for (int k = 31; k >= 0 && top < 0; --k)
        if (r->mag[l] >> k & 1) top = 32 * l + k;
  const int low = top >= 63 ? top - 63 : 0;
  uint64_t w = 0;
  int sticky = 0;
  for (int k = top; k >= low; --k)
    w = w << 1 | (r->mag[k / 32] >> (k % 32) & 1);
  for (int l = 0; l < low / 32; ++l)
    sticky |= r->mag[l] != 0;
  if (low % 32) sticky |= (r->mag[low / 32] & ((1u << (low % 32)) - 1)) != 0;
  w |= (uint64_t)sticky;
  const int base = dbl ? -1074 : -149;
  if (dbl) {
    double v = ldexp((double)w, low + base);
    if (c < 0) v = -v;
    uint64_t bits;
    memcpy(&bits, &v, 8);
    return bits;
  }
  float v = ldexpf((float)w, low + base);
  if (c < 0) v = -v;
  uint32_t bits;
  memcpy(&bits, &v, 4);
  return bits;
}

static int xnan_bits(clprim_type t, uint64_t bits) {
  return t == CLPRIM_FLOAT ? (bits & 0x7FFFFFFFu) > 0x7F800000u
                           : (bits << 1) > 0xFFE0000000000000ull;
}

static double xget(clprim_type t, const void *p, size_t i) {
  return t == CLPRIM_FLOAT ? ((const float *)p)[i] : ((const double *)p)[i];
}
static void xset(clprim_type t, void *p, size_t i, double v) {
  if (t == CLPRIM_FLOAT)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}
static uint64_t xbits(clprim_type t, const void *p, size_t i) {
  return t == CLPRIM_FLOAT ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
}

/* The data of the exact scans. */
enum xkind {
  XK_UNIFORM,
  XK_WIDE,
  XK_CANCEL,
  XK_SUBNORMAL,
  XK_HUGE,
  XK_TIES,
  XK_SPECIAL,
  XK_INFS,
  XK_CHAINS,
  XK_NEG_ZERO,
  XK_KINDS
};
static const char *const xkind_name[XK_KINDS] = {"uniform [-1, 1)",
                                                 "every exponent",
                                                 "cancelling to 0",
                                                 "all subnormal",
                                                 "near the largest",
                                                 "ties",
                                                 "inf and NaN mixed in",
                                                 "+inf early, -inf later",
                                                 "near-cancelling pairs, every exponent",
                                                 "-0 only"};

static void make_xscan_input(clprim_type t, void *p, size_t n, enum xkind k) {
  const int dbl = t == CLPRIM_DOUBLE, prec = dbl ? 53 : 24;
  const int emin = dbl ? -1074 : -149, emax = dbl ? 1023 : 127;
  const double largest = dbl ? DBL_MAX : FLT_MAX;
  for (size_t i = 0; i < n; ++i) {
    const double sign = test_rand() % 2 ? -1.0 : 1.0, u = test_uniform();
    double x;
    switch (k) {
    case XK_UNIFORM:
      x = 2 * u - 1;
      break;
    case XK_WIDE:
      x = sign * ldexp(1 + u, emin + (int)(test_rand() % (unsigned)(emax - emin + 1)));
      if (!dbl && isinf((float)x)) x = sign * largest;
      break;
    case XK_CANCEL: /* an element and its negative in turn: prefixes return to 0 */
      x = i % 2 ? -xget(t, p, i - 1) : sign * ldexp(1 + u, (int)(test_rand() % 200) - 100);
      if (i % 2 == 0 && test_rand() % 8 == 0) x = sign * 0.0;
      break;
    case XK_SUBNORMAL:
      x = sign * ldexp(floor(u * ldexp(1, prec - 1)), emin);
      break;
    case XK_HUGE:
      x = sign * largest * (0.5 + 0.5 * u);
      break;
    case XK_TIES: { /* 1s and half units in the last place of 1 and of 2 */
      const int r = (int)(test_rand() % 4);
      x = sign * (r == 0   ? 1.0
                  : r == 1 ? ldexp(1, -prec)
                  : r == 2 ? ldexp(1, 1 - prec)
                           : ldexp(3, -prec - 1));
      break;
    }
    case XK_SPECIAL: {
      const uint64_t r = test_rand() % 4096;
      x = r == 0 ? NAN : r < 3 ? sign * INFINITY : sign * ldexp(1 + u, (int)(test_rand() % 40));
      break;
    }
    case XK_INFS:
      x = sign * ldexp(1 + u, (int)(test_rand() % 40));
      break;
    case XK_CHAINS: /* the sum crosses 0 often, its residues far below its elements: long
                     * carries and borrows */
      if (i % 2) {
        x = -xget(t, p, i - 1);
        const double toward = test_rand() % 2 ? INFINITY : -INFINITY;
        if (x != 0 && test_rand() % 4)
          x = dbl ? nextafter(x, toward) : nextafterf((float)x, (float)toward);
        if (isinf(x)) x = -xget(t, p, i - 1); /* not past the largest */
      } else {
        const int r = (int)(test_rand() % 16);
        x = r == 0   ? sign * ldexp(1, emin)
            : r == 1 ? sign * largest
                     : sign * ldexp(1 + u, emin + (int)(test_rand() % (unsigned)(emax - emin + 1)));
        if (!dbl && isinf((float)x)) x = sign * largest;
      }
      break;
    default:
      x = -0.0;
      break;
    }
    xset(t, p, i, x);
  }
  if (k == XK_SPECIAL && n > 4) { /* infinities and NaN late too, and one +inf -inf pair */
    xset(t, p, n / 3, INFINITY);
    xset(t, p, n / 2, -INFINITY);
  }
  if (k == XK_INFS && n > 0) { /* +inf in the first quarter, -inf in the third */
    xset(t, p, (size_t)(test_rand() % (n / 4 + 1)), INFINITY);
    if (n > 3) xset(t, p, n / 2 + (size_t)(test_rand() % (n / 4)), -INFINITY);
  }
}

/* One exact scan of host (n elements) on ctx, in place or not, against the
 * reference; every prefix's bits; nothing written past n. */
static void check_xscan_at(clprim_context *ctx, clprim_type t, const void *host, size_t n,
                           int inclusive, int in_place, size_t offset, const char *what) {
  const size_t es = clprim_type_size(t), guard = 3, total = offset + n + guard;
  unsigned char *got = malloc(total * es), *init = malloc(total * es);
  assert_non_null(got);
  assert_non_null(init);
  memset(init, 0xA5, total * es); /* the guards, and out's poison */
  cl_mem out = test_buffer(ctx, total * es, init), in = out;
  if (in_place) {
    memcpy(got, init, total * es);
    memcpy(got + offset * es, host, n * es);
    test_write(ctx, in, total * es, got);
  } else {
    in = test_buffer(ctx, (offset + n + 1) * es, NULL);
    if (n) {
      memcpy(got, init, offset * es);
      memcpy(got + offset * es, host, n * es);
      test_write(ctx, in, (offset + n) * es, got);
    }
  }
  const clprim_buffer src = clprim_buf_at(in, offset), dst = clprim_buf_at(out, offset);
  TEST_OK(inclusive ? clprim_scan_inclusive(ctx, n, t, src, CLPRIM_EXACT, dst)
                    : clprim_scan_exclusive(ctx, n, t, src, CLPRIM_EXACT, dst));
  test_read(ctx, out, total * es, got);
  static struct xref r;
  xref_init(&r, t);
  int bad = 0;
  for (size_t i = 0; i < n && bad < 3; ++i) {
    if (inclusive) xref_add(&r, xget(t, host, i));
    const uint64_t ref = xref_bits(&r), dev = xbits(t, got + offset * es, i);
    if (!(dev == ref || (xnan_bits(t, dev) && xnan_bits(t, ref)))) {
      test_report("%s exact %s scan (%s), n=%zu, path %s%s, offset %zu: element %zu is %#llx, "
                  "exact %#llx",
                  clprim_type_name(t), inclusive ? "inclusive" : "exclusive", what, n,
                  test_path_of(ctx), in_place ? ", in place" : "", offset, i,
                  (unsigned long long)dev, (unsigned long long)ref);
      ++bad;
    }
    if (!inclusive) xref_add(&r, xget(t, host, i));
  }
  if (memcmp(got, init, offset * es) != 0)
    test_report("%s exact scan, n=%zu, offset %zu: wrote before the offset", what, n, offset);
  if (memcmp(got + (offset + n) * es, init + (offset + n) * es, guard * es) != 0)
    test_report("%s exact scan, n=%zu, offset %zu: wrote past n", what, n, offset);
  clReleaseMemObject(out);
  if (!in_place) clReleaseMemObject(in);
  free(got);
  free(init);
}

static void check_xscan(clprim_context *ctx, clprim_type t, const void *host, size_t n,
                        int inclusive, int in_place, const char *what) {
  check_xscan_at(ctx, t, host, n, inclusive, in_place, 0, what);
}

/* Cases whose rounding is known by hand, as prefixes: each row's elements
 * in order, and the bits of each inclusive prefix (float, double; XNAN
 * for any NaN). */
#define XNAN (~0ull)
struct xscan_case {
  const char *what;
  double v[4];
  uint64_t want_float[4], want_double[4];
};
static const struct xscan_case xscan_cases[] = {
    {"ties to even, a tie's sticky bit",
     {1.0, 0x1p-24, 0x1p-53, -1.0},
     {0x3F800000u, 0x3F800000u, 0x3F800001u, 0x33800000u},
     {0x3FF0000000000000ull, 0x3FF0000010000000ull, 0x3FF0000010000000ull, 0x3E70000000800000ull}},
    {"a tie's sticky bit far below (float)",
     {1.0, 0x1p-24, 0x1p-149, -1.0},
     {0x3F800000u, 0x3F800000u, 0x3F800001u, 0x33800000u},
     {0x3FF0000000000000ull, 0x3FF0000010000000ull, 0x3FF0000010000000ull, 0x3E70000000000000ull}},
    {"a tie's sticky bit far below (double)",
     {1.0, 0x1p-53, 0x1p-1074, -1.0},
     {0x3F800000u, 0x3F800000u, 0x3F800000u, 0x25000000u},
     {0x3FF0000000000000ull, 0x3FF0000000000000ull, 0x3FF0000000000001ull, 0x3CA0000000000000ull}},
    {"tie up to even",
     {1.0 + 0x1p-23, 0x1p-24, 0x1p-24, 0.0},
     {0x3F800001u, 0x3F800002u, 0x3F800002u, 0x3F800002u},
     {0x3FF0000020000000ull, 0x3FF0000030000000ull, 0x3FF0000040000000ull, 0x3FF0000040000000ull}},
    {"overflow and back",
     {0x1.fffffep127, 0x1.fffffep127, -0x1.fffffep127, -0x1.fffffep127},
     {0x7F7FFFFFu, 0x7F800000u, 0x7F7FFFFFu, 0x00000000u},
     {0x47EFFFFFE0000000ull, 0x47FFFFFFE0000000ull, 0x47EFFFFFE0000000ull, 0}},
    {"negative zeros, then +0",
     {-0.0, -0.0, 0.0, -0.0},
     {0x80000000u, 0x80000000u, 0, 0},
     {0x8000000000000000ull, 0x8000000000000000ull, 0, 0}},
    {"cancelled to +0",
     {-1.0, 1.0, -0.0, 0x1p-149},
     {0xBF800000u, 0, 0, 1},
     {0xBFF0000000000000ull, 0, 0, 0x36A0000000000000ull}},
    {"+inf, -inf: NaN",
     {INFINITY, 1.0, -INFINITY, 1.0},
     {0x7F800000u, 0x7F800000u, XNAN, XNAN},
     {0x7FF0000000000000ull, 0x7FF0000000000000ull, XNAN, XNAN}},
};

static void test_xscan_cases(clprim_context *ctx, clprim_type t) {
  const size_t es = clprim_type_size(t);
  for (size_t c = 0; c < sizeof xscan_cases / sizeof xscan_cases[0]; ++c) {
    const struct xscan_case *e = &xscan_cases[c];
    unsigned char host[4 * 8], got[4 * 8];
    for (int j = 0; j < 4; ++j)
      xset(t, host, (size_t)j, e->v[j]);
    static struct xref r;
    xref_init(&r, t);
    for (int inclusive = 0; inclusive < 2; ++inclusive) {
      cl_mem buf = test_buffer(ctx, 4 * es, host);
      TEST_OK(
          inclusive
              ? clprim_scan_inclusive(ctx, 4, t, clprim_buf(buf), CLPRIM_EXACT, clprim_buf(buf))
              : clprim_scan_exclusive(ctx, 4, t, clprim_buf(buf), CLPRIM_EXACT, clprim_buf(buf)));
      test_read(ctx, buf, 4 * es, got);
      clReleaseMemObject(buf);
      for (int j = 0; j < 4; ++j) {
        /* exclusive: +0 first, then the inclusive prefixes */
        const int k = inclusive ? j : j - 1;
        const uint64_t want = k < 0 ? 0 : t == CLPRIM_FLOAT ? e->want_float[k] : e->want_double[k];
        if (inclusive) { /* the hand's answer against the reference too */
          xref_add(&r, xget(t, host, (size_t)j));
          const uint64_t ref = xref_bits(&r);
          if (want == XNAN ? !xnan_bits(t, ref) : ref != want)
            test_report("%s \"%s\": the reference's prefix %d is %#llx", clprim_type_name(t),
                        e->what, j, (unsigned long long)ref);
        }
        const uint64_t dev = xbits(t, got, (size_t)j);
        if (want == XNAN ? !xnan_bits(t, dev) : dev != want)
          test_report("%s \"%s\", %s, path %s: prefix %d is %#llx, expected %#llx",
                      clprim_type_name(t), e->what, inclusive ? "inclusive" : "exclusive",
                      test_path_of(ctx), j, (unsigned long long)dev, (unsigned long long)want);
      }
    }
  }
}

/* Every prefix bit for bit: float and double, inclusive and exclusive, in
 * place and not, every data kind, sizes around the chunks (a work-item's),
 * the work-groups' chunks and the blocks of the chunks' scan, up to about
 * 2^20; on the cpu path with two share counts (other chunks). */
static void test_exact(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    for (int shares = 0; shares < (p == CLPRIM_PATH_CPU && !test_small() ? 2 : 1); ++shares) {
      if (shares) TEST_OK(clprim__tune(ctx, "launch.cpu_shares_per_unit=3"));
      for (clprim_type t = CLPRIM_FLOAT; t <= CLPRIM_DOUBLE; ++t) {
        if (!clprim__type_supported(ctx, t)) continue;
        test_xscan_cases(ctx, t);
        /* a chunk (a work-item's), a work-group's chunks, a block's; on the cpu
         * path a chunk is a share (n / clprim__cpu_stream_shares), one up to
         * 4096 elements (launch.cpu_share_min), two past it */
        const int cpu = p == CLPRIM_PATH_CPU;
        const size_t c = cpu ? 4096 : clprim__scan_exact_chunk(ctx, 100000);
        const size_t wg = clprim__launch(ctx).wg;
        const size_t b = clprim__scan_exact_per_block(1) * c;
        const size_t sizes[] = {0,     1,          2,         3,         c - 1,
                                c,     c + 1,      2 * c + 1, b - 1,     b,
                                b + 1, wg * c + 3, 100000,    3 * b + 7, ((size_t)1 << 20) + 3};
        /* small sizes (Oclgrind): up to two blocks' chunks */
        const size_t count = sizeof sizes / sizeof sizes[0] - (test_small() ? 4 : 0);
        const size_t es = clprim_type_size(t);
        size_t largest = 1;
        for (size_t s = 0; s < count; ++s)
          largest = sizes[s] > largest ? sizes[s] : largest;
        if (largest < 2 * c + 5) largest = 2 * c + 5; /* the offsets' below */
        unsigned char *host = malloc(largest * es);
        assert_non_null(host);
        for (size_t s = 0; s < count; ++s)
          for (int k = 0; k < XK_KINDS; ++k) {
            const size_t n = sizes[s];
            /* the largest size: three kinds, inclusive; small sizes (Oclgrind): two
             * kinds past 3, one past 2 c (two blocks' chunks, local path) */
            if (n > 200000 && k != XK_WIDE && k != XK_CANCEL && k != XK_TIES) continue;
            if (test_small() && n > 3 && k != XK_CHAINS && k != XK_INFS) continue;
            if (test_small() && n > 2 * c + 1 && (cpu || n != b + 1 || k != XK_CHAINS)) continue;
            make_xscan_input(t, host, n, (enum xkind)k);
            for (int inclusive = 0; inclusive < 2; ++inclusive) {
              if (n > 200000 && inclusive == (k == XK_CANCEL)) continue;
              check_xscan(ctx, t, host, n, inclusive, (int)(s + k + inclusive) % 2, xkind_name[k]);
            }
          }
        /* at element offsets (3: staged copies on most devices), in place and not */
        make_xscan_input(t, host, 2 * c + 5, XK_CHAINS);
        for (size_t offset = 3; offset <= 64; offset += 61)
          for (int inclusive = 0; inclusive < 2; ++inclusive)
            check_xscan_at(ctx, t, host, 2 * c + 5, inclusive, (int)(offset + inclusive) % 2,
                           offset, xkind_name[XK_CHAINS]);
        free(host);
      }
      if (shares) TEST_OK(clprim__tune(ctx, "launch.cpu_shares_per_unit=-1"));
    }
  }
  test_report_end();
}

/* Integer types refuse CLPRIM_EXACT, unknown flags are refused, and
 * nothing is written. */
static void test_exact_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t n = 64;
  cl_mem in = test_pattern(ctx, n * 8), out = test_pattern(ctx, n * 8);
  for (clprim_type t = CLPRIM_INT32; t <= CLPRIM_UINT64; ++t) {
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_scan_inclusive(ctx, n, t, clprim_buf(in), CLPRIM_EXACT, clprim_buf(out)));
    test_text_has(ctx, "CLPRIM_EXACT", "exact int scan");
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_scan_exclusive(ctx, n, t, clprim_buf(in), CLPRIM_EXACT, clprim_buf(in)));
  }
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_exclusive(ctx, n, CLPRIM_FLOAT, clprim_buf(in), CLPRIM_EXACT | 1u,
                                    clprim_buf(out)));
  test_text_has(ctx, "flag 0x1", "unknown flag");
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_inclusive(ctx, n, CLPRIM_INT32, clprim_buf(in), CLPRIM_INDICES_64,
                                    clprim_buf(out)));
  test_pattern_intact(ctx, in, n * 8, "in");
  test_pattern_intact(ctx, out, n * 8, "out");
  clReleaseMemObject(in);
  clReleaseMemObject(out);
}

/* Every error returns its status and leaves the output as it was. */
static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t n = 100;
  uint32_t data[100], after[100];
  for (size_t i = 0; i < n; ++i) data[i] = (uint32_t)test_rand();
  cl_mem in = test_buffer(ctx, n * 4, data), out = test_buffer(ctx, n * 4, data);
  const clprim_buffer IN = clprim_buf(in), OUT = clprim_buf(out), NONE = clprim_buf(NULL);

  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_exclusive(NULL, n, CLPRIM_INT32, IN, 0, OUT));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_exclusive(ctx, n, CLPRIM_INT32, NONE, 0, OUT));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_inclusive(ctx, n, CLPRIM_INT32, IN, 0, NONE));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_exclusive(ctx, n, (clprim_type)CLPRIM_TYPE_COUNT, IN, 0, OUT));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_exclusive(ctx, n, (clprim_type)-1, IN, 0, OUT));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_scan_exclusive(ctx, n + 1, CLPRIM_INT32, IN, 0, OUT));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_scan_inclusive(ctx, n / 2 + 1, CLPRIM_INT64, IN, 0, OUT));
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE,
              clprim_scan_exclusive(ctx, SIZE_MAX / 4, CLPRIM_INT64, IN, 0, OUT));
  /* Ranges: one that runs past the end; out overlapping in but not the
   * same range (in place needs the identical range). */
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_scan_exclusive(ctx, n, CLPRIM_INT32, IN, 0, clprim_buf_at(out, 1)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_exclusive(ctx, n - 1, CLPRIM_INT32, IN, 0, clprim_buf_at(in, 1)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_inclusive(ctx, n - 3, CLPRIM_INT32, clprim_buf_at(out, 3), 0, OUT));

  /* A device without fp64 refuses double. */
  int had_fp64 = ctx->info.has_fp64;
  ctx->info.has_fp64 = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE,
              clprim_scan_exclusive(ctx, 10, CLPRIM_DOUBLE, IN, 0, OUT));
  ctx->info.has_fp64 = had_fp64;

  /* A buffer of another OpenCL context. */
  cl_mem foreign = test_foreign_buffer(ctx, n * 4);
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_scan_exclusive(ctx, n, CLPRIM_INT32, IN, 0, clprim_buf(foreign)));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_scan_exclusive(ctx, n, CLPRIM_INT32, clprim_buf(foreign), 0, OUT));
  clReleaseMemObject(foreign);

  /* n = 0 succeeds and writes nothing. */
  TEST_OK(clprim_scan_exclusive(ctx, 0, CLPRIM_INT32, IN, 0, OUT));
  test_read(ctx, out, n * 4, after);
  assert_memory_equal(after, data, sizeof data);
  test_read(ctx, in, n * 4, after);
  assert_memory_equal(after, data, sizeof data);
  clReleaseMemObject(in);
  clReleaseMemObject(out);
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, a flag of another family is refused with nothing written, and a
 * call that succeeds leaves "". */
static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  TEST_TEXT(ctx, INVALID, clprim_scan_inclusive(ctx, 100, CLPRIM_INT32, NONE, 0, O),
            "scan_inclusive: in is required");
  TEST_TEXT(ctx, SMALL, clprim_scan_exclusive(ctx, 2000, CLPRIM_INT32, A, 0, O),
            "scan_exclusive: in holds 1024 elements from offset 0, the call needs 2000");
  TEST_TEXT(ctx, INVALID, clprim_scan_exclusive(ctx, 10, (clprim_type)9, A, 0, O), "type (9)");
  TEST_TEXT(ctx, INVALID, clprim_scan_exclusive(ctx, 10, CLPRIM_INT32, A, 0, clprim_buf_at(a, 1)),
            "out overlaps in");
  TEST_TEXT(ctx, INVALID,
            clprim_scan_inclusive_by_key(ctx, 10, CLPRIM_INT32, A, CLPRIM_INT32, B, A),
            "scan_inclusive_by_key: out is the keys' range");
  /* A refused call leaves its text; the next call that succeeds empties it. */
  TEST_OK_NO_TEXT(ctx, clprim_scan_exclusive(ctx, 0, CLPRIM_INT32, A, 0, O));
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(void) {
  test_init("test_scan");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),        cmocka_unit_test(test_error_texts),
      cmocka_unit_test(test_int32),         cmocka_unit_test(test_uint32),
      cmocka_unit_test(test_int64),         cmocka_unit_test(test_uint64),
      cmocka_unit_test(test_float),         cmocka_unit_test(test_double),
      cmocka_unit_test(test_recursion),     cmocka_unit_test(test_offsets),
      cmocka_unit_test(test_beyond_2_32),   cmocka_unit_test(test_by_key),
      cmocka_unit_test(test_by_key_errors), cmocka_unit_test(test_exact),
      cmocka_unit_test(test_exact_errors),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
