/* clprim-info: the OpenCL devices, what clprim probed on the chosen one, the
 * path and algorithm each family uses there, and a self-test of every family
 * on every path the device runs: the checks of the bench's rows files
 * (tools/bench/<family>.c; small random inputs against a CPU reference).
 * Exit status 0, 1 if a self-test or the prebuild fails, 2 for a usage
 * error. Run `clprim-info --help` for the options; the device:
 * $CLPRIM_DEVICE. */
#include "bench/check.h"
#include "../src/core/core.h" /* the tuning rows (clprim__print_tuning) */

#include <clprim/clprim.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: clprim-info [--no-self-test] [--all-checks] [--prebuild] [--build-threads N]\n"
    "                   [--json] [--help]\n"
    "  --no-self-test  skip the self-tests (every family on every path the device runs)\n"
    "  --all-checks    the self-test checks every op of each family (default: its first)\n"
    "  --prebuild      build every program of the chosen path into clprim's disk cache\n"
    "                  (clprim_context_prebuild), with progress on stderr, and say how\n"
    "                  long it took\n"
    "  --build-threads N  programs built at once (clprim_options.build_threads; default:\n"
    "                  one per online CPU, at most 8; one on CPU devices)\n"
    "  --json          print one JSON object instead of text\n"
    "  --help          this text\n"
    "The device: $CLPRIM_DEVICE (a name, \"P:D\", or gpu / cpu / accelerator), else the\n"
    "first GPU. The path: $CLPRIM_PATH, else the best one the device confirms.\n";

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* ---------------------------------------------------------------- families */

/* The algorithm a family runs on a path (its rows file in tools/bench/
 * says it; src/<family>.c says why). */
static const char *algorithm(const struct bench_family *f, clprim_path path) {
  if (path == CLPRIM_PATH_NV_PTX && f->algorithm_nv) return f->algorithm_nv;
  if (path == CLPRIM_PATH_CPU && f->algorithm_cpu) return f->algorithm_cpu;
  return f->algorithm;
}

/* ---------------------------------------------------------------- prebuild */

/* Progress of --prebuild on stderr: a bar redrawn in place on a terminal,
 * else a line per program. */
struct prebuild_progress {
  double t0;
  int tty;
};
static void prebuild_step(void *user, unsigned done, unsigned total) {
  const struct prebuild_progress *p = user;
  const double s = (now_ms() - p->t0) / 1e3;
  const double eta = done < total ? s / done * (total - done) : 0.0;
  if (p->tty) {
    char bar[31];
    const unsigned filled = (unsigned)(30ull * done / total);
    for (unsigned i = 0; i < 30; ++i) bar[i] = i < filled ? '#' : '.';
    bar[30] = 0;
    fprintf(stderr, "\rprebuild [%s] %u/%u programs, %.0f s, about %.0f s left ", bar, done,
            total, s, eta);
    if (done == total) fputc('\n', stderr);
  } else {
    fprintf(stderr, "prebuild: %u/%u programs, %.1f s, about %.0f s left\n", done, total, s, eta);
  }
  fflush(stderr);
}

/* --------------------------------------------------------------- self-test */

/* Appends ", name" (or the first name) to list. */
static void append_name(char *list, size_t size, const char *name) {
  const size_t used = strlen(list);
  snprintf(list + used, size - used, "%s%s", used ? ", " : "", name);
}

/* Every op's check (tools/bench/<family>.c: against the CPU on n random
 * uint32), or each family's first (a quick first run: each op's check
 * builds its programs), on one path; 1 when all are right.
 * Prints a line per family (text) or an array element per family (JSON). */
static int all_checks;

