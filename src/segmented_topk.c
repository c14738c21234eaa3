/* segmented_topk.c: top-k and selection by rank per segment
 * (clprim_segmented_topk, clprim_batched_topk, clprim_segmented_nth_element
 * and clprim_batched_nth_element in include/clprim/clprim.h), kernels in
 * cl/segmented_topk.cl.
 *
 * A call: argument checks; with offsets, segments_check finds bad segments
 * (before anything is written) and lists the long ones with their bounds;
 * one work-group per segment that is not long (seg_topk, seg_nth: radix
 * selection in the work-group); then each long segment, one after another,
 * through the device-wide top-k (src/topk.c) or selection
 * (src/nth_element.c) on a copy of it. With CLPRIM_TOPK_SORTED the
 * work-group sorts its row in local memory (up to SEG_SORT_CAP results;
 * longer rows, for k above that, are sorted afterwards by the segmented
 * sort of src/sort.c, best first and stable, so ties stay in index order).
 *
 * Long: longer than both LONG_MIN elements and n / (2 compute units). There
 * are then fewer than 2 per compute unit, so running each over the whole
 * device beats a work-group each, which would leave most of it idle. */
#include "engine/sample_select.h"
#include "sort.h"
#include "topk.h"

#include <stdlib.h>
#include <string.h>

#define SLOT_CHECK "segmented_topk: check"        /* internal/segments.h's info */
#define SLOT_LONG "segmented_topk: long ids"      /* the long segments' ids */
#define SLOT_BOUNDS "segmented_topk: long bounds" /* and their begin and end offsets */
#define SLOT_SEGMENT "segmented_topk: long segment"  /* a copy of one long segment */
#define SLOT_ROW_VALUES "segmented_topk: long row values"
#define SLOT_ROW_INDICES "segmented_topk: long row indices"
#define SLOT_ROW_BEGINS "segmented_topk: row begins" /* the rows the sort takes */
#define SLOT_ROW_ENDS "segmented_topk: row ends"
#define SLOT_SORT_KEYS "segmented_topk: sort keys" /* the values, when the caller wants none */

#define LONG_MIN ((size_t)1 << 16)

/* The knob: segments longer than this run through the device-wide calls
 * (-1: the larger of LONG_MIN and n / (2 compute units); tests set 100 so
 * small inputs reach both ways). */
static const struct clprim_knob seg_knobs[] = {{"long", 0, (long long)1 << 40}};
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_segmented_topk = {
    "segmented_topk", seg_knobs, 1, NULL, 0, 0, prebuild};

/* mode bits of seg_topk (cl/segmented_topk.cl) */
#define SEG_SMALLEST 1u
#define SEG_INDEX64 2u
#define SEG_VALUES 4u
#define SEG_INDICES 8u
#define SEG_SORT 16u
#define SEG_SIGNED 32u /* signed integers (built as unsigned: the sign bit flips) */
#define SEG_SORT_CAP 1024 /* rows of at most this many are sorted by the work-group */

/* One call, its buffers resolved. Offsets (begins, ends, of offset_type)
 * or rows (`rows`) of row_length elements. nth: values gets one element per segment; else
 * values and / or indices get k per segment. */
struct seg_call {
  clprim_type type, offset_type;
  int rows;
  size_t n, segments, row_length;
  cl_mem in, begins, ends;
  uint64_t k;
  unsigned flags;
  int nth;
  cl_mem values, indices;
};

/* One long segment: top-k or selection over the whole device, on a copy of
 * it (the device-wide calls read from element 0), into row s. */
