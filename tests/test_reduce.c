/* test_reduce: argmax / argmin (plain, |x|, NaN policies), min, max and sum
 * against a CPU reference, for every type and path the device runs, sizes
 * around the tile boundaries, ties, all-equal input, NaNs, INT_MIN under
 * |x|, results in a device buffer, argmax / argmin of a range at an
 * unaligned offset (the index relative to the range), float accuracy, and
 * every error case; the segmented reductions on equal, random (empty,
 * overlapping, long) and tiny segments, with uint32 and uint64 offsets (the
 * end offsets at an element offset), every flag, and bad segments and
 * offset types. */
#include "common.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_float(clprim_type t) { return t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE; }

static double get_f(clprim_type t, const void *p, size_t i) {
  return t == CLPRIM_FLOAT ? ((const float *)p)[i] : ((const double *)p)[i];
}
static int64_t get_i(clprim_type t, const void *p, size_t i) {
  return t == CLPRIM_INT32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}
static uint64_t get_u(clprim_type t, const void *p, size_t i) {
  return t == CLPRIM_UINT32 ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
}

/* Whether element a is strictly better than element b for argmax (is_min
 * 0) or argmin (1) with flags: the reference's own comparisons, written
 * independently of the device's key mapping. */
static int better(clprim_type t, const void *p, size_t a, size_t b, int is_min, unsigned flags) {
  int abs_mode = (flags & CLPRIM_REDUCE_ABS) != 0;
  if (is_float(t)) {
    double x = get_f(t, p, a), y = get_f(t, p, b);
    if ((flags & CLPRIM_REDUCE_NAN_LARGEST) && !is_min) {
      if (isnan(y)) return 0;
      if (isnan(x)) return 1;
    } else {
      if (isnan(x)) return 0;
      if (isnan(y)) return 1;
    }
    if (abs_mode) x = fabs(x), y = fabs(y);
    return is_min ? x < y : x > y;
  }
  if (t == CLPRIM_INT32 || t == CLPRIM_INT64) {
    int64_t x = get_i(t, p, a), y = get_i(t, p, b);
    if (abs_mode) {
      uint64_t mx = x < 0 ? 0 - (uint64_t)x : (uint64_t)x, my = y < 0 ? 0 - (uint64_t)y : (uint64_t)y;
      return is_min ? mx < my : mx > my;
    }
    return is_min ? x < y : x > y;
  }
  uint64_t x = get_u(t, p, a), y = get_u(t, p, b);
  return is_min ? x < y : x > y;
}

static size_t reference_arg(clprim_type t, const void *p, size_t n, int is_min, unsigned flags) {
  size_t best = 0;
  for (size_t i = 1; i < n; ++i)
    if (better(t, p, i, best, is_min, flags)) best = i;
  return best;
}

/* Input variants. */
enum variant { RANDOM, FEW_VALUES, ALL_EQUAL, TIE_FIRST_LAST, WITH_NAN, ALL_NAN, ZEROS, VARIANTS };
static const char *const variant_name[VARIANTS] = {"random", "few values", "all equal",
                                                   "tie first+last", "with NaN", "all NaN",
                                                   "signed zeros"};

static void set_f(clprim_type t, void *p, size_t i, double v) {
  if (t == CLPRIM_FLOAT)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}

static void make_input(clprim_type t, void *p, size_t n, enum variant v) {
  const size_t es = clprim_type_size(t);
  test_random(t, p, n, 1);
  switch (v) {
  case RANDOM:
    /* The most negative integer, where |x| overflows a signed type. */
    if (n > 2 && t == CLPRIM_INT32) ((int32_t *)p)[test_rand() % n] = INT32_MIN;
    if (n > 2 && t == CLPRIM_INT64) ((int64_t *)p)[test_rand() % n] = INT64_MIN;
    break;
  case FEW_VALUES: /* many ties, signed zeros */
    for (size_t i = 0; i < n; ++i) {
      int r = (int)(test_rand() % 5) - 2;
      if (is_float(t))
        set_f(t, p, i, r == 0 && test_rand() % 2 ? -0.0 : r * 0.5);
      else if (es == 4)
        ((int32_t *)p)[i] = r;
      else
        ((int64_t *)p)[i] = r;
    }
    break;
  case ALL_EQUAL:
    for (size_t i = 1; i < n; ++i) memcpy((char *)p + i * es, p, es);
    break;
  case TIE_FIRST_LAST: {
    /* The extreme value at both ends (and where it was): the first wins. */
    size_t at = reference_arg(t, p, n, 0, 0);
    memcpy((char *)p, (char *)p + at * es, es);
    memcpy((char *)p + (n - 1) * es, (char *)p + at * es, es);
    break;
  }
  case WITH_NAN:
    for (size_t i = 0; i < n; ++i)
      if (i == 0 || i == n - 1 || test_rand() % 7 == 0) set_f(t, p, i, test_rand() % 2 ? NAN : -NAN);
    if (n > 3) set_f(t, p, n / 2, INFINITY), set_f(t, p, n / 3, -INFINITY);
    break;
  case ALL_NAN:
    for (size_t i = 0; i < n; ++i) set_f(t, p, i, NAN);
    break;
  case ZEROS: /* -0.0 equals +0.0: the minimum is the first zero of either sign */
    for (size_t i = 0; i < n; ++i) {
      uint64_t r = test_rand() % 3;
      set_f(t, p, i, r == 0 ? -0.0 : r == 1 ? 0.0 : 0.5);
    }
    break;
  default: break;
  }
}

static const char *ctx_path(clprim_context *ctx) {
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  return clprim_path_name(info.path);
}