static int self_test(clprim_path path, const clprim_options *base, int json, int first_path) {
  clprim_options o = *base;
  o.path = path;
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, &o);
  if (json)
    printf("%s\n    {\"path\": \"%s\", \"tests\": [", first_path ? "" : ",",
           clprim_path_name(path));
  if (st != CLPRIM_SUCCESS) {
    if (json)
      printf("{\"family\": \"context\", \"ok\": false, \"status\": \"%s\"}]}",
             clprim_status_name(st));
    else
      printf("  %-14s FAIL (context: %s)\n", clprim_path_name(path), clprim_status_name(st));
    return 0;
  }
  const size_t n = 100003;
  int all = 1, printed = 0;
  for (int f = 0; f < bench_family_count; ++f) {
    const struct bench_family *family = bench_families[f];
    char checked[256] = "", failed[256] = "";
    const double t0 = now_ms();
    st = CLPRIM_SUCCESS;
    for (int i = 0; i < family->op_count; ++i) {
      const struct bench_op *op = &family->ops[i];
      clprim_status op_status;
      if (!op->check || (checked[0] && !all_checks)) continue;
      append_name(checked, sizeof checked, op->name);
      if (!bench_check_op(ctx, op, n, 12345u + path, &op_status)) {
        append_name(failed, sizeof failed, op->name);
        if (st == CLPRIM_SUCCESS) st = op_status;
      }
    }
    if (!checked[0]) continue;
    const double ms = now_ms() - t0;
    const int ok = !failed[0];
    all &= ok;
    if (json)
      printf("%s{\"family\": \"%s\", \"ok\": %s, \"status\": \"%s\", \"ms\": %.0f}",
             printed++ ? ", " : "", family->name, ok ? "true" : "false", clprim_status_name(st),
             ms);
    else
      printf("  %-14s %-14s %s%s%s  (%s%s, n = %zu; %.0f ms with its first builds)\n",
             clprim_path_name(path), family->name, ok ? "OK" : "FAIL",
             st != CLPRIM_SUCCESS ? " " : "", st != CLPRIM_SUCCESS ? clprim_status_name(st) : "",
             ok ? "" : "failed: ", ok ? checked : failed, n, ms);
  }
  if (json) printf("]}");
  clprim_context_free(ctx);
  return all;
}

/* A JSON string (quotes and backslashes escaped, control characters dropped). */
static void json_string(const char *s) {
  putchar('"');
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') putchar('\\');
    if ((unsigned char)*s >= 0x20) putchar(*s);
  }
  putchar('"');
}

