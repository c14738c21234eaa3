/* select.c: stream compaction (select by predicate or flags) and stable
 * partition, kernels in cl/select.cl (Bakunas-Milanowski et al., 2016):
 * masks and tile counts, a scan of the tile counts, then the scatter. */
#include "select.h"
#include "engine/stages.h"
#include "engine/count_scan_scatter.h"
#include "engine/lookback.h"
#include "../cl/internal/heads.h"
#include "../cl/internal/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What phase 1 evaluates. */
enum select_source {
  SOURCE_PREDICATE,
  SOURCE_FLAGS_UINT8,
  SOURCE_FLAGS_INT32,
  SOURCE_EXPRESSION,
  SOURCE_RUNS,    /* edges of runs of equal keys (clprim__select_runs) */
  SOURCE_PIPELINE /* a pipeline's filters (clprim__select_pipeline) */
};

/* A call as the caller made it (ranges), then as it runs (cl_mems that
 * hold each range from byte 0; NULL where not given). */
struct select_call {
  const char *name; /* the public call ("select_flagged") */
  size_t n;
  clprim_type type;
  clprim_buffer in_range, stencil_range; /* in may be NULL for a stencil without values */
  enum select_source source;
  const clprim_predicate *pred; /* SOURCE_PREDICATE only */
  const char *expression;       /* SOURCE_EXPRESSION only */
  int run_kind;                 /* SOURCE_RUNS only: RUN_HEAD, ... (cl/internal/heads.h) */
  int by_key;                   /* SOURCE_RUNS only: src holds keys of key_type, in the values */
  cl_mem run_ends;              /* SOURCE_RUNS single pass: indices get run lengths (runs.c) */
  clprim_type key_type;
  int stencil_type; /* the caller's clprim_flag_type (flagged calls), else -1 */
  int partition; /* 0: select; PARTITION_STABLE or PARTITION_REVERSED_REST (layout.h) */
  unsigned flags;
  const double *params;                   /* SOURCE_EXPRESSION: p0..p7, or NULL (none) */
  const char *pipe_prefix;                /* SOURCE_PIPELINE only: the pipeline's source */
  struct clprim_extra_args *extra;        /* SOURCE_PIPELINE only: its kernel arguments */
  clprim_buffer values_range, indices_range, count_range;
  uint64_t *count;

  cl_mem in, src; /* src: what phase 1 reads, in or the stencil */
  cl_mem values, indices, count_out;
  int index64;
};

/* Work-items per work-group; a tile is 32 elements per work-item. The cpu
 * path: one work-item per work-group (cl/select.cl). */
static unsigned select_wg(const clprim_context *ctx) {
  return ctx->info.path == CLPRIM_PATH_CPU ? 1u : clprim__launch(ctx).wg;
}

/* The tiles of n elements: on the cpu path the work-items' shares of the
 * mask words. */
static size_t select_tiles(const clprim_context *ctx, size_t n) {
  const size_t tile = (size_t)select_wg(ctx) * 32;
  return ctx->info.path == CLPRIM_PATH_CPU ? clprim__cpu_shares(ctx, n, tile)
                                           : n / tile + (n % tile != 0);
}

size_t clprim__select_tile(const clprim_context *ctx) { return (size_t)select_wg(ctx) * 32; }

/* The single pass's knobs and table: whether it runs (nv_ptx only: the
 * look-back needs work-groups that make progress while others wait; 0
 * there: the three phases, which tests run too) and its elements per
 * work-item (the tile is packed in 32 KiB of local memory). */
enum { SELECT_SINGLE_PASS, SELECT_ITEMS };
static const struct clprim_knob select_knobs[] = {{"single_pass", 0, 1}, {"items", 4, 32}};
static const struct clprim_tuning_row select_table[] = {
    {1u << CLPRIM_PATH_NV_PTX, 0, NULL, 4, 0, CLPRIM__KNOB(SELECT_SINGLE_PASS) | CLPRIM__KNOB(SELECT_ITEMS),
     {1, 32}, "nv_ptx: one pass, 128 bytes a work-item (measured fastest on the H100)"},
    {1u << CLPRIM_PATH_NV_PTX, 0, NULL, 8, 0, CLPRIM__KNOB(SELECT_SINGLE_PASS) | CLPRIM__KNOB(SELECT_ITEMS),
     {1, 16}, "nv_ptx: one pass, 128 bytes a work-item"},
};
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_select = {
    "select", select_knobs, 2, select_table, sizeof select_table / sizeof select_table[0], 0,
    prebuild};

/* Elements per work-item of the single-pass kernel, or 0 where the three
 * phases run (and always for stable partitions: the failing elements'
 * positions need the total first). */