static clprim_status run_long(clprim_context *ctx, const struct seg_call *c, size_t s,
                              uint64_t b, uint64_t e) {
  const size_t es = clprim_type_size(c->type), len = (size_t)(e - b);
  if (len == 0) return CLPRIM_SUCCESS;
  cl_mem seg;
  CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_SEGMENT, len * es, &seg));
  CLPRIM_CHECK(clprim__copy(ctx, c->in, seg, (size_t)b * es, 0, len * es));
  if (c->nth) {
    const uint64_t rank = c->k < len ? c->k : len - 1;
    uint64_t key;
    CLPRIM_CHECK(clprim__nth_select_ranks(ctx, c->type, seg, 0, len, &rank, 1, 0, 0, &key, NULL));
    const clprim_value v = clprim__value_of_key(c->type, key);
    return clprim__write(ctx, c->values, s * es, es, &v, 1);
  }
  const size_t m = (size_t)(c->k < len ? c->k : len);
  const size_t is = (c->flags & CLPRIM_INDICES_64) ? 8 : 4;
  cl_mem rv = NULL, ri = NULL;
  if (c->values) CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_ROW_VALUES, m * es, &rv));
  if (c->indices) CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_ROW_INDICES, m * is, &ri));
  CLPRIM_CHECK(clprim__topk_run(ctx, len, c->type, seg, m, c->flags, rv, ri));
  if (rv) CLPRIM_CHECK(clprim__copy(ctx, rv, c->values, 0, s * (size_t)c->k * es, m * es));
  if (ri) CLPRIM_CHECK(clprim__copy(ctx, ri, c->indices, 0, s * (size_t)c->k * is, m * is));
  return CLPRIM_SUCCESS;
}

