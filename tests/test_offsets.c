/* test_offsets: clprim_buffer element offsets (src/core/call.c) for the
 * calls of scan, reductions, compaction, histograms, reduce-by-key and
 * selection (the runs, per-segment, sort, search, merge and gather suites
 * put their own ranges at offsets), on every path context: each call runs on a range
 * inside a larger buffer at offset 0, at an offset the device aligns (the
 * call works on a sub-buffer) and at an unaligned one (a temporary copy),
 * inputs and outputs at different offsets, against a CPU reference computed
 * on the range; the bytes around every output range (a sentinel pattern) and
 * the neighbours of every device scalar result stay untouched. Also
 * user-made sub-buffers with offsets, outputs in the input's own buffer
 * (adjacent: fine; overlapping by one element:
 * CLPRIM_ERROR_INVALID_ARGUMENT), scan in place, ranges past their buffer's
 * end and absurd offsets (errors that write nothing), and one context used
 * by two threads (CLPRIM_ERROR_CONTEXT_BUSY). */
#include "common.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAD 9         /* elements after every range */
#define SENTINEL 0xA7 /* every byte of an output buffer (and host result) before a call */
#define MAX_BUFS 8

/* Where a range starts (see offset_of). */
enum { AT_ZERO, AT_ALIGNED, AT_UNALIGNED };
static const char *const kind_name[] = {"0", "aligned", "unaligned"};

static size_t big_n(void) { return test_small() ? 61 : 3001; }

/* CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bytes. */
static size_t base_align(clprim_context *ctx) {
  cl_uint bits = 0;
  cl_int err = clGetDeviceInfo(clprim_context_device(ctx), CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                               sizeof bits, &bits, NULL);
  if (err != CL_SUCCESS) fail_msg("CL_DEVICE_MEM_BASE_ADDR_ALIGN: %s", clprim_status_name(err));
  return bits >= 8 ? bits / 8 : 1;
}

/* The element offset of a range of `kind` for elements of es bytes: 0; the
 * device's alignment in elements (twice that for outputs, so that they sit
 * elsewhere than inputs); or an unaligned one (3, outputs 5). */
static size_t offset_of(size_t align, int kind, size_t es, int output) {
  if (kind == AT_ZERO) return 0;
  if (kind == AT_ALIGNED) {
    const size_t a = align % es == 0 ? align / es : align;
    return output ? 2 * a : a;
  }
  size_t off = output ? 5 : 3;
  while (off < 64 && (off * es) % align == 0) off += 2;
  return off;
}

static const char *path_label(clprim_context *ctx, unsigned p) {
  static char label[64];
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  if (p == CLPRIM_PATH_AUTO)
    snprintf(label, sizeof label, "auto (%s)", clprim_path_name(info.path));
  else
    snprintf(label, sizeof label, "%s", clprim_path_name(info.path));
  return label;
}

/* ------------------------------------------------------ buffers of a run */

/* A device buffer holding one argument's range: elements [off, off + count)
 * of `total` (off + count + PAD) elements of es bytes. */
struct dbuf {
  cl_mem mem;
  size_t es, off, count, total;
  size_t stored; /* elements the buffer holds: total, or less for a range past the end */
  int output;
  unsigned char *host; /* total elements: as uploaded; outputs: as read back */
  clprim_buffer range; /* what the call gets */
};

/* One call of a family: its context, type, n, where its ranges start, and
 * an error to provoke: the argument (in the order the family makes its
 * buffers) whose range runs one element past its buffer's end (short_arg),
 * or sits at offset SIZE_MAX / 2 (huge_arg); -1 for none. */
struct run {
  clprim_context *ctx;
  clprim_type type;
  size_t n, align;
  int in_kind, out_kind;
  int short_arg, huge_arg;
  unsigned nbufs;
  struct dbuf bufs[MAX_BUFS];
  char what[256];
};

static struct dbuf *dbuf_new(struct run *r, size_t es, size_t count, int output,
                             const void *data, const void *pad) {
  if (r->nbufs == MAX_BUFS) fail_msg("%s: too many buffers", r->what);
  const int idx = (int)r->nbufs++;
  struct dbuf *d = &r->bufs[idx];
  memset(d, 0, sizeof *d);
  d->es = es, d->count = count, d->output = output;
  d->off = offset_of(r->align, output ? r->out_kind : r->in_kind, es, output);
  d->total = d->off + count + PAD;
  d->stored = idx == r->short_arg && count ? d->off + count - 1 : d->total;
  d->host = malloc(d->total * es);
  assert_non_null(d->host);
  if (output) {
    memset(d->host, SENTINEL, d->total * es);
  } else {
    for (size_t i = 0; i < d->total; ++i) memcpy(d->host + i * es, pad, es);
    if (count) memcpy(d->host + d->off * es, data, count * es);
  }
  d->mem = test_buffer(r->ctx, d->stored * es, d->stored ? d->host : NULL);
  d->range = clprim_buf_at(d->mem, idx == r->huge_arg ? SIZE_MAX / 2 : d->off);
  return d;
}

/* An input of count elements (data) with `pad` (one element) all around. */
static struct dbuf *dbuf_in(struct run *r, size_t es, size_t count, const void *data,
                            const void *pad) {
  return dbuf_new(r, es, count, 0, data, pad);
}
/* An output of count elements, every byte SENTINEL. */
static struct dbuf *dbuf_out(struct run *r, size_t es, size_t count) {
  return dbuf_new(r, es, count, 1, NULL, NULL);
}

/* Reads output d back and checks that every byte outside its first
 * `written` elements from the range's start is still SENTINEL. Returns the
 * range's bytes. */
static const unsigned char *dbuf_fetch(struct run *r, struct dbuf *d, size_t written,
                                       const char *name) {
  test_read(r->ctx, d->mem, d->stored * d->es, d->host);
  const size_t lo = d->off * d->es, hi = (d->off + written) * d->es;
  for (size_t b = 0; b < d->stored * d->es; ++b)
    if ((b < lo || b >= hi) && d->host[b] != SENTINEL)
      fail_msg("%s: %s: byte %zu (element %zu of its buffer) was written; the range is elements "
               "%zu..%zu, of which %zu may be written",
               r->what, name, b, b / d->es, d->off, d->off + d->count, written);
  return d->host + lo;
}

static void run_end(struct run *r) {
  for (unsigned b = 0; b < r->nbufs; ++b) {
    clReleaseMemObject(r->bufs[b].mem);
    free(r->bufs[b].host);
    r->bufs[b].host = NULL;
  }
}

/* Checks a call's status: `expected` normally, CLPRIM_ERROR_BUFFER_TOO_SMALL
 * for a range past its end, any error for a huge offset. After an error
 * every output buffer must be untouched. Returns whether the call
 * succeeded. */
static int call_done(struct run *r, int st, clprim_status expected, const char *call) {
  if (r->short_arg >= 0) {
    if (st != CLPRIM_ERROR_BUFFER_TOO_SMALL)
      fail_msg("%s: %s with argument %d one element past its buffer's end returned %s", r->what,
               call, r->short_arg, clprim_status_name(st));
  } else if (r->huge_arg >= 0) {
    if (!clprim_is_error(st))
      fail_msg("%s: %s with argument %d at offset SIZE_MAX / 2 returned %s", r->what, call,
               r->huge_arg, clprim_status_name(st));
  } else if (st != (int)expected) {
    fail_msg("%s: %s returned %s, expected %s", r->what, call, clprim_status_name(st),
             clprim_status_name(expected));
  }
  if (st == CLPRIM_SUCCESS) return 1;
  for (unsigned b = 0; b < r->nbufs; ++b)
    if (r->bufs[b].output) dbuf_fetch(r, &r->bufs[b], 0, "an output of a failed call");
  return 0;
}

/* After a failed call: the host result must be as it was (SENTINEL bytes). */
static void host_untouched(const struct run *r, const void *p, size_t bytes, const char *name) {
  for (size_t b = 0; b < bytes; ++b)
    if (((const unsigned char *)p)[b] != SENTINEL)
      fail_msg("%s: the failed call wrote the host result %s", r->what, name);
}

/* ------------------------------------------------------------ reference */

static void *random_data(clprim_type type, size_t n) {
  void *p = malloc(n ? n * clprim_type_size(type) : 1);
  assert_non_null(p);
  test_random(type, p, n, 0);
  return p;
}

/* The element around ranges: far from the data, so that reading it changes
 * every result (sums, maxima, ranks, bins; keys: out of range). */
