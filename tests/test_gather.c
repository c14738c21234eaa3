/* test_gather: clprim_gather and clprim_scatter against a CPU reference on
 * fresh random data, on every path the device runs: elements of 1, 2, 3,
 * 4, 8, 12, 16, 40 and 64 bytes (every word type, one word or several),
 * uint32 and uint64 indices, sizes 0, 1, 2, around work-group sizes and
 * teams (63 to 65, 255 to 257), a few thousand and about 100000;
 * permutations, random indices with duplicates (a scatter's target then
 * holds one of its candidates, whole), indices out of range (skipped:
 * out keeps what it held; with CLPRIM_CHECK_INDICES the call fails and
 * writes nothing; 64-bit indices whose low 32 bits are in range among
 * them); ranges at offsets (sub-buffers and staged copies), bytes around
 * the outputs untouched, inputs unchanged; small and odd work-groups,
 * scatters in steps and the cpu path's small shares through the knobs;
 * scatter without 64-bit atomics; every error case with nothing written. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const size_t elem_sizes[] = {1, 2, 3, 4, 8, 12, 16, 40, 64};
/* n: tiny, around teams and work-groups, larger; at most SMALL_N under
 * CLPRIM_TEST_SMALL, and BIG_N only for elements of at most 8 bytes. */
#define BIG_N ((size_t)100003)
#define SMALL_N ((size_t)300)
static const size_t sizes[] = {0, 1, 2, 63, 64, 65, 255, 256, 257, 4097, 10007, BIG_N};

/* Which indices a case takes: a permutation of [0, n) (count n), random
 * ones below count (duplicates), or random ones with some out of range. */
enum kind { K_PERMUTATION, K_RANDOM, K_BAD, K_COUNT };
static const char *const kind_names[K_COUNT] = {"permutation", "random", "some out of range"};

struct gather_case {
  int scatter, idx64, check;
  enum kind kind;
  size_t es, n, count;              /* count: in_count (gather) or out_count (scatter) */
  size_t in_at, indices_at, out_at; /* element offsets */
};

static void random_bytes(unsigned char *p, size_t bytes) {
  for (size_t b = 0; b < bytes; ++b)
    p[b] = (unsigned char)(test_rand() >> 56);
}

/* An index that is out of range for count: count itself, a little above,
 * the largest uint32, and for uint64 indices ones whose low 32 bits are in
 * range, and the largest. */
static uint64_t bad_index(size_t count, int idx64) {
  const unsigned r = (unsigned)(test_rand() % (idx64 ? 5 : 3));
  switch (r) {
  case 0:
    return count;
  case 1:
    return count + 1 + test_rand() % 1000;
  case 2:
    return count > UINT32_MAX - 2000 ? UINT64_MAX : UINT32_MAX;
  case 3:
    return ((uint64_t)1 << 32) + (count ? test_rand() % count : 0);
  default:
    return UINT64_MAX;
  }
}

/* n indices of the case's kind; returns how many are out of range. */
static size_t make_indices(const struct gather_case *c, uint64_t *idx) {
  size_t bad = 0;
  if (c->kind == K_PERMUTATION) {
    for (size_t i = 0; i < c->n; ++i) { /* inside-out Fisher-Yates */
      const size_t j = (size_t)(test_rand() % (i + 1));
      idx[i] = idx[j], idx[j] = i;
    }
    return 0;
  }
  for (size_t i = 0; i < c->n; ++i) {
    const int out_of_range = c->count == 0 || (c->kind == K_BAD && test_rand() % 8 == 0);
    idx[i] = out_of_range ? bad_index(c->count, c->idx64) : test_rand() % c->count;
    bad += out_of_range;
  }
  if (c->kind == K_BAD && bad == 0 && c->n > 0) { /* at least one */
    idx[test_rand() % c->n] = bad_index(c->count, c->idx64);
    bad = 1;
  }
  return bad;
}

/* The first element (of es bytes) where got and want differ, reported. */
static void compare(const char *desc, const char *which, const unsigned char *got,
                    const unsigned char *want, size_t bytes, size_t es) {
  for (size_t b = 0; b < bytes; b += es)
    if (memcmp(got + b, want + b, es) != 0) {
      uint64_t g = 0, w = 0;
      memcpy(&g, got + b, es < 8 ? es : 8), memcpy(&w, want + b, es < 8 ? es : 8);
      test_report("%s: %s element %zu of the buffer is 0x%llx..., expected 0x%llx...", desc, which,
                  b / es, (unsigned long long)g, (unsigned long long)w);
      return;
    }
}