static unsigned single_pass_items(const clprim_context *ctx, clprim_type type, int partition) {
  const unsigned es = (unsigned)clprim_type_size(type), wg = select_wg(ctx);
  long long v[2];
  clprim__tuned(ctx, &clprim__family_select, es, 0, v);
  if (partition == PARTITION_STABLE || ctx->info.path != CLPRIM_PATH_NV_PTX ||
      v[SELECT_SINGLE_PASS] != 1)
    return 0;
  const long long items = v[SELECT_ITEMS];
  return items % 4 == 0 && items * es * wg <= 32768 ? (unsigned)items : 128 / es;
}

size_t clprim__select_single_pass_tile(const clprim_context *ctx, clprim_type type) {
  return (size_t)select_wg(ctx) * single_pass_items(ctx, type, 0);
}

static int is_integer(clprim_type type) { return type != CLPRIM_FLOAT && type != CLPRIM_DOUBLE; }

/* Every argument check, and the ranges resolved; nothing is enqueued
 * before they all pass (but a range's temporary copy). */
static clprim_status check_call(clprim_context *ctx, struct select_call *c) {
  CLPRIM_CHECK(clprim__check_type(ctx, "type", c->type));
  const unsigned allowed = CLPRIM_INDICES_64 | (c->partition ? CLPRIM_PARTITION_REVERSED : 0u);
  CLPRIM_CHECK(clprim__check_flags(ctx, c->flags, allowed));
  if (c->flags & CLPRIM_PARTITION_REVERSED) c->partition = PARTITION_REVERSED_REST;
  if (c->stencil_type >= 0 && c->source == SOURCE_PREDICATE)
    return clprim__invalid(ctx, "stencil_type (%d) is not a clprim_flag_type", c->stencil_type);
  /* One expression, which cannot reach outside the macro it becomes. */
  if (c->source == SOURCE_EXPRESSION && !clprim__expression_ok(c->expression))
    return clprim__invalid(ctx, "expression is %s", c->expression ? "not one expression" : "NULL");
  if (c->source == SOURCE_PREDICATE) {
    if (!c->pred) return clprim__invalid(ctx, "pred is required");
    if ((unsigned)c->pred->op >= CLPRIM_PRED_COUNT)
      return clprim__invalid(ctx, "pred->op (%d) is not a clprim_pred_op", (int)c->pred->op);
    if (c->pred->op == CLPRIM_PRED_MASK_EQ && !is_integer(c->type))
      return clprim__invalid(ctx,
                             "pred->op is CLPRIM_PRED_MASK_EQ, which takes integer types only");
  }
  if (!c->values_range.mem && !c->indices_range.mem && !c->count_range.mem && !c->count)
    return clprim__invalid(
        ctx, "no output is given (values, indices, count and count_out are all NULL)");
  c->index64 = (c->flags & CLPRIM_INDICES_64) != 0;
  if (c->indices_range.mem && !c->index64 && (uint64_t)c->n > ((uint64_t)1 << 32))
    return clprim__invalid(ctx, "indices are uint32 but n (%zu) is above 2^32 (CLPRIM_INDICES_64)",
                           c->n);
  const size_t es = clprim_type_size(c->type);
  const int reads_flags = c->source == SOURCE_FLAGS_UINT8 || c->source == SOURCE_FLAGS_INT32;
  if (c->in_range.mem || !reads_flags || c->values_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "in", c->in_range, es, c->n, CLPRIM__READ, &c->in));
  if (reads_flags)
    CLPRIM_CHECK(clprim__range(ctx, "stencil", c->stencil_range,
                               c->source == SOURCE_FLAGS_INT32 ? 4 : 1, c->n, CLPRIM__READ,
                               &c->src));
  /* Select writes only the first count elements; partition writes all n. */
  const unsigned use = c->partition ? CLPRIM__OUT_ALL : CLPRIM__OUT;
  if (c->values_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "values", c->values_range, es, c->n, use, &c->values));
  if (c->indices_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "indices", c->indices_range, c->index64 ? 8 : 4, c->n, use,
                               &c->indices));
  if (c->count_range.mem)
    CLPRIM_CHECK(
        clprim__range(ctx, "count_out", c->count_range, 8, 1, CLPRIM__OUT_ALL, &c->count_out));
  if (!reads_flags) c->src = c->in; /* once every range is resolved (call.c) */
  return CLPRIM_SUCCESS;
}

/* The built-in predicate's kernel arguments: op, a and b (zero when unused). */
struct pred_args {
  cl_int op;
  clprim_value a, b;
};
static struct pred_args pred_args(const struct select_call *c) {
  struct pred_args p;
  memset(&p, 0, sizeof p);
  if (c->pred) p.op = (cl_int)c->pred->op, p.a = c->pred->a, p.b = c->pred->b;
  return p;
}

/* The single-pass kernel (cl/select.cl, nv_ptx): one launch after zeroing
 * the tile states. */
