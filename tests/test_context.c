/* test_context: names and versions, device choice, paths (forced, from the
 * environment, unavailable), contexts from the caller's queue, build
 * failures and their log, the disk cache (warm, corrupt and foreign
 * entries), profiling times, and embedding the device-side header in an
 * application's own kernel. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void test_names(void **state) {
  (void)state;
  assert_int_equal(clprim_version_number(), CLPRIM_VERSION_NUMBER);
  assert_string_equal(clprim_version_string(), "0.3.0");
  assert_string_equal(clprim_status_name(CLPRIM_SUCCESS), "CLPRIM_SUCCESS");
  assert_string_equal(clprim_status_name(CLPRIM_ERROR_BUFFER_TOO_SMALL), "CLPRIM_ERROR_BUFFER_TOO_SMALL");
  assert_string_equal(clprim_status_name(CLPRIM_ERROR_CONTEXT_BUSY), "CLPRIM_ERROR_CONTEXT_BUSY");
  assert_string_equal(clprim_status_name(CLPRIM_ERROR_OPERATOR_LAYOUT),
                      "CLPRIM_ERROR_OPERATOR_LAYOUT");
  assert_string_equal(clprim_status_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  assert_string_equal(clprim_status_name(-123456), "unknown status");
  assert_true(clprim_is_error(CL_INVALID_VALUE));
  assert_false(clprim_is_error(CLPRIM_SUCCESS));
  assert_int_equal(clprim_type_size(CLPRIM_DOUBLE), 8);
  assert_int_equal(clprim_type_size((clprim_type)99), 0);
  assert_string_equal(clprim_type_name(CLPRIM_UINT64), "uint64");
  assert_string_equal(clprim_path_name(CLPRIM_PATH_NV_PTX), "nv_ptx");
  assert_string_equal(clprim_path_name(CLPRIM_PATH_CPU), "cpu");
  assert_string_equal(clprim_path_name(CLPRIM_PATH_COUNT), "invalid");
  clprim_path p;
  TEST_OK(clprim_path_from_name("KHR_Ballot", &p));
  assert_int_equal(p, CLPRIM_PATH_KHR_BALLOT);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_path_from_name("warp", &p));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_path_from_name(NULL, &p));
  clprim_context_free(NULL); /* allowed */
}

static void test_create_and_info(void **state) {
  (void)state;
  clprim_context *a, *b;
  TEST_OK(clprim_context_create(&a, NULL));
  TEST_OK(clprim_context_create(&b, NULL)); /* several at once */
  clprim_device_info info;
  TEST_OK(clprim_context_get_info(a, &info, sizeof info));
  assert_true(info.paths_available & (1u << CLPRIM_PATH_LOCAL));
  assert_true(info.paths_available & (1u << info.path));
  assert_true(info.max_work_group_size >= 1);
  assert_true(info.compute_units >= 1);
  assert_true(strlen(info.device_name) > 0);
  assert_non_null(clprim_context_queue(a));
  assert_non_null(clprim_context_cl_context(a));
  assert_non_null(clprim_context_device(a));
  assert_string_equal(clprim_context_build_log(a), "");
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_get_info(NULL, &info, sizeof info));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_get_info(a, &info, 0));
  /* A program compiled with a smaller struct gets only its part. */
  struct {
    char platform_name[128];
    char canary[8];
  } small;
  memset(&small, 0x5a, sizeof small);
  TEST_OK(clprim_context_get_info(a, (clprim_device_info *)(void *)&small, sizeof small.platform_name));
  assert_string_equal(small.platform_name, info.platform_name);
  for (int k = 0; k < 8; ++k) assert_int_equal(small.canary[k], 0x5a);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create(NULL, NULL));
  /* Options that were not initialised (size 0) are refused. */
  clprim_options zeroed;
  memset(&zeroed, 0, sizeof zeroed);
  clprim_context *c = NULL;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create(&c, &zeroed));
  assert_null(c);
  clprim_options init;
  clprim_options_init(&init);
  assert_int_equal(init.size, sizeof init);
  TEST_OK(clprim_context_create(&c, &init));
  clprim_context_free(c);
  char list[4096];
  assert_true(clprim_list_devices(list, sizeof list) >= 1);
  assert_non_null(strstr(list, "0:0 "));
  clprim_context_free(a);
  clprim_context_free(b);
}

static void test_device_choice(void **state) {
  (void)state;
  clprim_context *const untouched = (clprim_context *)&state; /* a failure leaves the handle */
  clprim_context *ctx = untouched;
  clprim_options o;
  clprim_options_init(&o);
  o.device = "no-such-device-anywhere";
  TEST_STATUS(CLPRIM_ERROR_DEVICE_NOT_FOUND, clprim_context_create(&ctx, &o));
  assert_ptr_equal(ctx, untouched);
  /* A creation that failed has its text, per thread, with a NULL context. */
  test_text_has(NULL,
                "context_create: device \"no-such-device-anywhere\" matches no OpenCL device "
                "(the",
                "a device that matches none");
  test_text_has(NULL, "0:0 ", "a device that matches none (the list)");
  o.device = "0:0";
  o.path = (clprim_path)99;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create(&ctx, &o));
  test_text_has(NULL, "context_create: options->path (99) is not a clprim_path", "a bad path");
  o.path = CLPRIM_PATH_AUTO;
  o.wait_when_busy = 2;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create(&ctx, &o));
  test_text_has(NULL, "context_create: options->wait_when_busy (2) is not 0 or 1",
                "a bad wait_when_busy");
  o.wait_when_busy = 0;
  o.size = 0;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create(&ctx, &o));
  test_text_has(NULL, "context_create: options->size (0) is too small", "options not initialised");
  o.size = sizeof o;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create_from_queue(&ctx, NULL, &o));
  test_text_has(NULL, "context_create_from_queue: queue is NULL", "a NULL queue");
  assert_ptr_equal(ctx, untouched);
  TEST_OK(clprim_context_create(&ctx, &o));
  test_text_has(NULL, NULL, "a creation that succeeded");
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  clprim_context_free(ctx);
  /* A substring of the device name, in another case. */
  char part[8] = "";
  memcpy(part, info.device_name, sizeof part - 1);
  for (char *c = part; *c; ++c) *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
  o.device = part;
  TEST_OK(clprim_context_create(&ctx, &o));
  clprim_context_free(ctx);
  /* The environment, when the option is NULL. */
  const char *old = getenv("CLPRIM_DEVICE");
  char saved[256] = "";
  if (old) snprintf(saved, sizeof saved, "%s", old);
  setenv("CLPRIM_DEVICE", "99:99", 1);
  TEST_STATUS(CLPRIM_ERROR_DEVICE_NOT_FOUND, clprim_context_create(&ctx, NULL));
  if (old) setenv("CLPRIM_DEVICE", saved, 1);
  else unsetenv("CLPRIM_DEVICE");
}

/* A device type as the device option or CLPRIM_DEVICE ("gpu", "cpu",
 * "accelerator", any case): the first device of that type, or
 * CLPRIM_ERROR_DEVICE_NOT_FOUND when there is none (checked against what
 * clGetDeviceIDs finds). */
static void test_device_type(void **state) {
  (void)state;
  static const struct {
    const char *name;
    cl_device_type type;
  } kinds[] = {{"CPU", CL_DEVICE_TYPE_CPU},
               {"gpu", CL_DEVICE_TYPE_GPU},
               {"Accelerator", CL_DEVICE_TYPE_ACCELERATOR}};
  cl_platform_id platforms[16];
  cl_uint np = 0;
  if (clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS) np = 0;
  if (np > 16) np = 16;
  cl_device_id first_cpu = NULL;
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    /* The first device of the type, platform by platform. */
    cl_device_id first = NULL;
    for (cl_uint p = 0; p < np && !first; ++p) {
      cl_uint nd = 0;
      if (clGetDeviceIDs(platforms[p], kinds[k].type, 1, &first, &nd) != CL_SUCCESS || nd == 0)
        first = NULL;
    }
    if (kinds[k].type == CL_DEVICE_TYPE_CPU) first_cpu = first;
    clprim_options o;
    clprim_options_init(&o);
    clprim_context *ctx = (clprim_context *)&o; /* a failure leaves the handle */
    o.device = kinds[k].name;
    if (!first) {
      TEST_STATUS(CLPRIM_ERROR_DEVICE_NOT_FOUND, clprim_context_create(&ctx, &o));
      assert_ptr_equal(ctx, (clprim_context *)&o);
      printf("device \"%s\": there is none, not found\n", kinds[k].name);
      continue;
    }
    if (kinds[k].type == CL_DEVICE_TYPE_ACCELERATOR) {
      printf("device \"%s\": there is one; not opened (skipped)\n", kinds[k].name);
      continue;
    }
    TEST_OK(clprim_context_create(&ctx, &o));
    cl_device_id got = clprim_context_device(ctx);
    clprim_device_info info;
    clprim_status st = clprim_context_get_info(ctx, &info, sizeof info);
    clprim_context_free(ctx);
    TEST_OK(st);
    assert_ptr_equal(got, first);
    assert_true(info.device_type & kinds[k].type);
    printf("device \"%s\": %s\n", kinds[k].name, info.device_name);
  }
  /* The same through the environment, when the option is NULL. */
  const char *old = getenv("CLPRIM_DEVICE");
  char saved[256] = "";
  if (old) snprintf(saved, sizeof saved, "%s", old);
  setenv("CLPRIM_DEVICE", "cpu", 1);
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, NULL);
  cl_device_id got = clprim_context_device(ctx);
  clprim_context_free(ctx);
  if (old) setenv("CLPRIM_DEVICE", saved, 1);
  else unsetenv("CLPRIM_DEVICE");
  TEST_STATUS(first_cpu ? CLPRIM_SUCCESS : CLPRIM_ERROR_DEVICE_NOT_FOUND, st);
  assert_ptr_equal(got, first_cpu);
}

