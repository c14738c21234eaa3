/* topk.c: top-k (clprim_topk in include/clprim/clprim.h), kernels in
 * cl/topk.cl. A call: argument checks, then for k <= BASE on large inputs
 * topk_small (candidates beyond a sample's splitter, then work on them
 * alone), else (or when the candidates are too many) the general path: the
 * threshold by selection, then compaction of the elements beyond it (and
 * of the ties it needs) and, on request, a sort.
 *
 * A pipeline's filter -> top-k (src/pipeline.c) runs topk_small with the
 * filter (clprim__topk_filtered): its kernels are then the pipeline's build
 * (-DPIPELINE), so the sample and the gathering pass see the stages' x and
 * skip failing elements, and where topk_small would fall back the pipeline
 * compacts instead (the overflow's two passes too: they stay unfiltered).
 *
 * Top-k runs selection by rank too: the selection itself
 * (clprim__nth_select_ranks) and some level kernels of cl/nth_element.cl
 * (nth_sample, nth_count, nth_choose), which src/nth_element.c offers
 * through internal.h ("nth_element.c (used by topk.c)"), with its build
 * options (the same for cl/topk.cl) and its scratch buffers. */
#include "topk.h"
#include "engine/sample_select.h"
#include "engine/count_scan_scatter.h"
#include "../cl/internal/layout.h"

#include <string.h>

/* Scratch buffers (clprim__scratch names them): top-k's own, and those of
 * selection that it also uses (internal.h). */
#define SLOT_TOPK_COUNTS "topk: tile counts"    /* the general path's scanned counts */
#define SLOT_TOPK_CANDIDATES "topk: candidates" /* topk_small's candidates */
#define SLOT_COUNTS CLPRIM__NTH_SLOT_COUNTS
#define SLOT_META CLPRIM__NTH_SLOT_META
#define SLOT_STATE CLPRIM__NTH_SLOT_STATE
#define SLOT_RANKS CLPRIM__NTH_SLOT_RANKS
#define SLOT_RESULTS CLPRIM__NTH_SLOT_RESULTS
#define SLOT_KEYS_A CLPRIM__NTH_SLOT_KEYS_A /* the sort keys */
#define SLOT_KEYS_B CLPRIM__NTH_SLOT_KEYS_B /* the sort indices */

#define BUCKETS NTH_BUCKETS
#define BASE NTH_BASE
#define TOPK_SMALL_MIN_N (16 * BASE) /* top-k by candidates from here on */

/* The knob: the room of topk_small's one-pass candidate gather (-1: about
 * 4 times the candidates expected; tests set 16 so that its overflow path
 * runs). */
static const struct clprim_knob topk_knobs[] = {{"room", 1, (long long)1 << 40}};
/* Its state in a context: pipeline top-k runs that the candidates' path
 * finished (tests: which cases reach it). */
struct topk_state {
  uint64_t filtered_runs;
};
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_topk = {
    "topk", topk_knobs, 1, NULL, 0, sizeof(struct topk_state), prebuild};

uint64_t clprim__topk_filtered_runs(const clprim_context *ctx) {
  const struct topk_state *state = clprim__state(ctx, &clprim__family_topk);
  return state->filtered_runs;
}

/* The kernels of cl/topk.cl, in one program (on GPUs; CPUs build whole
 * files): not one program per kernel (PoCL 3.1 miscompiled kernels built
 * alone; see src/nth_element.c's LEVEL_KERNELS). */
#define TOPK_KERNELS                                                                               \
  "topk_count topk_scatter topk_pad topk_sort_step topk_gather topk_range_count "                  \
  "topk_candidates topk_candidates_direct topk_split topk_finish"

/* The kernels of a pipeline's top-k build (clprim__topk_filtered). */
#define TOPK_FILTERED_KERNELS "topk_candidates_direct topk_split topk_finish"

/* The request for kernel `name` built for type: a topk_* kernel of
 * cl/topk.cl (with cl/nth_element.cl's build options), or an nth_* level
 * kernel of cl/nth_element.cl (clprim__nth_request; count_nans: nth_count's
 * build that counts NaNs). options (216 chars) receives the build options
 * and must live as long as the request. filter (or NULL): a pipeline's
 * build (its source before the file, -DPIPELINE), as nth_element.c's
 * nth_need makes for level 0. */
