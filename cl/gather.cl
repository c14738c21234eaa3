/* gather.cl: gather and scatter by index (Thrust's gather and scatter),
 * for the gather family (src/gather.c). An element of any size moves as
 * `words` words of type WORD (uchar, ushort, uint, uint2 or uint4: the
 * widest that divides its size; every range starts at byte 0 of a buffer,
 * aligned for any of them). Indices are uint32, or uint64 where idx64 is
 * set (one program serves both: each loop is written for either, EACH
 * below). Every index is compared with the count of
 * the range it points into: one out of range is skipped, so no kernel
 * touches memory outside the ranges.
 *
 * Work: on GPU-shaped paths, teams of team_size work-items (the element's
 * words, at most the work-group) each move one element at a time, word w
 * by lane w, w + team_size, ... (an element's words are read and written
 * side by side), the teams striding over the elements; on the cpu path
 * (team_size 1, one work-item a work-group) a contiguous share of the
 * elements each.
 *
 * gather_check: the first position whose index is not below count, into
 * *first_bad (atomic_min; 0xFFFFFFFE stands for any position from there
 * on); the host fills it with 0xFFFFFFFF first and reads it after.
 * gather_move: out[i] = in[indices[i]].
 * scatter_xchg: out[indices[i]] = in[i] for elements of one 4-byte word
 * (or 8-byte, with -DXCHG64: cl_khr_int64_base_atomics), by atomic
 * exchange, so that duplicates leave one of their values whole.
 * scatter_mark, scatter_move: other elements, in two launches: mark
 * exchanges i into winners[indices[i]], so one i per target is left
 * there; move writes the elements whose i was left. Positions are taken
 * from `base` on (the host cuts scatters above 2^31 elements, the knob
 * gather.step, into such steps, so that i fits a uint).
 *
 * Build options: -DWORD (word type) -DWORD_BYTES (its size), -DXCHG64. */
#ifndef WORD
#define WORD uint
#define WORD_BYTES 4
#endif
#ifdef CLPRIM_CPU
#include "internal/cpu.h"
#endif

/* This work-item's elements of n: i = *first, += *step while i < *end;
 * *lane: its word in a team of team_size. */
CLPRIM_INLINE void elements(ulong n, uint team_size, ulong *first, ulong *end, ulong *step,
                            uint *lane) {
#ifdef CLPRIM_CPU
  cpu_share(n, 1, first, end);
  *step = 1, *lane = 0;
  (void)team_size;
#else
  const uint teams = (uint)get_local_size(0) / team_size, team = (uint)get_local_id(0) / team_size;
  *lane = (uint)get_local_id(0) % team_size;
  *first = (ulong)get_group_id(0) * teams + team;
  *step = (ulong)get_num_groups(0) * teams;
  *end = team < teams ? n : 0; /* the work-items left over when teams do not fill the group */
#endif
}

/* The loop over this work-item's elements i (from first to end by step),
 * with t = indices[base + i] loaded as IDX_T, then the statements given.
 * Each kernel writes it once per index width (and per word count where
 * one word is common): every copy has loads of one width and, with one
 * word, a constant stride, which compilers vectorise (PoCL's CPU code
 * then gathers 8 elements an instruction; 4 times as fast at 2^22). */
#define EACH(IDX_T, ...)                                                                           \
  for (ulong i = first; i < end; i += step) {                                                      \
    const ulong t = ((__global const IDX_T *)indices)[base + i];                                   \
    __VA_ARGS__                                                                                    \
  }

/* Elements i of in moved to j of out, W words each (the team's lanes). */
#define MOVE(j, i, W)                                                                              \
  for (uint w = lane; w < (W); w += team_size) out[(j) * (W) + w] = in[(i) * (W) + w];

