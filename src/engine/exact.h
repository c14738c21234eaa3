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
/* CLPRIM_SUCCESS when the exact accumulator takes type (float or double),
 * else CLPRIM_ERROR_INVALID_ARGUMENT with a text naming `what` (the
 * argument that has the type). */
clprim_status clprim__exact_check(clprim_context *ctx, clprim_type type, const char *what);
/* The words of one record of type's accumulator (cl/internal/layout.h:
 * the digits, then the flags), in 64-bit words. */
size_t clprim__exact_record_words(clprim_type type);
/* The exact sum of n elements (float or double), in two launches: `tiles`
 * (arguments 0-2: in, n as a ulong, the records; the caller sets any
 * after them) on at most max_groups work-groups of wg work-items, each
 * writing a record, then `final` (arguments: the records, their count as a
 * uint, whether to round as a uint, result) on one work-group. round: the
 * rounded sum's bits (zero-extended to 64) to result's first 8 bytes;
 * else one record of the whole sum (clprim__exact_record_words words), as
 * clprim_mpi adds the ranks' before rounding them with
 * clprim__exact_round_record. */
clprim_status clprim__exact_sum(clprim_context *ctx, clprim_type type, cl_kernel tiles,
                                cl_kernel final, unsigned wg, size_t max_groups, cl_mem in,
                                size_t n, int round, cl_mem result);
/* The rounded bits of the sum that the record in `record` holds (its words
 * may be sums of several records' words), by `final` as above. */
clprim_status clprim__exact_round_record(clprim_context *ctx, cl_kernel final, unsigned wg,
                                         cl_mem record, cl_mem result);

#endif /* CLPRIM_ENGINE_EXACT_H */
