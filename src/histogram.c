/* histogram.c: dense reduce-by-key and histograms (kernels in
 * cl/histogram.cl).
 *
 * Outputs are overwritten: they are zero-filled, then the kernel adds into
 * them. Bins that fit in local memory (with room to spare for occupancy) are
 * counted per work-group in local memory (hist_local), others with global
 * atomics (hist_global). Counts outside the bins go to a 3-word scratch
 * buffer (below / above / NaN; keys out of range count as "below"), read
 * back only when the caller asks. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SLOT_OUTSIDE = CLPRIM_SCRATCH_HIST0 };

#define MAX_BINS ((size_t)1 << 31)

struct hist_config {
  unsigned wg;
  size_t max_groups;
  unsigned quads; /* 4-vectors per work-item per chunk (the kernel's QUADS) */
  int aggregate;  /* hist_global's peer aggregation (the kernel's AGGREGATE) */
  int local_runs; /* hist_local adds runs in registers first (LOCAL_RUNS); -1: the
                   * default, runs for sums only (see hist_kernel) */
};

static struct hist_config hist_config(const clprim_context *ctx) {
  /* Peer aggregation on GPUs only: CPU runtimes run subgroup operations as
   * work-group barriers (PoCL), at a cost and with no collisions to save. */
  struct hist_config c = {256, 0, 4, ctx->info.device_type & CL_DEVICE_TYPE_GPU ? 2 : 0, -1};
  /* $CLPRIM_HIST_QUADS (1, 2, 4 or 8) and $CLPRIM_HIST_AGG (0, 1, 2), to compare. */
  const char *env = getenv("CLPRIM_HIST_QUADS");
  if (env && (atoi(env) == 1 || atoi(env) == 2 || atoi(env) == 4 || atoi(env) == 8))
    c.quads = (unsigned)atoi(env);
  env = getenv("CLPRIM_HIST_AGG");
  if (env && atoi(env) >= 0 && atoi(env) <= 2) c.aggregate = atoi(env);
  env = getenv("CLPRIM_HIST_RUNS"); /* 0|1: hist_local without / with runs */
  if (env) c.local_runs = atoi(env) != 0;
  size_t per_unit = 8;
  if (!(ctx->info.device_type & CL_DEVICE_TYPE_GPU)) c.wg = 64, per_unit = 2;
  while (c.wg > ctx->info.max_work_group_size && c.wg > 32)
    c.wg /= 2;
  c.max_groups = (ctx->info.compute_units ? ctx->info.compute_units : 1) * per_unit;
  return c;
}

/* Local memory hist_local may use for its bins: half the device's (so two
 * work-groups fit per compute unit), at most 32 KiB, less the reduction
 * scratch. */
static size_t local_budget(const clprim_context *ctx) {
  size_t budget = (size_t)ctx->info.local_mem_size / 2;
  if (budget > 32768) budget = 32768;
  size_t scratch = (size_t)hist_config(ctx).wg * 4 + 256;
  return budget > scratch ? budget - scratch : 0;
}

size_t clprim__histogram_local_max(const clprim_context *ctx, int has_counts, size_t sum_size) {
  size_t per_bin = (has_counts ? 4 : 0) + sum_size;
  return per_bin ? local_budget(ctx) / per_bin : 0;
}

/* What one call computes. */
struct hist_call {
  int keys_mode;      /* keys in [0, bins) (else a value histogram) */
  clprim_type x_type; /* the keys' or values' type */
  cl_mem in;
  clprim_type v_type; /* summed values' type, when values */
  cl_mem values;      /* NULL: counts only */
  size_t n, bins;
  cl_mem counts, sums; /* either may be NULL, not both */
  clprim_value lo, hi, scale;
  uint64_t range;
  uint64_t *outside; /* NULL, or 3 words (keys: 1) read back */
  size_t outside_words;
};

static int is_float(clprim_type t) {
  return t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE;
}

static clprim_status check_distinct(const cl_mem *mems, int count) {
  for (int a = 0; a < count; ++a)
    for (int b = a + 1; b < count; ++b)
      if (mems[a] && mems[a] == mems[b]) return CLPRIM_ERROR_INVALID_ARGUMENT;
  return CLPRIM_SUCCESS;
}

