/* test_operators: user types and operators (clprim_operator_*): reduce (a
 * host result, a device result_out, both), inclusive and exclusive scan and
 * adjacent difference, on every path the device runs, against a CPU
 * reference on fresh random data, for
 *   stats   {float n, mean, m2} with Chan's merge (12 bytes, float: a bound)
 *   maxplus float2 max-plus composition (not commutative; exact data)
 *   mat2    2x2 uint matrices of a linear recurrence (not commutative)
 *   wide5   five ulongs: sum, xor, min, max, first nonzero (40 bytes)
 *   top2    {float best, second}: the two largest values
 *   built-ins: int sum and product, uint xor, uchar sum (all wrapping),
 *           double sum (fp64 devices), int difference (adjacent only)
 *   modsum  (a + b + p7) % p0: the parameters
 * with init NULL and a non-identity init; sizes 0, 1, 2, 2^k - 1 .. 2^k + 1
 * up to 65537 (every path's tiles), and one of millions (scans of two or
 * three levels, reductions over many work-groups); in and out at offsets
 * (aligned: sub-buffers, unaligned: staged copies), scans in place; tiles
 * of 32 elements set through the family's knobs (three levels at small
 * sizes); new parameters that build nothing; every refused desc and call,
 * with nothing written and a text; build logs in the user's texts. And the
 * pipelines' maps and reductions with an operator (clprim_pipeline_map_op,
 * clprim_pipeline_reduce_op: stats, mat2 and modsum over filtered inputs,
 * sizes around the tiles and of two passes, a counted run, a count and a
 * built-in map after a map by an operator, and their refusals). Under
 * CLPRIM_TEST_SMALL (Oclgrind) fewer operators and sizes. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_ES 64 /* bytes of an element or a reference value, at most */

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  assert_non_null(p);
  return p;
}

/* ------------------------------------------------------------ the types */
typedef struct {
  float n, mean, m2;
} stats;
typedef struct {
  double n, mean, m2;
} dstats; /* stats' reference, in double */
typedef struct {
  _Alignas(8) float x;
  float y;
} maxplus; /* OpenCL's float2 */
typedef struct {
  uint32_t m[4]; /* [[m0 m1] [m2 m3]] */
} mat2;
typedef struct {
  uint64_t sum, xr, mn, mx, first;
} wide5;
typedef struct {
  float best, second;
} top2;

static void put_u32(void *p, size_t i, uint32_t v) {
  memcpy((char *)p + i * 4, &v, 4);
}
static uint32_t get_u32(const void *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* ----------------------------------------------------------- operators */
/* An operator and its CPU reference. The reference works on values of
 * ref_size bytes (the element itself where lift is NULL); combine may be
 * given r == a. */
struct opspec {
  const char *name;
  clprim_operator_desc desc;
  size_t ref_size;
  void (*gen)(void *e, size_t n); /* n random elements */
  void (*lift)(const void *e, void *r);
  void (*combine)(const void *a, const void *b, void *r);
  void (*identity)(void *r);
  /* NULL: the device's element must equal the reference's bytes. */
  int (*close)(const void *got, const void *want);
  const double *params; /* set before every call; NULL: none */
  int fp64;             /* needs cl_khr_fp64 */
  int small;            /* also under CLPRIM_TEST_SMALL */
  int big;              /* also at the size of millions */
  int adjacent_only;    /* not associative: adjacent difference alone */
};

/* stats: Chan's parallel merge of (count, mean, sum of squared deviations).
 * Elements: n in 1..3 (one in 16 the identity, which takes the n == 0
 * branch), means k / 16 in [-1, 1), m2 in [0, 1): every value exact. */
static const char stats_source[] =
    "typedef struct { float n, mean, m2; } stats;\n"
    "stats stats_merge(stats x, stats y) {\n"
    "  const float n = x.n + y.n;\n"
    "  if (n == 0) return x;\n"
    "  const float d = y.mean - x.mean;\n"
    "  stats r = {n, x.mean + d * y.n / n, x.m2 + y.m2 + d * d * x.n * y.n / n};\n"
    "  return r;\n"
    "}\n"
    "stats stats_zero(void) { stats z = {0, 0, 0}; return z; }\n"
    "stats stats_of(float v) { stats r = {1, v, 0}; return r; }\n";
static void stats_gen(void *e, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = test_rand();
    stats s = {0, 0, 0};
    if (r % 16) {
      s.n = (float)(1 + (r >> 4) % 3);
      s.mean = (float)((int)((r >> 8) % 32) - 16) / 16.0f;
      s.m2 = (float)((r >> 16) % 16) / 16.0f;
    }
    memcpy((char *)e + i * sizeof s, &s, sizeof s);
  }
}
static void stats_lift(const void *e, void *r) {
  stats s;
  memcpy(&s, e, sizeof s);
  const dstats d = {s.n, s.mean, s.m2};
  memcpy(r, &d, sizeof d);
}
static void stats_combine(const void *a, const void *b, void *r) {
  dstats x, y;
  memcpy(&x, a, sizeof x), memcpy(&y, b, sizeof y);
  dstats o = x;
  const double n = x.n + y.n;
  if (n != 0) {
    const double d = y.mean - x.mean;
    o.n = n, o.mean = x.mean + d * y.n / n, o.m2 = x.m2 + y.m2 + d * d * x.n * y.n / n;
  }
  memcpy(r, &o, sizeof o);
}
static void stats_identity(void *r) {
  const dstats z = {0, 0, 0};
  memcpy(r, &z, sizeof z);
}
/* The device merges in float in a grouping of its own; the reference
 * merges left to right (index order) in double, its own error negligible
 * here. n is exact: integers below 2^24 added. A merge's mean is a convex
 * combination of its parts' means (their errors carry over, weighted to at
 * most the larger) plus roundings of at most about 7 u (u = 2^-24) of the
 * data's range [-1, 1); m2 is a sum of nonnegative terms, each merge
 * rounding it by about 3 u relatively. Along the longest in-order chain of
 * D merges of the grouping the errors are then at most about 7 D u
 * (absolute) and 3 D u (relative). At these sizes (at most 65537; stats has
 * no run of millions) D is at most a cpu-path tile of 4096 elements
 * combined in order plus the few tiles before it: 7 D u < 2^-9, the bound
 * allowed (the errors measured are near 2^-20 for the mean and 2^-13 for
 * m2). A lost or doubled element changes n, which must be exact. */
#define STATS_TOL (1.0 / 512)
static int stats_close(const void *got, const void *want) {
  stats g;
  dstats w;
  memcpy(&g, got, sizeof g), memcpy(&w, want, sizeof w);
  return g.n == w.n && fabs(g.mean - w.mean) <= STATS_TOL &&
         fabs(g.m2 - w.m2) <= STATS_TOL * (w.m2 > 1 ? w.m2 : 1);
}

/* maxplus: (x, y) is t -> max(t + y, x); a ∘ b applies a, then b. Integer
 * values, x within 2^20 (one in 32 -inf), y in -3..3 with every range sum
 * within 2^21: every sum below 2^24, so float computes it exactly. */
static void maxplus_gen(void *e, size_t n) {
  long run = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = test_rand();
    long y = (long)(r % 7) - 3;
    if (labs(run + y) > (1l << 20)) y = -y;
    run += y;
    maxplus m;
    m.x = (r >> 8) % 32 == 0 ? -INFINITY : (float)((long)((r >> 16) % (1u << 21)) - (1l << 20));
    m.y = (float)y;
    memcpy((char *)e + i * sizeof m, &m, sizeof m);
  }
}
static void maxplus_combine(const void *a, const void *b, void *r) {
  maxplus x, y, o;
  memcpy(&x, a, sizeof x), memcpy(&y, b, sizeof y);
  o.x = fmaxf(x.x + y.y, y.x), o.y = x.y + y.y;
  memcpy(r, &o, sizeof o);
}
static void maxplus_identity(void *r) {
  maxplus o;
  o.x = -INFINITY, o.y = 0;
  memcpy(r, &o, sizeof o);
}

/* mat2: x_i = c_i x_{i-1} + d_i x_{i-2} (mod 2^32) as [[c d] [1 0]], one
 * in four a random matrix; products wrap. Every determinant is odd, so no
 * product of them is a zero divisor (that decays to the zero matrix after
 * some hundred products, and compares 0 with 0). */
static const char mat2_source[] = "typedef struct { uint m[4]; } mat2;\n"
                                  "mat2 mat2_mul(mat2 x, mat2 y) {\n"
                                  "  mat2 r;\n"
                                  "  r.m[0] = x.m[0] * y.m[0] + x.m[1] * y.m[2];\n"
                                  "  r.m[1] = x.m[0] * y.m[1] + x.m[1] * y.m[3];\n"
                                  "  r.m[2] = x.m[2] * y.m[0] + x.m[3] * y.m[2];\n"
                                  "  r.m[3] = x.m[2] * y.m[1] + x.m[3] * y.m[3];\n"
                                  "  return r;\n"
                                  "}\n"
                                  "mat2 mat2_one(void) { mat2 r = {{1, 0, 0, 1}}; return r; }\n"
                                  "mat2 mat2_of(uint a, uint b, uint c, uint d) {\n"
                                  "  mat2 r = {{a, b, c, d}};\n"
                                  "  return r;\n"
                                  "}\n";
static void mat2_gen(void *e, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = test_rand(), s = test_rand();
    mat2 m = {{(uint32_t)r, (uint32_t)(r >> 32) | 1u, 1, 0}};
    if (s % 4 == 0) /* odd * odd - any * even */
      m.m[0] |= 1u, m.m[2] = (uint32_t)(s >> 8) & ~1u, m.m[3] = (uint32_t)test_rand() | 1u;
    memcpy((char *)e + i * sizeof m, &m, sizeof m);
  }
}
static void mat2_combine(const void *a, const void *b, void *r) {
  mat2 x, y, o;
  memcpy(&x, a, sizeof x), memcpy(&y, b, sizeof y);
  o.m[0] = x.m[0] * y.m[0] + x.m[1] * y.m[2];
  o.m[1] = x.m[0] * y.m[1] + x.m[1] * y.m[3];
  o.m[2] = x.m[2] * y.m[0] + x.m[3] * y.m[2];
  o.m[3] = x.m[2] * y.m[1] + x.m[3] * y.m[3];
  memcpy(r, &o, sizeof o);
}
static void mat2_identity(void *r) {
  const mat2 o = {{1, 0, 0, 1}};
  memcpy(r, &o, sizeof o);
}

/* wide5: a sum, xor, min and max of ulongs and the first nonzero (not
 * commutative), 40 bytes aligned to 8. */
static const char wide5_source[] =
    "typedef struct { ulong sum, xr, mn, mx, first; } wide5;\n"
    "wide5 wide5_merge(wide5 x, wide5 y) {\n"
    "  wide5 r;\n"
    "  r.sum = x.sum + y.sum, r.xr = x.xr ^ y.xr, r.mn = min(x.mn, y.mn);\n"
    "  r.mx = max(x.mx, y.mx), r.first = x.first ? x.first : y.first;\n"
    "  return r;\n"
    "}\n"
    "wide5 wide5_zero(void) { wide5 r = {0, 0, ULONG_MAX, 0, 0}; return r; }\n";
static void wide5_gen(void *e, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t v = test_rand(), f = test_rand();
    const wide5 w = {v, test_rand(), v, v, f % 8 == 0 ? f | 1 : 0};
    memcpy((char *)e + i * sizeof w, &w, sizeof w);
  }
}
static void wide5_combine(const void *a, const void *b, void *r) {
  wide5 x, y, o;
  memcpy(&x, a, sizeof x), memcpy(&y, b, sizeof y);
  o.sum = x.sum + y.sum, o.xr = x.xr ^ y.xr, o.mn = x.mn < y.mn ? x.mn : y.mn;
  o.mx = x.mx > y.mx ? x.mx : y.mx, o.first = x.first ? x.first : y.first;
  memcpy(r, &o, sizeof o);
}
static void wide5_identity(void *r) {
  const wide5 o = {0, 0, UINT64_MAX, 0, 0};
  memcpy(r, &o, sizeof o);
}

/* top2: the two largest of a multiset; elements (v, -inf) with v among 64
 * integers (ties). */
