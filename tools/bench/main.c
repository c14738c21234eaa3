/* clprim-bench: device time of clprim's primitives, from OpenCL profiling
 * events: warm-up, then the median of --reps runs (at least 20), in ms, the
 * GB/s of the minimal bytes (each input read once, each output written once),
 * and the ratio to a clEnqueueCopyBuffer of the same number of bytes (read +
 * write) measured in the same run, or to one read of the inputs by a
 * minimal kernel (histograms, reduce-by-key, selection, runs, segmented
 * reductions, per-row selection), or to a baseline call (pipelines).
 *
 * Usage: clprim-bench --help lists the ops, types, options and defaults.
 * Sizes are the powers of two from 2^min-log to 2^max-log elements (default
 * 16..28, 16..22 on CPU devices), bounded by device memory. The device:
 * $CLPRIM_DEVICE.
 * --startup measures, per family (--op picks one), context creation plus a
 * first call in fresh processes: cold (every cache empty) and warm.
 *
 * Here: the options, the device, and the steps (size, type, family) of the
 * run. The rows are the families' (tools/bench/<family>.c, listed in
 * harness.c); the harness times and prints them.
 *
 * A row whose call fails is reported on stderr (op, variant, type, size and
 * status) and, with --json, as an object with an "error" field; the run goes
 * on. A row that cannot run at a size (top-k with k > n) is skipped with a
 * note. Exit status: 0 every row ran, 1 a row failed, 2 a usage error. */
#include "harness.h"
#include "startup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LOG 40

/* ------------------------------------------------------------ options */

/* The op --op names, or NULL. */
static const struct bench_op *find_op(const char *name) {
  for (int f = 0; f < bench_family_count; ++f)
    for (int i = 0; i < bench_families[f]->op_count; ++i)
      if (strcmp(bench_families[f]->ops[i].name, name) == 0) return &bench_families[f]->ops[i];
  return NULL;
}

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: clprim-bench [--op NAME|all] [--type T|all] [--path P] [--min-log K] [--max-log K]\n"
      "                    [--reps R] [--data default|all] [--json] [--quiet] [--startup]\n"
      "       clprim-bench --help\n");
}

static void help(void) {
  usage(stdout);
  printf("\nDevice time of clprim's primitives from OpenCL profiling events: 3 warm-up runs,\n"
         "then the median of R runs, in ms; GB/s of the minimal traffic and the ratio to a\n"
         "clEnqueueCopyBuffer of the same bytes (scan, reductions, select) or to one read of\n"
         "the inputs by a minimal kernel (histograms, reduce-by-key, selection, runs,\n"
         "segmented reductions), same run.\n"
         "\nOptions:\n"
         "  --op NAME      one op below, or all (default: all)\n"
         "  --type T       int32, uint32, int64, uint64, float, double, or all: every type each\n"
         "                 op takes (default: int32 and float; double needs cl_khr_fp64)\n"
         "  --path P       auto, local, khr_subgroups, khr_ballot, nv_ptx, cpu (default: auto,\n"
         "                 i.e. $CLPRIM_PATH, else the device's default path)\n"
         "  --min-log K    smallest size, 2^K elements, K in 0..%d (default: 16)\n"
         "  --max-log K    largest size, 2^K elements (default: 28 on GPUs, 22 on CPU\n"
         "                 devices); sizes that do not fit in device memory are skipped\n"
         "                 with a note\n"
         "  --reps R       timed runs per row, %d..%d (default: 25); fewer are raised to %d\n"
         "                 with a note\n"
         "  --data D       the selection ops' data: default (uniform and 16 distinct values)\n"
         "                 or all (every distribution of their tests, float and double)\n"
         "  --json         one JSON document on stdout instead of text: {\"clprim_version\",\n"
         "                 \"device\", \"platform\", \"driver\", \"path\", \"reps\", \"warmups\",\n"
         "                 \"results\": [one object per row; a failed row has \"error\", a\n"
         "                 skipped one \"skipped\"], \"rows_failed\"}\n"
         "  --quiet        no plan and no progress on stderr (by default: the number of\n"
         "                 steps first, then \"[i/N] op type 2^K\" before each step with the\n"
         "                 time so far and an estimate of the time left)\n"
         "  --startup      per family (or the one --op names), context creation and a first\n"
         "                 call on 2^20 floats in fresh processes, cold (empty caches) and\n"
         "                 warm; takes only --op\n"
         "  -h, --help     this text\n"
         "\nOps (all take every type unless said):\n",
         MAX_LOG, BENCH_MIN_REPS, BENCH_MAX_REPS, BENCH_MIN_REPS);
  for (int f = 0; f < bench_family_count; ++f)
    for (int i = 0; i < bench_families[f]->op_count; ++i)
      printf("  %-20s %s\n", bench_families[f]->ops[i].name, bench_families[f]->ops[i].help);
  printf("  %-20s every op above\n", "all");
  printf("\n--startup families:");
  bench_startup_list();
  printf(" (or all)\n"
         "\nThe device: $CLPRIM_DEVICE (see clprim-info); the kernel cache: $CLPRIM_CACHE_DIR.\n"
         "Exit status: 0 every row ran, 1 a row failed (named on stderr: op, variant, type,\n"
         "size, status), 2 a usage error.\n");
}

