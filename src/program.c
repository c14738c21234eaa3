/* program.c: kernel sources embedded at build time, programs built on first
 * use and kept per context, and the opt-in disk cache of built binaries.
 *
 * Disk cache entries are files <dir>/<128-bit key hash>.bin (and .txt for
 * probe verdicts). Each starts with a header (magic, key hash, payload size,
 * payload checksum); anything that does not match is a miss and is rebuilt.
 * Entries are written to a temporary file and renamed into place, so readers
 * never see half a file. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct clprim_embedded_source {
  const char *name;
  const char *text;
  size_t size;
};
extern const struct clprim_embedded_source clprim_sources[];

const char *clprim__source(const char *file_name) {
  for (const struct clprim_embedded_source *s = clprim_sources; s->name; ++s)
    if (strcmp(s->name, file_name) == 0) return s->text;
  return NULL;
}

const char *clprim_device_source(void) { return clprim__source("clprim_device.h"); }

/* ------------------------------------------------------------- hashing */

typedef struct {
  uint64_t a, b;
} hash128;

/* Two FNV-1a variants with different offsets: 128 bits of key. */
static void hash_bytes(hash128 *h, const void *data, size_t size) {
  const unsigned char *p = data;
  for (size_t i = 0; i < size; ++i) {
    h->a = (h->a ^ p[i]) * 0x100000001b3ull;
    h->b = (h->b ^ p[i]) * 0x100000001b3ull;
    h->b ^= h->b >> 29;
  }
}
static void hash_string(hash128 *h, const char *s) { hash_bytes(h, s, strlen(s) + 1); }
static hash128 hash_start(void) {
  hash128 h = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  return h;
}

/* The key of everything a built binary depends on besides source and options. */
static void hash_device(hash128 *h, const clprim_context *ctx) {
  hash_string(h, clprim_version_string());
  hash_string(h, ctx->info.platform_name);
  hash_string(h, ctx->info.platform_version);
  hash_string(h, ctx->info.device_name);
  hash_string(h, ctx->info.driver_version);
}

/* -------------------------------------------------------- cache files */

#define CACHE_MAGIC "CLPRIM01"
struct cache_header {
  char magic[8];
  uint64_t key_a, key_b;
  uint64_t size;
  uint64_t checksum;
};

static uint64_t checksum(const void *data, size_t size) {
  hash128 h = hash_start();
  hash_bytes(&h, data, size);
  return h.a ^ h.b;
}

static void cache_path(const clprim_context *ctx, hash128 key, const char *ext, char *path,
                       size_t size) {
  snprintf(path, size, "%s/%016llx%016llx.%s", ctx->cache_dir, (unsigned long long)key.a,
           (unsigned long long)key.b, ext);
}

/* Reads a cache entry's payload (malloc'ed) or returns NULL on any mismatch. */
static unsigned char *cache_read(const clprim_context *ctx, hash128 key, const char *ext,
                                 size_t *size) {
  if (!ctx->cache_dir) return NULL;
  char path[4096];
  cache_path(ctx, key, ext, path, sizeof path);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  struct cache_header hd;
  unsigned char *data = NULL;
  if (fread(&hd, sizeof hd, 1, f) == 1 && memcmp(hd.magic, CACHE_MAGIC, 8) == 0 &&
      hd.key_a == key.a && hd.key_b == key.b && hd.size > 0 && hd.size < ((uint64_t)1 << 31)) {
    data = malloc((size_t)hd.size + 1);
    if (data && (fread(data, 1, (size_t)hd.size, f) != hd.size ||
                 checksum(data, (size_t)hd.size) != hd.checksum)) {
      free(data);
      data = NULL;
    }
    if (data) {
      data[hd.size] = 0;
      *size = (size_t)hd.size;
    }
  }
  fclose(f);
  return data;
}

