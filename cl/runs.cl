/* runs.cl: run lengths for the runs family (src/runs.c). The runs' edges
 * are compacted by select.cl (-DRUNS, with internal/heads.h).
 *
 * Where select's single pass runs, it writes run-length encoding's lengths
 * itself, but for each tile's last run, whose start it writes instead:
 * runs_fix_ends subtracts that from the run's end, which the tile holding
 * the next head (or the last tile) leaves in run_ends (the run's slot + 1,
 * or 0 for none; the end), 2 ulongs per entry.
 *
 * Elsewhere runs_lengths turns the compacted positions into lengths:
 *  - run-length encoding (mode 0): heads[j] is where run j starts, so
 *    lengths[j] = heads[j + 1] - heads[j], and n - heads[j] for the last;
 *  - non-trivial runs (mode 1): lengths[j] holds the position of run j's
 *    nontrivial tail (its last element), so lengths[j] = lengths[j] + 1 -
 *    heads[j], in place.
 * count: the number of runs, on the device (select's count), so the host
 * never waits for it; work-items stride over the runs.
 *
 * Build options: -DIDX_T=uint|ulong (positions and lengths). */
#ifndef IDX_T
#define IDX_T uint
#endif

#ifdef KERNEL_runs_fix_ends
__kernel void runs_fix_ends(__global IDX_T *lengths, __global const ulong *run_ends,
                            ulong entries) {
  const ulong t = get_global_id(0);
  if (t >= entries) return;
  const ulong slot = run_ends[2 * t];
  if (slot) lengths[slot - 1] = (IDX_T)run_ends[2 * t + 1] - lengths[slot - 1];
}
#endif

#ifdef KERNEL_runs_lengths
__kernel void runs_lengths(__global const IDX_T *heads, __global IDX_T *lengths,
                           __global const ulong *count, ulong n, int mode) {
  const ulong runs = *count;
  for (ulong j = get_global_id(0); j < runs; j += get_global_size(0)) {
    if (mode == 0)
      lengths[j] = (j + 1 < runs ? heads[j + 1] : (IDX_T)n) - heads[j];
    else
      lengths[j] = lengths[j] + 1 - heads[j];
  }
}
#endif
