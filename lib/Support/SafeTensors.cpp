//===- SafeTensors.cpp - Reading and writing safetensors files ------------===//
//
// The header is parsed with llvm::json, then every claim it makes (dtype,
// shape, byte ranges) is checked against the real size of the image before
// any tensor storage is allocated, so a lying header can neither make us read
// out of bounds nor allocate more than the image itself could hold.
//
//===----------------------------------------------------------------------===//

#include "Support/SafeTensors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <tuple>

namespace rkc {

namespace {

/// The reference implementation refuses headers above 100 MB; a real header
/// is a few kilobytes per thousand tensors, so anything larger is corrupt.
constexpr uint64_t kMaxHeaderLength = 100'000'000;

/// llvm::json parses recursively, so deeply nested input (a few million '[')
/// overflows the stack. A valid header nests three levels deep; anything
/// past this limit is rejected before it reaches the parser.
constexpr int kMaxNesting = 64;

constexpr const char *kMetadataKey = "__metadata__";

//===----------------------------------------------------------------------===//
// Byte and bit conversions
//===----------------------------------------------------------------------===//

// Bytes are assembled by hand rather than memcpy'd so the format stays
// little-endian whatever the host is, and reads from unaligned offsets in the
// buffer are well defined.
uint64_t loadLE(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

void storeLE(std::vector<uint8_t> &out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

double f16BitsToDouble(uint16_t bits) {
  double sign = (bits & 0x8000u) ? -1.0 : 1.0;
  int exp = (bits >> 10) & 0x1f;
  int mant = bits & 0x3ff;
  if (exp == 0) // zero or subnormal: mant * 2^-24
    return sign * std::ldexp(static_cast<double>(mant), -24);
  if (exp == 31)
    return mant ? std::copysign(std::numeric_limits<double>::quiet_NaN(), sign)
                : sign * std::numeric_limits<double>::infinity();
  return sign * std::ldexp(static_cast<double>(mant | 0x400), exp - 25);
}

/// Bit pattern of `value`, which must already be rounded to float16 (values
/// that are not are rounded to nearest here, but only as a safety net).
uint16_t doubleToF16Bits(double value) {
  uint16_t sign = std::signbit(value) ? 0x8000u : 0u;
  if (std::isnan(value))
    return sign | 0x7e00u; // canonical quiet NaN
  double mag = std::fabs(value);
  if (std::isinf(value) || mag >= 65520.0)
    return sign | 0x7c00u;
  if (mag < std::ldexp(1.0, -14)) { // subnormal: mant * 2^-24
    // A value that rounds up to 2^-14 yields mant 0x400, which is exactly
    // the bit pattern of the smallest normal.
    auto mant = static_cast<uint16_t>(std::nearbyint(std::ldexp(mag, 24)));
    return sign | mant;
  }
  int exp;
  double m = std::frexp(mag, &exp); // mag = m * 2^exp, m in [0.5, 1)
  auto mant = static_cast<uint32_t>(std::nearbyint(std::ldexp(m, 11)));
  // mant is in [1024, 2048]; 2048 means rounding carried into the next
  // binade, which the addition below absorbs. A carry past 65504 needs
  // mag >= 65520, handled above, so the result stays finite.
  uint32_t bits = (static_cast<uint32_t>(exp - 1 + 15) << 10) + (mant - 1024);
  return sign | static_cast<uint16_t>(bits);
}

double bf16BitsToDouble(uint16_t bits) {
  uint32_t f32 = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &f32, 4);
  return f;
}

/// Bit pattern of `value`, which must already be rounded to bfloat16, so
/// the low half of its float32 pattern is zero.
uint16_t doubleToBF16Bits(double value) {
  if (std::isnan(value)) // the payload may sit in the dropped low bits
    return (std::signbit(value) ? 0x8000u : 0u) | 0x7fc0u;
  float f = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

/// Converts `value` (already rounded to an integer) to a signed integer of
/// `bits` bits, saturating, with NaN as 0: casting an out-of-range double is
/// undefined behaviour.
int64_t saturateToInt(double value, int bits) {
  if (std::isnan(value))
    return 0;
  // Compare against 2^(bits-1), which a double holds exactly (2^63 - 1 is
  // not representable).
  double limit = std::ldexp(1.0, bits - 1);
  if (value >= limit)
    return bits == 64 ? std::numeric_limits<int64_t>::max()
                      : (int64_t(1) << (bits - 1)) - 1;
  if (value <= -limit)
    return bits == 64 ? std::numeric_limits<int64_t>::min()
                      : -(int64_t(1) << (bits - 1));
  return static_cast<int64_t>(value);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// The element count of `shape`, or false if a dimension is negative or the
/// count overflows int64. The product is taken in the same order as
/// HostTensor::numel so that every shape accepted here is one numel() can
/// compute without signed overflow, even when a later dimension is zero.
bool checkedNumel(const std::vector<int64_t> &shape, int64_t &numel,
                  bool &negative) {
  numel = 1;
  negative = false;
  for (int64_t d : shape) {
    if (d < 0) {
      negative = true;
      return false;
    }
    if (__builtin_mul_overflow(numel, d, &numel))
      return false;
  }
  return true;
}

bool dtypeFromFormatName(llvm::StringRef name, DType &dtype) {
  // Only the format's own spellings: parseDType also takes aliases ("f32",
  // "float32") meant for command lines, which a file must not use.
  for (DType d : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
                  DType::I32})
    if (name == dtypeName(d)) {
      dtype = d;
      return true;
    }
  return false;
}

std::string quote(llvm::StringRef name) { return "'" + name.str() + "'"; }

std::string offsetsText(int64_t begin, int64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

/// Rejects nesting deeper than kMaxNesting; brackets inside strings do not
/// count.
bool checkNesting(llvm::StringRef text, std::string &error) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) {
        error = "safetensors header is not valid JSON for this reader: it "
                "nests deeper than " +
                std::to_string(kMaxNesting) + " levels";
        return false;
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

/// One tensor's header entry, checked against the data buffer.
struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  int64_t numel;
  int64_t begin, end;
};

bool parseEntry(const std::string &name, const llvm::json::Value &value,
                uint64_t bufferSize, Entry &entry, std::string &error) {
  const std::string tensor = "tensor " + quote(name);
  const llvm::json::Object *object = value.getAsObject();
  if (!object) {
    error = "header entry for " + tensor + " is not a JSON object";
    return false;
  }
  entry.name = name;

  const llvm::json::Value *dtypeValue = object->get("dtype");
  if (!dtypeValue) {
    error = tensor + " has no \"dtype\" in the header";
    return false;
  }
  std::optional<llvm::StringRef> dtypeName = dtypeValue->getAsString();
  if (!dtypeName) {
    error = "\"dtype\" of " + tensor + " is not a string";
    return false;
  }
  if (!dtypeFromFormatName(*dtypeName, entry.dtype)) {
    error = tensor + " has unknown dtype " + quote(*dtypeName) +
            " (supported: F64, F32, F16, BF16, I64, I32)";
    return false;
  }

  const llvm::json::Value *shapeValue = object->get("shape");
  if (!shapeValue) {
    error = tensor + " has no \"shape\" in the header";
    return false;
  }
  const llvm::json::Array *shapeArray = shapeValue->getAsArray();
  if (!shapeArray) {
    error = "\"shape\" of " + tensor + " is not an array of integers";
    return false;
  }
  entry.shape.clear();
  for (const llvm::json::Value &dim : *shapeArray) {
    std::optional<int64_t> d = dim.getAsInteger();
    if (!d) {
      error = "\"shape\" of " + tensor + " is not an array of integers";
      return false;
    }
    entry.shape.push_back(*d);
  }
  bool negative;
  if (!checkedNumel(entry.shape, entry.numel, negative)) {
    error = negative ? tensor + " has a negative dimension in its shape " +
                           formatShape(entry.shape)
                     : tensor + " has shape " + formatShape(entry.shape) +
                           " whose element count overflows";
    return false;
  }
  int64_t expectedBytes;
  if (__builtin_mul_overflow(entry.numel, dtypeSize(entry.dtype),
                             &expectedBytes)) {
    error = tensor + " has shape " + formatShape(entry.shape) +
            " whose size in bytes overflows";
    return false;
  }

  const llvm::json::Value *offsetsValue = object->get("data_offsets");
  if (!offsetsValue) {
    error = tensor + " has no \"data_offsets\" in the header";
    return false;
  }
  const llvm::json::Array *offsets = offsetsValue->getAsArray();
  std::optional<int64_t> begin, end;
  if (offsets && offsets->size() == 2) {
    begin = (*offsets)[0].getAsInteger();
    end = (*offsets)[1].getAsInteger();
  }
  if (!begin || !end || *begin < 0 || *end < 0) {
    error = "\"data_offsets\" of " + tensor +
            " is not two non-negative integers [begin, end]";
    return false;
  }
  entry.begin = *begin;
  entry.end = *end;
  if (entry.begin > entry.end) {
    error = tensor + " has data_offsets " +
            offsetsText(entry.begin, entry.end) +
            " whose begin is past its end";
    return false;
  }
  if (static_cast<uint64_t>(entry.end) > bufferSize) {
    error = tensor + " has data_offsets " +
            offsetsText(entry.begin, entry.end) +
            " past the end of the data buffer (" + std::to_string(bufferSize) +
            " bytes), so the image is truncated or the offsets are corrupt";
    return false;
  }
  int64_t actualBytes = entry.end - entry.begin;
  if (actualBytes != expectedBytes) {
    error = "byte size mismatch for " + tensor + ": shape " +
            formatShape(entry.shape) + " of dtype " + dtypeName->str() +
            " needs " + std::to_string(expectedBytes) +
            " bytes but its data_offsets " +
            offsetsText(entry.begin, entry.end) + " span " +
            std::to_string(actualBytes) + " bytes";
    return false;
  }
  return true;
}

bool parseMetadata(const llvm::json::Value &value,
                   std::map<std::string, std::string> &metadata,
                   std::string &error) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object) {
    error = "\"__metadata__\" in the header is not a JSON object of strings";
    return false;
  }
  metadata.clear();
  for (const auto &[key, v] : *object) {
    std::optional<llvm::StringRef> s = v.getAsString();
    if (!s) {
      error = "\"__metadata__\" entry " + quote(key.str()) +
              " is not a string";
      return false;
    }
    metadata[key.str()] = s->str();
  }
  return true;
}

/// Fills `tensor` from an entry that parseEntry has checked, so the byte
/// range is in bounds and exactly numel * dtypeSize long.
void decodeEntry(const Entry &entry, const uint8_t *buffer,
                 HostTensor &tensor) {
  tensor.dtype = entry.dtype;
  tensor.shape = entry.shape;
  tensor.values.assign(static_cast<size_t>(entry.numel), 0.0);
  const uint8_t *p = buffer + entry.begin;
  int64_t width = dtypeSize(entry.dtype);
  for (int64_t i = 0; i < entry.numel; ++i, p += width) {
    uint64_t raw = loadLE(p, static_cast<int>(width));
    double v = 0;
    switch (entry.dtype) {
    case DType::F64:
      std::memcpy(&v, &raw, 8);
      break;
    case DType::F32: {
      auto bits = static_cast<uint32_t>(raw);
      float f;
      std::memcpy(&f, &bits, 4);
      v = f;
      break;
    }
    case DType::F16:
      v = f16BitsToDouble(static_cast<uint16_t>(raw));
      break;
    case DType::BF16:
      v = bf16BitsToDouble(static_cast<uint16_t>(raw));
      break;
    case DType::I64:
      v = static_cast<double>(static_cast<int64_t>(raw));
      break;
    case DType::I32:
      v = static_cast<int32_t>(static_cast<uint32_t>(raw));
      break;
    }
    tensor.values[i] = v;
  }
}

/// Appends `value`, rounded to `dtype`, as its little-endian bit pattern.
void encodeValue(double value, DType dtype, std::vector<uint8_t> &out) {
  double r = roundToDType(value, dtype);
  switch (dtype) {
  case DType::F64: {
    uint64_t bits;
    std::memcpy(&bits, &r, 8);
    storeLE(out, bits, 8);
    return;
  }
  case DType::F32: {
    auto f = static_cast<float>(r);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    storeLE(out, bits, 4);
    return;
  }
  case DType::F16:
    storeLE(out, doubleToF16Bits(r), 2);
    return;
  case DType::BF16:
    storeLE(out, doubleToBF16Bits(r), 2);
    return;
  case DType::I64:
    storeLE(out, static_cast<uint64_t>(saturateToInt(r, 64)), 8);
    return;
  case DType::I32:
    storeLE(out, static_cast<uint64_t>(saturateToInt(r, 32)), 4);
    return;
  }
}

/// llvm::json asserts on strings that are not UTF-8; repair them instead.
std::string utf8(const std::string &s) {
  return llvm::json::isUTF8(s) ? s : llvm::json::fixUTF8(s);
}

/// Whether serializeSafeTensors writes this tensor (see the header).
bool isWritable(const std::string &name, const HostTensor &tensor) {
  int64_t numel;
  bool negative;
  return name != kMetadataKey && checkedNumel(tensor.shape, numel, negative) &&
         static_cast<uint64_t>(numel) == tensor.values.size();
}

bool checkForWrite(const TensorMap &tensors,
                   const std::map<std::string, std::string> &metadata,
                   std::string &error) {
  for (const auto &[key, value] : metadata)
    if (!llvm::json::isUTF8(key) || !llvm::json::isUTF8(value)) {
      error = "metadata entry " + quote(utf8(key)) + " is not valid UTF-8";
      return false;
    }
  for (const auto &[name, tensor] : tensors) {
    const std::string what = "tensor " + quote(utf8(name));
    if (name == kMetadataKey) {
      error = "a tensor cannot be named \"__metadata__\": the format reserves "
              "that key for metadata";
      return false;
    }
    if (!llvm::json::isUTF8(name)) {
      error = "tensor name " + quote(utf8(name)) + " is not valid UTF-8";
      return false;
    }
    int64_t numel;
    bool negative;
    if (!checkedNumel(tensor.shape, numel, negative)) {
      error = what + " has shape " + formatShape(tensor.shape) +
              (negative ? " with a negative dimension"
                        : " whose element count overflows");
      return false;
    }
    if (static_cast<uint64_t>(numel) != tensor.values.size()) {
      error = what + " has shape " + formatShape(tensor.shape) + " (" +
              std::to_string(numel) + " elements) but holds " +
              std::to_string(tensor.values.size()) + " values";
      return false;
    }
    if (tensor.dtype == DType::I64 || tensor.dtype == DType::I32) {
      // The range is [-2^(k-1), 2^(k-1)), bounds a double holds exactly.
      double limit = std::ldexp(1.0, tensor.dtype == DType::I64 ? 63 : 31);
      for (size_t i = 0; i < tensor.values.size(); ++i) {
        double v = tensor.values[i];
        if (!(v >= -limit && v < limit && std::trunc(v) == v)) {
          char text[32];
          std::snprintf(text, sizeof text, "%.17g", v);
          error = what + " has dtype " + dtypeName(tensor.dtype) +
                  " but element " + std::to_string(i) + " (" + text +
                  ") is not an integer in its range";
          return false;
        }
      }
    }
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

bool parseSafeTensors(const uint8_t *data, size_t size, TensorMap &tensors,
                      std::string &error,
                      std::map<std::string, std::string> *metadata) {
  if (!data)
    size = 0;
  if (size < 8) {
    error = "truncated safetensors image: it is " + std::to_string(size) +
            " bytes, shorter than the 8-byte header length";
    return false;
  }
  uint64_t headerLength = loadLE(data, 8);
  uint64_t available = size - 8;
  if (headerLength > kMaxHeaderLength) {
    error = "header length " + std::to_string(headerLength) +
            " is absurd (over the " + std::to_string(kMaxHeaderLength) +
            "-byte limit), so the image is corrupt or not safetensors";
    return false;
  }
  if (headerLength > available) {
    error = "header length " + std::to_string(headerLength) +
            " runs past the end of the image (" + std::to_string(available) +
            " bytes follow the length), so it is truncated or corrupt";
    return false;
  }
  llvm::StringRef headerText(reinterpret_cast<const char *>(data + 8),
                             headerLength);
  const uint8_t *buffer = data + 8 + headerLength;
  uint64_t bufferSize = available - headerLength;

  if (!checkNesting(headerText, error))
    return false;
  llvm::Expected<llvm::json::Value> header = llvm::json::parse(headerText);
  if (!header) {
    error = "safetensors header is not valid JSON (" +
            llvm::toString(header.takeError()) + ")";
    return false;
  }
  const llvm::json::Object *root = header->getAsObject();
  if (!root) {
    error = "safetensors header is not a JSON object";
    return false;
  }

  // json::Object is a hash map; visiting names in sorted order makes the
  // first error reported for a header with several problems deterministic.
  std::vector<std::string> names;
  for (const auto &kv : *root)
    names.push_back(kv.first.str());
  std::sort(names.begin(), names.end());

  std::map<std::string, std::string> parsedMetadata;
  std::vector<Entry> entries;
  entries.reserve(names.size());
  for (const std::string &name : names) {
    const llvm::json::Value &value = *root->get(name);
    if (name == kMetadataKey) {
      if (!parseMetadata(value, parsedMetadata, error))
        return false;
      continue;
    }
    Entry entry;
    if (!parseEntry(name, value, bufferSize, entry, error))
      return false;
    entries.push_back(std::move(entry));
  }

  // Overlap check: sweep the non-empty ranges in order of their begin and
  // compare each with the furthest-reaching range before it. Empty ranges
  // hold no bytes and so overlap nothing.
  std::vector<const Entry *> byOffset;
  for (const Entry &e : entries)
    if (e.begin != e.end)
      byOffset.push_back(&e);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const Entry *a, const Entry *b) {
              return std::tie(a->begin, a->end, a->name) <
                     std::tie(b->begin, b->end, b->name);
            });
  const Entry *reach = nullptr;
  for (const Entry *e : byOffset) {
    if (reach && e->begin < reach->end) {
      error = "tensors " + quote(reach->name) + " and " + quote(e->name) +
              " overlap: their data_offsets are " +
              offsetsText(reach->begin, reach->end) + " and " +
              offsetsText(e->begin, e->end);
      return false;
    }
    if (!reach || e->end > reach->end)
      reach = e;
  }

  // Everything is checked; only now allocate, at most the buffer's size.
  TensorMap parsed;
  for (const Entry &e : entries)
    decodeEntry(e, buffer, parsed[e.name]);
  tensors = std::move(parsed);
  if (metadata)
    *metadata = std::move(parsedMetadata);
  return true;
}

bool readSafeTensors(const std::string &path, TensorMap &tensors,
                     std::string &error,
                     std::map<std::string, std::string> *metadata) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file) {
    error = "cannot read " + quote(path) + ": " + file.getError().message();
    return false;
  }
  const llvm::MemoryBuffer &buffer = **file;
  if (!parseSafeTensors(
          reinterpret_cast<const uint8_t *>(buffer.getBufferStart()),
          buffer.getBufferSize(), tensors, error, metadata)) {
    error = quote(path) + ": " + error;
    return false;
  }
  return true;
}

