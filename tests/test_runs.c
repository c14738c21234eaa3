/* test_runs: unique, unique-by-key, run-length encoding and non-trivial runs
 * against a CPU reference on fresh random data, bit for bit, for every type
 * and path the device runs: runs of length 1, 2, 8, 1024 and n, alternating
 * values, random lengths, and float special values (each NaN a run of its
 * own, -0.0 and +0.0 one run); sizes around the compaction's tiles; ranges
 * at offsets; the count on the host and on the device; outputs past the
 * count untouched; 32- and 64-bit lengths; and every error case with
 * nothing written. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define BIG_N ((size_t)100003)
#define SMALL_N ((size_t)2500) /* the largest n under CLPRIM_TEST_SMALL */

/* ------------------------------------------------------------- the data */
static uint64_t get(clprim_type type, const void *data, size_t i) {
  return clprim_type_size(type) == 4 ? ((const uint32_t *)data)[i] : ((const uint64_t *)data)[i];
}
static void put(clprim_type type, void *data, size_t i, uint64_t bits) {
  if (clprim_type_size(type) == 4)
    ((uint32_t *)data)[i] = (uint32_t)bits;
  else
    ((uint64_t *)data)[i] = bits;
}

/* Whether elements i and j are equal under == in their type (the run rule). */
static int same(clprim_type type, const void *data, size_t i, size_t j) {
  switch (type) {
  case CLPRIM_FLOAT: return ((const float *)data)[i] == ((const float *)data)[j];
  case CLPRIM_DOUBLE: return ((const double *)data)[i] == ((const double *)data)[j];
  default: return get(type, data, i) == get(type, data, j);
  }
}

enum dist { D_LEN1, D_LEN2, D_LEN8, D_LEN1024, D_ONE_RUN, D_ALTERNATING, D_RANDOM, D_SPECIAL, D_COUNT };
static const char *const dist_names[D_COUNT] = {
    "runs of 1", "runs of 2", "runs of 8", "runs of 1024", "one run", "alternating", "random lengths",
    "special values"};

/* NaNs (several payloads), -0, +0, infinities, 1, -1 (float, double). */
static const uint32_t special32[] = {0x7FC00000u, 0x7FC00001u, 0xFFC00000u, 0x80000000u, 0x00000000u,
                                     0x7F800000u, 0xFF800000u, 0x3F800000u, 0xBF800000u};
static const uint64_t special64[] = {0x7FF8000000000000ull, 0x7FF8000000000001ull,
                                     0xFFF8000000000000ull, 0x8000000000000000ull,
                                     0x0000000000000000ull, 0x7FF0000000000000ull,
                                     0xFFF0000000000000ull, 0x3FF0000000000000ull,
                                     0xBFF0000000000000ull};

/* A random value that is not NaN, for the run-length distributions (a NaN
 * would split a run). */
static uint64_t ordinary(clprim_type type) {
  uint64_t v = test_rand();
  if (type == CLPRIM_FLOAT) v = (v & 0x3FFFFFFFu) | (v >> 33 & 1 ? 0x80000000u : 0);
  if (type == CLPRIM_DOUBLE) v = (v & 0x3FFFFFFFFFFFFFFFull) | (v >> 20 & 1 ? 1ull << 63 : 0);
  return v;
}

static void fill(clprim_type type, void *data, size_t n, enum dist d) {
  const int wide = clprim_type_size(type) == 8;
  const uint64_t a = ordinary(type), b = a ^ 1; /* alternating: two values */
  uint64_t v = ordinary(type);
  size_t left = 0; /* elements left in the current run */
  for (size_t i = 0; i < n; ++i) {
    if (d == D_SPECIAL) {
      if (left == 0) {
        const uint64_t r = test_rand();
        left = 1 + (size_t)(r % 4);
        if (r % 5 == 0)
          v = ordinary(type);
        else if (type == CLPRIM_FLOAT)
          v = special32[(r >> 8) % COUNT(special32)];
        else if (type == CLPRIM_DOUBLE)
          v = special64[(r >> 8) % COUNT(special64)];
        else
          v = (r >> 8) % 3; /* few values: runs that touch */
      }
      --left;
      put(type, data, i, v);
      continue;
    }
    if (d == D_ALTERNATING) {
      put(type, data, i, i % 2 ? b : a);
      continue;
    }
    if (left == 0) {
      const size_t len[] = {1, 2, 8, 1024, n ? n : 1, 1};
      left = d == D_RANDOM ? 1 + (size_t)(test_rand() % (test_rand() % 2 ? 4 : 300)) : len[d];
      uint64_t next;
      do /* a new run starts with a different value (so runs keep their length) */
        next = d == D_RANDOM && test_rand() % 2 ? v + 1 : ordinary(type);
      while (next == v || (!wide && (uint32_t)next == (uint32_t)v));
      v = next;
    }
    --left;
    put(type, data, i, v);
  }
}

