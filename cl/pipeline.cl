/* pipeline.cl: what a pipeline (src/pipeline.c) runs besides the kernels of
 * other families.
 *
 * A pipeline's stages (maps and filters, fused) are one generated function
 * that src/pipeline.c puts before a family's file, with the macros that
 * file's PIPELINE hook reads:
 *   PIPE_A_T    the first input's type (the array the kernels load);
 *   PIPE_OUT_T  the type of the last stage's element x: a built-in type,
 *               or a user operator's (after clprim_pipeline_map_op, whose
 *               prefix, engine/operator.c's, comes before the function);
 *   PIPE_PARAMS the extra kernel parameters, appended to the kernels'
 *               own: ", __global const B_T *pipe_in_1, ..., P_T pipe_p0,
 *               ..., P_T pipe_p7, ulong pipe_q0, ..., ulong pipe_q7" (the
 *               other inputs, the parameters p0..p7, the built-in
 *               predicates' operands as bits);
 *   PIPE_ARGS   the same names, to pass them on;
 *   int pipe_element(PIPE_A_T a, ulong i, PIPE_OUT_T *out PIPE_PARAMS):
 *               whether element i (whose first input is a) passes every
 *               filter, and its x in *out (where it fails, the x of the
 *               filter that failed it: partitions write that; but no
 *               cast converts between a built-in type and an operator's,
 *               so there *out holds the last x of PIPE_OUT_T's kind before
 *               it, built-in or the operator's, or is not written).
 * Each user expression sits on a line of its own after #line 1
 * "clprim-expression-<stage>", so compiler messages give its line and
 * column in the user's text.
 * Hooks: cl/select.cl (the ballot compaction: collect, and the compaction
 * before the selections), cl/reduce.cl (count, sum, min, max, args) and
 * cl/operators.cl (op_reduce: reduce_op).
 *
 * pipe_gather: top-k's positions among the compacted elements become
 * positions in the inputs: idx[j] = map[idx[j]] for j < k (uint, or ulong
 * with index64). */
#ifdef KERNEL_pipe_gather
__kernel void pipe_gather(__global uint *idx, __global const uint *map, ulong k, int index64) {
  const ulong j = get_global_id(0);
  if (j >= k) return;
  if (index64) {
    __global ulong *idx64 = (__global ulong *)idx;
    idx64[j] = ((__global const ulong *)map)[idx64[j]];
  } else {
    idx[j] = map[idx[j]];
  }
}
#endif
