/* clprim-tune: tunes the families' knobs on the device at hand and writes
 * the winners to the device's tuning file, which later contexts on that
 * device (and driver) read after the tables (src/core/tuning.c).
 *
 * Each sweep is one bench row (a call, a type, a size) and the knobs of one
 * family that it depends on. It starts from what the tables give here; with
 * --full it tries every pair of its first two knobs' values, then each
 * knob's values in turn, the others at their best so far, in rounds. A
 * setting is kept when its median device time (the bench's bench_time:
 * OpenCL profiling events, three warm-up runs) is at least 1% below the
 * best so far and its output is the same as the tables' (one that fails or
 * differs is reported and left out). The file gets, per sweep, the knobs
 * whose winner differs from the start. Run `clprim-tune --help` for the
 * options. docs/TUNING.md has the file's form. */
#include "../src/core/core.h"
#include "bench/harness.h" /* bench_time: profiling events, warm-up, median */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: clprim-tune [--quick | --full] [--n N] [--families LIST] [--output FILE]\n"
    "                   [--print] [--help]\n"
    "  --quick         (default) a few values of each knob, 2^26 elements on GPUs and\n"
    "                  2^20 on other devices, the median of 7 runs\n"
    "  --full          more values, 2^28 elements on GPUs (2^22 elsewhere; less where\n"
    "                  memory is short), the median of 21 runs\n"
    "  --n N           elements of every row instead\n"
    "  --families LIST only these families' sweeps (comma-separated: reduce, scan,\n"
    "                  select, histogram, sort, reduce_by_key, scan_by_key,\n"
    "                  sample_select, search, launch: the cpu path's shares)\n"
    "  --output FILE   write there instead of the device's tuning file in clprim's\n"
    "                  cache folder (the one later contexts read; $CLPRIM_TUNING_FILE\n"
    "                  where set)\n"
    "  --print         print the file on stdout instead of writing it\n"
    "  --help          this text\n"
    "The device, path and cache folder: $CLPRIM_DEVICE, $CLPRIM_PATH and\n"
    "$CLPRIM_CACHE_DIR, as for every clprim program. The sweeps start from the\n"
    "tables (with CLPRIM_TUNING_TABLES=portable from their portable rows), never\n"
    "from an earlier tuning file. Progress goes to stderr.\n";

/* ------------------------------------------------------------- the data */

struct data {
  size_t n;
  cl_mem u32, u64, sorted32, runs32, out, out2;
  clprim_value value;
  uint64_t count, outside[3];
};

static unsigned long long rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

static cl_mem buffer(clprim_context *ctx, size_t bytes, const void *host) {
  cl_int err;
  cl_mem m = clCreateBuffer(clprim_context_cl_context(ctx),
                            CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                            (void *)host, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "clprim-tune: a buffer of %zu bytes: OpenCL error %d\n", bytes, err);
    exit(1);
  }
  return m;
}

static void make_data(clprim_context *ctx, struct data *d) {
  const size_t n = d->n;
  uint32_t *a = malloc(n * 4), *s = malloc(n * 4), *r = malloc(n * 4);
  uint64_t *b = malloc(n * 8);
  if (!a || !s || !r || !b) {
    fprintf(stderr, "clprim-tune: out of host memory for n = %zu\n", n);
    exit(1);
  }
  for (size_t i = 0; i < n; ++i) {
    b[i] = next_random();
    a[i] = (uint32_t)(b[i] >> 33);   /* [0, 2^31): int32 sums and orders alike */
    s[i] = (uint32_t)(i / 4) * 2;    /* a sorted haystack */
    r[i] = (uint32_t)(i / 16);       /* runs of 16 */
  }
  d->u32 = buffer(ctx, n * 4, a), d->u64 = buffer(ctx, n * 8, b);
  d->sorted32 = buffer(ctx, n * 4, s), d->runs32 = buffer(ctx, n * 4, r);
  d->out = buffer(ctx, n * 8, NULL), d->out2 = buffer(ctx, n * 8, NULL);
  free(a), free(s), free(r), free(b);
}