static void check(clprim_context *ctx, const struct gather_case *c) {
  char desc[320];
  snprintf(desc, sizeof desc,
           "%s es=%zu n=%zu %s=%zu %s %d-bit in_at=%zu indices_at=%zu out_at=%zu%s path=%s",
           c->scatter ? "scatter" : "gather", c->es, c->n, c->scatter ? "out_count" : "in_count",
           c->count, kind_names[c->kind], c->idx64 ? 64 : 32, c->in_at, c->indices_at, c->out_at,
           c->check ? " checked" : "", test_path_of(ctx));
  const size_t es = c->es, is = c->idx64 ? 8 : 4, n = c->n;
  const size_t in_n = c->scatter ? n : c->count, out_n = c->scatter ? c->count : n;
  unsigned char *src = malloc(in_n * es + 1), *old = malloc(out_n * es + 1);
  uint64_t *idx = malloc(n * 8 + 8);
  unsigned char *idx_bytes = malloc(n * is + 1);
  assert_true(src && old && idx && idx_bytes);
  random_bytes(src, in_n * es);
  random_bytes(old, out_n * es);
  const size_t bad = make_indices(c, idx);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t v32 = (uint32_t)idx[i];
    memcpy(idx_bytes + i * is, c->idx64 ? (const void *)&idx[i] : &v32, is);
  }

  unsigned char *in_img, *idx_img, *out_img;
  cl_mem ibuf = test_image_buffer(ctx, c->in_at, in_n, es, src, &in_img);
  cl_mem xbuf = test_image_buffer(ctx, c->indices_at, n, is, idx_bytes, &idx_img);
  cl_mem obuf = test_image_buffer(ctx, c->out_at, out_n, es, old, &out_img);
  const size_t out_bytes = (c->out_at + out_n + TEST_PAD) * es;
  const clprim_buffer I = clprim_buf_at(ibuf, c->in_at), X = clprim_buf_at(xbuf, c->indices_at);
  const clprim_buffer O = clprim_buf_at(obuf, c->out_at);
  const clprim_type it = c->idx64 ? CLPRIM_UINT64 : CLPRIM_UINT32;
  const unsigned flags = c->check ? CLPRIM_CHECK_INDICES : 0u;
  const clprim_status st = c->scatter ? clprim_scatter(ctx, n, es, I, it, X, flags, O, c->count)
                                      : clprim_gather(ctx, n, es, I, c->count, it, X, flags, O);
  unsigned char *got = malloc(out_bytes);
  assert_non_null(got);
  test_read(ctx, obuf, out_bytes, got);
  const int refused = c->check && bad > 0;
  if (refused) {
    if (st != CLPRIM_ERROR_INVALID_ARGUMENT)
      test_report("%s: returned %s, expected CLPRIM_ERROR_INVALID_ARGUMENT", desc,
                  clprim_status_name(st));
    else if (!strstr(clprim_context_last_error(ctx), "out of range"))
      test_report("%s: the text \"%s\" does not say out of range", desc,
                  clprim_context_last_error(ctx));
    compare(desc, "out (must not change)", got, out_img, out_bytes, es);
  } else if (st != CLPRIM_SUCCESS) {
    test_report("%s: returned %s", desc, clprim_status_name(st));
  } else if (!c->scatter) {
    for (size_t i = 0; i < n; ++i)
      if (idx[i] < c->count) memcpy(out_img + (c->out_at + i) * es, src + idx[i] * es, es);
    compare(desc, "out", got, out_img, out_bytes, es);
  } else {
    /* Each target that some i points at holds one of their elements,
     * whole (the candidates of t: head[t], then next[i] ...). */
    size_t *head = malloc((out_n + 1) * sizeof *head), *next = malloc((n + 1) * sizeof *next);
    assert_true(head && next);
    for (size_t t = 0; t < out_n; ++t)
      head[t] = SIZE_MAX;
    for (size_t i = 0; i < n; ++i)
      if (idx[i] < out_n) next[i] = head[idx[i]], head[idx[i]] = i;
    for (size_t t = 0; t < out_n; ++t) {
      unsigned char *at = out_img + (c->out_at + t) * es;
      for (size_t i = head[t]; i != SIZE_MAX; i = next[i])
        if (memcmp(got + (c->out_at + t) * es, src + i * es, es) == 0 || next[i] == SIZE_MAX) {
          memcpy(at, src + i * es, es); /* the one written, or the last candidate: reported */
          break;
        }
    }
    compare(desc, "out", got, out_img, out_bytes, es);
    free(head), free(next);
  }
  test_compare_image(ctx, desc, "in (must not change)", ibuf, in_img,
                     (c->in_at + in_n + TEST_PAD) * es, es);
  test_compare_image(ctx, desc, "indices (must not change)", xbuf, idx_img,
                     (c->indices_at + n + TEST_PAD) * is, is);
  clReleaseMemObject(ibuf), clReleaseMemObject(xbuf), clReleaseMemObject(obuf);
  free(src), free(old), free(idx), free(idx_bytes), free(in_img), free(idx_img), free(out_img);
  free(got);
}