static void test_paths(void **state) {
  (void)state;
  clprim_context *ctx;
  clprim_device_info info;
  TEST_OK(clprim_context_create(&ctx, NULL));
  clprim_context_get_info(ctx, &info, sizeof info);
  clprim_context_free(ctx);
  /* The default: path cpu on CPU devices, never elsewhere; every device
   * runs it. */
  assert_true(info.paths_available & (1u << CLPRIM_PATH_CPU));
  if (!getenv("CLPRIM_PATH") || !*getenv("CLPRIM_PATH"))
    assert_int_equal(info.path == CLPRIM_PATH_CPU, (info.device_type & CL_DEVICE_TYPE_CPU) != 0);
  clprim_options o;
  clprim_options_init(&o);
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    o.path = (clprim_path)p;
    if (info.paths_available & (1u << p)) {
      TEST_OK(clprim_context_create(&ctx, &o));
      clprim_device_info forced;
      clprim_context_get_info(ctx, &forced, sizeof forced);
      assert_int_equal(forced.path, p);
      clprim_context_free(ctx);
    } else {
      /* Refused, and stderr says why (captured in a file). */
      char log[] = "/tmp/clprim-test-stderr-XXXXXX";
      const int fd = mkstemp(log), saved_err = dup(2);
      assert_true(fd >= 0 && saved_err >= 0);
      fflush(stderr);
      dup2(fd, 2);
      ctx = (clprim_context *)&o; /* a failure leaves the handle */
      const clprim_status st = clprim_context_create(&ctx, &o);
      fflush(stderr);
      dup2(saved_err, 2);
      close(saved_err);
      char text[1024] = "";
      const ssize_t got = pread(fd, text, sizeof text - 1, 0);
      close(fd);
      unlink(log);
      text[got > 0 ? got : 0] = 0;
      assert_int_equal(st, CLPRIM_ERROR_PATH_UNAVAILABLE);
      assert_ptr_equal(ctx, (clprim_context *)&o);
      printf("forcing %s: %s", clprim_path_name((clprim_path)p), text);
      assert_non_null(strstr(text, "is not available"));
      assert_non_null(strstr(text, "this device runs: local"));
    }
  }
  o.path = (clprim_path)77;
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create(&ctx, &o));
  /* $CLPRIM_PATH applies when the option says auto. */
  const char *old = getenv("CLPRIM_PATH");
  char saved[64] = "";
  if (old) snprintf(saved, sizeof saved, "%s", old);
  setenv("CLPRIM_PATH", "local", 1);
  TEST_OK(clprim_context_create(&ctx, NULL));
  clprim_context_get_info(ctx, &info, sizeof info);
  assert_int_equal(info.path, CLPRIM_PATH_LOCAL);
  assert_non_null(strstr(clprim_context_device_options(ctx), "CLPRIM_PATH_LOCAL"));
  clprim_context_free(ctx);
  setenv("CLPRIM_PATH", "no-such-path", 1);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create(&ctx, NULL));
  if (old) setenv("CLPRIM_PATH", saved, 1);
  else unsetenv("CLPRIM_PATH");
}

/* Tuning: $CLPRIM_TUNE is read once per context; a name no family has, or
 * a value out of a knob's range, fails the creation; clprim__tune takes the
 * same text and sets nothing when any part is wrong. */
static void test_tuning(void **state) {
  (void)state;
  const char *old = getenv("CLPRIM_TUNE");
  char saved[256] = "";
  if (old) snprintf(saved, sizeof saved, "%s", old);
  clprim_context *ctx;
  static const char *const bad[] = {"sort.nope=1", "nope.items=8", "sort.items=3", "sort.items",
                                    "sort.items=x", "sortitems=8", "sort.items=8,scan.wg=7"};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
    setenv("CLPRIM_TUNE", bad[b], 1);
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create(&ctx, NULL));
  }
  /* A good one changes the shape the tests see (sort's pass tile). */
  unsetenv("CLPRIM_TUNE");
  TEST_OK(clprim_context_create(&ctx, NULL));
  const size_t tile = clprim__sort_pass_tile(ctx, CLPRIM_UINT32, 0);
  clprim_context_free(ctx);
  setenv("CLPRIM_TUNE", "sort.wg=64,sort.items=4,", 1);
  TEST_OK(clprim_context_create(&ctx, NULL));
  assert_int_equal(clprim__sort_pass_tile(ctx, CLPRIM_UINT32, 0), 256);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim__tune(ctx, "sort.items=8,sort.wg=9999"));
  assert_int_equal(clprim__sort_pass_tile(ctx, CLPRIM_UINT32, 0), 256); /* nothing was set */
  TEST_OK(clprim__tune(ctx, "sort.wg=-1,sort.items=-1"));
  assert_int_equal(clprim__sort_pass_tile(ctx, CLPRIM_UINT32, 0), tile);
  clprim_context_free(ctx);
  if (old) setenv("CLPRIM_TUNE", saved, 1);
  else unsetenv("CLPRIM_TUNE");
}

/* Knob `knob` of family `family` as a call with these key and value bytes
 * gets it. */
static long long knob_value(const clprim_context *ctx, const char *family, const char *knob,
                            unsigned key_bytes, unsigned value_bytes) {
  for (unsigned i = 0; i < ctx->family_count; ++i) {
    const struct clprim_family *f = ctx->families[i];
    if (strcmp(f->name, family) != 0) continue;
    long long v[CLPRIM__KNOBS_MAX];
    clprim__tuned(ctx, f, key_bytes, value_bytes, v);
    for (unsigned k = 0; k < f->knob_count; ++k)
      if (!strcmp(f->knobs[k].name, knob)) return v[k];
  }
  fail_msg("no knob %s.%s", family, knob);
  return 0;
}

/* An environment variable set (NULL: unset) for a test, and put back. */
struct saved_env {
  const char *name;
  int was_set;
  char value[4096];
};
static void env_set(struct saved_env *e, const char *name, const char *value) {
  const char *old = getenv(name);
  e->name = name, e->was_set = old != NULL;
  snprintf(e->value, sizeof e->value, "%s", old ? old : "");
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}
static void env_restore(const struct saved_env *e) {
  if (e->was_set)
    setenv(e->name, e->value, 1);
  else
    unsetenv(e->name);
}

/* The tuning file (clprim-tune writes it): a context reads its device's
 * file in the cache folder, or $CLPRIM_TUNING_FILE, after the tables' rows
 * and before clprim__tune's; a wrong line is left out and the others
 * apply; rows hold for the key and value sizes they name.
 * CLPRIM_TUNING_TABLES=portable leaves out the table rows that name a path,
 * a device type or a device. */
