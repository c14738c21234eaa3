/* test_segmented_topk: clprim_segmented_topk, clprim_batched_topk,
 * clprim_segmented_nth_element and clprim_batched_nth_element against a CPU
 * reference (per segment, a qsort of (key, index) pairs: ties to the lowest
 * index), every type and path the device runs. Segments of length 0, 1, 2,
 * around the work-group size and the local tile, and random; offsets out
 * of order, with gaps and one overlap (the input is only read), uint32 and
 * uint64 offsets (from an element offset of their buffers); rows of a
 * matrix; long segments (through the device-wide calls: the knob
 * the knob segmented_topk.long brings them to small sizes). Distributions:
 * uniform, all equal, 16 distinct, special values (NaN largest, -0.0 equal
 * to +0.0), sorted. k = 0, 1, 5, 256, and beyond every segment (clamped).
 * Unwritten row slots and the elements past the outputs keep a poison;
 * errors write nothing. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { DIST_UNIFORM, DIST_EQUAL, DIST_FEW16, DIST_SPECIAL, DIST_SORTED, DIST_COUNT };
static const char *const dist_names[DIST_COUNT] = {"uniform", "all equal", "16 distinct",
                                                   "special values", "sorted"};

static void set_element(clprim_type type, void *data, size_t i, int64_t v, double d) {
  switch (type) {
  case CLPRIM_INT32: ((int32_t *)data)[i] = (int32_t)v; break;
  case CLPRIM_UINT32: ((uint32_t *)data)[i] = (uint32_t)(v + 5); break;
  case CLPRIM_INT64: ((int64_t *)data)[i] = v; break;
  case CLPRIM_UINT64: ((uint64_t *)data)[i] = (uint64_t)(v + 5); break;
  case CLPRIM_FLOAT: ((float *)data)[i] = (float)d; break;
  case CLPRIM_DOUBLE: ((double *)data)[i] = d; break;
  }
}

static void fill(clprim_type type, void *data, size_t n, unsigned dist) {
  test_random(type, data, n, 1);
  if (dist == DIST_UNIFORM) return;
  for (size_t i = 0; i < n; ++i) {
    int64_t v = dist == DIST_EQUAL    ? 3
                : dist == DIST_SORTED ? (int64_t)(i / 3) - 1000
                                      : (int64_t)(test_rand() % 16) - 5;
    double d = (double)v;
    if (dist == DIST_SPECIAL) {
      const unsigned r = (unsigned)(test_rand() % 8);
      d = r == 0   ? NAN
          : r == 1 ? INFINITY
          : r == 2 ? -INFINITY
          : r == 3 ? -0.0
          : r == 4 ? 0.0
          : r == 5 ? 1e-310
                   : d;
    }
    set_element(type, data, i, v, d);
  }
}

/* A layout of segments over n elements: begins and ends (count of them),
 * given to the calls as offsets of offset_type after `pad` elements. */
struct layout {
  size_t n, count, row_length; /* row_length: rows of a matrix (offsets unused) */
  uint64_t *begins, *ends;
  clprim_type offset_type;
  size_t pad;
};

/* Segments of the given lengths one after another, a gap of 3 elements
 * after every fifth, then a few swapped in order and, when there are
 * enough, one that overlaps its neighbour. */
static struct layout make_offsets(const size_t *lengths, size_t count) {
  struct layout l = {0, count, 0, malloc((count + 1) * 8), malloc((count + 1) * 8), CLPRIM_UINT64,
                     0};
  size_t at = 0;
  for (size_t s = 0; s < count; ++s) {
    l.begins[s] = at, l.ends[s] = at + lengths[s];
    at += lengths[s] + (s % 5 == 4 ? 3 : 0);
  }
  l.n = at + 2;
  for (size_t j = 0; j + 3 < count; j += 4) { /* out of order */
    const size_t a = (size_t)(test_rand() % count), b = (size_t)(test_rand() % count);
    uint64_t t = l.begins[a];
    l.begins[a] = l.begins[b], l.begins[b] = t;
    t = l.ends[a], l.ends[a] = l.ends[b], l.ends[b] = t;
  }
  if (count > 3 && l.ends[1] > l.begins[1] && l.begins[1] >= 2) l.begins[1] -= 2; /* overlap */
  return l;
}

