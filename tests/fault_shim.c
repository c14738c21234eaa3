/* fault_shim.c: see fault_shim.h. Each wrapper counts the call, fails it
 * when it is the chosen one (a creating function then returns NULL and sets
 * *errcode_ret, the others return the code, and nothing is done), else
 * calls the ICD loader's function and keeps its books: objects alive, the
 * buffers each kernel's arguments hold, and commands that write a watched
 * buffer. */
#define _GNU_SOURCE
#include "fault_shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_ulong calls, fail_at, writes, first_write, fallible_after;
static atomic_int paused, fired;
static cl_int fail_code;
static const char *_Atomic fired_name;
static atomic_long live;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The loader's function `name` (the program itself may not list the
 * loader among its libraries: the wrappers define every function it uses). */
static void *real(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  static void *loader;
  if (!f && !loader) loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!f && loader) f = dlsym(loader, name);
  if (!f) {
    fprintf(stderr, "fault shim: %s not found in the OpenCL library\n", name);
    abort();
  }
  return f;
}
#define REAL(name) static __typeof__(&name) real_fn; if (!real_fn) real_fn = (__typeof__(&name))real(#name)

enum kind { ANY, DELIVER }; /* DELIVER: reads, waits, event queries */

/* Counts a call; 1 when it is the one to fail. */
static int hit(const char *name, enum kind kind) {
  if (atomic_load(&paused)) return 0;
  const unsigned long k = ++calls;
  if (atomic_load(&first_write) && kind == ANY) ++fallible_after;
  if (k != atomic_load(&fail_at)) return 0;
  fired_name = name;
  atomic_store(&fired, 1);
  return 1;
}

void shim_reset(void) {
  calls = fail_at = writes = first_write = fallible_after = 0;
  fired = 0;
  fired_name = NULL;
}
unsigned long shim_calls(void) { return calls; }
void shim_pause(int p) { paused = p; }
void shim_fail_at(unsigned long k, cl_int code) {
  fail_code = code;
  fail_at = k;
}
int shim_fired(void) { return fired; }
const char *shim_fired_name(void) { return fired_name ? fired_name : "(none)"; }
unsigned long shim_writes(void) { return writes; }
unsigned long shim_first_write(void) { return first_write; }
unsigned long shim_fallible_after_write(void) { return fallible_after; }
long shim_live(void) { return live; }

/* ------------------------------------------------------------ watched */
static cl_mem *watched;
static size_t watched_count, watched_room;

static int is_watched_locked(cl_mem m) {
  for (size_t i = 0; m && i < watched_count; ++i)
    if (watched[i] == m) return 1;
  return 0;
}
static void watch_locked(cl_mem m) {
  if (is_watched_locked(m)) return;
  if (watched_count == watched_room) {
    watched_room = watched_room ? 2 * watched_room : 64;
    watched = realloc(watched, watched_room * sizeof *watched);
    if (!watched) abort();
  }
  watched[watched_count++] = m;
}
void shim_watch(cl_mem m) {
  pthread_mutex_lock(&lock);
  watch_locked(m);
  pthread_mutex_unlock(&lock);
}
void shim_unwatch_all(void) {
  pthread_mutex_lock(&lock);
  watched_count = 0;
  pthread_mutex_unlock(&lock);
}
static int is_watched(cl_mem m) {
  pthread_mutex_lock(&lock);
  const int w = is_watched_locked(m);
  pthread_mutex_unlock(&lock);
  return w;
}
/* A command that writes a watched buffer was enqueued (by the call just counted). */
static void wrote(void) {
  if (atomic_load(&paused)) return;
  unsigned long none = 0;
  atomic_compare_exchange_strong(&first_write, &none, atomic_load(&calls));
  ++writes;
}

/* ---------------------------------------------------- kernel arguments */
#define MAX_ARGS 64
struct kernel_args {
  cl_kernel kernel;
  cl_mem arg[MAX_ARGS];
};
static struct kernel_args *kernels;
static size_t kernel_count, kernel_room;

