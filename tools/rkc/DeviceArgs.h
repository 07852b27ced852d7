//===- DeviceArgs.h - A generated launcher's arguments on device 0 -*- C++ -*-===//
//
// What `rkc run --backend cuda` and `rkc tune` share to call a generated
// launcher from the rkc process: device buffers, host tensors uploaded in
// their dtype, and the args struct of a generated header built by layout.
//
//===----------------------------------------------------------------------===//

#ifndef RKC_TOOLS_RKC_DEVICEARGS_H
#define RKC_TOOLS_RKC_DEVICEARGS_H

#include "Support/Tensor.h"
#include "rkc/runtime.h"

#include <string>
#include <vector>

namespace rkc::cli {

/// The args struct of a generated header: one rkc_tensor per input, then o,
/// then these fields (the same member sequence, so the same layout).
struct ArgsTail {
  const float *initialState;
  float *finalState;
  const int64_t *cuSeqlens;
  const int64_t *cuSeqlensHost;
  int64_t numSeqs;
  const int32_t *stateIndices;
  float scale;
};

/// An args struct for a spec of `inputs` inputs, zero-initialised.
class ArgsBlock {
public:
  explicit ArgsBlock(size_t inputs)
      : count(inputs + 1),
        bytes(count * sizeof(rkc_tensor) + sizeof(ArgsTail)) {}
  rkc_tensor &input(size_t i) { return descriptors()[i]; }
  rkc_tensor &o() { return descriptors()[count - 1]; }
  ArgsTail &tail() {
    return *reinterpret_cast<ArgsTail *>(bytes.data() +
                                         count * sizeof(rkc_tensor));
  }
  const void *data() const { return bytes.data(); }

private:
  rkc_tensor *descriptors() {
    return reinterpret_cast<rkc_tensor *>(bytes.data());
  }
  size_t count;
  // operator new aligns for every fundamental type, as the layout needs.
  std::vector<unsigned char> bytes;
};

/// Device buffers freed when the owner goes.
struct DeviceBuffers {
  std::vector<void *> pointers;
  DeviceBuffers() = default;
  DeviceBuffers(const DeviceBuffers &) = delete;
  DeviceBuffers &operator=(const DeviceBuffers &) = delete;
  ~DeviceBuffers();
  bool alloc(void **p, size_t bytes, std::string &error);
};

/// float64 host values as the 16-bit patterns of t.dtype (BF16 or F16).
std::vector<uint16_t> halfBits(const HostTensor &t);

/// The runtime's dtype code of a tensor stored as `dtype` (F32 otherwise).
rkc_dtype runtimeDType(DType dtype);

/// Uploads `t` in its dtype (F32, BF16 or F16; others as F32) into a new
/// buffer of `buffers` and describes it (contiguous).
bool uploadTensor(const HostTensor &t, DeviceBuffers &buffers,
                  rkc_tensor &descriptor, std::string &error);

} // namespace rkc::cli

#endif // RKC_TOOLS_RKC_DEVICEARGS_H
