/* operator.c: the user operator contract (operator.h): checks a user's
 * type, combine and identity, and writes them as one source text that the
 * families' kernels are built with (a kernel file sees clprim_op_t,
 * clprim_op_combine and clprim_op_identity; cl/operators.cl is the first).
 * The text is part of each program's key, so an operator's programs are
 * built once per context and kept in the disk cache. */
#include "operator.h"
#include "stages.h"

#include <stdlib.h>
#include <string.h>

/* A type name: words of letters, digits and '_' ("float2", "stats",
 * "unsigned int"), nothing that could end the typedef early. */
static int type_name_ok(const char *s) {
  int any = 0;
  for (const char *p = s; *p; ++p) {
    const unsigned char c = (unsigned char)*p;
    if (c == ' ') continue;
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return 0;
    if (!any && c >= '0' && c <= '9') return 0;
    any = 1;
  }
  return any;
}

clprim_status clprim__operator_make(clprim_context *ctx, const clprim_operator_desc *desc,
                                    clprim_operator **op) {
  if (!desc) return clprim__invalid(ctx, "desc is required");
  if (!desc->type || !type_name_ok(desc->type))
    return clprim__invalid(ctx, "desc->type is not a type name");
  if (desc->size < 1 || desc->size > 64)
    return clprim__invalid(ctx, "desc->size (%zu) is not 1 to 64", desc->size);
  if (desc->align < 1 || (desc->align & (desc->align - 1)) || desc->size % desc->align)
    return clprim__invalid(ctx, "desc->align (%zu) is not a power of two that divides size (%zu)",
                           desc->align, desc->size);
  if (!desc->combine || !clprim__expression_ok(desc->combine))
    return clprim__invalid(ctx, "desc->combine is not one expression");
  if (!desc->identity || !clprim__expression_ok(desc->identity))
    return clprim__invalid(ctx, "desc->identity is not one expression");

  struct clprim_text t = {NULL, 0, 0, 0, 0};
  if (desc->source) clprim__text_printf(&t, "#line 1 \"operator-source\"\n%s\n", desc->source);
  /* Lines of the generated part are numbered from its #line 1 "operator"
   * (start: the text's lines before it); each user text is on lines of its
   * own, named as the build log shows it. */
  const unsigned start = t.lines;
  clprim__text_printf(&t,
                      "#line 1 \"operator\"\n"
                      "typedef %s clprim_op_t;\n"
                      "#ifdef CLPRIM_HAS_FP64\n"
                      "typedef double clprim_op_param;\n"
                      "#else\n"
                      "typedef float clprim_op_param;\n"
                      "#endif\n"
                      "typedef struct { clprim_op_param p[8]; } clprim_op_params;\n"
                      "#define CLPRIM_OP_PARAMS_FROM(prm) const clprim_op_param p0 = prm.p[0], "
                      "p1 = prm.p[1], p2 = prm.p[2], p3 = prm.p[3], p4 = prm.p[4], "
                      "p5 = prm.p[5], p6 = prm.p[6], p7 = prm.p[7]; (void)p0, (void)p1, "
                      "(void)p2, (void)p3, (void)p4, (void)p5, (void)p6, (void)p7\n",
                      desc->type);
  clprim__text_printf(&t,
                      "CLPRIM_INLINE clprim_op_t clprim_op_combine(const clprim_op_t a, "
                      "const clprim_op_t b, const clprim_op_params prm) {\n"
                      "  CLPRIM_OP_PARAMS_FROM(prm);\n"
                      "  return (\n#line 1 \"operator-combine\"\n%s\n", desc->combine);
  clprim__text_printf(&t, "#line %u \"operator\"\n);\n}\n", t.lines + 1 - start);
  clprim__text_printf(&t,
                      "CLPRIM_INLINE clprim_op_t clprim_op_identity(const clprim_op_params prm) {\n"
                      "  CLPRIM_OP_PARAMS_FROM(prm);\n"
                      "  return (\n#line 1 \"operator-identity\"\n%s\n", desc->identity);
  clprim__text_printf(&t, "#line %u \"operator\"\n);\n}\n", t.lines + 1 - start);
  clprim_operator *o = t.failed ? NULL : calloc(1, sizeof *o);
  char *type = o ? malloc(strlen(desc->type) + 1) : NULL;
  if (!type) {
    free(o);
    free(t.s);
    return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  }
  strcpy(type, desc->type);
  o->ctx = ctx, o->type = type, o->size = desc->size, o->align = desc->align, o->prefix = t.s;
  *op = o;
  return CLPRIM_SUCCESS;
}

clprim_status clprim__operator_layout(clprim_context *ctx, const clprim_operator *op,
                                      const cl_uint layout[2]) {
  if (layout[0] == op->size && layout[1] == op->align) return CLPRIM_SUCCESS;
  return clprim__fail(ctx, CLPRIM_ERROR_OPERATOR_LAYOUT,
                      "the type's size and alignment are %u and %u on the device, %zu and %zu "
                      "in desc",
                      layout[0], layout[1], op->size, op->align);
}

clprim_status clprim__operator_check(clprim_context *ctx, const clprim_operator *op) {
  if (!op) return clprim__invalid(ctx, "op is required");
  if (op->ctx != ctx) return clprim__invalid(ctx, "op was made on another context");
  return CLPRIM_SUCCESS;
}

void clprim__operator_params(const clprim_context *ctx, const clprim_operator *op,
                             struct clprim_operator_params *store) {
  for (unsigned k = 0; k < CLPRIM_OPERATOR_PARAMS; ++k)
    store->d[k] = op->params[k], store->f[k] = (cl_float)op->params[k];
  const int fp64 = ctx->info.has_fp64 != 0;
  store->size = fp64 ? sizeof store->d : sizeof store->f;
  store->value = fp64 ? (const void *)store->d : (const void *)store->f;
}
