/* input.h: the element source, how kernels that a pipeline can feed
 * (reduce.cl, select.cl, nth_element.cl, topk.cl, operators.cl's
 * op_reduce) read their input.
 *
 * Such a kernel takes its input as `__global const IN_T *in`, appends
 * IN_PARAMS to its own parameters, and gets element i, whose loaded input
 * is a, from
 *   int in_element(IN_T a, ulong i, T *x IN_PARAMS)
 * which writes the element to *x and returns whether it is there. Passing
 * IN_PARAMS on is IN_ARGS. Two sources:
 *   a plain load (the default): IN_T is T, *x = a, every element is there;
 *   a pipeline's stages (-DPIPELINE): src/engine/stages.c puts before the
 *     family's file the function pipe_element and the PIPE_* macros (see
 *     cl/pipeline.cl); IN_T is the first input's type, *x the last stage's
 *     value (where a filter fails the element, that filter's value), and
 *     the element is there when it passes every filter.
 * x (of PIPE_OUT_T) becomes T in a pipeline's in_element by a cast, where
 * both are built-in types; a user operator's type (a struct) has no cast,
 * not even to itself, so two builds say otherwise: -DPIPE_OUT_IS_T, which
 * the host gives where x's type is T itself (op_reduce, T its operator's
 * type: x goes to the stages' *pipe_out as it is), and -DPIPE_COUNT, whose
 * kernels read no x (*x is 0; so a count takes x of any type).
 * IN_FILTERS says whether an element can be missing (1 for a pipeline); a
 * kernel keeps under `#if IN_FILTERS` only what exists for missing
 * elements (counting those that are there). With the plain source
 * in_element's result is the constant 1, so the checks fold away.
 *
 * Needs T (the element type the family computes on). */
#ifndef CLPRIM_INPUT_H
#define CLPRIM_INPUT_H

#ifdef PIPELINE
#define IN_T PIPE_A_T
#define IN_PARAMS PIPE_PARAMS
#define IN_ARGS PIPE_ARGS
#define IN_FILTERS 1
CLPRIM_INLINE int in_element(PIPE_A_T a, ulong i, T *x PIPE_PARAMS) {
#if defined(PIPE_OUT_IS_T)
  return pipe_element(a, i, x PIPE_ARGS) != 0;
#elif defined(PIPE_COUNT)
  PIPE_OUT_T y;
  *x = (T)0;
  return pipe_element(a, i, &y PIPE_ARGS) != 0;
#else
  PIPE_OUT_T y = (PIPE_OUT_T)0;
  const int there = pipe_element(a, i, &y PIPE_ARGS) != 0;
  *x = (T)y;
  return there;
#endif
}
#else
#define IN_T T
#define IN_PARAMS
#define IN_ARGS
#define IN_FILTERS 0
CLPRIM_INLINE int in_element(T a, ulong i, T *x) {
  (void)i;
  *x = a;
  return 1;
}
#endif
#define IN_VEC4 CLPRIM_CAT(IN_T, 4)

/* Element i's value alone (an element that is not there: its filter's). */
CLPRIM_INLINE T in_value(IN_T a, ulong i IN_PARAMS) {
  T x;
  in_element(a, i, &x IN_ARGS);
  return x;
}

#endif /* CLPRIM_INPUT_H */
