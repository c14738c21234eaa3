/* test_select: select (by predicate and by flags) and partition against a
 * CPU reference, for every type and path the device runs: pass rates 0, 1
 * and in between, patterns around the 32-element masks (alternating, only
 * the first or last, blocks of 31 / 32 / 33), sizes around every tile
 * boundary, every built-in predicate with NaN and -0.0, uint32 and uint64
 * indices, count to host and to a buffer, outputs at offsets in the input's
 * own buffer, and every error case. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one call asks for. */
struct mode {
  int values, indices, indices_64, count_host, count_buffer;
  int partition; /* 1: stable; 2: the rest reversed (CLPRIM_PARTITION_REVERSED) */
  int flags;     /* 0: predicate; 1: uint8 flags; 2: int32 flags */
};

#define MODE_COUNT 10
static struct mode mode_of(unsigned k) {
  static const struct mode modes[MODE_COUNT] = {
      {1, 1, 0, 1, 1, 0, 0}, /* everything, uint32 indices */
      {0, 1, 1, 1, 0, 0, 1}, /* uint64 indices, uint8 flags */
      {1, 0, 0, 0, 1, 0, 2}, /* values, int32 flags */
      {1, 1, 1, 1, 1, 1, 0}, /* partition */
      {0, 0, 0, 1, 1, 0, 0}, /* count only */
      {1, 1, 0, 1, 0, 1, 0}, /* partition, uint32 indices */
      {1, 1, 0, 1, 1, 1, 1}, /* partition by uint8 flags */
      {0, 0, 0, 1, 0, 0, 0}, /* the count alone, to the host */
      {1, 1, 1, 1, 1, 2, 0}, /* partition, the rest reversed */
      {1, 1, 0, 0, 1, 2, 1}, /* the same by uint8 flags, uint32 indices */
  };
  return modes[k % MODE_COUNT];
}

/* The CPU reference of the built-in predicates. */
#define REF_COMPARE(CT, member)                                                                    \
  do {                                                                                             \
    CT x = ((const CT *)data)[i], a = p->a.member, b = p->b.member;                                \
    switch (p->op) {                                                                               \
    case CLPRIM_PRED_GT: return x > a;                                                             \
    case CLPRIM_PRED_GE: return x >= a;                                                            \
    case CLPRIM_PRED_LT: return x < a;                                                             \
    case CLPRIM_PRED_LE: return x <= a;                                                            \
    case CLPRIM_PRED_EQ: return x == a;                                                            \
    case CLPRIM_PRED_NE: return x != a;                                                            \
    case CLPRIM_PRED_INSIDE: return a <= x && x < b;                                               \
    case CLPRIM_PRED_OUTSIDE: return !(a <= x && x < b);                                           \
    case CLPRIM_PRED_NONZERO: return x != 0;                                                       \
    case CLPRIM_PRED_IS_NAN: return x != x;                                                        \
    case CLPRIM_PRED_NOT_NAN: return x == x;                                                       \
    default: break;                                                                                \
    }                                                                                              \
  } while (0)
#define REF_MASK(CT, member)                                                                       \
  if (p->op == CLPRIM_PRED_MASK_EQ)                                                                \
  return (((const CT *)data)[i] & p->a.member) == p->b.member

static int ref_passes(clprim_type type, const void *data, size_t i, const clprim_predicate *p) {
  switch (type) {
  case CLPRIM_INT32: REF_MASK(int32_t, i32); REF_COMPARE(int32_t, i32); break;
  case CLPRIM_UINT32: REF_MASK(uint32_t, u32); REF_COMPARE(uint32_t, u32); break;
  case CLPRIM_INT64: REF_MASK(int64_t, i64); REF_COMPARE(int64_t, i64); break;
  case CLPRIM_UINT64: REF_MASK(uint64_t, u64); REF_COMPARE(uint64_t, u64); break;
  case CLPRIM_FLOAT: REF_COMPARE(float, f32); break;
  case CLPRIM_DOUBLE: REF_COMPARE(double, f64); break;
  }
  fail_msg("bad predicate");
  return 0;
}

/* Stores the small integer v as element i of type. */
static void put(clprim_type type, void *data, size_t i, int64_t v) {
  switch (type) {
  case CLPRIM_INT32: ((int32_t *)data)[i] = (int32_t)v; break;
  case CLPRIM_UINT32: ((uint32_t *)data)[i] = (uint32_t)v; break;
  case CLPRIM_INT64: ((int64_t *)data)[i] = v; break;
  case CLPRIM_UINT64: ((uint64_t *)data)[i] = (uint64_t)v; break;
  case CLPRIM_FLOAT: ((float *)data)[i] = (float)v; break;
  case CLPRIM_DOUBLE: ((double *)data)[i] = (double)v; break;
  }
}

static clprim_value scalar(clprim_type type, int64_t v) {
  clprim_value s;
  memset(&s, 0, sizeof s);
  put(type, &s, 0, v);
  return s;
}

static cl_mem poisoned(clprim_context *ctx, size_t bytes, unsigned char *host) {
  memset(host, 0xA5, bytes);
  return test_buffer(ctx, bytes, host);
}

static void check_poison(const unsigned char *got, size_t from, size_t to, const char *what,
                         const char *which) {
  for (size_t b = from; b < to; ++b)
    if (got[b] != 0xA5) fail_msg("%s: %s written past the end (byte %zu)", what, which, b);
}

/* One call on data (n elements, `pass` the reference verdicts) as mode says;
 * checks every output and that nothing else was written. */