static struct layout make_rows(size_t rows, size_t row_length) {
  struct layout l = {rows * row_length,      rows,          row_length, malloc((rows + 1) * 8),
                     malloc((rows + 1) * 8), CLPRIM_UINT64, 0};
  for (size_t s = 0; s < rows; ++s) l.begins[s] = s * row_length, l.ends[s] = (s + 1) * row_length;
  return l;
}

static void free_layout(struct layout *l) {
  free(l->begins), free(l->ends);
}

/* Top-k per segment of data (l.n elements) against the reference; want_*:
 * which outputs. Row slots past a segment's results and 8 bytes past the
 * outputs keep a poison. */
static void check_topk(clprim_context *ctx, clprim_type type, const void *data,
                       const struct layout *l, uint64_t k, unsigned flags, int want_values,
                       int want_indices, const char *what) {
  const size_t es = clprim_type_size(type);
  const int i64 = (flags & CLPRIM_INDICES_64) != 0;
  const size_t is = i64 ? 8 : 4, slots = l->count * (size_t)k;
  const size_t vbytes = slots * es + 8, ibytes = slots * is + 8;
  unsigned char *poison = malloc(ibytes > vbytes ? ibytes : vbytes);
  unsigned char *got_v = malloc(vbytes), *got_i = malloc(ibytes);
  memset(poison, 0xA5, ibytes > vbytes ? ibytes : vbytes);
  cl_mem in = test_buffer(ctx, l->n * es + 8, data);
  cl_mem values = want_values ? test_buffer(ctx, vbytes, poison) : NULL;
  cl_mem indices = want_indices ? test_buffer(ctx, ibytes, poison) : NULL;
  if (l->row_length) {
    TEST_OK(clprim_batched_topk(ctx, l->count, l->row_length, type, clprim_buf(in), k, flags,
                                clprim_buf(values), clprim_buf(indices)));
  } else {
    cl_mem b = test_offset_buffer(ctx, l->offset_type, l->begins, l->count, l->pad);
    cl_mem e = test_offset_buffer(ctx, l->offset_type, l->ends, l->count, l->pad);
    TEST_OK(clprim_segmented_topk(ctx, l->n, type, clprim_buf(in), l->count, l->offset_type,
                                  clprim_buf_at(b, l->pad), clprim_buf_at(e, l->pad), k, flags,
                                  clprim_buf(values), clprim_buf(indices)));
    clReleaseMemObject(b), clReleaseMemObject(e);
  }
  if (values) test_read(ctx, values, vbytes, got_v);
  if (indices) test_read(ctx, indices, ibytes, got_i);
  struct test_keyed *ref = malloc((l->n + 1) * sizeof *ref);
  for (size_t s = 0; s < l->count; ++s) {
    const size_t b = (size_t)l->begins[s], len = (size_t)(l->ends[s] - b);
    for (size_t i = 0; i < len; ++i)
      ref[i].key = test_order_key(type, data, b + i), ref[i].index = i;
    qsort(ref, len, sizeof *ref, (flags & CLPRIM_TOPK_SMALLEST) ? test_by_key_asc : test_by_key_desc);
    const size_t m = k < len ? (size_t)k : len;
    if (!(flags & CLPRIM_TOPK_SORTED)) qsort(ref, m, sizeof *ref, test_by_index);
    for (size_t j = 0; j < (size_t)k; ++j) {
      const size_t slot = s * (size_t)k + j;
      if (j >= m) { /* not written */
        if (values && memcmp(got_v + slot * es, poison, es) != 0)
          fail_msg("%s %s segment %zu (length %zu) k=%llu flags=%u: value slot %zu written",
                   clprim_type_name(type), what, s, len, (unsigned long long)k, flags, j);
        if (indices && memcmp(got_i + slot * is, poison, is) != 0)
          fail_msg("%s %s segment %zu (length %zu) k=%llu flags=%u: index slot %zu written",
                   clprim_type_name(type), what, s, len, (unsigned long long)k, flags, j);
        continue;
      }
      const uint64_t idx = ref[j].index;
      if (indices) {
        const uint64_t g = i64 ? ((uint64_t *)got_i)[slot] : ((uint32_t *)got_i)[slot];
        if (g != idx)
          fail_msg("%s %s segment %zu (length %zu) k=%llu flags=%u: index %zu is %llu, "
                   "expected %llu",
                   clprim_type_name(type), what, s, len, (unsigned long long)k, flags, j,
                   (unsigned long long)g, (unsigned long long)idx);
      }
      if (values &&
          memcmp(got_v + slot * es, (const unsigned char *)data + (b + idx) * es, es) != 0)
        fail_msg("%s %s segment %zu (length %zu) k=%llu flags=%u: value %zu wrong",
                 clprim_type_name(type), what, s, len, (unsigned long long)k, flags, j);
    }
  }
  if (values) assert_memory_equal(got_v + slots * es, poison, 8);
  if (indices) assert_memory_equal(got_i + slots * is, poison, 8);
  free(ref), free(poison), free(got_v), free(got_i);
  clReleaseMemObject(in);
  if (values) clReleaseMemObject(values);
  if (indices) clReleaseMemObject(indices);
}

