/* stages.c: a pipeline's stages (maps and filters over one to four
 * inputs) as one generated OpenCL C function, pipe_element, which the
 * kernels of the family that runs the terminal call where they would load
 * an element (cl/pipeline.cl says what it defines); the checks of a user's
 * expression; a build log turned into the expression's own terms; the
 * kernel arguments that follow each kernel's own (PIPE_PARAMS); select's
 * tests (one function per expression) placed the same way. The pipeline
 * family and every expression call of select stand on it. */
#include "stages.h"

#include <stdlib.h>
#include <string.h>

static int is_float(clprim_type t) { return t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE; }

clprim_type clprim__stages_type(const struct clprim_stages *p) {
  return p->stage_count ? p->stages[p->stage_count - 1].type : p->types[0];
}

const char *clprim__stages_type_name(const struct clprim_stages *p, clprim_type type) {
  return type == CLPRIM__STAGE_OP_TYPE && p->op_type ? p->op_type : clprim__cl_type(type);
}

/* Whether an expression is one expression that cannot reach outside the
 * generated function: see the doc comment in clprim.h. */
int clprim__expression_ok(const char *e) {
  if (!e) return 0;
  char open[256];
  size_t depth = 0;
  int any = 0;
  for (const char *p = e; *p; ++p) {
    const unsigned char c = (unsigned char)*p;
    if (c == ';' || c == '{' || c == '}' || c == '#' || c == '\\' || c == '"' || c == '\'')
      return 0;
    if (c < 32 && c != ' ' && c != '\t' && c != '\n' && c != '\r') return 0;
    if (c >= 127) return 0;
    if (c == '/' && (p[1] == '*' || p[1] == '/')) return 0;
    /* digraphs (<% %> <: :> %:) and trigraphs (??x) spell braces and '#' */
    if ((c == '<' && (p[1] == '%' || p[1] == ':')) || (c == '%' && (p[1] == '>' || p[1] == ':')) ||
        (c == ':' && p[1] == '>') || (c == '?' && p[1] == '?'))
      return 0;
    if (c == '(' || c == '[') {
      if (depth == sizeof open) return 0;
      open[depth++] = (char)c;
    } else if (c == ')' || c == ']') {
      if (depth == 0 || open[depth - 1] != (c == ')' ? '(' : '[')) return 0;
      --depth;
    }
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') any = 1;
  }
  return depth == 0 && any;
}

static char *dup_text(const char *s) {
  char *d = malloc(strlen(s) + 1);
  if (d) strcpy(d, s);
  return d;
}

static const char input_name[CLPRIM__STAGE_INPUTS] = {'a', 'b', 'c', 'd'};

/* OpenCL C that turns ulong bits q into an operand of type. */
static const char *bits_to(clprim_type type) {
  static const char *const conv[CLPRIM_TYPE_COUNT] = {
      "as_int((uint)", "(uint)(", "as_long(", "(ulong)(", "as_float((uint)", "as_double("};
  return conv[type];
}

/* A built-in predicate over x and the operands qa, qb (select.cl's rules). */
static const char *builtin_condition(clprim_predicate_op op, clprim_type type) {
  const int fl = is_float(type);
  switch (op) {
  case CLPRIM_PRED_GT:
    return "x > qa";
  case CLPRIM_PRED_GE:
    return "x >= qa";
  case CLPRIM_PRED_LT:
    return "x < qa";
  case CLPRIM_PRED_LE:
    return "x <= qa";
  case CLPRIM_PRED_EQ:
    return "x == qa";
  case CLPRIM_PRED_NE:
    return "x != qa";
  case CLPRIM_PRED_INSIDE:
    return "qa <= x && x < qb";
  case CLPRIM_PRED_OUTSIDE:
    return "!(qa <= x && x < qb)";
  case CLPRIM_PRED_NONZERO:
    return "x != 0";
  case CLPRIM_PRED_IS_NAN:
    return fl ? "isnan(x)" : "0";
  case CLPRIM_PRED_NOT_NAN:
    return fl ? "!isnan(x)" : "1";
  case CLPRIM_PRED_MASK_EQ:
    return "(x & qa) == qb";
  }
  return "0";
}

/* The user's expression on a line of its own, under a file name that says
 * which stage it is (build logs are translated from it). */
