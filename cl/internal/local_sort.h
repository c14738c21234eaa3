/* local_sort.h: a sort by one work-group in local memory, for the families
 * that finish a small selection there (topk.cl's topk_finish,
 * segmented_topk.cl's sorted rows).
 *
 * clprim_local_sort_pairs: keys[0, len) with their values, len a power of
 * two, ascending by (key, value): a bitonic sort; each step's work-items
 * take the len / 2 pairs (i, i + d), i without bit d (none idle). Pad the
 * tail with (KEY_MAX, ~0) to sort fewer. Starts and ends with a barrier.
 * Needs KEY (internal/keys.h) and WG. */
#ifndef CLPRIM_LOCAL_SORT_H
#define CLPRIM_LOCAL_SORT_H

CLPRIM_INLINE void clprim_local_sort_pairs(__local KEY *keys, __local ulong *values, uint len) {
  const uint lid = (uint)get_local_id(0);
  /* One loop over the steps (block, d), not a loop over d in one over
   * blocks: PoCL's work-group compiler replicates the code between barriers
   * per loop around them (segmented_topk's first call on PoCL 3.1). */
  for (uint block = 2, d = 1; block <= len;) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint t = lid; t < len / 2; t += WG) {
      const uint i = 2 * t - (t & (d - 1)), p = i + d;
      const KEY ka = keys[i], kb = keys[p];
      const ulong va = values[i], vb = values[p];
      if ((ka > kb || (ka == kb && va > vb)) == ((i & block) == 0))
        keys[i] = kb, keys[p] = ka, values[i] = vb, values[p] = va;
    }
    if (d > 1)
      d >>= 1;
    else
      block <<= 1, d = block >> 1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
#endif /* CLPRIM_LOCAL_SORT_H */
