/* exact.c: the exact accumulator's plan, for every float and double sum
 * that takes CLPRIM_EXACT (cl/internal/exact.h has the accumulator and the
 * method; docs/ACCURACY.md what it gives).
 *
 * One pass over the data, in work-groups of contiguous shares, each
 * leaving a record of its words and flags; then one work-group adds the
 * records word by word and rounds once. The records are few (at most
 * max_groups), so the second launch costs microseconds. */
#include "exact.h"

#include "../../cl/internal/layout.h"

#include <stdio.h>

#define SLOT_RECORDS "exact: records"

/* The engine's knob: whether work-items add to the work-group's words with
 * 64-bit local atomics where the device has them (1), or always with the
 * pair of 32-bit words that every device has (0: tests reach that code
 * on devices with 64-bit atomics). */
enum { EXACT_ATOMICS64 };
static const struct clprim_knob exact_knobs[] = {{"atomics64", 0, 1}};
static const struct clprim_tuning_row exact_table[] = {
    {0, 0, NULL, 0, 0, CLPRIM__KNOB(EXACT_ATOMICS64), {1},
     "portable: 64-bit local atomics where the device has them"},
};
const struct clprim_family clprim__engine_exact = {
    "exact", exact_knobs, 1, exact_table, sizeof exact_table / sizeof exact_table[0], 0, NULL};

void clprim__exact_options(const clprim_context *ctx, char *options, size_t size) {
  long long v[1];
  clprim__tuned(ctx, &clprim__engine_exact, 0, 0, v);
  snprintf(options, size, " -DEXACT_ATOM64=%d -DEXACT_OUTLINE=%d",
           v[EXACT_ATOMICS64] != 0 && ctx->info.has_int64_atomics,
           (ctx->info.device_type & CL_DEVICE_TYPE_CPU) != 0);
}

clprim_status clprim__exact_check(clprim_context *ctx, clprim_type type, const char *what) {
  if (type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE) return CLPRIM_SUCCESS;
  return clprim__invalid(ctx, "CLPRIM_EXACT is for float and double sums (%s is %s)", what,
                         clprim_type_name(type));
}

/* Elements a work-item takes at least before another work-group is worth
 * its record. */
#define EXACT_ITEM_MIN 64

size_t clprim__exact_record_words(clprim_type type) {
  return EXACT_RECORD(type == CLPRIM_DOUBLE ? EXACT_WORDS_DOUBLE : EXACT_WORDS_FLOAT);
}

static clprim_status launch_final(clprim_context *ctx, cl_kernel final, unsigned wg,
                                  cl_mem records, size_t groups, int round, cl_mem result) {
  const cl_uint count = (cl_uint)groups, round32 = round != 0;
  CLPRIM_CHECK(clprim__set_args(final, 4, sizeof records, &records, sizeof count, &count,
                                sizeof round32, &round32, sizeof result, &result));
  return clprim__enqueue(ctx, final, 1, wg);
}

clprim_status clprim__exact_round_record(clprim_context *ctx, cl_kernel final, unsigned wg,
                                         cl_mem record, cl_mem result) {
  return launch_final(ctx, final, wg, record, 1, 1, result);
}

clprim_status clprim__exact_sum(clprim_context *ctx, clprim_type type, cl_kernel tiles,
                                cl_kernel final, unsigned wg, size_t max_groups, cl_mem in,
                                size_t n, int round, cl_mem result) {
  const size_t words = clprim__exact_record_words(type) - 1;
  const size_t per_group = (size_t)wg * EXACT_ITEM_MIN;
  size_t groups = n / per_group + (n % per_group != 0);
  if (groups > max_groups) groups = max_groups;
  if (groups == 0) groups = 1;
  cl_mem records;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_RECORDS, groups * EXACT_RECORD(words) * 8, &records));
  const cl_ulong n64 = n;
  CLPRIM_CHECK(clprim__set_args(tiles, 3, sizeof in, &in, sizeof n64, &n64, sizeof records,
                                &records));
  CLPRIM_CHECK(clprim__enqueue(ctx, tiles, groups, wg));
  return launch_final(ctx, final, wg, records, groups, round, result);
}