static clprim_status check_call(clprim_context *ctx, const struct hist_call *c) {
  if (!ctx) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__check_type(ctx, c->x_type));
  if (c->keys_mode && c->x_type != CLPRIM_INT32 && c->x_type != CLPRIM_UINT32)
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  if (c->values) CLPRIM_CHECK(clprim__check_type(ctx, c->v_type));
  if (c->bins == 0 || (!c->counts && !c->sums)) return CLPRIM_ERROR_INVALID_ARGUMENT;
  if (c->bins > MAX_BINS || (uint64_t)c->n > UINT32_MAX) return CLPRIM_ERROR_SIZE_TOO_LARGE;
  const size_t xs = clprim_type_size(c->x_type);
  const size_t vs = c->values ? clprim_type_size(c->v_type) : 0;
  if (clprim__bytes(c->n, xs) == SIZE_MAX || clprim__bytes(c->bins, 8) == SIZE_MAX)
    return CLPRIM_ERROR_SIZE_TOO_LARGE;
  CLPRIM_CHECK(clprim__check_buffer(ctx, c->in, c->n * xs));
  if (c->values) CLPRIM_CHECK(clprim__check_buffer(ctx, c->values, c->n * vs));
  if (c->counts) CLPRIM_CHECK(clprim__check_buffer(ctx, c->counts, c->bins * 4));
  if (c->sums) CLPRIM_CHECK(clprim__check_buffer(ctx, c->sums, c->bins * vs));
  cl_mem mems[4] = {c->in, c->values, c->counts, c->sums};
  CLPRIM_CHECK(check_distinct(mems, 4));
  /* 64-bit sums need 64-bit atomics (atom_add, or compare-and-swap for
   * double). */
  if (c->sums && vs == 8 && !ctx->info.has_int64_atomics) return CLPRIM_ERROR_UNSUPPORTED_OPERATION;
  return CLPRIM_SUCCESS;
}

static int want_nv_fast(const clprim_context *ctx) {
  if (ctx->info.path != CLPRIM_PATH_NV_PTX || ctx->hist_nv_fast < 0) return 0;
  if (!strstr(ctx->path_options[CLPRIM_PATH_NV_PTX], "CLPRIM_NV_SYNC=1")) return 0;
  const char *env = getenv("CLPRIM_HIST_NV_FAST"); /* "0": the portable kernels, to compare */
  return !(env && strcmp(env, "0") == 0);
}

/* Builds the kernel for the call (and hist_zero of the same program);
 * *local_copies is 0 for hist_global. */
static clprim_status hist_kernel(clprim_context *ctx, const struct hist_call *c,
                                 const struct hist_config *cfg, cl_kernel *kernel,
                                 cl_kernel *zero_kernel, unsigned *local_copies) {
  const unsigned wg = cfg->wg;
  static const char *const sum_type[CLPRIM_TYPE_COUNT] = {"uint",  "uint",  "ulong",
                                                          "ulong", "float", "double"};
  static const char *const v_kind[CLPRIM_TYPE_COUNT] = {
      "", "", " -DV_IS_LONG", " -DV_IS_LONG", " -DV_IS_FLOAT", " -DV_IS_DOUBLE"};
  const size_t vs = c->sums ? clprim_type_size(c->v_type) : 0;
  const size_t local_max = clprim__histogram_local_max(ctx, c->counts != NULL, vs);
  unsigned copies = 0;
  if (c->bins <= local_max) {
    copies = 1;
    /* Several copies of the bins (one per group of 32 work-items) on GPUs,
     * where work-items of a work-group run at once and collide. */
    if (ctx->info.device_type & CL_DEVICE_TYPE_GPU)
      while (copies * 2 <= wg / 32 && copies * 2 <= 8 && c->bins * copies * 2 <= local_max)
        copies *= 2;
  }
  char values_opt[96] = "";
  if (c->sums)
    snprintf(values_opt, sizeof values_opt, " -DV_T=%s -DS_T=%s%s", clprim__cl_type(c->v_type),
             sum_type[c->v_type], v_kind[c->v_type]);
  /* hist_local: counts alone go straight to the local atomics, element by
   * element (fewer instructions: 0.394 against 0.436 ms for 2^28 uniform
   * floats into 256 bins on the H100); sums add runs of equal keys in
   * registers first, as a float or double local add is a compare-and-swap
   * loop that equal keys in a warp would serialize. */
  const int local_runs = cfg->local_runs >= 0 ? cfg->local_runs : c->sums != NULL;
  for (;;) {
    const int nv_fast = want_nv_fast(ctx);
    char options[256];
    snprintf(
        options, sizeof options,
        "-DWG=%u -DCOPIES=%u -DQUADS=%u -DAGGREGATE=%d -DLOCAL_RUNS=%d -DX_T=%s -DX_FLOAT=%d%s%s "
        "-DHAS_COUNTS=%d%s",
        wg, copies ? copies : 1, cfg->quads, cfg->aggregate, local_runs, clprim__cl_type(c->x_type),
        is_float(c->x_type), c->keys_mode ? " -DMODE_KEYS" : "", values_opt, c->counts != NULL,
        nv_fast ? " -DNV_FAST" : "");
    clprim_status st =
        clprim__kernel(ctx, "histogram.cl", options, copies ? "hist_local" : "hist_global", kernel);
    if (st != CLPRIM_SUCCESS && nv_fast) {
      /* The driver refused the PTX (match.any, red.f64): portable kernels. */
      ctx->hist_nv_fast = -1;
      continue;
    }
    if (st == CLPRIM_SUCCESS && nv_fast) ctx->hist_nv_fast = 1;
    if (st == CLPRIM_SUCCESS)
      st = clprim__kernel(ctx, "histogram.cl", options, "hist_zero", zero_kernel);
    *local_copies = copies;
    return st;
  }
}