static const void *pad_of(clprim_type type) {
  static const int32_t i32 = 0x3FFFFFFF;
  static const float f32 = 1e30f;
  static const double f64 = 1e300;
  return type == CLPRIM_FLOAT ? (const void *)&f32
         : type == CLPRIM_DOUBLE ? (const void *)&f64
                                 : (const void *)&i32;
}

/* Element i as a number (int32, uint32, float, double). */
static double num(clprim_type type, const void *p, size_t i) {
  switch (type) {
  case CLPRIM_INT32: return ((const int32_t *)p)[i];
  case CLPRIM_UINT32: return ((const uint32_t *)p)[i];
  case CLPRIM_FLOAT: return ((const float *)p)[i];
  case CLPRIM_DOUBLE: return ((const double *)p)[i];
  default: fail_msg("num: type %d", (int)type);
  }
  return 0;
}

/* Element i of es bytes, zero-extended (no alignment needed). */
static uint64_t load(const void *p, size_t es, size_t i) {
  uint64_t v = 0;
  if (es == 8) {
    memcpy(&v, (const unsigned char *)p + i * 8, 8);
  } else if (es == 4) {
    uint32_t w;
    memcpy(&w, (const unsigned char *)p + i * 4, 4);
    v = w;
  } else {
    v = ((const unsigned char *)p)[i];
  }
  return v;
}

static int is_float(clprim_type type) { return type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE; }
static double unit(clprim_type type) {
  return type == CLPRIM_FLOAT ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
}

/* A float sum: |got - exact| <= k u sum|x| (plus the smallest normal). */
static void check_close(const struct run *r, const char *name, size_t i, double got,
                        double exact, double abs_sum, double k) {
  const double bound = k * unit(r->type) * abs_sum + (r->type == CLPRIM_FLOAT ? FLT_MIN : DBL_MIN);
  if (!(fabs(got - exact) <= bound))
    fail_msg("%s: %s[%zu] is %.17g, expected %.17g (bound %.3g)", r->what, name, i, got, exact,
             bound);
}

/* Exclusive (inclusive) prefix sums of x, compared with got: integers
 * exactly (wrapping), floats within the bound of docs/ACCURACY.md. */
static void check_scan(const struct run *r, const void *x, const void *got, size_t n,
                       int inclusive, const char *name) {
  const clprim_type t = r->type;
  const size_t es = clprim_type_size(t), tile = clprim__scan_tile(r->ctx, t);
  uint64_t run = 0;
  double exact = 0, abs_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (is_float(t)) {
      const double v = num(t, x, i);
      if (inclusive) exact += v, abs_sum += fabs(v);
      check_close(r, name, i, num(t, got, i), exact, abs_sum, 64.0 + (double)(i / tile));
      if (!inclusive) exact += v, abs_sum += fabs(v);
    } else {
      const uint64_t v = load(x, es, i);
      if (inclusive) run += v;
      const uint64_t want = es == 4 ? (uint32_t)run : run, g = load(got, es, i);
      if (g != want)
        fail_msg("%s: %s[%zu] is %llu, expected %llu", r->what, name, i, (unsigned long long)g,
                 (unsigned long long)want);
      if (!inclusive) run += v;
    }
  }
}

/* A clprim_value the library returned: the type's bits, a 32-bit element
 * zero-extended ("zeros in the rest"). */
static uint64_t value_bits(const struct run *r, const clprim_value *v, const char *name) {
  if (clprim_type_size(r->type) == 8) return v->u64;
  if (v->u64 >> 32)
    fail_msg("%s: %s: the 32-bit value's upper bytes are not zero (%016llx)", r->what, name,
             (unsigned long long)v->u64);
  return v->u32;
}

static void check_u64(const struct run *r, const char *name, uint64_t got, uint64_t want) {
  if (got != want)
    fail_msg("%s: %s is %llu, expected %llu", r->what, name, (unsigned long long)got,
             (unsigned long long)want);
}

/* Orders of the selection calls: (key, index), common.h's test_keyed. */
static struct test_keyed *keyed_of(clprim_type type, const void *x, size_t n) {
  struct test_keyed *k = malloc((n ? n : 1) * sizeof *k);
  assert_non_null(k);
  for (size_t i = 0; i < n; ++i) k[i].key = test_order_key(type, x, i), k[i].index = i;
  return k;
}

/* ------------------------------------------------------------- families */

static void fam_scan(struct run *r) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t);
  void *x = random_data(t, n);
  struct dbuf *in = dbuf_in(r, es, n, x, pad_of(t)), *out = dbuf_out(r, es, n);
  if (call_done(r, clprim_scan_exclusive(r->ctx, n, t, in->range, 0, out->range), CLPRIM_SUCCESS,
                "clprim_scan_exclusive"))
    check_scan(r, x, dbuf_fetch(r, out, n, "out"), n, 0, "out");
  run_end(r);
  free(x);
}

static void fam_argmax(struct run *r) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t);
  void *x = random_data(t, n);
  struct dbuf *in = dbuf_in(r, es, n, x, pad_of(t)), *res = dbuf_out(r, 8, 2);
  clprim_value v;
  uint64_t index;
  memset(&v, SENTINEL, sizeof v), memset(&index, SENTINEL, sizeof index);
  /* n = 0 has no answer: an error. */
  if (call_done(r, clprim_argmax(r->ctx, n, t, in->range, 0, &v, &index, res->range),
                n ? CLPRIM_SUCCESS : CLPRIM_ERROR_INVALID_ARGUMENT, "clprim_argmax")) {
    size_t best = 0;
    for (size_t i = 1; i < n; ++i)
      if (num(t, x, i) > num(t, x, best)) best = i;
    const uint64_t bits = load(x, es, best);
    check_u64(r, "index", index, best);
    check_u64(r, "value bits", value_bits(r, &v, "value"), bits);
    const unsigned char *g = dbuf_fetch(r, res, 2, "result");
    check_u64(r, "result[0] (value bits)", load(g, 8, 0), bits);
    check_u64(r, "result[1] (index)", load(g, 8, 1), best);
  } else {
    host_untouched(r, &v, sizeof v, "value");
    host_untouched(r, &index, sizeof index, "index");
  }
  run_end(r);
  free(x);
}

static void fam_reduce_sum(struct run *r) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t);
  void *x = random_data(t, n);
  struct dbuf *in = dbuf_in(r, es, n, x, pad_of(t)), *res = dbuf_out(r, 8, 1);
  clprim_value s;
  memset(&s, SENTINEL, sizeof s);
  if (call_done(r, clprim_reduce_sum(r->ctx, n, t, in->range, 0, &s, res->range), CLPRIM_SUCCESS,
                "clprim_reduce_sum")) {
    const uint64_t bits = value_bits(r, &s, "sum");
    if (is_float(t)) {
      double exact = 0, abs_sum = 0;
      for (size_t i = 0; i < n; ++i) exact += num(t, x, i), abs_sum += fabs(num(t, x, i));
      const double got = t == CLPRIM_FLOAT ? (double)s.f32 : s.f64;
      check_close(r, "sum", 0, got, exact, abs_sum, 64.0 + 2.0 * log2((double)n + 1));
    } else {
      uint32_t sum = 0;
      for (size_t i = 0; i < n; ++i) sum += (uint32_t)load(x, es, i);
      check_u64(r, "sum", bits, sum);
    }
    check_u64(r, "result (sum bits)", load(dbuf_fetch(r, res, 1, "result"), 8, 0), bits);
  } else {
    host_untouched(r, &s, sizeof s, "sum");
  }
  run_end(r);
  free(x);
}

/* Select / partition results against pass[] (the reference's verdicts). */
static void check_compaction(struct run *r, const void *x, const unsigned char *pass,
                             int partition, struct dbuf *vals, struct dbuf *idxs,
                             struct dbuf *cnt, uint64_t count, size_t is) {
  const size_t n = r->n, es = clprim_type_size(r->type);
  size_t passed = 0;
  for (size_t i = 0; i < n; ++i) passed += pass[i];
  check_u64(r, "count", count, passed);
  check_u64(r, "count_out", load(dbuf_fetch(r, cnt, 1, "count_out"), 8, 0), passed);
  /* Select writes only the first count elements of its outputs. */
  const size_t written = partition ? n : passed;
  const unsigned char *gv = dbuf_fetch(r, vals, written, "values");
  const unsigned char *gi = dbuf_fetch(r, idxs, written, "indices");
  size_t j = 0;
  for (int part = 0; part < (partition ? 2 : 1); ++part)
    for (size_t i = 0; i < n; ++i) {
      if (pass[i] != (part == 0)) continue;
      if (memcmp(gv + j * es, (const unsigned char *)x + i * es, es) != 0)
        fail_msg("%s: values[%zu] is not element %zu", r->what, j, i);
      check_u64(r, "an index", load(gi, is, j), i);
      ++j;
    }
}

