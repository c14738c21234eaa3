/* pipeline.c: map -> filter -> ... -> terminal over device arrays. The
 * stages become one generated OpenCL C function (cl/pipeline.cl says what
 * it defines) put before the file of the family that runs the terminal,
 * built with -DPIPELINE: its element source (cl/internal/input.h) computes
 * each element through the stages instead of loading it:
 *   count, sum, min, max, argmin, argmax: cl/reduce.cl (one read of the
 *     inputs, nothing stored);
 *   collect: cl/select.cl's compaction with the stages as its predicate;
 *   nth_element, quantiles: cl/nth_element.cl's first level (sample, count,
 *     extraction), which skips the elements that fail; the ranks follow
 *     from the passing count that the counting pass finds (inputs of up to
 *     clprim__nth_small_max elements compact first, as below);
 *   top-k (k <= NTH_BASE, at least 16 NTH_BASE elements): cl/topk.cl's
 *     candidate path (src/topk.c's topk_small through
 *     clprim__topk_filtered): the sample (a failing element sorts at the
 *     end top-k does not want) and the one pass that gathers the candidates
 *     skip the elements that fail and count those that pass (m), and the
 *     last kernel evaluates x for its k values; where that path falls back
 *     (fewer candidates than k, which fewer than k passing implies; too
 *     many; more than the room laid out for them), as below;
 *   histogram, top-k otherwise: that compaction into the pipeline's own
 *     buffers, then the family's call over the m passing elements (top-k's
 *     positions mapped back to the inputs' by pipe_gather);
 *   reduce_op: cl/operators.cl's op_reduce (the stages and the operator's
 *     prefix before it) over the inputs, then the operator's own op_reduce
 *     over the work-groups' results: clprim_reduce_op's passes
 *     (src/operators.c, clprim__reduce_op_run).
 * A map by an operator (map_op) puts the operator's prefix into the
 * stages' source (engine/stages.c), so that x can have its type; such an x
 * goes to the terminals that take any type (count, reduce_op) only.
 * Parameters and built-in predicates' operands are kernel arguments, so a
 * new value builds nothing; the generated source depends on the stages and
 * types only (and on whether the run takes its count from the device), and
 * is cached as every program is (memory and disk). The stages' generated
 * function is engine/stages.c's. */
#include "engine/exact.h"
#include "engine/stages.h"
#include "engine/sample_select.h"
#include "operators.h"
#include "reduce.h"
#include "select.h"
#include "topk.h"

#include <stdlib.h>
#include <string.h>

#define SLOT_EXACT_RESULT "pipeline: exact sum" /* the sum's bits (CLPRIM_EXACT) */

/* The family's descriptor: no knobs or table of its own (the terminals'
 * families shape their kernels), and nothing to prebuild, since its
 * programs depend on the stages, which each call builds. */
const struct clprim_family clprim__family_pipeline = {"pipeline", NULL, 0, NULL, 0, 0, NULL};

#define MODE_MIN 0x100u /* as in cl/reduce.cl */

enum terminal {
  TERM_NONE,
  TERM_COLLECT,
  TERM_COUNT,
  TERM_REDUCE,
  TERM_HISTOGRAM,
  TERM_NTH,
  TERM_QUANTILES,
  TERM_TOPK,
  TERM_REDUCE_OP
};
static const char *const term_names[] = {"none",      "collect",   "count",
                                         "reduce",    "histogram", "nth_element",
                                         "quantiles", "topk",      "reduce_op"};

#define OUTPUTS 4

struct clprim_pipeline {
  clprim_context *ctx;
  struct clprim_stages st; /* the stages and their generated source */

  enum terminal terminal;
  unsigned flags;
  clprim_pipeline_reduction op;
  clprim_value lo, hi;
  size_t bins;
  uint64_t k;
  double *q_list;
  size_t q_count;
  /* reduce_op: the caller's operator (alive while the pipeline may run it)
   * and init's bytes, copied at the call. */
  const clprim_operator *user_op;
  unsigned char user_init[64];
  int user_has_init;

  /* Outputs: the buffers (grown on demand), and what the last run wrote. */
  cl_mem buf[OUTPUTS + 2]; /* + compacted values and indices of the selections */
  size_t room[OUTPUTS + 2];
  size_t elements[OUTPUTS], elem_size[OUTPUTS];
  int written[OUTPUTS];
};
#define BUF_SCRATCH_VALUES OUTPUTS
#define BUF_SCRATCH_INDICES (OUTPUTS + 1)

/* ------------------------------------------------------------ helpers */

/* x's type: a clprim_type, or CLPRIM__STAGE_OP_TYPE (the operator's). */
static clprim_type x_type(const clprim_pipeline *p) { return clprim__stages_type(&p->st); }

/* For the operator's type, CLPRIM__STAGE_OP_TYPE: CLPRIM_TYPE_COUNT, no
 * clprim_type (clprim.h). */
clprim_type clprim_pipeline_type(const clprim_pipeline *p) {
  return p ? x_type(p) : CLPRIM_INT32;
}

static int is_float(clprim_type t) {
  return t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE;
}

