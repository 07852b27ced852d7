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

struct CudaKernels {
  std::string header;   // NAME.h: C ABI
  std::string device;   // NAME.cu: kernels
  std::string launcher; // NAME_launch.c body (without the fatbin bytes)
  std::string manifest; // NAME.json: inputs, sizes, entry points
  int64_t prefillSharedBytes = 0, decodeSharedBytes = 0;
  /// The decode kernel's static shared memory, besides decodeSharedBytes
  /// (which the launch passes).
  int64_t decodeStaticSharedBytes = 0;
  /// The prefill kernel for 16-bit outputs' (its scan's staging buffers in
  /// 16 bits: at most prefillSharedBytes).
  int64_t prefillTensorCoreSharedBytes = 0;
  /// With --rec-split-scan: the prep kernel's shared memory, and the
  /// workspace a (chunk, value head) hands to the scan (0 otherwise).
  int64_t prepSharedBytes = 0, workspaceBytesPerChunk = 0;
  int64_t prepValueTile = 0; // its value-side columns at a time (split kernels)
  int64_t workspaceHalfBytesPerChunk = 0; // for 16-bit outputs
  /// With an out phase (--out-phase): the out kernel's shared memory, and
  /// what the scan hands it a (chunk, value head) (float32 outputs; half
  /// that for 16-bit ones). 0 otherwise.
  int64_t outSharedBytes = 0, outWorkspaceBytesPerChunk = 0;
  /// The same when the scan stages its raw input rows from the inputs (a
  /// launcher's choice by the inputs' layout; 0: no such rows).
  int64_t workspaceHalfLeanBytesPerChunk = 0;
  /// With --rec-split-scan: whether the scan stages each chunk's workspace
  /// in shared memory (by cp.async, the next chunk's during this one) or
  /// reads it where its ops stand (when staging does not fit).
  bool stagesWorkspace = false;
  /// Whether both prefill kernels stage in two buffers (else the float32
  /// one stages a chunk at a time, the next chunk's copies not overlapped).
  bool stagesInTwoBuffers = false;
};

/// Emits the kernels of `chunked` (lowered with --rec-lower-chunked) and
/// `decode` (lowered with --rec-lower-decode), two lowerings of one spec,
/// both scheduled by --rec-schedule (sizes, value tile, threads, shared
/// memory offsets). Returns false with `error` when they are not.
bool emitCudaKernels(rec::RecurrenceOp chunked, rec::RecurrenceOp decode,
                     CudaKernels &kernels, std::string &error);

} // namespace rkc

#endif // RKC_TARGET_CUDAEMITTER_H
