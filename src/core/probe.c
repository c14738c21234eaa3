/* probe.c: what the device is and which paths really run on it.
 *
 * Extension strings are not trusted alone (drivers list extensions whose
 * built-ins are missing): each candidate path is confirmed by building and
 * running cl/probe.cl and checking every result on the host. A path that
 * fails falls back to the next. Verdicts are kept in the disk cache, keyed by
 * device, driver and library version, so a warm start builds nothing. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#define CL_DEVICE_WARP_SIZE_NV 0x4003
#endif
#ifndef CL_DEVICE_MAX_NUM_SUB_GROUPS
#define CL_DEVICE_MAX_NUM_SUB_GROUPS 0x105C
#endif

#define PROBE_WG 64
#define PROBE_GROUPS 2
#define PROBE_ITEMS (PROBE_WG * PROBE_GROUPS)
#define PROBE_FIELDS 10

/* A query's error: CL_INVALID_VALUE is a device that does not answer it
 * (an optional fact, left 0); any other error is OpenCL's own failure and
 * comes back to the caller. */
static clprim_status optional(cl_int err) {
  return err == CL_SUCCESS || err == CL_INVALID_VALUE ? CLPRIM_SUCCESS : (clprim_status)err;
}

static clprim_status dstr(cl_device_id d, cl_device_info what, char *buf, size_t size) {
  const cl_int err = clGetDeviceInfo(d, what, size, buf, NULL);
  if (err != CL_SUCCESS) buf[0] = 0;
  buf[size - 1] = 0;
  return optional(err);
}

static clprim_status pstr(cl_platform_id p, cl_platform_info what, char *buf, size_t size) {
  const cl_int err = clGetPlatformInfo(p, what, size, buf, NULL);
  if (err != CL_SUCCESS) buf[0] = 0;
  buf[size - 1] = 0;
  return optional(err);
}

/* A numeric fact of the device into value (of `size` bytes). */
static clprim_status fact(cl_device_id d, cl_device_info what, void *value, size_t size) {
  return optional(clGetDeviceInfo(d, what, size, value, NULL));
}