/* An output buffer of at least bytes (grown: a new buffer). */
static clprim_status room(clprim_pipeline *p, unsigned which, size_t bytes) {
  if (bytes < 16) bytes = 16;
  if (p->buf[which] && p->room[which] >= bytes) return CLPRIM_SUCCESS;
  if (p->buf[which]) clReleaseMemObject(p->buf[which]);
  p->buf[which] = NULL, p->room[which] = 0;
  cl_int err;
  p->buf[which] = clCreateBuffer(p->ctx->cl_ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (err != CL_SUCCESS) {
    p->buf[which] = NULL;
    return (clprim_status)err;
  }
  p->room[which] = bytes;
  return CLPRIM_SUCCESS;
}

static const char *output_name(clprim_pipeline_out which) {
  static const char *const names[OUTPUTS] = {"CLPRIM_PIPE_OUT_VALUES", "CLPRIM_PIPE_OUT_INDICES",
                                             "CLPRIM_PIPE_OUT_COUNT", "CLPRIM_PIPE_OUT_RESULT"};
  return (unsigned)which < OUTPUTS ? names[which] : "no output";
}

static void mark(clprim_pipeline *p, clprim_pipeline_out which, size_t elements, size_t elem_size) {
  p->written[which] = 1, p->elements[which] = elements, p->elem_size[which] = elem_size;
}

/* ------------------------------------------------------------ building */

/* Every pipeline call takes its context (a text for what it refuses, the
 * busy rule), and a run's selection makes its public calls inside. */
clprim_status clprim_pipeline_create(clprim_pipeline **pipe, clprim_context *ctx, unsigned inputs,
                                     const clprim_type *types) {
  CLPRIM_CHECK(clprim__hold(ctx, "pipeline_create"));
  clprim_status st = CLPRIM_SUCCESS;
  if (!pipe) st = clprim__invalid(ctx, "pipe is required");
  if (st == CLPRIM_SUCCESS && !types) st = clprim__invalid(ctx, "types is required");
  if (st == CLPRIM_SUCCESS && (inputs < 1 || inputs > CLPRIM__STAGE_INPUTS))
    st = clprim__invalid(ctx, "inputs (%u) is not 1 to %d", inputs, CLPRIM__STAGE_INPUTS);
  for (unsigned k = 0; st == CLPRIM_SUCCESS && k < inputs; ++k) {
    static const char *const type_names[] = {"types[0]", "types[1]", "types[2]", "types[3]"};
    st = clprim__check_type(ctx, type_names[k], types[k]);
  }
  clprim_pipeline *p = NULL;
  if (st == CLPRIM_SUCCESS) {
    p = calloc(1, sizeof *p);
    if (!p) st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  }
  if (st == CLPRIM_SUCCESS) {
    p->ctx = ctx, p->st.inputs = inputs;
    memcpy(p->st.types, types, inputs * sizeof *types);
    *pipe = p;
  }
  return clprim__unhold(ctx, st);
}

void clprim_pipeline_free(clprim_pipeline *p) {
  if (!p) return;
  for (unsigned b = 0; b < OUTPUTS + 2; ++b)
    if (p->buf[b]) clReleaseMemObject(p->buf[b]);
  free(p->q_list);
  clprim__stages_free(&p->st);
  free(p);
}

/* Adds a stage, with a text for what clprim__stages_add refuses. */
static clprim_status add_stage(clprim_pipeline *p, struct clprim_stage st, const char *expression) {
  if (p->st.stage_count == CLPRIM__STAGE_MAX)
    return clprim__invalid(p->ctx, "the pipeline has %d stages already", CLPRIM__STAGE_MAX);
  if (expression && !clprim__expression_ok(expression))
    return clprim__invalid(p->ctx, "expression is not one expression");
  return clprim__stages_add(&p->st, st, expression);
}

clprim_status clprim_pipeline_map(clprim_pipeline *p, clprim_type type, const char *expression) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_map"));
  clprim_status st = expression ? clprim__check_type(p->ctx, "type", type)
                                : clprim__invalid(p->ctx, "expression is required");
  if (st == CLPRIM_SUCCESS) {
    struct clprim_stage stage;
    memset(&stage, 0, sizeof stage);
    stage.kind = CLPRIM__STAGE_MAP, stage.type = type;
    st = add_stage(p, stage, expression);
  }
  return clprim__unhold(p->ctx, st);
}

/* The clprim_type whose OpenCL C name and size are op's type's, else
 * CLPRIM__STAGE_OP_TYPE. */
static clprim_type op_builtin(const clprim_operator *op) {
  for (unsigned t = 0; t < CLPRIM_TYPE_COUNT; ++t)
    if (strcmp(clprim__cl_type((clprim_type)t), op->type) == 0 &&
        clprim_type_size((clprim_type)t) == op->size)
      return (clprim_type)t;
  return CLPRIM__STAGE_OP_TYPE;
}

/* Whether op is the pipeline's one operator (or may become it): refused
 * where the maps use another (other type definitions and combine). */
static clprim_status one_operator(clprim_pipeline *p, const clprim_operator *op) {
  if (!p->st.op_prefix || strcmp(p->st.op_prefix, op->prefix) == 0) return CLPRIM_SUCCESS;
  return clprim__invalid(p->ctx,
                         "op (of type %s) is not the operator the pipeline's maps use (of type "
                         "%s): one operator a pipeline",
                         op->type, p->st.op_type);
}

static clprim_status map_op(clprim_pipeline *p, const clprim_operator *op, const char *expression) {
  CLPRIM_CHECK(clprim__operator_check(p->ctx, op));
  if (!expression) return clprim__invalid(p->ctx, "expression is required");
  CLPRIM_CHECK(one_operator(p, op));
  const int had_op = p->st.op_prefix != NULL;
  CLPRIM_CHECK(clprim__stages_set_op(&p->st, op->type, op->size, op->prefix));
  struct clprim_stage stage;
  memset(&stage, 0, sizeof stage);
  stage.kind = CLPRIM__STAGE_MAP, stage.type = op_builtin(op);
  const clprim_status st = add_stage(p, stage, expression);
  if (st != CLPRIM_SUCCESS && !had_op) { /* a refused stage: no operator, as before */
    free(p->st.op_type), free(p->st.op_prefix);
    p->st.op_type = p->st.op_prefix = NULL;
  }
  return st;
}

clprim_status clprim_pipeline_map_op(clprim_pipeline *p, const clprim_operator *op,
                                     const char *expression) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_map_op"));
  return clprim__unhold(p->ctx, map_op(p, op, expression));
}

clprim_status clprim_pipeline_filter_expr(clprim_pipeline *p, const char *expression) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_filter_expr"));
  clprim_status st = CLPRIM_SUCCESS;
  if (!expression) st = clprim__invalid(p->ctx, "expression is required");
  if (st == CLPRIM_SUCCESS) {
    struct clprim_stage stage;
    memset(&stage, 0, sizeof stage);
    stage.kind = CLPRIM__STAGE_FILTER_EXPR, stage.type = x_type(p);
    st = add_stage(p, stage, expression);
  }
  return clprim__unhold(p->ctx, st);
}

clprim_status clprim_pipeline_filter_flags(clprim_pipeline *p, unsigned input) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_filter_flags"));
  clprim_status st = CLPRIM_SUCCESS;
  if (input >= p->st.inputs)
    st = clprim__invalid(p->ctx, "input (%u) is not below the pipeline's inputs (%u)", input,
                         p->st.inputs);
  if (st == CLPRIM_SUCCESS) {
    struct clprim_stage stage;
    memset(&stage, 0, sizeof stage);
    stage.kind = CLPRIM__STAGE_FILTER_FLAGS, stage.type = x_type(p), stage.input = input;
    st = add_stage(p, stage, NULL);
  }
  return clprim__unhold(p->ctx, st);
}