static void put_expression(struct clprim_text *t, struct clprim_stage *st, unsigned stage) {
  clprim__text_printf(t, "#line 1 \"clprim-expression-%u\"\n", stage);
  st->line = t->lines + 1;
  clprim__text_printf(t, "%s\n", st->expression);
  st->after = t->lines + 2;
  clprim__text_printf(t, "#line %u \"clprim-pipeline\"\n", st->after);
}

/* `*pipe_out = pipe_v<v>` where v's type (vt) and PIPE_OUT_T's (out) agree:
 * a cast between built-in types, none within the operator's type, and no
 * assignment between the two kinds (a struct converts to nothing). */
static void put_out(struct clprim_text *t, const char *indent, clprim_type vt, clprim_type out,
                    unsigned v) {
  if (vt == CLPRIM__STAGE_OP_TYPE && out == CLPRIM__STAGE_OP_TYPE)
    clprim__text_printf(t, "%s*pipe_out = pipe_v%u;\n", indent, v);
  else if (vt != CLPRIM__STAGE_OP_TYPE && out != CLPRIM__STAGE_OP_TYPE)
    clprim__text_printf(t, "%s*pipe_out = (PIPE_OUT_T)pipe_v%u;\n", indent, v);
}

/* The generated source of the pipeline's stages (cl/pipeline.cl). */
clprim_status clprim__stages_source(struct clprim_stages *p, const clprim_context *ctx,
                                    int counted) {
  if (p->source && !p->tests && p->source_counted == counted) return CLPRIM_SUCCESS;
  free(p->source);
  p->source = NULL;
  const char *pt = ctx->info.has_fp64 ? "double" : "float";
  const clprim_type out = clprim__stages_type(p);
  struct clprim_text t = {NULL, 0, 0, 0, 0};
  clprim__text_printf(&t, "#define PIPE_A_T %s\n#define PIPE_OUT_T %s\n",
                      clprim__cl_type(p->types[0]), clprim__stages_type_name(p, out));
  clprim__text_printf(&t, "#define PIPE_PARAMS");
  for (unsigned k = 1; k < p->inputs; ++k)
    clprim__text_printf(&t, " , __global const %s *pipe_in_%u", clprim__cl_type(p->types[k]), k);
  for (unsigned k = 0; k < CLPRIM__STAGE_PARAMS; ++k)
    clprim__text_printf(&t, " , %s pipe_p%u", pt, k);
  for (unsigned k = 0; k < 2 * CLPRIM__STAGE_BUILTINS; ++k)
    clprim__text_printf(&t, " , ulong pipe_q%u", k);
  if (counted) clprim__text_printf(&t, " , __global const ulong *pipe_count");
  clprim__text_printf(&t, "\n#define PIPE_ARGS");
  for (unsigned k = 1; k < p->inputs; ++k)
    clprim__text_printf(&t, " , pipe_in_%u", k);
  for (unsigned k = 0; k < CLPRIM__STAGE_PARAMS; ++k)
    clprim__text_printf(&t, " , pipe_p%u", k);
  for (unsigned k = 0; k < 2 * CLPRIM__STAGE_BUILTINS; ++k)
    clprim__text_printf(&t, " , pipe_q%u", k);
  if (counted) clprim__text_printf(&t, " , pipe_count");
  clprim__text_printf(&t, "\n");
  /* The operator's type and helpers, for the stages and the terminal. */
  if (p->op_prefix) clprim__text_printf(&t, "%s\n", p->op_prefix);
  clprim__text_printf(&t, "#line %u \"clprim-pipeline\"\n", t.lines + 1);
  clprim__text_printf(&t, "CLPRIM_INLINE int pipe_element(PIPE_A_T a, ulong i, PIPE_OUT_T *pipe_out "
                  "PIPE_PARAMS) {\n");
  for (unsigned k = 0; k < CLPRIM__STAGE_PARAMS; ++k)
    clprim__text_printf(&t, "  const %s p%u = pipe_p%u;\n", pt, k, k);
  for (unsigned k = 1; k < p->inputs; ++k)
    clprim__text_printf(&t, "  const %s %c = pipe_in_%u[i];\n", clprim__cl_type(p->types[k]), input_name[k],
                k);
  /* *pipe_out follows x (a failing element leaves the x it failed at:
   * partitions write it), where x's type and PIPE_OUT_T agree (put_out:
   * else it keeps the last such x, or is not written). */
  clprim__text_printf(&t, "  const %s pipe_v0 = a;\n", clprim__cl_type(p->types[0]));
  put_out(&t, "  ", p->types[0], out, 0);
  /* A counted run: the elements from the device count on are not there. */
  if (counted) clprim__text_printf(&t, "  if (i >= *pipe_count) return 0;\n");
  unsigned v = 0;
  clprim_type cur = p->types[0];
  for (unsigned s = 0; s < p->stage_count; ++s) {
    struct clprim_stage *st = &p->stages[s];
    const char *ct = clprim__stages_type_name(p, cur);
    switch (st->kind) {
    case CLPRIM__STAGE_MAP: {
      /* A built-in type: the expression converted by a cast; the
       * operator's: the expression as it is (it must have the type). */
      const char *nt = clprim__stages_type_name(p, st->type);
      clprim__text_printf(&t, "  %s pipe_v%u;\n  {\n    const %s x = pipe_v%u;\n", nt, v + 1, ct,
                          v);
      if (st->type == CLPRIM__STAGE_OP_TYPE)
        clprim__text_printf(&t, "    pipe_v%u = (\n", v + 1);
      else
        clprim__text_printf(&t, "    pipe_v%u = (%s)(\n", v + 1, nt);
      put_expression(&t, st, s + 1);
      clprim__text_printf(&t, "    );\n");
      put_out(&t, "    ", st->type, out, v + 1);
      clprim__text_printf(&t, "  }\n");
      ++v;
      cur = st->type;
      break;
    }
    case CLPRIM__STAGE_FILTER_EXPR:
      clprim__text_printf(&t, "  {\n    const %s x = pipe_v%u;\n    if (!(\n", ct, v);
      put_expression(&t, st, s + 1);
      clprim__text_printf(&t, "    )) return 0;\n  }\n");
      break;
    case CLPRIM__STAGE_FILTER_PRED:
      clprim__text_printf(
          &t,
          "  {\n    const %s x = pipe_v%u;\n    const %s qa = %spipe_q%u), qb = %spipe_q%u);\n"
          "    if (!(%s)) return 0;\n  }\n",
          ct, v, ct, bits_to(cur), 2 * st->builtin, bits_to(cur), 2 * st->builtin + 1,
          builtin_condition(st->op, cur));
      break;
    case CLPRIM__STAGE_FILTER_FLAGS:
      clprim__text_printf(&t, "  if (!(%c != 0)) return 0;\n", input_name[st->input]);
      break;
    }
  }
  clprim__text_printf(&t, "  *pipe_out = pipe_v%u;\n  return 1;\n}\n", v);
  if (t.failed) {
    free(t.s);
    return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  }
  p->source = t.s, p->source_counted = counted, p->tests = 0;
  return CLPRIM_SUCCESS;
}

