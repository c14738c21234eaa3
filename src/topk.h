/* topk.h: top-k (src/topk.c) for per-segment top-k and pipelines.
 * Not installed. */
#ifndef CLPRIM_TOPK_H
#define CLPRIM_TOPK_H

#include "core/core.h"
#include "engine/sample_select.h"

/* clprim_topk inside a call the caller began (pipelines: top-k and the
 * mapping of its positions in one call, as Oclgrind reads what another
 * program wrote in an earlier call as uninitialised). */
clprim_status clprim__topk(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                           uint64_t k, unsigned flags, clprim_buffer values,
                           clprim_buffer indices);
/* clprim_topk on resolved buffers (values and / or indices; NULL for
 * none), arguments checked, 1 <= k <= n < 2^32 (src/segmented_topk.c runs
 * it on long segments). */
clprim_status clprim__topk_run(clprim_context *ctx, size_t n, clprim_type type, cl_mem in,
                               uint64_t k, unsigned flags, cl_mem values, cl_mem indices);
/* Pipeline top-k runs that the candidates' path finished (tests). */
uint64_t clprim__topk_filtered_runs(const clprim_context *ctx);
struct clprim_nth_filter;
/* A pipeline's filter -> top-k without a compacted copy (pipeline.c): top-k's
 * candidate path (k <= NTH_BASE on at least 16 NTH_BASE elements, below
 * 2^32, flags of clprim_pipeline_topk) with the stages in its sample and its
 * gathering pass (filter: prefix and extra; its ranks_of is not used) over
 * the n elements of in, the first input; type is x's. *done = 1: the k values
 * (x) and indices (positions in the inputs) written, *passing the passing
 * count m (k <= m). *done = 0: nothing written (not this path, fewer
 * than k candidates, too many, or more than the room laid out): the caller
 * compacts. */
clprim_status clprim__topk_filtered(clprim_context *ctx, size_t n, clprim_type type, cl_mem in,
                                    uint64_t k, unsigned flags,
                                    const struct clprim_nth_filter *filter, cl_mem values,
                                    cl_mem indices, uint64_t *passing, int *done);

#endif /* CLPRIM_TOPK_H */
