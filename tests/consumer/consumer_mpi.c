/* Links the installed clprim_mpi (CMake clprim::clprim_mpi, or pkg-config
 * clprim-mpi) and runs one collective sum on one rank (MPI's singleton
 * start, no mpirun), with clprim's own calls (clprim_context_free) beside. */
#include <clprim/clprim_mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  clprim_context *ctx;
  clprim_status st = clprim_mpi_context_create(&ctx, MPI_COMM_WORLD, NULL);
  int ok = 0;
  if (st == CLPRIM_SUCCESS) {
    int data[5] = {1, 2, 3, 4, 5};
    cl_int err;
    cl_mem buf = clCreateBuffer(clprim_context_cl_context(ctx),
                                CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
    clprim_value sum;
    sum.i32 = 0;
    if (err == CL_SUCCESS) {
      st = clprim_mpi_reduce_sum(ctx, MPI_COMM_WORLD, 5, CLPRIM_INT32, clprim_buf(buf), 0, &sum);
      clReleaseMemObject(buf);
    }
    ok = st == CLPRIM_SUCCESS && err == CL_SUCCESS && sum.i32 == 15;
    clprim_context_free(ctx);
  }
  printf("consumer_mpi: %s\n", ok ? "sum 15" : clprim_mpi_status_name(st));
  MPI_Finalize();
  return ok ? 0 : 1;
}