/* argmax and argmin with every flag combination on one input. */
static void check_arg(clprim_context *ctx, clprim_type t, size_t n, enum variant v) {
  const size_t es = clprim_type_size(t);
  unsigned char *host = malloc(n * es);
  assert_non_null(host);
  make_input(t, host, n, v);
  cl_mem in = test_buffer(ctx, n * es, host);
  cl_mem result = test_buffer(ctx, 16, NULL);
  const unsigned all_flags[] = {0, CLPRIM_REDUCE_ABS, CLPRIM_REDUCE_NAN_LARGEST,
                                CLPRIM_REDUCE_ABS | CLPRIM_REDUCE_NAN_LARGEST};
  const unsigned flag_count = is_float(t) ? 4 : 2;
  for (int is_min = 0; is_min < 2; ++is_min)
    for (unsigned f = 0; f < flag_count; ++f) {
      unsigned flags = all_flags[f];
      size_t want = reference_arg(t, host, n, is_min, flags);
      clprim_value value;
      uint64_t index = 0;
      int via_buffer = (int)((n + f + (unsigned)is_min) % 3 == 0);
      if (via_buffer) {
        /* Only the device buffer: two uint64 words, value bits and index. */
        uint64_t words[2];
        TEST_OK(
            is_min
                ? clprim_argmin(ctx, n, t, clprim_buf(in), flags, NULL, NULL, clprim_buf(result))
                : clprim_argmax(ctx, n, t, clprim_buf(in), flags, NULL, NULL, clprim_buf(result)));
        test_read(ctx, result, 16, words);
        memset(&value, 0, sizeof value);
        memcpy(&value, &words[0], sizeof words[0]);
        index = words[1];
      } else {
        TEST_OK(is_min ? clprim_argmin(ctx, n, t, clprim_buf(in), flags, &value, &index,
                                       clprim_buf(NULL))
                       : clprim_argmax(ctx, n, t, clprim_buf(in), flags, &value, &index,
                                       clprim_buf(NULL)));
      }
      if (index != want || memcmp(&value, host + want * es, es) != 0)
        fail_msg("%s %s, n=%zu, %s, flags %u, path %s%s: index %llu, expected %zu",
                 clprim_type_name(t), is_min ? "argmin" : "argmax", n, variant_name[v], flags,
                 ctx_path(ctx), via_buffer ? ", via buffer" : "", (unsigned long long)index, want);
      if (es == 4 && (value.bytes[4] | value.bytes[5] | value.bytes[6] | value.bytes[7]))
        fail_msg("%s: the upper bytes of a 32-bit value are not zero", clprim_type_name(t));
    }
  /* min / max return the same element. */
  clprim_value got;
  size_t want = reference_arg(t, host, n, 1, 0);
  TEST_OK(clprim_reduce_min(ctx, n, t, clprim_buf(in), 0, &got, clprim_buf(NULL)));
  if (memcmp(&got, host + want * es, es) != 0)
    fail_msg("%s min, n=%zu, %s, path %s: wrong value", clprim_type_name(t), n, variant_name[v],
             ctx_path(ctx));
  want = reference_arg(t, host, n, 0, 0);
  TEST_OK(clprim_reduce_max(ctx, n, t, clprim_buf(in), 0, NULL, clprim_buf(result)));
  uint64_t bits = 0;
  test_read(ctx, result, 8, &bits);
  if (memcmp(&bits, host + want * es, es) != 0)
    fail_msg("%s max, n=%zu, %s, path %s: wrong value", clprim_type_name(t), n, variant_name[v],
             ctx_path(ctx));
  clReleaseMemObject(in);
  clReleaseMemObject(result);
  free(host);
}

/* Sizes around the tile boundaries of ctx for type. */
static size_t reduce_sizes(clprim_context *ctx, clprim_type type, size_t *sizes) {
  size_t tile = clprim__reduce_tile(ctx, type), k = 0;
  const size_t fixed[] = {1, 2, 31, 32, 33};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i) sizes[k++] = fixed[i];
  sizes[k++] = tile - 1, sizes[k++] = tile, sizes[k++] = tile + 1;
  if (!test_small()) {
    sizes[k++] = 7 * tile + 3; /* several groups, several quads each */
    sizes[k++] = ((size_t)1 << 20) + 12345;
  }
  return k;
}

static void test_arg_type(clprim_type type) {
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    if (!test_has_type(ctx, type)) continue;
    size_t sizes[16], count = reduce_sizes(ctx, type, sizes);
    for (size_t s = 0; s < count; ++s)
      for (int v = 0; v < VARIANTS; ++v) {
        if ((v == WITH_NAN || v == ALL_NAN || v == ZEROS) && !is_float(type)) continue;
        /* Under Oclgrind: every variant at a few sizes, random at all. */
        if (test_small() && v != RANDOM && s % 3 != 1 && sizes[s] != 1) continue;
        check_arg(ctx, type, sizes[s], (enum variant)v);
      }
  }
}

static void test_arg_int32(void **state) { (void)state, test_arg_type(CLPRIM_INT32); }
static void test_arg_uint32(void **state) { (void)state, test_arg_type(CLPRIM_UINT32); }
static void test_arg_int64(void **state) { (void)state, test_arg_type(CLPRIM_INT64); }
static void test_arg_uint64(void **state) { (void)state, test_arg_type(CLPRIM_UINT64); }
static void test_arg_float(void **state) { (void)state, test_arg_type(CLPRIM_FLOAT); }
static void test_arg_double(void **state) { (void)state, test_arg_type(CLPRIM_DOUBLE); }

/* ------------------------------------------------------------- offsets */

/* The largest (top set) or smallest value of type t (floats: +-inf). */
static void put_extreme(clprim_type t, void *p, size_t i, int top) {
  switch (t) {
  case CLPRIM_INT32:
    ((int32_t *)p)[i] = top ? INT32_MAX : INT32_MIN;
    break;
  case CLPRIM_UINT32:
    ((uint32_t *)p)[i] = top ? UINT32_MAX : 0;
    break;
  case CLPRIM_INT64:
    ((int64_t *)p)[i] = top ? INT64_MAX : INT64_MIN;
    break;
  case CLPRIM_UINT64:
    ((uint64_t *)p)[i] = top ? UINT64_MAX : 0;
    break;
  default:
    set_f(t, p, i, top ? INFINITY : -INFINITY);
    break;
  }
}

/* argmax and argmin of the m elements of a buffer from element 5 (20 or 40
 * bytes: below any device's sub-buffer alignment, so the call works on a
 * copy of the range): the index is relative to the range's start. The
 * elements around the range are the type's largest and smallest, which win
 * if the call reads outside it. The results also go to words 1 and 2 of a
 * device buffer of uint64 (8 bytes in: unaligned too), argmin's to that
 * buffer alone; its other words and the input stay as they were. */