/* nth_element per segment against the reference: the key of rank
 * min(k, length - 1); zeros come back as +0.0; empty segments untouched. */
static void check_nth(clprim_context *ctx, clprim_type type, const void *data,
                      const struct layout *l, uint64_t k, const char *what) {
  const size_t es = clprim_type_size(type), bytes = l->count * es + 8;
  unsigned char *poison = malloc(bytes), *got = malloc(bytes);
  memset(poison, 0xA5, bytes);
  cl_mem in = test_buffer(ctx, l->n * es + 8, data);
  cl_mem result = test_buffer(ctx, bytes, poison);
  if (l->row_length) {
    TEST_OK(clprim_batched_nth_element(ctx, l->count, l->row_length, type, clprim_buf(in), k, 0,
                                       clprim_buf(result)));
  } else {
    cl_mem b = test_offset_buffer(ctx, l->offset_type, l->begins, l->count, l->pad);
    cl_mem e = test_offset_buffer(ctx, l->offset_type, l->ends, l->count, l->pad);
    TEST_OK(clprim_segmented_nth_element(ctx, l->n, type, clprim_buf(in), l->count, l->offset_type,
                                         clprim_buf_at(b, l->pad), clprim_buf_at(e, l->pad), k, 0,
                                         clprim_buf(result)));
    clReleaseMemObject(b), clReleaseMemObject(e);
  }
  test_read(ctx, result, bytes, got);
  struct test_keyed *ref = malloc((l->n + 1) * sizeof *ref);
  for (size_t s = 0; s < l->count; ++s) {
    const size_t b = (size_t)l->begins[s], len = (size_t)(l->ends[s] - b);
    if (len == 0) {
      if (memcmp(got + s * es, poison, es) != 0)
        fail_msg("%s %s: empty segment %zu written", clprim_type_name(type), what, s);
      continue;
    }
    for (size_t i = 0; i < len; ++i)
      ref[i].key = test_order_key(type, data, b + i), ref[i].index = i;
    qsort(ref, len, sizeof *ref, test_by_key_asc);
    const size_t r = k < len ? (size_t)k : len - 1;
    const uint64_t g = test_order_key(type, got, s);
    if (g != ref[r].key)
      fail_msg("%s %s segment %zu (length %zu) k=%llu: key %llx, expected %llx",
               clprim_type_name(type), what, s, len, (unsigned long long)k,
               (unsigned long long)g, (unsigned long long)ref[r].key);
    if ((type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE) && test_value_f(type, got, s) == 0.0 &&
        signbit(test_value_f(type, got, s)))
      fail_msg("%s %s segment %zu: -0.0 returned", clprim_type_name(type), what, s);
  }
  assert_memory_equal(got + l->count * es, poison, 8);
  free(ref), free(poison), free(got);
  clReleaseMemObject(in), clReleaseMemObject(result);
}

/* The contexts to run: one per path the device runs. */
#define FOR_EACH_CONTEXT(ctx)                                                                      \
  for (unsigned p_ = 0; p_ < CLPRIM_PATH_COUNT; ++p_)                                              \
    for (clprim_context *ctx = contexts.ctx[p_];                                                   \
         ctx && !(p_ == CLPRIM_PATH_AUTO && contexts.ctx[ctx->info.path]); ctx = NULL)