static void test_tuning_file(void **state) {
  (void)state;
  struct saved_env file_env, tables_env, tune_env;
  env_set(&file_env, "CLPRIM_TUNING_FILE", NULL);
  env_set(&tables_env, "CLPRIM_TUNING_TABLES", NULL);
  env_set(&tune_env, "CLPRIM_TUNE", NULL);
  char dir[] = "/tmp/clprim-test-tuning-XXXXXX";
  assert_non_null(mkdtemp(dir));
  clprim_options o;
  clprim_options_init(&o);
  o.cache_dir = dir;
  clprim_context *ctx;
  TEST_OK(clprim_context_create(&ctx, &o));
  assert_null(ctx->tuning_file);
  char path[4200];
  assert_true(clprim__tuning_file_path(ctx, path, sizeof path));
  assert_non_null(strstr(path, dir));
  const long long wg = knob_value(ctx, "sort", "wg", 4, 0),
                  pairs_items = knob_value(ctx, "sort", "items", 4, 4),
                  items8 = knob_value(ctx, "sort", "items", 8, 0),
                  reduce_items = knob_value(ctx, "reduce", "items", 4, 0);
  clprim_context_free(ctx);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("# clprim-tune's head\n"
        "\n"
        "sort key_bytes=4 value_bytes=none wg=128 items=12  # a comment\n"
        "sort key_bytes=8 wg=512\n"
        "nope items=8\n"
        "sort items=3\n"
        "sort key_bytes=8 items=8 nope=1\n"
        "reduce items\n"
        "reduce key_bytes=x items=8\n"
        "sort key_bytes=4\n",
        f);
  fclose(f);
  TEST_OK(clprim_context_create(&ctx, &o));
  assert_non_null(ctx->tuning_file);
  assert_string_equal(ctx->tuning_file, path);
  assert_int_equal(knob_value(ctx, "sort", "wg", 4, 0), 128);
  assert_int_equal(knob_value(ctx, "sort", "items", 4, 0), 12);
  assert_int_equal(knob_value(ctx, "sort", "items", 4, 4), pairs_items); /* keys alone only */
  assert_int_equal(knob_value(ctx, "sort", "wg", 8, 0), 512);
  assert_int_equal(knob_value(ctx, "sort", "items", 8, 0), items8); /* its line was left out */
  assert_int_equal(knob_value(ctx, "reduce", "items", 4, 0), reduce_items);
  /* The shape the sort runs, and its result. */
  assert_int_equal(clprim__sort_pass_tile(ctx, CLPRIM_UINT32, 0), 128 * 12);
  const size_t n = 20000;
  uint32_t *keys = malloc(n * 4), *back = malloc(n * 4);
  assert_non_null(keys), assert_non_null(back);
  for (size_t i = 0; i < n; ++i)
    keys[i] = (uint32_t)test_rand();
  cl_mem in = test_buffer(ctx, n * 4, keys), out = test_buffer(ctx, n * 4, NULL);
  TEST_OK(clprim_sort_keys(ctx, n, CLPRIM_UINT32, clprim_buf(in), 0, 0, 0, clprim_buf(out)));
  test_read(ctx, out, n * 4, back);
  for (size_t i = 1; i < n; ++i)
    if (back[i - 1] > back[i])
      fail_msg("sorted with the file's shape: keys %zu, %zu out of order", i - 1, i);
  clReleaseMemObject(in), clReleaseMemObject(out);
  free(keys), free(back);
  /* clprim__tune (and CLPRIM_TUNE) after the file. */
  TEST_OK(clprim__tune(ctx, "sort.items=16"));
  assert_int_equal(knob_value(ctx, "sort", "items", 4, 0), 16);
  assert_int_equal(knob_value(ctx, "sort", "wg", 4, 0), 128);
  clprim_context_free(ctx);
  /* $CLPRIM_TUNING_FILE: that file, with the disk cache off too; off: none. */
  setenv("CLPRIM_TUNING_FILE", path, 1);
  o.cache_dir = "off";
  TEST_OK(clprim_context_create(&ctx, &o));
  assert_int_equal(knob_value(ctx, "sort", "wg", 8, 0), 512);
  clprim_context_free(ctx);
  setenv("CLPRIM_TUNING_FILE", "off", 1);
  o.cache_dir = dir;
  TEST_OK(clprim_context_create(&ctx, &o));
  assert_null(ctx->tuning_file);
  assert_int_equal(knob_value(ctx, "sort", "wg", 4, 0), wg);
  clprim_context_free(ctx);
  setenv("CLPRIM_TUNING_FILE", "/nonexistent/tuning.txt", 1);
  TEST_OK(clprim_context_create(&ctx, &o));
  assert_null(ctx->tuning_file);
  clprim_context_free(ctx);
  /* Portable rows only: sort's first row (256 x 16), on every device. */
  setenv("CLPRIM_TUNING_FILE", "off", 1);
  setenv("CLPRIM_TUNING_TABLES", "portable", 1);
  TEST_OK(clprim_context_create(&ctx, &o));
  assert_true(ctx->tables_portable);
  assert_int_equal(knob_value(ctx, "sort", "wg", 4, 0), 256);
  assert_int_equal(knob_value(ctx, "sort", "items", 4, 0), 16);
  assert_int_equal(knob_value(ctx, "sort", "items", 8, 0), 16);
  clprim_context_free(ctx);
  setenv("CLPRIM_TUNING_TABLES", "all", 1);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create(&ctx, &o));
  env_restore(&file_env), env_restore(&tables_env), env_restore(&tune_env);
  DIR *d = opendir(dir); /* the file, and what the contexts cached */
  for (struct dirent *e; d && (e = readdir(d));) {
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (e->d_name[0] != '.') remove(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

/* docs/TUNING.md names every knob of every family and engine, as
 * CLPRIM_TUNE spells it. */
static void test_tuning_documented(void **state) {
  (void)state;
  FILE *f = fopen(CLPRIM_SOURCE_DIR "/docs/TUNING.md", "rb");
  assert_non_null(f);
  static char doc[1 << 16];
  const size_t got = fread(doc, 1, sizeof doc - 1, f);
  fclose(f);
  doc[got] = 0;
  clprim_context *ctx;
  TEST_OK(clprim_context_create(&ctx, NULL));
  for (unsigned i = 0; i < ctx->family_count; ++i)
    for (unsigned k = 0; k < ctx->families[i]->knob_count; ++k) {
      char name[96];
      snprintf(name, sizeof name, "`%s.%s`", ctx->families[i]->name,
               ctx->families[i]->knobs[k].name);
      if (!strstr(doc, name)) fail_msg("docs/TUNING.md does not name %s", name);
    }
  clprim_context_free(ctx);
}

static void test_from_queue(void **state) {
  (void)state;
  clprim_context *owner, *ctx;
  TEST_OK(clprim_context_create(&owner, NULL));
  cl_int err;
  cl_context cl = clprim_context_cl_context(owner);
  cl_device_id dev = clprim_context_device(owner);
  cl_command_queue q = clCreateCommandQueue(cl, dev, 0, &err);
  assert_int_equal(err, CL_SUCCESS);
  ctx = owner; /* a failure leaves the handle */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_create_from_queue(&ctx, NULL, NULL));
  assert_ptr_equal(ctx, owner);
  TEST_OK(clprim_context_create_from_queue(&ctx, q, NULL));
  assert_ptr_equal(clprim_context_queue(ctx), q);
  assert_ptr_equal(clprim_context_cl_context(ctx), cl);
  int data[3] = {1, 2, 3};
  cl_mem buf = test_buffer(ctx, sizeof data, data);
  TEST_OK(clprim_scan_inclusive(ctx, 3, CLPRIM_INT32, clprim_buf(buf), 0, clprim_buf(buf)));
  /* No profiling on this queue. */
  double ms;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_OPERATION, clprim_context_last_time(ctx, &ms));
  clprim_context_free(ctx);
  /* The caller's queue is still the caller's. */
  int out[3];
  assert_int_equal(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL), CL_SUCCESS);
  assert_int_equal(out[2], 6);
  clReleaseMemObject(buf);

  /* Profiling queue: the last call's device time. */
  cl_command_queue pq = clCreateCommandQueue(cl, dev, CL_QUEUE_PROFILING_ENABLE, &err);
  assert_int_equal(err, CL_SUCCESS);
  TEST_OK(clprim_context_create_from_queue(&ctx, pq, NULL));
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_OPERATION, clprim_context_last_time(ctx, &ms));
  buf = test_buffer(ctx, 4 << 16, NULL);
  TEST_OK(clprim_scan_exclusive(ctx, 1 << 16, CLPRIM_UINT32, clprim_buf(buf), 0, clprim_buf(buf)));
  TEST_OK(clprim_context_last_time(ctx, &ms));
  assert_true(ms > 0.0);
  /* A pipeline's read is not a call: last_time and last_event stay the
   * run's. */
  {
    const clprim_type u32 = CLPRIM_UINT32;
    const clprim_buffer in = clprim_buf(buf);
    clprim_pipeline *p;
    TEST_OK(clprim_pipeline_create(&p, ctx, 1, &u32));
    TEST_OK(clprim_pipeline_filter_expr(p, "x % 3 == 1"));
    TEST_OK(clprim_pipeline_count(p));
    TEST_OK(clprim_pipeline_run(p, 1 << 16, &in, NULL));
    double run_ms, read_ms;
    cl_event run_event, read_event;
    TEST_OK(clprim_context_last_time(ctx, &run_ms));
    TEST_OK(clprim_context_last_event(ctx, &run_event));
    uint64_t count = 0;
    TEST_OK(clprim_pipeline_read(p, CLPRIM_PIPE_OUT_COUNT, 0, 8, &count));
    TEST_OK(clprim_context_last_time(ctx, &read_ms));
    TEST_OK(clprim_context_last_event(ctx, &read_event));
    assert_true(run_ms == read_ms);
    assert_ptr_equal(run_event, read_event);
    clReleaseEvent(run_event);
    clReleaseEvent(read_event);
    clprim_pipeline_free(p);
  }
  clReleaseMemObject(buf);
  clprim_context_free(ctx);
  clReleaseCommandQueue(pq);

  /* An out-of-order queue is refused, where the device can make one. */
  cl_command_queue ooo = clCreateCommandQueue(cl, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  if (err == CL_SUCCESS) {
    TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_DEVICE, clprim_context_create_from_queue(&ctx, ooo, NULL));
    clReleaseCommandQueue(ooo);
  } else {
    printf("out-of-order queue: skipped (the device has none)\n");
  }
  clReleaseCommandQueue(q);
  clprim_context_free(owner);
}

static void test_build_failure(void **state) {
  (void)state;
  clprim_context *ctx;
  TEST_OK(clprim_context_create(&ctx, NULL));
  cl_kernel k;
  int st = clprim__kernel(ctx, "scan.cl", "-DT=no_such_type -DT_BITS=32", "scan_reduce", &k);
  assert_int_equal(st, CL_BUILD_PROGRAM_FAILURE);
  assert_true(strlen(clprim_context_build_log(ctx)) > 0);
  printf("build log of a planted failure starts: %.80s\n", clprim_context_build_log(ctx));
  /* Inside a call, the failed build leaves a text that points to the log. */
  TEST_OK(clprim__call_begin(ctx, "a_call"));
  st = clprim__kernel(ctx, "scan.cl", "-DT=no_such_type -DT_BITS=32", "scan_reduce", &k);
  clprim__call_end(ctx, (clprim_status)st);
  test_text_has(ctx, "a_call: the kernel build of scan.cl failed", "a failed build");
  test_text_has(ctx, "clprim_context_build_log()", "a failed build");
  clprim_context_free(ctx);
}

/* clprim_context_last_error(): the core's texts, the context calls' own,
 * and "" once a call succeeds. */
