/* common.h: what clprim's test suites share: the seed, random data, one
 * context per path the device runs, buffers, and the small-size mode used
 * under Oclgrind (CLPRIM_TEST_SMALL=1). */
#ifndef CLPRIM_TEST_COMMON_H
#define CLPRIM_TEST_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the three headers above first. */
#include <cmocka.h>

#include "../src/internal.h"

/* Seeds the generator from $CLPRIM_TEST_SEED, else the clock, and prints it. */
void test_init(const char *suite);
uint64_t test_rand(void);
double test_uniform(void); /* [0, 1) */
/* Nonzero when $CLPRIM_TEST_SMALL is set (Oclgrind runs): small sizes only. */
int test_small(void);

/* One context per path: ctx[p] is NULL when the device does not run path p
 * (a message says it is skipped). ctx[CLPRIM_PATH_AUTO] is the default. */
struct test_contexts {
  clprim_context *ctx[CLPRIM_PATH_COUNT];
};
void test_open_contexts(struct test_contexts *t);
/* The suites of families with CPU-shaped kernels call it first: their
 * contexts include path cpu. Elsewhere the cpu path runs the kernels of
 * another path (clprim.h) and those of the engines it shares (tested in
 * their suites), and test_open_contexts leaves it out unless
 * CLPRIM_TEST_CPU_PATH=1. */
void test_with_cpu_path(void);
/* Whether CLPRIM_TEST_PATH names a path other than `path` (tests run that
 * one alone). */
int test_path_excluded(unsigned path);
void test_close_contexts(struct test_contexts *t);
/* The suites' contexts, opened by test_setup and closed by test_teardown
 * (cmocka group fixtures: cmocka_run_group_tests(tests, test_setup,
 * test_teardown)). */
extern struct test_contexts contexts;
/* Failures of a loop of cases: test_report prints the first ones and
 * counts them all; test_report_end fails the test if any was reported. */
void test_report(const char *fmt, ...);
void test_report_end(void);
/* Whether path p's context is absent, or is AUTO and the same as the
 * path it chose (tested under that path); the name of ctx's path. */
int test_skip_path(unsigned p);
const char *test_path_of(const clprim_context *ctx);
int test_setup(void **state);
/* Knobs ("family.knob=value,...") that test_setup sets on the suite's
 * contexts (clprim__tune) after opening them: a suite's main sets it from an argument, so that ctest can
 * run a suite a second time on a rare path reached at test sizes. */
void test_tune(const char *assignments);
int test_teardown(void **state);
/* Whether ctx's device can allocate a buffer of `largest` bytes and hold
 * `total` bytes in all; prints "<what> on <path>: skipped (...)" if not. */
int test_has_room(clprim_context *ctx, size_t largest, size_t total, const char *what);
/* Whether ctx's device has type (double needs fp64); prints a skip if not. */
int test_has_type(clprim_context *ctx, clprim_type type);

cl_mem test_buffer(clprim_context *ctx, size_t bytes, const void *host);
/* A segmented call's offsets: pad elements of offset_type (CLPRIM_UINT32
 * or CLPRIM_UINT64) with every bit set, which no call may read (pass
 * clprim_buf_at(buffer, pad)), then the count offsets narrowed to it. */
cl_mem test_offset_buffer(clprim_context *ctx, clprim_type offset_type, const uint64_t *offsets,
                          size_t count, size_t pad);
/* The offset types of the segmented calls (clprim_type_name names them). */
#define TEST_OFFSET_TYPES 2
extern const clprim_type test_offset_type[TEST_OFFSET_TYPES];
void test_read(clprim_context *ctx, cl_mem buf, size_t bytes, void *host);
void test_write(clprim_context *ctx, cl_mem buf, size_t bytes, const void *host);
/* Element i of the uint32 buffer becomes first + step * i (mod 2^32), by a
 * kernel of the test's own (NVIDIA's clEnqueueFillBuffer fails past 4 GiB);
 * 64 elements are read back to check. */
void test_fill_u32(clprim_context *ctx, cl_mem buf, size_t n, cl_uint first, cl_uint step);
/* Element i of a uint32 buffer (one read). */
cl_uint test_read_u32(clprim_context *ctx, cl_mem buf, size_t i);
/* n random elements of type: integers over their whole range when wide is
 * set, else small (so sums stay exact); floats in [-1, 1). */
void test_random(clprim_type type, void *data, size_t n, int wide);
/* Element i of data as the selection calls order it, an unsigned key (a
 * host copy of cl/internal/keys.h's order, written on its own so that the
 * tests do not share the library's mistakes): -0.0 equals +0.0, every NaN is
 * one key above +inf. */
uint64_t test_order_key(clprim_type type, const void *data, size_t i);
/* An element's order key and its index, the selection and top-k
 * references' unit; qsort orders: by key ascending or descending, equal
 * keys by index (ties to the lowest index), or by index alone. */
struct test_keyed {
  uint64_t key, index;
};
int test_by_key_asc(const void *a, const void *b);
int test_by_key_desc(const void *a, const void *b);
int test_by_index(const void *a, const void *b);
/* Element i of a float / double array as a double; of an integer array as
 * its 64-bit pattern (int32 sign-extended). */
double test_value_f(clprim_type type, const void *data, size_t i);

uint64_t test_value_u(clprim_type type, const void *data, size_t i);

/* Exact float / double sums (CLPRIM_EXACT). test_exact_reference: the reference,
 * written apart from the device's method: the positive and the negative
 * elements added into two big integers, the smaller taken from the larger,
 * rounded once by C's own conversion; its bits (float's zero-extended).
 * test_nan_bits: whether such bits are a NaN. test_exact_input: random
 * data of each kind (test_exact_kind_name names them). */
