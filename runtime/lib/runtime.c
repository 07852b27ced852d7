/*===- runtime.c - RKC's C runtime ----------------------------------------===*
 *
 * libcuda is opened with dlopen on first use; nothing here links against the
 * CUDA toolkit.
 *
 *===----------------------------------------------------------------------===*/

#include "rkc/runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[512];

const char *rkc_last_error(void) { return last_error; }

rkc_status rkc_fail(rkc_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(last_error, sizeof last_error, format, args);
  va_end(args);
  return status;
}

int rkc_dtype_size(int32_t dtype) {
  switch (dtype) {
  case RKC_F32:
    return 4;
  case RKC_BF16:
  case RKC_F16:
    return 2;
  }
  return 0;
}

rkc_tensor rkc_contiguous(const void *data, rkc_dtype dtype, int32_t rank,
                          const int64_t *shape) {
  rkc_tensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.rank = rank;
  t.dtype = dtype;
  int64_t stride = 1;
  /* Ranks above 4 cannot be described; the checks reject the rank. */
  for (int i = (rank > 4 ? 4 : rank) - 1; i >= 0; --i) {
    t.shape[i] = shape[i];
    t.stride[i] = stride;
    stride *= shape[i];
  }
  return t;
}

static const char *dtype_name(int32_t dtype) {
  switch (dtype) {
  case RKC_F32:
    return "f32";
  case RKC_BF16:
    return "bf16";
  case RKC_F16:
    return "f16";
  }
  return "unknown";
}

rkc_status rkc_check_tensor(const char *name, const rkc_tensor *t,
                            int32_t rank, const int64_t *shape,
                            uint32_t allowed) {
  if (!t)
    return rkc_fail(RKC_ERROR_NULL_POINTER, "%s: no tensor descriptor", name);
  if (t->rank != rank)
    return rkc_fail(RKC_ERROR_SHAPE, "%s has rank %d; expected %d", name,
                    t->rank, rank);
  int64_t elements = 1;
  for (int i = 0; i < rank; ++i) {
    if (t->shape[i] < 0 || (shape[i] >= 0 && t->shape[i] != shape[i]))
      return rkc_fail(RKC_ERROR_SHAPE,
                      "%s has size %lld in dimension %d; expected %lld", name,
                      (long long)t->shape[i], i, (long long)shape[i]);
    if (t->stride[i] < 0)
      return rkc_fail(RKC_ERROR_STRIDE, "%s has a negative stride (%lld) in "
                      "dimension %d", name, (long long)t->stride[i], i);
    elements *= t->shape[i];
  }
  if (t->dtype < 0 || t->dtype > RKC_F16 || !(allowed & (1u << t->dtype)))
    return rkc_fail(RKC_ERROR_DTYPE, "%s has dtype %s, which this kernel "
                    "does not take", name, dtype_name(t->dtype));
  if (elements > 0 && !t->data)
    return rkc_fail(RKC_ERROR_NULL_POINTER, "%s is a null pointer", name);
  if ((uintptr_t)t->data % (uintptr_t)rkc_dtype_size(t->dtype))
    return rkc_fail(RKC_ERROR_ALIGNMENT, "%s is not aligned to its %d-byte "
                    "elements", name, rkc_dtype_size(t->dtype));
  return RKC_SUCCESS;
}

rkc_status rkc_check_writable(const char *name, const rkc_tensor *t) {
  for (int i = 0; i < t->rank && i < 4; ++i)
    if (t->shape[i] > 1 && t->stride[i] == 0)
      return rkc_fail(RKC_ERROR_STRIDE, "%s has stride 0 in dimension %d of "
                      "size %lld: its elements would be written at once",
                      name, i, (long long)t->shape[i]);
  return RKC_SUCCESS;
}

