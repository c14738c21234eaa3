/* Inputs that several rows files time on: uniform random elements, keys in
 * bins, and the distributions of the selection tests. Memory from
 * bench_malloc (a failure fails the family's setup). */
#ifndef CLPRIM_BENCH_DATA_H
#define CLPRIM_BENCH_DATA_H

#include "harness.h"

#include <stdint.h>

/* Random elements of type: integers in [0, 1000), floats in [0, 1). */
void *bench_random(struct bench *b, clprim_type type, size_t n, unsigned seed);

/* Keys in [0, bins): order 0 random, 1 sorted, 2 sorted with each key
 * swapped with its neighbour with probability 1/2 (partly sorted). */
uint32_t *bench_keys(struct bench *b, size_t n, size_t bins, int order);

/* The distributions of the selection tests (tests/test_nth_element.c) by
 * name; the first two run by default, all with --data all (float and
 * double only). */
extern const char *const bench_selection_names[];
int bench_selection_count(const struct bench *b, clprim_type type);

/* Distribution `data` in host and in (n elements of type; host holds
 * bench_random(b, type, n, 3) before the first call, which data 1 rounds),
 * then the read baseline of in. */
double bench_selection_load(struct bench *b, clprim_type type, unsigned char *host, cl_mem in,
                            size_t n, int data);

#endif