static void test_last_error(void **state) {
  (void)state;
  clprim_context *ctx;
  TEST_OK(clprim_context_create(&ctx, NULL));
  assert_string_equal(clprim_context_last_error(NULL), ""); /* the creation's */
  assert_string_equal(clprim_context_last_error(ctx), "");
  cl_event event;
  TEST_TEXT(ctx, CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_last_event(ctx, NULL),
            "context_last_event: event is required");
  TEST_TEXT(ctx, CLPRIM_ERROR_UNSUPPORTED_OPERATION, clprim_context_last_event(ctx, &event),
            "context_last_event: the last call enqueued nothing");
  TEST_TEXT(ctx, CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_wait_for(ctx, 2, NULL),
            "context_wait_for: events is NULL, count is 2");
  TEST_OK_NO_TEXT(ctx, clprim_context_clear_cache(ctx));
  /* The core's checks: type, flags, buffers, ranges. */
  cl_mem small = test_buffer(ctx, 64, NULL), foreign = test_foreign_buffer(ctx, 64);
  TEST_OK(clprim__call_begin(ctx, "a_call"));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim__check_type(ctx, "key_type", (clprim_type)7));
  test_text_has(ctx, "a_call: key_type (7) is not a clprim_type", "a bad type");
  clprim__call_end(ctx, CLPRIM_ERROR_INVALID_ARGUMENT);
  TEST_OK(clprim__call_begin(ctx, "a_call"));
  test_text_has(ctx, NULL, "a call's start");
  TEST_STATUS(
      CLPRIM_ERROR_INVALID_ARGUMENT,
      clprim__check_flags(ctx, CLPRIM_SORT_DESCENDING | CLPRIM_INDICES_64, CLPRIM_INDICES_64));
  test_text_has(ctx, "a_call: flag 0x100 (CLPRIM_SORT_DESCENDING) is not one this call takes",
                "a refused flag");
  clprim__call_end(ctx, CLPRIM_ERROR_INVALID_ARGUMENT);
  cl_mem mem;
  TEST_OK(clprim__call_begin(ctx, "a_call"));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim__range(ctx, "values", clprim_buf_at(small, 2), 4, 15, CLPRIM__READ, &mem));
  test_text_has(ctx, "a_call: values holds 14 elements from offset 2, the call needs 15",
                "a small range");
  clprim__call_end(ctx, CLPRIM_ERROR_BUFFER_TOO_SMALL);
  TEST_OK(clprim__call_begin(ctx, "a_call"));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim__range(ctx, "keys", clprim_buf(foreign), 4, 1, CLPRIM__READ, &mem));
  test_text_has(ctx, "a_call: keys is a buffer of another cl_context", "a foreign buffer");
  clprim__call_end(ctx, CL_INVALID_CONTEXT);
  /* A failure that sets no text of its own gets one that names its status. */
  TEST_OK(clprim__call_begin(ctx, "a_call"));
  clprim__call_end(ctx, CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  test_text_has(ctx, "a_call: failed with -4007 (CLPRIM_ERROR_OUT_OF_HOST_MEMORY)",
                "a bare status");
  TEST_OK(clprim__call_begin(ctx, "a_call"));
  clprim__call_end(ctx, CLPRIM_SUCCESS);
  test_text_has(ctx, NULL, "a call that succeeded");
  clReleaseMemObject(small);
  clReleaseMemObject(foreign);
  clprim_context_free(ctx);
}

/* Counts files in dir whose names end in ext; with corrupt set, overwrites
 * each such file's middle with garbage. */
static int cache_files(const char *dir, const char *ext, int corrupt) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name), el = strlen(ext);
    if (len <= el || strcmp(e->d_name + len - el, ext) != 0) continue;
    ++count;
    if (corrupt) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      FILE *f = fopen(path, "r+b");
      if (f) {
        fseek(f, 40, SEEK_SET);
        fputs("garbage garbage garbage", f);
        fclose(f);
      }
    }
  }
  closedir(d);
  return count;
}

static void scan_check(clprim_context *ctx) {
  enum { N = 5000 };
  static uint32_t in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = (uint32_t)test_rand();
  cl_mem buf = test_buffer(ctx, sizeof in, in);
  TEST_OK(clprim_scan_exclusive(ctx, N, CLPRIM_UINT32, clprim_buf(buf), 0, clprim_buf(buf)));
  test_read(ctx, buf, sizeof out, out);
  uint32_t run = 0;
  for (int i = 0; i < N; ++i) {
    assert_int_equal(out[i], run);
    run += in[i];
  }
  clReleaseMemObject(buf);
}

/* A context that stores its binaries in the disk cache even where the
 * runtime keeps its own cache (PoCL: clprim stores them only while
 * prebuilding), so that the store and load are tested on every runtime. */
static void create_storing(clprim_context **ctx, const clprim_options *o) {
  TEST_OK(clprim_context_create(ctx, o));
  (*ctx)->runtime_caches = 0;
}

static void test_disk_cache(void **state) {
  (void)state;
  char dir[] = "/tmp/clprim-test-cache-XXXXXX";
  assert_non_null(mkdtemp(dir));
  clprim_options o;
  clprim_options_init(&o);
  o.cache_dir = dir;
  clprim_context *ctx;
  /* As a context stores by default: binaries, unless the runtime keeps
   * its own cache. */
  TEST_OK(clprim_context_create(&ctx, &o));
  const int runtime_caches = ctx->runtime_caches;
  scan_check(ctx);
  clprim_context_free(ctx);
  int bins = cache_files(dir, ".bin", 0), texts = cache_files(dir, ".txt", 0);
  printf("disk cache after a cold start: %d binaries, %d probe records (the runtime %s)\n",
         bins, texts, runtime_caches ? "keeps its own cache" : "keeps none");
  if (runtime_caches) assert_int_equal(bins, 0);
  else assert_true(bins >= 1);
  assert_int_equal(texts, 1);
  /* Prebuilding stores binaries where the runtime keeps its own cache too
   * (core/program.c), so that a later process loads them. */
  if (runtime_caches) {
    TEST_OK(clprim_context_create(&ctx, &o));
    ctx->prebuilding = 1;
    scan_check(ctx);
    ctx->prebuilding = 0;
    clprim_context_free(ctx);
    assert_true(cache_files(dir, ".bin", 0) >= 1);
  }
  /* POCL_KERNEL_CACHE=0 (PoCL keeps no cache): clprim stores binaries. */
  if (runtime_caches) {
    const char *old_pkc = getenv("POCL_KERNEL_CACHE");
    char saved_pkc[64] = "";
    if (old_pkc) snprintf(saved_pkc, sizeof saved_pkc, "%s", old_pkc);
    setenv("POCL_KERNEL_CACHE", "0", 1);
    TEST_OK(clprim_context_create(&ctx, &o));
    assert_int_equal(ctx->runtime_caches, 0);
    clprim_context_free(ctx);
    if (old_pkc) setenv("POCL_KERNEL_CACHE", saved_pkc, 1);
    else unsetenv("POCL_KERNEL_CACHE");
  }
  create_storing(&ctx, &o);
  scan_check(ctx);
  clprim_context_free(ctx);
  assert_true(cache_files(dir, ".bin", 0) >= 1);
  /* Warm: loads from the cache. */
  create_storing(&ctx, &o);
  scan_check(ctx);
  clprim_context_free(ctx);
  /* Corrupt entries are misses: rebuilt and rewritten, results still right. */
  cache_files(dir, ".bin", 1);
  cache_files(dir, ".txt", 1);
  create_storing(&ctx, &o);
  scan_check(ctx);
  clprim_context_free(ctx);
  /* A foreign file under an entry's name is a miss too. */
  DIR *d = opendir(dir);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strstr(e->d_name, ".bin")) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "wb");
    fputs("not a clprim cache entry", f);
    fclose(f);
  }
  closedir(d);
  create_storing(&ctx, &o);
  scan_check(ctx);
  clprim_context_free(ctx);
  /* "" and "off" disable the cache even when the environment names one. */
  const char *old_env = getenv("CLPRIM_CACHE_DIR");
  char saved[4096] = "";
  if (old_env) snprintf(saved, sizeof saved, "%s", old_env);
  setenv("CLPRIM_CACHE_DIR", dir, 1);
  o.cache_dir = "";
  TEST_OK(clprim_context_create(&ctx, &o));
  assert_null(ctx->cache_dir);
  clprim_context_free(ctx);
  o.cache_dir = NULL;
  setenv("CLPRIM_CACHE_DIR", "off", 1);
  TEST_OK(clprim_context_create(&ctx, &o));
  assert_null(ctx->cache_dir);
  clprim_context_free(ctx);
  /* On by default: $XDG_CACHE_HOME/clprim, created with its parents. */
  unsetenv("CLPRIM_CACHE_DIR");
  char xdg[4200], expected[4300];
  snprintf(xdg, sizeof xdg, "%s/xdg/deeper", dir);
  snprintf(expected, sizeof expected, "%s/clprim", xdg);
  const char *old_xdg = getenv("XDG_CACHE_HOME");
  char saved_xdg[4096] = "";
  if (old_xdg) snprintf(saved_xdg, sizeof saved_xdg, "%s", old_xdg);
  setenv("XDG_CACHE_HOME", xdg, 1);
  create_storing(&ctx, &o);
  assert_non_null(ctx->cache_dir);
  assert_string_equal(ctx->cache_dir, expected);
  scan_check(ctx);
  clprim_context_free(ctx);
  assert_true(cache_files(expected, ".bin", 0) >= 1);
  /* A folder that cannot be made (a file is in the way): the cache is off,
   * everything else works. */
  char blocked[4300];
  snprintf(blocked, sizeof blocked, "%s/a-file", dir);
  FILE *f = fopen(blocked, "wb");
  assert_non_null(f);
  fclose(f);
  setenv("XDG_CACHE_HOME", blocked, 1);
  TEST_OK(clprim_context_create(&ctx, &o));
  assert_null(ctx->cache_dir);
  scan_check(ctx);
  clprim_context_free(ctx);
  if (old_xdg) setenv("XDG_CACHE_HOME", saved_xdg, 1);
  else unsetenv("XDG_CACHE_HOME");
  if (old_env) setenv("CLPRIM_CACHE_DIR", saved, 1);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* An application kernel on clprim's portable subgroup operations. */
