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
 *     positions mapped back to the inputs' by pipe_gather).
 * Parameters and built-in predicates' operands are kernel arguments, so a
 * new value builds nothing; the generated source depends on the stages and
 * types only (and on whether the run takes its count from the device), and
 * is cached as every program is (memory and disk). The stages' generated
 * function is engine/stages.c's. */
#include "engine/stages.h"
#include "engine/sample_select.h"
#include "reduce.h"
#include "select.h"
#include "topk.h"

#include <stdlib.h>
#include <string.h>

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
  TERM_TOPK
};

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

  /* Outputs: the buffers (grown on demand), and what the last run wrote. */
  cl_mem buf[OUTPUTS + 2]; /* + compacted values and indices of the selections */
  size_t room[OUTPUTS + 2];
  size_t elements[OUTPUTS], elem_size[OUTPUTS];
  int written[OUTPUTS];
};
#define BUF_SCRATCH_VALUES OUTPUTS
#define BUF_SCRATCH_INDICES (OUTPUTS + 1)

/* ------------------------------------------------------------ helpers */

static clprim_type x_type(const clprim_pipeline *p) { return clprim__stages_type(&p->st); }

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

static void mark(clprim_pipeline *p, clprim_pipeline_out which, size_t elements, size_t elem_size) {
  p->written[which] = 1, p->elements[which] = elements, p->elem_size[which] = elem_size;
}

/* ------------------------------------------------------------ building */

clprim_status clprim_pipeline_create(clprim_context *ctx, unsigned inputs, const clprim_type *types,
                                     clprim_pipeline **pipe) {
  if (!ctx || !types || !pipe || inputs < 1 || inputs > CLPRIM__STAGE_INPUTS)
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  for (unsigned k = 0; k < inputs; ++k)
    CLPRIM_CHECK(clprim__check_type(ctx, types[k]));
  clprim_pipeline *p = calloc(1, sizeof *p);
  if (!p) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  p->ctx = ctx, p->st.inputs = inputs;
  memcpy(p->st.types, types, inputs * sizeof *types);
  *pipe = p;
  return CLPRIM_SUCCESS;
}

void clprim_pipeline_free(clprim_pipeline *p) {
  if (!p) return;
  for (unsigned b = 0; b < OUTPUTS + 2; ++b)
    if (p->buf[b]) clReleaseMemObject(p->buf[b]);
  free(p->q_list);
  clprim__stages_free(&p->st);
  free(p);
}

clprim_status clprim_pipeline_map(clprim_pipeline *p, clprim_type type, const char *expression) {
  if (!p || !expression) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__check_type(p->ctx, type));
  struct clprim_stage st;
  memset(&st, 0, sizeof st);
  st.kind = CLPRIM__STAGE_MAP, st.type = type;
  return clprim__stages_add(&p->st, st, expression);
}

clprim_status clprim_pipeline_filter_expr(clprim_pipeline *p, const char *expression) {
  if (!p || !expression) return CLPRIM_ERROR_INVALID_ARGUMENT;
  struct clprim_stage st;
  memset(&st, 0, sizeof st);
  st.kind = CLPRIM__STAGE_FILTER_EXPR, st.type = x_type(p);
  return clprim__stages_add(&p->st, st, expression);
}

clprim_status clprim_pipeline_filter_flags(clprim_pipeline *p, unsigned input) {
  if (!p || input >= p->st.inputs) return CLPRIM_ERROR_INVALID_ARGUMENT;
  struct clprim_stage st;
  memset(&st, 0, sizeof st);
  st.kind = CLPRIM__STAGE_FILTER_FLAGS, st.type = x_type(p), st.input = input;
  return clprim__stages_add(&p->st, st, NULL);
}

/* A value's bits, zero-extended (32-bit types: the first 4 bytes). */
static cl_ulong bits_of(clprim_type type, clprim_value v) {
  return clprim_type_size(type) == 4 ? (cl_ulong)v.u32 : (cl_ulong)v.u64;
}