static void usage_error(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "clprim-bench: ");
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, "\n");
  usage(stderr);
  fprintf(stderr, "(clprim-bench --help lists the ops, types and defaults)\n");
  exit(2);
}

/* A whole number in [lo, hi], or a usage error. */
static int parse_int(const char *opt, const char *v, long lo, long hi) {
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || end == v || *end != '\0') usage_error("%s: '%s' is not a whole number", opt, v);
  if (x < lo || x > hi) {
    char range[64];
    snprintf(range, sizeof range, "%s is outside %ld..%ld", v, lo, hi);
    usage_error("%s: %s", opt, range);
  }
  return (int)x;
}

struct options {
  int type_sel; /* -1: int32 and float, -2: all, else the type */
  int min_log, max_log, startup, progress;
  const char *path_name, *reps_arg;
  clprim_options opts;
};

/* An option with a value, v, into b and o. */
static void set_option(struct bench *b, struct options *o, const char *a, const char *v) {
  if (strcmp(a, "--op") == 0) {
    b->op_filter = v;
  } else if (strcmp(a, "--type") == 0) {
    o->type_sel = strcmp(v, "all") == 0 ? -2 : -3;
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t)
      if (strcmp(v, clprim_type_name((clprim_type)t)) == 0) o->type_sel = t;
    if (o->type_sel == -3)
      usage_error("unknown --type '%s' (int32, uint32, int64, uint64, float, double or all)%s", v,
                  "");
  } else if (strcmp(a, "--path") == 0) {
    if (clprim_path_from_name(v, &o->opts.path) != CLPRIM_SUCCESS)
      usage_error("unknown --path '%s' (auto, local, khr_subgroups, khr_ballot, nv_ptx or cpu)%s",
                  v, "");
    o->path_name = v;
  } else if (strcmp(a, "--min-log") == 0) {
    o->min_log = parse_int(a, v, 0, MAX_LOG);
  } else if (strcmp(a, "--max-log") == 0) {
    o->max_log = parse_int(a, v, 0, MAX_LOG);
  } else if (strcmp(a, "--data") == 0) {
    if (strcmp(v, "all") != 0 && strcmp(v, "default") != 0)
      usage_error("unknown --data '%s' (default or all)%s", v, "");
    b->all_data = strcmp(v, "all") == 0;
  } else {
    b->reps = parse_int(a, v, 1, 1000000), o->reps_arg = v;
  }
}

/* The arguments into b and o (after --help or --startup-child: exits). */
static void parse_args(struct bench *b, struct options *o, int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (strcmp(a, "--startup-child") == 0 && i + 2 < argc)
      exit(bench_startup_child(argv[i + 1], argv[i + 2]));
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      help();
      exit(0);
    }
    if (strcmp(a, "--startup") == 0) {
      o->startup = 1;
      continue;
    }
    if (strcmp(a, "--json") == 0) {
      b->json = 1;
      continue;
    }
    if (strcmp(a, "--quiet") == 0) {
      o->progress = 0;
      continue;
    }
    if (strcmp(a, "--progress") == 0) { /* the default; kept for scripts */
      o->progress = 1;
      continue;
    }
    static const char *const with_value[] = {"--op",      "--type", "--path", "--min-log",
                                             "--max-log", "--data", "--reps"};
    int known = 0;
    for (size_t j = 0; j < sizeof with_value / sizeof *with_value; ++j)
      known |= strcmp(a, with_value[j]) == 0;
    if (!known) usage_error("unknown option '%s'%s", a, "");
    if (i + 1 >= argc) usage_error("%s needs a value%s", a, "");
    set_option(b, o, a, argv[++i]);
  }
}

