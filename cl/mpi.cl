/* mpi.cl: what the MPI library (src/mpi/) needs on the device that no
 * family has: a constant added to a range, which turns a rank's local scan
 * into its part of the global scan and local indices into global ones; and
 * a rank's share of the top-k picked from its candidates. Everything else
 * (counting into buckets, extraction, sort, merge, scan, select, top-k) is
 * the families' own kernels.
 *
 * Build options (every kernel the same, so that CPU runtimes, which build
 * the whole file, build it once per type): -DT=int|uint|long|ulong|float|
 * double, -DT_FLOAT=0|1, -DT_SIGNED=0|1, -DKEY_BITS=32|64. */
#include "internal/keys.h"

#ifdef KERNEL_mpi_add
__kernel void mpi_add(__global T *x, ulong n, T add) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
    x[i] += add;
}
#endif

/* A rank's share of the top-k from its candidates (src/mpi/selection.c): the
 * candidates at positions pos[0, n), their values to values (want & 1)
 * and their positions in the part plus offset, the global indices, to
 * indices32 (want & 2) or indices64 (want & 4). */
#ifdef KERNEL_mpi_pick
__kernel void mpi_pick(__global const T *cand, __global const uint *cand_index,
                       __global const uint *pos, ulong n, __global T *values,
                       __global uint *indices32, __global ulong *indices64, ulong offset,
                       uint want) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    const uint p = pos[i];
    if (want & 1u) values[i] = cand[p];
    if (want & 2u) indices32[i] = (uint)(cand_index[p] + offset);
    if (want & 4u) indices64[i] = cand_index[p] + offset;
  }
}
#endif