rkc_status rkc_check_cu_seqlens(const int64_t *cu, int64_t n, int64_t total) {
  if (!cu)
    return rkc_fail(RKC_ERROR_NULL_POINTER, "cu_seqlens is a null pointer");
  if (n < 1)
    return rkc_fail(RKC_ERROR_CU_SEQLENS, "cu_seqlens needs at least one "
                    "sequence");
  if (cu[0] != 0)
    return rkc_fail(RKC_ERROR_CU_SEQLENS, "cu_seqlens must start at 0, got "
                    "%lld", (long long)cu[0]);
  for (int64_t i = 1; i <= n; ++i)
    if (cu[i] < cu[i - 1])
      return rkc_fail(RKC_ERROR_CU_SEQLENS, "cu_seqlens must be "
                      "non-decreasing, but entry %lld (%lld) is less than "
                      "entry %lld (%lld)", (long long)i, (long long)cu[i],
                      (long long)(i - 1), (long long)cu[i - 1]);
  if (cu[n] != total)
    return rkc_fail(RKC_ERROR_CU_SEQLENS, "cu_seqlens must end at T = %lld, "
                    "got %lld", (long long)total, (long long)cu[n]);
  return RKC_SUCCESS;
}

/*===----------------------------------------------------------------------===*
 * The driver, through dlopen
 *===----------------------------------------------------------------------===*/

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;

#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

static struct {
  int loaded;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuMemAlloc)(uint64_t *, size_t);
  CUresult (*cuMemFree)(uint64_t);
  CUresult (*cuMemcpyHtoD)(uint64_t, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, uint64_t, size_t);
} driver;
static pthread_mutex_t driver_lock = PTHREAD_MUTEX_INITIALIZER;

static rkc_status load_driver(void) {
  if (driver.loaded)
    return RKC_SUCCESS;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return rkc_fail(RKC_ERROR_NO_DRIVER, "cannot load libcuda.so.1: %s",
                    dlerror());
#define RKC_LOAD(sym, name)                                                    \
  *(void **)(&driver.sym) = dlsym(lib, name);                                  \
  if (!driver.sym)                                                             \
    return rkc_fail(RKC_ERROR_NO_DRIVER, "libcuda has no %s", name);
  RKC_LOAD(cuInit, "cuInit")
  RKC_LOAD(cuCtxGetCurrent, "cuCtxGetCurrent")
  RKC_LOAD(cuModuleLoadData, "cuModuleLoadData")
  RKC_LOAD(cuModuleGetFunction, "cuModuleGetFunction")
  RKC_LOAD(cuFuncSetAttribute, "cuFuncSetAttribute")
  RKC_LOAD(cuLaunchKernel, "cuLaunchKernel")
  RKC_LOAD(cuGetErrorString, "cuGetErrorString")
  RKC_LOAD(cuDeviceGet, "cuDeviceGet")
  RKC_LOAD(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
  RKC_LOAD(cuCtxSetCurrent, "cuCtxSetCurrent")
  RKC_LOAD(cuCtxSynchronize, "cuCtxSynchronize")
  RKC_LOAD(cuMemAlloc, "cuMemAlloc_v2")
  RKC_LOAD(cuMemFree, "cuMemFree_v2")
  RKC_LOAD(cuMemcpyHtoD, "cuMemcpyHtoD_v2")
  RKC_LOAD(cuMemcpyDtoH, "cuMemcpyDtoH_v2")
#undef RKC_LOAD
  if (driver.cuInit(0) != 0)
    return rkc_fail(RKC_ERROR_NO_DRIVER, "cuInit failed: no usable GPU");
  driver.loaded = 1;
  return RKC_SUCCESS;
}

static rkc_status cuda_fail(const char *what, CUresult result) {
  const char *message = "unknown error";
  if (driver.cuGetErrorString)
    driver.cuGetErrorString(result, &message);
  return rkc_fail(RKC_ERROR_CUDA, "%s failed: %s (%d)", what, message,
                  result);
}

rkc_status rkc_launch(rkc_module *module, const char *kernel,
                      const unsigned grid[3], const unsigned block[3],
                      size_t shared_bytes, CUstream stream,
                      const void *params, size_t params_size) {
  (void)params_size;
  if (!module->image)
    return rkc_fail(RKC_ERROR_NO_KERNELS, "%s: these launchers were "
                    "generated without a fatbin (rkc compile found no nvcc)",
                    kernel);
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return RKC_SUCCESS; /* nothing to do */
  pthread_mutex_lock(&driver_lock);
  rkc_status status = load_driver();
  CUcontext context = NULL;
  CUmodule loaded = NULL;
  if (status == RKC_SUCCESS) {
    CUresult r = driver.cuCtxGetCurrent(&context);
    if (r != 0 || !context)
      status = rkc_fail(RKC_ERROR_CUDA, "no current CUDA context: make a "
                        "device current (e.g. cudaSetDevice) before the call");
  }
  if (status == RKC_SUCCESS) {
    /* The module of this context, loaded on first use there. */
    int slot = -1;
    for (int i = 0; i < RKC_MAX_CONTEXTS && slot < 0; ++i)
      if (module->contexts[i] == context || !module->contexts[i])
        slot = i;
    if (slot < 0) {
      status = rkc_fail(RKC_ERROR_RESOURCES, "%s: loaded in more than %d "
                        "CUDA contexts", kernel, RKC_MAX_CONTEXTS);
    } else if (module->contexts[slot] == context) {
      loaded = module->modules[slot];
    } else {
      CUresult r = driver.cuModuleLoadData(&loaded, module->image);
      if (r != 0) {
        status = cuda_fail("cuModuleLoadData", r);
      } else {
        module->modules[slot] = loaded;
        module->contexts[slot] = context;
      }
    }
  }
  pthread_mutex_unlock(&driver_lock);
  if (status != RKC_SUCCESS)
    return status;

  CUfunction function;
  CUresult r = driver.cuModuleGetFunction(&function, loaded, kernel);
  if (r != 0)
    return cuda_fail(kernel, r);
  r = driver.cuFuncSetAttribute(function,
                                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                (int)shared_bytes);
  if (r == 1) /* CUDA_ERROR_INVALID_VALUE: over the device's limit */
    return rkc_fail(RKC_ERROR_RESOURCES, "%s needs %zu bytes of shared "
                    "memory, more than the device allows", kernel,
                    shared_bytes);
  if (r != 0)
    return cuda_fail("cuFuncSetAttribute", r);
  void *args[] = {(void *)(uintptr_t)params};
  r = driver.cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0],
                            block[1], block[2], (unsigned)shared_bytes,
                            stream, args, NULL);
  if (r != 0)
    return cuda_fail("cuLaunchKernel", r);
  last_error[0] = 0;
  return RKC_SUCCESS;
}