/* The checks across options, and the reps brought into range. */
static void check_options(struct bench *b, const struct options *o) {
  const struct bench_op *op = find_op(b->op_filter);
  if (!op && strcmp(b->op_filter, "all") != 0)
    usage_error("unknown --op '%s' (clprim-bench --help lists the ops)%s", b->op_filter, "");
  const unsigned op_types = op ? op->types : 0x3Fu;
  if (o->type_sel >= 0 && !(op_types >> o->type_sel & 1u))
    usage_error("--op %s does not take --type %s (clprim-bench --help lists the types)",
                b->op_filter, clprim_type_name((clprim_type)o->type_sel));
  if (o->max_log >= 0 && o->min_log > o->max_log) {
    char range[96];
    snprintf(range, sizeof range, "--min-log %d > --max-log %d", o->min_log, o->max_log);
    usage_error("empty size range: %s%s", range, "");
  }
  if (b->reps < BENCH_MIN_REPS) {
    fprintf(stderr, "clprim-bench: note: --reps %s raised to %d (the minimum)\n", o->reps_arg,
            BENCH_MIN_REPS);
    b->reps = BENCH_MIN_REPS;
  }
  if (b->reps > BENCH_MAX_REPS) {
    fprintf(stderr, "clprim-bench: note: --reps %s lowered to %d (the maximum)\n", o->reps_arg,
            BENCH_MAX_REPS);
    b->reps = BENCH_MAX_REPS;
  }
}

/* -------------------------------------------------------------- steps */

/* Whether family f has an op that --op wants and that takes type. */
static int family_runs(const struct bench *b, const struct bench_family *f, clprim_type type) {
  for (int i = 0; i < f->op_count; ++i)
    if (bench_wants(b, f->ops[i].name) && (f->ops[i].types >> type & 1u)) return 1;
  return 0;
}

/* What a family's step is called (progress, setup failures): the op --op
 * names, or the family's ops joined by '/'. */
static const char *step_name(const struct bench *b, const struct bench_family *f, char *buf,
                             size_t size) {
  if (strcmp(b->op_filter, "all") != 0) return b->op_filter;
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < f->op_count && used < size; ++i)
    used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? "/" : "", f->ops[i].name);
  return buf;
}

/* Whether type runs at size 2^lg (notes on stderr when run and it does
 * not). */