static void fam_select_or_partition(struct run *r, int partition) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t);
  const unsigned flags = t == CLPRIM_DOUBLE ? CLPRIM_INDICES_64 : 0;
  const size_t is = flags ? 8 : 4;
  void *x = random_data(t, n);
  clprim_predicate pred;
  memset(&pred, 0, sizeof pred);
  pred.op = CLPRIM_PRED_GT; /* x > 0 */
  struct dbuf *in = dbuf_in(r, es, n, x, pad_of(t)), *vals = dbuf_out(r, es, n),
              *idxs = dbuf_out(r, is, n), *cnt = dbuf_out(r, 8, 1);
  uint64_t count;
  memset(&count, SENTINEL, sizeof count);
  const int st =
      partition ? clprim_partition(r->ctx, n, t, in->range, &pred, flags, vals->range,
                                   idxs->range, &count, cnt->range)
                : clprim_select(r->ctx, n, t, in->range, &pred, flags, vals->range, idxs->range,
                                &count, cnt->range);
  if (call_done(r, st, CLPRIM_SUCCESS, partition ? "clprim_partition" : "clprim_select")) {
    unsigned char *pass = malloc(n + 1);
    assert_non_null(pass);
    for (size_t i = 0; i < n; ++i) pass[i] = num(t, x, i) > 0;
    check_compaction(r, x, pass, partition, vals, idxs, cnt, count, is);
    free(pass);
  } else {
    host_untouched(r, &count, sizeof count, "count");
  }
  run_end(r);
  free(x);
}
static void fam_select(struct run *r) { fam_select_or_partition(r, 0); }
static void fam_partition(struct run *r) { fam_select_or_partition(r, 1); }

static void fam_select_flagged(struct run *r) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t);
  /* uint8 stencils, int32 ones (and uint64 indices) for double. */
  const clprim_flag_type ft = t == CLPRIM_DOUBLE ? CLPRIM_FLAGS_INT32 : CLPRIM_FLAGS_UINT8;
  const size_t fs = ft == CLPRIM_FLAGS_INT32 ? 4 : 1;
  const unsigned flags = t == CLPRIM_DOUBLE ? CLPRIM_INDICES_64 : 0;
  const size_t is = flags ? 8 : 4;
  void *x = random_data(t, n);
  unsigned char *pass = malloc(n + 1), *stencil = malloc((n + 1) * fs);
  assert_non_null(pass);
  assert_non_null(stencil);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t v = test_rand();
    pass[i] = (v & 1) != 0;
    /* Nonzero passes: any nonzero value. */
    const int32_t s = pass[i] ? (int32_t)(v >> 40 | 1) : 0;
    if (fs == 4)
      memcpy(stencil + i * 4, &s, 4);
    else
      stencil[i] = (unsigned char)(pass[i] ? (v >> 8) | 1 : 0);
  }
  static const int32_t stencil_pad = 1; /* passes: read, it would change the count */
  struct dbuf *in = dbuf_in(r, es, n, x, pad_of(t)),
              *st_buf = dbuf_in(r, fs, n, stencil, &stencil_pad), *vals = dbuf_out(r, es, n),
              *idxs = dbuf_out(r, is, n), *cnt = dbuf_out(r, 8, 1);
  uint64_t count;
  memset(&count, SENTINEL, sizeof count);
  if (call_done(r,
                clprim_select_flagged(r->ctx, n, t, in->range, st_buf->range, ft, flags,
                                      vals->range, idxs->range, &count, cnt->range),
                CLPRIM_SUCCESS, "clprim_select_flagged"))
    check_compaction(r, x, pass, 0, vals, idxs, cnt, count, is);
  else
    host_untouched(r, &count, sizeof count, "count");
  run_end(r);
  free(x);
  free(pass);
  free(stencil);
}

static void fam_histogram_even(struct run *r) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t), bins = 37;
  void *x = random_data(t, n);
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
  if (t == CLPRIM_INT32) lo.i32 = -500, hi.i32 = 500;
  if (t == CLPRIM_FLOAT) lo.f32 = -0.5f, hi.f32 = 0.5f;
  if (t == CLPRIM_DOUBLE) lo.f64 = -0.5, hi.f64 = 0.5;
  struct dbuf *in = dbuf_in(r, es, n, x, pad_of(t)), *counts = dbuf_out(r, 4, bins),
              *outs = dbuf_out(r, 8, 3);
  uint64_t outside[3];
  memset(outside, SENTINEL, sizeof outside);
  if (call_done(r,
                clprim_histogram_even(r->ctx, n, t, in->range, lo, hi, bins, counts->range,
                                      outside, outs->range),
                CLPRIM_SUCCESS, "clprim_histogram_even")) {
    uint32_t want[37] = {0};
    uint64_t want_out[3] = {0, 0, 0};
    const float fscale = (float)bins / (hi.f32 - lo.f32);
    const double dscale = (double)bins / (hi.f64 - lo.f64);
    for (size_t i = 0; i < n; ++i) {
      size_t b = 0;
      if (t == CLPRIM_INT32) {
        const int32_t v = ((const int32_t *)x)[i];
        if (v < lo.i32 || v >= hi.i32) {
          ++want_out[v < lo.i32 ? 0 : 1];
          continue;
        }
        b = (size_t)((uint64_t)((int64_t)v - lo.i32) * bins / (uint64_t)(hi.i32 - lo.i32));
      } else if (t == CLPRIM_FLOAT) {
        const float v = ((const float *)x)[i];
        if (isnan(v) || v < lo.f32 || v >= hi.f32) {
          ++want_out[isnan(v) ? 2 : v < lo.f32 ? 0 : 1];
          continue;
        }
        const float d = v - lo.f32, p = d * fscale;
        b = (size_t)(unsigned)p;
      } else {
        const double v = ((const double *)x)[i];
        if (isnan(v) || v < lo.f64 || v >= hi.f64) {
          ++want_out[isnan(v) ? 2 : v < lo.f64 ? 0 : 1];
          continue;
        }
        const double d = v - lo.f64, p = d * dscale;
        b = (size_t)(unsigned)p;
      }
      if (b >= bins) b = bins - 1;
      ++want[b];
    }
    const unsigned char *g = dbuf_fetch(r, counts, bins, "counts");
    for (size_t b = 0; b < bins; ++b) check_u64(r, "a bin's count", load(g, 4, b), want[b]);
    g = dbuf_fetch(r, outs, 3, "outside_out");
    for (int k = 0; k < 3; ++k) {
      check_u64(r, "outside (host)", outside[k], want_out[k]);
      check_u64(r, "outside_out", load(g, 8, (size_t)k), want_out[k]);
    }
  } else {
    host_untouched(r, outside, sizeof outside, "outside");
  }
  run_end(r);
  free(x);
}

/* Keys for the dense calls: int32 in [-3, keys + 3) (negative ones and
 * those >= keys invalid), or uint32 in [0, keys + 6). */
static int32_t *dense_keys(clprim_type kt, size_t n, size_t num_keys) {
  int32_t *k = malloc((n + 1) * 4);
  assert_non_null(k);
  for (size_t i = 0; i < n; ++i)
    k[i] = kt == CLPRIM_INT32 ? (int32_t)(test_rand() % (num_keys + 6)) - 3
                              : (int32_t)(test_rand() % (num_keys + 6));
  return k;
}
static int dense_valid(clprim_type kt, int32_t key, size_t num_keys) {
  return kt == CLPRIM_INT32 ? key >= 0 && (size_t)key < num_keys : (uint32_t)key < num_keys;
}

