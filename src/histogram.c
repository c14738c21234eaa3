/* histogram.c: histograms (clprim_histogram_keys, clprim_histogram_even)
 * and the engine they share with dense reduce-by-key
 * (clprim_reduce_by_key_dense in reduce_by_key.c): clprim__histogram,
 * kernels in cl/histogram.cl.
 *
 * Outputs are overwritten: the kernels add into zeroed scratch, then one
 * launch (hist_commit) copies the counts, sums and outside counters to the
 * caller's buffers, so that a call that fails writes nothing. Bins that fit in local memory (with room to spare for occupancy) are
 * counted per work-group in local memory (hist_local), others with global
 * atomics (hist_global), or, for large inputs on GPUs, by the binned path:
 * elements partitioned by range of bins (2^range_shift bins, what local
 * memory holds), then each range counted in local memory (hist_part_* in
 * cl/histogram.cl; plan_binned says when). Counts outside the bins go to a
 * 3-word scratch buffer (below / above / NaN; keys out of range count as
 * "below"), read back only when the caller asks. Dense reduce-by-key with
 * CLPRIM_EXACT: hist_exact (each key's words of the exact accumulator, in
 * local memory or in a window in global memory; one rounding each). */
#include "histogram.h"
#include "engine/count_scan_scatter.h"
#include "engine/exact.h"
#include "engine/scan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Scratch buffers of this family (clprim__scratch names them). */
#define SLOT_OUTSIDE "histogram: outside counts"
#define SLOT_COUNTS "histogram: counts" /* the kernels add here; hist_commit copies */
#define SLOT_SUMS "histogram: sums"
#define SLOT_RANGE_COUNTS "histogram: counts per range and group" /* binned, scanned */
#define SLOT_PART_BINS "histogram: partitioned bins"   /* binned: bin & mask per element (ushort) */
#define SLOT_PART_VALUES "histogram: partitioned values" /* binned */

#define MAX_BINS ((size_t)1 << 31)

/* The family's knobs and table (docs/TUNING.md): -1 where the code
 * chooses (nv_fast: on where the PTX builds; binned: automatic; runs: for
 * sums only; range_shift: as many bins as local memory holds). */
/* clang-format off */
enum {
  HIST_QUADS, HIST_AGG, HIST_RUNS, HIST_NV_FAST, HIST_BINNED, HIST_RANGE_SHIFT, HIST_SLICE,
  HIST_PQUADS, HIST_PWG, HIST_EXACT_LOCAL, HIST_EXACT_KEYS, HIST_EXACT_SPAN, HIST_KNOBS
};
/* clang-format on */
static const struct clprim_knob hist_knobs[HIST_KNOBS] = {
    {"quads", 1, 8},          {"agg", 0, 2},
    {"runs", 0, 1},           {"nv_fast", 0, 1},
    {"binned", 0, 1},         {"range_shift", 0, 16},
    {"slice", 1, 0xFFFFFFFF}, {"pquads", 1, 8},
    {"pwg", 32, 1024},        {"exact_local", 0, 1},
    {"exact_keys", 1, MAX_BINS}, {"exact_span", 1, 0x7FFFFFFF}};
#define K CLPRIM__KNOB
static const struct clprim_tuning_row hist_table[] = {
    {0, 0, NULL, 0, 0, K(HIST_QUADS) | K(HIST_AGG) | K(HIST_SLICE) | K(HIST_PQUADS) | K(HIST_PWG),
     {4, 0, 0, 0, 0, 0, 1 << 18, 4, 256},
     "portable: 16 elements a work-item and chunk, no lane aggregation (CPU runtimes run "
     "subgroup operations as barriers); binned: 2^18 elements a slice, 16 a work-item"},
    {0, 0, NULL, 0, 4, K(HIST_PQUADS), {[HIST_PQUADS] = 2}, "binned with values: 8 a work-item"},
    {0, 0, NULL, 0, 8, K(HIST_PQUADS), {[HIST_PQUADS] = 2}, "binned with values: 8 a work-item"},
    {0, CL_DEVICE_TYPE_CPU, NULL, 0, 0, K(HIST_PWG), {[HIST_PWG] = 64},
     "CPUs: the binned passes in the launch's small work-groups"},
    {0, CL_DEVICE_TYPE_GPU, NULL, 0, 0, K(HIST_AGG) | K(HIST_PWG), {[HIST_AGG] = 2, [HIST_PWG] = 512},
     "GPUs: each work-item's last run aggregated across lanes; binned passes of 512 (H100, "
     "2^20 bins, 2^28 keys: 1.70 ms against 2.09 with 256)"},
};
#undef K
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
/* Its state in a context: whether the nv_ptx fast kernels (match.any,
 * red.f64) built: 0 not tried, 1 yes, -1 no (the portable kernels run). */
struct hist_state {
  int nv_fast;
};
const struct clprim_family clprim__family_histogram = {
    "histogram", hist_knobs, HIST_KNOBS, hist_table, sizeof hist_table / sizeof hist_table[0],
    sizeof(struct hist_state), prebuild};

struct hist_config {
  unsigned wg;
  size_t max_groups;
  unsigned quads; /* 4-vectors per work-item per chunk (the kernel's QUADS) */
  int aggregate;  /* hist_global's peer aggregation (the kernel's AGGREGATE) */
  int local_runs; /* hist_local adds runs in registers first (LOCAL_RUNS); -1: the
                   * default, runs for sums only (see hist_kernel) */
  long long knob[HIST_KNOBS];
};

/* The shape for call c. */
static struct hist_config hist_config(const clprim_context *ctx,
                                      const struct clprim_hist_call *call) {
  const size_t value_bytes = call->values ? clprim_type_size(call->v_type) : 0;
  struct hist_config c;
  clprim__tuned(ctx, &clprim__family_histogram, 0, (unsigned)value_bytes, c.knob);
  const long long quads = c.knob[HIST_QUADS];
  c.quads = quads == 1 || quads == 2 || quads == 4 || quads == 8 ? (unsigned)quads : 4u;
  c.aggregate = (int)c.knob[HIST_AGG];
  c.local_runs = (int)c.knob[HIST_RUNS];
  const struct clprim_launch l = clprim__launch(ctx);
  c.wg = l.wg, c.max_groups = l.max_groups;
  /* The cpu path's hist_local: a work-item per contiguous share of the
   * elements (cl/histogram.cl; max_groups caps the shares). */
  const size_t sum_bytes = call->sums ? value_bytes : 0;
  if (ctx->info.path == CLPRIM_PATH_CPU &&
      call->bins <= clprim__histogram_local_max(ctx, call->counts != NULL, sum_bytes)) {
    c.wg = 1;
    c.max_groups = clprim__cpu_shares(ctx, SIZE_MAX, 1);
  }
  return c;
}