/*===----------------------------------------------------------------------===*
 * Device memory for hosts without a CUDA runtime
 *===----------------------------------------------------------------------===*/

static rkc_status with_driver(void) {
  pthread_mutex_lock(&driver_lock);
  rkc_status status = load_driver();
  pthread_mutex_unlock(&driver_lock);
  return status;
}

rkc_status rkc_device_open(int device) {
  rkc_status status = with_driver();
  if (status)
    return status;
  CUdevice handle;
  CUcontext context;
  CUresult r = driver.cuDeviceGet(&handle, device);
  if (r)
    return cuda_fail("cuDeviceGet", r);
  if ((r = driver.cuDevicePrimaryCtxRetain(&context, handle)))
    return cuda_fail("cuDevicePrimaryCtxRetain", r);
  if ((r = driver.cuCtxSetCurrent(context)))
    return cuda_fail("cuCtxSetCurrent", r);
  return RKC_SUCCESS;
}

rkc_status rkc_device_alloc(void **pointer, size_t bytes) {
  rkc_status status = with_driver();
  if (status)
    return status;
  uint64_t address = 0;
  CUresult r = driver.cuMemAlloc(&address, bytes ? bytes : 1);
  if (r)
    return cuda_fail("cuMemAlloc", r);
  *pointer = (void *)(uintptr_t)address;
  return RKC_SUCCESS;
}

rkc_status rkc_device_free(void *pointer) {
  if (!pointer || with_driver())
    return RKC_SUCCESS;
  CUresult r = driver.cuMemFree((uint64_t)(uintptr_t)pointer);
  return r ? cuda_fail("cuMemFree", r) : RKC_SUCCESS;
}

