/* reduce.h: the reductions (src/reduce.c) that the pipeline family runs.
 * Not installed. */
#ifndef CLPRIM_REDUCE_H
#define CLPRIM_REDUCE_H

#include "core/core.h"

/* reduce.cl's kernels as CPU devices build them: argmax / argmin and sums,
 * apart from the segmented reductions (which made the first sum or argmax
 * on PoCL 3.1 0.5 s slower: 1.0 -> 1.55 s). */
#define CLPRIM__REDUCE_KERNELS "arg_partial arg_final sum_tiles"
#define CLPRIM__SEGMENTED_REDUCE_KERNELS "segments_check seg_reduce"
#define CLPRIM__EXACT_SUM_KERNELS "exact_tiles exact_final"
#define CLPRIM__SEGMENTED_EXACT_KERNELS "segments_check seg_exact"

/* Elements per work-group tile of the reductions for type on this context
 * (tests use it for sizes around tile boundaries). */
size_t clprim__reduce_tile(const clprim_context *ctx, clprim_type type);
/* For the pipeline family: the build options of cl/reduce.cl for type (to
 * which a pipeline adds its own), and the two reductions over n elements of
 * in with kernels of such a build whose arguments past the first 3
 * (sum_tiles) or 5 (arg_partial, arg_final) the caller has set. The result
 * (16 bytes: the sum's bits; or the element's bits and its index) is left in
 * the family's scratch buffer *result. sum: `kernel` (sum_tiles) runs every
 * level; level_arg >= 0: the index of its argument that says whether the
 * level is the first (a pipeline's build computes the elements there and
 * loads sums after: one program for all levels, as Oclgrind reads what
 * another program's kernel wrote as uninitialised). arg: mode as
 * cl/reduce.cl's (flags, MODE_MIN = 0x100); n = 0 allowed (index
 * UINT64_MAX, for pipelines). */
void clprim__reduce_options(const clprim_context *ctx, clprim_type type, char *options,
                            size_t size);
clprim_status clprim__reduce_sum_run(clprim_context *ctx, clprim_type type, cl_kernel kernel,
                                     int level_arg, cl_mem in, size_t n, cl_mem *result);
clprim_status clprim__reduce_arg_run(clprim_context *ctx, clprim_type type, cl_kernel partial,
                                     cl_kernel final, cl_mem in, size_t n, unsigned mode,
                                     cl_mem *result);

/* The exact sum of n elements of in (float or double; the exact
 * accumulator, engine/exact.c) to result: round = 1 its bits (8 bytes),
 * round = 0 one record of it (clprim__exact_record_words words); and the
 * rounding of such a record (several ranks' words added) in place: its
 * first 8 bytes become the bits. For clprim_mpi. */
clprim_status clprim__reduce_exact(clprim_context *ctx, clprim_type type, cl_mem in, size_t n,
                                   int round, cl_mem result);
clprim_status clprim__reduce_exact_round(clprim_context *ctx, clprim_type type, cl_mem record);
/* The exact sum with the caller's kernels exact_tiles and exact_final of a
 * build of reduce.cl (the pipeline's, whose arguments past exact_tiles'
 * first 3 the caller has set), in this family's shape. */
clprim_status clprim__reduce_exact_run(clprim_context *ctx, clprim_type type, cl_kernel tiles,
                                       cl_kernel final, cl_mem in, size_t n, int round,
                                       cl_mem result);

#endif /* CLPRIM_REDUCE_H */
