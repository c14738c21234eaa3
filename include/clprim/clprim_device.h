/*
 * clprim_device.h: clprim's portable subgroup operations, in OpenCL C.
 *
 * Used by every clprim kernel, and meant to be embedded in applications'
 * kernels too: get this text with clprim_device_source() and the build
 * options for the device's path with clprim_context_device_options().
 *
 * Exactly one path is selected by a build option:
 *   -DCLPRIM_PATH_NV_PTX        inline PTX (vote/shfl) on NVIDIA; add
 *                               -DCLPRIM_NV_SYNC=1 on compute capability >= 7.0
 *                               (vote.sync/shfl.sync), 0 for Kepler-Pascal
 *   -DCLPRIM_PATH_KHR_BALLOT    cl_khr_subgroups + cl_khr_subgroup_ballot
 *   -DCLPRIM_PATH_KHR_SUBGROUPS cl_khr_subgroups (scans and reductions)
 *   -DCLPRIM_PATH_LOCAL         (or none) local memory and barriers only
 *
 * What each path defines (T is one of int uint long ulong float double; the
 * double forms exist when cl_khr_fp64 does):
 *   CLPRIM_HAS_SUBGROUPS (all but local):
 *     clprim_sg_size(), clprim_sg_lane(), clprim_sg_id(), clprim_sg_count()
 *     T clprim_sg_reduce_add_T(T), clprim_sg_reduce_min_T, clprim_sg_reduce_max_T
 *     T clprim_sg_scan_incl_add_T(T), clprim_sg_scan_excl_add_T(T)
 *     T clprim_sg_broadcast_T(T x, uint lane)   (lane uniform in the subgroup)
 *   CLPRIM_HAS_BALLOT (nv_ptx, khr_ballot):
 *     uint clprim_sg_ballot(int pred): the 32-lane word of the subgroup ballot
 *       that holds this lane's bit (bit clprim_sg_lane() % 32)
 *     uint clprim_sg_lanemask_lt(): bits of the lanes below this one, same word
 *     uint clprim_sg_same_bit(uint x, uint b): the lanes of that word whose
 *       bit b of x equals this lane's (ANDed over the bits of a small value:
 *       the lanes with an equal value, as clprim_sg_match_any, and faster
 *       for a few bits on NVIDIA)
 *   CLPRIM_HAS_SHUFFLE (nv_ptx): T clprim_sg_shuffle_T(T x, uint lane),
 *     clprim_sg_shuffle_xor_T(T x, uint mask), clprim_sg_shuffle_up_T(T x, uint d)
 *   CLPRIM_HAS_MATCH (nv_ptx, CLPRIM_NV_SYNC=1): uint clprim_sg_match_any(uint x),
 *     the lanes of the warp whose x equals this lane's (every lane calls);
 *     clprim_sg_sync(), a barrier of the warp that also orders its local
 *     memory accesses (bar.warp.sync)
 *   CLPRIM_HAS_RED (nv_ptx, CLPRIM_NV_SYNC=1): adds to memory that return
 *     nothing, clprim_red_add_global_T (T uint ulong float double) and
 *     clprim_red_add_local_T (T float double)
 *   Every path: clprim_fence_global(), a global memory fence
 *   Every path (work-group level, 1-D work-groups of any size; on nv_ptx a
 *   size that is not a multiple of 32 takes the local path's algorithm):
 *     T clprim_wg_scan_excl_add_T(T x, __local T *scratch, T *total)
 *     T clprim_wg_reduce_add_T(T x, __local T *scratch)
 *     void clprim_wg_reduce_argmax_K(K *key, ulong *index, __local K *keys,
 *                                    __local ulong *indices)   (K uint, ulong)
 *       the largest key of the work-group and the lowest index that holds
 *       it, to *key and *index in every work-item (an arg-min passes
 *       complemented keys); int clprim_argmax_before_K(ka, ia, kb, ib) is
 *       its order: pair a wins over pair b
 *   scratch (and keys, indices) hold get_local_size(0) elements
 *   (CLPRIM_WG_SCRATCH(wg) of them); every work-item of the work-group must
 *   call, and the functions contain barriers, so scratch may be reused right
 *   after they return.
 *   Any type and operator: CLPRIM_DEFINE_WG_OP (at the end of this file)
 *   defines the work-group reduction and exclusive scan for a type and an
 *   associative function of your own, and on paths with subgroups the
 *   subgroup reduction and scans too.
 *   Build option -DCLPRIM_WG_SIZE=n: every kernel of the program that calls
 *   them runs work-groups of n work-items (as reqd_work_group_size); on
 *   nv_ptx clprim_sg_count() and these functions then take n as a constant.
 */
#ifndef CLPRIM_DEVICE_H
#define CLPRIM_DEVICE_H

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define CLPRIM_HAS_FP64 1
#endif

#define CLPRIM_INLINE static inline
#define CLPRIM_WG_SCRATCH(wg) (wg)
/* Pastes two tokens after expanding them, to name a typed operation:
 * CLPRIM_CAT(clprim_sg_reduce_add_, T), CLPRIM_CAT(T, 4). */
