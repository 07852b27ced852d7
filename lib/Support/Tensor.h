//===- Tensor.h - Host tensors used by the CPU executors -------*- C++ -*-===//
//
// A host tensor keeps its values in float64 whatever dtype it was read as, so
// the float64 executors compute on the exact (rounded) kernel inputs. `dtype`
// records how the tensor is stored in files and what it is written back as.
//
//===----------------------------------------------------------------------===//

#ifndef RKC_SUPPORT_TENSOR_H
#define RKC_SUPPORT_TENSOR_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rkc {

enum class DType { F64, F32, F16, BF16, I64, I32 };

/// The safetensors spelling of a dtype ("F32", "BF16", ...).
const char *dtypeName(DType dtype);
/// Parses a safetensors dtype name or a lower-case alias ("f32", "bf16").
/// Returns false if the name is unknown.
bool parseDType(const std::string &name, DType &dtype);
/// Bytes per element.
int64_t dtypeSize(DType dtype);
/// Rounds a float64 value to what `dtype` can hold (round to nearest even),
/// returned as float64.
double roundToDType(double value, DType dtype);

struct HostTensor {
  DType dtype = DType::F64;
  std::vector<int64_t> shape;
  std::vector<double> values;

  HostTensor() = default;
  HostTensor(std::vector<int64_t> shape, DType dtype = DType::F64)
      : dtype(dtype), shape(std::move(shape)), values(numel(), 0.0) {}

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  double &operator[](int64_t i) { return values[i]; }
  double operator[](int64_t i) const { return values[i]; }
};

/// Tensors by name, as a spec names its inputs and outputs.
using TensorMap = std::map<std::string, HostTensor>;

/// "[2, 64, 3, 128]".
std::string formatShape(const std::vector<int64_t> &shape);

/// Relative Frobenius error ||x - ref|| / ||ref|| (absolute norm of x - ref
/// when ref is zero). Shapes must match; returns +inf if they do not.
double relativeError(const HostTensor &x, const HostTensor &ref);

} // namespace rkc

#endif // RKC_SUPPORT_TENSOR_H
