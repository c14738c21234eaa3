/* scan.c: the scan family: exclusive and inclusive prefix sums (the scan
 * engine, src/engine/scan.c), exact ones (CLPRIM_EXACT: kernels xscan_* in
 * cl/scan.cl over the exact accumulator, src/engine/exact.c) and sums by
 * key (kernels sbk_* in cl/scan.cl). On nv_ptx, scan by key runs a single
 * pass with look-back; elsewhere the tiles' carries, their scan, then each
 * tile from its carry. */
#include "scan.h"
#include "engine/exact.h"
#include "engine/lookback.h"
#include "engine/scan.h"

#include <string.h>

/* ------------------------------------------------------------ exact scans */
/* CLPRIM_EXACT (cl/scan.cl's section "exact scans" has the method): chunks
 * of consecutive elements, a work-item a chunk; a record of each chunk's
 * exact sum; the records' exclusive scan in blocks; then each chunk's
 * prefixes from its record, each rounded once. */
#define SLOT_XSCAN_RECORDS "scan: exact chunk records"
#define SLOT_XSCAN_BLOCKS "scan: exact block sums"
#define XSCAN_KERNELS "xscan_chunks xscan_blocks xscan_block_scan xscan_block_apply xscan_out"
/* Elements a chunk (the records' scratch is 13 words a chunk for float, 69
 * for double: 10% and 27% of the data at 256); the records' scan takes
 * blocks of at least XSCAN_PER_BLOCK records, at most XSCAN_BLOCKS of them
 * (one work-group scans the blocks' sums, a word a work-item). */
#define XSCAN_CHUNK 256u
#define XSCAN_PER_BLOCK 32u
#define XSCAN_BLOCKS 1024u
/* At most this many chunks (larger chunks beyond), and elements a chunk:
 * sums of the records' digits (each below 2^32), and then of a chunk's
 * elements' digits, stay below 2^62 and 2^63. */
#define XSCAN_MAX_CHUNKS ((size_t)1 << 30)
#define XSCAN_MAX_CHUNK ((size_t)1 << 30)


size_t clprim__scan_exact_chunk(const clprim_context *ctx, size_t n) {
  /* The cpu path: a chunk a share of the cores' (clprim__cpu_stream_shares). */
  size_t chunk = ctx->info.path == CLPRIM_PATH_CPU
                     ? clprim__div_up(n, clprim__cpu_stream_shares(ctx, n))
                     : XSCAN_CHUNK;
  if (chunk == 0) chunk = 1;
  if (chunk > XSCAN_MAX_CHUNK) chunk = XSCAN_MAX_CHUNK;
  if (n / chunk >= XSCAN_MAX_CHUNKS) chunk = n / XSCAN_MAX_CHUNKS + 1;
  return chunk;
}

size_t clprim__scan_exact_per_block(size_t chunks) {
  const size_t per_block = clprim__div_up(chunks, XSCAN_BLOCKS);
  return per_block < XSCAN_PER_BLOCK ? XSCAN_PER_BLOCK : per_block;
}