/* ------------------------------------------------------------ the calls */

#define NONE clprim_buf(NULL)
static clprim_status sum32(clprim_context *c, void *arg) {
  struct data *d = arg;
  return clprim_reduce_sum(c, d->n, CLPRIM_INT32, clprim_buf(d->u32), 0, &d->value, NONE);
}
static clprim_status sum64(clprim_context *c, void *arg) {
  struct data *d = arg;
  return clprim_reduce_sum(c, d->n, CLPRIM_UINT64, clprim_buf(d->u64), 0, &d->value, NONE);
}
static clprim_status scan32(clprim_context *c, void *arg) {
  struct data *d = arg;
  return clprim_scan_inclusive(c, d->n, CLPRIM_INT32, clprim_buf(d->u32), 0, clprim_buf(d->out));
}
static clprim_status scan64(clprim_context *c, void *arg) {
  struct data *d = arg;
  return clprim_scan_inclusive(c, d->n, CLPRIM_UINT64, clprim_buf(d->u64), 0, clprim_buf(d->out));
}
static clprim_status select32(clprim_context *c, void *arg) {
  struct data *d = arg;
  clprim_predicate p;
  memset(&p, 0, sizeof p);
  p.op = CLPRIM_PRED_GT, p.a.i32 = 1 << 30; /* half pass */
  return clprim_select(c, d->n, CLPRIM_INT32, clprim_buf(d->u32), &p, 0, clprim_buf(d->out),
                       NONE, &d->count, NONE);
}
static clprim_status histogram256(clprim_context *c, void *arg) {
  struct data *d = arg;
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
  hi.i32 = 0x7fffffff;
  return clprim_histogram_even(c, d->n, CLPRIM_INT32, clprim_buf(d->u32), lo, hi, 256,
                               clprim_buf(d->out), d->outside, NONE);
}
static clprim_status sort32(clprim_context *c, void *arg) {
  struct data *d = arg;
  return clprim_sort_keys(c, d->n, CLPRIM_UINT32, clprim_buf(d->u32), 0, 0, 0, clprim_buf(d->out));
}
static clprim_status sort64(clprim_context *c, void *arg) {
  struct data *d = arg;
  return clprim_sort_keys(c, d->n, CLPRIM_UINT64, clprim_buf(d->u64), 0, 0, 0, clprim_buf(d->out));
}
static clprim_status pairs32(clprim_context *c, void *arg) {
  struct data *d = arg;
  return clprim_sort_pairs(c, d->n, CLPRIM_UINT32, clprim_buf(d->u32), CLPRIM_UINT32,
                           clprim_buf(d->runs32), 0, 0, 0, clprim_buf(d->out),
                           clprim_buf_at(d->out2, 0));
}
static clprim_status rbk32(clprim_context *c, void *arg) {
  struct data *d = arg;
  return clprim_reduce_by_key(c, d->n, CLPRIM_UINT32, clprim_buf(d->runs32), CLPRIM_INT32,
                              clprim_buf(d->u32), 0, clprim_buf(d->out), clprim_buf(d->out2),
                              &d->count, NONE);
}
static clprim_status sbk32(clprim_context *c, void *arg) {
  struct data *d = arg;
  return clprim_scan_inclusive_by_key(c, d->n, CLPRIM_UINT32, clprim_buf(d->runs32), CLPRIM_INT32,
                                      clprim_buf(d->u32), clprim_buf(d->out));
}
static clprim_status median32(clprim_context *c, void *arg) {
  struct data *d = arg;
  return clprim_median(c, d->n, CLPRIM_UINT32, clprim_buf(d->u32), 0, &d->value, NONE);
}
static clprim_status search32(clprim_context *c, void *arg) {
  struct data *d = arg;
  return clprim_lower_bound(c, d->n, CLPRIM_UINT32, clprim_buf(d->sorted32), d->n,
                            clprim_buf(d->u32), 0, clprim_buf(d->out));
}

/* ----------------------------------------------------------- the sweeps */

