/* A kernel with a planted out-of-bounds read and a local-memory race:
 * oclgrind-check.sh must report it (the ctest is marked WILL_FAIL), which
 * shows that the Oclgrind runs of the real tests can fail. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>

static const char *source =
    "__kernel void canary(__global const int *in, __global int *out) {\n"
    "  __local int shared[64];\n"
    "  size_t i = get_global_id(0);\n"
    "  shared[0] = (int)i;                 /* race: every work-item writes */\n"
    "  out[i] = in[i + 1] + shared[0];     /* out of bounds at the last item */\n"
    "}\n";

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  cl_int err = clGetPlatformIDs(1, &platform, NULL);
  err |= clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  err = clBuildProgram(prog, 1, &device, "", NULL, NULL);
  cl_kernel k = clCreateKernel(prog, "canary", &err);
  int host[64] = {0};
  cl_mem in = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
  clSetKernelArg(k, 0, sizeof in, &in);
  clSetKernelArg(k, 1, sizeof out, &out);
  size_t global = 64, local = 64;
  err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
  clFinish(q);
  printf("canary ran: %d\n", err);
  return 0;
}