static void cache_write(const clprim_context *ctx, hash128 key, const char *ext, const void *data,
                        size_t size) {
  if (!ctx->cache_dir) return;
  mkdir(ctx->cache_dir, 0777); /* may exist already */
  char path[4096], tmp[4200];
  cache_path(ctx, key, ext, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) return;
  struct cache_header hd;
  memcpy(hd.magic, CACHE_MAGIC, 8);
  hd.key_a = key.a;
  hd.key_b = key.b;
  hd.size = size;
  hd.checksum = checksum(data, size);
  int ok = fwrite(&hd, sizeof hd, 1, f) == 1 && fwrite(data, 1, size, f) == size;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) remove(tmp);
}

int clprim__cache_get_text(const clprim_context *ctx, const char *key, char *text, size_t size) {
  hash128 h = hash_start();
  hash_string(&h, key);
  size_t got = 0;
  unsigned char *data = cache_read(ctx, h, "txt", &got);
  if (!data) return 0;
  snprintf(text, size, "%s", (char *)data);
  free(data);
  return 1;
}

void clprim__cache_put_text(const clprim_context *ctx, const char *key, const char *text) {
  hash128 h = hash_start();
  hash_string(&h, key);
  cache_write(ctx, h, "txt", text, strlen(text));
}

/* ------------------------------------------------------------ building */

static void keep_build_log(clprim_context *ctx, cl_program program) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) !=
          CL_SUCCESS ||
      size == 0)
    return;
  char *log = malloc(size + 1);
  if (!log) return;
  if (clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, size, log, NULL) !=
      CL_SUCCESS) {
    free(log);
    return;
  }
  log[size] = 0;
  free(ctx->build_log);
  ctx->build_log = log;
}

/* A program from a cached binary, or NULL. */
static cl_program load_binary(clprim_context *ctx, hash128 key, const char *options) {
  size_t size = 0;
  unsigned char *binary = cache_read(ctx, key, "bin", &size);
  if (!binary) return NULL;
  cl_int status = CL_SUCCESS, err;
  const unsigned char *b = binary;
  cl_program program =
      clCreateProgramWithBinary(ctx->cl_ctx, 1, &ctx->device, &size, &b, &status, &err);
  free(binary);
  if (err != CL_SUCCESS || status != CL_SUCCESS) {
    if (program) clReleaseProgram(program);
    return NULL;
  }
  if (clBuildProgram(program, 1, &ctx->device, options, NULL, NULL) != CL_SUCCESS) {
    clReleaseProgram(program);
    return NULL;
  }
  return program;
}

static void store_binary(clprim_context *ctx, hash128 key, cl_program program) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
      size == 0)
    return;
  unsigned char *binary = malloc(size);
  if (!binary) return;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) == CL_SUCCESS)
    cache_write(ctx, key, "bin", binary, size);
  free(binary);
}

clprim_status clprim__build(clprim_context *ctx, const char *source, const char *options,
                            cl_program *out) {
  hash128 key = hash_start();
  hash_device(&key, ctx);
  hash_string(&key, options);
  hash_string(&key, source);
  cl_program program = load_binary(ctx, key, options);
  if (program) {
    *out = program;
    return CLPRIM_SUCCESS;
  }
  cl_int err;
  program = clCreateProgramWithSource(ctx->cl_ctx, 1, &source, NULL, &err);
  if (err != CL_SUCCESS) return (clprim_status)err;
  err = clBuildProgram(program, 1, &ctx->device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    keep_build_log(ctx, program);
    clReleaseProgram(program);
    return (clprim_status)err;
  }
  store_binary(ctx, key, program);
  *out = program;
  return CLPRIM_SUCCESS;
}

/* ------------------------------------------------ per-context program cache */

/* The program of cl/<file> with `prefix` (source text put before the file,
 * e.g. #defines; "" for none) built with the path's and the given options. The
 * cache key holds all three. */
