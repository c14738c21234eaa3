/* reduce.c: argmax / argmin, min, max and sums of an array (kernels in
 * cl/reduce.cl).
 *
 * argmax / argmin / min / max: pass 1 (arg_partial) leaves one (key, index)
 * pair per work-group in scratch, pass 2 (arg_final, one work-group) writes
 * the element and its index to a 16-byte result in scratch, which is copied
 * to the caller's buffer and/or read to the host.
 * sum: sum_tiles applied level by level until one tile is left; with
 * CLPRIM_EXACT the exact accumulator's two launches (engine/exact.c:
 * exact_tiles, exact_final). */
#include "reduce.h"
#include "engine/exact.h"

#include <math.h>
#include <string.h>

/* Scratch buffers of this family (clprim__scratch names them). */
#define SLOT_PARTIAL_KEYS "reduce: partial keys"
#define SLOT_RESULT "reduce: result"
#define SLOT_PARTIAL_INDICES "reduce: partial indices" /* also sum level A */
#define SLOT_SUM_B "reduce: sum level B"
#define SLOT_SUM_A SLOT_PARTIAL_INDICES

#define MODE_MIN 0x100u    /* as in cl/reduce.cl */
#define MODE_SIGNED 0x200u /* as in cl/reduce.cl */

/* The mode bits the kernels get for type, besides the call's. */
static cl_uint reduce_mode(clprim_type type, unsigned mode) {
  return mode | (clprim__is_signed(type) ? MODE_SIGNED : 0u);
}

struct reduce_config {
  unsigned wg;    /* work-items per work-group (a power of two) */
  unsigned items; /* elements per work-item per tile (a multiple of 4) */
  size_t max_groups;
};

/* The reductions' knob and table: elements per work-item and tile. */
static const struct clprim_knob reduce_knobs[] = {{"items", 4, 64}};
static const struct clprim_tuning_row reduce_table[] = {
    {0, 0, NULL, 0, 0, CLPRIM__KNOB(0), {16}, "portable: 16 4-byte elements a work-item"},
    {0, CL_DEVICE_TYPE_GPU, NULL, 8, 0, CLPRIM__KNOB(0), {8}, "GPUs: 8 8-byte elements"},
};
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_reduce = {
    "reduce", reduce_knobs, 1, reduce_table, sizeof reduce_table / sizeof reduce_table[0], 0,
    prebuild};

/* The cpu path's shape (cl/reduce.cl): a work-item per work-group, sums in
 * tiles of 4096 elements (16 blocks of 256), argmax over the core's shares
 * (clprim__cpu_shares: max_groups caps the tiles). */
#define CPU_SUM_TILE 4096u

static struct reduce_config reduce_config(const clprim_context *ctx, clprim_type type) {
  if (ctx->info.path == CLPRIM_PATH_CPU) {
    struct reduce_config c = {1, CPU_SUM_TILE, clprim__cpu_shares(ctx, SIZE_MAX, 1)};
    return c;
  }
  long long items;
  clprim__tuned(ctx, &clprim__family_reduce, (unsigned)clprim_type_size(type), 0, &items);
  const struct clprim_launch l = clprim__launch(ctx);
  struct reduce_config c = {l.wg, items % 4 == 0 ? (unsigned)items : 16u, l.max_groups};
  return c;
}

size_t clprim__reduce_tile(const clprim_context *ctx, clprim_type type) {
  struct reduce_config c = reduce_config(ctx, type);
  return (size_t)c.wg * c.items;
}

void clprim__reduce_options(const clprim_context *ctx, clprim_type type, char *options,
                            size_t size) {
  static const char *const sum_type[CLPRIM_TYPE_COUNT] = {"uint",  "uint",  "ulong",
                                                          "ulong", "float", "double"};
  const struct reduce_config c = reduce_config(ctx, type);
  /* Signed integers build as the unsigned type of their width (the same
   * bits, the same modular sums), the kernels that order elements told by
   * MODE_SIGNED (reduce_mode), so both share programs. */
  snprintf(options, size, "-DT=%s -DT_BITS=%u -DT_FLOAT=%d -DS=%s -DWG=%u -DITEMS=%u",
           clprim__cl_type(clprim__key_build_type(type)), (unsigned)clprim_type_size(type) * 8,
           type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE, sum_type[type], c.wg, c.items);
}