/* Offsets: lengths around the work-group sizes and random ones, every
 * distribution, k rotating with the flags and outputs; uint32 and uint64
 * offsets (small sizes: one, by type). */
static void run_offsets(clprim_type type) {
  const size_t fixed[] = {0, 1, 2, 3, 31, 255, 256, 257, 511, 513, 1000, 4097};
  const size_t fixed_small[] = {0, 1, 2, 37, 257, 300};
  const int small = test_small();
  const size_t nf = small ? 6 : sizeof fixed / sizeof fixed[0], count = nf + (small ? 4 : 24);
  size_t lengths[64];
  for (size_t s = 0; s < count; ++s)
    lengths[s] = s < nf ? (small ? fixed_small : fixed)[s] : (size_t)(test_rand() % 600);
  struct layout l = make_offsets(lengths, count);
  const size_t es = clprim_type_size(type);
  void *data = malloc(l.n * es + 8);
  FOR_EACH_CONTEXT(ctx) {
    if (!test_has_type(ctx, type)) break;
    for (unsigned w = 0; w < TEST_OFFSET_TYPES; ++w)
      for (unsigned d = 0; d < DIST_COUNT; ++d) {
        /* one width per distribution, by turns (small: per type) */
        if (w != (small ? (unsigned)type : d + (unsigned)type) % TEST_OFFSET_TYPES) continue;
        l.offset_type = test_offset_type[w], l.pad = w ? 3 : 1;
        char what[64];
        snprintf(what, sizeof what, "%s, %s offsets", dist_names[d],
                 clprim_type_name(l.offset_type));
        /* Oclgrind: one distribution, special values for floats */
        const int is_float = type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE;
        if (small && d != (is_float ? DIST_SPECIAL : DIST_FEW16)) continue;
        fill(type, data, l.n, d);
        const uint64_t ks[5] = {0, 1, 5, 256, 5000};
        for (unsigned j = 0; j < 5; ++j) {
          if (small && j != 1 && j != 3) continue;
          const unsigned m = j + d;
          const unsigned flags = ((m & 1) ? CLPRIM_TOPK_SMALLEST : 0) |
                                 ((m & 2) ? CLPRIM_TOPK_SORTED : 0) |
                                 ((m % 3 == 0) ? CLPRIM_INDICES_64 : 0);
          check_topk(ctx, type, data, &l, ks[j], flags, m % 4 != 3, m % 4 != 2, what);
          if (!small) check_nth(ctx, type, data, &l, ks[j], what);
        }
        if (small) check_nth(ctx, type, data, &l, 7, what);
      }
  }
  free(data);
  free_layout(&l);
}

static void test_int32(void **state) { (void)state, run_offsets(CLPRIM_INT32); }
static void test_uint32(void **state) { (void)state, run_offsets(CLPRIM_UINT32); }
static void test_int64(void **state) { (void)state, run_offsets(CLPRIM_INT64); }
static void test_uint64(void **state) { (void)state, run_offsets(CLPRIM_UINT64); }
static void test_float(void **state) { (void)state, run_offsets(CLPRIM_FLOAT); }
static void test_double(void **state) { (void)state, run_offsets(CLPRIM_DOUBLE); }

/* Rows of a matrix: one row, many short rows, and rows longer than 2^16
 * (long on devices with many compute units). */
static void test_rows(void **state) {
  (void)state;
  const size_t shapes[][2] = {{1, 1}, {1, 5000}, {37, 1000}, {3, 70001}};
  const size_t shapes_small[][2] = {{1, 1}, {9, 300}};
  const size_t count = test_small() ? 2 : 4;
  const clprim_type types[2] = {CLPRIM_FLOAT, CLPRIM_UINT64};
  FOR_EACH_CONTEXT(ctx) {
    for (size_t h = 0; h < count; ++h) {
      const size_t *shape = test_small() ? shapes_small[h] : shapes[h];
      struct layout l = make_rows(shape[0], shape[1]);
      for (int t = 0; t < 2; ++t) {
        if (!test_has_type(ctx, types[t])) continue;
        void *data = malloc(l.n * 8 + 8);
        fill(types[t], data, l.n, t ? DIST_FEW16 : DIST_SPECIAL);
        check_topk(ctx, types[t], data, &l, 10, CLPRIM_TOPK_SORTED, 1, 1, "rows");
        check_topk(ctx, types[t], data, &l, 100, CLPRIM_TOPK_SMALLEST, 1, 1, "rows");
        check_nth(ctx, types[t], data, &l, shape[1] / 2, "rows");
        free(data);
      }
      free_layout(&l);
    }
  }
}