static clprim_status plan(clprim_context *ctx, const struct seg_call *c) {
  if (c->segments == 0 || (!c->nth && c->k == 0) || (c->rows && c->row_length == 0))
    return CLPRIM_SUCCESS;
  const struct clprim_nth_config nc = clprim__nth_config(ctx);
  char options[3][256];
  /* CPUs: the work-group's sums by one work-item (cl/segmented_topk.cl's
   * seg_scan_excl), for PoCL's build time. */
  const int serial = !(ctx->info.device_type & CL_DEVICE_TYPE_GPU);
  static const char *const names[3] = {"segments_check", "seg_topk", "seg_nth"};
  cl_kernel kernels[3] = {NULL};
  struct clprim_kernel_request req[3];
  /* Signed integers build as the unsigned type of their width, the sign
   * bit flipped by the kernels (SEG_SIGNED), so both share programs. */
  for (int j = 0; j < 3; ++j) {
    clprim__nth_options(clprim__key_build_type(c->type), &nc, 0, options[j], sizeof options[j]);
    if (serial) strcat(options[j], " -DSEG_SERIAL=1");
    strcat(options[j], clprim__offsets_option(c->offset_type));
    const struct clprim_kernel_request r = {"segmented_topk.cl", NULL, options[j], names[j],
                                            "segments_check seg_topk seg_nth", &kernels[j],
                                            NULL, NULL};
    req[j] = r;
  }
  CLPRIM_CHECK(clprim__kernels(ctx, req, 3));
  const size_t units = ctx->info.compute_units ? ctx->info.compute_units : 1;
  size_t longest = c->n / (2 * units) > LONG_MIN ? c->n / (2 * units) : LONG_MIN;
  long long tune;
  clprim__tuned(ctx, &clprim__family_segmented_topk, 0, 0, &tune);
  if (tune >= 0) longest = (size_t)tune;
  const cl_ulong n64 = c->n, segs = c->segments, rows = c->row_length, k64 = c->k;
  const cl_ulong longest64 = longest;

  /* The long segments: from the check (offsets), or every row. */
  size_t long_count = 0;
  cl_ulong *long_bounds = NULL;
  cl_uint *long_ids = NULL;
  if (!c->rows) {
    cl_mem info, ids, bounds;
    const cl_uint zero = 0;
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_CHECK, 12, &info));
    CLPRIM_CHECK(clprim__fill(ctx, info, &zero, 4, 0, 12));
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_LONG, c->segments * 4, &ids));
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_BOUNDS, c->segments * 16, &bounds));
    CLPRIM_CHECK(clprim__set_args(kernels[0], 8, sizeof c->begins, &c->begins, sizeof c->ends,
                                  &c->ends, sizeof segs, &segs, sizeof n64, &n64,
                                  sizeof longest64, &longest64, sizeof info, &info, sizeof ids,
                                  &ids, sizeof bounds, &bounds));
    CLPRIM_CHECK(clprim__enqueue(ctx, kernels[0], (c->segments + 63) / 64, 64));
    cl_uint found[3];
    CLPRIM_CHECK(clprim__read(ctx, info, 0, sizeof found, found));
    if (found[0])
      return clprim__invalid(ctx,
                             "a segment of begin_offsets / end_offsets ends before it "
                             "begins or past n (%zu)",
                             c->n);
    long_count = found[1];
    if (long_count) {
      long_bounds = malloc(long_count * 16);
      long_ids = malloc(long_count * 4);
      clprim_status st = long_bounds && long_ids ? CLPRIM_SUCCESS : CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
      if (st == CLPRIM_SUCCESS) st = clprim__read(ctx, bounds, 0, long_count * 16, long_bounds);
      if (st == CLPRIM_SUCCESS) st = clprim__read(ctx, ids, 0, long_count * 4, long_ids);
      if (st != CLPRIM_SUCCESS) {
        free(long_bounds), free(long_ids);
        return st;
      }
    }
  } else if (c->row_length > longest) {
    long_count = c->segments;
  }

  /* The work-groups' segments (every one when none is long). */
  const int sorted = !c->nth && (c->flags & CLPRIM_TOPK_SORTED);
  const int sort_after = sorted && c->k > SEG_SORT_CAP; /* rows too long for the work-group */
  const size_t es = clprim_type_size(c->type);
  cl_mem keys = c->values, row_begins = c->in, row_ends = c->in;
  clprim_status st = CLPRIM_SUCCESS;
  if (sorted) { /* (the row bounds are written, if only as dummies) */
    if (!keys && sort_after)
      st = clprim__scratch_per_call(ctx, SLOT_SORT_KEYS, c->segments * (size_t)c->k * es, &keys);
    if (st == CLPRIM_SUCCESS)
      st = clprim__scratch(ctx, SLOT_ROW_BEGINS, c->segments * 8, &row_begins);
    if (st == CLPRIM_SUCCESS) st = clprim__scratch(ctx, SLOT_ROW_ENDS, c->segments * 8, &row_ends);
  }
  const int any_short = long_count < c->segments;
  if (st == CLPRIM_SUCCESS && any_short) {
    const cl_mem b = c->begins ? c->begins : c->in, e = c->ends ? c->ends : c->in;
    const size_t groups = c->segments < nc.max_groups ? c->segments : nc.max_groups;
    const cl_uint sign = clprim__is_signed(c->type) ? SEG_SIGNED : 0u;
    if (c->nth) {
      st = clprim__set_args(kernels[2], 9, sizeof c->in, &c->in, sizeof b, &b, sizeof e, &e,
                            sizeof rows, &rows, sizeof segs, &segs, sizeof k64, &k64,
                            sizeof longest64, &longest64, sizeof c->values, &c->values,
                            sizeof sign, &sign);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, kernels[2], groups, nc.wg);
    } else {
      const cl_uint mode = ((c->flags & CLPRIM_TOPK_SMALLEST) ? SEG_SMALLEST : 0u) |
                           ((c->flags & CLPRIM_INDICES_64) ? SEG_INDEX64 : 0u) |
                           (keys ? SEG_VALUES : 0u) | (c->indices ? SEG_INDICES : 0u) |
                           (sorted ? SEG_SORT : 0u) | sign;
      const cl_mem v = keys ? keys : c->in, i = c->indices ? c->indices : c->in;
      st = clprim__set_args(kernels[1], 12, sizeof c->in, &c->in, sizeof b, &b, sizeof e, &e,
                            sizeof rows, &rows, sizeof segs, &segs, sizeof k64, &k64,
                            sizeof longest64, &longest64, sizeof mode, &mode, sizeof v, &v,
                            sizeof i, &i, sizeof row_begins, &row_begins, sizeof row_ends,
                            &row_ends);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, kernels[1], groups, nc.wg);
    }
  }
  /* The work-groups' rows longer than they sort (the long segments' rows
   * sort themselves). */
  if (st == CLPRIM_SUCCESS && sort_after && any_short) {
    const size_t is = (c->flags & CLPRIM_INDICES_64) ? 8 : 4;
    const unsigned order = (c->flags & CLPRIM_TOPK_SMALLEST) ? 0u : CLPRIM_SORT_DESCENDING;
    st = clprim__segmented_sort(ctx, c->type, c->indices ? is : 0, keys, c->indices, keys,
                                c->indices, c->segments * (size_t)c->k, c->segments, CLPRIM_UINT64,
                                row_begins, row_ends, order);
  }
  for (size_t j = 0; j < long_count && st == CLPRIM_SUCCESS; ++j) {
    const size_t s = long_ids ? long_ids[j] : j;
    const uint64_t b = long_bounds ? long_bounds[2 * j] : (uint64_t)s * c->row_length;
    const uint64_t e = long_bounds ? long_bounds[2 * j + 1] : b + c->row_length;
    st = run_long(ctx, c, s, b, e);
  }
  free(long_bounds), free(long_ids);
  return st;
}