/* --------------------------------------------------------- the reference */
/* The runs: first[r] and length[r] of each; returns the count. */
static size_t runs_of(clprim_type type, const void *data, size_t n, size_t *first, size_t *length) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i == 0 || !same(type, data, i - 1, i)) first[count] = i, length[count++] = 0;
    ++length[count - 1];
  }
  return count;
}

/* ------------------------------------------------------------ one check */
enum mode { M_UNIQUE, M_BY_KEY, M_ENCODE, M_NONTRIVIAL, M_COUNT };
static const char *const mode_names[M_COUNT] = {"unique", "unique_by_key", "run_length_encode",
                                                "non_trivial_runs"};

struct run_case {
  enum mode mode;
  clprim_type type, value_type; /* value_type: unique_by_key */
  enum dist dist;
  size_t in_at, out_at;
  int index64, count_on_device;
  unsigned outputs; /* bit 0: the first output, bit 1: the second */
};

static void check(clprim_context *ctx, const struct run_case *c, size_t n) {
  char desc[300];
  snprintf(desc, sizeof desc, "%s %s%s%s n=%zu %s in_at=%zu out_at=%zu lengths %d-bit outputs=%u count %s path=%s",
           mode_names[c->mode], clprim_type_name(c->type), c->mode == M_BY_KEY ? " keys, values " : "",
           c->mode == M_BY_KEY ? clprim_type_name(c->value_type) : "", n, dist_names[c->dist],
           c->in_at, c->out_at, c->index64 ? 64 : 32, c->outputs,
           c->count_on_device ? "on the device" : "on the host", test_path_of(ctx));
  const size_t es = clprim_type_size(c->type), m = n ? n : 1;
  const size_t vs = c->mode == M_BY_KEY ? clprim_type_size(c->value_type) : 0;
  const size_t is = c->index64 ? 8 : 4;
  unsigned char *keys = malloc(m * es), *values = vs ? malloc(m * vs) : NULL;
  fill(c->type, keys, n, c->dist);
  if (vs) test_random(c->value_type, values, n, 1);
  size_t *first = malloc(m * sizeof *first), *length = malloc(m * sizeof *length);
  const size_t runs = runs_of(c->type, keys, n, first, length);

  /* Expected outputs: a = values / keys / offsets, b = lengths / values. */
  size_t a_es = c->mode == M_NONTRIVIAL ? is : es;
  size_t b_es = c->mode == M_BY_KEY ? vs : is;
  unsigned char *a_img, *b_img, *in_img, *v_img = NULL;
  cl_mem in = test_image_buffer(ctx, c->in_at, n, es, keys, &in_img);
  cl_mem vin = vs ? test_image_buffer(ctx, c->in_at, n, vs, values, &v_img) : NULL;
  cl_mem a = test_image_buffer(ctx, c->out_at, n, a_es, NULL, &a_img);
  cl_mem b = test_image_buffer(ctx, c->out_at, n, b_es, NULL, &b_img);
  size_t want = 0;
  for (size_t r = 0; r < runs; ++r) {
    if (c->mode == M_NONTRIVIAL && length[r] < 2) continue;
    unsigned char *pa = a_img + (c->out_at + want) * a_es, *pb = b_img + (c->out_at + want) * b_es;
    if (c->mode == M_NONTRIVIAL) {
      const uint64_t o = first[r];
      memcpy(pa, c->index64 ? (const void *)&o : (const void *)&(uint32_t){(uint32_t)o}, is);
    } else {
      memcpy(pa, keys + first[r] * es, es);
    }
    if (c->mode == M_BY_KEY) {
      memcpy(pb, values + first[r] * vs, vs);
    } else {
      const uint64_t l = length[r];
      memcpy(pb, c->index64 ? (const void *)&l : (const void *)&(uint32_t){(uint32_t)l}, is);
    }
    ++want;
  }
  const unsigned outputs = c->mode == M_UNIQUE ? c->outputs & 1u : c->outputs; /* one output */
  if (!(outputs & 1)) free(a_img), a_img = NULL;
  if (!(outputs & 2)) free(b_img), b_img = NULL;

  unsigned char cimg[24];
  memset(cimg, TEST_SENTINEL, sizeof cimg);
  cl_mem cbuf = test_buffer(ctx, sizeof cimg, cimg);
  uint64_t count = 12345;
  uint64_t *host_count = c->count_on_device ? NULL : &count;
  const clprim_buffer none = clprim_buf(NULL);
  const clprim_buffer cout = c->count_on_device ? clprim_buf_at(cbuf, 1) : none;
  const clprim_buffer A = outputs & 1 ? clprim_buf_at(a, c->out_at) : none;
  const clprim_buffer B = outputs & 2 ? clprim_buf_at(b, c->out_at) : none;
  const clprim_buffer IN = clprim_buf_at(in, c->in_at);
  const unsigned flags = c->index64 ? CLPRIM_INDICES_64 : 0u;
  clprim_status st;
  switch (c->mode) {
  case M_UNIQUE: st = clprim_unique(ctx, n, c->type, IN, A, host_count, cout); break;
  case M_BY_KEY:
    st = clprim_unique_by_key(ctx, n, c->type, IN, c->value_type, clprim_buf_at(vin, c->in_at), A,
                              B, host_count, cout);
    break;
  case M_ENCODE: st = clprim_run_length_encode(ctx, n, c->type, IN, flags, A, B, host_count, cout); break;
  default: st = clprim_non_trivial_runs(ctx, n, c->type, IN, flags, A, B, host_count, cout); break;
  }
  if (st != CLPRIM_SUCCESS) {
    test_report("%s: returned %s", desc, clprim_status_name(st));
  } else {
    if (c->count_on_device) {
      unsigned char got[24];
      test_read(ctx, cbuf, sizeof got, got);
      memcpy(&count, got + 8, 8);
      if (memcmp(got, cimg, 8) != 0 || memcmp(got + 16, cimg + 16, 8) != 0)
        test_report("%s: bytes beside the device count changed", desc);
    }
    if (count != want) test_report("%s: count %llu, expected %zu", desc, (unsigned long long)count, want);
    if (a_img)
      test_compare_image(ctx, desc,
                         c->mode == M_NONTRIVIAL ? "offsets"
                         : c->mode == M_BY_KEY   ? "keys_out"
                                                 : "unique",
                         a, a_img, (c->out_at + n + TEST_PAD) * a_es, a_es);
    if (b_img)
      test_compare_image(ctx, desc, c->mode == M_BY_KEY ? "values_out" : "lengths", b, b_img,
                         (c->out_at + n + TEST_PAD) * b_es, b_es);
    test_compare_image(ctx, desc, "input (must not change)", in, in_img,
                       (c->in_at + n + TEST_PAD) * es, es);
  }
  clReleaseMemObject(in), clReleaseMemObject(a), clReleaseMemObject(b), clReleaseMemObject(cbuf);
  if (vin) clReleaseMemObject(vin);
  free(keys), free(values), free(first), free(length), free(a_img), free(b_img), free(in_img);
  free(v_img);
}

