/* Rows of the pipeline family: fused map -> filter -> terminal chains
 * against a baseline of the same run, and the same chains as separate
 * clprim calls against the fused run. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <string.h>

#define PIPE_TOP_K 100

struct pipe_arg {
  clprim_pipeline *pipe;
  clprim_buffer in;
  size_t n;
  double params[8];
  /* the baseline's call, when pipe is NULL */
  int baseline; /* 1: clprim_select (values), 2: clprim_median, 3: clprim_topk */
  clprim_predicate pred;
  cl_mem values, count, indices;
};

static clprim_status call_pipe(clprim_context *ctx, void *p) {
  struct pipe_arg *a = p;
  clprim_value v;
  switch (a->baseline) {
  case 1:
    return clprim_select(ctx, a->n, CLPRIM_FLOAT, a->in, &a->pred, 0, clprim_buf(a->values),
                         clprim_buf(NULL), NULL, clprim_buf(a->count));
  case 2:
    return clprim_median(ctx, a->n, CLPRIM_FLOAT, a->in, 0, &v, clprim_buf(NULL));
  case 3:
    return clprim_topk(ctx, a->n, CLPRIM_FLOAT, a->in, PIPE_TOP_K, 0, clprim_buf(a->values),
                       clprim_buf(a->indices));
  default:
    return clprim_pipeline_run(a->pipe, a->n, &a->in, a->params);
  }
}

/* The end of a pipeline row: ms against a baseline of the same run. */
static void baseline_fields(struct bench *b, double ms, const char *base_name, double base_ms) {
  bench_row_string(b, "baseline", "  %s", base_name);
  bench_row_number(b, "baseline_ms", "%.5f", " %8.4f ms", base_ms);
  bench_row_number(b, "ratio_to_baseline", "%.3f", "  ratio %.2f", ms / base_ms);
  bench_row_end(b);
}

/* The same chains as separate clprim calls, as a user without pipelines
 * would write them: the map as a pipeline of the map alone collecting every
 * element (clprim has no map call), then clprim_select of the mapped
 * elements and clprim_reduce_sum of those (count read by the host), or the
 * selection alone (count on the device); the filter -> median as
 * clprim_select_expr_params (count read) then clprim_median. */
struct chain_arg {
  struct pipe_arg *a;
  clprim_pipeline *map; /* x = a * p0, every element collected */
  int kind;             /* 0: map, select, sum; 1: map, select; 2: select_expr, median */
};

static clprim_status call_chain(clprim_context *ctx, void *p) {
  struct chain_arg *c = p;
  struct pipe_arg *a = c->a;
  clprim_status st;
  uint64_t count = 0;
  clprim_value v;
  if (c->kind == 2) {
    st = clprim_select_expr_params(
        ctx, a->n, CLPRIM_FLOAT, a->in, "!isnan(x) && x >= (float)p0 && x < (float)p1", a->params,
        0, clprim_buf(a->values), clprim_buf(NULL), &count, clprim_buf(NULL));
    if (st == CLPRIM_SUCCESS)
      st = clprim_median(ctx, count, CLPRIM_FLOAT, clprim_buf(a->values), 0, &v, clprim_buf(NULL));
    return st;
  }
  cl_mem mapped = NULL;
  st = clprim_pipeline_run(c->map, a->n, &a->in, a->params);
  if (st == CLPRIM_SUCCESS)
    st = clprim_pipeline_output(c->map, CLPRIM_PIPE_OUT_VALUES, &mapped, NULL);
  if (st == CLPRIM_SUCCESS)
    st = clprim_select(ctx, a->n, CLPRIM_FLOAT, clprim_buf(mapped), &a->pred, 0,
                       clprim_buf(a->values), clprim_buf(NULL), c->kind == 0 ? &count : NULL,
                       clprim_buf(c->kind == 0 ? NULL : a->count));
  if (st == CLPRIM_SUCCESS && c->kind == 0)
    st = clprim_reduce_sum(ctx, count, CLPRIM_FLOAT, clprim_buf(a->values), 0, NULL,
                           clprim_buf(a->count));
  return st;
}