/* Local memory hist_local may use for its bins: half the device's (so two
 * work-groups fit per compute unit), at most 32 KiB, less the reduction
 * scratch. */
static size_t local_budget(const clprim_context *ctx) {
  size_t budget = (size_t)ctx->info.local_mem_size / 2;
  if (budget > 32768) budget = 32768;
  size_t scratch = (size_t)clprim__launch(ctx).wg * 4 + 256;
  return budget > scratch ? budget - scratch : 0;
}

size_t clprim__histogram_local_max(const clprim_context *ctx, int has_counts, size_t sum_size) {
  size_t per_bin = (has_counts ? 4 : 0) + sum_size;
  return per_bin ? local_budget(ctx) / per_bin : 0;
}


static int is_float(clprim_type t) {
  return t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE;
}

/* The kernels' X_T: keys (int32 or uint32) are read as uint whatever their
 * type (cl/histogram.cl: a negative key is out of range), so both key
 * types share one build. */
static const char *x_build_type(const struct clprim_hist_call *c) {
  return clprim__cl_type(c->keys_mode ? CLPRIM_UINT32 : c->x_type);
}

/* Checks the call and resolves its ranges (c->in ... c->outside_out). */
static clprim_status check_call(clprim_context *ctx, struct clprim_hist_call *c) {
  /* The public names of the arguments (histogram_keys and dense
   * reduce-by-key name them after keys, histogram_even after values). */
  const int k = c->keys_mode;
  const char *const x_name = k ? "keys" : "in", *const bins_name = k ? "num_keys" : "bins";
  CLPRIM_CHECK(clprim__check_type(ctx, k ? "key_type" : "type", c->x_type));
  if (k && c->x_type != CLPRIM_INT32 && c->x_type != CLPRIM_UINT32)
    return clprim__invalid(ctx, "key_type is %s, not int32 or uint32", clprim_type_name(c->x_type));
  if (c->values_range.mem) CLPRIM_CHECK(clprim__check_type(ctx, "value_type", c->v_type));
  if (c->exact) CLPRIM_CHECK(clprim__exact_check(ctx, c->v_type, "value_type"));
  if (c->bins == 0) return clprim__invalid(ctx, "%s is 0", bins_name);
  if (!c->counts_range.mem && !c->sums_range.mem)
    return clprim__invalid(ctx, "%s is required", c->values_range.mem ? "sums" : "counts");
  if (c->bins > MAX_BINS)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "%s (%zu) is more than %zu", bins_name,
                        c->bins, (size_t)MAX_BINS);
  if ((uint64_t)c->n > UINT32_MAX)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "n (%zu) is 2^32 or more", c->n);
  const size_t xs = clprim_type_size(c->x_type);
  const size_t vs = c->values_range.mem ? clprim_type_size(c->v_type) : 0;
  /* 64-bit sums need 64-bit atomics (atom_add, or compare-and-swap for
   * double). */
  if (c->sums_range.mem && vs == 8 && !ctx->info.has_int64_atomics && !c->exact)
    return clprim__fail(ctx, CLPRIM_ERROR_UNSUPPORTED_OPERATION,
                        "value_type %s needs 64-bit atomics, which the device does not have",
                        clprim_type_name(c->v_type));
  CLPRIM_CHECK(clprim__range(ctx, x_name, c->in_range, xs, c->n, CLPRIM__READ, &c->in));
  if (c->values_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "values", c->values_range, vs, c->n, CLPRIM__READ, &c->values));
  if (c->counts_range.mem)
    CLPRIM_CHECK(
        clprim__range(ctx, "counts", c->counts_range, 4, c->bins, CLPRIM__OUT_ALL, &c->counts));
  if (c->sums_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "sums", c->sums_range, vs, c->bins, CLPRIM__OUT_ALL, &c->sums));
  if (c->outside_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, k ? "invalid_out" : "outside_out", c->outside_range, 8,
                               c->outside_words, CLPRIM__OUT_ALL, &c->outside_out));
  return CLPRIM_SUCCESS;
}

static int want_nv_fast(const clprim_context *ctx, const struct clprim_hist_call *c,
                        const struct hist_config *cfg) {
  const struct hist_state *state = clprim__state(ctx, &clprim__family_histogram);
  if (ctx->info.path != CLPRIM_PATH_NV_PTX || state->nv_fast < 0) return 0;
  /* red.add.f32 / .f64 flush subnormal inputs and results to zero. */
  if (c->keep_subnormals && c->sums && is_float(c->v_type)) return 0;
  if (!strstr(ctx->path_options[CLPRIM_PATH_NV_PTX], "CLPRIM_NV_SYNC=1")) return 0;
  return cfg->knob[HIST_NV_FAST] != 0; /* 0: the portable kernels, to compare */
}

/* The binned path's plan for a call (see the file's header). */
struct hist_binned {
  unsigned range_shift;   /* 2^range_shift bins per range */
  unsigned wg;            /* the binned program's work-group size */
  unsigned pquads;        /* the binned passes' tile: wg * 4 * pquads elements */
  size_t ranges;          /* bins / 2^range_shift, rounded up */
  size_t groups;          /* work-groups of the count and scatter passes */
  size_t tiles_per_group; /* consecutive tiles per work-group */
  size_t slice;           /* partitioned elements per work-group of the local pass */
};

/* Local memory of the scatter pass: four words per range, the staged tile
 * (bins and values) and the scan's scratch. */
static size_t scatter_local_bytes(size_t ranges, size_t tile, size_t vs, unsigned wg) {
  return ranges * 16 + tile * (4 + vs) + (size_t)wg * 4 + 64;
}

/* Whether the binned path runs the call, and its plan. Automatically on GPUs
 * for counts (no sums) when the bins do not fit in local memory, n is large
 * (at least 2^22 elements and 8 per bin) and there are at most 256 ranges;
 * the knob histogram.binned=0|1 turns it off / on wherever it can run
 * (tests, comparisons), and range_shift (smaller ranges: tests), slice,
 * pquads and pwg change the plan. */
