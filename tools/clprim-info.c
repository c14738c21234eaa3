/* clprim-info: the OpenCL devices, what clprim probed on the chosen one, the
 * path and algorithm each family uses there, and a self-test of every family
 * on every path the device runs (small random inputs against a CPU
 * reference). Exit status 0, 1 if a self-test or the prebuild fails, 2 for a
 * usage error. Run `clprim-info --help` for the options; the device:
 * $CLPRIM_DEVICE. */
#include <clprim/clprim.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: clprim-info [--no-self-test] [--prebuild] [--json] [--help]\n"
    "  --no-self-test  skip the self-tests (every family on every path the device runs)\n"
    "  --prebuild      build every program of the chosen path into clprim's disk cache\n"
    "                  (clprim_context_prebuild) and say how long it took\n"
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

/* The algorithm a family runs on a path (src/<family>.c says why). */
static const char *algorithm(const char *family, clprim_path path, const clprim_device_info *in) {
  const int nv = path == CLPRIM_PATH_NV_PTX, gpu = (in->device_type & CL_DEVICE_TYPE_GPU) != 0;
  if (!strcmp(family, "scan"))
    return nv ? "single pass, decoupled look-back" : "reduce-then-scan, tile sums scanned recursively";
  if (!strcmp(family, "reduce"))
    return "per-work-group tree (subgroups where the path has them), then one work-group";
  if (!strcmp(family, "select"))
    return nv ? "single pass: warp ballots and decoupled look-back"
              : "count -> scan -> scatter (predicate masks, tile offsets)";
  if (!strcmp(family, "histogram"))
    return gpu ? "local-memory bins; global atomics beyond them, binned partition for large inputs"
               : "local-memory bins; global atomics beyond them";
  if (!strcmp(family, "reduce_by_key"))
    return "runs: head counts -> scan -> per-tile reduce, fix-up across tiles; dense: the histogram engine with sums";
  if (!strcmp(family, "nth_element"))
    return "SampleSelect: 255 splitters, bucket counts, recursion into the rank's bucket";
  if (!strcmp(family, "topk"))
    return "small k: candidates beyond a splitter; else threshold by selection, then compaction";
  if (!strcmp(family, "runs"))
    return nv ? "run edges as the compaction's predicate: single pass with look-back, lengths in it"
              : "run edges as the compaction's predicate: count -> scan -> scatter, lengths after";
  if (!strcmp(family, "segmented_topk"))
    return "a work-group per segment: radix selection (8-bit passes, the keys in play gathered in "
           "local memory), rows sorted in local memory; long segments through topk / nth_element";
  if (!strcmp(family, "sort"))
    return nv ? "LSD radix, 8-bit digits: upfront histogram, one pass per digit with look-back (Onesweep)"
              : "LSD radix, 8-bit digits: upfront histogram, count -> scan -> scatter per digit";
  return "";
}
static const char *const families[] = {"scan",        "reduce", "select",         "histogram",
                                       "reduce_by_key", "runs", "nth_element",    "topk",
                                       "segmented_topk", "sort"};
#define FAMILIES (sizeof families / sizeof families[0])

/* --------------------------------------------------------------- self-test */

