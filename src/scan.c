/* scan.c: exclusive and inclusive prefix sums (kernels in cl/scan.cl).
 *
 * nv_ptx runs the single-pass decoupled look-back scan (one read, one write
 * of the data); every other path runs reduce-then-scan with the tile sums
 * scanned recursively (two reads, one write). */
#include "internal.h"

#include <string.h>

struct scan_config {
  unsigned wg;    /* work-items per work-group (a power of two) */
  unsigned items; /* consecutive elements per work-item */
  int single_pass;
};

static struct scan_config scan_config(const clprim_context *ctx, clprim_type type) {
  size_t elem = clprim_type_size(type);
  struct scan_config c = {256, elem == 4 ? 8 : 4, 0};
  if (ctx->info.path == CLPRIM_PATH_NV_PTX) {
    /* 128 bytes per work-item: the fastest measured on the H100 (against
     * 64; docs/TUNING.md). */
    c.items = elem == 4 ? 32 : 16;
    c.single_pass = 1;
  } else if (!(ctx->info.device_type & CL_DEVICE_TYPE_GPU)) {
    c.wg = 64; /* CPUs: small groups, long runs per work-item */
    c.items = 16;
  }
  /* Overrides (docs/TUNING.md): a power-of-two group size of at least 32
   * (whole warps on nv_ptx), a positive multiple of 4 items (4-vectors). */
  const long long wg = ctx->tuning[CLPRIM_KNOB_SCAN_WG], items = ctx->tuning[CLPRIM_KNOB_SCAN_ITEMS];
  if (wg >= 32 && wg <= 1024 && (wg & (wg - 1)) == 0) c.wg = (unsigned)wg;
  if (items > 0 && items <= 64 && items % 4 == 0) c.items = (unsigned)items;
  if (ctx->tuning[CLPRIM_KNOB_SCAN_SINGLE_PASS] == 0) c.single_pass = 0;
  c.wg = clprim__fit_wg(ctx, c.wg);
  return c;
}

size_t clprim__scan_tile(const clprim_context *ctx, clprim_type type) {
  struct scan_config c = scan_config(ctx, type);
  return (size_t)c.wg * c.items;
}

struct scan_kernels {
  cl_kernel reduce, tiles, single_pass;
  struct scan_config config;
  size_t elem;
};

/* One level: scans n elements of in into out, recursing on tile sums. */
static clprim_status scan_level(clprim_context *ctx, const struct scan_kernels *k, cl_mem in,
                                cl_mem out, size_t n, int inclusive, unsigned level) {
  const size_t tile = (size_t)k->config.wg * k->config.items;
  const size_t tiles = n / tile + (n % tile != 0);
  cl_ulong n64 = n;
  cl_int inc = inclusive;

  if (tiles == 1) {
    cl_int no_offsets = 0;
    CLPRIM_CHECK(clprim__set_args(k->tiles, 6, sizeof in, &in, sizeof out, &out, sizeof n64, &n64,
                                  sizeof in, &in, sizeof no_offsets, &no_offsets, sizeof inc,
                                  &inc));
    return clprim__enqueue(ctx, k->tiles, 1, k->config.wg);
  }

  if (k->config.single_pass) {
    cl_mem state;
    CLPRIM_CHECK(clprim__lookback_state(ctx, "scan: tile states", tiles, (unsigned)k->elem * 8,
                                        &state));
    cl_uint tiles32 = (cl_uint)tiles;
    CLPRIM_CHECK(clprim__set_args(k->single_pass, 6, sizeof in, &in, sizeof out, &out, sizeof n64,
                                  &n64, sizeof state, &state, sizeof tiles32, &tiles32, sizeof inc,
                                  &inc));
    return clprim__enqueue(ctx, k->single_pass, tiles, k->config.wg);
  }

  cl_mem sums;
  cl_int use_offsets = 1;
  char name[32]; /* each level of the recursion its own tile sums */
  snprintf(name, sizeof name, "scan: tile sums %u", level);
  CLPRIM_CHECK(clprim__scratch(ctx, name, tiles * k->elem, &sums));
  CLPRIM_CHECK(
      clprim__set_args(k->reduce, 3, sizeof in, &in, sizeof n64, &n64, sizeof sums, &sums));
  CLPRIM_CHECK(clprim__enqueue(ctx, k->reduce, tiles, k->config.wg));
  CLPRIM_CHECK(scan_level(ctx, k, sums, sums, tiles, 0, level + 1));
  CLPRIM_CHECK(clprim__set_args(k->tiles, 6, sizeof in, &in, sizeof out, &out, sizeof n64, &n64,
                                sizeof sums, &sums, sizeof use_offsets, &use_offsets, sizeof inc,
                                &inc));
  return clprim__enqueue(ctx, k->tiles, tiles, k->config.wg);
}

