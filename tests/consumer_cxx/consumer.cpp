// A C++ program on the installed clprim that chooses OpenCL 2.0's host API
// itself: it makes its own queue with clCreateCommandQueueWithProperties on
// clprim's device, gives it to a second clprim context and scans through it.
#define CL_TARGET_OPENCL_VERSION 200
#include <clprim/clprim.h>

#include <cstdio>

int main() {
  clprim_context *first = nullptr;
  clprim_status st = clprim_context_create(&first, nullptr);
  if (st != CLPRIM_SUCCESS) {
    std::printf("context: %s\n", clprim_status_name(st));
    return 1;
  }
  cl_int err = CL_SUCCESS;
  const cl_queue_properties properties[] = {0};
  cl_command_queue queue = clCreateCommandQueueWithProperties(
      clprim_context_cl_context(first), clprim_context_device(first), properties, &err);
  if (err != CL_SUCCESS) {
    std::printf("clCreateCommandQueueWithProperties: %s\n", clprim_status_name(err));
    clprim_context_free(first);
    return 1;
  }
  clprim_context *ctx = nullptr;
  st = clprim_context_create_from_queue(&ctx, queue, nullptr);
  int data[5] = {1, 2, 3, 4, 5}, out[5] = {0, 0, 0, 0, 0};
  cl_mem buf = nullptr;
  if (st == CLPRIM_SUCCESS)
    buf = clCreateBuffer(clprim_context_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                         sizeof data, data, &err);
  if (buf) {
    st = clprim_scan_inclusive(ctx, 5, CLPRIM_INT32, clprim_buf(buf), 0, clprim_buf(buf));
    err = clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof out, out, 0, nullptr, nullptr);
    clReleaseMemObject(buf);
  }
  clprim_context_free(ctx);
  clReleaseCommandQueue(queue);
  clprim_context_free(first);
  std::printf("consumer_cxx: clprim %s, scan %s, read %s, last %d\n", clprim_version_string(),
              clprim_status_name(st), clprim_status_name(err), out[4]);
  return st == CLPRIM_SUCCESS && err == CL_SUCCESS && out[4] == 15 ? 0 : 1;
}
