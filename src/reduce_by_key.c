/* reduce_by_key.c: reduce-by-key. Over runs of equal consecutive keys (CUB
 * ReduceByKey semantics), kernels in cl/reduce_by_key.cl: head counts per
 * tile, their scan, the per-tile reduction (clprim__count_scan_scatter), and the fix-up of
 * segments that span tiles. Dense keys (clprim_reduce_by_key_dense): the
 * histogram engine with sums (src/histogram.c, cl/histogram.cl). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Scratch buffers of this family (clprim__scratch names them). */
#define SLOT_OFFSETS "reduce_by_key: tile offsets" /* tile head counts, scanned */
#define SLOT_CARRY "reduce_by_key: carries"        /* per tile: the sum before its first head */
#define SLOT_LAST "reduce_by_key: last parts"      /* per tile: its last segment's partial sum */

/* Elements per work-item (a multiple of 4): 8, or $CLPRIM_RBK_ITEMS (4, 8,
 * 16) to compare. */
static unsigned rbk_items(const clprim_context *ctx) {
  const long long v = ctx->tuning[CLPRIM_KNOB_RBK_ITEMS];
  return v == 4 || v == 8 || v == 16 ? (unsigned)v : 8u;
}

/* Dense reduce-by-key: keys in [0, num_keys), any order. A histogram with
 * sums, so it runs the histogram engine (src/histogram.c, cl/histogram.cl). */
clprim_status clprim_reduce_by_key_dense(clprim_context *ctx, clprim_type key_type, cl_mem keys,
                                         clprim_type value_type, cl_mem values, size_t n,
                                         size_t num_keys, cl_mem sums, cl_mem counts,
                                         uint64_t *invalid) {
  if (!values || !sums) return CLPRIM_ERROR_INVALID_ARGUMENT;
  struct clprim_hist_call c;
  memset(&c, 0, sizeof c);
  c.keys_mode = 1, c.x_type = key_type, c.in = keys, c.v_type = value_type, c.values = values;
  c.n = n, c.bins = num_keys, c.sums = sums, c.counts = counts;
  c.outside = invalid, c.outside_words = 1;
  return clprim__histogram(ctx, &c);
}

clprim_status clprim_reduce_by_key(clprim_context *ctx, clprim_type key_type, cl_mem keys,
                                   clprim_type value_type, cl_mem values, size_t n,
                                   cl_mem unique_keys, cl_mem sums, cl_mem count_buffer,
                                   uint64_t *count) {
  if (!ctx) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__check_type(ctx, key_type));
  if (key_type == CLPRIM_FLOAT || key_type == CLPRIM_DOUBLE) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__check_type(ctx, value_type));
  const size_t ks = clprim_type_size(key_type), vs = clprim_type_size(value_type);
  const size_t key_bytes = clprim__bytes(n, ks), value_bytes = clprim__bytes(n, vs);
  if (key_bytes == SIZE_MAX || value_bytes == SIZE_MAX) return CLPRIM_ERROR_SIZE_TOO_LARGE;
  CLPRIM_CHECK(clprim__check_buffer(ctx, keys, key_bytes));
  CLPRIM_CHECK(clprim__check_buffer(ctx, values, value_bytes));
  CLPRIM_CHECK(clprim__check_buffer(ctx, unique_keys, key_bytes));
  CLPRIM_CHECK(clprim__check_buffer(ctx, sums, value_bytes));
  if (count_buffer) CLPRIM_CHECK(clprim__check_buffer(ctx, count_buffer, 8));
  cl_mem mems[5] = {keys, values, unique_keys, sums, count_buffer};
  for (int a = 0; a < 5; ++a)
    for (int b = a + 1; b < 5; ++b)
      if (mems[a] && mems[a] == mems[b]) return CLPRIM_ERROR_INVALID_ARGUMENT;

  const cl_ulong zero = 0;
  if (n == 0) {
    clprim__call_begin(ctx);
    if (count_buffer) CLPRIM_CHECK(clprim__fill(ctx, count_buffer, &zero, 8, 0, 8));
    if (count) *count = 0;
    return CLPRIM_SUCCESS;
  }

  static const char *const sum_type[CLPRIM_TYPE_COUNT] = {"uint",  "uint",  "ulong",
                                                          "ulong", "float", "double"};
  const unsigned wg = clprim__launch(ctx).wg, items = rbk_items(ctx);
  const size_t tile = (size_t)wg * items, tiles = n / tile + (n % tile != 0);
  char options[160];
  snprintf(options, sizeof options, "-DK_T=%s -DV_T=%s -DS_T=%s -DWG=%u -DITEMS=%u",
           clprim__cl_type(key_type), clprim__cl_type(value_type), sum_type[value_type], wg, items);
  cl_kernel count_kernel, reduce_kernel, fixup_kernel;
  const struct clprim_kernel_request req[3] = {
      {"reduce_by_key.cl", NULL, options, "rbk_count", NULL, &count_kernel, NULL},
      {"reduce_by_key.cl", NULL, options, "rbk_reduce", NULL, &reduce_kernel, NULL},
      {"reduce_by_key.cl", NULL, options, "rbk_fixup", NULL, &fixup_kernel, NULL}};
  CLPRIM_CHECK(clprim__kernels(ctx, req, tiles > 1 ? 3 : 2));
  cl_mem offsets, carry, last_part;
  CLPRIM_CHECK(clprim__offsets(ctx, SLOT_OFFSETS, CLPRIM_UINT64, tiles, &offsets));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_CARRY, tiles * vs, &carry));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_LAST, tiles * vs, &last_part));

  clprim__call_begin(ctx);
  cl_ulong n64 = n, tiles64 = tiles;
  CLPRIM_CHECK(clprim__set_args(count_kernel, 3, sizeof keys, &keys, sizeof n64, &n64,
                                sizeof offsets, &offsets));
  CLPRIM_CHECK(clprim__set_args(reduce_kernel, 8, sizeof keys, &keys, sizeof values, &values,
                                sizeof n64, &n64, sizeof offsets, &offsets, sizeof unique_keys,
                                &unique_keys, sizeof sums, &sums, sizeof carry, &carry,
                                sizeof last_part, &last_part));
  /* Count the heads per tile, scan, reduce each tile's runs from its offset. */
  const struct clprim_count_scan_scatter passes = {
      {count_kernel, tiles, wg}, {reduce_kernel, tiles, wg}, CLPRIM_UINT64, offsets, tiles};
  CLPRIM_CHECK(clprim__count_scan_scatter(ctx, &passes));
  if (tiles > 1) {
    CLPRIM_CHECK(clprim__set_args(fixup_kernel, 7, sizeof keys, &keys, sizeof n64, &n64,
                                  sizeof offsets, &offsets, sizeof tiles64, &tiles64, sizeof carry,
                                  &carry, sizeof last_part, &last_part, sizeof sums, &sums));
    const size_t fix_wg = 64;
    CLPRIM_CHECK(
        clprim__enqueue(ctx, fixup_kernel, tiles / fix_wg + (tiles % fix_wg != 0), fix_wg));
  }
  if (count_buffer) CLPRIM_CHECK(clprim__copy(ctx, offsets, count_buffer, tiles * 8, 0, 8));
  if (count) {
    cl_ulong total;
    CLPRIM_CHECK(clprim__read(ctx, offsets, tiles * 8, 8, &total));
    *count = total;
  }
  return CLPRIM_SUCCESS;
}