uint64_t test_exact_reference(clprim_type type, const void *data, size_t n);
int test_nan_bits(clprim_type type, uint64_t bits);
enum test_exact_kind {
  TEST_EX_UNIFORM,
  TEST_EX_WIDE,
  TEST_EX_CANCEL,
  TEST_EX_SUBNORMAL,
  TEST_EX_HUGE,
  TEST_EX_KINDS
};
extern const char *const test_exact_kind_name[TEST_EX_KINDS];
void test_exact_input(clprim_type type, void *data, size_t n, enum test_exact_kind kind);
/* Swaps elements i and j (of `size` bytes, at most 8) of the array p. */
void test_swap(void *p, size_t size, size_t i, size_t j);
/* A buffer of `bytes` in another OpenCL context on ctx's device (the calls
 * must answer CL_INVALID_CONTEXT); the buffer holds that context, so
 * clReleaseMemObject frees both. */
cl_mem test_foreign_buffer(clprim_context *ctx, size_t bytes);

#define TEST_OK(expr)                                                                              \
  do {                                                                                             \
    int test_ok_status_ = (int)(expr);                                                             \
    if (test_ok_status_ != CLPRIM_SUCCESS)                                                         \
      fail_msg("%s returned %s", #expr, clprim_status_name(test_ok_status_));                      \
  } while (0)
#define TEST_STATUS(expected, expr)                                                                \
  do {                                                                                             \
    int test_got_status_ = (int)(expr);                                                            \
    if (test_got_status_ != (int)(expected))                                                       \
      fail_msg("%s returned %s, expected %s", #expr, clprim_status_name(test_got_status_),         \
               clprim_status_name(expected));                                                      \
  } while (0)

/* expr returns `expected` and leaves a last-error text on ctx that holds
 * `part` (the argument or flag it names). */
#define TEST_TEXT(ctx, expected, expr, part)                                                       \
  do {                                                                                             \
    TEST_STATUS(expected, expr);                                                                   \
    test_text_has((ctx), (part), #expr);                                                           \
  } while (0)
void test_text_has(clprim_context *ctx, const char *part, const char *what);
/* expr succeeds and leaves the text "". */
#define TEST_OK_NO_TEXT(ctx, expr)                                                                 \
  do {                                                                                             \
    TEST_OK(expr);                                                                                 \
    test_text_has((ctx), NULL, #expr);                                                             \
  } while (0)
/* An image buffer: at + n + TEST_PAD elements of es bytes, n elements of
 * data (NULL: none) from element `at`, the byte TEST_SENTINEL in every
 * other byte; its host image (malloc) in *img. A suite writes what a call
 * should leave into the image and compares the whole buffer with it
 * (test_compare_image: the first element that differs is reported with
 * desc and which, through test_report). */
#define TEST_PAD 5
#define TEST_SENTINEL 0xA5u
cl_mem test_image_buffer(clprim_context *ctx, size_t at, size_t n, size_t es, const void *data,
                         unsigned char **img);
void test_compare_image(clprim_context *ctx, const char *desc, const char *which, cl_mem buf,
                        const unsigned char *want, size_t bytes, size_t es);
/* A buffer of `bytes` bytes of a fixed pattern, and a check that a buffer
 * still holds it (a refused call wrote nothing). */
cl_mem test_pattern(clprim_context *ctx, size_t bytes);
void test_pattern_intact(clprim_context *ctx, cl_mem buf, size_t bytes, const char *what);
/* The suites' test_error_texts declare with it: `bytes` (4096), buffers a,
 * b, o and o2 of that many bytes of the pattern, their whole ranges A, B, O
 * and O2, NONE (no buffer), and the statuses INVALID and SMALL; and give
 * the buffers back with TEST_TEXT_BUFFERS_FREE(). */
#define TEST_TEXT_BUFFERS(ctx)                                                                     \
  const size_t bytes = 4096;                                                                       \
  cl_mem a = test_pattern((ctx), bytes), b = test_pattern((ctx), bytes),                           \
         o = test_pattern((ctx), bytes), o2 = test_pattern((ctx), bytes);                          \
  const clprim_buffer A = clprim_buf(a), B = clprim_buf(b), O = clprim_buf(o),                     \
                      O2 = clprim_buf(o2), NONE = clprim_buf(NULL);                                \
  const clprim_status INVALID = CLPRIM_ERROR_INVALID_ARGUMENT,                                     \
                      SMALL = CLPRIM_ERROR_BUFFER_TOO_SMALL;                                       \
  (void)bytes, (void)A, (void)B, (void)O, (void)O2, (void)NONE, (void)INVALID, (void)SMALL
#define TEST_TEXT_BUFFERS_FREE()                                                                   \
  (clReleaseMemObject(a), clReleaseMemObject(b), clReleaseMemObject(o), clReleaseMemObject(o2))

/* The six cmocka tests test_int32 ... test_double, each calling
 * test_type(type): the suites that test every element type alike. */
#define TEST_EVERY_TYPE                                                                            \
  static void test_int32(void **state) { (void)state, test_type(CLPRIM_INT32); }                  \
  static void test_uint32(void **state) { (void)state, test_type(CLPRIM_UINT32); }                \
  static void test_int64(void **state) { (void)state, test_type(CLPRIM_INT64); }                  \
  static void test_uint64(void **state) { (void)state, test_type(CLPRIM_UINT64); }                \
  static void test_float(void **state) { (void)state, test_type(CLPRIM_FLOAT); }                  \
  static void test_double(void **state) { (void)state, test_type(CLPRIM_DOUBLE); }

#endif
