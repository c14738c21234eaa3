/* test_faults: a call that fails writes nothing, in every family, proven by
 * failing OpenCL one call at a time (tests/fault_shim.c wraps every entry
 * point libclprim imports).
 *
 * For each case (a call of a family on fresh random data with a CPU
 * reference), on every path the device runs:
 *  1. a clean run counts the OpenCL calls the call makes (programs built);
 *  2. for every K (for calls of more than 100 OpenCL calls a sample of
 *     about 100, from a phase the seed draws) the K-th call fails with
 *     CL_OUT_OF_RESOURCES, CL_MEM_OBJECT_ALLOCATION_FAILURE or
 *     CL_OUT_OF_HOST_MEMORY in turn. The call must return that code (or
 *     succeed with the right result, where clprim recovers, e.g. from a
 *     disk-cache miss), and then:
 *     - every output range still holds its sentinel bytes, and the host
 *       results theirs, unless the failure came after the command that
 *       writes the outputs: clprim.h's "what a failed call leaves" (a
 *       read of a host result after it, or a call marked as writing in steps);
 *     - the next call on the same context gives the right result;
 *  3. the same with the context's programs dropped first (the failures land
 *     in program builds; about 16 K, sampled the same way);
 *  4. the context is freed and no OpenCL object made through it is left.
 * The shim also says which commands write the outputs: a call not marked as
 * writing in steps writes them with one command and nothing that can fail
 * but host reads comes after it.
 * Context creation is swept the same way (about 200 K): the injected code comes back
 * (clprim_status_name names it) and nothing is left.
 *
 * `test_faults --quick` sweeps a sample of K for every case (the sanitizer
 * build runs it); CLPRIM_TEST_FILTER picks cases. */
#include "common.h"
#include "fault_shim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OUT 6
#define SENTINEL 0xA5

static int quick;

/* A case's buffers and reference. */
struct fx {
  clprim_context *ctx;
  clprim_type type;
  size_t n;
  cl_mem in[4];
  size_t in_count;
  cl_mem out[MAX_OUT];
  size_t out_bytes[MAX_OUT], outs;
  unsigned char *got[MAX_OUT]; /* outputs read back */
  unsigned char host[512];     /* the call's host results */
  void *ref, *data;            /* the case's reference and input (host) */
  size_t ref_count;
  clprim_pipeline *pipe;
  clprim_operator *op; /* a user operator made on ctx */
};

struct fault_case {
  const char *name;
  /* Writes its outputs with more than one command (clprim.h says which
   * calls do): a failure between them may leave some written. */
  int in_steps;
  void (*setup)(struct fx *);
  clprim_status (*call)(struct fx *);
  /* NULL when the outputs (f->got, read back) and host results are right. */
  const char *(*verify)(struct fx *);
};

static cl_mem fx_in(struct fx *f, size_t bytes, const void *host) {
  shim_pause(1);
  cl_mem m = test_buffer(f->ctx, bytes, host);
  shim_pause(0);
  f->in[f->in_count++] = m;
  return m;
}

static cl_mem fx_out(struct fx *f, size_t bytes) {
  shim_pause(1);
  cl_mem m = test_buffer(f->ctx, bytes, NULL);
  shim_pause(0);
  f->out_bytes[f->outs] = bytes ? bytes : 1;
  f->got[f->outs] = malloc(f->out_bytes[f->outs]);
  assert_non_null(f->got[f->outs]);
  f->out[f->outs++] = m;
  return m;
}

static void fx_sentinels(struct fx *f) {
  shim_pause(1);
  for (size_t o = 0; o < f->outs; ++o) {
    memset(f->got[o], SENTINEL, f->out_bytes[o]);
    test_write(f->ctx, f->out[o], f->out_bytes[o], f->got[o]);
  }
  memset(f->host, SENTINEL, sizeof f->host);
  shim_pause(0);
}

static void fx_read(struct fx *f) {
  shim_pause(1);
  clFinish(clprim_context_queue(f->ctx));
  for (size_t o = 0; o < f->outs; ++o) test_read(f->ctx, f->out[o], f->out_bytes[o], f->got[o]);
  shim_pause(0);
}

/* The first output (or host result, -1) that lost its sentinel, or -2. */
static int fx_touched(struct fx *f) {
  fx_read(f);
  for (size_t o = 0; o < f->outs; ++o)
    for (size_t b = 0; b < f->out_bytes[o]; ++b)
      if (f->got[o][b] != SENTINEL) return (int)o;
  for (size_t b = 0; b < sizeof f->host; ++b)
    if (f->host[b] != SENTINEL) return -1;
  return -2;
}

static void fx_free(struct fx *f) {
  shim_pause(1);
  clFinish(clprim_context_queue(f->ctx));
  for (size_t i = 0; i < f->in_count; ++i) clReleaseMemObject(f->in[i]);
  for (size_t o = 0; o < f->outs; ++o) {
    clReleaseMemObject(f->out[o]);
    free(f->got[o]);
  }
  clprim_pipeline_free(f->pipe);
  clprim_operator_free(f->op);
  free(f->ref);
  free(f->data);
  shim_pause(0);
}

/* Host results live in f->host: these name its parts. */
#define HOST_COUNT(f) ((uint64_t *)(void *)((f)->host))
#define HOST_VALUE(f) ((clprim_value *)(void *)((f)->host + 64))
#define HOST_INDEX(f) ((uint64_t *)(void *)((f)->host + 32))

static uint32_t *u32(const void *p) { return (uint32_t *)(uintptr_t)p; }
static uint64_t *u64(const void *p) { return (uint64_t *)(uintptr_t)p; }
static float *f32(const void *p) { return (float *)(uintptr_t)p; }

/* Random uint32 below `below`. */
static uint32_t *random_u32(size_t n, uint32_t below) {
  uint32_t *d = malloc(n * 4 + 4);
  assert_non_null(d);
  for (size_t i = 0; i < n; ++i) d[i] = (uint32_t)(test_rand() % below);
  return d;
}
/* Sorted runs: keys that repeat for 1 to max_run elements. */
static uint32_t *runs_u32(size_t n, unsigned max_run) {
  uint32_t *d = malloc(n * 4 + 4);
  assert_non_null(d);
  uint32_t key = 0;
  for (size_t i = 0; i < n;) {
    size_t run = 1 + test_rand() % max_run;
    key += 1 + (uint32_t)(test_rand() % 3);
    for (size_t j = 0; j < run && i < n; ++j) d[i++] = key;
  }
  return d;
}
static float *random_f32(size_t n) {
  float *d = malloc(n * 4 + 4);
  assert_non_null(d);
  for (size_t i = 0; i < n; ++i) d[i] = (float)test_uniform();
  return d;
}

/* ------------------------------------------------------------ scans */
static void setup_scan(struct fx *f) {
  f->n = 5000 + test_rand() % 3000;
  f->data = random_u32(f->n, 1000);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, f->n * 4);
}
static clprim_status call_scan(struct fx *f) {
  return clprim_scan_exclusive(f->ctx, f->n, CLPRIM_INT32, clprim_buf(f->in[0]), 0,
                               clprim_buf(f->out[0]));
}
static const char *verify_scan(struct fx *f) {
  uint32_t sum = 0;
  for (size_t i = 0; i < f->n; ++i) {
    if (u32(f->got[0])[i] != sum) return "wrong prefix sum";
    sum += u32(f->data)[i];
  }
  return NULL;
}

/* The exact exclusive float scan of integers below 2^24 with random signs:
 * each prefix exact in int64, rounded once by C's conversion, as
 * CLPRIM_EXACT must (several chunks, so every pass runs). */
static void setup_scan_exact(struct fx *f) {
  f->n = 9000 + test_rand() % 9000;
  f->data = malloc(f->n * 4);
  assert_non_null(f->data);
  for (size_t i = 0; i < f->n; ++i)
    ((float *)f->data)[i] =
        (float)((int32_t)(test_rand() % (1u << 24)) * (test_rand() % 2 ? -1 : 1));
  fx_in(f, f->n * 4, f->data);
  fx_out(f, f->n * 4);
}
static clprim_status call_scan_exact(struct fx *f) {
  return clprim_scan_exclusive(f->ctx, f->n, CLPRIM_FLOAT, clprim_buf(f->in[0]), CLPRIM_EXACT,
                               clprim_buf(f->out[0]));
}
static const char *verify_scan_exact(struct fx *f) {
  int64_t sum = 0;
  for (size_t i = 0; i < f->n; ++i) {
    const float want = (float)sum;
    if (memcmp((const float *)f->got[0] + i, &want, 4) != 0) return "wrong exact prefix sum";
    sum += (int64_t)((const float *)f->data)[i];
  }
  return NULL;
}

static void setup_scan_by_key(struct fx *f) {
  f->n = 6000 + test_rand() % 3000;
  f->ref = runs_u32(f->n, 300);
  f->data = random_u32(f->n, 100);
  fx_in(f, f->n * 4, f->ref);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, f->n * 4);
}
static clprim_status call_scan_by_key(struct fx *f) {
  return clprim_scan_inclusive_by_key(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]),
                                      CLPRIM_UINT32, clprim_buf(f->in[1]), clprim_buf(f->out[0]));
}
static const char *verify_scan_by_key(struct fx *f) {
  uint32_t sum = 0;
  for (size_t i = 0; i < f->n; ++i) {
    if (i == 0 || u32(f->ref)[i] != u32(f->ref)[i - 1]) sum = 0;
    sum += u32(f->data)[i];
    if (u32(f->got[0])[i] != sum) return "wrong sum by key";
  }
  return NULL;
}

