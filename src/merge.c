/* merge.c: the stable merge of two sorted ranges, keys or key-value pairs
 * (kernels in cl/merge.cl, which describes the merge path). Two launches,
 * merge_split (where each tile's outputs start in a) and merge_tiles, after
 * every check, build and kernel argument, so a failed call writes nothing
 * (merge_tiles writes keys and values); keys alone with an empty range are
 * a copy of the other. clprim_mpi's sample
 * sort merges the runs a rank received with clprim__merge (src/merge.h). */
#include "merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The family's knobs and table (docs/TUNING.md): wg, the work-group size;
 * items, the outputs per work-item (a tile is wg x items outputs, kept in
 * local memory). */
enum { MERGE_WG, MERGE_ITEMS, MERGE_KNOBS };
static const struct clprim_knob merge_knobs[MERGE_KNOBS] = {{"wg", 32, 1024}, {"items", 1, 32}};
#define K CLPRIM__KNOB
static const struct clprim_tuning_row merge_table[] = {
    {0, 0, NULL, 0, 0, K(MERGE_WG) | K(MERGE_ITEMS), {256, 11},
     "portable default: 256 work-items of 11 outputs (tiles of 2816 keys in local memory; an "
     "odd count keeps the work-items' strides off each other's banks)"},
    {0, 0, "H200", 4, CLPRIM__NO_VALUES, K(MERGE_WG) | K(MERGE_ITEMS), {256, 15},
     "H200, driver 580.159.04, 2026-11-29: two sorted halves of 2^28 keys alone, float 1.256 -> "
     "1.140 ms, uint32 0.789 -> 0.769 ms"},
    {0, 0, "H200", 8, CLPRIM__NO_VALUES, K(MERGE_WG) | K(MERGE_ITEMS), {128, 15},
     "H200, driver 580.159.04, 2026-11-29: two sorted halves of 2^28 keys alone, uint64 1.270 "
     "-> 1.218 ms, double 1.871 -> 1.688 ms"},
};
#undef K
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_merge = {
    "merge", merge_knobs, MERGE_KNOBS, merge_table, sizeof merge_table / sizeof merge_table[0],
    0, prebuild};

/* The launch shape for keys of key_bytes with values of value_size bytes:
 * work-group size and outputs per work-item, the tile's keys (and, with
 * values, a 4-byte position each) within half the device's local memory. */
static void merge_shape(const clprim_context *ctx, size_t key_bytes, size_t value_size,
                        unsigned *wg, unsigned *items) {
  long long v[MERGE_KNOBS];
  clprim__tuned(ctx, &clprim__family_merge, (unsigned)key_bytes,
                value_size ? (unsigned)value_size : CLPRIM__NO_VALUES, v);
  *wg = clprim__fit_wg(ctx, v[MERGE_WG] > 0 ? (unsigned)v[MERGE_WG] : 256u);
  unsigned it = v[MERGE_ITEMS] > 0 ? (unsigned)v[MERGE_ITEMS] : 11u;
  const uint64_t per_key = key_bytes + (value_size ? 4 : 0);
  while (it > 1 && (uint64_t)*wg * it * per_key > ctx->info.local_mem_size / 2)
    it /= 2;
  *items = it;
}