std::vector<uint8_t>
serializeSafeTensors(const TensorMap &tensors,
                     const std::map<std::string, std::string> &metadata) {
  std::string header;
  llvm::raw_string_ostream os(header);
  llvm::json::OStream json(os);
  int64_t offset = 0;
  json.object([&] {
    if (!metadata.empty())
      json.attributeObject(kMetadataKey, [&] {
        for (const auto &[key, value] : metadata)
          json.attribute(utf8(key), utf8(value));
      });
    for (const auto &[name, tensor] : tensors) {
      if (!isWritable(name, tensor))
        continue;
      int64_t bytes = tensor.numel() * dtypeSize(tensor.dtype);
      json.attributeObject(utf8(name), [&] {
        json.attribute("dtype", dtypeName(tensor.dtype));
        json.attributeArray("shape", [&] {
          for (int64_t d : tensor.shape)
            json.value(d);
        });
        json.attributeArray("data_offsets", [&] {
          json.value(offset);
          json.value(offset + bytes);
        });
      });
      offset += bytes;
    }
  });
  os.flush();
  // Pad with spaces (which the format allows) so the data starts 8-byte
  // aligned, letting readers that map the file view it in place.
  header.append((8 - header.size() % 8) % 8, ' ');

  std::vector<uint8_t> out;
  out.reserve(8 + header.size() + static_cast<size_t>(offset));
  storeLE(out, header.size(), 8);
  out.insert(out.end(), header.begin(), header.end());
  for (const auto &[name, tensor] : tensors) {
    if (!isWritable(name, tensor))
      continue;
    for (double v : tensor.values)
      encodeValue(v, tensor.dtype, out);
  }
  return out;
}

bool writeSafeTensors(const std::string &path, const TensorMap &tensors,
                      std::string &error,
                      const std::map<std::string, std::string> &metadata) {
  if (!checkForWrite(tensors, metadata, error)) {
    error = "cannot write " + quote(path) + ": " + error;
    return false;
  }
  std::vector<uint8_t> image = serializeSafeTensors(tensors, metadata);
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    error = "cannot write " + quote(path) + ": " + std::strerror(errno);
    return false;
  }
  size_t written = std::fwrite(image.data(), 1, image.size(), file);
  int writeErrno = errno;
  bool ok = written == image.size();
  if (std::fclose(file) != 0 && ok) {
    ok = false;
    writeErrno = errno;
  }
  if (!ok) {
    error = "cannot write " + quote(path) + ": " + std::strerror(writeErrno);
    // Leave no truncated file behind for a later read to trip over.
    std::remove(path.c_str());
    return false;
  }
  return true;
}

} // namespace rkc