#define CLPRIM_CAT_(a, b) a##b
#define CLPRIM_CAT(a, b) CLPRIM_CAT_(a, b)

/* Calls M(T) for every element type the device has. */
#ifdef CLPRIM_HAS_FP64
#define CLPRIM_FOR_EACH_TYPE(M) M(int) M(uint) M(long) M(ulong) M(float) M(double)
#else
#define CLPRIM_FOR_EACH_TYPE(M) M(int) M(uint) M(long) M(ulong) M(float)
#endif

/* ----------------------------------------------------------------- nv_ptx */
#if defined(CLPRIM_PATH_NV_PTX)
#define CLPRIM_HAS_SUBGROUPS 1
#define CLPRIM_HAS_BALLOT 1
#define CLPRIM_HAS_SHUFFLE 1
#ifndef CLPRIM_NV_SYNC
#define CLPRIM_NV_SYNC 1
#endif

/* A warp is 32 consecutive work-items of a 1-D work-group. */
CLPRIM_INLINE uint clprim_sg_size(void) { return 32u; }
CLPRIM_INLINE uint clprim_sg_lane(void) { return (uint)get_local_id(0) & 31u; }
CLPRIM_INLINE uint clprim_sg_id(void) { return (uint)get_local_id(0) >> 5; }
#ifdef CLPRIM_WG_SIZE
CLPRIM_INLINE uint clprim_sg_count(void) { return (CLPRIM_WG_SIZE + 31u) >> 5; }
#else
CLPRIM_INLINE uint clprim_sg_count(void) { return ((uint)get_local_size(0) + 31u) >> 5; }
#endif

CLPRIM_INLINE uint clprim_sg_ballot(int pred) {
  uint r;
#if CLPRIM_NV_SYNC
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.s32 p, %1, 0;\n\t"
               "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t}"
               : "=r"(r) : "r"(pred));
#else
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.s32 p, %1, 0;\n\t"
               "vote.ballot.b32 %0, p;\n\t}"
               : "=r"(r) : "r"(pred));
#endif
  return r;
}
CLPRIM_INLINE uint clprim_sg_lanemask_lt(void) { return (1u << clprim_sg_lane()) - 1u; }
/* One ballot and a predicated complement (H100, radix sort's 8 digit bits
 * per key: 4% faster than clprim_sg_ballot and a select). */
CLPRIM_INLINE uint clprim_sg_same_bit(uint x, uint b) {
  uint r;
#if CLPRIM_NV_SYNC
  asm volatile("{\n\t.reg .pred p;\n\tand.b32 %0, %1, %2;\n\tsetp.ne.u32 p, %0, 0;\n\t"
               "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t@!p not.b32 %0, %0;\n\t}"
               : "=r"(r) : "r"(x), "r"(1u << b));
#else
  asm volatile("{\n\t.reg .pred p;\n\tand.b32 %0, %1, %2;\n\tsetp.ne.u32 p, %0, 0;\n\t"
               "vote.ballot.b32 %0, p;\n\t@!p not.b32 %0, %0;\n\t}"
               : "=r"(r) : "r"(x), "r"(1u << b));
#endif
  return r;
}

#if CLPRIM_NV_SYNC
#define CLPRIM_NV_SHFL(mode, c) "shfl.sync." mode ".b32 %0, %1, %2, " c ", 0xffffffff;"
#else
#define CLPRIM_NV_SHFL(mode, c) "shfl." mode ".b32 %0, %1, %2, " c ";"
#endif
CLPRIM_INLINE uint clprim_nv_shfl_idx(uint x, uint lane) {
  uint r;
  asm volatile(CLPRIM_NV_SHFL("idx", "0x1f") : "=r"(r) : "r"(x), "r"(lane));
  return r;
}
CLPRIM_INLINE uint clprim_nv_shfl_xor(uint x, uint mask) {
  uint r;
  asm volatile(CLPRIM_NV_SHFL("bfly", "0x1f") : "=r"(r) : "r"(x), "r"(mask));
  return r;
}
CLPRIM_INLINE uint clprim_nv_shfl_up(uint x, uint d) {
  uint r;
  asm volatile(CLPRIM_NV_SHFL("up", "0") : "=r"(r) : "r"(x), "r"(d));
  return r;
}
CLPRIM_INLINE uint clprim_nv_shfl_down(uint x, uint d) {
  uint r;
  asm volatile(CLPRIM_NV_SHFL("down", "0x1f") : "=r"(r) : "r"(x), "r"(d));
  return r;
}

/* 32-bit types move in one shuffle, 64-bit types in two. */
#define CLPRIM_NV_SHUFFLES32(T)                                                                    \
  CLPRIM_INLINE T clprim_sg_shuffle_##T(T x, uint l) { return as_##T(clprim_nv_shfl_idx(as_uint(x), l)); } \
  CLPRIM_INLINE T clprim_sg_shuffle_xor_##T(T x, uint m) {                                         \
    return as_##T(clprim_nv_shfl_xor(as_uint(x), m));                                              \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_shuffle_up_##T(T x, uint d) { return as_##T(clprim_nv_shfl_up(as_uint(x), d)); }