/* A value's bits, zero-extended (32-bit types: the first 4 bytes). */
static cl_ulong bits_of(clprim_type type, clprim_value v) {
  return clprim_type_size(type) == 4 ? (cl_ulong)v.u32 : (cl_ulong)v.u64;
}

static clprim_status filter_pred(clprim_pipeline *p, const clprim_predicate *pred) {
  clprim_context *ctx = p->ctx;
  if (!pred) return clprim__invalid(ctx, "pred is required");
  if ((unsigned)pred->op >= CLPRIM_PRED_COUNT)
    return clprim__invalid(ctx, "pred->op (%d) is not a clprim_pred_op", (int)pred->op);
  if (p->st.builtins == CLPRIM__STAGE_BUILTINS)
    return clprim__invalid(ctx, "the pipeline has %d built-in filters already",
                           CLPRIM__STAGE_BUILTINS);
  const clprim_type type = x_type(p);
  if (type == CLPRIM__STAGE_OP_TYPE)
    return clprim__invalid(ctx,
                           "x has the operator's type (%s), which built-in predicates do not take "
                           "(clprim_pipeline_filter_expr takes any x)",
                           p->st.op_type);
  if (pred->op == CLPRIM_PRED_MASK_EQ && is_float(type))
    return clprim__invalid(ctx, "pred->op is CLPRIM_PRED_MASK_EQ, which takes integer types only");
  struct clprim_stage st;
  memset(&st, 0, sizeof st);
  st.kind = CLPRIM__STAGE_FILTER_PRED, st.type = type, st.op = pred->op, st.builtin = p->st.builtins;
  CLPRIM_CHECK(add_stage(p, st, NULL));
  p->st.q[2 * p->st.builtins] = bits_of(type, pred->a);
  p->st.q[2 * p->st.builtins + 1] = bits_of(type, pred->b);
  ++p->st.builtins;
  return CLPRIM_SUCCESS;
}

clprim_status clprim_pipeline_filter(clprim_pipeline *p, const clprim_predicate *pred) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_filter"));
  return clprim__unhold(p->ctx, filter_pred(p, pred));
}

static void set_terminal(clprim_pipeline *p, enum terminal t, unsigned flags) {
  p->terminal = t, p->flags = flags;
}

clprim_status clprim_pipeline_collect(clprim_pipeline *p, unsigned flags) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_collect"));
  const clprim_status st = clprim__check_flags(
      p->ctx, flags, CLPRIM_PIPE_VALUES_WANTED | CLPRIM_PIPE_INDICES_WANTED | CLPRIM_INDICES_64);
  if (st == CLPRIM_SUCCESS) set_terminal(p, TERM_COLLECT, flags);
  return clprim__unhold(p->ctx, st);
}

clprim_status clprim_pipeline_count(clprim_pipeline *p) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_count"));
  set_terminal(p, TERM_COUNT, 0);
  return clprim__unhold(p->ctx, CLPRIM_SUCCESS);
}

clprim_status clprim_pipeline_reduce(clprim_pipeline *p, clprim_pipeline_reduction op,
                                     unsigned flags) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_reduce"));
  clprim_status st = CLPRIM_SUCCESS;
  if ((unsigned)op > CLPRIM_PIPE_ARGMAX)
    st = clprim__invalid(p->ctx, "op (%d) is not a clprim_pipeline_reduction", (int)op);
  if (st == CLPRIM_SUCCESS)
    st = clprim__check_flags(p->ctx, flags,
                             op == CLPRIM_PIPE_SUM ? CLPRIM_EXACT
                                                   : CLPRIM_REDUCE_ABS | CLPRIM_REDUCE_NAN_LARGEST);
  if (st == CLPRIM_SUCCESS) {
    set_terminal(p, TERM_REDUCE, flags);
    p->op = op;
  }
  return clprim__unhold(p->ctx, st);
}

/* x's type is checked when the pipeline runs: stages added after the
 * terminal may change it. */
clprim_status clprim_pipeline_reduce_op(clprim_pipeline *p, const clprim_operator *op,
                                        const void *init) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_reduce_op"));
  clprim_status st = clprim__operator_check(p->ctx, op);
  if (st == CLPRIM_SUCCESS) st = one_operator(p, op);
  if (st == CLPRIM_SUCCESS) {
    set_terminal(p, TERM_REDUCE_OP, 0);
    p->user_op = op, p->user_has_init = init != NULL;
    memset(p->user_init, 0, sizeof p->user_init);
    if (init) memcpy(p->user_init, init, op->size);
  }
  return clprim__unhold(p->ctx, st);
}

clprim_status clprim_pipeline_histogram(clprim_pipeline *p, clprim_value lo, clprim_value hi,
                                        size_t bins) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_histogram"));
  if (bins == 0) return clprim__unhold(p->ctx, clprim__invalid(p->ctx, "bins is 0"));
  set_terminal(p, TERM_HISTOGRAM, 0);
  p->lo = lo, p->hi = hi, p->bins = bins;
  return clprim__unhold(p->ctx, CLPRIM_SUCCESS);
}

clprim_status clprim_pipeline_nth_element(clprim_pipeline *p, uint64_t k) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_nth_element"));
  set_terminal(p, TERM_NTH, 0);
  p->k = k;
  return clprim__unhold(p->ctx, CLPRIM_SUCCESS);
}

static clprim_status set_quantiles(clprim_pipeline *p, const double *q, size_t count) {
  if (!q) return clprim__invalid(p->ctx, "q is required");
  if (count == 0 || count > 0xFFFFFFFFu)
    return clprim__invalid(p->ctx, "count (%zu) is 0 or 2^32 or more", count);
  for (size_t j = 0; j < count; ++j)
    if (!(q[j] >= 0 && q[j] <= 1))
      return clprim__invalid(p->ctx, "q[%zu] (%g) is not in [0, 1]", j, q[j]);
  double *copy = malloc(count * sizeof *copy);
  if (!copy) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  memcpy(copy, q, count * sizeof *copy);
  free(p->q_list);
  p->q_list = copy, p->q_count = count;
  set_terminal(p, TERM_QUANTILES, 0);
  return CLPRIM_SUCCESS;
}

