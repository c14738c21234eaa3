/* prebuild.c: clprim_context_prebuild, every program of the context's path
 * built ahead of the first calls.
 *
 * The programs a call needs are whatever its family's plan asks
 * clprim__kernels for, so prebuilding does not list them again: it makes
 * dry runs of the public calls (every family, every type the device has,
 * sizes that reach each plan) while clprim__kernels only collects the
 * requests and stops the call before anything is enqueued
 * (CLPRIM__COLLECTED). Then it builds everything collected in one
 * clprim__kernels call: several programs at once on GPUs, and into the disk
 * cache. Programs that depend on a call's own arguments (a user's
 * expression) are built by that call. */
#include "../internal.h"

#include <stdlib.h>
#include <string.h>

/* Buffers the dry runs name: never read or written. */
struct dry {
  cl_mem in, in2, out, out2, small;
  size_t n;        /* elements a large dry run claims (in, out hold n * 8 bytes) */
  size_t max_bins; /* bins of the largest histogram dry run */
};

static void dry_runs(clprim_context *ctx, const struct dry *d, clprim_type t) {
  const size_t n = d->n, mid = (size_t)1 << 16;
  const size_t sizes[3] = {1, mid, n};
  const clprim_buffer in = clprim_buf(d->in), in2 = clprim_buf(d->in2);
  const clprim_buffer out = clprim_buf(d->out), out2 = clprim_buf(d->out2);
  const clprim_buffer none = clprim_buf(NULL);
  clprim_value v;
  uint64_t u, k = 1;
  memset(&v, 0, sizeof v);
  for (int s = 0; s < 3; ++s) {
    clprim_scan_exclusive(ctx, sizes[s], t, in, out);
    /* Scan by key: keys of the type, and uint32 keys, with values of it. */
    clprim_scan_inclusive_by_key(ctx, sizes[s], t, in, t, in2, out);
    clprim_scan_inclusive_by_key(ctx, sizes[s], CLPRIM_UINT32, in, t, in2, out);
    clprim_argmax(ctx, sizes[s], t, in, 0, &v, &u, none);
    clprim_reduce_max(ctx, sizes[s], t, in, 0, &v, none);
    clprim_reduce_sum(ctx, sizes[s], t, in, &v, none);
  }
  /* Selection: predicates, both stencil types, partition (values and indices). */
  clprim_predicate pred;
  memset(&pred, 0, sizeof pred);
  pred.op = CLPRIM_PRED_GT;
  clprim_select(ctx, mid, t, in, &pred, 0, out, out2, &u, none);
  clprim_select(ctx, mid, t, in, &pred, 0, none, none, &u, none);
  clprim_partition(ctx, mid, t, in, &pred, 0, out, out2, &u, none);
  clprim_select_flagged(ctx, mid, t, in, in2, CLPRIM_FLAGS_UINT8, 0, out, out2, &u, none);
  clprim_select_flagged(ctx, mid, t, in, in2, CLPRIM_FLAGS_INT32, 0, out, out2, &u, none);
  clprim_partition_flagged(ctx, mid, t, in, in2, CLPRIM_FLAGS_UINT8, 0, out, out2, &u, none);
  clprim_partition3(ctx, mid, t, in, &pred, &pred, 0, out, out2, NULL, in2);
  /* Histograms: bins in local memory, beyond it, and the binned path. */
  const size_t bins[3] = {256, (size_t)1 << 16, d->max_bins};
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo);
  memset(&hi, 0, sizeof hi);
  hi.u64 = t == CLPRIM_FLOAT ? 0x3f800000u : t == CLPRIM_DOUBLE ? 0x3ff0000000000000ull : 1000;
  uint64_t outside[3];
  const int float_sums = t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE;
  for (int b = 0; b < 3; ++b) {
    clprim_histogram_even(ctx, n, t, in, lo, hi, bins[b], out, outside, none);
    for (int exact = 0; exact <= float_sums; ++exact) {
      const unsigned flags = exact ? CLPRIM_SUMS_KEEP_SUBNORMALS : 0;
      clprim_reduce_by_key_dense(ctx, n, CLPRIM_INT32, in, t, in2, bins[b], flags, out, none,
                                 outside, none);
      clprim_reduce_by_key_dense(ctx, n, CLPRIM_INT32, in, t, in2, bins[b], flags, out, out2,
                                 outside, none);
    }
    if (t == CLPRIM_INT32 || t == CLPRIM_UINT32)
      clprim_histogram_keys(ctx, n, t, in, bins[b], out, outside, none);
  }
  if (!float_sums)
    for (clprim_type value = 0; value < CLPRIM_TYPE_COUNT; ++value)
      clprim_reduce_by_key(ctx, mid, t, in, value, in2, out, out2, &u, none);
  /* Selection by rank and top-k: small inputs (one work-group) and levels;
   * small and large k. */
  const uint64_t ranks[2] = {1, mid / 2};
  clprim_value values[2];
  for (int s = 0; s < 3; s += 1) {
    clprim_nth_element(ctx, sizes[s] + 1, t, in, 0, 0, &v, none);
    clprim_nth_element(ctx, sizes[s] + 1, t, in, 0, CLPRIM_NTH_REJECT_NAN, &v, none);
  }
  clprim_quantiles(ctx, mid, t, in, ranks, 2, 0, values, none);
  clprim_nth_element_approx(ctx, mid, t, in, mid / 2, 0, &v, &u, none);
  for (int s = 1; s < 3; ++s)
    for (int sorted = 0; sorted < 2; ++sorted) {
      clprim_topk(ctx, sizes[s], t, in, k, sorted ? CLPRIM_TOPK_SORTED : 0, out, out2);
      clprim_topk(ctx, sizes[s], t, in, 5000, sorted ? CLPRIM_TOPK_SORTED : 0, out, out2);
    }
  /* Sort: one work-group (both of its tile sizes) and the digit passes;
   * keys, pairs with 4- and 8-byte values (argsort takes the pairs'
   * programs); the segments' check. */
  for (size_t vs = 0; vs <= 8; vs += 4) {
    const size_t sort_sizes[3] = {1, clprim__sort_small_max(ctx, t, vs), n};
    for (int s = 0; s < 3; ++s) {
      if (vs == 0)
        clprim_sort_keys(ctx, sort_sizes[s], t, in, 0, 0, 0, out);
      else
        clprim_sort_pairs(ctx, sort_sizes[s], t, in, vs, in2, 0, 0, 0, out, out2);
    }
  }
  clprim_segmented_sort_keys(ctx, n, t, in, 1, in2, in2, 0, out);
  /* Top-k and nth_element per segment: one program (the rows' sort and the
   * long segments' calls are those above). */
  clprim_segmented_topk(ctx, n, t, in, 1, in2, in2, 1, 0, out, out2);
  /* Runs: unique, unique-by-key (values of the key's type), run-length
   * encoding and non-trivial runs with both widths of lengths; the
   * segmented reductions (one program per type). */
  clprim_unique(ctx, mid, t, in, out, &u, none);
  clprim_unique_by_key(ctx, mid, t, in, t, in2, out, out2, &u, none);
  for (int wide = 0; wide < 2; ++wide) {
    const unsigned flags = wide ? CLPRIM_INDICES_64 : 0u;
    clprim_run_length_encode(ctx, mid, t, in, flags, out, out2, &u, none);
    clprim_non_trivial_runs(ctx, mid, t, in, flags, out, out2, &u, none);
  }
  clprim_segmented_sum(ctx, n, t, in, 1, in2, in2, out);
}