clprim_status clprim__merge(clprim_context *ctx, const struct clprim_merge_runs *m) {
  const size_t es = clprim_type_size(m->type), vs = m->value_size;
  const size_t total = m->na + m->nb;
  if (total == 0) return CLPRIM_SUCCESS;
  /* Keys of one run: a copy. (Pairs take the kernels, which write keys
   * and values with one command: two copies could fail between them.) */
  if ((m->na == 0 || m->nb == 0) && vs == 0) {
    const int from_a = m->na != 0;
    return clprim__copy(ctx, from_a ? m->a : m->b, m->out, (from_a ? m->a_at : m->b_at) * es,
                        m->out_at * es, total * es);
  }
  unsigned wg, items;
  merge_shape(ctx, es, vs, &wg, &items);
  const int cpu = ctx->info.path == CLPRIM_PATH_CPU; /* a work-item per share (cl/merge.cl) */
  if (cpu) wg = 1, items = 1;
  const int is_float = m->type == CLPRIM_FLOAT || m->type == CLPRIM_DOUBLE;
  char options[160];
  snprintf(options, sizeof options, "-DT=%s -DT_FLOAT=%d -DKEY_BITS=%u%s -DWG=%u -DITEMS=%u",
           clprim__cl_type(clprim__key_build_type(m->type)), is_float, (unsigned)es * 8,
           vs == 0 ? "" : vs == 8 ? " -DV=ulong" : " -DV=uint", wg, items);
  cl_kernel split, tiles_k;
  const struct clprim_kernel_request req[2] = {
      {"merge.cl", NULL, options, "merge_split", NULL, &split, NULL, NULL},
      {"merge.cl", NULL, options, "merge_tiles", NULL, &tiles_k, NULL, NULL}};
  CLPRIM_CHECK(clprim__kernels(ctx, req, 2));
  const cl_ulong tile = (cl_ulong)wg * items;
  const cl_ulong tiles = cpu ? clprim__cpu_stream_shares(ctx, total) : (total + tile - 1) / tile;
  cl_mem splits;
  CLPRIM_CHECK(clprim__scratch(ctx, "merge: splits", (size_t)(tiles + 1) * 8, &splits));
  const cl_ulong a_at = m->a_at, na = m->na, b_at = m->b_at, nb = m->nb, out_at = m->out_at;
  const cl_ulong flip64 = clprim__key_flip(m->type, m->descending);
  const cl_uint flip32 = (cl_uint)flip64;
  const void *flip = es == 8 ? (const void *)&flip64 : (const void *)&flip32;
  CLPRIM_CHECK(clprim__set_args(split, 9, sizeof m->a, &m->a, sizeof a_at, &a_at, sizeof na, &na,
                                sizeof m->b, &m->b, sizeof b_at, &b_at, sizeof nb, &nb, es, flip,
                                sizeof splits, &splits, sizeof tiles, &tiles));
  CLPRIM_CHECK(clprim__set_args(tiles_k, 10, sizeof m->a, &m->a, sizeof a_at, &a_at, sizeof na,
                                &na, sizeof m->b, &m->b, sizeof b_at, &b_at, sizeof nb, &nb, es,
                                flip, sizeof splits, &splits, sizeof m->out, &m->out,
                                sizeof out_at, &out_at));
  if (vs) { /* the values, after the keys' arguments */
    const struct clprim_extra_args values = {
        10, 3, {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)},
        {&m->a_values, &m->b_values, &m->out_values}};
    CLPRIM_CHECK(clprim__set_extra_args(tiles_k, &values));
  }
  CLPRIM_CHECK(clprim__enqueue(ctx, split, (size_t)((tiles + 1 + wg - 1) / wg), wg));
  return clprim__enqueue(ctx, tiles_k, (size_t)tiles, wg);
}

unsigned clprim__merge_round_count(size_t runs) {
  unsigned r = 0;
  while (((size_t)1 << r) < runs)
    ++r;
  return r;
}