#define CLPRIM_NV_SHUFFLES64(T)                                                                    \
  CLPRIM_INLINE T clprim_sg_shuffle_##T(T x, uint l) {                                             \
    uint2 v = as_uint2(x);                                                                         \
    v.x = clprim_nv_shfl_idx(v.x, l);                                                              \
    v.y = clprim_nv_shfl_idx(v.y, l);                                                              \
    return as_##T(v);                                                                              \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_shuffle_xor_##T(T x, uint m) {                                         \
    uint2 v = as_uint2(x);                                                                         \
    v.x = clprim_nv_shfl_xor(v.x, m);                                                              \
    v.y = clprim_nv_shfl_xor(v.y, m);                                                              \
    return as_##T(v);                                                                              \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_shuffle_up_##T(T x, uint d) {                                          \
    uint2 v = as_uint2(x);                                                                         \
    v.x = clprim_nv_shfl_up(v.x, d);                                                               \
    v.y = clprim_nv_shfl_up(v.y, d);                                                               \
    return as_##T(v);                                                                              \
  }
CLPRIM_NV_SHUFFLES32(int)
CLPRIM_NV_SHUFFLES32(uint)
CLPRIM_NV_SHUFFLES32(float)
CLPRIM_NV_SHUFFLES64(long)
CLPRIM_NV_SHUFFLES64(ulong)
#ifdef CLPRIM_HAS_FP64
CLPRIM_NV_SHUFFLES64(double)
#endif