static void check_arg_at(clprim_context *ctx, clprim_type t, size_t m) {
  const size_t es = clprim_type_size(t), at = 5, tail = 3, total = at + m + tail;
  unsigned char *host = malloc(total * es), *after = malloc(total * es);
  assert_non_null(host);
  assert_non_null(after);
  make_input(t, host + at * es, m, RANDOM);
  for (size_t i = 0; i < at; ++i)
    put_extreme(t, host, i, i % 2 == 0);
  for (size_t i = at + m; i < total; ++i)
    put_extreme(t, host, i, i % 2 == 0);
  cl_mem in = test_buffer(ctx, total * es, host);
  const uint64_t poison[4] = {0x1111111111111111ull, 0x2222222222222222ull, 0x3333333333333333ull,
                              0x4444444444444444ull};
  cl_mem result = test_buffer(ctx, sizeof poison, poison);
  for (int is_min = 0; is_min < 2; ++is_min) {
    const size_t want = reference_arg(t, host + at * es, m, is_min, 0);
    clprim_value value;
    memset(&value, 0, sizeof value);
    uint64_t index = 77, words[4];
    test_write(ctx, result, sizeof poison, poison);
    if (is_min) {
      TEST_OK(
          clprim_argmin(ctx, m, t, clprim_buf_at(in, at), 0, NULL, NULL, clprim_buf_at(result, 1)));
    } else {
      TEST_OK(clprim_argmax(ctx, m, t, clprim_buf_at(in, at), 0, &value, &index,
                            clprim_buf_at(result, 1)));
    }
    test_read(ctx, result, sizeof words, words);
    if (is_min) memcpy(&value, &words[1], sizeof words[1]), index = words[2];
    if (index != want)
      fail_msg("%s %s of %zu elements at offset %zu, path %s: index %llu, expected %zu",
               clprim_type_name(t), is_min ? "argmin" : "argmax", m, at, ctx_path(ctx),
               (unsigned long long)index, want);
    if (memcmp(&value, host + (at + want) * es, es) != 0)
      fail_msg("%s %s of %zu elements at offset %zu, path %s: wrong value", clprim_type_name(t),
               is_min ? "argmin" : "argmax", m, at, ctx_path(ctx));
    if (memcmp(&words[1], &value, 8) != 0 || words[2] != index)
      fail_msg("%s argmax at offset %zu: the device result differs from the host's",
               clprim_type_name(t), at);
    if (words[0] != poison[0] || words[3] != poison[3])
      fail_msg("%s %s at offset %zu: a result word outside the range was written",
               clprim_type_name(t), is_min ? "argmin" : "argmax", at);
  }
  test_read(ctx, in, total * es, after);
  assert_memory_equal(after, host, total * es);
  clReleaseMemObject(in);
  clReleaseMemObject(result);
  free(host);
  free(after);
}

static void test_arg_at_offset(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    for (int ti = 0; ti < CLPRIM_TYPE_COUNT; ++ti) {
      const clprim_type t = (clprim_type)ti;
      if (!clprim__type_supported(ctx, t)) continue;
      const size_t tile = clprim__reduce_tile(ctx, t);
      const size_t sizes[4] = {1, 33, tile + 1, 7 * tile + 3};
      for (int s = 0; s < (test_small() ? 3 : 4); ++s)
        check_arg_at(ctx, t, sizes[s]);
    }
  }
}

/* ------------------------------------------------------------------ sum */

/* Levels of tile sums for n elements. */
static unsigned sum_levels(size_t n, size_t tile) {
  unsigned levels = 1;
  while (n > tile) n = n / tile + (n % tile != 0), ++levels;
  return levels;
}

static void check_sum(clprim_context *ctx, clprim_type t, size_t n) {
  const size_t es = clprim_type_size(t);
  unsigned char *host = malloc((n ? n : 1) * es);
  assert_non_null(host);
  test_random(t, host, n, 1);
  uint64_t want = 0;
  double exact = 0, abs_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (is_float(t)) {
      double x = get_f(t, host, i);
      exact += x, abs_sum += fabs(x);
    } else {
      want += es == 4 ? (uint64_t)((uint32_t *)host)[i] : ((uint64_t *)host)[i];
    }
  }
  if (es == 4) want = (uint32_t)want;
  cl_mem in = test_buffer(ctx, (n ? n : 1) * es, host);
  cl_mem result = test_buffer(ctx, 8, NULL);
  clprim_value got;
  uint64_t bits = 0;
  TEST_OK(clprim_reduce_sum(ctx, n, t, clprim_buf(in), 0, &got, clprim_buf(n % 2 ? result : NULL)));
  if (n % 2) {
    test_read(ctx, result, 8, &bits);
    if (memcmp(&bits, &got, 8) != 0) fail_msg("sum: the device result differs from the host's");
  }
  char what[128];
  snprintf(what, sizeof what, "%s sum, n=%zu, path %s", clprim_type_name(t), n, ctx_path(ctx));
  if (is_float(t)) {
    /* docs/ACCURACY.md: levels * (ITEMS + log2(WG) + subgroups per group). */
    double u = t == CLPRIM_FLOAT ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
    double k = sum_levels(n, clprim__reduce_tile(ctx, t)) * (16.0 + 12.0 + 32.0) + 2.0;
    double g = t == CLPRIM_FLOAT ? got.f32 : got.f64;
    double bound = k * u * abs_sum + (t == CLPRIM_FLOAT ? FLT_MIN : DBL_MIN);
    if (!(fabs(g - exact) <= bound))
      fail_msg("%s: %.17g, expected %.17g (bound %.3g)", what, g, exact, bound);
    if (t == CLPRIM_FLOAT && (got.bytes[4] | got.bytes[5] | got.bytes[6] | got.bytes[7]))
      fail_msg("%s: upper bytes not zero", what);
  } else if (memcmp(&got, &want, 8) != 0) {
    fail_msg("%s: wrong sum", what);
  }
  clReleaseMemObject(in);
  clReleaseMemObject(result);
  free(host);
}

static void test_sum(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      clprim_type type = (clprim_type)t;
      if (!clprim__type_supported(ctx, type)) continue;
      size_t sizes[20], count = reduce_sizes(ctx, type, sizes);
      size_t tile = clprim__reduce_tile(ctx, type);
      sizes[count++] = 0;
      sizes[count++] = 2 * tile + 1; /* two levels */
      if (!test_small()) sizes[count++] = tile * tile + 3; /* three levels */
      for (size_t s = 0; s < count; ++s) check_sum(ctx, type, sizes[s]);
    }
  }
}

/* ---------------------------------------------------------- exact sums */

/* One exact sum on ctx against the reference; the result also through a
 * device buffer when n is odd. */