/* Select's tests: each expression a function of its own, its text placed
 * as a pipeline's is (put_expression), so that build logs translate the
 * same way. */
clprim_status clprim__stages_tests(struct clprim_stages *p, clprim_type type,
                                   const char *const *expressions, unsigned count) {
  memset(p, 0, sizeof *p);
  p->inputs = 1, p->types[0] = type;
  struct clprim_stage filter;
  memset(&filter, 0, sizeof filter);
  filter.kind = CLPRIM__STAGE_FILTER_EXPR, filter.type = type;
  for (unsigned k = 0; k < count; ++k)
    CLPRIM_CHECK(clprim__stages_add(p, filter, expressions[k]));
  struct clprim_text t = {NULL, 0, 0, 0, 0};
  clprim__text_printf(&t, "#line 2 \"clprim-pipeline\"\n#define STAGE_TESTS %u\n", count);
  for (unsigned k = 0; k < count; ++k) {
    clprim__text_printf(&t, "CLPRIM_INLINE int stage_test_%u(const %s x, ulong i) {\n  return (\n",
                        k + 1, clprim__cl_type(type));
    put_expression(&t, &p->stages[k], k + 1);
    clprim__text_printf(&t, "  ) != 0;\n}\n");
  }
  if (t.failed) {
    free(t.s);
    return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  }
  p->source = t.s, p->tests = 1;
  return CLPRIM_SUCCESS;
}

/* Lines of text (a string's newlines + 1). */
static unsigned lines_of(const char *text) {
  unsigned n = 1;
  for (; *text; ++text)
    n += *text == '\n';
  return n;
}