/* Fetches (builds) kernels of reduce.cl for type: names[j] to kernels[j];
 * extra: options added to the type's ("" or the segmented calls' offsets);
 * exact: a build with the exact accumulator's options too. */
static clprim_status reduce_kernels(clprim_context *ctx, clprim_type type, const char *extra,
                                    int exact, unsigned count, const char *const *names,
                                    cl_kernel *kernels) {
  char options[224];
  clprim__reduce_options(ctx, type, options, sizeof options);
  strncat(options, extra, sizeof options - strlen(options) - 1);
  if (exact)
    clprim__exact_options(ctx, options + strlen(options), sizeof options - strlen(options));
  struct clprim_kernel_request req[2];
  for (unsigned j = 0; j < count; ++j) {
    /* (the segmented reductions' kernels: segments_check with seg_reduce,
     * or with seg_exact in an exact build; the exact sum's: exact_tiles
     * and exact_final) */
    const char *together = strncmp(names[j], "seg", 3) == 0
                               ? (exact ? CLPRIM__SEGMENTED_EXACT_KERNELS
                                        : CLPRIM__SEGMENTED_REDUCE_KERNELS)
                           : exact ? CLPRIM__EXACT_SUM_KERNELS
                                   : CLPRIM__REDUCE_KERNELS;
    const struct clprim_kernel_request r = {"reduce.cl", NULL, options, names[j], NULL,
                                            &kernels[j],  NULL, together};
    req[j] = r;
  }
  return clprim__kernels(ctx, req, count);
}

/* The element's bits (zero-extended) as a clprim_value of type. */
static clprim_value value_of_bits(clprim_type type, uint64_t bits) {
  clprim_value v;
  memset(&v, 0, sizeof v);
  switch (type) {
  case CLPRIM_INT32: v.i32 = (int32_t)(uint32_t)bits; break;
  case CLPRIM_UINT32: v.u32 = (uint32_t)bits; break;
  case CLPRIM_FLOAT: {
    uint32_t b = (uint32_t)bits;
    memcpy(&v.f32, &b, sizeof b);
    break;
  }
  default: v.u64 = bits; break; /* int64, uint64, double: the same 8 bytes */
  }
  return v;
}

/* The kernels take the flags as their mode bits (cl/reduce.cl's MODE_ABS,
 * MODE_NAN_LARGEST, next to MODE_MIN 0x100). */
_Static_assert(CLPRIM_REDUCE_ABS == 1u && CLPRIM_REDUCE_NAN_LARGEST == 2u,
               "cl/reduce.cl's MODE_ABS and MODE_NAN_LARGEST are these bits");

/* The type and the input range: in_mem holds the n elements from byte 0. */
static clprim_status check_common(clprim_context *ctx, clprim_type type, clprim_buffer in,
                                  size_t n, cl_mem *in_mem) {
  CLPRIM_CHECK(clprim__check_type(ctx, "type", type));
  return clprim__range(ctx, "in", in, clprim_type_size(type), n, CLPRIM__READ, in_mem);
}

clprim_status clprim__reduce_arg_run(clprim_context *ctx, clprim_type type, cl_kernel partial,
                                     cl_kernel final, cl_mem in, size_t n, unsigned mode,
                                     cl_mem *result) {
  struct reduce_config c = reduce_config(ctx, type);
  const size_t tile = (size_t)c.wg * c.items;
  size_t groups = n / tile + (n % tile != 0);
  if (groups > c.max_groups) groups = c.max_groups;
  if (groups == 0) groups = 1; /* n = 0 (pipelines): the identity */
  cl_mem keys, indices, out;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_PARTIAL_KEYS, groups * 8, &keys));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_PARTIAL_INDICES, groups * 8, &indices));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_RESULT, 16, &out));

  cl_ulong n64 = n;
  cl_uint mode32 = reduce_mode(type, mode), count = (cl_uint)groups;
  CLPRIM_CHECK(clprim__set_args(partial, 5, sizeof in, &in, sizeof n64, &n64, sizeof mode32,
                                &mode32, sizeof keys, &keys, sizeof indices, &indices));
  CLPRIM_CHECK(clprim__enqueue(ctx, partial, groups, c.wg));
  CLPRIM_CHECK(clprim__set_args(final, 5, sizeof in, &in, sizeof keys, &keys, sizeof indices,
                                &indices, sizeof count, &count, sizeof out, &out));
  CLPRIM_CHECK(clprim__enqueue(ctx, final, 1, c.wg));
  *result = out;
  return CLPRIM_SUCCESS;
}

