//===- DeviceArgs.cpp - A generated launcher's arguments on device 0 ------===//

#include "DeviceArgs.h"

#include <cstring>

namespace rkc::cli {

DeviceBuffers::~DeviceBuffers() {
  for (void *p : pointers)
    rkc_device_free(p);
}

bool DeviceBuffers::alloc(void **p, size_t bytes, std::string &error) {
  if (rkc_device_alloc(p, bytes)) {
    error = rkc_last_error();
    return false;
  }
  pointers.push_back(*p);
  return true;
}

std::vector<uint16_t> halfBits(const HostTensor &t) {
  std::vector<uint16_t> bits(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    float f = static_cast<float>(roundToDType(t[i], t.dtype));
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (t.dtype == DType::BF16) {
      bits[i] = static_cast<uint16_t>(u >> 16); // exact: already rounded
    } else { // F16 from a value already representable in F16
      uint32_t sign = (u >> 16) & 0x8000u;
      int exponent = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
      uint32_t mantissa = u & 0x7fffffu;
      if (f == 0.f)
        bits[i] = static_cast<uint16_t>(sign);
      else if (exponent <= 0) // subnormal
        bits[i] = static_cast<uint16_t>(
            sign | ((mantissa | 0x800000u) >> (14 - exponent)));
      else if (exponent >= 31)
        bits[i] = static_cast<uint16_t>(sign | 0x7c00u);
      else
        bits[i] = static_cast<uint16_t>(sign | (exponent << 10) |
                                        (mantissa >> 13));
    }
  }
  return bits;
}

rkc_dtype runtimeDType(DType dtype) {
  return dtype == DType::BF16  ? RKC_BF16
         : dtype == DType::F16 ? RKC_F16
                               : RKC_F32;
}

bool uploadTensor(const HostTensor &t, DeviceBuffers &buffers,
                  rkc_tensor &descriptor, std::string &error) {
  rkc_dtype dtype = runtimeDType(t.dtype);
  size_t bytes = t.numel() * (dtype == RKC_F32 ? 4 : 2);
  void *device;
  if (!buffers.alloc(&device, bytes, error))
    return false;
  rkc_status status;
  if (dtype == RKC_F32) {
    std::vector<float> values(t.values.begin(), t.values.end());
    status = rkc_device_upload(device, values.data(), bytes);
  } else {
    std::vector<uint16_t> bits = halfBits(t);
    status = rkc_device_upload(device, bits.data(), bytes);
  }
  if (status) {
    error = rkc_last_error();
    return false;
  }
  descriptor = rkc_contiguous(device, dtype, static_cast<int32_t>(t.rank()),
                              t.shape.data());
  return true;
}

} // namespace rkc::cli