static struct clprim_kernel_request topk_request(clprim_type type,
                                                 const struct clprim_nth_config *c, int count_nans,
                                                 const struct clprim_nth_filter *filter,
                                                 const char *name, cl_kernel *kernel,
                                                 char *options) {
  struct clprim_kernel_request r;
  if (strncmp(name, "nth_", 4) == 0) {
    r = clprim__nth_request(type, c, count_nans, name, kernel, options);
  } else {
    clprim__nth_options(type, c, 0, options, 200);
    const struct clprim_kernel_request t = {"topk.cl", NULL,         options,
                                            name,      TOPK_KERNELS, kernel,
                                            CLPRIM__SELECTION_FILES, NULL};
    r = t;
  }
  if (filter) {
    r.prefix = filter->prefix;
    strcat(options, " -DPIPELINE");
    /* On GPUs a pipeline's top-k program holds only what its candidate
     * path runs (the program is the pipeline's own: its first build is on
     * the run's clock). */
    if (strncmp(name, "nth_", 4) != 0) r.together = TOPK_FILTERED_KERNELS;
  }
  return r;
}

/* Builds names[j] (of cl/topk.cl or cl/nth_element.cl) for type into
 * kernels[j], together; count_nans: nth_count's build that counts NaNs;
 * filter: a pipeline's builds (or NULL). */
static clprim_status topk_kernels(clprim_context *ctx, clprim_type type,
                                  const struct clprim_nth_config *c, int count_nans,
                                  const struct clprim_nth_filter *filter, unsigned count,
                                  const char *const *names, cl_kernel *kernels) {
  char options[8][216];
  struct clprim_kernel_request req[8];
  if (count > 8) return CLPRIM_ERROR_INVALID_ARGUMENT;
  for (unsigned j = 0; j < count; ++j)
    req[j] = topk_request(type, c, count_nans, filter, names[j], &kernels[j], options[j]);
  return clprim__kernels(ctx, req, count);
}

/* Top-k for k <= BASE: a sample's splitter that leaves a few times k keys
 * beyond it (one streaming pass counts them per group; with
 * CLPRIM_NTH_REJECT_NAN a counting level for the threshold's rank instead,
 * which also counts NaNs), then one pass gathers the candidates (the keys
 * beyond it) with their indices, and the rest works on them: the exact threshold
 * among the candidates, the split into those beyond it and the indices of
 * those equal to it, the largest index that ties may take (a selection on
 * those indices, only when more tie than are needed), and one work-group
 * that sorts the k pairs and writes them. *done = 0 (nothing written) when
 * the candidates are too many to be worth it (heavy duplicates) or, by
 * chance, fewer than k.
 *
 * filter (or NULL): a pipeline's stages (clprim__topk_filtered; not with
 * CLPRIM_NTH_REJECT_NAN): `in` is its first input and `type` its x's; the
 * sample and the gathering pass run the pipeline's build, so the candidates
 * are the passing elements' keys of x (a failing one is none, and sorts
 * opposite the wanted end in the sample), topk_finish takes the values as
 * x, and *passing gets the passing count. An overflow of the room is
 * *done = 0 too (the caller compacts instead). */
