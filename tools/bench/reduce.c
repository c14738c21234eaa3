/* Rows of the reductions (src/reduce.c), two families here as there:
 * argmax, argmin and sums against a copy of the bytes they read, and the
 * segmented reductions (segments of 1024) against one read of the input. */
#include "check.h"
#include "data.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- reductions */

struct reduce_arg {
  clprim_type type;
  cl_mem in, result;
  size_t n;
  int op; /* 0 argmax, 1 argmin, 2 sum, 3 exact sum */
};

static clprim_status call_reduce(clprim_context *ctx, void *p) {
  struct reduce_arg *a = p;
  /* Results stay on the device (no host round trip inside the timing). */
  const clprim_buffer in = clprim_buf(a->in), result = clprim_buf(a->result);
  if (a->op >= 2)
    return clprim_reduce_sum(ctx, a->n, a->type, in, a->op == 3 ? CLPRIM_EXACT : 0, NULL, result);
  return a->op ? clprim_argmin(ctx, a->n, a->type, in, 0, NULL, NULL, result)
               : clprim_argmax(ctx, a->n, a->type, in, 0, NULL, NULL, result);
}

/* Reductions read n elements once: the copy reference moves the same bytes
 * (half read, half written). */
static void run_reduce(struct bench *b, clprim_type type, size_t n) {
  size_t bytes = n * clprim_type_size(type);
  void *host = bench_random(b, type, n, 2);
  struct reduce_arg a = {type, NULL, NULL, n, 0};
  a.in = bench_buffer(b, bytes, host);
  a.result = bench_buffer(b, 16, NULL);
  bench_free(b, host);
  cl_mem half = bench_buffer(b, bytes / 2 + 1, NULL);
  double copy = bench_copy_ms(b, a.in, half, bytes / 2);
  const char *const names[4] = {"argmax", "argmin", "reduce_sum", "reduce_sum_exact"};
  const char *const notes[4] = {"first index", "first index", "sum", "exact sum"};
  const int floats = type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE;
  for (a.op = 0; a.op < (floats ? 4 : 3); ++a.op)
    if (bench_wants(b, names[a.op]))
      bench_report_copy(b, names[a.op], notes[a.op], type, n, call_reduce, &a, (double)bytes,
                        copy);
  bench_release(b, a.in);
  bench_release(b, a.result);
  bench_release(b, half);
}

/* argmax (argmin) of uint32 keys below 1000: many ties, the first wins. */
static int check_arg(struct bench_check *c, int smallest) {
  uint32_t *keys = check_keys(c, 1000, 0);
  cl_mem in = check_buffer(c, c->n * 4, keys);
  clprim_value v;
  uint64_t at = 0;
  if (!keys || !in ||
      !check_ok(c, (smallest ? clprim_argmin : clprim_argmax)(
                       c->ctx, c->n, CLPRIM_UINT32, clprim_buf(in), 0, &v, &at, clprim_buf(NULL))))
    return 0;
  size_t best = 0;
  for (size_t i = 1; i < c->n; ++i)
    if (smallest ? keys[i] < keys[best] : keys[i] > keys[best]) best = i;
  return v.u32 == keys[best] && at == best;
}
static int check_argmax(struct bench_check *c) {
  return check_arg(c, 0);
}
static int check_argmin(struct bench_check *c) {
  return check_arg(c, 1);
}

/* The uint32 sum, wrapping around. */
static int check_reduce_sum(struct bench_check *c) {
  clprim_value sum;
  if (!check_ok(c, clprim_reduce_sum(c->ctx, c->n, CLPRIM_UINT32, clprim_buf(c->in), 0, &sum,
                                     clprim_buf(NULL))))
    return 0;
  uint32_t s = 0;
  for (size_t i = 0; i < c->n; ++i)
    s += c->host[i];
  return sum.u32 == s;
}

/* The exact float sum of integers below 2^24 with random signs: the exact
 * sum is an integer, which C's conversion rounds as CLPRIM_EXACT must. */