static void run_and_check(clprim_context *ctx, clprim_type type, const void *data,
                          const unsigned char *pass, size_t n, const clprim_predicate *pred,
                          struct mode m, const char *what_in) {
  const size_t es = clprim_type_size(type), guard = 5, total = n + guard;
  const size_t is = m.indices_64 ? 8 : 4;
  char what[256];
  snprintf(what, sizeof what, "%s [values %d indices %d%s count %d/%d %s%s]", what_in, m.values,
           m.indices, m.indices_64 ? " (64)" : "", m.count_host, m.count_buffer,
           m.partition == 2 ? "partition (rest reversed)" : m.partition ? "partition" : "select",
           m.flags == 1 ? ", uint8 flags" : m.flags == 2 ? ", int32 flags" : "");

  size_t *order = malloc((n + 1) * sizeof *order), count = 0;
  assert_non_null(order);
  for (size_t i = 0; i < n; ++i)
    if (pass[i]) order[count++] = i;
  size_t written = count;
  if (m.partition == 1)
    for (size_t i = 0; i < n; ++i)
      if (!pass[i]) order[written++] = i;
  if (m.partition == 2)
    for (size_t i = n; i-- > 0;)
      if (!pass[i]) order[written++] = i;

  unsigned char *host_values = malloc(total * es), *host_indices = malloc(total * 8),
                host_count[16];
  assert_non_null(host_values);
  assert_non_null(host_indices);
  cl_mem in = test_buffer(ctx, total * es, data), flags = NULL;
  if (m.flags) {
    size_t fs = m.flags == 1 ? 1 : 4;
    unsigned char *f = calloc(total, fs);
    assert_non_null(f);
    for (size_t i = 0; i < n; ++i) {
      /* Any nonzero value passes. */
      int v = pass[i] ? (int)(test_rand() % 255) + 1 : 0;
      if (m.flags == 1)
        f[i] = (unsigned char)v;
      else
        ((int32_t *)f)[i] = v == 255 ? -1 : v;
    }
    flags = test_buffer(ctx, total * fs, f);
    free(f);
  }
  uint64_t count_got = 0xdeadbeef;
  cl_mem values = m.values ? poisoned(ctx, total * es, host_values) : NULL;
  cl_mem indices = m.indices ? poisoned(ctx, total * is, host_indices) : NULL;
  cl_mem count_buffer = m.count_buffer ? poisoned(ctx, 16, host_count) : NULL;
  const unsigned call_flags = (m.indices_64 ? CLPRIM_INDICES_64 : 0u) |
                              (m.partition == 2 ? CLPRIM_PARTITION_REVERSED : 0u);
  const clprim_buffer values_out = clprim_buf(values), indices_out = clprim_buf(indices),
                      count_out = clprim_buf(count_buffer);
  uint64_t *const count_host = m.count_host ? &count_got : NULL;

  if (m.flags && m.partition)
    TEST_OK(clprim_partition_flagged(ctx, n, type, clprim_buf(in), clprim_buf(flags),
                                     CLPRIM_FLAGS_UINT8, call_flags, values_out, indices_out,
                                     count_host, count_out));
  else if (m.flags)
    TEST_OK(clprim_select_flagged(ctx, n, type, clprim_buf(m.values ? in : NULL), clprim_buf(flags),
                                  m.flags == 1 ? CLPRIM_FLAGS_UINT8 : CLPRIM_FLAGS_INT32,
                                  call_flags, values_out, indices_out, count_host, count_out));
  else if (m.partition)
    TEST_OK(clprim_partition(ctx, n, type, clprim_buf(in), pred, call_flags, values_out,
                             indices_out, count_host, count_out));
  else if (!m.values && !m.indices && !m.count_buffer) /* the count alone */
    TEST_OK(clprim_select(ctx, n, type, clprim_buf(in), pred, 0, clprim_buf(NULL),
                          clprim_buf(NULL), &count_got, clprim_buf(NULL)));
  else
    TEST_OK(clprim_select(ctx, n, type, clprim_buf(in), pred, call_flags, values_out, indices_out,
                          count_host, count_out));

  if (m.count_host && count_got != count)
    fail_msg("%s: count %llu, expected %zu", what, (unsigned long long)count_got, count);
  if (values) {
    test_read(ctx, values, total * es, host_values);
    for (size_t k = 0; k < written; ++k)
      if (memcmp(host_values + k * es, (const unsigned char *)data + order[k] * es, es) != 0)
        fail_msg("%s: value %zu is not element %zu", what, k, order[k]);
    check_poison(host_values, written * es, total * es, what, "values");
  }
  if (indices) {
    test_read(ctx, indices, total * is, host_indices);
    for (size_t k = 0; k < written; ++k) {
      uint64_t got = m.indices_64 ? ((uint64_t *)host_indices)[k] : ((uint32_t *)host_indices)[k];
      if (got != order[k])
        fail_msg("%s: index %zu is %llu, expected %zu", what, k, (unsigned long long)got, order[k]);
    }
    check_poison(host_indices, written * is, total * is, what, "indices");
  }
  if (count_buffer) {
    test_read(ctx, count_buffer, 16, host_count);
    uint64_t c;
    memcpy(&c, host_count, 8);
    if (c != count) fail_msg("%s: count buffer %llu, expected %zu", what, (unsigned long long)c, count);
    check_poison(host_count, 8, 16, what, "count buffer");
  }

  clReleaseMemObject(in);
  if (flags) clReleaseMemObject(flags);
  if (values) clReleaseMemObject(values);
  if (indices) clReleaseMemObject(indices);
  if (count_buffer) clReleaseMemObject(count_buffer);
  free(order);
  free(host_values);
  free(host_indices);
}

/* ------------------------------------------------- patterns and sizes */

#define PATTERN_COUNT 10
static const char *const pattern_names[PATTERN_COUNT] = {
    "none pass", "all pass", "p=0.5", "p=0.01", "alternating", "only the first",
    "only the last", "blocks of 31", "blocks of 32", "blocks of 33"};

static int pattern_passes(unsigned pattern, size_t i, size_t n) {
  switch (pattern) {
  case 0: return 0;
  case 1: return 1;
  case 2: return test_uniform() < 0.5;
  case 3: return test_uniform() < 0.01;
  case 4: return (int)(i & 1);
  case 5: return i == 0;
  case 6: return i == n - 1;
  case 7: return (i / 31) % 2 == 0;
  case 8: return (i / 32) % 2 == 1;
  default: return (i / 33) % 2 == 0;
  }
}

/* Data whose elements pass GE 10 exactly where the pattern says: passing
 * ones in [10, 110), failing ones in [0, 10) (negative for signed types). */
static void pattern_case(clprim_context *ctx, clprim_type type, size_t n, unsigned pattern,
                         struct mode m) {
  const size_t es = clprim_type_size(type);
  unsigned char *data = malloc((n + 5) * es), *pass = malloc(n + 1);
  assert_non_null(data);
  assert_non_null(pass);
  int is_signed = type == CLPRIM_INT32 || type == CLPRIM_INT64 || type >= CLPRIM_FLOAT;
  for (size_t i = 0; i < n + 5; ++i) {
    int p = i < n && pattern_passes(pattern, i, n);
    if (i < n) pass[i] = (unsigned char)p;
    int64_t r = (int64_t)(test_rand() % 100);
    put(type, data, i, p ? 10 + r : is_signed ? 9 - r : r % 10);
  }
  clprim_predicate pred;
  memset(&pred, 0, sizeof pred);
  pred.op = CLPRIM_PRED_GE;
  pred.a = scalar(type, 10);
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  char what[160];
  snprintf(what, sizeof what, "%s n=%zu %s, path %s%s", clprim_type_name(type), n,
           pattern_names[pattern], clprim_path_name(info.path),
           clprim__select_single_pass_tile(ctx, type) ? " (single pass)" : "");
  run_and_check(ctx, type, data, pass, n, &pred, m, what);
  free(data);
  free(pass);
}

/* Every pattern at sizes around the tiles of both algorithms; on nv_ptx
 * the single-pass kernel (the default) and the three phases both run. */
static void type_on_context(clprim_context *ctx, clprim_type type) {
  const size_t tile = clprim__select_tile(ctx);
  const size_t sp_tile = clprim__select_single_pass_tile(ctx, type);
  size_t sizes[20], count = 0;
  const size_t fixed[] = {0, 1, 31, 32, 33, 65};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i) sizes[count++] = fixed[i];
  sizes[count++] = tile - 1, sizes[count++] = tile, sizes[count++] = tile + 1;
  sizes[count++] = 2 * tile + 33;
  if (sp_tile) {
    sizes[count++] = sp_tile - 1, sizes[count++] = sp_tile, sizes[count++] = sp_tile + 1;
    sizes[count++] = 3 * sp_tile + 5;
  }
  if (!test_small()) sizes[count++] = ((size_t)1 << 20) + 12345;
  for (size_t s = 0; s < count; ++s)
    for (unsigned pattern = 0; pattern < PATTERN_COUNT; ++pattern) {
      if (test_small()) {
        /* Oclgrind is slow: one rotating mode, a third of the patterns. */
        if ((pattern + s) % 3 != 0 && pattern > 1) continue;
        pattern_case(ctx, type, sizes[s], pattern, mode_of((unsigned)(s + pattern)));
      } else {
        /* At 2^20 + 12345 (many tiles, each mode already at the sizes
         * below) two modes a pattern, turning, so that every mode meets
         * the largest size: it ran 100 cases a type and path. */
        const int largest = sizes[s] > ((size_t)1 << 20);
        for (unsigned k = 0; k < MODE_COUNT; ++k)
          if (!largest || (k + MODE_COUNT - pattern) % (MODE_COUNT / 2) == 0)
            pattern_case(ctx, type, sizes[s], pattern, mode_of(k));
      }
    }
}

