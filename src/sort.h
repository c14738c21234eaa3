/* sort.h: the sort family's (src/sort.c) tile sizes and its segmented sort
 * on resolved buffers. Not installed. */
#ifndef CLPRIM_SORT_H
#define CLPRIM_SORT_H

#include "core/core.h"

/* For keys of type with values of value_size bytes (0: none): the keys per
 * tile of sort_tile (one work-group in local memory), the most keys that
 * one work-group sorts, and the keys per tile of the digit passes (tests:
 * sizes around each). */
size_t clprim__sort_tile(const clprim_context *ctx, clprim_type type, size_t value_size);
size_t clprim__sort_small_max(const clprim_context *ctx, clprim_type type, size_t value_size);
size_t clprim__sort_pass_tile(const clprim_context *ctx, clprim_type type, size_t value_size);
/* clprim_segmented_sort_pairs (value_size 4 or 8) or _keys (value_size 0,
 * values NULL) on resolved buffers, arguments checked, offsets of
 * offset_type (CLPRIM_UINT32 or CLPRIM_UINT64) (src/segmented_topk.c sorts
 * its rows with it). */
clprim_status clprim__segmented_sort(clprim_context *ctx, clprim_type type, size_t value_size,
                                     cl_mem keys_in, cl_mem values_in, cl_mem keys_out,
                                     cl_mem values_out, size_t n, size_t segments,
                                     clprim_type offset_type, cl_mem begins, cl_mem ends,
                                     unsigned flags);

#endif /* CLPRIM_SORT_H */
