/* reduce_by_key.c: reduce-by-key. Over runs of equal consecutive keys (CUB
 * ReduceByKey semantics), kernels in cl/reduce_by_key.cl: head counts per
 * tile, their scan, the per-tile reduction (clprim__count_scan_scatter), and the fix-up of
 * segments that span tiles. With CLPRIM_EXACT: the runs found and compacted
 * as the runs family does it (clprim__select_runs: the keys at the heads,
 * the heads' positions and the count, on the device), then each run's exact
 * sum (rbk_exact, the exact accumulator). Dense keys
 * (clprim_reduce_by_key_dense): the histogram engine with sums
 * (src/histogram.c, cl/histogram.cl; with CLPRIM_EXACT its exact kernels). */
#include "histogram.h"
#include "select.h"
#include "engine/count_scan_scatter.h"
#include "engine/exact.h"
#include "../cl/internal/heads.h"

#include <stdlib.h>
#include <string.h>

/* Scratch buffers of this family (clprim__scratch names them). */
#define SLOT_OFFSETS "reduce_by_key: tile offsets" /* tile head counts, scanned */
#define SLOT_CARRY "reduce_by_key: carries"        /* per tile: the sum before its first head */
#define SLOT_LAST "reduce_by_key: last parts"      /* per tile: its last segment's partial sum */
#define SLOT_HEADS "reduce_by_key: run heads"      /* CLPRIM_EXACT: where each run starts */
#define SLOT_COUNT "reduce_by_key: run count"      /* CLPRIM_EXACT: the runs' count (uint64) */
#define SLOT_CONT "reduce_by_key: going-on pieces" /* CLPRIM_EXACT: per chunk, a record */
#define SLOT_START "reduce_by_key: first pieces"   /* CLPRIM_EXACT: per chunk, a record */
#define SLOT_LONG "reduce_by_key: long runs"       /* CLPRIM_EXACT: per chunk, a run or none */

/* The knobs and table: elements per work-item over runs (4, 8 or 16); with
 * CLPRIM_EXACT the longest run that one team sums alone (longer ones are
 * cut into pieces of that many elements; tests make it small) and the
 * work-items of a team (a power of two; at most the work-group; -1: 32,
 * or an eighth of a work-group below 256). */
enum { RBK_ITEMS, RBK_EXACT_PIECE, RBK_EXACT_TEAM, RBK_KNOBS };
static const struct clprim_knob rbk_knobs[RBK_KNOBS] = {
    {"items", 4, 16}, {"exact_piece", 64, 1 << 26}, {"exact_team", 1, 1024}};
static const struct clprim_tuning_row rbk_table[] = {
    {0, 0, NULL, 0, 0, CLPRIM__KNOB(RBK_ITEMS), {8}, "8 elements a work-item (H100)"},
    {0, 0, NULL, 0, 0, CLPRIM__KNOB(RBK_EXACT_PIECE), {0, 1 << 16},
     "portable: exact runs in pieces of 2^16 (256 elements a work-item of 256; chosen, not "
     "measured)"},
    {0, 0, "H200", 0, 0, CLPRIM__KNOB(0), {16},
     "H200, 2026-11-29, 2^28 elements in 2^20 sorted runs: int32 values 0.884 ms against 1.127 "
     "at 8, double 1.310 against 1.385 (CUB 1.311); found by clprim-tune"}};
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_reduce_by_key = {
    "reduce_by_key", rbk_knobs, RBK_KNOBS, rbk_table, sizeof rbk_table / sizeof rbk_table[0], 0,
    prebuild};

static unsigned rbk_items(const clprim_context *ctx) {
  long long v[RBK_KNOBS];
  clprim__tuned(ctx, &clprim__family_reduce_by_key, 0, 0, v);
  return v[RBK_ITEMS] == 4 || v[RBK_ITEMS] == 8 || v[RBK_ITEMS] == 16 ? (unsigned)v[RBK_ITEMS]
                                                                       : 8u;
}

static size_t rbk_exact_piece(const clprim_context *ctx) {
  long long v[RBK_KNOBS];
  clprim__tuned(ctx, &clprim__family_reduce_by_key, 0, 0, v);
  return v[RBK_EXACT_PIECE] >= 64 ? (size_t)v[RBK_EXACT_PIECE] : (size_t)1 << 16;
}

/* The work-items of a team for work-groups of wg (a power of two), for
 * sums of type: doubled while the teams' words (and flag words) would
 * take more than the device's local memory, less 1 KiB and the fast
 * path's tree (two numbers of 8 bytes a work-item). */
