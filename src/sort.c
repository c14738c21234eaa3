/* sort.c: radix sort of keys, pairs and argsort, and segmented sort
 * (kernels in cl/sort.cl, which describes the algorithm).
 *  - n up to one local-memory tile: sort_tile, one work-group, one launch;
 *  - else: sort_histogram (all digits in one read, and whether a float key
 *    is a NaN or -0.0, which sort_pass reads on the device: nothing comes
 *    back to the host, so the call only enqueues), then per digit pass
 *    sort_pass, with decoupled look-back on nv_ptx (Onesweep, below 2^30
 *    keys) or through clprim__count_scan_scatter elsewhere. Every pass of
 *    the bit range runs, also one whose digit is the same for every key
 *    (as CUB's; begin_bit and end_bit leave out bits known to be equal).
 * Passes alternate between two scratch copies, and the last one writes the
 * output (its only writer). */
#include "sort.h"
#include "engine/count_scan_scatter.h"
#include "../cl/internal/layout.h"

#include <stdlib.h>
#include <string.h>

/* Scratch buffers of this family. */
#define SLOT_KEYS "sort: keys"             /* keys between passes */
#define SLOT_VALUES "sort: values"         /* values between passes */
#define SLOT_KEYS_B "sort: keys B"         /* the second copy of each */
#define SLOT_VALUES_B "sort: values B"
#define SLOT_KEYS_OUT "sort: argsort keys" /* argsort without keys_out */
#define SLOT_HIST "sort: histogram"        /* SORT_RADIX counts per pass (low, high), 2 words */
#define SLOT_STARTS "sort: digit starts"   /* passes * SORT_RADIX ulongs */
#define SLOT_COUNTS "sort: tile counts"    /* SORT_RADIX * tiles + 1 offsets */
#define SLOT_STATE "sort: look-back"       /* LB_DIGIT_BYTES(tiles, SORT_RADIX) */
#define SLOT_CHECK "sort: segment check"   /* bad segment, long segments, longest short one */
#define SLOT_LONG "sort: long segments"    /* the long segments' ids */
#define SLOT_BOUNDS "sort: long bounds"    /* their begin and end offsets */

/* The largest n that Onesweep's 30-bit look-back counts take. */
#define ONESWEEP_MAX ((size_t)1 << 30)

static int is_gpu(const clprim_context *ctx) {
  return (ctx->info.device_type & CL_DEVICE_TYPE_GPU) != 0;
}

/* The bytes of an element of sort_pass's local exchange: a key or a value. */
static size_t xchg_bytes(clprim_type type, size_t value_size) {
  const size_t k = clprim_type_size(type);
  return value_size > k ? value_size : k;
}

/* The family's knobs and table (docs/TUNING.md). wg and items shape the
 * digit passes (sort_pass; sort_count and sort_histogram take the same),
 * tile_wg and tile_items sort_tile, which sorts up to one tile in one
 * work-group; ors: how nv_ptx's sort_pass finds a warp's keys with equal
 * digits (1 atomic ORs of lane bits into a local word per digit, 0 a
 * ballot per digit bit); onesweep 0: count, scan and scatter on nv_ptx too
 * (else the passes look back, Onesweep, up to 2^30 keys); small_max: the
 * most keys sort_tile takes alone (-1: one tile; tests set 0). */
enum { SORT_WG, SORT_ITEMS, SORT_TILE_WG, SORT_TILE_ITEMS, SORT_ORS, SORT_ONESWEEP,
       SORT_SMALL_MAX, SORT_KNOBS };
static const struct clprim_knob sort_knobs[SORT_KNOBS] = {
    {"wg", 32, 1024},      {"items", 4, 64}, {"tile_wg", 32, 1024}, {"tile_items", 4, 64},
    {"ors", 0, 1},         {"onesweep", 0, 1}, {"small_max", 0, (long long)1 << 16}};