static int check_reduce_sum_exact(struct bench_check *c) {
  float *x = malloc((c->n ? c->n : 1) * sizeof *x);
  int64_t exact = 0;
  for (size_t i = 0; x && i < c->n; ++i) {
    const int64_t v = (int64_t)(c->host[i] & 0xFFFFFFu) * ((c->host[i] >> 30) & 1 ? -1 : 1);
    x[i] = (float)v;
    exact += v;
  }
  cl_mem in = x ? check_buffer(c, (c->n ? c->n : 1) * sizeof *x, x) : NULL;
  free(x);
  clprim_value sum;
  if (!in || !check_ok(c, clprim_reduce_sum(c->ctx, c->n, CLPRIM_FLOAT, clprim_buf(in),
                                            CLPRIM_EXACT, &sum, clprim_buf(NULL))))
    return 0;
  const float want = (float)exact;
  return memcmp(&sum.f32, &want, sizeof want) == 0;
}

static clprim_status startup_reduce_sum(const struct bench_startup_inputs *in) {
  clprim_value v;
  return clprim_reduce_sum(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), 0, &v, clprim_buf(NULL));
}

static clprim_status startup_reduce_sum_exact(const struct bench_startup_inputs *in) {
  clprim_value v;
  return clprim_reduce_sum(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), CLPRIM_EXACT, &v,
                           clprim_buf(NULL));
}

static clprim_status startup_argmax(const struct bench_startup_inputs *in) {
  clprim_value v;
  uint64_t index;
  return clprim_argmax(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), 0, &v, &index,
                       clprim_buf(NULL));
}



/* ------------------------------------------------ segmented reductions */

struct segreduce_arg {
  int op; /* 0 segmented_sum, 1 segmented_max, 2 segmented_argmax, 3 exact segmented_sum */
  clprim_type type;
  cl_mem in, begins, ends, out;
  size_t n, segments;
};

static clprim_status call_segreduce(clprim_context *ctx, void *p) {
  struct segreduce_arg *a = p;
  /* The results stay on the device; the offsets are made before the timing. */
  const clprim_buffer in = clprim_buf(a->in), out = clprim_buf(a->out);
  const clprim_buffer begins = clprim_buf(a->begins), ends = clprim_buf(a->ends);
  switch (a->op) {
  case 0:
  case 3:
    return clprim_segmented_sum(ctx, a->n, a->type, in, a->segments, CLPRIM_UINT64, begins, ends,
                                a->op == 3 ? CLPRIM_EXACT : 0, out);
  case 1:
    return clprim_segmented_max(ctx, a->n, a->type, in, a->segments, CLPRIM_UINT64, begins, ends, 0,
                                out);
  default:
    return clprim_segmented_argmax(ctx, a->n, a->type, in, a->segments, CLPRIM_UINT64, begins, ends,
                                   0, out);
  }
}

/* segmented_sum, segmented_max and segmented_argmax (two uint64 per segment:
 * value bits and index) on random elements of the type in segments of 1024
 * (begin 1024 s, end 1024 (s + 1), the last clipped at n: n / 1024 segments
 * for n >= 1024), uint64 offsets on the device. Each row is compared with
 * one read of the input, measured in the same run. */
static void run_segreduce(struct bench *b, clprim_type type, size_t n) {
  const size_t es = clprim_type_size(type);
  struct segreduce_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n, a.segments = (n + 1023) / 1024;
  void *host = bench_random(b, type, n, 9);
  a.in = bench_buffer(b, n * es, host);
  bench_free(b, host);
  uint64_t *off = bench_malloc(b, a.segments * 16); /* begins, then ends */
  for (size_t s = 0; s < a.segments; ++s)
    off[s] = s * 1024, off[a.segments + s] = (s + 1) * 1024 < n ? (s + 1) * 1024 : n;
  a.begins = bench_buffer(b, a.segments * 8, off);
  a.ends = bench_buffer(b, a.segments * 8, off + a.segments);
  bench_free(b, off);
  a.out = bench_buffer(b, a.segments * 16, NULL); /* elements of type, or uint64 pairs */
  const double read = bench_read_ms(b, a.in, n * es);
  static const char *const names[4] = {"segmented_sum", "segmented_max", "segmented_argmax",
                                       "segmented_sum_exact"};
  const int floats = type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE;
  for (a.op = 0; a.op < (floats ? 4 : 3); ++a.op)
    if (bench_wants(b, names[a.op]))
      bench_report_read(b, names[a.op], "segments of 1024", type, n, call_segreduce, &a, read);
  bench_release(b, a.in);
  bench_release(b, a.begins);
  bench_release(b, a.ends);
  bench_release(b, a.out);
}