static struct kernel_args *args_of_locked(cl_kernel k, int reset) {
  for (size_t i = 0; i < kernel_count; ++i)
    if (kernels[i].kernel == k) {
      if (reset) memset(kernels[i].arg, 0, sizeof kernels[i].arg);
      return &kernels[i];
    }
  if (kernel_count == kernel_room) {
    kernel_room = kernel_room ? 2 * kernel_room : 64;
    kernels = realloc(kernels, kernel_room * sizeof *kernels);
    if (!kernels) abort();
  }
  struct kernel_args *a = &kernels[kernel_count++];
  memset(a, 0, sizeof *a);
  a->kernel = k;
  return a;
}
static int kernel_writes_watched(cl_kernel k) {
  int w = 0;
  pthread_mutex_lock(&lock);
  struct kernel_args *a = args_of_locked(k, 0);
  for (int i = 0; i < MAX_ARGS && !w; ++i) w = is_watched_locked(a->arg[i]);
  pthread_mutex_unlock(&lock);
  return w;
}

/* ------------------------------------------------------------ wrappers */
#define FAIL_HANDLE(name)                                                                          \
  if (hit(#name, ANY)) {                                                                           \
    if (errcode_ret) *errcode_ret = fail_code;                                                     \
    return NULL;                                                                                   \
  }
#define FAIL_CODE(name, kind)                                                                      \
  if (hit(#name, kind)) return fail_code;
/* A made object (or event) adds one to the objects alive. */
#define MADE(obj)                                                                                  \
  if (obj) ++live;

cl_int clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms) {
  REAL(clGetPlatformIDs);
  FAIL_CODE(clGetPlatformIDs, ANY);
  return real_fn(num_entries, platforms, num_platforms);
}

cl_int clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                         size_t param_value_size, void *param_value,
                         size_t *param_value_size_ret) {
  REAL(clGetPlatformInfo);
  FAIL_CODE(clGetPlatformInfo, ANY);
  return real_fn(platform, param_name, param_value_size, param_value, param_value_size_ret);
}

cl_int clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type, cl_uint num_entries,
                      cl_device_id *devices, cl_uint *num_devices) {
  REAL(clGetDeviceIDs);
  FAIL_CODE(clGetDeviceIDs, ANY);
  return real_fn(platform, device_type, num_entries, devices, num_devices);
}

cl_int clGetDeviceInfo(cl_device_id device, cl_device_info param_name, size_t param_value_size,
                       void *param_value, size_t *param_value_size_ret) {
  REAL(clGetDeviceInfo);
  FAIL_CODE(clGetDeviceInfo, ANY);
  return real_fn(device, param_name, param_value_size, param_value, param_value_size_ret);
}

cl_context clCreateContext(const cl_context_properties *properties, cl_uint num_devices,
                           const cl_device_id *devices,
                           void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t,
                                                         void *),
                           void *user_data, cl_int *errcode_ret) {
  REAL(clCreateContext);
  FAIL_HANDLE(clCreateContext);
  cl_context c = real_fn(properties, num_devices, devices, pfn_notify, user_data, errcode_ret);
  MADE(c);
  return c;
}

cl_int clRetainContext(cl_context context) {
  REAL(clRetainContext);
  cl_int err = real_fn(context);
  if (err == CL_SUCCESS) ++live;
  return err;
}

cl_int clReleaseContext(cl_context context) {
  REAL(clReleaseContext);
  cl_int err = real_fn(context);
  if (err == CL_SUCCESS) --live;
  return err;
}

#ifdef __GNUC__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
cl_command_queue clCreateCommandQueue(cl_context context, cl_device_id device,
                                      cl_command_queue_properties properties,
                                      cl_int *errcode_ret) {
  REAL(clCreateCommandQueue);
  FAIL_HANDLE(clCreateCommandQueue);
  cl_command_queue q = real_fn(context, device, properties, errcode_ret);
  MADE(q);
  return q;
}
#ifdef __GNUC__
#pragma GCC diagnostic pop
#endif