static clprim_status topk_small(clprim_context *ctx, clprim_type type, cl_mem in, size_t n,
                                uint64_t k, unsigned flags, const struct clprim_nth_filter *filter,
                                cl_mem values, cl_mem indices, uint64_t *passing, int *done) {
  *done = 0;
  const struct clprim_nth_config c = clprim__nth_config(ctx);
  const clprim_type key_type = clprim_type_size(type) == 4 ? CLPRIM_UINT32 : CLPRIM_UINT64;
  const size_t es = clprim_type_size(type);
  const int smallest = (flags & CLPRIM_TOPK_SMALLEST) != 0;
  /* The kernels of this path, built together: the one-pass gather
   * (topk_candidates_direct) without NaN rejection, a counting level and the
   * counted gather with it; the overflow's pair of passes only when it
   * happens. */
  const int reject_nan = (flags & CLPRIM_NTH_REJECT_NAN) != 0;
  static const char *const names_direct[4] = {"nth_sample", "topk_candidates_direct",
                                              "topk_split", "topk_finish"};
  static const char *const names_counted[6] = {"nth_sample", "topk_split", "topk_finish",
                                               "nth_count",  "nth_choose", "topk_candidates"};
  static const char *const names_overflow[2] = {"topk_range_count", "topk_candidates"};
  cl_kernel kernels[6] = {NULL}, more[2] = {NULL};
  if (filter && reject_nan) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(
      topk_kernels(ctx, type, &c, (type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE) && reject_nan,
                   filter, reject_nan ? 6 : 4, reject_nan ? names_counted : names_direct, kernels));
  cl_kernel sample = kernels[0], direct = reject_nan ? NULL : kernels[1];
  cl_kernel split = kernels[reject_nan ? 1 : 2], finish = kernels[reject_nan ? 2 : 3];
  cl_kernel count_kernel = kernels[3], choose = kernels[4], candidates = kernels[5];
  cl_kernel range_count = NULL;
  size_t groups = (n / 4 + c.wg - 1) / c.wg;
  if (groups > c.max_groups) groups = c.max_groups;
  if (groups == 0) groups = 1;
  cl_mem counts, meta, state, ranks_dev, results;
  /* A filter's programs are the pipeline's own: on Oclgrind the buffers
   * they write are then this call's (clprim__scratch_per_call, as
   * nth_element.c's select_ranks does for level 0). */
  clprim_status (*const own_scratch)(clprim_context *, const char *, size_t, cl_mem *) =
      filter ? clprim__scratch_per_call : clprim__scratch;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_COUNTS, groups * BUCKETS * 4, &counts));
  CLPRIM_CHECK(own_scratch(ctx, SLOT_META, NTH_META_WORDS * 8, &meta));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_STATE, (NTH_STATE_HEAD + NTH_STATE_WORDS) * 8, &state));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_RANKS, 8, &ranks_dev));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_RESULTS, 8, &results));

  cl_ulong zero64 = 0, len = n, seed = 0x70CC0000ull;
  const cl_uint no_subs = 0;
  CLPRIM_CHECK(clprim__set_args(sample, 9, sizeof in, &in, sizeof zero64, &zero64, sizeof len, &len,
                                sizeof seed, &seed, sizeof meta, &meta, sizeof zero64, &zero64,
                                sizeof meta, &meta, sizeof zero64, &zero64, sizeof no_subs,
                                &no_subs));
  if (filter) {
    /* A failing element sorts at the end top-k does not want: KEY_MAX for
     * the smallest, 0 for the largest (cl/internal/sample_select.h). */
    const cl_int fail_low = !smallest;
    CLPRIM_CHECK((clprim_status)clSetKernelArg(sample, 9, sizeof fail_low, &fail_low));
    filter->extra->first = 10;
    CLPRIM_CHECK(clprim__set_extra_args(sample, filter->extra));
  }
  CLPRIM_CHECK(clprim__enqueue(ctx, sample, 1, c.wg));
  size_t cands, room; /* candidates, and the room laid out for them */
  cl_uint lo, hi;
  cl_mem cand;
  const size_t pairs = BASE; /* room for the chosen pairs */
  /* The candidates' buffer, in ulong words (see cl/topk.cl), for
   * room candidates. */