static const char *app_source =
    "__kernel void app(__global uint *out, __global uint *sums, __global ulong *args) {\n"
    "  __local uint scratch[CLPRIM_WG_SCRATCH(128)];\n"
    "  __local ulong keys[CLPRIM_WG_SCRATCH(128)], indices[CLPRIM_WG_SCRATCH(128)];\n"
    "  const uint i = (uint)get_global_id(0);\n"
    "  uint total;\n"
    "  uint x = i % 5u + 1u;\n"
    "  out[i] = clprim_wg_scan_excl_add_uint(x, scratch, &total) + 1000u * total;\n"
    "  sums[i] = clprim_wg_reduce_add_uint(x * 3u, scratch);\n"
    "  uint key = i * 7u % 13u;\n"
    "  ulong index = i, index64 = i, key64 = (ulong)(i * 7u % 13u) << 35;\n"
    "  clprim_wg_reduce_argmax_uint(&key, &index, scratch, indices);\n"
    "  clprim_wg_reduce_argmax_ulong(&key64, &index64, keys, indices);\n"
    "  args[4 * i] = key, args[4 * i + 1] = index, args[4 * i + 2] = key64 >> 35;\n"
    "  args[4 * i + 3] = index64;\n"
    "}\n";

/* clprim_sg_same_bit over a value's 3 bits: the lanes of the word with an
 * equal value, checked on the host against the subgroup ids and lanes. */
static const char *peers_source =
    "__kernel void peers(__global uint *out) {\n"
    "  const uint i = (uint)get_global_id(0), x = i * 7u % 5u;\n"
    "#ifdef CLPRIM_HAS_BALLOT\n"
    "  uint p = ~0u;\n"
    "  for (uint b = 0; b < 3; ++b) p &= clprim_sg_same_bit(x, b);\n"
    "  out[3 * i] = p, out[3 * i + 1] = clprim_sg_id(), out[3 * i + 2] = clprim_sg_lane();\n"
    "#else\n"
    "  out[3 * i] = x;\n"
    "#endif\n"
    "}\n";

/* An application's kernel `name` from source, built after clprim's device
 * header with the context's options, as the README shows (*prog: its
 * program, for the caller to release). */
static cl_kernel app_kernel(clprim_context *ctx, unsigned path, const char *source,
                            const char *name, cl_program *prog) {
  const char *sources[2] = {clprim_device_source(), source};
  cl_int err;
  *prog = clCreateProgramWithSource(clprim_context_cl_context(ctx), 2, sources, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  cl_device_id dev = clprim_context_device(ctx);
  err = clBuildProgram(*prog, 1, &dev, clprim_context_device_options(ctx), NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(*prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fail_msg("%s on %s: %s\n%s", name, clprim_path_name((clprim_path)path),
             clprim_status_name(err), log);
  }
  cl_kernel k = clCreateKernel(*prog, name, &err);
  assert_int_equal(err, CL_SUCCESS);
  return k;
}

static void check_peers(clprim_context *ctx, unsigned path) {
  cl_program prog;
  cl_kernel k = app_kernel(ctx, path, peers_source, "peers", &prog);
  enum { LOCAL = 128, GLOBAL = 256 };
  cl_mem out = test_buffer(ctx, 3 * GLOBAL * 4, NULL);
  clSetKernelArg(k, 0, sizeof out, &out);
  const size_t global = GLOBAL, local = LOCAL;
  assert_int_equal(clEnqueueNDRangeKernel(clprim_context_queue(ctx), k, 1, NULL, &global, &local,
                                          0, NULL, NULL),
                   CL_SUCCESS);
  uint32_t got[3 * GLOBAL];
  test_read(ctx, out, sizeof got, got);
  const int ballot = path == CLPRIM_PATH_NV_PTX || path == CLPRIM_PATH_KHR_BALLOT;
  for (unsigned i = 0; ballot && i < GLOBAL; ++i) {
    uint32_t want = 0;
    for (unsigned j = i / LOCAL * LOCAL; j < (i / LOCAL + 1) * LOCAL; ++j)
      if (got[3 * j + 1] == got[3 * i + 1] && got[3 * j + 2] / 32 == got[3 * i + 2] / 32 &&
          j * 7 % 5 == i * 7 % 5)
        want |= 1u << (got[3 * j + 2] % 32);
    if (got[3 * i] != want)
      fail_msg("clprim_sg_same_bit on %s, item %u: 0x%08x, want 0x%08x",
               clprim_path_name((clprim_path)path), i, got[3 * i], want);
  }
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  if (ballot) printf("clprim_sg_same_bit on %s: passed\n", clprim_path_name((clprim_path)path));
}

/* clprim_context_wait_for holds the next call back until the caller's
 * event completes; clprim_context_last_event gives the call's completion. */
static void test_events(void **state) {
  (void)state;
  clprim_context *ctx;
  TEST_OK(clprim_context_create(&ctx, NULL));
  const size_t n = 10000;
  cl_mem in = test_buffer(ctx, n * 4, NULL), out = test_buffer(ctx, n * 4, NULL);
  test_fill_u32(ctx, in, n, 3, 1);
  clFinish(clprim_context_queue(ctx));
  cl_event last = NULL;
  TEST_OK(clprim_scan_inclusive(ctx, 0, CLPRIM_UINT32, clprim_buf(in), 0, clprim_buf(out)));
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_OPERATION, clprim_context_last_event(ctx, &last));
  assert_null(last);
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_wait_for(ctx, 1, NULL));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_context_last_event(ctx, NULL));

  cl_int err;
  cl_event gate = clCreateUserEvent(clprim_context_cl_context(ctx), &err);
  assert_int_equal(err, CL_SUCCESS);
  TEST_OK(clprim_context_wait_for(ctx, 1, &gate));
  TEST_OK(clprim_scan_inclusive(ctx, n, CLPRIM_UINT32, clprim_buf(in), 0, clprim_buf(out)));
  TEST_OK(clprim_context_last_event(ctx, &last));
  clFlush(clprim_context_queue(ctx));
  const struct timespec pause = {0, 200000000};
  nanosleep(&pause, NULL);
  cl_int status;
  clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  printf("scan's status while its input's event is pending: %d\n", status);
  assert_true(status != CL_COMPLETE);
  clSetUserEventStatus(gate, CL_COMPLETE);
  assert_int_equal(clWaitForEvents(1, &last), CL_SUCCESS);
  /* in[i] = 3 + i, so out[i] = 3 (i + 1) + i (i + 1) / 2 (mod 2^32). */
  for (size_t i = 0; i < n; i += 997) {
    const cl_uint want = (cl_uint)(3 * (i + 1) + i * (i + 1) / 2);
    assert_int_equal(test_read_u32(ctx, out, i), want);
  }
  clReleaseEvent(last);
  clReleaseEvent(gate);
  clReleaseMemObject(in), clReleaseMemObject(out);
  clprim_context_free(ctx);
}

/* ------------------------------------------------------------ asynchrony */

/* Which calls return while their input is not ready: each call runs behind
 * a user event (clprim_context_wait_for) that a second thread completes
 * after a pause. A call that returns before then is asynchronous; one that
 * waits for the device returns only after it. README names the calls that
 * wait without returning a host value; this table is that list. */
struct async_bufs {
  size_t n, tile;
  cl_mem in, out, out2, result, begins, ends;
};
struct gate_release {
  cl_event gate;
  atomic_int released;
};
static void *release_gate(void *arg) {
  struct gate_release *g = arg;
  const struct timespec pause = {1, 500000000};
  nanosleep(&pause, NULL);
  atomic_store(&g->released, 1);
  clSetUserEventStatus(g->gate, CL_COMPLETE);
  return NULL;
}

static clprim_status async_scan(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_scan_inclusive(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), 0, clprim_buf(b->out));
}
static clprim_status async_sum(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_reduce_sum(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), 0, NULL, clprim_buf(b->result));
}
static clprim_status async_select(clprim_context *ctx, const struct async_bufs *b) {
  clprim_predicate pred;
  memset(&pred, 0, sizeof pred);
  pred.op = CLPRIM_PRED_GT, pred.a.f32 = 0.5f;
  return clprim_select(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), &pred, 0, clprim_buf(b->out),
                       clprim_buf(NULL), NULL, clprim_buf(b->result));
}
static clprim_status async_histogram(clprim_context *ctx, const struct async_bufs *b) {
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
  hi.f32 = 1.0f;
  return clprim_histogram_even(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), lo, hi, 256,
                               clprim_buf(b->out), NULL, clprim_buf(b->result));
}
static clprim_status async_unique(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_unique(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), clprim_buf(b->out), NULL,
                       clprim_buf(b->result));
}
static clprim_status async_sort_tile(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_sort_keys(ctx, b->tile, CLPRIM_FLOAT, clprim_buf(b->in), 0, 0, 0,
                          clprim_buf(b->out));
}
static clprim_status async_lower_bound(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_lower_bound(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), b->n, clprim_buf(b->in), 0,
                            clprim_buf(b->out));
}
static clprim_status async_gather_checked(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_gather(ctx, 2, 4, clprim_buf(b->in), b->n, CLPRIM_UINT64, clprim_buf(b->begins),
                       CLPRIM_CHECK_INDICES, clprim_buf(b->out));
}
static clprim_status async_sort(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_sort_keys(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), 0, 0, 0, clprim_buf(b->out));
}
static clprim_status async_sort_pairs(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_sort_pairs(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), CLPRIM_FLOAT,
                           clprim_buf(b->in), 0, 0, CLPRIM_SORT_DESCENDING, clprim_buf(b->out),
                           clprim_buf(b->out2));
}
static clprim_status async_argsort(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_argsort(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), 0, 0, 0, clprim_buf(b->out),
                        clprim_buf(NULL));
}
static clprim_status async_topk(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_topk(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), 10, 0, clprim_buf(b->out),
                     clprim_buf(b->out2));
}
static clprim_status async_segmented_sum(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_segmented_sum(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), 2, CLPRIM_UINT64,
                              clprim_buf(b->begins), clprim_buf(b->ends), 0, clprim_buf(b->out));
}
static clprim_status async_nth(clprim_context *ctx, const struct async_bufs *b) {
  return clprim_nth_element(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->in), b->n / 2, 0, NULL,
                            clprim_buf(b->result));
}