cl_int clGetCommandQueueInfo(cl_command_queue queue, cl_command_queue_info param_name,
                             size_t param_value_size, void *param_value,
                             size_t *param_value_size_ret) {
  REAL(clGetCommandQueueInfo);
  FAIL_CODE(clGetCommandQueueInfo, ANY);
  return real_fn(queue, param_name, param_value_size, param_value, param_value_size_ret);
}

cl_int clRetainCommandQueue(cl_command_queue queue) {
  REAL(clRetainCommandQueue);
  cl_int err = real_fn(queue);
  if (err == CL_SUCCESS) ++live;
  return err;
}

cl_int clReleaseCommandQueue(cl_command_queue queue) {
  REAL(clReleaseCommandQueue);
  cl_int err = real_fn(queue);
  if (err == CL_SUCCESS) --live;
  return err;
}

cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
                      cl_int *errcode_ret) {
  REAL(clCreateBuffer);
  FAIL_HANDLE(clCreateBuffer);
  cl_mem m = real_fn(context, flags, size, host_ptr, errcode_ret);
  MADE(m);
  return m;
}

cl_mem clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                         cl_buffer_create_type buffer_create_type,
                         const void *buffer_create_info, cl_int *errcode_ret) {
  REAL(clCreateSubBuffer);
  FAIL_HANDLE(clCreateSubBuffer);
  cl_mem m = real_fn(buffer, flags, buffer_create_type, buffer_create_info, errcode_ret);
  MADE(m);
  pthread_mutex_lock(&lock);
  if (m && is_watched_locked(buffer)) watch_locked(m);
  pthread_mutex_unlock(&lock);
  return m;
}

cl_int clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name, size_t param_value_size,
                          void *param_value, size_t *param_value_size_ret) {
  REAL(clGetMemObjectInfo);
  FAIL_CODE(clGetMemObjectInfo, ANY);
  return real_fn(memobj, param_name, param_value_size, param_value, param_value_size_ret);
}

cl_int clReleaseMemObject(cl_mem memobj) {
  REAL(clReleaseMemObject);
  cl_int err = real_fn(memobj);
  if (err == CL_SUCCESS) --live;
  return err;
}

cl_program clCreateProgramWithSource(cl_context context, cl_uint count, const char **strings,
                                     const size_t *lengths, cl_int *errcode_ret) {
  REAL(clCreateProgramWithSource);
  FAIL_HANDLE(clCreateProgramWithSource);
  cl_program p = real_fn(context, count, strings, lengths, errcode_ret);
  MADE(p);
  return p;
}

cl_program clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                     const cl_device_id *device_list, const size_t *lengths,
                                     const unsigned char **binaries, cl_int *binary_status,
                                     cl_int *errcode_ret) {
  REAL(clCreateProgramWithBinary);
  FAIL_HANDLE(clCreateProgramWithBinary);
  cl_program p =
      real_fn(context, num_devices, device_list, lengths, binaries, binary_status, errcode_ret);
  MADE(p);
  return p;
}

cl_int clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id *device_list,
                      const char *options,
                      void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data) {
  REAL(clBuildProgram);
  FAIL_CODE(clBuildProgram, ANY);
  return real_fn(program, num_devices, device_list, options, pfn_notify, user_data);
}

cl_int clGetProgramInfo(cl_program program, cl_program_info param_name, size_t param_value_size,
                        void *param_value, size_t *param_value_size_ret) {
  REAL(clGetProgramInfo);
  FAIL_CODE(clGetProgramInfo, ANY);
  return real_fn(program, param_name, param_value_size, param_value, param_value_size_ret);
}

