/* reduce_by_key.c: reduce-by-key. Over runs of equal consecutive keys (CUB
 * ReduceByKey semantics), kernels in cl/reduce_by_key.cl: head counts per
 * tile, their scan, the per-tile reduction (clprim__count_scan_scatter), and the fix-up of
 * segments that span tiles. Dense keys (clprim_reduce_by_key_dense): the
 * histogram engine with sums (src/histogram.c, cl/histogram.cl; with
 * CLPRIM_EXACT its exact kernels). */
#include "histogram.h"
#include "engine/count_scan_scatter.h"

#include <stdlib.h>
#include <string.h>

/* Scratch buffers of this family (clprim__scratch names them). */
#define SLOT_OFFSETS "reduce_by_key: tile offsets" /* tile head counts, scanned */
#define SLOT_CARRY "reduce_by_key: carries"        /* per tile: the sum before its first head */
#define SLOT_LAST "reduce_by_key: last parts"      /* per tile: its last segment's partial sum */

/* The knob and table: elements per work-item over runs (4, 8 or 16). */
static const struct clprim_knob rbk_knobs[] = {{"items", 4, 16}};
static const struct clprim_tuning_row rbk_table[] = {
    {0, 0, NULL, 0, 0, CLPRIM__KNOB(0), {8}, "8 elements a work-item (H100)"},
    {0, 0, "H200", 0, 0, CLPRIM__KNOB(0), {16},
     "H200, 2026-11-29, 2^28 elements in 2^20 sorted runs: int32 values 0.884 ms against 1.127 "
     "at 8, double 1.310 against 1.385 (CUB 1.311); found by clprim-tune"}};
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_reduce_by_key = {
    "reduce_by_key", rbk_knobs, 1, rbk_table, sizeof rbk_table / sizeof rbk_table[0], 0,
    prebuild};

static unsigned rbk_items(const clprim_context *ctx) {
  long long v;
  clprim__tuned(ctx, &clprim__family_reduce_by_key, 0, 0, &v);
  return v == 4 || v == 8 || v == 16 ? (unsigned)v : 8u;
}

/* Dense reduce-by-key: keys in [0, num_keys), any order. A histogram with
 * sums, so it runs the histogram engine (src/histogram.c, cl/histogram.cl). */
clprim_status clprim_reduce_by_key_dense(clprim_context *ctx, size_t n, clprim_type key_type,
                                         clprim_buffer keys, clprim_type value_type,
                                         clprim_buffer values, size_t num_keys, unsigned flags,
                                         clprim_buffer sums, clprim_buffer counts,
                                         uint64_t *invalid, clprim_buffer invalid_out) {
  struct clprim_hist_call c;
  memset(&c, 0, sizeof c);
  c.keys_mode = 1, c.x_type = key_type, c.in_range = keys, c.v_type = value_type;
  c.values_range = values, c.n = n, c.bins = num_keys, c.sums_range = sums;
  c.counts_range = counts, c.outside = invalid, c.outside_range = invalid_out;
  c.outside_words = 1, c.keep_subnormals = (flags & CLPRIM_SUMS_KEEP_SUBNORMALS) != 0;
  c.exact = (flags & CLPRIM_EXACT) != 0;
  CLPRIM_CHECK(clprim__call_begin(ctx, "reduce_by_key_dense"));
  clprim_status st = clprim__check_flags(ctx, flags, CLPRIM_SUMS_KEEP_SUBNORMALS | CLPRIM_EXACT);
  if (st == CLPRIM_SUCCESS && !values.mem) st = clprim__invalid(ctx, "values is required");
  if (st == CLPRIM_SUCCESS && !sums.mem) st = clprim__invalid(ctx, "sums is required");
  if (st == CLPRIM_SUCCESS) st = clprim__histogram(ctx, &c);
  return clprim__call_end(ctx, st);
}