#define ALIGN4(x) (((x) + 3) & ~(size_t)3)
#define CAND_LAYOUT(room)                                                                          \
  idx_at = ALIGN4(((room)*es + 7) / 8), eq_at = idx_at + ALIGN4(room),                             \
  pk_at = eq_at + ALIGN4(room), pi_at = pk_at + pairs, cur_at = pi_at + pairs
  size_t idx_at, eq_at, pk_at, pi_at, cur_at;
  int gathered = 0; /* the candidates are in cand already */
  if (!(flags & CLPRIM_NTH_REJECT_NAN)) {
    /* The sample alone picks the candidates' buckets: beyond the splitter
     * whose sample rank leaves about 4k + 256 keys expected beyond it (the
     * chance of fewer than k is negligible; then the general path). One
     * streaming pass counts them per group. */
    const uint64_t want = 4 * k + 256;
    unsigned j;
    if (smallest) {
      for (j = 0; j < 254 && (uint64_t)n * 4 * (j + 1) < want * 1024; ++j)
        ;
      lo = 0, hi = 2 * j; /* keys below s[j] */
    } else {
      for (j = 255; j > 1 && (uint64_t)n * (1024 - 4 * j) < want * 1024; --j)
        ;
      lo = 2 * j, hi = 510; /* keys above s[j-1] */
    }
    /* One pass gathers them into room for 4 times the expected number (the
     * sample's share beyond the splitter); more, and the counted way. */
    const uint64_t expected = smallest ? (uint64_t)n * 4 * (j + 1) / 1024
                                       : (uint64_t)n * (1024 - 4 * (uint64_t)j) / 1024;
    size_t cap = (size_t)(4 * expected + 4096);
    if (cap > n / 16 + 1) cap = n / 16 + 1;
    /* The knob topk.room (tests): a smaller room, so that the counted way
     * after an overflow runs. */
    long long room_tune;
    clprim__tuned(ctx, &clprim__family_topk, 0, 0, &room_tune);
    if (room_tune > 0 && (unsigned long long)room_tune < cap) cap = (size_t)room_tune;
    CAND_LAYOUT(cap);
    CLPRIM_CHECK(own_scratch(ctx, SLOT_TOPK_CANDIDATES, (cur_at + 4) * 8, &cand));
    cl_ulong idx_at64 = idx_at, cap64 = cap, cur64 = cur_at;
    CLPRIM_CHECK(clprim__set_args(direct, 10, sizeof in, &in, sizeof zero64, &zero64, sizeof len,
                                  &len, sizeof meta, &meta, sizeof lo, &lo, sizeof hi, &hi,
                                  sizeof cand, &cand, sizeof idx_at64, &idx_at64, sizeof cap64,
                                  &cap64, sizeof cur64, &cur64));
    if (filter) {
      filter->extra->first = 10;
      CLPRIM_CHECK(clprim__set_extra_args(direct, filter->extra));
    }
    CLPRIM_CHECK(clprim__enqueue(ctx, direct, groups, c.wg));
    /* The cursors: [0] the candidates' count, with a filter [NAN_SLOT]
     * (cl/internal/sample_select.h's META_PASSING) the passing count. */
    cl_uint cursors[NTH_BUCKETS];
    CLPRIM_CHECK(clprim__read(ctx, meta, NTH_META_CURSORS_AT * 8,
                              filter ? sizeof cursors : sizeof cursors[0], cursors));
    if (filter) *passing = cursors[NTH_BUCKETS - 1];
    cands = cursors[0], room = cap, gathered = cursors[0] <= cap;
    if (cands < k || cands > n / 16) return CLPRIM_SUCCESS; /* the general path */
    if (!gathered && filter) return CLPRIM_SUCCESS; /* the caller's compaction */
    if (!gathered) {
      CLPRIM_CHECK(topk_kernels(ctx, type, &c, 0, NULL, 2, names_overflow, more));
      range_count = more[0], candidates = more[1];
      CLPRIM_CHECK(clprim__set_args(range_count, 7, sizeof in, &in, sizeof zero64, &zero64,
                                    sizeof len, &len, sizeof meta, &meta, sizeof counts, &counts,
                                    sizeof lo, &lo, sizeof hi, &hi));
      CLPRIM_CHECK(clprim__enqueue(ctx, range_count, groups, c.wg));
    }
  } else {
    /* Level 0 for the threshold's rank (its NaN count is wanted). */
    cl_ulong rank = smallest ? k - 1 : n - k;
    CLPRIM_CHECK(clprim__write(ctx, ranks_dev, 0, 8, &rank, 1));
    cl_uint r0 = 0, r1 = 1;
    CLPRIM_CHECK(clprim__set_args(count_kernel, 10, sizeof in, &in, sizeof zero64, &zero64,
                                  sizeof len, &len, sizeof meta, &meta, sizeof zero64, &zero64,
                                  sizeof counts, &counts, sizeof zero64, &zero64, sizeof meta,
                                  &meta, sizeof zero64, &zero64, sizeof no_subs, &no_subs));
    CLPRIM_CHECK(clprim__enqueue(ctx, count_kernel, groups, c.wg));
    CLPRIM_CHECK(clprim__set_args(
        choose, 13, sizeof meta, &meta, sizeof zero64, &zero64, sizeof ranks_dev, &ranks_dev,
        sizeof r0, &r0, sizeof r1, &r1, sizeof zero64, &zero64, sizeof zero64, &zero64,
        sizeof state, &state, sizeof zero64, &zero64, sizeof results, &results, sizeof meta, &meta,
        sizeof zero64, &zero64, sizeof no_subs, &no_subs));
    CLPRIM_CHECK(clprim__enqueue(ctx, choose, 1, c.wg));
    uint64_t st[NTH_STATE_HEAD + NTH_STATE_WORDS];
    CLPRIM_CHECK(clprim__read(ctx, state, 0, sizeof st, st));
    if (st[0] > 0) return clprim__invalid(ctx, "in holds a NaN (CLPRIM_NTH_REJECT_NAN)");
    const uint64_t bucket = st[2], before = st[3], size = st[4];
    cands = (size_t)(smallest ? before + size : n - before);
    lo = smallest ? 0 : (cl_uint)bucket, hi = smallest ? (cl_uint)bucket : 510;
    room = cands;
  }
  if (cands > n / 16) return CLPRIM_SUCCESS; /* not worth it: the general path */
  if (!gathered) {
    room = cands;
    CAND_LAYOUT(room);
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_TOPK_CANDIDATES, (cur_at + 4) * 8, &cand));
    cl_ulong idx_at64 = idx_at, cur64 = cur_at;
    CLPRIM_CHECK(clprim__set_args(candidates, 10, sizeof in, &in, sizeof zero64, &zero64,
                                  sizeof len, &len, sizeof meta, &meta, sizeof counts, &counts,
                                  sizeof lo, &lo, sizeof hi, &hi, sizeof cand, &cand,
                                  sizeof idx_at64, &idx_at64, sizeof cur64, &cur64));
    CLPRIM_CHECK(clprim__enqueue(ctx, candidates, groups, c.wg));
  }
