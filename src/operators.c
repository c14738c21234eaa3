/* operators.c: user types and operators (clprim.h's section "user types
 * and operators"): making an operator (the contract, engine/operator.c,
 * and its kernels built once), and reduce, inclusive and exclusive scan,
 * scan by key, segmented reduce, reduce by key over runs (select's run
 * heads, then a work-group a run) and adjacent difference over it (kernels op_* in cl/operators.cl, which
 * describes the method). */
#include "engine/lookback.h"
#include "operators.h"
#include "select.h"
#include "../cl/internal/heads.h"

#include <stdlib.h>
#include <string.h>

/* The family's knobs and table (docs/TUNING.md): wg, work-items a
 * work-group; tile_bytes, the bytes of a tile (WG * ITEMS elements: ITEMS
 * is the largest power of two, 1 to 16, that keeps the tile within it). */
enum { OPS_WG, OPS_TILE_BYTES, OPS_SINGLE_PASS, OPS_KNOBS };
static const struct clprim_knob ops_knobs[OPS_KNOBS] = {
    {"wg", 32, 1024}, {"tile_bytes", 64, 65536}, {"single_pass", 0, 1}};
#define K CLPRIM__KNOB
static const struct clprim_tuning_row ops_table[] = {
    {0, 0, NULL, 0, 0, K(OPS_WG) | K(OPS_TILE_BYTES), {256, 16384},
     "portable: 256 work-items, tiles of 16 KiB (chosen, not measured against others)"},
    {0, CL_DEVICE_TYPE_CPU, NULL, 0, 0, K(OPS_WG), {64},
     "CPU runtimes: the launch's 64 work-items (core/launch.c)"},
    {1u << CLPRIM_PATH_NV_PTX, 0, NULL, 4, 0, K(OPS_SINGLE_PASS), {0, 0, 1},
     "nv_ptx, 4-byte elements: scans in one pass with look-back (H100, 2^28 int \"a + b\": "
     "2.096 ms, 2.504 in two passes; 12-byte (n, mean, M2): 6.462 against 3.712, max-plus "
     "float2: 3.059 against 2.983, so those stay two-pass)"},
};
#undef K
const struct clprim_family clprim__family_operators = {
    "operators", ops_knobs, OPS_KNOBS, ops_table, sizeof ops_table / sizeof ops_table[0], 0, NULL};

/* The cpu path's tile: elements one work-item combines in order. */
#define CPU_TILE 4096u
#define OPS_KERNELS                                                                                \
  "op_layout op_reduce op_scan_tiles op_scan_single op_segmented op_runs op_adjacent "          \
  "segments_check"
/* Scan by key's kernels, a program of their own on GPUs (built at the first
 * scan by key, not by clprim_operator_create). */
#define SBK_KERNELS "op_sbk_reduce op_sbk_scan_tiles"
#define SLOT_TOTALS "operators: tile totals %u"
#define SLOT_RESULT "operators: result"
#define SLOT_STATE "operators: tile states" /* the single pass's look-back */
#define SLOT_HEADS "operators: run heads" /* reduce by key: where each run starts (uint64) */
#define SLOT_COUNT "operators: run count" /* reduce by key: the runs' count (uint64) */
#define SLOT_FLAGS "operators: tile flags %u" /* scan by key: a run head in the tile (uint) */

/* The shape of op's kernels on ctx: work-items a work-group and elements
 * a work-item a tile. */
