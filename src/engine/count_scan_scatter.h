/* count_scan_scatter.h: the three passes of every order-preserving compaction
 * (engine/count_scan_scatter.c). Not installed. */
#ifndef CLPRIM_ENGINE_COUNT_SCAN_SCATTER_H
#define CLPRIM_ENGINE_COUNT_SCAN_SCATTER_H

#include "../core/core.h"

/* One launch: `groups` work-groups of `wg` work-items. */
struct clprim_pass {
  cl_kernel kernel;
  size_t groups, wg;
};
/* Count, scan, scatter (see count_scan_scatter.c). The kernels' arguments
 * are set; `offsets` holds counts + 1 values of offset_type (CLPRIM_UINT64,
 * or CLPRIM_UINT32 where totals fit), written by the count pass.
 * scatter.kernel NULL: count and scan only. */
struct clprim_count_scan_scatter {
  struct clprim_pass count, scatter;
  clprim_type offset_type;
  cl_mem offsets;
  size_t counts;
};
/* The scratch buffer `name` for counts + 1 offsets of type. */
clprim_status clprim__offsets(clprim_context *ctx, const char *name, clprim_type type,
                              size_t counts, cl_mem *offsets);
clprim_status clprim__count_scan_scatter(clprim_context *ctx,
                                         const struct clprim_count_scan_scatter *p);

#endif /* CLPRIM_ENGINE_COUNT_SCAN_SCATTER_H */