#undef CAND_LAYOUT
#undef ALIGN4
  cl_ulong idx_at64 = idx_at;

  /* The threshold among the candidates (keys, so the key type). */
  uint64_t rank2 = smallest ? k - 1 : cands - k, t = 0;
  CLPRIM_CHECK(clprim__nth_select_ranks(ctx, key_type, cand, 0, cands, &rank2, 1, 0, 0, &t, NULL));

  /* (The split's two cursors were zeroed by the gathering kernel.) */
  cl_uint t32 = (cl_uint)t;
  cl_ulong t64 = t, c64 = cands, eq64 = eq_at, pk64 = pk_at, pi64 = pi_at, cur64 = cur_at;
  const void *tp = es == 4 ? (const void *)&t32 : (const void *)&t64;
  cl_int small32 = smallest, sorted32 = (flags & CLPRIM_TOPK_SORTED) != 0;
  size_t split_groups = (cands + c.wg - 1) / c.wg;
  if (split_groups > groups) split_groups = groups;
  CLPRIM_CHECK(clprim__set_args(split, 10, sizeof cand, &cand, sizeof idx_at64, &idx_at64,
                                sizeof c64, &c64, es, tp, sizeof small32, &small32, sizeof sorted32,
                                &sorted32, sizeof eq64, &eq64, sizeof pk64, &pk64, sizeof pi64,
                                &pi64, sizeof cur64, &cur64));
  CLPRIM_CHECK(clprim__enqueue(ctx, split, split_groups, c.wg));
  cl_uint split_counts[2];
  CLPRIM_CHECK(clprim__read(ctx, cand, cur_at * 8, 8, split_counts));
  const uint64_t beyond_count = split_counts[0], equal_count = split_counts[1];
  const uint64_t need = k - beyond_count;
  /* Ties: the need lowest indices among the equal ones. */
  uint64_t last = ~(uint64_t)0;
  if (equal_count > need) {
    uint64_t rank3 = need - 1;
    CLPRIM_CHECK(clprim__nth_select_ranks(ctx, CLPRIM_UINT64, cand, eq_at, (size_t)equal_count,
                                          &rank3, 1, 0, 0, &last, NULL));
  }
  const int index64 = (flags & CLPRIM_INDICES_64) != 0;
  cl_uint g32 = (cl_uint)beyond_count, k32 = (cl_uint)k;
  cl_ulong e64 = equal_count, last64 = last;
  cl_int want_values = values != NULL, want_indices = indices != NULL, index32 = index64;
  cl_mem vbuf = values ? values : cand, ibuf = indices ? indices : cand;
  CLPRIM_CHECK(clprim__set_args(finish, 18, sizeof in, &in, sizeof cand, &cand, sizeof pk64, &pk64,
                                sizeof pi64, &pi64, sizeof g32, &g32, sizeof eq64, &eq64,
                                sizeof e64, &e64, sizeof last64, &last64, es, tp, sizeof small32,
                                &small32, sizeof sorted32, &sorted32, sizeof k32, &k32, sizeof vbuf,
                                &vbuf, sizeof ibuf, &ibuf, sizeof want_values, &want_values,
                                sizeof want_indices, &want_indices, sizeof index32, &index32,
                                sizeof cur64, &cur64));
  if (filter) { /* the values are x: topk_finish runs the stages on its k elements */
    filter->extra->first = 18;
    CLPRIM_CHECK(clprim__set_extra_args(finish, filter->extra));
  }
  CLPRIM_CHECK(clprim__enqueue(ctx, finish, 1, c.wg));
  *done = 1;
  return CLPRIM_SUCCESS;
}