static const char top2_source[] =
    "typedef struct { float best, second; } top2;\n"
    "top2 top2_merge(top2 x, top2 y) {\n"
    "  top2 r;\n"
    "  r.best = fmax(x.best, y.best);\n"
    "  r.second = fmax(fmin(x.best, y.best), fmax(x.second, y.second));\n"
    "  return r;\n"
    "}\n"
    "top2 top2_none(void) { top2 r = {-INFINITY, -INFINITY}; return r; }\n";
static void top2_gen(void *e, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    top2 t;
    t.best = (float)((int)(test_rand() % 64) - 32), t.second = -INFINITY;
    memcpy((char *)e + i * sizeof t, &t, sizeof t);
  }
}
static void top2_combine(const void *a, const void *b, void *r) {
  top2 x, y, o;
  memcpy(&x, a, sizeof x), memcpy(&y, b, sizeof y);
  o.best = fmaxf(x.best, y.best);
  o.second = fmaxf(fminf(x.best, y.best), fmaxf(x.second, y.second));
  memcpy(r, &o, sizeof o);
}
static void top2_identity(void *r) {
  top2 o;
  o.best = o.second = -INFINITY;
  memcpy(r, &o, sizeof o);
}

/* Built-ins. int "a + b" and "a * b" wrap on the devices clprim runs on
 * (OpenCL C leaves signed overflow undefined, as C: the reference wraps in
 * uint32); products of odd factors never reach 0. */
static void u32_gen(void *e, size_t n) {
  for (size_t i = 0; i < n; ++i)
    put_u32(e, i, (uint32_t)test_rand());
}
static void odd_gen(void *e, size_t n) {
  for (size_t i = 0; i < n; ++i)
    put_u32(e, i, (uint32_t)test_rand() | 1u);
}
static void u32_add(const void *a, const void *b, void *r) {
  put_u32(r, 0, get_u32(a) + get_u32(b));
}
static void u32_sub(const void *a, const void *b, void *r) {
  put_u32(r, 0, get_u32(a) - get_u32(b));
}
static void u32_mul(const void *a, const void *b, void *r) {
  put_u32(r, 0, get_u32(a) * get_u32(b));
}
static void u32_xor(const void *a, const void *b, void *r) {
  put_u32(r, 0, get_u32(a) ^ get_u32(b));
}
static void u32_zero(void *r) {
  put_u32(r, 0, 0);
}
static void u32_one(void *r) {
  put_u32(r, 0, 1);
}
static void u8_gen(void *e, size_t n) {
  for (size_t i = 0; i < n; ++i)
    ((unsigned char *)e)[i] = (unsigned char)test_rand();
}
static void u8_add(const void *a, const void *b, void *r) {
  *(unsigned char *)r = (unsigned char)(*(const unsigned char *)a + *(const unsigned char *)b);
}
static void u8_zero(void *r) {
  *(unsigned char *)r = 0;
}
/* Multiples of 1/8 within 2^20: every sum of up to 2^24 of them is exact
 * in double, in any grouping. */
static void f64_gen(void *e, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const double d = (double)((long long)(test_rand() % (1u << 24)) - (1ll << 23)) / 8.0;
    memcpy((char *)e + i * 8, &d, 8);
  }
}
static void f64_add(const void *a, const void *b, void *r) {
  double x, y;
  memcpy(&x, a, 8), memcpy(&y, b, 8);
  x += y;
  memcpy(r, &x, 8);
}
static void f64_zero(void *r) {
  memset(r, 0, 8);
}

/* modsum: a ∘ b = (a + b + k) % m with m = p0 and k = p7 (1 <= k < m),
 * identity m - k; associative for elements below m (no overflow: m <
 * 2^24). test_params changes them. */
static double mod_params[CLPRIM_OPERATOR_PARAMS] = {1000003, 0, 0, 0, 0, 0, 0, 4321};
static uint32_t mod_m(void) {
  return (uint32_t)mod_params[0];
}
static uint32_t mod_k(void) {
  return (uint32_t)mod_params[7];
}
static void mod_gen(void *e, size_t n) {
  for (size_t i = 0; i < n; ++i)
    put_u32(e, i, (uint32_t)(test_rand() % mod_m()));
}
static void mod_combine(const void *a, const void *b, void *r) {
  put_u32(r, 0, (get_u32(a) + get_u32(b) + mod_k()) % mod_m());
}
static void mod_identity(void *r) {
  put_u32(r, 0, mod_m() - mod_k());
}

#define DESC(type, size, align, source, combine, identity)                                         \
  { type, size, align, source, combine, identity }
enum {
  OP_STATS,
  OP_MAXPLUS,
  OP_MAT2,
  OP_WIDE5,
  OP_TOP2,
  OP_INT_ADD,
  OP_UINT_XOR,
  OP_INT_MUL,
  OP_UCHAR_ADD,
  OP_DOUBLE_ADD,
  OP_INT_SUB,
  OP_MODSUM,
  OPS
};
static const struct opspec ops[OPS] = {
    {"stats",
     DESC("stats", sizeof(stats), _Alignof(stats), stats_source, "stats_merge(a, b)",
          "stats_zero()"),
     sizeof(dstats), stats_gen, stats_lift, stats_combine, stats_identity, stats_close, NULL, 0, 1,
     0, 0},
    {"maxplus",
     DESC("float2", sizeof(maxplus), _Alignof(maxplus), NULL,
          "(float2)(fmax(a.x + b.y, b.x), a.y + b.y)", "(float2)(-INFINITY, 0.0f)"),
     sizeof(maxplus), maxplus_gen, NULL, maxplus_combine, maxplus_identity, NULL, NULL, 0, 1, 1, 0},
    {"mat2",
     DESC("mat2", sizeof(mat2), _Alignof(mat2), mat2_source, "mat2_mul(a, b)", "mat2_one()"),
     sizeof(mat2), mat2_gen, NULL, mat2_combine, mat2_identity, NULL, NULL, 0, 1, 1, 0},
    {"wide5",
     DESC("wide5", sizeof(wide5), _Alignof(wide5), wide5_source, "wide5_merge(a, b)",
          "wide5_zero()"),
     sizeof(wide5), wide5_gen, NULL, wide5_combine, wide5_identity, NULL, NULL, 0, 1, 1, 0},
    {"top2",
     DESC("top2", sizeof(top2), _Alignof(top2), top2_source, "top2_merge(a, b)", "top2_none()"),
     sizeof(top2), top2_gen, NULL, top2_combine, top2_identity, NULL, NULL, 0, 0, 0, 0},
    {"int sum", DESC("int", 4, 4, NULL, "a + b", "0"), 4, u32_gen, NULL, u32_add, u32_zero, NULL,
     NULL, 0, 0, 1, 0},
    {"uint xor", DESC("uint", 4, 4, NULL, "a ^ b", "0"), 4, u32_gen, NULL, u32_xor, u32_zero, NULL,
     NULL, 0, 0, 0, 0},
    {"int product", DESC("int", 4, 4, NULL, "a * b", "1"), 4, odd_gen, NULL, u32_mul, u32_one, NULL,
     NULL, 0, 0, 0, 0},
    {"uchar sum", DESC("uchar", 1, 1, NULL, "a + b", "0"), 1, u8_gen, NULL, u8_add, u8_zero, NULL,
     NULL, 0, 1, 0, 0},
    {"double sum", DESC("double", 8, 8, NULL, "a + b", "0.0"), 8, f64_gen, NULL, f64_add, f64_zero,
     NULL, NULL, 1, 0, 0, 0},
    {"int difference", DESC("int", 4, 4, NULL, "a - b", "0"), 4, u32_gen, NULL, u32_sub, u32_zero,
     NULL, NULL, 0, 0, 0, 1},
    {"modsum", DESC("uint", 4, 4, NULL, "(a + b + (uint)p7) % (uint)p0", "(uint)p0 - (uint)p7"), 4,
     mod_gen, NULL, mod_combine, mod_identity, NULL, mod_params, 0, 1, 0, 0},
};

static void lift(const struct opspec *s, const void *e, void *r) {
  if (s->lift)
    s->lift(e, r);
  else
    memcpy(r, e, s->desc.size);
}

/* The smallest element offset > 0 whose byte offset the device aligns. */
static size_t aligned_at(clprim_context *ctx, size_t es) {
  size_t k = 1;
  while ((k * es) % ctx->base_align)
    ++k;
  return k;
}

static int on_oclgrind(clprim_context *ctx) {
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  return strstr(info.platform_name, "Oclgrind") != NULL;
}

/* ------------------------------------------------------------ one call */
enum call { C_REDUCE, C_INCL, C_EXCL, C_ADJ, C_CALLS };
static const char *const call_name[C_CALLS] = {"reduce_op", "scan_inclusive_op",
                                               "scan_exclusive_op", "adjacent_difference_op"};

struct ocase {
  enum call call;
  size_t n, in_at, out_at; /* element offsets */
  int with_init;           /* a random element as init (not the identity) */
  int in_place;            /* scans: out is in's range */
  int result;              /* reduce: 1 the host result, 2 result_out, 3 both */
};

/* The reference of case c on x[0, n) into want (values of ref_size). */
static void reference(const struct opspec *s, const struct ocase *c, const unsigned char *x,
                      const unsigned char *init, unsigned char *want) {
  const size_t es = s->desc.size, rs = s->ref_size;
  unsigned char acc[MAX_ES], v[MAX_ES], prev[MAX_ES];
  if (init)
    lift(s, init, acc);
  else
    s->identity(acc);
  for (size_t i = 0; i < c->n; ++i) {
    lift(s, x + i * es, v);
    switch (c->call) {
    case C_REDUCE:
      s->combine(acc, v, acc);
      break;
    case C_INCL:
      s->combine(acc, v, acc);
      memcpy(want + i * rs, acc, rs);
      break;
    case C_EXCL:
      memcpy(want + i * rs, acc, rs);
      s->combine(acc, v, acc);
      break;
    default:
      if (i == 0) {
        memcpy(want, v, rs);
      } else {
        lift(s, x + (i - 1) * es, prev);
        s->combine(v, prev, want + i * rs);
      }
    }
  }
  if (c->call == C_REDUCE) memcpy(want, acc, rs);
}

static int element_ok(const struct opspec *s, const void *got, const void *want) {
  return s->close ? s->close(got, want) : memcmp(got, want, s->desc.size) == 0;
}

static void hex(const void *p, size_t bytes, char *out, size_t size) {
  size_t at = 0;
  for (size_t b = 0; b < bytes && at + 3 < size; ++b)
    at += (size_t)snprintf(out + at, size - at, "%02x", ((const unsigned char *)p)[b]);
}

static void report_element(const struct opspec *s, const char *desc, const char *which, size_t i,
                           const void *got, const void *want) {
  if (s->lift == stats_lift) {
    stats g;
    dstats w;
    memcpy(&g, got, sizeof g), memcpy(&w, want, sizeof w);
    test_report("%s: %s element %zu is (%.9g, %.9g, %.9g), expected (%.9g, %.9g, %.9g)", desc,
                which, i, g.n, g.mean, g.m2, w.n, w.mean, w.m2);
    return;
  }
  char g[2 * MAX_ES + 1] = "", w[2 * MAX_ES + 1] = "";
  hex(got, s->desc.size, g, sizeof g), hex(want, s->desc.size, w, sizeof w);
  test_report("%s: %s element %zu is %s, expected %s (bytes)", desc, which, i, g, w);
}

/* buf holds (at + count + TEST_PAD) elements: those of [at, at + count)
 * must match want (NULL: img), every other byte img's. */
static void check_buffer(clprim_context *ctx, const struct opspec *s, const char *desc,
                         const char *which, cl_mem buf, const unsigned char *img, size_t at,
                         size_t count, const unsigned char *want) {
  const size_t es = s->desc.size, bytes = (at + count + TEST_PAD) * es;
  unsigned char *got = xmalloc(bytes);
  test_read(ctx, buf, bytes, got);
  for (size_t b = 0; b < bytes; ++b)
    if ((b < at * es || b >= (at + count) * es || !want) && got[b] != img[b]) {
      test_report("%s: %s: byte %zu of the buffer (element %zu) is 0x%02x, expected 0x%02x", desc,
                  which, b, b / es, got[b], img[b]);
      free(got);
      return;
    }
  for (size_t i = 0; want && i < count; ++i)
    if (!element_ok(s, got + (at + i) * es, want + i * s->ref_size)) {
      report_element(s, desc, which, i, got + (at + i) * es, want + i * s->ref_size);
      break;
    }
  free(got);
}