/* ------------------------------------------------------- reductions */
static void setup_argmax(struct fx *f) {
  f->n = 9000 + test_rand() % 9000;
  f->data = random_f32(f->n);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, 16);
}
static clprim_status call_argmax(struct fx *f) {
  return clprim_argmax(f->ctx, f->n, CLPRIM_FLOAT, clprim_buf(f->in[0]), 0, HOST_VALUE(f),
                       HOST_INDEX(f), clprim_buf(f->out[0]));
}
static const char *verify_argmax(struct fx *f) {
  size_t best = 0;
  for (size_t i = 1; i < f->n; ++i)
    if (f32(f->data)[i] > f32(f->data)[best]) best = i;
  if (HOST_VALUE(f)->f32 != f32(f->data)[best] || *HOST_INDEX(f) != best) return "wrong host argmax";
  if (u64(f->got[0])[1] != best) return "wrong device argmax";
  return NULL;
}

static void setup_sum(struct fx *f) {
  f->n = 9000 + test_rand() % 90000;
  f->data = random_u32(f->n, 1u << 30);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, 8);
}
static clprim_status call_sum(struct fx *f) {
  return clprim_reduce_sum(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), 0, HOST_VALUE(f),
                           clprim_buf(f->out[0]));
}
static const char *verify_sum(struct fx *f) {
  uint32_t sum = 0;
  for (size_t i = 0; i < f->n; ++i) sum += u32(f->data)[i];
  if (HOST_VALUE(f)->u32 != sum) return "wrong host sum";
  if (u32(f->got[0])[0] != sum) return "wrong device sum";
  return NULL;
}

/* The exact float sum of integers below 2^24 with random signs: exact in
 * int64, rounded once by C's conversion, as CLPRIM_EXACT must. */
static void setup_sum_exact(struct fx *f) {
  f->n = 9000 + test_rand() % 90000;
  f->data = malloc(f->n * 4);
  assert_non_null(f->data);
  for (size_t i = 0; i < f->n; ++i)
    ((float *)f->data)[i] = (float)((int32_t)(test_rand() % (1u << 24)) * (test_rand() % 2 ? -1 : 1));
  fx_in(f, f->n * 4, f->data);
  fx_out(f, 8);
}
static clprim_status call_sum_exact(struct fx *f) {
  return clprim_reduce_sum(f->ctx, f->n, CLPRIM_FLOAT, clprim_buf(f->in[0]), CLPRIM_EXACT,
                           HOST_VALUE(f), clprim_buf(f->out[0]));
}
static const char *verify_sum_exact(struct fx *f) {
  int64_t sum = 0;
  for (size_t i = 0; i < f->n; ++i) sum += (int64_t)((const float *)f->data)[i];
  const float want = (float)sum;
  if (memcmp(&HOST_VALUE(f)->f32, &want, 4) != 0) return "wrong host exact sum";
  if (memcmp(f->got[0], &want, 4) != 0) return "wrong device exact sum";
  return NULL;
}

/* Segments: begins and ends (uint64) over n, some empty. */
static void make_segments(struct fx *f, size_t segments, size_t long_at, size_t long_len) {
  uint64_t *b = malloc(segments * 8), *e = malloc(segments * 8);
  assert_true(b && e);
  size_t at = 0;
  for (size_t s = 0; s < segments; ++s) {
    size_t len = s == long_at ? long_len : test_rand() % 200;
    if (at + len > f->n) len = f->n - at;
    b[s] = at, e[s] = at + len;
    at += len;
  }
  fx_in(f, segments * 8, b);
  fx_in(f, segments * 8, e);
  free(f->ref);
  f->ref = malloc(segments * 16);
  memcpy(f->ref, b, segments * 8);
  memcpy((char *)f->ref + segments * 8, e, segments * 8);
  f->ref_count = segments;
  free(b), free(e);
}
#define SEG_BEGIN(f, s) (u64((f)->ref)[s])
#define SEG_END(f, s) (u64((f)->ref)[(f)->ref_count + (s)])

static void setup_segmented_sum(struct fx *f) {
  f->n = 20000;
  f->data = random_u32(f->n, 1000);
  fx_in(f, f->n * 4, f->data);
  make_segments(f, 150, SIZE_MAX, 0);
  fx_out(f, f->ref_count * 4);
}
static clprim_status call_segmented_sum(struct fx *f) {
  return clprim_segmented_sum(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), f->ref_count,
                              CLPRIM_UINT64, clprim_buf(f->in[1]), clprim_buf(f->in[2]), 0,
                              clprim_buf(f->out[0]));
}
static const char *verify_segmented_sum(struct fx *f) {
  for (size_t s = 0; s < f->ref_count; ++s) {
    uint32_t sum = 0;
    for (uint64_t i = SEG_BEGIN(f, s); i < SEG_END(f, s); ++i) sum += u32(f->data)[i];
    if (u32(f->got[0])[s] != sum) return "wrong segment sum";
  }
  return NULL;
}

/* CLPRIM_EXACT per segment: float integers below 2^24 with random signs
 * (each segment's exact sum an integer that C's conversion rounds). */
static void setup_segmented_sum_exact(struct fx *f) {
  f->n = 20000;
  f->data = malloc(f->n * 4);
  assert_non_null(f->data);
  for (size_t i = 0; i < f->n; ++i)
    ((float *)f->data)[i] = (float)((int32_t)(test_rand() % (1u << 24)) * (test_rand() % 2 ? -1 : 1));
  fx_in(f, f->n * 4, f->data);
  make_segments(f, 150, SIZE_MAX, 0);
  fx_out(f, f->ref_count * 4);
}
static clprim_status call_segmented_sum_exact(struct fx *f) {
  return clprim_segmented_sum(f->ctx, f->n, CLPRIM_FLOAT, clprim_buf(f->in[0]), f->ref_count,
                              CLPRIM_UINT64, clprim_buf(f->in[1]), clprim_buf(f->in[2]),
                              CLPRIM_EXACT, clprim_buf(f->out[0]));
}
static const char *verify_segmented_sum_exact(struct fx *f) {
  for (size_t s = 0; s < f->ref_count; ++s) {
    int64_t sum = 0;
    for (uint64_t i = SEG_BEGIN(f, s); i < SEG_END(f, s); ++i)
      sum += (int64_t)((const float *)f->data)[i];
    const float want = (float)sum;
    if (memcmp(f->got[0] + s * 4, &want, 4) != 0) return "wrong exact segment sum";
  }
  return NULL;
}

/* CLPRIM_EXACT dense sums: float integers below 2^24 with random signs by
 * key (each key's exact sum an integer that C's conversion rounds); keys
 * at or above K are invalid. 100 keys fit in local memory, 2000 do not. */
static void setup_dense_exact_keys(struct fx *f, size_t keys) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(f->n, (uint32_t)(keys + keys / 10)); /* keys */
  f->ref = malloc(f->n * 4);                                /* values */
  assert_non_null(f->ref);
  for (size_t i = 0; i < f->n; ++i)
    ((float *)f->ref)[i] =
        (float)((int32_t)(test_rand() % (1u << 24)) * (test_rand() % 2 ? -1 : 1));
  f->ref_count = keys;
  fx_in(f, f->n * 4, f->data);
  fx_in(f, f->n * 4, f->ref);
  fx_out(f, keys * 4); /* sums */
  fx_out(f, keys * 4); /* counts */
  fx_out(f, 8);        /* invalid */
}
static void setup_dense_exact(struct fx *f) {
  setup_dense_exact_keys(f, 100);
}
static void setup_dense_exact_many(struct fx *f) {
  setup_dense_exact_keys(f, 2000);
}
static clprim_status call_dense_exact(struct fx *f) {
  return clprim_reduce_by_key_dense(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), CLPRIM_FLOAT,
                                    clprim_buf(f->in[1]), f->ref_count, CLPRIM_EXACT,
                                    clprim_buf(f->out[0]), clprim_buf(f->out[1]), HOST_COUNT(f),
                                    clprim_buf(f->out[2]));
}
static const char *verify_dense_exact(struct fx *f) {
  const size_t keys = f->ref_count;
  int64_t *sums = calloc(keys, 8);
  uint32_t *counts = calloc(keys, 4);
  uint64_t invalid = 0;
  const char *bad = NULL;
  assert_true(sums && counts);
  for (size_t i = 0; i < f->n; ++i) {
    const uint32_t k = u32(f->data)[i];
    if (k >= keys) {
      ++invalid;
      continue;
    }
    sums[k] += (int64_t)((const float *)f->ref)[i], ++counts[k];
  }
  for (size_t k = 0; k < keys && !bad; ++k) {
    const float want = (float)sums[k];
    if (memcmp(f->got[0] + k * 4, &want, 4) != 0) bad = "wrong exact sums";
  }
  if (!bad && memcmp(counts, f->got[1], keys * 4) != 0) bad = "wrong counts";
  if (!bad && HOST_COUNT(f)[0] != invalid) bad = "wrong host invalid count";
  if (!bad && u64(f->got[2])[0] != invalid) bad = "wrong device invalid count";
  free(sums), free(counts);
  return bad;
}