clprim_status clprim__merge_rounds(clprim_context *ctx, const struct clprim_merge_rounds *p) {
  const unsigned rounds = clprim__merge_round_count(p->runs);
  if (rounds == 0 && p->src.keys == p->out.keys && p->src.at == p->out.at &&
      p->src.values == p->out.values)
    return CLPRIM_SUCCESS; /* one run, already in place */
  size_t *bound = malloc((p->runs + 1) * sizeof *bound);
  if (!bound) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  memcpy(bound, p->offsets, (p->runs + 1) * sizeof *bound);
  size_t count = p->runs;
  struct clprim_merge_place from = p->src;
  clprim_status st = CLPRIM_SUCCESS;
  for (unsigned i = 1; i <= (rounds ? rounds : 1) && st == CLPRIM_SUCCESS; ++i) {
    const struct clprim_merge_place to = i >= rounds ? p->out : i % 2 ? p->a : p->b;
    size_t merged = 0;
    for (size_t r = 0; r < count && st == CLPRIM_SUCCESS; r += 2, ++merged) {
      const size_t end = r + 2 <= count ? bound[r + 2] : bound[r + 1];
      struct clprim_merge_runs m;
      memset(&m, 0, sizeof m);
      m.type = p->type, m.value_size = p->value_size, m.descending = p->descending;
      m.a = m.b = from.keys, m.a_values = m.b_values = from.values;
      m.out = to.keys, m.out_values = to.values;
      m.a_at = from.at + bound[r], m.na = bound[r + 1] - bound[r];
      m.b_at = from.at + bound[r + 1], m.nb = end - bound[r + 1];
      m.out_at = to.at + bound[r];
      st = clprim__merge(ctx, &m);
      bound[merged] = bound[r];
    }
    bound[merged] = bound[count];
    count = merged;
    from = to;
  }
  free(bound);
  return st;
}

/* One public call: keys alone, or pairs. */
struct merge_call {
  const char *name;
  size_t na, nb;
  clprim_type type;
  clprim_buffer a, b;
  int pairs;
  clprim_type value_type; /* pairs */
  clprim_buffer a_values, b_values;
  unsigned flags;
  clprim_buffer out, out_values;
};

/* The checks every merge call starts with: the key type, the value type
 * (pairs), the flags. */
static clprim_status check_kinds(clprim_context *ctx, int pairs, clprim_type type,
                                 clprim_type value_type, unsigned flags) {
  CLPRIM_CHECK(clprim__check_type(ctx, pairs ? "key_type" : "type", type));
  if (pairs && (unsigned)value_type >= CLPRIM_TYPE_COUNT)
    return clprim__invalid(ctx, "value_type (%d) is not a clprim_type", (int)value_type);
  return clprim__check_flags(ctx, flags, CLPRIM_SORT_DESCENDING);
}

static clprim_status merge(clprim_context *ctx, const struct merge_call *c) {
  const int pairs = c->pairs;
  CLPRIM_CHECK(check_kinds(ctx, pairs, c->type, c->value_type, c->flags));
  if (c->na > SIZE_MAX - c->nb)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "na + nb (%zu + %zu) is above SIZE_MAX",
                        c->na, c->nb);
  const size_t es = clprim_type_size(c->type), total = c->na + c->nb;
  const size_t vs = pairs ? clprim_type_size(c->value_type) : 0;
  struct clprim_merge_runs m;
  memset(&m, 0, sizeof m);
  m.type = c->type, m.value_size = vs;
  m.na = c->na, m.nb = c->nb;
  m.descending = (c->flags & CLPRIM_SORT_DESCENDING) != 0;
  const char *a_name = pairs ? "keys_a" : "a", *b_name = pairs ? "keys_b" : "b";
  CLPRIM_CHECK(clprim__range(ctx, a_name, c->a, es, c->na, CLPRIM__READ, &m.a));
  CLPRIM_CHECK(clprim__range(ctx, b_name, c->b, es, c->nb, CLPRIM__READ, &m.b));
  if (pairs) {
    CLPRIM_CHECK(clprim__range(ctx, "values_a", c->a_values, vs, c->na, CLPRIM__READ, &m.a_values));
    CLPRIM_CHECK(clprim__range(ctx, "values_b", c->b_values, vs, c->nb, CLPRIM__READ, &m.b_values));
  }
  CLPRIM_CHECK(clprim__range(ctx, pairs ? "keys_out" : "out", c->out, es, total, CLPRIM__OUT_ALL,
                             &m.out));
  if (pairs)
    CLPRIM_CHECK(clprim__range(ctx, "values_out", c->out_values, vs, total, CLPRIM__OUT_ALL,
                               &m.out_values));
  return clprim__merge(ctx, &m);
}