static clprim_status select_single_pass(clprim_context *ctx, const struct select_call *c,
                                        cl_kernel kernel, unsigned wg, unsigned items) {
  const size_t tile = (size_t)wg * items, tiles = c->n / tile + (c->n % tile != 0);
  /* The kernel writes the count where the caller wants it on the device,
   * so that one command writes every output. */
  cl_mem state, total = c->count_out;
  if (!total) CLPRIM_CHECK(clprim__scratch(ctx, "select: total", 8, &total));
  CLPRIM_CHECK(clprim__lookback_state(ctx, "select: tile states", tiles, 62, &state));
  const size_t es = clprim_type_size(c->type);
  struct pred_args p = pred_args(c);
  /* Unused buffers are bound to the state buffer; the kernel does not touch them. */
  cl_mem in = c->in ? c->in : state;
  cl_mem values = c->values ? c->values : state;
  cl_mem indices = c->indices ? c->indices : state;
  cl_ulong n64 = c->n;
  cl_uint tiles32 = (cl_uint)tiles;
  cl_int want_values = c->values != NULL;
  cl_int want_indices = c->indices == NULL ? 0 : c->run_ends ? 2 : 1;
  cl_int index64 = c->index64;
  cl_mem run_ends = c->run_ends ? c->run_ends : state;
  cl_int reversed_rest = c->partition == PARTITION_REVERSED_REST;
  CLPRIM_CHECK(clprim__set_args(kernel, 16, sizeof c->src, &c->src, sizeof in, &in, sizeof n64,
                                &n64, sizeof p.op, &p.op, es, &p.a, es, &p.b, sizeof state, &state,
                                sizeof tiles32, &tiles32, sizeof values, &values, sizeof indices,
                                &indices, sizeof want_values, &want_values, sizeof want_indices,
                                &want_indices, sizeof index64, &index64, sizeof total, &total,
                                sizeof run_ends, &run_ends, sizeof reversed_rest,
                                &reversed_rest));
  if (c->extra) {
    c->extra->first = 16;
    CLPRIM_CHECK(clprim__set_extra_args(kernel, c->extra));
  }
  CLPRIM_CHECK(clprim__enqueue(ctx, kernel, tiles, wg));
  return clprim__deliver_count(ctx, total, 0, NULL, c->count);
}

/* The build options of select.cl for type and what phase 1 reads
 * (`source`: "" for built-in predicates): select, partition and the
 * three-way partition share one program per type and source, with ITEMS as
 * select's single pass uses it. */
static void program_options(const clprim_context *ctx, clprim_type type, const char *source,
                            char *options, size_t size) {
  const unsigned items = single_pass_items(ctx, type, 0);
  snprintf(options, size, "-DT=%s%s -DWG=%u%s", clprim__cl_type(type),
           is_integer(type) ? " -DT_INTEGER" : "", select_wg(ctx), source);
  if (items) snprintf(options + strlen(options), size - strlen(options), " -DITEMS=%u", items);
}

static clprim_status select_run(clprim_context *ctx, const struct select_call *c);

/* An expression with parameters: a pipeline of one filter (its source and
 * kernel arguments from engine/stages.c), which runs as SOURCE_PIPELINE. */
static clprim_status select_expr_params(clprim_context *ctx, const struct select_call *c) {
  struct clprim_stages stages;
  memset(&stages, 0, sizeof stages);
  stages.inputs = 1, stages.types[0] = c->type;
  struct clprim_stage filter;
  memset(&filter, 0, sizeof filter);
  filter.kind = CLPRIM__STAGE_FILTER_EXPR, filter.type = c->type;
  clprim_status st = clprim__stages_add(&stages, filter, c->expression);
  if (st == CLPRIM_SUCCESS) st = clprim__stages_source(&stages, ctx, 0);
  if (st == CLPRIM_SUCCESS) {
    struct clprim_stage_args store;
    struct clprim_extra_args extra;
    clprim__stages_args(&stages, ctx, &c->in, NULL, c->params, &store, &extra);
    struct select_call run = *c;
    run.source = SOURCE_PIPELINE, run.pipe_prefix = stages.source, run.extra = &extra;
    run.expression = NULL, run.params = NULL;
    st = select_run(ctx, &run);
    if (st != CLPRIM_SUCCESS) clprim__stages_translate_log(&stages, ctx);
  }
  clprim__stages_free(&stages);
  return st;
}