clprim_status clprim_pipeline_quantiles(clprim_pipeline *p, const double *q, size_t count) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_quantiles"));
  return clprim__unhold(p->ctx, set_quantiles(p, q, count));
}

clprim_status clprim_pipeline_topk(clprim_pipeline *p, uint64_t k, unsigned flags) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_topk"));
  const clprim_status st = clprim__check_flags(
      p->ctx, flags, CLPRIM_TOPK_SMALLEST | CLPRIM_TOPK_SORTED | CLPRIM_INDICES_64);
  if (st == CLPRIM_SUCCESS) {
    set_terminal(p, TERM_TOPK, flags);
    p->k = k;
  }
  return clprim__unhold(p->ctx, st);
}

/* ------------------------------------------------------------ running */

/* The kernels' extra arguments (PIPE_PARAMS): the inputs after the first,
 * the parameters (double, or float without fp64), the built-ins' operands.
 * Points into *store, which must outlive their use. */
/* A kernel of cl/reduce.cl built for type with the pipeline's source. */
static clprim_status reduce_kernel(clprim_pipeline *p, clprim_type type, const char *extra,
                                   const char *name, cl_kernel *kernel) {
  char options[256];
  clprim__reduce_options(p->ctx, type, options, sizeof options);
  snprintf(options + strlen(options), sizeof options - strlen(options), " -DPIPELINE%s", extra);
  const char *together =
      strncmp(name, "exact", 5) == 0 ? CLPRIM__EXACT_SUM_KERNELS : CLPRIM__REDUCE_KERNELS;
  const struct clprim_kernel_request r = {"reduce.cl", p->st.source, options, name,
                                          NULL,        kernel,    NULL, together};
  return clprim__kernels(p->ctx, &r, 1);
}

/* The ranks of nth_element / quantiles among m passing elements, sorted
 * and distinct (clprim_nth_filter.ranks_of); 0 where there is no answer. */
struct filtered_ranks {
  clprim_pipeline *p;
  uint64_t m;
};
static unsigned ranks_of(void *arg, uint64_t m, uint64_t *ranks) {
  struct filtered_ranks *f = arg;
  const clprim_pipeline *p = f->p;
  f->m = m;
  if (m == 0 || (p->terminal == TERM_NTH && p->k >= m)) return 0;
  if (p->terminal == TERM_NTH) {
    ranks[0] = p->k;
    return 1;
  }
  for (size_t j = 0; j < p->q_count; ++j)
    ranks[j] = clprim_quantile_rank(m, p->q_list[j]);
  return (unsigned)clprim__distinct_ranks(ranks, p->q_count);
}

/* nth_element and quantiles with the stages inside selection's level 0
 * (clprim__nth_select_filtered): no compacted copy. The values (in the
 * order asked) and m, the passing count, go to the outputs. */
static clprim_status select_filtered(clprim_pipeline *p, size_t n, cl_mem in,
                                     struct clprim_extra_args *extra) {
  clprim_context *ctx = p->ctx;
  const clprim_type type = x_type(p);
  const size_t es = clprim_type_size(type);
  const size_t count = p->terminal == TERM_NTH ? 1 : p->q_count;
  struct filtered_ranks f = {p, 0};
  const struct clprim_nth_filter filter = {p->st.source, extra, ranks_of, &f};
  uint64_t *ranks = malloc(count * 8), *keys = malloc(count * 8);
  clprim_status st = ranks && keys ? CLPRIM_SUCCESS : CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  unsigned distinct = 0;
  if (st == CLPRIM_SUCCESS) st = room(p, CLPRIM_PIPE_OUT_VALUES, clprim__bytes(count, es));
  if (st == CLPRIM_SUCCESS) st = room(p, CLPRIM_PIPE_OUT_COUNT, 8);
  if (st == CLPRIM_SUCCESS)
    st = clprim__nth_select_filtered(ctx, type, in, n, &filter, (unsigned)count, ranks, keys,
                                     &distinct);
  if (st == CLPRIM_SUCCESS) {
    for (size_t j = 0; j < count; ++j) {
      const uint64_t want =
          p->terminal == TERM_NTH ? p->k : clprim_quantile_rank(f.m, p->q_list[j]);
      /* Fills, not blocking writes (the pattern is copied when enqueued). */
      const clprim_value v =
          clprim__value_of_key(type, keys[clprim__rank_slot(ranks, distinct, want)]);
      if (st == CLPRIM_SUCCESS)
        st = clprim__fill(ctx, p->buf[CLPRIM_PIPE_OUT_VALUES], v.bytes, es, j * es, es);
    }
  }
  if (st == CLPRIM_SUCCESS) {
    const cl_ulong m64 = f.m;
    st = clprim__fill(ctx, p->buf[CLPRIM_PIPE_OUT_COUNT], &m64, 8, 0, 8);
  }
  if (st == CLPRIM_SUCCESS) {
    mark(p, CLPRIM_PIPE_OUT_VALUES, count, es);
    mark(p, CLPRIM_PIPE_OUT_COUNT, 1, 8);
  }
  free(ranks);
  free(keys);
  return st;
}

/* Top-k with the stages inside top-k's candidate path
 * (clprim__topk_filtered): no compacted copy. *done = 0 where that path
 * does not run or falls back (nothing written): then the compaction and
 * top-k of the m passing elements, as before. */
static clprim_status topk_filtered(clprim_pipeline *p, size_t n, cl_mem in,
                                   struct clprim_extra_args *extra, int *done) {
  clprim_context *ctx = p->ctx;
  const clprim_type type = x_type(p);
  const size_t es = clprim_type_size(type), is = (p->flags & CLPRIM_INDICES_64) ? 8 : 4;
  const struct clprim_nth_filter filter = {p->st.source, extra, NULL, NULL};
  *done = 0;
  if (p->k == 0 || p->k > n) return CLPRIM_SUCCESS; /* fewer than k pass: compaction clamps k */
  const size_t k = (size_t)p->k;
  CLPRIM_CHECK(room(p, CLPRIM_PIPE_OUT_VALUES, clprim__bytes(k, es)));
  CLPRIM_CHECK(room(p, CLPRIM_PIPE_OUT_INDICES, clprim__bytes(k, is)));
  CLPRIM_CHECK(room(p, CLPRIM_PIPE_OUT_COUNT, 8));
  uint64_t m = 0;
  CLPRIM_CHECK(clprim__topk_filtered(ctx, n, type, in, k, p->flags, &filter,
                                     p->buf[CLPRIM_PIPE_OUT_VALUES],
                                     p->buf[CLPRIM_PIPE_OUT_INDICES], &m, done));
  if (!*done) return CLPRIM_SUCCESS;
  const cl_ulong m64 = m;
  CLPRIM_CHECK(clprim__fill(ctx, p->buf[CLPRIM_PIPE_OUT_COUNT], &m64, 8, 0, 8));
  mark(p, CLPRIM_PIPE_OUT_VALUES, k, es);
  mark(p, CLPRIM_PIPE_OUT_INDICES, k, is);
  mark(p, CLPRIM_PIPE_OUT_COUNT, 1, 8);
  return CLPRIM_SUCCESS;
}