static int type_fits(const struct bench *b, clprim_type type, int lg, int run, int *fp64_noted) {
  if (type == CLPRIM_DOUBLE && !b->info->has_fp64) {
    if (run && !(*fp64_noted)++)
      fprintf(stderr, "clprim-bench: note: double skipped: the device has no cl_khr_fp64\n");
    return 0;
  }
  size_t bytes = ((size_t)1 << lg) * clprim_type_size(type);
  /* Room for about three arrays of the data (input, output, temporaries). */
  if (bytes > b->info->max_alloc_size || 3.2 * (double)bytes > (double)b->info->global_mem_size) {
    if (run)
      fprintf(stderr,
              "clprim-bench: note: %s n=2^%d skipped: 3.2 x %zu bytes exceed the "
              "device's memory (or %zu bytes its largest buffer)\n",
              clprim_type_name(type), lg, bytes, (size_t)b->info->max_alloc_size);
    return 0;
  }
  return 1;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* The steps (family, type, size) of the run; counts them when !run, and
 * their work (the sum of their sizes: a step's time grows with its size)
 * in *work. With progress, run prints each step, the time so far and an
 * estimate of the time left: the time so far scaled by the work left. */
static int steps(struct bench *b, const struct options *o, int run, int total, double *work) {
  int count = 0, fp64_noted = 0;
  static double start, done;
  if (run) start = now_s(), done = 0;
  for (int lg = o->min_log; lg <= o->max_log; ++lg) {
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      clprim_type type = (clprim_type)t;
      if (o->type_sel >= 0 ? t != o->type_sel
                           : o->type_sel == -1 && !(t == CLPRIM_INT32 || t == CLPRIM_FLOAT))
        continue;
      int families = 0;
      for (int f = 0; f < bench_family_count; ++f)
        families += family_runs(b, bench_families[f], type);
      if (!families || !type_fits(b, type, lg, run, &fp64_noted)) continue;
      for (int f = 0; f < bench_family_count; ++f) {
        const struct bench_family *family = bench_families[f];
        if (!family_runs(b, family, type)) continue;
        ++count;
        if (!run) {
          *work += (double)((size_t)1 << lg);
          continue;
        }
        char buf[256];
        const char *name = step_name(b, family, buf, sizeof buf);
        if (o->progress) {
          const double so_far = now_s() - start;
          fprintf(stderr, "[%d/%d] %s %s 2^%d (%.0f s so far", count, total, name,
                  clprim_type_name(type), lg, so_far);
          if (done > 0) fprintf(stderr, ", about %.0f s left", so_far * (*work - done) / done);
          fprintf(stderr, ")\n");
        }
        bench_run_family(b, family, name, type, (size_t)1 << lg);
        done += (double)((size_t)1 << lg);
      }
    }
  }
  return count;
}

/* --------------------------------------------------------------- main */

/* A profiling queue on the chosen device, and a context on it, into b. */
static void open_device(struct bench *b, const struct options *o) {
  static clprim_device_info info;
  clprim_context *probe;
  clprim_status st = clprim_context_create(&probe, &o->opts);
  if (st == CLPRIM_ERROR_PATH_UNAVAILABLE) {
    fprintf(stderr,
            "clprim-bench: --path %s: the device cannot run it (%s); clprim-info lists the "
            "paths each device passed\n",
            o->path_name ? o->path_name : "($CLPRIM_PATH)", clprim_status_name(st));
    exit(1);
  }
  if (st != CLPRIM_SUCCESS) bench_die("clprim_context_create", st);
  cl_int err;
  b->cl = clprim_context_cl_context(probe);
  clRetainContext(b->cl);
  b->queue =
      clCreateCommandQueue(b->cl, clprim_context_device(probe), CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) bench_die("clCreateCommandQueue", err);
  clprim_context_free(probe);
  st = clprim_context_create_from_queue(&b->ctx, b->queue, &o->opts);
  if (st != CLPRIM_SUCCESS) bench_die("clprim_context_create_from_queue", st);
  st = clprim_context_get_info(b->ctx, &info, sizeof info);
  if (st != CLPRIM_SUCCESS) bench_die("clprim_context_get_info", st);
  b->info = &info;
  b->path = info.path;
}

/* The document's head (JSON) or the first line (text). */
static void print_header(const struct bench *b) {
  const clprim_device_info *info = b->info;
  if (b->json) {
    printf("{\"clprim_version\":");
    bench_json_string(clprim_version_string());
    printf(",\"device\":");
    bench_json_string(info->device_name);
    printf(",\"platform\":");
    bench_json_string(info->platform_name);
    printf(",\"driver\":");
    bench_json_string(info->driver_version);
    printf(",\"path\":\"%s\",\"reps\":%d,\"warmups\":3,\n\"results\":[", clprim_path_name(b->path),
           b->reps);
  } else {
    printf("device: %s | %s | driver %s | path %s | median of %d runs after 3 warm-ups | clprim "
           "%s\n",
           info->device_name, info->platform_name, info->driver_version, clprim_path_name(b->path),
           b->reps, clprim_version_string());
  }
  fflush(stdout);
}

int main(int argc, char **argv) {
  static struct bench bench; /* static: kept intact across the longjmp of a failed family */
  struct bench *b = &bench;
  b->reps = 25;
  b->op_filter = "all";
  struct options o;
  memset(&o, 0, sizeof o);
  o.type_sel = -1, o.min_log = 16, o.max_log = -1, o.progress = 1;
  clprim_options_init(&o.opts);
  parse_args(b, &o, argc, argv);
  if (o.startup) {
    if (!bench_startup_known(b->op_filter))
      usage_error("unknown --op '%s' for --startup (clprim-bench --help lists them)%s",
                  b->op_filter, "");
    if (b->json) usage_error("--json does not apply to --startup%s%s", "", "");
    bench_startup(argv[0], b->op_filter);
    return 0;
  }
  check_options(b, &o);
  open_device(b, &o);
  if (o.max_log < 0) { /* the default: 2^22 on CPU devices, 2^28 elsewhere */
    o.max_log = (b->info->device_type & CL_DEVICE_TYPE_CPU) ? 22 : 28;
    if (o.max_log < o.min_log) o.max_log = o.min_log;
  }
  print_header(b);
  double work = 0;
  int total = steps(b, &o, 0, 0, &work);
  if (o.progress)
    fprintf(stderr, "clprim-bench: %d steps (op, type, size) at 2^%d..2^%d elements\n", total,
            o.min_log, o.max_log);
  steps(b, &o, 1, total, &work);
  if (b->json) printf("%s],\n\"rows_failed\":%d}\n", b->records ? "\n" : "", b->failed);
  fflush(stdout);
  if (b->failed)
    fprintf(stderr, "clprim-bench: %d row%s failed\n", b->failed, b->failed == 1 ? "" : "s");
  clprim_context_free(b->ctx);
  clReleaseCommandQueue(b->queue);
  clReleaseContext(b->cl);
  return b->failed ? 1 : 0;
}