static void test_type(clprim_type type) {
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    if (!test_has_type(ctx, type)) continue;
    type_on_context(ctx, type);
    if (clprim__select_single_pass_tile(ctx, type)) {
      printf("%s on %s: again with the three-phase algorithm\n", clprim_type_name(type),
             clprim_path_name((clprim_path)p));
      TEST_OK(clprim__tune(ctx, "select.single_pass=0"));
      type_on_context(ctx, type);
      TEST_OK(clprim__tune(ctx, "select.single_pass=-1"));
    }
  }
}

TEST_EVERY_TYPE

/* --------------------------------------------------------- predicates */

/* Every built-in predicate on random data (floats with NaN, -0.0 and 0.0
 * mixed in), parameters taken from the data, 0.0 and -0.0. */
static void test_predicates(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    const size_t n = test_small() ? 300 : clprim__select_tile(ctx) * 3 + 7;
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      clprim_type type = (clprim_type)t;
      if (!clprim__type_supported(ctx, type)) continue;
      const size_t es = clprim_type_size(type);
      const int is_float = type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE;
      unsigned char *data = malloc((n + 5) * es), *pass = malloc(n);
      assert_non_null(data);
      assert_non_null(pass);
      test_random(type, data, n + 5, 0);
      if (is_float)
        for (size_t i = 0; i < n; ++i) {
          unsigned r = (unsigned)(test_rand() % 10);
          double special = r == 0 ? NAN : r == 1 ? -0.0 : r == 2 ? 0.0 : 2.0;
          if (r < 3 && type == CLPRIM_FLOAT) ((float *)data)[i] = (float)special;
          if (r < 3 && type == CLPRIM_DOUBLE) ((double *)data)[i] = special;
        }
      for (int op = 0; op < CLPRIM_PRED_COUNT; ++op) {
        if (op == CLPRIM_PRED_MASK_EQ && is_float) continue;
        /* Three parameter choices: from the data; zero; negative zero. */
        for (int choice = 0; choice < (is_float ? 3 : 2); ++choice) {
          clprim_predicate pred;
          memset(&pred, 0, sizeof pred);
          pred.op = (clprim_predicate_op)op;
          if (choice == 0) {
            memcpy(&pred.a, data + (test_rand() % n) * es, es);
            memcpy(&pred.b, data + (test_rand() % n) * es, es);
            if (ref_passes(type, &pred.b, 0, &(clprim_predicate){CLPRIM_PRED_LT, pred.a, pred.a})) {
              clprim_value s = pred.a; /* keep a <= b so INSIDE is not empty */
              pred.a = pred.b, pred.b = s;
            }
          } else if (choice == 1) {
            pred.a = scalar(type, 0);
            pred.b = scalar(type, 1);
          } else {
            if (type == CLPRIM_FLOAT) pred.a.f32 = -0.0f;
            else pred.a.f64 = -0.0;
            pred.b = scalar(type, 0);
          }
          if (op == CLPRIM_PRED_MASK_EQ) {
            pred.a = scalar(type, 5);
            pred.b = scalar(type, choice ? 0 : 1);
          }
          for (size_t i = 0; i < n; ++i) pass[i] = (unsigned char)ref_passes(type, data, i, &pred);
          char what[160];
          snprintf(what, sizeof what, "%s op %d choice %d n=%zu, path %s", clprim_type_name(type),
                   op, choice, n, clprim_path_name((clprim_path)p));
          run_and_check(ctx, type, data, pass, n, &pred, mode_of((unsigned)(op % 2 ? 0 : 3)), what);
        }
      }
      free(data);
      free(pass);
    }
  }
}

/* -------------------------------------------------------- expressions */

static unsigned program_count(const clprim_context *ctx) {
  unsigned k = 0;
  for (const struct clprim_program_entry *e = ctx->programs; e; e = e->next) ++k;
  return k;
}

/* User expressions over x and i: results, partition, one build per
 * distinct expression, and a build error that writes nothing. */
/* buf still holds the bytes of want (a refused call wrote nothing). */
static void check_still(clprim_context *ctx, cl_mem buf, const void *want, size_t bytes) {
  unsigned char *now = malloc(bytes);
  assert_non_null(now);
  test_read(ctx, buf, bytes, now);
  assert_memory_equal(now, want, bytes);
  free(now);
}

static void test_expressions(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    const size_t n = test_small() ? 200 : clprim__select_tile(ctx) * 2 + 5;
    float *data = malloc((n + 5) * sizeof *data);
    int32_t *ints = malloc((n + 5) * sizeof *ints);
    unsigned char *pass = malloc(n);
    assert_non_null(data);
    assert_non_null(ints);
    assert_non_null(pass);
    test_random(CLPRIM_FLOAT, data, n + 5, 0);
    test_random(CLPRIM_INT32, ints, n + 5, 0);
    char what[128];
    snprintf(what, sizeof what, "expression, path %s", clprim_path_name((clprim_path)p));

    const char *float_expr = "x > 0.5f && (i & 1) == 0";
    for (size_t i = 0; i < n; ++i) pass[i] = data[i] > 0.5f && (i & 1) == 0;
    /* Rounds: select, partition, the partition with its rest reversed (with
     * parameters: a pipeline's filter). */
    for (int round = 0; round < 3; ++round) {
      const size_t es = 4, total = n + 5;
      unsigned char *got = malloc(total * 8);
      assert_non_null(got);
      cl_mem in = test_buffer(ctx, total * es, data);
      cl_mem values = poisoned(ctx, total * es, got), indices = poisoned(ctx, total * 8, got);
      uint64_t count = 0;
      const double params[8] = {0.5};
#define EXPR_CALL(fn)                                                                              \
  fn(ctx, n, CLPRIM_FLOAT, clprim_buf(in), float_expr, CLPRIM_INDICES_64, clprim_buf(values),      \
     clprim_buf(indices), &count, clprim_buf(NULL))
#define EXPR_ROUND                                                                                 \
  (round == 2 ? clprim_partition_expr_params(ctx, n, CLPRIM_FLOAT, clprim_buf(in),                 \
                                             "x > p0 && (i & 1) == 0", params,                     \
                                             CLPRIM_INDICES_64 | CLPRIM_PARTITION_REVERSED,        \
                                             clprim_buf(values), clprim_buf(indices), &count,      \
                                             clprim_buf(NULL))                                     \
   : round     ? EXPR_CALL(clprim_partition_expr)                                                  \
               : EXPR_CALL(clprim_select_expr))
      TEST_OK(EXPR_ROUND);
      /* The same call again builds nothing (each kernel of an expression
       * is built once). */
      unsigned programs = program_count(ctx);
      TEST_OK(EXPR_ROUND);
#undef EXPR_ROUND
#undef EXPR_CALL
      assert_int_equal(program_count(ctx), programs);
      size_t want = 0, k = 0;
      for (size_t i = 0; i < n; ++i) want += pass[i];
      assert_int_equal(count, want);
      test_read(ctx, indices, total * 8, got);
      for (int part = 1; part >= (round ? 0 : 1); --part)
        for (size_t j = 0; j < n; ++j) {
          const size_t i = part == 0 && round == 2 ? n - 1 - j : j;
          if (pass[i] == part) {
            if (((uint64_t *)got)[k] != i) fail_msg("%s: index %zu is not %zu", what, k, i);
            ++k;
          }
        }
      check_poison(got, k * 8, total * 8, what, "indices");
      uint64_t *positions = malloc(k * 8 + 1);
      assert_non_null(positions);
      memcpy(positions, got, k * 8);
      test_read(ctx, values, total * es, got);
      for (size_t j = 0; j < k; ++j)
        if (memcmp(got + j * es, &data[positions[j]], es) != 0)
          fail_msg("%s: value %zu is not element %llu", what, j, (unsigned long long)positions[j]);
      check_poison(got, k * es, total * es, what, "values");
      free(positions);
      clReleaseMemObject(in);
      clReleaseMemObject(values);
      clReleaseMemObject(indices);
      free(got);
    }

    /* An integer expression over two lines (the line break is a space). */
    for (size_t i = 0; i < n; ++i) pass[i] = ints[i] % 3 == 0 || i < 5;
    {
      cl_mem in = test_buffer(ctx, (n + 5) * 4, ints);
      unsigned char *got = malloc((n + 5) * 4);
      assert_non_null(got);
      cl_mem values = poisoned(ctx, (n + 5) * 4, got);
      uint64_t count = 0;
#define INT_EXPR_CALL(expression)                                                                  \
  clprim_select_expr(ctx, n, CLPRIM_INT32, clprim_buf(in), expression, 0, clprim_buf(values),      \
                     clprim_buf(NULL), &count, clprim_buf(NULL))
      TEST_OK(INT_EXPR_CALL("x % 3 == 0\n|| i < 5"));
      test_read(ctx, values, (n + 5) * 4, got);
      size_t k = 0;
      for (size_t i = 0; i < n; ++i)
        if (pass[i] && ((int32_t *)got)[k++] != ints[i]) fail_msg("%s: int value %zu", what, k - 1);
      assert_int_equal(count, k);
      check_poison(got, k * 4, (n + 5) * 4, what, "values");

      /* Does not compile: the build status, a log, nothing written. (Not
       * under Oclgrind, whose API check reports the failed build.) */
      clprim_device_info info;
      clprim_context_get_info(ctx, &info, sizeof info);
      if (!strstr(info.platform_name, "Oclgrind")) {
        count = 12345;
        int st = INT_EXPR_CALL("x >");
        if (st != CL_BUILD_PROGRAM_FAILURE && st != CL_COMPILE_PROGRAM_FAILURE)
          fail_msg("%s: a bad expression returned %s", what, clprim_status_name(st));
        assert_true(strlen(clprim_context_build_log(ctx)) > 0);
        assert_int_equal(count, 12345);
        check_still(ctx, values, got, (n + 5) * 4);
      }
      TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, INT_EXPR_CALL(""));
      TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, INT_EXPR_CALL(NULL));
      /* Text that would reach outside the expression is refused before any
       * build, by select_expr and partition_expr alike, writing nothing. */
      static const char *const injections[] = {
          "x > 0) || (1", "x > 0; }",          "x > 0 // the rest", "x > 0 /* c */",
          "#define A 1",  "x > 0 \\",          "(x > 0",            "x > 0]",
          "\"x\" != 0",   "x > 0 ?\?) || (1",
          "1) ; } __kernel void k(__global int *o) { o[0] = 1; (1"};
      for (size_t j = 0; j < sizeof injections / sizeof *injections; ++j) {
        count = 12345;
        if (INT_EXPR_CALL(injections[j]) != CLPRIM_ERROR_INVALID_ARGUMENT ||
            clprim_partition_expr(ctx, n, CLPRIM_INT32, clprim_buf(in), injections[j], 0,
                                  clprim_buf(values), clprim_buf(NULL), &count,
                                  clprim_buf(NULL)) != CLPRIM_ERROR_INVALID_ARGUMENT)
          fail_msg("%s: the expression \"%s\" was not refused", what, injections[j]);
        assert_int_equal(count, 12345);
      }
      check_still(ctx, values, got, (n + 5) * 4);