/* Runs the three phases; arguments are checked and the call begun. */
static clprim_status select_run(clprim_context *ctx, const struct select_call *c) {
  const cl_ulong zero = 0;
  if (c->n == 0) {
    if (c->count_out) CLPRIM_CHECK(clprim__fill(ctx, c->count_out, &zero, 8, 0, 8));
    if (c->count) *c->count = 0;
    return CLPRIM_SUCCESS;
  }

  if (c->source == SOURCE_EXPRESSION && c->params) return select_expr_params(ctx, c);
  const unsigned wg = select_wg(ctx);
  const size_t tiles = select_tiles(ctx, c->n);
  const size_t words = c->n / 32 + (c->n % 32 != 0);
  const int want_scatter = c->values || c->indices;
  static const char *const flag_option[6] = {"", " -DFLAG_T=uchar", " -DFLAG_T=int", "", "",
                                             " -DPIPELINE"};
  const unsigned items = single_pass_items(ctx, c->type, c->partition);
  char options[160];
  /* Where flags decide, the elements are only moved: they build as the
   * unsigned type of their width (core.h, clprim__bits_type). */
  const int flags = c->source == SOURCE_FLAGS_UINT8 || c->source == SOURCE_FLAGS_INT32;
  program_options(ctx, flags ? clprim__bits_type(c->type) : c->type, flag_option[c->source],
                  options, sizeof options);
  if (c->source == SOURCE_RUNS)
    snprintf(options + strlen(options), sizeof options - strlen(options), " -DRUNS=%d%s%s",
             c->run_kind, c->by_key ? " -DKEY_T=" : "", c->by_key ? clprim__cl_type(c->key_type) : "");

  /* A user's expression: its test function (engine/stages.c) before the
   * file, one program per distinct expression; a failed build's log is
   * put in the expression's terms. */
  struct clprim_stages tests;
  memset(&tests, 0, sizeof tests);
  clprim_status st = CLPRIM_SUCCESS;
  if (c->source == SOURCE_EXPRESSION) st = clprim__stages_tests(&tests, c->type, &c->expression, 1);
  const char *source = c->source == SOURCE_PIPELINE ? c->pipe_prefix : tests.source;

  /* Every kernel (the scan's too) is built before anything is enqueued. */
  cl_kernel masks_kernel = NULL, scatter_kernel = NULL, single_kernel = NULL;
  struct clprim_kernel_request req[2] = {
      {"select.cl", source, options, "select_masks", NULL, &masks_kernel, NULL, NULL},
      {"select.cl", source, options, "select_scatter", NULL, &scatter_kernel, NULL, NULL}};
  if (items) req[0].name = "select_single_pass", req[0].kernel = &single_kernel;
  if (st == CLPRIM_SUCCESS) {
    st = clprim__kernels(ctx, req, items || !want_scatter ? 1 : 2);
    if (st != CLPRIM_SUCCESS && tests.source) clprim__stages_translate_log(&tests, ctx);
  }
  clprim__stages_free(&tests);
  if (st != CLPRIM_SUCCESS) return st;
  if (items) return select_single_pass(ctx, c, single_kernel, wg, items);
  cl_mem masks, offsets;
  CLPRIM_CHECK(clprim__scratch(ctx, "select: masks", words * 4, &masks));
  CLPRIM_CHECK(clprim__offsets(ctx, "select: tile offsets", CLPRIM_UINT64, tiles, &offsets));

  /* Count (masks and tile counts; the parameters travel in their own type),
   * scan, scatter (unused buffers bound to a scratch buffer). */
  const size_t es = clprim_type_size(c->type);
  struct pred_args p = pred_args(c);
  cl_ulong n64 = c->n;
  CLPRIM_CHECK(clprim__set_args(masks_kernel, 7, sizeof c->src, &c->src, sizeof n64, &n64,
                                sizeof p.op, &p.op, es, &p.a, es, &p.b, sizeof masks, &masks,
                                sizeof offsets, &offsets));
  if (c->extra) {
    c->extra->first = 7;
    CLPRIM_CHECK(clprim__set_extra_args(masks_kernel, c->extra));
  }
  if (want_scatter) {
    cl_mem in = c->in ? c->in : masks;
    cl_mem values = c->values ? c->values : masks;
    cl_mem indices = c->indices ? c->indices : masks;
    cl_ulong tiles64 = tiles;
    cl_int want_values = c->values != NULL, want_indices = c->indices != NULL;
    cl_int index64 = c->index64, partition = c->partition, want_count = c->count_out != NULL;
    cl_mem count_out = c->count_out ? c->count_out : masks;
    CLPRIM_CHECK(clprim__set_args(scatter_kernel, 13, sizeof in, &in, sizeof n64, &n64,
                                  sizeof masks, &masks, sizeof offsets, &offsets, sizeof tiles64,
                                  &tiles64, sizeof values, &values, sizeof indices, &indices,
                                  sizeof want_values, &want_values, sizeof want_indices,
                                  &want_indices, sizeof index64, &index64, sizeof partition,
                                  &partition, sizeof want_count, &want_count, sizeof count_out,
                                  &count_out));
    if (c->extra) {
      c->extra->first = 13;
      CLPRIM_CHECK(clprim__set_extra_args(scatter_kernel, c->extra));
    }
  }
  const struct clprim_count_scan_scatter passes = {
      {masks_kernel, tiles, wg}, {want_scatter ? scatter_kernel : NULL, tiles, wg},
      CLPRIM_UINT64, offsets, tiles};
  CLPRIM_CHECK(clprim__count_scan_scatter(ctx, &passes));
  /* (The scatter wrote the device count.) */
  return clprim__deliver_count(ctx, offsets, tiles * 8, want_scatter ? NULL : c->count_out,
                               c->count);
}