/* ---------------------------------------------------- compaction */
static void setup_select(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(f->n, 1000);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, f->n * 4); /* values */
  fx_out(f, f->n * 4); /* indices */
  fx_out(f, 8);        /* count */
}
static const clprim_predicate *gt500(void) {
  static clprim_predicate p;
  p.op = CLPRIM_PRED_GT;
  p.a.u32 = 500;
  return &p;
}
static clprim_status call_select(struct fx *f) {
  return clprim_select(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), gt500(), 0,
                       clprim_buf(f->out[0]), clprim_buf(f->out[1]), HOST_COUNT(f),
                       clprim_buf(f->out[2]));
}
static clprim_status call_select_expr(struct fx *f) {
  return clprim_select_expr(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), "x > 500u", 0,
                            clprim_buf(f->out[0]), clprim_buf(f->out[1]), HOST_COUNT(f),
                            clprim_buf(f->out[2]));
}
static clprim_status call_select_params(struct fx *f) {
  const double params[8] = {500.0};
  return clprim_select_expr_params(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]),
                                   "x > (uint)p0", params, 0, clprim_buf(f->out[0]),
                                   clprim_buf(f->out[1]), HOST_COUNT(f), clprim_buf(f->out[2]));
}
/* select's outputs: the passing values and positions, and the count. */
static const char *verify_select(struct fx *f) {
  uint64_t c = 0;
  for (size_t i = 0; i < f->n; ++i)
    if (u32(f->data)[i] > 500) {
      if (u32(f->got[0])[c] != u32(f->data)[i] || u32(f->got[1])[c] != i) return "wrong selection";
      ++c;
    }
  if (*HOST_COUNT(f) != c || u64(f->got[2])[0] != c) return "wrong count";
  return NULL;
}

static void setup_select_count(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(f->n, 1000);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, 8);
}
static clprim_status call_select_count(struct fx *f) {
  const clprim_buffer none = {NULL, 0};
  return clprim_select(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), gt500(), 0, none, none,
                       NULL, clprim_buf(f->out[0]));
}
static const char *verify_select_count(struct fx *f) {
  uint64_t c = 0;
  for (size_t i = 0; i < f->n; ++i) c += u32(f->data)[i] > 500;
  return u64(f->got[0])[0] == c ? NULL : "wrong count";
}

static void setup_flagged(struct fx *f) {
  setup_select(f);
  unsigned char *flags = malloc(f->n);
  assert_non_null(flags);
  for (size_t i = 0; i < f->n; ++i) flags[i] = u32(f->data)[i] > 500;
  fx_in(f, f->n, flags);
  free(flags);
}
static clprim_status call_flagged(struct fx *f) {
  return clprim_select_flagged(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]),
                               clprim_buf(f->in[1]), CLPRIM_FLAGS_UINT8, 0, clprim_buf(f->out[0]),
                               clprim_buf(f->out[1]), HOST_COUNT(f), clprim_buf(f->out[2]));
}

static void setup_partition(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(f->n, 1000);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, f->n * 4);
  fx_out(f, 8);
}
static clprim_status call_partition(struct fx *f) {
  const clprim_buffer none = {NULL, 0};
  return clprim_partition(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), gt500(), 0,
                          clprim_buf(f->out[0]), none, HOST_COUNT(f), clprim_buf(f->out[1]));
}
static const char *verify_partition(struct fx *f) {
  uint64_t c = 0;
  for (size_t i = 0; i < f->n; ++i) c += u32(f->data)[i] > 500;
  size_t pass = 0, fail = (size_t)c;
  for (size_t i = 0; i < f->n; ++i) {
    const uint32_t x = u32(f->data)[i];
    if (u32(f->got[0])[x > 500 ? pass++ : fail++] != x) return "wrong partition";
  }
  if (*HOST_COUNT(f) != c || u64(f->got[1])[0] != c) return "wrong count";
  return NULL;
}

static void setup_partition3(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(f->n, 1000);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, f->n * 4);
  fx_out(f, f->n * 4);
  fx_out(f, 16);
}
static clprim_status call_partition3(struct fx *f) {
  clprim_predicate lt;
  memset(&lt, 0, sizeof lt);
  lt.op = CLPRIM_PRED_LT;
  lt.a.u32 = 300;
  return clprim_partition3(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), gt500(), &lt, 0,
                           clprim_buf(f->out[0]), clprim_buf(f->out[1]), HOST_COUNT(f),
                           clprim_buf(f->out[2]));
}
static const char *verify_partition3(struct fx *f) {
  uint64_t c[2] = {0, 0};
  for (size_t i = 0; i < f->n; ++i) {
    const uint32_t x = u32(f->data)[i];
    c[0] += x > 500, c[1] += x <= 500 && x < 300;
  }
  size_t at[3] = {0, (size_t)c[0], (size_t)(c[0] + c[1])};
  for (size_t i = 0; i < f->n; ++i) {
    const uint32_t x = u32(f->data)[i];
    const int cls = x > 500 ? 0 : x < 300 ? 1 : 2;
    const size_t j = at[cls]++;
    if (u32(f->got[0])[j] != x || u32(f->got[1])[j] != i) return "wrong three-way partition";
  }
  if (HOST_COUNT(f)[0] != c[0] || HOST_COUNT(f)[1] != c[1] || u64(f->got[2])[0] != c[0] ||
      u64(f->got[2])[1] != c[1])
    return "wrong counts";
  return NULL;
}

/* ------------------------------------------- histograms, reduce-by-key */
static void setup_histogram(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_f32(f->n);
  for (size_t i = 0; i < f->n; i += 97) f32(f->data)[i] = 2.0f; /* above */
  fx_in(f, f->n * 4, f->data);
  fx_out(f, 64 * 4);
  fx_out(f, 3 * 8);
}
static clprim_status call_histogram(struct fx *f) {
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
  lo.f32 = 0.0f, hi.f32 = 1.0f;
  return clprim_histogram_even(f->ctx, f->n, CLPRIM_FLOAT, clprim_buf(f->in[0]), lo, hi, 64,
                               clprim_buf(f->out[0]), HOST_COUNT(f), clprim_buf(f->out[1]));
}
static const char *verify_histogram(struct fx *f) {
  uint32_t bins[64] = {0};
  uint64_t above = 0;
  for (size_t i = 0; i < f->n; ++i) {
    const float x = f32(f->data)[i];
    if (x >= 1.0f) {
      ++above;
      continue;
    }
    int b = (int)((x - 0.0f) * (64.0f / 1.0f));
    if (b > 63) b = 63;
    ++bins[b];
  }
  if (memcmp(bins, f->got[0], sizeof bins) != 0) return "wrong counts";
  if (HOST_COUNT(f)[0] != 0 || HOST_COUNT(f)[1] != above || HOST_COUNT(f)[2] != 0)
    return "wrong host outside counts";
  if (u64(f->got[1])[0] != 0 || u64(f->got[1])[1] != above || u64(f->got[1])[2] != 0)
    return "wrong device outside counts";
  return NULL;
}

static void setup_dense(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(f->n, 110); /* keys 100..109 are invalid */
  f->ref = random_u32(f->n, 1000); /* values */
  fx_in(f, f->n * 4, f->data);
  fx_in(f, f->n * 4, f->ref);
  fx_out(f, 100 * 4); /* sums */
  fx_out(f, 100 * 4); /* counts */
  fx_out(f, 8);       /* invalid */
}
static clprim_status call_dense(struct fx *f) {
  return clprim_reduce_by_key_dense(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]),
                                    CLPRIM_UINT32, clprim_buf(f->in[1]), 100, 0,
                                    clprim_buf(f->out[0]), clprim_buf(f->out[1]), HOST_COUNT(f),
                                    clprim_buf(f->out[2]));
}
static const char *verify_dense(struct fx *f) {
  uint32_t sums[100] = {0}, counts[100] = {0};
  uint64_t invalid = 0;
  for (size_t i = 0; i < f->n; ++i) {
    const uint32_t k = u32(f->data)[i];
    if (k >= 100) {
      ++invalid;
      continue;
    }
    sums[k] += u32(f->ref)[i], ++counts[k];
  }
  if (memcmp(sums, f->got[0], sizeof sums) || memcmp(counts, f->got[1], sizeof counts))
    return "wrong sums or counts";
  if (*HOST_COUNT(f) != invalid || u64(f->got[2])[0] != invalid) return "wrong invalid count";
  return NULL;
}

static void setup_histogram_keys(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(f->n, 110);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, 100 * 4);
  fx_out(f, 8);
}
static clprim_status call_histogram_keys(struct fx *f) {
  return clprim_histogram_keys(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), 100,
                               clprim_buf(f->out[0]), HOST_COUNT(f), clprim_buf(f->out[1]));
}
static const char *verify_histogram_keys(struct fx *f) {
  uint32_t counts[100] = {0};
  uint64_t invalid = 0;
  for (size_t i = 0; i < f->n; ++i) {
    const uint32_t k = u32(f->data)[i];
    if (k >= 100)
      ++invalid;
    else
      ++counts[k];
  }
  if (memcmp(counts, f->got[0], sizeof counts)) return "wrong counts";
  if (*HOST_COUNT(f) != invalid || u64(f->got[1])[0] != invalid) return "wrong invalid count";
  return NULL;
}

static void setup_rbk(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = runs_u32(f->n, 40);
  f->ref = random_u32(f->n, 1000);
  fx_in(f, f->n * 4, f->data);
  fx_in(f, f->n * 4, f->ref);
  fx_out(f, f->n * 4);
  fx_out(f, f->n * 4);
  fx_out(f, 8);
}
static clprim_status call_rbk(struct fx *f) {
  return clprim_reduce_by_key(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), CLPRIM_UINT32,
                              clprim_buf(f->in[1]), 0, clprim_buf(f->out[0]), clprim_buf(f->out[1]),
                              HOST_COUNT(f), clprim_buf(f->out[2]));
}
static const char *verify_rbk(struct fx *f) {
  uint64_t c = 0;
  for (size_t i = 0; i < f->n;) {
    const uint32_t key = u32(f->data)[i];
    uint32_t sum = 0;
    for (; i < f->n && u32(f->data)[i] == key; ++i) sum += u32(f->ref)[i];
    if (u32(f->got[0])[c] != key || u32(f->got[1])[c] != sum) return "wrong key or sum";
    ++c;
  }
  if (*HOST_COUNT(f) != c || u64(f->got[2])[0] != c) return "wrong count";
  return NULL;
}