#ifdef KERNEL_gather_check
__kernel void gather_check(__global const uint *indices, int idx64, ulong n, ulong count,
                           __global uint *first_bad) {
  ulong first, end, step, bad = ~(ulong)0;
  const ulong base = 0;
  uint lane;
  elements(n, 1, &first, &end, &step, &lane);
  /* This work-item's first bad position (the loop stops there). */
  if (idx64)
    EACH(ulong, if (t >= count) { bad = i, end = 0; })
  else
    EACH(uint, if (t >= count) { bad = i, end = 0; })
  if (bad != ~(ulong)0) atomic_min(first_bad, (uint)min(bad, (ulong)0xFFFFFFFEu));
}
#endif

#ifdef KERNEL_gather_move
__kernel void gather_move(__global const WORD *in, ulong in_count, __global const uint *indices,
                          int idx64, ulong n, uint words, uint team_size, __global WORD *out) {
  ulong first, end, step;
  const ulong base = 0;
  uint lane;
  elements(n, team_size, &first, &end, &step, &lane);
  /* An index out of range is skipped: out[i] keeps what it held. */
  if (words == 1 && idx64)
    EACH(ulong, if (t < in_count) MOVE(i, t, 1u))
  else if (words == 1)
    EACH(uint, if (t < in_count) MOVE(i, t, 1u))
  else if (idx64)
    EACH(ulong, if (t < in_count) MOVE(i, t, words))
  else
    EACH(uint, if (t < in_count) MOVE(i, t, words))
}
#endif

#ifdef KERNEL_scatter_xchg
#if WORD_BYTES == 4 || (WORD_BYTES == 8 && defined(XCHG64))
#if WORD_BYTES == 8
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define XCHG_T ulong
#define XCHG atom_xchg
#define AS_XCHG_T as_ulong
#else
#define XCHG_T uint
#define XCHG atomic_xchg
#define AS_XCHG_T as_uint
#endif
__kernel void scatter_xchg(__global const WORD *in, __global const uint *indices, int idx64,
                           ulong n, ulong out_count, __global WORD *out) {
  ulong first, end, step;
  const ulong base = 0;
  uint lane;
  elements(n, 1, &first, &end, &step, &lane);
  volatile __global XCHG_T *slots = (volatile __global XCHG_T *)out;
  if (idx64)
    EACH(ulong, if (t < out_count) XCHG(slots + t, AS_XCHG_T(in[i]));)
  else
    EACH(uint, if (t < out_count) XCHG(slots + t, AS_XCHG_T(in[i]));)
}
#endif
#endif

#ifdef KERNEL_scatter_mark
__kernel void scatter_mark(__global const uint *indices, int idx64, ulong base, ulong n,
                           ulong out_count, __global uint *winners) {
  ulong first, end, step;
  uint lane;
  elements(n, 1, &first, &end, &step, &lane);
  if (idx64)
    EACH(ulong, if (t < out_count) atomic_xchg(winners + t, (uint)i);)
  else
    EACH(uint, if (t < out_count) atomic_xchg(winners + t, (uint)i);)
}
#endif

#ifdef KERNEL_scatter_move
__kernel void scatter_move(__global const WORD *in, __global const uint *indices, int idx64,
                           ulong base, ulong n, uint words, uint team_size, ulong out_count,
                           __global const uint *winners, __global WORD *out) {
  ulong first, end, step;
  uint lane;
  elements(n, team_size, &first, &end, &step, &lane);
  in += base * words; /* the step's elements */
  /* Skipped: an index out of range, or a target that another i won. */
  if (words == 1 && idx64)
    EACH(ulong, if (t < out_count && winners[t] == (uint)i) MOVE(t, i, 1u))
  else if (words == 1)
    EACH(uint, if (t < out_count && winners[t] == (uint)i) MOVE(t, i, 1u))
  else if (idx64)
    EACH(ulong, if (t < out_count && winners[t] == (uint)i) MOVE(t, i, words))
  else
    EACH(uint, if (t < out_count && winners[t] == (uint)i) MOVE(t, i, words))
}
#endif