rkc_status rkc_device_upload(void *device, const void *host, size_t bytes) {
  rkc_status status = with_driver();
  if (status || !bytes)
    return status;
  CUresult r = driver.cuMemcpyHtoD((uint64_t)(uintptr_t)device, host, bytes);
  return r ? cuda_fail("cuMemcpyHtoD", r) : RKC_SUCCESS;
}

rkc_status rkc_device_download(void *host, const void *device, size_t bytes) {
  rkc_status status = with_driver();
  if (status || !bytes)
    return status;
  CUresult r = driver.cuMemcpyDtoH(host, (uint64_t)(uintptr_t)device, bytes);
  return r ? cuda_fail("cuMemcpyDtoH", r) : RKC_SUCCESS;
}

rkc_status rkc_device_synchronize(void) {
  rkc_status status = with_driver();
  if (status)
    return status;
  CUresult r = driver.cuCtxSynchronize();
  return r ? cuda_fail("cuCtxSynchronize", r) : RKC_SUCCESS;
}

/*===----------------------------------------------------------------------===*
 * Timing and device queries for tools
 *===----------------------------------------------------------------------===*/

#define CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 1
#define CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES 3
#define CU_FUNC_ATTRIBUTE_NUM_REGS 4
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE 38
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97

/* Loaded apart from the launch path's symbols, so that launching never
 * depends on them. */
static struct {
  int loaded;
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuMemsetD8Async)(uint64_t, unsigned char, size_t, CUstream);
  CUresult (*cuMemFreeAsync)(uint64_t, CUstream);
  CUresult (*cuMemPoolCreate)(CUmemoryPool *, const void *);
  CUresult (*cuMemPoolSetAttribute)(CUmemoryPool, int, void *);
  CUresult (*cuMemPoolTrimTo)(CUmemoryPool, size_t);
  CUresult (*cuMemAllocFromPoolAsync)(uint64_t *, size_t, CUmemoryPool,
                                      CUstream);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuCtxGetDevice)(CUdevice *);
  CUresult (*cuStreamSynchronize)(CUstream);
} tools;