/* Butterfly reductions leave the result in every lane; Kogge-Stone scans. */
#define CLPRIM_NV_SG_OPS(T)                                                                        \
  CLPRIM_INLINE T clprim_sg_reduce_add_##T(T x) {                                                  \
    for (uint m = 16; m > 0; m >>= 1) x += clprim_sg_shuffle_xor_##T(x, m);                        \
    return x;                                                                                      \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_reduce_min_##T(T x) {                                                  \
    for (uint m = 16; m > 0; m >>= 1) x = min(x, clprim_sg_shuffle_xor_##T(x, m));                 \
    return x;                                                                                      \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_reduce_max_##T(T x) {                                                  \
    for (uint m = 16; m > 0; m >>= 1) x = max(x, clprim_sg_shuffle_xor_##T(x, m));                 \
    return x;                                                                                      \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_scan_incl_add_##T(T x) {                                               \
    uint lane = clprim_sg_lane();                                                                  \
    for (uint d = 1; d < 32; d <<= 1) {                                                            \
      T y = clprim_sg_shuffle_up_##T(x, d);                                                        \
      if (lane >= d) x += y;                                                                       \
    }                                                                                              \
    return x;                                                                                      \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_scan_excl_add_##T(T x) {                                               \
    T incl = clprim_sg_scan_incl_add_##T(x);                                                       \
    T prev = clprim_sg_shuffle_up_##T(incl, 1);                                                    \
    return clprim_sg_lane() == 0 ? (T)0 : prev;                                                    \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_broadcast_##T(T x, uint lane) { return clprim_sg_shuffle_##T(x, lane); }
CLPRIM_FOR_EACH_TYPE(CLPRIM_NV_SG_OPS)

/* Memory: membar.gl for clprim_fence_global. With CLPRIM_NV_SYNC (compute
 * capability >= 7.0) also match.any and reductions to memory that return
 * nothing (red: the atomic unit sends no old value back; .f64 needs 6.0). */
#define CLPRIM_NV_FENCE_GLOBAL() asm volatile("membar.gl;" ::: "memory")
#if CLPRIM_NV_SYNC
#define CLPRIM_HAS_MATCH 1
#define CLPRIM_HAS_RED 1
CLPRIM_INLINE uint clprim_sg_match_any(uint x) {
  uint r;
  asm volatile("match.any.sync.b32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(x));
  return r;
}
CLPRIM_INLINE void clprim_sg_sync(void) { asm volatile("bar.warp.sync 0xffffffff;" ::: "memory"); }
CLPRIM_INLINE void clprim_red_add_global_uint(__global uint *p, uint v) {
  asm volatile("red.global.add.u32 [%0], %1;" : : "l"((ulong)p), "r"(v) : "memory");
}
CLPRIM_INLINE void clprim_red_add_global_ulong(__global ulong *p, ulong v) {
  asm volatile("red.global.add.u64 [%0], %1;" : : "l"((ulong)p), "l"(v) : "memory");
}
CLPRIM_INLINE void clprim_red_add_global_float(__global float *p, float v) {
  asm volatile("red.global.add.f32 [%0], %1;" : : "l"((ulong)p), "f"(v) : "memory");
}
/* Local addresses are 32-bit shared-window addresses. */
CLPRIM_INLINE void clprim_red_add_local_float(__local float *p, float v) {
  asm volatile("red.shared.add.f32 [%0], %1;" : : "r"((uint)(ulong)p), "f"(v) : "memory");
}
#ifdef CLPRIM_HAS_FP64
CLPRIM_INLINE void clprim_red_add_global_double(__global double *p, double v) {
  asm volatile("red.global.add.f64 [%0], %1;" : : "l"((ulong)p), "d"(v) : "memory");
}
CLPRIM_INLINE void clprim_red_add_local_double(__local double *p, double v) {
  asm volatile("red.shared.add.f64 [%0], %1;" : : "r"((uint)(ulong)p), "d"(v) : "memory");
}
#endif
#endif

/* ------------------------------------------------ khr_ballot, khr_subgroups */
#elif defined(CLPRIM_PATH_KHR_BALLOT) || defined(CLPRIM_PATH_KHR_SUBGROUPS)
#define CLPRIM_HAS_SUBGROUPS 1
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

CLPRIM_INLINE uint clprim_sg_size(void) { return get_sub_group_size(); }
CLPRIM_INLINE uint clprim_sg_lane(void) { return get_sub_group_local_id(); }
CLPRIM_INLINE uint clprim_sg_id(void) { return get_sub_group_id(); }
CLPRIM_INLINE uint clprim_sg_count(void) { return get_num_sub_groups(); }

#define CLPRIM_KHR_SG_OPS(T)                                                                       \
  CLPRIM_INLINE T clprim_sg_reduce_add_##T(T x) { return sub_group_reduce_add(x); }                \
  CLPRIM_INLINE T clprim_sg_reduce_min_##T(T x) { return sub_group_reduce_min(x); }                \
  CLPRIM_INLINE T clprim_sg_reduce_max_##T(T x) { return sub_group_reduce_max(x); }                \
  CLPRIM_INLINE T clprim_sg_scan_incl_add_##T(T x) { return sub_group_scan_inclusive_add(x); }     \
  CLPRIM_INLINE T clprim_sg_scan_excl_add_##T(T x) { return sub_group_scan_exclusive_add(x); }     \
  CLPRIM_INLINE T clprim_sg_broadcast_##T(T x, uint lane) { return sub_group_broadcast(x, lane); }
CLPRIM_FOR_EACH_TYPE(CLPRIM_KHR_SG_OPS)

#if defined(CLPRIM_PATH_KHR_BALLOT)
#define CLPRIM_HAS_BALLOT 1
#pragma OPENCL EXTENSION cl_khr_subgroup_ballot : enable
CLPRIM_INLINE uint clprim_uint4_word(uint4 v, uint w) {
  return w == 0 ? v.s0 : w == 1 ? v.s1 : w == 2 ? v.s2 : v.s3;
}
CLPRIM_INLINE uint clprim_sg_ballot(int pred) {
  return clprim_uint4_word(sub_group_ballot(pred), get_sub_group_local_id() >> 5);
}
/* The lanes below this one in its 32-lane word, from the lane id (PoCL 5
 * has no get_sub_group_lt_mask). */
CLPRIM_INLINE uint clprim_sg_lanemask_lt(void) {
  return (1u << (get_sub_group_local_id() & 31u)) - 1u;
}
CLPRIM_INLINE uint clprim_sg_same_bit(uint x, uint b) {
  const uint set = (x >> b) & 1u, word = clprim_sg_ballot((int)set);
  return set ? word : ~word;
}
#endif

/* ------------------------------------------------------------------ local */
#else
#ifndef CLPRIM_PATH_LOCAL
#define CLPRIM_PATH_LOCAL 1
#endif
#endif

/* ------------------------------------------------------ memory, any path */
/* Orders this work-item's global stores and loads before the ones after it
 * (the publish / observe step of a look-back). */
#ifdef CLPRIM_NV_FENCE_GLOBAL
CLPRIM_INLINE void clprim_fence_global(void) { CLPRIM_NV_FENCE_GLOBAL(); }
#else
CLPRIM_INLINE void clprim_fence_global(void) { mem_fence(CLK_GLOBAL_MEM_FENCE); }
#endif

/* ------------------------------------------------- work-group operations */
/* Local memory only, for any work-group size n. Scan: Hillis-Steele (a read
 * and a write phase per step, log2(n) steps). Reduction: halving from the
 * power of two below n, the upper half clipped at n. No loop or branch
 * comes before a barrier: PoCL 5's kernel compiler aborted ("Cannot add
 * context restore for a PHI node at the region entry") on an earlier form
 * that chose between two algorithms and computed the power of two in a
 * loop. */
#define CLPRIM_WG_LOCAL_OPS(T)                                                                     \
  CLPRIM_INLINE T clprim_wg_local_scan_excl_add_##T(T x, __local T *scratch, T *total) {           \
    uint lid = (uint)get_local_id(0), n = (uint)get_local_size(0);                                 \
    scratch[lid] = x;                                                                              \
    for (uint d = 1; d < n; d <<= 1) {                                                             \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      T y = lid >= d ? scratch[lid - d] : (T)0;                                                    \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      scratch[lid] += y;                                                                           \
    }                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    T excl = lid ? scratch[lid - 1] : (T)0, all = scratch[n - 1];                                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    *total = all;                                                                                  \
    return excl;                                                                                   \
  }                                                                                                \
  CLPRIM_INLINE T clprim_wg_local_reduce_add_##T(T x, __local T *scratch) {                        \
    uint lid = (uint)get_local_id(0), n = (uint)get_local_size(0);                                 \
    uint top = n > 1 ? 1u << (31 - clz(n - 1)) : 0; /* the power of two below n */                 \
    scratch[lid] = x;                                                                              \
    for (uint h = top; h > 0; h >>= 1) {                                                           \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      if (lid < h && lid + h < n) scratch[lid] += scratch[lid + h];                                \
    }                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    T all = scratch[0];                                                                            \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    return all;                                                                                    \
  }
CLPRIM_FOR_EACH_TYPE(CLPRIM_WG_LOCAL_OPS)

/* The arg-max's order and its local-memory tree (the halving above). */
#define CLPRIM_WG_LOCAL_ARG_OPS(K)                                                                 \
  CLPRIM_INLINE int clprim_argmax_before_##K(K ka, ulong ia, K kb, ulong ib) {                     \
    return ka > kb || (ka == kb && ia < ib);                                                       \
  }                                                                                                \
  CLPRIM_INLINE void clprim_wg_local_reduce_argmax_##K(K *key, ulong *index, __local K *keys,      \
                                                       __local ulong *indices) {                   \
    uint lid = (uint)get_local_id(0), n = (uint)get_local_size(0);                                 \
    uint top = n > 1 ? 1u << (31 - clz(n - 1)) : 0; /* the power of two below n */                 \
    keys[lid] = *key, indices[lid] = *index;                                                       \
    for (uint h = top; h > 0; h >>= 1) {                                                           \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      if (lid < h && lid + h < n &&                                                                \
          clprim_argmax_before_##K(keys[lid + h], indices[lid + h], keys[lid], indices[lid]))      \
        keys[lid] = keys[lid + h], indices[lid] = indices[lid + h];                                \
    }                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    *key = keys[0], *index = indices[0];                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
  }
CLPRIM_WG_LOCAL_ARG_OPS(uint)
CLPRIM_WG_LOCAL_ARG_OPS(ulong)

#ifdef CLPRIM_HAS_SUBGROUPS
/* Each subgroup scans its values; subgroup totals meet in scratch. nv_ptx's
 * warp operations need whole warps: other sizes take the local algorithm. */
#if defined(CLPRIM_PATH_NV_PTX) && defined(CLPRIM_WG_SIZE)
#define CLPRIM_WG_WHOLE_SUBGROUPS() (CLPRIM_WG_SIZE % 32 == 0)
#elif defined(CLPRIM_PATH_NV_PTX)
#define CLPRIM_WG_WHOLE_SUBGROUPS() (get_local_size(0) % 32 == 0)
#else
#define CLPRIM_WG_WHOLE_SUBGROUPS() 1
#endif
#define CLPRIM_WG_OPS(T)                                                                           \
  CLPRIM_INLINE T clprim_wg_scan_excl_add_##T(T x, __local T *scratch, T *total) {                 \
    if (!CLPRIM_WG_WHOLE_SUBGROUPS()) return clprim_wg_local_scan_excl_add_##T(x, scratch, total); \
    T excl = clprim_sg_scan_excl_add_##T(x);                                                       \
    uint sg = clprim_sg_id(), nsg = clprim_sg_count();                                             \
    if (clprim_sg_lane() == clprim_sg_size() - 1) scratch[sg] = excl + x;                          \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    T before = 0, all = 0;                                                                         \
    for (uint s = 0; s < nsg; ++s) {                                                               \
      T t = scratch[s];                                                                            \
      if (s < sg) before += t;                                                                     \
      all += t;                                                                                    \
    }                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    *total = all;                                                                                  \
    return before + excl;                                                                          \
  }                                                                                                \
  CLPRIM_INLINE T clprim_wg_reduce_add_##T(T x, __local T *scratch) {                              \
    if (!CLPRIM_WG_WHOLE_SUBGROUPS()) return clprim_wg_local_reduce_add_##T(x, scratch);           \
    T s = clprim_sg_reduce_add_##T(x);                                                             \
    uint sg = clprim_sg_id(), nsg = clprim_sg_count();                                             \
    if (clprim_sg_lane() == 0) scratch[sg] = s;                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    T all = 0;                                                                                     \
    for (uint k = 0; k < nsg; ++k) all += scratch[k];                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    return all;                                                                                    \
  }