/* The reduce_op terminal: op_reduce of cl/operators.cl built with the
 * stages' source (which holds the operator's prefix after a map_op, else
 * the prefix follows it) over the inputs, then clprim_reduce_op's passes;
 * the result, one element of the operator's type, to
 * CLPRIM_PIPE_OUT_RESULT. */
static clprim_status reduce_op_run(clprim_pipeline *p, size_t n, cl_mem in,
                                   struct clprim_extra_args *extra) {
  clprim_context *ctx = p->ctx;
  const clprim_operator *op = p->user_op;
  char options[160];
  clprim__operator_options(ctx, op, options, sizeof options);
  snprintf(options + strlen(options), sizeof options - strlen(options),
           " -DPIPELINE -DPIPE_OUT_IS_T");
  struct clprim_text prefix = {NULL, 0, 0, 0, 0};
  clprim__text_printf(&prefix, "%s", p->st.source);
  if (!p->st.op_prefix) clprim__text_printf(&prefix, "\n%s", op->prefix);
  if (prefix.failed) {
    free(prefix.s);
    return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  }
  cl_kernel kernel;
  const struct clprim_kernel_request r = {"operators.cl", prefix.s, options, "op_reduce",
                                          "op_reduce",    &kernel,  NULL,    "op_reduce"};
  clprim_status st = clprim__kernels(ctx, &r, 1);
  free(prefix.s);
  CLPRIM_CHECK(st);
  extra->first = 7;
  CLPRIM_CHECK(clprim__set_extra_args(kernel, extra));
  CLPRIM_CHECK(room(p, CLPRIM_PIPE_OUT_RESULT, op->size));
  CLPRIM_CHECK(clprim__reduce_op_run(ctx, op, kernel, 1, in, n,
                                     p->user_has_init ? p->user_init : NULL,
                                     p->buf[CLPRIM_PIPE_OUT_RESULT]));
  mark(p, CLPRIM_PIPE_OUT_RESULT, 1, op->size);
  return CLPRIM_SUCCESS;
}

/* The part of a run inside one public call: the fused kernels. *m gets the
 * passing count where the terminal compacts for a later call; *finished is
 * set where the terminal ran here too. */
