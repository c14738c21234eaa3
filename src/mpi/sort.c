/* sort.c: clprim_mpi's sample sort. The splitters are the keys of the
 * global ranks r N / P (distributed selection, selection.c); each rank
 * sorts its part, sends the pieces for the other ranks through pinned host
 * memory (its own piece stays on the device) and merges the P sorted runs
 * it then holds (the merge family's merge path, src/merge.h), with its
 * phases timed for clprim_mpi_last_profile(). */
#include "mpi.h"
#include "../merge.h"

#include <stdlib.h>
#include <string.h>

#define SPLITTERS CLPRIM__NTH_SPLITTERS /* the most keys one counting pass takes */

uint64_t clprim_mpi_sort_share(uint64_t n, int rank, int ranks) {
  if (ranks <= 0 || rank < 0 || rank >= ranks) return 0;
  /* (r n) / P without overflow for n below 2^56 and P below 256 */
  const uint64_t p = (uint64_t)ranks, r = (uint64_t)rank;
  const uint64_t lo = (n / p) * r + (n % p) * r / p, hi = (n / p) * (r + 1) + (n % p) * (r + 1) / p;
  return hi - lo;
}
static uint64_t share_start(uint64_t n, uint64_t r, uint64_t p) {
  return (n / p) * r + (n % p) * r / p;
}
/* ----------------------------------------------------------------- sort */

/* The profile of the calling thread's last sort (clprim_mpi_last_profile):
 * per thread, as a context serves one thread at a time and a thread's last
 * call is what a benchmark asks about. */
static _Thread_local clprim_mpi_profile last_profile;

void clprim_mpi_last_profile(clprim_mpi_profile *profile) {
  if (profile) *profile = last_profile;
}

const char *clprim_mpi_phase_name(int phase) {
  static const char *const names[CLPRIM_MPI_PHASE_COUNT] = {
      "setup", "splitters", "local_sort", "to_host", "sync", "exchange", "to_device", "merge"};
  return phase >= 0 && phase < CLPRIM_MPI_PHASE_COUNT ? names[phase] : "?";
}

/* Adds the time since *since to the phase and restarts the clock. */
static void phase_end(double *since, clprim_mpi_phase phase) {
  const double now = MPI_Wtime();
  last_profile.ms[phase] += (now - *since) * 1e3;
  *since = now;
}

/* Non-blocking copies between a device buffer and host memory (which must
 * stay put until the queue has run them). */
static clprim_status read_async(clprim_context *ctx, cl_mem buf, size_t offset, size_t bytes,
                                void *host) {
  if (bytes == 0) return CLPRIM_SUCCESS;
  return (clprim_status)clEnqueueReadBuffer(ctx->queue, buf, CL_FALSE, offset, bytes, host, 0, NULL,
                                            NULL);
}
static clprim_status write_async(clprim_context *ctx, cl_mem buf, size_t offset, size_t bytes,
                                 const void *host) {
  if (bytes == 0) return CLPRIM_SUCCESS;
  return (clprim_status)clEnqueueWriteBuffer(ctx->queue, buf, CL_FALSE, offset, bytes, host, 0,
                                             NULL, NULL);
}

/* The P sorted runs that came (recv[r] keys from rank r, one after another
 * in rank order from rdispl[0]) of buffer bufs[first] merged into one run
 * at the same place of bufs[rounds % 2 ^ first], by the merge family's
 * rounds (src/merge.h): round 1 from bufs[first] into bufs[!first], the
 * rounds after it back and forth (the caller puts the runs where the last
 * round writes into the output). Runs of lower ranks win ties, so equal
 * keys stay in rank order. */