static void check_exact(clprim_context *ctx, clprim_type t, const void *host, size_t n,
                        const char *what) {
  const size_t es = clprim_type_size(t);
  cl_mem in = test_buffer(ctx, (n ? n : 1) * es, n ? host : NULL);
  cl_mem result = test_buffer(ctx, 8, NULL);
  clprim_value got;
  memset(&got, 0, sizeof got);
  TEST_OK(clprim_reduce_sum(ctx, n, t, clprim_buf(in), CLPRIM_EXACT, &got,
                            clprim_buf(n % 2 ? result : NULL)));
  uint64_t bits, want = test_exact_reference(t, host, n);
  memcpy(&bits, &got, 8);
  if (n % 2) {
    uint64_t dev = 0;
    test_read(ctx, result, 8, &dev);
    if (dev != bits) test_report("%s: the device result differs from the host's", what);
  }
  const double g = t == CLPRIM_FLOAT ? got.f32 : got.f64;
  if (!(bits == want || (isnan(g) && test_nan_bits(t, want))))
    test_report("%s, n=%zu, path %s: bits %#llx, exact %#llx", what, n, ctx_path(ctx),
                (unsigned long long)bits, (unsigned long long)want);
  clReleaseMemObject(in);
  clReleaseMemObject(result);
}

/* Cases whose rounding is known by hand: ties to even, a sticky bit far
 * below, overflow by rounding, exact cancellation, signed zeros and the
 * special values, each spread over `n` elements (the rest `pad`). */
struct exact_case {
  const char *what;
  double v[4];
  int count;
  double pad;
  uint64_t want_float, want_double; /* the bits; 1 for a NaN */
};
static const struct exact_case exact_cases[] = {
    {"tie to even (down)", {1.0, 0x1p-24, 0, 0}, 2, 0.0, 0x3F800000u, 0x3FF0000010000000ull},
    {"tie, far sticky", {1.0, 0x1p-53, 0x1p-1074, 0}, 3, 0.0, 0x3F800000u, 0x3FF0000000000001ull},
    {"tie, far sticky (float)", {1.0, 0x1p-24, 0x1p-149, 0}, 3, 0.0, 0x3F800001u,
     0x3FF0000010000000ull},
    {"tie to even (up)", {1.0 + 0x1p-23, 0x1p-24, 0, 0}, 2, 0.0, 0x3F800002u,
     0x3FF0000030000000ull},
    {"cancellation", {1e16, 1.0, -1e16, 0}, 3, 0.0, 0x3F800000u, 0x3FF0000000000000ull},
    {"smallest subnormals", {0x1p-149, 0x1p-149, 0x1p-149, -0x1p-149}, 4, 0.0, 2,
     0x36B0000000000000ull},
    {"signed zeros", {-0.0, 0.0, 0, 0}, 2, -0.0, 0, 0},
    {"negative zeros", {-0.0, -0.0, 0, 0}, 2, -0.0, 0x80000000u, 0x8000000000000000ull},
    {"cancelled to zero", {0x1p-149, -0x1p-149, 0, 0}, 2, -0.0, 0, 0},
    {"+inf", {INFINITY, -1.0, 0, 0}, 2, 0.0, 0x7F800000u, 0x7FF0000000000000ull},
    {"-inf", {-INFINITY, 1e30, 0, 0}, 2, 0.0, 0xFF800000u, 0xFFF0000000000000ull},
    {"+inf and -inf", {INFINITY, -INFINITY, 0, 0}, 2, 0.0, 1, 1},
    {"NaN", {1.0, NAN, 0, 0}, 2, 0.0, 1, 1},
};

static void test_exact_cases(clprim_context *ctx, clprim_type t, size_t n) {
  const size_t es = clprim_type_size(t);
  unsigned char *host = calloc(n, es);
  assert_non_null(host);
  for (size_t c = 0; c < sizeof exact_cases / sizeof exact_cases[0]; ++c) {
    const struct exact_case *e = &exact_cases[c];
    for (size_t i = 0; i < n; ++i) set_f(t, host, i, e->pad);
    for (int j = 0; j < e->count; ++j) /* at spread, distinct places */
      set_f(t, host, j * (n / e->count) + test_rand() % (n / e->count), e->v[j]);
    const uint64_t want = t == CLPRIM_FLOAT ? e->want_float : e->want_double;
    char what[96];
    snprintf(what, sizeof what, "%s sum of \"%s\"", clprim_type_name(t), e->what);
    /* the hand's answer against the reference first, then the device */
    const uint64_t ref = test_exact_reference(t, host, n);
    if (want == 1 ? !test_nan_bits(t, ref) : ref != want)
      test_report("%s: the reference gives %#llx", what, (unsigned long long)ref);
    check_exact(ctx, t, host, n, what);
  }
  free(host);
}

static void test_exact(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    /* 64-bit local atomics where the device has them, then the pairs of
     * 32-bit words that every device has */
    for (int pairs = 0; pairs < 2; ++pairs) {
      if (pairs) TEST_OK(clprim__tune(ctx, "exact.atomics64=0"));
      for (clprim_type t = CLPRIM_FLOAT; t <= CLPRIM_DOUBLE; ++t) {
        if (!clprim__type_supported(ctx, t)) continue;
        const size_t g = 256 * 64; /* a work-group's share at most (engine/exact.c) */
        const size_t sizes[] = {0,      1,      2,          3,      255,        256,
                                257,    g - 1,  g,          g + 1,  3 * g + 17, 100003,
                                (size_t)1 << 20, ((size_t)1 << 22) + 5};
        const size_t count = test_small() ? 7 : pairs ? 11 : sizeof sizes / sizeof sizes[0];
        const size_t es = clprim_type_size(t);
        unsigned char *host = malloc(sizes[count - 1] * es + 8);
        assert_non_null(host);
        for (size_t s = 0; s < count; ++s)
          for (int k = 0; k < TEST_EXACT_KINDS; ++k) {
            test_exact_input(t, host, sizes[s], (enum test_exact_kind)k);
            char what[96];
            snprintf(what, sizeof what, "%s sum (%s%s)", clprim_type_name(t),
                     test_exact_kind_name[k], pairs ? ", 32-bit pairs" : "");
            check_exact(ctx, t, host, sizes[s], what);
          }
        free(host);
        test_exact_cases(ctx, t, test_small() ? 600 : 40000);
      }
      if (pairs) TEST_OK(clprim__tune(ctx, "exact.atomics64=-1"));
    }
  }
  /* Integer types refuse the flag, and nothing is written. */
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const uint64_t poison = 0x5555555555555555ull;
  int32_t data[16] = {1, 2, 3};
  cl_mem in = test_buffer(ctx, sizeof data, data), result = test_pattern(ctx, 8);
  clprim_value v;
  v.u64 = poison;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_sum(ctx, 16, CLPRIM_INT32, clprim_buf(in), CLPRIM_EXACT, &v,
                                clprim_buf(result)));
  if (v.u64 != poison) fail_msg("exact int32 sum: *sum written on failure");
  test_pattern_intact(ctx, result, 8, "result");
  clReleaseMemObject(in);
  clReleaseMemObject(result);
  test_report_end();
}