/* argmax (mode without MODE_MIN) or argmin; result_bytes of the 16-byte
 * result (value, index) go to `result` when it is given. */
static clprim_status arg_reduce(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer in_range, unsigned flags, unsigned mode,
                                clprim_value *value, uint64_t *index, clprim_buffer result_range,
                                size_t result_bytes) {
  cl_mem in, result = NULL;
  CLPRIM_CHECK(check_common(ctx, type, in_range, n, &in));
  if (n == 0) return clprim__invalid(ctx, "n is 0 (no element to choose)");
  CLPRIM_CHECK(clprim__check_flags(ctx, flags, CLPRIM_REDUCE_ABS | CLPRIM_REDUCE_NAN_LARGEST));
  if (!value && !index && !result_range.mem)
    return clprim__invalid(ctx, "no result is wanted (value, index and result are all NULL)");
  if (result_range.mem)
    CLPRIM_CHECK(
        clprim__range(ctx, "result", result_range, 8, result_bytes / 8, CLPRIM__OUT_ALL, &result));

  static const char *const names[2] = {"arg_partial", "arg_final"};
  cl_kernel kernels[2];
  CLPRIM_CHECK(reduce_kernels(ctx, type, "", 0, 2, names, kernels));
  cl_mem out;
  CLPRIM_CHECK(clprim__reduce_arg_run(ctx, type, kernels[0], kernels[1], in, n, flags | mode, &out));
  /* The host's copy first: the copy to the caller's buffer is the last
   * command, and nothing is assigned before every step has succeeded. */
  cl_ulong words[2];
  if (value || index) CLPRIM_CHECK(clprim__read(ctx, out, 0, sizeof words, words));
  if (result) CLPRIM_CHECK(clprim__copy(ctx, out, result, 0, 0, result_bytes));
  if (value) *value = value_of_bits(type, words[0]);
  if (index) *index = words[1];
  return CLPRIM_SUCCESS;
}

clprim_status clprim_argmax(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                            unsigned flags, clprim_value *value, uint64_t *index,
                            clprim_buffer result) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "argmax"));
  return clprim__call_end(ctx, arg_reduce(ctx, n, type, in, flags, 0, value, index, result, 16));
}

clprim_status clprim_argmin(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                            unsigned flags, clprim_value *value, uint64_t *index,
                            clprim_buffer result) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "argmin"));
  return clprim__call_end(ctx,
                          arg_reduce(ctx, n, type, in, flags, MODE_MIN, value, index, result, 16));
}

clprim_status clprim_reduce_max(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer in, unsigned flags, clprim_value *value,
                                clprim_buffer result) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "reduce_max"));
  return clprim__call_end(ctx, arg_reduce(ctx, n, type, in, flags, 0, value, NULL, result, 8));
}

clprim_status clprim_reduce_min(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer in, unsigned flags, clprim_value *value,
                                clprim_buffer result) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "reduce_min"));
  return clprim__call_end(ctx,
                          arg_reduce(ctx, n, type, in, flags, MODE_MIN, value, NULL, result, 8));
}