static clprim_status run_fused(clprim_pipeline *p, size_t n, const clprim_buffer *inputs,
                               const clprim_buffer *count_range, const double *params,
                               uint64_t *m, int *finished) {
  clprim_context *ctx = p->ctx;
  cl_mem in[CLPRIM__STAGE_INPUTS], count_in = NULL;
  static const char *const input_names[] = {"inputs[0]", "inputs[1]", "inputs[2]", "inputs[3]"};
  for (unsigned k = 0; k < p->st.inputs; ++k)
    CLPRIM_CHECK(clprim__range(ctx, input_names[k], inputs[k], clprim_type_size(p->st.types[k]), n,
                               CLPRIM__READ, &in[k]));
  if (count_range)
    CLPRIM_CHECK(clprim__range(ctx, "count", *count_range, 8, 1, CLPRIM__READ, &count_in));
  CLPRIM_CHECK(clprim__stages_source(&p->st, p->ctx, count_in != NULL));
  struct clprim_stage_args store;
  struct clprim_extra_args extra;
  clprim__stages_args(&p->st, p->ctx, in, count_in, params, &store, &extra);
  const clprim_type type = x_type(p);
  const size_t es = clprim_type_size(type);
  if (p->terminal == TERM_REDUCE_OP) return reduce_op_run(p, n, in[0], &extra);

  /* Selection by rank counts the passing elements itself, where its first
   * level runs (a larger input than one work-group finishes). */
  if ((p->terminal == TERM_NTH || p->terminal == TERM_QUANTILES) &&
      n > clprim__nth_small_max(ctx) && (uint64_t)n < ((uint64_t)1 << 32)) {
    *finished = 1;
    return select_filtered(p, n, in[0], &extra);
  }
  /* Top-k of small k on a large input: the stages inside top-k's sample and
   * gathering pass, where it does not fall back. */
  if (p->terminal == TERM_TOPK) {
    CLPRIM_CHECK(topk_filtered(p, n, in[0], &extra, finished));
    if (*finished) return CLPRIM_SUCCESS;
  }
  if (p->terminal == TERM_REDUCE && p->op == CLPRIM_PIPE_SUM && (p->flags & CLPRIM_EXACT)) {
    CLPRIM_CHECK(clprim__exact_check(ctx, type, "x"));
    char exact[64];
    clprim__exact_options(ctx, exact, sizeof exact);
    cl_kernel tiles, final;
    CLPRIM_CHECK(reduce_kernel(p, type, exact, "exact_tiles", &tiles));
    CLPRIM_CHECK(reduce_kernel(p, type, exact, "exact_final", &final));
    extra.first = 3;
    CLPRIM_CHECK(clprim__set_extra_args(tiles, &extra));
    cl_mem result;
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_EXACT_RESULT, 8, &result));
    CLPRIM_CHECK(clprim__reduce_exact_run(ctx, type, tiles, final, in[0], n, 1, result));
    CLPRIM_CHECK(room(p, CLPRIM_PIPE_OUT_RESULT, 16));
    CLPRIM_CHECK(clprim__copy(ctx, result, p->buf[CLPRIM_PIPE_OUT_RESULT], 0, 0, 8));
    const cl_ulong zero = 0;
    CLPRIM_CHECK(clprim__fill(ctx, p->buf[CLPRIM_PIPE_OUT_RESULT], &zero, 8, 8, 8));
    mark(p, CLPRIM_PIPE_OUT_RESULT, 2, 8);
    return CLPRIM_SUCCESS;
  }
  if (p->terminal == TERM_COUNT || (p->terminal == TERM_REDUCE && p->op == CLPRIM_PIPE_SUM)) {
    const int count = p->terminal == TERM_COUNT;
    const clprim_type sum_type = count ? CLPRIM_UINT64 : type;
    cl_kernel kernel;
    CLPRIM_CHECK(reduce_kernel(p, sum_type, count ? " -DPIPE_COUNT" : "", "sum_tiles", &kernel));
    extra.first = 3;
    CLPRIM_CHECK(clprim__set_extra_args(kernel, &extra));
    cl_mem result;
    CLPRIM_CHECK(
        clprim__reduce_sum_run(ctx, sum_type, kernel, (int)(3 + extra.count), in[0], n, &result));
    const clprim_pipeline_out out = count ? CLPRIM_PIPE_OUT_COUNT : CLPRIM_PIPE_OUT_RESULT;
    CLPRIM_CHECK(room(p, out, 16));
    CLPRIM_CHECK(clprim__copy(ctx, result, p->buf[out], 0, 0, 8));
    const cl_ulong zero = 0;
    if (!count) CLPRIM_CHECK(clprim__fill(ctx, p->buf[out], &zero, 8, 8, 8));
    mark(p, out, count ? 1 : 2, 8);
    return CLPRIM_SUCCESS;
  }
  if (p->terminal == TERM_REDUCE) {
    cl_kernel partial, final;
    CLPRIM_CHECK(reduce_kernel(p, type, "", "arg_partial", &partial));
    CLPRIM_CHECK(reduce_kernel(p, type, "", "arg_final", &final));
    extra.first = 5;
    CLPRIM_CHECK(clprim__set_extra_args(partial, &extra));
    CLPRIM_CHECK(clprim__set_extra_args(final, &extra));
    const unsigned mode =
        p->flags | (p->op == CLPRIM_PIPE_MIN || p->op == CLPRIM_PIPE_ARGMIN ? MODE_MIN : 0);
    cl_mem result;
    CLPRIM_CHECK(clprim__reduce_arg_run(ctx, type, partial, final, in[0], n, mode, &result));
    CLPRIM_CHECK(room(p, CLPRIM_PIPE_OUT_RESULT, 16));
    CLPRIM_CHECK(clprim__copy(ctx, result, p->buf[CLPRIM_PIPE_OUT_RESULT], 0, 0, 16));
    mark(p, CLPRIM_PIPE_OUT_RESULT, 2, 8);
    return CLPRIM_SUCCESS;
  }

  /* Compaction: collect's outputs, or the selections' compacted elements. */
  const int collect = p->terminal == TERM_COLLECT;
  const int want_values = !collect || (p->flags & CLPRIM_PIPE_VALUES_WANTED);
  const int want_indices =
      collect ? (p->flags & CLPRIM_PIPE_INDICES_WANTED) != 0 : p->terminal == TERM_TOPK;
  const int index64 = (p->flags & CLPRIM_INDICES_64) != 0;
  if (want_indices && !index64 && (uint64_t)n > ((uint64_t)1 << 32))
    return clprim__invalid(ctx, "indices are uint32 but n (%zu) is above 2^32 (CLPRIM_INDICES_64)",
                           n);
  const unsigned vbuf = collect ? CLPRIM_PIPE_OUT_VALUES : BUF_SCRATCH_VALUES;
  const unsigned ibuf = collect ? CLPRIM_PIPE_OUT_INDICES : BUF_SCRATCH_INDICES;
  if (want_values) CLPRIM_CHECK(room(p, vbuf, clprim__bytes(n, es)));
  if (want_indices) CLPRIM_CHECK(room(p, ibuf, clprim__bytes(n, index64 ? 8 : 4)));
  CLPRIM_CHECK(room(p, CLPRIM_PIPE_OUT_COUNT, 8));
  struct clprim_pipe_select sel;
  memset(&sel, 0, sizeof sel);
  sel.n = n, sel.type = type, sel.prefix = p->st.source, sel.in = in[0];
  sel.values = want_values ? p->buf[vbuf] : NULL;
  sel.indices = want_indices ? p->buf[ibuf] : NULL;
  sel.count_out = p->buf[CLPRIM_PIPE_OUT_COUNT];
  sel.index64 = index64, sel.count = collect ? NULL : m, sel.extra = &extra;
  CLPRIM_CHECK(clprim__select_pipeline(ctx, &sel));
  mark(p, CLPRIM_PIPE_OUT_COUNT, 1, 8);
  if (collect) {
    if (want_values) mark(p, CLPRIM_PIPE_OUT_VALUES, n, es);
    if (want_indices) mark(p, CLPRIM_PIPE_OUT_INDICES, n, index64 ? 8 : 4);
  }
  return CLPRIM_SUCCESS;
}

/* Top-k's positions among the compacted elements to positions in the
 * inputs (cl/pipeline.cl's pipe_gather). */
static clprim_status gather(clprim_pipeline *p, size_t k) {
  clprim_context *ctx = p->ctx;
  cl_kernel kernel;
  CLPRIM_CHECK(clprim__kernel(ctx, "pipeline.cl", "", "pipe_gather", &kernel));
  const cl_ulong k64 = k;
  const cl_int index64 = (p->flags & CLPRIM_INDICES_64) != 0;
  CLPRIM_CHECK(clprim__set_args(kernel, 4, sizeof(cl_mem), &p->buf[CLPRIM_PIPE_OUT_INDICES],
                                sizeof(cl_mem), &p->buf[BUF_SCRATCH_INDICES], sizeof k64, &k64,
                                sizeof index64, &index64));
  return clprim__enqueue(ctx, kernel, (k + 63) / 64, 64);
}

