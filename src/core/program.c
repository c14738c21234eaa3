/* program.c: kernel sources embedded at build time, programs built on first
 * use and kept per context, and the opt-in disk cache of built binaries.
 *
 * Disk cache entries are files <dir>/<128-bit key hash>.bin (and .txt for
 * probe verdicts). Each starts with a header (magic, key hash, payload size,
 * payload checksum); anything that does not match is a miss and is rebuilt.
 * Entries are written to a temporary file and renamed into place, so readers
 * never see half a file. */
#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
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
  /* The temporary file's name is this write's own (process id and a
   * number no other write of the process takes): build threads, and
   * contexts on other threads, may write the same entry at once; the last
   * rename wins, and each renamed file is whole. */
  static atomic_uint writes;
  char path[4096], tmp[4200];
  cache_path(ctx, key, ext, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.%ld.%u.tmp", path, (long)getpid(), atomic_fetch_add(&writes, 1u));
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

/* A program from a cached binary, or NULL. */
static cl_program load_binary(const clprim_context *ctx, hash128 key, const char *options) {
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

static void store_binary(const clprim_context *ctx, hash128 key, cl_program program) {
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

static char *build_log_of(const clprim_context *ctx, cl_program program);

/* Builds source with options, from the disk cache when it holds the binary
 * (then stores what it built, where ctx->runtime_caches allows).
 * Thread-safe: touches nothing of ctx but reads. On a build failure *log
 * gets the compiler's messages. */
static clprim_status build_program(const clprim_context *ctx, const char *source,
                                   const char *options, cl_program *out, char **log) {
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
    *log = build_log_of(ctx, program);
    clReleaseProgram(program);
    return (clprim_status)err;
  }
  if (ctx->cache_dir && (!ctx->runtime_caches || ctx->prebuilding)) store_binary(ctx, key, program);
  *out = program;
  return CLPRIM_SUCCESS;
}

clprim_status clprim__build(clprim_context *ctx, const char *source, const char *options,
                            cl_program *out) {
  char *log = NULL;
  clprim_status st = build_program(ctx, source, options, out, &log);
  if (log) {
    free(ctx->build_log);
    ctx->build_log = log;
  }
  return st;
}

/* ------------------------------------------------ per-context program cache */

/* One program per kernel (or per small group the family names): cl/<file>
 * built with -DKERNEL_<name> for each kernel it holds, so that only those are
 * compiled (each .cl file guards its kernels with #ifdef KERNEL_<name>). A
 * call builds what it runs and little else: runtimes compile every kernel
 * of a program at build time (NVIDIA to machine code; PoCL to optimised IR,
 * then each kernel's code at its first launch), so file-wide programs cost
 * seconds. */
struct build_job {
  /* in */
  clprim_context *ctx;
  char *source, *options;
  /* out */
  cl_program program;
  clprim_status status;
  char *log; /* the compiler's messages on failure (malloc'ed) */
};

/* The compiler's log of program (malloc'ed), or NULL. */
static char *build_log_of(const clprim_context *ctx, cl_program program) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) !=
          CL_SUCCESS ||
      size == 0)
    return NULL;
  char *log = malloc(size + 1);
  if (log && clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, size, log, NULL) !=
                 CL_SUCCESS) {
    free(log);
    return NULL;
  }
  if (log) log[size] = 0;
  return log;
}

static void *run_build_job(void *arg) {
  struct build_job *j = arg;
  j->status = build_program(j->ctx, j->source, j->options, &j->program, &j->log);
  return NULL;
}

/* What a request's program is: its file, options, the kernels it holds
 * ("" for the whole file) and source prefix. */
struct program_id {
  const char *file, *options, *kernels, *prefix;
};