clprim_status clprim__reduce_sum_run(clprim_context *ctx, clprim_type type, cl_kernel kernel,
                                     int level_arg, cl_mem in, size_t n, cl_mem *result) {
  struct reduce_config c = reduce_config(ctx, type);
  const size_t tile = (size_t)c.wg * c.items, elem = clprim_type_size(type);
  size_t first_tiles = n / tile + (n % tile != 0);
  cl_mem level[2], out;
  if (first_tiles > 1) {
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_SUM_A, first_tiles * elem, &level[0]));
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_SUM_B, (first_tiles / tile + 1) * elem, &level[1]));
  }
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_RESULT, 16, &out));

  const cl_ulong zero = 0;
  CLPRIM_CHECK(clprim__fill(ctx, out, &zero, sizeof zero, 0, 8)); /* n = 0, and 32-bit types */
  cl_mem src = in;
  for (unsigned l = 0; n > 0; ++l) {
    size_t tiles = n / tile + (n % tile != 0);
    cl_mem dst = tiles == 1 ? out : level[l % 2];
    cl_ulong n64 = n;
    CLPRIM_CHECK(clprim__set_args(kernel, 3, sizeof src, &src, sizeof n64, &n64, sizeof dst, &dst));
    if (level_arg >= 0) {
      const cl_int first = l == 0;
      CLPRIM_CHECK((clprim_status)clSetKernelArg(kernel, (cl_uint)level_arg, sizeof first, &first));
    }
    CLPRIM_CHECK(clprim__enqueue(ctx, kernel, tiles, c.wg));
    if (tiles == 1) break;
    src = dst;
    n = tiles;
  }
  *result = out;
  return CLPRIM_SUCCESS;
}

clprim_status clprim__reduce_exact_run(clprim_context *ctx, clprim_type type, cl_kernel tiles,
                                       cl_kernel final, cl_mem in, size_t n, int round,
                                       cl_mem result) {
  const struct reduce_config c = reduce_config(ctx, type);
  return clprim__exact_sum(ctx, type, tiles, final, c.wg, c.max_groups, in, n, round, result);
}

/* exact_tiles and exact_final for type. */
static clprim_status exact_kernels(clprim_context *ctx, clprim_type type, cl_kernel *kernels) {
  static const char *const names[2] = {"exact_tiles", "exact_final"};
  return reduce_kernels(ctx, type, "", 1, 2, names, kernels);
}

clprim_status clprim__reduce_exact(clprim_context *ctx, clprim_type type, cl_mem in, size_t n,
                                   int round, cl_mem result) {
  cl_kernel k[2];
  CLPRIM_CHECK(exact_kernels(ctx, type, k));
  return clprim__reduce_exact_run(ctx, type, k[0], k[1], in, n, round, result);
}

clprim_status clprim__reduce_exact_round(clprim_context *ctx, clprim_type type, cl_mem record) {
  cl_kernel k[2];
  CLPRIM_CHECK(exact_kernels(ctx, type, k));
  return clprim__exact_round_record(ctx, k[1], reduce_config(ctx, type).wg, record, record);
}

static clprim_status reduce_sum(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer in_range, unsigned flags, clprim_value *sum,
                                clprim_buffer result_range) {
  cl_mem in, result = NULL;
  CLPRIM_CHECK(check_common(ctx, type, in_range, n, &in));
  CLPRIM_CHECK(clprim__check_flags(ctx, flags, CLPRIM_EXACT));
  const int exact = (flags & CLPRIM_EXACT) != 0;
  if (exact) CLPRIM_CHECK(clprim__exact_check(ctx, type, "type"));
  if (!sum && !result_range.mem)
    return clprim__invalid(ctx, "no result is wanted (sum and result are both NULL)");
  if (result_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "result", result_range, 8, 1, CLPRIM__OUT_ALL, &result));

  cl_mem out;
  if (exact) {
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_RESULT, 16, &out));
    CLPRIM_CHECK(clprim__reduce_exact(ctx, type, in, n, 1, out));
  } else {
    cl_kernel tiles_kernel;
    static const char *const name = "sum_tiles";
    CLPRIM_CHECK(reduce_kernels(ctx, type, "", 0, 1, &name, &tiles_kernel));
    CLPRIM_CHECK(clprim__reduce_sum_run(ctx, type, tiles_kernel, -1, in, n, &out));
  }
  /* As arg_reduce: the host's copy, then the caller's buffer, then *sum. */
  cl_ulong bits = 0;
  if (sum) CLPRIM_CHECK(clprim__read(ctx, out, 0, sizeof bits, &bits));
  if (result) CLPRIM_CHECK(clprim__copy(ctx, out, result, 0, 0, 8));
  if (sum) *sum = value_of_bits(type, bits);
  return CLPRIM_SUCCESS;
}

clprim_status clprim_reduce_sum(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer in, unsigned flags, clprim_value *sum,
                                clprim_buffer result) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "reduce_sum"));
  return clprim__call_end(ctx, reduce_sum(ctx, n, type, in, flags, sum, result));
}

