/* atomics.h: compare-and-swap adds of floats and doubles, for global and
 * local memory (OpenCL 1.2 has atomic adds of integers only, and no generic
 * address space, so each function exists per address space, written once
 * here by CLPRIM_CAS_ADD). Each is a loop of atomic_cmpxchg starting from a
 * guess of 0 (a fresh bin), so no plain read races with the atomics.
 * Doubles need cl_khr_int64_base_atomics. The native adds (red.*) of
 * nv_ptx are in clprim_device.h. */
#ifndef CLPRIM_ATOMICS_H
#define CLPRIM_ATOMICS_H

#ifdef cl_khr_int64_base_atomics
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#define CLPRIM_CAS_ADD(SPACE, space, T, BITS_T, cmpxchg)                                          \
  CLPRIM_INLINE void cas_add_##T##_##space(SPACE T *p, T v) {                                    \
    volatile SPACE BITS_T *q = (volatile SPACE BITS_T *)p;                                       \
    BITS_T old = 0, seen;                                                                         \
    do {                                                                                          \
      seen = old;                                                                                 \
      old = cmpxchg(q, seen, as_##BITS_T(as_##T(seen) + v));                                      \
    } while (old != seen);                                                                        \
  }
CLPRIM_CAS_ADD(__global, global, float, uint, atomic_cmpxchg)
CLPRIM_CAS_ADD(__local, local, float, uint, atomic_cmpxchg)
#if defined(CLPRIM_HAS_FP64) && defined(cl_khr_int64_base_atomics)
CLPRIM_CAS_ADD(__global, global, double, ulong, atom_cmpxchg)
CLPRIM_CAS_ADD(__local, local, double, ulong, atom_cmpxchg)
#endif

#endif /* CLPRIM_ATOMICS_H */