static clprim_status hist_run(clprim_context *ctx, const struct hist_call *c) {
  CLPRIM_CHECK(check_call(ctx, c));
  const struct hist_config cfg = hist_config(ctx);
  cl_kernel kernel, zero_kernel;
  unsigned copies;
  CLPRIM_CHECK(hist_kernel(ctx, c, &cfg, &kernel, &zero_kernel, &copies));
  cl_mem outside;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_OUTSIDE, 16, &outside));

  clprim__call_begin(ctx);
  const size_t vs = c->values ? clprim_type_size(c->v_type) : 4;
  /* One launch zeroes the outside counters and the outputs (an absent
   * output: the outside buffer again, 0 words). */
  cl_mem zeroed[3] = {outside, c->counts ? c->counts : outside, c->sums ? c->sums : outside};
  cl_ulong zero_words[3] = {4, c->counts ? c->bins : 0, c->sums ? c->bins * vs / 4 : 0};
  size_t most = zero_words[1] > zero_words[2] ? zero_words[1] : zero_words[2];
  size_t zero_groups = most / cfg.wg + 1;
  if (zero_groups > cfg.max_groups) zero_groups = cfg.max_groups;
  CLPRIM_CHECK(clprim__set_args(zero_kernel, 6, sizeof zeroed[0], &zeroed[0], sizeof zero_words[0],
                                &zero_words[0], sizeof zeroed[1], &zeroed[1], sizeof zero_words[1],
                                &zero_words[1], sizeof zeroed[2], &zeroed[2], sizeof zero_words[2],
                                &zero_words[2]));
  CLPRIM_CHECK(clprim__enqueue(ctx, zero_kernel, zero_groups, cfg.wg));
  if (c->n > 0) {
    const size_t items = (size_t)cfg.quads * 4, chunks = c->n / items + (c->n % items != 0);
    size_t groups = chunks / cfg.wg + (chunks % cfg.wg != 0);
    if (groups > cfg.max_groups) groups = cfg.max_groups;
    /* Unused buffers are bound to the outside scratch buffer. */
    cl_mem values = c->values ? c->values : outside;
    cl_mem counts = c->counts ? c->counts : outside, sums = c->sums ? c->sums : outside;
    const size_t xs = clprim_type_size(c->x_type);
    cl_ulong n64 = c->n, range = c->range;
    cl_uint bins = (cl_uint)c->bins;
    CLPRIM_CHECK(clprim__set_args(kernel, 11, sizeof c->in, &c->in, sizeof values, &values,
                                  sizeof n64, &n64, sizeof bins, &bins, xs, &c->lo, xs, &c->hi, xs,
                                  &c->scale, sizeof range, &range, sizeof counts, &counts,
                                  sizeof sums, &sums, sizeof outside, &outside));
    if (copies) { /* the local bins: __local arguments 11 and 12 */
      const size_t local_bins = c->bins * copies;
      cl_int err = clSetKernelArg(kernel, 11, c->counts ? local_bins * 4 : 4, NULL);
      if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 12, c->sums ? local_bins * vs : 8, NULL);
      if (err != CL_SUCCESS) return (clprim_status)err;
    }
    CLPRIM_CHECK(clprim__enqueue(ctx, kernel, groups, cfg.wg));
  }
  if (c->outside) {
    cl_uint words[4];
    CLPRIM_CHECK(clprim__read(ctx, outside, 0, sizeof words, words));
    for (size_t k = 0; k < c->outside_words; ++k)
      c->outside[k] = words[k];
  }
  return CLPRIM_SUCCESS;
}