#define K CLPRIM__KNOB
#define NV (1u << CLPRIM_PATH_NV_PTX)
#define NONE CLPRIM__NO_VALUES
static const struct clprim_tuning_row sort_table[] = {
    {0, 0, NULL, 0, 0, K(SORT_WG) | K(SORT_ITEMS) | K(SORT_TILE_WG) | K(SORT_TILE_ITEMS) | K(SORT_ORS) | K(SORT_ONESWEEP),
     {256, 16, 256, 16, 1, 1},
     "portable (measured on GPUs): 256 work-items of 16 keys (the local path, H100: pairs 14.62 ms against 18.56 with "
     "384 x 11, uint64 14.72 against 17.88 with 384 x 5)"},
    {0, CL_DEVICE_TYPE_CPU, NULL, 0, 0, K(SORT_WG) | K(SORT_ITEMS) | K(SORT_TILE_WG) | K(SORT_TILE_ITEMS),
     {64, 32, 64, 32}, "CPUs: the launch's work-group, 32 4-byte keys a work-item"},
    {0, CL_DEVICE_TYPE_CPU, NULL, 8, 0, K(SORT_ITEMS) | K(SORT_TILE_ITEMS), {[SORT_ITEMS] = 16, [SORT_TILE_ITEMS] = 16},
     "CPUs: 16 8-byte keys"},
    {0, CL_DEVICE_TYPE_CPU, NULL, 0, 8, K(SORT_ITEMS) | K(SORT_TILE_ITEMS), {[SORT_ITEMS] = 16, [SORT_TILE_ITEMS] = 16},
     "CPUs: 16 8-byte values"},
    {NV, 0, NULL, 4, NONE, K(SORT_WG) | K(SORT_ITEMS), {256, 32},
     "H200, 2026-11-28, 2^28 keys: uint32 5.16 ms, float 5.40 (256 x 24 5.36 / 5.58, 256 x 36 "
     "5.67, 384 x 20 5.44, 320 x 24 5.39); a cold first sort 130 ms longer than at 256 x 24"},
    {NV, 0, NULL, 8, NONE, K(SORT_WG) | K(SORT_ITEMS), {256, 20},
     "H200, 2026-11-28, 2^27 uint64: 7.64 ms (320 x 15 7.91, 256 x 18 7.95, 384 x 12 8.31)"},
    {NV, 0, NULL, 4, 4, K(SORT_WG) | K(SORT_ITEMS), {256, 44},
     "H200, 2026-11-28, 2^28 uint32 pairs: 7.22 ms, the largest tile in 48 KiB (256 x 40 7.37, "
     "256 x 30 7.71, 384 x 23 7.90; with ballots 8.28 at 512 x 16)"},
    {NV, 0, NULL, 4, 8, K(SORT_WG) | K(SORT_ITEMS) | K(SORT_ORS), {320, 12, [SORT_ORS] = 0},
     "8-byte values: ballots (ORs not measured), 320 x 12 (H100: a uint64 pass 1.152 ms, "
     "64 registers; 384 x 10 1.325, spilled)"},
    {NV, 0, NULL, 8, 4, K(SORT_WG) | K(SORT_ITEMS) | K(SORT_ORS), {320, 12, [SORT_ORS] = 0},
     "8-byte keys with values: ballots, 320 x 12 (H100)"},
    {NV, 0, NULL, 8, 8, K(SORT_WG) | K(SORT_ITEMS) | K(SORT_ORS), {320, 12, [SORT_ORS] = 0},
     "8-byte keys with values: ballots, 320 x 12 (H100)"},
    {NV, 0, "H100", 4, NONE, K(SORT_WG) | K(SORT_ITEMS), {384, 20},
     "H100, 2026-11-24: uint32 keys 5.73 ms at 384 x 20 (256 x 24 5.80)"},
    {NV, 0, "H100", 4, 4, K(SORT_WG) | K(SORT_ITEMS) | K(SORT_ORS), {384, 20, [SORT_ORS] = 0},
     "H100, 2026-11-23: pairs with ballots at 384 x 20 (ORs at 384 x 16 10.06 ms against 9.45)"},
};
#undef K
#undef NV
#undef NONE
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_sort = {
    "sort", sort_knobs, SORT_KNOBS, sort_table, sizeof sort_table / sizeof sort_table[0], 0,
    prebuild};

static void sort_knob_values(const clprim_context *ctx, clprim_type type, size_t value_size,
                             long long *v) {
  clprim__tuned(ctx, &clprim__family_sort, (unsigned)clprim_type_size(type), (unsigned)value_size,
                v);
}

/* Whether sort_pass keeps a local word per digit and 32-lane group to find
 * a warp's keys with equal digits (cl/sort.cl's PEER_WORDS): everywhere
 * but with nv_ptx's ballots. sort_tile keeps them on every path. */
static int pass_peer_words(const clprim_context *ctx, clprim_type type, size_t value_size) {
  long long v[SORT_KNOBS];
  sort_knob_values(ctx, type, value_size, v);
  return ctx->info.path != CLPRIM_PATH_NV_PTX || v[SORT_ORS] == 1;
}

/* Local memory of sort_pass (shared: its ranking's words share the
 * exchange buffer) or sort_tile with wg work-items of `items` keys
 * (cl/sort.cl's arrays: the exchange, the 32-lane groups' digit counts and,
 * with peer_words, their peer words, starts and places, scan scratch, the
 * tile id). sort_histogram needs less. */
static size_t local_bytes(unsigned wg, unsigned items, size_t xchg, int peer_words, int shared) {
  const size_t groups = wg / 32, exchange = (size_t)wg * items * xchg,
               ranking = groups * SORT_RADIX * 4 + (peer_words ? groups * SORT_RADIX * 4 : 4);
  return (shared ? (exchange > ranking ? exchange : ranking) : exchange + ranking) +
         SORT_RADIX * (4 + 8) + (size_t)wg * 8 + 64;
}

/* A kernel's shape: work-items per work-group, keys per work-item. */
struct shape {
  unsigned wg, items;
};

/* The shape of a kernel that ranks tiles (pass: sort_pass, else sort_tile,
 * which keeps peer words on every path; sort_count and sort_histogram take
 * the passes' shape): the table's, in steps of 32 work-items down to what
 * the device takes, with fewer keys per work-item where local memory is
 * short. */
static struct shape rank_shape(const clprim_context *ctx, clprim_type type, size_t value_size,
                               int pass) {
  const size_t x = xchg_bytes(type, value_size);
  const int peer_words = pass ? pass_peer_words(ctx, type, value_size) : 1;
  long long v[SORT_KNOBS];
  sort_knob_values(ctx, type, value_size, v);
  struct shape s = {(unsigned)v[pass ? SORT_WG : SORT_TILE_WG] / 32 * 32,
                    (unsigned)v[pass ? SORT_ITEMS : SORT_TILE_ITEMS]}; /* tiles at most 2^16 */
  while (s.wg > ctx->info.max_work_group_size && s.wg > 32) s.wg -= 32;
  while (s.items > 1 && local_bytes(s.wg, s.items, x, peer_words, pass) > ctx->info.local_mem_size)
    --s.items;
  return s;
}