/* Sizes: small ones, around the compaction's tiles (the three-phase tile
 * and, on nv_ptx, the single-pass one), several tiles, BIG_N; ascending,
 * without repeats, at most SMALL_N under CLPRIM_TEST_SMALL. */
static size_t sizes_of(clprim_context *ctx, clprim_type type, size_t *out) {
  const size_t t = clprim__select_tile(ctx), s = clprim__select_single_pass_tile(ctx, type);
  const size_t cand[] = {0,     1,     2,     7,     31, 32, 33, t - 1, t, t + 1, 3 * t + 5,
                         s ? s - 1 : 0, s, s + 1, 2 * s + 3, BIG_N};
  size_t count = 0;
  for (size_t i = 0; i < COUNT(cand); ++i) {
    const size_t n = cand[i];
    if (test_small() && n > SMALL_N) continue;
    size_t at = 0;
    while (at < count && out[at] < n) ++at;
    if (at < count && out[at] == n) continue;
    memmove(out + at + 1, out + at, (count - at) * sizeof *out);
    out[at] = n, ++count;
  }
  return count;
}

/* Every type and size for one mode; the distribution, offsets, outputs and
 * count's place turn with the case; at one middle size every distribution.
 * Under CLPRIM_TEST_SMALL fewer types. */
static void test_mode(enum mode mode) {
  unsigned rot = (unsigned)mode;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!test_has_type(ctx, type)) continue;
      if (test_small() && (unsigned)t % 2 != (unsigned)mode % 2) continue;
      size_t sizes[32];
      const size_t ns = sizes_of(ctx, type, sizes);
      for (size_t k = 0; k < ns; ++k) {
        const size_t n = sizes[k];
        const int all = k == ns / 2 && !test_small();
        for (unsigned d = 0; d < D_COUNT; ++d, ++rot) {
          if (!all && d != rot % D_COUNT) continue;
          struct run_case c;
          memset(&c, 0, sizeof c);
          c.mode = mode, c.type = type, c.dist = (enum dist)(all ? d : rot % D_COUNT);
          if (c.dist == D_SPECIAL && n < 40 && !all) c.dist = D_LEN2;
          c.value_type = (clprim_type)((t + 1 + (int)(rot % 5)) % CLPRIM_TYPE_COUNT);
          if (!test_has_type(ctx, c.value_type)) c.value_type = CLPRIM_UINT64;
          c.in_at = rot % 3 == 1 ? 3 : 0, c.out_at = rot % 4 == 2 ? 5 : 0;
          c.index64 = rot % 2, c.count_on_device = rot % 3 == 0;
          c.outputs = mode == M_UNIQUE ? 1u : rot % 5 == 3 ? 1u : rot % 5 == 4 ? 2u : 3u;
          check(ctx, &c, n);
        }
      }
      /* Only the count. */
      struct run_case c;
      memset(&c, 0, sizeof c);
      c.mode = mode, c.type = type, c.dist = D_RANDOM, c.value_type = CLPRIM_UINT32;
      check(ctx, &c, test_small() ? 300 : 5000);
    }
  }
  test_report_end();
}

