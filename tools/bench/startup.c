/* clprim-bench --startup: per family, context creation and a first call in
 * fresh processes, cold (every cache empty) and warm. The first calls are
 * the families' (struct bench_startup, in the registry's order). */
#include "startup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static const struct bench_startup *find_call(const char *name) {
  for (int f = 0; f < bench_family_count; ++f)
    for (int s = 0; s < bench_families[f]->startup_count; ++s)
      if (strcmp(bench_families[f]->startup[s].name, name) == 0)
        return &bench_families[f]->startup[s];
  return NULL;
}

int bench_startup_known(const char *name) {
  return strcmp(name, "all") == 0 || find_call(name) != NULL;
}

void bench_startup_list(void) {
  for (int f = 0; f < bench_family_count; ++f)
    for (int s = 0; s < bench_families[f]->startup_count; ++s)
      printf(" %s", bench_families[f]->startup[s].name);
}

/* The inputs of struct bench_startup_inputs on ctx. */
static void make_inputs(struct bench_startup_inputs *in, clprim_context *ctx) {
  const size_t n = (size_t)1 << 20, segments = n / 1024;
  float *host = malloc(n * sizeof *host);
  int32_t *keys = malloc(n * sizeof *keys);
  uint64_t *offsets = malloc(segments * 2 * sizeof *offsets); /* begins, then ends */
  if (!host || !keys || !offsets) bench_die("malloc", CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  for (size_t i = 0; i < n; ++i)
    host[i] = (float)((i * 2654435761u) % 1000003u) / 1000003.0f,
    keys[i] = (int32_t)(i / 64 % 1024);
  for (size_t s = 0; s < segments; ++s)
    offsets[s] = s * 1024, offsets[segments + s] = (s + 1) * 1024;
  cl_int err;
  cl_context cl = clprim_context_cl_context(ctx);
  const cl_mem_flags copy = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
  in->ctx = ctx, in->n = n;
  in->in = clCreateBuffer(cl, copy, n * 4, host, &err);
  in->keys = clCreateBuffer(cl, copy, n * 4, keys, &err);
  in->out = clCreateBuffer(cl, CL_MEM_READ_WRITE, n * 8, NULL, &err);
  in->out2 = clCreateBuffer(cl, CL_MEM_READ_WRITE, n * 8, NULL, &err);
  in->begins = clCreateBuffer(cl, copy, segments * 8, offsets, &err);
  in->ends = clCreateBuffer(cl, copy, segments * 8, offsets + segments, &err);
  clFinish(clprim_context_queue(ctx));
  free(host), free(keys), free(offsets);
}

int bench_startup_child(const char *dir, const char *name) {
  const struct bench_startup *call = find_call(name);
  if (!call) bench_die(name, CLPRIM_ERROR_INVALID_ARGUMENT);
  double t0 = now_ms();
  cl_platform_id platforms[16];
  cl_uint np = 0;
  clGetPlatformIDs(16, platforms, &np);
  double t1 = now_ms();
  clprim_options o;
  clprim_options_init(&o);
  o.cache_dir = dir;
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, &o);
  if (st != CLPRIM_SUCCESS) bench_die("context", st);
  double t2 = now_ms();
  struct bench_startup_inputs in;
  make_inputs(&in, ctx);
  double t3 = now_ms();
  st = call->call(&in);
  if (st != CLPRIM_SUCCESS) bench_die(name, st);
  clFinish(clprim_context_queue(ctx));
  double t4 = now_ms();
  /* A bare OpenCL context and queue on the same device: the driver's share
   * of the creation. */
  cl_int err;
  cl_device_id dev = clprim_context_device(ctx);
  double t5 = now_ms();
  cl_context c2 = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cl_command_queue q2 = clCreateCommandQueue(c2, dev, 0, &err);
  double t6 = now_ms();
  clReleaseCommandQueue(q2);
  clReleaseContext(c2);
  clReleaseMemObject(in.in), clReleaseMemObject(in.keys), clReleaseMemObject(in.out);
  clReleaseMemObject(in.out2), clReleaseMemObject(in.begins), clReleaseMemObject(in.ends);
  clprim_context_free(ctx);
  printf("%.2f %.2f %.2f %.2f\n", t1 - t0, t2 - t1, t4 - t3, t6 - t5);
  return 0;
}

/* One call in a cold and a warm child, printed. */
static void startup_one(const char *self, const char *name) {
  char dir[] = "/tmp/clprim-bench-cache-XXXXXX", pocl[] = "/tmp/clprim-bench-pocl-XXXXXX";
  if (!mkdtemp(dir) || !mkdtemp(pocl)) bench_die("mkdtemp", CLPRIM_ERROR_INVALID_ARGUMENT);
  for (int warm = 0; warm < 2; ++warm) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s POCL_CACHE_DIR='%s' '%s' --startup-child '%s' %s",
             warm ? "" : "CUDA_CACHE_DISABLE=1", pocl, self, dir, name);
    FILE *p = popen(cmd, "r");
    double load = 0, create = 0, call = 0, bare = 0;
    if (!p || fscanf(p, "%lf %lf %lf %lf", &load, &create, &call, &bare) != 4)
      bench_die("startup child", -1);
    pclose(p);
    printf("startup %-20s %-4s platforms %7.1f ms | clprim_context_create %7.1f ms (bare "
           "context+queue %7.1f ms) | first call %8.1f ms | clprim's own %8.1f ms\n",
           name, warm ? "warm" : "cold", load, create, bare, call, create - bare + call);
    fflush(stdout);
  }
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, pocl);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

void bench_startup(const char *self, const char *only) {
  for (int f = 0; f < bench_family_count; ++f)
    for (int s = 0; s < bench_families[f]->startup_count; ++s) {
      const char *name = bench_families[f]->startup[s].name;
      if (strcmp(only, "all") == 0 || strcmp(only, name) == 0) startup_one(self, name);
    }
}
