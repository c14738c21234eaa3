/* runs.c: unique, unique-by-key, run-length encoding and non-trivial runs
 * over runs of equal consecutive keys (cl/internal/heads.h defines a run).
 * Each call is a plan over the order-preserving compaction of select.c
 * (clprim__select_runs: the runs' edges, their values and positions, on the
 * single-pass look-back kernel on nv_ptx) plus, for lengths, a kernel of
 * cl/runs.cl:
 *  - unique: the heads' values;
 *  - unique-by-key: the heads' keys, then the heads' values;
 *  - run-length encoding: on nv_ptx the single pass writes the lengths
 *    (runs_fix_ends finishes each tile's last run); elsewhere the heads'
 *    values and positions, then runs_lengths takes the differences of
 *    consecutive heads;
 *  - non-trivial runs: the nontrivial heads' positions (the offsets) and the
 *    nontrivial tails' positions, then lengths = tail + 1 - head. */
#include "select.h"
#include "../cl/internal/heads.h"

#include <string.h>

/* Scratch buffers of this family. */
#define SLOT_COUNT "runs: count"      /* the number of runs (uint64) */
#define SLOT_TAILS "runs: tail count" /* the nontrivial tails' count (equals the heads') */
#define SLOT_HEADS "runs: heads"      /* run-length encoding: the heads' positions */
#define SLOT_ENDS "runs: run ends"    /* single pass: per tile, a run's slot + 1 and end */

/* Where the plan's kernels leave the count: the caller's count_out when
 * given (no copy afterwards), else scratch. */
static clprim_status count_buffer(clprim_context *ctx, cl_mem count_out, cl_mem *buf) {
  if (count_out) return *buf = count_out, CLPRIM_SUCCESS;
  return clprim__scratch(ctx, SLOT_COUNT, 8, buf);
}

/* n = 0: a count of 0, nothing else written. */
static clprim_status no_runs(clprim_context *ctx, cl_mem count_out, uint64_t *count) {
  const cl_ulong zero = 0;
  if (count_out) CLPRIM_CHECK(clprim__fill(ctx, count_out, &zero, 8, 0, 8));
  if (count) *count = 0;
  return CLPRIM_SUCCESS;
}

/* A plan's steps, each of which may build programs: in a dry run
 * (clprim_context_prebuild) every step is taken, so that each collects its
 * programs, and the plan ends with CLPRIM__COLLECTED after the last. */
static clprim_status step(clprim_context *ctx, clprim_status st, int *collected) {
  if (st == CLPRIM__COLLECTED && ctx->collect) {
    *collected = 1;
    return CLPRIM_SUCCESS;
  }
  return st;
}

/* The runs.cl kernel `name` for positions of index64. */
static clprim_status runs_kernel(clprim_context *ctx, int index64, const char *name,
                                 cl_kernel *k) {
  char options[32];
  snprintf(options, sizeof options, "-DIDX_T=%s", index64 ? "ulong" : "uint");
  return clprim__kernel(ctx, "runs.cl", options, name, k);
}

/* runs_lengths (k) over the runs counted in count_buf (see cl/runs.cl). */
static clprim_status lengths_of(clprim_context *ctx, cl_kernel k, size_t n, cl_mem heads,
                                cl_mem lengths, cl_mem count_buf, cl_int mode) {
  const cl_ulong n64 = n;
  CLPRIM_CHECK(clprim__set_args(k, 5, sizeof heads, &heads, sizeof lengths, &lengths,
                                sizeof count_buf, &count_buf, sizeof n64, &n64, sizeof mode,
                                &mode));
  const struct clprim_launch l = clprim__launch(ctx);
  const size_t groups = n / l.wg + 1;
  return clprim__enqueue(ctx, k, groups < l.max_groups ? groups : l.max_groups, l.wg);
}

/* Position outputs: uint32, or uint64 with CLPRIM_INDICES_64 (which n
 * above UINT32_MAX needs: a length may be n). */
static clprim_status index_width(clprim_context *ctx, size_t n, unsigned flags, int *index64) {
  CLPRIM_CHECK(clprim__check_flags(ctx, flags, CLPRIM_INDICES_64));
  *index64 = (flags & CLPRIM_INDICES_64) != 0;
  if (!*index64 && (uint64_t)n > UINT32_MAX)
    return clprim__invalid(ctx,
                           "positions are uint32 but n (%zu) is above UINT32_MAX "
                           "(CLPRIM_INDICES_64)",
                           n);
  return CLPRIM_SUCCESS;
}