/* Segments of 1000 (the last one shorter) over uint32 keys below 1000,
 * reduced on the device (op as struct segreduce_arg's) and read back to
 * got (two uint64 per segment, or one uint32); the keys to *keys. 0 when a
 * step failed. */
static size_t check_segments(struct bench_check *c, int op, uint32_t **keys, void **got) {
  const size_t segments = (c->n + 999) / 1000;
  uint64_t *off = check_host(c, segments * 16); /* begins, then ends */
  *keys = check_keys(c, 1000, 0);
  *got = check_host(c, segments * 16);
  if (!off || !*keys || !*got) return 0;
  for (size_t s = 0; s < segments; ++s)
    off[s] = s * 1000, off[segments + s] = (s + 1) * 1000 < c->n ? (s + 1) * 1000 : c->n;
  struct segreduce_arg a;
  a.op = op, a.type = CLPRIM_UINT32, a.n = c->n, a.segments = segments;
  a.in = check_buffer(c, c->n * 4, *keys), a.out = check_buffer(c, segments * 16, NULL);
  a.begins = check_buffer(c, segments * 8, off);
  a.ends = check_buffer(c, segments * 8, off + segments);
  if (!a.in || !a.begins || !a.ends || !a.out || !check_ok(c, call_segreduce(c->ctx, &a)) ||
      !check_read(c, a.out, segments * (op == 2 ? 16 : 4), *got))
    return 0;
  return segments;
}

/* The sum (op 0), largest element (1), or largest and its first index in
 * the segment (2) of each segment. */
static int check_segreduce(struct bench_check *c, int op) {
  uint32_t *keys;
  void *got;
  const size_t segments = check_segments(c, op, &keys, &got);
  for (size_t s = 0; s < segments; ++s) {
    const size_t begin = s * 1000, end = begin + 1000 < c->n ? begin + 1000 : c->n;
    uint32_t sum = 0;
    size_t best = begin;
    for (size_t i = begin; i < end; ++i)
      sum += keys[i], best = keys[i] > keys[best] ? i : best;
    const uint64_t *pair = (const uint64_t *)got + 2 * s;
    const uint32_t one = ((const uint32_t *)got)[s];
    const int right = op == 0   ? one == sum
                      : op == 1 ? one == keys[best]
                                : pair[0] == keys[best] && pair[1] == best - begin;
    if (!right) return 0;
  }
  return segments > 0;
}
static int check_segmented_sum(struct bench_check *c) {
  return check_segreduce(c, 0);
}
static int check_segmented_max(struct bench_check *c) {
  return check_segreduce(c, 1);
}
static int check_segmented_argmax(struct bench_check *c) {
  return check_segreduce(c, 2);
}


static clprim_status startup_segmented_sum(const struct bench_startup_inputs *in) {
  return clprim_segmented_sum(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), in->n / 1024,
                              CLPRIM_UINT64, clprim_buf(in->begins), clprim_buf(in->ends), 0,
                              clprim_buf(in->out));
}

static clprim_status startup_segmented_sum_exact(const struct bench_startup_inputs *in) {
  return clprim_segmented_sum(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), in->n / 1024,
                              CLPRIM_UINT64, clprim_buf(in->begins), clprim_buf(in->ends),
                              CLPRIM_EXACT, clprim_buf(in->out));
}

/* CLPRIM_EXACT per segment of 1000: float integers below 2^24 with random
 * signs, each segment's exact sum an integer that C's conversion rounds. */