#else
#define CLPRIM_WG_OPS(T)                                                                           \
  CLPRIM_INLINE T clprim_wg_scan_excl_add_##T(T x, __local T *scratch, T *total) {                 \
    return clprim_wg_local_scan_excl_add_##T(x, scratch, total);                                   \
  }                                                                                                \
  CLPRIM_INLINE T clprim_wg_reduce_add_##T(T x, __local T *scratch) {                              \
    return clprim_wg_local_reduce_add_##T(x, scratch);                                             \
  }
#endif
CLPRIM_FOR_EACH_TYPE(CLPRIM_WG_OPS)

#ifdef CLPRIM_HAS_SUBGROUPS
/* Each subgroup's best pair; the subgroups' pairs meet in keys, indices. */
#define CLPRIM_WG_ARG_OPS(K)                                                                       \
  CLPRIM_INLINE void clprim_wg_reduce_argmax_##K(K *key, ulong *index, __local K *keys,            \
                                                 __local ulong *indices) {                         \
    if (!CLPRIM_WG_WHOLE_SUBGROUPS()) {                                                            \
      clprim_wg_local_reduce_argmax_##K(key, index, keys, indices);                                \
      return;                                                                                      \
    }                                                                                              \
    K top = clprim_sg_reduce_max_##K(*key);                                                        \
    ulong first = clprim_sg_reduce_min_ulong(*key == top ? *index : ~(ulong)0);                    \
    if (clprim_sg_lane() == 0) keys[clprim_sg_id()] = top, indices[clprim_sg_id()] = first;        \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    top = keys[0], first = indices[0];                                                             \
    for (uint s = 1, nsg = clprim_sg_count(); s < nsg; ++s)                                        \
      if (clprim_argmax_before_##K(keys[s], indices[s], top, first)) top = keys[s], first = indices[s]; \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    *key = top, *index = first;                                                                    \
  }
#else
#define CLPRIM_WG_ARG_OPS(K)                                                                       \
  CLPRIM_INLINE void clprim_wg_reduce_argmax_##K(K *key, ulong *index, __local K *keys,            \
                                                 __local ulong *indices) {                         \
    clprim_wg_local_reduce_argmax_##K(key, index, keys, indices);                                  \
  }