#define KNOBS 3
#define NV (1u << CLPRIM_PATH_NV_PTX)
#define CPU (1u << CLPRIM_PATH_CPU)
struct knob {
  const char *name;
  const char *quick, *full; /* the values tried, comma-separated */
  unsigned paths;           /* 0: every path; else where the knob does something */
};
struct sweep {
  const char *row, *family;
  /* The row's sizes as the family looks its knobs up (core/tuning.c), and
   * as the file names them (0: any; CLPRIM__NO_VALUES: keys alone). */
  unsigned key_bytes, value_bytes, file_key_bytes, file_value_bytes;
  bench_call call;
  size_t out_bytes; /* bytes of d->out compared (per element) */
  /* Also compare d->value (1), d->count (2: count elements out) or d->outside
   * (3: 256 bins out); 0: n elements out. */
  int host;
  struct knob knobs[KNOBS];
};

static const struct sweep sweeps[] = {
    {"sum, int32", "reduce", 4, 0, 4, 0, sum32, 0, 1,
     {{"items", "8,16,32", "4,8,16,32,64", 0}}},
    {"sum, uint64", "reduce", 8, 0, 8, 0, sum64, 0, 1,
     {{"items", "4,8,16", "4,8,16,32", 0}}},
    {"inclusive scan, int32", "scan", 4, 0, 4, 0, scan32, 4, 0,
     {{"wg", "128,256,512", "64,128,256,512,1024", 0},
      {"items", "8,16,32", "4,8,12,16,24,32,48", 0},
      {"single_pass", "0,1", "0,1", NV}}},
    {"inclusive scan, uint64", "scan", 8, 0, 8, 0, scan64, 8, 0,
     {{"items", "4,8,16", "4,8,12,16,24", 0}}},
    {"select, int32, half pass", "select", 4, 0, 4, 0, select32, 4, 2,
     {{"items", "8,16,32", "4,8,12,16,24,32", 0}, {"single_pass", "0,1", "0,1", NV}}},
    {"histogram, 256 bins, int32", "histogram", 0, 0, 0, CLPRIM__NO_VALUES, histogram256, 4, 3,
     {{"quads", "1,2,4,8", "1,2,4,8", 0}, {"agg", "0,2", "0,1,2", 0}}},
    {"sort keys, uint32", "sort", 4, 0, 4, CLPRIM__NO_VALUES, sort32, 4, 0,
     {{"wg", "128,256,512", "128,256,384,512", 0},
      {"items", "8,16,24,32", "8,12,16,20,24,28,32,40", 0},
      {"onesweep", "0,1", "0,1", NV}}},
    {"sort keys, uint64", "sort", 8, 0, 8, CLPRIM__NO_VALUES, sort64, 8, 0,
     {{"wg", "128,256,512", "128,256,384,512", 0},
      {"items", "8,12,16,20", "8,12,16,20,24", 0}}},
    {"sort pairs, uint32 / uint32", "sort", 4, 4, 4, 4, pairs32, 4, 0,
     {{"wg", "128,256,512", "128,256,384,512", 0},
      {"items", "8,12,16,24", "8,12,16,20,24,32,40,44", 0}}},
    {"reduce-by-key, runs of 16", "reduce_by_key", 0, 0, 0, 0, rbk32, 4, 2,
     {{"items", "4,8,16", "4,8,16", 0}}},
    {"inclusive scan by key, runs of 16", "scan_by_key", 4, 4, 4, 4, sbk32, 4, 0,
     {{"items", "8,16", "4,8,12,16", 0}, {"single_pass", "0,1", "0,1", NV}}},
    {"median, uint32", "sample_select", 0, 0, 0, 0, median32, 0, 1,
     {{"groups_per_unit", "1,2,4,8", "1,2,4,8,16,32", 0}}},
    {"lower bound, uint32", "search", 4, 0, 4, 0, search32, 4, 0,
     {{"wg", "64,128,256", "64,128,256,512", 0}}},
    /* The cpu path's shares, through a sort (its passes take both). */
    {"cpu path's shares, sort keys, uint32", "launch", 0, 0, 0, 0, sort32, 4, 0,
     {{"cpu_shares_per_unit", "2,4,8,16", "1,2,4,8,16,32", CPU},
      {"cpu_share_min", "1024,4096,16384", "256,1024,4096,16384,65536", CPU}}},
};
#define SWEEPS (int)(sizeof sweeps / sizeof sweeps[0])