static struct program_id program_id_of(const clprim_context *ctx,
                                       const struct clprim_kernel_request *r) {
  /* CPU devices: the whole file in one program (or the group a request
   * names in cpu_together), as before programs were split. PoCL 3.1
   * miscompiled kernels built without the rest of their file (nth_count
   * and hist_local gave wrong counts; right with -cl-opt-disable), and CPU
   * builds gain little from the split. */
  const int whole_file = !(ctx->info.device_type & CL_DEVICE_TYPE_GPU);
  struct program_id id = {whole_file && r->cpu_files ? r->cpu_files : r->file,
                          r->options ? r->options : "",
                          whole_file ? (r->cpu_together ? r->cpu_together : "")
                          : r->together ? r->together : r->name,
                          r->prefix ? r->prefix : ""};
  return id;
}

static int same_program(const struct program_id *a, const struct program_id *b) {
  return strcmp(a->file, b->file) == 0 && strcmp(a->options, b->options) == 0 &&
         strcmp(a->kernels, b->kernels) == 0 && strcmp(a->prefix, b->prefix) == 0;
}

static struct clprim_program_entry *find_entry(const clprim_context *ctx,
                                               const struct program_id *id) {
  for (struct clprim_program_entry *e = ctx->programs; e; e = e->next) {
    const struct program_id built = {e->file, e->options, e->kernels, e->prefix};
    if (same_program(&built, id)) return e;
  }
  return NULL;
}

static char *dup_text(const char *s) {
  char *d = malloc(strlen(s) + 1);
  if (d) strcpy(d, s);
  return d;
}

/* Appends `body` (the embedded file `name`) with every line
 * `#include "internal/X.h"` replaced by that file's text, itself expanded,
 * and #line directives so that build logs name the right file and line.
 * Each internal header is inlined once per program (`seen`, space-separated
 * names), as an include guard would. Kernels read as plain OpenCL C; the
 * installed library needs no files beside it. */
static void add_expanded(struct clprim_text *t, const char *name, const char *body,
                         struct clprim_text *seen, int *missing,
                         int depth) {
  static const char directive[] = "#include \"internal/";
  unsigned line = 1;
  for (const char *p = body; *p;) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) + 1 : strlen(p);
    if (strncmp(p, directive, sizeof directive - 1) == 0 && depth < 8) {
      const char *file = p + strlen("#include \"");
      size_t file_len = strcspn(file, "\"\n");
      char inc[128];
      snprintf(inc, sizeof inc, "%.*s", (int)(file_len < 100 ? file_len : 100), file);
      const char *text = clprim__source(inc);
      char key[132];
      snprintf(key, sizeof key, " %s ", inc);
      if (!text) {
        *missing = 1;
        return;
      }
      if (!seen->s || !strstr(seen->s, key)) {
        clprim__text_add(seen, key, strlen(key));
        char mark[192];
        snprintf(mark, sizeof mark, "#line 1 \"%s\"\n", inc);
        clprim__text_add(t, mark, strlen(mark));
        add_expanded(t, inc, text, seen, missing, depth + 1);
        snprintf(mark, sizeof mark, "\n#line %u \"%s\"\n", line + 1, name);
        clprim__text_add(t, mark, strlen(mark));
      } else {
        clprim__text_add(t, "\n", 1); /* keeps the line numbers */
      }
    } else {
      clprim__text_add(t, p, len);
    }
    p += len;
    ++line;
  }
}

/* The next name of a space-separated file list into name (size bytes);
 * returns where the list goes on, or NULL at its end. */
static const char *next_file(const char *list, char *name, size_t size) {
  list += strspn(list, " ");
  const size_t len = strcspn(list, " ");
  if (!len) return NULL;
  snprintf(name, size, "%.*s", (int)(len < size - 1 ? len : size - 1), list);
  return list + len;
}

/* The build of a program: its source and full options (malloc'ed).
 * id->file is one file of cl/ or several, space-separated (see
 * clprim_kernel_request.cpu_files), built in one program. */
