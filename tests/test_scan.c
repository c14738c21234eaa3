/* test_scan: exclusive and inclusive scans against a CPU reference, for
 * every type and path the device runs, sizes around every tile boundary,
 * in place and not, ranges at element offsets (in place too), several
 * recursion levels, float accuracy, n beyond 2^32 where memory allows, and
 * every error case. */
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
  TEST_OK(inclusive
              ? clprim_scan_inclusive(ctx, n, type, clprim_buf_at(src, offset), clprim_buf_at(dst, offset))
              : clprim_scan_exclusive(ctx, n, type, clprim_buf_at(src, offset), clprim_buf_at(dst, offset)));
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
    TEST_OK(clprim_scan_inclusive(ctx, n, CLPRIM_UINT32, clprim_buf(buf), clprim_buf(buf)));
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
  const clprim_buffer IN = clprim_buf(in), OUT = clprim_buf(out), NONE = clprim_buf(NULL);

  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_exclusive(NULL, n, CLPRIM_INT32, IN, OUT));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_exclusive(ctx, n, CLPRIM_INT32, NONE, OUT));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_inclusive(ctx, n, CLPRIM_INT32, IN, NONE));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_exclusive(ctx, n, (clprim_type)CLPRIM_TYPE_COUNT, IN, OUT));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_scan_exclusive(ctx, n, (clprim_type)-1, IN, OUT));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_scan_exclusive(ctx, n + 1, CLPRIM_INT32, IN, OUT));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_scan_inclusive(ctx, n / 2 + 1, CLPRIM_INT64, IN, OUT));
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE, clprim_scan_exclusive(ctx, SIZE_MAX / 4, CLPRIM_INT64, IN, OUT));
  /* Ranges: one that runs past the end; out overlapping in but not the
   * same range (in place needs the identical range). */
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_scan_exclusive(ctx, n, CLPRIM_INT32, IN, clprim_buf_at(out, 1)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_exclusive(ctx, n - 1, CLPRIM_INT32, IN, clprim_buf_at(in, 1)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_scan_inclusive(ctx, n - 3, CLPRIM_INT32, clprim_buf_at(out, 3), OUT));

  /* A device without fp64 refuses double. */
  int had_fp64 = ctx->info.has_fp64;
  ctx->info.has_fp64 = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE, clprim_scan_exclusive(ctx, 10, CLPRIM_DOUBLE, IN, OUT));
  ctx->info.has_fp64 = had_fp64;

  /* A buffer of another OpenCL context. */
  cl_mem foreign = test_foreign_buffer(ctx, n * 4);
  TEST_STATUS(CL_INVALID_CONTEXT, clprim_scan_exclusive(ctx, n, CLPRIM_INT32, IN, clprim_buf(foreign)));
  TEST_STATUS(CL_INVALID_CONTEXT, clprim_scan_exclusive(ctx, n, CLPRIM_INT32, clprim_buf(foreign), OUT));
  clReleaseMemObject(foreign);

  /* n = 0 succeeds and writes nothing. */
  TEST_OK(clprim_scan_exclusive(ctx, 0, CLPRIM_INT32, IN, OUT));
  test_read(ctx, out, n * 4, after);
  assert_memory_equal(after, data, sizeof data);
  test_read(ctx, in, n * 4, after);
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
      cmocka_unit_test(test_offsets),   cmocka_unit_test(test_beyond_2_32),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
