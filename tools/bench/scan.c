/* Rows of the scan family: exclusive and inclusive prefix sums, plain and
 * exact (CLPRIM_EXACT, float and double), against a copy of the same
 * bytes. */
#include "check.h"
#include "data.h"

#include <stdlib.h>
#include <string.h>

struct scan_arg {
  clprim_type type;
  cl_mem in, out;
  size_t n;
  int inclusive;
  unsigned flags;
};

static clprim_status call_scan(clprim_context *ctx, void *p) {
  struct scan_arg *a = p;
  const clprim_buffer in = clprim_buf(a->in), out = clprim_buf(a->out);
  return a->inclusive ? clprim_scan_inclusive(ctx, a->n, a->type, in, a->flags, out)
                      : clprim_scan_exclusive(ctx, a->n, a->type, in, a->flags, out);
}

static void run_scan(struct bench *b, clprim_type type, size_t n) {
  size_t bytes = n * clprim_type_size(type);
  void *host = bench_random(b, type, n, 1);
  struct scan_arg a = {type, NULL, NULL, n, 0, 0};
  a.in = bench_buffer(b, bytes, host);
  a.out = bench_buffer(b, bytes, NULL);
  bench_free(b, host);
  double copy = bench_copy_ms(b, a.in, a.out, bytes);
  if (bench_wants(b, "scan")) {
    bench_report_copy(b, "scan", "exclusive", type, n, call_scan, &a, 2.0 * bytes, copy);
    a.inclusive = 1;
    bench_report_copy(b, "scan", "inclusive", type, n, call_scan, &a, 2.0 * bytes, copy);
  }
  if (bench_wants(b, "scan_exact") && (type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE)) {
    a.flags = CLPRIM_EXACT;
    a.inclusive = 0;
    bench_report_copy(b, "scan_exact", "exclusive", type, n, call_scan, &a, 2.0 * bytes, copy);
    a.inclusive = 1;
    bench_report_copy(b, "scan_exact", "inclusive", type, n, call_scan, &a, 2.0 * bytes, copy);
  }
  bench_release(b, a.in);
  bench_release(b, a.out);
}

/* Exclusive scan of uint32, then the inclusive scan of in[3, n - 2) into
 * out[5, n): element offsets that no device aligns (12 and 20 bytes), so
 * the ranges go through temporary copies (src/core/call.c), and out[0, 5)
 * must keep the exclusive scan. */
static int check_scan(struct bench_check *c) {
  const size_t n = c->n, m = n - 5;
  uint32_t *exclusive = check_host(c, n * 4), *got = check_host(c, n * 4);
  cl_mem out = check_buffer(c, n * 4, NULL);
  if (!exclusive || !got || !out ||
      !check_ok(c, clprim_scan_exclusive(c->ctx, n, CLPRIM_UINT32, clprim_buf(c->in), 0,
                                         clprim_buf(out))) ||
      !check_read(c, out, n * 4, exclusive) ||
      !check_ok(c, clprim_scan_inclusive(c->ctx, m, CLPRIM_UINT32, clprim_buf_at(c->in, 3), 0,
                                         clprim_buf_at(out, 5))) ||
      !check_read(c, out, n * 4, got))
    return 0;
  uint32_t run = 0;
  for (size_t i = 0; i < n; run += c->host[i++])
    if (exclusive[i] != run) return 0;
  for (size_t i = 0; i < 5; ++i)
    if (got[i] != exclusive[i]) return 0;
  run = 0;
  for (size_t i = 0; i < m; ++i)
    if (got[5 + i] != (run += c->host[3 + i])) return 0;
  return 1;
}

/* The exact float inclusive scan of integers below 2^24 with random signs:
 * each prefix is an integer, which C's conversion rounds as CLPRIM_EXACT
 * must. */
static int check_scan_exact(struct bench_check *c) {
  const size_t n = c->n;
  float *x = check_host(c, n * 4), *got = check_host(c, n * 4);
  if (!x || !got) return 0;
  for (size_t i = 0; i < n; ++i)
    x[i] = (float)((int64_t)(c->host[i] & 0xFFFFFFu) * ((c->host[i] >> 30) & 1 ? -1 : 1));
  cl_mem in = check_buffer(c, n * 4, x), out = check_buffer(c, n * 4, NULL);
  if (!in || !out ||
      !check_ok(c, clprim_scan_inclusive(c->ctx, n, CLPRIM_FLOAT, clprim_buf(in), CLPRIM_EXACT,
                                         clprim_buf(out))) ||
      !check_read(c, out, n * 4, got))
    return 0;
  int64_t run = 0;
  for (size_t i = 0; i < n; ++i) {
    run += (int64_t)x[i];
    const float want = (float)run;
    if (memcmp(&got[i], &want, sizeof want) != 0) return 0;
  }
  return 1;
}

static const struct bench_op ops[] = {
    {"scan", 0x3Fu, "exclusive and inclusive prefix sums", check_scan},
    {"scan_exact", 0x30u,
     "exclusive and inclusive prefix sums with CLPRIM_EXACT (each prefix exact, rounded once), "
     "float and double",
     check_scan_exact},
};

static clprim_status startup_scan(const struct bench_startup_inputs *in) {
  return clprim_scan_exclusive(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), 0,
                               clprim_buf(in->out));
}

static clprim_status startup_scan_exact(const struct bench_startup_inputs *in) {
  return clprim_scan_exclusive(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), CLPRIM_EXACT,
                               clprim_buf(in->out));
}

static const struct bench_startup startup[] = {{"scan", startup_scan},
                                               {"scan_exact", startup_scan_exact}};

const struct bench_family bench_scan = {
    "scan", ops, BENCH_COUNT(ops), run_scan, startup, BENCH_COUNT(startup),
    "reduce-then-scan, tile sums scanned recursively",
    "single pass, decoupled look-back",
    "a work-item per contiguous share: share sums, their scan, each share scanned in 16 x 16 "
    "tiles; by key: each share's (head, sum) pair, the pairs' scan, each share from its carry"};