/* A non-identity init of s (the identity would hide a dropped init). */
static void some_init(const struct opspec *s, unsigned char *init) {
  unsigned char e[MAX_ES], li[MAX_ES];
  s->identity(e);
  for (int tries = 0; tries < 100; ++tries) {
    s->gen(init, 1);
    lift(s, init, li);
    if (memcmp(li, e, s->ref_size) != 0) break;
  }
}

/* One call of case c with op (made from s on ctx) on fresh data: the
 * outputs against the reference, every other byte of the buffers and of
 * the host result untouched. */
static void run_case(clprim_context *ctx, const struct opspec *s, clprim_operator *op,
                     const struct ocase *c) {
  const size_t es = s->desc.size, n = c->n, outs = c->call == C_REDUCE ? 1 : n;
  char desc[256];
  char out_at[32] = "in place";
  if (!c->in_place) snprintf(out_at, sizeof out_at, "out_at=%zu", c->out_at);
  snprintf(desc, sizeof desc, "%s %s n=%zu in_at=%zu %s%s path=%s", s->name, call_name[c->call], n,
           c->in_at, out_at, c->with_init ? " with init" : "", test_path_of(ctx));
  if (c->call == C_REDUCE)
    snprintf(desc + strlen(desc), sizeof desc - strlen(desc), " result=%s",
             c->result == 1   ? "host"
             : c->result == 2 ? "device"
                              : "both");
  unsigned char *x = xmalloc(n * es), *want = xmalloc(outs * s->ref_size);
  unsigned char init[MAX_ES], init_arg[MAX_ES], host[MAX_ES + 8];
  s->gen(x, n);
  some_init(s, init);
  memcpy(init_arg, init, es);
  reference(s, c, x, c->with_init ? init : NULL, want);
  unsigned char *in_img, *out_img = NULL;
  cl_mem in = test_image_buffer(ctx, c->in_at, n, es, x, &in_img), out = NULL;
  const int out_buffer = !c->in_place && (c->call != C_REDUCE || (c->result & 2));
  if (out_buffer) out = test_image_buffer(ctx, c->out_at, outs, es, NULL, &out_img);
  const clprim_buffer IN = clprim_buf_at(in, c->in_at);
  const clprim_buffer OUT = c->in_place ? IN : clprim_buf_at(out, c->out_at);
  const void *init_p = c->with_init ? init_arg : NULL;
  memset(host, TEST_SENTINEL, sizeof host);
  if (s->params) TEST_OK(clprim_operator_set_params(op, s->params));
  clprim_status st;
  switch (c->call) {
  case C_REDUCE:
    st = clprim_reduce_op(ctx, n, op, IN, init_p, c->result & 1 ? host : NULL,
                          c->result & 2 ? OUT : clprim_buf(NULL));
    break;
  case C_INCL:
    st = clprim_scan_inclusive_op(ctx, n, op, IN, init_p, OUT);
    break;
  case C_EXCL:
    st = clprim_scan_exclusive_op(ctx, n, op, IN, init_p, OUT);
    break;
  default:
    st = clprim_adjacent_difference_op(ctx, n, op, IN, OUT);
    break;
  }
  /* init's bytes went with the call: changing them now changes nothing. */
  memset(init_arg, 0x5A, sizeof init_arg);
  if (st != CLPRIM_SUCCESS) {
    test_report("%s: returned %s (%s)", desc, clprim_status_name(st),
                clprim_context_last_error(ctx));
  } else {
    if (c->call == C_REDUCE && (c->result & 1)) {
      if (!element_ok(s, host, want)) report_element(s, desc, "host result", 0, host, want);
      for (size_t b = es; b < sizeof host; ++b)
        if (host[b] != TEST_SENTINEL) {
          test_report("%s: byte %zu past the host result was written", desc, b);
          break;
        }
    }
    if (out) check_buffer(ctx, s, desc, "out", out, out_img, c->out_at, outs, want);
    check_buffer(ctx, s, desc, c->in_place ? "out (in place)" : "in (must not change)", in, in_img,
                 c->in_at, n, c->in_place ? want : NULL);
  }
  clReleaseMemObject(in);
  if (out) clReleaseMemObject(out);
  free(x), free(want), free(in_img), free(out_img);
}

/* ------------------------------------------------------- the sweeps */
static clprim_operator *make_op(clprim_context *ctx, const struct opspec *s) {
  clprim_operator *op = NULL;
  const clprim_status st = clprim_operator_create(&op, ctx, &s->desc);
  if (st != CLPRIM_SUCCESS)
    fail_msg("%s on %s: clprim_operator_create returned %s (%s)\n%s", s->name, test_path_of(ctx),
             clprim_status_name(st), clprim_context_last_error(ctx), clprim_context_build_log(ctx));
  test_text_has(ctx, NULL, "clprim_operator_create");
  return op;
}

/* Around 2^k (k = 5, 8, 10 ... 16): the tiles of every path and element
 * size (1024 4-byte elements, 256 of 40 bytes, 4096 on the cpu path ...),
 * without the test knowing the library's shapes. */
static const size_t sizes[] = {0,    1,     2,     3,     31,    32,    33,   255,  256,
                               257,  1023,  1024,  1025,  2047,  2048,  2049, 4095, 4096,
                               4097, 16383, 16384, 16385, 65535, 65536, 65537};
/* Under CLPRIM_TEST_SMALL (Oclgrind: about 0.1 s a tile of a call): one
 * tile or a few; the last for one operator only. */
static const size_t small_sizes[] = {0, 1, 2, 33, 257, 1025, 4097};
/* Both inits up to here (else one in turn). */
#define SMALL_N ((size_t)4100)
/* The large size: about 12 MB of elements (3 million 4-byte ones). */
static size_t big_n(size_t es) {
  const size_t n = (12u << 20) / es;
  return n < 3000000 ? n : 3000000;
}

/* Every call at every size for op s on every path; offsets, in place,
 * init and the reduction's results in turn. */
static void sweep_sizes(const struct opspec *s) {
  unsigned rot = 0, turn = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    if (s->fp64 && !test_has_type(ctx, CLPRIM_DOUBLE)) continue;
    const size_t es = s->desc.size, al = aligned_at(ctx, es);
    clprim_operator *op = make_op(ctx, s);
    /* Under CLPRIM_TEST_SMALL mat2 also past the cpu path's tile of 4096. */
    const size_t small_count = COUNT(small_sizes) - (s == &ops[OP_MAT2] ? 0 : 1);
    const size_t count = test_small() ? small_count : COUNT(sizes);
    for (size_t k = 0; k < count; ++k) {
      const size_t n = test_small() ? small_sizes[k] : sizes[k];
      for (int call = 0; call < C_CALLS; ++call) {
        if (s->adjacent_only && call != C_ADJ) continue;
        /* Both inits up to SMALL_N, else one in turn (adjacent takes none). */
        const int both = !test_small() && n <= SMALL_N && call != C_ADJ;
        const int first = both || call == C_ADJ ? 0 : (int)(turn++ % 2);
        for (int with_init = first; with_init <= (both ? 1 : first); ++with_init, ++rot) {
          struct ocase c;
          memset(&c, 0, sizeof c);
          c.call = (enum call)call, c.n = n, c.with_init = with_init;
          c.in_at = rot % 3 == 0 ? 0 : rot % 3 == 1 ? 3 : al;
          c.out_at = rot % 5 < 2 ? 0 : rot % 5 < 4 ? 2 * al : 5;
          c.in_place = (call == C_INCL || call == C_EXCL) && rot % 4 == 1;
          c.result = 1 + (int)(rot % 3);
          run_case(ctx, s, op, &c);
        }
      }
    }
    clprim_operator_free(op);
  }
  test_report_end();
}

/* One case of every call at the large size (not under CLPRIM_TEST_SMALL):
 * scans of two or three levels and a reduction over many work-groups. */
static void sweep_big(const struct opspec *s) {
  if (test_small() || !s->big) return;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    const size_t es = s->desc.size, n = big_n(es), al = aligned_at(ctx, es);
    clprim_operator *op = make_op(ctx, s);
    for (int call = 0; call < C_CALLS; ++call) {
      struct ocase c;
      memset(&c, 0, sizeof c);
      c.call = (enum call)call, c.n = n, c.with_init = call != C_ADJ;
      c.in_at = call % 2 ? al : 3;
      c.out_at = call == C_REDUCE ? 5 : 0;
      c.in_place = call == C_EXCL, c.result = 3;
      run_case(ctx, s, op, &c);
    }
    clprim_operator_free(op);
  }
  test_report_end();
}

static void sweep(const struct opspec *s) {
  if (test_small() && !s->small) {
    printf("%s: skipped under CLPRIM_TEST_SMALL\n", s->name);
    return;
  }
  sweep_sizes(s);
  sweep_big(s);
}

#define OP_TEST(fn, index)                                                                         \
  static void fn(void **state) {                                                                   \
    (void)state, sweep(&ops[index]);                                                               \
  }
OP_TEST(test_stats, OP_STATS)
OP_TEST(test_maxplus, OP_MAXPLUS)
OP_TEST(test_mat2, OP_MAT2)
OP_TEST(test_wide5, OP_WIDE5)
OP_TEST(test_top2, OP_TOP2)
OP_TEST(test_int_sum, OP_INT_ADD)
OP_TEST(test_uint_xor, OP_UINT_XOR)
OP_TEST(test_int_product, OP_INT_MUL)
OP_TEST(test_uchar_sum, OP_UCHAR_ADD)
OP_TEST(test_double_sum, OP_DOUBLE_ADD)
OP_TEST(test_int_difference, OP_INT_SUB)

/* ------------------------------------------- segments and runs */
/* The combination of x[b, e) after init (NULL: the identity) into r. */
static void range_reference(const struct opspec *s, const unsigned char *x, size_t b, size_t e,
                            const unsigned char *init, unsigned char *r) {
  unsigned char v[MAX_ES];
  if (init)
    lift(s, init, r);
  else
    s->identity(r);
  for (size_t i = b; i < e; ++i) {
    lift(s, x + i * s->desc.size, v);
    s->combine(r, v, r);
  }
}

/* clprim_segmented_reduce_op over `segments` random segments of n
 * elements (empty ones, overlapping ones, some longer than any tile),
 * offsets of offset_type, with or without init; every segment's result and
 * the bytes around out checked. */
static void run_segmented(clprim_context *ctx, const struct opspec *s, clprim_operator *op,
                          size_t n, size_t segments, clprim_type offset_type, int with_init) {
  const size_t es = s->desc.size, rs = s->ref_size;
  char desc[160];
  snprintf(desc, sizeof desc, "%s segmented_reduce_op n=%zu segments=%zu %s%s path=%s", s->name,
           n, segments, clprim_type_name(offset_type), with_init ? " with init" : "",
           test_path_of(ctx));
  unsigned char *x = xmalloc(n * es + 1), *want = xmalloc(segments * rs + 1);
  uint64_t *offsets = xmalloc(2 * segments * sizeof *offsets + 1);
  unsigned char init[MAX_ES];
  s->gen(x, n);
  s->gen(init, 1);
  for (size_t k = 0; k < segments; ++k) {
    const uint64_t b = n ? test_rand() % (n + 1) : 0;
    const uint64_t most = k % 7 == 0 ? 0 : k % 5 == 0 ? n : 40;
    uint64_t e = b + (most ? test_rand() % (most + 1) : 0);
    if (e > n) e = n;
    offsets[k] = b, offsets[segments + k] = e;
    range_reference(s, x, b, e, with_init ? init : NULL, want + k * rs);
  }
  unsigned char *in_img, *out_img;
  cl_mem in = test_image_buffer(ctx, 0, n, es, x, &in_img);
  cl_mem out = test_image_buffer(ctx, 1, segments, es, NULL, &out_img);
  cl_mem begins = test_offset_buffer(ctx, offset_type, offsets, segments, 1);
  cl_mem ends = test_offset_buffer(ctx, offset_type, offsets + segments, segments, 2);
  const clprim_status st = clprim_segmented_reduce_op(
      ctx, n, op, clprim_buf(in), segments, offset_type, clprim_buf_at(begins, 1),
      clprim_buf_at(ends, 2), with_init ? init : NULL, clprim_buf_at(out, 1));
  if (st != CLPRIM_SUCCESS)
    test_report("%s: returned %s (%s)", desc, clprim_status_name(st),
                clprim_context_last_error(ctx));
  else
    check_buffer(ctx, s, desc, "out", out, out_img, 1, segments, want);
  /* A segment past n: refused, out as it was. */
  if (segments && n) {
    offsets[segments + segments / 2] = n + 1;
    cl_mem bad = test_offset_buffer(ctx, offset_type, offsets + segments, segments, 0);
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_segmented_reduce_op(ctx, n, op, clprim_buf(in), segments, offset_type,
                                           clprim_buf_at(begins, 1), clprim_buf(bad), NULL,
                                           clprim_buf_at(out, 1)));
    test_text_has(ctx, "segmented_reduce_op", "end_offsets");
    check_buffer(ctx, s, desc, "out after a refused call", out, out_img, 1, segments, want);
    clReleaseMemObject(bad);
  }
  clReleaseMemObject(in), clReleaseMemObject(out), clReleaseMemObject(begins);
  clReleaseMemObject(ends);
  free(x), free(want), free(offsets), free(in_img), free(out_img);
}