static void test_unique(void **state) { (void)state, test_mode(M_UNIQUE); }
static void test_unique_by_key(void **state) { (void)state, test_mode(M_BY_KEY); }
static void test_encode(void **state) { (void)state, test_mode(M_ENCODE); }
static void test_nontrivial(void **state) { (void)state, test_mode(M_NONTRIVIAL); }

/* A million elements in runs of 1024 and in one run, every call (the
 * compaction over many tiles; lengths as long as n). */
static void test_large(void **state) {
  (void)state;
  if (test_small()) return;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    for (int m = 0; m < M_COUNT; ++m) {
      struct run_case c;
      memset(&c, 0, sizeof c);
      c.mode = (enum mode)m, c.type = m % 2 ? CLPRIM_FLOAT : CLPRIM_UINT32;
      c.value_type = CLPRIM_INT64, c.outputs = 3, c.count_on_device = m % 2;
      c.dist = D_LEN1024;
      check(contexts.ctx[p], &c, ((size_t)1 << 20) + 3);
      c.dist = D_ONE_RUN, c.index64 = 1;
      check(contexts.ctx[p], &c, ((size_t)1 << 20) + 3);
    }
  }
  test_report_end();
}

/* --------------------------------------------------------------- errors */
static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  enum { N = 64 };
  uint32_t keys[N], poison[N];
  for (size_t i = 0; i < N; ++i) keys[i] = (uint32_t)(i / 3), poison[i] = 0xC0FFEEu;
  cl_mem in = test_buffer(ctx, sizeof keys, keys), vals = test_buffer(ctx, sizeof keys, keys);
  cl_mem o1 = test_buffer(ctx, sizeof poison, poison), o2 = test_buffer(ctx, sizeof poison, poison);
  cl_mem cbuf = test_buffer(ctx, 8, poison), small = test_buffer(ctx, 7, NULL);
  cl_mem foreign = test_foreign_buffer(ctx, sizeof poison);
  uint64_t count = 99;
  const clprim_type u32 = CLPRIM_UINT32;
  const clprim_buffer I = clprim_buf(in), V = clprim_buf(vals), A = clprim_buf(o1),
                      B = clprim_buf(o2), C = clprim_buf(cbuf), none = clprim_buf(NULL);
  /* Every call: no context, a bad type, no input, no output, a small or
   * foreign buffer, an output over the input, an unknown flag. */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_unique(NULL, N, u32, I, A, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_unique(ctx, N, (clprim_type)9, I, A, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_unique(ctx, N, u32, none, A, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_unique(ctx, N, u32, I, none, NULL, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_unique(ctx, N, u32, I, I, &count, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_unique(ctx, N + 1, u32, I, A, &count, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_unique(ctx, N, u32, I, A, &count, clprim_buf(small)));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_unique(ctx, N, CLPRIM_UINT64, I, A, &count, C));
  TEST_STATUS(CL_INVALID_CONTEXT, clprim_unique(ctx, N, u32, I, clprim_buf(foreign), &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_unique_by_key(NULL, N, u32, I, u32, V, A, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_unique_by_key(ctx, N, u32, I, (clprim_type)-1, V, A, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_unique_by_key(ctx, N, u32, I, u32, none, A, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_unique_by_key(ctx, N, u32, I, u32, V, A, A, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_unique_by_key(ctx, N, u32, I, u32, V, A, V, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_unique_by_key(ctx, N, u32, I, u32, V, none, none, NULL, none));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_unique_by_key(ctx, N, u32, I, CLPRIM_DOUBLE, V, A, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_run_length_encode(NULL, N, u32, I, 0, A, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_run_length_encode(ctx, N, u32, I, 2, A, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_run_length_encode(ctx, N, u32, I, CLPRIM_SORT_DESCENDING, A, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_run_length_encode(ctx, N, u32, I, 0, A, A, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_run_length_encode(ctx, N, u32, I, 0, none, none, NULL, none));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_run_length_encode(ctx, N, u32, I, CLPRIM_INDICES_64, A, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_run_length_encode(ctx, (size_t)UINT32_MAX + 1, u32, I, 0, A, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_non_trivial_runs(ctx, N, u32, I, 4, A, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_non_trivial_runs(ctx, N, u32, I, 0, I, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_non_trivial_runs(ctx, N, u32, I, CLPRIM_INDICES_64, A, B, &count, C));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_non_trivial_runs(ctx, (size_t)UINT32_MAX + 1, u32, I, 0, A, B, &count, C));
  /* double on a device without fp64 */
  const int had_fp64 = ctx->info.has_fp64;
  ctx->info.has_fp64 = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE, clprim_unique(ctx, N / 2, CLPRIM_DOUBLE, I, A, &count, C));
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE,
              clprim_run_length_encode(ctx, N / 2, CLPRIM_DOUBLE, I, 0, A, B, &count, C));
  ctx->info.has_fp64 = had_fp64;
  /* Nothing was written. */
  uint32_t after[N];
  assert_int_equal(count, 99);
  test_read(ctx, o1, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, o2, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, cbuf, 8, after);
  assert_memory_equal(after, poison, 8);
  test_read(ctx, in, sizeof after, after);
  assert_memory_equal(after, keys, sizeof keys);
  /* n = 0: a count of 0 and nothing else. */
  count = 99;
  TEST_OK(clprim_run_length_encode(ctx, 0, u32, I, 0, A, B, &count, C));
  assert_int_equal(count, 0);
  uint64_t c64 = 7;
  test_read(ctx, cbuf, 8, &c64);
  assert_int_equal(c64, 0);
  test_read(ctx, o1, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  clReleaseMemObject(in), clReleaseMemObject(vals), clReleaseMemObject(o1), clReleaseMemObject(o2);
  clReleaseMemObject(cbuf), clReleaseMemObject(small), clReleaseMemObject(foreign);
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, a flag of another family is refused with nothing written, and a
 * call that succeeds leaves "". */
static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  uint64_t count;
  TEST_TEXT(ctx, INVALID,
            clprim_run_length_encode(ctx, 100, CLPRIM_INT32, A, CLPRIM_SORT_DESCENDING, O, O2,
                                     &count, NONE),
            "run_length_encode: flag 0x100 (CLPRIM_SORT_DESCENDING)");
  TEST_TEXT(
      ctx, INVALID,
      clprim_non_trivial_runs(ctx, 100, CLPRIM_INT32, A, CLPRIM_TOPK_SORTED, O, O2, &count, NONE),
      "CLPRIM_TOPK_SORTED");
  TEST_TEXT(ctx, INVALID, clprim_unique(ctx, 100, CLPRIM_INT32, NONE, O, &count, NONE),
            "unique: in is required");
  TEST_TEXT(ctx, SMALL,
            clprim_unique_by_key(ctx, 100, CLPRIM_INT32, A, CLPRIM_INT64, B, O,
                                 clprim_buf_at(o2, 500), &count, NONE),
            "values_out holds 12 elements from offset 500");
  TEST_OK_NO_TEXT(ctx, clprim_unique(ctx, 0, CLPRIM_INT32, A, NONE, &count, NONE));
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(void) {
  test_init("test_runs");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors), cmocka_unit_test(test_error_texts),
      cmocka_unit_test(test_unique), cmocka_unit_test(test_unique_by_key),
      cmocka_unit_test(test_encode), cmocka_unit_test(test_nontrivial),
      cmocka_unit_test(test_large),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