clprim_status clprim_pipeline_filter(clprim_pipeline *p, const clprim_predicate *pred) {
  if (!p || !pred || (unsigned)pred->op >= CLPRIM_PRED_COUNT || p->st.builtins == CLPRIM__STAGE_BUILTINS)
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  const clprim_type type = x_type(p);
  if (pred->op == CLPRIM_PRED_MASK_EQ && is_float(type)) return CLPRIM_ERROR_INVALID_ARGUMENT;
  struct clprim_stage st;
  memset(&st, 0, sizeof st);
  st.kind = CLPRIM__STAGE_FILTER_PRED, st.type = type, st.op = pred->op, st.builtin = p->st.builtins;
  CLPRIM_CHECK(clprim__stages_add(&p->st, st, NULL));
  p->st.q[2 * p->st.builtins] = bits_of(type, pred->a);
  p->st.q[2 * p->st.builtins + 1] = bits_of(type, pred->b);
  ++p->st.builtins;
  return CLPRIM_SUCCESS;
}

static void set_terminal(clprim_pipeline *p, enum terminal t, unsigned flags) {
  p->terminal = t, p->flags = flags;
}

clprim_status clprim_pipeline_collect(clprim_pipeline *p, unsigned flags) {
  if (!p || (flags & ~(CLPRIM_PIPE_VALUES_WANTED | CLPRIM_PIPE_INDICES_WANTED | CLPRIM_INDICES_64)))
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  set_terminal(p, TERM_COLLECT, flags);
  return CLPRIM_SUCCESS;
}

clprim_status clprim_pipeline_count(clprim_pipeline *p) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  set_terminal(p, TERM_COUNT, 0);
  return CLPRIM_SUCCESS;
}

clprim_status clprim_pipeline_reduce(clprim_pipeline *p, clprim_pipeline_reduction op,
                                     unsigned flags) {
  if (!p || (unsigned)op > CLPRIM_PIPE_ARGMAX ||
      (flags & ~(unsigned)(CLPRIM_REDUCE_ABS | CLPRIM_REDUCE_NAN_LARGEST)) ||
      (op == CLPRIM_PIPE_SUM && flags))
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  set_terminal(p, TERM_REDUCE, flags);
  p->op = op;
  return CLPRIM_SUCCESS;
}

clprim_status clprim_pipeline_histogram(clprim_pipeline *p, clprim_value lo, clprim_value hi,
                                        size_t bins) {
  if (!p || bins == 0) return CLPRIM_ERROR_INVALID_ARGUMENT;
  set_terminal(p, TERM_HISTOGRAM, 0);
  p->lo = lo, p->hi = hi, p->bins = bins;
  return CLPRIM_SUCCESS;
}

clprim_status clprim_pipeline_nth_element(clprim_pipeline *p, uint64_t k) {
  if (!p) return CLPRIM_ERROR_INVALID_ARGUMENT;
  set_terminal(p, TERM_NTH, 0);
  p->k = k;
  return CLPRIM_SUCCESS;
}

clprim_status clprim_pipeline_quantiles(clprim_pipeline *p, const double *q, size_t count) {
  if (!p || !q || count == 0 || count > 0xFFFFFFFFu) return CLPRIM_ERROR_INVALID_ARGUMENT;
  for (size_t j = 0; j < count; ++j)
    if (!(q[j] >= 0 && q[j] <= 1)) return CLPRIM_ERROR_INVALID_ARGUMENT;
  double *copy = malloc(count * sizeof *copy);
  if (!copy) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  memcpy(copy, q, count * sizeof *copy);
  free(p->q_list);
  p->q_list = copy, p->q_count = count;
  set_terminal(p, TERM_QUANTILES, 0);
  return CLPRIM_SUCCESS;
}