/* The offset of a range: 0, one the device aligns (base_align elements:
 * a multiple of the alignment in bytes for any size) or an unaligned one. */
static size_t offset(const clprim_context *ctx, unsigned r, size_t unaligned) {
  return r % 3 == 0 ? 0 : r % 3 == 1 ? ctx->base_align : unaligned;
}

/* Every element size and n on every path; the kind, index width, count,
 * offsets and check turn with the case. */
static void test_calls(int scatter) {
  unsigned rot = scatter ? 5u : 0u;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (size_t e = 0; e < COUNT(elem_sizes); ++e)
      for (size_t k = 0; k < COUNT(sizes); ++k, ++rot) {
        const size_t n = sizes[k], es = elem_sizes[e];
        if (test_small() ? n > SMALL_N || (es > 8 && n > 65 && n != 257) : n == BIG_N && es > 8)
          continue;
        struct gather_case c;
        memset(&c, 0, sizeof c);
        c.scatter = scatter, c.es = es, c.n = n;
        c.kind = rot % 3 == 0 ? K_PERMUTATION : K_RANDOM;
        /* count: n for a permutation; else more or fewer than n. */
        c.count = c.kind == K_PERMUTATION ? n : rot % 2 ? 2 * n + 3 : n / 2 + 1;
        c.idx64 = rot / 2 % 2;
        c.check = rot / 3 % 2;
        c.in_at = offset(ctx, rot, 3);
        c.indices_at = rot / 3 % 3 == 0 ? 0 : rot / 3 % 3 == 1 ? ctx->base_align / 4 : 5;
        c.out_at = offset(ctx, rot / 5, 1);
        check(ctx, &c);
      }
  }
  test_report_end();
}
static void test_gather(void **state) {
  (void)state, test_calls(0);
}
static void test_scatter(void **state) {
  (void)state, test_calls(1);
}

/* Indices out of range, with and without the check, both calls, every
 * element size; out at an unaligned offset too (a staged copy must keep
 * the elements that a gather skips). */
static void test_out_of_range(void **state) {
  (void)state;
  static const size_t ns[] = {1, 7, 64, 300, 3000};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (size_t e = 0; e < COUNT(elem_sizes); ++e)
      for (size_t k = 0; k < COUNT(ns); ++k, ++rot) {
        if (test_small() && ns[k] > SMALL_N) continue;
        for (int scatter = 0; scatter < 2; ++scatter)
          for (int checked = 0; checked < 2; ++checked) {
            struct gather_case c;
            memset(&c, 0, sizeof c);
            c.scatter = scatter, c.check = checked, c.kind = K_BAD;
            c.es = elem_sizes[e], c.n = ns[k];
            c.count = rot % 4 == 3 ? 0 : rot % 2 ? ns[k] + 5 : ns[k] / 3 + 1;
            c.idx64 = (rot + (unsigned)scatter) % 2;
            c.out_at = rot % 3 == 2 ? 1 : 0;
            c.in_at = rot % 5 == 1 ? 3 : 0;
            check(ctx, &c);
          }
      }
  }
  test_report_end();
}

/* The knobs: work-groups of 2 (elements of more words than that) and 48
 * (teams that leave work-items over), scatters in steps of 100, and on
 * the cpu path shares of 16 elements (its kernels ignore the work-group
 * size); then scatters of 8-byte elements without 64-bit atomics
 * (marking winners), on one path. A few element sizes each: PoCL compiles
 * each kernel again for each work-group size. */