static unsigned rbk_exact_team(const clprim_context *ctx, unsigned wg, clprim_type type) {
  long long v[RBK_KNOBS];
  clprim__tuned(ctx, &clprim__family_reduce_by_key, 0, 0, v);
  const long long t = v[RBK_EXACT_TEAM];
  unsigned team = t >= 1 && t <= wg && (t & (t - 1)) == 0 ? (unsigned)t
                  : wg >= 256                           ? 32u
                  : wg >= 8                             ? wg / 8
                                                        : 1u;
  const uint64_t bytes = (clprim__exact_record_words(type) - 1) * 8 + 4;
  const uint64_t tree = (uint64_t)wg * 16;
  const uint64_t room =
      ctx->info.local_mem_size > 2048 + tree ? ctx->info.local_mem_size - 1024 - tree : 1024;
  while (team < wg && (uint64_t)(wg / team) * bytes > room) team *= 2;
  return team;
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

/* CLPRIM_EXACT over runs (n > 0; cl/reduce_by_key.cl): the three kernels
 * built first; the runs' keys, heads and count by select's compaction of
 * run heads (unique_keys and count_out written); then the runs of at most
 * `piece` elements, a team of work-items each (a work-item on the cpu
 * path), and the longer ones in pieces over the chunks of `piece`
 * elements, then folded; *count read last. The count stays on the device: every launch's
 * size follows from n. In a dry run both steps collect their programs. */
static clprim_status exact_runs(clprim_context *ctx, size_t n, clprim_type key_type, cl_mem keys,
                                clprim_type value_type, cl_mem values, cl_mem unique_keys,
                                cl_mem sums, uint64_t *count, cl_mem count_out) {
  const int cpu = ctx->info.path == CLPRIM_PATH_CPU, index64 = (uint64_t)n > UINT32_MAX;
  const struct clprim_launch l = clprim__launch(ctx);
  const unsigned wg = cpu ? 1u : l.wg;
  const size_t piece = rbk_exact_piece(ctx), chunks = n / piece + (n % piece != 0);
  const unsigned team = rbk_exact_team(ctx, wg, value_type);
  char options[240];
  snprintf(options, sizeof options,
           "-DT=%s -DT_BITS=%u -DWG=%u -DIDX_T=%s -DPIECE=%zuul -DTEAM=%u",
           clprim__cl_type(value_type), (unsigned)clprim_type_size(value_type) * 8, wg,
           index64 ? "ulong" : "uint", piece, team);
  clprim__exact_options(ctx, options + strlen(options), sizeof options - strlen(options));
  cl_kernel runs_kernel = NULL, pieces_kernel = NULL, fold_kernel = NULL;
  /* (one program of the three, on every device) */
  static const char *const three = "rbk_exact rbk_exact_pieces rbk_exact_fold";
  const struct clprim_kernel_request req[3] = {
      {"reduce_by_key.cl", NULL, options, "rbk_exact", three, &runs_kernel, NULL, three},
      {"reduce_by_key.cl", NULL, options, "rbk_exact_pieces", three, &pieces_kernel, NULL, three},
      {"reduce_by_key.cl", NULL, options, "rbk_exact_fold", three, &fold_kernel, NULL, three}};
  clprim_status st = clprim__kernels(ctx, req, 3);
  const int dry = st == CLPRIM__COLLECTED && ctx->collect;
  if (!dry) CLPRIM_CHECK(st);
  const size_t record = clprim__exact_record_words(value_type) * 8;
  cl_mem heads, count_buf = count_out, cont, start, long_run;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_HEADS, n * (index64 ? 8 : 4), &heads));
  if (!count_buf) CLPRIM_CHECK(clprim__scratch(ctx, SLOT_COUNT, 8, &count_buf));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_CONT, chunks * record, &cont));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_START, chunks * record, &start));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_LONG, chunks * 8, &long_run));
  const cl_ulong n64 = n;
  if (!dry) {
    CLPRIM_CHECK(clprim__set_args(runs_kernel, 5, sizeof values, &values, sizeof heads, &heads,
                                  sizeof count_buf, &count_buf, sizeof n64, &n64, sizeof sums,
                                  &sums));
    CLPRIM_CHECK(clprim__set_args(pieces_kernel, 7, sizeof values, &values, sizeof heads, &heads,
                                  sizeof count_buf, &count_buf, sizeof n64, &n64, sizeof cont,
                                  &cont, sizeof start, &start, sizeof long_run, &long_run));
    CLPRIM_CHECK(clprim__set_args(fold_kernel, 7, sizeof heads, &heads, sizeof count_buf,
                                  &count_buf, sizeof n64, &n64, sizeof cont, &cont, sizeof start,
                                  &start, sizeof long_run, &long_run, sizeof sums, &sums));
  }
  struct clprim_runs_select r;
  memset(&r, 0, sizeof r);
  r.n = n, r.kind = RUN_HEAD, r.key_type = key_type, r.keys = keys, r.values_out = unique_keys;
  r.indices = heads, r.count_out = count_buf, r.index64 = index64;
  st = clprim__select_runs(ctx, &r);
  if (dry) return st == CLPRIM_SUCCESS ? CLPRIM__COLLECTED : st;
  CLPRIM_CHECK(st);
  /* The runs in turn (at most n of them), then the chunks in turn: as many
   * work-groups as a grid-stride pass takes, fewer for fewer. */
  const size_t most = cpu ? clprim__cpu_shares(ctx, SIZE_MAX, 1) : l.max_groups;
  const size_t run_groups = (n + wg / team - 1) / (wg / team);
  CLPRIM_CHECK(clprim__enqueue(ctx, runs_kernel, run_groups < most ? run_groups : most, wg));
  CLPRIM_CHECK(clprim__enqueue(ctx, pieces_kernel, chunks < most ? chunks : most, wg));
  CLPRIM_CHECK(clprim__enqueue(ctx, fold_kernel, chunks < most ? chunks : most, wg));
  return clprim__deliver_count(ctx, count_buf, 0, NULL, count);
}