/* The terminals that run on the compacted m elements, as public calls. */
static clprim_status run_selection(clprim_pipeline *p, uint64_t m) {
  clprim_context *ctx = p->ctx;
  const clprim_type type = x_type(p);
  const size_t es = clprim_type_size(type);
  const clprim_buffer values = clprim_buf(p->buf[BUF_SCRATCH_VALUES]);
  switch (p->terminal) {
  case TERM_HISTOGRAM:
    CLPRIM_CHECK(room(p, CLPRIM_PIPE_OUT_RESULT, clprim__bytes(p->bins, 4)));
    CLPRIM_CHECK(clprim_histogram_even(ctx, (size_t)m, type, values, p->lo, p->hi, p->bins,
                                       clprim_buf(p->buf[CLPRIM_PIPE_OUT_RESULT]), NULL,
                                       clprim_buf(NULL)));
    mark(p, CLPRIM_PIPE_OUT_RESULT, p->bins, 4);
    return CLPRIM_SUCCESS;
  case TERM_NTH:
  case TERM_QUANTILES: {
    const size_t count = p->terminal == TERM_NTH ? 1 : p->q_count;
    if (m == 0) return clprim__invalid(ctx, "no element passed the filters");
    if (p->terminal == TERM_NTH && p->k >= m)
      return clprim__invalid(ctx, "k (%llu) is not below the %llu elements that passed",
                             (unsigned long long)p->k, (unsigned long long)m);
    uint64_t *ranks = malloc(count * sizeof *ranks);
    if (!ranks) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
    for (size_t j = 0; j < count; ++j)
      ranks[j] = p->terminal == TERM_NTH ? p->k : clprim_quantile_rank(m, p->q_list[j]);
    clprim_status st = room(p, CLPRIM_PIPE_OUT_VALUES, clprim__bytes(count, es));
    if (st == CLPRIM_SUCCESS)
      st = clprim_quantiles(ctx, (size_t)m, type, values, ranks, count, 0, NULL,
                            clprim_buf(p->buf[CLPRIM_PIPE_OUT_VALUES]));
    free(ranks);
    if (st == CLPRIM_SUCCESS) mark(p, CLPRIM_PIPE_OUT_VALUES, count, es);
    return st;
  }
  case TERM_TOPK: {
    const size_t k = (size_t)(p->k < m ? p->k : m);
    const size_t is = (p->flags & CLPRIM_INDICES_64) ? 8 : 4;
    CLPRIM_CHECK(room(p, CLPRIM_PIPE_OUT_VALUES, clprim__bytes(k, es)));
    CLPRIM_CHECK(room(p, CLPRIM_PIPE_OUT_INDICES, clprim__bytes(k, is)));
    if (k > 0) {
      /* One call: top-k, then its positions mapped to the inputs'. */
      CLPRIM_CHECK(clprim__call_begin(ctx, "pipeline_run"));
      clprim_status st = clprim__topk(ctx, (size_t)m, type, values, k, p->flags,
                                      clprim_buf(p->buf[CLPRIM_PIPE_OUT_VALUES]),
                                      clprim_buf(p->buf[CLPRIM_PIPE_OUT_INDICES]));
      /* Oclgrind marks top-k's positions as uninitialised (they pass
       * through selection's scratch, which other programs wrote in earlier
       * calls: see core/scratch.c), and reports their use as addresses in
       * pipe_gather; there only, they make a trip through the host. */
      if (st == CLPRIM_SUCCESS && ctx->oclgrind) {
        void *host = malloc(k * is);
        st = host ? clprim__read(ctx, p->buf[CLPRIM_PIPE_OUT_INDICES], 0, k * is, host)
                  : CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
        if (st == CLPRIM_SUCCESS)
          st = clprim__write(ctx, p->buf[CLPRIM_PIPE_OUT_INDICES], 0, k * is, host, 1);
        free(host);
      }
      if (st == CLPRIM_SUCCESS) st = gather(p, k);
      CLPRIM_CHECK(clprim__call_end(ctx, st));
    }
    mark(p, CLPRIM_PIPE_OUT_VALUES, k, es);
    mark(p, CLPRIM_PIPE_OUT_INDICES, k, is);
    return CLPRIM_SUCCESS;
  }
  default:
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  }
}

/* Whether the terminal takes x's type: a built-in type, or for count and
 * reduce_op any; reduce_op's operator of the pipeline's context, of x's
 * very type (a built-in type of its name and size, or x of a map by the
 * same operator), and the pipeline's one operator. */
static clprim_status check_x(clprim_pipeline *p) {
  clprim_context *ctx = p->ctx;
  const clprim_type x = x_type(p);
  if (x == CLPRIM__STAGE_OP_TYPE && p->terminal != TERM_COUNT && p->terminal != TERM_REDUCE_OP)
    return clprim__invalid(ctx,
                           "x has the operator's type (%s), which the terminal (%s) does not "
                           "take (count and reduce_op take it; a map to a built-in type may "
                           "come first)",
                           p->st.op_type, term_names[p->terminal]);
  if (p->terminal != TERM_REDUCE_OP) return CLPRIM_SUCCESS;
  const clprim_operator *op = p->user_op;
  CLPRIM_CHECK(clprim__operator_check(ctx, op));
  if (x == CLPRIM__STAGE_OP_TYPE) {
    if (strcmp(p->st.op_prefix, op->prefix) == 0) return CLPRIM_SUCCESS;
    return clprim__invalid(ctx,
                           "x's type (%s, of the operator of the pipeline's maps) is not op's "
                           "type (%s, another operator's): one operator a pipeline",
                           p->st.op_type, op->type);
  }
  if (strcmp(clprim__cl_type(x), op->type) != 0 || clprim_type_size(x) != op->size)
    return clprim__invalid(ctx, "x's type (%s) is not op's type (%s)", clprim__cl_type(x),
                           op->type);
  return one_operator(p, op); /* a built-in x after maps by another operator */
}