clprim_status clprim_context_prebuild(clprim_context *ctx) {
  return clprim__prebuild(ctx, ~0u);
}

/* The dry runs are public calls inside this one (core/call.c lets the
 * thread that holds the context make them). */
static clprim_status prebuild(clprim_context *ctx, unsigned types) {
  if (ctx->collect) return CLPRIM_ERROR_INVALID_ARGUMENT; /* not re-entrant */
  struct dry d;
  memset(&d, 0, sizeof d);
  /* Large enough for every multi-tile plan; on GPUs for the binned
   * histogram too (2^22 elements, 2^20 bins), which CPUs never run. */
  const int gpu = (ctx->info.device_type & CL_DEVICE_TYPE_GPU) != 0;
  d.n = gpu ? (size_t)1 << 22 : (size_t)1 << 18;
  d.max_bins = gpu ? (size_t)1 << 20 : (size_t)1 << 17;
  cl_int err = CL_SUCCESS;
  cl_mem *bufs[4] = {&d.in, &d.in2, &d.out, &d.out2};
  for (int b = 0; b < 4 && err == CL_SUCCESS; ++b)
    *bufs[b] = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, d.n * 8, NULL, &err);
  struct clprim_collect c = {NULL, 0, 0};
  clprim_status st = (clprim_status)err;
  if (st == CLPRIM_SUCCESS) {
    ctx->collect = &c;
    for (clprim_type t = 0; t < CLPRIM_TYPE_COUNT; ++t)
      if ((types >> t & 1u) && clprim__check_type(ctx, t) == CLPRIM_SUCCESS) dry_runs(ctx, &d, t);
    /* The scans of offsets that other families run after their own
     * kernels (which is where a dry run stops). */
    for (int s = 0; s < 2; ++s) {
      clprim_scan_exclusive(ctx, s ? d.n : 1, CLPRIM_UINT64, clprim_buf(d.in), clprim_buf(d.out));
      clprim_scan_exclusive(ctx, s ? d.n : 1, CLPRIM_UINT32, clprim_buf(d.in), clprim_buf(d.out));
    }
    ctx->collect = NULL;
    ctx->prebuilding = 1;
    st = clprim__kernels(ctx, c.requests, (unsigned)c.count);
    ctx->prebuilding = 0;
  }
  for (size_t r = 0; r < c.count; ++r) {
    struct clprim_kernel_request *q = &c.requests[r];
    free((char *)q->file), free((char *)q->prefix), free((char *)q->options);
    free((char *)q->name), free((char *)q->together);
  }
  free(c.requests);
  for (int b = 0; b < 4; ++b)
    if (*bufs[b]) clReleaseMemObject(*bufs[b]);
  return st;
}

clprim_status clprim__prebuild(clprim_context *ctx, unsigned types) {
  CLPRIM_CHECK(clprim__call_begin(ctx));
  return clprim__call_end(ctx, prebuild(ctx, types));
}