/* clprim_reduce_by_key_op over n values whose uint64 keys come in runs
 * (of 1 to a few, and one of about n / 3 that spans many tiles), with or
 * without init: the count (host and device), the keys and the results,
 * and the bytes after the count-th of each untouched. */
static void run_by_key(clprim_context *ctx, const struct opspec *s, clprim_operator *op,
                       size_t n, int with_init) {
  const size_t es = s->desc.size, rs = s->ref_size;
  char desc[160];
  snprintf(desc, sizeof desc, "%s reduce_by_key_op n=%zu%s path=%s", s->name, n,
           with_init ? " with init" : "", test_path_of(ctx));
  unsigned char *x = xmalloc(n * es + 1), *want = xmalloc(n * rs + 1);
  uint64_t *keys = xmalloc(n * 8 + 8), *want_keys = xmalloc(n * 8 + 8);
  unsigned char init[MAX_ES];
  s->gen(x, n);
  s->gen(init, 1);
  uint64_t key = test_rand();
  for (size_t i = 0; i < n; ++i) {
    const int long_run = i >= n / 3 && i < 2 * n / 3;
    if (!long_run && test_rand() % 3 == 0) key += 1 + test_rand() % 3;
    keys[i] = key;
  }
  size_t runs = 0;
  for (size_t b = 0; b < n;) {
    size_t e = b + 1;
    while (e < n && keys[e] == keys[b]) ++e;
    want_keys[runs] = keys[b];
    range_reference(s, x, b, e, with_init ? init : NULL, want + runs * rs);
    ++runs, b = e;
  }
  unsigned char *in_img, *out_img, *keys_img, *uk_img;
  cl_mem in = test_image_buffer(ctx, 0, n, es, x, &in_img);
  cl_mem dkeys = test_image_buffer(ctx, 0, n, 8, keys, &keys_img);
  cl_mem out = test_image_buffer(ctx, 0, n, es, NULL, &out_img);
  cl_mem uk = test_image_buffer(ctx, 0, n, 8, NULL, &uk_img);
  uint64_t count = 12345, dcount = 0;
  cl_mem count_out = test_buffer(ctx, 8, &count);
  const clprim_status st = clprim_reduce_by_key_op(
      ctx, n, CLPRIM_UINT64, clprim_buf(dkeys), op, clprim_buf(in), with_init ? init : NULL,
      clprim_buf(uk), clprim_buf(out), &count, clprim_buf(count_out));
  if (st != CLPRIM_SUCCESS) {
    test_report("%s: returned %s (%s)", desc, clprim_status_name(st),
                clprim_context_last_error(ctx));
  } else {
    test_read(ctx, count_out, 8, &dcount);
    if (count != runs || dcount != runs)
      test_report("%s: count %llu (device %llu), expected %zu", desc, (unsigned long long)count,
                  (unsigned long long)dcount, runs);
    else {
      check_buffer(ctx, s, desc, "sums", out, out_img, 0, runs, want);
      uint64_t *got = xmalloc(n * 8 + 8);
      test_read(ctx, uk, n * 8, got);
      for (size_t r = 0; r < runs; ++r)
        if (got[r] != want_keys[r]) {
          test_report("%s: key %zu is %llu, expected %llu", desc, r, (unsigned long long)got[r],
                      (unsigned long long)want_keys[r]);
          break;
        }
      free(got);
    }
  }
  clReleaseMemObject(in), clReleaseMemObject(dkeys), clReleaseMemObject(out);
  clReleaseMemObject(uk), clReleaseMemObject(count_out);
  free(x), free(want), free(keys), free(want_keys), free(in_img), free(out_img);
  free(keys_img), free(uk_img);
}

/* Keys of type kt at i of n in runs: from the 64-bit sequence `key` (steps
 * of 1 to 3, some of 2^32, which only the high words tell apart), none in
 * the middle third (one run across many tiles); float and double keys
 * small integers with NaNs (each a run of its own, also side by side) and
 * -0.0 beside +0.0 (one run). */
static void put_key(clprim_type kt, void *keys, size_t i, size_t n, uint64_t *key) {
  const int long_run = i >= n / 3 && i < 2 * n / 3;
  const uint64_t r = test_rand();
  if (i && !long_run && r % 3 == 0) *key += r % 12 == 0 ? (uint64_t)1 << 32 : 1 + r / 3 % 3;
  const size_t ks = clprim_type_size(kt);
  if (kt == CLPRIM_FLOAT || kt == CLPRIM_DOUBLE) {
    double v = (double)(*key % 1000);
    if (!long_run && r % 17 == 0) v = NAN;
    if (!long_run && r % 19 == 0) v = r % 2 ? -0.0 : 0.0;
    if (kt == CLPRIM_FLOAT) {
      const float f = (float)v;
      memcpy((unsigned char *)keys + i * ks, &f, 4);
    } else {
      memcpy((unsigned char *)keys + i * ks, &v, 8);
    }
  } else if (ks == 4) {
    put_u32(keys, i, (uint32_t)*key);
  } else {
    memcpy((unsigned char *)keys + i * 8, key, 8);
  }
}

/* Whether keys[i] starts a run: i = 0, or keys[i] != keys[i - 1] in kt. */
static int key_head(clprim_type kt, const void *keys, size_t i) {
  if (i == 0) return 1;
  const unsigned char *k = keys;
  const size_t ks = clprim_type_size(kt);
  if (kt == CLPRIM_FLOAT) {
    float a, b;
    memcpy(&a, k + i * 4, 4), memcpy(&b, k + (i - 1) * 4, 4);
    return !(a == b);
  }
  if (kt == CLPRIM_DOUBLE) {
    double a, b;
    memcpy(&a, k + i * 8, 8), memcpy(&b, k + (i - 1) * 8, 8);
    return !(a == b);
  }
  return memcmp(k + i * ks, k + (i - 1) * ks, ks) != 0;
}

/* clprim_scan_inclusive_by_key_op or _exclusive_by_key_op over n values
 * with keys of kt in runs (put_key), with or without init, in place or
 * not (out at an offset): every element against the sequential
 * reference, and every other byte of out, in and the keys as it was. */
static void run_scan_by_key(clprim_context *ctx, const struct opspec *s, clprim_operator *op,
                            size_t n, clprim_type kt, int inclusive, int with_init,
                            int in_place) {
  const size_t es = s->desc.size, rs = s->ref_size, ks = clprim_type_size(kt);
  char desc[200];
  snprintf(desc, sizeof desc, "%s scan_%s_by_key_op n=%zu %s keys%s%s path=%s", s->name,
           inclusive ? "inclusive" : "exclusive", n, clprim_type_name(kt),
           with_init ? " with init" : "", in_place ? " in place" : "", test_path_of(ctx));
  unsigned char *x = xmalloc(n * es + 1), *want = xmalloc(n * rs + 1), *keys = xmalloc(n * ks + 1);
  unsigned char init[MAX_ES], acc[MAX_ES], v[MAX_ES];
  s->gen(x, n);
  s->gen(init, 1);
  uint64_t key = test_rand();
  for (size_t i = 0; i < n; ++i)
    put_key(kt, keys, i, n, &key);
  for (size_t i = 0; i < n; ++i) {
    if (key_head(kt, keys, i)) {
      if (with_init)
        lift(s, init, acc);
      else
        s->identity(acc);
    }
    lift(s, x + i * es, v);
    if (inclusive) s->combine(acc, v, acc);
    memcpy(want + i * rs, acc, rs);
    if (!inclusive) s->combine(acc, v, acc);
  }
  unsigned char *in_img, *out_img = NULL, *keys_img;
  cl_mem in = test_image_buffer(ctx, 1, n, es, x, &in_img), out = NULL;
  cl_mem dkeys = test_image_buffer(ctx, 2, n, ks, keys, &keys_img);
  if (!in_place) out = test_image_buffer(ctx, 3, n, es, NULL, &out_img);
  const clprim_buffer IN = clprim_buf_at(in, 1);
  const clprim_buffer OUT = in_place ? IN : clprim_buf_at(out, 3);
  const clprim_status st =
      (inclusive ? clprim_scan_inclusive_by_key_op : clprim_scan_exclusive_by_key_op)(
          ctx, n, kt, clprim_buf_at(dkeys, 2), op, IN, with_init ? init : NULL, OUT);
  if (st != CLPRIM_SUCCESS) {
    test_report("%s: returned %s (%s)", desc, clprim_status_name(st),
                clprim_context_last_error(ctx));
  } else {
    if (out) check_buffer(ctx, s, desc, "out", out, out_img, 3, n, want);
    check_buffer(ctx, s, desc, in_place ? "out (in place)" : "in (must not change)", in, in_img,
                 1, n, in_place ? want : NULL);
    unsigned char *got = xmalloc((n + 2 + TEST_PAD) * ks);
    test_read(ctx, dkeys, (n + 2 + TEST_PAD) * ks, got);
    if (memcmp(got, keys_img, (n + 2 + TEST_PAD) * ks) != 0)
      test_report("%s: the keys' buffer changed", desc);
    free(got);
  }
  clReleaseMemObject(in), clReleaseMemObject(dkeys);
  if (out) clReleaseMemObject(out);
  free(x), free(want), free(keys), free(in_img), free(out_img), free(keys_img);
}

/* Segmented reductions and reductions by key, on every path: a
 * non-commutative exact operator (mat2), the 40-byte struct, a one-byte
 * type and the float struct (within its tolerance). */
static void test_segments_and_runs(void **state) {
  (void)state;
  static const int which[4] = {OP_MAT2, OP_WIDE5, OP_UCHAR_ADD, OP_STATS};
  const size_t ns[3] = {1, 1000, 70000};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (int w = 0; w < (test_small() ? 1 : 4); ++w) {
      const struct opspec *s = &ops[which[w]];
      clprim_operator *op = make_op(ctx, s);
      for (int k = 0; k < (test_small() ? 2 : 3); ++k) {
        const size_t n = test_small() ? ns[k] * 2 : ns[k];
        run_segmented(ctx, s, op, n, k == 0 ? 3 : n / 10 + 1, k % 2 ? CLPRIM_UINT32 : CLPRIM_UINT64,
                      k % 2);
        run_by_key(ctx, s, op, n, (k + 1) % 2);
        /* Scans by key: the key types, inits, in place and both scans in
         * turn (every key type under each operator). */
        for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t, ++rot) {
          if (!test_has_type(ctx, (clprim_type)t)) continue;
          if (test_small() && (t + k + w) % 3) continue;
          run_scan_by_key(ctx, s, op, n, (clprim_type)t, (int)(rot % 2), (int)(rot / 2 % 2),
                          rot % 3 == 1);
        }
      }
      run_segmented(ctx, s, op, 100, 0, CLPRIM_UINT32, 0);
      run_by_key(ctx, s, op, 0, 0);
      run_scan_by_key(ctx, s, op, 0, CLPRIM_UINT32, 1, 1, 0);
      clprim_operator_free(op);
    }
  }
  test_report_end();
}

