/* clprim-bench --startup (startup.c). */
#ifndef CLPRIM_BENCH_STARTUP_H
#define CLPRIM_BENCH_STARTUP_H

#include "harness.h"

/* Whether --startup takes `name` (a family's first call, or all). */
int bench_startup_known(const char *name);

/* Prints " name" for each first call, in the registry's order. */
void bench_startup_list(void);

/* Per first call (or the one named), a cold and a warm child of `self`. */
void bench_startup(const char *self, const char *only);

/* The child (--startup-child DIR NAME): platforms, context creation with
 * the cache DIR, the first call, and a bare context, in ms on stdout. */
int bench_startup_child(const char *dir, const char *name);

#endif