clprim_status clprim__select_runs(clprim_context *ctx, const struct clprim_runs_select *r) {
  struct select_call c;
  memset(&c, 0, sizeof c);
  /* Keys are compared with == and values only moved: both build as
   * unsigned types where they can (clprim__bits_type), so the types of a
   * width share programs. */
  c.n = r->n, c.source = SOURCE_RUNS, c.run_kind = r->kind;
  c.key_type = clprim__key_build_type(r->key_type);
  c.src = r->keys, c.in = r->values ? r->values : r->keys, c.by_key = r->values != NULL;
  c.type = r->values ? clprim__bits_type(r->value_type) : c.key_type;
  c.values = r->values_out, c.indices = r->indices, c.count_out = r->count_out;
  c.index64 = r->index64, c.run_ends = r->run_ends;
  if (c.run_ends && (r->kind != RUN_HEAD || !single_pass_items(ctx, c.type, 0)))
    return CLPRIM_ERROR_INVALID_ARGUMENT; /* a bug of ours */
  return select_run(ctx, &c);
}

clprim_status clprim__select_pipeline(clprim_context *ctx, const struct clprim_pipe_select *p) {
  struct select_call c;
  memset(&c, 0, sizeof c);
  c.n = p->n, c.type = p->type, c.source = SOURCE_PIPELINE;
  c.pipe_prefix = p->prefix, c.extra = p->extra;
  c.src = c.in = p->in;
  c.values = p->values, c.indices = p->indices, c.count_out = p->count_out;
  c.count = p->count, c.index64 = p->index64, c.partition = p->partition;
  return select_run(ctx, &c);
}

static clprim_status select_public(clprim_context *ctx, struct select_call *c) {
  CLPRIM_CHECK(clprim__call_begin(ctx, c->name));
  clprim_status st = check_call(ctx, c);
  if (st == CLPRIM_SUCCESS) st = select_run(ctx, c);
  return clprim__call_end(ctx, st);
}

/* The call as made: every public select and partition fills one. */
static clprim_status select_call(clprim_context *ctx, const char *name, int stencil_type, size_t n,
                                 clprim_type type, clprim_buffer in, clprim_buffer stencil,
                                 enum select_source source, const clprim_predicate *pred,
                                 const char *expression, const double *params, int partition,
                                 unsigned flags, clprim_buffer values, clprim_buffer indices,
                                 uint64_t *count, clprim_buffer count_out) {
  struct select_call c;
  memset(&c, 0, sizeof c);
  c.name = name, c.stencil_type = stencil_type;
  c.n = n, c.type = type, c.in_range = in, c.stencil_range = stencil, c.source = source;
  c.pred = pred, c.expression = expression, c.params = params, c.partition = partition;
  c.flags = flags;
  c.values_range = values, c.indices_range = indices, c.count = count, c.count_range = count_out;
  return select_public(ctx, &c);
}

/* What phase 1 reads for a stencil type; a bad type becomes a predicate
 * call, which check_call refuses (stencil_type >= 0 there). */
static enum select_source stencil_source(clprim_flag_type stencil_type) {
  return stencil_type == CLPRIM_FLAGS_UINT8   ? SOURCE_FLAGS_UINT8
         : stencil_type == CLPRIM_FLAGS_INT32 ? SOURCE_FLAGS_INT32
                                              : SOURCE_PREDICATE;
}

clprim_status clprim_select(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                            const clprim_predicate *pred, unsigned flags, clprim_buffer values,
                            clprim_buffer indices, uint64_t *count, clprim_buffer count_out) {
  return select_call(ctx, "select", -1, n, type, in, in, SOURCE_PREDICATE, pred, NULL, NULL, 0,
                     flags, values, indices, count, count_out);
}

clprim_status clprim_partition(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                               const clprim_predicate *pred, unsigned flags, clprim_buffer values,
                               clprim_buffer indices, uint64_t *count, clprim_buffer count_out) {
  return select_call(ctx, "partition", -1, n, type, in, in, SOURCE_PREDICATE, pred, NULL, NULL, 1,
                     flags, values, indices, count, count_out);
}

