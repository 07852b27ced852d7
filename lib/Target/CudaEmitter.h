//===- CudaEmitter.h - CUDA C++ from chunk-level and decode IR --*- C++ -*-===//
//
// Prints a lowered spec as CUDA C++: one prefill kernel from `rec.chunked`
// (each chunk op becomes a call into the device tile library, runtime/
// include/rkc/tile.cuh, on shared-memory tiles), one decode kernel from
// `rec.decode`, the kernels' parameter block in a C header, and host
// launchers that validate their arguments and launch through the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef RKC_TARGET_CUDAEMITTER_H
#define RKC_TARGET_CUDAEMITTER_H

#include "Rec/RecOps.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace rkc {

/// The schedule of the generated kernels: sizes fixed at compile time.
struct CudaSchedule {
  int64_t dk = 128, dv = 128;
  int64_t valueTile = 32; // value columns per thread block
  int64_t threads = 256;  // threads per block
  int64_t maxSharedBytes = 227 * 1024; // sm_90's opt-in limit per block
};

struct CudaKernels {
  std::string header;   // NAME.h: C ABI
  std::string device;   // NAME.cu: kernels
  std::string launcher; // NAME_launch.c body (without the fatbin bytes)
  std::string manifest; // NAME.json: inputs, sizes, entry points
  int64_t prefillSharedBytes = 0, decodeSharedBytes = 0;
};

/// Emits the kernels of `chunked` (lowered with --rec-lower-chunked) and
/// `decode` (lowered with --rec-lower-decode), two lowerings of one spec.
/// Returns false with `error` when the schedule does not fit (dk or dv not a
/// multiple of 32, the value tile not dividing dv, shared memory over the
/// limit).
bool emitCudaKernels(rec::RecurrenceOp chunked, rec::RecurrenceOp decode,
                     const CudaSchedule &schedule, CudaKernels &kernels,
                     std::string &error);

} // namespace rkc

#endif // RKC_TARGET_CUDAEMITTER_H