static int plan_binned(const clprim_context *ctx, const struct clprim_hist_call *c,
                       const struct hist_config *cfg, struct hist_binned *p) {
  const int forced = cfg->knob[HIST_BINNED] == 1;
  if (cfg->knob[HIST_BINNED] == 0 || c->n == 0) return 0;
  const size_t vs = c->sums ? clprim_type_size(c->v_type) : 0;
  const size_t per_bin = (c->counts ? 4 : 0) + vs;
  if (!forced && c->bins <= clprim__histogram_local_max(ctx, c->counts != NULL, vs)) return 0;
  /* Sums: forced only. Their partitioned copy (a value per element) made
   * the path slower than hist_global on the H100 (docs/TUNING.md). */
  if (!forced && (!(ctx->info.device_type & CL_DEVICE_TYPE_GPU) || c->values ||
                  c->n < ((size_t)1 << 22) || c->n / 8 < c->bins))
    return 0;
  /* The local pass's bins: at most 32 KiB and a ushort's worth. */
  size_t budget = ctx->info.local_mem_size > 1024 ? (size_t)ctx->info.local_mem_size - 1024 : 0;
  if (budget > 32768) budget = 32768;
  unsigned shift = 0;
  while (shift < 16 && ((size_t)2 << shift) * per_bin <= budget)
    ++shift;
  if (((size_t)1 << shift) * per_bin > budget) return 0;
  const size_t max_shift = shift;
  if (cfg->knob[HIST_RANGE_SHIFT] >= 0) shift = (unsigned)cfg->knob[HIST_RANGE_SHIFT];
  if (shift > max_shift) shift = (unsigned)max_shift;
  const size_t max_ranges = forced ? 512 : 256;
  while (((c->bins - 1) >> shift) + 1 > max_ranges && shift < max_shift)
    ++shift;
  p->range_shift = shift;
  p->ranges = ((c->bins - 1) >> shift) + 1;
  if (p->ranges > max_ranges) return 0;
  /* The table's work-group (a power of two; halved until the device takes
   * it) and 4-vectors per work-item, halved until the scatter pass's local
   * memory fits. */
  const long long pwg = cfg->knob[HIST_PWG];
  p->wg = clprim__fit_wg(ctx, pwg > 0 && !(pwg & (pwg - 1)) ? (unsigned)pwg : cfg->wg);
  p->pquads = (unsigned)cfg->knob[HIST_PQUADS];
  while (p->pquads > 1 && scatter_local_bytes(p->ranges, (size_t)p->wg * 4 * p->pquads, vs, p->wg) >
                              ctx->info.local_mem_size)
    p->pquads /= 2;
  if (scatter_local_bytes(p->ranges, (size_t)p->wg * 4 * p->pquads, vs, p->wg) >
      ctx->info.local_mem_size)
    return 0;
  /* The partitioned copy: a ushort and a value per element. */
  if (c->n * 2 > ctx->info.max_alloc_size || c->n * vs > ctx->info.max_alloc_size ||
      c->n * (2 + vs) > ctx->info.global_mem_size / 2)
    return 0;
  const size_t tile = (size_t)p->wg * 4 * p->pquads, tiles = (c->n - 1) / tile + 1;
  p->groups = tiles < cfg->max_groups ? tiles : cfg->max_groups;
  p->tiles_per_group = (tiles - 1) / p->groups + 1;
  p->groups = (tiles - 1) / p->tiles_per_group + 1;
  p->slice = (size_t)cfg->knob[HIST_SLICE];
  return 1;
}

/* The build options of histogram.cl's kernels. */
static void hist_options(char *options, size_t size, unsigned wg, unsigned copies,
                         const struct hist_config *cfg, int local_runs, const char *x_type,
                         int x_float, int keys_mode, const char *values_opt, int has_counts,
                         int nv_fast, const char *binned_opt) {
  snprintf(
      options, size,
      "-DWG=%u -DCOPIES=%u -DQUADS=%u -DAGGREGATE=%d -DLOCAL_RUNS=%d -DX_T=%s -DX_FLOAT=%d%s%s "
      "-DHAS_COUNTS=%d%s%s",
      wg, copies, cfg->quads, cfg->aggregate, local_runs, x_type, x_float,
      keys_mode ? " -DMODE_KEYS" : "", values_opt, has_counts, nv_fast ? " -DNV_FAST" : "",
      binned_opt);
}

/* Builds the kernel for the call (and hist_zero and hist_commit);
 * *local_copies is 0 for hist_global. With binned, kernel[0..2] are
 * hist_part_count, hist_part_scatter and hist_part_local. */