clprim_status clprim_select_expr(clprim_context *ctx, size_t n, clprim_type type,
                                 clprim_buffer in, const char *expression, unsigned flags,
                                 clprim_buffer values, clprim_buffer indices, uint64_t *count,
                                 clprim_buffer count_out) {
  return select_call(ctx, "select_expr", -1, n, type, in, in, SOURCE_EXPRESSION, NULL, expression,
                     NULL, 0, flags, values, indices, count, count_out);
}

clprim_status clprim_partition_expr(clprim_context *ctx, size_t n, clprim_type type,
                                    clprim_buffer in, const char *expression, unsigned flags,
                                    clprim_buffer values, clprim_buffer indices,
                                    uint64_t *count, clprim_buffer count_out) {
  return select_call(ctx, "partition_expr", -1, n, type, in, in, SOURCE_EXPRESSION, NULL,
                     expression, NULL, 1, flags, values, indices, count, count_out);
}

clprim_status clprim_select_expr_params(clprim_context *ctx, size_t n, clprim_type type,
                                        clprim_buffer in, const char *expression,
                                        const double *params, unsigned flags,
                                        clprim_buffer values, clprim_buffer indices,
                                        uint64_t *count, clprim_buffer count_out) {
  static const double zeros[8] = {0};
  return select_call(ctx, "select_expr_params", -1, n, type, in, in, SOURCE_EXPRESSION, NULL,
                     expression, params ? params : zeros, 0, flags, values, indices, count,
                     count_out);
}

clprim_status clprim_partition_expr_params(clprim_context *ctx, size_t n, clprim_type type,
                                           clprim_buffer in, const char *expression,
                                           const double *params, unsigned flags,
                                           clprim_buffer values, clprim_buffer indices,
                                           uint64_t *count, clprim_buffer count_out) {
  static const double zeros[8] = {0};
  return select_call(ctx, "partition_expr_params", -1, n, type, in, in, SOURCE_EXPRESSION, NULL,
                     expression, params ? params : zeros, 1, flags, values, indices, count,
                     count_out);
}

clprim_status clprim_select_flagged(clprim_context *ctx, size_t n, clprim_type type,
                                    clprim_buffer in, clprim_buffer stencil,
                                    clprim_flag_type stencil_type, unsigned flags,
                                    clprim_buffer values, clprim_buffer indices, uint64_t *count,
                                    clprim_buffer count_out) {
  return select_call(ctx, "select_flagged", (int)stencil_type, n, type, in, stencil,
                     stencil_source(stencil_type), NULL, NULL, NULL, 0, flags, values, indices,
                     count, count_out);
}

clprim_status clprim_partition_flagged(clprim_context *ctx, size_t n, clprim_type type,
                                       clprim_buffer in, clprim_buffer stencil,
                                       clprim_flag_type stencil_type, unsigned flags,
                                       clprim_buffer values, clprim_buffer indices,
                                       uint64_t *count, clprim_buffer count_out) {
  return select_call(ctx, "partition_flagged", (int)stencil_type, n, type, in, stencil,
                     stencil_source(stencil_type), NULL, NULL, NULL, 1, flags, values, indices,
                     count, count_out);
}

/* ------------------------------------------------ three-way partition */
/* Kernels select3_masks and select3_scatter of cl/select.cl, with one scan
 * of both classes' tile counts between them (see there). */
static int bad_predicate(const clprim_predicate *p, clprim_type type) {
  return !p || (unsigned)p->op >= CLPRIM_PRED_COUNT ||
         (p->op == CLPRIM_PRED_MASK_EQ && !is_integer(type));
}

/* The two tests of a three-way partition: built-in predicates, two flag
 * arrays, or two expressions. */
struct tests3 {
  enum select_source source; /* SOURCE_PREDICATE, _FLAGS_UINT8 / _INT32 or _EXPRESSION */
  const clprim_predicate *first, *second;
  clprim_buffer flags1, flags2;
  const char *expression1, *expression2;
};