#endif
CLPRIM_WG_ARG_OPS(uint)
CLPRIM_WG_ARG_OPS(ulong)

/* ------------------------------------- work-group operations, any operator */
/* CLPRIM_DEFINE_WG_OP(name, T, P, combine, identity): for any type T (a
 * struct too) and an associative combine(T a, T b, P p) with its identity
 * identity(P p) (functions or macros; p is whatever they need, an int 0
 * when nothing), defines
 *   T clprim_wg_reduce_<name>(T x, __local T *scratch, P p)
 *   T clprim_wg_scan_excl_<name>(T x, __local T *scratch, T *total, P p)
 * over the work-group's x in work-item order, the lower work-item's on the
 * left: combine need not be commutative. The exclusive scan gives
 * identity(p) to work-item 0 and the whole combination to *total. scratch
 * holds get_local_size(0) elements; every work-item must call; they contain
 * barriers, so scratch may be reused right after they return.
 * On nv_ptx it also defines the warp shuffles clprim_sg_shuffle_<name>(x,
 * lane), clprim_sg_shuffle_up_<name>(x, d) and _down_<name>(x, d) of T.
 * nv_ptx (work-groups of whole warps): each warp combines in registers,
 * moving T as 32-bit words by shuffles (a tree for the reduction,
 * Kogge-Stone for the scan), then the warps' totals meet in scratch. Other
 * paths, and other sizes: local memory, a tree in index order (pairs, then
 * pairs of pairs) and a Hillis-Steele scan (log2(n) steps).
 * On paths with subgroups (CLPRIM_HAS_SUBGROUPS: nv_ptx, khr_subgroups,
 * khr_ballot) it also defines, over each subgroup's x in lane order,
 *   T clprim_sg_reduce_<name>(T x, __local T *sg_scratch, P p)
 *   T clprim_sg_scan_incl_<name>(T x, __local T *sg_scratch, P p)
 *   T clprim_sg_scan_excl_<name>(T x, __local T *sg_scratch, P p)
 * (the reduction to every lane; the exclusive scan gives identity(p) to
 * lane 0). sg_scratch holds CLPRIM_SG_OP_SCRATCH(get_local_size(0))
 * elements; every work-item of the work-group must call (they contain
 * barriers where they use it). nv_ptx (work-groups of whole warps): warp
 * shuffles, sg_scratch unused; other sizes and the khr paths: each
 * subgroup's Hillis-Steele scan in its part of sg_scratch. */
#define CLPRIM_DEFINE_WG_OP_LOCAL(name, T, P, combine, identity)                                   \
  CLPRIM_INLINE T clprim_wg_local_reduce_##name(T x, __local T *scratch, P p) {                    \
    uint lid = (uint)get_local_id(0), n = (uint)get_local_size(0);                                 \
    scratch[lid] = x;                                                                              \
    for (uint s = 1; s < n; s <<= 1) {                                                             \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      if ((lid & (2 * s - 1)) == 0 && lid + s < n)                                                 \
        scratch[lid] = combine(scratch[lid], scratch[lid + s], p);                                 \
    }                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    T all = scratch[0];                                                                            \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    return all;                                                                                    \
  }                                                                                                \
  /* The inclusive Hillis-Steele scan of the x at s[0 ..], this one at                          \
   * s[at], in the steps below `span` (a count the whole work-group shares,                       \
   * for the barriers); s then holds the scan (no barrier after). */                              \
  CLPRIM_INLINE T clprim_local_scan_incl_##name(T x, __local T *s, uint at, uint span, P p) {      \
    s[at] = x;                                                                                     \
    for (uint d = 1; d < span; d <<= 1) {                                                          \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      T y = s[at >= d ? at - d : at];                                                              \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      if (at >= d) s[at] = combine(y, s[at], p);                                                   \
    }                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    return s[at];                                                                                  \
  }                                                                                                \
  CLPRIM_INLINE T clprim_wg_local_scan_excl_##name(T x, __local T *scratch, T *total, P p) {       \
    uint lid = (uint)get_local_id(0), n = (uint)get_local_size(0);                                 \
    (void)clprim_local_scan_incl_##name(x, scratch, lid, n, p);                                    \
    T excl = lid ? scratch[lid - 1] : identity(p);                                                 \
    T all = scratch[n - 1];                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    *total = all;                                                                                  \
    return excl;                                                                                   \
  }