static clprim_status hist_kernel(clprim_context *ctx, const struct clprim_hist_call *c,
                                 const struct hist_config *cfg, const struct hist_binned *binned,
                                 cl_kernel *kernel, cl_kernel *zero_kernel,
                                 cl_kernel *commit_kernel, unsigned *local_copies) {
  const unsigned wg = binned ? binned->wg : cfg->wg;
  static const char *const sum_type[CLPRIM_TYPE_COUNT] = {"uint",  "uint",  "ulong",
                                                          "ulong", "float", "double"};
  static const char *const v_kind[CLPRIM_TYPE_COUNT] = {
      "", "", " -DV_IS_LONG", " -DV_IS_LONG", " -DV_IS_FLOAT", " -DV_IS_DOUBLE"};
  const size_t vs = c->sums ? clprim_type_size(c->v_type) : 0;
  const size_t local_max = clprim__histogram_local_max(ctx, c->counts != NULL, vs);
  unsigned copies = 0;
  if (c->bins <= local_max && !binned) {
    copies = 1;
    /* Several copies of the bins (one per group of 32 work-items) on GPUs,
     * where work-items of a work-group run at once and collide. */
    if (ctx->info.device_type & CL_DEVICE_TYPE_GPU)
      while (copies * 2 <= wg / 32 && copies * 2 <= 8 && c->bins * copies * 2 <= local_max)
        copies *= 2;
  }
  /* Values load as the type they are summed in: an int32 (int64) value is
   * the uint32 (uint64) of the same bits, whose modular sum is the same, so
   * signed and unsigned values share one build. */
  char values_opt[96] = "";
  if (c->sums)
    snprintf(values_opt, sizeof values_opt, " -DV_T=%s -DS_T=%s%s", sum_type[c->v_type],
             sum_type[c->v_type], v_kind[c->v_type]);
  /* hist_local: counts alone go straight to the local atomics, element by
   * element (fewer instructions; measured faster on the H100); sums add runs of equal keys in
   * registers first, as a float or double local add is a compare-and-swap
   * loop that equal keys in a warp would serialize. */
  const int local_runs = cfg->local_runs >= 0 ? cfg->local_runs : c->sums != NULL;
  struct hist_state *state = clprim__state(ctx, &clprim__family_histogram);
  for (;;) {
    const int nv_fast = want_nv_fast(ctx, c, cfg);
    char options[320], zc_options[320], binned_opt[64] = "";
    if (binned)
      snprintf(binned_opt, sizeof binned_opt, " -DRANGE_SHIFT=%u -DPQUADS=%u", binned->range_shift,
               binned->pquads);
    hist_options(options, sizeof options, wg, copies ? copies : 1, cfg, local_runs, x_build_type(c),
                 is_float(c->x_type), c->keys_mode, values_opt, c->counts != NULL, nv_fast,
                 binned_opt);
    /* hist_zero and hist_commit depend on none of the call's options: they
     * build with those of a uint32 histogram_keys call on cfg->wg, so that
     * every call shares them (on CPU devices, where a program is the whole
     * file, PoCL compiles each kernel of each program again: 2 of the 3
     * kernel objects of a plain call were these). */
    hist_options(zc_options, sizeof zc_options, cfg->wg, 1, cfg, 0, "uint", 0, 1, "", 1, 0, "");
    static const char *const binned_names[3] = {"hist_part_count", "hist_part_scatter",
                                                "hist_part_local"};
    struct clprim_kernel_request req[5];
    for (int k = 0; k < 3; ++k) {
      const struct clprim_kernel_request r = {"histogram.cl", NULL, options, binned_names[k],
                                              NULL, &kernel[k], NULL, NULL};
      req[k] = r;
    }
    if (!binned) req[0].name = copies ? "hist_local" : "hist_global";
    const unsigned main_kernels = binned ? 3 : 1;
    const struct clprim_kernel_request zero = {"histogram.cl", NULL, zc_options, "hist_zero",
                                               "hist_zero hist_commit", zero_kernel, NULL, NULL},
                                       commit = {"histogram.cl", NULL, zc_options, "hist_commit",
                                                 "hist_zero hist_commit", commit_kernel, NULL,
                                                 NULL};
    req[main_kernels] = zero;
    req[main_kernels + 1] = commit;
    clprim_status st = clprim__kernels(ctx, req, main_kernels + 2);
    if (st != CLPRIM_SUCCESS && st != CLPRIM__COLLECTED && nv_fast) {
      /* The driver refused the PTX (match.any, red.f64): portable kernels. */
      state->nv_fast = -1;
      continue;
    }
    if (st == CLPRIM_SUCCESS && nv_fast) state->nv_fast = 1;
    *local_copies = copies;
    return st;
  }
}

/* Whether the three binned kernels each run work-groups of wg work-items
 * (CL_KERNEL_WORK_GROUP_SIZE: a kernel needing many registers may not). Not
 * asked on nv_ptx: NVIDIA's driver answers 256 for these kernels, yet runs
 * them with 512, right and faster (test_histogram passes on the H100).
 * Elsewhere, a kernel that does not fit sends the call to hist_global. */
static int kernels_fit(const clprim_context *ctx, const cl_kernel *kernel, unsigned wg) {
  if (ctx->info.path == CLPRIM_PATH_NV_PTX) return 1;
  for (int k = 0; k < 3; ++k) {
    size_t most = 0;
    if (clGetKernelWorkGroupInfo(kernel[k], ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most,
                                 &most, NULL) != CL_SUCCESS ||
        most < wg)
      return 0;
  }
  return 1;
}

/* The binned path's four steps (count, scan, scatter, local), after the
 * outputs are zeroed. */
static clprim_status hist_run_binned(clprim_context *ctx, const struct clprim_hist_call *c,
                                     const struct hist_binned *p, const cl_kernel *kernel,
                                     cl_mem outside, cl_mem range_counts, cl_mem part_bins,
                                     cl_mem part_values) {
  const size_t xs = clprim_type_size(c->x_type);
  const size_t vs = c->values ? clprim_type_size(c->v_type) : 0;
  const size_t tile = (size_t)p->wg * 4 * p->pquads;
  cl_mem values = c->values ? c->values : outside;
  cl_mem counts = c->counts ? c->counts : outside, sums = c->sums ? c->sums : outside;
  cl_ulong n64 = c->n, range = c->range;
  cl_uint bins = (cl_uint)c->bins, ranges = (cl_uint)p->ranges;
  cl_uint tiles_per_group = (cl_uint)p->tiles_per_group, groups = (cl_uint)p->groups;
  cl_uint slice = (cl_uint)p->slice;
  for (int k = 0; k < 2; ++k) /* the arguments count and scatter share */
    CLPRIM_CHECK(clprim__set_args(
        kernel[k], 10, sizeof c->in, &c->in, sizeof values, &values, sizeof n64, &n64, sizeof bins,
        &bins, xs, &c->lo, xs, &c->hi, xs, &c->scale, sizeof range, &range, sizeof ranges, &ranges,
        sizeof tiles_per_group, &tiles_per_group));
  cl_int err = clSetKernelArg(kernel[0], 10, sizeof range_counts, &range_counts);
  if (err == CL_SUCCESS) err = clSetKernelArg(kernel[0], 11, sizeof outside, &outside);
  if (err == CL_SUCCESS) err = clSetKernelArg(kernel[0], 12, p->ranges * 4, NULL);
  if (err != CL_SUCCESS) return (clprim_status)err;
  const size_t local_sizes[6] = {p->ranges * 4, p->ranges * 4, p->ranges * 4,
                                 p->ranges * 4, tile * 4,      vs ? tile * vs : 8};
  err = clSetKernelArg(kernel[1], 10, sizeof range_counts, &range_counts);
  if (err == CL_SUCCESS) err = clSetKernelArg(kernel[1], 11, sizeof part_bins, &part_bins);
  if (err == CL_SUCCESS) err = clSetKernelArg(kernel[1], 12, sizeof part_values, &part_values);
  for (cl_uint k = 0; k < 6 && err == CL_SUCCESS; ++k)
    err = clSetKernelArg(kernel[1], 13 + k, local_sizes[k], NULL);
  if (err != CL_SUCCESS) return (clprim_status)err;
  /* Count per range and group, scan, scatter into ranges. */
  const struct clprim_count_scan_scatter passes = {{kernel[0], p->groups, p->wg},
                                                   {kernel[1], p->groups, p->wg},
                                                   CLPRIM_UINT32,
                                                   range_counts,
                                                   p->ranges * p->groups};
  CLPRIM_CHECK(clprim__count_scan_scatter(ctx, &passes));
  const size_t range_bins = (size_t)1 << p->range_shift;
  CLPRIM_CHECK(clprim__set_args(kernel[2], 9, sizeof part_bins, &part_bins, sizeof part_values,
                                &part_values, sizeof range_counts, &range_counts, sizeof ranges,
                                &ranges, sizeof groups, &groups, sizeof slice, &slice, sizeof bins,
                                &bins, sizeof counts, &counts, sizeof sums, &sums));
  err = clSetKernelArg(kernel[2], 9, c->counts ? range_bins * 4 : 4, NULL);
  if (err == CL_SUCCESS) err = clSetKernelArg(kernel[2], 10, c->sums ? range_bins * vs : 8, NULL);
  if (err != CL_SUCCESS) return (clprim_status)err;
  return clprim__enqueue(ctx, kernel[2], (c->n - 1) / p->slice + 1, p->wg);
}

