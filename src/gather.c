/* gather.c: gather and scatter by index, for elements of 1 to 64 bytes
 * moved as words (kernels in cl/gather.cl, which describes them). One
 * program per word type (uchar to uint4; the index width is a kernel
 * argument), so that every element size builds at most five. With
 * CLPRIM_CHECK_INDICES a check kernel and a read of its verdict come
 * first; then one launch writes out (a scatter of elements that no atomic
 * exchange moves first marks a winner per target in scratch), so a failed
 * call writes nothing. */
#include "core/core.h"

#include <stdio.h>
#include <string.h>

/* The family's knobs and table (docs/TUNING.md): wg, the work-group size;
 * step, the most elements of one step of a scatter that marks winners
 * (scatter_mark's positions are uint; tests: 100). */
enum { GATHER_WG, GATHER_STEP, GATHER_KNOBS };
static const struct clprim_knob gather_knobs[GATHER_KNOBS] = {{"wg", 1, 1024},
                                                              {"step", 1, (long long)1 << 31}};
#define K CLPRIM__KNOB
static const struct clprim_tuning_row gather_table[] = {
    {0, 0, NULL, 0, 0, K(GATHER_WG) | K(GATHER_STEP), {256, (long long)1 << 31},
     "portable default: 256 work-items (the launch's, core/launch.c; not measured against "
     "others), steps of 2^31 elements"},
    {0, CL_DEVICE_TYPE_CPU, NULL, 0, 0, K(GATHER_WG), {64},
     "portable default for CPU runtimes: the launch's 64 work-items (core/launch.c)"},
    {1u << CLPRIM_PATH_CPU, 0, NULL, 0, 0, K(GATHER_WG), {1},
     "the cpu path: one work-item a work-group, a share of at least 4096 elements each"},
};
#undef K
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_gather = {
    "gather", gather_knobs, GATHER_KNOBS, gather_table,
    sizeof gather_table / sizeof gather_table[0], 0, prebuild};

#define SLOT_CHECK "gather: check"     /* the first bad position (gather_check) */
#define SLOT_WINNERS "gather: winners" /* a uint per element of out (scatter_mark) */
#define NO_BAD 0xFFFFFFFFu             /* gather_check found no index out of range */

/* One call. count: the elements of the range that indices point into
 * (gather: in's, scatter: out's). */
struct gather_call {
  const char *name, *count_name;
  int scatter;
  size_t n, elem_size, count;
  clprim_buffer in, indices, out;
  clprim_type index_type;
  unsigned flags;
};

/* The widest word that divides an element of es bytes, and its type. */
static unsigned word_bytes(size_t es) {
  unsigned w = 16;
  while (es % w != 0)
    w /= 2;
  return w;
}
static const char *word_type(unsigned bytes) {
  switch (bytes) {
  case 16:
    return "uint4";
  case 8:
    return "uint2";
  case 4:
    return "uint";
  case 2:
    return "ushort";
  default:
    return "uchar";
  }
}

/* Work-groups of wg work-items for n elements, per_group at a time
 * (grid-stride, at most the launch's groups); on the cpu path its shares. */
static size_t groups_for(const clprim_context *ctx, size_t n, size_t per_group, unsigned wg) {
  if (ctx->info.path == CLPRIM_PATH_CPU) {
    const size_t shares = clprim__cpu_stream_shares(ctx, n);
    return (shares + wg - 1) / wg;
  }
  const size_t most = clprim__launch(ctx).max_groups;
  const size_t groups = n / per_group + (n % per_group != 0);
  return groups < most ? groups : most;
}

/* The text of an index out of range at position `bad` (gather_check's). */
static clprim_status bad_index(clprim_context *ctx, const struct gather_call *c, cl_mem indices,
                               cl_uint bad) {
  if (bad == NO_BAD - 1)
    return clprim__invalid(ctx, "indices[%u or later] is out of range: %s is %zu", bad,
                           c->count_name, c->count);
  const size_t is = clprim_type_size(c->index_type);
  uint64_t index = 0;
  uint32_t index32 = 0;
  CLPRIM_CHECK(clprim__read(ctx, indices, bad * is, is, is == 8 ? (void *)&index : &index32));
  if (is == 4) index = index32;
  return clprim__invalid(ctx, "indices[%u] (%llu) is out of range: %s is %zu", bad,
                         (unsigned long long)index, c->count_name, c->count);
}

