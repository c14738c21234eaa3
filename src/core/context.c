/* context.c: version, status names, types and paths, device choice, and the
 * context's life (create, probe, free). */
#include "core.h"

#include <ctype.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The ICD loader's answer when no platform is installed (cl_ext.h). */
#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

#define STR_(x) #x
#define STR(x) STR_(x)

unsigned clprim_version_number(void) { return CLPRIM_VERSION_NUMBER; }
const char *clprim_version_string(void) {
  return STR(CLPRIM_VERSION_MAJOR) "." STR(CLPRIM_VERSION_MINOR) "." STR(CLPRIM_VERSION_PATCH);
}

const char *clprim_status_name(int status) {
  switch (status) {
#define N(x)                                                                                       \
  case x:                                                                                          \
    return #x;
    N(CLPRIM_SUCCESS)
    N(CLPRIM_ERROR_INVALID_ARGUMENT)
    N(CLPRIM_ERROR_BUFFER_TOO_SMALL)
    N(CLPRIM_ERROR_UNSUPPORTED_TYPE)
    N(CLPRIM_ERROR_PATH_UNAVAILABLE)
    N(CLPRIM_ERROR_DEVICE_NOT_FOUND)
    N(CLPRIM_ERROR_UNSUPPORTED_DEVICE)
    N(CLPRIM_ERROR_OUT_OF_HOST_MEMORY)
    N(CLPRIM_ERROR_SIZE_TOO_LARGE)
    N(CLPRIM_ERROR_UNSUPPORTED_OPERATION)
    N(CLPRIM_ERROR_CONTEXT_BUSY)
    N(CLPRIM_ERROR_OPERATOR_LAYOUT)
    N(CL_DEVICE_NOT_FOUND)
    N(CL_DEVICE_NOT_AVAILABLE)
    N(CL_COMPILER_NOT_AVAILABLE)
    N(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    N(CL_OUT_OF_RESOURCES)
    N(CL_OUT_OF_HOST_MEMORY)
    N(CL_PROFILING_INFO_NOT_AVAILABLE)
    N(CL_MEM_COPY_OVERLAP)
    N(CL_IMAGE_FORMAT_MISMATCH)
    N(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    N(CL_BUILD_PROGRAM_FAILURE)
    N(CL_MAP_FAILURE)
    N(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    N(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    N(CL_COMPILE_PROGRAM_FAILURE)
    N(CL_LINKER_NOT_AVAILABLE)
    N(CL_LINK_PROGRAM_FAILURE)
    N(CL_DEVICE_PARTITION_FAILED)
    N(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    N(CL_INVALID_VALUE)
    N(CL_INVALID_DEVICE_TYPE)
    N(CL_INVALID_PLATFORM)
    N(CL_INVALID_DEVICE)
    N(CL_INVALID_CONTEXT)
    N(CL_INVALID_QUEUE_PROPERTIES)
    N(CL_INVALID_COMMAND_QUEUE)
    N(CL_INVALID_HOST_PTR)
    N(CL_INVALID_MEM_OBJECT)
    N(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    N(CL_INVALID_IMAGE_SIZE)
    N(CL_INVALID_SAMPLER)
    N(CL_INVALID_BINARY)
    N(CL_INVALID_BUILD_OPTIONS)
    N(CL_INVALID_PROGRAM)
    N(CL_INVALID_PROGRAM_EXECUTABLE)
    N(CL_INVALID_KERNEL_NAME)
    N(CL_INVALID_KERNEL_DEFINITION)
    N(CL_INVALID_KERNEL)
    N(CL_INVALID_ARG_INDEX)
    N(CL_INVALID_ARG_VALUE)
    N(CL_INVALID_ARG_SIZE)
    N(CL_INVALID_KERNEL_ARGS)
    N(CL_INVALID_WORK_DIMENSION)
    N(CL_INVALID_WORK_GROUP_SIZE)
    N(CL_INVALID_WORK_ITEM_SIZE)
    N(CL_INVALID_GLOBAL_OFFSET)
    N(CL_INVALID_EVENT_WAIT_LIST)
    N(CL_INVALID_EVENT)
    N(CL_INVALID_OPERATION)
    N(CL_INVALID_GL_OBJECT)
    N(CL_INVALID_BUFFER_SIZE)
    N(CL_INVALID_MIP_LEVEL)
    N(CL_INVALID_GLOBAL_WORK_SIZE)
    N(CL_INVALID_PROPERTY)
    N(CL_INVALID_IMAGE_DESCRIPTOR)
    N(CL_INVALID_COMPILER_OPTIONS)
    N(CL_INVALID_LINKER_OPTIONS)
    N(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef N
  case -1001:
    return "CL_PLATFORM_NOT_FOUND_KHR";
  default:
    return "unknown status";
  }
}

int clprim_is_error(int status) { return status != CLPRIM_SUCCESS; }

static const char *const type_names[CLPRIM_TYPE_COUNT] = {"int32", "uint32", "int64",
                                                          "uint64", "float", "double"};
static const char *const cl_type_names[CLPRIM_TYPE_COUNT] = {"int",  "uint",  "long",
                                                             "ulong", "float", "double"};
static const size_t type_sizes[CLPRIM_TYPE_COUNT] = {4, 4, 8, 8, 4, 8};

size_t clprim_type_size(clprim_type type) {
  return (unsigned)type < CLPRIM_TYPE_COUNT ? type_sizes[type] : 0;
}
const char *clprim_type_name(clprim_type type) {
  return (unsigned)type < CLPRIM_TYPE_COUNT ? type_names[type] : "invalid";
}
const char *clprim__cl_type(clprim_type type) {
  return (unsigned)type < CLPRIM_TYPE_COUNT ? cl_type_names[type] : "invalid";
}

static const char *const path_names[CLPRIM_PATH_COUNT] = {"auto", "local", "khr_subgroups",
                                                          "khr_ballot", "nv_ptx", "cpu"};
const char *clprim_path_name(clprim_path path) {
  return (unsigned)path < CLPRIM_PATH_COUNT ? path_names[path] : "invalid";
}

static int equal_nocase(const char *a, const char *b) {
  for (; *a && *b; ++a, ++b)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
  return *a == *b;
}

clprim_status clprim_path_from_name(const char *name, clprim_path *path) {
  if (!name || !path) return CLPRIM_ERROR_INVALID_ARGUMENT;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p)
    if (equal_nocase(name, path_names[p])) {
      *path = (clprim_path)p;
      return CLPRIM_SUCCESS;
    }
  return CLPRIM_ERROR_INVALID_ARGUMENT;
}

size_t clprim__bytes(size_t n, size_t elem_size) {
  return elem_size && n > SIZE_MAX / elem_size ? SIZE_MAX : n * elem_size;
}

int clprim__type_supported(const clprim_context *ctx, clprim_type type) {
  return (unsigned)type < CLPRIM_TYPE_COUNT && (type != CLPRIM_DOUBLE || ctx->info.has_fp64);
}

clprim_status clprim__check_type(clprim_context *ctx, const char *name, clprim_type type) {
  if ((unsigned)type >= CLPRIM_TYPE_COUNT)
    return clprim__invalid(ctx, "%s (%d) is not a clprim_type", name, (int)type);
  if (!clprim__type_supported(ctx, type))
    return clprim__fail(ctx, CLPRIM_ERROR_UNSUPPORTED_TYPE,
                        "%s is double, which the device does not support (no cl_khr_fp64)", name);
  return CLPRIM_SUCCESS;
}

clprim_status clprim__check_buffer(clprim_context *ctx, const char *name, cl_mem buf,
                                   size_t elem_size, size_t offset, size_t count) {
  if (!buf) return clprim__invalid(ctx, "%s is required (a NULL buffer)", name);
  const size_t bytes = clprim__bytes(count, elem_size), at = clprim__bytes(offset, elem_size);
  if (bytes == SIZE_MAX)
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE,
                        "%s: %zu elements of %zu bytes are more than size_t counts", name, count,
                        elem_size);
  cl_context owner = NULL;
  size_t size = 0;
  cl_int err = clGetMemObjectInfo(buf, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
  if (err == CL_SUCCESS) err = clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL);
  if (err != CL_SUCCESS)
    return clprim__fail(ctx, (clprim_status)err,
                        "%s is not a buffer (clGetMemObjectInfo returned %d)", name, (int)err);
  if (owner != ctx->cl_ctx)
    return clprim__fail(ctx, (clprim_status)CL_INVALID_CONTEXT,
                        "%s is a buffer of another cl_context", name);
  if (at == SIZE_MAX || at > SIZE_MAX - bytes || size < at + bytes) {
    const size_t holds = elem_size && size / elem_size > offset ? size / elem_size - offset : 0;
    return clprim__fail(ctx, CLPRIM_ERROR_BUFFER_TOO_SMALL,
                        "%s holds %zu elements from offset %zu, the call needs %zu", name, holds,
                        offset, count);
  }
  return CLPRIM_SUCCESS;
}

/* ------------------------------------------------------------ devices */

static void platform_string(cl_platform_id p, cl_platform_info what, char *buf, size_t size) {
  buf[0] = 0;
  if (clGetPlatformInfo(p, what, size, buf, NULL) != CL_SUCCESS) buf[0] = 0;
  buf[size - 1] = 0;
}
static void device_string(cl_device_id d, cl_device_info what, char *buf, size_t size) {
  buf[0] = 0;
  if (clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS) buf[0] = 0;
  buf[size - 1] = 0;
}

static int contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  if (n == 0) return 1;
  for (; *hay; ++hay) {
    size_t i = 0;
    while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      ++i;
    if (i == n) return 1;
  }
  return 0;
}

/* (internal.h) */
unsigned clprim__for_each_device(clprim_device_visitor visit, void *arg, cl_int *error) {
  cl_platform_id platforms[16];
  cl_uint np = 0, count = 0;
  cl_int err = clGetPlatformIDs(16, platforms, &np);
  if (err != CL_SUCCESS) {
    /* The ICD loader's "no platform" is no device; anything else fails. */
    if (error && err != CL_PLATFORM_NOT_FOUND_KHR) *error = err;
    return 0;
  }
  if (np > 16) np = 16;
  for (cl_uint p = 0; p < np; ++p) {
    cl_device_id devices[32];
    cl_uint nd = 0;
    err = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 32, devices, &nd);
    if (err == CL_DEVICE_NOT_FOUND) continue; /* a platform without devices */
    if (err != CL_SUCCESS) {
      if (error) *error = err;
      return count;
    }
    if (nd > 32) nd = 32;
    for (cl_uint d = 0; d < nd; ++d) {
      ++count;
      if (visit(platforms[p], devices[d], p, d, arg)) return count;
    }
  }
  return count;
}

struct list_arg {
  char *buf;
  size_t size, used;
};
static int list_visit(cl_platform_id p, cl_device_id d, unsigned pi, unsigned di, void *arg) {
  struct list_arg *a = arg;
  char pname[128], dname[128];
  cl_device_type type = 0;
  platform_string(p, CL_PLATFORM_NAME, pname, sizeof pname);
  device_string(d, CL_DEVICE_NAME, dname, sizeof dname);
  clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  if (a->buf && a->used + 1 < a->size) {
    int w = snprintf(a->buf + a->used, a->size - a->used, "%u:%u %s / %s (%s)\n", pi, di, pname,
                     dname,
                     type & CL_DEVICE_TYPE_GPU   ? "GPU"
                     : type & CL_DEVICE_TYPE_CPU ? "CPU"
                                                 : "other");
    if (w > 0) a->used += (size_t)w < a->size - a->used ? (size_t)w : a->size - a->used - 1;
  }
  return 0;
}

unsigned clprim_list_devices(char *buf, size_t size) {
  struct list_arg a = {buf, size, 0};
  if (buf && size) buf[0] = 0;
  return clprim__for_each_device(list_visit, &a, NULL);
}

struct pick_arg {
  const char *want;    /* NULL: first GPU, else first device */
  cl_device_type type; /* nonzero: want named a device type, take its first */
  int pass;            /* default choice: 0 looks for a GPU, 1 takes any */
  cl_platform_id platform;
  cl_device_id device;
  cl_int error; /* a query that failed: the search stops */
};
/* A platform's or device's string for pick_visit: a query that fails stops
 * the search with its error. */
static int pick_string(struct pick_arg *a, cl_int err, char *s, size_t size) {
  s[size - 1] = 0;
  if (err == CL_SUCCESS) return 0;
  a->error = err;
  return 1;
}
/* "gpu", "cpu" or "accelerator" (any case): that device type, else 0. */
static cl_device_type type_from_name(const char *want) {
  if (!want) return 0;
  if (equal_nocase(want, "gpu")) return CL_DEVICE_TYPE_GPU;
  if (equal_nocase(want, "cpu")) return CL_DEVICE_TYPE_CPU;
  if (equal_nocase(want, "accelerator")) return CL_DEVICE_TYPE_ACCELERATOR;
  return 0;
}
static int pick_visit(cl_platform_id p, cl_device_id d, unsigned pi, unsigned di, void *arg) {
  struct pick_arg *a = arg;
  if (!a->want || a->type) {
    cl_device_type type = 0;
    const cl_int err = clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    if (err != CL_SUCCESS) return a->error = err, 1;
    if (a->type) {
      if (type & a->type) goto take;
      return 0;
    }
    if (a->pass == 1 || (type & CL_DEVICE_TYPE_GPU)) goto take;
    return 0;
  }
  unsigned wp, wd;
  char tail;
  if (sscanf(a->want, "%u:%u%c", &wp, &wd, &tail) == 2) {
    if (wp == pi && wd == di) goto take;
    return 0;
  }
  char s[256];
  const cl_platform_info pinfo[] = {CL_PLATFORM_NAME, CL_PLATFORM_VENDOR, CL_PLATFORM_VERSION};
  for (unsigned i = 0; i < 3; ++i) {
    if (pick_string(a, clGetPlatformInfo(p, pinfo[i], sizeof s, s, NULL), s, sizeof s)) return 1;
    if (contains_nocase(s, a->want)) goto take;
  }
  if (pick_string(a, clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof s, s, NULL), s, sizeof s)) return 1;
  if (contains_nocase(s, a->want)) goto take;
  return 0;
take:
  a->platform = p;
  a->device = d;
  return 1;
}

static clprim_status pick_device(const char *want, cl_platform_id *platform, cl_device_id *device) {
  struct pick_arg a = {want && *want ? want : NULL, type_from_name(want), 0, NULL, NULL, CL_SUCCESS};
  unsigned count = clprim__for_each_device(pick_visit, &a, &a.error);
  if (!a.device && !a.want && a.error == CL_SUCCESS) {
    a.pass = 1;
    clprim__for_each_device(pick_visit, &a, &a.error);
  }
  if (a.error != CL_SUCCESS) /* OpenCL's own failure */
    return clprim__create_fail((clprim_status)a.error,
                               "context_create: listing the OpenCL devices failed with %d (%s)",
                               (int)a.error, clprim_status_name(a.error));
  if (!a.device) {
    char list[4096];
    clprim_list_devices(list, sizeof list);
    if (count == 0) {
      fprintf(stderr, "clprim: no OpenCL device found (is an OpenCL driver installed?)\n");
      return clprim__create_fail(CLPRIM_ERROR_DEVICE_NOT_FOUND,
                                 "context_create: no OpenCL device found (is an OpenCL driver "
                                 "installed?)");
    }
    fprintf(stderr, "clprim: no OpenCL device matches \"%s\"; the devices are:\n%s", want, list);
    /* The list on one line: "0:0 a / b (CPU); 0:1 ..." */
    for (char *c = list; *c; ++c)
      if (*c == '\n') *c = c[1] ? ';' : 0;
    return clprim__create_fail(CLPRIM_ERROR_DEVICE_NOT_FOUND,
                               "context_create: device \"%s\" matches no OpenCL device (%s%s)",
                               a.want, count == 1 ? "the one device: " : "the devices: ", list);
  }
  *platform = a.platform;
  *device = a.device;
  return CLPRIM_SUCCESS;
}

/* ------------------------------------------------------------ context */

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Creates dir and its missing parents; 1 when it exists and takes a file. */
static int usable_dir(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) return 0;
  for (char *p = path + 1; *p; ++p)
    if (*p == '/') {
      *p = 0;
      mkdir(path, 0777); /* may exist */
      *p = '/';
    }
  mkdir(path, 0777);
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/.clprim-probe-XXXXXX", dir);
  int fd = mkstemp(probe);
  if (fd < 0) return 0;
  close(fd);
  remove(probe);
  return 1;
}

/* The disk cache folder: options->cache_dir, else $CLPRIM_CACHE_DIR, else
 * $XDG_CACHE_HOME/clprim, else $HOME/.cache/clprim; "" or "off" turns the
 * cache off. A folder that cannot be created or written is reported on
 * stderr (once per process) and the cache is off. */
static clprim_status choose_cache_dir(clprim_context *ctx, const clprim_options *options) {
  static atomic_int warned;
  const char *dir = options && options->cache_dir ? options->cache_dir : getenv("CLPRIM_CACHE_DIR");
  char fallback[4096];
  if (!dir) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
      snprintf(fallback, sizeof fallback, "%s/clprim", xdg);
    else if (home && *home)
      snprintf(fallback, sizeof fallback, "%s/.cache/clprim", home);
    else
      return CLPRIM_SUCCESS;
    dir = fallback;
  }
  if (!*dir || strcmp(dir, "off") == 0) return CLPRIM_SUCCESS;
  if (!usable_dir(dir)) {
    if (atomic_exchange(&warned, 1) == 0)
      fprintf(stderr, "clprim: the kernel cache folder %s cannot be written; the disk cache is "
                      "off (set CLPRIM_CACHE_DIR to another folder, or to off)\n", dir);
    return CLPRIM_SUCCESS;
  }
  ctx->cache_dir = dup_string(dir);
  return ctx->cache_dir ? CLPRIM_SUCCESS : CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
}