static void ops_shape(const clprim_context *ctx, size_t size, unsigned *wg, unsigned *items) {
  if (ctx->info.path == CLPRIM_PATH_CPU) { /* cl/operators.cl: one work-item, a tile in order */
    *wg = 1, *items = CPU_TILE;
    return;
  }
  long long v[OPS_KNOBS];
  clprim__tuned(ctx, &clprim__family_operators, (unsigned)size, 0, v);
  unsigned w = v[OPS_WG] > 0 ? (unsigned)v[OPS_WG] : 256u;
  while (w & (w - 1)) w &= w - 1; /* a power of two */
  w = clprim__fit_wg(ctx, w);
  const size_t tile_bytes = v[OPS_TILE_BYTES] > 0 ? (size_t)v[OPS_TILE_BYTES] : 16384u;
  unsigned it = 16;
  while (it > 1 && (size_t)w * it * size > tile_bytes) it /= 2;
  /* Local memory: the tile and the work-items' values, within half the
   * device's. */
  while (w > 32 && (size_t)w * (it + 1) * size > ctx->info.local_mem_size / 2) w /= 2;
  *wg = w, *items = it;
}

void clprim__operator_options(const clprim_context *ctx, const clprim_operator *op, char *options,
                              size_t size) {
  unsigned w, it;
  ops_shape(ctx, op->size, &w, &it);
  snprintf(options, size, "-DWG=%u -DITEMS=%u", w, it);
}

/* One of op's kernels (all are one program, built by clprim_operator_create;
 * segmented calls with uint32 offsets build a second, offsets_option
 * clprim__offsets_option's). */
static clprim_status ops_kernel_offsets(clprim_context *ctx, const clprim_operator *op,
                                        const char *name, const char *offsets_option,
                                        cl_kernel *kernel, unsigned *wg, unsigned *items) {
  unsigned w, it;
  ops_shape(ctx, op->size, &w, &it);
  char options[96];
  clprim__operator_options(ctx, op, options, sizeof options);
  snprintf(options + strlen(options), sizeof options - strlen(options), "%s", offsets_option);
  const char *together = strncmp(name, "op_sbk_", 7) == 0 ? SBK_KERNELS : OPS_KERNELS;
  const struct clprim_kernel_request r = {"operators.cl", op->prefix, options, name,
                                          together,       kernel,     NULL,    NULL};
  if (wg) *wg = w;
  if (items) *items = it;
  return clprim__kernels(ctx, &r, 1);
}

static clprim_status ops_kernel(clprim_context *ctx, const clprim_operator *op, const char *name,
                                cl_kernel *kernel, unsigned *wg, unsigned *items) {
  return ops_kernel_offsets(ctx, op, name, "", kernel, wg, items);
}

static clprim_status operator_create(clprim_context *ctx, const clprim_operator_desc *desc,
                                     clprim_operator **out) {
  if (!out) return clprim__invalid(ctx, "op is required");
  clprim_operator *op = NULL;
  CLPRIM_CHECK(clprim__operator_make(ctx, desc, &op));
  cl_kernel layout_k;
  cl_mem layout;
  cl_uint got[2] = {0, 0};
  clprim_status st = ops_kernel(ctx, op, "op_layout", &layout_k, NULL, NULL);
  if (st == CLPRIM_SUCCESS) st = clprim__scratch(ctx, SLOT_RESULT, 64, &layout);
  if (st == CLPRIM_SUCCESS) st = clprim__set_args(layout_k, 1, sizeof layout, &layout);
  if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, layout_k, 1, 1);
  if (st == CLPRIM_SUCCESS) st = clprim__read(ctx, layout, 0, sizeof got, got);
  if (st == CLPRIM_SUCCESS) st = clprim__operator_layout(ctx, op, got);
  if (st != CLPRIM_SUCCESS) {
    clprim_operator_free(op);
    return st;
  }
  *out = op;
  return CLPRIM_SUCCESS;
}

clprim_status clprim_operator_create(clprim_operator **op, clprim_context *ctx,
                                     const clprim_operator_desc *desc) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "operator_create"));
  return clprim__call_end(ctx, operator_create(ctx, desc, op));
}

void clprim_operator_free(clprim_operator *op) {
  if (!op) return;
  free(op->type);
  free(op->prefix);
  free(op);
}