#undef INT_EXPR_CALL
      free(got);
      clReleaseMemObject(in);
      clReleaseMemObject(values);
    }
    free(data);
    free(ints);
    free(pass);
  }
}

/* ------------------------------------------------------------- errors */

/* Every error returns its status and leaves every output as it was. */
static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t n = 100;
  float data[100];
  unsigned char before[800], after[800];
  for (size_t i = 0; i < n; ++i) data[i] = (float)test_uniform();
  memset(before, 0x5A, sizeof before);
  cl_mem in = test_buffer(ctx, n * 4, data), values = test_buffer(ctx, n * 4, before),
         indices = test_buffer(ctx, n * 4, before), small = test_buffer(ctx, n * 4 - 4, before),
         count_buffer = test_buffer(ctx, 8, before), tiny = test_buffer(ctx, 4, before),
         flags = test_buffer(ctx, n, before);
  clprim_predicate pred;
  memset(&pred, 0, sizeof pred);
  pred.op = CLPRIM_PRED_GT;
  pred.a.f32 = 0.5f;
  const clprim_buffer IN = clprim_buf(in), V = clprim_buf(values), I = clprim_buf(indices),
                      C = clprim_buf(count_buffer), NONE = clprim_buf(NULL);
  const unsigned I64 = CLPRIM_INDICES_64;
  uint64_t count = 77;

  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_select(NULL, n, CLPRIM_FLOAT, IN, &pred, 0, V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_select(ctx, n, CLPRIM_FLOAT, NONE, &pred, 0, V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_select(ctx, n, CLPRIM_FLOAT, IN, NULL, 0, V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_select(ctx, n, (clprim_type)CLPRIM_TYPE_COUNT, IN, &pred, 0, V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 1u, V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, I64 << 1, V, I, NULL, C));
  /* The reversed rest is a partition's order; select refuses it. */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, CLPRIM_PARTITION_REVERSED, V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_select_expr(ctx, n, CLPRIM_FLOAT, IN, "x > 0.5f", CLPRIM_PARTITION_REVERSED, V,
                                 I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_partition(ctx, n, CLPRIM_FLOAT, IN, &pred, CLPRIM_PARTITION_REVERSED << 1, V, I,
                               NULL, C));
  /* No output at all (API 0.1: a NULL output struct, a NULL count of
   * clprim_select_count), for every call of the family. */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, NONE, NONE, NULL, NONE));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, I64, NONE, NONE, NULL, NONE));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_partition(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, NONE, NONE, NULL, NONE));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_select_expr(ctx, n, CLPRIM_FLOAT, IN, "x > 0.5f", 0, NONE, NONE, NULL, NONE));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_partition_expr(ctx, n, CLPRIM_FLOAT, IN, "x > 0.5f", 0, NONE, NONE, NULL, NONE));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_select_flagged(ctx, n, CLPRIM_FLOAT, IN, clprim_buf(flags), CLPRIM_FLAGS_UINT8, 0,
                                    NONE, NONE, NULL, NONE));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_partition_flagged(ctx, n, CLPRIM_FLOAT, IN, clprim_buf(flags), CLPRIM_FLAGS_UINT8,
                                       0, NONE, NONE, NULL, NONE));
  pred.op = (clprim_predicate_op)CLPRIM_PRED_COUNT;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, V, I, NULL, C));
  pred.op = CLPRIM_PRED_MASK_EQ; /* integers only */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, V, I, NULL, C));
  pred.op = CLPRIM_PRED_GT;

  /* Outputs too small for n, whatever the count would be. */
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, clprim_buf(small), I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_partition(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, clprim_buf(small), I, NULL, C));
  /* n * 8 bytes needed */
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, I64, V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, V, I, NULL, clprim_buf(tiny)));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_select(ctx, n + 1, CLPRIM_FLOAT, IN, &pred, 0, V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_select(ctx, n, CLPRIM_INT64, IN, &pred, 0, V, I, NULL, C));
  /* Ranges that run past the end. */
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, clprim_buf_at(values, 1), I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, V, I, NULL, clprim_buf_at(count_buffer, 1)));
  /* (API 0.1 chose 64-bit indices by itself for n > 2^32, so its call here
   * had them; uint32 indices for such n are now an error of their own.) */
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE,
              clprim_select(ctx, SIZE_MAX / 4, CLPRIM_INT64, IN, &pred, I64, V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_select(ctx, ((size_t)1 << 32) + 1, CLPRIM_FLOAT, IN, &pred, 0, V, I, NULL, C));

  /* Shared buffers. */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, /* output is the input */
              clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, IN, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, /* values are the indices */
              clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, I, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, /* the count inside the values */
              clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, V, I, NULL, clprim_buf(values)));

  /* Flags. */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_select_flagged(ctx, n, CLPRIM_FLOAT, IN, NONE, CLPRIM_FLAGS_UINT8, 0, V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_select_flagged(ctx, n, CLPRIM_FLOAT, IN, clprim_buf(flags), (clprim_flag_type)2, 0,
                                    V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_select_flagged(ctx, n, CLPRIM_FLOAT, IN, clprim_buf(flags), CLPRIM_FLAGS_INT32, 0,
                                    V, I, NULL, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, /* values need the input */
              clprim_select_flagged(ctx, n, CLPRIM_FLOAT, NONE, clprim_buf(flags), CLPRIM_FLAGS_UINT8, 0,
                                    V, I, NULL, C));

  /* A device without fp64 refuses double. */
  int had_fp64 = ctx->info.has_fp64;
  ctx->info.has_fp64 = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE, clprim_select(ctx, 10, CLPRIM_DOUBLE, IN, &pred, 0, V, I, NULL, C));
  ctx->info.has_fp64 = had_fp64;

  /* A buffer of another OpenCL context. */
  cl_mem foreign = test_foreign_buffer(ctx, n * 8);
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_select(ctx, n, CLPRIM_FLOAT, clprim_buf(foreign), &pred, 0, V, I, NULL, C));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, V, clprim_buf(foreign), NULL, C));
  clReleaseMemObject(foreign);

  cl_mem outputs[3] = {values, indices, count_buffer};
  const size_t sizes[3] = {n * 4, n * 4, 8};
  for (int k = 0; k < 3; ++k) {
    test_read(ctx, outputs[k], sizes[k], after);
    if (memcmp(after, before, sizes[k]) != 0) fail_msg("a failed call wrote output %d", k);
  }
  test_read(ctx, in, n * 4, after);
  assert_memory_equal(after, data, n * 4);

  /* n = 0: count 0, nothing else written. */
  TEST_OK(clprim_select(ctx, 0, CLPRIM_FLOAT, IN, &pred, 0, NONE, NONE, &count, NONE));
  assert_int_equal(count, 0);
  count = 5;
  TEST_OK(clprim_select(ctx, 0, CLPRIM_FLOAT, IN, &pred, 0, V, I, &count, C));
  assert_int_equal(count, 0);
  test_read(ctx, values, n * 4, after);
  assert_memory_equal(after, before, n * 4);
  uint64_t device_count = 1;
  test_read(ctx, count_buffer, 8, &device_count);
  assert_int_equal(device_count, 0);

  cl_mem all[7] = {in, values, indices, small, count_buffer, tiny, flags};
  for (int k = 0; k < 7; ++k) clReleaseMemObject(all[k]);
}