static clprim_status prepare_job(clprim_context *ctx, const struct program_id *id,
                                 struct build_job *j) {
  const char *path_opts = ctx->path_options[ctx->info.path];
  const char *header = clprim__source("clprim_device.h");
  struct clprim_text t = {NULL, 0, 0, 0, 0}, seen = {NULL, 0, 0, 0, 0};
  int missing = 0;
  char name[64];
  clprim__text_add(&t, header, strlen(header));
  clprim__text_add(&t, "\n", 1);
  clprim__text_add(&t, id->prefix, strlen(id->prefix));
  if (*id->prefix) clprim__text_add(&t, "\n", 1);
  for (const char *f = id->file; (f = next_file(f, name, sizeof name)) != NULL;) {
    const char *body = clprim__source(name);
    if (!body) {
      missing = 1;
      break;
    }
    char mark[160];
    snprintf(mark, sizeof mark, "#line 1 \"%s\"\n", name);
    clprim__text_add(&t, mark, strlen(mark));
    add_expanded(&t, name, body, &seen, &missing, 0);
    clprim__text_add(&t, "\n", 1);
  }
  free(seen.s);
  if (t.failed || seen.failed || missing) {
    free(t.s);
    return missing ? CLPRIM_ERROR_INVALID_ARGUMENT : CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  }
  /* -DKERNEL_<name> for each kernel the program holds: those listed, or
   * every one the source guards (the shared headers' kernels too). */
  const int whole_file = !*id->kernels;
  const size_t options_len = strlen(path_opts) + strlen(id->options) + 2 +
                             (whole_file ? t.len / 4 : strlen(id->kernels) * 10) + 16;
  j->options = malloc(options_len);
  if (!j->options) {
    free(t.s);
    return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  }
  size_t used = (size_t)snprintf(j->options, options_len, "%s %s", path_opts, id->options);
  for (const char *k = id->kernels; *k;) {
    size_t len = strcspn(k, " ");
    if (len) used += (size_t)snprintf(j->options + used, options_len - used, " -DKERNEL_%.*s",
                                      (int)len, k);
    k += len;
    k += strspn(k, " ");
  }
  for (const char *k = t.s; whole_file && (k = strstr(k, "#ifdef KERNEL_")) != NULL;) {
    k += strlen("#ifdef ");
    size_t klen = strcspn(k, " \r\n");
    used += (size_t)snprintf(j->options + used, options_len - used, " -D%.*s", (int)klen, k);
  }
  j->source = t.s;
  return CLPRIM_SUCCESS;
}

/* Jobs shared by the build threads: each takes the next unstarted one
 * (under the lock), builds it with no lock held, and reports it done to the
 * context's progress callback (under the lock: one report at a time, `done`
 * counting up 1..todo, once per job). The threads write only their jobs;
 * the context's program table is filled after they are joined. */
struct job_queue {
  struct build_job *jobs;
  unsigned todo, next, done;
  pthread_mutex_t lock;
};

static void *build_worker(void *arg) {
  struct job_queue *q = arg;
  for (;;) {
    pthread_mutex_lock(&q->lock);
    const unsigned k = q->next < q->todo ? q->next++ : q->todo;
    pthread_mutex_unlock(&q->lock);
    if (k >= q->todo) return NULL;
    run_build_job(&q->jobs[k]);
    const clprim_context *ctx = q->jobs[k].ctx;
    pthread_mutex_lock(&q->lock);
    ++q->done;
    if (ctx->progress) ctx->progress(ctx->progress_user, q->done, q->todo);
    pthread_mutex_unlock(&q->lock);
  }
}

unsigned clprim__default_build_threads(void) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return cpus < 1                                   ? 1u
         : cpus > CLPRIM__BUILD_THREADS_DEFAULT_MAX ? CLPRIM__BUILD_THREADS_DEFAULT_MAX
                                                    : (unsigned)cpus;
}

/* Collection (clprim_context_prebuild): keeps a copy of each request not
 * seen yet, builds nothing. */
