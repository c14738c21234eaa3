/* heads.h: runs of equal consecutive keys, the mechanism of the runs
 * family (unique, run-length encoding, reduce-by-key): which elements start
 * or end a run.
 *
 * Two consecutive keys are in one run when they compare equal under ==, as
 * in CUB: -0.0 and +0.0 are one run, and a NaN equals nothing, so each NaN
 * is a run of its own. An edge of a given kind is a property of element i
 * given whether it equals its neighbours:
 *   RUN_HEAD              the first element of a run (i = 0 included);
 *   RUN_NONTRIVIAL_HEAD   the first element of a run longer than 1;
 *   RUN_NONTRIVIAL_TAIL   the last element of a run longer than 1.
 * Every run longer than 1 has exactly one nontrivial head and one nontrivial
 * tail, in the same order, so compacting both pairs them up. */
#ifndef CLPRIM_HEADS_H
#define CLPRIM_HEADS_H

#define RUN_HEAD 1
#define RUN_NONTRIVIAL_HEAD 2
#define RUN_NONTRIVIAL_TAIL 3

/* Whether consecutive keys a and b are in one run. */
#define CLPRIM_SAME_RUN(a, b) ((a) == (b))

/* The keys of a kernel that takes their type as an argument (operators.cl's
 * scan by key, one program for every key type): 4- or 8-byte integers (as
 * words: == is the same on signed and unsigned), float, double, or
 * RUN_KEYS_FLAGS, uint flags that are nonzero at a head. */
#define RUN_KEYS_32 0
#define RUN_KEYS_64 1
#define RUN_KEYS_FLOAT 2
#define RUN_KEYS_DOUBLE 3
#define RUN_KEYS_FLAGS 4

#ifdef __OPENCL_VERSION__
/* The edges of `kind` among up to 32 elements, one bit each: heads (the
 * element starts a run: the first element, or not in its predecessor's
 * run), same_next (in its successor's run), valid (below n), has_next (its
 * successor is below n). */
CLPRIM_INLINE uint clprim_run_edges(int kind, uint heads, uint same_next, uint valid,
                                    uint has_next) {
  const uint more = same_next & has_next;
  return valid & (kind == RUN_HEAD              ? heads
                  : kind == RUN_NONTRIVIAL_HEAD ? heads & more
                                                : ~heads & ~more);
}

/* Whether element i < n is an edge of `kind`; same_prev: it is in its
 * predecessor's run (ignored for i = 0), same_next: in its successor's
 * (ignored for i = n - 1). */
CLPRIM_INLINE int clprim_run_edge(int kind, ulong i, ulong n, int same_prev, int same_next) {
  return (int)clprim_run_edges(kind, i == 0 || !same_prev, same_next != 0, i < n, i + 1 < n);
}
#endif

#endif /* CLPRIM_HEADS_H */