static clprim_status partition3(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer in_range, const struct tests3 *t, unsigned flags,
                                clprim_buffer values_range, clprim_buffer indices_range,
                                uint64_t counts[2], clprim_buffer counts_range) {
  CLPRIM_CHECK(clprim__check_type(ctx, "type", type));
  CLPRIM_CHECK(clprim__check_flags(ctx, flags, CLPRIM_INDICES_64));
  if (t->source == SOURCE_PREDICATE && (bad_predicate(t->first, type) || bad_predicate(t->second, type)))
    return clprim__invalid(ctx, "%s is NULL, has a bad op or MASK_EQ on a float type",
                           bad_predicate(t->first, type) ? "first" : "second");
  if (t->source == SOURCE_EXPRESSION &&
      (!clprim__expression_ok(t->expression1) || !clprim__expression_ok(t->expression2)))
    return clprim__invalid(ctx, "%s is NULL or not one expression",
                           !clprim__expression_ok(t->expression1) ? "first" : "second");
  if (!values_range.mem && !indices_range.mem && !counts && !counts_range.mem)
    return clprim__invalid(ctx, "no output is given (values, indices, counts and counts_out are "
                                "all NULL)");
  const int index64 = (flags & CLPRIM_INDICES_64) != 0;
  if (indices_range.mem && !index64 && (uint64_t)n > ((uint64_t)1 << 32))
    return clprim__invalid(ctx, "indices are uint32 but n (%zu) is above 2^32 (CLPRIM_INDICES_64)",
                           n);
  const size_t es = clprim_type_size(type);
  cl_mem in, values = NULL, indices = NULL, counts_out = NULL, flags1 = NULL, flags2 = NULL;
  CLPRIM_CHECK(clprim__range(ctx, "in", in_range, es, n, CLPRIM__READ, &in));
  if (t->source == SOURCE_FLAGS_UINT8 || t->source == SOURCE_FLAGS_INT32) {
    const size_t fs = t->source == SOURCE_FLAGS_UINT8 ? 1 : 4;
    CLPRIM_CHECK(clprim__range(ctx, "first_flags", t->flags1, fs, n, CLPRIM__READ, &flags1));
    CLPRIM_CHECK(clprim__range(ctx, "second_flags", t->flags2, fs, n, CLPRIM__READ, &flags2));
  }
  if (values_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "values", values_range, es, n, CLPRIM__OUT_ALL, &values));
  if (indices_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "indices", indices_range, index64 ? 8 : 4, n, CLPRIM__OUT_ALL,
                               &indices));
  if (counts_range.mem)
    CLPRIM_CHECK(
        clprim__range(ctx, "counts_out", counts_range, 8, 2, CLPRIM__OUT_ALL, &counts_out));
  if (n == 0) {
    const cl_ulong zero = 0;
    if (counts_out) CLPRIM_CHECK(clprim__fill(ctx, counts_out, &zero, 8, 0, 16));
    if (counts) counts[0] = counts[1] = 0;
    return CLPRIM_SUCCESS;
  }

  const unsigned wg = select_wg(ctx);
  const size_t tiles = select_tiles(ctx, n);
  const size_t words = n / 32 + (n % 32 != 0);
  /* select's program of the tests' kind (two expressions: their test
   * functions before the file, as select_run's, one program per pair). */
  static const char *const flag_option[3] = {"", " -DFLAG_T=uchar", " -DFLAG_T=int"};
  char options[160];
  program_options(ctx, type, t->source <= SOURCE_FLAGS_INT32 ? flag_option[t->source] : "",
                  options, sizeof options);
  struct clprim_stages tests;
  memset(&tests, 0, sizeof tests);
  clprim_status built = CLPRIM_SUCCESS;
  if (t->source == SOURCE_EXPRESSION) {
    const char *const expressions[2] = {t->expression1, t->expression2};
    built = clprim__stages_tests(&tests, type, expressions, 2);
  }
  cl_kernel masks_k, scatter_k;
  const struct clprim_kernel_request req[2] = {
      {"select.cl", tests.source, options, "select3_masks", NULL, &masks_k, NULL, NULL},
      {"select.cl", tests.source, options, "select3_scatter", NULL, &scatter_k, NULL, NULL}};
  if (built == CLPRIM_SUCCESS) {
    built = clprim__kernels(ctx, req, 2);
    if (built != CLPRIM_SUCCESS && tests.source) clprim__stages_translate_log(&tests, ctx);
  }
  clprim__stages_free(&tests);
  CLPRIM_CHECK(built);
  cl_mem masks, offsets, counts_buf = counts_out;
  CLPRIM_CHECK(clprim__scratch(ctx, "select: masks", 2 * words * 4, &masks));
  CLPRIM_CHECK(clprim__offsets(ctx, "select: tile offsets", CLPRIM_UINT64, 2 * tiles, &offsets));
  if (!counts_buf) CLPRIM_CHECK(clprim__scratch(ctx, "select: two counts", 16, &counts_buf));

  const cl_ulong n64 = n, words64 = words, tiles64 = tiles;
  /* Unused arguments: zero operands, the masks for absent flags. */
  clprim_predicate none;
  memset(&none, 0, sizeof none);
  const clprim_predicate *first = t->source == SOURCE_PREDICATE ? t->first : &none;
  const clprim_predicate *second = t->source == SOURCE_PREDICATE ? t->second : &none;
  const cl_int op1 = (cl_int)first->op, op2 = (cl_int)second->op;
  const cl_mem f1 = flags1 ? flags1 : masks, f2 = flags2 ? flags2 : masks;
  CLPRIM_CHECK(clprim__set_args(masks_k, 13, sizeof in, &in, sizeof n64, &n64, sizeof op1, &op1,
                                es, &first->a, es, &first->b, sizeof op2, &op2, es, &second->a,
                                es, &second->b, sizeof masks, &masks, sizeof words64, &words64,
                                sizeof offsets, &offsets, sizeof f1, &f1, sizeof f2, &f2));
  const cl_mem vbuf = values ? values : masks, ibuf = indices ? indices : masks;
  const cl_int want_values = values != NULL, want_indices = indices != NULL, i64 = index64;
  CLPRIM_CHECK(clprim__set_args(scatter_k, 12, sizeof in, &in, sizeof n64, &n64, sizeof masks,
                                &masks, sizeof words64, &words64, sizeof offsets, &offsets,
                                sizeof tiles64, &tiles64, sizeof vbuf, &vbuf, sizeof ibuf, &ibuf,
                                sizeof want_values, &want_values, sizeof want_indices,
                                &want_indices, sizeof i64, &i64, sizeof counts_buf,
                                &counts_buf));
  const struct clprim_count_scan_scatter passes = {
      {masks_k, tiles, wg}, {scatter_k, tiles, wg}, CLPRIM_UINT64, offsets, 2 * tiles};
  CLPRIM_CHECK(clprim__count_scan_scatter(ctx, &passes));
  if (counts) {
    cl_ulong got[2];
    CLPRIM_CHECK(clprim__read(ctx, counts_buf, 0, sizeof got, got));
    counts[0] = got[0], counts[1] = got[1];
  }
  return CLPRIM_SUCCESS;
}

