/* probe.cl: exercises every operation clprim_device.h offers on the path it
 * is built for; src/probe.c checks each field on the host.
 * Per work-item i, out[i*10 + f]:
 *   0 work-group exclusive scan of x = 3i+1, 1 its total (out64: the same for
 *   a 64-bit value with high bits set); with subgroups: 2 subgroup size,
 *   3 lane, 4 subgroup exclusive scan of x, 5 subgroup sum, 6 broadcast of
 *   lane 0, 7 subgroup max; with ballot: 8 marked lanes below this one in its
 *   32-lane word (marked: i % 3 == 0), 9 marked lanes in the subgroup. */
__kernel __attribute__((reqd_work_group_size(PROBE_WG, 1, 1)))
void probe(__global uint *out, __global ulong *out64) {
  __local uint scratch[CLPRIM_WG_SCRATCH(PROBE_WG)];
  __local ulong scratch64[CLPRIM_WG_SCRATCH(PROBE_WG)];
  uint i = (uint)get_global_id(0);
  __global uint *f = out + (size_t)i * 10;
  uint x = i * 3u + 1u;
  ulong y = ((ulong)i << 33) + i;
  uint total;
  ulong total64;
  f[0] = clprim_wg_scan_excl_add_uint(x, scratch, &total);
  f[1] = total;
  out64[2 * i] = clprim_wg_scan_excl_add_ulong(y, scratch64, &total64);
  out64[2 * i + 1] = total64;
#ifdef CLPRIM_HAS_SUBGROUPS
  f[2] = clprim_sg_size();
  f[3] = clprim_sg_lane();
  f[4] = clprim_sg_scan_excl_add_uint(x);
  f[5] = clprim_sg_reduce_add_uint(x);
  f[6] = clprim_sg_broadcast_uint(x, 0);
  f[7] = clprim_sg_reduce_max_uint(x);
#endif
#ifdef CLPRIM_HAS_BALLOT
  uint word = clprim_sg_ballot(i % 3u == 0);
  f[8] = popcount(word & clprim_sg_lanemask_lt());
#ifdef CLPRIM_PATH_KHR_BALLOT
  /* The ballot's bits summed word by word: PoCL 5 lists cl_khr_subgroup_ballot
   * but lacks sub_group_ballot_bit_count, which clprim does not need. */
  const uint4 b = sub_group_ballot(i % 3u == 0);
  f[9] = popcount(b.s0) + popcount(b.s1) + popcount(b.s2) + popcount(b.s3);
#else
  f[9] = popcount(word);
#endif
#endif
}
