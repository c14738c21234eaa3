/* Links the installed clprim and runs one small scan. It calls OpenCL
 * itself (clCreateBuffer, clEnqueueReadBuffer, clReleaseMemObject) through
 * what clprim.h includes, so the package must give OpenCL's flags too. */
#include <clprim/clprim.h>
#include <stdio.h>

int main(void) {
  if (clprim_version_number() != CLPRIM_VERSION_NUMBER) return 1;
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, NULL);
  if (st != CLPRIM_SUCCESS) {
    printf("context: %s\n", clprim_status_name(st));
    return 1;
  }
  int data[5] = {1, 2, 3, 4, 5}, out[5] = {0};
  cl_int err;
  cl_mem buf = clCreateBuffer(clprim_context_cl_context(ctx),
                              CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
  if (err != CL_SUCCESS) {
    printf("clCreateBuffer: %s\n", clprim_status_name(err));
    clprim_context_free(ctx);
    return 1;
  }
  st = clprim_scan_inclusive(ctx, 5, CLPRIM_INT32, clprim_buf(buf), 0, clprim_buf(buf));
  err = clEnqueueReadBuffer(clprim_context_queue(ctx), buf, CL_TRUE, 0, sizeof out, out, 0, NULL,
                            NULL);
  clReleaseMemObject(buf);
  clprim_context_free(ctx);
  printf("consumer: clprim %s, scan %s, read %s, last %d\n", clprim_version_string(),
         clprim_status_name(st), clprim_status_name(err), out[4]);
  return st == CLPRIM_SUCCESS && err == CL_SUCCESS && out[4] == 15 ? 0 : 1;
}