static clprim_status reduce_by_key(clprim_context *ctx, size_t n, clprim_type key_type,
                                   clprim_buffer keys_range, clprim_type value_type,
                                   clprim_buffer values_range, clprim_buffer unique_range,
                                   clprim_buffer sums_range, uint64_t *count,
                                   clprim_buffer count_range) {
  CLPRIM_CHECK(clprim__check_type(ctx, "key_type", key_type));
  CLPRIM_CHECK(clprim__check_type(ctx, "value_type", value_type));
  const size_t ks = clprim_type_size(key_type), vs = clprim_type_size(value_type);
  cl_mem keys, values, unique_keys, sums, count_buffer = NULL;
  CLPRIM_CHECK(clprim__range(ctx, "keys", keys_range, ks, n, CLPRIM__READ, &keys));
  CLPRIM_CHECK(clprim__range(ctx, "values", values_range, vs, n, CLPRIM__READ, &values));
  CLPRIM_CHECK(clprim__range(ctx, "unique_keys", unique_range, ks, n, CLPRIM__OUT, &unique_keys));
  CLPRIM_CHECK(clprim__range(ctx, "sums", sums_range, vs, n, CLPRIM__OUT, &sums));
  if (count_range.mem)
    CLPRIM_CHECK(
        clprim__range(ctx, "count_out", count_range, 8, 1, CLPRIM__OUT_ALL, &count_buffer));

  const cl_ulong zero = 0;
  if (n == 0) {
    if (count_buffer) CLPRIM_CHECK(clprim__fill(ctx, count_buffer, &zero, 8, 0, 8));
    if (count) *count = 0;
    return CLPRIM_SUCCESS;
  }

  static const char *const sum_type[CLPRIM_TYPE_COUNT] = {"uint",  "uint",  "ulong",
                                                          "ulong", "float", "double"};
  const unsigned wg = clprim__launch(ctx).wg, items = rbk_items(ctx);
  const size_t tile = (size_t)wg * items;
  /* The cpu path (cl/reduce_by_key.cl): a work-item per contiguous share,
   * launch.cpu_share_min elements or more each. */
  const int cpu = ctx->info.path == CLPRIM_PATH_CPU;
  const size_t tiles = cpu ? clprim__cpu_stream_shares(ctx, n) : n / tile + (n % tile != 0);
  const unsigned launch_wg = cpu ? 1u : wg;
  char options[160];
  snprintf(options, sizeof options, "-DK_T=%s -DV_T=%s -DS_T=%s -DWG=%u -DITEMS=%u",
           clprim__cl_type(key_type), clprim__cl_type(value_type), sum_type[value_type], wg, items);
  cl_kernel count_kernel, reduce_kernel, fixup_kernel;
  const struct clprim_kernel_request req[3] = {
      {"reduce_by_key.cl", NULL, options, "rbk_count", NULL, &count_kernel, NULL, NULL},
      {"reduce_by_key.cl", NULL, options, "rbk_reduce", NULL, &reduce_kernel, NULL, NULL},
      {"reduce_by_key.cl", NULL, options, "rbk_fixup", NULL, &fixup_kernel, NULL, NULL}};
  CLPRIM_CHECK(clprim__kernels(ctx, req, tiles > 1 ? 3 : 2));
  cl_mem offsets, carry, last_part;
  CLPRIM_CHECK(clprim__offsets(ctx, SLOT_OFFSETS, CLPRIM_UINT64, tiles, &offsets));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_CARRY, tiles * vs, &carry));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_LAST, tiles * vs, &last_part));

  cl_ulong n64 = n, tiles64 = tiles;
  CLPRIM_CHECK(clprim__set_args(count_kernel, 3, sizeof keys, &keys, sizeof n64, &n64,
                                sizeof offsets, &offsets));
  CLPRIM_CHECK(clprim__set_args(reduce_kernel, 8, sizeof keys, &keys, sizeof values, &values,
                                sizeof n64, &n64, sizeof offsets, &offsets, sizeof unique_keys,
                                &unique_keys, sizeof sums, &sums, sizeof carry, &carry,
                                sizeof last_part, &last_part));
  /* Count the heads per tile, scan, reduce each tile's runs from its offset. */
  const struct clprim_count_scan_scatter passes = {
      {count_kernel, tiles, launch_wg}, {reduce_kernel, tiles, launch_wg}, CLPRIM_UINT64, offsets,
      tiles};
  CLPRIM_CHECK(clprim__count_scan_scatter(ctx, &passes));
  if (tiles > 1) {
    CLPRIM_CHECK(clprim__set_args(fixup_kernel, 7, sizeof keys, &keys, sizeof n64, &n64,
                                  sizeof offsets, &offsets, sizeof tiles64, &tiles64, sizeof carry,
                                  &carry, sizeof last_part, &last_part, sizeof sums, &sums));
    const size_t fix_wg = 64;
    CLPRIM_CHECK(
        clprim__enqueue(ctx, fixup_kernel, tiles / fix_wg + (tiles % fix_wg != 0), fix_wg));
  }
  return clprim__deliver_count(ctx, offsets, tiles * 8, count_buffer, count);
}

clprim_status clprim_reduce_by_key(clprim_context *ctx, size_t n, clprim_type key_type,
                                   clprim_buffer keys, clprim_type value_type,
                                   clprim_buffer values, clprim_buffer unique_keys,
                                   clprim_buffer sums, uint64_t *count, clprim_buffer count_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "reduce_by_key"));
  return clprim__call_end(ctx, reduce_by_key(ctx, n, key_type, keys, value_type, values,
                                             unique_keys, sums, count, count_out));
}

/* Dry runs (core/prebuild.c): dense sums into bins in local memory, beyond
 * it and (GPUs) the binned path's, with and without counts, subnormals kept
 * or not, and exact (float and double); runs of each value type by integer
 * keys. */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const size_t bins[3] = {256, (size_t)1 << 16, d->max_bins};
  const clprim_buffer in = clprim_buf(d->in), in2 = clprim_buf(d->in2);
  const clprim_buffer out = clprim_buf(d->out), out2 = clprim_buf(d->out2), none = clprim_buf(NULL);
  const int float_sums = t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE;
  uint64_t u;
  static const unsigned float_flags[3] = {0, CLPRIM_SUMS_KEEP_SUBNORMALS, CLPRIM_EXACT};
  for (int b = 0; b < 3; ++b)
    for (int f = 0; f < (float_sums ? 3 : 1); ++f) {
      const unsigned flags = float_flags[f];
      clprim_reduce_by_key_dense(ctx, d->n, CLPRIM_INT32, in, t, in2, bins[b], flags, out, none, &u,
                                 none);
      clprim_reduce_by_key_dense(ctx, d->n, CLPRIM_INT32, in, t, in2, bins[b], flags, out, out2,
                                 &u, none);
    }
  if (!float_sums)
    for (clprim_type value = 0; value < CLPRIM_TYPE_COUNT; ++value)
      clprim_reduce_by_key(ctx, (size_t)1 << 16, t, in, value, in2, out, out2, &u, none);
}
