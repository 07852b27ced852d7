/*===- runtime.h - RKC's C runtime: tensors, status, module loading -*- C -*-===*
 *
 * The small runtime that generated launchers link against. It reaches the
 * CUDA driver (libcuda) through dlopen, so it builds and links on machines
 * without a GPU or a CUDA toolkit; launches never synchronise the host, so
 * they can be captured in CUDA graphs.
 *
 *===----------------------------------------------------------------------===*/

#ifndef RKC_RUNTIME_H
#define RKC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The driver's stream type, spelled as cuda.h spells it so both can be
 * included together. */
typedef struct CUstream_st *CUstream;

typedef enum rkc_status {
  RKC_SUCCESS = 0,
  RKC_ERROR_NULL_POINTER = 1,     /* a required pointer is null */
  RKC_ERROR_SHAPE = 2,            /* sizes or shapes do not fit the spec */
  RKC_ERROR_DTYPE = 3,            /* an unsupported element type */
  RKC_ERROR_STRIDE = 4,           /* negative strides, or a written tensor whose elements overlap */
  RKC_ERROR_ALIGNMENT = 5,        /* a pointer misaligned for its type */
  RKC_ERROR_CU_SEQLENS = 6,       /* cu_seqlens not monotone or out of range */
  RKC_ERROR_NO_DRIVER = 7,        /* libcuda.so could not be loaded */
  RKC_ERROR_CUDA = 8,             /* a CUDA driver call failed */
  RKC_ERROR_RESOURCES = 9,        /* the kernel needs more than the device has */
  RKC_ERROR_NO_KERNELS = 10       /* built without a fatbin (no nvcc at compile time) */
} rkc_status;

typedef enum rkc_dtype {
  RKC_F32 = 0,
  RKC_BF16 = 1,
  RKC_F16 = 2
} rkc_dtype;

/* A strided device tensor of up to 4 dimensions (strides in elements). */
typedef struct rkc_tensor {
  const void *data;
  int64_t shape[4];
  int64_t stride[4];
  int32_t rank;
  int32_t dtype; /* rkc_dtype */
} rkc_tensor;

/* A contiguous tensor descriptor (row-major strides). */
rkc_tensor rkc_contiguous(const void *data, rkc_dtype dtype, int32_t rank,
                          const int64_t *shape);

/* The message of the last error on this thread ("" after success). */
const char *rkc_last_error(void);

/* Records `status` with a printf-style message; returns `status`. */
rkc_status rkc_fail(rkc_status status, const char *format, ...);

/* Bytes per element of a dtype, 0 if unknown. */
int rkc_dtype_size(int32_t dtype);

/* Checks a tensor against an expected rank and shape (entries < 0 are not
 * checked), its dtype against `allowed` (a bit per rkc_dtype), its strides
 * (non-negative) and its alignment. `name` appears in the message. */
rkc_status rkc_check_tensor(const char *name, const rkc_tensor *t,
                            int32_t rank, const int64_t *shape,
                            uint32_t allowed);

/* Checks a tensor the kernels write: no dimension of size > 1 may have a
 * zero stride (threads would write one element at once). */
rkc_status rkc_check_writable(const char *name, const rkc_tensor *t);

/* Checks a host copy of cu_seqlens: N + 1 entries, starting at 0,
 * non-decreasing, ending at T. */
rkc_status rkc_check_cu_seqlens(const int64_t *cu_seqlens, int64_t n,
                                int64_t total);

/* A module embedded as a fatbin, loaded into each context (one a device, for
 * the primary contexts) on first use there. One per generated file:
 * `static rkc_module m = {image};`. */
#define RKC_MAX_CONTEXTS 16
typedef struct rkc_module {
  const void *image;
  void *modules[RKC_MAX_CONTEXTS];  /* CUmodule, by context */
  void *contexts[RKC_MAX_CONTEXTS]; /* CUcontext */
} rkc_module;

/* Launches `kernel` of `module` with one by-value argument `params`
 * (`params_size` bytes), raising the kernel's dynamic shared memory limit to
 * `shared_bytes` first. Asynchronous: no host synchronisation. */
rkc_status rkc_launch(rkc_module *module, const char *kernel,
                      const unsigned grid[3], const unsigned block[3],
                      size_t shared_bytes, CUstream stream,
                      const void *params, size_t params_size);

