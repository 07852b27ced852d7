//===- Tensor.cpp - Host tensors used by the CPU executors ----------------===//

#include "Support/Tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace rkc {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return "F64";
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  }
  return "?";
}

bool parseDType(const std::string &name, DType &dtype) {
  static const std::pair<const char *, DType> names[] = {
      {"F64", DType::F64},   {"F32", DType::F32},   {"F16", DType::F16},
      {"BF16", DType::BF16}, {"I64", DType::I64},   {"I32", DType::I32},
      {"f64", DType::F64},   {"f32", DType::F32},   {"f16", DType::F16},
      {"bf16", DType::BF16}, {"i64", DType::I64},   {"i32", DType::I32},
      {"float64", DType::F64}, {"float32", DType::F32},
      {"float16", DType::F16}, {"bfloat16", DType::BF16}};
  for (auto &[n, d] : names)
    if (name == n) {
      dtype = d;
      return true;
    }
  return false;
}

int64_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  }
  return 0;
}

/// Rounds to a binary format with `mantissaBits` explicit mantissa bits,
/// smallest normal exponent `minExponent` and largest finite value
/// `maxFinite`, directly from float64 (round to nearest even, subnormals
/// included), so there is no double rounding through float32.
static double roundToBinary(double value, int mantissaBits, int minExponent,
                            double maxFinite) {
  if (!std::isfinite(value) || value == 0.0)
    return value;
  double mag = std::fabs(value);
  int exp;
  std::frexp(mag, &exp); // mag = m * 2^exp, m in [0.5, 1)
  int e = std::max(exp - 1, minExponent);
  double quantum = std::ldexp(1.0, e - mantissaBits);
  double q = std::nearbyint(mag / quantum) * quantum; // ties to even
  if (q > maxFinite)
    return std::copysign(std::numeric_limits<double>::infinity(), value);
  return std::copysign(q, value);
}

static double roundToBF16(double value) {
  return roundToBinary(value, 7, -126, std::ldexp(255.0 / 128.0, 127));
}

static double roundToF16(double value) {
  return roundToBinary(value, 10, -14, 65504.0);
}

double roundToDType(double value, DType dtype) {
  switch (dtype) {
  case DType::F64:
    return value;
  case DType::F32:
    return static_cast<float>(value);
  case DType::BF16:
    return roundToBF16(value);
  case DType::F16:
    return roundToF16(value);
  case DType::I64:
  case DType::I32:
    return std::nearbyint(value);
  }
  return value;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

double relativeError(const HostTensor &x, const HostTensor &ref) {
  if (x.shape != ref.shape)
    return std::numeric_limits<double>::infinity();
  double diff = 0, norm = 0;
  for (int64_t i = 0, e = ref.numel(); i < e; ++i) {
    double d = x.values[i] - ref.values[i];
    diff += d * d;
    norm += ref.values[i] * ref.values[i];
  }
  if (std::isnan(diff))
    return std::numeric_limits<double>::infinity();
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

} // namespace rkc
