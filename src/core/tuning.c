/* tuning.c: the knobs, read once per context from the environment into
 * ctx->tuning (docs/TUNING.md says what each is for). Families read the
 * table, never the environment; tests set knobs with clprim__tune. */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* In enum clprim_knob's order. */
static const char *const knob_names[CLPRIM_KNOB_COUNT] = {
    "CLPRIM_SCAN_WG",          "CLPRIM_SCAN_ITEMS",        "CLPRIM_SCAN_SINGLE_PASS",
    "CLPRIM_SELECT_ITEMS",     "CLPRIM_SELECT_SINGLE_PASS", "CLPRIM_HIST_QUADS",
    "CLPRIM_HIST_AGG",         "CLPRIM_HIST_RUNS",         "CLPRIM_HIST_NV_FAST",
    "CLPRIM_HIST_BINNED",      "CLPRIM_HIST_RANGE_SHIFT",  "CLPRIM_HIST_SLICE",
    "CLPRIM_HIST_PQUADS",      "CLPRIM_HIST_PWG",          "CLPRIM_HIST_PART_RUNS",
    "CLPRIM_HIST_DIRECT",      "CLPRIM_HIST_SHARED_RED",   "CLPRIM_RBK_ITEMS",
    "CLPRIM_NTH_GROUPS_PER_UNIT", "CLPRIM_NTH_SMALL_MAX",  "CLPRIM_NTH_TOPK_ROOM",
    "CLPRIM_SORT_ITEMS",       "CLPRIM_SORT_ONESWEEP",     "CLPRIM_SORT_SMALL_MAX",
    "CLPRIM_SORT_PEERS",       "CLPRIM_SORT_WG",           "CLPRIM_SEG_TOPK_LONG",
    "CLPRIM_MPI_GATHER_MAX",   "CLPRIM_NATIVE_SCAN",       "CLPRIM_TRACE",
    "CLPRIM_DEBUG"};

void clprim__read_tuning(clprim_context *ctx) {
  for (unsigned k = 0; k < CLPRIM_KNOB_COUNT; ++k) {
    ctx->tuning[k] = -1;
    const char *env = getenv(knob_names[k]);
    if (!env) continue;
    if (k == CLPRIM_KNOB_TRACE || k == CLPRIM_KNOB_DEBUG) { /* set: on */
      ctx->tuning[k] = 1;
      continue;
    }
    char *end;
    errno = 0;
    const long long v = strtoll(env, &end, 10);
    if (*env && !*end && errno == 0 && v >= 0)
      ctx->tuning[k] = v;
    else
      fprintf(stderr, "clprim: %s=\"%s\" is not a number of 0 or more; ignored\n",
              knob_names[k], env);
  }
}

void clprim__tune(clprim_context *ctx, enum clprim_knob knob, long long value) {
  if ((unsigned)knob < CLPRIM_KNOB_COUNT) ctx->tuning[knob] = value;
}