static void test_asynchrony(void **state) {
  (void)state;
  static const struct {
    const char *name;
    int waits; /* 1: documented to wait for the device */
    clprim_status (*call)(clprim_context *, const struct async_bufs *);
  } calls[] = {
      {"scan_inclusive", 0, async_scan},
      {"reduce_sum, device result", 0, async_sum},
      {"select, device count", 0, async_select},
      {"histogram_even, device outside count", 0, async_histogram},
      {"unique, device count", 0, async_unique},
      {"sort_keys, one tile", 0, async_sort_tile},
      {"lower_bound", 0, async_lower_bound},
      {"sort_keys, above one tile", 0, async_sort},
      {"sort_pairs, above one tile, descending", 0, async_sort_pairs},
      {"argsort, above one tile", 0, async_argsort},
      {"topk (reads its candidates' counts)", 1, async_topk},
      {"segmented_sum (reads its segment check)", 1, async_segmented_sum},
      {"nth_element, device result (reads each level's counts)", 1, async_nth},
      {"gather, CLPRIM_CHECK_INDICES (reads its check)", 1, async_gather_checked},
  };
  clprim_context *ctx;
  TEST_OK(clprim_context_create(&ctx, NULL));
  struct async_bufs b;
  b.n = 100000;
  b.tile = clprim_sort_tile(ctx, CLPRIM_FLOAT, NULL);
  assert_true(b.tile >= 1 && b.tile < b.n);
  float *host = malloc(b.n * sizeof *host);
  assert_non_null(host);
  for (size_t i = 0; i < b.n; ++i) host[i] = (float)i / (float)b.n; /* sorted, distinct */
  const uint64_t begins[2] = {0, 500}, ends[2] = {500, b.n};
  b.in = test_buffer(ctx, b.n * 4, host);
  b.out = test_buffer(ctx, b.n * 8, NULL);
  b.out2 = test_buffer(ctx, b.n * 8, NULL);
  b.result = test_buffer(ctx, 64, NULL);
  b.begins = test_buffer(ctx, sizeof begins, begins);
  b.ends = test_buffer(ctx, sizeof ends, ends);
  free(host);
  for (size_t c = 0; c < sizeof calls / sizeof calls[0]; ++c) {
    TEST_OK(calls[c].call(ctx, &b)); /* builds its programs: then enqueueing is quick */
    clFinish(clprim_context_queue(ctx));
    cl_int err;
    struct gate_release g;
    g.gate = clCreateUserEvent(clprim_context_cl_context(ctx), &err);
    assert_int_equal(err, CL_SUCCESS);
    atomic_init(&g.released, 0);
    TEST_OK(clprim_context_wait_for(ctx, 1, &g.gate));
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, release_gate, &g), 0);
    const clprim_status st = calls[c].call(ctx, &b);
    const int returned_first = !atomic_load(&g.released);
    pthread_join(thread, NULL);
    clFinish(clprim_context_queue(ctx));
    clReleaseEvent(g.gate);
    TEST_OK(st);
    printf("%-58s %s\n", calls[c].name,
           returned_first ? "returned while its input was pending" : "waited for the device");
    if (returned_first == calls[c].waits)
      fail_msg("%s: %s, documented as %s", calls[c].name,
               returned_first ? "returned at once" : "waited",
               calls[c].waits ? "waiting" : "returning at once");
  }
  clReleaseMemObject(b.in), clReleaseMemObject(b.out), clReleaseMemObject(b.out2);
  clReleaseMemObject(b.result), clReleaseMemObject(b.begins), clReleaseMemObject(b.ends);
  clprim_context_free(ctx);
}

static double test_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static size_t programs_built(const clprim_context *ctx) {
  size_t count = 0;
  for (const struct clprim_program_entry *e = ctx->programs; e; e = e->next) ++count;
  return count;
}

/* What the progress callback saw: calls with done counting 1, 2, ...
 * and one total, never two calls at once (each waits a moment inside, so
 * that an unlocked call from a second build thread would overlap it), and
 * the build threads that made them. */
struct progress_seen {
  unsigned calls, total;
  int out_of_order, overlapped;
  atomic_int inside;
  pthread_t threads[16];
  unsigned thread_count;
};
static void count_progress(void *user, unsigned done, unsigned total) {
  struct progress_seen *p = user;
  if (atomic_fetch_add(&p->inside, 1) != 0) p->overlapped = 1;
  if (done != p->calls + 1 || (p->calls && total != p->total)) p->out_of_order = 1;
  p->calls = done, p->total = total;
  unsigned t = 0;
  while (t < p->thread_count && !pthread_equal(p->threads[t], pthread_self()))
    ++t;
  if (t == p->thread_count && t < 16) p->threads[p->thread_count++] = pthread_self();
  const struct timespec moment = {0, 2000000};
  nanosleep(&moment, NULL);
  atomic_fetch_sub(&p->inside, 1);
}

/* 1 when two programs of ctx's table are the same program (file, options,
 * kernels and prefix): one built twice. */
static int program_built_twice(const clprim_context *ctx) {
  for (const struct clprim_program_entry *a = ctx->programs; a; a = a->next)
    for (const struct clprim_program_entry *b = a->next; b; b = b->next)
      if (!strcmp(a->file, b->file) && !strcmp(a->options, b->options) &&
          !strcmp(a->kernels, b->kernels) && !strcmp(a->prefix, b->prefix)) {
        printf("built twice: %s [%s] %s\n", a->file, a->kernels, a->options);
        return 1;
      }
  return 0;
}

/* clprim_context_prebuild builds what the calls then run: after it, a call
 * of each family (several types and sizes) builds nothing more. The public
 * call prebuilds every type; here int32 and float (int32 alone on CPUs,
 * whose builds take seconds each), on two build threads. */
