/* Rows of the histogram family: even bins over values of the type, and
 * counts of keys, against one read of the input. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <string.h>

struct hist_arg {
  int keys; /* 0 histogram_even of values, 1 histogram_keys */
  clprim_type type;
  cl_mem in, counts;
  size_t n, bins;
  clprim_value lo, hi;
};

static clprim_status call_hist(clprim_context *ctx, void *p) {
  struct hist_arg *a = p;
  if (a->keys)
    return clprim_histogram_keys(ctx, a->n, a->type, clprim_buf(a->in), a->bins,
                                 clprim_buf(a->counts), NULL, clprim_buf(NULL));
  return clprim_histogram_even(ctx, a->n, a->type, clprim_buf(a->in), a->lo, a->hi, a->bins,
                               clprim_buf(a->counts), NULL, clprim_buf(NULL));
}

/* histogram: values of type (uniform [0, 1), integers [0, 1000)) into 256
 * and 2^20 bins; histogram_keys: random keys of type (int32 or uint32)
 * into 2^20 bins. */
static void run_hist(struct bench *b, clprim_type type, size_t n) {
  const size_t es = clprim_type_size(type), bins_many = (size_t)1 << 20;
  struct hist_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  a.counts = bench_buffer(b, bins_many * 4, NULL);
  if (bench_wants(b, "histogram")) {
    void *host = bench_random(b, type, n, 3);
    a.in = bench_buffer(b, n * es, host);
    bench_free(b, host);
    const double read = bench_read_ms(b, a.in, n * es);
    if (type == CLPRIM_FLOAT)
      a.hi.f32 = 1.0f;
    else if (type == CLPRIM_DOUBLE)
      a.hi.f64 = 1.0;
    else if (es == 4)
      a.hi.u32 = 1000;
    else
      a.hi.u64 = 1000;
    const size_t bin_counts[2] = {256, bins_many};
    for (int k = 0; k < 2; ++k) {
      char variant[32];
      a.bins = bin_counts[k];
      snprintf(variant, sizeof variant, "%zu bins", a.bins);
      bench_report_read(b, "histogram", variant, type, n, call_hist, &a, read);
    }
    bench_release(b, a.in);
  }
  if (bench_wants(b, "histogram_keys") && (type == CLPRIM_INT32 || type == CLPRIM_UINT32)) {
    uint32_t *keys = bench_keys(b, n, bins_many, 0); /* all in [0, 2^20): int32 or uint32 */
    a.in = bench_buffer(b, n * 4, keys);
    bench_free(b, keys);
    a.keys = 1, a.bins = bins_many;
    bench_report_read(b, "histogram_keys", "2^20 keys random", type, n, call_hist, &a,
                      bench_read_ms(b, a.in, n * 4));
    bench_release(b, a.in);
  }
  bench_release(b, a.counts);
}

/* Runs a histogram of uint32 keys below 1000 into `bins` (of
 * histogram_keys, or even over [0, 900)) and reads the counts to got and
 * what fell outside to outside (histogram_keys: one word, the invalid
 * keys; even: below, above, NaN); the keys to *keys. */
static int check_run(struct bench_check *c, int by_key, size_t bins, uint32_t **keys,
                     uint32_t **got, uint64_t outside[3]) {
  *keys = check_keys(c, 1000, 0);
  *got = check_host(c, bins * 4);
  cl_mem in = check_buffer(c, c->n * 4, *keys), counts = check_buffer(c, bins * 4, NULL);
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
  hi.u32 = 900;
  if (!*keys || !*got || !in || !counts) return 0;
  const clprim_status st =
      by_key ? clprim_histogram_keys(c->ctx, c->n, CLPRIM_UINT32, clprim_buf(in), bins,
                                     clprim_buf(counts), outside, clprim_buf(NULL))
             : clprim_histogram_even(c->ctx, c->n, CLPRIM_UINT32, clprim_buf(in), lo, hi, bins,
                                     clprim_buf(counts), outside, clprim_buf(NULL));
  return check_ok(c, st) && check_read(c, counts, bins * 4, *got);
}

/* Into 256 even bins over [0, 900): bin x * 256 / 900, and the keys at or
 * above 900 counted outside. */
static int check_histogram(struct bench_check *c) {
  uint32_t *keys, *got, want[256] = {0}, above = 0;
  uint64_t outside[3] = {1, 1, 1};
  if (!check_run(c, 0, 256, &keys, &got, outside)) return 0;
  for (size_t i = 0; i < c->n; ++i)
    if (keys[i] < 900)
      ++want[keys[i] * 256 / 900];
    else
      ++above;
  return memcmp(got, want, sizeof want) == 0 && outside[0] == 0 && outside[1] == above &&
         outside[2] == 0;
}

/* Keys below 1000 into 900 bins: the keys at or above 900 are invalid. */
static int check_histogram_keys(struct bench_check *c) {
  uint32_t *keys, *got, want[900] = {0}, invalid = 0;
  uint64_t outside[3] = {1, 1, 1};
  if (!check_run(c, 1, 900, &keys, &got, outside)) return 0;
  for (size_t i = 0; i < c->n; ++i)
    if (keys[i] < 900)
      ++want[keys[i]];
    else
      ++invalid;
  return memcmp(got, want, sizeof want) == 0 && outside[0] == invalid;
}

static const struct bench_op ops[] = {
    {"histogram", 0x3Fu, "histogram_even into 256 and 2^20 bins", check_histogram},
    {"histogram_keys", 0x03u, "2^20 bins, random keys; the type is the key type (int32, uint32)",
     check_histogram_keys},
};

static clprim_status startup_histogram(const struct bench_startup_inputs *in) {
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
  hi.f32 = 1.0f;
  return clprim_histogram_even(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), lo, hi, 256,
                               clprim_buf(in->out), NULL, clprim_buf(NULL));
}

static const struct bench_startup startup[] = {{"histogram", startup_histogram}};

const struct bench_family bench_histogram = {
    "histogram", ops, BENCH_COUNT(ops), run_hist, startup, BENCH_COUNT(startup),
    "local-memory bins; global atomics beyond them (on GPUs a binned partition for "
    "large inputs)",
    NULL,
    "local-memory bins: a work-item per contiguous share, plain adds; global atomics beyond them"};