static clprim_status topk(clprim_context *ctx, size_t n, clprim_type type,
                          clprim_buffer in_range, uint64_t k, unsigned flags,
                          clprim_buffer values_range, clprim_buffer indices_range) {
  const unsigned allowed =
      CLPRIM_NTH_REJECT_NAN | CLPRIM_TOPK_SMALLEST | CLPRIM_TOPK_SORTED | CLPRIM_INDICES_64;
  cl_mem in, values = NULL, indices = NULL;
  if (n == 0) { /* the top 0 of nothing is defined (empty); anything more is not */
    CLPRIM_CHECK(clprim__check_type(ctx, "type", type));
    CLPRIM_CHECK(clprim__check_flags(ctx, flags, allowed));
    if (!values_range.mem && !indices_range.mem)
      return clprim__invalid(ctx, "no output is given (values and indices are both NULL)");
    if (k != 0) return clprim__invalid(ctx, "k (%llu) is larger than n (0)", (unsigned long long)k);
    CLPRIM_CHECK(clprim__range(ctx, "in", in_range, clprim_type_size(type), 0, CLPRIM__READ, &in));
    if (values_range.mem)
      CLPRIM_CHECK(clprim__range(ctx, "values", values_range, clprim_type_size(type), 0,
                                 CLPRIM__OUT, &values));
    if (indices_range.mem)
      CLPRIM_CHECK(clprim__range(ctx, "indices", indices_range, 4, 0, CLPRIM__OUT, &indices));
    return CLPRIM_SUCCESS;
  }
  CLPRIM_CHECK(clprim__nth_check(ctx, n, type, in_range, flags, allowed, &in));
  if (k > n)
    return clprim__invalid(ctx, "k (%llu) is larger than n (%zu)", (unsigned long long)k, n);
  if (!values_range.mem && !indices_range.mem)
    return clprim__invalid(ctx, "no output is given (values and indices are both NULL)");
  const size_t es = clprim_type_size(type);
  const int index64 = (flags & CLPRIM_INDICES_64) != 0;
  if (values_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "values", values_range, es, k, CLPRIM__OUT_ALL, &values));
  if (indices_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "indices", indices_range, index64 ? 8 : 4, k, CLPRIM__OUT_ALL,
                               &indices));
  if (k == 0) return CLPRIM_SUCCESS;
  return clprim__topk_run(ctx, n, type, in, k, flags, values, indices);
}