static int check_segmented_sum_exact(struct bench_check *c) {
  const size_t n = c->n, segments = (n + 999) / 1000;
  float *x = check_host(c, (n ? n : 1) * 4), *got = check_host(c, segments * 4 + 4);
  uint64_t *off = check_host(c, segments * 16 + 16);
  if (!x || !got || !off) return 0;
  for (size_t i = 0; i < n; ++i)
    x[i] = (float)((int64_t)(c->host[i] & 0xFFFFFFu) * ((c->host[i] >> 30) & 1 ? -1 : 1));
  for (size_t s = 0; s < segments; ++s)
    off[s] = s * 1000, off[segments + s] = (s + 1) * 1000 < n ? (s + 1) * 1000 : n;
  struct segreduce_arg a;
  memset(&a, 0, sizeof a);
  a.op = 3, a.type = CLPRIM_FLOAT, a.n = n, a.segments = segments;
  a.in = check_buffer(c, (n ? n : 1) * 4, x);
  a.begins = check_buffer(c, segments * 8 + 8, off);
  a.ends = check_buffer(c, segments * 8 + 8, off + segments);
  a.out = check_buffer(c, segments * 4 + 4, NULL);
  if (!a.in || !a.begins || !a.ends || !a.out || !check_ok(c, call_segreduce(c->ctx, &a)) ||
      !check_read(c, a.out, segments * 4, got))
    return 0;
  for (size_t s = 0; s < segments; ++s) {
    int64_t sum = 0;
    for (uint64_t i = off[s]; i < off[segments + s]; ++i) sum += (int64_t)x[i];
    const float want = (float)sum;
    if (memcmp(&got[s], &want, 4) != 0) return 0;
  }
  return 1;
}

/* ------------------------------------------------------------ the family */

static const struct bench_op ops[] = {
    {"argmax", 0x3Fu, "value and first index, result on the device", check_argmax},
    {"argmin", 0x3Fu, "as argmax", check_argmin},
    {"reduce_sum", 0x3Fu, "sum, result on the device", check_reduce_sum},
    {"reduce_sum_exact", 0x30u,
     "sum with CLPRIM_EXACT (exact, rounded once), float and double, result on the device",
     check_reduce_sum_exact},
    {"segmented_sum", 0x3Fu,
     "sum per segment of 1024 (n / 1024 segments, uint64 offsets), on the device",
     check_segmented_sum},
    {"segmented_max", 0x3Fu, "as segmented_sum, the largest element", check_segmented_max},
    {"segmented_sum_exact", 0x30u,
     "as segmented_sum with CLPRIM_EXACT (each segment's exact sum, rounded once)",
     check_segmented_sum_exact},
    {"segmented_argmax", 0x3Fu,
     "as segmented_sum, value bits and first index (two uint64 per segment)",
     check_segmented_argmax},
};

static void run(struct bench *b, clprim_type type, size_t n) {
  if (bench_wants(b, "argmax") || bench_wants(b, "argmin") || bench_wants(b, "reduce_sum") ||
      bench_wants(b, "reduce_sum_exact"))
    run_reduce(b, type, n);
  if (bench_wants(b, "segmented_sum") || bench_wants(b, "segmented_sum_exact") ||
      bench_wants(b, "segmented_max") ||
      bench_wants(b, "segmented_argmax"))
    run_segreduce(b, type, n);
}

static const struct bench_startup startup[] = {{"reduce_sum", startup_reduce_sum},
                                               {"reduce_sum_exact", startup_reduce_sum_exact},
                                               {"argmax", startup_argmax},
                                               {"segmented_sum", startup_segmented_sum},
                                               {"segmented_sum_exact",
                                                startup_segmented_sum_exact}};

const struct bench_family bench_reduce = {
    "reduce", ops, BENCH_COUNT(ops), run, startup, BENCH_COUNT(startup),
    "per-work-group tree (subgroups where the path has them), then one work-group",
    NULL,
    "a work-item per contiguous share: 16-lane sums of 4096-element tiles, best pairs per share"};
