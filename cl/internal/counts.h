/* counts.h: the count pass's end, as count -> scan -> scatter
 * (src/engine/count_scan_scatter.c) wants it: work-group g's count at
 * counts[g], and a 0 after the last work-group's, which the scan turns
 * into the total. For uint or ulong counts. */
#ifndef CLPRIM_COUNTS_H
#define CLPRIM_COUNTS_H

#define CLPRIM_PUT_TILE_COUNT(counts, total)                                                       \
  do {                                                                                             \
    if (get_local_id(0) == 0) {                                                                    \
      (counts)[get_group_id(0)] = (total);                                                         \
      if (get_group_id(0) == get_num_groups(0) - 1) (counts)[get_num_groups(0)] = 0;               \
    }                                                                                              \
  } while (0)

#endif