static clprim_status exact_scan(clprim_context *ctx, clprim_type type, cl_mem in, cl_mem out,
                                size_t n, int inclusive) {
  if (n == 0) return CLPRIM_SUCCESS;
  const unsigned wg = ctx->info.path == CLPRIM_PATH_CPU ? 1u : clprim__launch(ctx).wg;
  const size_t chunk = clprim__scan_exact_chunk(ctx, n);
  const size_t chunks = clprim__div_up(n, chunk), words = clprim__exact_record_words(type);
  char options[192];
  snprintf(options, sizeof options, "-DT=%s -DT_BITS=%u -DT_FLOAT=1 -DWG=%u", clprim__cl_type(type),
           (unsigned)clprim_type_size(type) * 8, wg);
  clprim__exact_options(ctx, options + strlen(options), sizeof options - strlen(options));
  enum { CHUNKS, BLOCKS, BLOCK_SCAN, BLOCK_APPLY, OUT };
  static const char *const names[5] = {"xscan_chunks", "xscan_blocks", "xscan_block_scan",
                                       "xscan_block_apply", "xscan_out"};
  cl_kernel k[5];
  struct clprim_kernel_request req[5];
  for (unsigned j = 0; j < 5; ++j) {
    const struct clprim_kernel_request r = {"scan.cl",     NULL,  options, names[j],
                                            XSCAN_KERNELS, &k[j], NULL,    XSCAN_KERNELS};
    req[j] = r;
  }
  /* One chunk: xscan_out alone, from nothing. */
  CLPRIM_CHECK(clprim__kernels(ctx, chunks > 1 ? req : req + OUT, chunks > 1 ? 5 : 1));
  const cl_ulong n64 = n, chunk64 = chunk, chunks64 = chunks;
  const cl_int use_prefix = chunks > 1, inc = inclusive;
  cl_mem records = in; /* unused with one chunk */
  if (chunks > 1) {
    const size_t per_block = clprim__scan_exact_per_block(chunks);
    const size_t blocks = clprim__div_up(chunks, per_block);
    const cl_ulong per64 = per_block, blocks64 = blocks;
    cl_mem sums;
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_XSCAN_RECORDS, chunks * words * 8, &records));
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_XSCAN_BLOCKS, blocks * words * 8, &sums));
    CLPRIM_CHECK(clprim__set_args(k[CHUNKS], 5, sizeof in, &in, sizeof n64, &n64, sizeof chunk64,
                                  &chunk64, sizeof chunks64, &chunks64, sizeof records, &records));
    CLPRIM_CHECK(clprim__enqueue(ctx, k[CHUNKS], clprim__div_up(chunks, wg), wg));
    CLPRIM_CHECK(clprim__set_args(k[BLOCKS], 5, sizeof records, &records, sizeof chunks64,
                                  &chunks64, sizeof per64, &per64, sizeof blocks64, &blocks64,
                                  sizeof sums, &sums));
    CLPRIM_CHECK(clprim__enqueue(ctx, k[BLOCKS], clprim__div_up(blocks * words, wg), wg));
    CLPRIM_CHECK(
        clprim__set_args(k[BLOCK_SCAN], 2, sizeof sums, &sums, sizeof blocks64, &blocks64));
    CLPRIM_CHECK(clprim__enqueue(ctx, k[BLOCK_SCAN], 1, wg));
    CLPRIM_CHECK(clprim__set_args(k[BLOCK_APPLY], 5, sizeof records, &records, sizeof chunks64,
                                  &chunks64, sizeof per64, &per64, sizeof blocks64, &blocks64,
                                  sizeof sums, &sums));
    CLPRIM_CHECK(clprim__enqueue(ctx, k[BLOCK_APPLY], clprim__div_up(blocks * words, wg), wg));
  }
  CLPRIM_CHECK(clprim__set_args(k[OUT], 8, sizeof in, &in, sizeof out, &out, sizeof n64, &n64,
                                sizeof chunk64, &chunk64, sizeof chunks64, &chunks64,
                                sizeof records, &records, sizeof use_prefix, &use_prefix,
                                sizeof inc, &inc));
  return clprim__enqueue(ctx, k[OUT], clprim__div_up(chunks, wg), wg);
}

static clprim_status scan_public(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                                 unsigned flags, clprim_buffer out, int inclusive) {
  CLPRIM_CHECK(clprim__check_type(ctx, "type", type));
  CLPRIM_CHECK(clprim__check_flags(ctx, flags, CLPRIM_EXACT));
  const int exact = (flags & CLPRIM_EXACT) != 0;
  if (exact) CLPRIM_CHECK(clprim__exact_check(ctx, type, "type"));
  const size_t es = clprim_type_size(type);
  cl_mem in_mem, out_mem;
  CLPRIM_CHECK(clprim__range(ctx, "in", in, es, n, CLPRIM__READ, &in_mem));
  CLPRIM_CHECK(clprim__range(ctx, "out", out, es, n, CLPRIM__OUT_ALL | CLPRIM__SAME_OK, &out_mem));
  if (exact) return exact_scan(ctx, type, in_mem, out_mem, n, inclusive);
  return clprim__scan(ctx, type, in_mem, out_mem, n, inclusive);
}