/* Where a log line points into a user's expression: its stage (1-based)
 * and the line and column in the expression's text, and *message the rest
 * after "LINE:COL:". Compilers that honour #line name the file
 * clprim-expression-<stage>; others (Oclgrind) give the line of the whole
 * source, which starts with clprim_device.h and a line break. */
static int log_location(const struct clprim_stages *p, const char *line, size_t len, unsigned *stage,
                        unsigned *row, unsigned *col, const char **message) {
  const unsigned header = lines_of(clprim__source("clprim_device.h")) - 1;
  for (const char *c = line; c < line + len; ++c) {
    if (*c != ':' || !(c[1] >= '0' && c[1] <= '9')) continue;
    unsigned r = 0, k = 0;
    int used = 0;
    if (sscanf(c, ":%u:%u%n", &r, &k, &used) != 2 || used == 0 || c + used >= line + len) continue;
    /* "LINE:COL:", or clang's "LINE:COL <Spelling=header:L:C>:" where a
     * macro of the runtime's headers (PoCL's sqrt) spelled the token. */
    const char *after = c + used;
    if (*after == ' ' && after[1] == '<') {
      const char *close = memchr(after, '>', (size_t)(line + len - after));
      if (!close) continue;
      after = close + 1;
    }
    if (after >= line + len || *after != ':') continue;
    *message = after + 1;
    *col = k;
    static const char named[] = "clprim-expression-";
    const size_t nl = sizeof named - 1;
    unsigned s = 0;
    if ((size_t)(c - line) > nl) {
      const char *d = c;
      while (d > line && d[-1] >= '0' && d[-1] <= '9')
        --d;
      if ((size_t)(d - line) >= nl && strncmp(d - nl, named, nl) == 0 && sscanf(d, "%u", &s) == 1 &&
          s >= 1 && s <= p->stage_count && p->stages[s - 1].expression) {
        *stage = s, *row = r;
        return 1;
      }
    }
    /* Line numbers of the whole source only where the file is none that
     * #line names (the library's files, the generated part). */
    const char *f = c;
    while (f > line && f[-1] != ' ' && f[-1] != '\t')
      --f;
    char file[64];
    snprintf(file, sizeof file, "%.*s", (int)(c - f < 63 ? c - f : 63), f);
    /* The token after an expression that ended too soon ("a +", "c ? a"):
     * the generated line after it, as #line numbers it or in the whole
     * source; reported at the end of the expression. */
    const int generated = strcmp(file, "clprim-pipeline") == 0;
    for (s = 0; s < p->stage_count && (generated || !clprim__source(file)); ++s) {
      const struct clprim_stage *st = &p->stages[s];
      if (!st->expression || r != (generated ? st->after : header + 1 + st->after)) continue;
      const char *last = st->expression;
      for (const char *e = st->expression; *e; ++e)
        if (*e == '\n') last = e + 1;
      *stage = s + 1, *row = lines_of(st->expression), *col = (unsigned)strlen(last) + 1;
      return 1;
    }
    if (clprim__source(file) || generated) return 0;
    for (s = 0; s < p->stage_count; ++s) {
      const struct clprim_stage *st = &p->stages[s];
      if (!st->expression) continue;
      const unsigned first = header + 1 + st->line;
      if (r >= first && r < first + lines_of(st->expression)) {
        *stage = s + 1, *row = r - first + 1;
        return 1;
      }
    }
    return 0;
  }
  return 0;
}

/* The build log, where it is about a user's expression, becomes
 * "expression:LINE:COL: message", the expression's line, a caret and the
 * stage; other lines (the compiler's own quotes) are dropped. A log with
 * no such line is left as it is. */