clprim_status clprim_operator_set_params(clprim_operator *op, const double *params) {
  if (!op) return CLPRIM_ERROR_INVALID_ARGUMENT;
  for (unsigned k = 0; k < CLPRIM_OPERATOR_PARAMS; ++k) op->params[k] = params ? params[k] : 0;
  return CLPRIM_SUCCESS;
}


/* A call's operator state: its kernels' shape, the parameters' argument
 * and init's bytes (zeros where there is none). */
struct ops_call {
  const clprim_operator *op;
  struct clprim_operator_params prm;
  unsigned char init[64];
  cl_int use_init;
};

static void ops_call(clprim_context *ctx, const clprim_operator *op, const void *init,
                     struct ops_call *c) {
  memset(c, 0, sizeof *c);
  c->op = op;
  clprim__operator_params(ctx, op, &c->prm);
  c->use_init = init != NULL;
  if (init) memcpy(c->init, init, op->size);
}

/* op_reduce over n elements of in into out[0 .. groups): work-group g
 * takes per_group tiles. */
static clprim_status reduce_pass(clprim_context *ctx, const struct ops_call *c, cl_kernel k,
                                 unsigned wg, cl_mem in, size_t n, size_t per_group, size_t groups,
                                 cl_mem out, cl_int use_init) {
  const cl_ulong n64 = n, per64 = per_group;
  CLPRIM_CHECK(clprim__set_args(k, 7, sizeof in, &in, sizeof n64, &n64, sizeof per64, &per64,
                                sizeof out, &out, sizeof use_init, &use_init, c->op->size, c->init,
                                c->prm.size, c->prm.value));
  return clprim__enqueue(ctx, k, groups, wg);
}

clprim_status clprim__reduce_op_run(clprim_context *ctx, const clprim_operator *op, cl_kernel first,
                                    int pipeline, cl_mem in, size_t n, const void *init,
                                    cl_mem dest) {
  cl_kernel k;
  unsigned wg, items;
  CLPRIM_CHECK(ops_kernel(ctx, op, "op_reduce", &k, &wg, &items));
  struct ops_call c;
  ops_call(ctx, op, init, &c);
  const size_t tile = (size_t)wg * items;
  size_t tiles = clprim__div_up(n, tile);
  char name[48];
  if (pipeline && ctx->info.path != CLPRIM_PATH_CPU && tiles > 1) {
    /* A pipeline's build takes one tile a work-group (cl/operators.cl,
     * op_reduce): its tiles' totals (a slot of their own), then op's own
     * passes over those. */
    cl_mem totals;
    snprintf(name, sizeof name, SLOT_TOTALS, 1u);
    CLPRIM_CHECK(clprim__scratch(ctx, name, tiles * op->size, &totals));
    CLPRIM_CHECK(reduce_pass(ctx, &c, first, wg, in, n, 1, tiles, totals, 0));
    first = k;
    in = totals;
    n = tiles;
    tiles = clprim__div_up(n, tile);
  }
  const size_t most = clprim__launch(ctx).max_groups;
  if (tiles <= 1 || most <= 1)
    return reduce_pass(ctx, &c, first, wg, in, n, tiles ? tiles : 1, 1, dest, c.use_init);
  const size_t per = clprim__div_up(tiles, most), groups = clprim__div_up(tiles, per);
  cl_mem partials;
  snprintf(name, sizeof name, SLOT_TOTALS, 0u);
  CLPRIM_CHECK(clprim__scratch(ctx, name, groups * op->size, &partials));
  CLPRIM_CHECK(reduce_pass(ctx, &c, first, wg, in, n, per, groups, partials, 0));
  return reduce_pass(ctx, &c, k, wg, partials, groups, clprim__div_up(groups, tile), 1, dest,
                     c.use_init);
}