/* CLPRIM_EXACT over runs: float integers below 2^24 with random signs, each
 * run's exact sum an integer that C's conversion rounds once. f->ref: the
 * keys (runs up to 300 long). */
static void setup_rbk_exact(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->ref = runs_u32(f->n, 300);
  f->data = malloc(f->n * 4);
  assert_non_null(f->data);
  for (size_t i = 0; i < f->n; ++i)
    f32(f->data)[i] = (float)((int32_t)(test_rand() % (1u << 24)) * (test_rand() % 2 ? -1 : 1));
  fx_in(f, f->n * 4, f->ref);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, f->n * 4);
  fx_out(f, f->n * 4);
  fx_out(f, 8);
}
static clprim_status call_rbk_exact(struct fx *f) {
  return clprim_reduce_by_key(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), CLPRIM_FLOAT,
                              clprim_buf(f->in[1]), CLPRIM_EXACT, clprim_buf(f->out[0]),
                              clprim_buf(f->out[1]), HOST_COUNT(f), clprim_buf(f->out[2]));
}
static const char *verify_rbk_exact(struct fx *f) {
  uint64_t c = 0;
  for (size_t i = 0; i < f->n;) {
    const uint32_t key = u32(f->ref)[i];
    int64_t sum = 0;
    for (; i < f->n && u32(f->ref)[i] == key; ++i) sum += (int64_t)f32(f->data)[i];
    const float want = (float)sum;
    if (u32(f->got[0])[c] != key) return "wrong key";
    if (memcmp(f->got[1] + c * 4, &want, 4) != 0) return "wrong exact sum";
    ++c;
  }
  if (*HOST_COUNT(f) != c || u64(f->got[2])[0] != c) return "wrong count";
  return NULL;
}

/* ------------------------------------------------------------ runs */
static void setup_unique(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = runs_u32(f->n, 12);
  f->ref = random_u32(f->n, 1000);
  fx_in(f, f->n * 4, f->data);
  fx_in(f, f->n * 4, f->ref);
  fx_out(f, f->n * 4);
  fx_out(f, f->n * 4);
  fx_out(f, 8);
}
static clprim_status call_unique(struct fx *f) {
  return clprim_unique(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), clprim_buf(f->out[0]),
                       HOST_COUNT(f), clprim_buf(f->out[2]));
}
static clprim_status call_unique_by_key(struct fx *f) {
  return clprim_unique_by_key(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), CLPRIM_UINT32,
                              clprim_buf(f->in[1]), clprim_buf(f->out[0]), clprim_buf(f->out[1]),
                              HOST_COUNT(f), clprim_buf(f->out[2]));
}
static clprim_status call_rle(struct fx *f) {
  return clprim_run_length_encode(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), 0,
                                  clprim_buf(f->out[0]), clprim_buf(f->out[1]), HOST_COUNT(f),
                                  clprim_buf(f->out[2]));
}
static clprim_status call_non_trivial(struct fx *f) {
  return clprim_non_trivial_runs(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), 0,
                                 clprim_buf(f->out[0]), clprim_buf(f->out[1]), HOST_COUNT(f),
                                 clprim_buf(f->out[2]));
}
/* mode: 0 unique, 1 unique by key, 2 run-length encoding, 3 non-trivial runs. */
static const char *verify_runs(struct fx *f, int mode) {
  uint64_t c = 0;
  for (size_t i = 0; i < f->n;) {
    const size_t head = i;
    const uint32_t key = u32(f->data)[i];
    while (i < f->n && u32(f->data)[i] == key) ++i;
    const uint32_t len = (uint32_t)(i - head);
    if (mode == 3 && len == 1) continue;
    const uint32_t first = mode == 3 ? (uint32_t)head : key;
    if (u32(f->got[0])[c] != first) return "wrong run";
    if (mode == 1 && u32(f->got[1])[c] != u32(f->ref)[head]) return "wrong value";
    if (mode >= 2 && u32(f->got[1])[c] != len) return "wrong length";
    ++c;
  }
  if (*HOST_COUNT(f) != c || u64(f->got[2])[0] != c) return "wrong count";
  return NULL;
}
static const char *verify_unique(struct fx *f) { return verify_runs(f, 0); }
static const char *verify_unique_by_key(struct fx *f) { return verify_runs(f, 1); }
static const char *verify_rle(struct fx *f) { return verify_runs(f, 2); }
static const char *verify_non_trivial(struct fx *f) { return verify_runs(f, 3); }

/* ------------------------------------------------- selection by rank */
static int by_float(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}
static void setup_nth(struct fx *f) {
  f->n = 40000 + test_rand() % 20000; /* above one work-group's sort: the levels run */
  f->data = random_f32(f->n);
  f->ref = malloc(f->n * 4);
  assert_non_null(f->ref);
  memcpy(f->ref, f->data, f->n * 4);
  qsort(f->ref, f->n, 4, by_float);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, 3 * 4);
}
static const uint64_t *nth_ranks(struct fx *f) {
  static uint64_t r[3];
  r[0] = f->n / 3, r[1] = 7, r[2] = f->n - 2;
  return r;
}
static clprim_status call_quantiles(struct fx *f) {
  return clprim_quantiles(f->ctx, f->n, CLPRIM_FLOAT, clprim_buf(f->in[0]), nth_ranks(f), 3, 0,
                          HOST_VALUE(f), clprim_buf(f->out[0]));
}
static const char *verify_quantiles(struct fx *f) {
  for (int r = 0; r < 3; ++r) {
    const float want = f32(f->ref)[nth_ranks(f)[r]];
    if (HOST_VALUE(f)[r].f32 != want || f32(f->got[0])[r] != want) return "wrong element";
  }
  return NULL;
}
static clprim_status call_nth_approx(struct fx *f) {
  return clprim_nth_element_approx(f->ctx, f->n, CLPRIM_FLOAT, clprim_buf(f->in[0]), f->n / 2, 0,
                                   HOST_VALUE(f), HOST_INDEX(f), clprim_buf(f->out[0]));
}
static const char *verify_nth_approx(struct fx *f) {
  /* The value is an element whose rank lies within the error of n / 2. */
  const float v = HOST_VALUE(f)->f32;
  size_t below = 0, at_most = 0;
  for (size_t i = 0; i < f->n; ++i) below += f32(f->data)[i] < v, at_most += f32(f->data)[i] <= v;
  const uint64_t k = f->n / 2, err = *HOST_INDEX(f);
  if (at_most == below) return "not an element";
  if (k + err < below || k > at_most - 1 + err) return "rank error wrong";
  if (f32(f->got[0])[0] != v) return "wrong device element";
  return NULL;
}

static void setup_topk(struct fx *f) {
  f->n = 40000 + test_rand() % 20000; /* the candidates' path (k <= 2048, n >= 32768) */
  f->data = random_f32(f->n);
  fx_in(f, f->n * 4, f->data);
  f->ref_count = 10;
  fx_out(f, 3000 * 4);
  fx_out(f, 3000 * 4);
}
static clprim_status call_topk(struct fx *f) {
  return clprim_topk(f->ctx, f->n, CLPRIM_FLOAT, clprim_buf(f->in[0]), f->ref_count,
                     CLPRIM_TOPK_SORTED, clprim_buf(f->out[0]), clprim_buf(f->out[1]));
}
static const char *verify_topk(struct fx *f) {
  struct test_keyed *k = malloc(f->n * sizeof *k);
  assert_non_null(k);
  for (size_t i = 0; i < f->n; ++i) k[i].key = test_order_key(CLPRIM_FLOAT, f->data, i), k[i].index = i;
  qsort(k, f->n, sizeof *k, test_by_key_desc);
  const char *bad = NULL;
  for (size_t j = 0; j < f->ref_count && !bad; ++j)
    if (u32(f->got[1])[j] != k[j].index || f32(f->got[0])[j] != f32(f->data)[k[j].index])
      bad = "wrong top-k";
  free(k);
  return bad;
}
static void setup_topk_general(struct fx *f) {
  setup_topk(f);
  f->ref_count = 3000; /* beyond the candidates' path: selection, then compaction */
}

static void setup_batched(struct fx *f) {
  f->n = 64 * 500;
  f->data = random_f32(f->n);
  fx_in(f, f->n * 4, f->data);
  f->ref_count = 5; /* k */
  fx_out(f, 64 * 5 * 4);
  fx_out(f, 64 * 5 * 4);
}
static clprim_status call_batched(struct fx *f) {
  return clprim_batched_topk(f->ctx, 64, 500, CLPRIM_FLOAT, clprim_buf(f->in[0]), f->ref_count,
                             CLPRIM_TOPK_SORTED, clprim_buf(f->out[0]), clprim_buf(f->out[1]));
}
static const char *verify_batched(struct fx *f) {
  struct test_keyed k[500];
  for (size_t r = 0; r < 64; ++r) {
    const float *row = f32(f->data) + r * 500;
    for (size_t i = 0; i < 500; ++i) k[i].key = test_order_key(CLPRIM_FLOAT, row, i), k[i].index = i;
    qsort(k, 500, sizeof *k, test_by_key_desc);
    for (size_t j = 0; j < f->ref_count; ++j)
      if (u32(f->got[1])[r * f->ref_count + j] != k[j].index ||
          f32(f->got[0])[r * f->ref_count + j] != row[k[j].index])
        return "wrong row top-k";
  }
  return NULL;
}