static struct shape pass_shape(const clprim_context *ctx, clprim_type type, size_t value_size) {
  return rank_shape(ctx, type, value_size, 1);
}

/* sort_tile's shape for up to len keys. GPUs: 128 work-items of 8 keys up
 * to 1024 keys (H100, 2^18 segments of 1024 floats: 4.85 ms, against 5.61
 * with 256 x 4, 5.10 with 64 x 16, 8.35 with 512 x 2: fewer warps share
 * each work-group's barriers and scans). Else rank_shape's, on CPUs with a
 * quarter of its keys per work-item where that holds len. */
static struct shape tile_shape(const clprim_context *ctx, clprim_type type, size_t value_size,
                               size_t len) {
  struct shape s = rank_shape(ctx, type, value_size, 0);
  if (is_gpu(ctx) && len <= 1024 && clprim__fit_wg(ctx, 128) == 128 &&
      local_bytes(128, 8, xchg_bytes(type, value_size), 1, 0) <= ctx->info.local_mem_size) {
    s.wg = 128, s.items = 8;
  } else if (!is_gpu(ctx) && s.items >= 8 && len <= (size_t)s.wg * (s.items / 4)) {
    s.items /= 4;
  }
  return s;
}

size_t clprim__sort_tile(const clprim_context *ctx, clprim_type type, size_t value_size) {
  const struct shape s = tile_shape(ctx, type, value_size, SIZE_MAX);
  return (size_t)s.wg * s.items;
}

size_t clprim__sort_small_max(const clprim_context *ctx, clprim_type type, size_t value_size) {
  long long v[SORT_KNOBS];
  sort_knob_values(ctx, type, value_size, v);
  const long long knob = v[SORT_SMALL_MAX];
  const size_t tile = clprim__sort_tile(ctx, type, value_size);
  return knob >= 0 && (size_t)knob < tile ? (size_t)knob : tile;
}

size_t clprim_sort_tile(const clprim_context *ctx, clprim_type key_type,
                        const clprim_type *value_type) {
  if (!ctx || (unsigned)key_type >= CLPRIM_TYPE_COUNT || !clprim__type_supported(ctx, key_type) ||
      (value_type && (unsigned)*value_type >= CLPRIM_TYPE_COUNT))
    return 0;
  return clprim__sort_small_max(ctx, key_type, value_type ? clprim_type_size(*value_type) : 0);
}

size_t clprim__sort_pass_tile(const clprim_context *ctx, clprim_type type, size_t value_size) {
  const struct shape s = pass_shape(ctx, type, value_size);
  return (size_t)s.wg * s.items;
}

/* The build options of the sort kernels for keys of `type` (signed keys
 * build as unsigned ones, their sign in the job's flip: core.h,
 * clprim__key_build_type). */
static void sort_options(const clprim_context *ctx, clprim_type type, size_t value_size,
                         unsigned wg, unsigned items, int offsets64, int onesweep, char *options,
                         size_t size) {
  snprintf(options, size,
           "-DT=%s -DT_FLOAT=%d -DKEY_BITS=%u -DV_BYTES=%u -DWG=%u "
           "-DCLPRIM_WG_SIZE=%u -DITEMS=%u -DOFS_T=%s%s%s",
           clprim__cl_type(clprim__key_build_type(type)), type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE,
           (unsigned)clprim_type_size(type) * 8,
           (unsigned)value_size, wg, wg, items, offsets64 ? "ulong" : "uint",
           onesweep ? " -DSORT_ONESWEEP=1" : "",
           ctx->info.path == CLPRIM_PATH_NV_PTX && pass_peer_words(ctx, type, value_size)
               ? " -DSORT_PASS_PEERS=2"
               : "");
}

/* One sort of n keys (and values) from kin[in_base ..] to kout[out_base ..].
 * The digits: passes of 8 bits from shift, the last masked by last_mask, of
 * key_of(key) ^ flip (clprim__key_flip). vin NULL with gen_index: the values are the
 * keys' positions (argsort). */
struct sort_job {
  clprim_type type;
  size_t value_size; /* 0, 4, 8 */
  int gen_index;
  cl_mem kin, kout, vin, vout;
  size_t in_base, out_base, n;
  cl_ulong flip;
  unsigned shift, passes, last_mask;
  clprim_type offset_type; /* segmented: the offsets' type (sort_tile's build) */
};

/* The keys' digits: begin_bit = end_bit = 0 is the whole key; an empty
 * range sorts by nothing (one pass whose digit is always 0). */
static void digits_of(clprim_type type, unsigned begin_bit, unsigned end_bit, unsigned flags,
                      struct sort_job *j) {
  const unsigned key_bits = (unsigned)clprim_type_size(type) * 8;
  if (begin_bit == 0 && end_bit == 0) end_bit = key_bits;
  const unsigned bits = end_bit - begin_bit;
  j->type = type;
  j->flip = clprim__key_flip(type, (flags & CLPRIM_SORT_DESCENDING) != 0);
  j->shift = bits ? begin_bit : 0;
  j->passes = bits ? (bits + SORT_DIGIT_BITS - 1) / SORT_DIGIT_BITS : 1;
  j->last_mask = bits ? (1u << (bits - SORT_DIGIT_BITS * (j->passes - 1))) - 1u : 0u;
}

/* The digit arguments every sort kernel takes from argument `at` on: the
 * job's flip (4 or 8 bytes, as the kernel's KEY), shift, then passes where
 * given, mask, then gen where given. */