static clprim_status reduce_by_key(clprim_context *ctx, size_t n, clprim_type key_type,
                                   clprim_buffer keys_range, clprim_type value_type,
                                   clprim_buffer values_range, unsigned flags,
                                   clprim_buffer unique_range, clprim_buffer sums_range,
                                   uint64_t *count, clprim_buffer count_range) {
  CLPRIM_CHECK(clprim__check_type(ctx, "key_type", key_type));
  CLPRIM_CHECK(clprim__check_type(ctx, "value_type", value_type));
  CLPRIM_CHECK(clprim__check_flags(ctx, flags, CLPRIM_EXACT));
  const int exact = (flags & CLPRIM_EXACT) != 0;
  if (exact) CLPRIM_CHECK(clprim__exact_check(ctx, value_type, "value_type"));
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
  if (exact)
    return exact_runs(ctx, n, key_type, keys, value_type, values, unique_keys, sums, count,
                      count_buffer);

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
  /* Keys are compared with == (integers build as the unsigned type of
   * their width: core.h, clprim__key_build_type), and values load as the
   * type they are summed in (int32 / int64 as uint / ulong: the same bits,
   * the same modular sum), so that types share programs. */
  snprintf(options, sizeof options, "-DK_T=%s -DV_T=%s -DS_T=%s -DWG=%u -DITEMS=%u",
           clprim__cl_type(clprim__key_build_type(key_type)), sum_type[value_type],
           sum_type[value_type], wg, items);
  cl_kernel count_kernel, reduce_kernel, fixup_kernel;
  /* (CPU devices: the three as one program, without rbk_exact) */
  static const char *const plain = "rbk_count rbk_reduce rbk_fixup";
  const struct clprim_kernel_request req[3] = {
      {"reduce_by_key.cl", NULL, options, "rbk_count", NULL, &count_kernel, NULL, plain},
      {"reduce_by_key.cl", NULL, options, "rbk_reduce", NULL, &reduce_kernel, NULL, plain},
      {"reduce_by_key.cl", NULL, options, "rbk_fixup", NULL, &fixup_kernel, NULL, plain}};
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
                                   clprim_buffer values, unsigned flags,
                                   clprim_buffer unique_keys, clprim_buffer sums,
                                   uint64_t *count, clprim_buffer count_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "reduce_by_key"));
  return clprim__call_end(ctx, reduce_by_key(ctx, n, key_type, keys, value_type, values, flags,
                                             unique_keys, sums, count, count_out));
}

/* Dry runs (core/prebuild.c): dense sums into bins in local memory, beyond
 * it and (GPUs) the binned path's, with and without counts, subnormals kept
 * or not, and exact (float and double); runs of each value type by integer
 * keys, float and double also with CLPRIM_EXACT. */
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
    for (clprim_type value = 0; value < CLPRIM_TYPE_COUNT; ++value) {
      clprim_reduce_by_key(ctx, (size_t)1 << 16, t, in, value, in2, 0, out, out2, &u, none);
      if (value == CLPRIM_FLOAT || value == CLPRIM_DOUBLE)
        clprim_reduce_by_key(ctx, (size_t)1 << 16, t, in, value, in2, CLPRIM_EXACT, out, out2, &u,
                             none);
    }
}