/* Outputs that are ranges of the input's own buffer. One buffer holds the
 * input (elements [0, n)), then the values, the uint32 indices and the
 * count, each at its own element offset (unaligned ones through a temporary
 * copy, aligned ones as sub-buffers): the results are right and no other
 * byte changes. Ranges that overlap the input or each other (also through a
 * sub-buffer) are refused and write nothing. */
static void test_ranges(void **state) {
  (void)state;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    const size_t n = test_small() ? 150 : clprim__select_tile(ctx) * 2 + 9;
    const size_t align = ctx->base_align / 4; /* elements of 4 bytes */
    const size_t aligned_at = (n + align - 1) / align * align;
    const size_t total = aligned_at + 3 * n + 40; /* 4-byte elements */
    float *host = malloc(total * 4), *got = malloc(total * 4);
    unsigned char *pass = malloc(n);
    assert_non_null(host);
    assert_non_null(got);
    assert_non_null(pass);
    memset(host, 0xA5, total * 4);
    test_random(CLPRIM_FLOAT, host, n, 0);
    clprim_predicate pred;
    memset(&pred, 0, sizeof pred);
    pred.op = CLPRIM_PRED_LT;
    pred.a.f32 = 0.25f;
    size_t want = 0;
    for (size_t i = 0; i < n; ++i) want += (pass[i] = host[i] < 0.25f);
    cl_mem big = test_buffer(ctx, total * 4, host);
    char what[128];

    /* values at offset n (right after the input) or n + 1, or at the first
     * aligned offset past the input; indices right after the values; the
     * count (uint64 elements) after them. */
    const size_t value_offsets[3] = {n, n + 1, aligned_at};
    for (int v = 0; v < 3; ++v) {
      const size_t vo = value_offsets[v], io = vo + n + (size_t)v, co = (io + n + 1) / 2 + 1;
      snprintf(what, sizeof what, "ranges, path %s, values at %zu, indices at %zu, count at %zu",
               clprim_path_name((clprim_path)p), vo, io, co);
      uint64_t count = 0;
      if (v % 2 == 0)
        TEST_OK(clprim_select(ctx, n, CLPRIM_FLOAT, clprim_buf(big), &pred, 0, clprim_buf_at(big, vo),
                              clprim_buf_at(big, io), &count, clprim_buf_at(big, co)));
      else /* the same through an expression */
        TEST_OK(clprim_select_expr(ctx, n, CLPRIM_FLOAT, clprim_buf(big), "x < 0.25f", 0,
                                   clprim_buf_at(big, vo), clprim_buf_at(big, io), &count,
                                   clprim_buf_at(big, co)));
      if (count != want) fail_msg("%s: count %llu, expected %zu", what, (unsigned long long)count, want);
      test_read(ctx, big, total * 4, got);
      float *expect = malloc(total * 4);
      assert_non_null(expect);
      memcpy(expect, host, total * 4);
      for (size_t i = 0, k = 0; i < n; ++i)
        if (pass[i]) {
          expect[vo + k] = host[i];
          uint32_t index = (uint32_t)i;
          memcpy(&expect[io + k], &index, 4);
          ++k;
        }
      uint64_t c = want;
      memcpy(&expect[2 * co], &c, 8);
      for (size_t e = 0; e < total; ++e)
        if (memcmp(&got[e], &expect[e], 4) != 0)
          fail_msg("%s: element %zu of the buffer is wrong", what, e);
      free(expect);
      test_write(ctx, big, total * 4, host); /* as it was, for the next case */
    }

    /* Overlaps: nothing written, the status INVALID_ARGUMENT. */
    uint64_t count = 12345;
    const clprim_buffer IN = clprim_buf(big), NONE = clprim_buf(NULL);
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, /* values over the input's second half */
                clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, clprim_buf_at(big, n / 2), NONE,
                              &count, NONE));
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, /* values over the input's last element */
                clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, clprim_buf_at(big, n - 1), NONE,
                              &count, NONE));
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, /* the same with partition */
                clprim_partition(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, clprim_buf_at(big, n / 2),
                                 NONE, &count, NONE));
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, /* the input after the values */
                clprim_select(ctx, n, CLPRIM_FLOAT, clprim_buf_at(big, n), &pred, 0,
                              clprim_buf_at(big, 1), NONE, &count, NONE));
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, /* indices over the values */
                clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, clprim_buf_at(big, n),
                              clprim_buf_at(big, 2 * n - 1), &count, NONE));
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, /* 64-bit indices over the count */
                clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, CLPRIM_INDICES_64, NONE,
                              clprim_buf_at(big, (n + 1) / 2), &count,
                              clprim_buf_at(big, (n + 1) / 2 + n - 1)));
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, /* the count inside the input */
                clprim_select(ctx, n, CLPRIM_FLOAT, IN, &pred, 0, NONE, NONE, &count,
                              clprim_buf_at(big, 3)));
    /* A sub-buffer of the input's buffer (its first n elements) as the
     * values, then as the input. */
    cl_buffer_region region = {0, n * 4};
    cl_int err;
    cl_mem sub = clCreateSubBuffer(big, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    assert_int_equal(err, CL_SUCCESS);
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_select(ctx, n, CLPRIM_FLOAT, clprim_buf_at(big, n / 2), &pred, 0,
                              clprim_buf(sub), NONE, &count, NONE));
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_select(ctx, n, CLPRIM_FLOAT, clprim_buf(sub), &pred, 0,
                              clprim_buf_at(big, n - 1), NONE, &count, NONE));
    clReleaseMemObject(sub);
    assert_int_equal(count, 12345);
    test_read(ctx, big, total * 4, got);
    snprintf(what, sizeof what, "overlapping ranges, path %s", clprim_path_name((clprim_path)p));
    for (size_t e = 0; e < total; ++e)
      if (memcmp(&got[e], &host[e], 4) != 0) fail_msg("%s: a refused call wrote element %zu", what, e);

    clReleaseMemObject(big);
    free(host);
    free(got);
    free(pass);
  }
}