static clprim_status digit_args(cl_kernel k, cl_uint at, const struct sort_job *j, cl_uint shift,
                                const cl_uint *passes, cl_uint mask, const cl_uint *gen) {
  const cl_uint flip32 = (cl_uint)j->flip;
  cl_int err = clprim_type_size(j->type) == 8 ? clSetKernelArg(k, at, sizeof j->flip, &j->flip)
                                              : clSetKernelArg(k, at, sizeof flip32, &flip32);
  if (err == CL_SUCCESS) err = clSetKernelArg(k, ++at, sizeof shift, &shift);
  if (err == CL_SUCCESS && passes) err = clSetKernelArg(k, ++at, sizeof *passes, passes);
  if (err == CL_SUCCESS) err = clSetKernelArg(k, ++at, sizeof mask, &mask);
  if (err == CL_SUCCESS && gen) err = clSetKernelArg(k, ++at, sizeof *gen, gen);
  return (clprim_status)err;
}

/* sort_tile over n keys, or over `segments` segments (begins, ends). */
static clprim_status sort_small(clprim_context *ctx, const struct sort_job *j, size_t longest,
                                size_t segments, cl_mem begins, cl_mem ends) {
  const struct shape shape = tile_shape(ctx, j->type, j->value_size, longest);
  char options[256];
  sort_options(ctx, j->type, j->value_size, shape.wg, shape.items, 0, 0, options, sizeof options);
  if (begins)
    strncat(options, clprim__offsets_option(j->offset_type), sizeof options - strlen(options) - 1);
  cl_kernel k;
  CLPRIM_CHECK(clprim__kernel(ctx, "sort.cl", options, "sort_tile", &k));
  const cl_mem vin = j->vin ? j->vin : j->kin, vout = j->vout ? j->vout : j->kout;
  const cl_mem b = begins ? begins : j->kin, e = ends ? ends : j->kin;
  const cl_ulong n = j->n;
  const cl_uint segmented = begins != NULL, shift = j->shift, passes = j->passes;
  const cl_uint mask = j->last_mask, gen = (cl_uint)j->gen_index;
  CLPRIM_CHECK(clprim__set_args(k, 8, sizeof j->kin, &j->kin, sizeof j->kout, &j->kout,
                                sizeof vin, &vin, sizeof vout, &vout, sizeof n, &n,
                                sizeof segmented, &segmented, sizeof b, &b, sizeof e, &e));
  CLPRIM_CHECK(digit_args(k, 8, j, shift, &passes, mask, &gen));
  return clprim__enqueue(ctx, k, begins ? segments : 1, shape.wg);
}

/* sort_histogram over the job's keys into hist (hist_words, zeroed here;
 * starts: Onesweep's digit starts, else hist). */
static clprim_status histogram(clprim_context *ctx, const struct sort_job *j, cl_kernel k,
                               cl_mem hist, cl_mem starts, unsigned wg, size_t hist_words) {
  const cl_uint zero = 0;
  const cl_ulong base = j->in_base, n = j->n;
  const cl_uint shift = j->shift, passes = j->passes, mask = j->last_mask;
  CLPRIM_CHECK(clprim__fill(ctx, hist, &zero, 4, 0, hist_words * 4));
  CLPRIM_CHECK(clprim__set_args(k, 3, sizeof j->kin, &j->kin, sizeof base, &base, sizeof n, &n));
  CLPRIM_CHECK(digit_args(k, 3, j, shift, &passes, mask, NULL));
  CLPRIM_CHECK(clSetKernelArg(k, 7, sizeof hist, &hist));
  CLPRIM_CHECK(clSetKernelArg(k, 8, sizeof starts, &starts));
  if (ctx->info.path == CLPRIM_PATH_CPU) /* its shares (clprim__cpu_stream_shares) */
    return clprim__enqueue(ctx, k, clprim__cpu_stream_shares(ctx, j->n), 1);
  const size_t per_group = (size_t)wg * SORT_HIST_ITEMS;
  const size_t groups = (j->n + per_group - 1) / per_group;
  const size_t max_groups = clprim__launch(ctx).max_groups;
  return clprim__enqueue(ctx, k, groups < max_groups ? groups : max_groups, wg);
}