clprim_status clprim__scan(clprim_context *ctx, clprim_type type, cl_mem in, cl_mem out, size_t n,
                           int inclusive) {
  if (n == 0) return CLPRIM_SUCCESS;
  struct scan_kernels k;
  memset(&k, 0, sizeof k);
  k.config = scan_config(ctx, type);
  k.elem = clprim_type_size(type);
  /* Signed and unsigned integers share a program: the sums have the same bits. */
  static const char *const program_type[CLPRIM_TYPE_COUNT] = {"uint",  "uint",  "ulong",
                                                              "ulong", "float", "double"};
  char options[128];
  snprintf(options, sizeof options, "-DT=%s -DT_BITS=%u -DWG=%u -DITEMS=%u", program_type[type],
           (unsigned)k.elem * 8, k.config.wg, k.config.items);
  /* The kernels this scan runs, built before anything is enqueued: one tile
   * needs scan_tiles alone, the single pass scan_single_pass, else
   * reduce-then-scan both of its kernels. */
  const size_t tile = (size_t)k.config.wg * k.config.items;
  struct clprim_kernel_request req[2] = {
      {"scan.cl", NULL, options, "scan_tiles", NULL, &k.tiles, NULL, NULL},
      {"scan.cl", NULL, options, "scan_reduce", NULL, &k.reduce, NULL, NULL}};
  if (n > tile && k.config.single_pass) req[0].name = "scan_single_pass", req[0].kernel = &k.single_pass;
  CLPRIM_CHECK(clprim__kernels(ctx, req, n <= tile || k.config.single_pass ? 1 : 2));
  return scan_level(ctx, &k, in, out, n, inclusive, 0);
}

static clprim_status scan_public(clprim_context *ctx, size_t n, clprim_type type,
                                 clprim_buffer in, clprim_buffer out, int inclusive) {
  CLPRIM_CHECK(clprim__check_type(ctx, type));
  const size_t es = clprim_type_size(type);
  cl_mem in_mem, out_mem;
  CLPRIM_CHECK(clprim__range(ctx, in, es, n, CLPRIM__READ, &in_mem));
  CLPRIM_CHECK(clprim__range(ctx, out, es, n, CLPRIM__OUT_ALL | CLPRIM__SAME_OK, &out_mem));
  return clprim__scan(ctx, type, in_mem, out_mem, n, inclusive);
}

clprim_status clprim_scan_exclusive(clprim_context *ctx, size_t n, clprim_type type,
                                    clprim_buffer in, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx));
  return clprim__call_end(ctx, scan_public(ctx, n, type, in, out, 0));
}

clprim_status clprim_scan_inclusive(clprim_context *ctx, size_t n, clprim_type type,
                                    clprim_buffer in, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx));
  return clprim__call_end(ctx, scan_public(ctx, n, type, in, out, 1));
}

/* ------------------------------------------------------------ scan by key */
/* Sums of values that restart at each run head of the keys (kernels sbk_*
 * in cl/scan.cl): the single pass with look-back on nv_ptx, elsewhere the
 * tiles' carries, their scan, then each tile from its carry. */
#define SLOT_SBK_FLAGS "scan by key: tile flags"
#define SLOT_SBK_SUMS "scan by key: tile sums"
#define SLOT_SBK_CARRY "scan by key: tile carries"

/* Keys and values per work-item: 16, or 8 when either is 8 bytes wide
 * (16 measured fastest on the H100 for uint32 keys and float values: 1.51
 * ms for 2^28 against 1.59 at 8, 1.62 at 24, 1.72 at 32);
 * $CLPRIM_SCAN_ITEMS (a multiple of 4, at most that) to compare. */
static unsigned sbk_items(const clprim_context *ctx, clprim_type key_type,
                          clprim_type value_type) {
  const size_t ks = clprim_type_size(key_type), vs = clprim_type_size(value_type);
  unsigned items = ks == 8 || vs == 8 ? 8u : 16u;
  const long long knob = ctx->tuning[CLPRIM_KNOB_SCAN_ITEMS];
  if (knob >= 4 && knob <= items && knob % 4 == 0) items = (unsigned)knob;
  return items;
}

size_t clprim__scan_by_key_tile(const clprim_context *ctx, clprim_type key_type,
                                clprim_type value_type) {
  return (size_t)clprim__launch(ctx).wg * sbk_items(ctx, key_type, value_type);
}