/* Small tiles through the family's knobs (on the paths that take them):
 * scans of three levels and reductions of several tiles a work-group at
 * small sizes. Tiles of 32 elements, one a work-item (operators.wg=32,
 * operators.tile_bytes=64), for a non-commutative operator and a float
 * one; of 128 4-byte elements, four a work-item (tile_bytes=512), for a
 * built-in. */
static void test_small_tiles(void **state) {
  (void)state;
  static const struct {
    const char *tune;
    int op;
  } runs[] = {{"operators.wg=32,operators.tile_bytes=64", OP_MAT2},
              {"operators.wg=32,operators.tile_bytes=64", OP_STATS},
              {"operators.wg=32,operators.tile_bytes=512", OP_INT_ADD}};
  static const size_t ns[] = {31, 32, 33, 63, 65, 1023, 1024, 1025, 1057, 4097};
  static const size_t small_ns[] = {33, 1025};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (size_t u = 0; u < COUNT(runs); ++u) {
      const struct opspec *s = &ops[runs[u].op];
      if (test_small() && u == 1) continue; /* Oclgrind's time */
      TEST_OK(clprim__tune(ctx, runs[u].tune));
      const size_t es = s->desc.size, al = aligned_at(ctx, es);
      clprim_operator *op = make_op(ctx, s);
      const size_t count = test_small() ? COUNT(small_ns) : COUNT(ns);
      for (size_t k = 0; k < count; ++k)
        for (int call = 0; call < C_CALLS; ++call, ++rot) {
          struct ocase c;
          memset(&c, 0, sizeof c);
          c.call = (enum call)call, c.n = test_small() ? small_ns[k] : ns[k];
          c.with_init = call != C_ADJ && rot % 2;
          c.in_at = rot % 3 == 2 ? al : rot % 3;
          c.in_place = call != C_REDUCE && call != C_ADJ && rot % 3 == 0;
          c.out_at = rot % 4 == 3 ? 5 : 0, c.result = 1 + (int)(rot % 3);
          run_case(ctx, s, op, &c);
        }
      /* Scans by key of three levels. */
      for (size_t k = 0; k < count; ++k, ++rot)
        run_scan_by_key(ctx, s, op, test_small() ? small_ns[k] : ns[k],
                        rot % 2 ? CLPRIM_UINT64 : CLPRIM_FLOAT, (int)(k % 2), (int)(rot / 2 % 2),
                        rot % 3 == 0);
      clprim_operator_free(op);
      TEST_OK(clprim__tune(ctx, "operators.wg=-1,operators.tile_bytes=-1"));
    }
  }
  test_report_end();
}

/* modsum under three (p0, p7): results for each, and new parameters build
 * nothing (clprim_context_programs_made). */
static void test_params(void **state) {
  (void)state;
  static const double ms[][2] = {{1000003, 4321}, {97, 13}, {65521, 1}};
  const struct opspec *s = &ops[OP_MODSUM];
  static const size_t ns[] = {0, 1, 33, 1025, 4097};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    clprim_operator *op = make_op(ctx, s);
    uint64_t made = 0;
    for (size_t m = 0; m < COUNT(ms); ++m) {
      mod_params[0] = ms[m][0], mod_params[7] = ms[m][1];
      for (size_t k = 0; k < COUNT(ns); ++k)
        for (int call = 0; call < C_CALLS; ++call, ++rot) {
          if (test_small() && ns[k] > 1100) continue;
          struct ocase c;
          memset(&c, 0, sizeof c);
          c.call = (enum call)call, c.n = ns[k], c.with_init = call != C_ADJ && rot % 2;
          c.result = 1 + (int)(rot % 3), c.in_place = call == C_INCL && rot % 2;
          run_case(ctx, s, op, &c);
        }
      if (m == 0)
        made = clprim_context_programs_made(ctx);
      else if (clprim_context_programs_made(ctx) != made)
        test_report("modsum on %s: p0 = %g, p7 = %g built %llu programs", test_path_of(ctx),
                    ms[m][0], ms[m][1],
                    (unsigned long long)(clprim_context_programs_made(ctx) - made));
    }
    clprim_operator_free(op);
    mod_params[0] = ms[0][0], mod_params[7] = ms[0][1];
  }
  test_report_end();
}

/* The operator's kernels after the context dropped its programs: built
 * again (from the disk cache) on the next call, same results. And an
 * operator freed after its context (clprim.h allows either order). */
static void test_after_clear_cache(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const struct opspec *s = &ops[OP_MAT2];
  clprim_operator *op = make_op(ctx, s);
  TEST_OK(clprim_context_clear_cache(ctx));
  for (int call = 0; call < C_CALLS; ++call) {
    struct ocase c;
    memset(&c, 0, sizeof c);
    c.call = (enum call)call, c.n = 1500, c.with_init = call != C_ADJ, c.result = 3;
    run_case(ctx, s, op, &c);
  }
  clprim_operator_free(op);
  test_report_end();
  clprim_context *own;
  TEST_OK(clprim_context_create(&own, NULL));
  op = make_op(own, &ops[OP_INT_ADD]);
  clprim_context_free(own);
  clprim_operator_free(op);
}

/* ------------------------------------------------------------- errors */
/* An address that no operator has: *op must keep it after a refusal. */
#define NOT_MADE ((clprim_operator *)(uintptr_t)&not_made_marker)
static int not_made_marker;

/* desc is refused with status and a text naming part; *op untouched. */
static void refused(clprim_context *ctx, const clprim_operator_desc *d, clprim_status status,
                    const char *part, const char *what) {
  clprim_operator *op = NOT_MADE;
  const clprim_status st = clprim_operator_create(&op, ctx, d);
  if (st != status)
    fail_msg("%s: clprim_operator_create returned %s, expected %s (%s)", what,
             clprim_status_name(st), clprim_status_name(status), clprim_context_last_error(ctx));
  if (op != NOT_MADE) fail_msg("%s: *op was changed", what);
  test_text_has(ctx, part, what);
}

/* Descs: every field out of its range, expressions that would reach
 * outside the generated function, layouts that differ on the device. */
static void test_desc_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const clprim_operator_desc good = ops[OP_STATS].desc;
  clprim_operator_desc d;
  const clprim_status INVALID = CLPRIM_ERROR_INVALID_ARGUMENT;
  clprim_operator *op = NOT_MADE;
  TEST_STATUS(INVALID, clprim_operator_create(&op, NULL, &good));
  TEST_TEXT(ctx, INVALID, clprim_operator_create(&op, ctx, NULL), "desc is required");
  assert_ptr_equal(op, NOT_MADE);
  static const char *const bad_types[] = {"float;",        "", "  ", "2float", "stats*", "float)",
                                          "struct{int x;}"};
  d = good, d.type = NULL;
  refused(ctx, &d, INVALID, "desc->type", "a NULL type");
  for (size_t k = 0; k < COUNT(bad_types); ++k) {
    d = good, d.type = bad_types[k];
    refused(ctx, &d, INVALID, "desc->type", bad_types[k]);
  }
  static const size_t bad_sizes[] = {0, 65, 1000, SIZE_MAX};
  for (size_t k = 0; k < COUNT(bad_sizes); ++k) {
    d = good, d.size = bad_sizes[k], d.align = 1;
    refused(ctx, &d, INVALID, "desc->size", "a size out of range");
  }
  static const size_t bad_aligns[][2] = {{12, 0}, {12, 3}, {12, 8}, {12, 16}, {24, 6}, {64, 128}};
  for (size_t k = 0; k < COUNT(bad_aligns); ++k) {
    d = good, d.size = bad_aligns[k][0], d.align = bad_aligns[k][1];
    refused(ctx, &d, INVALID, "desc->align", "an align that is no power of two dividing size");
  }
  static const char *const bad_exprs[] = {
      "a + b) + (1", "a; }",      "a // x",    "#define X", "a + b); } __kernel void k() { (0",
      "a /* x */",   "{a}",       "(a",        "a)",        "",
      "a ?\?= b",    "a <% 1 %>", "a \\\n+ b", "a == 'x'",  "a + \"s\"[0]"};
  d = good, d.combine = NULL;
  refused(ctx, &d, INVALID, "desc->combine", "a NULL combine");
  d = good, d.identity = NULL;
  refused(ctx, &d, INVALID, "desc->identity", "a NULL identity");
  for (size_t k = 0; k < COUNT(bad_exprs); ++k) {
    d = good, d.combine = bad_exprs[k];
    refused(ctx, &d, INVALID, "desc->combine", bad_exprs[k]);
    d = good, d.identity = bad_exprs[k];
    refused(ctx, &d, INVALID, "desc->identity", bad_exprs[k]);
  }
  /* Layouts: the host says 16 bytes for the 12 of stats; 8-byte alignment
   * for a struct of two floats (4 on the device); float2 aligned to 4 (8 on
   * the device). Each builds, then is refused. */
  d = good, d.size = 16;
  refused(ctx, &d, CLPRIM_ERROR_OPERATOR_LAYOUT, "12 and 4 on the device, 16 and 4 in desc",
          "stats of 16 bytes");
  static const char pair_source[] = "typedef struct { float a, b; } pair;\n"
                                    "pair pair_zero(void) { pair z = {0, 0}; return z; }\n";
  d = (clprim_operator_desc){"pair", 8, 8, pair_source, "a", "pair_zero()"};
  refused(ctx, &d, CLPRIM_ERROR_OPERATOR_LAYOUT, "8 and 4 on the device, 8 and 8 in desc",
          "a struct of floats aligned to 8");
  d = ops[OP_MAXPLUS].desc, d.align = 4;
  refused(ctx, &d, CLPRIM_ERROR_OPERATOR_LAYOUT, "8 and 8 on the device, 8 and 4 in desc",
          "float2 aligned to 4");
  /* The same with the host's layout: made, no text; parameters of a NULL
   * operator refused; freeing NULL does nothing. */
  d.align = 8;
  TEST_OK_NO_TEXT(ctx, clprim_operator_create(&op, ctx, &d));
  assert_ptr_not_equal(op, NOT_MADE);
  TEST_OK(clprim_operator_set_params(op, NULL));
  TEST_STATUS(INVALID, clprim_operator_set_params(NULL, mod_params));
  clprim_operator_free(op);
  clprim_operator_free(NULL);
  /* A type name of spaces and words (OpenCL's "unsigned int"). */
  const clprim_operator_desc uint_sum = {"unsigned int", 4, 4, NULL, "a + b", "0u"};
  TEST_OK(clprim_operator_create(&op, ctx, &uint_sum));
  clprim_operator_free(op);
}

/* Texts that do not compile (not under Oclgrind, whose API check reports
 * every failed build, and whose compiler ignores #line): the build's
 * status, *op untouched, a text, and a log that names the user's text
 * with its line and column where the compiler names files by #line. */
static void test_build_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  if (on_oclgrind(ctx)) {
    printf("build errors: skipped on Oclgrind (its API check reports the failed build)\n");
    return;
  }
  const clprim_operator_desc good = ops[OP_STATS].desc;
  clprim_operator_desc d = good;
  static const char broken_source[] = "typedef struct { float n, mean, m2; } stats;\n"
                                      "stats stats_merge(stats x, stats y) { return x; }\n"
                                      "stats stats_zero(void) { stats z = {0, 0, 0}; return z }\n";
  struct {
    const char *field, *text, *where;
  } cases[] = {{"combine", "stats_merge(a, c)", "operator-combine:1:16"},
               {"identity", "stats_zero(1.0f, undefined_name)", "operator-identity:1:"},
               {"source", broken_source, "operator-source:3:"},
               {"type", "no_such_type", "operator:"}};
  for (size_t k = 0; k < COUNT(cases); ++k) {
    d = good;
    if (k == 0) d.combine = cases[k].text;
    if (k == 1) d.identity = cases[k].text;
    if (k == 2) d.source = cases[k].text;
    if (k == 3) d.type = cases[k].text, d.source = NULL, d.combine = "a", d.identity = "a";
    char what[64];
    snprintf(what, sizeof what, "a bad %s", cases[k].field);
    refused(ctx, &d, CL_BUILD_PROGRAM_FAILURE, "clprim_context_build_log", what);
    const char *log = clprim_context_build_log(ctx);
    /* A compiler that names files by #line names the user's text (PoCL);
     * one that does not (NVIDIA's names every file "<kernel>") still says
     * something. */
    if (strstr(log, "operator") && !strstr(log, cases[k].where))
      fail_msg("%s: the build log does not name %s:\n%s", what, cases[k].where, log);
    if (!*log) fail_msg("%s: no build log", what);
    if (k == 0) printf("the log of a bad combine:\n%s", log);
  }
}