static void setup_segmented_nth(struct fx *f) {
  f->n = 20000;
  f->data = random_f32(f->n);
  fx_in(f, f->n * 4, f->data);
  make_segments(f, 100, SIZE_MAX, 0);
  fx_out(f, f->ref_count * 4);
}
static clprim_status call_segmented_nth(struct fx *f) {
  return clprim_segmented_nth_element(f->ctx, f->n, CLPRIM_FLOAT, clprim_buf(f->in[0]),
                                      f->ref_count, CLPRIM_UINT64, clprim_buf(f->in[1]),
                                      clprim_buf(f->in[2]), 3, 0, clprim_buf(f->out[0]));
}
static const char *verify_segmented_nth(struct fx *f) {
  float seg[200];
  for (size_t s = 0; s < f->ref_count; ++s) {
    const size_t len = (size_t)(SEG_END(f, s) - SEG_BEGIN(f, s));
    if (len == 0) continue;
    memcpy(seg, f32(f->data) + SEG_BEGIN(f, s), len * 4);
    qsort(seg, len, 4, by_float);
    if (f32(f->got[0])[s] != seg[len > 3 ? 3 : len - 1]) return "wrong element";
  }
  return NULL;
}

/* Segments longer than the work-groups take (a knob lowers the bound to
 * 1000): each through the device-wide top-k, one after another. */
static void setup_segmented_topk_long(struct fx *f) {
  f->n = 20000;
  f->data = random_f32(f->n);
  fx_in(f, f->n * 4, f->data);
  make_segments(f, 40, 20, 5000);
  TEST_OK(clprim__tune(f->ctx, "segmented_topk.long=1000"));
  fx_out(f, f->ref_count * 5 * 4);
  fx_out(f, f->ref_count * 5 * 4);
}
static clprim_status call_segmented_topk(struct fx *f) {
  return clprim_segmented_topk(f->ctx, f->n, CLPRIM_FLOAT, clprim_buf(f->in[0]), f->ref_count,
                               CLPRIM_UINT64, clprim_buf(f->in[1]), clprim_buf(f->in[2]), 5,
                               CLPRIM_TOPK_SORTED, clprim_buf(f->out[0]), clprim_buf(f->out[1]));
}
static const char *verify_segmented_topk(struct fx *f) {
  struct test_keyed *k = malloc(f->n * sizeof *k);
  assert_non_null(k);
  const char *bad = NULL;
  for (size_t s = 0; s < f->ref_count && !bad; ++s) {
    const size_t b = (size_t)SEG_BEGIN(f, s), len = (size_t)(SEG_END(f, s) - b);
    const float *seg = f32(f->data) + b;
    for (size_t i = 0; i < len; ++i) k[i].key = test_order_key(CLPRIM_FLOAT, seg, i), k[i].index = i;
    qsort(k, len, sizeof *k, test_by_key_desc);
    for (size_t j = 0; j < 5 && j < len && !bad; ++j)
      if (u32(f->got[1])[s * 5 + j] != k[j].index || f32(f->got[0])[s * 5 + j] != seg[k[j].index])
        bad = "wrong segment top-k";
  }
  free(k);
  return bad;
}

/* ------------------------------------------------------------ sort */
static void setup_sort(struct fx *f) {
  f->n = 20000 + test_rand() % 20000; /* beyond one work-group: the digit passes */
  f->data = random_u32(f->n, 0xFFFFFFFFu);
  fx_in(f, f->n * 4, f->data);
  fx_out(f, f->n * 4);
  fx_out(f, f->n * 4);
}
static clprim_status call_argsort(struct fx *f) {
  return clprim_argsort(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), 0, 0, 0,
                        clprim_buf(f->out[1]), clprim_buf(f->out[0]));
}
static const char *verify_argsort(struct fx *f) {
  for (size_t i = 0; i < f->n; ++i) {
    const uint32_t at = u32(f->got[1])[i];
    if (at >= f->n || u32(f->got[0])[i] != u32(f->data)[at]) return "not a permutation";
    if (i && (u32(f->got[0])[i - 1] > u32(f->got[0])[i] ||
              (u32(f->got[0])[i - 1] == u32(f->got[0])[i] && u32(f->got[1])[i - 1] > at)))
      return "not sorted";
  }
  return NULL;
}
static clprim_status call_sort_pairs(struct fx *f) {
  /* values: the keys' own positions, from the second input */
  return clprim_sort_pairs(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), CLPRIM_UINT32,
                           clprim_buf(f->in[1]), 0, 0, 0, clprim_buf(f->out[0]),
                           clprim_buf(f->out[1]));
}
static void setup_sort_pairs(struct fx *f) {
  setup_sort(f);
  uint32_t *pos = malloc(f->n * 4);
  assert_non_null(pos);
  for (size_t i = 0; i < f->n; ++i) pos[i] = (uint32_t)i;
  fx_in(f, f->n * 4, pos);
  free(pos);
}

static void setup_segmented_sort(struct fx *f, size_t long_len) {
  f->n = 40000;
  f->data = random_u32(f->n, 0xFFFFFFFFu);
  fx_in(f, f->n * 4, f->data);
  make_segments(f, 120, long_len ? 60 : SIZE_MAX, long_len);
  fx_out(f, f->n * 4);
}
static void setup_segmented_sort_short(struct fx *f) { setup_segmented_sort(f, 0); }
static void setup_segmented_sort_long(struct fx *f) { setup_segmented_sort(f, 15000); }
static clprim_status call_segmented_sort(struct fx *f) {
  return clprim_segmented_sort_keys(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), f->ref_count,
                                    CLPRIM_UINT64, clprim_buf(f->in[1]), clprim_buf(f->in[2]), 0,
                                    clprim_buf(f->out[0]));
}
static int by_u32(const void *a, const void *b) {
  const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}
static const char *verify_segmented_sort(struct fx *f) {
  uint32_t *seg = malloc(f->n * 4);
  assert_non_null(seg);
  const char *bad = NULL;
  for (size_t s = 0; s < f->ref_count && !bad; ++s) {
    const size_t b = (size_t)SEG_BEGIN(f, s), len = (size_t)(SEG_END(f, s) - b);
    memcpy(seg, u32(f->data) + b, len * 4);
    qsort(seg, len, 4, by_u32);
    if (memcmp(seg, u32(f->got[0]) + b, len * 4) != 0) bad = "segment not sorted";
  }
  free(seg);
  return bad;
}

/* ------------------------------------------------------------ search */
/* Random needles (half of them beyond the haystack) in sorted runs: both
 * bounds, in one launch. */
static void setup_search(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = runs_u32(f->n, 12);
  f->ref = random_u32(f->n, 4 * (uint32_t)f->n);
  fx_in(f, f->n * 4, f->data);
  fx_in(f, f->n * 4, f->ref);
  fx_out(f, f->n * 4);
  fx_out(f, f->n * 4);
}
static clprim_status call_search(struct fx *f) {
  return clprim_equal_range(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]), f->n,
                            clprim_buf(f->in[1]), 0, clprim_buf(f->out[0]), clprim_buf(f->out[1]));
}
/* The first of the sorted n in data that is >= q (upper: > q). */
static size_t bound_u32(const uint32_t *data, size_t n, uint32_t q, int upper) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (data[mid] < q || (upper && data[mid] == q))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
static const char *verify_search(struct fx *f) {
  for (size_t i = 0; i < f->n; ++i) {
    const uint32_t q = u32(f->ref)[i];
    if (u32(f->got[0])[i] != bound_u32(u32(f->data), f->n, q, 0)) return "wrong lower bound";
    if (u32(f->got[1])[i] != bound_u32(u32(f->data), f->n, q, 1)) return "wrong upper bound";
  }
  return NULL;
}

/* ------------------------------------------------------------- merge */
/* Two sorted halves of keys with repeats, each key's position as its
 * value: keys and values are written by one command. */
static void setup_merge(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(f->n, 700);
  qsort(f->data, f->n / 2, 4, by_u32);
  qsort(u32(f->data) + f->n / 2, f->n - f->n / 2, 4, by_u32);
  fx_in(f, f->n * 4, f->data);
  uint32_t *pos = malloc(f->n * 4);
  assert_non_null(pos);
  for (size_t i = 0; i < f->n; ++i) pos[i] = (uint32_t)i;
  fx_in(f, f->n * 4, pos);
  free(pos);
  fx_out(f, f->n * 4);
  fx_out(f, f->n * 4);
}
static clprim_status call_merge(struct fx *f) {
  const size_t na = f->n / 2;
  return clprim_merge_pairs(f->ctx, na, f->n - na, CLPRIM_UINT32, clprim_buf(f->in[0]),
                            clprim_buf_at(f->in[0], na), CLPRIM_UINT32, clprim_buf(f->in[1]),
                            clprim_buf_at(f->in[1], na), 0, clprim_buf(f->out[0]),
                            clprim_buf(f->out[1]));
}

/* Five sorted runs (3 rounds: two through scratch, the last writes the
 * outputs), each key's position as its value. */
static const uint64_t *runs_offsets(struct fx *f, uint64_t *o) {
  for (int r = 0; r <= 5; ++r) o[r] = f->n * (uint64_t)r / 5;
  return o;
}
static void setup_merge_runs(struct fx *f) {
  setup_merge(f);
  uint64_t o[6];
  runs_offsets(f, o);
  for (int r = 0; r < 5; ++r) qsort(u32(f->data) + o[r], o[r + 1] - o[r], 4, by_u32);
  shim_pause(1);
  test_write(f->ctx, f->in[0], f->n * 4, f->data);
  shim_pause(0);
}
static clprim_status call_merge_runs(struct fx *f) {
  uint64_t o[6];
  return clprim_merge_runs_pairs(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[0]),
                                 CLPRIM_UINT32, clprim_buf(f->in[1]), 5, runs_offsets(f, o), 0,
                                 clprim_buf(f->out[0]), clprim_buf(f->out[1]));
}

