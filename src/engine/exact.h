/* exact.h: the exact accumulator's plan (engine/exact.c; the accumulator
 * itself is cl/internal/exact.h). Not installed. */
#ifndef CLPRIM_ENGINE_EXACT_H
#define CLPRIM_ENGINE_EXACT_H

#include "../core/core.h"

/* The build options a program with exact kernels adds to its own:
 * " -DEXACT_ATOM64=0|1" (64-bit local atomics, where the device has them
 * and the knob exact.atomics64 does not turn them off) and
 * " -DEXACT_OUTLINE=0|1" (1 on CPU devices: cl/internal/exact.h says why). */
void clprim__exact_options(const clprim_context *ctx, char *options, size_t size);
/* The exact sum of n elements (float or double), in two launches: `tiles`
 * (arguments 0-2: in, n as a ulong, the records; the caller sets any
 * after them) on at most max_groups work-groups of wg work-items, each
 * writing a record, then `final` (arguments: the records, their count as a
 * uint, result) on one work-group, which writes the rounded
 * sum's bits (zero-extended to 64) to result's first 8 bytes. */
clprim_status clprim__exact_sum(clprim_context *ctx, clprim_type type, cl_kernel tiles,
                                cl_kernel final, unsigned wg, size_t max_groups, cl_mem in,
                                size_t n, cl_mem result);

#endif /* CLPRIM_ENGINE_EXACT_H */