static clprim_status reduce_op(clprim_context *ctx, size_t n, const clprim_operator *op,
                               clprim_buffer in_range, const void *init, void *result,
                               clprim_buffer result_out) {
  CLPRIM_CHECK(clprim__operator_check(ctx, op));
  if (!result && !result_out.mem) return clprim__invalid(ctx, "result or result_out is required");
  cl_mem in, out = NULL;
  CLPRIM_CHECK(clprim__range(ctx, "in", in_range, op->size, n, CLPRIM__READ, &in));
  if (result_out.mem)
    CLPRIM_CHECK(clprim__range(ctx, "result_out", result_out, op->size, 1, CLPRIM__OUT_ALL, &out));
  cl_kernel k;
  CLPRIM_CHECK(ops_kernel(ctx, op, "op_reduce", &k, NULL, NULL));
  /* With a host result, the last pass writes scratch: read from there, and
   * copied to result_out (where given) after every step that can fail. */
  cl_mem dest = out;
  if (result) CLPRIM_CHECK(clprim__scratch(ctx, SLOT_RESULT, op->size, &dest));
  CLPRIM_CHECK(clprim__reduce_op_run(ctx, op, k, 0, in, n, init, dest));
  if (!result) return CLPRIM_SUCCESS;
  unsigned char value[64];
  CLPRIM_CHECK(clprim__read(ctx, dest, 0, op->size, value));
  if (out) CLPRIM_CHECK(clprim__copy(ctx, dest, out, 0, 0, op->size));
  memcpy(result, value, op->size);
  return CLPRIM_SUCCESS;
}

clprim_status clprim_reduce_op(clprim_context *ctx, size_t n, const clprim_operator *op,
                               clprim_buffer in, const void *init, void *result,
                               clprim_buffer result_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "reduce_op"));
  return clprim__call_end(ctx, reduce_op(ctx, n, op, in, init, result, result_out));
}

struct scan_kernels {
  cl_kernel reduce, tiles;
  unsigned wg, items;
};

/* One level of the scan: n elements of in into out, after init where
 * use_init; the tiles' totals scanned by the next level. */
static clprim_status scan_level(clprim_context *ctx, const struct ops_call *c,
                                const struct scan_kernels *k, cl_mem in, cl_mem out, size_t n,
                                cl_int use_init, cl_int inclusive, unsigned level) {
  const size_t tiles = clprim__div_up(n, (size_t)k->wg * k->items);
  const cl_ulong n64 = n;
  cl_mem offsets = in; /* unused with one tile */
  cl_int use_offsets = tiles > 1;
  if (tiles > 1) {
    char name[48];
    snprintf(name, sizeof name, SLOT_TOTALS, level);
    CLPRIM_CHECK(clprim__scratch(ctx, name, tiles * c->op->size, &offsets));
    CLPRIM_CHECK(reduce_pass(ctx, c, k->reduce, k->wg, in, n, 1, tiles, offsets, 0));
    CLPRIM_CHECK(scan_level(ctx, c, k, offsets, offsets, tiles, 0, 0, level + 1));
  }
  CLPRIM_CHECK(clprim__set_args(k->tiles, 9, sizeof in, &in, sizeof out, &out, sizeof n64, &n64,
                                sizeof offsets, &offsets, sizeof use_offsets, &use_offsets,
                                sizeof use_init, &use_init, c->op->size, c->init, sizeof inclusive,
                                &inclusive, c->prm.size, c->prm.value));
  return clprim__enqueue(ctx, k->tiles, tiles, k->wg);
}