static int has_extension(const char *extensions, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(extensions, name); p; p = strstr(p + 1, name))
    if ((p == extensions || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
  return 0;
}

static clprim_status read_facts(clprim_context *ctx, char *extensions, size_t ext_size) {
  clprim_device_info *in = &ctx->info;
  cl_device_id d = ctx->device;
  CLPRIM_CHECK(pstr(ctx->platform, CL_PLATFORM_NAME, in->platform_name, sizeof in->platform_name));
  CLPRIM_CHECK(pstr(ctx->platform, CL_PLATFORM_VERSION, in->platform_version,
                    sizeof in->platform_version));
  CLPRIM_CHECK(dstr(d, CL_DEVICE_VENDOR, in->vendor, sizeof in->vendor));
  CLPRIM_CHECK(dstr(d, CL_DEVICE_NAME, in->device_name, sizeof in->device_name));
  CLPRIM_CHECK(dstr(d, CL_DEVICE_VERSION, in->device_version, sizeof in->device_version));
  CLPRIM_CHECK(dstr(d, CL_DRIVER_VERSION, in->driver_version, sizeof in->driver_version));
  CLPRIM_CHECK(dstr(d, CL_DEVICE_OPENCL_C_VERSION, in->opencl_c_version,
                    sizeof in->opencl_c_version));
  CLPRIM_CHECK(dstr(d, CL_DEVICE_EXTENSIONS, extensions, ext_size));

  cl_uint u = 0;
  cl_ulong ul = 0;
  size_t sz = 0;
  CLPRIM_CHECK(fact(d, CL_DEVICE_TYPE, &in->device_type, sizeof in->device_type));
  CLPRIM_CHECK(fact(d, CL_DEVICE_MAX_COMPUTE_UNITS, &u, sizeof u));
  in->compute_units = u;
  CLPRIM_CHECK(fact(d, CL_DEVICE_GLOBAL_MEM_SIZE, &ul, sizeof ul));
  in->global_mem_size = ul;
  ul = 0;
  CLPRIM_CHECK(fact(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &ul, sizeof ul));
  in->max_alloc_size = ul;
  ul = 0;
  CLPRIM_CHECK(fact(d, CL_DEVICE_LOCAL_MEM_SIZE, &ul, sizeof ul));
  in->local_mem_size = ul;
  ctx->oclgrind = strstr(in->platform_name, "Oclgrind") != NULL;
  cl_device_exec_capabilities caps = 0;
  CLPRIM_CHECK(fact(d, CL_DEVICE_EXECUTION_CAPABILITIES, &caps, sizeof caps));
  ctx->native_kernels = (in->device_type & CL_DEVICE_TYPE_CPU) && (caps & CL_EXEC_NATIVE_KERNEL);
  const char *pocl_cache = getenv("POCL_KERNEL_CACHE");
  ctx->runtime_caches = strstr(in->platform_name, "Portable Computing Language") != NULL &&
                        !(pocl_cache && strcmp(pocl_cache, "0") == 0);
  /* Sub-buffer origins must be multiples of this (core/call.c). */
  ctx->base_align = 128;
  u = 0;
  CLPRIM_CHECK(fact(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, &u, sizeof u));
  if (u >= 8) ctx->base_align = u / 8;
  CLPRIM_CHECK(fact(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, &sz, sizeof sz));
  in->max_work_group_size = sz;
  in->has_fp64 = has_extension(extensions, "cl_khr_fp64");
  in->has_int64_atomics = has_extension(extensions, "cl_khr_int64_base_atomics");
  if (has_extension(extensions, "cl_nv_device_attribute_query")) {
    u = 0;
    CLPRIM_CHECK(fact(d, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, &u, sizeof u));
    in->nv_compute_capability_major = u;
    u = 0;
    CLPRIM_CHECK(fact(d, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, &u, sizeof u));
    in->nv_compute_capability_minor = u;
    u = 0;
    CLPRIM_CHECK(fact(d, CL_DEVICE_WARP_SIZE_NV, &u, sizeof u));
    in->nv_warp_size = u;
  }
  return CLPRIM_SUCCESS;
}

/* Checks the probe kernel's output (see cl/probe.cl for the fields). */
static int probe_results_ok(clprim_path path, const cl_uint *r, const cl_ulong *r64,
                            unsigned *sg_size) {
  const int subgroups = path != CLPRIM_PATH_LOCAL;
  const int ballot = path == CLPRIM_PATH_KHR_BALLOT || path == CLPRIM_PATH_NV_PTX;
  for (unsigned i = 0; i < PROBE_ITEMS; ++i) {
    const cl_uint *f = r + (size_t)i * PROBE_FIELDS;
    unsigned g0 = i - i % PROBE_WG;
    cl_uint excl = 0, total = 0;
    cl_ulong excl64 = 0, total64 = 0;
    for (unsigned j = g0; j < g0 + PROBE_WG; ++j) {
      cl_uint x = j * 3u + 1u;
      cl_ulong y = ((cl_ulong)j << 33) + j;
      if (j < i) excl += x, excl64 += y;
      total += x, total64 += y;
    }
    if (f[0] != excl || f[1] != total || r64[2 * i] != excl64 || r64[2 * i + 1] != total64)
      return 0;
    if (!subgroups) continue;
    cl_uint size = f[2], lane = f[3];
    if (size == 0 || size > PROBE_WG || lane >= size || lane > i - g0) return 0;
    unsigned base = i - lane;
    if (base + size > g0 + PROBE_WG) return 0;
    cl_uint sexcl = 0, ssum = 0, lower_marked = 0, marked = 0;
    for (unsigned j = base; j < base + size; ++j) {
      const cl_uint *o = r + (size_t)j * PROBE_FIELDS;
      if (o[2] != size || o[3] != j - base) return 0;
      cl_uint x = j * 3u + 1u;
      if (j < i) sexcl += x;
      ssum += x;
      if (j % 3 == 0) {
        ++marked;
        if (j < i && j >= base + (lane & ~31u)) ++lower_marked;
      }
    }
    if (f[4] != sexcl || f[5] != ssum || f[6] != base * 3u + 1u ||
        f[7] != (base + size - 1) * 3u + 1u)
      return 0;
    if (ballot && (f[8] != lower_marked || f[9] != marked)) return 0;
    *sg_size = size > *sg_size ? size : *sg_size;
  }
  return 1;
}

/* OpenCL failing for want of resources, not the path: the probe stops
 * and creation returns the error (nothing is cached). */
static int resource_error(cl_int err) {
  return err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY ||
         err == CL_MEM_OBJECT_ALLOCATION_FAILURE;
}

/* Builds and runs the probe for one path with one set of extra options:
 * *ok = 1 when it runs right. A build that fails or wrong results reject
 * the path; a resource error is returned. */
static clprim_status probe_path(clprim_context *ctx, clprim_path path, const char *options,
                                unsigned *sg_size, int *ok) {
  *ok = 0;
  char full[256];
  snprintf(full, sizeof full, "%s -DPROBE_WG=%d", options, PROBE_WG);
  const char *parts[2] = {clprim__source("clprim_device.h"), clprim__source("probe.cl")};
  size_t len = strlen(parts[0]) + strlen(parts[1]) + 2;
  char *source = malloc(len);
  if (!source) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  snprintf(source, len, "%s\n%s", parts[0], parts[1]);
  cl_program program = NULL;
  clprim_status st = clprim__build(ctx, source, full, &program);
  free(source);
  const int debug = ctx->trace;
  if (st != CLPRIM_SUCCESS) {
    if (resource_error(st)) return st;
    if (debug)
      fprintf(stderr, "clprim probe: %s with \"%s\" does not build (%s):\n%s\n",
              clprim_path_name(path), options, clprim_status_name(st), ctx->build_log);
    return CLPRIM_SUCCESS;
  }

  cl_int err = CL_SUCCESS, made;
  cl_kernel kernel = clCreateKernel(program, "probe", &made);
  if (made != CL_SUCCESS) err = made;
  cl_mem out = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE,
                              sizeof(cl_uint) * PROBE_ITEMS * PROBE_FIELDS, NULL, &made);
  if (err == CL_SUCCESS) err = made;
  cl_mem out64 =
      clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, sizeof(cl_ulong) * PROBE_ITEMS * 2, NULL, &made);
  if (err == CL_SUCCESS) err = made;
  cl_uint *r = calloc((size_t)PROBE_ITEMS * PROBE_FIELDS, sizeof *r);
  cl_ulong *r64 = calloc((size_t)PROBE_ITEMS * 2, sizeof *r64);
  if (err == CL_SUCCESS && (!r || !r64)) err = CL_OUT_OF_HOST_MEMORY;
  if (err == CL_SUCCESS)
    err = (cl_int)clprim__set_args(kernel, 2, sizeof out, &out, sizeof out64, &out64);
  if (err == CL_SUCCESS) {
    size_t global = PROBE_ITEMS, local = PROBE_WG;
    err = clEnqueueNDRangeKernel(ctx->queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
  }
  if (err == CL_SUCCESS)
    err = clEnqueueReadBuffer(ctx->queue, out, CL_TRUE, 0,
                              sizeof(cl_uint) * PROBE_ITEMS * PROBE_FIELDS, r, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = clEnqueueReadBuffer(ctx->queue, out64, CL_TRUE, 0, sizeof(cl_ulong) * PROBE_ITEMS * 2,
                              r64, 0, NULL, NULL);
  *ok = err == CL_SUCCESS && probe_results_ok(path, r, r64, sg_size);
  if (debug && !*ok)
    fprintf(stderr, "clprim probe: %s with \"%s\" built but %s\n", clprim_path_name(path),
            options, err == CL_SUCCESS ? "gave wrong results" : clprim_status_name(err));
  free(r);
  free(r64);
  if (out) clReleaseMemObject(out);
  if (out64) clReleaseMemObject(out64);
  if (kernel) clReleaseKernel(kernel);
  clReleaseProgram(program);
  return resource_error(err) ? (clprim_status)err : CLPRIM_SUCCESS;
}

static const char *const path_defines[CLPRIM_PATH_COUNT] = {
    "", "-DCLPRIM_PATH_LOCAL", "-DCLPRIM_PATH_KHR_SUBGROUPS", "-DCLPRIM_PATH_KHR_BALLOT",
    "-DCLPRIM_PATH_NV_PTX", "-DCLPRIM_CPU"};

/* Adds the -cl-std option a khr path needed ("-": none) to its options. */
static void append_std(char *options, const char *std) {
  size_t used = strlen(options);
  if (strcmp(std, "-") != 0) snprintf(options + used, 160 - used, " %s", std);
}

clprim_status clprim__probe(clprim_context *ctx) {
  char *extensions = malloc(16384);
  if (!extensions) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  clprim_status st = read_facts(ctx, extensions, 16384);
  clprim_device_info *in = &ctx->info;

  /* Candidate paths, from what the device says it has. */
  unsigned candidates = 1u << CLPRIM_PATH_LOCAL;
  cl_uint max_sub_groups = 0;
  if (st == CLPRIM_SUCCESS)
    st = fact(ctx->device, CL_DEVICE_MAX_NUM_SUB_GROUPS, &max_sub_groups, sizeof max_sub_groups);
  if (st != CLPRIM_SUCCESS) {
    free(extensions);
    return st;
  }
  int subgroups = has_extension(extensions, "cl_khr_subgroups") ||
                  (strncmp(in->device_version, "OpenCL 3", 8) == 0 && max_sub_groups > 0);
  if (subgroups) candidates |= 1u << CLPRIM_PATH_KHR_SUBGROUPS;
  if (subgroups && has_extension(extensions, "cl_khr_subgroup_ballot"))
    candidates |= 1u << CLPRIM_PATH_KHR_BALLOT;
  if (in->nv_compute_capability_major >= 3 && in->nv_warp_size == 32)
    candidates |= 1u << CLPRIM_PATH_NV_PTX;
  free(extensions);
  ctx->path_candidates = candidates;

  /* Options per path: the define, the Kepler-Pascal PTX forms, the OpenCL C
   * version the khr built-ins may need. */
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p)
    snprintf(ctx->path_options[p], sizeof ctx->path_options[p], "%s", path_defines[p]);
  snprintf(ctx->path_options[CLPRIM_PATH_AUTO], sizeof ctx->path_options[0], "%s",
           path_defines[CLPRIM_PATH_LOCAL]);
  snprintf(ctx->path_options[CLPRIM_PATH_NV_PTX], sizeof ctx->path_options[0],
           "%s -DCLPRIM_NV_SYNC=%d", path_defines[CLPRIM_PATH_NV_PTX],
           in->nv_compute_capability_major >= 7 ? 1 : 0);

  /* A verdict from the disk cache? */
  const char *probe_source = clprim__source("probe.cl");
  size_t key_size = strlen(probe_source) + 4 * 128 + 64;
  char *key = malloc(key_size), verdict[256];
  if (!key) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  snprintf(key, key_size, "probe-v1\n%s\n%s\n%s\n%s\n%s\n%s\n%u", clprim_version_string(),
           in->platform_name, in->platform_version, in->device_name, in->driver_version,
           probe_source, candidates);
  unsigned mask = 0, sg = 0;
  char std_ballot[32] = "", std_subgroups[32] = "";
  if (clprim__cache_get_text(ctx, key, verdict, sizeof verdict) &&
      sscanf(verdict, "paths=%u sg=%u std2=%31s std3=%31s", &mask, &sg, std_subgroups,
             std_ballot) == 4) {
    in->paths_available = mask | (1u << CLPRIM_PATH_LOCAL);
    in->subgroup_size = sg;
    ctx->probe_cached = 1;
  } else {
    in->paths_available = 1u << CLPRIM_PATH_LOCAL;
    strcpy(std_subgroups, "-");
    strcpy(std_ballot, "-");
    for (unsigned p = CLPRIM_PATH_KHR_SUBGROUPS; p <= CLPRIM_PATH_NV_PTX; ++p) {
      if (!(candidates & (1u << p))) continue;
      const char *stds[] = {"-", "-cl-std=CL3.0", "-cl-std=CL2.0"};
      unsigned tries = p == CLPRIM_PATH_NV_PTX ? 1 : 3;
      for (unsigned t = 0; t < tries; ++t) {
        char opts[200];
        snprintf(opts, sizeof opts, "%s %s", ctx->path_options[p], t ? stds[t] : "");
        int ok;
        st = probe_path(ctx, (clprim_path)p, opts, &sg, &ok);
        if (st != CLPRIM_SUCCESS) {
          free(key);
          return st;
        }
        if (ok) {
          in->paths_available |= 1u << p;
          if (p == CLPRIM_PATH_KHR_SUBGROUPS) strcpy(std_subgroups, stds[t]);
          if (p == CLPRIM_PATH_KHR_BALLOT) strcpy(std_ballot, stds[t]);
          break;
        }
      }
    }
    in->subgroup_size = sg;
    /* A failed probe build is expected, not the caller's error. */
    ctx->build_log[0] = 0;
    snprintf(verdict, sizeof verdict, "paths=%u sg=%u std2=%s std3=%s", in->paths_available, sg,
             std_subgroups, std_ballot);
    clprim__cache_put_text(ctx, key, verdict);
  }
  free(key);
  append_std(ctx->path_options[CLPRIM_PATH_KHR_SUBGROUPS], std_subgroups);
  append_std(ctx->path_options[CLPRIM_PATH_KHR_BALLOT], std_ballot);
  /* The cpu path: plain OpenCL C that every device runs, over the local
   * path's layer (the kernels that have no CPU shape are the local path's).
   * Not over PoCL 5's subgroups: its kernels of one work-item with
   * subgroup operations failed to load (undefined __pocl_work_group_alloca). */
  in->paths_available |= 1u << CLPRIM_PATH_CPU;
  snprintf(ctx->path_options[CLPRIM_PATH_CPU], sizeof ctx->path_options[0], "%s %s",
           path_defines[CLPRIM_PATH_LOCAL], path_defines[CLPRIM_PATH_CPU]);
  return CLPRIM_SUCCESS;
}

clprim_path clprim__best_layer(const clprim_context *ctx) {
  for (unsigned p = CLPRIM_PATH_NV_PTX; p > CLPRIM_PATH_LOCAL; --p)
    if (ctx->info.paths_available & (1u << p)) return (clprim_path)p;
  return CLPRIM_PATH_LOCAL;
}
