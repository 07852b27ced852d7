//===- SafeTensors.h - Reading and writing safetensors files ---*- C++ -*-===//
//
// The Hugging Face safetensors format: an 8-byte little-endian header length
// N, N bytes of UTF-8 JSON describing each tensor (dtype, shape, and the byte
// range of its data), then the raw little-endian tensor data. Tensors are
// read into `HostTensor`s (float64 values, exact for every supported dtype
// except I64 values beyond 2^53) and written back in each tensor's `dtype`.
//
// Supported dtypes: F64, F32, F16, BF16, I64, I32.
//
// The reader treats its input as untrusted: every malformed image is reported
// as an error, and nothing is allocated beyond what the image's real size can
// back, whatever its header claims.
//
//===----------------------------------------------------------------------===//

#ifndef RKC_SUPPORT_SAFETENSORS_H
#define RKC_SUPPORT_SAFETENSORS_H

#include "Support/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rkc {

/// Parses a safetensors image held in memory. On success replaces the
/// contents of `tensors` (and of `*metadata`, when given, with the header's
/// "__metadata__" object, or nothing) and returns true. On failure returns
/// false, leaves `tensors` and `*metadata` untouched and sets `error` to one
/// clear sentence naming what is wrong (and the tensor, where one is
/// involved).
///
/// Tensors whose data ranges leave gaps or unused bytes are accepted; ranges
/// that overlap are not.
bool parseSafeTensors(const uint8_t *data, size_t size, TensorMap &tensors,
                      std::string &error,
                      std::map<std::string, std::string> *metadata = nullptr);

/// Reads and parses the safetensors file at `path`; errors are prefixed with
/// the path.
bool readSafeTensors(const std::string &path, TensorMap &tensors,
                     std::string &error,
                     std::map<std::string, std::string> *metadata = nullptr);

/// Serialises each tensor in its own `dtype` (values are rounded to it with
/// roundToDType: round-to-nearest-even for F32/F16/BF16; I64/I32 must hold
/// integers). Tensors are written in name order with contiguous data
/// offsets; the header is padded with spaces so the data starts 8-byte
/// aligned, as the reference writer does.
///
/// This function cannot fail, so it expects tensors that pass the checks
/// writeSafeTensors makes. For others its output is still well defined: a
/// tensor named "__metadata__" is skipped, missing values are written as 0
/// and extra ones dropped, integer values are rounded and saturated (NaN
/// becomes 0), and names or metadata that are not UTF-8 are repaired.
std::vector<uint8_t>
serializeSafeTensors(const TensorMap &tensors,
                     const std::map<std::string, std::string> &metadata = {});

/// Checks the tensors (shape, value count, integer values, names), then
/// serialises them and writes the file at `path`. On failure returns false
/// and sets `error` to one sentence.
bool writeSafeTensors(const std::string &path, const TensorMap &tensors,
                      std::string &error,
                      const std::map<std::string, std::string> &metadata = {});

} // namespace rkc

#endif // RKC_SUPPORT_SAFETENSORS_H