static clprim_status gather(clprim_context *ctx, const struct gather_call *c) {
  CLPRIM_CHECK(clprim__check_flags(ctx, c->flags, CLPRIM_CHECK_INDICES));
  if (c->elem_size < 1 || c->elem_size > 64)
    return clprim__invalid(ctx, "elem_size (%zu) is not 1 to 64 bytes", c->elem_size);
  if (c->index_type != CLPRIM_UINT32 && c->index_type != CLPRIM_UINT64)
    return clprim__invalid(ctx, "index_type (%d) is neither CLPRIM_UINT32 nor CLPRIM_UINT64",
                           (int)c->index_type);
  const int check = (c->flags & CLPRIM_CHECK_INDICES) != 0;
  const size_t es = c->elem_size, is = clprim_type_size(c->index_type);
  const size_t in_count = c->scatter ? c->n : c->count, out_count = c->scatter ? c->count : c->n;
  /* A gather writes every element of out unless it skips an index (so not
   * with the check); a scatter writes some. */
  const unsigned out_use = !c->scatter && check ? CLPRIM__OUT_ALL : CLPRIM__OUT;
  cl_mem in, indices, out;
  CLPRIM_CHECK(clprim__range(ctx, "in", c->in, es, in_count, CLPRIM__READ, &in));
  CLPRIM_CHECK(clprim__range(ctx, "indices", c->indices, is, c->n, CLPRIM__READ, &indices));
  CLPRIM_CHECK(clprim__range(ctx, "out", c->out, es, out_count, out_use, &out));
  if (c->n == 0) return CLPRIM_SUCCESS; /* nothing to write */

  const unsigned wb = word_bytes(es);
  const cl_uint words = (cl_uint)(es / wb);
  const int xchg64 = ctx->info.has_int64_atomics != 0;
  /* Elements of one 4-byte (or 8-byte) word scatter by atomic exchange. */
  const int xchg = c->scatter && words == 1 && (wb == 4 || (wb == 8 && xchg64));
  char options[64];
  snprintf(options, sizeof options, "-DWORD=%s -DWORD_BYTES=%u%s", word_type(wb), wb,
           wb == 8 && xchg64 ? " -DXCHG64=1" : "");
  enum { CHECK, MOVE, MARK };
  const char *names[3] = {"gather_check", "gather_move", NULL};
  if (c->scatter) {
    names[MOVE] = xchg ? "scatter_xchg" : "scatter_move";
    if (!xchg) names[MARK] = "scatter_mark";
  }
  cl_kernel k[3];
  struct clprim_kernel_request r[3];
  unsigned count = 0;
  for (unsigned j = check ? CHECK : MOVE; j < 3 && names[j]; ++j) {
    const struct clprim_kernel_request q = {"gather.cl", NULL,  options, names[j],
                                            NULL,        &k[j], NULL,    NULL};
    r[count++] = q;
  }
  CLPRIM_CHECK(clprim__kernels(ctx, r, count));

  long long v[GATHER_KNOBS];
  clprim__tuned(ctx, &clprim__family_gather, (unsigned)es, 0, v);
  const unsigned wg = clprim__fit_wg(ctx, v[GATHER_WG] > 0 ? (unsigned)v[GATHER_WG] : 256u);
  const size_t step = v[GATHER_STEP] > 0 ? (size_t)v[GATHER_STEP] : (size_t)1 << 31;
  const cl_uint team = ctx->info.path == CLPRIM_PATH_CPU ? 1 : words < wg ? words : wg;
  const cl_int idx64 = is == 8;
  const cl_ulong n64 = c->n, count64 = c->count;

  if (check) { /* the verdict is read before anything is written */
    cl_mem first_bad;
    const cl_uint none = NO_BAD;
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_CHECK, 4, &first_bad));
    CLPRIM_CHECK(clprim__set_args(k[CHECK], 5, sizeof indices, &indices, sizeof idx64, &idx64,
                                  sizeof n64, &n64, sizeof count64, &count64, sizeof first_bad,
                                  &first_bad));
    CLPRIM_CHECK(clprim__fill(ctx, first_bad, &none, 4, 0, 4));
    CLPRIM_CHECK(clprim__enqueue(ctx, k[CHECK], groups_for(ctx, c->n, wg, wg), wg));
    cl_uint bad;
    CLPRIM_CHECK(clprim__read(ctx, first_bad, 0, 4, &bad));
    if (bad != NO_BAD) return bad_index(ctx, c, indices, bad);
  }

  if (!c->scatter) {
    CLPRIM_CHECK(clprim__set_args(k[MOVE], 8, sizeof in, &in, sizeof count64, &count64,
                                  sizeof indices, &indices, sizeof idx64, &idx64, sizeof n64, &n64,
                                  sizeof words, &words, sizeof team, &team, sizeof out, &out));
    return clprim__enqueue(ctx, k[MOVE], groups_for(ctx, c->n, wg / team, wg), wg);
  }
  if (xchg) {
    CLPRIM_CHECK(clprim__set_args(k[MOVE], 6, sizeof in, &in, sizeof indices, &indices,
                                  sizeof idx64, &idx64, sizeof n64, &n64, sizeof count64, &count64,
                                  sizeof out, &out));
    return clprim__enqueue(ctx, k[MOVE], groups_for(ctx, c->n, wg, wg), wg);
  }
  /* Winners first, then the winners' elements, step by step. */
  cl_mem winners;
  CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_WINNERS, clprim__bytes(c->count, 4), &winners));
  for (size_t base = 0; base < c->n; base += step) {
    const size_t m = c->n - base < step ? c->n - base : step;
    const cl_ulong base64 = base, m64 = m;
    CLPRIM_CHECK(clprim__set_args(k[MARK], 6, sizeof indices, &indices, sizeof idx64, &idx64,
                                  sizeof base64, &base64, sizeof m64, &m64, sizeof count64,
                                  &count64, sizeof winners, &winners));
    CLPRIM_CHECK(clprim__set_args(k[MOVE], 10, sizeof in, &in, sizeof indices, &indices,
                                  sizeof idx64, &idx64, sizeof base64, &base64, sizeof m64, &m64,
                                  sizeof words, &words, sizeof team, &team, sizeof count64,
                                  &count64, sizeof winners, &winners, sizeof out, &out));
    CLPRIM_CHECK(clprim__enqueue(ctx, k[MARK], groups_for(ctx, m, wg, wg), wg));
    CLPRIM_CHECK(clprim__enqueue(ctx, k[MOVE], groups_for(ctx, m, wg / team, wg), wg));
  }
  return CLPRIM_SUCCESS;
}