/* The digit passes (see the top of the file). */
static clprim_status sort_passes(clprim_context *ctx, const struct sort_job *j) {
  const struct shape shape = pass_shape(ctx, j->type, j->value_size);
  const unsigned wg = shape.wg, items = shape.items;
  const size_t tile = (size_t)wg * items;
  /* The cpu path: the kernels' shares, one work-item each (the program's
   * -DWG and -DITEMS still shape its other kernels). */
  const int cpu = ctx->info.path == CLPRIM_PATH_CPU;
  const size_t tiles =
      cpu ? clprim__cpu_stream_shares(ctx, j->n) : j->n / tile + (j->n % tile != 0);
  const unsigned launch_wg = cpu ? 1u : wg;
  const size_t ks = clprim_type_size(j->type), vs = j->value_size;
  if (tiles > UINT32_MAX || (size_t)SORT_RADIX * tiles >= SIZE_MAX / 8)
    return CLPRIM_ERROR_SIZE_TOO_LARGE;
  long long v[SORT_KNOBS];
  sort_knob_values(ctx, j->type, vs, v);
  const int onesweep =
      ctx->info.path == CLPRIM_PATH_NV_PTX && v[SORT_ONESWEEP] == 1 && j->n < ONESWEEP_MAX;
  const int offsets64 = (size_t)j->n > UINT32_MAX;
  char options[256];
  sort_options(ctx, j->type, vs, wg, items, offsets64, onesweep, options, sizeof options);
  cl_kernel hist_k, count_k = NULL, pass_k;
  const struct clprim_kernel_request req[3] = {
      {"sort.cl", NULL, options, "sort_histogram", NULL, &hist_k, NULL, NULL},
      {"sort.cl", NULL, options, "sort_pass", NULL, &pass_k, NULL, NULL},
      {"sort.cl", NULL, options, "sort_count", NULL, &count_k, NULL, NULL}};
  CLPRIM_CHECK(clprim__kernels(ctx, req, onesweep ? 2 : 3));

  /* Every pass's digit counts, a ticket, and whether a float key is a NaN
   * or -0.0 (the last word, which sort_pass reads). */
  cl_mem hist, starts = NULL;
  const size_t hist_words = (size_t)j->passes * SORT_RADIX * 2 + 2;
  const cl_uint special_at = (cl_uint)hist_words - 1;
  const cl_uint zero = 0;
  CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_HIST, hist_words * 4, &hist));
  if (onesweep)
    CLPRIM_CHECK(
        clprim__scratch_per_call(ctx, SLOT_STARTS, (size_t)j->passes * SORT_RADIX * 8, &starts));
  else
    starts = hist;
  CLPRIM_CHECK(histogram(ctx, j, hist_k, hist, starts, wg, hist_words));
  const int in_place = j->kin == j->kout && j->in_base == j->out_base;
  const int values_in_place = j->vout && j->vin == j->vout && j->in_base == j->out_base;

  /* Buffers: the passes move keys (and values) through two scratch copies,
   * A and B in turn, and only the last writes the output, so that a call
   * that fails writes nothing and an in-place sort of two passes or more
   * needs no copy of its input (B only with three passes or more: n more
   * keys and values of device memory than a sort through the output took). */
  cl_mem ktmp[2] = {NULL, NULL}, vtmp[2] = {NULL, NULL};
  static const char *const key_slots[2] = {SLOT_KEYS, SLOT_KEYS_B};
  static const char *const value_slots[2] = {SLOT_VALUES, SLOT_VALUES_B};
  /* A pass may not read what it writes: one pass in place reads a copy. */
  const int copy_first = j->passes == 1 && (in_place || values_in_place);
  for (unsigned b = 0; b < 2 && (b + 1 < j->passes || (b == 0 && copy_first)); ++b) {
    CLPRIM_CHECK(clprim__scratch_per_call(ctx, key_slots[b], j->n * ks, &ktmp[b]));
    if (vs) CLPRIM_CHECK(clprim__scratch_per_call(ctx, value_slots[b], j->n * vs, &vtmp[b]));
  }
  cl_mem ksrc = j->kin, vsrc = j->vin;
  size_t src_base = j->in_base;
  if (copy_first) {
    CLPRIM_CHECK(clprim__copy(ctx, j->kin, ktmp[0], j->in_base * ks, 0, j->n * ks));
    if (j->vin) CLPRIM_CHECK(clprim__copy(ctx, j->vin, vtmp[0], j->in_base * vs, 0, j->n * vs));
    ksrc = ktmp[0], vsrc = j->vin ? vtmp[0] : NULL, src_base = 0;
  }

  /* Each Onesweep pass's look-back state is zeroed by a fill just before
   * it (H100: having each tile zero its part of the next pass's state
   * instead, in a second buffer, made a uint32 pass 1.26 -> 1.47 ms). */
  cl_mem offsets = NULL, state = NULL;
  const size_t state_bytes = LB_DIGIT_BYTES(tiles, SORT_RADIX);
  if (onesweep)
    CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_STATE, state_bytes, &state));
  else
    CLPRIM_CHECK(clprim__scratch_per_call(
        ctx, SLOT_COUNTS, (SORT_RADIX * tiles + 1) * (offsets64 ? 8 : 4), &offsets));
  const cl_mem no_offsets = offsets ? offsets : hist, no_state = state ? state : hist;
  /* The arguments that every pass shares. */
  CLPRIM_CHECK(clSetKernelArg(pass_k, 11, sizeof no_offsets, &no_offsets));
  CLPRIM_CHECK(clSetKernelArg(pass_k, 12, sizeof starts, &starts));
  CLPRIM_CHECK(clSetKernelArg(pass_k, 14, sizeof no_state, &no_state));
  CLPRIM_CHECK(clSetKernelArg(pass_k, 15, sizeof hist, &hist));
  CLPRIM_CHECK(clSetKernelArg(pass_k, 16, sizeof special_at, &special_at));
  for (cl_uint pass = 0; pass < j->passes; ++pass) {
    const int last = pass + 1 == j->passes; /* writes the output */
    const cl_mem kdst = last ? j->kout : ktmp[pass % 2];
    const cl_mem vdst = vs ? (last ? j->vout : vtmp[pass % 2]) : kdst;
    const cl_mem vread = vsrc ? vsrc : ksrc;
    const cl_ulong in_base = src_base, out_base = last ? j->out_base : 0, n = j->n;
    const cl_uint shift = j->shift + SORT_DIGIT_BITS * pass;
    const cl_uint mask = last ? j->last_mask : SORT_RADIX - 1;
    const cl_uint gen = j->gen_index && pass == 0;
    CLPRIM_CHECK(clprim__set_args(pass_k, 7, sizeof ksrc, &ksrc, sizeof in_base, &in_base,
                                  sizeof kdst, &kdst, sizeof out_base, &out_base, sizeof vread,
                                  &vread, sizeof vdst, &vdst, sizeof n, &n));
    CLPRIM_CHECK(digit_args(pass_k, 7, j, shift, NULL, mask, &gen));
    CLPRIM_CHECK(clSetKernelArg(pass_k, 13, sizeof pass, &pass));
    if (onesweep) {
      CLPRIM_CHECK(clprim__fill(ctx, state, &zero, 4, 0, state_bytes));
      CLPRIM_CHECK(clprim__enqueue(ctx, pass_k, tiles, wg));
    } else {
      CLPRIM_CHECK(clprim__set_args(count_k, 3, sizeof ksrc, &ksrc, sizeof in_base, &in_base,
                                    sizeof n, &n));
      CLPRIM_CHECK(digit_args(count_k, 3, j, shift, NULL, mask, NULL));
      CLPRIM_CHECK(clSetKernelArg(count_k, 6, sizeof offsets, &offsets));
      const struct clprim_count_scan_scatter steps = {
          {count_k, tiles, launch_wg}, {pass_k, tiles, launch_wg},
          offsets64 ? CLPRIM_UINT64 : CLPRIM_UINT32, offsets, SORT_RADIX * tiles};
      CLPRIM_CHECK(clprim__count_scan_scatter(ctx, &steps));
    }
    ksrc = kdst, src_base = out_base;
    if (vs) vsrc = vdst;
  }
  return CLPRIM_SUCCESS;
}