void clprim__stages_translate_log(const struct clprim_stages *p, clprim_context *ctx) {
  if (!ctx->build_log || !*ctx->build_log) return;
  struct clprim_text t = {NULL, 0, 0, 0, 0};
  for (const char *line = ctx->build_log; *line;) {
    const size_t len = strcspn(line, "\n");
    unsigned stage = 0, row = 0, col = 0;
    const char *message = NULL;
    if (log_location(p, line, len, &stage, &row, &col, &message)) {
      while (*message == ' ')
        ++message;
      /* "error: file:1:2: text" (PoCL) or "file:1:2: error: text" (clang) */
      const char *severity = "";
      if (strncmp(line, "error:", 6) == 0) severity = "error: ";
      if (strncmp(line, "warning:", 8) == 0) severity = "warning: ";
      const size_t mlen = (size_t)(line + len - message);
      clprim__text_printf(&t, "expression:%u:%u: %s%.*s\n", row, col, severity, (int)mlen, message);
      /* The expression's line `row`, and a caret under column col. */
      const char *e = p->stages[stage - 1].expression;
      for (unsigned r = 1; r < row && *e; ++r) {
        e += strcspn(e, "\n");
        if (*e) ++e;
      }
      const size_t elen = strcspn(e, "\n");
      clprim__text_printf(&t, "  %.*s\n  ", (int)elen, e);
      for (unsigned c = 1; c < col && c <= elen; ++c)
        clprim__text_printf(&t, "%c", e[c - 1] == '\t' ? '\t' : ' ');
      static const char *const ordinal[2] = {"first", "second"};
      if (!p->tests)
        clprim__text_printf(&t, "^\n  (stage %u of the pipeline: %s)\n", stage,
                            p->stages[stage - 1].kind == CLPRIM__STAGE_MAP ? "a map" : "a filter");
      else if (p->stage_count == 2)
        clprim__text_printf(&t, "^\n  (the %s expression)\n", ordinal[stage - 1]);
      else
        clprim__text_printf(&t, "^\n");
    }
    line += len;
    if (*line) ++line;
  }
  if (!t.failed && t.s) {
    free(ctx->build_log);
    ctx->build_log = t.s;
  } else {
    free(t.s);
  }
}


void clprim__stages_args(const struct clprim_stages *p, const clprim_context *ctx,
                         const cl_mem *inputs, cl_mem count, const double *params,
                         struct clprim_stage_args *store, struct clprim_extra_args *e) {
  memset(e, 0, sizeof *e);
  const int fp64 = ctx->info.has_fp64;
  for (unsigned k = 1; k < p->inputs; ++k) {
    store->inputs[k] = inputs[k];
    e->size[e->count] = sizeof(cl_mem), e->value[e->count++] = &store->inputs[k];
  }
  for (unsigned k = 0; k < CLPRIM__STAGE_PARAMS; ++k) {
    store->pd[k] = params ? params[k] : 0.0;
    store->pf[k] = (cl_float)store->pd[k];
    e->size[e->count] = fp64 ? sizeof(cl_double) : sizeof(cl_float);
    e->value[e->count++] = fp64 ? (const void *)&store->pd[k] : (const void *)&store->pf[k];
  }
  for (unsigned k = 0; k < 2 * CLPRIM__STAGE_BUILTINS; ++k)
    e->size[e->count] = sizeof(cl_ulong), e->value[e->count++] = &p->q[k];
  if (count) {
    store->count = count;
    e->size[e->count] = sizeof(cl_mem), e->value[e->count++] = &store->count;
  }
}


/* A new stage (its expression checked and copied); the source is
 * generated again. */
clprim_status clprim__stages_add(struct clprim_stages *p, struct clprim_stage st,
                                 const char *expression) {
  if (p->stage_count == CLPRIM__STAGE_MAX) return CLPRIM_ERROR_INVALID_ARGUMENT;
  if (expression) {
    if (!clprim__expression_ok(expression)) return CLPRIM_ERROR_INVALID_ARGUMENT;
    st.expression = dup_text(expression);
    if (!st.expression) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  }
  p->stages[p->stage_count++] = st;
  free(p->source);
  p->source = NULL;
  return CLPRIM_SUCCESS;
}

clprim_status clprim__stages_set_op(struct clprim_stages *p, const char *type, size_t size,
                                    const char *prefix) {
  if (p->op_prefix)
    return strcmp(p->op_prefix, prefix) == 0 ? CLPRIM_SUCCESS : CLPRIM_ERROR_INVALID_ARGUMENT;
  char *t = dup_text(type), *x = dup_text(prefix);
  if (!t || !x) {
    free(t), free(x);
    return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  }
  p->op_type = t, p->op_prefix = x, p->op_size = size;
  free(p->source);
  p->source = NULL;
  return CLPRIM_SUCCESS;
}

void clprim__stages_free(struct clprim_stages *p) {
  for (unsigned s = 0; s < p->stage_count; ++s) free(p->stages[s].expression);
  free(p->op_type);
  free(p->op_prefix);
  free(p->source);
  memset(p, 0, sizeof *p);
}