static clprim_status unique_by_key(clprim_context *ctx, size_t n, clprim_type key_type,
                                   clprim_buffer keys_range, int by_key, clprim_type value_type,
                                   clprim_buffer values_range, clprim_buffer keys_out_range,
                                   clprim_buffer values_out_range, uint64_t *count,
                                   clprim_buffer count_range) {
  /* clprim_unique names its arguments type, in and out. */
  CLPRIM_CHECK(clprim__check_type(ctx, by_key ? "key_type" : "type", key_type));
  if (by_key) CLPRIM_CHECK(clprim__check_type(ctx, "value_type", value_type));
  if (!keys_out_range.mem && !values_out_range.mem && !count && !count_range.mem)
    return clprim__invalid(ctx, "no output is given (%s, count and count_out are all NULL)",
                           by_key ? "keys_out, values_out" : "out");
  const size_t ks = clprim_type_size(key_type), vs = by_key ? clprim_type_size(value_type) : 0;
  cl_mem keys, values = NULL, keys_out = NULL, values_out = NULL, count_out = NULL, count_buf;
  CLPRIM_CHECK(clprim__range(ctx, by_key ? "keys" : "in", keys_range, ks, n, CLPRIM__READ, &keys));
  if (values_out_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "values", values_range, vs, n, CLPRIM__READ, &values));
  if (keys_out_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, by_key ? "keys_out" : "out", keys_out_range, ks, n, CLPRIM__OUT,
                               &keys_out));
  if (values_out_range.mem)
    CLPRIM_CHECK(
        clprim__range(ctx, "values_out", values_out_range, vs, n, CLPRIM__OUT, &values_out));
  if (count_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "count_out", count_range, 8, 1, CLPRIM__OUT_ALL, &count_out));
  if (n == 0) return no_runs(ctx, count_out, count);
  CLPRIM_CHECK(count_buffer(ctx, count_out, &count_buf));
  struct clprim_runs_select r;
  memset(&r, 0, sizeof r);
  r.n = n, r.kind = RUN_HEAD, r.key_type = key_type, r.keys = keys, r.count_out = count_buf;
  int dry = 0;
  if (keys_out || !values_out) {
    r.values_out = keys_out;
    CLPRIM_CHECK(step(ctx, clprim__select_runs(ctx, &r), &dry));
  }
  if (values_out) {
    r.value_type = value_type, r.values = values, r.values_out = values_out;
    CLPRIM_CHECK(step(ctx, clprim__select_runs(ctx, &r), &dry));
  }
  if (dry) return CLPRIM__COLLECTED;
  return clprim__deliver_count(ctx, count_buf, 0, count_buf == count_out ? NULL : count_out,
                               count);
}

clprim_status clprim_unique(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                            clprim_buffer out, uint64_t *count, clprim_buffer count_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "unique"));
  const clprim_buffer none = {NULL, 0};
  return clprim__call_end(ctx, unique_by_key(ctx, n, type, in, 0, type, none, out, none, count,
                                             count_out));
}

clprim_status clprim_unique_by_key(clprim_context *ctx, size_t n, clprim_type key_type,
                                   clprim_buffer keys, clprim_type value_type,
                                   clprim_buffer values, clprim_buffer keys_out,
                                   clprim_buffer values_out, uint64_t *count,
                                   clprim_buffer count_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "unique_by_key"));
  return clprim__call_end(ctx, unique_by_key(ctx, n, key_type, keys, 1, value_type, values,
                                             keys_out, values_out, count, count_out));
}

/* Run-length encoding (nontrivial = 0) or the non-trivial runs (1):
 * `firsts` gets the runs' values (encoding) or offsets (non-trivial). */