static clprim_status sort_job_run(clprim_context *ctx, const struct sort_job *j) {
  if (j->n == 0) return CLPRIM_SUCCESS;
  if (j->n <= clprim__sort_small_max(ctx, j->type, j->value_size) && j->in_base == 0 &&
      j->out_base == 0)
    return sort_small(ctx, j, j->n, 0, NULL, NULL);
  return sort_passes(ctx, j);
}

/* The argument checks every sort call shares. */
static clprim_status check_common(clprim_context *ctx, clprim_type type, size_t value_size,
                                  unsigned begin_bit, unsigned end_bit, unsigned flags,
                                  unsigned allowed) {
  /* The pairs' calls name the keys' type key_type, the others type. */
  CLPRIM_CHECK(clprim__check_type(ctx, value_size ? "key_type" : "type", type));
  CLPRIM_CHECK(clprim__check_flags(ctx, flags, allowed));
  const unsigned key_bits = (unsigned)clprim_type_size(type) * 8;
  const int whole = (begin_bit == 0 && end_bit == 0) || (begin_bit == 0 && end_bit == key_bits);
  if (begin_bit > end_bit || end_bit > key_bits)
    return clprim__invalid(ctx, "begin_bit (%u), end_bit (%u): not a bit range of a %u-bit key",
                           begin_bit, end_bit, key_bits);
  if (!whole && (type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE))
    return clprim__invalid(ctx, "begin_bit (%u), end_bit (%u): float keys sort on all their bits",
                           begin_bit, end_bit);
  return CLPRIM_SUCCESS;
}

/* keys (and values, when value_size) in and out: resolves the ranges. */
static clprim_status sort_pairs(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer keys_in, size_t value_size,
                                clprim_buffer values_in, unsigned begin_bit, unsigned end_bit,
                                unsigned flags, clprim_buffer keys_out,
                                clprim_buffer values_out) {
  CLPRIM_CHECK(
      check_common(ctx, type, value_size, begin_bit, end_bit, flags, CLPRIM_SORT_DESCENDING));
  struct sort_job j;
  memset(&j, 0, sizeof j);
  const size_t ks = clprim_type_size(type);
  CLPRIM_CHECK(clprim__range(ctx, "keys_in", keys_in, ks, n, CLPRIM__READ, &j.kin));
  CLPRIM_CHECK(
      clprim__range(ctx, "keys_out", keys_out, ks, n, CLPRIM__OUT_ALL | CLPRIM__SAME_OK, &j.kout));
  if (value_size) {
    CLPRIM_CHECK(clprim__range(ctx, "values_in", values_in, value_size, n, CLPRIM__READ, &j.vin));
    CLPRIM_CHECK(clprim__range(ctx, "values_out", values_out, value_size, n,
                               CLPRIM__OUT_ALL | CLPRIM__SAME_OK, &j.vout));
    /* SAME_OK is for keys_out on keys_in and values_out on values_in only. */
    if (n && (j.vout == j.kin || j.vout == j.kout))
      return clprim__invalid(ctx, "values_out is the range of keys_in or keys_out");
  }
  digits_of(type, begin_bit, end_bit, flags, &j);
  j.value_size = value_size, j.n = n;
  return sort_job_run(ctx, &j);
}

clprim_status clprim_sort_keys(clprim_context *ctx, size_t n, clprim_type type,
                               clprim_buffer keys_in, unsigned begin_bit, unsigned end_bit,
                               unsigned flags, clprim_buffer keys_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "sort_keys"));
  const clprim_buffer none = {NULL, 0};
  return clprim__call_end(
      ctx, sort_pairs(ctx, n, type, keys_in, 0, none, begin_bit, end_bit, flags, keys_out, none));
}

/* The bytes of a value type (moved as bits: every type, fp64 or not), or
 * 0 with the context's text for one that is none. */
static size_t value_bytes(clprim_context *ctx, clprim_type value_type) {
  if ((unsigned)value_type < CLPRIM_TYPE_COUNT) return clprim_type_size(value_type);
  clprim__invalid(ctx, "value_type (%d) is not a clprim_type", (int)value_type);
  return 0;
}