static clprim_status merge_runs(clprim_context *ctx, clprim_type type, cl_mem bufs[2],
                                const size_t base[2], int first, const int *recv,
                                const int *rdispl, int count, size_t *offsets) {
  offsets[0] = 0;
  for (int r = 0; r < count; ++r)
    offsets[r + 1] = offsets[r] + (size_t)recv[r];
  const int last = (int)(clprim__merge_round_count((size_t)count) % 2) ^ first;
  struct clprim_merge_rounds p;
  memset(&p, 0, sizeof p);
  p.type = type, p.runs = (size_t)count, p.offsets = offsets;
  p.src.keys = p.b.keys = bufs[first];
  p.src.at = p.b.at = base[first] + (size_t)rdispl[0];
  p.a.keys = bufs[!first], p.a.at = base[!first] + (size_t)rdispl[0];
  p.out.keys = bufs[last], p.out.at = base[last] + (size_t)rdispl[0];
  return clprim__merge_rounds(ctx, &p);
}

/* What one rank's exchange moves: send[r] / recv[r] keys to / from rank r
 * (its own piece: send[rank] = recv[rank]), from / to displacements sdispl
 * and rdispl of its sorted part and of its share; room: 4 P ints for
 * MPI_Alltoallv's arguments (allocated before the ranks clprim__mpi_agree to go on). */
struct exchange {
  int *send, *sdispl, *recv, *rdispl, *room;
};

/* Sort the part, send the pieces for the other ranks, merge what came:
 * 1. the part sorted on the device into scratch;
 * 2. the pieces for the other ranks read into one pinned buffer (those of
 *    lower ranks, then of higher ranks: two reads), while the own piece is
 *    copied on the device to its place among the runs;
 * 3. MPI_Alltoallv between pinned buffers, the own piece left out;
 * 4. the received pieces written from pinned memory next to the own piece
 *    (two writes), where they are P sorted runs in rank order;
 * 5. the runs merged (ceil(log2 P) rounds of merge path) into out.
 * agreed: every rank reached here without an error (so all exchange). */