static struct clprim_program_entry *find_or_build(clprim_context *ctx, clprim_path path,
                                                  const char *file, const char *prefix,
                                                  const char *options, clprim_status *st) {
  const char *path_opts = ctx->path_options[path];
  size_t options_len = strlen(path_opts) + strlen(options) + 2;
  size_t key_len = strlen(file) + options_len + strlen(prefix) + 3;
  char *key = malloc(key_len), *build_options = malloc(options_len);
  if (!key || !build_options) {
    free(key);
    free(build_options);
    *st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  snprintf(build_options, options_len, "%s %s", path_opts, options);
  snprintf(key, key_len, "%s\n%s\n%s", file, build_options, prefix);
  for (struct clprim_program_entry *e = ctx->programs; e; e = e->next)
    if (strcmp(e->key, key) == 0) {
      free(key);
      free(build_options);
      return e;
    }

  const char *header = clprim__source("clprim_device.h"), *body = clprim__source(file);
  struct clprim_program_entry *e = calloc(1, sizeof *e);
  size_t len = body ? strlen(header) + strlen(prefix) + strlen(body) + 64 : 0;
  char *source = body ? malloc(len) : NULL;
  if (!e || !source) {
    *st = body ? CLPRIM_ERROR_OUT_OF_HOST_MEMORY : CLPRIM_ERROR_INVALID_ARGUMENT;
    free(e);
    free(source);
    free(key);
    free(build_options);
    return NULL;
  }
  snprintf(source, len, "%s\n%s%s#line 1 \"%s\"\n%s", header, prefix, *prefix ? "\n" : "", file,
           body);
  *st = clprim__build(ctx, source, build_options, &e->program);
  free(source);
  free(build_options);
  if (*st != CLPRIM_SUCCESS) {
    free(e);
    free(key);
    return NULL;
  }
  e->key = key;
  e->next = ctx->programs;
  ctx->programs = e;
  return e;
}

static clprim_status kernel_of(clprim_context *ctx, clprim_path path, const char *file,
                               const char *prefix, const char *options, const char *kernel_name,
                               cl_kernel *kernel) {
  clprim_status st;
  struct clprim_program_entry *e =
      find_or_build(ctx, path, file, prefix ? prefix : "", options ? options : "", &st);
  if (!e) return st;
  for (unsigned k = 0; k < e->kernel_count; ++k)
    if (strcmp(e->kernels[k].name, kernel_name) == 0) {
      *kernel = e->kernels[k].kernel;
      return CLPRIM_SUCCESS;
    }
  if (e->kernel_count == sizeof e->kernels / sizeof e->kernels[0] ||
      strlen(kernel_name) >= sizeof e->kernels[0].name)
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  cl_int err;
  cl_kernel k = clCreateKernel(e->program, kernel_name, &err);
  if (err != CL_SUCCESS) return (clprim_status)err;
  struct clprim_kernel_entry *ke = &e->kernels[e->kernel_count++];
  snprintf(ke->name, sizeof ke->name, "%s", kernel_name);
  ke->kernel = k;
  *kernel = k;
  return CLPRIM_SUCCESS;
}

clprim_status clprim__kernel_for_path(clprim_context *ctx, clprim_path path, const char *file,
                                      const char *options, const char *kernel_name,
                                      cl_kernel *kernel) {
  return kernel_of(ctx, path, file, NULL, options, kernel_name, kernel);
}

clprim_status clprim__kernel(clprim_context *ctx, const char *file, const char *options,
                             const char *kernel_name, cl_kernel *kernel) {
  return kernel_of(ctx, ctx->info.path, file, NULL, options, kernel_name, kernel);
}

clprim_status clprim__kernel_with_prefix(clprim_context *ctx, const char *file, const char *prefix,
                                         const char *options, const char *kernel_name,
                                         cl_kernel *kernel) {
  return kernel_of(ctx, ctx->info.path, file, prefix, options, kernel_name, kernel);
}

void clprim__release_programs(clprim_context *ctx) {
  struct clprim_program_entry *e = ctx->programs;
  while (e) {
    struct clprim_program_entry *next = e->next;
    for (unsigned k = 0; k < e->kernel_count; ++k) clReleaseKernel(e->kernels[k].kernel);
    clReleaseProgram(e->program);
    free(e->key);
    free(e);
    e = next;
  }
  ctx->programs = NULL;
}
