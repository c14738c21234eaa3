/* operator.h: the user operator contract (engine/operator.c): a user's
 * element type, associative combine and identity, written in OpenCL C, as
 * one generated source text that kernels over any type are built with.
 * Not installed. */
#ifndef CLPRIM_ENGINE_OPERATOR_H
#define CLPRIM_ENGINE_OPERATOR_H

#include "../core/core.h"

/* What clprim_operator_create made (clprim.h), owned by the caller. */
struct clprim_operator {
  clprim_context *ctx;
  char *type;         /* the element type's OpenCL C name (desc->type) */
  size_t size, align; /* the host's sizeof and alignof of an element */
  /* The generated text put before a kernel file (clprim__kernels' prefix):
   * the user's source, then
   *   typedef <type> clprim_op_t;
   *   clprim_op_params        a struct of 8 double (float without cl_khr_fp64): p0..p7
   *   clprim_op_t clprim_op_combine(const clprim_op_t a, const clprim_op_t b,
   *                                 const clprim_op_params prm)
   *   clprim_op_t clprim_op_identity(const clprim_op_params prm)
   * each text under a #line name of its own (operator-source,
   * operator-combine, operator-identity) so that build logs point into it. */
  char *prefix;
  double params[CLPRIM_OPERATOR_PARAMS];
};

/* Checks desc (texts, size, alignment; each failure a text that names the
 * field) and makes *op (op not NULL: the caller checks) with its prefix;
 * the device's layout is not checked yet (clprim__operator_layout). Only
 * while ctx is held. */
clprim_status clprim__operator_make(clprim_context *ctx, const clprim_operator_desc *desc,
                                    clprim_operator **op);
/* Compares the device's sizeof and alignof of the type (layout[0], [1],
 * written by a kernel built with op's prefix) with the host's:
 * CLPRIM_ERROR_OPERATOR_LAYOUT, with both in the text, where they differ. */
clprim_status clprim__operator_layout(clprim_context *ctx, const clprim_operator *op,
                                      const cl_uint layout[2]);
/* CLPRIM_SUCCESS when op is an operator made on ctx, else
 * CLPRIM_ERROR_INVALID_ARGUMENT with a text. */
clprim_status clprim__operator_check(clprim_context *ctx, const clprim_operator *op);
/* The kernel argument that carries op's parameters (clprim_op_params):
 * set it with clprim__set_args(kernel, 1, size, value). store holds the
 * value while it is in use. */
struct clprim_operator_params {
  cl_double d[CLPRIM_OPERATOR_PARAMS];
  cl_float f[CLPRIM_OPERATOR_PARAMS];
  size_t size;
  const void *value;
};
void clprim__operator_params(const clprim_context *ctx, const clprim_operator *op,
                             struct clprim_operator_params *store);

#endif /* CLPRIM_ENGINE_OPERATOR_H */