clprim_status clprim_scan_exclusive(clprim_context *ctx, size_t n, clprim_type type,
                                    clprim_buffer in, unsigned flags, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "scan_exclusive"));
  return clprim__call_end(ctx, scan_public(ctx, n, type, in, flags, out, 0));
}

clprim_status clprim_scan_inclusive(clprim_context *ctx, size_t n, clprim_type type,
                                    clprim_buffer in, unsigned flags, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "scan_inclusive"));
  return clprim__call_end(ctx, scan_public(ctx, n, type, in, flags, out, 1));
}

/* ------------------------------------------------------------ scan by key */
/* Sums of values that restart at each run head of the keys (kernels sbk_*
 * in cl/scan.cl): the single pass with look-back on nv_ptx, elsewhere the
 * tiles' carries, their scan, then each tile from its carry. */
#define SLOT_SBK_FLAGS "scan by key: tile flags"
#define SLOT_SBK_SUMS "scan by key: tile sums"
#define SLOT_SBK_CARRY "scan by key: tile carries"

/* Scan by key's knobs and table: keys and values per work-item, and the
 * single pass on nv_ptx (0: its three kernels there too, to compare). */
enum { SBK_ITEMS, SBK_SINGLE_PASS };
static const struct clprim_knob sbk_knobs[] = {{"items", 4, 16}, {"single_pass", 0, 1}};
static const struct clprim_tuning_row sbk_table[] = {
    {0, 0, NULL, 0, 0, CLPRIM__KNOB(SBK_ITEMS) | CLPRIM__KNOB(SBK_SINGLE_PASS), {16, 0},
     "16 keys and values a work-item (H100, 2^28 uint32 keys, float values: 1.51 ms, 1.59 at 8, "
     "1.62 at 24, 1.72 at 32)"},
    {0, 0, NULL, 8, 0, CLPRIM__KNOB(SBK_ITEMS), {8}, "8 where keys or values are 8 bytes"},
    {0, 0, NULL, 0, 8, CLPRIM__KNOB(SBK_ITEMS), {8}, "8 where keys or values are 8 bytes"},
    {1u << CLPRIM_PATH_NV_PTX, 0, NULL, 0, 0, CLPRIM__KNOB(SBK_SINGLE_PASS), {0, 1},
     "nv_ptx: one pass with look-back"},
};

static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_scan = {
    "scan_by_key", sbk_knobs, 2, sbk_table, sizeof sbk_table / sizeof sbk_table[0], 0, prebuild};

static unsigned sbk_items(const clprim_context *ctx, clprim_type key_type,
                          clprim_type value_type) {
  long long v[2];
  clprim__tuned(ctx, &clprim__family_scan, (unsigned)clprim_type_size(key_type),
                (unsigned)clprim_type_size(value_type), v);
  return v[SBK_ITEMS] % 4 == 0 ? (unsigned)v[SBK_ITEMS] : 16u;
}

/* The cpu path (cl/scan.cl): a work-item per contiguous share
 * (clprim__cpu_shares), taken ITEMS at a time. */
static unsigned sbk_wg(const clprim_context *ctx) {
  return ctx->info.path == CLPRIM_PATH_CPU ? 1u : clprim__launch(ctx).wg;
}

size_t clprim__scan_by_key_tile(const clprim_context *ctx, clprim_type key_type,
                                clprim_type value_type) {
  return (size_t)sbk_wg(ctx) * sbk_items(ctx, key_type, value_type);
}