cl_int clGetProgramBuildInfo(cl_program program, cl_device_id device,
                             cl_program_build_info param_name, size_t param_value_size,
                             void *param_value, size_t *param_value_size_ret) {
  REAL(clGetProgramBuildInfo);
  FAIL_CODE(clGetProgramBuildInfo, ANY);
  return real_fn(program, device, param_name, param_value_size, param_value,
                 param_value_size_ret);
}

cl_int clReleaseProgram(cl_program program) {
  REAL(clReleaseProgram);
  cl_int err = real_fn(program);
  if (err == CL_SUCCESS) --live;
  return err;
}

cl_kernel clCreateKernel(cl_program program, const char *kernel_name, cl_int *errcode_ret) {
  REAL(clCreateKernel);
  FAIL_HANDLE(clCreateKernel);
  cl_kernel k = real_fn(program, kernel_name, errcode_ret);
  MADE(k);
  if (k) { /* a new kernel may have a released one's address */
    pthread_mutex_lock(&lock);
    args_of_locked(k, 1);
    pthread_mutex_unlock(&lock);
  }
  return k;
}

cl_int clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                      const void *arg_value) {
  REAL(clSetKernelArg);
  FAIL_CODE(clSetKernelArg, ANY);
  cl_int err = real_fn(kernel, arg_index, arg_size, arg_value);
  if (err == CL_SUCCESS && arg_index < MAX_ARGS) {
    pthread_mutex_lock(&lock);
    args_of_locked(kernel, 0)->arg[arg_index] =
        arg_size == sizeof(cl_mem) && arg_value ? *(const cl_mem *)arg_value : NULL;
    pthread_mutex_unlock(&lock);
  }
  return err;
}

cl_int clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size,
                       void *param_value, size_t *param_value_size_ret) {
  REAL(clGetKernelInfo);
  FAIL_CODE(clGetKernelInfo, ANY);
  return real_fn(kernel, param_name, param_value_size, param_value, param_value_size_ret);
}

cl_int clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                                cl_kernel_work_group_info param_name, size_t param_value_size,
                                void *param_value, size_t *param_value_size_ret) {
  REAL(clGetKernelWorkGroupInfo);
  FAIL_CODE(clGetKernelWorkGroupInfo, ANY);
  return real_fn(kernel, device, param_name, param_value_size, param_value,
                 param_value_size_ret);
}

cl_int clReleaseKernel(cl_kernel kernel) {
  REAL(clReleaseKernel);
  cl_int err = real_fn(kernel);
  if (err == CL_SUCCESS) --live;
  return err;
}

cl_int clRetainEvent(cl_event event) {
  REAL(clRetainEvent);
  cl_int err = real_fn(event);
  if (err == CL_SUCCESS) ++live;
  return err;
}

cl_int clReleaseEvent(cl_event event) {
  REAL(clReleaseEvent);
  cl_int err = real_fn(event);
  if (err == CL_SUCCESS) --live;
  return err;
}

cl_int clWaitForEvents(cl_uint num_events, const cl_event *event_list) {
  REAL(clWaitForEvents);
  FAIL_CODE(clWaitForEvents, DELIVER);
  return real_fn(num_events, event_list);
}

cl_int clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name,
                               size_t param_value_size, void *param_value,
                               size_t *param_value_size_ret) {
  REAL(clGetEventProfilingInfo);
  FAIL_CODE(clGetEventProfilingInfo, DELIVER);
  return real_fn(event, param_name, param_value_size, param_value, param_value_size_ret);
}

cl_int clFinish(cl_command_queue queue) {
  REAL(clFinish);
  FAIL_CODE(clFinish, DELIVER);
  return real_fn(queue);
}

/* An enqueued command's event adds one to the objects alive. */
#define EVENT_MADE(err)                                                                            \
  if ((err) == CL_SUCCESS && event && *event) ++live;

