/* launch.c: the launch shape every family starts from. GPUs take 256
 * work-items per work-group and 8 work-groups per compute unit for
 * grid-stride passes (enough warps in flight to hide memory latency);
 * CPU runtimes take 64 and 2 (a work-group runs on one core, and fewer,
 * longer runs per work-item cost less there). The cpu path's kernels take
 * one work-item per work-group and a contiguous share of the data each, 8
 * shares a compute unit (a few per core keep the cores busy when shares
 * take unequal time): the knobs launch.cpu_shares_per_unit and
 * launch.cpu_share_min. */
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

/* The knobs of the cpu path's shares (docs/TUNING.md). */
enum { CPU_SHARES_PER_UNIT, CPU_SHARE_MIN, LAUNCH_KNOBS };
static const struct clprim_knob launch_knobs[LAUNCH_KNOBS] = {{"cpu_shares_per_unit", 1, 256},
                                                              {"cpu_share_min", 16, 1 << 26}};
static const struct clprim_tuning_row launch_table[] = {
    {0, 0, NULL, 0, 0, CLPRIM__KNOB(CPU_SHARES_PER_UNIT) | CLPRIM__KNOB(CPU_SHARE_MIN), {8, 4096},
     "portable: 8 shares a compute unit, of at least 4096 elements in the streaming passes "
     "(chosen, not measured against other counts)"}};
const struct clprim_family clprim__core_launch = {
    "launch", launch_knobs, LAUNCH_KNOBS, launch_table, 1, 0, NULL};

static long long launch_knob(const clprim_context *ctx, unsigned k) {
  long long v[LAUNCH_KNOBS];
  clprim__tuned(ctx, &clprim__core_launch, 0, 0, v);
  return v[k];
}

size_t clprim__cpu_shares(const clprim_context *ctx, size_t n, size_t least) {
  const size_t most = (ctx->info.compute_units ? ctx->info.compute_units : 1) *
                      (size_t)launch_knob(ctx, CPU_SHARES_PER_UNIT);
  const size_t shares = n / least + (n % least != 0);
  return shares == 0 ? 1 : shares < most ? shares : most;
}

size_t clprim__cpu_stream_shares(const clprim_context *ctx, size_t n) {
  return clprim__cpu_shares(ctx, n, (size_t)launch_knob(ctx, CPU_SHARE_MIN));
}