static clprim_status sort_exchange(clprim_context *ctx, MPI_Comm comm,
                                   const struct clprim_mpi_part *p, clprim_type type,
                                   clprim_buffer in, clprim_buffer out, uint64_t share,
                                   const struct exchange *x, double *clock) {
  const size_t es = clprim_type_size(type), n_local = (size_t)p->n_local;
  const int P = p->size, me = p->rank;
  /* Keys to and from the other ranks: the ones before this rank's own
   * piece and after it (sorted order on both sides). */
  const size_t send_low = (size_t)x->sdispl[me], own = (size_t)x->send[me];
  const size_t send_high = n_local - send_low - own;
  const size_t recv_low = (size_t)x->rdispl[me], recv_high = share - recv_low - own;
  const unsigned rounds = clprim__merge_round_count((size_t)P);
  cl_mem sorted = NULL, runs_tmp = NULL, bufs[2];
  /* The exchange goes through pinned host memory (clprim__scratch_host:
   * page-locked, which GPU drivers copy to and from by DMA; pageable
   * memory goes through a bounce buffer at a fraction of the speed), made
   * once and kept mapped with the context. */
  void *send_host = NULL, *recv_host = NULL;
  clprim_status st = clprim__call_begin(ctx, "mpi");
  if (st != CLPRIM_SUCCESS)
    return clprim__mpi_agree(ctx, comm, st); /* every rank goes on to the agreement */
  if (n_local > 0) st = clprim__scratch(ctx, "mpi: sorted part", n_local * es, &sorted);
  if (st == CLPRIM_SUCCESS && share > 0)
    st = clprim__scratch(ctx, "mpi: runs", share * es, &runs_tmp);
  if (st == CLPRIM_SUCCESS)
    st = clprim__scratch_host(ctx, "mpi: pinned send", (n_local - own) * es, &send_host);
  if (st == CLPRIM_SUCCESS)
    st = clprim__scratch_host(ctx, "mpi: pinned receive", (share - own) * es, &recv_host);
  st = clprim__call_end(ctx, st);
  phase_end(clock, CLPRIM_MPI_PHASE_SETUP);
  /* 1. */
  if (st == CLPRIM_SUCCESS && n_local > 0) {
    st = clprim_sort_keys(ctx, n_local, type, in, 0, 0, 0, clprim_buf(sorted));
    if (st == CLPRIM_SUCCESS) st = (clprim_status)clFinish(ctx->queue);
  }
  phase_end(clock, CLPRIM_MPI_PHASE_LOCAL_SORT);
  /* Where the runs go: the buffer that the last merge round reads, so
   * that the last round writes into out. */
  const size_t base[2] = {0, out.offset};
  bufs[0] = runs_tmp, bufs[1] = out.mem;
  const int first = rounds % 2 ? 0 : 1;
  /* 2. */
  if (st == CLPRIM_SUCCESS) st = read_async(ctx, sorted, 0, send_low * es, send_host);
  if (st == CLPRIM_SUCCESS)
    st = read_async(ctx, sorted, (send_low + own) * es, send_high * es,
                    (char *)send_host + send_low * es);
  /* The own piece's copy runs on the device while MPI exchanges: only the
   * reads are waited for (a marker after them). */
  cl_event reads_done = NULL;
  if (st == CLPRIM_SUCCESS)
    st = (clprim_status)clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &reads_done);
  if (st == CLPRIM_SUCCESS && own > 0)
    st = (clprim_status)clEnqueueCopyBuffer(ctx->queue, sorted, bufs[first], send_low * es,
                                            (base[first] + recv_low) * es, own * es, 0, NULL, NULL);
  if (st == CLPRIM_SUCCESS) st = (clprim_status)clFlush(ctx->queue);
  if (st == CLPRIM_SUCCESS) st = (clprim_status)clWaitForEvents(1, &reads_done);
  if (reads_done) clReleaseEvent(reads_done);
  phase_end(clock, CLPRIM_MPI_PHASE_TO_HOST);
  st = clprim__mpi_agree(ctx, comm, st);
  phase_end(clock, CLPRIM_MPI_PHASE_SYNC);
  /* 3. The own piece stays on the device: counts 0 for this rank, and the
   * displacements into the pinned buffers skip it. */
  if (st == CLPRIM_SUCCESS) {
    int *sc = x->room, *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    for (int r = 0; r < P; ++r) {
      sc[r] = r == me ? 0 : x->send[r], rc[r] = r == me ? 0 : x->recv[r];
      sd[r] = x->sdispl[r] - (r > me ? (int)own : 0);
      rd[r] = x->rdispl[r] - (r > me ? (int)own : 0);
    }
    const MPI_Datatype t = es == 4 ? MPI_UINT32_T : MPI_UINT64_T;
    if (MPI_Alltoallv(send_host, sc, sd, t, recv_host, rc, rd, t, comm) != MPI_SUCCESS)
      st = CLPRIM_MPI_ERROR_MPI;
  }
  phase_end(clock, CLPRIM_MPI_PHASE_EXCHANGE);
  const int exchanged = st == CLPRIM_SUCCESS;
  if (exchanged) {
    last_profile.bytes_sent = last_profile.bytes_to_host = (n_local - own) * es;
    last_profile.bytes_received = last_profile.bytes_to_device = (share - own) * es;
  }
  /* 4. */
  if (st == CLPRIM_SUCCESS)
    st = write_async(ctx, bufs[first], base[first] * es, recv_low * es, recv_host);
  if (st == CLPRIM_SUCCESS)
    st = write_async(ctx, bufs[first], (base[first] + recv_low + own) * es, recv_high * es,
                     (char *)recv_host + recv_low * es);
  if (st == CLPRIM_SUCCESS) st = (clprim_status)clFinish(ctx->queue);
  phase_end(clock, CLPRIM_MPI_PHASE_TO_DEVICE);
  /* 5. */
  if (st == CLPRIM_SUCCESS && share > 0) {
    size_t *offsets = malloc(sizeof *offsets * ((size_t)P + 1));
    st = offsets ? clprim__call_begin(ctx, "mpi") : CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
    if (offsets && st == CLPRIM_SUCCESS) {
      st = merge_runs(ctx, type, bufs, base, first, x->recv, x->rdispl, P, offsets);
      if (st == CLPRIM_SUCCESS) st = (clprim_status)clFinish(ctx->queue);
      st = clprim__call_end(ctx, st);
    }
    free(offsets);
  }
  phase_end(clock, CLPRIM_MPI_PHASE_MERGE);
  return exchanged ? clprim__mpi_agree(ctx, comm, st) : st;
}