static clprim_status encode(clprim_context *ctx, size_t n, clprim_type type,
                            clprim_buffer in_range, unsigned flags, int nontrivial,
                            clprim_buffer firsts_range, clprim_buffer lengths_range,
                            uint64_t *count, clprim_buffer count_range) {
  CLPRIM_CHECK(clprim__check_type(ctx, "type", type));
  int index64;
  CLPRIM_CHECK(index_width(ctx, n, flags, &index64));
  const char *const firsts_name = nontrivial ? "offsets" : "unique_out";
  if (!firsts_range.mem && !lengths_range.mem && !count && !count_range.mem)
    return clprim__invalid(
        ctx, "no output is given (%s, lengths, count and count_out are all NULL)", firsts_name);
  const size_t es = clprim_type_size(type), is = index64 ? 8 : 4;
  cl_mem in, firsts = NULL, lengths = NULL, count_out = NULL, count_buf;
  CLPRIM_CHECK(clprim__range(ctx, "in", in_range, es, n, CLPRIM__READ, &in));
  if (firsts_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, firsts_name, firsts_range, nontrivial ? is : es, n, CLPRIM__OUT,
                               &firsts));
  if (lengths_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "lengths", lengths_range, is, n, CLPRIM__OUT, &lengths));
  if (count_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "count_out", count_range, 8, 1, CLPRIM__OUT_ALL, &count_out));
  if (n == 0) return no_runs(ctx, count_out, count);
  CLPRIM_CHECK(count_buffer(ctx, count_out, &count_buf));
  struct clprim_runs_select r;
  memset(&r, 0, sizeof r);
  r.n = n, r.key_type = type, r.keys = in, r.count_out = count_buf, r.index64 = index64;
  /* Where select's single pass runs it writes the lengths, and
   * runs_fix_ends finishes each tile's last run; elsewhere runs_lengths
   * takes them from the positions. runs.cl's kernel is built first. */
  const size_t sp_tile = clprim__select_single_pass_tile(ctx, type);
  const int fused = !nontrivial && sp_tile != 0;
  int dry = 0;
  cl_kernel k = NULL;
  if (lengths)
    CLPRIM_CHECK(step(ctx, runs_kernel(ctx, index64, fused ? "runs_fix_ends" : "runs_lengths", &k),
                      &dry));
  if (!nontrivial && lengths && fused) {
    const size_t tiles = n / sp_tile + (n % sp_tile != 0);
    cl_mem ends;
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_ENDS, (tiles + 1) * 16, &ends));
    r.kind = RUN_HEAD, r.values_out = firsts, r.indices = lengths, r.run_ends = ends;
    CLPRIM_CHECK(step(ctx, clprim__select_runs(ctx, &r), &dry));
    if (dry) return CLPRIM__COLLECTED;
    const cl_ulong entries = tiles + 1;
    CLPRIM_CHECK(clprim__set_args(k, 3, sizeof lengths, &lengths, sizeof ends, &ends,
                                  sizeof entries, &entries));
    const unsigned wg = clprim__launch(ctx).wg;
    CLPRIM_CHECK(clprim__enqueue(ctx, k, (size_t)(entries + wg - 1) / wg, wg));
  } else if (!nontrivial) {
    /* The heads' values, and their positions where lengths are wanted. */
    cl_mem heads = NULL;
    if (lengths) CLPRIM_CHECK(clprim__scratch(ctx, SLOT_HEADS, n * is, &heads));
    r.kind = RUN_HEAD, r.values_out = firsts, r.indices = heads;
    CLPRIM_CHECK(step(ctx, clprim__select_runs(ctx, &r), &dry));
    if (dry) return CLPRIM__COLLECTED;
    if (lengths) CLPRIM_CHECK(lengths_of(ctx, k, n, heads, lengths, count_buf, 0));
  } else {
    /* The offsets (in scratch when only lengths are wanted), then the
     * tails' positions into lengths. */
    cl_mem heads = firsts, tail_count;
    if (!heads && lengths) CLPRIM_CHECK(clprim__scratch(ctx, SLOT_HEADS, n * is, &heads));
    r.kind = RUN_NONTRIVIAL_HEAD, r.indices = heads;
    CLPRIM_CHECK(step(ctx, clprim__select_runs(ctx, &r), &dry));
    if (lengths) {
      CLPRIM_CHECK(clprim__scratch(ctx, SLOT_TAILS, 8, &tail_count));
      r.kind = RUN_NONTRIVIAL_TAIL, r.indices = lengths, r.count_out = tail_count;
      CLPRIM_CHECK(step(ctx, clprim__select_runs(ctx, &r), &dry));
      if (!dry) CLPRIM_CHECK(lengths_of(ctx, k, n, heads, lengths, count_buf, 1));
    }
    if (dry) return CLPRIM__COLLECTED;
  }
  return clprim__deliver_count(ctx, count_buf, 0, count_buf == count_out ? NULL : count_out,
                               count);
}

clprim_status clprim_run_length_encode(clprim_context *ctx, size_t n, clprim_type type,
                                       clprim_buffer in, unsigned flags, clprim_buffer unique_out,
                                       clprim_buffer lengths, uint64_t *count,
                                       clprim_buffer count_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "run_length_encode"));
  return clprim__call_end(
      ctx, encode(ctx, n, type, in, flags, 0, unique_out, lengths, count, count_out));
}

clprim_status clprim_non_trivial_runs(clprim_context *ctx, size_t n, clprim_type type,
                                      clprim_buffer in, unsigned flags, clprim_buffer offsets,
                                      clprim_buffer lengths, uint64_t *count,
                                      clprim_buffer count_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "non_trivial_runs"));
  return clprim__call_end(ctx,
                          encode(ctx, n, type, in, flags, 1, offsets, lengths, count, count_out));
}

/* Dry runs (core/prebuild.c): unique, unique-by-key (values of the key's
 * type), run-length encoding and non-trivial runs with both widths of
 * lengths. */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const size_t mid = (size_t)1 << 16;
  const clprim_buffer in = clprim_buf(d->in), in2 = clprim_buf(d->in2);
  const clprim_buffer out = clprim_buf(d->out), out2 = clprim_buf(d->out2), none = clprim_buf(NULL);
  uint64_t u;
  clprim_unique(ctx, mid, t, in, out, &u, none);
  clprim_unique_by_key(ctx, mid, t, in, t, in2, out, out2, &u, none);
  for (int wide = 0; wide < 2; ++wide) {
    const unsigned flags = wide ? CLPRIM_INDICES_64 : 0u;
    clprim_run_length_encode(ctx, mid, t, in, flags, out, out2, &u, none);
    clprim_non_trivial_runs(ctx, mid, t, in, flags, out, out2, &u, none);
  }
}

const struct clprim_family clprim__family_runs = {"runs", NULL, 0, NULL, 0, 0, prebuild};