/* Subgroup operations of any operator in local memory (paths with
 * subgroups): subgroup k's lanes at sg_scratch[k * clprim_sg_op_max() ..],
 * each scanned by clprim_local_scan_incl over the largest subgroup's
 * steps. */
#ifdef CLPRIM_HAS_SUBGROUPS
#define CLPRIM_SG_OP_SCRATCH(wg) ((wg) + 127)
#if defined(CLPRIM_PATH_NV_PTX)
CLPRIM_INLINE uint clprim_sg_op_max(void) { return 32u; }
CLPRIM_INLINE uint clprim_sg_op_size(void) { /* the last warp may be short */
  const uint left = (uint)get_local_size(0) - (clprim_sg_id() << 5);
  return left < 32u ? left : 32u;
}
#else
CLPRIM_INLINE uint clprim_sg_op_max(void) { return get_max_sub_group_size(); }
CLPRIM_INLINE uint clprim_sg_op_size(void) { return get_sub_group_size(); }
#endif
#define CLPRIM_DEFINE_SG_OP_LOCAL(name, T, P, combine, identity)                                   \
  CLPRIM_INLINE T clprim_sg_local_scan_##name(T x, __local T *sg_scratch, T *excl, T *total,      \
                                              P p) {                                               \
    const uint lane = clprim_sg_lane(), n = clprim_sg_op_size(), most = clprim_sg_op_max();        \
    __local T *s = sg_scratch + clprim_sg_id() * most;                                             \
    T incl = clprim_local_scan_incl_##name(x, s, lane, most, p);                                   \
    *excl = lane ? s[lane - 1] : identity(p);                                                      \
    *total = s[n - 1];                                                                             \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    return incl;                                                                                   \
  }
#endif

#if defined(CLPRIM_PATH_NV_PTX)
/* T's 32-bit words (the last one padded), and fn(x, arg), a shuffle of T
 * that moves each word by shfl (clprim_nv_shfl_idx, _up, _down). */
#define CLPRIM_WORDS(T) ((sizeof(T) + 3) / 4)
#define CLPRIM_NV_WORD_SHUFFLE(fn, T, shfl)                                                        \
  CLPRIM_INLINE T fn(T x, uint arg) {                                                              \
    union {                                                                                        \
      T v;                                                                                         \
      uint w[CLPRIM_WORDS(T)];                                                                     \
    } u;                                                                                           \
    u.v = x;                                                                                       \
    for (uint k = 0; k < CLPRIM_WORDS(T); ++k) u.w[k] = shfl(u.w[k], arg);                        \
    return u.v;                                                                                    \
  }