static void fam_histogram_keys(struct run *r) {
  /* Keys are int32 or uint32: uint32 in the float runs, int32 otherwise. */
  const clprim_type kt = r->type == CLPRIM_FLOAT ? CLPRIM_UINT32 : CLPRIM_INT32;
  const size_t n = r->n, num_keys = 50;
  int32_t *keys = dense_keys(kt, n, num_keys);
  static const int32_t key_pad = 7; /* a valid key: read, it would change a count */
  struct dbuf *in = dbuf_in(r, 4, n, keys, &key_pad), *counts = dbuf_out(r, 4, num_keys),
              *inv = dbuf_out(r, 8, 1);
  uint64_t invalid;
  memset(&invalid, SENTINEL, sizeof invalid);
  if (call_done(r,
                clprim_histogram_keys(r->ctx, n, kt, in->range, num_keys, counts->range,
                                      &invalid, inv->range),
                CLPRIM_SUCCESS, "clprim_histogram_keys")) {
    uint32_t want[50] = {0};
    uint64_t bad = 0;
    for (size_t i = 0; i < n; ++i)
      if (dense_valid(kt, keys[i], num_keys))
        ++want[keys[i]];
      else
        ++bad;
    const unsigned char *g = dbuf_fetch(r, counts, num_keys, "counts");
    for (size_t k = 0; k < num_keys; ++k) check_u64(r, "a key's count", load(g, 4, k), want[k]);
    check_u64(r, "invalid", invalid, bad);
    check_u64(r, "invalid_out", load(dbuf_fetch(r, inv, 1, "invalid_out"), 8, 0), bad);
  } else {
    host_untouched(r, &invalid, sizeof invalid, "invalid");
  }
  run_end(r);
  free(keys);
}

static void fam_reduce_by_key_dense(struct run *r) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t), num_keys = 50;
  clprim_device_info info;
  clprim_context_get_info(r->ctx, &info, sizeof info);
  if (clprim_type_size(t) == 8 && !info.has_int64_atomics) {
    printf("%s: skipped (no 64-bit atomics)\n", r->what);
    return;
  }
  int32_t *keys = dense_keys(CLPRIM_INT32, n, num_keys);
  void *x = random_data(t, n);
  static const int32_t key_pad = 7;
  struct dbuf *kin = dbuf_in(r, 4, n, keys, &key_pad), *vin = dbuf_in(r, es, n, x, pad_of(t)),
              *sums = dbuf_out(r, es, num_keys), *counts = dbuf_out(r, 4, num_keys),
              *inv = dbuf_out(r, 8, 1);
  uint64_t invalid;
  memset(&invalid, SENTINEL, sizeof invalid);
  if (call_done(r,
                clprim_reduce_by_key_dense(r->ctx, n, CLPRIM_INT32, kin->range, t, vin->range,
                                           num_keys, 0, sums->range, counts->range, &invalid,
                                           inv->range),
                CLPRIM_SUCCESS, "clprim_reduce_by_key_dense")) {
    uint32_t want_count[50] = {0}, want_isum[50] = {0};
    double exact[50] = {0}, abs_sum[50] = {0};
    uint64_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!dense_valid(CLPRIM_INT32, keys[i], num_keys)) {
        ++bad;
        continue;
      }
      const size_t k = (size_t)keys[i];
      ++want_count[k];
      if (is_float(t))
        exact[k] += num(t, x, i), abs_sum[k] += fabs(num(t, x, i));
      else
        want_isum[k] += (uint32_t)load(x, es, i);
    }
    const unsigned char *gs = dbuf_fetch(r, sums, num_keys, "sums");
    const unsigned char *gc = dbuf_fetch(r, counts, num_keys, "counts");
    for (size_t k = 0; k < num_keys; ++k) {
      check_u64(r, "a key's count", load(gc, 4, k), want_count[k]);
      if (is_float(t))
        check_close(r, "sums", k, num(t, gs, k), exact[k], abs_sum[k], want_count[k] + 2.0);
      else
        check_u64(r, "a key's sum", load(gs, 4, k), want_isum[k]);
    }
    check_u64(r, "invalid", invalid, bad);
    check_u64(r, "invalid_out", load(dbuf_fetch(r, inv, 1, "invalid_out"), 8, 0), bad);
  } else {
    host_untouched(r, &invalid, sizeof invalid, "invalid");
  }
  run_end(r);
  free(keys);
  free(x);
}

static void fam_reduce_by_key(struct run *r) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t);
  /* Runs of equal keys, of random lengths. */
  int32_t *keys = malloc((n + 1) * 4);
  assert_non_null(keys);
  for (size_t i = 0; i < n; ++i)
    keys[i] = i > 0 && test_rand() % 10 < 7 ? keys[i - 1] : (int32_t)(test_rand() % 20);
  void *x = random_data(t, n);
  static const int32_t key_pad = 0x3FFFFFFF; /* a key of its own: read, it adds a segment */
  struct dbuf *kin = dbuf_in(r, 4, n, keys, &key_pad), *vin = dbuf_in(r, es, n, x, pad_of(t)),
              *uniq = dbuf_out(r, 4, n), *sums = dbuf_out(r, es, n), *cnt = dbuf_out(r, 8, 1);
  uint64_t count;
  memset(&count, SENTINEL, sizeof count);
  /* float and double: every other run with CLPRIM_EXACT (bits against the
   * exact reference) */
  const int exact_flag = is_float(t) && test_rand() % 2;
  if (call_done(r,
                clprim_reduce_by_key(r->ctx, n, CLPRIM_INT32, kin->range, t, vin->range,
                                     exact_flag ? CLPRIM_EXACT : 0, uniq->range, sums->range,
                                     &count, cnt->range),
                CLPRIM_SUCCESS, "clprim_reduce_by_key")) {
    size_t segments = 0;
    for (size_t i = 0; i < n; ++i) segments += i == 0 || keys[i] != keys[i - 1];
    check_u64(r, "count", count, segments);
    check_u64(r, "count_out", load(dbuf_fetch(r, cnt, 1, "count_out"), 8, 0), segments);
    /* Only the first count elements are written. */
    const unsigned char *gk = dbuf_fetch(r, uniq, segments, "unique_keys");
    const unsigned char *gs = dbuf_fetch(r, sums, segments, "sums");
    size_t s = 0;
    for (size_t i = 0; i < n; ++s) {
      size_t j = i;
      double exact = 0, abs_sum = 0;
      uint32_t isum = 0;
      for (; j < n && keys[j] == keys[i]; ++j) {
        if (is_float(t))
          exact += num(t, x, j), abs_sum += fabs(num(t, x, j));
        else
          isum += (uint32_t)load(x, es, j);
      }
      check_u64(r, "a segment's key", load(gk, 4, s), (uint32_t)keys[i]);
      if (exact_flag)
        check_u64(r, "a segment's exact sum", load(gs, es, s),
                  test_exact_reference(t, (const unsigned char *)x + i * es, j - i));
      else if (is_float(t))
        check_close(r, "sums", s, num(t, gs, s), exact, abs_sum, (double)(j - i) + 2.0);
      else
        check_u64(r, "a segment's sum", load(gs, 4, s), isum);
      i = j;
    }
  } else {
    host_untouched(r, &count, sizeof count, "count");
  }
  run_end(r);
  free(keys);
  free(x);
}

/* Selection by rank: the keys of ranks[] (count of them) among x. */
static void check_ranks(struct run *r, const void *x, const uint64_t *ranks, size_t count,
                        const clprim_value *values, const unsigned char *device) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t);
  struct test_keyed *k = keyed_of(t, x, n);
  qsort(k, n, sizeof *k, test_by_key_asc);
  for (size_t j = 0; j < count; ++j) {
    const uint64_t want = k[ranks[j]].key;
    /* The order key of the returned value (a zero is +0.0, as in x), and
     * the device's copy of it. */
    check_u64(r, "the order key of a value", test_order_key(t, &values[j], 0), want);
    check_u64(r, "result (bits)", load(device, es, j), value_bits(r, &values[j], "value"));
  }
  free(k);
}

static void fam_nth_element(struct run *r) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t);
  void *x = random_data(t, n);
  const uint64_t k = n ? test_rand() % n : 0;
  struct dbuf *in = dbuf_in(r, es, n, x, pad_of(t)), *res = dbuf_out(r, es, 1);
  clprim_value v;
  memset(&v, SENTINEL, sizeof v);
  /* n = 0 has no answer: an error. */
  if (call_done(r, clprim_nth_element(r->ctx, n, t, in->range, k, 0, &v, res->range),
                n ? CLPRIM_SUCCESS : CLPRIM_ERROR_INVALID_ARGUMENT, "clprim_nth_element"))
    check_ranks(r, x, &k, 1, &v, dbuf_fetch(r, res, 1, "result"));
  else
    host_untouched(r, &v, sizeof v, "value");
  run_end(r);
  free(x);
}