static clprim_status scan_by_key(clprim_context *ctx, size_t n, clprim_type key_type,
                                 clprim_buffer keys_range, clprim_type value_type,
                                 clprim_buffer values_range, clprim_buffer out_range,
                                 int inclusive) {
  CLPRIM_CHECK(clprim__check_type(ctx, key_type));
  CLPRIM_CHECK(clprim__check_type(ctx, value_type));
  const size_t ks = clprim_type_size(key_type), vs = clprim_type_size(value_type);
  cl_mem keys, values, out;
  CLPRIM_CHECK(clprim__range(ctx, keys_range, ks, n, CLPRIM__READ, &keys));
  CLPRIM_CHECK(clprim__range(ctx, values_range, vs, n, CLPRIM__READ, &values));
  CLPRIM_CHECK(clprim__range(ctx, out_range, vs, n, CLPRIM__OUT_ALL | CLPRIM__SAME_OK, &out));
  if (n && out == keys) return CLPRIM_ERROR_INVALID_ARGUMENT; /* in place is for the values */
  if (n == 0) return CLPRIM_SUCCESS;

  static const char *const program_type[CLPRIM_TYPE_COUNT] = {"uint",  "uint",  "ulong",
                                                              "ulong", "float", "double"};
  const unsigned wg = clprim__launch(ctx).wg, items = sbk_items(ctx, key_type, value_type);
  const size_t tile = (size_t)wg * items, tiles = n / tile + (n % tile != 0);
  if (tiles > UINT32_MAX) return CLPRIM_ERROR_SIZE_TOO_LARGE;
  const int single = tiles > 1 && ctx->info.path == CLPRIM_PATH_NV_PTX &&
                     ctx->tuning[CLPRIM_KNOB_SCAN_SINGLE_PASS] != 0;
  char options[160];
  snprintf(options, sizeof options, "-DT=%s -DT_BITS=%u -DK_T=%s -DWG=%u -DITEMS=%u",
           program_type[value_type], (unsigned)vs * 8, clprim__cl_type(key_type), wg, items);
  cl_kernel carry_k = NULL, carry_scan_k = NULL, tiles_k = NULL, single_k = NULL;
  struct clprim_kernel_request req[3] = {
      {"scan.cl", NULL, options, "sbk_tiles", NULL, &tiles_k, NULL, NULL},
      {"scan.cl", NULL, options, "sbk_carry", NULL, &carry_k, NULL, NULL},
      {"scan.cl", NULL, options, "sbk_carry_scan", NULL, &carry_scan_k, NULL, NULL}};
  if (single) req[0].name = "sbk_single_pass", req[0].kernel = &single_k;
  CLPRIM_CHECK(clprim__kernels(ctx, req, single || tiles == 1 ? 1 : 3));
  const cl_ulong n64 = n;
  const cl_int inc = inclusive;
  if (single) {
    cl_mem state;
    CLPRIM_CHECK(clprim__lookback_state(ctx, "scan by key: tile states", tiles, (unsigned)vs * 8,
                                        &state));
    const cl_uint tiles32 = (cl_uint)tiles;
    CLPRIM_CHECK(clprim__set_args(single_k, 7, sizeof keys, &keys, sizeof values, &values,
                                  sizeof out, &out, sizeof n64, &n64, sizeof state, &state,
                                  sizeof tiles32, &tiles32, sizeof inc, &inc));
    return clprim__enqueue(ctx, single_k, tiles, wg);
  }
  cl_mem carry = values; /* unused with one tile */
  cl_int use_carry = tiles > 1;
  if (tiles > 1) {
    cl_mem flags, sums;
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_SBK_FLAGS, tiles * 4, &flags));
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_SBK_SUMS, tiles * vs, &sums));
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_SBK_CARRY, tiles * vs, &carry));
    const cl_ulong tiles64 = tiles;
    CLPRIM_CHECK(clprim__set_args(carry_k, 5, sizeof keys, &keys, sizeof values, &values,
                                  sizeof n64, &n64, sizeof flags, &flags, sizeof sums, &sums));
    CLPRIM_CHECK(clprim__enqueue(ctx, carry_k, tiles, wg));
    CLPRIM_CHECK(clprim__set_args(carry_scan_k, 4, sizeof flags, &flags, sizeof sums, &sums,
                                  sizeof tiles64, &tiles64, sizeof carry, &carry));
    CLPRIM_CHECK(clprim__enqueue(ctx, carry_scan_k, 1, wg));
  }
  CLPRIM_CHECK(clprim__set_args(tiles_k, 7, sizeof keys, &keys, sizeof values, &values,
                                sizeof out, &out, sizeof n64, &n64, sizeof carry, &carry,
                                sizeof use_carry, &use_carry, sizeof inc, &inc));
  return clprim__enqueue(ctx, tiles_k, tiles, wg);
}

clprim_status clprim_scan_inclusive_by_key(clprim_context *ctx, size_t n, clprim_type key_type,
                                           clprim_buffer keys, clprim_type value_type,
                                           clprim_buffer values, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx));
  return clprim__call_end(
      ctx, scan_by_key(ctx, n, key_type, keys, value_type, values, out, 1));
}

clprim_status clprim_scan_exclusive_by_key(clprim_context *ctx, size_t n, clprim_type key_type,
                                           clprim_buffer keys, clprim_type value_type,
                                           clprim_buffer values, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx));
  return clprim__call_end(
      ctx, scan_by_key(ctx, n, key_type, keys, value_type, values, out, 0));
}