/* Long segments run through the device-wide calls: the knob makes
 * segments of more than 100 elements long. */
static void test_long(void **state) {
  (void)state;
  const size_t lengths[] = {0, 50, 101, 3000, 100, 700, 1};
  const size_t rows = test_small() ? 3 : 5, row_length = test_small() ? 150 : 2000;
  FOR_EACH_CONTEXT(ctx) {
    TEST_OK(clprim__tune(ctx, "segmented_topk.long=100"));
    struct layout l = make_offsets(lengths, test_small() ? 4 : 7);
    struct layout r = make_rows(rows, row_length);
    const clprim_type types[2] = {CLPRIM_DOUBLE, CLPRIM_INT32};
    for (int t = test_small(); t < 2; ++t) { /* Oclgrind: int32 alone */
      if (!test_has_type(ctx, types[t])) continue;
      void *data = malloc((l.n > r.n ? l.n : r.n) * 8 + 8);
      /* An offset type per element type (Oclgrind: uint32 alone), at an
       * element offset. */
      for (unsigned w = 0; w < TEST_OFFSET_TYPES; ++w) {
        if (w != (test_small() ? 0u : (unsigned)t % TEST_OFFSET_TYPES)) continue;
        l.offset_type = test_offset_type[w], l.pad = 2;
        const int u32 = l.offset_type == CLPRIM_UINT32;
        fill(types[t], data, l.n, DIST_SPECIAL);
        check_topk(ctx, types[t], data, &l, 64, CLPRIM_TOPK_SORTED, 1, 1,
                   u32 ? "long, uint32" : "long");
        check_topk(ctx, types[t], data, &l, 200, CLPRIM_INDICES_64, 0, 1,
                   u32 ? "long, uint32" : "long");
        check_topk(ctx, types[t], data, &l, 3, CLPRIM_TOPK_SMALLEST | CLPRIM_TOPK_SORTED, 0, 1,
                   u32 ? "long, uint32" : "long");
        check_nth(ctx, types[t], data, &l, 60, u32 ? "long, uint32" : "long");
        fill(types[t], data, l.n, DIST_UNIFORM); /* distinct: neighbouring ranks differ */
        check_nth(ctx, types[t], data, &l, 60, u32 ? "long, uniform, uint32" : "long, uniform");
      }
      fill(types[t], data, r.n, DIST_FEW16);
      check_topk(ctx, types[t], data, &r, 20, CLPRIM_TOPK_SORTED, 1, 0, "long rows");
      check_nth(ctx, types[t], data, &r, 5000, "long rows");
      fill(types[t], data, r.n, DIST_UNIFORM);
      check_nth(ctx, types[t], data, &r, 77, "long rows, uniform");
      free(data);
    }
    free_layout(&l), free_layout(&r);
    TEST_OK(clprim__tune(ctx, "segmented_topk.long=-1"));
  }
}