cl_int clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                              const size_t *global_work_offset, const size_t *global_work_size,
                              const size_t *local_work_size, cl_uint num_events_in_wait_list,
                              const cl_event *event_wait_list, cl_event *event) {
  REAL(clEnqueueNDRangeKernel);
  FAIL_CODE(clEnqueueNDRangeKernel, ANY);
  cl_int err = real_fn(queue, kernel, work_dim, global_work_offset, global_work_size,
                       local_work_size, num_events_in_wait_list, event_wait_list, event);
  EVENT_MADE(err);
  if (err == CL_SUCCESS && kernel_writes_watched(kernel)) wrote();
  return err;
}

cl_int clEnqueueNativeKernel(cl_command_queue queue, void(CL_CALLBACK *user_func)(void *),
                             void *args, size_t cb_args, cl_uint num_mem_objects,
                             const cl_mem *mem_list, const void **args_mem_loc,
                             cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                             cl_event *event) {
  REAL(clEnqueueNativeKernel);
  FAIL_CODE(clEnqueueNativeKernel, ANY);
  cl_int err = real_fn(queue, user_func, args, cb_args, num_mem_objects, mem_list, args_mem_loc,
                       num_events_in_wait_list, event_wait_list, event);
  EVENT_MADE(err);
  int w = 0;
  for (cl_uint i = 0; err == CL_SUCCESS && i < num_mem_objects && !w; ++i)
    w = is_watched(mem_list[i]);
  if (w) wrote();
  return err;
}

cl_int clEnqueueCopyBuffer(cl_command_queue queue, cl_mem src_buffer, cl_mem dst_buffer,
                           size_t src_offset, size_t dst_offset, size_t size,
                           cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                           cl_event *event) {
  REAL(clEnqueueCopyBuffer);
  FAIL_CODE(clEnqueueCopyBuffer, ANY);
  cl_int err = real_fn(queue, src_buffer, dst_buffer, src_offset, dst_offset, size,
                       num_events_in_wait_list, event_wait_list, event);
  EVENT_MADE(err);
  if (err == CL_SUCCESS && is_watched(dst_buffer)) wrote();
  return err;
}

cl_int clEnqueueFillBuffer(cl_command_queue queue, cl_mem buffer, const void *pattern,
                           size_t pattern_size, size_t offset, size_t size,
                           cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                           cl_event *event) {
  REAL(clEnqueueFillBuffer);
  FAIL_CODE(clEnqueueFillBuffer, ANY);
  cl_int err = real_fn(queue, buffer, pattern, pattern_size, offset, size,
                       num_events_in_wait_list, event_wait_list, event);
  EVENT_MADE(err);
  if (err == CL_SUCCESS && is_watched(buffer)) wrote();
  return err;
}

cl_int clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking_write,
                            size_t offset, size_t size, const void *ptr,
                            cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                            cl_event *event) {
  REAL(clEnqueueWriteBuffer);
  FAIL_CODE(clEnqueueWriteBuffer, ANY);
  cl_int err = real_fn(queue, buffer, blocking_write, offset, size, ptr,
                       num_events_in_wait_list, event_wait_list, event);
  EVENT_MADE(err);
  if (err == CL_SUCCESS && is_watched(buffer)) wrote();
  return err;
}

cl_int clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking_read,
                           size_t offset, size_t size, void *ptr,
                           cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                           cl_event *event) {
  REAL(clEnqueueReadBuffer);
  FAIL_CODE(clEnqueueReadBuffer, DELIVER);
  cl_int err = real_fn(queue, buffer, blocking_read, offset, size, ptr, num_events_in_wait_list,
                       event_wait_list, event);
  EVENT_MADE(err);
  return err;
}

/* The rectangular copies (a selection across devices moves its
 * sub-problems' meta words with one of each). */