/* ------------------------------------------------ segmented reductions */
#define SEG_SUM 0 /* as in cl/reduce.cl */
#define SEG_VALUE 1
#define SEG_ARG 2

/* The value an empty segment gives min (MODE_MIN) or max: the type's
 * largest or lowest (the infinities for floats). */
static clprim_value empty_value(clprim_type type, unsigned mode) {
  clprim_value v;
  memset(&v, 0, sizeof v);
  const int min = (mode & MODE_MIN) != 0;
  switch (type) {
  case CLPRIM_INT32: v.i32 = min ? INT32_MAX : INT32_MIN; break;
  case CLPRIM_UINT32: v.u32 = min ? UINT32_MAX : 0; break;
  case CLPRIM_INT64: v.i64 = min ? INT64_MAX : INT64_MIN; break;
  case CLPRIM_UINT64: v.u64 = min ? UINT64_MAX : 0; break;
  case CLPRIM_FLOAT: v.f32 = min ? INFINITY : -INFINITY; break;
  default: v.f64 = min ? INFINITY : -INFINITY; break;
  }
  return v;
}

/* seg_exact's team (cl/reduce.cl): a power of two from min(32, wg) to wg,
 * about 32 elements a member at the segments' mean length. */
static cl_uint seg_exact_team(size_t n, size_t segments, unsigned wg) {
  const size_t mean = n / segments;
  cl_uint team = wg < 32 ? wg : 32;
  while (team < wg && (size_t)team * 32 < mean) team *= 2;
  return team;
}

/* One reduction per segment: op SEG_SUM / SEG_VALUE (out: segments
 * elements of type) or SEG_ARG (out: segments pairs of uint64). */
static clprim_status segmented_reduce(clprim_context *ctx, size_t n, clprim_type type,
                                      clprim_buffer in_range, size_t segments,
                                      clprim_type offset_type, clprim_buffer begins_range,
                                      clprim_buffer ends_range, int op, unsigned flags,
                                      unsigned mode, clprim_buffer out_range) {
  cl_mem in, begins, ends, out;
  CLPRIM_CHECK(check_common(ctx, type, in_range, n, &in));
  CLPRIM_CHECK(clprim__check_flags(ctx, flags,
                                   op == SEG_SUM ? CLPRIM_EXACT
                                                 : CLPRIM_REDUCE_ABS | CLPRIM_REDUCE_NAN_LARGEST));
  const int exact = (flags & CLPRIM_EXACT) != 0;
  if (exact) CLPRIM_CHECK(clprim__exact_check(ctx, type, "type"));
  CLPRIM_CHECK(clprim__segment_offsets(ctx, offset_type, segments, begins_range, ends_range,
                                       &begins, &ends));
  const size_t out_elem = op == SEG_ARG ? 16 : clprim_type_size(type);
  CLPRIM_CHECK(clprim__range(ctx, "out", out_range, out_elem, segments, CLPRIM__OUT_ALL, &out));
  if (segments == 0) return CLPRIM_SUCCESS;

  struct reduce_config c = reduce_config(ctx, type);
  const char *const names[2] = {"segments_check", exact ? "seg_exact" : "seg_reduce"};
  cl_kernel kernels[2];
  CLPRIM_CHECK(
      reduce_kernels(ctx, type, clprim__offsets_option(offset_type), exact, 2, names, kernels));
  /* The segments are checked before anything is written. */
  CLPRIM_CHECK(clprim__check_segments(ctx, kernels[0], begins, ends, segments, n));
  const cl_ulong segs = segments;

  const size_t groups = segments < c.max_groups ? segments : c.max_groups;
  if (exact) { /* a team a segment, each summed exactly and rounded */
    const cl_uint team = seg_exact_team(n, segments, c.wg);
    const size_t teams = c.wg / team, exact_groups = (segments + teams - 1) / teams;
    CLPRIM_CHECK(clprim__set_args(kernels[1], 6, sizeof in, &in, sizeof begins, &begins,
                                  sizeof ends, &ends, sizeof segs, &segs, sizeof team, &team,
                                  sizeof out, &out));
    return clprim__enqueue(ctx, kernels[1],
                           exact_groups < c.max_groups ? exact_groups : c.max_groups, c.wg);
  }
  const cl_int op32 = op;
  const cl_uint mode32 = reduce_mode(type, flags | mode);
  const clprim_value empty = empty_value(type, mode);
  CLPRIM_CHECK(clprim__set_args(kernels[1], 9, sizeof in, &in, sizeof begins, &begins,
                                sizeof ends, &ends, sizeof segs, &segs, sizeof op32, &op32,
                                sizeof mode32, &mode32, clprim_type_size(type), &empty,
                                sizeof out, &out, sizeof out, &out));
  return clprim__enqueue(ctx, kernels[1], groups, c.wg);
}