/* ------------------------------------------------------------ gather */
/* Random indices (with duplicates), checked: the check's verdict is read
 * before the one command that writes out. */
static void setup_gather(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(f->n, UINT32_MAX);
  f->ref = random_u32(f->n, (uint32_t)f->n);
  fx_in(f, f->n * 4, f->data);
  fx_in(f, f->n * 4, f->ref);
  fx_out(f, f->n * 4);
}
static clprim_status call_gather(struct fx *f) {
  return clprim_gather(f->ctx, f->n, 4, clprim_buf(f->in[0]), f->n, CLPRIM_UINT32,
                       clprim_buf(f->in[1]), CLPRIM_CHECK_INDICES, clprim_buf(f->out[0]));
}
static const char *verify_gather(struct fx *f) {
  for (size_t i = 0; i < f->n; ++i)
    if (u32(f->got[0])[i] != u32(f->data)[u32(f->ref)[i]]) return "wrong element";
  return NULL;
}

/* 12-byte elements scattered by random indices into n / 2 (duplicates),
 * checked: winners are marked in scratch, then one command writes out. */
static void setup_scatter(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(3 * f->n, UINT32_MAX);
  f->ref = random_u32(f->n, (uint32_t)(f->n / 2));
  fx_in(f, f->n * 12, f->data);
  fx_in(f, f->n * 4, f->ref);
  fx_out(f, f->n / 2 * 12);
}
static clprim_status call_scatter(struct fx *f) {
  return clprim_scatter(f->ctx, f->n, 12, clprim_buf(f->in[0]), CLPRIM_UINT32,
                        clprim_buf(f->in[1]), CLPRIM_CHECK_INDICES, clprim_buf(f->out[0]),
                        f->n / 2);
}
/* Each target holds one of its candidates, whole; the others their
 * sentinel. */
static const char *verify_scatter(struct fx *f) {
  const size_t m = f->n / 2;
  size_t *head = malloc(m * sizeof *head), *next = malloc(f->n * sizeof *next);
  assert_true(head && next);
  for (size_t t = 0; t < m; ++t) head[t] = SIZE_MAX;
  for (size_t i = 0; i < f->n; ++i) next[i] = head[u32(f->ref)[i]], head[u32(f->ref)[i]] = i;
  const char *bad = NULL;
  for (size_t t = 0; t < m && !bad; ++t) {
    const unsigned char *got = f->got[0] + t * 12;
    int found = 0;
    for (size_t i = head[t]; i != SIZE_MAX && !found; i = next[i])
      found = memcmp(got, (const unsigned char *)f->data + i * 12, 12) == 0;
    for (size_t b = 0; head[t] == SIZE_MAX && b < 12; ++b) found |= got[b] != SENTINEL;
    if (head[t] == SIZE_MAX ? found : !found)
      bad = head[t] == SIZE_MAX ? "an element written that no index names"
                                : "an element that is none of its candidates";
  }
  free(head), free(next);
  return bad;
}

/* ---------------------------------------------------------- pipeline */
/* A pipeline's outputs are its own: a failed run leaves none to read. The
 * case keeps its results in f->got[0] from clprim_pipeline_read. */
static void setup_pipeline(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(f->n, 1000);
  fx_in(f, f->n * 4, f->data);
  const clprim_type types[1] = {CLPRIM_UINT32};
  shim_pause(1);
  TEST_OK(clprim_pipeline_create(&f->pipe, f->ctx, 1, types));
  TEST_OK(clprim_pipeline_filter_expr(f->pipe, "x > (uint)p0"));
  TEST_OK(clprim_pipeline_collect(f->pipe, CLPRIM_PIPE_VALUES_WANTED));
  shim_pause(0);
}
static clprim_status call_pipeline(struct fx *f) {
  const double params[8] = {500.0};
  const clprim_buffer in = clprim_buf(f->in[0]);
  return clprim_pipeline_run(f->pipe, f->n, &in, params);
}
static const char *verify_pipeline(struct fx *f) {
  uint64_t c = 0, got = 0;
  shim_pause(1);
  const clprim_status st = clprim_pipeline_read(f->pipe, CLPRIM_PIPE_OUT_COUNT, 0, 8, &got);
  uint32_t *values = malloc(f->n * 4 + 4);
  assert_non_null(values);
  const clprim_status sv =
      got <= f->n ? clprim_pipeline_read(f->pipe, CLPRIM_PIPE_OUT_VALUES, 0, got * 4, values)
                  : CLPRIM_ERROR_INVALID_ARGUMENT;
  shim_pause(0);
  const char *bad = st || sv ? "no result to read" : NULL;
  for (size_t i = 0; i < f->n && !bad; ++i)
    if (u32(f->data)[i] > 500 && (c >= got || values[c++] != u32(f->data)[i])) bad = "wrong values";
  if (!bad && c != got) bad = "wrong count";
  free(values);
  return bad;
}

/* --------------------------------------------------------- operators */
/* A user operator (2x2 uint matrices: not commutative, products wrap),
 * made in setup: its programs are dropped and built again with the rest.
 * Several tiles, so that the scan runs every level and the reduction two
 * passes. */
static const char mat2_source[] =
    "typedef struct { uint m[4]; } mat2;\n"
    "mat2 mat2_mul(mat2 x, mat2 y) {\n"
    "  mat2 r = {{x.m[0] * y.m[0] + x.m[1] * y.m[2], x.m[0] * y.m[1] + x.m[1] * y.m[3],\n"
    "            x.m[2] * y.m[0] + x.m[3] * y.m[2], x.m[2] * y.m[1] + x.m[3] * y.m[3]}};\n"
    "  return r;\n"
    "}\n"
    "mat2 mat2_one(void) { mat2 r = {{1, 0, 0, 1}}; return r; }\n"
    "mat2 mat2_of(uint a, uint b) { mat2 r = {{a, b, 1, 0}}; return r; }\n";
static void mat2_mul(const uint32_t *x, const uint32_t *y, uint32_t *r) {
  const uint32_t m[4] = {x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3],
                         x[2] * y[0] + x[3] * y[2], x[2] * y[1] + x[3] * y[3]};
  memcpy(r, m, sizeof m);
}
static void make_mat2_op(struct fx *f) {
  const clprim_operator_desc d = {"mat2", 16, 4, mat2_source, "mat2_mul(a, b)", "mat2_one()"};
  shim_pause(1);
  TEST_OK(clprim_operator_create(&f->op, f->ctx, &d));
  shim_pause(0);
}
static void setup_op(struct fx *f, int scan) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(4 * f->n, UINT32_MAX);
  /* odd determinants (odd * odd - any * even): their products never decay
   * to the zero matrix */
  uint32_t *m = f->data;
  for (size_t i = 0; i < f->n; ++i) m[4 * i] |= 1u, m[4 * i + 2] &= ~1u, m[4 * i + 3] |= 1u;
  fx_in(f, f->n * 16, f->data);
  fx_out(f, (scan ? f->n : 1) * 16);
  make_mat2_op(f);
}
static void setup_reduce_op(struct fx *f) {
  setup_op(f, 0);
}
static void setup_scan_op(struct fx *f) {
  setup_op(f, 1);
}
static clprim_status call_reduce_op(struct fx *f) {
  return clprim_reduce_op(f->ctx, f->n, f->op, clprim_buf(f->in[0]), NULL, f->host,
                          clprim_buf(f->out[0]));
}
static clprim_status call_scan_op(struct fx *f) {
  return clprim_scan_inclusive_op(f->ctx, f->n, f->op, clprim_buf(f->in[0]), NULL,
                                  clprim_buf(f->out[0]));
}
/* Scan by key with the operator: uint32 keys in runs, the product
 * restarting at each. */
static void setup_scan_by_key_op(struct fx *f) {
  setup_op(f, 1);
  f->ref = runs_u32(f->n, 300);
  fx_in(f, f->n * 4, f->ref);
}
static clprim_status call_scan_by_key_op(struct fx *f) {
  return clprim_scan_inclusive_by_key_op(f->ctx, f->n, CLPRIM_UINT32, clprim_buf(f->in[1]), f->op,
                                         clprim_buf(f->in[0]), NULL, clprim_buf(f->out[0]));
}
static const char *verify_scan_by_key_op(struct fx *f) {
  uint32_t acc[4];
  for (size_t i = 0; i < f->n; ++i) {
    if (i == 0 || u32(f->ref)[i] != u32(f->ref)[i - 1])
      acc[0] = 1, acc[1] = 0, acc[2] = 0, acc[3] = 1;
    mat2_mul(acc, u32(f->data) + 4 * i, acc);
    if (memcmp(f->got[0] + i * 16, acc, 16) != 0) return "wrong prefix product of a run";
  }
  return NULL;
}
static const char *verify_reduce_op(struct fx *f) {
  uint32_t acc[4] = {1, 0, 0, 1};
  for (size_t i = 0; i < f->n; ++i) mat2_mul(acc, u32(f->data) + 4 * i, acc);
  if (memcmp(f->host, acc, 16) != 0) return "wrong host product";
  if (memcmp(f->got[0], acc, 16) != 0) return "wrong device product";
  return NULL;
}
/* A pipeline's reduction with the operator: a filter on the uint input, a
 * map to [[a a|1] [1 0]] by the operator (an odd determinant: the product
 * never wraps to 0), the product of those that pass; the result read from
 * the pipeline's output. */
