/* clprim-demo: an exclusive scan on the default device, checked on the CPU.
 * The first program to read when learning clprim. */
#include <clprim/clprim.h>

#include <stdio.h>
#include <stdlib.h>

int main(void) {
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, NULL); /* $CLPRIM_DEVICE, else first GPU */
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "no context: %s\n", clprim_status_name(st));
    return 1;
  }
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  printf("device: %s (%s), path %s\n", info.device_name, info.platform_name,
         clprim_path_name(info.path));

  const size_t n = 10u * 1000u * 1000u;
  int *host = malloc(n * sizeof *host), *result = malloc(n * sizeof *result);
  for (size_t i = 0; i < n; ++i) host[i] = (int)(i % 7) - 3;
  cl_int err;
  cl_mem buf = clCreateBuffer(clprim_context_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              n * sizeof *host, host, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "clCreateBuffer: %s\n", clprim_status_name(err));
    return 1;
  }
  st = clprim_scan_exclusive(ctx, CLPRIM_INT32, buf, buf, n); /* in place */
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "scan failed: %s\n%s\n", clprim_status_name(st), clprim_context_build_log(ctx));
    return 1;
  }
  clEnqueueReadBuffer(clprim_context_queue(ctx), buf, CL_TRUE, 0, n * sizeof *result, result, 0,
                      NULL, NULL);
  long long run = 0;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    bad += result[i] != (int)run;
    run += host[i];
  }
  printf("exclusive scan of %zu int32: %s (last prefix %d)\n", n, bad ? "WRONG" : "correct",
         result[n - 1]);
  clReleaseMemObject(buf);
  free(host);
  free(result);
  clprim_context_free(ctx);
  return bad ? 1 : 0;
}