static clprim_status scan_op(clprim_context *ctx, size_t n, const clprim_operator *op,
                             clprim_buffer in_range, const void *init, clprim_buffer out_range,
                             int inclusive) {
  CLPRIM_CHECK(clprim__operator_check(ctx, op));
  cl_mem in, out;
  CLPRIM_CHECK(clprim__range(ctx, "in", in_range, op->size, n, CLPRIM__READ, &in));
  CLPRIM_CHECK(
      clprim__range(ctx, "out", out_range, op->size, n, CLPRIM__OUT_ALL | CLPRIM__SAME_OK, &out));
  struct scan_kernels k;
  CLPRIM_CHECK(ops_kernel(ctx, op, "op_reduce", &k.reduce, &k.wg, &k.items));
  CLPRIM_CHECK(ops_kernel(ctx, op, "op_scan_tiles", &k.tiles, NULL, NULL));
  if (n == 0) return CLPRIM_SUCCESS;
  struct ops_call c;
  ops_call(ctx, op, init, &c);
  const size_t tiles = clprim__div_up(n, (size_t)k.wg * k.items);
  long long v[OPS_KNOBS];
  clprim__tuned(ctx, &clprim__family_operators, (unsigned)op->size, 0, v);
  if (tiles > 1 && v[OPS_SINGLE_PASS] == 1 && ctx->info.path == CLPRIM_PATH_NV_PTX &&
      k.wg % 32 == 0) {
    cl_kernel single;
    cl_mem state;
    CLPRIM_CHECK(ops_kernel(ctx, op, "op_scan_single", &single, NULL, NULL));
    CLPRIM_CHECK(clprim__lookback_state_op(ctx, SLOT_STATE, tiles, op->size, &state));
    const cl_ulong n64 = n;
    const cl_uint tiles32 = (cl_uint)tiles;
    const cl_int inc = inclusive;
    CLPRIM_CHECK(clprim__set_args(single, 9, sizeof in, &in, sizeof out, &out, sizeof n64, &n64,
                                  sizeof state, &state, sizeof tiles32, &tiles32,
                                  sizeof c.use_init, &c.use_init, op->size, c.init, sizeof inc,
                                  &inc, c.prm.size, c.prm.value));
    return clprim__enqueue(ctx, single, tiles, k.wg);
  }
  return scan_level(ctx, &c, &k, in, out, n, c.use_init, inclusive, 0);
}

clprim_status clprim_scan_inclusive_op(clprim_context *ctx, size_t n, const clprim_operator *op,
                                       clprim_buffer in, const void *init, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "scan_inclusive_op"));
  return clprim__call_end(ctx, scan_op(ctx, n, op, in, init, out, 1));
}

clprim_status clprim_scan_exclusive_op(clprim_context *ctx, size_t n, const clprim_operator *op,
                                       clprim_buffer in, const void *init, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "scan_exclusive_op"));
  return clprim__call_end(ctx, scan_op(ctx, n, op, in, init, out, 0));
}

/* Scan by key: how cl/operators.cl's sbk_head compares keys of type t
 * (heads.h's RUN_KEYS_*; RUN_KEYS_FLAGS for the levels above). */
static cl_uint sbk_kind(clprim_type t) {
  return t == CLPRIM_INT32 || t == CLPRIM_UINT32   ? RUN_KEYS_32
         : t == CLPRIM_INT64 || t == CLPRIM_UINT64 ? RUN_KEYS_64
         : t == CLPRIM_FLOAT                       ? RUN_KEYS_FLOAT
                                                   : RUN_KEYS_DOUBLE;
}

/* One level of the scan by key: n elements of in into out, their run heads
 * from keys by kind; the tiles' (flag, total) pairs scanned by the next
 * level. */
