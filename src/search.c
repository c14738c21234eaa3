/* search.c: vectorised binary search of needles in a sorted haystack:
 * lower bound, upper bound and equal range (kernel in cl/search.cl, which
 * describes the search). One launch of search_bounds writes every output,
 * after every check, build and kernel argument, so a failed call writes
 * nothing. */
#include "core/core.h"

#include <stdio.h>
#include <string.h>

/* The family's knobs and table (docs/TUNING.md): wg, the work-group size;
 * samples, the most haystack keys each work-group keeps in local memory
 * (fewer where local memory is short). */
enum { SEARCH_WG, SEARCH_SAMPLES, SEARCH_KNOBS };
static const struct clprim_knob search_knobs[SEARCH_KNOBS] = {{"wg", 1, 1024},
                                                              {"samples", 1, 65536}};
#define K CLPRIM__KNOB
static const struct clprim_tuning_row search_table[] = {
    {0, 0, NULL, 0, 0, K(SEARCH_WG) | K(SEARCH_SAMPLES), {256, 1024},
     "portable default: 256 work-items, 1024 sampled keys (4 or 8 KiB of local memory)"},
    {0, CL_DEVICE_TYPE_CPU, NULL, 0, 0, K(SEARCH_WG), {64},
     "portable default for CPU runtimes: the launch's 64 work-items (core/launch.c)"},
    {1u << CLPRIM_PATH_CPU, 0, NULL, 0, 0, K(SEARCH_WG), {1},
     "the cpu path: one work-item a work-group, a share of at least 4096 needles each"},
};
#undef K
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_search = {
    "search", search_knobs, SEARCH_KNOBS, search_table, sizeof search_table / sizeof search_table[0],
    0, prebuild};

/* One call: the bounds wanted are the outputs given (lower, upper). */
struct search_call {
  const char *name; /* the public call, and what it calls its outputs */
  const char *lower_name, *upper_name;
  size_t haystack_n, needles_n;
  clprim_type type;
  clprim_buffer haystack, needles, lower, upper;
  unsigned flags;
};

/* The launch shape for keys of key_bytes: work-group size and samples. */
static void search_shape(const clprim_context *ctx, size_t key_bytes, unsigned *wg,
                         unsigned *samples) {
  long long v[SEARCH_KNOBS];
  clprim__tuned(ctx, &clprim__family_search, (unsigned)key_bytes, 0, v);
  *wg = clprim__fit_wg(ctx, v[SEARCH_WG] > 0 ? (unsigned)v[SEARCH_WG] : 256u);
  unsigned s = v[SEARCH_SAMPLES] > 0 ? (unsigned)v[SEARCH_SAMPLES] : 1024u;
  /* At most half the device's local memory. */
  while (s > 1 && (uint64_t)s * key_bytes > ctx->info.local_mem_size / 2)
    s /= 2;
  *samples = s;
}