/* The one command that writes the caller's buffers: counts_out and
 * sums_out from the scratch c->counts and c->sums (absent ones: the
 * outside counters, 0 words), with the outside counters; then those
 * counters to the host where asked. */
static clprim_status commit(clprim_context *ctx, const struct clprim_hist_call *c,
                            cl_kernel commit_kernel, cl_mem counts_out, cl_mem sums_out,
                            cl_mem outside, size_t groups, unsigned wg) {
  const size_t sum_bytes = c->sums ? clprim_type_size(c->v_type) : 0;
  const cl_ulong count_words = counts_out ? c->bins : 0, sum_words = c->bins * sum_bytes / 4;
  const cl_uint outside_words = c->outside_out ? (cl_uint)c->outside_words : 0;
  const cl_mem counts_to = counts_out ? counts_out : outside,
               sums_to = sums_out ? sums_out : outside;
  const cl_mem outside_to = c->outside_out ? c->outside_out : outside;
  const cl_mem counts_from = c->counts ? c->counts : outside,
               sums_from = c->sums ? c->sums : outside;
  CLPRIM_CHECK(clprim__set_args(
      commit_kernel, 9, sizeof counts_from, &counts_from, sizeof counts_to, &counts_to,
      sizeof count_words, &count_words, sizeof sums_from, &sums_from, sizeof sums_to, &sums_to,
      sizeof sum_words, &sum_words, sizeof outside, &outside, sizeof outside_to, &outside_to,
      sizeof outside_words, &outside_words));
  CLPRIM_CHECK(clprim__enqueue(ctx, commit_kernel, groups, wg));
  if (c->outside) {
    cl_uint words[4];
    CLPRIM_CHECK(clprim__read(ctx, outside, 0, sizeof words, words));
    for (size_t k = 0; k < c->outside_words; ++k)
      c->outside[k] = words[k];
  }
  return CLPRIM_SUCCESS;
}

/* ------------------------------------------------ exact sums (CLPRIM_EXACT) */
#define SLOT_EXACT_META "histogram: exact keys"       /* per key: window masks, lowest word */
#define SLOT_EXACT_OFFSETS "histogram: exact windows" /* per key: its words, scanned */
#define SLOT_EXACT_WORDS "histogram: exact words"     /* the keys' windows */
/* Elements between normalisations of the words (cl/histogram.cl). */
#define EXACT_SPAN ((size_t)0x7FFFFFFF)
/* Elements a work-group of hist_exact_local takes at least (it clears and
 * flushes every key's words once). */
#define EXACT_LOCAL_ITEMS 64

size_t clprim__histogram_exact_local_max(const clprim_context *ctx, clprim_type v_type) {
  /* per key: the words (a record less its flags' word), flags and count */
  return local_budget(ctx) / (clprim__exact_record_words(v_type) * 8);
}

/* The plan of an exact dense reduce-by-key (see hist_exact). */
struct exact_plan {
  int local;         /* hist_exact_local (keys in local memory) */
  unsigned wg;       /* the program's work-group size */
  size_t max_groups; /* of a data pass */
  size_t key_words;  /* the accumulator's words: the most a key's window has */
  size_t pass_keys;  /* keys whose words are in scratch at once */
  size_t span;       /* elements per data pass, between normalisations */
  size_t meta_words; /* uints per key: its window masks and lowest word */
};

/* A key's window masks (cl/internal/exact.h's EXACT_MASKS). */
static size_t exact_masks(size_t key_words) {
  return (key_words + 23) / 24;
}

static struct exact_plan exact_plan(const clprim_context *ctx, const struct clprim_hist_call *c) {
  long long knob[HIST_KNOBS];
  clprim__tuned(ctx, &clprim__family_histogram, 0, (unsigned)clprim_type_size(c->v_type), knob);
  struct exact_plan p;
  p.key_words = clprim__exact_record_words(c->v_type) - 1;
  p.local =
      knob[HIST_EXACT_LOCAL] != 0 && c->bins <= clprim__histogram_exact_local_max(ctx, c->v_type);
  const struct clprim_launch l = clprim__launch(ctx);
  p.wg = l.wg, p.max_groups = l.max_groups;
  if (ctx->info.path == CLPRIM_PATH_CPU) { /* a work-item per contiguous share */
    p.wg = 1;
    p.max_groups = clprim__cpu_shares(ctx, c->n, 4096);
  }
  /* Every key's words where a full window each (and its bookkeeping)
   * fits in a quarter of the device's memory and one allocation, else
   * ranges of keys of that size, passes over the elements each;
   * exact_keys makes the ranges smaller (tests). */
  p.meta_words = exact_masks(p.key_words) + 1;
  size_t budget = (size_t)ctx->info.global_mem_size / 4;
  if (budget > ctx->info.max_alloc_size) budget = (size_t)ctx->info.max_alloc_size;
  p.pass_keys = budget / (p.key_words * 8 + p.meta_words * 4 + 8);
  if (p.pass_keys == 0) p.pass_keys = 1;
  if (knob[HIST_EXACT_KEYS] > 0 && (size_t)knob[HIST_EXACT_KEYS] < p.pass_keys)
    p.pass_keys = (size_t)knob[HIST_EXACT_KEYS];
  if (p.local || p.pass_keys > c->bins) p.pass_keys = c->bins;
  p.span = knob[HIST_EXACT_SPAN] > 0 ? (size_t)knob[HIST_EXACT_SPAN] : EXACT_SPAN;
  return p;
}