static const struct clprim_family *family_of(const clprim_context *ctx, const char *name) {
  for (unsigned i = 0; i < ctx->family_count; ++i)
    if (strcmp(ctx->families[i]->name, name) == 0) return ctx->families[i];
  return NULL;
}
static int knob_index(const struct clprim_family *f, const char *name) {
  for (unsigned k = 0; k < f->knob_count; ++k)
    if (strcmp(f->knobs[k].name, name) == 0) return (int)k;
  return -1;
}

/* Every knob of f back to the tables' value. */
static void to_tables(clprim_context *ctx, const struct clprim_family *f) {
  for (unsigned k = 0; k < f->knob_count; ++k) {
    char assign[128];
    snprintf(assign, sizeof assign, "%s.%s=-1", f->name, f->knobs[k].name);
    clprim__tune(ctx, assign);
  }
}

/* ---------------------------------------------------------- the timing */

static int reps = 7;

/* The median device time of s's call (bench_time: OpenCL profiling events,
 * three warm-up runs), or a negative number when a run fails. */
static double time_call(clprim_context *ctx, const struct sweep *s, struct data *d) {
  struct bench b;
  memset(&b, 0, sizeof b);
  b.ctx = ctx, b.reps = reps;
  double ms;
  const char *what;
  return bench_time(&b, s->call, d, &ms, &what) == CLPRIM_SUCCESS ? ms : -1;
}

/* What s's call gave (its output's first bytes and host value), to compare
 * each value's run with the tables'. */
struct result {
  unsigned char *bytes;
  size_t size;
  clprim_value value;
  uint64_t count, outside[3];
};
static int take_result(clprim_context *ctx, const struct sweep *s, struct data *d,
                       struct result *r) {
  /* n elements out; count of them (host 2); the 256 bins (host 3). */
  const size_t elements = s->host == 2 ? (size_t)(d->count < d->n ? d->count : d->n)
                          : s->host == 3 ? 256
                                         : d->n;
  r->size = s->out_bytes * elements;
  r->bytes = malloc(r->size ? r->size : 1);
  r->value = d->value, r->count = d->count;
  memcpy(r->outside, d->outside, sizeof r->outside);
  return r->bytes && clEnqueueReadBuffer(clprim_context_queue(ctx), d->out, CL_TRUE, 0, r->size,
                                         r->bytes, 0, NULL, NULL) == CL_SUCCESS;
}
static int same_result(const struct sweep *s, const struct result *a, const struct result *b) {
  if (s->host == 1 && memcmp(&a->value, &b->value, sizeof a->value) != 0) return 0;
  if (s->host == 2 && a->count != b->count) return 0;
  if (s->host == 3 && memcmp(a->outside, b->outside, sizeof a->outside) != 0) return 0;
  return a->size == b->size && memcmp(a->bytes, b->bytes, a->size) == 0;
}

/* ------------------------------------------------------------ the trials */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}


/* The settings a sweep ran (as clprim__tune takes them). */
struct tried {
  char text[512][200];
  int count;
};
/* What one sweep's trials share. */
struct trial {
  clprim_context *ctx;
  const struct sweep *s;
  const struct clprim_family *f;
  struct data *d;
  const struct result *ref;
  long long *best;
  double *best_ms;
  int *failures;
  struct tried *tried;
  double t0;
};

static const char *next_value(const char *p) {
  p += strcspn(p, ",");
  return p + (*p == ',');
}

/* Runs the sweep's call with its knobs at v[] (the family's knob order),
 * unless that setting ran already; keeps it as the best when at least 1%
 * faster with the tables' result. 1 when it became the best. */