#define CLPRIM_DEFINE_WG_OP(name, T, P, combine, identity)                                         \
  CLPRIM_DEFINE_WG_OP_LOCAL(name, T, P, combine, identity)                                         \
  CLPRIM_NV_WORD_SHUFFLE(clprim_sg_shuffle_##name, T, clprim_nv_shfl_idx)                         \
  CLPRIM_NV_WORD_SHUFFLE(clprim_sg_shuffle_up_##name, T, clprim_nv_shfl_up)                        \
  CLPRIM_NV_WORD_SHUFFLE(clprim_sg_shuffle_down_##name, T, clprim_nv_shfl_down)                    \
  CLPRIM_INLINE T clprim_wg_reduce_##name(T x, __local T *scratch, P p) {                          \
    if (!CLPRIM_WG_WHOLE_SUBGROUPS()) return clprim_wg_local_reduce_##name(x, scratch, p);         \
    const uint lane = clprim_sg_lane();                                                            \
    for (uint d = 1; d < 32; d <<= 1) { /* lane l: lanes [l, l + 2d) */                            \
      T y = clprim_sg_shuffle_down_##name(x, d);                                                   \
      if (lane + d < 32) x = combine(x, y, p);                                                     \
    }                                                                                              \
    if (lane == 0) scratch[clprim_sg_id()] = x;                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    T all = scratch[0];                                                                            \
    for (uint s = 1, nsg = clprim_sg_count(); s < nsg; ++s) all = combine(all, scratch[s], p);     \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    return all;                                                                                    \
  }                                                                                                \
  CLPRIM_INLINE T clprim_wg_scan_excl_##name(T x, __local T *scratch, T *total, P p) {             \
    if (!CLPRIM_WG_WHOLE_SUBGROUPS())                                                              \
      return clprim_wg_local_scan_excl_##name(x, scratch, total, p);                               \
    const uint lane = clprim_sg_lane(), sg = clprim_sg_id();                                       \
    for (uint d = 1; d < 32; d <<= 1) { /* lane l: lanes (l - 2d, l] */                            \
      T y = clprim_sg_shuffle_up_##name(x, d);                                                     \
      if (lane >= d) x = combine(y, x, p);                                                         \
    }                                                                                              \
    if (lane == 31) scratch[sg] = x;                                                               \
    T excl = clprim_sg_shuffle_up_##name(x, 1);                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    T before = identity(p), all = identity(p);                                                     \
    for (uint s = 0, nsg = clprim_sg_count(); s < nsg; ++s) {                                      \
      if (s == sg) before = all;                                                                   \
      all = combine(all, scratch[s], p);                                                           \
    }                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    *total = all;                                                                                  \
    return lane ? combine(before, excl, p) : before;                                               \
  }                                                                                                \
  CLPRIM_DEFINE_SG_OP_LOCAL(name, T, P, combine, identity)                                         \
  CLPRIM_INLINE T clprim_sg_scan_incl_##name(T x, __local T *sg_scratch, P p) {                    \
    if (!CLPRIM_WG_WHOLE_SUBGROUPS()) {                                                            \
      T excl, total;                                                                               \
      return clprim_sg_local_scan_##name(x, sg_scratch, &excl, &total, p);                         \
    }                                                                                              \
    const uint lane = clprim_sg_lane();                                                            \
    for (uint d = 1; d < 32; d <<= 1) { /* lane l: lanes (l - 2d, l] */                            \
      T y = clprim_sg_shuffle_up_##name(x, d);                                                     \
      if (lane >= d) x = combine(y, x, p);                                                         \
    }                                                                                              \
    return x;                                                                                      \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_scan_excl_##name(T x, __local T *sg_scratch, P p) {                    \
    if (!CLPRIM_WG_WHOLE_SUBGROUPS()) {                                                            \
      T excl, total;                                                                               \
      (void)clprim_sg_local_scan_##name(x, sg_scratch, &excl, &total, p);                          \
      return excl;                                                                                 \
    }                                                                                              \
    T e = clprim_sg_shuffle_up_##name(clprim_sg_scan_incl_##name(x, sg_scratch, p), 1);            \
    return clprim_sg_lane() ? e : identity(p);                                                     \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_reduce_##name(T x, __local T *sg_scratch, P p) {                       \
    if (!CLPRIM_WG_WHOLE_SUBGROUPS()) {                                                            \
      T excl, total;                                                                               \
      (void)clprim_sg_local_scan_##name(x, sg_scratch, &excl, &total, p);                          \
      return total;                                                                                \
    }                                                                                              \
    const uint lane = clprim_sg_lane();                                                            \
    for (uint d = 1; d < 32; d <<= 1) { /* lane l: lanes [l, l + 2d) */                            \
      T y = clprim_sg_shuffle_down_##name(x, d);                                                   \
      if (lane + d < 32) x = combine(x, y, p);                                                     \
    }                                                                                              \
    return clprim_sg_shuffle_##name(x, 0);                                                         \
  }
#else
#if defined(CLPRIM_HAS_SUBGROUPS)
/* khr paths: each subgroup in its part of sg_scratch. */
#define CLPRIM_DEFINE_SG_OP(name, T, P, combine, identity)                                         \
  CLPRIM_DEFINE_SG_OP_LOCAL(name, T, P, combine, identity)                                         \
  CLPRIM_INLINE T clprim_sg_scan_incl_##name(T x, __local T *sg_scratch, P p) {                    \
    T excl, total;                                                                                 \
    return clprim_sg_local_scan_##name(x, sg_scratch, &excl, &total, p);                           \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_scan_excl_##name(T x, __local T *sg_scratch, P p) {                    \
    T excl, total;                                                                                 \
    (void)clprim_sg_local_scan_##name(x, sg_scratch, &excl, &total, p);                            \
    return excl;                                                                                   \
  }                                                                                                \
  CLPRIM_INLINE T clprim_sg_reduce_##name(T x, __local T *sg_scratch, P p) {                       \
    T excl, total;                                                                                 \
    (void)clprim_sg_local_scan_##name(x, sg_scratch, &excl, &total, p);                            \
    return total;                                                                                  \
  }
#else
#define CLPRIM_DEFINE_SG_OP(name, T, P, combine, identity) /* the local path has no subgroups */
#endif
#define CLPRIM_DEFINE_WG_OP(name, T, P, combine, identity)                                         \
  CLPRIM_DEFINE_WG_OP_LOCAL(name, T, P, combine, identity)                                         \
  CLPRIM_INLINE T clprim_wg_reduce_##name(T x, __local T *scratch, P p) {                          \
    return clprim_wg_local_reduce_##name(x, scratch, p);                                           \
  }                                                                                                \
  CLPRIM_INLINE T clprim_wg_scan_excl_##name(T x, __local T *scratch, T *total, P p) {             \
    return clprim_wg_local_scan_excl_##name(x, scratch, total, p);                                 \
  }                                                                                                \
  CLPRIM_DEFINE_SG_OP(name, T, P, combine, identity)
#endif

#endif /* CLPRIM_DEVICE_H */