static clprim_status merge_call(clprim_context *ctx, const struct merge_call *c) {
  CLPRIM_CHECK(clprim__call_begin(ctx, c->name));
  return clprim__call_end(ctx, merge(ctx, c));
}

clprim_status clprim_merge_keys(clprim_context *ctx, size_t na, size_t nb, clprim_type type,
                                clprim_buffer a, clprim_buffer b, unsigned flags,
                                clprim_buffer out) {
  const struct merge_call c = {"merge_keys", na, nb,        type,      a,     b,   0,
                               CLPRIM_INT32, {NULL, 0}, {NULL, 0}, flags, out, {NULL, 0}};
  return merge_call(ctx, &c);
}

clprim_status clprim_merge_pairs(clprim_context *ctx, size_t na, size_t nb, clprim_type key_type,
                                 clprim_buffer keys_a, clprim_buffer keys_b,
                                 clprim_type value_type, clprim_buffer values_a,
                                 clprim_buffer values_b, unsigned flags, clprim_buffer keys_out,
                                 clprim_buffer values_out) {
  const struct merge_call c = {"merge_pairs", na,       nb,       key_type, keys_a,   keys_b,  1,
                               value_type,    values_a, values_b, flags,    keys_out, values_out};
  return merge_call(ctx, &c);
}

/* ------------------------------------------------------------ k runs */
#define SLOT_ROUND_A "merge: round a keys"
#define SLOT_ROUND_A_VALUES "merge: round a values"
#define SLOT_ROUND_B "merge: round b keys"
#define SLOT_ROUND_B_VALUES "merge: round b values"

/* One public call over k runs: keys alone, or pairs. */
struct runs_call {
  const char *name;
  size_t n;
  clprim_type type;
  clprim_buffer keys;
  int pairs;
  clprim_type value_type; /* pairs */
  clprim_buffer values;
  size_t runs;
  const uint64_t *offsets;
  unsigned flags;
  clprim_buffer out, out_values;
};

/* A scratch place for the rounds: n keys (and values). */
static clprim_status round_place(clprim_context *ctx, const char *keys_slot,
                                 const char *values_slot, size_t n, size_t es, size_t vs,
                                 struct clprim_merge_place *place) {
  memset(place, 0, sizeof *place);
  CLPRIM_CHECK(clprim__scratch(ctx, keys_slot, n * es, &place->keys));
  if (vs) CLPRIM_CHECK(clprim__scratch(ctx, values_slot, n * vs, &place->values));
  return CLPRIM_SUCCESS;
}