static rkc_status load_tools(void) {
  pthread_mutex_lock(&driver_lock);
  rkc_status status = load_driver();
  if (status == RKC_SUCCESS && !tools.loaded) {
    /* The driver is loaded: this only takes another reference. */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      status = rkc_fail(RKC_ERROR_NO_DRIVER, "cannot load libcuda.so.1: %s",
                        dlerror());
#define RKC_LOAD_TOOL(sym, name)                                               \
  if (status == RKC_SUCCESS && !tools.sym) {                                   \
    *(void **)(&tools.sym) = dlsym(lib, name);                                 \
    if (!tools.sym)                                                            \
      status = rkc_fail(RKC_ERROR_NO_DRIVER, "libcuda has no %s", name);       \
  }
    /* The _v2 form where the driver has it (CUDA 12.8 and newer). */
    if (status == RKC_SUCCESS)
      *(void **)(&tools.cuEventElapsedTime) =
          dlsym(lib, "cuEventElapsedTime_v2");
    RKC_LOAD_TOOL(cuEventElapsedTime, "cuEventElapsedTime")
    RKC_LOAD_TOOL(cuEventCreate, "cuEventCreate")
    RKC_LOAD_TOOL(cuEventRecord, "cuEventRecord")
    RKC_LOAD_TOOL(cuEventSynchronize, "cuEventSynchronize")
    RKC_LOAD_TOOL(cuEventDestroy, "cuEventDestroy_v2")
    RKC_LOAD_TOOL(cuMemsetD8Async, "cuMemsetD8Async")
    RKC_LOAD_TOOL(cuMemFreeAsync, "cuMemFreeAsync")
    RKC_LOAD_TOOL(cuMemPoolCreate, "cuMemPoolCreate")
    RKC_LOAD_TOOL(cuMemPoolSetAttribute, "cuMemPoolSetAttribute")
    RKC_LOAD_TOOL(cuMemPoolTrimTo, "cuMemPoolTrimTo")
    RKC_LOAD_TOOL(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync")
    RKC_LOAD_TOOL(cuDeviceGetName, "cuDeviceGetName")
    RKC_LOAD_TOOL(cuDeviceGetAttribute, "cuDeviceGetAttribute")
    RKC_LOAD_TOOL(cuFuncGetAttribute, "cuFuncGetAttribute")
    RKC_LOAD_TOOL(cuModuleUnload, "cuModuleUnload")
    RKC_LOAD_TOOL(cuStreamCreate, "cuStreamCreate")
    RKC_LOAD_TOOL(cuStreamWaitEvent, "cuStreamWaitEvent")
    RKC_LOAD_TOOL(cuCtxGetDevice, "cuCtxGetDevice")
    RKC_LOAD_TOOL(cuStreamSynchronize, "cuStreamSynchronize")
#undef RKC_LOAD_TOOL
    if (status == RKC_SUCCESS)
      tools.loaded = 1;
  }
  pthread_mutex_unlock(&driver_lock);
  return status;
}

rkc_status rkc_event_create(CUevent *event) {
  rkc_status status = load_tools();
  if (status)
    return status;
  CUresult r = tools.cuEventCreate(event, 0 /* CU_EVENT_DEFAULT */);
  return r ? cuda_fail("cuEventCreate", r) : RKC_SUCCESS;
}

rkc_status rkc_event_record(CUevent event, CUstream stream) {
  rkc_status status = load_tools();
  if (status)
    return status;
  CUresult r = tools.cuEventRecord(event, stream);
  return r ? cuda_fail("cuEventRecord", r) : RKC_SUCCESS;
}

rkc_status rkc_event_synchronize(CUevent event) {
  rkc_status status = load_tools();
  if (status)
    return status;
  CUresult r = tools.cuEventSynchronize(event);
  return r ? cuda_fail("cuEventSynchronize", r) : RKC_SUCCESS;
}

rkc_status rkc_event_elapsed_ms(float *ms, CUevent start, CUevent end) {
  rkc_status status = load_tools();
  if (status)
    return status;
  CUresult r = tools.cuEventElapsedTime(ms, start, end);
  return r ? cuda_fail("cuEventElapsedTime", r) : RKC_SUCCESS;
}

rkc_status rkc_event_destroy(CUevent event) {
  if (!event || load_tools())
    return RKC_SUCCESS;
  CUresult r = tools.cuEventDestroy(event);
  return r ? cuda_fail("cuEventDestroy", r) : RKC_SUCCESS;
}

rkc_status rkc_device_memset_async(void *device, unsigned char value,
                                   size_t bytes, CUstream stream) {
  rkc_status status = load_tools();
  if (status || !bytes)
    return status;
  CUresult r = tools.cuMemsetD8Async((uint64_t)(uintptr_t)device, value,
                                     bytes, stream);
  return r ? cuda_fail("cuMemsetD8Async", r) : RKC_SUCCESS;
}

/* The pool of each device that workspaces come from. Not the device's current
 * pool: that one's release threshold is 0 unless its owner raised it, so it
 * hands its memory back to the driver at every synchronisation, and a caller
 * that synchronised after each call paid for mapping the workspace afresh on
 * every call (KDA at (1, 8192, 32): 1.23 -> 1.89 ms). This one keeps what it
 * has taken until rkc_release_memory. */
#define RKC_MAX_DEVICES 64
static CUmemoryPool pools[RKC_MAX_DEVICES];

/* As cuda.h's CUmemPoolProps (88 bytes). */
typedef struct {
  int alloc_type;    /* CU_MEM_ALLOCATION_TYPE_PINNED = 1 */
  int handle_types;  /* CU_MEM_HANDLE_TYPE_NONE = 0 */
  int location_type; /* CU_MEM_LOCATION_TYPE_DEVICE = 1 */
  int location_id;
  void *win32_security_attributes;
  size_t max_size;
  unsigned short usage;
  unsigned char reserved[54];
} rkc_pool_props;
#define CU_MEMPOOL_ATTR_RELEASE_THRESHOLD 4

rkc_status rkc_memory_pool(CUmemoryPool *pool) {
  if (!pool)
    return rkc_fail(RKC_ERROR_NULL_POINTER, "pool is a null pointer");
  *pool = NULL;
  rkc_status status = load_tools();
  if (status)
    return status;
  CUdevice device;
  CUresult r = tools.cuCtxGetDevice(&device);
  if (r)
    return cuda_fail("cuCtxGetDevice (make a device current first)", r);
  if (device < 0 || device >= RKC_MAX_DEVICES)
    return rkc_fail(RKC_ERROR_RESOURCES,
                    "device %d: workspace pools are kept "
                    "for the first %d devices",
                    device, RKC_MAX_DEVICES);
  pthread_mutex_lock(&driver_lock);
  if (!pools[device]) {
    rkc_pool_props props;
    memset(&props, 0, sizeof props);
    props.alloc_type = 1;
    props.location_type = 1;
    props.location_id = device;
    CUmemoryPool made = NULL;
    uint64_t keep = UINT64_MAX;
    if ((r = tools.cuMemPoolCreate(&made, &props)))
      status = cuda_fail("cuMemPoolCreate", r);
    else if ((r = tools.cuMemPoolSetAttribute(
                  made, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep)))
      status = cuda_fail("cuMemPoolSetAttribute", r);
    if (status == RKC_SUCCESS)
      pools[device] = made;
  }
  *pool = pools[device];
  pthread_mutex_unlock(&driver_lock);
  return status;
}

rkc_status rkc_release_memory(void) {
  rkc_status status = RKC_SUCCESS;
  pthread_mutex_lock(&driver_lock); /* a pool is only made with tools loaded */
  for (int d = 0; d < RKC_MAX_DEVICES && status == RKC_SUCCESS; ++d) {
    CUresult r;
    if (pools[d] && (r = tools.cuMemPoolTrimTo(pools[d], 0)))
      status = cuda_fail("cuMemPoolTrimTo", r);
  }
  pthread_mutex_unlock(&driver_lock);
  return status;
}

rkc_status rkc_stream_alloc(void **pointer, size_t bytes, CUstream stream) {
  CUmemoryPool pool;
  rkc_status status = rkc_memory_pool(&pool);
  if (status)
    return status;
  uint64_t address = 0;
  CUresult r =
      tools.cuMemAllocFromPoolAsync(&address, bytes ? bytes : 1, pool, stream);
  if (r)
    return cuda_fail("cuMemAllocFromPoolAsync", r);
  *pointer = (void *)(uintptr_t)address;
  return RKC_SUCCESS;
}

rkc_status rkc_stream_free(void *pointer, CUstream stream) {
  rkc_status status = load_tools();
  if (status || !pointer)
    return status;
  CUresult r = tools.cuMemFreeAsync((uint64_t)(uintptr_t)pointer, stream);
  return r ? cuda_fail("cuMemFreeAsync", r) : RKC_SUCCESS;
}

/* The side stream of each (context, stream) that asked, and the context's
 * multiprocessor count. One a stream, not one a context: calls on
 * independent streams (or graph captures on them) stay independent. */
#define RKC_MAX_SIDE_STREAMS 64
static struct {
  CUcontext context;
  CUstream of, stream;
  int multiprocessors;
} sides[RKC_MAX_SIDE_STREAMS];

rkc_status rkc_side_stream(CUstream of, CUstream *side,
                           int *multiprocessors) {
  rkc_status status = load_tools();
  if (status)
    return status;
  CUcontext context = NULL;
  CUresult r = driver.cuCtxGetCurrent(&context);
  if (r != 0 || !context)
    return rkc_fail(RKC_ERROR_CUDA, "no current CUDA context: make a device "
                    "current (e.g. cudaSetDevice) before the call");
  pthread_mutex_lock(&driver_lock);
  int slot = -1;
  for (int i = 0; i < RKC_MAX_SIDE_STREAMS && slot < 0; ++i)
    if ((sides[i].context == context && sides[i].of == of) ||
        !sides[i].context)
      slot = i;
  if (slot < 0) {
    status = rkc_fail(RKC_ERROR_RESOURCES, "side streams for more than %d "
                      "streams", RKC_MAX_SIDE_STREAMS);
  } else if (!sides[slot].context) {
    CUdevice device;
    CUstream stream;
    if ((r = tools.cuCtxGetDevice(&device)))
      status = cuda_fail("cuCtxGetDevice", r);
    else if ((r = tools.cuDeviceGetAttribute(
                  &sides[slot].multiprocessors,
                  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device)))
      status = cuda_fail("cuDeviceGetAttribute", r);
    else if ((r = tools.cuStreamCreate(&stream, 1 /* non-blocking */)))
      status = cuda_fail("cuStreamCreate", r);
    else {
      sides[slot].stream = stream;
      sides[slot].of = of;
      sides[slot].context = context;
    }
  }
  if (status == RKC_SUCCESS) {
    *side = sides[slot].stream;
    *multiprocessors = sides[slot].multiprocessors;
  }
  pthread_mutex_unlock(&driver_lock);
  return status;
}

rkc_status rkc_stream_wait(CUstream to, CUstream from) {
  rkc_status status = load_tools();
  if (status)
    return status;
  CUevent event;
  CUresult r = tools.cuEventCreate(&event, 2 /* CU_EVENT_DISABLE_TIMING */);
  if (r)
    return cuda_fail("cuEventCreate", r);
  if ((r = tools.cuEventRecord(event, from)))
    status = cuda_fail("cuEventRecord", r);
  else if ((r = tools.cuStreamWaitEvent(to, event, 0)))
    status = cuda_fail("cuStreamWaitEvent", r);
  tools.cuEventDestroy(event); /* released once the wait is satisfied */
  return status;
}

rkc_status rkc_stream_synchronize(CUstream stream) {
  rkc_status status = load_tools();
  if (status)
    return status;
  CUresult r = tools.cuStreamSynchronize(stream);
  return r ? cuda_fail("cuStreamSynchronize", r) : RKC_SUCCESS;
}

rkc_status rkc_device_get_properties(int device,
                                     rkc_device_properties *properties) {
  rkc_status status = load_tools();
  if (status)
    return status;
  memset(properties, 0, sizeof *properties);
  CUdevice handle;
  CUresult r = driver.cuDeviceGet(&handle, device);
  if (r)
    return cuda_fail("cuDeviceGet", r);
  if ((r = tools.cuDeviceGetName(properties->name,
                                 (int)sizeof properties->name - 1, handle)))
    return cuda_fail("cuDeviceGetName", r);
  struct {
    int attribute;
    int *value;
  } queries[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &properties->major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &properties->minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &properties->multiprocessors},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &properties->l2_bytes},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &properties->max_shared_bytes_optin}};
  for (size_t i = 0; i < sizeof queries / sizeof queries[0]; ++i)
    if ((r = tools.cuDeviceGetAttribute(queries[i].value,
                                        queries[i].attribute, handle)))
      return cuda_fail("cuDeviceGetAttribute", r);
  return RKC_SUCCESS;
}

rkc_status rkc_kernel_get_properties(const void *image, const char *kernel,
                                     rkc_kernel_properties *properties) {
  rkc_status status = load_tools();
  if (status)
    return status;
  memset(properties, 0, sizeof *properties);
  CUmodule module;
  CUfunction function;
  CUresult r = driver.cuModuleLoadData(&module, image);
  if (r)
    return cuda_fail("cuModuleLoadData", r);
  if ((r = driver.cuModuleGetFunction(&function, module, kernel))) {
    tools.cuModuleUnload(module);
    return cuda_fail(kernel, r);
  }
  struct {
    int attribute;
    int *value;
  } queries[] = {
      {CU_FUNC_ATTRIBUTE_NUM_REGS, &properties->registers},
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &properties->max_threads},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &properties->static_shared_bytes},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &properties->local_bytes}};
  for (size_t i = 0; i < sizeof queries / sizeof queries[0] && !r; ++i)
    r = tools.cuFuncGetAttribute(queries[i].value, queries[i].attribute,
                                 function);
  tools.cuModuleUnload(module);
  return r ? cuda_fail("cuFuncGetAttribute", r) : RKC_SUCCESS;
}