clprim_status clprim_pipeline_topk(clprim_pipeline *p, uint64_t k, unsigned flags) {
  if (!p || (flags & ~(unsigned)(CLPRIM_TOPK_SMALLEST | CLPRIM_TOPK_SORTED | CLPRIM_INDICES_64)))
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  set_terminal(p, TERM_TOPK, flags);
  p->k = k;
  return CLPRIM_SUCCESS;
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
  const struct clprim_kernel_request r = {"reduce.cl", p->st.source, options, name,
                                          NULL,        kernel,    NULL, CLPRIM__REDUCE_KERNELS};
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

/* The part of a run inside one public call: the fused kernels. *m gets the
 * passing count where the terminal compacts for a later call; *finished is
 * set where the terminal ran here too. */
static clprim_status run_fused(clprim_pipeline *p, size_t n, const clprim_buffer *inputs,
                               const clprim_buffer *count_range, const double *params,
                               uint64_t *m, int *finished) {
  clprim_context *ctx = p->ctx;
  cl_mem in[CLPRIM__STAGE_INPUTS], count_in = NULL;
  for (unsigned k = 0; k < p->st.inputs; ++k)
    CLPRIM_CHECK(
        clprim__range(ctx, inputs[k], clprim_type_size(p->st.types[k]), n, CLPRIM__READ, &in[k]));
  if (count_range) CLPRIM_CHECK(clprim__range(ctx, *count_range, 8, 1, CLPRIM__READ, &count_in));
  CLPRIM_CHECK(clprim__stages_source(&p->st, p->ctx, count_in != NULL));
  struct clprim_stage_args store;
  struct clprim_extra_args extra;
  clprim__stages_args(&p->st, p->ctx, in, count_in, params, &store, &extra);
  const clprim_type type = x_type(p);
  const size_t es = clprim_type_size(type);

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
    return CLPRIM_ERROR_INVALID_ARGUMENT;
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
    if (m == 0 || (p->terminal == TERM_NTH && p->k >= m)) return CLPRIM_ERROR_INVALID_ARGUMENT;
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
      CLPRIM_CHECK(clprim__call_begin(ctx));
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

static clprim_status run(clprim_pipeline *p, size_t n, const clprim_buffer *inputs,
                         const clprim_buffer *count, const double *params) {
  if (!p || !inputs || p->terminal == TERM_NONE || (count && !count->mem))
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  memset(p->written, 0, sizeof p->written);
  CLPRIM_CHECK(clprim__call_begin(p->ctx));
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
      p->terminal == TERM_REDUCE)
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

clprim_status clprim_pipeline_run(clprim_pipeline *p, size_t n, const clprim_buffer *inputs,
                                  const double *params) {
  return run(p, n, inputs, NULL, params);
}

clprim_status clprim_pipeline_run_counted(clprim_pipeline *p, size_t n, const clprim_buffer *inputs,
                                          clprim_buffer count, const double *params) {
  return run(p, n, inputs, &count, params);
}

/* ------------------------------------------------------------ results */

clprim_status clprim_pipeline_output(const clprim_pipeline *p, clprim_pipeline_out which,
                                     cl_mem *mem, size_t *elements) {
  if (!p || !mem || (unsigned)which >= OUTPUTS || !p->written[which])
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  *mem = p->buf[which];
  if (elements) *elements = p->elements[which];
  return CLPRIM_SUCCESS;
}

clprim_status clprim_pipeline_read_count(clprim_pipeline *p, uint64_t *count) {
  if (!count) return CLPRIM_ERROR_INVALID_ARGUMENT;
  return clprim_pipeline_read(p, CLPRIM_PIPE_OUT_COUNT, 0, sizeof *count, count);
}

clprim_status clprim_pipeline_read_result(clprim_pipeline *p, clprim_value *value,
                                          uint64_t *index) {
  if (!p || (!value && !index) || p->terminal != TERM_REDUCE) return CLPRIM_ERROR_INVALID_ARGUMENT;
  uint64_t words[2];
  CLPRIM_CHECK(clprim_pipeline_read(p, CLPRIM_PIPE_OUT_RESULT, 0, sizeof words, words));
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
  if (!p || !host || (unsigned)which >= OUTPUTS || !p->written[which])
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  const size_t have = p->elements[which] * p->elem_size[which];
  if (offset > have || bytes > have - offset) return CLPRIM_ERROR_BUFFER_TOO_SMALL;
  if (bytes == 0) return CLPRIM_SUCCESS;
  /* Not a primitive call: the context is held, but its events (last_event,
   * last_time: the run's) and the wait list for its next call stay. The
   * queue is in order, so the read follows the run. */
  CLPRIM_CHECK(clprim__hold(p->ctx));
  const cl_int err = clEnqueueReadBuffer(clprim_context_queue(p->ctx), p->buf[which], CL_TRUE,
                                         offset, bytes, host, 0, NULL, NULL);
  clprim__unhold(p->ctx);
  return (clprim_status)err;
}