struct tune {
  int cpu; /* for the cpu path, else for the others */
  const char *knobs;
  size_t es[2];
};
static const struct tune tunes[] = {
    {0, "gather.wg=2", {40, 3}},
    {0, "gather.wg=48,gather.step=100", {40, 64}},
    {1, "gather.step=100,launch.cpu_share_min=16,launch.cpu_shares_per_unit=64", {12, 1}},
};

/* Cases of sizes up to 700: gather and scatter in turn, or (scatter_only)
 * scatters alone. */
static void knob_cases(clprim_context *ctx, const size_t es[2], int scatter_only, unsigned *rot) {
  static const size_t ns[] = {1, 5, 33, 100, 257, 700};
  for (size_t k = 0; k < COUNT(ns); ++k, ++*rot) {
    if (test_small() && ns[k] > SMALL_N) continue;
    struct gather_case c;
    memset(&c, 0, sizeof c);
    c.scatter = scatter_only || *rot % 2, c.es = es[*rot / 2 % 2];
    c.n = ns[k], c.kind = *rot % 5 == 0 ? K_PERMUTATION : K_RANDOM;
    c.count = c.kind == K_PERMUTATION ? c.n : c.n / 3 + 1;
    c.idx64 = *rot / 3 % 2, c.check = *rot / 4 % 2;
    check(ctx, &c);
  }
}

static void test_knobs(void **state) {
  (void)state;
  unsigned rot = 0;
  clprim_context *last = NULL;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = last = contexts.ctx[p];
    for (size_t u = 0; u < COUNT(tunes); ++u) {
      if (tunes[u].cpu != (ctx->info.path == CLPRIM_PATH_CPU)) continue;
      TEST_OK(clprim__tune(ctx, tunes[u].knobs));
      knob_cases(ctx, tunes[u].es, 0, &rot);
      TEST_OK(clprim__tune(ctx, "gather.wg=-1,gather.step=-1,launch.cpu_share_min=-1,"
                                "launch.cpu_shares_per_unit=-1"));
    }
  }
  if (last) {
    const int had = last->info.has_int64_atomics;
    last->info.has_int64_atomics = 0;
    const size_t es[2] = {8, 8};
    knob_cases(last, es, 1, &rot);
    last->info.has_int64_atomics = had;
  }
  test_report_end();
}

/* in and indices in one buffer (both only read): uint32 elements gathered
 * by themselves, out[i] = x[x[i]]. */
static void test_shared_input(void **state) {
  (void)state;
  enum { N = 500 };
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    uint32_t x[N], got[N];
    for (size_t i = 0; i < N; ++i)
      x[i] = (uint32_t)(test_rand() % N);
    cl_mem b = test_buffer(ctx, sizeof x, x), o = test_buffer(ctx, sizeof got, NULL);
    TEST_OK(clprim_gather(ctx, N, 4, clprim_buf(b), N, CLPRIM_UINT32, clprim_buf(b),
                          CLPRIM_CHECK_INDICES, clprim_buf(o)));
    test_read(ctx, o, sizeof got, got);
    for (size_t i = 0; i < N; ++i)
      if (got[i] != x[x[i]]) {
        test_report("shared input on %s: out[%zu] is %u, expected %u", test_path_of(ctx), i, got[i],
                    x[x[i]]);
        break;
      }
    clReleaseMemObject(b), clReleaseMemObject(o);
  }
  test_report_end();
}