clprim_status clprim_histogram_keys(clprim_context *ctx, clprim_type key_type, cl_mem keys,
                                    size_t n, size_t num_keys, cl_mem counts, uint64_t *invalid) {
  struct hist_call c;
  memset(&c, 0, sizeof c);
  c.keys_mode = 1, c.x_type = key_type, c.in = keys, c.n = n, c.bins = num_keys;
  c.counts = counts, c.outside = invalid, c.outside_words = 1;
  if (!counts) return CLPRIM_ERROR_INVALID_ARGUMENT;
  return hist_run(ctx, &c);
}

clprim_status clprim_reduce_by_key_dense(clprim_context *ctx, clprim_type key_type, cl_mem keys,
                                         clprim_type value_type, cl_mem values, size_t n,
                                         size_t num_keys, cl_mem sums, cl_mem counts,
                                         uint64_t *invalid) {
  struct hist_call c;
  memset(&c, 0, sizeof c);
  c.keys_mode = 1, c.x_type = key_type, c.in = keys, c.v_type = value_type, c.values = values;
  c.n = n, c.bins = num_keys, c.sums = sums, c.counts = counts;
  c.outside = invalid, c.outside_words = 1;
  if (!values || !sums) return CLPRIM_ERROR_INVALID_ARGUMENT;
  return hist_run(ctx, &c);
}

clprim_status clprim_histogram_even(clprim_context *ctx, clprim_type type, cl_mem in, size_t n,
                                    clprim_value lo, clprim_value hi, size_t bins, cl_mem counts,
                                    uint64_t *outside) {
  struct hist_call c;
  memset(&c, 0, sizeof c);
  c.x_type = type, c.in = in, c.n = n, c.bins = bins, c.counts = counts;
  c.outside = outside, c.outside_words = 3;
  if (!ctx || !counts || bins == 0) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__check_type(ctx, type));
  if (bins > MAX_BINS) return CLPRIM_ERROR_SIZE_TOO_LARGE;
  /* lo < hi, both numbers, hi - lo finite; the scale in the type itself, as
   * the kernel (and any reference) computes bins. */
  c.lo = lo, c.hi = hi;
  switch (type) {
  case CLPRIM_FLOAT: {
    float width = hi.f32 - lo.f32, scale = (float)bins / width;
    if (!(lo.f32 < hi.f32) || !isfinite(width) || !isfinite(scale) || !(scale > 0))
      return CLPRIM_ERROR_INVALID_ARGUMENT;
    memset(&c.scale, 0, sizeof c.scale);
    c.scale.f32 = scale;
    break;
  }
  case CLPRIM_DOUBLE: {
    double width = hi.f64 - lo.f64, scale = (double)bins / width;
    if (!(lo.f64 < hi.f64) || !isfinite(width) || !isfinite(scale) || !(scale > 0))
      return CLPRIM_ERROR_INVALID_ARGUMENT;
    c.scale.f64 = scale;
    break;
  }
  case CLPRIM_INT32:
    if (lo.i32 >= hi.i32) return CLPRIM_ERROR_INVALID_ARGUMENT;
    c.range = (uint64_t)((int64_t)hi.i32 - lo.i32);
    break;
  case CLPRIM_UINT32:
    if (lo.u32 >= hi.u32) return CLPRIM_ERROR_INVALID_ARGUMENT;
    c.range = hi.u32 - lo.u32;
    break;
  case CLPRIM_INT64:
    if (lo.i64 >= hi.i64) return CLPRIM_ERROR_INVALID_ARGUMENT;
    c.range = (uint64_t)hi.i64 - (uint64_t)lo.i64;
    break;
  default:
    if (lo.u64 >= hi.u64) return CLPRIM_ERROR_INVALID_ARGUMENT;
    c.range = hi.u64 - lo.u64;
    break;
  }
  /* Integer bins are (x - lo) * bins / (hi - lo) in 64 bits. */
  if (!is_float(type) && c.range > UINT64_MAX / bins) return CLPRIM_ERROR_INVALID_ARGUMENT;
  return hist_run(ctx, &c);
}