clprim_status clprim_mpi_sort_keys(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                   clprim_type type, clprim_buffer in, clprim_buffer out,
                                   size_t out_capacity, uint64_t *out_count) {
  memset(&last_profile, 0, sizeof last_profile);
  double clock = MPI_Wtime();
  struct clprim_mpi_part p;
  CLPRIM_CHECK(clprim__mpi_nth_check(ctx, comm, n_local, type, in, 0, 0, NULL, 0, 0, &p));
  const size_t es = clprim_type_size(type);
  const uint64_t P = (uint64_t)p.size, N = p.total;
  const uint64_t share = clprim_mpi_sort_share(N, p.rank, p.size);
  /* Every rank's capacity is checked where it can be: locally. */
  clprim_status st = CLPRIM_SUCCESS;
  if (P > SPLITTERS + 1)
    st = clprim__mpi_fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "more than %d ranks",
                          (int)SPLITTERS + 1);
  else if (out_capacity < share)
    st = clprim__mpi_fail(ctx, CLPRIM_ERROR_BUFFER_TOO_SMALL,
                          "out_capacity (%zu) is less than this rank's share (%llu)",
                          out_capacity, (unsigned long long)share);
  if (st == CLPRIM_SUCCESS) st = clprim__mpi_check_range(ctx, "out", out, es, out_capacity);
  if (st == CLPRIM_SUCCESS && (share > INT32_MAX || n_local > INT32_MAX))
    st = clprim__mpi_fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE,
                          "a rank's share or n_local is more than 2^31 - 1 (MPI counts)");
  st = clprim__mpi_agree(ctx, comm, st);
  const size_t np = (size_t)P;
  uint64_t *splitter_ranks = NULL, *keys = NULL, *below = NULL, *equal = NULL, *all = NULL,
           *record = NULL, *mine = NULL;
  int *scount = NULL, *sdispl = NULL, *rcount = NULL, *rdispl = NULL;
  if (st == CLPRIM_SUCCESS && N > 0 && P > 1) {
    splitter_ranks = malloc(np * 8), keys = malloc(np * 8), below = malloc(np * 8),
    equal = malloc(np * 8), all = malloc(np * (2 * np - 1) * 8), record = malloc(2 * np * 8);
    mine = malloc(2 * np * 8);
    scount = malloc(sizeof(int) * 8 * np);
    st = clprim__mpi_agree(ctx, comm,
                           splitter_ranks && keys && below && equal && all && record && mine &&
                                   scount
                               ? CLPRIM_SUCCESS
                               : CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  }
  int cuts_add_up = 0;
  if (st == CLPRIM_SUCCESS && N > 0 && P > 1) {
    sdispl = scount + np, rcount = scount + 2 * np, rdispl = scount + 3 * np;
    /* The splitters: the keys of global ranks r N / P (distinct, sorted). */
    size_t ns = 0;
    for (uint64_t r = 1; r < P; ++r) {
      const uint64_t at = share_start(N, r, P);
      if (at < N && (ns == 0 || splitter_ranks[ns - 1] != at)) splitter_ranks[ns++] = at;
    }
    if (ns > 0)
      st = clprim__mpi_select_ranks(ctx, comm, &p, type, in, splitter_ranks, ns, 0, 0, keys, NULL);
    /* Each rank's keys below and equal to each splitter, all-gathered. */
    if (st == CLPRIM_SUCCESS) {
      clprim_status local = CLPRIM_SUCCESS;
      if (ns > 0)
        local = clprim__mpi_count_around(ctx, &p, type, in, keys, (unsigned)ns, below, equal);
      for (size_t j = 0; j < ns; ++j)
        mine[2 * j] = local == CLPRIM_SUCCESS ? below[j] : 0,
                 mine[2 * j + 1] = local == CLPRIM_SUCCESS ? equal[j] : 0;
      st = clprim__mpi_gather_status(ctx, comm, p.size, local, mine, (unsigned)(2 * ns), all,
                                     record);
    }
    /* cut[q][r]: how many of rank q's sorted keys go to ranks below r. */
    if (st == CLPRIM_SUCCESS) {
      const size_t w = 2 * ns + 1;
      for (size_t q = 0; q < np; ++q) {
        uint64_t prev_cut = 0;
        for (size_t r = 0; r <= np; ++r) {
          uint64_t cut;
          if (r == 0)
            cut = 0;
          else if (r == np)
            cut = p.n_of[q];
          else {
            const uint64_t at = share_start(N, r, P);
            if (at >= N) {
              cut = p.n_of[q];
            } else {
              size_t j = 0;
              while (splitter_ranks[j] != at)
                ++j;
              uint64_t all_below = 0, eq_before = 0;
              for (size_t x = 0; x < np; ++x) {
                all_below += all[w * x + 1 + 2 * j];
                if (x < q) eq_before += all[w * x + 2 + 2 * j];
              }
              const uint64_t need = at - all_below; /* equal keys that go below r */
              const uint64_t left = need > eq_before ? need - eq_before : 0;
              const uint64_t eq = all[w * q + 2 + 2 * j];
              cut = all[w * q + 1 + 2 * j] + (eq < left ? eq : left);
            }
          }
          if (r > 0) {
            const uint64_t c = cut - prev_cut;
            if (q == (size_t)p.rank) scount[r - 1] = (int)c;
            if (r - 1 == (size_t)p.rank) rcount[q] = (int)c;
          }
          prev_cut = cut;
        }
      }
      uint64_t s = 0, t = 0;
      for (size_t r = 0; r < np; ++r)
        sdispl[r] = (int)s, s += (uint64_t)scount[r], rdispl[r] = (int)t, t += (uint64_t)rcount[r];
      /* What this rank sends must be its part and what it receives its
       * share (else the exchange would overrun the buffers): checked before
       * the agreement below, so that every rank stops there. */
      cuts_add_up = s == n_local && t == share && scount[p.rank] == rcount[p.rank];
    }
    phase_end(&clock, CLPRIM_MPI_PHASE_SPLITTERS);
    if (st == CLPRIM_SUCCESS) {
      const struct exchange x = {scount, sdispl, rcount, rdispl, scount + 4 * np};
      st = cuts_add_up ? sort_exchange(ctx, comm, &p, type, in, out, share, &x, &clock)
                       : clprim__mpi_agree(ctx, comm, CLPRIM_MPI_ERROR_INTERNAL);
    }
  } else if (st == CLPRIM_SUCCESS && N > 0) { /* one rank: its own sort */
    st = clprim_sort_keys(ctx, n_local, type, in, 0, 0, 0, out);
    if (st == CLPRIM_SUCCESS) st = (clprim_status)clFinish(ctx->queue);
    phase_end(&clock, CLPRIM_MPI_PHASE_LOCAL_SORT);
    st = clprim__mpi_agree(ctx, comm, st);
  }
  free(splitter_ranks), free(keys), free(below), free(equal), free(all), free(record), free(mine),
      free(scount);
  clprim__mpi_part_free(&p);
  if (st == CLPRIM_SUCCESS && out_count) *out_count = share;
  return st;
}