/* A row of the separate calls, against the fused run. */
static void report_chain(struct bench *b, const char *variant, struct chain_arg *c,
                         const char *fused_name, double fused_ms) {
  double ms = 0;
  const clprim_status st = bench_time_span(b, call_chain, c, &ms);
  if (st != CLPRIM_SUCCESS) {
    bench_failed(b, "pipeline", variant, CLPRIM_FLOAT, c->a->n, "separate calls", st);
    return;
  }
  bench_row_begin(b, "pipeline", variant, CLPRIM_FLOAT, c->a->n, ms);
  baseline_fields(b, ms, fused_name, fused_ms);
}

/* A pipeline row against a baseline measured in the same run (ratio =
 * ms / base_ms); the pipeline's ms, 0 when it failed. */
static double report_vs(struct bench *b, const char *variant, size_t n, struct pipe_arg *a,
                        const char *base_name, double base_ms) {
  double ms = 0;
  if (!bench_row_timed(b, "pipeline", variant, CLPRIM_FLOAT, n, call_pipe, a, &ms)) return 0;
  baseline_fields(b, ms, base_name, base_ms);
  return ms;
}

/* Pipeline `row` of run_pipeline's comment, stages and terminal. */
static clprim_status pipeline_stages(clprim_pipeline *pipe, int row) {
  clprim_status st;
  if (row < 2) {
    st = clprim_pipeline_map(pipe, CLPRIM_FLOAT, "x * (float)p0");
    if (st == CLPRIM_SUCCESS) st = clprim_pipeline_filter_expr(pipe, "x > (float)p1");
    if (st == CLPRIM_SUCCESS)
      st = row == 0 ? clprim_pipeline_reduce(pipe, CLPRIM_PIPE_SUM, 0)
                    : clprim_pipeline_collect(pipe, CLPRIM_PIPE_VALUES_WANTED);
    return st;
  }
  const double half = 0.5;
  st = clprim_pipeline_filter_expr(pipe, "!isnan(x) && x >= (float)p0 && x < (float)p1");
  if (st == CLPRIM_SUCCESS)
    st = row == 2 ? clprim_pipeline_quantiles(pipe, &half, 1)
                  : clprim_pipeline_topk(pipe, PIPE_TOP_K, 0);
  return st;
}

/* Rows 0 and 1 at p = 0.5 and 0.01 passing, each followed by its separate
 * calls: map-filter-sum against one read; map-filter-collect against
 * clprim_select of the same elements. */
static void map_filter_rows(struct bench *b, int row, struct pipe_arg *a, struct chain_arg *chain,
                            double read) {
  const double rates[2] = {0.5, 0.01};
  char variant[48];
  for (int r = 0; r < 2; ++r) {
    a->params[0] = 2.0, a->params[1] = 2.0 * (1.0 - rates[r]);
    memset(&a->pred, 0, sizeof a->pred);
    a->pred.op = CLPRIM_PRED_GT;
    double fused;
    if (row == 0) {
      a->baseline = 0;
      snprintf(variant, sizeof variant, "map-filter-sum p=%.2f", rates[r]);
      fused = report_vs(b, variant, a->n, a, "read", read);
      snprintf(variant, sizeof variant, "sep. map,select,sum p=%.2f", rates[r]);
    } else {
      double base = 0;
      const char *what = "";
      a->pred.a.f32 = (float)(1.0 - rates[r]);
      a->baseline = 1;
      clprim_status st = bench_time(b, call_pipe, a, &base, &what);
      if (st != CLPRIM_SUCCESS) bench_fail_setup(b, "clprim_select baseline", st);
      a->baseline = 0;
      snprintf(variant, sizeof variant, "map-filter-collect p=%.2f", rates[r]);
      fused = report_vs(b, variant, a->n, a, "select", base);
      snprintf(variant, sizeof variant, "sep. map,select p=%.2f", rates[r]);
    }
    a->pred.a.f32 = (float)a->params[1];
    chain->kind = row;
    if (fused > 0) report_chain(b, variant, chain, "fused", fused);
  }
}