static clprim_status sbk_level(clprim_context *ctx, const struct ops_call *c,
                               const struct scan_kernels *k, cl_mem keys, cl_uint kind, cl_mem in,
                               cl_mem out, size_t n, cl_int use_init, cl_int inclusive,
                               unsigned level) {
  const size_t tiles = clprim__div_up(n, (size_t)k->wg * k->items);
  const cl_ulong n64 = n;
  cl_mem offsets = in; /* unused with one tile */
  cl_int use_offsets = tiles > 1;
  if (tiles > 1) {
    char name[48];
    cl_mem flags;
    snprintf(name, sizeof name, SLOT_TOTALS, level);
    CLPRIM_CHECK(clprim__scratch(ctx, name, tiles * c->op->size, &offsets));
    snprintf(name, sizeof name, SLOT_FLAGS, level);
    CLPRIM_CHECK(clprim__scratch(ctx, name, tiles * 4, &flags));
    CLPRIM_CHECK(clprim__set_args(k->reduce, 9, sizeof keys, &keys, sizeof kind, &kind,
                                  sizeof in, &in, sizeof n64, &n64, sizeof flags, &flags,
                                  sizeof offsets, &offsets, sizeof use_init, &use_init,
                                  c->op->size, c->init, c->prm.size, c->prm.value));
    CLPRIM_CHECK(clprim__enqueue(ctx, k->reduce, tiles, k->wg));
    CLPRIM_CHECK(
        sbk_level(ctx, c, k, flags, RUN_KEYS_FLAGS, offsets, offsets, tiles, 0, 0, level + 1));
  }
  CLPRIM_CHECK(clprim__set_args(k->tiles, 11, sizeof keys, &keys, sizeof kind, &kind, sizeof in,
                                &in, sizeof out, &out, sizeof n64, &n64, sizeof offsets, &offsets,
                                sizeof use_offsets, &use_offsets, sizeof use_init, &use_init,
                                c->op->size, c->init, sizeof inclusive, &inclusive, c->prm.size,
                                c->prm.value));
  return clprim__enqueue(ctx, k->tiles, tiles, k->wg);
}

static clprim_status scan_by_key_op(clprim_context *ctx, size_t n, clprim_type key_type,
                                    clprim_buffer keys_range, const clprim_operator *op,
                                    clprim_buffer values_range, const void *init,
                                    clprim_buffer out_range, int inclusive) {
  CLPRIM_CHECK(clprim__operator_check(ctx, op));
  CLPRIM_CHECK(clprim__check_type(ctx, "key_type", key_type));
  cl_mem keys, values, out;
  CLPRIM_CHECK(clprim__range(ctx, "keys", keys_range, clprim_type_size(key_type), n, CLPRIM__READ,
                             &keys));
  CLPRIM_CHECK(clprim__range(ctx, "values", values_range, op->size, n, CLPRIM__READ, &values));
  CLPRIM_CHECK(clprim__range(ctx, "out", out_range, op->size, n,
                             CLPRIM__OUT_ALL | CLPRIM__SAME_OK, &out));
  if (n && out == keys) /* in place is for the values */
    return clprim__invalid(ctx, "out is the keys' range (in place is for the values)");
  struct scan_kernels k;
  CLPRIM_CHECK(ops_kernel(ctx, op, "op_sbk_reduce", &k.reduce, &k.wg, &k.items));
  CLPRIM_CHECK(ops_kernel(ctx, op, "op_sbk_scan_tiles", &k.tiles, NULL, NULL));
  if (n == 0) return CLPRIM_SUCCESS;
  struct ops_call c;
  ops_call(ctx, op, init, &c);
  return sbk_level(ctx, &c, &k, keys, sbk_kind(key_type), values, out, n, c.use_init, inclusive,
                   0);
}

clprim_status clprim_scan_inclusive_by_key_op(clprim_context *ctx, size_t n, clprim_type key_type,
                                              clprim_buffer keys, const clprim_operator *op,
                                              clprim_buffer values, const void *init,
                                              clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "scan_inclusive_by_key_op"));
  return clprim__call_end(
      ctx, scan_by_key_op(ctx, n, key_type, keys, op, values, init, out, 1));
}

clprim_status clprim_scan_exclusive_by_key_op(clprim_context *ctx, size_t n, clprim_type key_type,
                                              clprim_buffer keys, const clprim_operator *op,
                                              clprim_buffer values, const void *init,
                                              clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "scan_exclusive_by_key_op"));
  return clprim__call_end(
      ctx, scan_by_key_op(ctx, n, key_type, keys, op, values, init, out, 0));
}

