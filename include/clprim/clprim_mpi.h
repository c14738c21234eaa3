/*
 * clprim_mpi: clprim's primitives over MPI, one rank per device (optional
 * library clprim_mpi; CMake target clprim::clprim_mpi, pkg-config
 * clprim-mpi). Built when CMake finds MPI (option CLPRIM_MPI).
 *
 * Sections: status codes; contexts (a device per rank); reductions and
 * histograms; scan and compaction; selection by rank and top-k; sort.
 *
 * The model: every rank of a communicator holds a clprim context on its own
 * device and its PART of the data: n_local elements in a device buffer
 * (n_local may differ between ranks, and may be 0). The global array is the
 * concatenation of the parts in rank order: element i of rank r has GLOBAL
 * INDEX offset_r + i, offset_r = the sum of n_local over the ranks below r.
 * Every call here is a collective: all ranks of comm call it, with the same
 * arguments except the parts (n_local, the buffers) and the host pointers.
 *
 * Arguments are checked collectively first: one MPI_Allgather carries each
 * rank's status, a hash of the arguments that must agree, and its n_local
 * (which also gives the offsets). A rank with a bad argument returns its
 * own error; the others return CLPRIM_MPI_ERROR_REMOTE, and
 * CLPRIM_MPI_ERROR_MISMATCH where the arguments differ between ranks; no
 * rank waits for the others in a later step. A device error after the check
 * is carried by the next collective step the same way. The ranks that
 * return CLPRIM_MPI_ERROR_REMOTE keep a text (clprim_context_last_error)
 * that names the lowest rank that failed, its status and its own text:
 * "mpi: rank 2 failed with -30 (CLPRIM_ERROR_INVALID_ARGUMENT): <text>";
 * with CLPRIM_MPI_ERROR_MISMATCH every rank keeps one that names the lowest
 * rank whose arguments differ from rank 0's (one hash covers them all, so
 * it cannot say which argument). These texts cost two collectives more,
 * only when a call fails.
 * MPI errors: calls check every MPI return code and return
 * CLPRIM_MPI_ERROR_MPI, but MPI returns codes only when the communicator's
 * error handler is MPI_ERRORS_RETURN (the default, MPI_ERRORS_ARE_FATAL,
 * aborts the job): set it with MPI_Comm_set_errhandler. An MPI call that
 * fails on every rank (as a collective does) makes every rank return
 * CLPRIM_MPI_ERROR_MPI, wherever in the call it fails (test_mpi injects
 * a failure at each collective of each call in turn).
 * CLPRIM_MPI_ERROR_INTERNAL: a self-check failed (sort: the pieces that the
 * ranks would exchange do not add up to each rank's share), which only a
 * fault of the library or of a device can cause; nothing was exchanged.
 *
 * Data movement: MPI cannot read a cl_mem, so what crosses the network is
 * staged on the host; bulk data (sort's exchange) goes through pinned host
 * memory (a buffer made with CL_MEM_ALLOC_HOST_PTR and mapped, kept with
 * the context for later calls), which devices copy to and from by DMA. Per
 * call (docs/SCALING.md gives the
 * model and measured figures):
 *  - reductions, histograms, scan, compaction: one small collective of a
 *    few words per rank (a histogram: its bins);
 *  - selection: per level 255 sampled keys per rank (gathered at rank 0,
 *    which broadcasts 255 merged splitters) and 512 bucket counts
 *    (all-reduced), never elements, then at most
 *    CLPRIM_MPI_GATHER_MAX keys gathered;
 *  - top-k: a selection among the ranks' local candidates (with small k one
 *    gather of k keys per rank), or among all elements;
 *  - sort: every element that changes rank once (all-to-all), plus one
 *    selection of the P - 1 splitter ranks.
 *
 * Order of the selection calls and sort: as in clprim.h ("Order of the
 * selection calls"): -0.0 equals +0.0, every NaN is one value above +inf.
 */
#ifndef CLPRIM_MPI_H
#define CLPRIM_MPI_H

#include <mpi.h>

#include "clprim/clprim.h"

#if defined(CLPRIM_STATIC_DEFINE) || !defined(_WIN32)
#define CLPRIM_MPI_API __attribute__((visibility("default")))
#else
#define CLPRIM_MPI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------- status codes */