/* Checks a call's arguments and resolves its buffers into c (type, n,
 * segments, row_length, k, flags and nth set). */
static clprim_status resolve(clprim_context *ctx, struct seg_call *c, clprim_buffer in,
                             clprim_buffer begins, clprim_buffer ends, clprim_buffer values,
                             clprim_buffer indices) {
  CLPRIM_CHECK(clprim__check_type(ctx, "type", c->type));
  const unsigned allowed = c->nth ? 0u
                                  : CLPRIM_TOPK_SMALLEST | CLPRIM_TOPK_SORTED | CLPRIM_INDICES_64;
  CLPRIM_CHECK(clprim__check_flags(ctx, c->flags, allowed));
  if (!values.mem && !indices.mem)
    return clprim__invalid(ctx, c->nth ? "result is required"
                                       : "no output is given (values and indices are both NULL)");
  const char *const segments_name = c->rows ? "rows" : "segments";
  if (c->n > UINT32_MAX)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "%s (%zu) is above UINT32_MAX",
                        c->rows ? "rows * row_length" : "n", c->n);
  if (c->segments > UINT32_MAX)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "%s (%zu) is above UINT32_MAX",
                        segments_name, c->segments);
  const size_t es = clprim_type_size(c->type);
  const size_t per_row = c->nth ? 1 : (size_t)c->k;
  if (!c->nth && c->k > SIZE_MAX)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "k is above SIZE_MAX");
  const size_t outputs = clprim__bytes(c->segments, per_row);
  if (outputs == SIZE_MAX || clprim__bytes(outputs, 8) == SIZE_MAX)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "%s * k is more than size_t counts",
                        segments_name);
  CLPRIM_CHECK(clprim__range(ctx, "in", in, es, c->n, CLPRIM__READ, &c->in));
  c->begins = c->ends = NULL;
  if (!c->rows)
    CLPRIM_CHECK(clprim__segment_offsets(ctx, c->offset_type, c->segments, begins, ends, &c->begins,
                                         &c->ends));
  c->values = c->indices = NULL;
  /* Rows may be written in part, so copies start as the caller's. */
  if (values.mem)
    CLPRIM_CHECK(clprim__range(ctx, c->nth ? "result" : "values", values, es, outputs, CLPRIM__OUT,
                               &c->values));
  if (indices.mem)
    CLPRIM_CHECK(clprim__range(ctx, "indices", indices, (c->flags & CLPRIM_INDICES_64) ? 8 : 4,
                               outputs, CLPRIM__OUT, &c->indices));
  return CLPRIM_SUCCESS;
}