static void setup_pipeline_op(struct fx *f) {
  f->n = 5000 + test_rand() % 9000;
  f->data = random_u32(f->n, UINT32_MAX);
  fx_in(f, f->n * 4, f->data);
  make_mat2_op(f);
  const clprim_type types[1] = {CLPRIM_UINT32};
  shim_pause(1);
  TEST_OK(clprim_pipeline_create(&f->pipe, f->ctx, 1, types));
  TEST_OK(clprim_pipeline_filter_expr(f->pipe, "x % 3u != 0u"));
  TEST_OK(clprim_pipeline_map_op(f->pipe, f->op, "mat2_of(x, x | 1u)"));
  TEST_OK(clprim_pipeline_reduce_op(f->pipe, f->op, NULL));
  shim_pause(0);
}
static clprim_status call_pipeline_op(struct fx *f) {
  const clprim_buffer in = clprim_buf(f->in[0]);
  return clprim_pipeline_run(f->pipe, f->n, &in, NULL);
}
static const char *verify_pipeline_op(struct fx *f) {
  uint32_t acc[4] = {1, 0, 0, 1}, got[4];
  for (size_t i = 0; i < f->n; ++i) {
    const uint32_t a = u32(f->data)[i], m[4] = {a, a | 1, 1, 0};
    if (a % 3 != 0) mat2_mul(acc, m, acc);
  }
  shim_pause(1);
  const clprim_status st = clprim_pipeline_read(f->pipe, CLPRIM_PIPE_OUT_RESULT, 0, 16, got);
  shim_pause(0);
  if (st != CLPRIM_SUCCESS) return "no result to read";
  return memcmp(got, acc, 16) ? "wrong product" : NULL;
}
static const char *verify_scan_op(struct fx *f) {
  uint32_t acc[4] = {1, 0, 0, 1};
  for (size_t i = 0; i < f->n; ++i) {
    mat2_mul(acc, u32(f->data) + 4 * i, acc);
    if (memcmp(f->got[0] + i * 16, acc, 16) != 0) return "wrong prefix product";
  }
  return NULL;
}

/* ------------------------------------------------------------ cases */
static const struct fault_case cases[] = {
    {"scan", 0, setup_scan, call_scan, verify_scan},
    {"scan_exact", 0, setup_scan_exact, call_scan_exact, verify_scan_exact},
    {"scan_by_key", 0, setup_scan_by_key, call_scan_by_key, verify_scan_by_key},
    {"argmax", 0, setup_argmax, call_argmax, verify_argmax},
    {"reduce_sum", 0, setup_sum, call_sum, verify_sum},
    {"reduce_sum_exact", 0, setup_sum_exact, call_sum_exact, verify_sum_exact},
    {"segmented_sum", 0, setup_segmented_sum, call_segmented_sum, verify_segmented_sum},
    {"segmented_sum_exact", 0, setup_segmented_sum_exact, call_segmented_sum_exact,
     verify_segmented_sum_exact},
    {"select", 0, setup_select, call_select, verify_select},
    {"select_count", 0, setup_select_count, call_select_count, verify_select_count},
    {"select_flagged", 0, setup_flagged, call_flagged, verify_select},
    {"select_expr", 0, setup_select, call_select_expr, verify_select},
    {"select_expr_params", 0, setup_select, call_select_params, verify_select},
    {"partition", 0, setup_partition, call_partition, verify_partition},
    {"partition3", 0, setup_partition3, call_partition3, verify_partition3},
    {"histogram_even", 0, setup_histogram, call_histogram, verify_histogram},
    {"histogram_keys", 0, setup_histogram_keys, call_histogram_keys, verify_histogram_keys},
    {"reduce_by_key_dense", 0, setup_dense, call_dense, verify_dense},
    {"reduce_by_key_dense_exact", 0, setup_dense_exact, call_dense_exact, verify_dense_exact},
    {"reduce_by_key_dense_exact_many", 0, setup_dense_exact_many, call_dense_exact,
     verify_dense_exact},
    {"reduce_by_key", 1, setup_rbk, call_rbk, verify_rbk},
    {"reduce_by_key_exact", 1, setup_rbk_exact, call_rbk_exact, verify_rbk_exact},
    {"unique", 0, setup_unique, call_unique, verify_unique},
    {"unique_by_key", 1, setup_unique, call_unique_by_key, verify_unique_by_key},
    {"run_length_encode", 1, setup_unique, call_rle, verify_rle},
    {"non_trivial_runs", 1, setup_unique, call_non_trivial, verify_non_trivial},
    {"quantiles", 0, setup_nth, call_quantiles, verify_quantiles},
    {"nth_element_approx", 0, setup_nth, call_nth_approx, verify_nth_approx},
    {"topk", 0, setup_topk, call_topk, verify_topk},
    {"topk_general", 0, setup_topk_general, call_topk, verify_topk},
    {"batched_topk", 0, setup_batched, call_batched, verify_batched},
    {"segmented_nth_element", 0, setup_segmented_nth, call_segmented_nth, verify_segmented_nth},
    {"segmented_topk_long", 1, setup_segmented_topk_long, call_segmented_topk,
     verify_segmented_topk},
    {"argsort", 0, setup_sort, call_argsort, verify_argsort},
    {"sort_pairs", 0, setup_sort_pairs, call_sort_pairs, verify_argsort},
    {"segmented_sort", 0, setup_segmented_sort_short, call_segmented_sort, verify_segmented_sort},
    {"segmented_sort_long", 1, setup_segmented_sort_long, call_segmented_sort,
     verify_segmented_sort},
    {"equal_range", 0, setup_search, call_search, verify_search},
    {"merge_pairs", 0, setup_merge, call_merge, verify_argsort},
    {"merge_runs_pairs", 0, setup_merge_runs, call_merge_runs, verify_argsort},
    {"gather", 0, setup_gather, call_gather, verify_gather},
    {"scatter", 0, setup_scatter, call_scatter, verify_scatter},
    {"pipeline_collect", 0, setup_pipeline, call_pipeline, verify_pipeline},
    {"pipeline_reduce_op", 0, setup_pipeline_op, call_pipeline_op, verify_pipeline_op},
    {"reduce_op", 0, setup_reduce_op, call_reduce_op, verify_reduce_op},
    {"scan_inclusive_op", 0, setup_scan_op, call_scan_op, verify_scan_op},
    {"scan_inclusive_by_key_op", 0, setup_scan_by_key_op, call_scan_by_key_op,
     verify_scan_by_key_op},
};
#define CASES (sizeof cases / sizeof cases[0])

static const cl_int codes[3] = {CL_OUT_OF_RESOURCES, CL_MEM_OBJECT_ALLOCATION_FAILURE,
                                CL_OUT_OF_HOST_MEMORY};

/* One clean run: the right result, its calls counted, how it writes. */
static unsigned long clean_run(const struct fault_case *c, struct fx *f, const char *when) {
  fx_sentinels(f);
  shim_reset();
  const clprim_status st = c->call(f);
  const unsigned long calls = shim_calls();
  const unsigned long writes = shim_writes(), after = shim_fallible_after_write();
  if (st != CLPRIM_SUCCESS) fail_msg("%s %s: %s", c->name, when, clprim_status_name(st));
  fx_read(f);
  const char *bad = c->verify(f);
  if (bad) fail_msg("%s %s: %s", c->name, when, bad);
  if (!c->in_steps && !f->pipe && (writes != 1 || after != 0))
    fail_msg("%s %s: its outputs are written by %lu commands, with %lu calls that can fail "
             "after the first (one command, and nothing that can fail but host reads after "
             "it, unless clprim.h says the call writes in steps)",
             c->name, when, writes, after);
  return calls;
}

/* The K-th call fails; then the call runs again cleanly. */
static void fail_one(const struct fault_case *c, struct fx *f, unsigned long k, const char *when) {
  const cl_int code = codes[k % 3];
  fx_sentinels(f);
  shim_reset();
  shim_fail_at(k, code);
  const clprim_status st = c->call(f);
  shim_fail_at(0, 0);
  const int fired = shim_fired();
  const unsigned long first_write = shim_first_write();
  const char *name = shim_fired_name();
  if (fired && st == (clprim_status)code) {
    if (f->pipe) {
      uint64_t got;
      cl_mem out;
      shim_pause(1);
      const clprim_status read = clprim_pipeline_read(f->pipe, CLPRIM_PIPE_OUT_COUNT, 0, 8, &got);
      const clprim_status result =
          clprim_pipeline_output(f->pipe, CLPRIM_PIPE_OUT_RESULT, &out, NULL);
      shim_pause(0);
      if (read == CLPRIM_SUCCESS || result == CLPRIM_SUCCESS)
        fail_msg("%s %s: call %lu (%s) failed, yet the run left a result to read", c->name, when,
                 k, name);
    } else {
      const int touched = fx_touched(f);
      /* Before the first write (or at it: the write itself failed) nothing
       * may change; after it only a call that writes in steps may have
       * device outputs written, and host results never change. */
      const int window = first_write && k > first_write;
      if (touched == -1 || (touched >= 0 && !window))
        fail_msg("%s %s: call %lu (%s) failed with %s, and %s %d was written (first write at "
                 "call %lu)",
                 c->name, when, k, name, clprim_status_name(code),
                 touched == -1 ? "host result" : "output", touched, first_write);
    }
  } else if (fired && st != CLPRIM_SUCCESS) {
    fail_msg("%s %s: call %lu (%s) failed with %s, the call returned %s", c->name, when, k, name,
             clprim_status_name(code), clprim_status_name(st));
  } else {
    if (st != CLPRIM_SUCCESS)
      fail_msg("%s %s: call %lu: %s", c->name, when, k, clprim_status_name(st));
    fx_read(f);
    const char *bad = c->verify(f);
    if (bad) fail_msg("%s %s: call %lu (%s) failed, the call succeeded: %s", c->name, when, k,
                      name, bad);
  }
  clean_run(c, f, "after a failure");
}