static clprim_status run_held(clprim_pipeline *p, size_t n, const clprim_buffer *inputs,
                              const clprim_buffer *count, const double *params) {
  memset(p->written, 0, sizeof p->written);
  if (!inputs) return clprim__invalid(p->ctx, "inputs is required");
  if (p->terminal == TERM_NONE) return clprim__invalid(p->ctx, "the pipeline has no terminal");
  CLPRIM_CHECK(check_x(p));
  if (count && !count->mem) return clprim__invalid(p->ctx, "count is required (a NULL buffer)");
  CLPRIM_CHECK(clprim__call_begin(p->ctx, "pipeline_run"));
  uint64_t m = 0;
  int finished = 0;
  clprim_status st = run_fused(p, n, inputs, count, params, &m, &finished);
  if (st != CLPRIM_SUCCESS) clprim__stages_translate_log(&p->st, p->ctx);
  st = clprim__call_end(p->ctx, st);
  if (st != CLPRIM_SUCCESS) { /* a failed run leaves no result to read */
    memset(p->written, 0, sizeof p->written);
    return st;
  }
  if (finished || p->terminal == TERM_COLLECT || p->terminal == TERM_COUNT ||
      p->terminal == TERM_REDUCE || p->terminal == TERM_REDUCE_OP)
    return CLPRIM_SUCCESS;
  /* The run is the context's last call: its first command is the
   * compaction's (clprim_context_last_time times the whole run). */
  clprim_context *ctx = p->ctx;
  cl_event first = ctx->first_event;
  if (first) clRetainEvent(first);
  st = run_selection(p, m);
  if (st != CLPRIM_SUCCESS) {
    memset(p->written, 0, sizeof p->written);
    if (first) clReleaseEvent(first);
  } else if (first) {
    if (ctx->first_event) clReleaseEvent(ctx->first_event);
    ctx->first_event = first;
  }
  return st;
}

/* The whole run holds the context: the selection's public calls are made
 * inside it, and a failure's text names the run. */
static clprim_status run(clprim_pipeline *p, const char *name, size_t n,
                         const clprim_buffer *inputs, const clprim_buffer *count,
                         const double *params) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, name));
  return clprim__unhold(p->ctx, run_held(p, n, inputs, count, params));
}

clprim_status clprim_pipeline_run(clprim_pipeline *p, size_t n, const clprim_buffer *inputs,
                                  const double *params) {
  return run(p, "pipeline_run", n, inputs, NULL, params);
}

clprim_status clprim_pipeline_run_counted(clprim_pipeline *p, size_t n, const clprim_buffer *inputs,
                                          clprim_buffer count, const double *params) {
  return run(p, "pipeline_run_counted", n, inputs, &count, params);
}

/* ------------------------------------------------------------ results */

clprim_status clprim_pipeline_output(const clprim_pipeline *p, clprim_pipeline_out which,
                                     cl_mem *mem, size_t *elements) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  /* Taken as the other pipeline calls take it, so that a refusal has its
   * text (clprim_context_last_error). */
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_output"));
  clprim_status st = CLPRIM_SUCCESS;
  if (!mem)
    st = clprim__invalid(p->ctx, "mem is required (NULL)");
  else if ((unsigned)which >= OUTPUTS)
    st = clprim__invalid(p->ctx, "which (%d) is not a clprim_pipeline_out", (int)which);
  else if (!p->written[which])
    st = clprim__invalid(p->ctx,
                         "which (%d, %s) is not an output the last run wrote (no run yet, or "
                         "the run's terminal does not write it)",
                         (int)which, output_name(which));
  if (st == CLPRIM_SUCCESS) {
    *mem = p->buf[which];
    if (elements) *elements = p->elements[which];
  }
  return clprim__unhold(p->ctx, st);
}

clprim_status clprim_pipeline_read_count(clprim_pipeline *p, uint64_t *count) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_read_count"));
  clprim_status st = count ? CLPRIM_SUCCESS : clprim__invalid(p->ctx, "count is required");
  if (st == CLPRIM_SUCCESS)
    st = clprim_pipeline_read(p, CLPRIM_PIPE_OUT_COUNT, 0, sizeof *count, count);
  return clprim__unhold(p->ctx, st);
}

clprim_status clprim_pipeline_read_result(clprim_pipeline *p, clprim_value *value,
                                          uint64_t *index) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_read_result"));
  clprim_status st = CLPRIM_SUCCESS;
  if (!value && !index) st = clprim__invalid(p->ctx, "value or index is required");
  if (st == CLPRIM_SUCCESS && p->terminal == TERM_REDUCE_OP)
    st =
        clprim__invalid(p->ctx, "the pipeline's terminal is reduce_op, whose result (an element of "
                                "the operator's type) clprim_pipeline_read reads");
  else if (st == CLPRIM_SUCCESS && p->terminal != TERM_REDUCE)
    st = clprim__invalid(p->ctx, "the pipeline's terminal is not a reduce");
  uint64_t words[2] = {0, 0};
  if (st == CLPRIM_SUCCESS)
    st = clprim_pipeline_read(p, CLPRIM_PIPE_OUT_RESULT, 0, sizeof words, words);
  CLPRIM_CHECK(clprim__unhold(p->ctx, st));
  if (value) {
    memset(value, 0, sizeof *value);
    if (clprim_type_size(x_type(p)) == 4)
      value->u32 = (uint32_t)words[0];
    else
      value->u64 = words[0];
  }
  if (index) *index = p->op == CLPRIM_PIPE_SUM ? UINT64_MAX : words[1];
  return CLPRIM_SUCCESS;
}

clprim_status clprim_pipeline_read(clprim_pipeline *p, clprim_pipeline_out which, size_t offset,
                                   size_t bytes, void *host) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  /* Not a primitive call: the context is held, but its events (last_event,
   * last_time: the run's) and the wait list for its next call stay. The
   * queue is in order, so the read follows the run. */
  CLPRIM_CHECK(clprim__hold(p->ctx, "pipeline_read"));
  clprim_status st = CLPRIM_SUCCESS;
  if (!host) st = clprim__invalid(p->ctx, "host is required");
  if (st == CLPRIM_SUCCESS && ((unsigned)which >= OUTPUTS || !p->written[which]))
    st = clprim__invalid(p->ctx, "which (%d) is not an output the last run wrote", (int)which);
  const size_t have = st == CLPRIM_SUCCESS ? p->elements[which] * p->elem_size[which] : 0;
  if (st == CLPRIM_SUCCESS && (offset > have || bytes > have - offset))
    st = clprim__fail(p->ctx, CLPRIM_ERROR_BUFFER_TOO_SMALL,
                      "offset (%zu) + bytes (%zu) is past the output's %zu bytes", offset, bytes,
                      have);
  if (st == CLPRIM_SUCCESS && bytes > 0) {
    const cl_int err = clEnqueueReadBuffer(clprim_context_queue(p->ctx), p->buf[which], CL_TRUE,
                                           offset, bytes, host, 0, NULL, NULL);
    if (err != CL_SUCCESS) st = clprim__cl_fail(p->ctx, err, "clEnqueueReadBuffer");
  }
  return clprim__unhold(p->ctx, st);
}