/* Calls refused, each with its status, a text that names the argument
 * where the library gives one, and nothing written: outputs (a pattern),
 * the input, the host result. */
static void test_call_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const struct opspec *s = &ops[OP_STATS];
  const size_t es = s->desc.size, N = 64;
  const clprim_status INVALID = CLPRIM_ERROR_INVALID_ARGUMENT;
  const clprim_status SMALL = CLPRIM_ERROR_BUFFER_TOO_SMALL;
  clprim_operator *op = make_op(ctx, s);
  /* An operator of another context on the same device: a path's own, or
   * one made for the test. */
  clprim_context *other = NULL, *own = NULL;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT && !other; ++p)
    if (contexts.ctx[p] && contexts.ctx[p] != ctx) other = contexts.ctx[p];
  if (!other) {
    TEST_OK(clprim_context_create(&own, NULL));
    other = own;
  }
  clprim_operator *foreign_op = make_op(other, s);
  unsigned char x[64 * sizeof(stats)], init[sizeof(stats)], host[MAX_ES];
  s->gen(x, N);
  s->gen(init, 1);
  const size_t bytes = 2 * N * es;
  cl_mem in = test_buffer(ctx, bytes, NULL), o = test_pattern(ctx, bytes);
  cl_mem small = test_pattern(ctx, N * es - 1), tiny = test_pattern(ctx, es - 1);
  cl_mem foreign = test_foreign_buffer(ctx, bytes);
  test_write(ctx, in, N * es, x);
  const clprim_buffer IN = clprim_buf(in), O = clprim_buf(o), NONE = clprim_buf(NULL);
  memset(host, TEST_SENTINEL, sizeof host);
  /* No context: refused, no text to keep. */
  TEST_STATUS(INVALID, clprim_reduce_op(NULL, N, op, IN, NULL, host, O));
  TEST_STATUS(INVALID, clprim_scan_inclusive_op(NULL, N, op, IN, NULL, O));
  TEST_STATUS(INVALID, clprim_scan_exclusive_op(NULL, N, op, IN, NULL, O));
  TEST_STATUS(INVALID, clprim_adjacent_difference_op(NULL, N, op, IN, O));
  /* No operator; one of another context. */
  TEST_TEXT(ctx, INVALID, clprim_reduce_op(ctx, N, NULL, IN, NULL, host, O), "op is required");
  TEST_TEXT(ctx, INVALID, clprim_scan_inclusive_op(ctx, N, NULL, IN, init, O), "op is required");
  TEST_TEXT(ctx, INVALID, clprim_scan_exclusive_op(ctx, N, NULL, IN, NULL, O), "op is required");
  TEST_TEXT(ctx, INVALID, clprim_adjacent_difference_op(ctx, N, NULL, IN, O), "op is required");
  const char *another = "op was made on another context";
  TEST_TEXT(ctx, INVALID, clprim_reduce_op(ctx, N, foreign_op, IN, NULL, host, O), another);
  TEST_TEXT(ctx, INVALID, clprim_scan_inclusive_op(ctx, N, foreign_op, IN, NULL, O), another);
  TEST_TEXT(ctx, INVALID, clprim_scan_exclusive_op(ctx, N, foreign_op, IN, init, O), another);
  TEST_TEXT(ctx, INVALID, clprim_adjacent_difference_op(ctx, N, foreign_op, IN, O), another);
  /* Scans by key: no operator, a bad key type, out on the keys (in place
   * is for the values), keys too short. */
  cl_mem keys = test_buffer(ctx, bytes, NULL);
  const clprim_buffer KEYS = clprim_buf(keys);
  TEST_STATUS(INVALID, clprim_scan_inclusive_by_key_op(NULL, N, CLPRIM_UINT32, KEYS, op, IN, NULL, O));
  TEST_TEXT(ctx, INVALID,
            clprim_scan_inclusive_by_key_op(ctx, N, CLPRIM_UINT32, KEYS, NULL, IN, NULL, O),
            "op is required");
  TEST_TEXT(ctx, INVALID,
            clprim_scan_exclusive_by_key_op(ctx, N, CLPRIM_UINT32, KEYS, foreign_op, IN, NULL, O),
            another);
  TEST_TEXT(ctx, INVALID,
            clprim_scan_exclusive_by_key_op(ctx, N, (clprim_type)99, KEYS, op, IN, init, O),
            "key_type");
  TEST_TEXT(ctx, INVALID,
            clprim_scan_inclusive_by_key_op(ctx, N, CLPRIM_UINT32, KEYS, op, IN, NULL, KEYS),
            "out overlaps keys");
  TEST_TEXT(ctx, INVALID,
            clprim_scan_exclusive_by_key_op(ctx, N, CLPRIM_UINT32, KEYS, op, IN, NULL,
                                            clprim_buf_at(in, 1)),
            "out overlaps values");
  TEST_TEXT(ctx, SMALL,
            clprim_scan_inclusive_by_key_op(ctx, N, CLPRIM_UINT64, clprim_buf(tiny), op, IN,
                                            NULL, O),
            "keys holds");
  TEST_TEXT(ctx, INVALID,
            clprim_scan_inclusive_by_key_op(ctx, N, CLPRIM_UINT32, NONE, op, IN, NULL, O), "keys");
  TEST_OK_NO_TEXT(ctx,
                  clprim_scan_exclusive_by_key_op(ctx, 0, CLPRIM_UINT32, KEYS, op, IN, init, O));
  clReleaseMemObject(keys);
  /* No result at all. */
  TEST_TEXT(ctx, INVALID, clprim_reduce_op(ctx, N, op, IN, NULL, NULL, NONE),
            "result or result_out is required");
  TEST_TEXT(ctx, INVALID, clprim_reduce_op(ctx, 0, op, IN, init, NULL, NONE),
            "result or result_out is required");
  /* No input; inputs and outputs too short (counted in elements of the
   * operator's type). */
  TEST_TEXT(ctx, INVALID, clprim_reduce_op(ctx, N, op, NONE, NULL, host, O), "in");
  TEST_TEXT(ctx, INVALID, clprim_scan_inclusive_op(ctx, N, op, NONE, NULL, O), "in");
  TEST_TEXT(ctx, INVALID, clprim_scan_exclusive_op(ctx, N, op, IN, NULL, NONE), "out");
  TEST_TEXT(ctx, INVALID, clprim_adjacent_difference_op(ctx, N, op, IN, NONE), "out");
  TEST_TEXT(ctx, SMALL, clprim_reduce_op(ctx, 2 * N + 1, op, IN, NULL, host, O), "in holds");
  TEST_TEXT(ctx, SMALL, clprim_reduce_op(ctx, N, op, IN, NULL, host, clprim_buf(tiny)),
            "result_out holds");
  TEST_TEXT(ctx, SMALL, clprim_reduce_op(ctx, N, op, IN, NULL, host, clprim_buf_at(o, 2 * N)),
            "result_out holds");
  TEST_TEXT(ctx, SMALL, clprim_scan_inclusive_op(ctx, N, op, IN, NULL, clprim_buf(small)),
            "out holds");
  TEST_TEXT(ctx, SMALL, clprim_scan_exclusive_op(ctx, N, op, clprim_buf_at(in, N + 1), NULL, O),
            "in holds");
  TEST_TEXT(ctx, SMALL, clprim_adjacent_difference_op(ctx, N, op, IN, clprim_buf(small)),
            "out holds");
  /* Outputs over the input: a scan's out may be in's very range only;
   * adjacent difference's not even that; result_out inside in. */
  TEST_TEXT(ctx, INVALID, clprim_scan_inclusive_op(ctx, N, op, IN, NULL, clprim_buf_at(in, 1)),
            "out overlaps in");
  TEST_TEXT(ctx, INVALID, clprim_scan_exclusive_op(ctx, N, op, clprim_buf_at(in, 1), init, IN),
            "out overlaps in");
  TEST_TEXT(ctx, INVALID, clprim_adjacent_difference_op(ctx, N, op, IN, IN), "out overlaps in");
  TEST_TEXT(ctx, INVALID, clprim_adjacent_difference_op(ctx, N, op, IN, clprim_buf_at(in, N - 1)),
            "out overlaps in");
  TEST_TEXT(ctx, INVALID, clprim_adjacent_difference_op(ctx, N, op, clprim_buf_at(in, 3), IN),
            "out overlaps in");
  TEST_TEXT(ctx, INVALID, clprim_reduce_op(ctx, N, op, IN, NULL, host, clprim_buf_at(in, N / 2)),
            "result_out overlaps in");
  /* A buffer of another OpenCL context. */
  TEST_STATUS(CL_INVALID_CONTEXT, clprim_reduce_op(ctx, N, op, clprim_buf(foreign), NULL, host, O));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_scan_inclusive_op(ctx, N, op, IN, NULL, clprim_buf(foreign)));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_adjacent_difference_op(ctx, N, op, IN, clprim_buf(foreign)));
  if (!*clprim_context_last_error(ctx)) fail_msg("a foreign buffer: no text");
  /* n = 0: scans and adjacent difference write nothing (also with no room
   * at all). */
  TEST_OK_NO_TEXT(ctx, clprim_scan_inclusive_op(ctx, 0, op, IN, init, O));
  TEST_OK_NO_TEXT(ctx, clprim_scan_exclusive_op(ctx, 0, op, IN, init, clprim_buf(tiny)));
  TEST_OK_NO_TEXT(ctx, clprim_adjacent_difference_op(ctx, 0, op, IN, clprim_buf(small)));
  /* Nothing was written. */
  test_pattern_intact(ctx, o, bytes, "out");
  test_pattern_intact(ctx, small, N * es - 1, "a short out");
  test_pattern_intact(ctx, tiny, es - 1, "a short result_out");
  for (size_t b = 0; b < sizeof host; ++b)
    if (host[b] != TEST_SENTINEL) fail_msg("the host result's byte %zu was written", b);
  unsigned char after[64 * sizeof(stats)];
  test_read(ctx, in, N * es, after);
  assert_memory_equal(after, x, N * es);
  clReleaseMemObject(in), clReleaseMemObject(o), clReleaseMemObject(small);
  clReleaseMemObject(tiny), clReleaseMemObject(foreign);
  clprim_operator_free(op);
  clprim_operator_free(foreign_op);
  clprim_context_free(own);
}

/* ------------------------------------------------------------ pipelines */
/* clprim_pipeline_map_op and clprim_pipeline_reduce_op: a pipeline shape
 * over one input, its stages, and their host copy: whether input element i
 * passes (params: the run's p0..p7) and its x, an element of the
 * operator's type. */
struct pshape {
  const char *name;
  int op;                         /* ops[] */
  void (*gen)(void *a, size_t n); /* n input elements (4 bytes each) */
  clprim_type in_type;
  void (*build)(clprim_pipeline *p, clprim_operator *op);
  int (*ref)(const void *a, size_t i, const double *params, void *x);
  const char *tune; /* small tiles through the family's knobs, or NULL */
};

/* stats: x = (1, a, 0) by a map by the operator, filtered by its mean
 * against p0; a in sixteenths of [-1, 1) (exact). */
static void sixteenths_gen(void *a, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float f = (float)((int)(test_rand() % 32) - 16) / 16.0f;
    memcpy((char *)a + i * 4, &f, 4);
  }
}
static void stats_build(clprim_pipeline *p, clprim_operator *op) {
  TEST_OK(clprim_pipeline_map_op(p, op, "stats_of(x)"));
  TEST_OK(clprim_pipeline_filter_expr(p, "x.mean > (float)p0"));
}
static int stats_ref(const void *a, size_t i, const double *params, void *x) {
  float v;
  memcpy(&v, (const char *)a + i * 4, 4);
  const stats s = {1.0f, v, 0.0f};
  memcpy(x, &s, sizeof s);
  return v > (float)params[0];
}