static clprim_status scan_by_key(clprim_context *ctx, size_t n, clprim_type key_type,
                                 clprim_buffer keys_range, clprim_type value_type,
                                 clprim_buffer values_range, clprim_buffer out_range,
                                 int inclusive) {
  CLPRIM_CHECK(clprim__check_type(ctx, "key_type", key_type));
  CLPRIM_CHECK(clprim__check_type(ctx, "value_type", value_type));
  const size_t ks = clprim_type_size(key_type), vs = clprim_type_size(value_type);
  cl_mem keys, values, out;
  CLPRIM_CHECK(clprim__range(ctx, "keys", keys_range, ks, n, CLPRIM__READ, &keys));
  CLPRIM_CHECK(clprim__range(ctx, "values", values_range, vs, n, CLPRIM__READ, &values));
  CLPRIM_CHECK(
      clprim__range(ctx, "out", out_range, vs, n, CLPRIM__OUT_ALL | CLPRIM__SAME_OK, &out));
  if (n && out == keys) /* in place is for the values */
    return clprim__invalid(ctx, "out is the keys' range (in place is for the values)");
  if (n == 0) return CLPRIM_SUCCESS;

  static const char *const program_type[CLPRIM_TYPE_COUNT] = {"uint",  "uint",  "ulong",
                                                              "ulong", "float", "double"};
  const unsigned wg = sbk_wg(ctx), items = sbk_items(ctx, key_type, value_type);
  const size_t tile = (size_t)wg * items;
  /* The cpu path: "tiles" are the work-items' shares. */
  const size_t tiles = ctx->info.path == CLPRIM_PATH_CPU ? clprim__cpu_stream_shares(ctx, n)
                                                          : n / tile + (n % tile != 0);
  if (tiles > UINT32_MAX)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "n (%zu) needs more than 2^32 tiles", n);
  long long v[2];
  clprim__tuned(ctx, &clprim__family_scan, (unsigned)ks, (unsigned)vs, v);
  const int single = tiles > 1 && ctx->info.path == CLPRIM_PATH_NV_PTX && v[SBK_SINGLE_PASS] == 1;
  char options[160];
  snprintf(options, sizeof options, "-DT=%s -DT_BITS=%u -DK_T=%s -DWG=%u -DITEMS=%u",
           program_type[value_type], (unsigned)vs * 8,
           clprim__cl_type(clprim__key_build_type(key_type)), wg, items);
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
  CLPRIM_CHECK(clprim__call_begin(ctx, "scan_inclusive_by_key"));
  return clprim__call_end(
      ctx, scan_by_key(ctx, n, key_type, keys, value_type, values, out, 1));
}

clprim_status clprim_scan_exclusive_by_key(clprim_context *ctx, size_t n, clprim_type key_type,
                                           clprim_buffer keys, clprim_type value_type,
                                           clprim_buffer values, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "scan_exclusive_by_key"));
  return clprim__call_end(
      ctx, scan_by_key(ctx, n, key_type, keys, value_type, values, out, 0));
}

/* Dry runs (core/prebuild.c): one tile and several, scans (exact ones for
 * float and double) and scans by key (keys of the type, and uint32 keys,
 * with values of it). */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const size_t sizes[3] = {1, (size_t)1 << 16, d->n};
  const clprim_buffer in = clprim_buf(d->in), in2 = clprim_buf(d->in2), out = clprim_buf(d->out);
  for (int s = 0; s < 3; ++s) {
    clprim_scan_exclusive(ctx, sizes[s], t, in, 0, out);
    if (t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE)
      clprim_scan_inclusive(ctx, sizes[s], t, in, CLPRIM_EXACT, out);
    clprim_scan_inclusive_by_key(ctx, sizes[s], t, in, t, in2, out);
    clprim_scan_inclusive_by_key(ctx, sizes[s], CLPRIM_UINT32, in, t, in2, out);
  }
}