static void test_prebuild(void **state) {
  (void)state;
  clprim_context *ctx;
  clprim_options o;
  clprim_options_init(&o);
  o.build_threads = 2; /* threads on CPU devices too, whose default is one */
  /* No disk cache: storing a binary makes PoCL generate code for every
   * kernel of the program, which doubled this test's time on PoCL 3.1;
   * test_disk_cache checks that prebuilding stores. */
  o.cache_dir = "off";
  TEST_OK(clprim_context_create(&ctx, &o));
  clprim_device_info info;
  TEST_OK(clprim_context_get_info(ctx, &info, sizeof info));
  const int types = info.device_type & CL_DEVICE_TYPE_GPU ? 2 : 1;
  struct progress_seen seen;
  memset(&seen, 0, sizeof seen);
  const double t0 = test_now_ms();
  TEST_OK(clprim__prebuild(ctx, 1u << CLPRIM_INT32 | (types > 1 ? 1u << CLPRIM_FLOAT : 0u),
                           count_progress, &seen));
  const size_t built = programs_built(ctx);
  printf("prebuild: %zu programs in %.1f s, %u progress calls from %u of %u build threads\n", built,
         (test_now_ms() - t0) / 1e3, seen.calls, seen.thread_count, ctx->build_threads);
  assert_true(built > 0);
  /* Every program built once: one table entry and one progress call each,
   * done counting 1..total one call at a time, total all made. */
  assert_false(program_built_twice(ctx));
  assert_int_equal(ctx->programs_made, built);
  assert_int_equal(seen.calls, built);
  assert_int_equal(seen.total, built);
  assert_false(seen.out_of_order);
  assert_false(seen.overlapped);
  /* Several at once: with programs enough for every thread, more than one
   * thread built. */
  if (ctx->build_threads > 1 && built >= 4 * ctx->build_threads) assert_true(seen.thread_count > 1);
  const double t1 = test_now_ms();
  const size_t n = 100000;
  cl_mem in = test_buffer(ctx, n * 8, NULL), out = test_buffer(ctx, n * 8, NULL),
         out2 = test_buffer(ctx, n * 8, NULL), values = test_buffer(ctx, n * 8, NULL);
  test_fill_u32(ctx, in, 2 * n, 1, 7);
  const clprim_type type_of[2] = {CLPRIM_INT32, CLPRIM_FLOAT};
  for (int t = 0; t < types; ++t) {
    clprim_value v;
    uint64_t u, outside[3];
    const clprim_buffer none = clprim_buf(NULL);
    TEST_OK(clprim_scan_inclusive(ctx, n, type_of[t], clprim_buf(in), 0, clprim_buf(out)));
    TEST_OK(clprim_scan_exclusive_by_key(ctx, n, CLPRIM_UINT32, clprim_buf(in), type_of[t],
                                         clprim_buf(values), clprim_buf(out)));
    TEST_OK(clprim_argmax(ctx, n, type_of[t], clprim_buf(in), 0, &v, &u, none));
    TEST_OK(clprim_reduce_sum(ctx, n, type_of[t], clprim_buf(in), 0, &v, none));
    clprim_predicate pred;
    memset(&pred, 0, sizeof pred);
    pred.op = CLPRIM_PRED_NONZERO;
    TEST_OK(clprim_select(ctx, n, type_of[t], clprim_buf(in), &pred, 0, clprim_buf(out),
                          clprim_buf(out2), &u, none));
    uint64_t parts[2];
    TEST_OK(clprim_partition3(ctx, n, type_of[t], clprim_buf(in), &pred, &pred, 0,
                              clprim_buf(out), none, parts, none));
    clprim_value lo, hi;
    memset(&lo, 0, sizeof lo);
    memset(&hi, 0, sizeof hi);
    if (type_of[t] == CLPRIM_FLOAT)
      hi.f32 = 1e30f;
    else
      hi.i32 = 1 << 30;
    TEST_OK(clprim_histogram_even(ctx, n, type_of[t], clprim_buf(in), lo, hi, 256,
                                  clprim_buf(out), outside, none));
    TEST_OK(clprim_median(ctx, n, type_of[t], clprim_buf(in), 0, &v, none));
    TEST_OK(clprim_topk(ctx, n, type_of[t], clprim_buf(in), 10, CLPRIM_TOPK_SORTED,
                        clprim_buf(out), clprim_buf(out2)));
    TEST_OK(clprim_unique(ctx, n, type_of[t], clprim_buf(in), clprim_buf(out), &u, none));
    TEST_OK(clprim_run_length_encode(ctx, n, type_of[t], clprim_buf(in), 0, clprim_buf(out),
                                     clprim_buf(out2), &u, none));
    TEST_OK(clprim_non_trivial_runs(ctx, n, type_of[t], clprim_buf(in), CLPRIM_INDICES_64,
                                    clprim_buf(out), clprim_buf(out2), &u, none));
    TEST_OK(clprim_unique_by_key(ctx, n, type_of[t], clprim_buf(in), type_of[t],
                                 clprim_buf(values), clprim_buf(out), clprim_buf(out2), &u, none));
    TEST_OK(clprim_lower_bound(ctx, n, type_of[t], clprim_buf(in), n, clprim_buf(values), 0,
                               clprim_buf(out)));
    TEST_OK(clprim_equal_range(ctx, n, type_of[t], clprim_buf(in), n, clprim_buf(values),
                               CLPRIM_INDICES_64 | CLPRIM_SORT_DESCENDING, clprim_buf(out),
                               clprim_buf(out2)));
  }
  /* Elements of 4 bytes by the input's own values (those out of range
   * skipped). */
  TEST_OK(clprim_gather(ctx, n, 4, clprim_buf(in), n, CLPRIM_UINT32, clprim_buf(in), 0,
                        clprim_buf(out)));
  TEST_OK(clprim_scatter(ctx, n, 4, clprim_buf(in), CLPRIM_UINT32, clprim_buf(in), 0,
                         clprim_buf(out), n));
  {
    /* Segments [0, 1000) and [1000, 5000) of int32 and float. */
    const uint64_t offsets[3] = {0, 1000, 5000};
    cl_mem seg = test_buffer(ctx, sizeof offsets, offsets);
    for (int t = 0; t < types; ++t) {
      TEST_OK(clprim_segmented_argmax(ctx, n, type_of[t], clprim_buf(in), 2, CLPRIM_UINT64,
                                      clprim_buf(seg), clprim_buf_at(seg, 1), 0, clprim_buf(out)));
      TEST_OK(clprim_segmented_nth_element(ctx, n, type_of[t], clprim_buf(in), 2, CLPRIM_UINT64,
                                           clprim_buf(seg), clprim_buf_at(seg, 1), 7, 0,
                                           clprim_buf(out)));
      TEST_OK(clprim_segmented_topk(ctx, n, type_of[t], clprim_buf(in), 2, CLPRIM_UINT64,
                                    clprim_buf(seg), clprim_buf_at(seg, 1), 7, 0, clprim_buf(out),
                                    clprim_buf(out2)));
    }
    clReleaseMemObject(seg);
  }
  TEST_OK(clprim_reduce_by_key(ctx, n, CLPRIM_INT32, clprim_buf(in), CLPRIM_INT32,
                               clprim_buf(values), 0, clprim_buf(out), clprim_buf(out2), NULL,
                               clprim_buf(NULL)));
  TEST_OK(clprim_reduce_by_key(ctx, n, CLPRIM_INT32, clprim_buf(in), CLPRIM_FLOAT,
                               clprim_buf(values), CLPRIM_EXACT, clprim_buf(out),
                               clprim_buf(out2), NULL, clprim_buf(NULL)));
  printf("prebuild: the calls after it took %.1f s\n", (test_now_ms() - t1) / 1e3);
  /* Programs are kept newest first: name what the calls had to build. */
  const struct clprim_program_entry *e = ctx->programs;
  for (size_t extra = programs_built(ctx) - built; extra > 0 && e; --extra, e = e->next)
    printf("not prebuilt: %s [%s] %s\n", e->file, e->kernels, e->options);
  assert_int_equal(programs_built(ctx), built);
  clReleaseMemObject(in), clReleaseMemObject(out), clReleaseMemObject(out2);
  clReleaseMemObject(values);
  clprim_context_free(ctx);
}

static void test_embedding(void **state) {
  (void)state;
  struct test_contexts t;
  test_open_contexts(&t);
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = t.ctx[p];
    if (!ctx) continue;
    cl_program prog;
    cl_kernel k = app_kernel(ctx, p, app_source, "app", &prog);
    cl_mem out = test_buffer(ctx, 256 * 4, NULL), sums = test_buffer(ctx, 256 * 4, NULL);
    cl_mem args = test_buffer(ctx, 256 * 32, NULL);
    clSetKernelArg(k, 0, sizeof out, &out);
    clSetKernelArg(k, 1, sizeof sums, &sums);
    clSetKernelArg(k, 2, sizeof args, &args);
    /* Any work-group size, on every path: powers of two, whole warps that
     * are not a power of two (96), and sizes that are neither (100, 7;
     * nv_ptx takes the local algorithm there). */
    const size_t sizes[6] = {64, 128, 32, 96, 100, 7};
    for (unsigned s = 0; s < 6; ++s) {
      const size_t local = sizes[s], global = 2 * local;
      assert_int_equal(clEnqueueNDRangeKernel(clprim_context_queue(ctx), k, 1, NULL, &global,
                                              &local, 0, NULL, NULL), CL_SUCCESS);
      uint32_t got[256], got_sums[256];
      uint64_t got_args[4 * 256];
      test_read(ctx, out, global * 4, got);
      test_read(ctx, sums, global * 4, got_sums);
      test_read(ctx, args, global * 32, got_args);
      for (unsigned g = 0; g < 2; ++g) {
        uint32_t run = 0, total = 0, best = 0;
        uint64_t best_at = g * local;
        for (unsigned i = 0; i < local; ++i) {
          total += (g * local + i) % 5 + 1;
          const uint32_t key = (uint32_t)((g * local + i) * 7 % 13);
          if (key > best) best = key, best_at = g * local + i;
        }
        for (unsigned i = 0; i < local; ++i) {
          const size_t at = g * local + i;
          if (got[at] != run + 1000u * total || got_sums[at] != 3 * total)
            fail_msg("app kernel on %s, work-group %zu: item %zu scan %u (want %u), sum %u (want %u)",
                     clprim_path_name((clprim_path)p), local, at, got[at], run + 1000u * total,
                     got_sums[at], 3 * total);
          run += (g * local + i) % 5 + 1;
          const uint64_t *a = got_args + 4 * at;
          if (a[0] != best || a[1] != best_at || a[2] != best || a[3] != best_at)
            fail_msg("app kernel on %s, work-group %zu: item %zu arg-max (%llu, %llu) and "
                     "(%llu, %llu), want (%u, %llu)",
                     clprim_path_name((clprim_path)p), local, at, (unsigned long long)a[0],
                     (unsigned long long)a[1], (unsigned long long)a[2],
                     (unsigned long long)a[3], best, (unsigned long long)best_at);
        }
      }
    }
    clReleaseMemObject(out);
    clReleaseMemObject(sums);
    clReleaseMemObject(args);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    printf("app kernel on %s: passed\n", clprim_path_name((clprim_path)p));
    check_peers(ctx, p);
  }
  test_close_contexts(&t);
}

/* An app's own type and operator in clprim_device.h's work-group scan and
 * reduction (CLPRIM_DEFINE_WG_OP): affine maps x -> m x + c over uint
 * (mod 2^32), composed in order, which is associative but not commutative,
 * so an operand swapped or an element out of order changes the result. */
/* An app's operator: affine maps x -> m x + c over uint, a then b (not
 * commutative). */
#define APP_AFFINE_SOURCE                                                                          \
    "typedef struct { uint m, c; } affine;\n"                                                      \
    "affine affine_then(affine a, affine b, int p) {\n"                                            \
    "  (void)p;\n"                                                                                 \
    "  affine r = {a.m * b.m, b.m * a.c + b.c};\n"                                                 \
    "  return r;\n"                                                                                \
    "}\n"                                                                                          \
    "affine affine_identity(int p) {\n"                                                            \
    "  (void)p;\n"                                                                                 \
    "  affine r = {1u, 0u};\n"                                                                     \
    "  return r;\n"                                                                                \
    "}\n"                                                                                          \
    "CLPRIM_DEFINE_WG_OP(affine, affine, int, affine_then, affine_identity)\n"

static const char *app_op_source = APP_AFFINE_SOURCE
    "__kernel void app_op(__global const affine *in, __global affine *excl,\n"
    "                     __global affine *reduced, __global affine *totals) {\n"
    "  __local affine scratch[256];\n"
    "  const size_t i = get_global_id(0);\n"
    "  affine total;\n"
    "  excl[i] = clprim_wg_scan_excl_affine(in[i], scratch, &total, 0);\n"
    "  reduced[i] = clprim_wg_reduce_affine(in[i], scratch, 0);\n"
    "  totals[i] = total;\n"
    "}\n";

