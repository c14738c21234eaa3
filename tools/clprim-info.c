/* clprim-info: the OpenCL devices, what clprim probed on the chosen one, the
 * path each primitive uses, and a self-test of every path the device runs (a
 * scan of random data against a CPU reference). Exit status 1 if a self-test
 * fails. Usage: clprim-info [--no-self-test] [--prebuild] (the device:
 * $CLPRIM_DEVICE). --prebuild builds every program of the chosen path into
 * clprim's disk cache (clprim_context_prebuild) and says how long it took. */
#include <clprim/clprim.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One path's self-test: exclusive scan of random uint32 against the CPU. */
static int self_test(clprim_path path, const clprim_options *base) {
  clprim_options o = *base;
  o.path = path;
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, &o);
  if (st != CLPRIM_SUCCESS) {
    printf("  %-14s FAIL (context: %s)\n", clprim_path_name(path), clprim_status_name(st));
    return 0;
  }
  const size_t n = 1000003;
  cl_uint *host = malloc(n * sizeof *host), *got = malloc(n * sizeof *got);
  unsigned seed = 12345u + path;
  for (size_t i = 0; i < n; ++i) host[i] = (seed = seed * 1103515245u + 12345u) >> 16;
  cl_int err;
  cl_mem buf = clCreateBuffer(clprim_context_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              n * sizeof *host, host, &err);
  int ok = 0;
  if (err == CL_SUCCESS) {
    st = clprim_scan_exclusive(ctx, CLPRIM_UINT32, buf, buf, n);
    if (st == CLPRIM_SUCCESS)
      err = clEnqueueReadBuffer(clprim_context_queue(ctx), buf, CL_TRUE, 0, n * sizeof *got, got, 0,
                                NULL, NULL);
    if (st == CLPRIM_SUCCESS && err == CL_SUCCESS) {
      cl_uint run = 0;
      ok = 1;
      for (size_t i = 0; i < n && ok; ++i) {
        ok = got[i] == run;
        run += host[i];
      }
    }
    clReleaseMemObject(buf);
  }
  printf("  %-14s %s", clprim_path_name(path), ok ? "OK" : "FAIL");
  if (st != CLPRIM_SUCCESS) printf(" (%s)", clprim_status_name(st));
  if (err != CL_SUCCESS) printf(" (%s)", clprim_status_name(err));
  printf("  (exclusive scan of %zu random uint32)\n", n);
  free(host);
  free(got);
  clprim_context_free(ctx);
  return ok;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int main(int argc, char **argv) {
  int run_tests = 1, prebuild = 0;
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--no-self-test") == 0) {
      run_tests = 0;
    } else if (strcmp(argv[a], "--prebuild") == 0) {
      prebuild = 1;
    } else {
      fprintf(stderr, "clprim-info: unknown argument '%s'\nusage: clprim-info [--no-self-test] [--prebuild]\n", argv[a]);
      return 2;
    }
  }
  char list[8192];
  unsigned count = clprim_list_devices(list, sizeof list);
  printf("clprim %s\nOpenCL devices (%u):\n%s", clprim_version_string(), count, list);

  clprim_options opts;
  clprim_options_init(&opts);
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, &opts);
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "clprim-info: no context: %s\n", clprim_status_name(st));
    return 1;
  }
  clprim_device_info in;
  clprim_context_get_info(ctx, &in, sizeof in);
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
  printf("  subgroup size   %u%s\n", in.subgroup_size, in.subgroup_size ? "" : " (no subgroup path)");
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
  printf("\nPath per primitive:\n");
  printf("  scan            %s (%s)\n", clprim_path_name(in.path),
         in.path == CLPRIM_PATH_NV_PTX ? "single pass, decoupled look-back"
                                       : "reduce-then-scan");
  int failures = 0;
  if (prebuild) {
    const double t0 = now_ms();
    st = clprim_context_prebuild(ctx);
    printf("\nPrebuild of every program of path %s: %s in %.1f s\n", clprim_path_name(in.path),
           clprim_status_name(st), (now_ms() - t0) / 1e3);
    if (st != CLPRIM_SUCCESS) {
      const char *log = clprim_context_build_log(ctx);
      if (log) fprintf(stderr, "%s\n", log);
      failures = 1;
    }
  }
  clprim_context_free(ctx);

  if (run_tests) {
    printf("\nSelf-test of each path this device runs:\n");
    for (unsigned p = CLPRIM_PATH_COUNT - 1; p >= CLPRIM_PATH_LOCAL; --p)
      if (in.paths_available & (1u << p)) failures += !self_test((clprim_path)p, &opts);
  }
  return failures ? 1 : 0;
}