clprim_status clprim_segmented_sum(clprim_context *ctx, size_t n, clprim_type type,
                                   clprim_buffer in, size_t segments, clprim_type offset_type,
                                   clprim_buffer begin_offsets, clprim_buffer end_offsets,
                                   unsigned flags, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "segmented_sum"));
  return clprim__call_end(ctx,
                          segmented_reduce(ctx, n, type, in, segments, offset_type, begin_offsets,
                                           end_offsets, SEG_SUM, flags, 0, out));
}

clprim_status clprim_segmented_max(clprim_context *ctx, size_t n, clprim_type type,
                                   clprim_buffer in, size_t segments, clprim_type offset_type,
                                   clprim_buffer begin_offsets, clprim_buffer end_offsets,
                                   unsigned flags, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "segmented_max"));
  return clprim__call_end(ctx,
                          segmented_reduce(ctx, n, type, in, segments, offset_type, begin_offsets,
                                           end_offsets, SEG_VALUE, flags, 0, out));
}

clprim_status clprim_segmented_min(clprim_context *ctx, size_t n, clprim_type type,
                                   clprim_buffer in, size_t segments, clprim_type offset_type,
                                   clprim_buffer begin_offsets, clprim_buffer end_offsets,
                                   unsigned flags, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "segmented_min"));
  return clprim__call_end(ctx,
                          segmented_reduce(ctx, n, type, in, segments, offset_type, begin_offsets,
                                           end_offsets, SEG_VALUE, flags, MODE_MIN, out));
}

clprim_status clprim_segmented_argmax(clprim_context *ctx, size_t n, clprim_type type,
                                      clprim_buffer in, size_t segments, clprim_type offset_type,
                                      clprim_buffer begin_offsets, clprim_buffer end_offsets,
                                      unsigned flags, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "segmented_argmax"));
  return clprim__call_end(ctx,
                          segmented_reduce(ctx, n, type, in, segments, offset_type, begin_offsets,
                                           end_offsets, SEG_ARG, flags, 0, out));
}

clprim_status clprim_segmented_argmin(clprim_context *ctx, size_t n, clprim_type type,
                                      clprim_buffer in, size_t segments, clprim_type offset_type,
                                      clprim_buffer begin_offsets, clprim_buffer end_offsets,
                                      unsigned flags, clprim_buffer out) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "segmented_argmin"));
  return clprim__call_end(ctx,
                          segmented_reduce(ctx, n, type, in, segments, offset_type, begin_offsets,
                                           end_offsets, SEG_ARG, flags, MODE_MIN, out));
}

/* Dry runs (core/prebuild.c): one tile and several; the segmented ones. */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const size_t sizes[3] = {1, (size_t)1 << 16, d->n};
  const clprim_buffer in = clprim_buf(d->in), in2 = clprim_buf(d->in2), out = clprim_buf(d->out);
  clprim_value v;
  uint64_t u;
  for (int s = 0; s < 3; ++s) {
    clprim_argmax(ctx, sizes[s], t, in, 0, &v, &u, clprim_buf(NULL));
    clprim_reduce_max(ctx, sizes[s], t, in, 0, &v, clprim_buf(NULL));
    clprim_reduce_sum(ctx, sizes[s], t, in, 0, &v, clprim_buf(NULL));
    if (t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE)
      clprim_reduce_sum(ctx, sizes[s], t, in, CLPRIM_EXACT, &v, clprim_buf(NULL));
  }
  clprim_segmented_sum(ctx, d->n, t, in, 1, CLPRIM_UINT64, in2, in2, 0, out);
}
