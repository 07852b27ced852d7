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

#ifdef __cplusplus
}
#endif

#endif /* RKC_RUNTIME_H */