/* Device memory for hosts that have no CUDA runtime of their own (the rkc
 * CLI): the primary context of `device` is made current, then memory is
 * allocated, copied and freed through the driver. */
rkc_status rkc_device_open(int device);
rkc_status rkc_device_alloc(void **pointer, size_t bytes);
rkc_status rkc_device_free(void *pointer);
rkc_status rkc_device_upload(void *device, const void *host, size_t bytes);
rkc_status rkc_device_download(void *host, const void *device, size_t bytes);
rkc_status rkc_device_synchronize(void);

/* Timing and device queries for tools that measure kernels (rkc tune),
 * through the same dlopen'ed driver. Events and memsets need a current
 * context (rkc_device_open). */
typedef struct CUevent_st *CUevent; /* spelled as cuda.h spells it */
rkc_status rkc_event_create(CUevent *event);
rkc_status rkc_event_record(CUevent event, CUstream stream);
rkc_status rkc_event_synchronize(CUevent event);
/* Milliseconds between two recorded, completed events. */
rkc_status rkc_event_elapsed_ms(float *ms, CUevent start, CUevent end);
rkc_status rkc_event_destroy(CUevent event);
/* Sets `bytes` bytes at `device` to `value`, asynchronously on `stream`
 * (e.g. to evict the L2 cache between timed runs). */
rkc_status rkc_device_memset_async(void *device, unsigned char value,
                                   size_t bytes, CUstream stream);

/* Stream-ordered device memory (cuMemAllocFromPoolAsync/cuMemFreeAsync): a
 * launcher's workspace lives from its first kernel to its last on `stream`,
 * without a host synchronisation, and inside CUDA graph captures. It comes
 * from the runtime's own pool of the current device (rkc_memory_pool), which
 * keeps the memory it has taken across calls and synchronisations, so a
 * call's workspace is not mapped again on each call. */
rkc_status rkc_stream_alloc(void **pointer, size_t bytes, CUstream stream);
rkc_status rkc_stream_free(void *pointer, CUstream stream);
/* The runtime's workspace pool of the current device (made on first use), for
 * callers that read its attributes (cuMemPoolGetAttribute: what it holds,
 * its peak). */
/* Spelled as cuda.h spells it. */
typedef struct CUmemPoolHandle_st *CUmemoryPool;
rkc_status rkc_memory_pool(CUmemoryPool *pool);
/* Hands the memory the workspace pools hold and no call uses back to the
 * driver (cuMemPoolTrimTo). Workspaces freed on a stream count as used until
 * that stream reaches the free: synchronise it first. */
rkc_status rkc_release_memory(void);

/* A second stream for work enqueued on `of` in the current context
 * (non-blocking, made on first use and kept, one for each such stream), and
 * the device's multiprocessors: for kernels that may run beside others (the
 * prep of a segment beside the scan of the one before). Nothing waits on it
 * by spinning: work on it is ordered by events only. */
rkc_status rkc_side_stream(CUstream of, CUstream *side, int *multiprocessors);
/* `to` waits for the work enqueued on `from` so far (an event, recorded on
 * `from` and waited on by `to`). */
rkc_status rkc_stream_wait(CUstream to, CUstream from);
/* Waits on the host for the work enqueued on `stream`. */
rkc_status rkc_stream_synchronize(CUstream stream);

typedef struct rkc_device_properties {
  char name[256];              /* "NVIDIA H200" */
  int major, minor;            /* compute capability */
  int multiprocessors;
  int l2_bytes;
  int max_shared_bytes_optin;  /* shared memory a block may opt in to */
} rkc_device_properties;
rkc_status rkc_device_get_properties(int device,
                                     rkc_device_properties *properties);

typedef struct rkc_kernel_properties {
  int registers;           /* a thread */
  int max_threads;         /* a block, given the registers it uses */
  int static_shared_bytes; /* besides the dynamic shared memory */
  int local_bytes;         /* a thread: register spills and stack */
} rkc_kernel_properties;
/* Loads `image` (a fatbin or cubin) into the current context, reads the
 * properties of its kernel `kernel`, and unloads it. */
rkc_status rkc_kernel_get_properties(const void *image, const char *kernel,
                                     rkc_kernel_properties *properties);

#ifdef __cplusplus
}
#endif

#endif /* RKC_RUNTIME_H */