clprim_status clprim__topk_run(clprim_context *ctx, size_t n, clprim_type type, cl_mem in,
                               uint64_t k, unsigned flags, cl_mem values, cl_mem indices) {
  const struct clprim_nth_config c = clprim__nth_config(ctx);
  const size_t es = clprim_type_size(type);
  const int index64 = (flags & CLPRIM_INDICES_64) != 0;
  const int smallest = (flags & CLPRIM_TOPK_SMALLEST) != 0;
  const int sorted = (flags & CLPRIM_TOPK_SORTED) != 0;
  const size_t tile = (size_t)c.wg * c.items, tiles = n / tile + (n % tile != 0);
  cl_mem offsets;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_TOPK_COUNTS, (tiles + 1) * 8, &offsets));

  if (k <= BASE && n >= TOPK_SMALL_MIN_N) {
    int done;
    CLPRIM_CHECK(topk_small(ctx, type, in, n, k, flags, NULL, values, indices, NULL, &done));
    if (done) return CLPRIM_SUCCESS;
  }
  /* The general path: its kernels, then the threshold, the key of rank
   * n - k (largest) or k - 1 (smallest). */
  static const char *const names[5] = {"topk_count", "topk_scatter", "topk_sort_step",
                                       "topk_gather", "topk_pad"};
  cl_kernel kernels[5] = {NULL};
  CLPRIM_CHECK(topk_kernels(ctx, type, &c, 0, NULL, sorted ? 5 : 2, names, kernels));
  cl_kernel count_kernel = kernels[0], scatter_kernel = kernels[1], step_kernel = kernels[2],
            gather_kernel = kernels[3], pad_kernel = kernels[4];
  uint64_t rank = smallest ? k - 1 : n - k, t = 0;
  CLPRIM_CHECK(clprim__nth_select_ranks(ctx, type, in, 0, n, &rank, 1, flags, 0, &t, NULL));

  /* The sort arrays come after selection (they reuse its level buffers). */
  size_t len2 = 1;
  cl_mem sort_keys = offsets, sort_indices = offsets;
  if (sorted) {
    while (len2 < k)
      len2 <<= 1;
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_KEYS_A, len2 * es, &sort_keys));
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_KEYS_B, len2 * 8, &sort_indices));
    if (len2 > k) {
      cl_ulong k64 = k, len64 = len2;
      const size_t pad = len2 - k, group = pad < c.wg ? pad : c.wg;
      CLPRIM_CHECK(clprim__set_args(pad_kernel, 4, sizeof sort_keys, &sort_keys,
                                    sizeof sort_indices, &sort_indices, sizeof k64, &k64,
                                    sizeof len64, &len64));
      CLPRIM_CHECK(clprim__enqueue(ctx, pad_kernel, (pad + group - 1) / group, group));
    }
  }
  /* The threshold travels as a key of the type's width. */
  cl_uint t32 = (cl_uint)t;
  cl_ulong t64 = t;
  const size_t tsize = es;
  const void *tp = es == 4 ? (const void *)&t32 : (const void *)&t64;
  cl_ulong n64 = n, tiles64 = tiles, k64 = k;
  cl_int small32 = smallest, want_values = values != NULL, want_indices = indices != NULL;
  cl_int index32 = index64, sorted32 = sorted;
  cl_mem vbuf = values ? values : offsets, ibuf = indices ? indices : offsets;
  /* Sorted, the scatter fills the sort arrays and the gather writes the
   * outputs: the one command that does (it is not given them). */
  const cl_mem scatter_v = sorted ? offsets : vbuf, scatter_i = sorted ? offsets : ibuf;
  CLPRIM_CHECK(clprim__set_args(count_kernel, 5, sizeof in, &in, sizeof n64, &n64, tsize, tp,
                                sizeof small32, &small32, sizeof offsets, &offsets));
  CLPRIM_CHECK(clprim__set_args(scatter_kernel, 15, sizeof in, &in, sizeof n64, &n64, tsize, tp,
                                sizeof small32, &small32, sizeof offsets, &offsets, sizeof tiles64,
                                &tiles64, sizeof k64, &k64, sizeof scatter_v, &scatter_v,
                                sizeof scatter_i, &scatter_i, sizeof want_values, &want_values,
                                sizeof want_indices, &want_indices, sizeof index32, &index32,
                                sizeof sorted32, &sorted32,
                                sizeof sort_keys, &sort_keys, sizeof sort_indices, &sort_indices));
  const struct clprim_count_scan_scatter passes = {
      {count_kernel, tiles, c.wg}, {scatter_kernel, tiles, c.wg}, CLPRIM_UINT64, offsets, tiles};
  CLPRIM_CHECK(clprim__count_scan_scatter(ctx, &passes));
  if (!sorted) return CLPRIM_SUCCESS;

  const size_t group = len2 < c.wg ? len2 : c.wg;
  for (cl_ulong block = 2; block <= len2; block <<= 1)
    for (cl_ulong dist = block >> 1; dist > 0; dist >>= 1) {
      CLPRIM_CHECK(clprim__set_args(step_kernel, 4, sizeof sort_keys, &sort_keys,
                                    sizeof sort_indices, &sort_indices, sizeof block, &block,
                                    sizeof dist, &dist));
      CLPRIM_CHECK(clprim__enqueue(ctx, step_kernel, len2 / group, group));
    }
  const size_t gather_groups = (k + c.wg - 1) / c.wg;
  CLPRIM_CHECK(clprim__set_args(gather_kernel, 8, sizeof in, &in, sizeof sort_indices,
                                &sort_indices, sizeof k64, &k64, sizeof vbuf, &vbuf, sizeof ibuf,
                                &ibuf, sizeof want_values, &want_values, sizeof want_indices,
                                &want_indices, sizeof index32, &index32));
  return clprim__enqueue(ctx, gather_kernel, gather_groups, c.wg);
}

