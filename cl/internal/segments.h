/* segments.h: segments given by begin and end offsets, checked on the
 * device before a segmented call writes anything (the host reads info[0]).
 *
 * The offsets are uint64 (ulong), or uint32 (uint) in a program built with
 * -DCLPRIM_OFFSETS_32=1 (the host's clprim__offsets_option; the option is
 * part of the program's key). Every kernel that takes offsets declares them
 * as CLPRIM_OFFSET and reads them with clprim_offset_at, the one load of an
 * offset, so both widths go through the same code.
 *
 * clprim_check_segment, for segment s: a bad one (begin > end or end > n)
 * sets info[0]; one longer than `longest` elements is listed in long_ids
 * (its index; info[1] counts them) and, where long_bounds is not NULL, its
 * begin and end go to long_bounds[2 k], [2 k + 1] at the same place k;
 * info[2] takes the length of the longest of the others (atomic_max).
 * segments_check runs it over every segment: each family that takes
 * segments builds it from its own file (-DKERNEL_segments_check); where no
 * segment can be long (longest ~0) long_ids and long_bounds are not used. */
#ifndef CLPRIM_SEGMENTS_H
#define CLPRIM_SEGMENTS_H

#if defined(CLPRIM_OFFSETS_32) && CLPRIM_OFFSETS_32
#define CLPRIM_OFFSET uint
#else
#define CLPRIM_OFFSET ulong
#endif

/* offsets[s], widened to ulong. */
CLPRIM_INLINE ulong clprim_offset_at(__global const CLPRIM_OFFSET *offsets, ulong s) {
  return (ulong)offsets[s];
}

CLPRIM_INLINE void clprim_check_segment(__global const CLPRIM_OFFSET *begins,
                                        __global const CLPRIM_OFFSET *ends, ulong s, ulong n,
                                        ulong longest, __global uint *info, __global uint *long_ids,
                                        __global ulong *long_bounds) {
  const ulong b = clprim_offset_at(begins, s), e = clprim_offset_at(ends, s);
  if (b > e || e > n) {
    atomic_or(&info[0], 1u);
    return;
  }
  if (e - b > longest) {
    const uint k = atomic_inc(&info[1]);
    long_ids[k] = (uint)s;
    if (long_bounds) long_bounds[2 * (ulong)k] = b, long_bounds[2 * (ulong)k + 1] = e;
  } else {
    atomic_max(&info[2], (uint)(e - b));
  }
}

#ifdef KERNEL_segments_check
__kernel void segments_check(__global const CLPRIM_OFFSET *begins,
                             __global const CLPRIM_OFFSET *ends, ulong segments, ulong n,
                             ulong longest, __global uint *info, __global uint *long_ids,
                             __global ulong *long_bounds) {
  const ulong s = get_global_id(0);
  if (s < segments) clprim_check_segment(begins, ends, s, n, longest, info, long_ids, long_bounds);
}
#endif

#endif /* CLPRIM_SEGMENTS_H */