clprim_status clprim_sort_pairs(clprim_context *ctx, size_t n, clprim_type key_type,
                                clprim_buffer keys_in, clprim_type value_type,
                                clprim_buffer values_in, unsigned begin_bit, unsigned end_bit,
                                unsigned flags, clprim_buffer keys_out,
                                clprim_buffer values_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "sort_pairs"));
  const size_t vs = value_bytes(ctx, value_type);
  const clprim_status s = vs ? sort_pairs(ctx, n, key_type, keys_in, vs, values_in, begin_bit,
                                          end_bit, flags, keys_out, values_out)
                             : CLPRIM_ERROR_INVALID_ARGUMENT;
  return clprim__call_end(ctx, s);
}

static clprim_status argsort(clprim_context *ctx, size_t n, clprim_type type,
                             clprim_buffer keys_in, unsigned begin_bit, unsigned end_bit,
                             unsigned flags, clprim_buffer indices, clprim_buffer keys_out) {
  CLPRIM_CHECK(check_common(ctx, type, 0, begin_bit, end_bit, flags,
                            CLPRIM_SORT_DESCENDING | CLPRIM_INDICES_64));
  const size_t is = (flags & CLPRIM_INDICES_64) ? 8 : 4, ks = clprim_type_size(type);
  if (is == 4 && n > UINT32_MAX)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE,
                        "indices are uint32 but n (%zu) is above UINT32_MAX (CLPRIM_INDICES_64)",
                        n);
  struct sort_job j;
  memset(&j, 0, sizeof j);
  CLPRIM_CHECK(clprim__range(ctx, "keys_in", keys_in, ks, n, CLPRIM__READ, &j.kin));
  if (keys_out.mem)
    CLPRIM_CHECK(clprim__range(ctx, "keys_out", keys_out, ks, n, CLPRIM__OUT_ALL | CLPRIM__SAME_OK,
                               &j.kout));
  CLPRIM_CHECK(clprim__range(ctx, "indices", indices, is, n, CLPRIM__OUT_ALL, &j.vout));
  if (n == 0) return CLPRIM_SUCCESS;
  if (!keys_out.mem)
    CLPRIM_CHECK(clprim__scratch_per_call(ctx, SLOT_KEYS_OUT, n * ks, &j.kout));
  digits_of(type, begin_bit, end_bit, flags, &j);
  j.value_size = is, j.n = n, j.gen_index = 1;
  return sort_job_run(ctx, &j);
}

clprim_status clprim_argsort(clprim_context *ctx, size_t n, clprim_type type,
                             clprim_buffer keys_in, unsigned begin_bit, unsigned end_bit,
                             unsigned flags, clprim_buffer indices, clprim_buffer keys_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "argsort"));
  return clprim__call_end(
      ctx, argsort(ctx, n, type, keys_in, begin_bit, end_bit, flags, indices, keys_out));
}

/* ------------------------------------------------------------ segmented */
static clprim_status segmented(clprim_context *ctx, size_t n, clprim_type type,
                               clprim_buffer keys_in, size_t value_size, clprim_buffer values_in,
                               size_t segments, clprim_type offset_type,
                               clprim_buffer begin_offsets, clprim_buffer end_offsets,
                               unsigned flags, clprim_buffer keys_out, clprim_buffer values_out) {
  CLPRIM_CHECK(check_common(ctx, type, value_size, 0, 0, flags, CLPRIM_SORT_DESCENDING));
  if (segments > UINT32_MAX)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "segments (%zu) is above UINT32_MAX",
                        segments);
  struct sort_job j;
  memset(&j, 0, sizeof j);
  const size_t ks = clprim_type_size(type);
  cl_mem begins, ends;
  CLPRIM_CHECK(clprim__range(ctx, "keys_in", keys_in, ks, n, CLPRIM__READ, &j.kin));
  CLPRIM_CHECK(clprim__segment_offsets(ctx, offset_type, segments, begin_offsets, end_offsets,
                                       &begins, &ends));
  if (value_size)
    CLPRIM_CHECK(clprim__range(ctx, "values_in", values_in, value_size, n, CLPRIM__READ, &j.vin));
  /* Outputs are written where segments are, so copies start as the caller's. */
  CLPRIM_CHECK(
      clprim__range(ctx, "keys_out", keys_out, ks, n, CLPRIM__OUT | CLPRIM__SAME_OK, &j.kout));
  if (value_size) {
    CLPRIM_CHECK(clprim__range(ctx, "values_out", values_out, value_size, n,
                               CLPRIM__OUT | CLPRIM__SAME_OK, &j.vout));
    if (n && (j.vout == j.kin || j.vout == j.kout || j.kout == j.vin))
      return clprim__invalid(ctx, "values_out is the range of keys_in or keys_out, or keys_out "
                                  "that of values_in");
  }
  return clprim__segmented_sort(ctx, type, value_size, j.kin, j.vin, j.kout, j.vout, n, segments,
                                offset_type, begins, ends, flags);
}