static clprim_status collect(clprim_context *ctx, const struct clprim_kernel_request *requests,
                             unsigned count) {
  struct clprim_collect *c = ctx->collect;
  for (unsigned r = 0; r < count; ++r) {
    const struct clprim_kernel_request *q = &requests[r];
    const char *fields[5] = {q->file, q->prefix ? q->prefix : "", q->options ? q->options : "",
                             q->name, q->together ? q->together : ""};
    int seen = 0;
    for (size_t k = 0; k < c->count && !seen; ++k) {
      const struct clprim_kernel_request *o = &c->requests[k];
      const char *known[5] = {o->file, o->prefix, o->options, o->name,
                              o->together ? o->together : ""};
      seen = 1;
      for (int f = 0; f < 5 && seen; ++f) seen = strcmp(fields[f], known[f]) == 0;
    }
    if (seen) continue;
    if (c->count == c->room) {
      const size_t room = c->room ? 2 * c->room : 64;
      struct clprim_kernel_request *p = realloc(c->requests, room * sizeof *p);
      if (!p) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
      c->requests = p, c->room = room;
    }
    char *copies[5] = {NULL};
    int ok = 1;
    for (int f = 0; f < 5; ++f)
      if (f < 4 || *fields[f]) ok &= (copies[f] = dup_text(fields[f])) != NULL;
    if (!ok) {
      for (int f = 0; f < 5; ++f) free(copies[f]);
      return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
    }
    /* together stays NULL when the request had none (a program of its own). */
    /* cpu_files and cpu_together are string literals of the families:
     * kept as they are. */
    const struct clprim_kernel_request copy = {copies[0], copies[1], copies[2],   copies[3],
                                               copies[4], NULL,      q->cpu_files, q->cpu_together};
    c->requests[c->count++] = copy;
  }
  return CLPRIM__COLLECTED;
}