/* ----------------------------------------------------------------- errors */

/* Every error returns its status and writes nothing. */
static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t n = 100;
  uint32_t data[100];
  for (size_t i = 0; i < n; ++i) data[i] = (uint32_t)test_rand();
  const uint64_t poison[2] = {0x1111111111111111ull, 0x2222222222222222ull};
  cl_mem in = test_buffer(ctx, n * 4, data), result = test_buffer(ctx, 16, poison);
  cl_mem small = test_buffer(ctx, 15, poison);
  clprim_value value, value_before;
  memset(&value, 0x5A, sizeof value);
  value_before = value;
  uint64_t index = 77;
  const clprim_type i32 = CLPRIM_INT32;

  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_argmax(NULL, n, i32, clprim_buf(in), 0, &value, &index, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_argmax(ctx, n, i32, clprim_buf(NULL), 0, &value, &index, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_argmin(ctx, n, (clprim_type)CLPRIM_TYPE_COUNT, clprim_buf(in), 0, &value,
                            &index, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argmin(ctx, n, (clprim_type)-1, clprim_buf(in),
                                                           0, &value, &index, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_argmax(ctx, 0, i32, clprim_buf(in), 0, &value, &index, clprim_buf(result)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_min(ctx, 0, i32, clprim_buf(in), 0, &value, clprim_buf(result)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_argmax(ctx, n, i32, clprim_buf(in), 4, &value, &index, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_argmax(ctx, n, i32, clprim_buf(in), 0, NULL, NULL, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_max(ctx, n, i32, clprim_buf(in), 0, NULL, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_sum(ctx, n, i32, clprim_buf(in), 0, NULL, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_sum(NULL, n, i32, clprim_buf(in), 0, &value, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_reduce_sum(ctx, n, i32, clprim_buf(NULL), 0, &value, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_argmax(ctx, n + 1, i32, clprim_buf(in), 0, &value, &index, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_argmin(ctx, n / 2 + 1, CLPRIM_INT64, clprim_buf(in), 0, &value, &index,
                            clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_argmax(ctx, n, i32, clprim_buf(in), 0, &value, &index, clprim_buf(small)));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_reduce_sum(ctx, n + 1, i32, clprim_buf(in), 0, &value, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE,
              clprim_argmax(ctx, SIZE_MAX / 4, CLPRIM_INT64, clprim_buf(in), 0, &value, &index,
                            clprim_buf(NULL)));
  TEST_STATUS(
      CLPRIM_ERROR_SIZE_TOO_LARGE,
      clprim_reduce_sum(ctx, SIZE_MAX / 4, CLPRIM_INT64, clprim_buf(in), 0, &value, clprim_buf(NULL)));

  /* A device without fp64 refuses double. */
  int had_fp64 = ctx->info.has_fp64;
  ctx->info.has_fp64 = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE, clprim_argmax(ctx, 10, CLPRIM_DOUBLE, clprim_buf(in),
                                                           0, &value, &index, clprim_buf(NULL)));
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE,
              clprim_reduce_sum(ctx, 10, CLPRIM_DOUBLE, clprim_buf(in), 0, &value, clprim_buf(NULL)));
  ctx->info.has_fp64 = had_fp64;

  /* Buffers of another OpenCL context. */
  cl_mem foreign = test_foreign_buffer(ctx, n * 4);
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_argmax(ctx, n, i32, clprim_buf(foreign), 0, &value, &index, clprim_buf(NULL)));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_argmax(ctx, n, i32, clprim_buf(in), 0, &value, &index, clprim_buf(foreign)));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_reduce_sum(ctx, n, i32, clprim_buf(in), 0, &value, clprim_buf(foreign)));
  clReleaseMemObject(foreign);

  /* Nothing was written. */
  uint64_t after[2];
  test_read(ctx, result, 16, after);
  assert_memory_equal(after, poison, sizeof poison);
  assert_memory_equal(&value, &value_before, sizeof value);
  assert_int_equal(index, 77);
  clReleaseMemObject(in);
  clReleaseMemObject(result);
  clReleaseMemObject(small);
}

/* ---------------------------------------------------- segmented reductions */

/* Segment layouts: equal lengths covering the input; random lengths
 * (empty, 1, short, longer than a work-group's unrolled share) with gaps
 * and overlaps, shuffled; many tiny ones. */
enum layout { L_EQUAL, L_RANDOM, L_TINY, LAYOUTS };
static const char *const layout_name[LAYOUTS] = {"equal lengths", "random lengths", "tiny"};

static size_t make_segments(enum layout l, size_t n, uint64_t **b, uint64_t **e) {
  size_t count = l == L_EQUAL ? (n + 1023) / 1024 : l == L_TINY ? n / 2 + 1 : 40;
  *b = malloc(count * 8), *e = malloc(count * 8);
  for (size_t s = 0; s < count; ++s) {
    uint64_t lo, hi;
    if (l == L_EQUAL) {
      lo = (uint64_t)s * 1024, hi = lo + 1024 > n ? n : lo + 1024;
    } else {
      const size_t most = l == L_TINY ? 3 : s % 5 == 0 ? 5000 : s % 5 == 1 ? 1 : s % 5 == 2 ? 0 : 300;
      const size_t draw = (size_t)(test_rand() % (most + 1)), len = draw > n ? n : draw;
      lo = n - len ? test_rand() % (n - len + 1) : 0, hi = lo + len;
    }
    (*b)[s] = lo, (*e)[s] = hi;
  }
  return count;
}

/* Every segmented call on one input and layout, offsets of type ot (the
 * end offsets after END_PAD elements that must not be read), against the
 * reference. */
#define END_PAD 3
static void check_segmented(clprim_context *ctx, clprim_type t, size_t n, enum variant v,
                            enum layout l, clprim_type ot) {
  const size_t es = clprim_type_size(t);
  unsigned char *host = malloc((n ? n : 1) * es);
  make_input(t, host, n, v);
  uint64_t *b, *e;
  const size_t segs = make_segments(l, n, &b, &e);
  char what[200];
  snprintf(what, sizeof what, "segmented %s, n=%zu, %s, %zu segments (%s), %s offsets, path %s",
           clprim_type_name(t), n, variant_name[v], segs, layout_name[l], clprim_type_name(ot),
           ctx_path(ctx));
  cl_mem in = test_buffer(ctx, (n ? n : 1) * es, host);
  cl_mem bo = test_offset_buffer(ctx, ot, b, segs, 0),
         eo = test_offset_buffer(ctx, ot, e, segs, END_PAD);
  const size_t out_bytes = (segs + 2) * 16;
  unsigned char *poison = malloc(out_bytes), *got = malloc(out_bytes);
  memset(poison, 0xA5, out_bytes);
  cl_mem out = test_buffer(ctx, out_bytes, poison);
  const clprim_buffer I = clprim_buf(in), B = clprim_buf(bo), E = clprim_buf_at(eo, END_PAD),
                      O = clprim_buf(out);
  /* Sums. */
  TEST_OK(clprim_segmented_sum(ctx, n, t, I, segs, ot, B, E, 0, O));
  test_read(ctx, out, out_bytes, got);
  if (memcmp(got + segs * es, poison, out_bytes - segs * es) != 0)
    fail_msg("%s: sum wrote past its results", what);
  for (size_t s = 0; s < segs; ++s) {
    if (is_float(t)) {
      double exact = 0, mag = 0;
      for (uint64_t i = b[s]; i < e[s]; ++i) exact += get_f(t, host, i), mag += fabs(get_f(t, host, i));
      const double g = get_f(t, got, s), u = t == CLPRIM_FLOAT ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
      const int ok = isnan(exact) ? isnan(g) : isinf(exact) ? g == exact
                                              : fabs(g - exact) <= (double)(e[s] - b[s] + 8) * u * mag;
      if (!ok) fail_msg("%s: sum of segment %zu = %.17g, expected %.17g", what, s, g, exact);
    } else {
      uint64_t want = 0;
      for (uint64_t i = b[s]; i < e[s]; ++i) want += get_u(t == CLPRIM_INT32 ? CLPRIM_UINT32 : t == CLPRIM_INT64 ? CLPRIM_UINT64 : t, host, i);
      uint64_t g = get_u(es == 4 ? CLPRIM_UINT32 : CLPRIM_UINT64, got, s);
      if (es == 4) want = (uint32_t)want;
      if (g != want) fail_msg("%s: sum of segment %zu wrong", what, s);
    }
  }
  /* min / max and argmin / argmax, every flag combination. */
  const unsigned all_flags[] = {0, CLPRIM_REDUCE_ABS, CLPRIM_REDUCE_NAN_LARGEST,
                                CLPRIM_REDUCE_ABS | CLPRIM_REDUCE_NAN_LARGEST};
  for (unsigned f = 0; f < (is_float(t) ? 4u : 2u); ++f)
    for (int is_min = 0; is_min < 2; ++is_min)
      for (int arg = 0; arg < 2; ++arg) {
        const unsigned flags = all_flags[f];
        test_write(ctx, out, out_bytes, poison);
        if (arg)
          TEST_OK(is_min ? clprim_segmented_argmin(ctx, n, t, I, segs, ot, B, E, flags, O)
                         : clprim_segmented_argmax(ctx, n, t, I, segs, ot, B, E, flags, O));
        else
          TEST_OK(is_min ? clprim_segmented_min(ctx, n, t, I, segs, ot, B, E, flags, O)
                         : clprim_segmented_max(ctx, n, t, I, segs, ot, B, E, flags, O));
        test_read(ctx, out, out_bytes, got);
        const size_t used = segs * (arg ? 16 : es);
        if (memcmp(got + used, poison, out_bytes - used) != 0)
          fail_msg("%s: %s%s wrote past its results", what, arg ? "arg" : "", is_min ? "min" : "max");
        for (size_t s = 0; s < segs; ++s) {
          const size_t len = (size_t)(e[s] - b[s]);
          const unsigned char *seg = host + b[s] * es;
          unsigned char want[8] = {0};
          uint64_t want_index = UINT64_MAX;
          if (len) {
            want_index = reference_arg(t, seg, len, is_min, flags);
            memcpy(want, seg + want_index * es, es);
          } else if (!arg) {
            /* The empty segment's value: lowest (max) or largest (min). */
            const int64_t imax = es == 4 ? INT32_MAX : INT64_MAX;
            const uint64_t umax = es == 4 ? UINT32_MAX : UINT64_MAX;
            if (t == CLPRIM_FLOAT) { const float x = is_min ? INFINITY : -INFINITY; memcpy(want, &x, 4); }
            else if (t == CLPRIM_DOUBLE) { const double x = is_min ? INFINITY : -INFINITY; memcpy(want, &x, 8); }
            else if (t == CLPRIM_INT32 || t == CLPRIM_INT64) { const int64_t x = is_min ? imax : -imax - 1; memcpy(want, &x, es); }
            else { const uint64_t x = is_min ? umax : 0; memcpy(want, &x, es); }
          }
          if (arg) {
            uint64_t pair[2];
            memcpy(pair, got + s * 16, 16);
            if (pair[1] != want_index || memcmp(&pair[0], want, es) != 0 ||
                (es == 4 && (pair[0] >> 32) != 0))
              fail_msg("%s: arg%s flags %u, segment %zu (length %zu): index %llu, expected %llu",
                       what, is_min ? "min" : "max", flags, s, len,
                       (unsigned long long)pair[1], (unsigned long long)want_index);
          } else if (memcmp(got + s * es, want, es) != 0) {
            fail_msg("%s: %s flags %u, segment %zu (length %zu) wrong", what,
                     is_min ? "min" : "max", flags, s, len);
          }
        }
      }
  clReleaseMemObject(in), clReleaseMemObject(bo), clReleaseMemObject(eo), clReleaseMemObject(out);
  free(host), free(b), free(e), free(poison), free(got);
}

static void test_segmented(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    unsigned rot = p;
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!clprim__type_supported(ctx, type)) continue;
      for (int l = 0; l < LAYOUTS; ++l, ++rot) {
        if (test_small() && (unsigned)l != rot % LAYOUTS) continue;
        const size_t n = test_small() ? 700 : l == L_TINY ? 3000 : 20000 + (size_t)(test_rand() % 3000);
        enum variant v = (enum variant)(rot % VARIANTS);
        if (!is_float(type) && (v == WITH_NAN || v == ALL_NAN || v == ZEROS)) v = FEW_VALUES;
        /* Both offset types (small sizes: one, in turn). */
        for (unsigned w = 0; w < TEST_OFFSET_TYPES; ++w)
          if (!test_small() || w == (rot / LAYOUTS) % TEST_OFFSET_TYPES)
            check_segmented(ctx, type, n, v, (enum layout)l, test_offset_type[w]);
      }
    }
  }
}

/* Bad segments, flags, offset types and buffers: a status, nothing
 * written; with both offset types. */
static void check_segmented_errors(clprim_context *ctx, clprim_type ot) {
  enum { N = 64, S = 4 };
  float x[N];
  for (int i = 0; i < N; ++i) x[i] = (float)i;
  const uint64_t good_b[S] = {0, 10, 10, 30}, good_e[S] = {10, 10, 40, 64};
  const uint64_t bad_cases[3][2] = {{5, 4}, {0, 65}, {65, 66}}; /* begin > end, end > n, both */
  const size_t os = clprim_type_size(ot);
  unsigned char poison[S * 16];
  memset(poison, 0x5A, sizeof poison);
  cl_mem in = test_buffer(ctx, sizeof x, x), out = test_buffer(ctx, sizeof poison, poison);
  cl_mem bo = test_offset_buffer(ctx, ot, good_b, S, 0),
         eo = test_offset_buffer(ctx, ot, good_e, S, 0);
  cl_mem small = test_buffer(ctx, S * os - 1, NULL);
  const clprim_type f32 = CLPRIM_FLOAT;
  const clprim_buffer I = clprim_buf(in), B = clprim_buf(bo), E = clprim_buf(eo), O = clprim_buf(out),
                      none = clprim_buf(NULL);
  for (int c = 0; c < 3; ++c) {
    uint64_t bb[S], ee[S];
    memcpy(bb, good_b, sizeof bb), memcpy(ee, good_e, sizeof ee);
    bb[2] = bad_cases[c][0], ee[2] = bad_cases[c][1];
    cl_mem bad_b = test_offset_buffer(ctx, ot, bb, S, 0),
           bad_e = test_offset_buffer(ctx, ot, ee, S, 0);
    const clprim_buffer BB = clprim_buf(bad_b), BE = clprim_buf(bad_e);
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_segmented_sum(ctx, N, f32, I, S, ot, BB, BE, 0, O));
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_segmented_argmax(ctx, N, f32, I, S, ot, BB, BE, 0, O));
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_segmented_min(ctx, N, f32, I, S, ot, BB, BE, 0, O));
    clReleaseMemObject(bad_b), clReleaseMemObject(bad_e);
  }
  /* A bad segment past the good ones: the range's end is read. */
  cl_mem tail_e = test_offset_buffer(ctx, ot, (const uint64_t[]){10, 10, 40, 64, 65}, S + 1, 0);
  TEST_STATUS(
      CLPRIM_ERROR_INVALID_ARGUMENT,
      clprim_segmented_sum(ctx, N, f32, I, S + 1, ot, clprim_buf(tail_e), clprim_buf(tail_e), 0, O));
  clReleaseMemObject(tail_e);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_segmented_sum(NULL, N, f32, I, S, ot, B, E, 0, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_segmented_sum(ctx, N, (clprim_type)8, I, S, ot, B, E, 0, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_segmented_sum(ctx, N, f32, none, S, ot, B, E, 0, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_segmented_sum(ctx, N, f32, I, S, ot, none, E, 0, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_segmented_sum(ctx, N, f32, I, S, ot, B, none, 0, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_segmented_sum(ctx, N, f32, I, S, ot, B, E, 0, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_segmented_max(ctx, N, f32, I, S, ot, B, E, 4, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_segmented_argmin(ctx, N, f32, I, S, ot, B, E, CLPRIM_INDICES_64, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_segmented_sum(ctx, N, f32, I, S, ot, B, E, 0, I));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_segmented_sum(ctx, N + 1, f32, I, S, ot, B, E, 0, O));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_segmented_sum(ctx, N, f32, I, S, ot, clprim_buf(small), E, 0, O));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_segmented_sum(ctx, N, f32, I, S, ot, B, clprim_buf_at(eo, 1), 0, O));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_segmented_argmax(ctx, N, f32, I, S + 1, ot, B, E, 0, O));
  /* Offset types other than uint32 and uint64, with good segments. */
  const clprim_type bad_types[4] = {CLPRIM_INT32, CLPRIM_INT64, CLPRIM_FLOAT, (clprim_type)8};
  for (int k = 0; k < 4; ++k) {
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_segmented_sum(ctx, N, f32, I, S, bad_types[k], B, E, 0, O));
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_segmented_argmin(ctx, N, f32, I, S, bad_types[k], B, E, 0, O));
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_segmented_sum(ctx, N, f32, I, 0, bad_types[k], B, E, 0, O));
  }
  unsigned char after[sizeof poison];
  test_read(ctx, out, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  /* The good segments, then none: success (nothing written for none). */
  TEST_OK(clprim_segmented_sum(ctx, N, f32, I, S, ot, B, E, 0, O));
  float sums[S];
  test_read(ctx, out, sizeof sums, sums);
  for (int s = 0; s < S; ++s) {
    float want = 0;
    for (uint64_t i = good_b[s]; i < good_e[s]; ++i)
      want += x[i];
    if (sums[s] != want)
      fail_msg("%s offsets: sum of segment %d = %g, expected %g", clprim_type_name(ot), s, sums[s],
               want);
  }
  test_write(ctx, out, sizeof poison, poison);
  TEST_OK(clprim_segmented_sum(ctx, N, f32, I, 0, ot, B, E, 0, O));
  test_read(ctx, out, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  clReleaseMemObject(in), clReleaseMemObject(out), clReleaseMemObject(bo), clReleaseMemObject(eo);
  clReleaseMemObject(small);
}

/* CLPRIM_EXACT per segment: random segments (empty, overlapping, long)
 * over data of every exponent and cancelling pairs, float and double, both
 * offset types, against the exact reference of each segment. */
static void test_segmented_exact(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    for (clprim_type t = CLPRIM_FLOAT; t <= CLPRIM_DOUBLE; ++t) {
      if (!clprim__type_supported(ctx, t)) continue;
      const size_t es = clprim_type_size(t), n = test_small() ? 3000 : 200000;
      unsigned char *host = malloc(n * es);
      for (int k = 0; k < TEST_EXACT_KINDS; ++k) {
        test_exact_input(t, host, n, (enum test_exact_kind)k);
        const size_t segs = 1 + test_rand() % (test_small() ? 40 : 400);
        uint64_t *b = malloc(segs * 8), *e = malloc(segs * 8);
        for (size_t j = 0; j < segs; ++j) {
          b[j] = test_rand() % (n + 1);
          const uint64_t len = j % 7 == 0 ? 0 : j % 11 == 0 ? n : test_rand() % 3000;
          e[j] = b[j] + len > n ? n : b[j] + len;
        }
        const clprim_type ot = k % 2 ? CLPRIM_UINT32 : CLPRIM_UINT64;
        cl_mem in = test_buffer(ctx, n * es, host);
        cl_mem bo = test_offset_buffer(ctx, ot, b, segs, 0),
               eo = test_offset_buffer(ctx, ot, e, segs, END_PAD);
        cl_mem out = test_buffer(ctx, segs * es, NULL);
        TEST_OK(clprim_segmented_sum(ctx, n, t, clprim_buf(in), segs, ot, clprim_buf(bo),
                                     clprim_buf_at(eo, END_PAD), CLPRIM_EXACT, clprim_buf(out)));
        unsigned char *got = malloc(segs * es);
        test_read(ctx, out, segs * es, got);
        for (size_t j = 0; j < segs; ++j) {
          uint64_t bits = 0;
          memcpy(&bits, got + j * es, es);
          const uint64_t want = test_exact_reference(t, host + b[j] * es, (size_t)(e[j] - b[j]));
          if (bits != want && !(test_nan_bits(t, bits) && test_nan_bits(t, want))) {
            test_report("%s exact segmented sum (%s), segment %zu [%llu, %llu), path %s: %#llx, "
                        "exact %#llx",
                        clprim_type_name(t), test_exact_kind_name[k], j, (unsigned long long)b[j],
                        (unsigned long long)e[j], ctx_path(ctx), (unsigned long long)bits,
                        (unsigned long long)want);
            break;
          }
        }
        clReleaseMemObject(in), clReleaseMemObject(bo), clReleaseMemObject(eo);
        clReleaseMemObject(out);
        free(got), free(b), free(e);
      }
      free(host);
    }
  }
  /* An integer type refuses the flag, and nothing is written. */
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const uint64_t zero[2] = {0, 0};
  cl_mem in = test_buffer(ctx, 64, NULL), bo = test_offset_buffer(ctx, CLPRIM_UINT64, zero, 2, 0);
  cl_mem out = test_pattern(ctx, 16);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_segmented_sum(ctx, 16, CLPRIM_INT32, clprim_buf(in), 2, CLPRIM_UINT64,
                                   clprim_buf(bo), clprim_buf(bo), CLPRIM_EXACT, clprim_buf(out)));
  test_pattern_intact(ctx, out, 16, "out");
  clReleaseMemObject(in), clReleaseMemObject(bo), clReleaseMemObject(out);
  test_report_end();
}

static void test_segmented_errors(void **state) {
  (void)state;
  for (unsigned w = 0; w < TEST_OFFSET_TYPES; ++w)
    check_segmented_errors(contexts.ctx[CLPRIM_PATH_AUTO], test_offset_type[w]);
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, a flag of another family is refused with nothing written, and a
 * call that succeeds leaves "". */
static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  clprim_value v;
  uint64_t index;
  TEST_TEXT(ctx, INVALID,
            clprim_argmax(ctx, 100, CLPRIM_INT32, A, CLPRIM_SORT_DESCENDING, &v, &index, O),
            "argmax: flag 0x100 (CLPRIM_SORT_DESCENDING) is not one this call takes");
  TEST_TEXT(ctx, INVALID,
            clprim_reduce_max(ctx, 100, CLPRIM_INT32, A, CLPRIM_NTH_REJECT_NAN, &v, O),
            "CLPRIM_NTH_REJECT_NAN");
  TEST_TEXT(ctx, INVALID, clprim_argmin(ctx, 0, CLPRIM_INT32, A, 0, &v, &index, O),
            "argmin: n is 0");
  TEST_TEXT(ctx, INVALID, clprim_reduce_sum(ctx, 10, CLPRIM_INT32, A, 0, NULL, NONE),
            "sum and result");
  TEST_TEXT(ctx, SMALL, clprim_reduce_min(ctx, 10, CLPRIM_INT32, A, 0, &v, clprim_buf_at(o, 4095)),
            "result holds 0 elements from offset 4095, the call needs 1");
  TEST_TEXT(ctx, INVALID,
            clprim_segmented_max(ctx, 100, CLPRIM_INT32, A, 1, CLPRIM_UINT64, B, B,
                                 CLPRIM_TOPK_SMALLEST, O),
            "segmented_max: flag 0x80 (CLPRIM_TOPK_SMALLEST)");
  TEST_TEXT(ctx, INVALID,
            clprim_segmented_sum(ctx, 100, CLPRIM_INT32, A, 1, CLPRIM_UINT32, NONE, B, 0, O),
            "begin_offsets is required");
  TEST_TEXT(ctx, INVALID, clprim_segmented_sum(ctx, 100, CLPRIM_INT32, A, 1, CLPRIM_INT32, B, B, 0, O),
            "segmented_sum: offset_type (0) is neither CLPRIM_UINT32 nor CLPRIM_UINT64");
  TEST_TEXT(ctx, SMALL,
            clprim_segmented_argmax(ctx, 100, CLPRIM_INT32, A, 1, CLPRIM_UINT32,
                                    clprim_buf_at(b, 1024), B, 0, O),
            "begin_offsets holds 0 elements from offset 1024, the call needs 1");
  TEST_OK_NO_TEXT(ctx, clprim_reduce_sum(ctx, 100, CLPRIM_INT32, A, 0, &v, NONE));
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(void) {
  test_init("test_reduce");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),    cmocka_unit_test(test_error_texts),
      cmocka_unit_test(test_arg_int32), cmocka_unit_test(test_arg_uint32),
      cmocka_unit_test(test_arg_int64), cmocka_unit_test(test_arg_uint64),
      cmocka_unit_test(test_arg_float), cmocka_unit_test(test_arg_double),
      cmocka_unit_test(test_sum),       cmocka_unit_test(test_exact),
      cmocka_unit_test(test_arg_at_offset),
      cmocka_unit_test(test_segmented), cmocka_unit_test(test_segmented_errors),
      cmocka_unit_test(test_segmented_exact),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