int main(int argc, char **argv) {
  int run_tests = 1, prebuild = 0, json = 0;
  unsigned build_threads = 0;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--no-self-test")) {
      run_tests = 0;
    } else if (!strcmp(argv[a], "--all-checks")) {
      all_checks = 1;
    } else if (!strcmp(argv[a], "--prebuild")) {
      prebuild = 1;
    } else if (!strcmp(argv[a], "--build-threads") && a + 1 < argc) {
      char *end;
      const long n = strtol(argv[++a], &end, 10);
      if (*end || n < 1 || n > 64) {
        fprintf(stderr, "clprim-info: --build-threads takes 1 to 64\n");
        return 2;
      }
      build_threads = (unsigned)n;
    } else if (!strcmp(argv[a], "--json")) {
      json = 1;
    } else if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
      fputs(usage, stdout);
      return 0;
    } else {
      fprintf(stderr, "clprim-info: unknown argument '%s'\n%s", argv[a], usage);
      return 2;
    }
  }
  char list[8192];
  const unsigned count = clprim_list_devices(list, sizeof list);
  clprim_options opts;
  clprim_options_init(&opts);
  opts.build_threads = build_threads;
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, &opts);
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "clprim-info: no context: %s (%s)\nOpenCL devices (%u):\n%s",
            clprim_status_name(st), clprim_context_last_error(NULL), count, list);
    return 1;
  }
  clprim_device_info in;
  clprim_context_get_info(ctx, &in, sizeof in);
  if (json) {
    printf("{\n  \"clprim\": ");
    json_string(clprim_version_string());
    printf(",\n  \"devices\": %u,\n  \"device\": ", count);
    json_string(in.device_name);
    printf(",\n  \"platform\": ");
    json_string(in.platform_name);
    printf(",\n  \"driver\": ");
    json_string(in.driver_version);
    printf(",\n  \"compute_units\": %u,\n  \"fp64\": %s,\n  \"paths\": [", in.compute_units,
           in.has_fp64 ? "true" : "false");
    int first = 1;
    for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p)
      if (in.paths_available & (1u << p))
        printf("%s\"%s\"", first ? "" : ", ", clprim_path_name((clprim_path)p)), first = 0;
    printf("],\n  \"path\": \"%s\",\n  \"families\": [", clprim_path_name(in.path));
    for (int f = 0; f < bench_family_count; ++f) {
      printf("%s\n    {\"family\": \"%s\", \"path\": \"%s\", \"algorithm\": ", f ? "," : "",
             bench_families[f]->name, clprim_path_name(in.path));
      json_string(algorithm(bench_families[f], in.path));
      printf("}");
    }
    printf("\n  ],\n  \"tuning_file\": ");
    if (ctx->tuning_file)
      json_string(ctx->tuning_file);
    else
      printf("null");
  } else {
    printf("clprim %s\nOpenCL devices (%u):\n%s", clprim_version_string(), count, list);
    printf("\nChosen device: %s\n", in.device_name);
    printf("  platform        %s (%s)\n", in.platform_name, in.platform_version);
    printf("  vendor          %s\n", in.vendor);
    printf("  version         %s; %s\n", in.device_version, in.opencl_c_version);
    printf("  driver          %s\n", in.driver_version);
    printf("  compute units   %u\n", in.compute_units);
    printf("  global memory   %.2f GiB (largest allocation %.2f GiB)\n",
           in.global_mem_size / 1073741824.0, in.max_alloc_size / 1073741824.0);
    printf("  local memory    %llu KiB\n", (unsigned long long)in.local_mem_size / 1024);
    printf("  work-group max  %zu\n", in.max_work_group_size);
    printf("  subgroup size   %u%s\n", in.subgroup_size,
           in.subgroup_size ? "" : " (no subgroup path)");
    if (in.nv_compute_capability_major)
      printf("  NVIDIA          compute capability %u.%u, warp size %u\n",
             in.nv_compute_capability_major, in.nv_compute_capability_minor, in.nv_warp_size);
    printf("  fp64            %s\n  int64 atomics   %s\n", in.has_fp64 ? "yes" : "no",
           in.has_int64_atomics ? "yes" : "no");
    printf("  paths confirmed");
    for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p)
      if (in.paths_available & (1u << p)) printf(" %s", clprim_path_name((clprim_path)p));
    printf("\n  path chosen     %s\n", clprim_path_name(in.path));
    printf("  build options   %s\n", clprim_context_device_options(ctx));
    printf("\nFamilies on path %s:\n", clprim_path_name(in.path));
    for (int f = 0; f < bench_family_count; ++f)
      printf("  %-14s %s\n", bench_families[f]->name, algorithm(bench_families[f], in.path));
    printf("\nTuning on path %s (table rows in order, then the tuning file's, then "
           "CLPRIM_TUNE;\nthe last that sets a knob wins):\n",
           clprim_path_name(in.path));
    clprim__print_tuning(ctx, stdout, "  ");
    printf("  tuning file     %s\n",
           ctx->tuning_file ? ctx->tuning_file : "none (clprim-tune writes one)");
  }

  int failures = 0;
  if (prebuild) {
    const double t0 = now_ms();
    struct prebuild_progress progress = {t0, isatty(2)};
    st = clprim_context_prebuild_progress(ctx, prebuild_step, &progress);
    const double s = (now_ms() - t0) / 1e3;
    if (json)
      printf(",\n  \"prebuild\": {\"status\": \"%s\", \"seconds\": %.1f}", clprim_status_name(st), s);
    else
      printf("\nPrebuild of every program of path %s: %s in %.1f s\n", clprim_path_name(in.path),
             clprim_status_name(st), s);
    if (st != CLPRIM_SUCCESS) {
      const char *log = clprim_context_build_log(ctx);
      if (log && *log) fprintf(stderr, "%s\n", log);
      failures = 1;
    }
  }
  clprim_context_free(ctx);

  if (run_tests) {
    if (json)
      printf(",\n  \"self_test\": [");
    else
      printf("\nSelf-test of every family on each path this device runs:\n");
    int first = 1;
    for (unsigned p = CLPRIM_PATH_COUNT - 1; p >= CLPRIM_PATH_LOCAL; --p)
      if (in.paths_available & (1u << p)) {
        failures += !self_test((clprim_path)p, &opts, json, first);
        first = 0;
      }
    if (json) printf("\n  ]");
  }
  if (json) printf(",\n  \"ok\": %s\n}\n", failures ? "false" : "true");
  return failures ? 1 : 0;
}
