/* scan.c: the device-wide prefix sum (kernels scan_* in cl/scan.cl), for the
 * scan family and for every engine and family that scans (counts, offsets).
 *
 * nv_ptx runs the single-pass decoupled look-back scan (one read, one write
 * of the data); every other path runs reduce-then-scan with the tile sums
 * scanned recursively (two reads, one write). */
#include "scan.h"
#include "lookback.h"

#include <string.h>

struct scan_config {
  unsigned wg;    /* work-items per work-group (a power of two) */
  unsigned items; /* consecutive elements per work-item */
  int single_pass;
};

/* The scan engine's knobs and table (docs/TUNING.md). */
enum { SCAN_WG, SCAN_ITEMS, SCAN_SINGLE_PASS };
static const struct clprim_knob scan_knobs[] = {
    {"wg", 32, 1024}, {"items", 4, 64}, {"single_pass", 0, 1}};
#define GPU CL_DEVICE_TYPE_GPU
#define CPU CL_DEVICE_TYPE_CPU
#define NV (1u << CLPRIM_PATH_NV_PTX)
#define K CLPRIM__KNOB
static const struct clprim_tuning_row scan_table[] = {
    {0, 0, NULL, 0, 0, K(SCAN_WG) | K(SCAN_ITEMS) | K(SCAN_SINGLE_PASS), {256, 8, 0},
     "portable: 256 work-items of 8 4-byte elements, reduce-then-scan"},
    {0, 0, NULL, 8, 0, K(SCAN_ITEMS), {0, 4}, "portable: 4 8-byte elements"},
    {0, CPU, NULL, 0, 0, K(SCAN_WG) | K(SCAN_ITEMS), {64, 16},
     "CPUs: small work-groups, long runs per work-item"},
    {NV, 0, NULL, 0, 0, K(SCAN_ITEMS) | K(SCAN_SINGLE_PASS), {0, 32, 1},
     "nv_ptx: single pass, 128 bytes a work-item (H100, 2^28 int32: 0.94 ms, 1.02 with 64)"},
    {NV, 0, NULL, 8, 0, K(SCAN_ITEMS), {0, 16}, "nv_ptx: 128 bytes a work-item"},
};
const struct clprim_family clprim__engine_scan = {
    "scan", scan_knobs, 3, scan_table, sizeof scan_table / sizeof scan_table[0], 0, NULL};

/* The cpu path (cl/scan.cl): tiles of 256 elements, a work-item per
 * contiguous share of them (clprim__cpu_shares). */
#define CPU_TILE 256u

static struct scan_config scan_config(const clprim_context *ctx, clprim_type type) {
  if (ctx->info.path == CLPRIM_PATH_CPU) {
    struct scan_config c = {1, CPU_TILE, 0};
    return c;
  }
  long long v[3];
  clprim__tuned(ctx, &clprim__engine_scan, (unsigned)clprim_type_size(type), 0, v);
  /* A power-of-two group size (whole warps on nv_ptx), a multiple of 4
   * items (4-vectors). */
  struct scan_config c = {256, 8, v[SCAN_SINGLE_PASS] == 1};
  if ((v[SCAN_WG] & (v[SCAN_WG] - 1)) == 0) c.wg = (unsigned)v[SCAN_WG];
  if (v[SCAN_ITEMS] % 4 == 0) c.items = (unsigned)v[SCAN_ITEMS];
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
  /* The cpu path: "tiles" are the work-items' shares (cl/scan.cl). */
  const size_t tiles = ctx->info.path == CLPRIM_PATH_CPU ? clprim__cpu_shares(ctx, n, tile)
                                                          : n / tile + (n % tile != 0);
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