/* clprim_mpi's own codes, from -4100 down (clprim's are -4001 to -4099). */
#define CLPRIM_MPI_ERROR_MISMATCH ((clprim_status)-4101) /* arguments differ between ranks */
#define CLPRIM_MPI_ERROR_REMOTE ((clprim_status)-4102)   /* another rank failed */
#define CLPRIM_MPI_ERROR_MPI ((clprim_status)-4103)      /* an MPI call returned an error */
#define CLPRIM_MPI_ERROR_INTERNAL ((clprim_status)-4104) /* the ranks' counts do not add up */

/* Keys that the base case of the selection gathers at most (all ranks
 * together). */
#define CLPRIM_MPI_GATHER_MAX 4096

/*! clprim_mpi_status_name() :
 * @return : the name of clprim_mpi's own codes ("CLPRIM_MPI_ERROR_REMOTE"),
 *           else clprim_status_name(status). */
CLPRIM_MPI_API const char *clprim_mpi_status_name(int status);

/* --------------------------------------------------------------- contexts */

/*! clprim_mpi_context_create() :
 * Collective. Creates each rank's context on a device of its own: the ranks
 * that share a host (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) are
 * numbered 0, 1, ... (the LOCAL RANK), and local rank l takes GPU number
 * l mod G of the G GPUs that the host lists (in clprim_list_devices()
 * order). Without GPUs, or when options->device or $CLPRIM_DEVICE names a
 * device, every rank takes that device (as clprim_context_create); a
 * launcher that gives each rank its own $CLPRIM_DEVICE ("P:D") decides
 * itself. The context is an ordinary clprim context: every clprim call
 * works on it, and clprim_context_free() frees it.
 * @return : CLPRIM_SUCCESS and *ctx set on every rank; or an error on every
 *           rank and *ctx as it was everywhere (the rank whose creation failed
 *           returns that error, the others CLPRIM_MPI_ERROR_REMOTE);
 *           clprim_mpi_context_create_error() says why on every rank (the
 *           others name the rank that failed). */
CLPRIM_MPI_API clprim_status clprim_mpi_context_create(clprim_context **ctx, MPI_Comm comm,
                                                       const clprim_options *options);

/*! clprim_mpi_context_create_error() :
 * Why the calling thread's last clprim_mpi_context_create() failed, as
 * clprim_context_last_error(NULL) says for clprim_context_create()
 * (clprim_mpi keeps its own copy of clprim's core, so that text is not
 * this one): "context_create: device \"foo\" matches no OpenCL device
 * (...)" on the rank that failed, "mpi_context_create: mpi: rank 1 failed
 * with -4001 (CLPRIM_ERROR_DEVICE_NOT_FOUND): ..." on the others.
 * @return : the text, never NULL; "" after a creation that succeeded (or
 *           before any). Valid until the thread's next creation. */
CLPRIM_MPI_API const char *clprim_mpi_context_create_error(void);

/*! clprim_mpi_local_rank() :
 * The rank's index among the ranks of comm on its host (see above).
 * @return : CLPRIM_SUCCESS and *local_rank set, or CLPRIM_MPI_ERROR_MPI. */
CLPRIM_MPI_API clprim_status clprim_mpi_local_rank(MPI_Comm comm, int *local_rank);

/* --------------------------------------------- reductions and histograms */

/*! clprim_mpi_reduce_sum() :
 * The sum of all ranks' elements (n_local of type in `in` on each rank), to
 * *sum on every rank. flags 0: each rank sums its part (clprim_reduce_sum),
 * then the parts' sums are added in rank order (integers wrap around).
 * flags CLPRIM_EXACT (float and double): the exact sum of all elements
 * rounded once, as clprim_reduce_sum gives it on one device: the same bits
 * for any number of ranks and any split (each rank's exact accumulator is
 * added to the others' by one MPI_Allreduce of its words).
 * @return : CLPRIM_SUCCESS, or an error (see the top of this header). */
CLPRIM_MPI_API clprim_status clprim_mpi_reduce_sum(clprim_context *ctx, MPI_Comm comm,
                                                   size_t n_local, clprim_type type,
                                                   clprim_buffer in, unsigned flags,
                                                   clprim_value *sum);

/*! clprim_mpi_argmax(), clprim_mpi_argmin() :
 * The largest (smallest) element of the global array and the GLOBAL index
 * of its first occurrence, to *value and *index (either may be NULL) on
 * every rank; flags and NaN rules of clprim_argmax(). Ranks with
 * n_local = 0 take part; the global array must not be empty.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT (every rank) for
 *           an empty global array. */
CLPRIM_MPI_API clprim_status clprim_mpi_argmax(clprim_context *ctx, MPI_Comm comm,
                                               size_t n_local, clprim_type type, clprim_buffer in,
                                               unsigned flags, clprim_value *value,
                                               uint64_t *index);