static unsigned long long next(unsigned long long *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

static int cmp_u32(const void *a, const void *b) {
  const cl_uint x = *(const cl_uint *)a, y = *(const cl_uint *)b;
  return (x > y) - (x < y);
}

/* One family on ctx, n random uint32 (keys below 1000 where it matters)
 * against the CPU; *what says what ran. 1 when right. */
static int test_family(clprim_context *ctx, const char *family, const cl_uint *host, size_t n,
                       cl_mem in, cl_mem out, cl_mem out2, cl_mem out3, const char **what,
                       clprim_status *st) {
  cl_command_queue q = clprim_context_queue(ctx);
  cl_uint *got = malloc(n * sizeof *got), *ref = malloc(n * sizeof *ref);
  int ok = 0;
  *st = CLPRIM_SUCCESS;
  if (!got || !ref) goto done;
  if (!strcmp(family, "scan")) {
    *what = "exclusive scan of uint32, then inclusive at element offsets 3 -> 5";
    *st = clprim_scan_exclusive(ctx, n, CLPRIM_UINT32, clprim_buf(in), clprim_buf(out));
    if (*st || clEnqueueReadBuffer(q, out, CL_TRUE, 0, n * 4, got, 0, NULL, NULL)) goto done;
    cl_uint run = 0;
    int right = 1;
    for (size_t i = 0; i < n && right; run += host[i++]) right = got[i] == run;
    /* Then in[3, n - 2) into out[5, n): ranges at element offsets that no
     * device aligns (12 and 20 bytes), so they go through temporary copies
     * (src/core/call.c); out[0, 5) must keep the exclusive scan. */
    const size_t m = n - 5;
    if (!right) goto done;
    *st = clprim_scan_inclusive(ctx, m, CLPRIM_UINT32, clprim_buf_at(in, 3), clprim_buf_at(out, 5));
    if (*st || clEnqueueReadBuffer(q, out, CL_TRUE, 0, n * 4, ref, 0, NULL, NULL)) goto done;
    for (size_t i = 0; i < 5 && right; ++i) right = ref[i] == got[i];
    run = 0;
    for (size_t i = 0; i < m && right; ++i) right = ref[5 + i] == (run += host[3 + i]);
    ok = right;
  } else if (!strcmp(family, "reduce")) {
    *what = "sum and argmax of uint32";
    clprim_value sum, max;
    uint64_t at;
    *st = clprim_reduce_sum(ctx, n, CLPRIM_UINT32, clprim_buf(in), &sum, clprim_buf(NULL));
    if (*st == CLPRIM_SUCCESS)
      *st = clprim_argmax(ctx, n, CLPRIM_UINT32, clprim_buf(in), 0, &max, &at, clprim_buf(NULL));
    if (*st) goto done;
    cl_uint s = 0, m = 0;
    size_t mi = 0;
    for (size_t i = 0; i < n; ++i) {
      s += host[i];
      if (host[i] > m) m = host[i], mi = i;
    }
    ok = sum.u32 == s && max.u32 == m && at == mi;
  } else if (!strcmp(family, "select")) {
    *what = "select uint32 x < 2^31, values";
    clprim_predicate p;
    memset(&p, 0, sizeof p);
    p.op = CLPRIM_PRED_LT;
    p.a.u32 = 0x80000000u;
    uint64_t count = 0;
    *st = clprim_select(ctx, n, CLPRIM_UINT32, clprim_buf(in), &p, 0, clprim_buf(out),
                        clprim_buf(NULL), &count, clprim_buf(NULL));
    if (*st || clEnqueueReadBuffer(q, out, CL_TRUE, 0, count * 4, got, 0, NULL, NULL)) goto done;
    size_t c = 0;
    ok = 1;
    for (size_t i = 0; i < n && ok; ++i)
      if (host[i] < 0x80000000u) ok = c < count && got[c++] == host[i];
    ok = ok && c == count;
  } else if (!strcmp(family, "histogram")) {
    *what = "histogram of uint32 keys % 1000 into 1000 bins";
    for (size_t i = 0; i < n; ++i) ref[i] = host[i] % 1000;
    if (clEnqueueWriteBuffer(q, out2, CL_TRUE, 0, n * 4, ref, 0, NULL, NULL)) goto done;
    uint64_t invalid = 1;
    *st = clprim_histogram_keys(ctx, n, CLPRIM_UINT32, clprim_buf(out2), 1000, clprim_buf(out),
                                &invalid, clprim_buf(NULL));
    if (*st || clEnqueueReadBuffer(q, out, CL_TRUE, 0, 1000 * 4, got, 0, NULL, NULL)) goto done;
    cl_uint counts[1000] = {0};
    for (size_t i = 0; i < n; ++i) ++counts[ref[i]];
    ok = invalid == 0;
    for (size_t b = 0; b < 1000 && ok; ++b) ok = got[b] == counts[b];
  } else if (!strcmp(family, "reduce_by_key")) {
    *what = "reduce-by-key of sorted int32 keys, uint32 values";
    for (size_t i = 0; i < n; ++i) ref[i] = host[i] % 1000;
    qsort(ref, n, sizeof *ref, cmp_u32);
    if (clEnqueueWriteBuffer(q, out2, CL_TRUE, 0, n * 4, ref, 0, NULL, NULL)) goto done;
    uint64_t count = 0;
    *st = clprim_reduce_by_key(ctx, n, CLPRIM_INT32, clprim_buf(out2), CLPRIM_UINT32,
                               clprim_buf(in), clprim_buf(out), clprim_buf(out3), &count,
                               clprim_buf(NULL));
    cl_uint *sums = malloc(n * 4);
    if (!*st && sums && !clEnqueueReadBuffer(q, out, CL_TRUE, 0, count * 4, got, 0, NULL, NULL) &&
        !clEnqueueReadBuffer(q, out3, CL_TRUE, 0, count * 4, sums, 0, NULL, NULL)) {
      size_t r = 0;
      ok = 1;
      for (size_t i = 0; i < n && ok;) {
        cl_uint s = 0;
        const size_t j0 = i;
        while (i < n && ref[i] == ref[j0]) s += host[i++];
        ok = r < count && got[r] == ref[j0] && sums[r] == s;
        ++r;
      }
      ok = ok && r == count;
    }
    free(sums);
  } else if (!strcmp(family, "nth_element")) {
    *what = "median of uint32";
    clprim_value v;
    *st = clprim_median(ctx, n, CLPRIM_UINT32, clprim_buf(in), 0, &v, clprim_buf(NULL));
    if (*st) goto done;
    memcpy(ref, host, n * 4);
    qsort(ref, n, sizeof *ref, cmp_u32);
    ok = v.u32 == ref[(n - 1) / 2]; /* the lower median */
  } else if (!strcmp(family, "topk")) {
    *what = "top 100 of uint32, sorted values";
    *st = clprim_topk(ctx, n, CLPRIM_UINT32, clprim_buf(in), 100, CLPRIM_TOPK_SORTED,
                      clprim_buf(out), clprim_buf(out2));
    if (*st || clEnqueueReadBuffer(q, out, CL_TRUE, 0, 100 * 4, got, 0, NULL, NULL)) goto done;
    memcpy(ref, host, n * 4);
    qsort(ref, n, sizeof *ref, cmp_u32);
    ok = 1;
    for (size_t k = 0; k < 100 && ok; ++k) ok = got[k] == ref[n - 1 - k];
  } else if (!strcmp(family, "segmented_topk")) {
    *what = "top 10 of each row of 1000 uint32, sorted values";
    const size_t rows = n / 1000;
    *st = clprim_batched_topk(ctx, rows, 1000, CLPRIM_UINT32, clprim_buf(in), 10,
                              CLPRIM_TOPK_SORTED, clprim_buf(out), clprim_buf(out2));
    if (*st || clEnqueueReadBuffer(q, out, CL_TRUE, 0, rows * 10 * 4, got, 0, NULL, NULL))
      goto done;
    ok = 1;
    for (size_t r = 0; r < rows && ok; ++r) {
      memcpy(ref, host + r * 1000, 1000 * 4);
      qsort(ref, 1000, sizeof *ref, cmp_u32);
      for (size_t k = 0; k < 10 && ok; ++k) ok = got[r * 10 + k] == ref[999 - k];
    }
  } else if (!strcmp(family, "runs")) {
    *what = "run-length encoding of sorted uint32 below 1000";
    for (size_t i = 0; i < n; ++i) ref[i] = host[i] % 1000;
    qsort(ref, n, sizeof *ref, cmp_u32);
    uint64_t runs = 0;
    if (clEnqueueWriteBuffer(q, out3, CL_TRUE, 0, n * 4, ref, 0, NULL, NULL)) goto done;
    *st = clprim_run_length_encode(ctx, n, CLPRIM_UINT32, clprim_buf(out3), 0, clprim_buf(out),
                                   clprim_buf(out2), &runs, clprim_buf(NULL));
    cl_uint *lengths = malloc(n * 4);
    if (!*st && lengths && runs <= n &&
        !clEnqueueReadBuffer(q, out, CL_TRUE, 0, runs * 4, got, 0, NULL, NULL) &&
        !clEnqueueReadBuffer(q, out2, CL_TRUE, 0, runs * 4, lengths, 0, NULL, NULL)) {
      size_t r = 0, at = 0;
      ok = 1;
      while (at < n && ok) {
        size_t len = 1;
        while (at + len < n && ref[at + len] == ref[at]) ++len;
        ok = r < runs && got[r] == ref[at] && lengths[r] == len;
        at += len, ++r;
      }
      ok = ok && r == runs;
    }
    free(lengths);
  } else if (!strcmp(family, "sort")) {
    *what = "argsort of uint32, with the sorted keys";
    *st = clprim_argsort(ctx, n, CLPRIM_UINT32, clprim_buf(in), 0, 0, 0, clprim_buf(out2),
                         clprim_buf(out));
    cl_uint *order = malloc(n * 4);
    if (!*st && order && !clEnqueueReadBuffer(q, out, CL_TRUE, 0, n * 4, got, 0, NULL, NULL) &&
        !clEnqueueReadBuffer(q, out2, CL_TRUE, 0, n * 4, order, 0, NULL, NULL)) {
      memcpy(ref, host, n * 4);
      qsort(ref, n, sizeof *ref, cmp_u32);
      ok = 1;
      for (size_t i = 0; i < n && ok; ++i)
        ok = got[i] == ref[i] && order[i] < n && host[order[i]] == got[i] &&
             (i == 0 || got[i] != got[i - 1] || order[i] > order[i - 1]); /* stable */
    }
    free(order);
  }
done:
  free(got);
  free(ref);
  return ok;
}

/* Every family on one path; 1 when all are right. Prints a line per family
 * (text) or an array element per family (JSON). */
static int self_test(clprim_path path, const clprim_options *base, int json, int first_path) {
  clprim_options o = *base;
  o.path = path;
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, &o);
  if (json)
    printf("%s\n    {\"path\": \"%s\", \"tests\": [", first_path ? "" : ",", clprim_path_name(path));
  if (st != CLPRIM_SUCCESS) {
    if (json)
      printf("{\"family\": \"context\", \"ok\": false, \"status\": \"%s\"}]}", clprim_status_name(st));
    else
      printf("  %-14s FAIL (context: %s)\n", clprim_path_name(path), clprim_status_name(st));
    return 0;
  }
  const size_t n = 100003;
  cl_uint *host = malloc(n * sizeof *host);
  unsigned long long seed = 12345u + path;
  for (size_t i = 0; i < n && host; ++i) host[i] = (cl_uint)next(&seed);
  cl_context cl = clprim_context_cl_context(ctx);
  cl_int err = host ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
  cl_mem bufs[4] = {NULL, NULL, NULL, NULL};
  for (int b = 0; b < 4 && err == CL_SUCCESS; ++b)
    bufs[b] = clCreateBuffer(cl, CL_MEM_READ_WRITE | (b ? 0 : CL_MEM_COPY_HOST_PTR), n * 4,
                             b ? NULL : host, &err);
  int all = err == CL_SUCCESS;
  for (size_t f = 0; f < FAMILIES && err == CL_SUCCESS; ++f) {
    const char *what = "";
    const double t0 = now_ms();
    const int ok = test_family(ctx, families[f], host, n, bufs[0], bufs[1], bufs[2], bufs[3],
                               &what, &st);
    const double ms = now_ms() - t0;
    all &= ok;
    if (json)
      printf("%s{\"family\": \"%s\", \"ok\": %s, \"status\": \"%s\", \"ms\": %.0f}", f ? ", " : "",
             families[f], ok ? "true" : "false", clprim_status_name(st), ms);
    else
      printf("  %-14s %-14s %s%s%s  (%s, n = %zu; %.0f ms with its first builds)\n",
             clprim_path_name(path), families[f], ok ? "OK" : "FAIL",
             st != CLPRIM_SUCCESS ? " " : "", st != CLPRIM_SUCCESS ? clprim_status_name(st) : "",
             what, n, ms);
  }
  if (err != CL_SUCCESS && !json) printf("  %-14s FAIL (buffers: %s)\n", clprim_path_name(path), clprim_status_name(err));
  if (json) printf("]}");
  for (int b = 0; b < 4; ++b)
    if (bufs[b]) clReleaseMemObject(bufs[b]);
  free(host);
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
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--no-self-test")) {
      run_tests = 0;
    } else if (!strcmp(argv[a], "--prebuild")) {
      prebuild = 1;
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
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, &opts);
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "clprim-info: no context: %s\nOpenCL devices (%u):\n%s", clprim_status_name(st),
            count, list);
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
    for (size_t f = 0; f < FAMILIES; ++f) {
      printf("%s\n    {\"family\": \"%s\", \"path\": \"%s\", \"algorithm\": ", f ? "," : "",
             families[f], clprim_path_name(in.path));
      json_string(algorithm(families[f], in.path, &in));
      printf("}");
    }
    printf("\n  ]");
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
    for (size_t f = 0; f < FAMILIES; ++f)
      printf("  %-14s %s\n", families[f], algorithm(families[f], in.path, &in));
  }

  int failures = 0;
  if (prebuild) {
    const double t0 = now_ms();
    st = clprim_context_prebuild(ctx);
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