clprim_status clprim__topk_filtered(clprim_context *ctx, size_t n, clprim_type type, cl_mem in,
                                    uint64_t k, unsigned flags,
                                    const struct clprim_nth_filter *filter, cl_mem values,
                                    cl_mem indices, uint64_t *passing, int *done) {
  *done = 0;
  if (k == 0 || k > BASE || n < TOPK_SMALL_MIN_N || (uint64_t)n >= ((uint64_t)1 << 32) ||
      (flags & CLPRIM_NTH_REJECT_NAN))
    return CLPRIM_SUCCESS;
  CLPRIM_CHECK(topk_small(ctx, type, in, n, k, flags, filter, values, indices, passing, done));
  ((struct topk_state *)clprim__state(ctx, &clprim__family_topk))->filtered_runs +=
      (uint64_t)*done;
  return CLPRIM_SUCCESS;
}

clprim_status clprim__topk(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                           uint64_t k, unsigned flags, clprim_buffer values,
                           clprim_buffer indices) {
  return topk(ctx, n, type, in, k, flags, values, indices);
}

clprim_status clprim_topk(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                          uint64_t k, unsigned flags, clprim_buffer values,
                          clprim_buffer indices) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "topk"));
  return clprim__call_end(ctx, topk(ctx, n, type, in, k, flags, values, indices));
}

/* Dry runs (core/prebuild.c): the candidates' path and the general one,
 * sorted or not, small k and large. */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const size_t sizes[2] = {(size_t)1 << 16, d->n};
  for (int s = 0; s < 2; ++s)
    for (int sorted = 0; sorted < 2; ++sorted) {
      const unsigned flags = sorted ? CLPRIM_TOPK_SORTED : 0;
      clprim_topk(ctx, sizes[s], t, clprim_buf(d->in), 1, flags, clprim_buf(d->out),
                  clprim_buf(d->out2));
      clprim_topk(ctx, sizes[s], t, clprim_buf(d->in), 5000, flags, clprim_buf(d->out),
                  clprim_buf(d->out2));
    }
}
