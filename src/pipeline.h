/* pipeline.h: what the pipeline family (src/pipeline.c) offers select.c.
 * Not installed. */
#ifndef CLPRIM_PIPELINE_H
#define CLPRIM_PIPELINE_H

#include "core/core.h"
#include "select.h"

/* pipeline.c, for select.c: the compaction of sel (whose prefix and extra
 * it sets) by a one-filter pipeline of `expression` over elements of
 * sel->type with parameters params[0..7] (NULL: 0); the expression is
 * checked (CLPRIM_ERROR_INVALID_ARGUMENT) and a build log translated as a
 * pipeline's. */
clprim_status clprim__select_expr(clprim_context *ctx, struct clprim_pipe_select *sel,
                                  const char *expression, const double *params);
/* pipeline.c: whether a user's expression is one expression that cannot
 * reach outside the code around it (clprim.h's pipeline section says what
 * is refused); the three-way partition's expressions are checked with it. */
int clprim__expression_ok(const char *e);

#endif /* CLPRIM_PIPELINE_H */