/* The exact kernels for call c, in one program. */
enum {
  EK_WINDOW,
  EK_LENGTHS,
  EK_CLEAR,
  EK_DATA,
  EK_NORMALISE,
  EK_ROUND,
  EK_ZERO,
  EK_COMMIT,
  EK_COUNT
};
static clprim_status exact_kernels(clprim_context *ctx, const struct clprim_hist_call *c,
                                   const struct exact_plan *p, cl_kernel *kernel) {
  const int dbl = c->v_type == CLPRIM_DOUBLE;
  char options[320];
  int len = snprintf(options, sizeof options,
                     "-DWG=%u -DX_T=%s -DMODE_KEYS -DAGGREGATE=0 -DV_T=%s -DS_T=%s -DV_IS_%s "
                     "-DHAS_COUNTS=%d -DHIST_EXACT -DT=%s -DT_BITS=%d",
                     p->wg, x_build_type(c), clprim__cl_type(c->v_type),
                     clprim__cl_type(c->v_type), dbl ? "DOUBLE" : "FLOAT", c->counts != NULL,
                     clprim__cl_type(c->v_type), dbl ? 64 : 32);
  clprim__exact_options(ctx, options + len, sizeof options - (size_t)len);
  static const char *const group =
      "hist_zero hist_commit hist_exact_window hist_exact_lengths hist_exact_clear "
      "hist_exact_global hist_exact_local hist_exact_normalise hist_exact_round";
  const char *const names[EK_COUNT] = {"hist_exact_window",
                                       "hist_exact_lengths",
                                       "hist_exact_clear",
                                       p->local ? "hist_exact_local" : "hist_exact_global",
                                       "hist_exact_normalise",
                                       "hist_exact_round",
                                       "hist_zero",
                                       "hist_commit"};
  struct clprim_kernel_request req[EK_COUNT];
  for (int k = 0; k < EK_COUNT; ++k) {
    const struct clprim_kernel_request r = {"histogram.cl", NULL,       options, names[k],
                                            group,          &kernel[k], NULL,    group};
    req[k] = r;
  }
  return clprim__kernels(ctx, req, EK_COUNT);
}

/* A grid of work-items over `items` (the kernels without a data pass). */
static size_t exact_groups(size_t items, unsigned wg, size_t max_groups) {
  size_t groups = items / wg + 1;
  return groups < max_groups ? groups : max_groups;
}

/* One data pass over elements [first, end) of the keys [k0, k0 + keys):
 * kernel (hist_exact_window, _global or _local) on work-groups of p->wg,
 * items_per_group elements each, at most p->max_groups. */
static clprim_status exact_data_pass(clprim_context *ctx, const struct clprim_hist_call *c,
                                     const struct exact_plan *p, cl_kernel kernel, size_t first,
                                     size_t end, size_t k0, size_t keys, const cl_mem *bufs,
                                     int count_outside, size_t items_per_group) {
  const cl_ulong first64 = first, end64 = end;
  const cl_uint bins = (cl_uint)c->bins, k0_32 = (cl_uint)k0, k1_32 = (cl_uint)(k0 + keys);
  const cl_uint outside32 = count_outside != 0;
  CLPRIM_CHECK(clprim__set_args(
      kernel, 13, sizeof c->in, &c->in, sizeof c->values, &c->values, sizeof first64, &first64,
      sizeof end64, &end64, sizeof bins, &bins, sizeof k0_32, &k0_32, sizeof k1_32, &k1_32,
      sizeof bufs[0], &bufs[0], sizeof bufs[1], &bufs[1], sizeof bufs[2], &bufs[2], sizeof bufs[3],
      &bufs[3], sizeof bufs[4], &bufs[4], sizeof outside32, &outside32));
  const size_t len = end - first;
  size_t groups = len / items_per_group + (len % items_per_group != 0);
  if (groups > p->max_groups) groups = p->max_groups;
  return clprim__enqueue(ctx, kernel, groups ? groups : 1, p->wg);
}

/* Dense reduce-by-key with CLPRIM_EXACT (cl/histogram.cl's exact
 * kernels). For each range of pass_keys keys: the keys' bookkeeping
 * zeroed; global words: a pass for the words each key's elements reach
 * (with the counts and the keys out of range), the windows' lengths
 * scanned into offsets, the windows cleared, the elements added (passes
 * of at most `span` elements, the words normalised between them); local
 * words: every key's full window, the elements added per work-group
 * (with the counts and the keys out of range); each key rounded into the
 * sums scratch. Then the one commit. Keys out of range are counted in the
 * first range only, counts of each key in its own range. */