static clprim_status merge_runs(clprim_context *ctx, const struct runs_call *c, size_t *bound) {
  const int pairs = c->pairs;
  CLPRIM_CHECK(check_kinds(ctx, pairs, c->type, c->value_type, c->flags));
  if (c->runs == 0 && c->n != 0) return clprim__invalid(ctx, "runs is 0 but n is %zu", c->n);
  if (c->runs > 0 && !c->offsets) return clprim__invalid(ctx, "offsets is NULL");
  for (size_t r = 0; r <= c->runs && c->runs > 0; ++r) {
    const uint64_t o = c->offsets[r];
    if ((r == 0 && o != 0) || (r > 0 && o < c->offsets[r - 1]) || o > c->n ||
        (r == c->runs && o != c->n))
      return clprim__invalid(ctx,
                             "offsets[%zu] (%llu): offsets must start at 0, not decrease and "
                             "end at n (%zu)",
                             r, (unsigned long long)o, c->n);
    bound[r] = (size_t)o;
  }
  const size_t es = clprim_type_size(c->type), vs = pairs ? clprim_type_size(c->value_type) : 0;
  struct clprim_merge_rounds p;
  memset(&p, 0, sizeof p);
  p.type = c->type, p.value_size = vs, p.runs = c->runs, p.offsets = bound;
  p.descending = (c->flags & CLPRIM_SORT_DESCENDING) != 0;
  CLPRIM_CHECK(clprim__range(ctx, "keys", c->keys, es, c->n, CLPRIM__READ, &p.src.keys));
  if (pairs)
    CLPRIM_CHECK(clprim__range(ctx, "values", c->values, vs, c->n, CLPRIM__READ, &p.src.values));
  CLPRIM_CHECK(clprim__range(ctx, pairs ? "keys_out" : "out", c->out, es, c->n, CLPRIM__OUT_ALL,
                             &p.out.keys));
  if (pairs)
    CLPRIM_CHECK(clprim__range(ctx, "values_out", c->out_values, vs, c->n, CLPRIM__OUT_ALL,
                               &p.out.values));
  if (c->n == 0) return CLPRIM_SUCCESS;
  const unsigned rounds = clprim__merge_round_count(c->runs);
  if (rounds >= 2)
    CLPRIM_CHECK(round_place(ctx, SLOT_ROUND_A, SLOT_ROUND_A_VALUES, c->n, es, vs, &p.a));
  if (rounds >= 3)
    CLPRIM_CHECK(round_place(ctx, SLOT_ROUND_B, SLOT_ROUND_B_VALUES, c->n, es, vs, &p.b));
  return clprim__merge_rounds(ctx, &p);
}

static clprim_status runs_call(clprim_context *ctx, const struct runs_call *c) {
  CLPRIM_CHECK(clprim__call_begin(ctx, c->name));
  size_t *bound = malloc((c->runs + 1) * sizeof *bound);
  clprim_status st = bound ? merge_runs(ctx, c, bound) : CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  free(bound);
  return clprim__call_end(ctx, st);
}

clprim_status clprim_merge_runs_keys(clprim_context *ctx, size_t n, clprim_type type,
                                     clprim_buffer keys, size_t runs, const uint64_t *offsets,
                                     unsigned flags, clprim_buffer out) {
  const struct runs_call c = {"merge_runs_keys", n,    type,    keys,  0,   CLPRIM_INT32,
                              {NULL, 0},         runs, offsets, flags, out, {NULL, 0}};
  return runs_call(ctx, &c);
}

clprim_status clprim_merge_runs_pairs(clprim_context *ctx, size_t n, clprim_type key_type,
                                      clprim_buffer keys, clprim_type value_type,
                                      clprim_buffer values, size_t runs, const uint64_t *offsets,
                                      unsigned flags, clprim_buffer keys_out,
                                      clprim_buffer values_out) {
  const struct runs_call c = {"merge_runs_pairs", n,    key_type, keys,  1,        value_type,
                              values,             runs, offsets,  flags, keys_out, values_out};
  return runs_call(ctx, &c);
}

/* Dry runs (core/prebuild.c): keys alone and with 4- and 8-byte values
 * (the descending order shares the programs). */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const size_t half = d->n / 2;
  const clprim_buffer in = clprim_buf(d->in), in2 = clprim_buf(d->in2);
  const clprim_buffer out = clprim_buf(d->out), out2 = clprim_buf(d->out2);
  clprim_merge_keys(ctx, half, half, t, in, in2, 0, out);
  clprim_merge_pairs(ctx, half / 2, half / 2, t, in, clprim_buf_at(d->in, half / 2), CLPRIM_UINT32,
                     in2, clprim_buf_at(d->in2, half / 2), 0, out, out2);
  clprim_merge_pairs(ctx, half / 2, half / 2, t, in, clprim_buf_at(d->in, half / 2), CLPRIM_UINT64,
                     in2, clprim_buf_at(d->in2, half / 2), 0, out, out2);
}
