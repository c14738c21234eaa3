/* test_scan: exclusive and inclusive scans against a CPU reference, for
 * every type and path the device runs, sizes around every tile boundary,
 * in place and not, several recursion levels, float accuracy, n beyond 2^32
 * where memory allows, and every error case. */
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

/* One scan of n random elements; checks every element and that nothing
 * past n was written. */
static void check_scan(clprim_context *ctx, clprim_type type, size_t n, int inclusive,
                       int in_place) {
  const size_t es = clprim_type_size(type), guard = 7;
  unsigned char *in = malloc((n + guard) * es), *want = malloc((n + guard) * es),
                *got = malloc((n + guard) * es);
  double *exact = malloc((n + 1) * sizeof *exact);
  assert_non_null(in);
  assert_non_null(want);
  assert_non_null(got);
  assert_non_null(exact);
  test_random(type, in, n + guard, type != CLPRIM_FLOAT && type != CLPRIM_DOUBLE);
  reference(type, in, exact, want, n, inclusive);
  memcpy(want + n * es, in + n * es, guard * es); /* guard: must stay as it was */

  cl_mem src = test_buffer(ctx, (n + guard) * es, in), dst = src;
  if (!in_place) {
    memset(got, 0xA5, (n + guard) * es); /* poison */
    memcpy(got + n * es, in + n * es, guard * es);
    dst = test_buffer(ctx, (n + guard) * es, got);
  }
  TEST_OK(inclusive ? clprim_scan_inclusive(ctx, type, src, dst, n)
                    : clprim_scan_exclusive(ctx, type, src, dst, n));
  test_read(ctx, dst, (n + guard) * es, got);

  char what[160];
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  snprintf(what, sizeof what, "%s %s scan, n=%zu, path %s%s", clprim_type_name(type),
           inclusive ? "inclusive" : "exclusive", n, clprim_path_name(info.path),
           in_place ? ", in place" : "");
  if (type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE)
    check_float(type, in, got, exact, n, clprim__scan_tile(ctx, type), what);
  else
    for (size_t i = 0; i < n; ++i)
      if (memcmp(got + i * es, want + i * es, es) != 0)
        fail_msg("%s: element %zu differs", what, i);
  if (memcmp(got + n * es, want + n * es, guard * es) != 0)
    fail_msg("%s: wrote past n", what);

  clReleaseMemObject(src);
  if (!in_place) clReleaseMemObject(dst);
  free(in);
  free(want);
  free(got);
  free(exact);
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

/* The smallest tiles (32 work-items of 4 elements): two and three levels
 * of tile-sum recursion (and long look-back chains) happen at small n. */
static void test_recursion(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    clprim__tune(ctx, CLPRIM_KNOB_SCAN_ITEMS, 4);
    clprim__tune(ctx, CLPRIM_KNOB_SCAN_WG, 32);
    clprim_context_clear_cache(ctx);
    const clprim_type types[] = {CLPRIM_UINT32, CLPRIM_INT64, CLPRIM_FLOAT};
    for (size_t t = 0; t < 3; ++t) {
      size_t tile = clprim__scan_tile(ctx, types[t]);
      size_t sizes[] = {tile * tile - 1, tile * tile, tile * tile + 1, 2 * tile * tile + 3,
                        test_small() ? 0 : tile * tile * tile + 7};
      for (size_t s = 0; s < 5; ++s)
        if (sizes[s] && sizes[s] <= ((size_t)1 << 24)) check_scan(ctx, types[t], sizes[s], s % 2, 0);
    }
    clprim__tune(ctx, CLPRIM_KNOB_SCAN_ITEMS, -1);
    clprim__tune(ctx, CLPRIM_KNOB_SCAN_WG, -1);
    clprim_context_clear_cache(ctx);
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
    TEST_OK(clprim_scan_inclusive(ctx, CLPRIM_UINT32, buf, buf, n));
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

/* Every error returns its status and leaves the output as it was. */
static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t n = 100;
  uint32_t data[100], after[100];
  for (size_t i = 0; i < n; ++i) data[i] = (uint32_t)test_rand();
  cl_mem in = test_buffer(ctx, n * 4, data), out = test_buffer(ctx, n * 4, data);

  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_exclusive(NULL, CLPRIM_INT32, in, out, n));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_exclusive(ctx, CLPRIM_INT32, NULL, out, n));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_inclusive(ctx, CLPRIM_INT32, in, NULL, n));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_exclusive(ctx, (clprim_type)CLPRIM_TYPE_COUNT, in, out, n));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_exclusive(ctx, (clprim_type)-1, in, out, n));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_scan_exclusive(ctx, CLPRIM_INT32, in, out, n + 1));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_scan_inclusive(ctx, CLPRIM_INT64, in, out, n / 2 + 1));
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE, clprim_scan_exclusive(ctx, CLPRIM_INT64, in, out, SIZE_MAX / 4));

  /* A device without fp64 refuses double. */
  int had_fp64 = ctx->info.has_fp64;
  ctx->info.has_fp64 = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE, clprim_scan_exclusive(ctx, CLPRIM_DOUBLE, in, out, 10));
  ctx->info.has_fp64 = had_fp64;

  /* A buffer of another OpenCL context. */
  cl_mem foreign = test_foreign_buffer(ctx, n * 4);
  TEST_STATUS(CL_INVALID_CONTEXT, clprim_scan_exclusive(ctx, CLPRIM_INT32, in, foreign, n));
  TEST_STATUS(CL_INVALID_CONTEXT, clprim_scan_exclusive(ctx, CLPRIM_INT32, foreign, out, n));
  clReleaseMemObject(foreign);

  /* n = 0 succeeds and writes nothing. */
  TEST_OK(clprim_scan_exclusive(ctx, CLPRIM_INT32, in, out, 0));
  test_read(ctx, out, n * 4, after);
  assert_memory_equal(after, data, sizeof data);
  clReleaseMemObject(in);
  clReleaseMemObject(out);
}

int main(void) {
  test_init("test_scan");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),    cmocka_unit_test(test_int32),
      cmocka_unit_test(test_uint32),    cmocka_unit_test(test_int64),
      cmocka_unit_test(test_uint64),    cmocka_unit_test(test_float),
      cmocka_unit_test(test_double),    cmocka_unit_test(test_recursion),
      cmocka_unit_test(test_beyond_2_32),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