/* Rows 2 and 3: a filter that drops 1% then the median (against
 * clprim_median of the whole input, then its separate calls), or the top
 * 100 (against clprim_topk of the whole input). */
static void filter_rows(struct bench *b, int row, struct pipe_arg *a, struct chain_arg *chain) {
  double base = 0;
  const char *what = "";
  a->baseline = row == 2 ? 2 : 3;
  clprim_status st = bench_time(b, call_pipe, a, &base, &what);
  if (st != CLPRIM_SUCCESS)
    bench_fail_setup(b, row == 2 ? "clprim_median baseline" : "clprim_topk baseline", st);
  a->baseline = 0, a->params[0] = 0.0, a->params[1] = 0.99;
  const double fused = report_vs(b, row == 2 ? "filter-median p=0.99" : "filter-topk100 p=0.99",
                                 a->n, a, row == 2 ? "median" : "topk", base);
  if (row == 2 && fused > 0) {
    chain->kind = 2;
    report_chain(b, "sep. select_expr,median", chain, "fused", fused);
  }
}

/* Uniform floats in [0, 1): (0) x = 2 a (map), x > 2 (1 - p) (filter, p
 * passing), sum: against one read of the input; (1) the same stages,
 * collect values (count on the device): against clprim_select of a > 1 - p
 * (the same elements); (2) a filter that drops 1% (NaN checks and a range
 * a < 0.99 with parameters), then the median of the rest: against
 * clprim_median of the whole input; (3) that filter, then the top 100
 * (values and indices): against clprim_topk of the whole input. After (0),
 * (1) and (2), the same chain as separate calls (struct chain_arg) against
 * the fused run. */
static void run_pipeline(struct bench *b, clprim_type type, size_t n) {
  const size_t bytes = n * sizeof(float);
  void *host = bench_random(b, type, n, 4);
  struct pipe_arg a;
  memset(&a, 0, sizeof a);
  a.n = n;
  cl_mem in = bench_buffer(b, bytes, host);
  a.in = clprim_buf(in);
  bench_free(b, host);
  a.values = bench_buffer(b, bytes, NULL);
  a.count = bench_buffer(b, 16, NULL);
  a.indices = bench_buffer(b, PIPE_TOP_K * 4, NULL);
  const double read = bench_read_ms(b, in, bytes);
  const clprim_type ft = CLPRIM_FLOAT;
  clprim_status st;
  /* The separate calls' map: x = a * p0, every element collected. */
  struct chain_arg chain = {&a, NULL, 0};
  if ((st = clprim_pipeline_create(&chain.map, b->ctx, 1, &ft)) != CLPRIM_SUCCESS ||
      (st = clprim_pipeline_map(chain.map, CLPRIM_FLOAT, "x * (float)p0")) != CLPRIM_SUCCESS ||
      (st = clprim_pipeline_collect(chain.map, CLPRIM_PIPE_VALUES_WANTED)) != CLPRIM_SUCCESS)
    bench_fail_setup(b, "the separate calls' map", st);
  for (int row = 0; row < 4; ++row) {
    clprim_pipeline *pipe = NULL;
    if ((st = clprim_pipeline_create(&pipe, b->ctx, 1, &ft)) != CLPRIM_SUCCESS)
      bench_fail_setup(b, "clprim_pipeline_create", st);
    if ((st = pipeline_stages(pipe, row)) != CLPRIM_SUCCESS) {
      clprim_pipeline_free(pipe);
      bench_fail_setup(b, "pipeline stages", st);
    }
    a.pipe = pipe;
    if (row < 2)
      map_filter_rows(b, row, &a, &chain, read);
    else
      filter_rows(b, row, &a, &chain);
    clprim_pipeline_free(pipe);
    a.pipe = NULL;
  }
  clprim_pipeline_free(chain.map);
  bench_release(b, in);
  bench_release(b, a.values);
  bench_release(b, a.count);
  bench_release(b, a.indices);
}