/* Everything after the OpenCL objects exist: options, probing, path choice. */
/* Why a forced path cannot run, on stderr: the paths the device has, and
 * whether the forced one is not offered (its extensions are missing) or
 * failed its probe kernel. */
static void report_unavailable(clprim_context *ctx, clprim_path want) {
  static const char *const needs[CLPRIM_PATH_COUNT] = {
      "", "", "cl_khr_subgroups (or OpenCL 3.0 subgroups)",
      "cl_khr_subgroups and cl_khr_subgroup_ballot", "an NVIDIA device (warp size 32)", ""};
  char have[128] = "";
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p)
    if (ctx->info.paths_available & (1u << p))
      snprintf(have + strlen(have), sizeof have - strlen(have), " %s",
               clprim_path_name((clprim_path)p));
  fprintf(stderr, "clprim: path %s is not available on %s; this device runs:%s\n",
          clprim_path_name(want), ctx->info.device_name, have);
  clprim__fail(ctx, CLPRIM_ERROR_PATH_UNAVAILABLE,
               "path %s is not available on %s (%s); this device runs:%s", clprim_path_name(want),
               ctx->info.device_name,
               !(ctx->path_candidates & (1u << want)) ? "the device does not list what it needs"
                                                      : "its probe kernel failed",
               have);
  if (!(ctx->path_candidates & (1u << want)))
    fprintf(stderr, "clprim:   %s needs %s, which the device does not list\n",
            clprim_path_name(want), needs[want]);
  else
    fprintf(stderr,
            "clprim:   the device lists what %s needs, but its probe kernel failed%s "
            "(CLPRIM_TRACE=1 prints the build log or the wrong results%s)\n",
            clprim_path_name(want), ctx->probe_cached ? " (verdict from the disk cache)" : "",
            ctx->probe_cached ? "; CLPRIM_CACHE_DIR=off probes again" : "");
}