static clprim_status hist_exact(clprim_context *ctx, struct clprim_hist_call *c) {
  const struct exact_plan p = exact_plan(ctx, c);
  cl_kernel k[EK_COUNT];
  CLPRIM_CHECK(exact_kernels(ctx, c, &p, k));
  const cl_mem counts_out = c->counts, sums_out = c->sums;
  const size_t vs = clprim_type_size(c->v_type);
  if (counts_out) CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_COUNTS, c->bins * 4, &c->counts));
  CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_SUMS, c->bins * vs, &c->sums));
  cl_mem outside, meta, offsets, words;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_OUTSIDE, 16, &outside));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_EXACT_META, p.pass_keys * p.meta_words * 4, &meta));
  CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_EXACT_OFFSETS, (p.pass_keys + 1) * 8, &offsets));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_EXACT_WORDS, p.pass_keys * p.key_words * 8, &words));
  const struct clprim_launch l = clprim__launch(ctx);
  cl_mem counts = c->counts ? c->counts : outside;
  const cl_mem bufs[5] = {meta, offsets, words, counts, outside};
  for (size_t k0 = 0; k0 < c->bins; k0 += p.pass_keys) {
    const size_t keys = c->bins - k0 < p.pass_keys ? c->bins - k0 : p.pass_keys;
    const int first_range = k0 == 0;
    const cl_uint keys32 = (cl_uint)keys, k0_32 = (cl_uint)k0, full = p.local;
    /* The keys' bookkeeping; in the first range, the outside counters and
     * the counts too. */
    const cl_ulong zero_words[3] = {first_range ? 4 : 0, first_range && c->counts ? c->bins : 0,
                                    keys * p.meta_words};
    CLPRIM_CHECK(clprim__set_args(k[EK_ZERO], 6, sizeof outside, &outside, sizeof zero_words[0],
                                  &zero_words[0], sizeof counts, &counts, sizeof zero_words[1],
                                  &zero_words[1], sizeof meta, &meta, sizeof zero_words[2],
                                  &zero_words[2]));
    CLPRIM_CHECK(clprim__enqueue(ctx, k[EK_ZERO],
                                 exact_groups(keys * p.meta_words, l.wg, l.max_groups), l.wg));
    if (!p.local && c->n > 0)
      CLPRIM_CHECK(exact_data_pass(ctx, c, &p, k[EK_WINDOW], 0, c->n, k0, keys, bufs, first_range,
                                   (size_t)p.wg * 4));
    /* The windows: lengths, offsets (scanned), words cleared. */
    CLPRIM_CHECK(clprim__set_args(k[EK_LENGTHS], 4, sizeof meta, &meta, sizeof keys32, &keys32,
                                  sizeof full, &full, sizeof offsets, &offsets));
    CLPRIM_CHECK(clprim__enqueue(ctx, k[EK_LENGTHS], exact_groups(keys, l.wg, l.max_groups), l.wg));
    CLPRIM_CHECK(clprim__scan(ctx, CLPRIM_UINT64, offsets, offsets, keys + 1, 0));
    CLPRIM_CHECK(clprim__set_args(k[EK_CLEAR], 3, sizeof words, &words, sizeof offsets, &offsets,
                                  sizeof keys32, &keys32));
    CLPRIM_CHECK(clprim__enqueue(ctx, k[EK_CLEAR], l.max_groups, l.wg));
    for (size_t first = 0; first < c->n; first += p.span) {
      if (first > 0) { /* carries normalised before the next span */
        CLPRIM_CHECK(clprim__set_args(k[EK_NORMALISE], 3, sizeof words, &words, sizeof offsets,
                                      &offsets, sizeof keys32, &keys32));
        CLPRIM_CHECK(
            clprim__enqueue(ctx, k[EK_NORMALISE], exact_groups(keys, l.wg, l.max_groups), l.wg));
      }
      const size_t end = c->n - first < p.span ? c->n : first + p.span;
      if (p.local) { /* the keys' words, flags and counts in local memory */
        cl_int err = clSetKernelArg(k[EK_DATA], 13, c->bins * p.key_words * 8, NULL);
        if (err == CL_SUCCESS) err = clSetKernelArg(k[EK_DATA], 14, c->bins * 4, NULL);
        if (err == CL_SUCCESS) err = clSetKernelArg(k[EK_DATA], 15, c->bins * 4, NULL);
        if (err != CL_SUCCESS) return (clprim_status)err;
      }
      CLPRIM_CHECK(exact_data_pass(ctx, c, &p, k[EK_DATA], first, end, k0, keys, bufs,
                                   p.local && first_range,
                                   (size_t)p.wg * (p.local ? EXACT_LOCAL_ITEMS : 4)));
    }
    CLPRIM_CHECK(clprim__set_args(k[EK_ROUND], 6, sizeof meta, &meta, sizeof offsets, &offsets,
                                  sizeof words, &words, sizeof k0_32, &k0_32, sizeof keys32,
                                  &keys32, sizeof c->sums, &c->sums));
    CLPRIM_CHECK(clprim__enqueue(ctx, k[EK_ROUND], exact_groups(keys, l.wg, l.max_groups), l.wg));
  }
  return commit(ctx, c, k[EK_COMMIT], counts_out, sums_out, outside,
                exact_groups(c->bins * vs / 4, l.wg, l.max_groups), l.wg);
}

clprim_status clprim__histogram(clprim_context *ctx, struct clprim_hist_call *c) {
  CLPRIM_CHECK(check_call(ctx, c));
  if (c->exact) return hist_exact(ctx, c);
  const struct hist_config cfg = hist_config(ctx, c);
  struct hist_binned plan;
  int binned = plan_binned(ctx, c, &cfg, &plan);
  cl_kernel kernel[3], zero_kernel, commit_kernel;
  unsigned copies;
  CLPRIM_CHECK(hist_kernel(ctx, c, &cfg, binned ? &plan : NULL, kernel, &zero_kernel,
                           &commit_kernel, &copies));
  if (binned && !kernels_fit(ctx, kernel, plan.wg)) {
    /* The compiled binned kernels cannot run plan.wg work-items (registers):
     * the global-atomics path instead. */
    binned = 0;
    CLPRIM_CHECK(hist_kernel(ctx, c, &cfg, NULL, kernel, &zero_kernel, &commit_kernel, &copies));
  }
  /* From here on c->counts and c->sums are the scratch the kernels add
   * into; hist_commit copies them to the caller's buffers. */
  const cl_mem counts_out = c->counts, sums_out = c->sums;
  const size_t sum_bytes = c->sums ? clprim_type_size(c->v_type) : 0;
  if (counts_out) CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_COUNTS, c->bins * 4, &c->counts));
  if (sums_out)
    CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_SUMS, c->bins * sum_bytes, &c->sums));
  cl_mem outside, range_counts = NULL, part_bins = NULL, part_values = NULL;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_OUTSIDE, 16, &outside));
  if (binned) {
    const size_t vs = c->values ? clprim_type_size(c->v_type) : 0;
    CLPRIM_CHECK(clprim__offsets(ctx, SLOT_RANGE_COUNTS, CLPRIM_UINT32, plan.ranges * plan.groups,
                                 &range_counts));
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_PART_BINS, c->n * 2, &part_bins));
    part_values = part_bins;
    if (vs) CLPRIM_CHECK(clprim__scratch(ctx, SLOT_PART_VALUES, c->n * vs, &part_values));
  }

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
  if (binned) {
    CLPRIM_CHECK(
        hist_run_binned(ctx, c, &plan, kernel, outside, range_counts, part_bins, part_values));
  } else if (c->n > 0) {
    const size_t items = (size_t)cfg.quads * 4, chunks = c->n / items + (c->n % items != 0);
    size_t groups = chunks / cfg.wg + (chunks % cfg.wg != 0);
    if (groups > cfg.max_groups) groups = cfg.max_groups;
    /* Unused buffers are bound to the outside scratch buffer. */
    cl_mem values = c->values ? c->values : outside;
    cl_mem counts = c->counts ? c->counts : outside, sums = c->sums ? c->sums : outside;
    const size_t xs = clprim_type_size(c->x_type);
    cl_ulong n64 = c->n, range = c->range;
    cl_uint bins = (cl_uint)c->bins;
    CLPRIM_CHECK(clprim__set_args(kernel[0], 11, sizeof c->in, &c->in, sizeof values, &values,
                                  sizeof n64, &n64, sizeof bins, &bins, xs, &c->lo, xs, &c->hi, xs,
                                  &c->scale, sizeof range, &range, sizeof counts, &counts,
                                  sizeof sums, &sums, sizeof outside, &outside));
    if (copies) { /* the local bins: __local arguments 11 and 12 */
      const size_t local_bins = c->bins * copies;
      cl_int err = clSetKernelArg(kernel[0], 11, c->counts ? local_bins * 4 : 4, NULL);
      if (err == CL_SUCCESS)
        err = clSetKernelArg(kernel[0], 12, c->sums ? local_bins * vs : 8, NULL);
      if (err != CL_SUCCESS) return (clprim_status)err;
    }
    CLPRIM_CHECK(clprim__enqueue(ctx, kernel[0], groups, cfg.wg));
  }
  return commit(ctx, c, commit_kernel, counts_out, sums_out, outside, zero_groups, cfg.wg);
}