clprim_status clprim_partition3(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer in, const clprim_predicate *first,
                                const clprim_predicate *second, unsigned flags,
                                clprim_buffer values, clprim_buffer indices, uint64_t counts[2],
                                clprim_buffer counts_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "partition3"));
  struct tests3 t;
  memset(&t, 0, sizeof t);
  t.source = SOURCE_PREDICATE, t.first = first, t.second = second;
  return clprim__call_end(
      ctx, partition3(ctx, n, type, in, &t, flags, values, indices, counts, counts_out));
}

clprim_status clprim_partition3_flagged(clprim_context *ctx, size_t n, clprim_type type,
                                        clprim_buffer in, clprim_buffer first_flags,
                                        clprim_buffer second_flags, clprim_flag_type flag_type,
                                        unsigned flags, clprim_buffer values,
                                        clprim_buffer indices, uint64_t counts[2],
                                        clprim_buffer counts_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "partition3_flagged"));
  struct tests3 t;
  memset(&t, 0, sizeof t);
  t.source = stencil_source(flag_type), t.flags1 = first_flags, t.flags2 = second_flags;
  const clprim_status st =
      t.source == SOURCE_PREDICATE /* a bad flag_type */
          ? clprim__invalid(ctx, "flag_type (%d) is not a clprim_flag_type", (int)flag_type)
          : partition3(ctx, n, type, in, &t, flags, values, indices, counts, counts_out);
  return clprim__call_end(ctx, st);
}

clprim_status clprim_partition3_expr(clprim_context *ctx, size_t n, clprim_type type,
                                     clprim_buffer in, const char *first, const char *second,
                                     unsigned flags, clprim_buffer values, clprim_buffer indices,
                                     uint64_t counts[2], clprim_buffer counts_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "partition3_expr"));
  struct tests3 t;
  memset(&t, 0, sizeof t);
  t.source = SOURCE_EXPRESSION, t.expression1 = first, t.expression2 = second;
  return clprim__call_end(
      ctx, partition3(ctx, n, type, in, &t, flags, values, indices, counts, counts_out));
}

/* Dry runs (core/prebuild.c): predicates, both stencil types, partitions
 * (values and indices), the three-way partition. */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const size_t mid = (size_t)1 << 16;
  const clprim_buffer in = clprim_buf(d->in), in2 = clprim_buf(d->in2);
  const clprim_buffer out = clprim_buf(d->out), out2 = clprim_buf(d->out2), none = clprim_buf(NULL);
  clprim_predicate pred;
  memset(&pred, 0, sizeof pred);
  pred.op = CLPRIM_PRED_GT;
  uint64_t u;
  clprim_select(ctx, mid, t, in, &pred, 0, out, out2, &u, none);
  clprim_select(ctx, mid, t, in, &pred, 0, none, none, &u, none);
  clprim_partition(ctx, mid, t, in, &pred, 0, out, out2, &u, none);
  clprim_select_flagged(ctx, mid, t, in, in2, CLPRIM_FLAGS_UINT8, 0, out, out2, &u, none);
  clprim_select_flagged(ctx, mid, t, in, in2, CLPRIM_FLAGS_INT32, 0, out, out2, &u, none);
  clprim_partition_flagged(ctx, mid, t, in, in2, CLPRIM_FLAGS_UINT8, 0, out, out2, &u, none);
  clprim_partition3(ctx, mid, t, in, &pred, &pred, 0, out, out2, NULL, in2);
}
