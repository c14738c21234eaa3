/* stages.h: a pipeline's stages as one generated function (engine/stages.c).
 * Not installed. */
#ifndef CLPRIM_ENGINE_STAGES_H
#define CLPRIM_ENGINE_STAGES_H

#include "../core/core.h"

#define CLPRIM__STAGE_INPUTS 4   /* a, b, c, d */
#define CLPRIM__STAGE_MAX 16     /* stages of a pipeline */
#define CLPRIM__STAGE_PARAMS 8   /* p0 .. p7 */
#define CLPRIM__STAGE_BUILTINS 4 /* built-in predicates: operands in pipe_q0..pipe_q7 */

enum clprim_stage_kind {
  CLPRIM__STAGE_MAP,
  CLPRIM__STAGE_FILTER_EXPR,
  CLPRIM__STAGE_FILTER_PRED,
  CLPRIM__STAGE_FILTER_FLAGS
};

/* A stage's type that is the pipeline's operator's (clprim_pipeline_map_op:
 * struct clprim_stages' op_type names it), not a clprim_type. */
#define CLPRIM__STAGE_OP_TYPE ((clprim_type)CLPRIM_TYPE_COUNT)

struct clprim_stage {
  enum clprim_stage_kind kind;
  clprim_type type;       /* x's type after the stage (or CLPRIM__STAGE_OP_TYPE) */
  char *expression;       /* MAP, FILTER_EXPR (owned) */
  clprim_predicate_op op; /* FILTER_PRED: operands in q[2 builtin], q[2 builtin + 1] */
  unsigned builtin;
  unsigned input; /* FILTER_FLAGS */
  unsigned line;  /* the generated source's line that starts its expression */
  unsigned after; /* the generated line after the expression (the #line number it gets) */
};

/* The stages over inputs of types[0 .. inputs), and their generated source
 * (NULL until generated; a new stage drops it). Zero-initialise it. */
struct clprim_stages {
  unsigned inputs;
  clprim_type types[CLPRIM__STAGE_INPUTS];
  struct clprim_stage stages[CLPRIM__STAGE_MAX];
  unsigned stage_count, builtins;
  cl_ulong q[2 * CLPRIM__STAGE_BUILTINS];
  /* The operator of the maps by an operator (clprim_pipeline_map_op; one a
   * pipeline): its type's OpenCL C name and size, and its prefix
   * (engine/operator.h: the type, its helpers, combine and identity), put
   * before the stage function so that every stage and the terminal's file
   * see them; owned copies, NULL without. */
  char *op_type, *op_prefix;
  size_t op_size;
  char *source;
  int source_counted; /* source takes the count from the device (pipe_count) */
  int tests;          /* source is select's tests (clprim__stages_tests), not a pipeline */
};

/* Whether a user's expression is one expression that cannot reach outside
 * the code around it (clprim.h's pipeline section says what is refused). */
int clprim__expression_ok(const char *e);
/* x's type after the last stage (the first input's without stages;
 * CLPRIM__STAGE_OP_TYPE for the operator's), and the OpenCL C name of a
 * stage's type. */
clprim_type clprim__stages_type(const struct clprim_stages *p);
const char *clprim__stages_type_name(const struct clprim_stages *p, clprim_type type);
/* Sets the operator of the maps by an operator (its type's name and size
 * and its prefix, copied), where the stages have none yet or have that
 * very prefix; CLPRIM_ERROR_INVALID_ARGUMENT where they have another's. */
clprim_status clprim__stages_set_op(struct clprim_stages *p, const char *type, size_t size,
                                    const char *prefix);
/* Adds stage st (its expression checked and copied; NULL for none):
 * CLPRIM_ERROR_INVALID_ARGUMENT for a bad expression or too many stages. */
clprim_status clprim__stages_add(struct clprim_stages *p, struct clprim_stage st,
                                 const char *expression);
/* p->source for a run that takes its count from the device (counted) or
 * not, generated where it is not already. */
clprim_status clprim__stages_source(struct clprim_stages *p, const clprim_context *ctx,
                                    int counted);
/* Select's tests (src/select.c, cl/select.cl): the `count` expressions
 * over x (of type) and i become p's stages (checked as a pipeline's, see
 * clprim__stages_add) and p->source the functions
 *   int stage_test_<k>(const X x, ulong i)   k = 1 .. count, 1 where the
 *                                           expression is nonzero
 * and the macro STAGE_TESTS (count), each expression on lines of its own as
 * a pipeline's are, so that clprim__stages_translate_log reads a failed
 * build's log the same way. p is overwritten; free it with
 * clprim__stages_free whether or not this succeeds. */
clprim_status clprim__stages_tests(struct clprim_stages *p, clprim_type type,
                                   const char *const *expressions, unsigned count);
/* ctx's build log, where it is about a user's expression, in that
 * expression's terms ("expression:LINE:COL: message", its line, a caret and
 * the stage; for two tests, which of them). */
void clprim__stages_translate_log(const struct clprim_stages *p, clprim_context *ctx);
/* The kernel arguments that follow each kernel's own (PIPE_PARAMS): the
 * inputs but the first, the parameters (NULL: all 0), the built-ins'
 * operands and, with count, the device count; store holds their values
 * while extra is in use. */
struct clprim_stage_args {
  cl_mem inputs[CLPRIM__STAGE_INPUTS];
  cl_double pd[CLPRIM__STAGE_PARAMS];
  cl_float pf[CLPRIM__STAGE_PARAMS];
  cl_mem count;
};
void clprim__stages_args(const struct clprim_stages *p, const clprim_context *ctx,
                         const cl_mem *inputs, cl_mem count, const double *params,
                         struct clprim_stage_args *store, struct clprim_extra_args *extra);
void clprim__stages_free(struct clprim_stages *p);

#endif /* CLPRIM_ENGINE_STAGES_H */