static void fam_quantiles(struct run *r) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t), count = 5;
  void *x = random_data(t, n);
  uint64_t ranks[5] = {0, 0, 0, 0, 0};
  if (n) ranks[0] = n - 1, ranks[1] = 0, ranks[2] = n / 2, ranks[3] = test_rand() % n,
    ranks[4] = n / 2;
  struct dbuf *in = dbuf_in(r, es, n, x, pad_of(t)), *res = dbuf_out(r, es, count);
  clprim_value v[5];
  memset(v, SENTINEL, sizeof v);
  if (call_done(r, clprim_quantiles(r->ctx, n, t, in->range, ranks, count, 0, v, res->range),
                n ? CLPRIM_SUCCESS : CLPRIM_ERROR_INVALID_ARGUMENT, "clprim_quantiles"))
    check_ranks(r, x, ranks, count, v, dbuf_fetch(r, res, count, "result"));
  else
    host_untouched(r, v, sizeof v, "values");
  run_end(r);
  free(x);
}

static void fam_topk(struct run *r) {
  const clprim_type t = r->type;
  const size_t n = r->n, es = clprim_type_size(t), k = n < 17 ? n : 17;
  /* int32: the largest, sorted; float: the smallest, sorted; double: the
   * largest in input order, uint64 indices. */
  const unsigned flags = t == CLPRIM_INT32   ? CLPRIM_TOPK_SORTED
                         : t == CLPRIM_FLOAT ? CLPRIM_TOPK_SORTED | CLPRIM_TOPK_SMALLEST
                                             : CLPRIM_INDICES_64;
  const size_t is = flags & CLPRIM_INDICES_64 ? 8 : 4;
  void *x = random_data(t, n);
  struct dbuf *in = dbuf_in(r, es, n, x, pad_of(t)), *vals = dbuf_out(r, es, k),
              *idxs = dbuf_out(r, is, k);
  if (call_done(r, clprim_topk(r->ctx, n, t, in->range, k, flags, vals->range, idxs->range),
                CLPRIM_SUCCESS, "clprim_topk")) {
    struct test_keyed *best = keyed_of(t, x, n);
    qsort(best, n, sizeof *best, flags & CLPRIM_TOPK_SMALLEST ? test_by_key_asc : test_by_key_desc);
    if (!(flags & CLPRIM_TOPK_SORTED)) qsort(best, k, sizeof *best, test_by_index);
    const unsigned char *gv = dbuf_fetch(r, vals, k, "values");
    const unsigned char *gi = dbuf_fetch(r, idxs, k, "indices");
    for (size_t j = 0; j < k; ++j) {
      check_u64(r, "an index", load(gi, is, j), best[j].index);
      if (memcmp(gv + j * es, (const unsigned char *)x + best[j].index * es, es) != 0)
        fail_msg("%s: values[%zu] is not element %zu", r->what, j, (size_t)best[j].index);
    }
    free(best);
  }
  run_end(r);
  free(x);
}

/* --------------------------------------------------------------- driver */

typedef void (*family_fn)(struct run *);

static const clprim_type run_types[] = {CLPRIM_INT32, CLPRIM_FLOAT, CLPRIM_DOUBLE};
/* (inputs, outputs): both at 0, both aligned, both unaligned, mixed. */
static const int combos[][2] = {{AT_ZERO, AT_ZERO},
                                {AT_ALIGNED, AT_ALIGNED},
                                {AT_UNALIGNED, AT_UNALIGNED},
                                {AT_ALIGNED, AT_UNALIGNED},
                                {AT_UNALIGNED, AT_ALIGNED}};

static void run_init(struct run *r, clprim_context *ctx, unsigned p, clprim_type type, size_t n,
                     const int *combo, const char *name, const char *mode) {
  memset(r, 0, sizeof *r);
  r->ctx = ctx, r->type = type, r->n = n, r->align = base_align(ctx);
  r->in_kind = combo[0], r->out_kind = combo[1];
  r->short_arg = r->huge_arg = -1;
  snprintf(r->what, sizeof r->what, "%s, %s, path %s, n=%zu, inputs at %s, outputs at %s%s", name,
           clprim_type_name(type), path_label(ctx, p), n, kind_name[combo[0]],
           kind_name[combo[1]], mode);
}

/* Every path context, type, pair of offsets, n = big_n() and n = 0. */
static void each_run(const char *name, family_fn f) {
  const size_t combo_count = test_small() ? 3 : sizeof combos / sizeof combos[0];
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    unsigned runs = 0;
    for (size_t t = 0; t < sizeof run_types / sizeof run_types[0]; ++t) {
      if (!test_has_type(ctx, run_types[t])) continue;
      for (size_t c = 0; c < combo_count; ++c)
        for (int zero = 0; zero < 2; ++zero) {
          struct run r;
          run_init(&r, ctx, p, run_types[t], zero ? 0 : big_n(), combos[c], name, "");
          f(&r);
          ++runs;
        }
    }
    printf("%s on %s: %u runs passed (base address alignment %zu bytes)\n", name,
           path_label(ctx, p), runs, base_align(ctx));
  }
}

#define FAMILY_TEST(fam)                                                                           \
  static void test_##fam(void **state) { (void)state, each_run(#fam, fam_##fam); }
FAMILY_TEST(scan)
FAMILY_TEST(argmax)
FAMILY_TEST(reduce_sum)
FAMILY_TEST(select)
FAMILY_TEST(partition)
FAMILY_TEST(select_flagged)
FAMILY_TEST(histogram_even)
FAMILY_TEST(histogram_keys)
FAMILY_TEST(reduce_by_key_dense)
FAMILY_TEST(reduce_by_key)
FAMILY_TEST(nth_element)
FAMILY_TEST(quantiles)
FAMILY_TEST(topk)

static const struct {
  const char *name;
  family_fn f;
} families[] = {
    {"scan", fam_scan},
    {"argmax", fam_argmax},
    {"reduce_sum", fam_reduce_sum},
    {"select", fam_select},
    {"partition", fam_partition},
    {"select_flagged", fam_select_flagged},
    {"histogram_even", fam_histogram_even},
    {"histogram_keys", fam_histogram_keys},
    {"reduce_by_key_dense", fam_reduce_by_key_dense},
    {"reduce_by_key", fam_reduce_by_key},
    {"nth_element", fam_nth_element},
    {"quantiles", fam_quantiles},
    {"topk", fam_topk},
};

/* Every argument of every family, in turn, one element past its buffer's
 * end (CLPRIM_ERROR_BUFFER_TOO_SMALL) and at offset SIZE_MAX / 2 (an
 * error, not a crash): nothing written, outputs or host results. */
static void test_errors(void **state) {
  (void)state;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    unsigned calls = 0;
    for (size_t t = 0; t < sizeof run_types / sizeof run_types[0]; ++t) {
      if (!test_has_type(ctx, run_types[t])) continue;
      for (size_t c = 0; c < 3; ++c)
        for (size_t f = 0; f < sizeof families / sizeof families[0]; ++f)
          for (int huge = 0; huge < 2; ++huge) {
            unsigned arg = 0, args;
            do {
              struct run r;
              char mode[64];
              snprintf(mode, sizeof mode, ", argument %u %s", arg,
                       huge ? "at offset SIZE_MAX / 2" : "one element past its buffer's end");
              run_init(&r, ctx, p, run_types[t], big_n(), combos[c], families[f].name, mode);
              if (huge)
                r.huge_arg = (int)arg;
              else
                r.short_arg = (int)arg;
              families[f].f(&r);
              args = r.nbufs;
              ++calls;
            } while (++arg < args);
          }
    }
    printf("errors on %s: %u calls failed as they should\n", path_label(ctx, p), calls);
  }
}

/* ------------------------------------------------ sub-buffers, overlaps */

/* A plain int32 run on ctx (for check_scan's messages and tile). */
static void int_run(struct run *r, clprim_context *ctx, unsigned p, size_t n, const char *what) {
  memset(r, 0, sizeof *r);
  r->ctx = ctx, r->type = CLPRIM_INT32, r->n = n, r->align = base_align(ctx);
  r->short_arg = r->huge_arg = -1;
  snprintf(r->what, sizeof r->what, "%s, path %s, n=%zu", what, path_label(ctx, p), n);
}

static cl_mem sub_buffer(cl_mem parent, size_t origin, size_t size) {
  cl_int err;
  cl_buffer_region region = {origin, size};
  cl_mem s = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region,
                               &err);
  if (err != CL_SUCCESS)
    fail_msg("clCreateSubBuffer(%zu, %zu): %s", origin, size, clprim_status_name(err));
  return s;
}

