/* fault_shim.h: the OpenCL entry points that libclprim imports, wrapped
 * (tests/fault_shim.c is linked into the test program, whose definitions
 * take the place of the ICD loader's; each calls the loader's own through
 * dlsym(RTLD_NEXT)). The wrapper can fail one chosen call, knows which
 * commands write the buffers a test watches, and counts the OpenCL objects
 * that are alive. */
#ifndef CLPRIM_FAULT_SHIM_H
#define CLPRIM_FAULT_SHIM_H

#include "clprim/clprim.h"

/* Calls that can be failed: every wrapped function but the clRetain* and
 * clRelease* ones (which return only CL_INVALID_* errors in practice, and
 * whose failure would leak on purpose). Counted from the last
 * shim_reset(); shim_pause(1) stops counting and failing (the test's own
 * calls), shim_pause(0) goes on. */
void shim_reset(void);
unsigned long shim_calls(void);
void shim_pause(int paused);
/* Fails the k-th counted call from the last shim_reset() (1-based) with
 * code, once; 0 turns it off. shim_fired(): whether a call failed since the
 * last shim_reset(), and shim_fired_name() the function's name. */
void shim_fail_at(unsigned long k, cl_int code);
int shim_fired(void);
const char *shim_fired_name(void);

/* Output buffers of the test: a command that may write one (a kernel with
 * it among its arguments, a copy, fill or write into it, a native kernel
 * given it, also through a sub-buffer) is a write. shim_writes(): such
 * commands enqueued since shim_reset(); shim_first_write(): the counted call
 * that enqueued the first (0: none); shim_calls_after_write(): counted calls
 * after it, shim_fallible_after_write() those of them that are not blocking
 * reads, waits or queries of events (what a call does after its last
 * command to deliver host results). */
void shim_watch(cl_mem mem);
void shim_unwatch_all(void);
unsigned long shim_writes(void);
unsigned long shim_first_write(void);
unsigned long shim_fallible_after_write(void);

/* OpenCL objects alive that were made through the wrapper (buffers, sub-
 * buffers, kernels, programs, events, queues, contexts): made and retained,
 * less released. */
long shim_live(void);
/* The wrapped functions' names, one per line (the test compares them with
 * what libclprim imports). */
const char *shim_wrapped_names(void);

#endif