CLPRIM_MPI_API clprim_status clprim_mpi_argmin(clprim_context *ctx, MPI_Comm comm,
                                               size_t n_local, clprim_type type, clprim_buffer in,
                                               unsigned flags, clprim_value *value,
                                               uint64_t *index);

/*! clprim_mpi_reduce_max(), clprim_mpi_reduce_min() :
 * clprim_mpi_argmax() / clprim_mpi_argmin() without the index.
 * @return : as clprim_mpi_argmax(). */
CLPRIM_MPI_API clprim_status clprim_mpi_reduce_max(clprim_context *ctx, MPI_Comm comm,
                                                   size_t n_local, clprim_type type,
                                                   clprim_buffer in, unsigned flags,
                                                   clprim_value *value);
CLPRIM_MPI_API clprim_status clprim_mpi_reduce_min(clprim_context *ctx, MPI_Comm comm,
                                                   size_t n_local, clprim_type type,
                                                   clprim_buffer in, unsigned flags,
                                                   clprim_value *value);

/*! clprim_mpi_histogram_even() :
 * clprim_histogram_even() of the global array: every rank's counts (bins
 * uint32 on its device) receive the global counts, and *outside (NULL, or 3
 * words on the host) the global numbers below lo, at or above hi, and NaN.
 * The global array must hold fewer than 2^32 elements.
 * @return : as clprim_histogram_even(). */
CLPRIM_MPI_API clprim_status clprim_mpi_histogram_even(clprim_context *ctx, MPI_Comm comm,
                                                       size_t n_local, clprim_type type,
                                                       clprim_buffer in, clprim_value lo,
                                                       clprim_value hi, size_t bins,
                                                       clprim_buffer counts, uint64_t *outside);

/* ------------------------------------------------- scan and compaction */

/*! clprim_mpi_scan_exclusive(), clprim_mpi_scan_inclusive() :
 * The prefix sums of the global array, distributed as it is: out (n_local
 * elements on each rank) receives the sums at the rank's global positions.
 * Each rank scans its part, the parts' totals are scanned across ranks (in
 * rank order) and each rank adds its offset to its part. Float sums differ
 * from a one-device scan by the rounding of that last addition
 * (docs/SCALING.md). out may be in's range (in place).
 * @return : CLPRIM_SUCCESS, or an error. */
CLPRIM_MPI_API clprim_status clprim_mpi_scan_exclusive(clprim_context *ctx, MPI_Comm comm,
                                                       size_t n_local, clprim_type type,
                                                       clprim_buffer in, clprim_buffer out);
CLPRIM_MPI_API clprim_status clprim_mpi_scan_inclusive(clprim_context *ctx, MPI_Comm comm,
                                                       size_t n_local, clprim_type type,
                                                       clprim_buffer in, clprim_buffer out);

/*! clprim_mpi_select() :
 * Stream compaction of the global array, distributed: each rank writes the
 * elements of its part that pass pred (values, of type) and / or their
 * GLOBAL indices (uint32, or uint64 with CLPRIM_INDICES_64) to its own
 * outputs, in order, as clprim_select(); together, rank after rank, they
 * are the global result. *local_count (NULL, or this rank's count),
 * *global_offset (NULL, or where this rank's first output sits in the
 * global result) and *global_count (NULL, or the global count) are set on
 * every rank. uint32 indices need a global array below 2^32 elements.
 * Every rank passes the same kinds of outputs (values, indices: given or
 * not), also a rank with n_local = 0.
 * @return : as clprim_select(). */
CLPRIM_MPI_API clprim_status clprim_mpi_select(clprim_context *ctx, MPI_Comm comm,
                                               size_t n_local, clprim_type type, clprim_buffer in,
                                               const clprim_predicate *pred, unsigned flags,
                                               clprim_buffer values, clprim_buffer indices,
                                               uint64_t *local_count, uint64_t *global_offset,
                                               uint64_t *global_count);

/* --------------------------------------- selection by rank, top-k */