/* n beyond 2^32 (uint32 elements, element i holds i mod 2^32), where the
 * device has room: all but two elements pass, so the count and the output
 * positions pass 2^32; values (and 64-bit indices where a buffer of 8 n
 * bytes can be allocated) sampled. On nv_ptx both algorithms run. */
static void check_beyond(clprim_context *ctx, cl_mem in, size_t n, cl_mem values, cl_mem indices,
                         const char *what) {
  const uint64_t skip1 = 3, skip2 = ((uint64_t)1 << 32) + 4;
  uint64_t count = 0;
  /* (API 0.1 chose 64-bit indices by itself for n > 2^32; now the flag.) */
  TEST_OK(clprim_select_expr(ctx, n, CLPRIM_UINT32, clprim_buf(in), "i != 3 && i != 4294967300UL",
                             indices ? CLPRIM_INDICES_64 : 0, clprim_buf(values),
                             clprim_buf(indices), &count, clprim_buf(NULL)));
  if (count != n - 2) fail_msg("%s: count %llu, expected %zu", what, (unsigned long long)count, n - 2);
  for (int k = 0; k < 3000; ++k) {
    const uint64_t pos = k < 1000 ? test_rand() % (n - 2)
                         : k < 2000 ? skip2 - 500 + (uint64_t)(k - 1000)
                                    : (uint64_t)(k - 2000) < 10 ? (uint64_t)(k - 2000)
                                                                : n - 2 - (uint64_t)(3000 - k);
    const uint64_t want = pos + (pos >= skip1) + (pos + 1 >= skip2);
    cl_uint got = test_read_u32(ctx, values, (size_t)pos);
    if (got != (cl_uint)want)
      fail_msg("%s: value %llu is %u, expected %u", what, (unsigned long long)pos, got, (cl_uint)want);
    if (indices) {
      uint64_t index;
      cl_int err = clEnqueueReadBuffer(clprim_context_queue(ctx), indices, CL_TRUE, pos * 8, 8,
                                       &index, 0, NULL, NULL);
      assert_int_equal(err, CL_SUCCESS);
      if (index != want)
        fail_msg("%s: index %llu is %llu, expected %llu", what, (unsigned long long)pos,
                 (unsigned long long)index, (unsigned long long)want);
    }
  }
  printf("%s: passed%s\n", what, indices ? " (values and 64-bit indices)" : " (values)");
}

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
    if (!test_has_room(ctx, bytes, 2 * bytes + bytes / 4, "n > 2^32")) continue;
    clprim_device_info info;
    clprim_context_get_info(ctx, &info, sizeof info);
    const int with_indices =
        info.max_alloc_size >= 2 * bytes && info.global_mem_size >= 4 * bytes + bytes / 4;
    cl_mem in = test_buffer(ctx, bytes, NULL), values = test_buffer(ctx, bytes, NULL);
    cl_mem indices = with_indices ? test_buffer(ctx, 2 * bytes, NULL) : NULL;
    test_fill_u32(ctx, in, n, 0, 1);
    char what[96];
    snprintf(what, sizeof what, "n > 2^32 on %s", clprim_path_name(info.path));
    check_beyond(ctx, in, n, values, indices, what);
    if (clprim__select_single_pass_tile(ctx, CLPRIM_UINT32)) {
      TEST_OK(clprim__tune(ctx, "select.single_pass=0"));
      snprintf(what, sizeof what, "n > 2^32 on %s, three phases", clprim_path_name(info.path));
      check_beyond(ctx, in, n, values, indices, what);
      TEST_OK(clprim__tune(ctx, "select.single_pass=-1"));
    }
    clReleaseMemObject(in);
    clReleaseMemObject(values);
    if (indices) clReleaseMemObject(indices);
  }
}

/* ------------------------------------------------ three-way partition */
/* Elements 0..99 of the type (NaN among floats), predicates x < a and
 * x >= b over them: parts of every size (empty ones too), against the
 * reference, values and indices (both widths), counts on host and device.
 * The tests given as built-in predicates (mode 0), as flag arrays of uint8
 * or int32 made from them (mode 1), or as expressions (mode 2; the first
 * also refuses element 3, so i is used). */