cl_int clEnqueueWriteBufferRect(cl_command_queue queue, cl_mem buffer, cl_bool blocking_write,
                                const size_t *buffer_origin, const size_t *host_origin,
                                const size_t *region, size_t buffer_row_pitch,
                                size_t buffer_slice_pitch, size_t host_row_pitch,
                                size_t host_slice_pitch, const void *ptr,
                                cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                                cl_event *event) {
  REAL(clEnqueueWriteBufferRect);
  FAIL_CODE(clEnqueueWriteBufferRect, ANY);
  cl_int err = real_fn(queue, buffer, blocking_write, buffer_origin, host_origin, region,
                       buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr,
                       num_events_in_wait_list, event_wait_list, event);
  EVENT_MADE(err);
  if (err == CL_SUCCESS && is_watched(buffer)) wrote();
  return err;
}

cl_int clEnqueueReadBufferRect(cl_command_queue queue, cl_mem buffer, cl_bool blocking_read,
                               const size_t *buffer_origin, const size_t *host_origin,
                               const size_t *region, size_t buffer_row_pitch,
                               size_t buffer_slice_pitch, size_t host_row_pitch,
                               size_t host_slice_pitch, void *ptr,
                               cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                               cl_event *event) {
  REAL(clEnqueueReadBufferRect);
  FAIL_CODE(clEnqueueReadBufferRect, DELIVER);
  cl_int err = real_fn(queue, buffer, blocking_read, buffer_origin, host_origin, region,
                       buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr,
                       num_events_in_wait_list, event_wait_list, event);
  EVENT_MADE(err);
  return err;
}

void *clEnqueueMapBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking_map,
                         cl_map_flags map_flags, size_t offset, size_t size,
                         cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                         cl_event *event, cl_int *errcode_ret) {
  REAL(clEnqueueMapBuffer);
  FAIL_HANDLE(clEnqueueMapBuffer);
  cl_int err = CL_SUCCESS;
  void *p = real_fn(queue, buffer, blocking_map, map_flags, offset, size,
                    num_events_in_wait_list, event_wait_list, event, &err);
  if (errcode_ret) *errcode_ret = err;
  EVENT_MADE(err);
  if (err == CL_SUCCESS && is_watched(buffer)) wrote();
  return p;
}

cl_int clEnqueueUnmapMemObject(cl_command_queue queue, cl_mem memobj, void *mapped_ptr,
                               cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                               cl_event *event) {
  REAL(clEnqueueUnmapMemObject);
  FAIL_CODE(clEnqueueUnmapMemObject, ANY);
  cl_int err =
      real_fn(queue, memobj, mapped_ptr, num_events_in_wait_list, event_wait_list, event);
  EVENT_MADE(err);
  return err;
}

const char *shim_wrapped_names(void) {
  return "clBuildProgram\nclCreateBuffer\nclCreateCommandQueue\nclCreateContext\n"
         "clCreateKernel\nclCreateProgramWithBinary\nclCreateProgramWithSource\n"
         "clCreateSubBuffer\nclEnqueueCopyBuffer\nclEnqueueFillBuffer\nclEnqueueMapBuffer\n"
         "clEnqueueNDRangeKernel\nclEnqueueNativeKernel\nclEnqueueReadBuffer\n"
         "clEnqueueReadBufferRect\nclEnqueueUnmapMemObject\nclEnqueueWriteBuffer\n"
         "clEnqueueWriteBufferRect\nclFinish\nclGetCommandQueueInfo\nclGetDeviceIDs\n"
         "clGetDeviceInfo\nclGetEventProfilingInfo\nclGetKernelInfo\n"
         "clGetKernelWorkGroupInfo\nclGetMemObjectInfo\nclGetPlatformIDs\n"
         "clGetPlatformInfo\nclGetProgramBuildInfo\nclGetProgramInfo\n"
         "clReleaseCommandQueue\nclReleaseContext\nclReleaseEvent\nclReleaseKernel\n"
         "clReleaseMemObject\nclReleaseProgram\nclRetainCommandQueue\nclRetainContext\n"
         "clRetainEvent\nclSetKernelArg\nclWaitForEvents\n";
}