/*! clprim_mpi_nth_element() :
 * The element of GLOBAL rank k (0 <= k < N, N the global count) of the
 * global array, to *value on every rank. Distributed SampleSelect: per
 * level each rank samples its candidates on its device (255 splitters of
 * 1024 sampled keys), the samples are gathered at rank 0, which merges
 * them (weighted by the ranks' candidate counts) into 255 splitters and
 * broadcasts them; each rank counts its candidates into the 511 buckets
 * on its device (clprim's counting kernel), the counts are all-reduced, the
 * bucket that holds rank k is chosen (an equality bucket answers at once)
 * and each rank extracts its candidates of that bucket on its device. Once
 * at most CLPRIM_MPI_GATHER_MAX candidates are left, they are gathered and
 * sorted on the host. On a communicator of one rank the selection calls
 * (this, quantiles, approximate) and top-k are clprim's own call after the
 * check. flags: 0 or CLPRIM_NTH_REJECT_NAN. n_local must be below 2^32 on
 * every rank, and a level's bucket below 2^32 elements on all ranks
 * together (the device counts in 32 bits: only a global array of 2^32
 * elements or more can exceed it, with one value that often)
 * (CLPRIM_ERROR_SIZE_TOO_LARGE, on every rank for the bucket).
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT (every rank) for
 *           k >= N, N = 0, a NaN with CLPRIM_NTH_REJECT_NAN. */
CLPRIM_MPI_API clprim_status clprim_mpi_nth_element(clprim_context *ctx, MPI_Comm comm,
                                                    size_t n_local, clprim_type type,
                                                    clprim_buffer in, uint64_t k, unsigned flags,
                                                    clprim_value *value);

/*! clprim_mpi_quantiles() :
 * clprim_mpi_nth_element() for each of ranks[0, count) (global ranks, any
 * order, repeats allowed), to values[j] on every rank. The distinct ranks
 * go through the levels together: per level one round of collectives for
 * all of them (a gather of the samples, a broadcast of the splitters, an
 * all-reduce of the bucket counts; the base case one all-gather and one
 * all-gatherv), and on each device one launch of each
 * level kernel for all their sub-problems (level 0: one counting pass and
 * one extraction pass over the part for all the ranks); in passes of 256
 * distinct ranks.
 * @return : as clprim_mpi_nth_element(); CLPRIM_ERROR_INVALID_ARGUMENT also
 *           for NULL ranks or values, count = 0. */
CLPRIM_MPI_API clprim_status clprim_mpi_quantiles(clprim_context *ctx, MPI_Comm comm,
                                                  size_t n_local, clprim_type type,
                                                  clprim_buffer in, const uint64_t *ranks,
                                                  size_t count, unsigned flags,
                                                  clprim_value *values);

/*! clprim_mpi_nth_element_approx() :
 * An element whose global rank is near k, from one level (one counting
 * pass on each device, one all-reduce of the counts): the merged splitter
 * next to the bucket that holds rank k; *rank_error (may be NULL) receives
 * the exact distance between k and the nearest global rank that the element
 * holds. Global arrays of at most CLPRIM_MPI_GATHER_MAX elements are
 * answered exactly.
 * @return : as clprim_mpi_nth_element(). */
CLPRIM_MPI_API clprim_status clprim_mpi_nth_element_approx(clprim_context *ctx, MPI_Comm comm,
                                                           size_t n_local, clprim_type type,
                                                           clprim_buffer in, uint64_t k,
                                                           unsigned flags, clprim_value *value,
                                                           uint64_t *rank_error);

/*! clprim_mpi_topk() :
 * The k largest (CLPRIM_TOPK_SMALLEST: smallest) elements of the global
 * array, 0 <= k <= N, distributed: each rank's local candidates (its own
 * best min(k, n_local) by clprim_topk(), when all ranks' candidates are at
 * most N / 2; else its whole part), the threshold (the k-th best among
 * them) by distributed selection, each rank's counts of candidates beyond
 * and equal to it (one counting pass), the ties given to the lowest GLOBAL
 * indices (ranks in order), then each rank's share by clprim_topk() on its
 * local candidates (else on its part). Each rank writes its share (in its
 * input order) to values and / or indices (GLOBAL indices: uint32, or
 * uint64 with CLPRIM_INDICES_64); rank after rank the shares are the global
 * top-k in global index order. *local_count and *global_offset (either may
 * be NULL): this rank's share and where it starts. flags: CLPRIM_TOPK_SMALLEST,
 * CLPRIM_INDICES_64, CLPRIM_NTH_REJECT_NAN (not CLPRIM_TOPK_SORTED: a sorted
 * global result needs a merge across ranks). Outputs must hold k elements
 * (a rank's share is at most k; only the share is written).
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT also for k > N,
 *           no output, other flags. */
CLPRIM_MPI_API clprim_status clprim_mpi_topk(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                             clprim_type type, clprim_buffer in, uint64_t k,
                                             unsigned flags, clprim_buffer values,
                                             clprim_buffer indices, uint64_t *local_count,
                                             uint64_t *global_offset);

/* ------------------------------------------------------------------ sort */