static clprim_status segmented_op(clprim_context *ctx, size_t n, const clprim_operator *op,
                                  clprim_buffer in_range, size_t segments, clprim_type offset_type,
                                  clprim_buffer begins_range, clprim_buffer ends_range,
                                  const void *init, clprim_buffer out_range) {
  CLPRIM_CHECK(clprim__operator_check(ctx, op));
  cl_mem in, begins, ends, out;
  CLPRIM_CHECK(clprim__range(ctx, "in", in_range, op->size, n, CLPRIM__READ, &in));
  CLPRIM_CHECK(clprim__segment_offsets(ctx, offset_type, segments, begins_range, ends_range,
                                       &begins, &ends));
  CLPRIM_CHECK(clprim__range(ctx, "out", out_range, op->size, segments, CLPRIM__OUT_ALL, &out));
  if (segments == 0) return CLPRIM_SUCCESS;
  const char *offsets = clprim__offsets_option(offset_type);
  cl_kernel check, k;
  unsigned wg;
  CLPRIM_CHECK(ops_kernel_offsets(ctx, op, "segments_check", offsets, &check, NULL, NULL));
  CLPRIM_CHECK(ops_kernel_offsets(ctx, op, "op_segmented", offsets, &k, &wg, NULL));
  CLPRIM_CHECK(clprim__check_segments(ctx, check, begins, ends, segments, n));
  struct ops_call c;
  ops_call(ctx, op, init, &c);
  const cl_ulong segs = segments;
  CLPRIM_CHECK(clprim__set_args(k, 8, sizeof in, &in, sizeof begins, &begins, sizeof ends, &ends,
                                sizeof segs, &segs, sizeof out, &out, sizeof c.use_init,
                                &c.use_init, op->size, c.init, c.prm.size, c.prm.value));
  /* The cpu path: a work-item a segment, several segments each. */
  const size_t most = clprim__launch(ctx).max_groups * (wg == 1 ? 16 : 1);
  return clprim__enqueue(ctx, k, segments < most ? segments : most, wg);
}

clprim_status clprim_segmented_reduce_op(clprim_context *ctx, size_t n, const clprim_operator *op,
                                         clprim_buffer in, size_t segments,
                                         clprim_type offset_type, clprim_buffer begin_offsets,
                                         clprim_buffer end_offsets, const void *init,
                                         clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "segmented_reduce_op"));
  return clprim__call_end(ctx, segmented_op(ctx, n, op, in, segments, offset_type, begin_offsets,
                                            end_offsets, init, out));
}

