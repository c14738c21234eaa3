/* tile.h: loads and stores of 4 consecutive elements, the unit in which
 * kernels move tiles (rows of work-group-size 4-vectors, so a warp touches
 * consecutive 16-byte vectors). `first` is a multiple of 4 from a 16-byte
 * aligned base; a vector wholly below n moves with one aligned vector
 * access (ld/st.global.v4 on NVIDIA: vload4 only promises element
 * alignment and compiles to scalar loads), the last partial one element by
 * element. CLPRIM_TILE_IO(T) defines load4_T, and load4_full_T for callers
 * that know the whole vector is below n: a kernel that checks once per tile
 * (`full ? load4_full_T : load4_T`) keeps the per-vector bounds tests out of
 * its full tiles, which measured faster (scan). CLPRIM_STORE4 stores a whole
 * vector. (scan.cl moves its partial tiles element by element: through
 * load4_T, PoCL 5's khr_subgroups path scanned them wrong and Oclgrind
 * 21.10 crashed in its uninitialised-value check.) */
#ifndef CLPRIM_TILE_H
#define CLPRIM_TILE_H

/* Oclgrind (the local path in the tests) flags a vector built from scalars
 * and stored through a vector pointer as uninitialised (its issue #126), so
 * other paths store with vstore4. */
#ifdef CLPRIM_PATH_NV_PTX
#define CLPRIM_STORE4(T, v, out, first) (((__global CLPRIM_CAT(T, 4) *)(out))[(first) / 4] = (v))
#else
#define CLPRIM_STORE4(T, v, out, first) vstore4((v), (first) / 4, (out))
#endif

#define CLPRIM_TILE_IO(T)                                                                         \
  /* in[first .. first + 3], all below n: one aligned vector load. */                            \
  CLPRIM_INLINE CLPRIM_CAT(T, 4) load4_full_##T(__global const T *in, ulong first) {            \
    return ((__global const CLPRIM_CAT(T, 4) *)in)[first / 4];                                    \
  }                                                                                               \
  /* in[first .. first + 3], zeros past n. */                                  \
  CLPRIM_INLINE CLPRIM_CAT(T, 4) load4_##T(__global const T *in, ulong n, ulong first) {         \
    if (first + 4 <= n) return load4_full_##T(in, first);                                        \
    CLPRIM_CAT(T, 4) x = (CLPRIM_CAT(T, 4))(0);                                                  \
    if (first < n) x.s0 = in[first];                                                              \
    if (first + 1 < n) x.s1 = in[first + 1];                                                      \
    if (first + 2 < n) x.s2 = in[first + 2];                                                      \
    return x;                                                                                     \
  }
CLPRIM_FOR_EACH_TYPE(CLPRIM_TILE_IO)
CLPRIM_TILE_IO(uchar) /* flags */

#endif /* CLPRIM_TILE_H */
