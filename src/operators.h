/* operators.h: the user operators' reduction (src/operators.c) that the
 * pipeline family runs. Not installed. */
#ifndef CLPRIM_OPERATORS_H
#define CLPRIM_OPERATORS_H

#include "engine/operator.h"

/* The build options of op's kernels on ctx (cl/operators.cl's -DWG and
 * -DITEMS), to which a pipeline adds its own. */
void clprim__operator_options(const clprim_context *ctx, const clprim_operator *op, char *options,
                              size_t size);
/* clprim_reduce_op's passes: init ∘ x_0 ∘ ... ∘ x_{n-1} (init NULL: the
 * identity; op's parameters as they are now) into dest, one element of
 * op's type. `first` runs over in: op_reduce of a build of
 * cl/operators.cl with those options whose arguments past its first 7 the
 * caller has set (a pipeline's, whose elements come through the stages);
 * where first is a pipeline's build (pipeline), it takes one tile a
 * work-group off the cpu path (cl/operators.cl); op's own op_reduce
 * combines the work-groups' results where there are several. */
clprim_status clprim__reduce_op_run(clprim_context *ctx, const clprim_operator *op, cl_kernel first,
                                    int pipeline, cl_mem in, size_t n, const void *init,
                                    cl_mem dest);

#endif /* CLPRIM_OPERATORS_H */
