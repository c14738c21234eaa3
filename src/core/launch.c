/* launch.c: the launch shape every family starts from. GPUs take 256
 * work-items per work-group and 8 work-groups per compute unit for
 * grid-stride passes (enough warps in flight to hide memory latency);
 * CPU runtimes take 64 and 2 (a work-group runs on one core, and fewer,
 * longer runs per work-item cost less there). The cpu path's kernels take
 * one work-item per work-group and a contiguous share of the data each, 8
 * shares a compute unit (a few per core keep the cores busy when shares
 * take unequal time). */
#include "core.h"

unsigned clprim__fit_wg(const clprim_context *ctx, unsigned wg) {
  while (wg > ctx->info.max_work_group_size && wg > 32) wg /= 2;
  return wg;
}

struct clprim_launch clprim__launch(const clprim_context *ctx) {
  const int gpu = (ctx->info.device_type & CL_DEVICE_TYPE_GPU) != 0;
  const size_t units = ctx->info.compute_units ? ctx->info.compute_units : 1;
  struct clprim_launch l = {clprim__fit_wg(ctx, gpu ? 256 : 64), units * (gpu ? 8 : 2)};
  return l;
}

size_t clprim__cpu_shares(const clprim_context *ctx, size_t n, size_t least) {
  const size_t most = (ctx->info.compute_units ? ctx->info.compute_units : 1) * 8;
  const size_t shares = n / least + (n % least != 0);
  return shares == 0 ? 1 : shares < most ? shares : most;
}