/* The sweep's knobs at v[] as clprim__tune takes them, into assign (200
 * bytes); 1 when it ran already (else it is noted as run). */
static int setting(struct trial *t, const long long *v, char *assign) {
  assign[0] = 0;
  for (int ki = 0; ki < KNOBS && t->s->knobs[ki].name; ++ki) {
    const int j = knob_index(t->f, t->s->knobs[ki].name);
    if (j >= 0)
      snprintf(assign + strlen(assign), 200 - strlen(assign), "%s%s.%s=%lld",
               assign[0] ? "," : "", t->f->name, t->f->knobs[j].name, v[j]);
  }
  for (int i = 0; i < t->tried->count; ++i)
    if (strcmp(t->tried->text[i], assign) == 0) return 1;
  if (t->tried->count < 512) strcpy(t->tried->text[t->tried->count++], assign);
  return 0;
}

static int try_values(struct trial *t, const long long *v) {
  const struct sweep *s = t->s;
  char assign[200];
  if (setting(t, v, assign) || clprim__tune(t->ctx, assign) != CLPRIM_SUCCESS) return 0;
  const double ms = time_call(t->ctx, s, t->d);
  struct result got;
  memset(&got, 0, sizeof got);
  const char *verdict = "";
  int better = 0;
  if (ms < 0)
    verdict = " failed", ++*t->failures;
  else if (!take_result(t->ctx, s, t->d, &got) || !same_result(s, t->ref, &got))
    verdict = " gave another result (left out)", ++*t->failures;
  else if (ms < 0.99 * *t->best_ms) {
    verdict = " (best so far)", better = 1, *t->best_ms = ms;
    memcpy(t->best, v, sizeof(long long) * CLPRIM__KNOBS_MAX);
  }
  free(got.bytes);
  fprintf(stderr, "[%5.0f s] %s: %s: %.4f ms%s\n", now_s() - t->t0, s->row, assign, ms, verdict);
  if (ms < 0) fprintf(stderr, "  %s\n", clprim_context_last_error(t->ctx));
  return better;
}

/* ------------------------------------------------------------------ main */

static int wanted(const char *list, const char *family) {
  if (!list) return 1;
  const size_t len = strlen(family);
  for (const char *p = list; *p;) {
    const size_t l = strcspn(p, ",");
    if (l == len && strncmp(p, family, len) == 0) return 1;
    p += l + (p[l] == ',');
  }
  return 0;
}