/* mat2 (not commutative, exact): a filter on the uint input, a map by the
 * operator to [[a 2i+1] [1 0]] (an odd determinant: products never wrap to
 * 0), a filter on a field, a second map by it (squared). An element the
 * first filter drops leaves no x of the type. */
static void mat2_build(clprim_pipeline *p, clprim_operator *op) {
  TEST_OK(clprim_pipeline_filter_expr(p, "(x & 7u) != 3u"));
  TEST_OK(clprim_pipeline_map_op(p, op, "mat2_of(x, 2u * (uint)i + 1u, 1u, 0u)"));
  TEST_OK(clprim_pipeline_filter_expr(p, "x.m[0] % 4u != 0u"));
  TEST_OK(clprim_pipeline_map_op(p, op, "mat2_mul(x, x)"));
}
static int mat2_ref(const void *a, size_t i, const double *params, void *x) {
  (void)params;
  const uint32_t v = get_u32((const char *)a + i * 4);
  const mat2 m = {{v, 2 * (uint32_t)i + 1, 1, 0}};
  mat2_combine(&m, &m, x);
  return (v & 7) != 3 && v % 4 != 0;
}

/* modsum over a built-in x (uint, the operator's type name): a map to uint
 * (below the modulus, p1), a filter that p0 turns off. */
static void modsum_build(clprim_pipeline *p, clprim_operator *op) {
  (void)op;
  TEST_OK(clprim_pipeline_map(p, CLPRIM_UINT32, "x % (uint)p1"));
  TEST_OK(clprim_pipeline_filter_expr(p, "(x & 1u) == 0u || p0 > 0.5"));
}
static int modsum_ref(const void *a, size_t i, const double *params, void *x) {
  const uint32_t v = get_u32((const char *)a + i * 4) % (uint32_t)params[1];
  put_u32(x, 0, v);
  return (v & 1) == 0 || params[0] > 0.5;
}

#define SMALL_TILES "operators.wg=32,operators.tile_bytes=64"
static const struct pshape pshapes[] = {
    {"stats", OP_STATS, sixteenths_gen, CLPRIM_FLOAT, stats_build, stats_ref, SMALL_TILES},
    {"mat2", OP_MAT2, u32_gen, CLPRIM_UINT32, mat2_build, mat2_ref, SMALL_TILES},
    {"modsum", OP_MODSUM, u32_gen, CLPRIM_UINT32, modsum_build, modsum_ref, NULL},
};

/* The pipeline p of shape sh (built with op) over n fresh input elements,
 * with init or not, the run's params, and the elements below *count (a
 * device count, NULL: all): the reduce_op terminal's result against the
 * host's combination of the passing elements in index order. */
static void run_pipe(clprim_context *ctx, const struct pshape *sh, clprim_pipeline *p,
                     clprim_operator *op, size_t n, int with_init, const double *params,
                     const uint64_t *count) {
  const struct opspec *s = &ops[sh->op];
  const size_t es = s->desc.size;
  char desc[200];
  snprintf(desc, sizeof desc, "pipeline %s reduce_op n=%zu%s p0=%g%s path=%s", sh->name, n,
           with_init ? " with init" : "", params[0], count ? " counted" : "", test_path_of(ctx));
  unsigned char *a = xmalloc(n * 4 + 4), init[MAX_ES], init_arg[MAX_ES], x[MAX_ES], v[MAX_ES];
  unsigned char want[MAX_ES], got[MAX_ES + 8];
  sh->gen(a, n);
  some_init(s, init);
  memcpy(init_arg, init, es);
  if (s->params) TEST_OK(clprim_operator_set_params(op, s->params));
  TEST_OK(clprim_pipeline_reduce_op(p, op, with_init ? init_arg : NULL));
  memset(init_arg, 0x5A, sizeof init_arg); /* copied by the call */
  const size_t upto = count && *count < n ? (size_t)*count : n;
  if (with_init)
    lift(s, init, want);
  else
    s->identity(want);
  for (size_t i = 0; i < upto; ++i)
    if (sh->ref(a, i, params, x)) {
      lift(s, x, v);
      s->combine(want, v, want);
    }
  cl_mem in = test_buffer(ctx, n * 4 + 4, a), dcount = NULL;
  const clprim_buffer IN = clprim_buf(in);
  clprim_status st;
  if (count) {
    dcount = test_buffer(ctx, 8, count);
    st = clprim_pipeline_run_counted(p, n, &IN, clprim_buf(dcount), params);
  } else {
    st = clprim_pipeline_run(p, n, &IN, params);
  }
  memset(got, TEST_SENTINEL, sizeof got);
  cl_mem out;
  size_t elements = 0;
  if (st != CLPRIM_SUCCESS) {
    test_report("%s: returned %s (%s)\n%s", desc, clprim_status_name(st),
                clprim_context_last_error(ctx), clprim_context_build_log(ctx));
  } else if ((st = clprim_pipeline_read(p, CLPRIM_PIPE_OUT_RESULT, 0, es, got)) != CLPRIM_SUCCESS) {
    test_report("%s: clprim_pipeline_read returned %s", desc, clprim_status_name(st));
  } else if (!element_ok(s, got, want)) {
    report_element(s, desc, "result", 0, got, want);
  } else if (clprim_pipeline_output(p, CLPRIM_PIPE_OUT_RESULT, &out, &elements) != CLPRIM_SUCCESS ||
             elements != 1) {
    test_report("%s: the result output holds %zu elements, expected 1", desc, elements);
  } else if (clprim_pipeline_read(p, CLPRIM_PIPE_OUT_RESULT, 0, es + 1, got) !=
             CLPRIM_ERROR_BUFFER_TOO_SMALL) {
    test_report("%s: a read past the result's %zu bytes was not refused", desc, es);
  }
  clReleaseMemObject(in);
  if (dcount) clReleaseMemObject(dcount);
  free(a);
}

/* The run's parameters for case k of shape sh: p0 that turns filters on
 * and off, modsum's modulus in p1 (the operator's own parameters: the
 * modulus and offset of mod_params, three in turn). */
static const double mod_choices[3][2] = {{1000003, 4321}, {97, 13}, {65521, 1}};
static void pipe_params(const struct pshape *sh, unsigned k, double *params) {
  memset(params, 0, 8 * sizeof *params);
  if (sh->op == OP_MODSUM) {
    mod_params[0] = mod_choices[k % 3][0], mod_params[7] = mod_choices[k % 3][1];
    params[0] = k % 4 == 3, params[1] = mod_params[0];
  } else {
    params[0] = k % 2 ? 0.25 : -0.5;
  }
}

/* Every shape on every path, sizes around the tiles (32 elements with the
 * small tiles, 1024 4-byte elements on the other paths, 4096 on the cpu
 * path) and of two passes (the pipeline's kernel, then the operator's own
 * over the work-groups' results); init and none in turn; new parameters
 * (the run's and the operator's) build nothing. */
static void test_pipeline_reduce_op(void **state) {
  (void)state;
  static const size_t ns[] = {0, 1, 31, 32, 33, 1023, 1025, 4095, 4097, 9000};
  static const size_t small_ns[] = {0, 1, 33, 1025};
  const size_t count = test_small() ? COUNT(small_ns) : COUNT(ns);
  for (unsigned path = 0; path < CLPRIM_PATH_COUNT; ++path) {
    if (test_skip_path(path)) continue;
    clprim_context *ctx = contexts.ctx[path];
    for (size_t h = 0; h < COUNT(pshapes); ++h) {
      const struct pshape *sh = &pshapes[h];
      if (sh->tune) TEST_OK(clprim__tune(ctx, sh->tune));
      clprim_operator *op = make_op(ctx, &ops[sh->op]);
      clprim_pipeline *p;
      TEST_OK(clprim_pipeline_create(&p, ctx, 1, &sh->in_type));
      sh->build(p, op);
      uint64_t made = 0;
      for (size_t k = 0; k < count; ++k) {
        double params[8];
        pipe_params(sh, (unsigned)k, params);
        run_pipe(ctx, sh, p, op, test_small() ? small_ns[k] : ns[k], (int)(k + h) % 2, params,
                 NULL);
        if (k == 0)
          made = clprim_context_programs_made(ctx);
        else if (clprim_context_programs_made(ctx) != made)
          test_report("pipeline %s on %s: run %zu built %llu programs", sh->name, test_path_of(ctx),
                      k, (unsigned long long)(clprim_context_programs_made(ctx) - made));
      }
      clprim_pipeline_free(p);
      clprim_operator_free(op);
      if (sh->tune) TEST_OK(clprim__tune(ctx, "operators.wg=-1,operators.tile_bytes=-1"));
    }
  }
  mod_params[0] = mod_choices[0][0], mod_params[7] = mod_choices[0][1];
  test_report_end();
}

/* On the default path: a counted run (its count below n, then above it);
 * a count after a map by the operator; a map to a built-in x after it (a
 * sum of the passing means, exact), and clprim_pipeline_type of both; maps
 * by operators of a vector and of a built-in type. */
static void test_pipeline_op_terminals(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const struct pshape *sh = &pshapes[1]; /* mat2 */
  TEST_OK(clprim__tune(ctx, SMALL_TILES));
  clprim_operator *op = make_op(ctx, &ops[sh->op]);
  clprim_pipeline *p;
  TEST_OK(clprim_pipeline_create(&p, ctx, 1, &sh->in_type));
  sh->build(p, op);
  const double params[8] = {0};
  const size_t n = test_small() ? 300 : 1057;
  const uint64_t below = n / 2 + 3, above = n + 5;
  run_pipe(ctx, sh, p, op, n, 1, params, &below);
  run_pipe(ctx, sh, p, op, n, 0, params, &above);
  clprim_pipeline_free(p);
  clprim_operator_free(op);
  TEST_OK(clprim__tune(ctx, "operators.wg=-1,operators.tile_bytes=-1"));
  test_report_end();

  sh = &pshapes[0]; /* stats */
  op = make_op(ctx, &ops[sh->op]);
  const size_t m = test_small() ? 500 : 5000;
  float *a = xmalloc(m * 4);
  sh->gen(a, m);
  const double p0[8] = {0.25};
  uint64_t want_count = 0;
  float want_sum = 0;
  for (size_t i = 0; i < m; ++i)
    if (a[i] > 0.25f) ++want_count, want_sum += 16 * a[i];
  cl_mem in = test_buffer(ctx, m * 4, a);
  const clprim_buffer IN = clprim_buf(in);
  TEST_OK(clprim_pipeline_create(&p, ctx, 1, &sh->in_type));
  sh->build(p, op);
  assert_int_equal(clprim_pipeline_type(p), CLPRIM_TYPE_COUNT);
  TEST_OK(clprim_pipeline_count(p));
  TEST_OK(clprim_pipeline_run(p, m, &IN, p0));
  uint64_t got_count = 0;
  TEST_OK(clprim_pipeline_read_count(p, &got_count));
  if (got_count != want_count)
    fail_msg("count after a map by the operator: %llu, expected %llu",
             (unsigned long long)got_count, (unsigned long long)want_count);
  TEST_OK(clprim_pipeline_map(p, CLPRIM_FLOAT, "x.mean * 16.0f"));
  assert_int_equal(clprim_pipeline_type(p), CLPRIM_FLOAT);
  TEST_OK(clprim_pipeline_reduce(p, CLPRIM_PIPE_SUM, 0));
  TEST_OK(clprim_pipeline_run(p, m, &IN, p0));
  clprim_value sum;
  TEST_OK(clprim_pipeline_read_result(p, &sum, NULL));
  if (sum.f32 != want_sum) fail_msg("sum of x.mean * 16: %g, expected %g", sum.f32, want_sum);
  clprim_pipeline_free(p);
  clprim_operator_free(op);

  /* Maps by operators of other types: a vector type (max-plus on float2,
   * made by its literal, filtered by a field) and a built-in one (int: x
   * is then an int, which every terminal takes). */
  op = make_op(ctx, &ops[OP_MAXPLUS]);
  maxplus want_mp, e;
  maxplus_identity(&want_mp);
  for (size_t i = 0; i < m; ++i)
    if (a[i] > -0.5f) e.x = 16 * a[i], e.y = 1.0f, maxplus_combine(&want_mp, &e, &want_mp);
  TEST_OK(clprim_pipeline_create(&p, ctx, 1, &sh->in_type));
  TEST_OK(clprim_pipeline_map_op(p, op, "(float2)(x * 16.0f, 1.0f)"));
  TEST_OK(clprim_pipeline_filter_expr(p, "x.x > -8.0f"));
  TEST_OK(clprim_pipeline_reduce_op(p, op, NULL));
  TEST_OK(clprim_pipeline_run(p, m, &IN, NULL));
  maxplus got_mp;
  TEST_OK(clprim_pipeline_read(p, CLPRIM_PIPE_OUT_RESULT, 0, sizeof got_mp, &got_mp));
  if (memcmp(&got_mp, &want_mp, sizeof got_mp) != 0)
    fail_msg("max-plus of a float2 map: (%g, %g), expected (%g, %g)", got_mp.x, got_mp.y,
             want_mp.x, want_mp.y);
  clprim_pipeline_free(p);
  clprim_operator_free(op);
  op = make_op(ctx, &ops[OP_INT_ADD]);
  int32_t want_int = 0, got_int = 0;
  for (size_t i = 0; i < m; ++i) want_int += (int32_t)(16 * a[i]);
  TEST_OK(clprim_pipeline_create(&p, ctx, 1, &sh->in_type));
  TEST_OK(clprim_pipeline_map_op(p, op, "x * 16.0f"));
  assert_int_equal(clprim_pipeline_type(p), CLPRIM_INT32);
  TEST_OK(clprim_pipeline_reduce(p, CLPRIM_PIPE_SUM, 0));
  TEST_OK(clprim_pipeline_run(p, m, &IN, NULL));
  TEST_OK(clprim_pipeline_read(p, CLPRIM_PIPE_OUT_RESULT, 0, 4, &got_int));
  assert_int_equal(got_int, want_int);
  TEST_OK(clprim_pipeline_reduce_op(p, op, NULL));
  TEST_OK(clprim_pipeline_run(p, m, &IN, NULL));
  TEST_OK(clprim_pipeline_read(p, CLPRIM_PIPE_OUT_RESULT, 0, 4, &got_int));
  assert_int_equal(got_int, want_int);
  clprim_pipeline_free(p);
  clprim_operator_free(op);
  clReleaseMemObject(in);
  free(a);
}