/* Bad arguments: an error, and nothing written. */
static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t n = 100;
  float data[100];
  for (int i = 0; i < 100; ++i) data[i] = (float)i;
  uint64_t begins[3] = {0, 10, 50}, ends[3] = {10, 50, 100};
  unsigned char poison[64], got[64];
  memset(poison, 0xA5, sizeof poison);
  cl_mem in = test_buffer(ctx, sizeof data, data);
  cl_mem out = test_buffer(ctx, sizeof poison, poison), out2 = test_buffer(ctx, sizeof poison, poison);
  const clprim_buffer none = clprim_buf(NULL);
  struct {
    uint64_t b, e;
  } bad[3] = {{20, 10}, {90, 101}, {0, 200}};
  for (unsigned w = 0; w < TEST_OFFSET_TYPES; ++w) {
    const clprim_type ot = test_offset_type[w];
    for (int j = 0; j < 3; ++j) {
      uint64_t bb[3], ee[3];
      memcpy(bb, begins, sizeof bb), memcpy(ee, ends, sizeof ee);
      bb[2] = bad[j].b, ee[2] = bad[j].e;
      cl_mem b = test_offset_buffer(ctx, ot, bb, 3, 1), e = test_offset_buffer(ctx, ot, ee, 3, 0);
      assert_int_equal(clprim_segmented_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3, ot,
                                             clprim_buf_at(b, 1), clprim_buf(e), 4, 0,
                                             clprim_buf(out), clprim_buf(out2)),
                       CLPRIM_ERROR_INVALID_ARGUMENT);
      assert_int_equal(clprim_segmented_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3, ot,
                                                    clprim_buf_at(b, 1), clprim_buf(e), 4, 0,
                                                    clprim_buf(out)),
                       CLPRIM_ERROR_INVALID_ARGUMENT);
      clReleaseMemObject(b), clReleaseMemObject(e);
    }
    /* Offset types other than uint32 and uint64 (good offsets, no segments too). */
    cl_mem b = test_offset_buffer(ctx, ot, begins, 3, 0),
           e = test_offset_buffer(ctx, ot, ends, 3, 0);
    const clprim_type bad_types[3] = {CLPRIM_INT32, CLPRIM_DOUBLE, (clprim_type)-1};
    for (int j = 0; j < 3; ++j) {
      assert_int_equal(clprim_segmented_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3, bad_types[j],
                                             clprim_buf(b), clprim_buf(e), 4, 0, clprim_buf(out),
                                             clprim_buf(out2)),
                       CLPRIM_ERROR_INVALID_ARGUMENT);
      assert_int_equal(clprim_segmented_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 0,
                                                    bad_types[j], clprim_buf(b), clprim_buf(e), 4,
                                                    0, clprim_buf(out)),
                       CLPRIM_ERROR_INVALID_ARGUMENT);
    }
    /* The good offsets of this type: the offsets' range is counted in its elements. */
    assert_int_equal(clprim_segmented_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3, ot,
                                           clprim_buf_at(b, 1), clprim_buf(e), 4, 0,
                                           clprim_buf(out), none),
                     CLPRIM_ERROR_BUFFER_TOO_SMALL);
    clReleaseMemObject(b), clReleaseMemObject(e);
  }
  cl_mem b = test_buffer(ctx, sizeof begins, begins), e = test_buffer(ctx, sizeof ends, ends);
  /* neither output; flags; NULL offsets; NULL result */
  assert_int_equal(clprim_segmented_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3, CLPRIM_UINT64,
                                         clprim_buf(b), clprim_buf(e), 4, 0, none, none),
                   CLPRIM_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clprim_segmented_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3, CLPRIM_UINT64,
                                         clprim_buf(b), clprim_buf(e), 4, CLPRIM_NTH_REJECT_NAN,
                                         clprim_buf(out), none),
                   CLPRIM_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clprim_segmented_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3, CLPRIM_UINT64,
                                         none, clprim_buf(e), 4, 0, clprim_buf(out), none),
                   CLPRIM_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clprim_segmented_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3,
                                                CLPRIM_UINT64, clprim_buf(b), clprim_buf(e), 4, 0,
                                                none),
                   CLPRIM_ERROR_INVALID_ARGUMENT);
  assert_int_equal(clprim_batched_nth_element(ctx, 10, 10, CLPRIM_FLOAT, clprim_buf(in), 4,
                                              CLPRIM_TOPK_SORTED, clprim_buf(out)),
                   CLPRIM_ERROR_INVALID_ARGUMENT);
  /* outputs too small: 3 rows of 8 floats do not fit in 64 bytes */
  assert_int_equal(clprim_batched_topk(ctx, 10, 10, CLPRIM_FLOAT, clprim_buf(in), 8, 0,
                                       clprim_buf(out), none),
                   CLPRIM_ERROR_BUFFER_TOO_SMALL);
  /* sizes */
  assert_int_equal(clprim_segmented_topk(ctx, (size_t)1 << 32, CLPRIM_FLOAT, clprim_buf(in), 3,
                                         CLPRIM_UINT64, clprim_buf(b), clprim_buf(e), 4, 0,
                                         clprim_buf(out), none),
                   CLPRIM_ERROR_SIZE_TOO_LARGE);
  assert_int_equal(clprim_batched_topk(ctx, SIZE_MAX / 2, 3, CLPRIM_FLOAT, clprim_buf(in), 1, 0,
                                       clprim_buf(out), none),
                   CLPRIM_ERROR_SIZE_TOO_LARGE);
  test_read(ctx, out, sizeof got, got);
  assert_memory_equal(got, poison, sizeof got);
  test_read(ctx, out2, sizeof got, got);
  assert_memory_equal(got, poison, sizeof got);
  /* No segments, k = 0, rows of length 0: success, nothing written. */
  TEST_OK(clprim_segmented_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 0, CLPRIM_UINT64,
                                clprim_buf(b), clprim_buf(e), 4, 0, clprim_buf(out), none));
  TEST_OK(clprim_segmented_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 3, CLPRIM_UINT64,
                                clprim_buf(b), clprim_buf(e), 0, 0, clprim_buf(out), none));
  TEST_OK(clprim_batched_topk(ctx, 5, 0, CLPRIM_FLOAT, clprim_buf(in), 2, 0, clprim_buf(out),
                              none));
  TEST_OK(clprim_batched_nth_element(ctx, 5, 0, CLPRIM_FLOAT, clprim_buf(in), 2, 0,
                                     clprim_buf(out)));
  test_read(ctx, out, sizeof got, got);
  assert_memory_equal(got, poison, sizeof got);
  clReleaseMemObject(b), clReleaseMemObject(e);
  clReleaseMemObject(in), clReleaseMemObject(out), clReleaseMemObject(out2);
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, a flag of another family is refused with nothing written, and a
 * call that succeeds leaves "". */