int main(int argc, char **argv) {
  int full = 0, print = 0;
  size_t n = 0;
  const char *families = NULL, *output = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--quick"))
      full = 0;
    else if (!strcmp(argv[i], "--full"))
      full = 1;
    else if (!strcmp(argv[i], "--print"))
      print = 1;
    else if (!strcmp(argv[i], "--n") && i + 1 < argc)
      n = (size_t)strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--families") && i + 1 < argc)
      families = argv[++i];
    else if (!strcmp(argv[i], "--output") && i + 1 < argc)
      output = argv[++i];
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage, stdout);
      return 0;
    } else {
      fprintf(stderr, "clprim-tune: unknown argument %s\n%s", argv[i], usage);
      return 2;
    }
  }
  if (families)
    for (const char *p = families; *p;) {
      const size_t l = strcspn(p, ",");
      int known = 0;
      for (int s = 0; s < SWEEPS; ++s)
        known |= strlen(sweeps[s].family) == l && !strncmp(sweeps[s].family, p, l);
      if (!known) {
        fprintf(stderr, "clprim-tune: --families: no sweep for \"%.*s\"\n%s", (int)l, p, usage);
        return 2;
      }
      p += l + (p[l] == ',');
    }
  reps = full ? 21 : 7;
  /* From the tables, not from an earlier file; the file named by
   * $CLPRIM_TUNING_FILE is the one written. */
  char user_file[4096] = "";
  const char *env = getenv("CLPRIM_TUNING_FILE");
  if (env && strcmp(env, "off") != 0) snprintf(user_file, sizeof user_file, "%s", env);
  setenv("CLPRIM_TUNING_FILE", "off", 1);

  /* A context on a profiling queue of the chosen device. */
  clprim_context *probe, *ctx;
  clprim_status st = clprim_context_create(&probe, NULL);
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "clprim-tune: %s\n", clprim_context_last_error(NULL));
    return 1;
  }
  cl_int err;
  cl_command_queue queue = clCreateCommandQueue(clprim_context_cl_context(probe),
                                                clprim_context_device(probe),
                                                CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "clprim-tune: clCreateCommandQueue: OpenCL error %d\n", err);
    return 1;
  }
  st = clprim_context_create_from_queue(&ctx, queue, NULL);
  clReleaseCommandQueue(queue);
  clprim_context_free(probe);
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "clprim-tune: %s\n", clprim_context_last_error(NULL));
    return 1;
  }
  char path[4200];
  if (output)
    snprintf(path, sizeof path, "%s", output);
  else if (user_file[0])
    snprintf(path, sizeof path, "%s", user_file);
  else if (!print) {
    unsetenv("CLPRIM_TUNING_FILE");
    if (!clprim__tuning_file_path(ctx, path, sizeof path)) {
      fprintf(stderr, "clprim-tune: clprim's disk cache is off: no tuning file to write (set "
                      "CLPRIM_CACHE_DIR, or give --output or --print)\n");
      return 1;
    }
  }
  const int gpu = (ctx->info.device_type & CL_DEVICE_TYPE_GPU) != 0;
  struct data d;
  memset(&d, 0, sizeof d);
  /* The bench's sizes on GPUs (2^28, 2^26 quick: shapes chosen at 2^22
   * lost up to 1.6x at 2^28 on the H200), within a quarter of the memory
   * (the data take 36 bytes an element). */
  unsigned lg = gpu ? (full ? 28 : 26) : (full ? 22 : 20);
  while (lg > 16 && ((((uint64_t)36 << lg) > ctx->info.global_mem_size / 4) ||
                     ((uint64_t)8 << lg) > ctx->info.max_alloc_size))
    --lg;
  d.n = n ? n : (size_t)1 << lg;
  make_data(ctx, &d);
  fprintf(stderr, "clprim-tune: %s, path %s, n = %zu, the median of %d runs%s\n",
          ctx->info.device_name, clprim_path_name(ctx->info.path), d.n, reps,
          ctx->tables_portable ? ", from the tables' portable rows" : "");

  char *text = NULL;
  size_t text_size = 0;
  FILE *out = open_memstream(&text, &text_size);
  if (!out) {
    fprintf(stderr, "clprim-tune: out of host memory\n");
    return 1;
  }
  const time_t wall = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&wall));
  fprintf(out, "# clprim-tune %s, %s\n# device: %s\n# platform: %s\n# driver: %s\n# path: %s\n",
          full ? "--full" : "--quick", date, ctx->info.device_name, ctx->info.platform_name,
          ctx->info.driver_version, clprim_path_name(ctx->info.path));
  fprintf(out, "# %zu elements, the median of %d runs%s\n", d.n, reps,
          ctx->tables_portable ? "; from the tables' portable rows" : "");
  const double t0 = now_s();
  int failures = 0, rows = 0;
  for (int si = 0; si < SWEEPS; ++si) {
    const struct sweep *s = &sweeps[si];
    if (!wanted(families, s->family)) continue;
    const struct clprim_family *f = family_of(ctx, s->family);
    if (!f) continue;
    long long start[CLPRIM__KNOBS_MAX], best[CLPRIM__KNOBS_MAX];
    clprim__tuned(ctx, f, s->key_bytes, s->value_bytes, start);
    memcpy(best, start, sizeof best);
    /* The tables' run: its time and result. */
    to_tables(ctx, f);
    double best_ms = time_call(ctx, s, &d);
    struct result ref;
    memset(&ref, 0, sizeof ref);
    if (best_ms < 0 || !take_result(ctx, s, &d, &ref)) {
      fprintf(stderr, "clprim-tune: %s: the tables' run failed (%s)\n", s->row,
              clprim_context_last_error(ctx));
      free(ref.bytes);
      ++failures;
      continue;
    }
    const double table_ms = best_ms;
    fprintf(stderr, "[%5.0f s] %s: %.4f ms with the tables\n", now_s() - t0, s->row, table_ms);
    /* --full: every pair of the first two knobs' values first. Then rounds
     * over the knobs until one changes nothing (at most 3): a knob's best
     * can move once another's has. No setting runs twice. */
    struct tried tried = {0};
    int active[KNOBS], nactive = 0;
    for (int ki = 0; ki < KNOBS && s->knobs[ki].name; ++ki) {
      const struct knob *kn = &s->knobs[ki];
      if (knob_index(f, kn->name) >= 0 && (!kn->paths || (kn->paths >> ctx->info.path & 1u)))
        active[nactive++] = ki;
    }
    struct trial t = {ctx, s, f, &d, &ref, best, &best_ms, &failures, &tried, t0};
    char tables[200];
    setting(&t, start, tables); /* what the tables' run ran */
    if (full && nactive >= 2) {
      const struct knob *k0 = &s->knobs[active[0]], *k1 = &s->knobs[active[1]];
      for (const char *p = k0->full; *p; p = next_value(p))
        for (const char *q = k1->full; *q; q = next_value(q)) {
          long long v[CLPRIM__KNOBS_MAX];
          memcpy(v, best, sizeof v);
          v[knob_index(f, k0->name)] = strtoll(p, NULL, 10);
          v[knob_index(f, k1->name)] = strtoll(q, NULL, 10);
          try_values(&t, v);
        }
    }
    int improved = 1;
    for (int round = 0; round < 3 && improved; ++round) {
      improved = 0;
      for (int a = 0; a < nactive; ++a) {
        const struct knob *kn = &s->knobs[active[a]];
        const int k = knob_index(f, kn->name);
        for (const char *p = full ? kn->full : kn->quick; *p; p = next_value(p)) {
          long long v[CLPRIM__KNOBS_MAX];
          memcpy(v, best, sizeof v);
          v[k] = strtoll(p, NULL, 10);
          improved |= try_values(&t, v);
        }
      }
    }
    free(ref.bytes);
    to_tables(ctx, f);
    char line[256] = "";
    for (unsigned k = 0; k < f->knob_count; ++k)
      if (best[k] != start[k])
        snprintf(line + strlen(line), sizeof line - strlen(line), " %s=%lld", f->knobs[k].name,
                 best[k]);
    fprintf(out, "# %s: %.4f ms with the tables, %.4f ms tuned\n", s->row, table_ms, best_ms);
    if (line[0]) {
      fprintf(out, "%s", f->name);
      if (s->file_key_bytes) fprintf(out, " key_bytes=%u", s->file_key_bytes);
      if (s->file_value_bytes == CLPRIM__NO_VALUES)
        fprintf(out, " value_bytes=none");
      else if (s->file_value_bytes)
        fprintf(out, " value_bytes=%u", s->file_value_bytes);
      fprintf(out, "%s\n", line);
      ++rows;
    }
  }
  fclose(out);
  clReleaseMemObject(d.u32), clReleaseMemObject(d.u64), clReleaseMemObject(d.sorted32);
  clReleaseMemObject(d.runs32), clReleaseMemObject(d.out), clReleaseMemObject(d.out2);
  clprim_context_free(ctx);
  fprintf(stderr, "clprim-tune: %d rows in %.0f s%s\n", rows, now_s() - t0,
          failures ? "; some values failed or gave another result (above)" : "");
  if (print) {
    fputs(text, stdout);
  } else {
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *w = fopen(tmp, "w");
    if (!w || fputs(text, w) < 0 || fclose(w) != 0 || rename(tmp, path) != 0) {
      fprintf(stderr, "clprim-tune: cannot write %s\n", path);
      remove(tmp);
      free(text);
      return 1;
    }
    fprintf(stderr, "clprim-tune: wrote %s\n", path);
  }
  free(text);
  return failures ? 1 : 0;
}
