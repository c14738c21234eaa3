/* cpu.h: how the cpu path's kernels (-DCLPRIM_CPU) split their work. The
 * host launches one work-item per work-group, get_global_size(0) of them
 * (clprim__cpu_shares, src/core/launch.c); work-item g takes the g-th of
 * that many contiguous shares, each of whole blocks of `block` items but
 * the last. cpu_per is a share's size, cpu_share work-item g's [first,
 * end) of n items (empty past the end). */
#ifndef CLPRIM_CPU_H
#define CLPRIM_CPU_H

CLPRIM_INLINE ulong cpu_per(ulong n, ulong block, ulong shares) {
  return ((n + block - 1) / block + shares - 1) / shares * block;
}

CLPRIM_INLINE void cpu_share(ulong n, ulong block, ulong *first, ulong *end) {
  const ulong per = cpu_per(n, block, get_global_size(0));
  *first = min(n, get_global_id(0) * per);
  *end = min(n, *first + per);
}

#endif /* CLPRIM_CPU_H */