/* buf (count int32) must hold want. */
static void check_buffer(struct run *r, cl_mem buf, const int32_t *want, size_t count,
                         const char *name) {
  int32_t *got = malloc(count * 4);
  assert_non_null(got);
  test_read(r->ctx, buf, count * 4, got);
  for (size_t i = 0; i < count; ++i)
    if (got[i] != want[i])
      fail_msg("%s: %s: element %zu is %d, expected %d", r->what, name, i, got[i], want[i]);
  free(got);
}

/* The exclusive (inclusive) prefix sums of x[0, n) into y. */
static void prefix(const int32_t *x, int32_t *y, size_t n, int inclusive) {
  uint32_t run = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t v = (uint32_t)x[i];
    if (inclusive) run += v;
    y[i] = (int32_t)run;
    if (!inclusive) run += v;
  }
}

/* A scan whose input and output are ranges of one parent P (through P or
 * sub-buffers of it): in (mem, offset) is P's elements [in_at, + n), out
 * starts at P's element out_at; ok: it succeeds, else
 * CLPRIM_ERROR_INVALID_ARGUMENT. P is checked whole. */
struct pair_case {
  const char *what;
  cl_mem in_mem;
  size_t in_off, in_at;
  cl_mem out_mem;
  size_t out_off, out_at, n;
  int ok;
};

static void same_parent(struct run *r, clprim_context *ctx, unsigned p, cl_mem P,
                        const int32_t *x, int32_t *want, size_t total, const struct pair_case *c) {
  int_run(r, ctx, p, c->n, c->what);
  test_write(ctx, P, total * 4, x);
  const int st = clprim_scan_exclusive(ctx, c->n, CLPRIM_INT32, clprim_buf_at(c->in_mem, c->in_off),
                                       0, clprim_buf_at(c->out_mem, c->out_off));
  memcpy(want, x, total * 4);
  if (c->ok) {
    if (st != CLPRIM_SUCCESS) fail_msg("%s: returned %s", r->what, clprim_status_name(st));
    prefix(x + c->in_at, want + c->out_at, c->n, 0);
  } else if (st != CLPRIM_ERROR_INVALID_ARGUMENT) {
    fail_msg("%s: returned %s, expected CLPRIM_ERROR_INVALID_ARGUMENT", r->what,
             clprim_status_name(st));
  }
  check_buffer(r, P, want, total, "the parent buffer");
}

/* The input as a sub-buffer of the caller's own (aligned origin) plus an
 * element offset (unaligned, aligned); outputs in the same parent buffer:
 * adjacent to the input (success) or overlapping it by one element
 * (CLPRIM_ERROR_INVALID_ARGUMENT, nothing written), directly or through a
 * second sub-buffer. */
static void test_sub_buffers(void **state) {
  (void)state;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    const size_t n = big_n(), align = base_align(ctx);
    if (align % 4) {
      printf("sub-buffers on %s: skipped (alignment %zu bytes)\n", path_label(ctx, p), align);
      continue;
    }
    const size_t A = align / 4;                         /* elements */
    const size_t origin = (n + 8 + A - 1) / A * A;      /* of S in P, elements */
    const size_t total = origin + 2 * n + 3 * A + 64;   /* P's elements */
    int32_t *x = malloc(total * 4), *want = malloc(total * 4);
    assert_non_null(x);
    assert_non_null(want);
    test_random(CLPRIM_INT32, x, total, 1);
    cl_mem P = test_buffer(ctx, total * 4, x);
    cl_mem S = sub_buffer(P, origin * 4, (total - origin) * 4);
    struct run r;

    /* The input from S at offsets 3 (unaligned) and A (aligned), to a
     * buffer of its own at offset 5; then argmax of the same ranges. */
    const size_t in_offs[2] = {3, A};
    for (int a = 0; a < 2; ++a) {
      int_run(&r, ctx, p, n, a ? "scan of a sub-buffer at an aligned offset"
                                 : "scan of a sub-buffer at an unaligned offset");
      const int32_t *src = x + origin + in_offs[a];
      int32_t *o = malloc((n + 5 + PAD) * 4);
      assert_non_null(o);
      memset(o, SENTINEL, (n + 5 + PAD) * 4);
      cl_mem out = test_buffer(ctx, (n + 5 + PAD) * 4, o);
      TEST_OK(clprim_scan_exclusive(ctx, n, CLPRIM_INT32, clprim_buf_at(S, in_offs[a]), 0,
                                    clprim_buf_at(out, 5)));
      prefix(src, o + 5, n, 0);
      check_buffer(&r, out, o, n + 5 + PAD, "out");
      check_buffer(&r, P, x, total, "the parent (input)");
      clReleaseMemObject(out);
      free(o);

      int_run(&r, ctx, p, n, a ? "argmax of a sub-buffer at an aligned offset"
                                 : "argmax of a sub-buffer at an unaligned offset");
      clprim_value v;
      uint64_t index;
      TEST_OK(clprim_argmax(ctx, n, CLPRIM_INT32, clprim_buf_at(S, in_offs[a]), 0, &v, &index,
                            clprim_buf(NULL)));
      size_t best = 0;
      for (size_t i = 1; i < n; ++i)
        if (src[i] > src[best]) best = i;
      check_u64(&r, "index", index, best);
      check_u64(&r, "value", (uint64_t)(int64_t)v.i32, (uint64_t)(int64_t)src[best]);
    }

    /* Outputs in P around the input S @ 3 = P [origin + 3, origin + 3 + n)
     * (unaligned: temporary copies). */
    const size_t b = origin + 3, e = b + n;
    const struct pair_case cases[] = {
        {"output right after the input", S, 3, b, P, e, e, n, 1},
        {"output right before the input", S, 3, b, P, b - n, b - n, n, 1},
        {"output overlapping the input's last element", S, 3, b, P, e - 1, e - 1, n, 0},
        {"output overlapping the input's first element", S, 3, b, P, b - n + 1, b - n + 1, n,
         0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k)
      same_parent(&r, ctx, p, P, x, want, total, &cases[k]);

    /* Aligned ranges (sub-buffers of P): the input S @ A = P [origin + A,
     * + n1) with n1 = 1 mod A, so that an aligned output can overlap its
     * last element alone; and P itself (offset 0) with an aligned output
     * in P, and with S (a sub-buffer at offset 0) as the output. */
    const size_t n1 = n / A * A + 1, bA = origin + A, eA = bA + n1;
    const size_t after = (eA + A - 1) / A * A, after0 = (n + A - 1) / A * A;
    const struct pair_case aligned[] = {
        {"aligned input and output, apart", S, A, bA, P, after, after, n1, 1},
        {"aligned output overlapping the aligned input's last element", S, A, bA, P, eA - 1,
         eA - 1, n1, 0},
        {"input P at 0, aligned output in P after it", P, 0, 0, P, after0, after0, n, 1},
        {"input P at 0, output the sub-buffer S (after it)", P, 0, 0, S, 0, origin, n, 1},
        {"input P at 0, output overlapping its last element", P, 0, 0, P, n - 1, n - 1, n, 0},
    };
    for (size_t k = 0; k < sizeof aligned / sizeof aligned[0]; ++k)
      same_parent(&r, ctx, p, P, x, want, total, &aligned[k]);

    /* Through a second sub-buffer S2 (aligned origin inside the input): its
     * range overlapping the input's last element, then adjacent. */
    const size_t origin2 = (e - 1) / A * A;
    cl_mem S2 = sub_buffer(P, origin2 * 4, (total - origin2) * 4);
    const struct pair_case through[] = {
        {"output through a second sub-buffer, overlapping", S, 3, b, S2, e - 1 - origin2, e - 1,
         n, 0},
        {"output through a second sub-buffer, adjacent", S, 3, b, S2, e - origin2, e, n, 1},
    };
    for (size_t k = 0; k < sizeof through / sizeof through[0]; ++k)
      same_parent(&r, ctx, p, P, x, want, total, &through[k]);
    clReleaseMemObject(S2);

    /* Select whose values overlap the input by one element: refused,
     * nothing written (the host count neither). */
    {
      int_run(&r, ctx, p, n, "select, values overlapping the input");
      test_write(ctx, P, total * 4, x);
      clprim_predicate pred;
      memset(&pred, 0, sizeof pred);
      pred.op = CLPRIM_PRED_GT;
      uint64_t count;
      memset(&count, SENTINEL, sizeof count);
      TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                  clprim_select(ctx, n, CLPRIM_INT32, clprim_buf_at(S, 3), &pred, 0,
                                clprim_buf_at(P, e - 1), clprim_buf(NULL), &count,
                                clprim_buf(NULL)));
      host_untouched(&r, &count, sizeof count, "count");
      check_buffer(&r, P, x, total, "the parent buffer");
    }
    /* reduce_sum's result (uint64 elements of P) over the input's last
     * elements: refused; right after the input: the sum. */
    for (int adjacent = 0; adjacent < 2; ++adjacent) {
      int_run(&r, ctx, p, n, adjacent ? "reduce_sum, result adjacent to the input"
                                      : "reduce_sum, result overlapping the input");
      test_write(ctx, P, total * 4, x);
      const size_t end_byte = e * 4;
      const size_t q = adjacent ? (end_byte + 7) / 8 : (end_byte - 4) / 8; /* uint64 element */
      const int st = clprim_reduce_sum(ctx, n, CLPRIM_INT32, clprim_buf_at(S, 3), 0, NULL,
                                       clprim_buf_at(P, q));
      memcpy(want, x, total * 4);
      if (adjacent) {
        TEST_OK(st);
        uint32_t sum = 0;
        for (size_t i = 0; i < n; ++i) sum += (uint32_t)x[b + i];
        const uint64_t word = sum;
        memcpy((unsigned char *)want + q * 8, &word, 8);
      } else {
        TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, st);
      }
      check_buffer(&r, P, want, total, "the parent buffer");
    }

    /* In place through two handles: P @ origin + 3 and S @ 3 are one range. */
    {
      int_run(&r, ctx, p, n, "scan in place through the parent and a sub-buffer");
      test_write(ctx, P, total * 4, x);
      TEST_OK(
          clprim_scan_exclusive(ctx, n, CLPRIM_INT32, clprim_buf_at(P, b), 0, clprim_buf_at(S, 3)));
      memcpy(want, x, total * 4);
      prefix(x + b, want + b, n, 0);
      check_buffer(&r, P, want, total, "the parent buffer");
    }
    clReleaseMemObject(S);
    clReleaseMemObject(P);
    free(x);
    free(want);
    printf("sub-buffers on %s: passed\n", path_label(ctx, p));
  }
}