static void check_partition3(clprim_context *ctx, clprim_type type, size_t n, int64_t lo,
                             int64_t hi, unsigned variant, int mode) {
  const size_t es = clprim_type_size(type), m = n ? n : 1;
  unsigned char *data = malloc(m * es);
  for (size_t i = 0; i < n; ++i) put(type, data, i, (int64_t)(test_rand() % 100));
  if (type == CLPRIM_FLOAT && n > 4) ((float *)data)[n / 2] = NAN, ((float *)data)[1] = NAN;
  if (type == CLPRIM_DOUBLE && n > 4) ((double *)data)[n / 3] = NAN;
  clprim_predicate p1, p2;
  memset(&p1, 0, sizeof p1), memset(&p2, 0, sizeof p2);
  p1.op = CLPRIM_PRED_LT, p1.a = scalar(type, lo);
  p2.op = variant % 2 ? CLPRIM_PRED_GE : CLPRIM_PRED_NOT_NAN, p2.a = scalar(type, hi);
  /* The reference: part of each element, then the order. */
  size_t *order = malloc(m * sizeof *order), counts[3] = {0, 0, 0}, at = 0;
  for (int part = 0; part < 3; ++part)
    for (size_t i = 0; i < n; ++i) {
      const int in1 = ref_passes(type, data, i, &p1) && !(mode == 2 && i == 3);
      const int which = in1 ? 0 : ref_passes(type, data, i, &p2) ? 1 : 2;
      if (which == part) order[at++] = i, ++counts[part];
    }
  const int index64 = variant % 3 == 1;
  const size_t is = index64 ? 8 : 4;
  unsigned char *vhost = malloc((m + 4) * es), *ihost = malloc((m + 4) * is);
  cl_mem dv = poisoned(ctx, (m + 4) * es, vhost), di = poisoned(ctx, (m + 4) * is, ihost);
  cl_mem din = test_buffer(ctx, m * es, data), dc = test_buffer(ctx, 16, NULL);
  uint64_t got_counts[2] = {7, 7};
  const int on_device = variant % 4 == 3;
  const unsigned f = index64 ? CLPRIM_INDICES_64 : 0u;
  uint64_t *const counts_host = on_device ? NULL : got_counts;
  const clprim_buffer counts_dev = clprim_buf(on_device ? dc : NULL);
  static const char *const modes[3] = {"predicates", "flags", "expressions"};
  if (mode == 0) {
    TEST_OK(clprim_partition3(ctx, n, type, clprim_buf(din), &p1, &p2, f, clprim_buf(dv),
                              clprim_buf(di), counts_host, counts_dev));
  } else if (mode == 1) {
    const int wide = variant % 2; /* int32 flags, else uint8 */
    const size_t fs = wide ? 4 : 1;
    unsigned char *f1 = calloc(m, fs), *f2 = calloc(m, fs);
    for (size_t i = 0; i < n; ++i) {
      const int a = ref_passes(type, data, i, &p1), b = ref_passes(type, data, i, &p2);
      if (wide)
        ((int32_t *)f1)[i] = a ? -7 : 0, ((int32_t *)f2)[i] = b ? 1 << 30 : 0;
      else
        f1[i] = a ? 0x80 : 0, f2[i] = b ? 1 : 0;
    }
    cl_mem d1 = test_buffer(ctx, m * fs, f1), d2 = test_buffer(ctx, m * fs, f2);
    TEST_OK(clprim_partition3_flagged(ctx, n, type, clprim_buf(din), clprim_buf(d1),
                                      clprim_buf(d2), wide ? CLPRIM_FLAGS_INT32 : CLPRIM_FLAGS_UINT8,
                                      f, clprim_buf(dv), clprim_buf(di), counts_host, counts_dev));
    clReleaseMemObject(d1), clReleaseMemObject(d2), free(f1), free(f2);
  } else {
    const int is_float = type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE;
    char e1[64], e2[64];
    snprintf(e1, sizeof e1, "x < %lld && i != 3", (long long)lo);
    if (variant % 2)
      snprintf(e2, sizeof e2, "x >= %lld", (long long)hi);
    else
      snprintf(e2, sizeof e2, "%s", is_float ? "!isnan(x)" : "x == x");
    TEST_OK(clprim_partition3_expr(ctx, n, type, clprim_buf(din), e1, e2, f, clprim_buf(dv),
                                   clprim_buf(di), counts_host, counts_dev));
  }
  if (on_device) test_read(ctx, dc, 16, got_counts);
  char what[192];
  snprintf(what, sizeof what, "partition3 (%s) %s n=%zu x < %lld, then %s, path %s", modes[mode],
           clprim_type_name(type), n, (long long)lo, variant % 2 ? "x >= b" : "not NaN",
           clprim_path_name(ctx->info.path));
  if (got_counts[0] != counts[0] || got_counts[1] != counts[1])
    fail_msg("%s: counts %llu %llu, expected %zu %zu", what, (unsigned long long)got_counts[0],
             (unsigned long long)got_counts[1], counts[0], counts[1]);
  test_read(ctx, dv, (m + 4) * es, vhost);
  test_read(ctx, di, (m + 4) * is, ihost);
  for (size_t k = 0; k < n; ++k) {
    const uint64_t idx = index64 ? ((uint64_t *)ihost)[k] : ((uint32_t *)ihost)[k];
    if (idx != order[k] || memcmp(vhost + k * es, data + order[k] * es, es) != 0)
      fail_msg("%s: position %zu holds element %llu, expected %zu", what, k,
               (unsigned long long)idx, order[k]);
  }
  check_poison(vhost, n * es, (m + 4) * es, what, "values");
  check_poison(ihost, n * is, (m + 4) * is, what, "indices");
  clReleaseMemObject(dv), clReleaseMemObject(di), clReleaseMemObject(din), clReleaseMemObject(dc);
  free(data), free(order), free(vhost), free(ihost);
}

static void test_partition3(void **state) {
  (void)state;
  unsigned variant = 0;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    const size_t tile = clprim__select_tile(ctx);
    const size_t sizes[] = {0, 1, 31, 33, tile - 1, tile + 1, 3 * tile + 7, 100003};
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      if (!test_has_type(ctx, (clprim_type)t)) continue;
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s, ++variant) {
        if (test_small() && (sizes[s] > 3000 || (s + (size_t)t) % 2)) continue;
        /* Bounds that make a part empty, everything, or a share. */
        const int64_t bounds[4][2] = {{30, 70}, {0, 50}, {100, 0}, {50, 100}};
        check_partition3(ctx, (clprim_type)t, sizes[s], bounds[variant % 4][0],
                         bounds[variant % 4][1], variant, (int)(variant / 4 % 3));
      }
    }
  }
}