clprim_status clprim_histogram_keys(clprim_context *ctx, size_t n, clprim_type key_type,
                                    clprim_buffer keys, size_t num_keys, clprim_buffer counts,
                                    uint64_t *invalid, clprim_buffer invalid_out) {
  struct clprim_hist_call c;
  memset(&c, 0, sizeof c);
  c.keys_mode = 1, c.x_type = key_type, c.in_range = keys, c.n = n, c.bins = num_keys;
  c.counts_range = counts, c.outside = invalid, c.outside_range = invalid_out;
  c.outside_words = 1;
  CLPRIM_CHECK(clprim__call_begin(ctx, "histogram_keys"));
  return clprim__call_end(ctx, counts.mem ? clprim__histogram(ctx, &c)
                                          : clprim__invalid(ctx, "counts is required"));
}

/* The bins' scale or range from lo, hi and bins, checked. */
static clprim_status even_bins(clprim_context *ctx, clprim_type type, clprim_value lo,
                               clprim_value hi, struct clprim_hist_call *c) {
  const size_t bins = c->bins;
  if (bins == 0) return clprim__invalid(ctx, "bins is 0");
  CLPRIM_CHECK(clprim__check_type(ctx, "type", type));
  if (bins > MAX_BINS)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "bins (%zu) is more than %zu", bins,
                        (size_t)MAX_BINS);
  /* lo < hi, both numbers, hi - lo finite; the scale in the type itself, as
   * the kernel (and any reference) computes bins. */
  c->lo = lo, c->hi = hi;
  switch (type) {
  case CLPRIM_FLOAT: {
    float width = hi.f32 - lo.f32, scale = (float)bins / width;
    if (!(lo.f32 < hi.f32) || !isfinite(width) || !isfinite(scale) || !(scale > 0))
      return clprim__invalid(ctx,
                             "lo (%g), hi (%g): not numbers with lo < hi and a finite "
                             "width per bin",
                             (double)lo.f32, (double)hi.f32);
    memset(&c->scale, 0, sizeof c->scale);
    c->scale.f32 = scale;
    break;
  }
  case CLPRIM_DOUBLE: {
    double width = hi.f64 - lo.f64, scale = (double)bins / width;
    if (!(lo.f64 < hi.f64) || !isfinite(width) || !isfinite(scale) || !(scale > 0))
      return clprim__invalid(ctx,
                             "lo (%g), hi (%g): not numbers with lo < hi and a finite "
                             "width per bin",
                             lo.f64, hi.f64);
    c->scale.f64 = scale;
    break;
  }
  case CLPRIM_INT32:
    if (lo.i32 >= hi.i32)
      return clprim__invalid(ctx, "lo (%d) is not below hi (%d)", lo.i32, hi.i32);
    c->range = (uint64_t)((int64_t)hi.i32 - lo.i32);
    break;
  case CLPRIM_UINT32:
    if (lo.u32 >= hi.u32)
      return clprim__invalid(ctx, "lo (%u) is not below hi (%u)", lo.u32, hi.u32);
    c->range = hi.u32 - lo.u32;
    break;
  case CLPRIM_INT64:
    if (lo.i64 >= hi.i64)
      return clprim__invalid(ctx, "lo (%lld) is not below hi (%lld)", (long long)lo.i64,
                             (long long)hi.i64);
    c->range = (uint64_t)hi.i64 - (uint64_t)lo.i64;
    break;
  default:
    if (lo.u64 >= hi.u64)
      return clprim__invalid(ctx, "lo (%llu) is not below hi (%llu)", (unsigned long long)lo.u64,
                             (unsigned long long)hi.u64);
    c->range = hi.u64 - lo.u64;
    break;
  }
  /* Integer bins are (x - lo) * bins / (hi - lo) in 64 bits. */
  if (!is_float(type) && c->range > UINT64_MAX / bins)
    return clprim__invalid(ctx, "(hi - lo) * bins does not fit in 64 bits");
  return CLPRIM_SUCCESS;
}

clprim_status clprim_histogram_even(clprim_context *ctx, size_t n, clprim_type type,
                                    clprim_buffer in, clprim_value lo, clprim_value hi,
                                    size_t bins, clprim_buffer counts, uint64_t *outside,
                                    clprim_buffer outside_out) {
  struct clprim_hist_call c;
  memset(&c, 0, sizeof c);
  c.x_type = type, c.in_range = in, c.n = n, c.bins = bins, c.counts_range = counts;
  c.outside = outside, c.outside_range = outside_out, c.outside_words = 3;
  CLPRIM_CHECK(clprim__call_begin(ctx, "histogram_even"));
  clprim_status st =
      counts.mem ? even_bins(ctx, type, lo, hi, &c) : clprim__invalid(ctx, "counts is required");
  if (st == CLPRIM_SUCCESS) st = clprim__histogram(ctx, &c);
  return clprim__call_end(ctx, st);
}

/* Dry runs (core/prebuild.c): bins in local memory, beyond it, and the
 * binned path's (dense reduce-by-key: src/reduce_by_key.c's). */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const size_t bins[3] = {256, (size_t)1 << 16, d->max_bins};
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo);
  memset(&hi, 0, sizeof hi);
  hi.u64 = t == CLPRIM_FLOAT ? 0x3f800000u : t == CLPRIM_DOUBLE ? 0x3ff0000000000000ull : 1000;
  uint64_t outside[3];
  for (int b = 0; b < 3; ++b) {
    clprim_histogram_even(ctx, d->n, t, clprim_buf(d->in), lo, hi, bins[b], clprim_buf(d->out),
                          outside, clprim_buf(NULL));
    if (t == CLPRIM_INT32 || t == CLPRIM_UINT32)
      clprim_histogram_keys(ctx, d->n, t, clprim_buf(d->in), bins[b], clprim_buf(d->out),
                            outside, clprim_buf(NULL));
  }
}