struct affine {
  uint32_t m, c;
};
static struct affine affine_then(struct affine a, struct affine b) {
  struct affine r = {a.m * b.m, b.m * a.c + b.c};
  return r;
}

static void test_embedding_op(void **state) {
  (void)state;
  struct test_contexts t;
  test_open_contexts(&t);
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = t.ctx[p];
    if (!ctx) continue;
    cl_program prog;
    cl_kernel k = app_kernel(ctx, p, app_op_source, "app_op", &prog);
    enum { MOST = 2 * 256 };
    struct affine host[MOST], excl[MOST], reduced[MOST], totals[MOST];
    for (unsigned i = 0; i < MOST; ++i)
      host[i].m = (uint32_t)test_rand() | 1u, host[i].c = (uint32_t)test_rand();
    cl_mem in = test_buffer(ctx, sizeof host, host), out[3];
    for (int o = 0; o < 3; ++o) out[o] = test_buffer(ctx, sizeof host, NULL);
    clSetKernelArg(k, 0, sizeof in, &in);
    for (int o = 0; o < 3; ++o) clSetKernelArg(k, (cl_uint)o + 1, sizeof out[o], &out[o]);
    /* Whole warps and not (96, 100, 7: nv_ptx takes the local algorithm
     * for sizes that are not a multiple of 32), up to the scratch's 256. */
    const size_t sizes[7] = {64, 128, 32, 96, 100, 7, 256};
    for (unsigned s = 0; s < 7; ++s) {
      const size_t local = sizes[s], global = 2 * local;
      if (local > ctx->info.max_work_group_size) continue;
      assert_int_equal(clEnqueueNDRangeKernel(clprim_context_queue(ctx), k, 1, NULL, &global,
                                              &local, 0, NULL, NULL), CL_SUCCESS);
      test_read(ctx, out[0], global * sizeof *host, excl);
      test_read(ctx, out[1], global * sizeof *host, reduced);
      test_read(ctx, out[2], global * sizeof *host, totals);
      for (unsigned g = 0; g < 2; ++g) {
        struct affine all = {1, 0};
        for (unsigned i = 0; i < local; ++i) all = affine_then(all, host[g * local + i]);
        struct affine run = {1, 0};
        for (unsigned i = 0; i < local; ++i) {
          const size_t at = g * local + i;
          if (excl[at].m != run.m || excl[at].c != run.c || reduced[at].m != all.m ||
              reduced[at].c != all.c || totals[at].m != all.m || totals[at].c != all.c)
            fail_msg("app operator on %s, work-group %zu, item %zu: scan (%u, %u) want (%u, %u), "
                     "reduce (%u, %u) and total (%u, %u) want (%u, %u)",
                     clprim_path_name((clprim_path)p), local, at, excl[at].m, excl[at].c, run.m,
                     run.c, reduced[at].m, reduced[at].c, totals[at].m, totals[at].c, all.m,
                     all.c);
          run = affine_then(run, host[at]);
        }
      }
    }
    clReleaseMemObject(in);
    for (int o = 0; o < 3; ++o) clReleaseMemObject(out[o]);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    printf("app operator on %s: passed\n", clprim_path_name((clprim_path)p));
  }
  test_close_contexts(&t);
}

/* The subgroup functions of CLPRIM_DEFINE_WG_OP, with the same affine
 * maps: each work-item writes its subgroup's reduction and its inclusive
 * and exclusive scans, and where it is (subgroup, lane, subgroup size), so
 * the host groups the lanes without knowing the device's mapping. Paths
 * without subgroups write sizes of 0. */
static const char *app_sg_source = APP_AFFINE_SOURCE
    "__kernel void app_sg_op(__global const affine *in, __global affine *incl,\n"
    "                        __global affine *excl, __global affine *reduced,\n"
    "                        __global uint *where) {\n"
    "  const size_t i = get_global_id(0);\n"
    "#ifdef CLPRIM_HAS_SUBGROUPS\n"
    "  __local affine scratch[CLPRIM_SG_OP_SCRATCH(256)];\n"
    "  incl[i] = clprim_sg_scan_incl_affine(in[i], scratch, 0);\n"
    "  excl[i] = clprim_sg_scan_excl_affine(in[i], scratch, 0);\n"
    "  reduced[i] = clprim_sg_reduce_affine(in[i], scratch, 0);\n"
    "  where[3 * i] = clprim_sg_id(), where[3 * i + 1] = clprim_sg_lane();\n"
    "  where[3 * i + 2] = clprim_sg_op_size();\n"
    "#else\n"
    "  where[3 * i + 2] = 0;\n"
    "#endif\n"
    "}\n";

static void test_embedding_sg_op(void **state) {
  (void)state;
  struct test_contexts t;
  test_open_contexts(&t);
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    clprim_context *ctx = t.ctx[p];
    if (!ctx) continue;
    cl_program prog;
    cl_kernel k = app_kernel(ctx, p, app_sg_source, "app_sg_op", &prog);
    enum { MOST = 2 * 256 };
    struct affine host[MOST], got[3][MOST];
    uint32_t where[3 * MOST];
    for (unsigned i = 0; i < MOST; ++i)
      host[i].m = (uint32_t)test_rand() | 1u, host[i].c = (uint32_t)test_rand();
    cl_mem in = test_buffer(ctx, sizeof host, host), out[3];
    for (int o = 0; o < 3; ++o) out[o] = test_buffer(ctx, sizeof host, NULL);
    cl_mem wbuf = test_buffer(ctx, sizeof where, NULL);
    clSetKernelArg(k, 0, sizeof in, &in);
    for (int o = 0; o < 3; ++o) clSetKernelArg(k, (cl_uint)o + 1, sizeof out[o], &out[o]);
    clSetKernelArg(k, 4, sizeof wbuf, &wbuf);
    int ran = 0;
    /* Whole warps and not (100, 7: a short last warp on nv_ptx). */
    const size_t sizes[6] = {64, 32, 96, 100, 7, 256};
    for (unsigned s = 0; s < 6; ++s) {
      const size_t local = sizes[s], global = 2 * local;
      if (local > ctx->info.max_work_group_size) continue;
      assert_int_equal(clEnqueueNDRangeKernel(clprim_context_queue(ctx), k, 1, NULL, &global,
                                              &local, 0, NULL, NULL), CL_SUCCESS);
      test_read(ctx, wbuf, 3 * global * 4, where);
      if (where[2] == 0) break; /* no subgroups on this path */
      ran = 1;
      for (int o = 0; o < 3; ++o) test_read(ctx, out[o], global * sizeof *host, got[o]);
      for (size_t at = 0; at < global; ++at) {
        /* The reference over at's subgroup: the work-items of its
         * work-group with its subgroup id, in lane order. */
        const size_t g0 = at / local * local;
        const uint32_t sg = where[3 * at], lane = where[3 * at + 1], size = where[3 * at + 2];
        struct affine lanes[256];
        unsigned found = 0;
        for (size_t j = g0; j < g0 + local; ++j)
          if (where[3 * j] == sg) {
            if (where[3 * j + 1] >= size || where[3 * j + 1] >= 256)
              fail_msg("app subgroup operator on %s, work-group %zu: lane %u of a subgroup of %u",
                       clprim_path_name((clprim_path)p), local, where[3 * j + 1], size);
            lanes[where[3 * j + 1]] = host[j], ++found;
          }
        if (found != size)
          fail_msg("app subgroup operator on %s, work-group %zu: subgroup %u has %u work-items, "
                   "size %u", clprim_path_name((clprim_path)p), local, sg, found, size);
        struct affine all = {1, 0}, before = {1, 0};
        for (unsigned l = 0; l < size; ++l) {
          if (l == lane) before = all;
          all = affine_then(all, lanes[l]);
        }
        const struct affine incl = affine_then(before, host[at]);
        if (got[0][at].m != incl.m || got[0][at].c != incl.c || got[1][at].m != before.m ||
            got[1][at].c != before.c || got[2][at].m != all.m || got[2][at].c != all.c)
          fail_msg("app subgroup operator on %s, work-group %zu, item %zu (subgroup %u, lane %u "
                   "of %u): inclusive (%u, %u) want (%u, %u), exclusive (%u, %u) want (%u, %u), "
                   "reduce (%u, %u) want (%u, %u)",
                   clprim_path_name((clprim_path)p), local, at, sg, lane, size, got[0][at].m,
                   got[0][at].c, incl.m, incl.c, got[1][at].m, got[1][at].c, before.m, before.c,
                   got[2][at].m, got[2][at].c, all.m, all.c);
      }
    }
    clReleaseMemObject(in), clReleaseMemObject(wbuf);
    for (int o = 0; o < 3; ++o) clReleaseMemObject(out[o]);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    printf("app subgroup operator on %s: %s\n", clprim_path_name((clprim_path)p),
           ran ? "passed" : "skipped (no subgroups)");
  }
  test_close_contexts(&t);
}

int main(void) {
  test_init("test_context");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names),         cmocka_unit_test(test_create_and_info),
      cmocka_unit_test(test_device_choice), cmocka_unit_test(test_paths),
      cmocka_unit_test(test_from_queue),    cmocka_unit_test(test_build_failure),
      cmocka_unit_test(test_last_error),    cmocka_unit_test(test_disk_cache),
      cmocka_unit_test(test_embedding),     cmocka_unit_test(test_embedding_op),
      cmocka_unit_test(test_embedding_sg_op), cmocka_unit_test(test_prebuild),
      cmocka_unit_test(test_events),        cmocka_unit_test(test_asynchrony),
      cmocka_unit_test(test_device_type),   cmocka_unit_test(test_tuning),
      cmocka_unit_test(test_tuning_file),
      cmocka_unit_test(test_tuning_documented),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