/* The result output after a refused run: none to read. */
static void no_result(clprim_pipeline *p, const char *what) {
  unsigned char got[MAX_ES];
  const clprim_status st = clprim_pipeline_read(p, CLPRIM_PIPE_OUT_RESULT, 0, 4, got);
  if (st != CLPRIM_ERROR_INVALID_ARGUMENT)
    fail_msg("%s: the run left a result to read (%s)", what, clprim_status_name(st));
}

/* Refusals of map_op and reduce_op, each with its status and text, and a
 * refused run that leaves no result (after one that did). */
static void test_pipeline_op_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const clprim_status INVALID = CLPRIM_ERROR_INVALID_ARGUMENT;
  clprim_context *other = NULL, *own = NULL;
  for (unsigned path = 0; path < CLPRIM_PATH_COUNT && !other; ++path)
    if (contexts.ctx[path] && contexts.ctx[path] != ctx) other = contexts.ctx[path];
  if (!other) {
    TEST_OK(clprim_context_create(&own, NULL));
    other = own;
  }
  clprim_operator *stats_op = make_op(ctx, &ops[OP_STATS]);
  clprim_operator *mat2_op = make_op(ctx, &ops[OP_MAT2]);
  clprim_operator *foreign_op = make_op(other, &ops[OP_STATS]);
  const clprim_operator_desc float_sum = {"float", 4, 4, NULL, "a + b", "0.0f"};
  clprim_operator *float_op = NULL, *int_op = make_op(ctx, &ops[OP_INT_ADD]);
  TEST_OK(clprim_operator_create(&float_op, ctx, &float_sum));
  const clprim_type it = CLPRIM_INT32, ft = CLPRIM_FLOAT;
  const size_t n = 100;
  int32_t host[100];
  for (size_t i = 0; i < n; ++i)
    host[i] = (int32_t)i - 50;
  cl_mem mem = test_buffer(ctx, sizeof host, host);
  const clprim_buffer IN = clprim_buf(mem);
  clprim_pipeline *p;
  TEST_OK(clprim_pipeline_create(&p, ctx, 1, &it));
  /* NULL arguments; an operator of another context; a bad expression. */
  TEST_STATUS(INVALID, clprim_pipeline_map_op(NULL, stats_op, "stats_of(x)"));
  TEST_STATUS(INVALID, clprim_pipeline_reduce_op(NULL, stats_op, NULL));
  TEST_TEXT(ctx, INVALID, clprim_pipeline_map_op(p, NULL, "x"), "pipeline_map_op: op is required");
  TEST_TEXT(ctx, INVALID, clprim_pipeline_map_op(p, stats_op, NULL), "expression is required");
  TEST_TEXT(ctx, INVALID, clprim_pipeline_reduce_op(p, NULL, NULL), "op is required");
  TEST_TEXT(ctx, INVALID, clprim_pipeline_map_op(p, foreign_op, "stats_of(x)"),
            "op was made on another context");
  TEST_TEXT(ctx, INVALID, clprim_pipeline_reduce_op(p, foreign_op, NULL),
            "op was made on another context");
  /* (A compound literal's braces too.) */
  static const char *const bad[] = {"stats_of(x); }", "stats_of(x", "x // c", "",
                                    "(stats){1.0f, x, 0.0f}"};
  for (size_t k = 0; k < COUNT(bad); ++k)
    TEST_TEXT(ctx, INVALID, clprim_pipeline_map_op(p, stats_op, bad[k]),
              "expression is not one expression");
  /* A run with an operator of x's type: a result; then an operator of
   * another type: refused, no result left. */
  TEST_OK(clprim_pipeline_reduce_op(p, int_op, NULL));
  TEST_OK(clprim_pipeline_run(p, n, &IN, NULL));
  int32_t sum = 0;
  TEST_OK(clprim_pipeline_read(p, CLPRIM_PIPE_OUT_RESULT, 0, 4, &sum));
  assert_int_equal(sum, -50);
  clprim_value value;
  uint64_t index;
  TEST_TEXT(ctx, INVALID, clprim_pipeline_read_result(p, &value, &index), "clprim_pipeline_read");
  TEST_OK(clprim_pipeline_reduce_op(p, float_op, NULL));
  TEST_TEXT(ctx, INVALID, clprim_pipeline_run(p, n, &IN, NULL),
            "x's type (int) is not op's type (float)");
  no_result(p, "an operator of another type");
  /* Maps by the operator: x of its type; a second operator refused; a
   * built-in predicate refused; terminals that take built-in x fail the
   * run; reduce_op with another operator too. */
  TEST_OK(clprim_pipeline_map_op(p, stats_op, "stats_of((float)x)"));
  TEST_TEXT(ctx, INVALID, clprim_pipeline_map_op(p, mat2_op, "mat2_one()"),
            "op (of type mat2) is not the operator the pipeline's maps use (of type stats)");
  TEST_TEXT(ctx, INVALID, clprim_pipeline_reduce_op(p, mat2_op, NULL), "one operator a pipeline");
  clprim_predicate pred;
  memset(&pred, 0, sizeof pred);
  pred.op = CLPRIM_PRED_GT;
  TEST_TEXT(ctx, INVALID, clprim_pipeline_filter(p, &pred),
            "x has the operator's type (stats), which built-in predicates do not take");
  TEST_TEXT(ctx, INVALID, clprim_pipeline_run(p, n, &IN, NULL),
            "x's type (stats, of the operator of the pipeline's maps) is not op's type (float");
  TEST_OK(clprim_pipeline_reduce_op(p, stats_op, NULL));
  TEST_OK(clprim_pipeline_run(p, n, &IN, NULL));
  TEST_OK(clprim_pipeline_collect(p, CLPRIM_PIPE_VALUES_WANTED));
  TEST_TEXT(ctx, INVALID, clprim_pipeline_run(p, n, &IN, NULL),
            "x has the operator's type (stats), which the terminal (collect) does not take");
  no_result(p, "collect of a user type");
  cl_mem out;
  TEST_STATUS(INVALID, clprim_pipeline_output(p, CLPRIM_PIPE_OUT_VALUES, &out, NULL));
  TEST_OK(clprim_pipeline_reduce(p, CLPRIM_PIPE_MAX, 0));
  TEST_TEXT(ctx, INVALID, clprim_pipeline_run(p, n, &IN, NULL), "the terminal (reduce)");
  TEST_OK(clprim_pipeline_topk(p, 3, 0));
  TEST_TEXT(ctx, INVALID, clprim_pipeline_run(p, n, &IN, NULL), "the terminal (topk)");
  clprim_pipeline_free(p);
  /* reduce_op set first, then a map by another operator: the run refuses. */
  TEST_OK(clprim_pipeline_create(&p, ctx, 1, &ft));
  TEST_OK(clprim_pipeline_reduce_op(p, mat2_op, NULL));
  TEST_OK(clprim_pipeline_map_op(p, stats_op, "stats_of(x)"));
  TEST_TEXT(ctx, INVALID, clprim_pipeline_run(p, n, &IN, NULL), "one operator a pipeline");
  no_result(p, "reduce_op with another operator than the maps'");
  clprim_pipeline_free(p);
  /* An expression that does not compile: the build's status and a log in
   * the expression's terms, the stage named a map (not on Oclgrind, whose
   * API check reports the failed build). */
  if (!on_oclgrind(ctx)) {
    TEST_OK(clprim_pipeline_create(&p, ctx, 1, &ft));
    TEST_OK(clprim_pipeline_map_op(p, stats_op, "stats_of(x + undefined_name)"));
    TEST_OK(clprim_pipeline_reduce_op(p, stats_op, NULL));
    const clprim_status st = clprim_pipeline_run(p, n, &IN, NULL);
    if (st != CL_BUILD_PROGRAM_FAILURE)
      fail_msg("an undeclared name: %s, expected the build's failure", clprim_status_name(st));
    const char *log = clprim_context_build_log(ctx);
    if (!strstr(log, "expression:1:") || !strstr(log, "undefined_name") ||
        !strstr(log, "(stage 1 of the pipeline: a map)"))
      fail_msg("the build log does not point into the expression:\n%s", log);
    no_result(p, "a build error");
    clprim_pipeline_free(p);
  }
  clReleaseMemObject(mem);
  clprim_operator_free(stats_op), clprim_operator_free(mat2_op);
  clprim_operator_free(float_op), clprim_operator_free(int_op);
  clprim_operator_free(foreign_op);
  clprim_context_free(own);
}

/* A NULL op pointer, on a context of its own (a call that crashed would
 * leave the suite's context held). */
static void test_create_null_op(void **state) {
  (void)state;
  clprim_context *ctx;
  TEST_OK(clprim_context_create(&ctx, NULL));
  TEST_TEXT(ctx, CLPRIM_ERROR_INVALID_ARGUMENT,
            clprim_operator_create(NULL, ctx, &ops[OP_INT_ADD].desc), "op is required");
  clprim_context_free(ctx);
}

int main(void) {
  test_init("test_operators");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_desc_errors),
      cmocka_unit_test(test_create_null_op),
      cmocka_unit_test(test_build_errors),
      cmocka_unit_test(test_call_errors),
      cmocka_unit_test(test_stats),
      cmocka_unit_test(test_maxplus),
      cmocka_unit_test(test_mat2),
      cmocka_unit_test(test_wide5),
      cmocka_unit_test(test_top2),
      cmocka_unit_test(test_int_sum),
      cmocka_unit_test(test_uint_xor),
      cmocka_unit_test(test_int_product),
      cmocka_unit_test(test_uchar_sum),
      cmocka_unit_test(test_double_sum),
      cmocka_unit_test(test_int_difference),
      cmocka_unit_test(test_params),
      cmocka_unit_test(test_small_tiles),
      cmocka_unit_test(test_after_clear_cache),
      cmocka_unit_test(test_segments_and_runs),
      cmocka_unit_test(test_pipeline_reduce_op),
      cmocka_unit_test(test_pipeline_op_terminals),
      cmocka_unit_test(test_pipeline_op_errors),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
