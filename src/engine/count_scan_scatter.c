/* count_scan_scatter.c: the three passes of every order-preserving
 * compaction and partition (select, top-k, reduce-by-key, the binned
 * histogram; sort's digit passes off NVIDIA):
 *  1. count: one count per piece of the input (a tile, or a tile and a
 *     range of bins), and a 0 after the last;
 *  2. an exclusive scan of those counts + 1 values in place: each piece's
 *     first output position, and the total at the end. The scan family's
 *     kernels scan them; on a CPU device that runs native kernels a native
 *     kernel does (a loop on the host's side, in the queue's order), so that
 *     a first call there builds no scan program (PoCL 3.1, a first select:
 *     2.1 -> 1.1 s; the knob count_scan_scatter.native_scan=0 turns it off);
 *  3. scatter: each piece writes its elements from its position.
 * A family sets its kernels' arguments (the offsets buffer among them, from
 * clprim__offsets) and describes the launches; this file runs them. */
#include "count_scan_scatter.h"
#include "scan.h"

clprim_status clprim__offsets(clprim_context *ctx, const char *name, clprim_type type,
                              size_t counts, cl_mem *offsets) {
  return clprim__scratch(ctx, name, (counts + 1) * clprim_type_size(type), offsets);
}

/* The native kernel's arguments: values becomes a pointer to the memory. */
struct native_scan_args {
  void *values;
  cl_ulong count;
  cl_uint wide; /* uint64 values, else uint32 */
};

static void CL_CALLBACK native_scan(void *p) {
  const struct native_scan_args *a = p;
  if (a->wide) {
    cl_ulong *v = a->values, sum = 0;
    for (cl_ulong i = 0; i < a->count; ++i) {
      const cl_ulong c = v[i];
      v[i] = sum;
      sum += c;
    }
  } else {
    cl_uint *v = a->values, sum = 0;
    for (cl_ulong i = 0; i < a->count; ++i) {
      const cl_uint c = v[i];
      v[i] = sum;
      sum += c;
    }
  }
}

/* Its knob: native_scan=0 scans the counts with the scan engine's
 * kernels on CPU devices too (tests). */
static const struct clprim_knob css_knobs[] = {{"native_scan", 0, 1}};

/* Its dry runs (core/prebuild.c): the scans of the offsets, of both
 * widths, that the passes run after a family's own kernels (where a
 * family's dry run stops). */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  (void)t;
  for (int s = 0; s < 2; ++s) {
    clprim__scan(ctx, CLPRIM_UINT64, d->in, d->out, s ? d->n : 1, 0);
    clprim__scan(ctx, CLPRIM_UINT32, d->in, d->out, s ? d->n : 1, 0);
  }
}

const struct clprim_family clprim__engine_count_scan_scatter = {
    "count_scan_scatter", css_knobs, 1, NULL, 0, 0, prebuild};

/* Step 2: the exclusive scan in place of count uint32 or uint64 values
 * (CLPRIM_UINT32, CLPRIM_UINT64) at the start of offsets. */
static clprim_status scan_counts(clprim_context *ctx, clprim_type type, cl_mem offsets,
                                 size_t count) {
  long long native;
  clprim__tuned(ctx, &clprim__engine_count_scan_scatter, 0, 0, &native);
  if (ctx->native_kernels && native != 0) {
    struct native_scan_args a = {NULL, count, type == CLPRIM_UINT64};
    a.values = offsets; /* a cl_mem, which the runtime replaces */
    return clprim__enqueue_native(ctx, native_scan, &a, sizeof a, offsets, &a.values);
  }
  return clprim__scan(ctx, type, offsets, offsets, count, 0);
}

clprim_status clprim__count_scan_scatter(clprim_context *ctx,
                                         const struct clprim_count_scan_scatter *p) {
  CLPRIM_CHECK(clprim__enqueue(ctx, p->count.kernel, p->count.groups, p->count.wg));
  CLPRIM_CHECK(scan_counts(ctx, p->offset_type, p->offsets, p->counts + 1));
  if (!p->scatter.kernel) return CLPRIM_SUCCESS;
  return clprim__enqueue(ctx, p->scatter.kernel, p->scatter.groups, p->scatter.wg);
}