static clprim_status runs_op(clprim_context *ctx, size_t n, clprim_type key_type,
                             clprim_buffer keys_range, const clprim_operator *op,
                             clprim_buffer values_range, const void *init,
                             clprim_buffer unique_range, clprim_buffer sums_range, uint64_t *count,
                             clprim_buffer count_range) {
  CLPRIM_CHECK(clprim__operator_check(ctx, op));
  CLPRIM_CHECK(clprim__check_type(ctx, "key_type", key_type));
  const size_t ks = clprim_type_size(key_type);
  cl_mem keys, values, unique_keys, sums, count_buf = NULL;
  CLPRIM_CHECK(clprim__range(ctx, "keys", keys_range, ks, n, CLPRIM__READ, &keys));
  CLPRIM_CHECK(clprim__range(ctx, "values", values_range, op->size, n, CLPRIM__READ, &values));
  CLPRIM_CHECK(clprim__range(ctx, "unique_keys", unique_range, ks, n, CLPRIM__OUT, &unique_keys));
  CLPRIM_CHECK(clprim__range(ctx, "sums", sums_range, op->size, n, CLPRIM__OUT, &sums));
  if (count_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "count_out", count_range, 8, 1, CLPRIM__OUT_ALL, &count_buf));
  cl_kernel k;
  unsigned wg;
  CLPRIM_CHECK(ops_kernel(ctx, op, "op_runs", &k, &wg, NULL));
  if (n == 0) {
    const cl_ulong zero = 0;
    if (count_buf) CLPRIM_CHECK(clprim__fill(ctx, count_buf, &zero, 8, 0, 8));
    if (count) *count = 0;
    return CLPRIM_SUCCESS;
  }
  cl_mem heads;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_HEADS, n * 8, &heads));
  if (!count_buf) CLPRIM_CHECK(clprim__scratch(ctx, SLOT_COUNT, 8, &count_buf));
  struct ops_call c;
  ops_call(ctx, op, init, &c);
  const cl_ulong n64 = n;
  CLPRIM_CHECK(clprim__set_args(k, 8, sizeof values, &values, sizeof heads, &heads,
                                sizeof count_buf, &count_buf, sizeof n64, &n64, sizeof sums, &sums,
                                sizeof c.use_init, &c.use_init, op->size, c.init, c.prm.size,
                                c.prm.value));
  /* The runs' keys, heads and count (select's compaction of run heads, as
   * unique_by_key finds them), then a work-group a run. */
  struct clprim_runs_select r;
  memset(&r, 0, sizeof r);
  r.n = n, r.kind = RUN_HEAD, r.key_type = key_type, r.keys = keys, r.values_out = unique_keys;
  r.indices = heads, r.count_out = count_buf, r.index64 = 1;
  CLPRIM_CHECK(clprim__select_runs(ctx, &r));
  const size_t most = clprim__launch(ctx).max_groups * (wg == 1 ? 16 : 1);
  CLPRIM_CHECK(clprim__enqueue(ctx, k, n < most ? n : most, wg));
  return clprim__deliver_count(ctx, count_buf, 0, NULL, count);
}

clprim_status clprim_reduce_by_key_op(clprim_context *ctx, size_t n, clprim_type key_type,
                                      clprim_buffer keys, const clprim_operator *op,
                                      clprim_buffer values, const void *init,
                                      clprim_buffer unique_keys, clprim_buffer sums,
                                      uint64_t *count, clprim_buffer count_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "reduce_by_key_op"));
  return clprim__call_end(ctx, runs_op(ctx, n, key_type, keys, op, values, init, unique_keys,
                                       sums, count, count_out));
}

static clprim_status adjacent_op(clprim_context *ctx, size_t n, const clprim_operator *op,
                                 clprim_buffer in_range, clprim_buffer out_range) {
  CLPRIM_CHECK(clprim__operator_check(ctx, op));
  cl_mem in, out;
  CLPRIM_CHECK(clprim__range(ctx, "in", in_range, op->size, n, CLPRIM__READ, &in));
  CLPRIM_CHECK(clprim__range(ctx, "out", out_range, op->size, n, CLPRIM__OUT_ALL, &out));
  cl_kernel k;
  unsigned wg;
  CLPRIM_CHECK(ops_kernel(ctx, op, "op_adjacent", &k, &wg, NULL));
  if (n == 0) return CLPRIM_SUCCESS;
  struct ops_call c;
  ops_call(ctx, op, NULL, &c);
  const cl_ulong n64 = n;
  const size_t groups = clprim__div_up(n, wg), most = clprim__launch(ctx).max_groups * 4;
  CLPRIM_CHECK(clprim__set_args(k, 4, sizeof in, &in, sizeof out, &out, sizeof n64, &n64,
                                c.prm.size, c.prm.value));
  return clprim__enqueue(ctx, k, groups < most ? groups : most, wg);
}

clprim_status clprim_adjacent_difference_op(clprim_context *ctx, size_t n,
                                            const clprim_operator *op, clprim_buffer in,
                                            clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "adjacent_difference_op"));
  return clprim__call_end(ctx, adjacent_op(ctx, n, op, in, out));
}
