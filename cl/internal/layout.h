/* layout.h: the layout of device buffers that host code and kernels both
 * read, in plain C that compiles as either (macros only). Host files
 * include it as "../cl/internal/layout.h", kernels as "internal/layout.h";
 * no number here is written out again anywhere else. */
#ifndef CLPRIM_LAYOUT_H
#define CLPRIM_LAYOUT_H

/* ---- decoupled look-back (internal/lookback.h): a tile counter in the
 * first LB_COUNTER_BYTES bytes, then the tile statuses; the buffer is zeroed
 * before the launch. Values of at most 32 bits and counts (below 2^62)
 * share one 64-bit word per tile with their flag; other 64-bit values take
 * a 32-bit flag per tile, then an aggregate and an inclusive prefix each. */
#define LB_COUNTER_BYTES 8
#define LB_PACKED_BYTES(tiles) (LB_COUNTER_BYTES + (tiles) * 8)
#define LB_AGGREGATES_AT(tiles) (LB_COUNTER_BYTES + (((tiles) * 4 + 7) / 8) * 8)
#define LB_PREFIXES_AT(tiles) (LB_AGGREGATES_AT(tiles) + (tiles) * 8)
#define LB_SPLIT_BYTES(tiles) (LB_PREFIXES_AT(tiles) + (tiles) * 8)
/* Values of a user operator's type (`size` bytes): the flags, then the
 * aggregates and the inclusive prefixes, each array from a multiple of 64
 * bytes (any alignment an element of at most 64 bytes has); only the
 * counter and the flags are zeroed. */
#define LB_OP_VALUES_AT(tiles) ((LB_COUNTER_BYTES + (tiles) * 4 + 63) / 64 * 64)
#define LB_OP_PREFIXES_AT(tiles, size) ((LB_OP_VALUES_AT(tiles) + (tiles) * (size) + 63) / 64 * 64)
#define LB_OP_BYTES(tiles, size) (LB_OP_PREFIXES_AT(tiles, size) + (tiles) * (size))
/* Vectors of digit counts (Onesweep): a 32-bit word per digit per tile. */
#define LB_DIGIT_BYTES(tiles, digits) (LB_COUNTER_BYTES + (tiles) * (digits) * 4)

/* ---- compaction (select.cl): how a partition orders its failing
 * elements (the scatter's `partition`, the single pass's reversed_rest): in
 * input order after all passing ones (stable), or backwards from the end of
 * the output (CUB's DevicePartition::If, CLPRIM_PARTITION_REVERSED). */
#define PARTITION_STABLE 1
#define PARTITION_REVERSED_REST 2

/* ---- radix sort (sort.cl): digits of SORT_DIGIT_BITS bits, SORT_RADIX
 * buckets; the upfront histogram holds SORT_RADIX counts per digit
 * position, each two 32-bit words (low, high). */
#define SORT_DIGIT_BITS 8
#define SORT_RADIX 256
#define SORT_MAX_PASSES 8
#define SORT_HIST_ITEMS 16 /* keys per work-item and tile of sort_histogram */

/* ---- selection by rank and top-k (nth_element.cl, topk.cl). */
#define NTH_BUCKETS 512     /* 511 buckets of a level; slot 511 counts NaNs */
#define NTH_BASE 2048       /* keys sorted in local memory at the end */
/* A level's meta buffer, in 64-bit words: where each chosen bucket goes in
 * the next buffer, the bucket totals and extraction cursors (32-bit), the
 * search tree, the chosen buckets, the bucket table and its scale. */
#define NTH_META_WORDS 3368
/* Where its parts start (words): the bucket totals (NTH_BUCKETS uints), the
 * extraction cursors (uints), the search tree (255 keys). */
#define NTH_META_TOTALS_AT 512
#define NTH_META_CURSORS_AT 768
#define NTH_META_TREE_AT 1024
/* A level's sub-problems, NTH_SUB_WORDS words each: offset, length, first
 * work-group, work-groups, meta_at, counts_at, state_at, r0, r1, rank_base,
 * out_base, seed. */
#define NTH_SUB_WORDS 12
/* nth_choose's answers: NTH_STATE_HEAD words (NaN count, keys to extract),
 * then NTH_STATE_WORDS per wanted rank. */
#define NTH_STATE_HEAD 2
#define NTH_STATE_WORDS 6
/* nth_small's jobs: from word NTH_JOBS_AT of its state buffer,
 * NTH_JOB_WORDS each (offset, length, rank, result slot, room). */
#define NTH_JOBS_AT 8
#define NTH_JOB_WORDS 5

/* ---- the exact accumulator (internal/exact.h): words of 32-bit digits,
 * word w weighing 2^(32 w + base), base the smallest subnormal's exponent;
 * enough words for 2^64 elements of the largest finite value, and a
 * fourth digit's room above the highest a number reaches. A work-group's
 * record: its words normalised, then a word of flags. */
#define EXACT_WORDS_FLOAT 12
#define EXACT_BASE_FLOAT (-149)
#define EXACT_WORDS_DOUBLE 68
#define EXACT_BASE_DOUBLE (-1074)
#define EXACT_RECORD(words) ((words) + 1)
#define EXACT_FLAG_POS_INF 1u
#define EXACT_FLAG_NEG_INF 2u
#define EXACT_FLAG_NAN 4u
#define EXACT_FLAG_NOT_NEG_ZERO 8u /* an element other than -0 was added */
#define EXACT_FLAG_ADDED 16u        /* an element was added */
#define EXACT_FLAG_WORDS 32u        /* an element's error went to the words */

#endif /* CLPRIM_LAYOUT_H */