/* Floats a = (input % 1000): x = 2 a > 1000 collected (values, indices
 * and count), then the same filter's median (the terminal replaced). */
static int check_pipeline(struct bench_check *c) {
  const size_t n = c->n;
  float *a = check_host(c, n * 4), *values = check_host(c, n * 4);
  uint32_t *indices = check_host(c, n * 4), *passing = check_host(c, n * 4);
  if (!a || !values || !indices || !passing) return 0;
  for (size_t i = 0; i < n; ++i)
    a[i] = (float)(c->host[i] % 1000);
  const clprim_buffer in = clprim_buf(check_buffer(c, n * 4, a));
  const clprim_type ft = CLPRIM_FLOAT;
  const double params[8] = {2.0, 1000.0}, half = 0.5;
  clprim_pipeline *pipe = NULL;
  uint64_t count = 0;
  clprim_value median;
  const int ran =
      in.mem && check_ok(c, clprim_pipeline_create(&pipe, c->ctx, 1, &ft)) &&
      check_ok(c, pipeline_stages(pipe, 1)) &&
      check_ok(c, clprim_pipeline_collect(pipe, CLPRIM_PIPE_VALUES_WANTED |
                                                    CLPRIM_PIPE_INDICES_WANTED)) &&
      check_ok(c, clprim_pipeline_run(pipe, n, &in, params)) &&
      check_ok(c, clprim_pipeline_read(pipe, CLPRIM_PIPE_OUT_COUNT, 0, 8, &count)) && count <= n &&
      check_ok(c, clprim_pipeline_read(pipe, CLPRIM_PIPE_OUT_VALUES, 0, count * 4, values)) &&
      check_ok(c, clprim_pipeline_read(pipe, CLPRIM_PIPE_OUT_INDICES, 0, count * 4, indices)) &&
      check_ok(c, clprim_pipeline_quantiles(pipe, &half, 1)) &&
      check_ok(c, clprim_pipeline_run(pipe, n, &in, params)) &&
      check_ok(c, clprim_pipeline_read(pipe, CLPRIM_PIPE_OUT_VALUES, 0, 4, &median.f32));
  clprim_pipeline_free(pipe);
  if (!ran) return 0;
  size_t m = 0;
  for (size_t i = 0; i < n; ++i)
    if (2 * a[i] > 1000) {
      if (m >= count || values[m] != 2 * a[i] || indices[m] != i) return 0;
      passing[m++] = (uint32_t)(2 * a[i]);
    }
  qsort(passing, m, 4, check_cmp_u32);
  return m == count && m > 0 && median.f32 == (float)passing[clprim_quantile_rank(m, 0.5)];
}

static const struct bench_op ops[] = {
    {"pipeline", 0x10u,
     "float: map -> filter -> sum (vs one read), map -> filter -> collect (vs\n"
     "                       clprim_select of the same elements), filter -> median (vs\n"
     "                       clprim_median of the unfiltered input), filter -> top-100;\n"
     "                       \"sep.\" rows: the same chains as separate clprim calls (vs\n"
     "                       the fused run), timed between markers",
     check_pipeline},
};

const struct bench_family bench_pipeline = {
    "pipeline", ops, BENCH_COUNT(ops), run_pipeline, NULL, 0,
    "the stages as one generated function, the element source of the terminal's kernels "
    "(reduce, selection, top-k); compaction first where a terminal cannot skip elements",
    NULL,
    NULL};
