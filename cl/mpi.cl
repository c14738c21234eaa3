/* mpi.cl: what the MPI library (src/mpi.c) needs on the device that no
 * family has: a constant added to a range, which turns a rank's local scan
 * into its part of the global scan and local indices into global ones.
 * Everything else (counting into buckets, extraction, sort, scan, select,
 * top-k) is the families' own kernels.
 *
 * Build options: -DT=int|uint|long|ulong|float|double. */
#ifndef T
#define T uint
#endif

#ifdef KERNEL_mpi_add
__kernel void mpi_add(__global T *x, ulong n, T add) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
    x[i] += add;
}
#endif