/* Scan in place (in and out the very same range) at unaligned and aligned
 * offsets; in and out overlapping but not the same: refused, nothing
 * written. */
static void test_in_place(void **state) {
  (void)state;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    const size_t n = big_n(), align = base_align(ctx);
    const size_t A = align % 4 == 0 ? align / 4 : align;
    const size_t total = 2 * n + 2 * A + 16;
    int32_t *x = malloc(total * 4), *want = malloc(total * 4);
    assert_non_null(x);
    assert_non_null(want);
    test_random(CLPRIM_INT32, x, total, 1);
    cl_mem B = test_buffer(ctx, total * 4, x);
    struct run r;
    const struct {
      size_t in, out;
      int inclusive, ok;
      const char *what;
    } cases[] = {
        {3, 3, 0, 1, "exclusive scan in place at an unaligned offset"},
        {3, 3, 1, 1, "inclusive scan in place at an unaligned offset"},
        {A, A, 0, 1, "exclusive scan in place at an aligned offset"},
        {0, 0, 1, 1, "inclusive scan in place at offset 0"},
        {3, 4, 0, 0, "scan, out one element after in"},
        {3, 2, 1, 0, "scan, out one element before in"},
        {A, A + 1, 0, 0, "scan, in aligned, out one element after"},
        {3, 3 + n - 1, 0, 0, "scan, out starting at in's last element"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
      int_run(&r, ctx, p, n, cases[k].what);
      test_write(ctx, B, total * 4, x);
      const clprim_buffer in = clprim_buf_at(B, cases[k].in), out = clprim_buf_at(B, cases[k].out);
      const int st = cases[k].inclusive ? clprim_scan_inclusive(ctx, n, CLPRIM_INT32, in, 0, out)
                                        : clprim_scan_exclusive(ctx, n, CLPRIM_INT32, in, 0, out);
      memcpy(want, x, total * 4);
      if (cases[k].ok) {
        TEST_OK(st);
        prefix(x + cases[k].in, want + cases[k].out, n, cases[k].inclusive);
      } else {
        TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, st);
      }
      check_buffer(&r, B, want, total, "the buffer");
    }
    /* An empty range overlaps nothing: a sum of nothing whose (empty) input
     * lies inside the result's word is 0, written there. */
    int_run(&r, ctx, p, 0, "sum of an empty range inside its result's word");
    test_write(ctx, B, total * 4, x);
    TEST_OK(clprim_reduce_sum(ctx, 0, CLPRIM_INT32, clprim_buf_at(B, 1), 0, NULL, clprim_buf_at(B, 0)));
    memcpy(want, x, total * 4);
    want[0] = want[1] = 0;
    check_buffer(&r, B, want, total, "the buffer");
    clReleaseMemObject(B);
    free(x);
    free(want);
    printf("scan in place on %s: passed\n", path_label(ctx, p));
  }
}

/* ------------------------------------------------------------ threads */

/* Whether ctx runs on Oclgrind: its uninitialized-value checker
 * (--uninitialized, which tests/oclgrind-check.sh turns on) crashes in
 * ShadowContext / MemoryPool::alloc when commands execute on a second host
 * thread (Oclgrind runs commands in the thread that waits for them), so
 * there only calls that enqueue without waiting are made from threads. */
static int on_oclgrind(clprim_context *ctx) {
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  return strstr(info.platform_name, "Oclgrind") != NULL;
}

/* A scan (or a reduce_sum to the host) on ctx, made from a thread. */
struct job {
  clprim_context *ctx;
  clprim_buffer in, out;
  size_t n;
  int sum;            /* reduce_sum to *result instead of a scan */
  clprim_value result; /* SENTINEL bytes before */
  int status;
};

static void *job_main(void *arg) {
  struct job *j = arg;
  j->status = j->sum ? clprim_reduce_sum(j->ctx, j->n, CLPRIM_INT32, j->in, 0, &j->result, j->out)
                     : clprim_scan_exclusive(j->ctx, j->n, CLPRIM_INT32, j->in, 0, j->out);
  return NULL;
}

static void run_in_thread(struct job *j) {
  pthread_t th;
  if (pthread_create(&th, NULL, job_main, j) != 0) fail_msg("pthread_create failed");
  pthread_join(th, NULL);
}

/* While this thread holds the context (as a call in progress does), a call
 * from another thread gets CLPRIM_ERROR_CONTEXT_BUSY and writes nothing;
 * once it is given back the same call succeeds. */
static void test_busy(void **state) {
  (void)state;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    const size_t n = test_small() ? 61 : 1000, total = n + 3 + PAD, out_total = n + 5 + PAD;
    int32_t *x = malloc(total * 4), *o = malloc(out_total * 4), *want = malloc(out_total * 4);
    assert_non_null(x);
    assert_non_null(o);
    assert_non_null(want);
    test_random(CLPRIM_INT32, x, total, 0);
    memset(o, SENTINEL, out_total * 4);
    cl_mem in = test_buffer(ctx, total * 4, x), out = test_buffer(ctx, out_total * 4, o);
    struct run r;
    int_run(&r, ctx, p, n, "a call from a second thread while the context is held");

    /* The scan only enqueues; reduce_sum to the host waits (not on Oclgrind). */
    const int variants = on_oclgrind(ctx) ? 1 : 2;
    if (variants == 1)
      printf("busy context on %s: reduce_sum from a thread skipped (Oclgrind, see on_oclgrind)\n",
             path_label(ctx, p));
    for (int sum = 0; sum < variants; ++sum) {
      struct job j;
      memset(&j, 0, sizeof j);
      j.ctx = ctx, j.in = clprim_buf_at(in, 3), j.n = n, j.sum = sum;
      j.out = sum ? clprim_buf(NULL) : clprim_buf_at(out, 5);
      memset(&j.result, SENTINEL, sizeof j.result);
      test_write(ctx, out, out_total * 4, o);
      TEST_OK(clprim__hold(ctx, "holder"));
      clprim__invalid(ctx, "the holder's text");
      run_in_thread(&j);
      /* The refused call leaves the text of the call that holds ctx. */
      if (strcmp(clprim_context_last_error(ctx), "holder: the holder's text") != 0)
        fail_msg("%s: a call refused as busy changed the text to \"%s\"", r.what,
                 clprim_context_last_error(ctx));
      clprim__unhold(ctx, CLPRIM_SUCCESS);
      if (j.status != CLPRIM_ERROR_CONTEXT_BUSY)
        fail_msg("%s: %s returned %s, expected CLPRIM_ERROR_CONTEXT_BUSY", r.what,
                 sum ? "clprim_reduce_sum" : "clprim_scan_exclusive",
                 clprim_status_name(j.status));
      check_buffer(&r, out, o, out_total, "out (busy)");
      host_untouched(&r, &j.result, sizeof j.result, "sum (busy)");

      /* Given back: the same call from a thread succeeds. */
      run_in_thread(&j);
      TEST_OK(j.status);
      if (sum) {
        uint32_t s = 0;
        for (size_t i = 0; i < n; ++i) s += (uint32_t)x[3 + i];
        check_u64(&r, "sum", j.result.u64, s);
      } else {
        memcpy(want, o, out_total * 4);
        prefix(x + 3, want + 5, n, 0);
        check_buffer(&r, out, want, out_total, "out");
      }
    }
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    free(x);
    free(o);
    free(want);
    printf("busy context on %s: passed\n", path_label(ctx, p));
  }
}