static clprim_status finish_create(clprim_context *ctx, const clprim_options *options,
                                   const struct clprim_family *const *families,
                                   unsigned family_count) {
  cl_command_queue_properties props = 0;
  cl_int err = clGetCommandQueueInfo(ctx->queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
  if (err != CL_SUCCESS) return clprim__cl_fail(ctx, err, "clGetCommandQueueInfo");
  if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    return clprim__fail(ctx, CLPRIM_ERROR_UNSUPPORTED_DEVICE,
                        "queue is out of order (CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE); clprim "
                        "needs an in-order queue");
  ctx->profiling = (props & CL_QUEUE_PROFILING_ENABLE) != 0;

  CLPRIM_CHECK(choose_cache_dir(ctx, options));
  /* Fields after cache_dir only where the caller's size covers them. */
  if (options && options->size >= offsetof(clprim_options, wait_when_busy) + sizeof(int)) {
    if (options->wait_when_busy != 0 && options->wait_when_busy != 1)
      return clprim__invalid(ctx, "options->wait_when_busy (%d) is not 0 or 1",
                             options->wait_when_busy);
    ctx->wait_when_busy = options->wait_when_busy;
  }
  /* CPU devices: one build at a time unless asked (PoCL 3.1 compiles one
   * program at a time in a process: two threads kept one core busy and took
   * 10% longer, test_scan 66.9 against 74.6 s on 2 cores). */
  cl_device_type device_type = 0;
  clGetDeviceInfo(ctx->device, CL_DEVICE_TYPE, sizeof device_type, &device_type, NULL);
  ctx->build_threads = device_type & CL_DEVICE_TYPE_CPU ? 1u : clprim__default_build_threads();
  if (options && options->size >= offsetof(clprim_options, build_threads) + sizeof(unsigned) &&
      options->build_threads != 0)
    ctx->build_threads = options->build_threads < CLPRIM__BUILD_THREADS_MAX
                             ? options->build_threads
                             : CLPRIM__BUILD_THREADS_MAX;

  clprim_path want = options ? options->path : CLPRIM_PATH_AUTO;
  if ((unsigned)want >= CLPRIM_PATH_COUNT)
    return clprim__invalid(ctx, "options->path (%d) is not a clprim_path", (int)want);
  const char *env = getenv("CLPRIM_PATH");
  if (want == CLPRIM_PATH_AUTO && env && *env)
    if (clprim_path_from_name(env, &want) != CLPRIM_SUCCESS) {
      fprintf(stderr, "clprim: CLPRIM_PATH=\"%s\" is not a path name (auto, local, "
                      "khr_subgroups, khr_ballot, nv_ptx, cpu)\n", env);
      return clprim__invalid(ctx,
                             "CLPRIM_PATH=\"%s\" is not a path name (auto, local, "
                             "khr_subgroups, khr_ballot, nv_ptx, cpu)",
                             env);
    }

  const char *trace = getenv("CLPRIM_TRACE");
  ctx->trace = trace && *trace && strcmp(trace, "0") != 0;
  CLPRIM_CHECK(clprim__probe(ctx));
  /* After the probe: the tables' rows name paths. */
  CLPRIM_CHECK(clprim__init_families(ctx, families, family_count));

  if (want == CLPRIM_PATH_AUTO)
    want = ctx->info.device_type & CL_DEVICE_TYPE_CPU ? CLPRIM_PATH_CPU : clprim__best_layer(ctx);
  else if (!(ctx->info.paths_available & (1u << want))) {
    report_unavailable(ctx, want);
    return CLPRIM_ERROR_PATH_UNAVAILABLE;
  }
  ctx->info.path = want;
  return CLPRIM_SUCCESS;
}

/* A context being created by the call `name` (its failures' texts are
 * "name: ..."). */
static clprim_context *new_context(const char *name) {
  clprim_context *ctx = calloc(1, sizeof *ctx);
  if (ctx) ctx->call_name = name;
  if (ctx) ctx->build_log = dup_string("");
  if (ctx && !ctx->build_log) {
    free(ctx);
    ctx = NULL;
  }
  if (ctx) {
    pthread_mutex_init(&ctx->turn_lock, NULL);
    pthread_cond_init(&ctx->turn, NULL);
  }
  return ctx;
}

/* A creation that failed with st: the context's text (or one that names
 * st) becomes this thread's creation text, and the context is freed. */
static clprim_status create_failed(clprim_context *ctx, clprim_status st) {
  if (ctx->last_error[0])
    clprim__create_fail(st, "%s", ctx->last_error);
  else
    clprim__create_fail(st, "%s: failed with %d (%s)", ctx->call_name, (int)st,
                        clprim_status_name(st));
  clprim_context_free(ctx);
  return st;
}

/* Options from clprim_options_init: size covers every field of 0.2 (the
 * first version with a size; later fields will be read only when size
 * covers them). NULL options are the defaults. */
static int options_valid(const clprim_options *options) {
  return !options || options->size >= offsetof(clprim_options, cache_dir) + sizeof(const char *);
}

static clprim_status create_own(clprim_context **out, const clprim_options *options,
                                const struct clprim_family *const *families,
                                unsigned family_count) {
  if (!out)
    return clprim__create_fail(CLPRIM_ERROR_INVALID_ARGUMENT, "context_create: ctx is NULL");
  if (!options_valid(options))
    return clprim__create_fail(CLPRIM_ERROR_INVALID_ARGUMENT,
                               "context_create: options->size (%zu) is too small (initialise "
                               "options with clprim_options_init)",
                               options->size);
  const char *want = options && options->device ? options->device : getenv("CLPRIM_DEVICE");
  cl_platform_id platform;
  cl_device_id device;
  CLPRIM_CHECK(pick_device(want, &platform, &device));

  clprim_context *ctx = new_context("context_create");
  if (!ctx)
    return clprim__create_fail(CLPRIM_ERROR_OUT_OF_HOST_MEMORY,
                               "context_create: out of host memory");
  ctx->platform = platform;
  ctx->device = device;
  cl_int err;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
  ctx->cl_ctx = clCreateContext(props, 1, &device, NULL, NULL, &err);
  if (err != CL_SUCCESS) clprim__cl_fail(ctx, err, "clCreateContext");
  if (err == CL_SUCCESS) ctx->queue = clCreateCommandQueue(ctx->cl_ctx, device, 0, &err);
  if (err != CL_SUCCESS) clprim__cl_fail(ctx, err, "clCreateCommandQueue");
  clprim_status st =
      err == CL_SUCCESS ? finish_create(ctx, options, families, family_count) : (clprim_status)err;
  if (st != CLPRIM_SUCCESS) return create_failed(ctx, st);
  ctx->call_name = NULL, ctx->last_error[0] = 0;
  *out = ctx;
  return CLPRIM_SUCCESS;
}

static clprim_status create_on_queue(clprim_context **out, cl_command_queue queue,
                                     const clprim_options *options,
                                     const struct clprim_family *const *families,
                                     unsigned family_count) {
  const char *name = "context_create_from_queue";
  if (!out || !queue)
    return clprim__create_fail(CLPRIM_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", name,
                               out ? "queue" : "ctx");
  if (!options_valid(options))
    return clprim__create_fail(CLPRIM_ERROR_INVALID_ARGUMENT,
                               "%s: options->size (%zu) is too small (initialise options with "
                               "clprim_options_init)",
                               name, options->size);
  clprim_context *ctx = new_context(name);
  if (!ctx)
    return clprim__create_fail(CLPRIM_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", name);
  cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof ctx->cl_ctx, &ctx->cl_ctx,
                                     NULL);
  if (err == CL_SUCCESS)
    err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof ctx->device, &ctx->device, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo(ctx->device, CL_DEVICE_PLATFORM, sizeof ctx->platform, &ctx->platform,
                          NULL);
  if (err != CL_SUCCESS) {
    ctx->cl_ctx = NULL;
    clprim__cl_fail(ctx, err, "clGetCommandQueueInfo");
    return create_failed(ctx, (clprim_status)err);
  }
  clRetainContext(ctx->cl_ctx);
  clRetainCommandQueue(queue);
  ctx->queue = queue;
  clprim_status st = finish_create(ctx, options, families, family_count);
  if (st != CLPRIM_SUCCESS) return create_failed(ctx, st);
  ctx->call_name = NULL, ctx->last_error[0] = 0;
  *out = ctx;
  return CLPRIM_SUCCESS;
}

clprim_status clprim__create(clprim_context **out, cl_command_queue queue,
                             const clprim_options *options,
                             const struct clprim_family *const *families, unsigned family_count) {
  clprim__create_begin();
  return queue ? create_on_queue(out, queue, options, families, family_count)
               : create_own(out, options, families, family_count);
}

void clprim_context_free(clprim_context *ctx) {
  if (!ctx) return;
  if (ctx->queue) clFinish(ctx->queue);
  clprim__forget_events(ctx);
  clprim__release_waits(ctx);
  clprim__release_programs(ctx);
  clprim__release_scratch(ctx);
  if (ctx->queue) clReleaseCommandQueue(ctx->queue);
  if (ctx->cl_ctx) clReleaseContext(ctx->cl_ctx);
  clprim__free_families(ctx);
  free(ctx->cache_dir);
  free(ctx->build_log);
  pthread_cond_destroy(&ctx->turn);
  pthread_mutex_destroy(&ctx->turn_lock);
  free(ctx);
}

cl_command_queue clprim_context_queue(const clprim_context *ctx) { return ctx ? ctx->queue : NULL; }
cl_context clprim_context_cl_context(const clprim_context *ctx) {
  return ctx ? ctx->cl_ctx : NULL;
}
cl_device_id clprim_context_device(const clprim_context *ctx) { return ctx ? ctx->device : NULL; }
const char *clprim_context_build_log(const clprim_context *ctx) {
  return ctx && ctx->build_log ? ctx->build_log : "";
}

uint64_t clprim_context_programs_made(const clprim_context *ctx) {
  return ctx ? ctx->programs_made : 0;
}

clprim_status clprim_context_get_info(const clprim_context *ctx, clprim_device_info *info,
                                      size_t info_size) {
  if (!ctx || !info || info_size == 0) return CLPRIM_ERROR_INVALID_ARGUMENT;
  memcpy(info, &ctx->info, info_size < sizeof ctx->info ? info_size : sizeof ctx->info);
  return CLPRIM_SUCCESS;
}

const char *clprim_context_device_options(const clprim_context *ctx) {
  return ctx ? ctx->path_options[ctx->info.path] : NULL;
}

clprim_status clprim_context_clear_cache(clprim_context *ctx) {
  CLPRIM_CHECK(clprim__hold(ctx, "context_clear_cache"));
  clprim__release_programs(ctx);
  return clprim__unhold(ctx, CLPRIM_SUCCESS);
}