/* --------------------------------------------------------------- errors */
/* Each refused call writes nothing (out keeps its pattern). */
static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx); /* a, b, o, o2: 4096 bytes each */
  const size_t N = 64;
  cl_mem foreign = test_foreign_buffer(ctx, bytes);
  const clprim_type U32 = CLPRIM_UINT32, U64 = CLPRIM_UINT64;
  const unsigned CHECK = CLPRIM_CHECK_INDICES;
  /* a and b hold valid uint32 indices below N wherever they are read. */
  uint32_t idx[1024];
  for (size_t i = 0; i < 1024; ++i)
    idx[i] = (uint32_t)(i * 7 % N);
  test_write(ctx, b, sizeof idx, idx);
  for (int scatter = 0; scatter < 2; ++scatter) {
#define CALL(ctx_, n_, es_, in_, count_, it_, ix_, flags_, out_)                                   \
  (scatter ? clprim_scatter(ctx_, n_, es_, in_, it_, ix_, flags_, out_, count_)                    \
           : clprim_gather(ctx_, n_, es_, in_, count_, it_, ix_, flags_, out_))
    const char *name = scatter ? "scatter" : "gather";
    TEST_STATUS(INVALID, CALL(NULL, N, 4, A, N, U32, B, 0, O));
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 0, A, N, U32, B, 0, O), "elem_size (0)");
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 65, A, N, U32, B, 0, O), "elem_size (65)");
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 4, A, N, CLPRIM_INT32, B, 0, O), "index_type (0)");
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 4, A, N, (clprim_type)9, B, 0, O), "index_type (9)");
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 4, A, N, CLPRIM_FLOAT, B, 0, O), "index_type");
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 4, A, N, U32, B, CLPRIM_INDICES_64, O),
              "CLPRIM_INDICES_64");
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 4, A, N, U32, B, CHECK | (1u << 20), O), "0x100000");
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 4, NONE, N, U32, B, 0, O), "in is required");
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 4, A, N, U32, NONE, 0, O), "indices is required");
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 4, A, N, U32, B, 0, NONE), "out is required");
    /* Ranges past their buffers: in (gather: in_count; scatter: n), indices, out. */
    TEST_TEXT(ctx, SMALL, CALL(ctx, scatter ? 1025 : 1, 4, A, scatter ? 1 : 1025, U32, B, 0, O),
              "in holds 1024");
    TEST_TEXT(ctx, SMALL, CALL(ctx, 1025, 1, A, 1025, U32, B, 0, O), "indices holds 1024");
    TEST_TEXT(ctx, SMALL, CALL(ctx, 513, 1, A, 513, U64, B, 0, O), "indices holds 512");
    TEST_TEXT(ctx, SMALL, CALL(ctx, N, 4, clprim_buf_at(a, 1000), N, U32, B, 0, O), "in holds 24");
    TEST_TEXT(ctx, SMALL, CALL(ctx, scatter ? N : 1025, 4, A, scatter ? 1025 : N, U32, B, 0, O),
              scatter ? "out holds 1024" : "indices");
    TEST_TEXT(ctx, SMALL, CALL(ctx, 9, 64, A, 9, U32, B, 0, clprim_buf_at(o, 60)), "out holds 4");
    TEST_STATUS(CL_INVALID_CONTEXT, CALL(ctx, N, 4, clprim_buf(foreign), N, U32, B, 0, O));
    TEST_STATUS(CL_INVALID_CONTEXT, CALL(ctx, N, 4, A, N, U32, B, 0, clprim_buf(foreign)));
    /* out over in or over indices. */
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 4, A, N, U32, B, 0, clprim_buf_at(a, N - 1)),
              "out overlaps in");
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 4, A, N, U32, B, 0, clprim_buf_at(b, 3)),
              "out overlaps indices");
    /* An index out of range, with the check: the first one's position. */
    uint32_t bad[N];
    memcpy(bad, idx, sizeof bad);
    bad[17] = 1000, bad[40] = (uint32_t)N;
    test_write(ctx, o2, sizeof bad, bad);
    char text[64];
    snprintf(text, sizeof text, "%s: indices[17] (1000) is out of range: %s is %zu", name,
             scatter ? "out_count" : "in_count", N);
    TEST_TEXT(ctx, INVALID, CALL(ctx, N, 4, A, N, U32, O2, CHECK, O), text);
    test_pattern_intact(ctx, o, bytes, name);
    test_pattern_intact(ctx, a, bytes, name);
    /* n = 0: nothing written, also with the check. */
    TEST_OK_NO_TEXT(ctx, CALL(ctx, 0, 64, A, 0, U64, B, CHECK, O));
    TEST_OK_NO_TEXT(ctx, CALL(ctx, 0, 3, A, N, U32, B, 0, O));
    test_pattern_intact(ctx, o, bytes, name);
#undef CALL
  }
  clReleaseMemObject(foreign);
  TEST_TEXT_BUFFERS_FREE();
}

int main(void) {
  test_init("test_gather");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),       cmocka_unit_test(test_shared_input),
      cmocka_unit_test(test_out_of_range), cmocka_unit_test(test_knobs),
      cmocka_unit_test(test_gather),       cmocka_unit_test(test_scatter),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
