/* count_scan_scatter.c: the three passes of every order-preserving
 * compaction and partition (select, top-k, reduce-by-key, the binned
 * histogram; sort's digit passes off NVIDIA):
 *  1. count: one count per piece of the input (a tile, or a tile and a
 *     range of bins), and a 0 after the last;
 *  2. an exclusive scan of those counts + 1 values in place: each piece's
 *     first output position, and the total at the end;
 *  3. scatter: each piece writes its elements from its position.
 * A family sets its kernels' arguments (the offsets buffer among them, from
 * clprim__offsets) and describes the launches; this file runs them. */
#include "../internal.h"

clprim_status clprim__offsets(clprim_context *ctx, const char *name, clprim_type type,
                              size_t counts, cl_mem *offsets) {
  return clprim__scratch(ctx, name, (counts + 1) * clprim_type_size(type), offsets);
}

clprim_status clprim__count_scan_scatter(clprim_context *ctx,
                                         const struct clprim_count_scan_scatter *p) {
  CLPRIM_CHECK(clprim__enqueue(ctx, p->count.kernel, p->count.groups, p->count.wg));
  CLPRIM_CHECK(clprim__scan(ctx, p->offset_type, p->offsets, p->offsets, p->counts + 1, 0));
  if (!p->scatter.kernel) return CLPRIM_SUCCESS;
  return clprim__enqueue(ctx, p->scatter.kernel, p->scatter.groups, p->scatter.wg);
}