/* The K to fail among `calls`: every one, or a sample (quick mode, long
 * calls): every step-th K from a phase drawn from the seed, so that runs
 * with other seeds fail other calls, and the last two. */
static unsigned long phase;
static int chosen(unsigned long k, unsigned long calls, unsigned long most) {
  if (calls <= most) return 1;
  const unsigned long step = calls / most + 1;
  return (k + phase) % step == 0 || k == calls || k + 1 == calls;
}

static void sweep(const struct fault_case *c, clprim_context *ctx) {
  struct fx f;
  memset(&f, 0, sizeof f);
  f.ctx = ctx;
  c->setup(&f);
  for (size_t o = 0; o < f.outs; ++o) shim_watch(f.out[o]);
  const unsigned long calls = clean_run(c, &f, "clean");
  const unsigned long most = quick ? 12 : 100;
  for (unsigned long k = 1; k <= calls; ++k)
    if (chosen(k, calls, most)) fail_one(c, &f, k, "warm");
  /* The same with every program dropped: failures in builds. */
  shim_pause(1);
  TEST_OK(clprim_context_clear_cache(ctx));
  shim_pause(0);
  const unsigned long cold = clean_run(c, &f, "cold");
  for (unsigned long k = 1; k <= cold; ++k)
    if (chosen(k, cold, quick ? 4 : 16)) {
      shim_pause(1);
      TEST_OK(clprim_context_clear_cache(ctx));
      shim_pause(0);
      fail_one(c, &f, k, "cold");
    }
  shim_unwatch_all();
  fx_free(&f);
}

/* Every case on a fresh context of each path; nothing left afterwards. */
/* Whether the cpu path sweeps case c: one case per family with
 * CPU-shaped kernels (their launches differ from the other paths'; the
 * host's order of commands is the same). */
static int cpu_shaped(const struct fault_case *c) {
  static const char *const names[] = {"scan",
                                      "scan_exact",
                                      "scan_by_key",
                                      "argmax",
                                      "reduce_sum",
                                      "reduce_sum_exact",
                                      "segmented_sum",
                                      "select",
                                      "partition3",
                                      "histogram_even",
                                      "reduce_by_key",
                                      "reduce_by_key_exact",
                                      "reduce_by_key_dense",
                                      "reduce_by_key_dense_exact",
                                      "reduce_by_key_dense_exact_many",
                                      "quantiles",
                                      "topk",
                                      "topk_general",
                                      "argsort",
                                      "equal_range",
                                      "merge_pairs",
                                      "gather",
                                      "scatter",
                                      "batched_topk",
                                      "segmented_nth_element",
                                      "reduce_op",
                                      "scan_inclusive_op",
                                      "pipeline_reduce_op"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k)
    if (strcmp(c->name, names[k]) == 0) return 1;
  return 0;
}

static void test_case(const struct fault_case *c) {
  printf("%s\n", c->name);
  fflush(stdout);
  clprim_options o;
  clprim_options_init(&o);
  clprim_context *first;
  TEST_OK(clprim_context_create(&first, &o));
  clprim_device_info info;
  clprim_context_get_info(first, &info, sizeof info);
  clprim_context_free(first);
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    if (!(info.paths_available & (1u << p))) continue;
    if (p == CLPRIM_PATH_CPU && !cpu_shaped(c)) continue;
    if (test_path_excluded(p)) continue;
    const long live = shim_live();
    o.path = (clprim_path)p;
    clprim_context *ctx;
    TEST_OK(clprim_context_create(&ctx, &o));
    sweep(c, ctx);
    clprim_context_free(ctx);
    if (shim_live() != live)
      fail_msg("%s on %s: %ld OpenCL objects left after clprim_context_free", c->name,
               clprim_path_name((clprim_path)p), shim_live() - live);
  }
}

/* A cmocka test per case, named after it (CLPRIM_TEST_FILTER picks them). */
static void test_case_state(void **state) { test_case(*state); }

/* A context on the caller's queue (from_queue) or of clprim's own. */
static clprim_status create(clprim_context **ctx, const clprim_options *o, cl_command_queue queue) {
  return queue ? clprim_context_create_from_queue(ctx, queue, o) : clprim_context_create(ctx, o);
}

/* Context creation: every call of it fails in turn (no disk cache, so the
 * probe runs): the code comes back, or a context that works; nothing left. */
static void sweep_create(cl_command_queue queue) {
  clprim_options o;
  clprim_options_init(&o);
  o.cache_dir = "off";
  const long live = shim_live();
  shim_reset();
  clprim_context *ctx;
  TEST_OK(create(&ctx, &o, queue));
  const unsigned long calls = shim_calls();
  clprim_context_free(ctx);
  for (unsigned long k = 1; k <= calls; ++k) {
    if (!chosen(k, calls, quick ? 30 : 200)) continue;
    const cl_int code = codes[k % 3];
    shim_reset();
    shim_fail_at(k, code);
    ctx = NULL;
    const clprim_status st = create(&ctx, &o, queue);
    shim_fail_at(0, 0);
    if (shim_fired() && st != (clprim_status)code && st != CLPRIM_SUCCESS)
      fail_msg("context creation: call %lu (%s) failed with %s, creation returned %s", k,
               shim_fired_name(), clprim_status_name(code), clprim_status_name(st));
    if (st == CLPRIM_SUCCESS) {
      /* A context that came through works. */
      cl_int err;
      uint32_t ones[100], out[100];
      for (int i = 0; i < 100; ++i) ones[i] = 1;
      shim_pause(1);
      cl_mem a = clCreateBuffer(clprim_context_cl_context(ctx), CL_MEM_COPY_HOST_PTR, 400, ones,
                                &err);
      shim_pause(0);
      TEST_OK(clprim_scan_exclusive(ctx, 100, CLPRIM_UINT32, clprim_buf(a), 0, clprim_buf(a)));
      test_read(ctx, a, 400, out);
      for (int i = 0; i < 100; ++i) assert_int_equal(out[i], (uint32_t)i);
      clReleaseMemObject(a);
      clprim_context_free(ctx);
    } else if (ctx) {
      fail_msg("context creation: failed, yet *ctx was set");
    }
    /* Its text: why it failed (naming the call), or "" after a success. */
    const char *text = clprim_context_last_error(NULL);
    if (st != CLPRIM_SUCCESS && !strstr(text, "context_create"))
      fail_msg("context creation: call %lu (%s) failed, the creation's text is \"%s\"", k,
               shim_fired_name(), text);
    if (st == CLPRIM_SUCCESS && *text)
      fail_msg("context creation succeeded with the text \"%s\"", text);
    if (shim_live() != live)
      fail_msg("context creation: call %lu (%s) failed: %ld OpenCL objects left", k,
               shim_fired_name(), shim_live() - live);
  }
}

static void test_context_create(void **state) {
  (void)state;
  sweep_create(NULL);
  /* The caller's own queue (on the default context's device). */
  shim_pause(1);
  clprim_context *first;
  TEST_OK(clprim_context_create(&first, NULL));
  cl_int err;
  cl_device_id device = clprim_context_device(first);
  cl_context cl_ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  cl_command_queue queue = clCreateCommandQueue(cl_ctx, device, 0, &err);
  assert_int_equal(err, CL_SUCCESS);
  clprim_context_free(first);
  shim_pause(0);
  sweep_create(queue);
  clReleaseCommandQueue(queue);
  clReleaseContext(cl_ctx);
}

/* The shim wraps every OpenCL function libclprim imports: the build passes
 * libclprim's imports as argv[2] (one name per line, from nm -D). */
static const char *imports_file;
static void test_wraps_every_import(void **state) {
  (void)state;
  if (!imports_file) {
    printf("no list of imports given: skipped\n");
    return;
  }
  FILE *in = fopen(imports_file, "r");
  assert_non_null(in);
  char line[256];
  unsigned checked = 0;
  while (fgets(line, sizeof line, in)) {
    char name[256]; /* nm's lines: "U clBuildProgram@OPENCL_1.0" */
    if (sscanf(line, " U %255s", name) != 1) continue;
    name[strcspn(name, "@")] = 0;
    if (strncmp(name, "cl", 2) != 0 || name[2] < 'A' || name[2] > 'Z') continue;
    char key[260];
    snprintf(key, sizeof key, "%s\n", name);
    const char *names = shim_wrapped_names();
    int found = 0;
    for (const char *p = names; (p = strstr(p, key)) != NULL; ++p)
      if (p == names || p[-1] == '\n') found = 1;
    if (!found) fail_msg("libclprim imports %s, which tests/fault_shim.c does not wrap", name);
    ++checked;
  }
  fclose(in);
  assert_true(checked > 20);
}

int main(int argc, char **argv) {
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--quick") == 0)
      quick = 1;
    else if (strcmp(argv[a], "--imports") == 0 && a + 1 < argc)
      imports_file = argv[++a];
  }
  test_init(quick ? "test_faults --quick" : "test_faults");
  phase = (unsigned long)(test_rand() % 1000);
  struct CMUnitTest tests[2 + CASES] = {cmocka_unit_test(test_wraps_every_import),
                                        cmocka_unit_test(test_context_create)};
  for (size_t c = 0; c < CASES; ++c) {
    const struct CMUnitTest t = {cases[c].name, test_case_state, NULL, NULL,
                                 (void *)(uintptr_t)&cases[c]};
    tests[2 + c] = t;
  }
  return _cmocka_run_group_tests("test_faults", tests, 2 + CASES, NULL, NULL);
}