clprim_status clprim__segmented_sort(clprim_context *ctx, clprim_type type, size_t value_size,
                                     cl_mem keys_in, cl_mem values_in, cl_mem keys_out,
                                     cl_mem values_out, size_t n, size_t segments,
                                     clprim_type offset_type, cl_mem begins, cl_mem ends,
                                     unsigned flags) {
  if (segments == 0) return CLPRIM_SUCCESS;
  struct sort_job j;
  memset(&j, 0, sizeof j);
  j.kin = keys_in, j.vin = value_size ? values_in : NULL;
  j.kout = keys_out, j.vout = value_size ? values_out : NULL;
  digits_of(type, 0, 0, flags, &j);
  j.value_size = value_size, j.offset_type = offset_type;

  /* Check the segments on the device and find the long ones. */
  const size_t small_max = clprim__sort_small_max(ctx, type, value_size);
  char options[256];
  /* The check's build is the keys' one (it reads no keys or values). */
  const struct shape keys_shape = pass_shape(ctx, type, 0);
  sort_options(ctx, type, 0, keys_shape.wg, keys_shape.items, 0, 0, options, sizeof options);
  strncat(options, clprim__offsets_option(offset_type), sizeof options - strlen(options) - 1);
  cl_kernel check_k;
  CLPRIM_CHECK(clprim__kernel(ctx, "sort.cl", options, "segments_check", &check_k));
  cl_mem check;
  const cl_uint zero = 0;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_CHECK, 12, &check));
  CLPRIM_CHECK(clprim__fill(ctx, check, &zero, 4, 0, 12));
  const cl_ulong segs = segments, n64 = n;
  const cl_ulong small = small_max;
  cl_mem ids, bounds;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_LONG, segments * 4, &ids));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_BOUNDS, segments * 16, &bounds));
  CLPRIM_CHECK(clprim__set_args(check_k, 8, sizeof begins, &begins, sizeof ends, &ends,
                                sizeof segs, &segs, sizeof n64, &n64, sizeof small, &small,
                                sizeof check, &check, sizeof ids, &ids, sizeof bounds, &bounds));
  CLPRIM_CHECK(clprim__enqueue(ctx, check_k, (segments + 63) / 64, 64));
  cl_uint info[3];
  CLPRIM_CHECK(clprim__read(ctx, check, 0, sizeof info, info));
  if (info[0])
    return clprim__invalid(ctx,
                           "a segment of begin_offsets / end_offsets ends before it begins "
                           "or past n (%zu)",
                           n);
  if (info[2] > 0) CLPRIM_CHECK(sort_small(ctx, &j, info[2], segments, begins, ends));
  if (info[1] == 0) return CLPRIM_SUCCESS;
  /* The long segments' bounds, in one read; each takes the digit passes. */
  cl_ulong *long_bounds = malloc((size_t)info[1] * 2 * sizeof *long_bounds);
  if (!long_bounds) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  clprim_status s = clprim__read(ctx, bounds, 0, (size_t)info[1] * 16, long_bounds);
  for (cl_uint i = 0; i < info[1] && s == CLPRIM_SUCCESS; ++i) {
    struct sort_job one = j;
    one.in_base = one.out_base = long_bounds[2 * i], one.n = long_bounds[2 * i + 1] - one.in_base;
    s = sort_passes(ctx, &one);
  }
  free(long_bounds);
  return s;
}

clprim_status clprim_segmented_sort_keys(clprim_context *ctx, size_t n, clprim_type type,
                                         clprim_buffer keys_in, size_t segments,
                                         clprim_type offset_type, clprim_buffer begin_offsets,
                                         clprim_buffer end_offsets, unsigned flags,
                                         clprim_buffer keys_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "segmented_sort_keys"));
  const clprim_buffer none = {NULL, 0};
  return clprim__call_end(ctx, segmented(ctx, n, type, keys_in, 0, none, segments, offset_type,
                                         begin_offsets, end_offsets, flags, keys_out, none));
}

clprim_status clprim_segmented_sort_pairs(clprim_context *ctx, size_t n, clprim_type key_type,
                                          clprim_buffer keys_in, clprim_type value_type,
                                          clprim_buffer values_in, size_t segments,
                                          clprim_type offset_type, clprim_buffer begin_offsets,
                                          clprim_buffer end_offsets, unsigned flags,
                                          clprim_buffer keys_out, clprim_buffer values_out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "segmented_sort_pairs"));
  const size_t vs = value_bytes(ctx, value_type);
  const clprim_status s =
      vs ? segmented(ctx, n, key_type, keys_in, vs, values_in, segments, offset_type, begin_offsets,
                     end_offsets, flags, keys_out, values_out)
         : CLPRIM_ERROR_INVALID_ARGUMENT;
  return clprim__call_end(ctx, s);
}

/* Dry runs (core/prebuild.c): one work-group (both of its tile sizes) and
 * the digit passes; keys, pairs with 4- and 8-byte values (argsort takes the
 * pairs' programs); the segments' check. */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const clprim_buffer in = clprim_buf(d->in), in2 = clprim_buf(d->in2);
  const clprim_buffer out = clprim_buf(d->out), out2 = clprim_buf(d->out2);
  for (size_t vs = 0; vs <= 8; vs += 4) {
    const size_t sizes[3] = {1, clprim__sort_small_max(ctx, t, vs), d->n};
    for (int s = 0; s < 3; ++s) {
      if (vs == 0)
        clprim_sort_keys(ctx, sizes[s], t, in, 0, 0, 0, out);
      else
        clprim_sort_pairs(ctx, sizes[s], t, in, vs == 4 ? CLPRIM_UINT32 : CLPRIM_UINT64, in2, 0,
                          0, 0, out, out2);
    }
  }
  clprim_segmented_sort_keys(ctx, d->n, t, in, 1, CLPRIM_UINT64, in2, in2, 0, out);
}