static void test_partition3_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  enum { N = 64 };
  float x[N];
  unsigned char poison[N * 8];
  for (int i = 0; i < N; ++i) x[i] = (float)i;
  cl_mem in = test_buffer(ctx, sizeof x, x), out = poisoned(ctx, sizeof poison, poison);
  cl_mem cnt = test_buffer(ctx, 16, poison), small = test_buffer(ctx, 15, NULL);
  clprim_predicate p1, p2, bad;
  memset(&p1, 0, sizeof p1), memset(&p2, 0, sizeof p2), memset(&bad, 0, sizeof bad);
  p1.op = CLPRIM_PRED_LT, p1.a.f32 = 10, p2.op = CLPRIM_PRED_GT, p2.a.f32 = 50;
  bad.op = CLPRIM_PRED_MASK_EQ;
  const clprim_buffer I = clprim_buf(in), O = clprim_buf(out), C = clprim_buf(cnt),
                      none = clprim_buf(NULL);
  const clprim_type f32 = CLPRIM_FLOAT;
  uint64_t c[2];
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3(NULL, N, f32, I, &p1, &p2, 0, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3(ctx, N, f32, I, NULL, &p2, 0, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3(ctx, N, f32, I, &p1, NULL, 0, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3(ctx, N, f32, I, &p1, &bad, 0, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3(ctx, N, f32, I, &p1, &p2, 2, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3(ctx, N, f32, I, &p1, &p2, 0, none, none, NULL, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3(ctx, N, f32, I, &p1, &p2, 0, I, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3(ctx, N, (clprim_type)9, I, &p1, &p2, 0, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_partition3(ctx, N + 1, f32, I, &p1, &p2, 0, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_partition3(ctx, N, f32, I, &p1, &p2, 0, O, none, c, clprim_buf(small)));
  /* flags: a missing array, a bad flag type, an array too short */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3_flagged(ctx, N, f32, I, I, none, CLPRIM_FLAGS_INT32, 0, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3_flagged(ctx, N, f32, I, I, I, (clprim_flag_type)2, 0, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_partition3_flagged(ctx, N, f32, I, I, clprim_buf(small), CLPRIM_FLAGS_UINT8, 0, O, none, c, C));
  /* expressions: NULL, empty, refused (closing the generated code), not compiling */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3_expr(ctx, N, f32, I, NULL, "x > 1", 0, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3_expr(ctx, N, f32, I, "x < 1", "", 0, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3_expr(ctx, N, f32, I, "x) || (1", "x > 1", 0, O, none, c, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_partition3_expr(ctx, N, f32, I, "x < 1", "x > 1; }", 0, O, none, c, C));
  if (!ctx->oclgrind) { /* (Oclgrind's API check reports any failed build) */
    const int st = clprim_partition3_expr(ctx, N, f32, I, "x < 1", "no_such_function(x)", 0, O,
                                          none, c, C);
    if (st != CL_BUILD_PROGRAM_FAILURE && st != CL_COMPILE_PROGRAM_FAILURE)
      fail_msg("partition3_expr that does not compile: %s", clprim_status_name(st));
  }
  unsigned char after[sizeof poison];
  test_read(ctx, out, sizeof after, after);
  check_poison(after, 0, sizeof after, "partition3 errors", "values");
  test_read(ctx, cnt, 16, after);
  check_poison(after, 0, 16, "partition3 errors", "counts");
  clReleaseMemObject(in), clReleaseMemObject(out), clReleaseMemObject(cnt), clReleaseMemObject(small);
}

/* A user's expression that does not compile: the build status, nothing
 * written, and a log in the expression's own terms (expression:LINE:COLUMN,
 * the line quoted with a caret under the column, for the three-way
 * partition which of the two) that names no library file: select_expr,
 * partition_expr and each test of partition3_expr, on every path (nv_ptx
 * builds select's single pass). An error inside the expression, on its
 * second line, and one just past its end. (Not under Oclgrind, whose API
 * check reports the failed build.) */
static void test_expression_logs(void **state) {
  (void)state;
  enum { SELECT, PARTITION, FIRST, SECOND };
  static const struct {
    int call;
    const char *expression, *where, *caret, *which;
  } cases[] = {
      {SELECT, "x > 0 &&\n   x < nothing", "expression:2:8:", "     x < nothing\n         ^\n", ""},
      {SELECT, "x * 2 +", "expression:1:8:", "  x * 2 +\n         ^\n", ""},
      {PARTITION, "(x & 1) == undefined_name",
       "expression:1:12:", "  (x & 1) == undefined_name\n             ^\n", ""},
      {FIRST, "x < 1 ||\n  y > 2", "expression:2:3:", "    y > 2\n    ^\n",
       "(the first expression)"},
      {SECOND, "(x > 1) ? x", "expression:1:12:", "  (x > 1) ? x\n             ^\n",
       "(the second expression)"}};
  enum { N = 100 };
  int32_t data[N];
  unsigned char poison[N * 4];
  for (int i = 0; i < N; ++i)
    data[i] = i - 50;
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    if (ctx->oclgrind) {
      printf("expression logs: skipped under Oclgrind\n");
      return;
    }
    cl_mem in = test_buffer(ctx, sizeof data, data), out = poisoned(ctx, sizeof poison, poison);
    const clprim_buffer I = clprim_buf(in), O = clprim_buf(out), none = clprim_buf(NULL);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
      const char *e = cases[k].expression;
      uint64_t counts[2] = {12345, 12345};
      clprim_status st;
      switch (cases[k].call) {
      case SELECT:
        st = clprim_select_expr(ctx, N, CLPRIM_INT32, I, e, 0, O, none, counts, none);
        break;
      case PARTITION:
        st = clprim_partition_expr(ctx, N, CLPRIM_INT32, I, e, 0, O, none, counts, none);
        break;
      default:
        st =
            clprim_partition3_expr(ctx, N, CLPRIM_INT32, I, cases[k].call == FIRST ? e : "x > 0",
                                   cases[k].call == SECOND ? e : "x < 0", 0, O, none, counts, none);
      }
      const char *log = clprim_context_build_log(ctx);
      printf("%s, path %s: the log of \"%s\":\n%s",
             cases[k].call == SELECT      ? "select_expr"
             : cases[k].call == PARTITION ? "partition_expr"
                                          : "partition3_expr",
             test_path_of(ctx), e, log);
      if (st != CL_BUILD_PROGRAM_FAILURE && st != CL_COMPILE_PROGRAM_FAILURE)
        test_report("\"%s\" on %s returned %s", e, test_path_of(ctx), clprim_status_name(st));
      else if (!strstr(log, cases[k].where) || !strstr(log, cases[k].caret) ||
               !strstr(log, cases[k].which))
        test_report("\"%s\" on %s: the log does not point at %s %s", e, test_path_of(ctx),
                    cases[k].where, cases[k].which);
      else if (strstr(log, "select.cl") || strstr(log, "clprim-pipeline") ||
               strstr(log, "clprim-expression") || strstr(log, "stage ") ||
               (cases[k].call != SECOND && strstr(log, "second expression")) ||
               (cases[k].call != FIRST && strstr(log, "first expression")))
        test_report("\"%s\" on %s: the log names the library's code or the other test", e,
                    test_path_of(ctx));
      if (counts[0] != 12345 || counts[1] != 12345)
        test_report("\"%s\" on %s: a count was written", e, test_path_of(ctx));
    }
    check_still(ctx, out, poison, sizeof poison);
    clReleaseMemObject(in), clReleaseMemObject(out);
  }
  test_report_end();
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, a flag of another family is refused with nothing written, and a
 * call that succeeds leaves "". */
static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  clprim_predicate pred;
  memset(&pred, 0, sizeof pred);
  pred.op = CLPRIM_PRED_GT;
  uint64_t count, counts[2];
  TEST_TEXT(
      ctx, INVALID,
      clprim_select(ctx, 100, CLPRIM_INT32, A, &pred, CLPRIM_TOPK_SORTED, O, O2, &count, NONE),
      "select: flag 0x4 (CLPRIM_TOPK_SORTED)");
  TEST_TEXT(ctx, INVALID,
            clprim_select(ctx, 100, CLPRIM_INT32, A, &pred, CLPRIM_PARTITION_REVERSED, O, O2,
                          &count, NONE),
            "CLPRIM_PARTITION_REVERSED");
  TEST_TEXT(ctx, INVALID, clprim_partition(ctx, 100, CLPRIM_INT32, A, NULL, 0, O, O2, &count, NONE),
            "partition: pred is required");
  TEST_TEXT(ctx, INVALID,
            clprim_select(ctx, 100, CLPRIM_INT32, A, &pred, 0, NONE, NONE, NULL, NONE),
            "no output");
  TEST_TEXT(ctx, SMALL,
            clprim_partition(ctx, 1000, CLPRIM_INT64, A, &pred, 0, O, NONE, &count, NONE),
            "in holds 512 elements");
  TEST_TEXT(ctx, INVALID,
            clprim_select_flagged(ctx, 100, CLPRIM_INT32, A, B, (clprim_flag_type)7, 0, O, NONE,
                                  &count, NONE),
            "select_flagged: stencil_type (7)");
  TEST_TEXT(ctx, INVALID,
            clprim_select_expr(ctx, 100, CLPRIM_INT32, A, "x > 0; x", 0, O, NONE, &count, NONE),
            "select_expr: expression is not one expression");
  TEST_TEXT(ctx, INVALID,
            clprim_partition3_expr(ctx, 100, CLPRIM_INT32, A, "x > 0", NULL, CLPRIM_SORT_DESCENDING,
                                   O, NONE, counts, NONE),
            "partition3_expr: flag 0x100 (CLPRIM_SORT_DESCENDING)");
  TEST_TEXT(
      ctx, INVALID,
      clprim_partition3_expr(ctx, 100, CLPRIM_INT32, A, "x > 0", NULL, 0, O, NONE, counts, NONE),
      "partition3_expr: second");
  TEST_OK_NO_TEXT(ctx, clprim_select(ctx, 0, CLPRIM_INT32, A, &pred, 0, NONE, NONE, &count, NONE));
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(int argc, char **argv) {
  /* --device-scan: the compactions' counts scanned by the scan engine's
   * kernels where the device would scan them in a native kernel (CPUs). */
  if (argc > 1 && strcmp(argv[1], "--device-scan") == 0)
    test_tune("count_scan_scatter.native_scan=0");
  test_init("test_select");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),          cmocka_unit_test(test_error_texts),
      cmocka_unit_test(test_ranges),          cmocka_unit_test(test_predicates),
      cmocka_unit_test(test_expressions),     cmocka_unit_test(test_int32),
      cmocka_unit_test(test_uint32),          cmocka_unit_test(test_int64),
      cmocka_unit_test(test_uint64),          cmocka_unit_test(test_float),
      cmocka_unit_test(test_double),          cmocka_unit_test(test_beyond_2_32),
      cmocka_unit_test(test_partition3),      cmocka_unit_test(test_partition3_errors),
      cmocka_unit_test(test_expression_logs),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