clprim_status clprim__kernels(clprim_context *ctx, const struct clprim_kernel_request *requests,
                              unsigned count) {
  if (ctx->collect) return collect(ctx, requests, count);
  /* The programs not built yet, each once. */
  struct build_job *jobs = NULL;
  struct program_id *ids = NULL;
  unsigned todo = 0;
  clprim_status st = CLPRIM_SUCCESS;
  for (unsigned r = 0; r < count; ++r) {
    const struct program_id id = program_id_of(ctx, &requests[r]);
    if (find_entry(ctx, &id)) continue;
    int known = 0;
    for (unsigned o = 0; o < todo && !known; ++o) known = same_program(&ids[o], &id);
    if (known) continue;
    if (!jobs) {
      jobs = calloc(count, sizeof *jobs);
      ids = calloc(count, sizeof *ids);
      if (!jobs || !ids) {
        st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
        break;
      }
    }
    ids[todo] = id;
    jobs[todo].ctx = ctx;
    st = prepare_job(ctx, &id, &jobs[todo++]);
    if (st != CLPRIM_SUCCESS) break;
  }
  /* Builds in threads, up to ctx->build_threads at once (clprim_options),
   * each taking the next job (so one slow program does not hold the others
   * back); this thread works too. Oclgrind crashed with programs built
   * concurrently: one there. */
  const unsigned parallel = ctx->oclgrind || ctx->build_threads < 1 ? 1 : ctx->build_threads;
  if (st == CLPRIM_SUCCESS && todo > 0) {
    struct job_queue q = {jobs, todo, 0, 0, PTHREAD_MUTEX_INITIALIZER};
    const unsigned helpers = (todo < parallel ? todo : parallel) - 1;
    pthread_t *threads = helpers ? malloc(helpers * sizeof *threads) : NULL;
    unsigned started = 0;
    /* A thread that cannot be made leaves its share to the others. */
    while (threads && started < helpers &&
           pthread_create(&threads[started], NULL, build_worker, &q) == 0)
      ++started;
    build_worker(&q);
    for (unsigned k = 0; k < started; ++k)
      pthread_join(threads[k], NULL);
    free(threads);
    pthread_mutex_destroy(&q.lock);
  }
  /* Keep what built; the first failure (in request order) gives the
   * status, the text and the context's build log, and the text counts the
   * others. */
  unsigned failed = 0;
  for (unsigned k = 0; k < todo; ++k)
    failed += jobs[k].status != CLPRIM_SUCCESS;
  for (unsigned k = 0; k < todo; ++k) {
    struct build_job *j = &jobs[k];
    if (j->program) {
      struct clprim_program_entry *e = calloc(1, sizeof *e);
      if (e) {
        e->file = dup_text(ids[k].file), e->options = dup_text(ids[k].options);
        e->kernels = dup_text(ids[k].kernels), e->prefix = dup_text(ids[k].prefix);
      }
      if (e && e->file && e->options && e->kernels && e->prefix) {
        e->program = j->program;
        e->next = ctx->programs;
        ctx->programs = e;
        ++ctx->programs_made;
      } else {
        if (e) free(e->file), free(e->options), free(e->kernels), free(e->prefix);
        free(e);
        clReleaseProgram(j->program);
        j->status = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
      }
    }
    if (j->status != CLPRIM_SUCCESS && st == CLPRIM_SUCCESS) {
      st = j->status;
      char others[64] = "";
      if (failed > 1) snprintf(others, sizeof others, " (%u of %u programs failed)", failed, todo);
      clprim__fail(ctx, st,
                   "the kernel build of %s failed with %d (%s), see "
                   "clprim_context_build_log()%s",
                   ids[k].file, (int)st, clprim_status_name(st), others);
      if (j->log) {
        free(ctx->build_log);
        ctx->build_log = j->log, j->log = NULL;
      }
    }
    free(j->source), free(j->options), free(j->log);
  }
  free(jobs);
  free(ids);
  /* A log is about the last build that failed: a later build that succeeds
   * clears it (the string stays allocated: probing writes into it). */
  if (st == CLPRIM_SUCCESS && todo > 0 && ctx->build_log) ctx->build_log[0] = 0;
  /* The kernel objects, made on first request. */
  for (unsigned r = 0; r < count && st == CLPRIM_SUCCESS; ++r) {
    const struct program_id id = program_id_of(ctx, &requests[r]);
    struct clprim_program_entry *e = find_entry(ctx, &id);
    if (!e) return CLPRIM_ERROR_INVALID_ARGUMENT; /* not reached: built above */
    struct clprim_kernel_entry *k = e->kernels_made;
    while (k && strcmp(k->name, requests[r].name) != 0) k = k->next;
    if (!k) {
      k = calloc(1, sizeof *k);
      if (k) k->name = dup_text(requests[r].name);
      if (!k || !k->name) {
        free(k);
        return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
      }
      cl_int err;
      k->kernel = clCreateKernel(e->program, requests[r].name, &err);
      if (err != CL_SUCCESS) {
        free(k->name);
        free(k);
        return clprim__cl_fail(ctx, err, "clCreateKernel");
      }
      k->next = e->kernels_made;
      e->kernels_made = k;
    }
    if (requests[r].kernel) *requests[r].kernel = k->kernel;
  }
  return st;
}

clprim_status clprim__kernel(clprim_context *ctx, const char *file, const char *options,
                             const char *kernel_name, cl_kernel *kernel) {
  const struct clprim_kernel_request r = {file, NULL, options, kernel_name, NULL, kernel, NULL, NULL};
  return clprim__kernels(ctx, &r, 1);
}

void clprim__release_programs(clprim_context *ctx) {
  struct clprim_program_entry *e = ctx->programs;
  while (e) {
    struct clprim_program_entry *next = e->next;
    while (e->kernels_made) {
      struct clprim_kernel_entry *k = e->kernels_made->next;
      clReleaseKernel(e->kernels_made->kernel);
      free(e->kernels_made->name);
      free(e->kernels_made);
      e->kernels_made = k;
    }
    clReleaseProgram(e->program);
    free(e->file), free(e->options), free(e->kernels), free(e->prefix);
    free(e);
    e = next;
  }
  ctx->programs = NULL;
}