static clprim_status gather_call(clprim_context *ctx, const struct gather_call *c) {
  CLPRIM_CHECK(clprim__call_begin(ctx, c->name));
  return clprim__call_end(ctx, gather(ctx, c));
}

clprim_status clprim_gather(clprim_context *ctx, size_t n, size_t elem_size, clprim_buffer in,
                            size_t in_count, clprim_type index_type, clprim_buffer indices,
                            unsigned flags, clprim_buffer out) {
  const struct gather_call c = {"gather", "in_count", 0,   n,          elem_size, in_count,
                                in,       indices,    out, index_type, flags};
  return gather_call(ctx, &c);
}

clprim_status clprim_scatter(clprim_context *ctx, size_t n, size_t elem_size, clprim_buffer in,
                             clprim_type index_type, clprim_buffer indices, unsigned flags,
                             clprim_buffer out, size_t out_count) {
  const struct gather_call c = {"scatter", "out_count", 1,   n,          elem_size, out_count,
                                in,        indices,     out, index_type, flags};
  return gather_call(ctx, &c);
}

/* Dry runs (core/prebuild.c): elements of the type's size (the programs
 * of its word; other sizes, as user types have, build at first use), both
 * calls with the check (one program holds every kernel on CPUs). */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const size_t es = clprim_type_size(t);
  const clprim_buffer in = clprim_buf(d->in), indices = clprim_buf(d->in2);
  const clprim_buffer out = clprim_buf(d->out);
  clprim_gather(ctx, d->n, es, in, d->n, CLPRIM_UINT32, indices, CLPRIM_CHECK_INDICES, out);
  clprim_scatter(ctx, d->n, es, in, CLPRIM_UINT32, indices, CLPRIM_CHECK_INDICES, out, d->n);
}