static clprim_status search(clprim_context *ctx, const struct search_call *c) {
  CLPRIM_CHECK(clprim__check_type(ctx, "type", c->type));
  CLPRIM_CHECK(clprim__check_flags(ctx, c->flags, CLPRIM_SORT_DESCENDING | CLPRIM_INDICES_64));
  if (!c->lower.mem && !c->upper.mem)
    return clprim__invalid(ctx, c->lower_name == c->upper_name
                                    ? "out is required"
                                    : "no output is given (lower and upper are both NULL)");
  const int index64 = (c->flags & CLPRIM_INDICES_64) != 0;
  /* A bound may be haystack_n itself. */
  if (!index64 && (uint64_t)c->haystack_n > UINT32_MAX)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE,
                        "positions are uint32 but haystack_n (%zu) is above UINT32_MAX "
                        "(CLPRIM_INDICES_64)",
                        c->haystack_n);
  const size_t es = clprim_type_size(c->type), is = index64 ? 8 : 4;
  cl_mem haystack, needles, lower = NULL, upper = NULL;
  CLPRIM_CHECK(
      clprim__range(ctx, "haystack", c->haystack, es, c->haystack_n, CLPRIM__READ, &haystack));
  CLPRIM_CHECK(clprim__range(ctx, "needles", c->needles, es, c->needles_n, CLPRIM__READ, &needles));
  if (c->lower.mem)
    CLPRIM_CHECK(
        clprim__range(ctx, c->lower_name, c->lower, is, c->needles_n, CLPRIM__OUT_ALL, &lower));
  if (c->upper.mem)
    CLPRIM_CHECK(
        clprim__range(ctx, c->upper_name, c->upper, is, c->needles_n, CLPRIM__OUT_ALL, &upper));
  if (c->needles_n == 0) return CLPRIM_SUCCESS; /* nothing to write */

  unsigned wg, samples;
  search_shape(ctx, es, &wg, &samples);
  const int is_float = c->type == CLPRIM_FLOAT || c->type == CLPRIM_DOUBLE;
  char options[160];
  snprintf(options, sizeof options,
           "-DT=%s -DT_FLOAT=%d -DKEY_BITS=%u -DIDX_T=%s -DWG=%u -DSAMPLES=%u",
           clprim__cl_type(clprim__key_build_type(c->type)), is_float, (unsigned)es * 8,
           index64 ? "ulong" : "uint", wg, samples);
  cl_kernel k;
  CLPRIM_CHECK(clprim__kernel(ctx, "search.cl", options, "search_bounds", &k));

  /* An output not wanted is bound to the other one's buffer (not written). */
  const cl_int want = (lower ? 1 : 0) | (upper ? 2 : 0);
  if (!lower) lower = upper;
  if (!upper) upper = lower;
  const cl_ulong n64 = c->haystack_n, needles64 = c->needles_n;
  const int descending = (c->flags & CLPRIM_SORT_DESCENDING) != 0;
  const cl_ulong flip64 = clprim__key_flip(c->type, descending);
  const cl_uint flip32 = (cl_uint)flip64;
  const void *flip = es == 8 ? (const void *)&flip64 : (const void *)&flip32;
  CLPRIM_CHECK(clprim__set_args(k, 8, sizeof haystack, &haystack, sizeof n64, &n64,
                                sizeof needles, &needles, sizeof needles64, &needles64, es, flip,
                                sizeof want, &want, sizeof lower, &lower, sizeof upper, &upper));
  /* A work-item per needle, in at most the launch's grid-stride work-groups
   * (each copies its sample once); the cpu path: its shares. */
  if (ctx->info.path == CLPRIM_PATH_CPU) {
    const size_t shares = clprim__cpu_stream_shares(ctx, c->needles_n);
    return clprim__enqueue(ctx, k, (shares + wg - 1) / wg, wg);
  }
  const size_t groups_max = clprim__launch(ctx).max_groups;
  size_t groups = c->needles_n / wg + (c->needles_n % wg != 0);
  if (groups > groups_max) groups = groups_max;
  return clprim__enqueue(ctx, k, groups, wg);
}

static clprim_status search_call(clprim_context *ctx, const struct search_call *c) {
  CLPRIM_CHECK(clprim__call_begin(ctx, c->name));
  return clprim__call_end(ctx, search(ctx, c));
}

clprim_status clprim_lower_bound(clprim_context *ctx, size_t haystack_n, clprim_type type,
                                 clprim_buffer haystack, size_t needles_n, clprim_buffer needles,
                                 unsigned flags, clprim_buffer out) {
  const struct search_call c = {"lower_bound", "out",   "out", haystack_n, needles_n, type,
                                haystack,      needles, out,   {NULL, 0},  flags};
  return search_call(ctx, &c);
}

clprim_status clprim_upper_bound(clprim_context *ctx, size_t haystack_n, clprim_type type,
                                 clprim_buffer haystack, size_t needles_n, clprim_buffer needles,
                                 unsigned flags, clprim_buffer out) {
  const struct search_call c = {"upper_bound", "out",   "out",     haystack_n, needles_n, type,
                                haystack,      needles, {NULL, 0}, out,        flags};
  return search_call(ctx, &c);
}

clprim_status clprim_equal_range(clprim_context *ctx, size_t haystack_n, clprim_type type,
                                 clprim_buffer haystack, size_t needles_n, clprim_buffer needles,
                                 unsigned flags, clprim_buffer lower, clprim_buffer upper) {
  const struct search_call c = {"equal_range", "lower", "upper", haystack_n, needles_n, type,
                                haystack,      needles, lower,   upper,      flags};
  return search_call(ctx, &c);
}

/* Dry runs (core/prebuild.c): both index widths (lower and upper bounds,
 * and either order, share one program). */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const clprim_buffer in = clprim_buf(d->in), in2 = clprim_buf(d->in2);
  const clprim_buffer out = clprim_buf(d->out), out2 = clprim_buf(d->out2);
  clprim_equal_range(ctx, d->n, t, in, d->n, in2, 0, out, out2);
  clprim_equal_range(ctx, d->n, t, in, d->n, in2, CLPRIM_INDICES_64, out, out2);
}