static clprim_status segmented_call(clprim_context *ctx, struct seg_call *c, clprim_buffer in,
                                    clprim_buffer begins, clprim_buffer ends,
                                    clprim_buffer values, clprim_buffer indices) {
  CLPRIM_CHECK(resolve(ctx, c, in, begins, ends, values, indices));
  return plan(ctx, c);
}

clprim_status clprim_segmented_topk(clprim_context *ctx, size_t n, clprim_type type,
                                    clprim_buffer in, size_t segments, clprim_type offset_type,
                                    clprim_buffer begin_offsets, clprim_buffer end_offsets,
                                    uint64_t k, unsigned flags, clprim_buffer values,
                                    clprim_buffer indices) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "segmented_topk"));
  struct seg_call c;
  memset(&c, 0, sizeof c);
  c.type = type, c.offset_type = offset_type, c.n = n, c.segments = segments, c.k = k;
  c.flags = flags;
  return clprim__call_end(
      ctx, segmented_call(ctx, &c, in, begin_offsets, end_offsets, values, indices));
}

clprim_status clprim_batched_topk(clprim_context *ctx, size_t rows, size_t row_length,
                                  clprim_type type, clprim_buffer in, uint64_t k,
                                  unsigned flags, clprim_buffer values, clprim_buffer indices) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "batched_topk"));
  const clprim_buffer none = {NULL, 0};
  struct seg_call c;
  memset(&c, 0, sizeof c);
  c.type = type, c.offset_type = CLPRIM_UINT64, c.rows = 1, c.segments = rows;
  c.row_length = row_length, c.k = k;
  c.flags = flags, c.n = clprim__bytes(rows, row_length);
  return clprim__call_end(ctx, segmented_call(ctx, &c, in, none, none, values, indices));
}

clprim_status clprim_segmented_nth_element(clprim_context *ctx, size_t n, clprim_type type,
                                           clprim_buffer in, size_t segments,
                                           clprim_type offset_type, clprim_buffer begin_offsets,
                                           clprim_buffer end_offsets, uint64_t k, unsigned flags,
                                           clprim_buffer result) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "segmented_nth_element"));
  const clprim_buffer none = {NULL, 0};
  struct seg_call c;
  memset(&c, 0, sizeof c);
  c.type = type, c.offset_type = offset_type, c.n = n, c.segments = segments, c.k = k;
  c.flags = flags, c.nth = 1;
  return clprim__call_end(
      ctx, segmented_call(ctx, &c, in, begin_offsets, end_offsets, result, none));
}

clprim_status clprim_batched_nth_element(clprim_context *ctx, size_t rows, size_t row_length,
                                         clprim_type type, clprim_buffer in, uint64_t k,
                                         unsigned flags, clprim_buffer result) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "batched_nth_element"));
  const clprim_buffer none = {NULL, 0};
  struct seg_call c;
  memset(&c, 0, sizeof c);
  c.type = type, c.offset_type = CLPRIM_UINT64, c.rows = 1, c.segments = rows;
  c.row_length = row_length, c.k = k;
  c.flags = flags, c.nth = 1, c.n = clprim__bytes(rows, row_length);
  return clprim__call_end(ctx, segmented_call(ctx, &c, in, none, none, result, none));
}

/* Dry runs (core/prebuild.c): one program (the rows' sort and the long
 * segments' calls are the sort's and top-k's). */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  clprim_segmented_topk(ctx, d->n, t, clprim_buf(d->in), 1, CLPRIM_UINT64, clprim_buf(d->in2),
                        clprim_buf(d->in2), 1, 0, clprim_buf(d->out), clprim_buf(d->out2));
}