/* Two threads, each with its own buffers, making small scans on one shared
 * context: every call succeeds (and is right) or gets
 * CLPRIM_ERROR_CONTEXT_BUSY (and writes nothing). */
struct stress {
  clprim_context *ctx;
  cl_mem in, out;
  size_t in_off, out_off, n, out_total, iters;
  const int32_t *want;   /* out_total elements, after a successful call */
  const int32_t *before; /* out_total elements, before each call */
  unsigned ok, busy;
  char error[256];
};

static void *stress_main(void *arg) {
  struct stress *s = arg;
  const size_t bytes = s->out_total * 4;
  int32_t *got = malloc(bytes);
  if (!got) {
    snprintf(s->error, sizeof s->error, "out of memory");
    return NULL;
  }
  cl_command_queue q = clprim_context_queue(s->ctx);
  for (size_t it = 0; it < s->iters && !s->error[0]; ++it) {
    cl_int err = clEnqueueWriteBuffer(q, s->out, CL_TRUE, 0, bytes, s->before, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
      snprintf(s->error, sizeof s->error, "clEnqueueWriteBuffer: %s", clprim_status_name(err));
      break;
    }
    const int st =
        clprim_scan_exclusive(s->ctx, s->n, CLPRIM_INT32, clprim_buf_at(s->in, s->in_off), 0,
                              clprim_buf_at(s->out, s->out_off));
    if (st != CLPRIM_SUCCESS && st != CLPRIM_ERROR_CONTEXT_BUSY) {
      snprintf(s->error, sizeof s->error, "call %zu returned %s", it, clprim_status_name(st));
      break;
    }
    err = clEnqueueReadBuffer(q, s->out, CL_TRUE, 0, bytes, got, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
      snprintf(s->error, sizeof s->error, "clEnqueueReadBuffer: %s", clprim_status_name(err));
      break;
    }
    const int32_t *want = st == CLPRIM_SUCCESS ? s->want : s->before;
    for (size_t i = 0; i < s->out_total; ++i)
      if (got[i] != want[i]) {
        snprintf(s->error, sizeof s->error, "call %zu (%s): element %zu is %d, expected %d", it,
                 clprim_status_name(st), i, got[i], want[i]);
        break;
      }
    if (st == CLPRIM_SUCCESS)
      ++s->ok;
    else
      ++s->busy;
  }
  free(got);
  return NULL;
}

/* The stress on ctx; with `waiting` (a context made with
 * clprim_options.wait_when_busy) every call must succeed. */
static void stress_on(clprim_context *ctx, const char *label, int waiting) {
  {
    const size_t n = test_small() ? 61 : 1000, iters = test_small() ? 20 : 200;
    const size_t align = base_align(ctx), A = align % 4 == 0 ? align / 4 : align;
    struct stress s[2];
    int32_t *buffers[2][3];
    pthread_t th[2];
    for (int t = 0; t < 2; ++t) {
      memset(&s[t], 0, sizeof s[t]);
      /* Thread 0 at unaligned offsets (temporary copies), thread 1 at
       * aligned ones (sub-buffers). */
      s[t].ctx = ctx, s[t].n = n, s[t].iters = iters;
      s[t].in_off = t ? A : 3, s[t].out_off = t ? 2 * A : 5;
      const size_t in_total = s[t].in_off + n + PAD;
      s[t].out_total = s[t].out_off + n + PAD;
      int32_t *x = malloc(in_total * 4), *before = malloc(s[t].out_total * 4),
              *want = malloc(s[t].out_total * 4);
      assert_non_null(x);
      assert_non_null(before);
      assert_non_null(want);
      test_random(CLPRIM_INT32, x, in_total, 0);
      memset(before, SENTINEL, s[t].out_total * 4);
      memcpy(want, before, s[t].out_total * 4);
      prefix(x + s[t].in_off, want + s[t].out_off, n, 0);
      s[t].in = test_buffer(ctx, in_total * 4, x);
      s[t].out = test_buffer(ctx, s[t].out_total * 4, before);
      s[t].want = want, s[t].before = before;
      buffers[t][0] = x, buffers[t][1] = before, buffers[t][2] = want;
    }
    for (int t = 0; t < 2; ++t)
      if (pthread_create(&th[t], NULL, stress_main, &s[t]) != 0) fail_msg("pthread_create failed");
    for (int t = 0; t < 2; ++t) pthread_join(th[t], NULL);
    for (int t = 0; t < 2; ++t)
      if (s[t].error[0]) fail_msg("stress on %s, thread %d: %s", label, t, s[t].error);
    printf("stress on %s%s: thread 0 %u succeeded, %u busy; thread 1 %u succeeded, %u busy\n",
           label, waiting ? " (waiting context)" : "", s[0].ok, s[0].busy, s[1].ok, s[1].busy);
    if (s[0].ok + s[1].ok == 0) fail_msg("stress on %s: no call succeeded", label);
    if (waiting && (s[0].busy || s[1].busy || s[0].ok != iters || s[1].ok != iters))
      fail_msg("stress on %s, waiting context: %u and %u of %zu calls succeeded", label, s[0].ok,
               s[1].ok, iters);
    for (int t = 0; t < 2; ++t) {
      clReleaseMemObject(s[t].in);
      clReleaseMemObject(s[t].out);
      for (int k = 0; k < 3; ++k) free(buffers[t][k]);
    }
  }
}

static void test_busy_stress(void **state) {
  (void)state;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = contexts.ctx[p];
    if (!ctx) continue;
    if (on_oclgrind(ctx)) {
      printf("stress on %s: skipped (Oclgrind, see on_oclgrind)\n", path_label(ctx, p));
      continue;
    }
    stress_on(ctx, path_label(ctx, p), 0);
  }
}

/* clprim_options.wait_when_busy: the same two threads never get
 * CLPRIM_ERROR_CONTEXT_BUSY; every call of each waits its turn. */
static void test_waiting_context(void **state) {
  (void)state;
  clprim_options o;
  clprim_options_init(&o);
  o.wait_when_busy = 2;
  clprim_context *ctx = NULL;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create(&ctx, &o));
  o.wait_when_busy = 1;
  TEST_OK(clprim_context_create(&ctx, &o));
  if (on_oclgrind(ctx))
    printf("waiting context: skipped (Oclgrind, see on_oclgrind)\n");
  else
    stress_on(ctx, "the default path", 1);
  clprim_context_free(ctx);
}

int main(void) {
  test_init("test_offsets");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scan),
      cmocka_unit_test(test_argmax),
      cmocka_unit_test(test_reduce_sum),
      cmocka_unit_test(test_select),
      cmocka_unit_test(test_partition),
      cmocka_unit_test(test_select_flagged),
      cmocka_unit_test(test_histogram_even),
      cmocka_unit_test(test_histogram_keys),
      cmocka_unit_test(test_reduce_by_key_dense),
      cmocka_unit_test(test_reduce_by_key),
      cmocka_unit_test(test_nth_element),
      cmocka_unit_test(test_quantiles),
      cmocka_unit_test(test_topk),
      cmocka_unit_test(test_sub_buffers),
      cmocka_unit_test(test_in_place),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_busy),
      cmocka_unit_test(test_busy_stress),
      cmocka_unit_test(test_waiting_context),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