/*! clprim_mpi_sort_keys() :
 * Sample sort of the global array, ascending, stable (equal keys keep their
 * global index order): afterwards rank r holds global sorted positions
 * [r N / P, (r + 1) N / P) (P ranks, integer division) in out: every rank
 * within one element of N / P, whatever the keys (duplicates too: equal
 * keys are split between ranks by global index). Splitters: the elements of
 * global ranks r N / P, by distributed selection; each rank sorts its part
 * (clprim_sort_keys), cuts it at the splitters (counts of keys below and
 * equal to each splitter, one counting pass, then the ties' cut by global
 * index), sends the pieces for the other ranks with MPI_Alltoallv through
 * pinned host buffers (its own piece stays on its device), and merges the
 * P sorted runs it then holds (merge path on its device, lower ranks' keys
 * first among equal keys). clprim_mpi_last_profile() says where the time
 * went. out holds out_capacity elements;
 * *out_count (may be NULL) receives this rank's count. Keys only (no
 * values), ascending only; at most 256 ranks; n_local and each rank's share
 * below 2^31 elements (MPI's int counts).
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_BUFFER_TOO_SMALL (that rank; the
 *           others CLPRIM_MPI_ERROR_REMOTE) when out_capacity is below the
 *           rank's share; CLPRIM_ERROR_SIZE_TOO_LARGE past those limits. */
CLPRIM_MPI_API clprim_status clprim_mpi_sort_keys(clprim_context *ctx, MPI_Comm comm,
                                                  size_t n_local, clprim_type type,
                                                  clprim_buffer in, clprim_buffer out,
                                                  size_t out_capacity, uint64_t *out_count);

/*! clprim_mpi_sort_share() :
 * The number of elements rank `rank` of `ranks` holds after
 * clprim_mpi_sort_keys() of n elements: (rank + 1) n / ranks - rank n / ranks.
 * @return : that number (0 for a bad rank). */
CLPRIM_MPI_API uint64_t clprim_mpi_sort_share(uint64_t n, int rank, int ranks);

/* ---------------------------------------------------------------- profile */

/* The phases of clprim_mpi_sort_keys(), timed on the host (MPI_Wtime) with
 * the device's work of each phase finished inside it: what a benchmark
 * reads to tell where the time of a distributed sort goes. */
typedef enum clprim_mpi_phase {
  CLPRIM_MPI_PHASE_SETUP,      /* scratch and pinned host buffers (made and mapped on first use) */
  CLPRIM_MPI_PHASE_SPLITTERS,  /* the splitters' selection, the counting pass, the cuts' all-gather
                                */
  CLPRIM_MPI_PHASE_LOCAL_SORT, /* this rank's part sorted on its device */
  CLPRIM_MPI_PHASE_TO_HOST,    /* the pieces for other ranks: device to pinned host memory */
  CLPRIM_MPI_PHASE_SYNC,       /* the agreement before the exchange (waiting for the other ranks) */
  CLPRIM_MPI_PHASE_EXCHANGE,   /* MPI_Alltoallv between pinned host buffers */
  CLPRIM_MPI_PHASE_TO_DEVICE,  /* the received pieces: pinned host memory to the device */
  CLPRIM_MPI_PHASE_MERGE,      /* the merge of the P sorted runs on the device */
  CLPRIM_MPI_PHASE_COUNT
} clprim_mpi_phase;

/* What the last clprim_mpi_sort_keys() of the calling thread spent and
 * moved on this rank: ms[phase] (milliseconds; all 0 where the call ended
 * before a phase), the bytes it sent to other ranks and received from them
 * in the exchange (its own piece stays on its device), and the bytes copied
 * device to host and host to device. */
typedef struct clprim_mpi_profile {
  double ms[CLPRIM_MPI_PHASE_COUNT];
  uint64_t bytes_sent, bytes_received;
  uint64_t bytes_to_host, bytes_to_device;
} clprim_mpi_profile;

/*! clprim_mpi_last_profile() :
 * Copies the profile of the calling thread's last clprim_mpi_sort_keys()
 * (zeros before the first) to *profile (ignored when NULL). Not a
 * collective. */
CLPRIM_MPI_API void clprim_mpi_last_profile(clprim_mpi_profile *profile);

/*! clprim_mpi_phase_name() :
 * @return : the phase's name ("exchange"), or "?" for a value out of range. */
CLPRIM_MPI_API const char *clprim_mpi_phase_name(int phase);

#ifdef __cplusplus
}
#endif
#endif /* CLPRIM_MPI_H */