static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  TEST_TEXT(ctx, INVALID,
            clprim_segmented_topk(ctx, 100, CLPRIM_INT32, A, 1, CLPRIM_UINT64, B, B, 5,
                                  CLPRIM_REDUCE_ABS, O, O2),
            "segmented_topk: flag 0x1 (CLPRIM_REDUCE_ABS)");
  TEST_TEXT(ctx, INVALID,
            clprim_batched_topk(ctx, 10, 10, CLPRIM_INT32, A, 5, CLPRIM_NTH_REJECT_NAN, O, O2),
            "batched_topk: flag 0x40 (CLPRIM_NTH_REJECT_NAN)");
  TEST_TEXT(ctx, INVALID,
            clprim_segmented_nth_element(ctx, 100, CLPRIM_INT32, A, 1, CLPRIM_UINT32, B, B, 0,
                                         CLPRIM_TOPK_SMALLEST, O),
            "segmented_nth_element: flag 0x80 (CLPRIM_TOPK_SMALLEST)");
  TEST_TEXT(ctx, INVALID, clprim_batched_nth_element(ctx, 10, 10, CLPRIM_INT32, A, 0, 0, NONE),
            "batched_nth_element: result is required");
  TEST_TEXT(ctx, SMALL,
            clprim_segmented_topk(ctx, 100, CLPRIM_INT32, A, 1, CLPRIM_UINT64,
                                  clprim_buf_at(b, 512), B, 5, 0, O, O2),
            "begin_offsets holds 0 elements from offset 512");
  TEST_TEXT(ctx, SMALL,
            clprim_segmented_nth_element(ctx, 100, CLPRIM_INT32, A, 1, CLPRIM_UINT32, B,
                                         clprim_buf_at(b, 1024), 0, 0, O),
            "end_offsets holds 0 elements from offset 1024");
  TEST_TEXT(ctx, INVALID,
            clprim_segmented_topk(ctx, 100, CLPRIM_INT32, A, 1, CLPRIM_FLOAT, B, B, 5, 0, O, O2),
            "segmented_topk: offset_type (4) is neither CLPRIM_UINT32 nor CLPRIM_UINT64");
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(void) {
  test_init("test_segmented_topk");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int32),  cmocka_unit_test(test_uint32),
      cmocka_unit_test(test_int64),  cmocka_unit_test(test_uint64),
      cmocka_unit_test(test_float),  cmocka_unit_test(test_double),
      cmocka_unit_test(test_rows),   cmocka_unit_test(test_long),
      cmocka_unit_test(test_errors), cmocka_unit_test(test_error_texts),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
