//===- SafeTensorsTest.cpp - Tests of the safetensors reader and writer ---===//
//
// Round trips check every dtype against known bit patterns (so a symmetric
// bug in encoder and decoder cannot hide), and every malformed-image test
// builds its image by hand, because the writer never produces one.
//
//===----------------------------------------------------------------------===//

#include "Support/SafeTensors.h"
#include "Support/Tensor.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using rkc::DType;
using rkc::HostTensor;
using rkc::parseSafeTensors;
using rkc::readSafeTensors;
using rkc::serializeSafeTensors;
using rkc::TensorMap;
using rkc::writeSafeTensors;

namespace {

using Bytes = std::vector<uint8_t>;
using Metadata = std::map<std::string, std::string>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)            \
      << "message: " << (haystack) << "\nexpected to contain: " << (needle)

/// An image assembled by hand: the 8-byte little-endian `length`, `header`
/// and `buffer`.
Bytes imageWithLength(uint64_t length, const std::string &header,
                      const Bytes &buffer = {}) {
  Bytes out;
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<uint8_t>(length >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), buffer.begin(), buffer.end());
  return out;
}

/// An image whose length field is the header's true length.
Bytes image(const std::string &header, const Bytes &buffer = {}) {
  return imageWithLength(header.size(), header, buffer);
}

/// Parses an image that must be rejected; returns the error.
std::string parseFailure(const Bytes &img) {
  TensorMap tensors;
  std::string error;
  EXPECT_FALSE(parseSafeTensors(img.data(), img.size(), tensors, error));
  EXPECT_FALSE(error.empty());
  return error;
}

/// Parses an image that must be accepted.
TensorMap parseOk(const Bytes &img, Metadata *metadata = nullptr) {
  TensorMap tensors;
  std::string error;
  EXPECT_TRUE(
      parseSafeTensors(img.data(), img.size(), tensors, error, metadata))
      << error;
  return tensors;
}

HostTensor tensor(DType dtype, std::vector<int64_t> shape,
                  std::vector<double> values) {
  // Not HostTensor(shape, dtype): that allocates numel() zeros first, which
  // for the deliberately invalid shapes below is negative or huge.
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.values = std::move(values);
  return t;
}

/// The data buffer of a serialized image (everything after the header).
Bytes dataBytes(const Bytes &img) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | img[i];
  return Bytes(img.begin() + 8 + n, img.end());
}

/// Serializes one 1-D tensor of `dtype` and returns its data as words of
/// `width` bytes, little-endian.
std::vector<uint64_t> encodedWords(DType dtype,
                                   const std::vector<double> &values) {
  TensorMap m;
  m["x"] = tensor(dtype, {static_cast<int64_t>(values.size())}, values);
  Bytes data = dataBytes(serializeSafeTensors(m));
  int width = static_cast<int>(rkc::dtypeSize(dtype));
  EXPECT_EQ(data.size(), values.size() * width);
  std::vector<uint64_t> words;
  for (size_t i = 0; i + width <= data.size(); i += width) {
    uint64_t w = 0;
    for (int b = width - 1; b >= 0; --b)
      w = (w << 8) | data[i + b];
    words.push_back(w);
  }
  return words;
}

/// Bit-exact equality, so that -0.0 != 0.0 and NaN == NaN.
bool sameDouble(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

/// Round-trips `values` as `dtype`: the words written must be `bits`, and
/// reading them back must give each value rounded to `dtype`.
void checkEncoding(DType dtype, const std::vector<double> &values,
                   const std::vector<uint64_t> &bits) {
  ASSERT_EQ(values.size(), bits.size());
  std::vector<uint64_t> words = encodedWords(dtype, values);
  ASSERT_EQ(words.size(), bits.size());
  for (size_t i = 0; i < bits.size(); ++i)
    EXPECT_EQ(words[i], bits[i])
        << rkc::dtypeName(dtype) << " encoding of " << values[i] << std::hex
        << ": got 0x" << words[i] << ", want 0x" << bits[i];

  TensorMap m;
  m["x"] = tensor(dtype, {static_cast<int64_t>(values.size())}, values);
  TensorMap back = parseOk(serializeSafeTensors(m));
  ASSERT_EQ(back.count("x"), 1u);
  ASSERT_EQ(back["x"].values.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_TRUE(
        sameDouble(back["x"].values[i], rkc::roundToDType(values[i], dtype)))
        << rkc::dtypeName(dtype) << " value " << values[i] << " read back as "
        << back["x"].values[i];
}

std::string tempPath(const std::string &stem) {
  return ::testing::TempDir() + "rkc_safetensors_test_" +
         std::to_string(getpid()) + "_" + stem + ".safetensors";
}

/// A header entry for tensor `name`.
std::string entry(const std::string &name, const std::string &dtype,
                  const std::string &shape, const std::string &offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

//===----------------------------------------------------------------------===//
// Encoding of each dtype
//===----------------------------------------------------------------------===//

TEST(SafeTensors, F64RoundTripIsExact) {
  double denormMin = std::numeric_limits<double>::denorm_min();
  checkEncoding(DType::F64, {1.0, 0.1, -0.0, denormMin, kInf},
                {0x3FF0000000000000ull, 0x3FB999999999999Aull,
                 0x8000000000000000ull, 0x0000000000000001ull,
                 0x7FF0000000000000ull});
  std::vector<uint64_t> nan = encodedWords(DType::F64, {kNaN});
  EXPECT_EQ(nan[0] & 0x7FF0000000000000ull, 0x7FF0000000000000ull);
  EXPECT_NE(nan[0] & 0x000FFFFFFFFFFFFFull, 0u);
}

TEST(SafeTensors, F32RoundsToNearestEven) {
  checkEncoding(DType::F32,
                {1.0, -2.5, 0.1, 1.0 + std::ldexp(1.0, -24),
                 1.0 + 3 * std::ldexp(1.0, -24), -0.0, -kInf,
                 std::ldexp(1.0, -149)},
                {0x3F800000, 0xC0200000, 0x3DCCCCCD, 0x3F800000, 0x3F800002,
                 0x80000000, 0xFF800000, 0x00000001});
}

TEST(SafeTensors, F16RoundsToNearestEven) {
  double q = std::ldexp(1.0, -24); // smallest subnormal
  checkEncoding(
      DType::F16,
      {1.0, -2.5, 65504.0, 65519.0, 65520.0, 0.1, -0.0, kInf, -kInf,
       q,                               // smallest subnormal
       1023 * q,                        // largest subnormal
       std::ldexp(1.0, -14),            // smallest normal
       1023.75 * q,                     // subnormal rounding up into normal
       0.5 * q,                         // tie between 0 and q: to even 0
       1.5 * q,                         // tie between q and 2q: to even 2q
       -1e-10,                          // underflows to -0
       1.0 + std::ldexp(1.0, -11),      // tie: to even 1.0
       1.0 + 3 * std::ldexp(1.0, -11)}, // tie: to even 1 + 2^-9
      {0x3C00, 0xC100, 0x7BFF, 0x7BFF, 0x7C00, 0x2E66, 0x8000, 0x7C00, 0xFC00,
       0x0001, 0x03FF, 0x0400, 0x0400, 0x0000, 0x0002, 0x8000, 0x3C00,
       0x3C02});
  std::vector<uint64_t> nan = encodedWords(DType::F16, {kNaN});
  EXPECT_EQ(nan[0] & 0x7C00u, 0x7C00u);
  EXPECT_NE(nan[0] & 0x03FFu, 0u);
}

TEST(SafeTensors, BF16RoundsToNearestEven) {
  checkEncoding(DType::BF16,
                {1.0, -2.5, 3.0, 0.1, 1.0 + std::ldexp(1.0, -8),
                 1.0 + 3 * std::ldexp(1.0, -8), 3.3895313892515355e38,
                 std::ldexp(1.0, -133), 1e39, -0.0},
                {0x3F80, 0xC020, 0x4040, 0x3DCD, 0x3F80, 0x3F82, 0x7F7F,
                 0x0001, 0x7F80, 0x8000});
  std::vector<uint64_t> nan = encodedWords(DType::BF16, {kNaN});
  EXPECT_EQ(nan[0] & 0x7F80u, 0x7F80u);
  EXPECT_NE(nan[0] & 0x007Fu, 0u);
}

TEST(SafeTensors, IntegerRoundTrip) {
  checkEncoding(DType::I64,
                {0.0, -1.0, 123.0, std::ldexp(1.0, 53), -std::ldexp(1.0, 63),
                 std::ldexp(1.0, 62)},
                {0, 0xFFFFFFFFFFFFFFFFull, 123, 1ull << 53, 1ull << 63,
                 1ull << 62});
  checkEncoding(DType::I32, {0.0, -7.0, 2147483647.0, -2147483648.0},
                {0, 0xFFFFFFF9u, 0x7FFFFFFFu, 0x80000000u});
}

TEST(SafeTensors, SerializeIsDefinedForOutOfRangeIntegers) {
  // serializeSafeTensors cannot fail, so values writeSafeTensors would reject
  // are rounded to even and saturated rather than cast (undefined behaviour).
  EXPECT_EQ(encodedWords(DType::I32, {2.5, 1e300, -1e300, kNaN, -kInf}),
            (std::vector<uint64_t>{2, 0x7FFFFFFFu, 0x80000000u, 0,
                                   0x80000000u}));
  EXPECT_EQ(encodedWords(DType::I64, {1e300, -1e300, kNaN}),
            (std::vector<uint64_t>{0x7FFFFFFFFFFFFFFFull, 1ull << 63, 0}));
}

/// Every float16 bit pattern decodes to its exact value (computed here a
/// different way) and re-encodes to itself; NaNs stay NaN.
TEST(SafeTensors, F16EveryBitPatternDecodesExactly) {
  Bytes buffer;
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    buffer.push_back(bits & 0xFF);
    buffer.push_back(bits >> 8);
  }
  TensorMap t = parseOk(
      image("{" + entry("h", "F16", "[65536]", "[0,131072]") + "}", buffer));
  const HostTensor &h = t["h"];
  ASSERT_EQ(h.values.size(), 65536u);
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    int s = bits >> 15, e = (bits >> 10) & 31, m = bits & 1023;
    double expected =
        e == 31 ? (m ? kNaN : kInf)
        : e == 0 ? m * std::pow(2.0, -24)
                 : (1024 + m) * std::pow(2.0, e - 25);
    if (s)
      expected = -expected;
    ASSERT_TRUE(sameDouble(h.values[bits], expected))
        << std::hex << "0x" << bits << " decoded as " << h.values[bits];
  }
  Bytes again = dataBytes(serializeSafeTensors(t));
  ASSERT_EQ(again.size(), buffer.size());
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    uint32_t got = again[2 * bits] | (again[2 * bits + 1] << 8);
    bool nan = (bits & 0x7C00) == 0x7C00 && (bits & 0x3FF);
    if (nan)
      ASSERT_TRUE((got & 0x7C00) == 0x7C00 && (got & 0x3FF))
          << std::hex << bits;
    else
      ASSERT_EQ(got, bits);
  }
}

/// Every bfloat16 bit pattern decodes to the float32 with the same high half
/// and re-encodes to itself; NaNs stay NaN.
TEST(SafeTensors, BF16EveryBitPatternDecodesExactly) {
  Bytes buffer;
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    buffer.push_back(bits & 0xFF);
    buffer.push_back(bits >> 8);
  }
  TensorMap t = parseOk(
      image("{" + entry("b", "BF16", "[65536]", "[0,131072]") + "}", buffer));
  const HostTensor &b = t["b"];
  ASSERT_EQ(b.values.size(), 65536u);
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    uint32_t f32 = bits << 16;
    float f;
    std::memcpy(&f, &f32, 4);
    ASSERT_TRUE(sameDouble(b.values[bits], f)) << std::hex << "0x" << bits;
  }
  Bytes again = dataBytes(serializeSafeTensors(t));
  ASSERT_EQ(again.size(), buffer.size());
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    uint32_t got = again[2 * bits] | (again[2 * bits + 1] << 8);
    bool nan = (bits & 0x7F80) == 0x7F80 && (bits & 0x7F);
    if (nan)
      ASSERT_TRUE((got & 0x7F80) == 0x7F80 && (got & 0x7F))
          << std::hex << bits;
    else
      ASSERT_EQ(got, bits);
  }
}

//===----------------------------------------------------------------------===//
// Whole images
//===----------------------------------------------------------------------===//

TEST(SafeTensors, AllDTypesRoundTrip) {
  TensorMap m;
  const DType dtypes[] = {DType::F64, DType::F32,  DType::F16,
                          DType::BF16, DType::I64, DType::I32};
  for (DType d : dtypes) {
    HostTensor t({2, 3, 4}, d);
    bool isInt = d == DType::I64 || d == DType::I32;
    for (int64_t i = 0; i < t.numel(); ++i)
      t[i] = isInt ? i * 7 - 40 : (i - 11) * 0.3712345678901;
    m[std::string("t_") + rkc::dtypeName(d)] = t;
  }
  m["empty"] = HostTensor({3, 0, 2}, DType::F32);
  m["scalar"] = tensor(DType::F16, {}, {0.333});

  TensorMap back = parseOk(serializeSafeTensors(m));
  ASSERT_EQ(back.size(), m.size());
  for (const auto &[name, t] : m) {
    ASSERT_EQ(back.count(name), 1u) << name;
    const HostTensor &r = back[name];
    EXPECT_EQ(r.dtype, t.dtype) << name;
    EXPECT_EQ(r.shape, t.shape) << name;
    ASSERT_EQ(r.values.size(), t.values.size()) << name;
    for (size_t i = 0; i < t.values.size(); ++i)
      EXPECT_EQ(r.values[i], rkc::roundToDType(t.values[i], t.dtype))
          << name << "[" << i << "]";
  }
  // Values already rounded survive a second trip unchanged.
  TensorMap again = parseOk(serializeSafeTensors(back));
  for (const auto &[name, t] : back)
    EXPECT_EQ(again[name].values, t.values) << name;
}

TEST(SafeTensors, SerializedLayoutFollowsTheFormat) {
  TensorMap m;
  m["b"] = tensor(DType::F32, {2}, {1, 2});
  m["a"] = tensor(DType::F16, {3}, {1, 2, 3});
  m["c"] = tensor(DType::I64, {1}, {5});
  Bytes img = serializeSafeTensors(m, {{"format", "pt"}});

  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | img[i];
  ASSERT_LE(8 + n, img.size());
  EXPECT_EQ((8 + n) % 8, 0u) << "data should start 8-byte aligned";
  std::string header(img.begin() + 8, img.begin() + 8 + n);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(header);
  ASSERT_TRUE(static_cast<bool>(json)) << llvm::toString(json.takeError());
  const llvm::json::Object *root = json->getAsObject();
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->size(), 4u);

  // Offsets are contiguous in name order and cover the whole buffer.
  int64_t offset = 0;
  for (const char *name : {"a", "b", "c"}) {
    const llvm::json::Object *e = root->getObject(name);
    ASSERT_NE(e, nullptr) << name;
    const llvm::json::Array *offsets = e->getArray("data_offsets");
    ASSERT_NE(offsets, nullptr) << name;
    ASSERT_EQ(offsets->size(), 2u);
    EXPECT_EQ((*offsets)[0].getAsInteger(), offset) << name;
    int64_t bytes = m[name].numel() * rkc::dtypeSize(m[name].dtype);
    EXPECT_EQ((*offsets)[1].getAsInteger(), offset + bytes) << name;
    EXPECT_EQ(e->getString("dtype"), rkc::dtypeName(m[name].dtype));
    offset += bytes;
  }
  EXPECT_EQ(static_cast<int64_t>(img.size() - 8 - n), offset);
  const llvm::json::Object *meta = root->getObject("__metadata__");
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ(meta->getString("format"), "pt");

  // No metadata, no "__metadata__" key.
  Bytes plain = serializeSafeTensors(m);
  std::string text(plain.begin(), plain.end());
  EXPECT_EQ(text.find("__metadata__"), std::string::npos);
}

TEST(SafeTensors, EmptyMapRoundTrips) {
  Bytes img = serializeSafeTensors({});
  TensorMap t;
  t["stale"] = HostTensor({1});
  std::string error;
  ASSERT_TRUE(parseSafeTensors(img.data(), img.size(), t, error)) << error;
  EXPECT_TRUE(t.empty()) << "parse should replace the map's contents";
}

TEST(SafeTensors, MetadataRoundTrip) {
  TensorMap m;
  m["w"] = tensor(DType::F32, {1}, {1.5});
  Metadata meta = {{"format", "pt"},
                   {"quote\"and\\slash", "line\nbreak\ttab"},
                   {"unicode", "\xC3\xA9t\xC3\xA9 \xE2\x88\x9E"},
                   {"", "empty key"}};
  Metadata back = {{"stale", "x"}};
  TensorMap t = parseOk(serializeSafeTensors(m, meta), &back);
  EXPECT_EQ(back, meta);
  EXPECT_EQ(t.size(), 1u) << "__metadata__ must not be read as a tensor";

  // A header without metadata clears the caller's map.
  parseOk(serializeSafeTensors(m), &back);
  EXPECT_TRUE(back.empty());
}

TEST(SafeTensors, AcceptsHeaderPaddedWithSpaces) {
  // Length 8 + 51 + 3 spaces leaves the buffer unaligned, which must not
  // matter.
  std::string header =
      "{" + entry("x", "F32", "[2]", "[0,8]") + "}   ";
  Bytes buffer = {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0xC0};
  TensorMap t = parseOk(image(header, buffer));
  ASSERT_EQ(t.count("x"), 1u);
  EXPECT_EQ(t["x"].values, (std::vector<double>{1.0, -2.5}));
  EXPECT_EQ(t["x"].dtype, DType::F32);
}

TEST(SafeTensors, AcceptsZeroSizedTensorsAndGaps) {
  // A zero-sized range inside another tensor's range holds no bytes and
  // overlaps nothing; a gap before "b" and unused trailing bytes are allowed.
  std::string header = "{" + entry("a", "I32", "[1]", "[0,4]") + "," +
                       entry("z", "F64", "[0,5]", "[2,2]") + "," +
                       entry("b", "I32", "[1]", "[8,12]") + "}";
  Bytes buffer = {7, 0, 0, 0, 0xEE, 0xEE, 0xEE, 0xEE, 9, 0, 0, 0, 0xEE};
  TensorMap t = parseOk(image(header, buffer));
  EXPECT_EQ(t["a"].values, std::vector<double>{7});
  EXPECT_EQ(t["b"].values, std::vector<double>{9});
  EXPECT_EQ(t["z"].shape, (std::vector<int64_t>{0, 5}));
  EXPECT_TRUE(t["z"].values.empty());
}

TEST(SafeTensors, FailureLeavesOutputsUntouched) {
  TensorMap t;
  t["keep"] = tensor(DType::F32, {1}, {4});
  Metadata meta = {{"keep", "me"}};
  std::string error;
  // The metadata is valid, the tensor is not.
  Bytes img = image("{\"__metadata__\":{\"a\":\"b\"}," +
                    entry("x", "F32", "[2]", "[0,4]") + "}",
                    Bytes(4, 0));
  EXPECT_FALSE(parseSafeTensors(img.data(), img.size(), t, error, &meta));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t["keep"].values, std::vector<double>{4});
  EXPECT_EQ(meta, (Metadata{{"keep", "me"}}));
}

//===----------------------------------------------------------------------===//
// Malformed images
//===----------------------------------------------------------------------===//

TEST(SafeTensors, RejectsImageShorterThanLength) {
  EXPECT_CONTAINS(parseFailure({}), "truncated");
  EXPECT_CONTAINS(parseFailure({1, 0, 0, 0}), "truncated");
  TensorMap t;
  std::string error;
  EXPECT_FALSE(parseSafeTensors(nullptr, 0, t, error));
  EXPECT_CONTAINS(error, "truncated");
}

TEST(SafeTensors, RejectsHeaderLengthPastEnd) {
  std::string err = parseFailure(imageWithLength(100, "{}"));
  EXPECT_CONTAINS(err, "header length 100");
  EXPECT_CONTAINS(err, "past the end");
}

TEST(SafeTensors, RejectsAbsurdHeaderLength) {
  for (uint64_t n : {~0ull, 1ull << 63, 1ull << 40, 100'000'001ull})
    EXPECT_CONTAINS(parseFailure(imageWithLength(n, "{}")), "header length");
}

TEST(SafeTensors, RejectsHeaderThatIsNotJson) {
  EXPECT_CONTAINS(parseFailure(image("{\"x\": ")), "not valid JSON");
  EXPECT_CONTAINS(parseFailure(image("")), "not valid JSON");
  EXPECT_CONTAINS(parseFailure(image("{} trailing")), "not valid JSON");
  EXPECT_CONTAINS(parseFailure(image("{\"\xFF\":1}")), "not valid JSON");
}

TEST(SafeTensors, RejectsDeeplyNestedHeaderWithoutOverflowingTheStack) {
  const size_t depth = 1'000'000;
  std::string header = "{\"x\":" + std::string(depth, '[') +
                       std::string(depth, ']') + "}";
  EXPECT_CONTAINS(parseFailure(image(header)), "nests deeper");
  // Brackets inside strings are not nesting.
  Metadata meta;
  parseOk(image("{\"__metadata__\":{\"k\":\"" + std::string(1000, '[') +
                "\\\"" + std::string(1000, '{') + "\"}}"),
          &meta);
  EXPECT_EQ(meta["k"].size(), 2001u);
}

TEST(SafeTensors, RejectsHeaderThatIsNotAnObject) {
  EXPECT_CONTAINS(parseFailure(image("[1, 2]")), "not a JSON object");
  EXPECT_CONTAINS(parseFailure(image("\"x\"")), "not a JSON object");
}

TEST(SafeTensors, RejectsEntryThatIsNotAnObject) {
  std::string err = parseFailure(image("{\"w\": [1, 2]}"));
  EXPECT_CONTAINS(err, "'w'");
  EXPECT_CONTAINS(err, "not a JSON object");
}

TEST(SafeTensors, RejectsEntryMissingAField) {
  std::string noDtype =
      parseFailure(image("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}",
                         Bytes(4, 0)));
  EXPECT_CONTAINS(noDtype, "'w'");
  EXPECT_CONTAINS(noDtype, "\"dtype\"");
  std::string noShape =
      parseFailure(image("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}",
                         Bytes(4, 0)));
  EXPECT_CONTAINS(noShape, "'w'");
  EXPECT_CONTAINS(noShape, "\"shape\"");
  std::string noOffsets = parseFailure(
      image("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", Bytes(4, 0)));
  EXPECT_CONTAINS(noOffsets, "'w'");
  EXPECT_CONTAINS(noOffsets, "\"data_offsets\"");
}

TEST(SafeTensors, RejectsFieldsOfTheWrongJsonType) {
  Bytes buf(4, 0);
  // The baseline image is valid; each case below breaks one field.
  parseOk(image("{" + entry("w", "F32", "[1]", "[0,4]") + "}", buf));

  EXPECT_CONTAINS(
      parseFailure(image(
          "{\"w\":{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}}", buf)),
      "\"dtype\" of tensor 'w' is not a string");
  EXPECT_CONTAINS(
      parseFailure(image("{" + entry("w", "F32", "1", "[0,4]") + "}", buf)),
      "\"shape\" of tensor 'w' is not an array of integers");
  EXPECT_CONTAINS(
      parseFailure(
          image("{" + entry("w", "F32", "[\"1\"]", "[0,4]") + "}", buf)),
      "\"shape\" of tensor 'w' is not an array of integers");
  EXPECT_CONTAINS(
      parseFailure(image("{" + entry("w", "F32", "[1.5]", "[0,4]") + "}", buf)),
      "\"shape\" of tensor 'w' is not an array of integers");
  EXPECT_CONTAINS(
      parseFailure(image("{" + entry("w", "F32", "[1]", "{}") + "}", buf)),
      "\"data_offsets\" of tensor 'w'");
}

TEST(SafeTensors, RejectsUnknownDtype) {
  std::string err = parseFailure(
      image("{" + entry("q", "F8_E4M3", "[4]", "[0,4]") + "}", Bytes(4, 0)));
  EXPECT_CONTAINS(err, "unknown dtype");
  EXPECT_CONTAINS(err, "'F8_E4M3'");
  EXPECT_CONTAINS(err, "'q'");
  // Command-line aliases are not the format's spelling.
  EXPECT_CONTAINS(parseFailure(image("{" + entry("q", "f32", "[1]", "[0,4]") +
                                         "}",
                                     Bytes(4, 0))),
                  "unknown dtype 'f32'");
}

TEST(SafeTensors, RejectsNegativeDimension) {
  std::string err = parseFailure(
      image("{" + entry("n", "F32", "[2,-1]", "[0,0]") + "}"));
  EXPECT_CONTAINS(err, "negative dimension");
  EXPECT_CONTAINS(err, "'n'");
}

TEST(SafeTensors, RejectsShapeWhoseElementCountOverflows) {
  std::string big = std::to_string(1ll << 40);
  std::string twoBig = "[" + big + "," + big + "]";
  EXPECT_CONTAINS(
      parseFailure(image("{" + entry("o", "F32", twoBig, "[0,0]") + "}")),
      "element count overflows");
  // Overflow before a zero dimension still counts: HostTensor::numel would
  // overflow computing it.
  EXPECT_CONTAINS(parseFailure(image("{" +
                                     entry("o", "F32",
                                           "[" + big + "," + big + ",0]",
                                           "[0,0]") +
                                     "}")),
                  "overflows");
  // The element count fits but the byte count does not.
  std::string huge = "[" + std::to_string(1ll << 61) + "]";
  EXPECT_CONTAINS(
      parseFailure(image("{" + entry("o", "F64", huge, "[0,0]") + "}")),
      "size in bytes overflows");
}

TEST(SafeTensors, RejectsMalformedDataOffsets) {
  Bytes buf(8, 0);
  for (const char *offsets :
       {"[0]", "[0,4,8]", "[-4,4]", "[0,-4]", "[0,\"4\"]", "[0,4.5]",
        "[0,18446744073709551615]", "4"}) {
    std::string err = parseFailure(
        image("{" + entry("d", "F32", "[1]", offsets) + "}", buf));
    EXPECT_CONTAINS(err, "data_offsets") << " for " << offsets;
    EXPECT_CONTAINS(err, "'d'") << " for " << offsets;
  }
  std::string reversed =
      parseFailure(image("{" + entry("d", "F32", "[1]", "[8,4]") + "}", buf));
  EXPECT_CONTAINS(reversed, "begin is past its end");
}

TEST(SafeTensors, RejectsOffsetsPastTheBuffer) {
  std::string err = parseFailure(
      image("{" + entry("p", "F32", "[4]", "[0,16]") + "}", Bytes(12, 0)));
  EXPECT_CONTAINS(err, "data_offsets [0, 16] past the end");
  EXPECT_CONTAINS(err, "'p'");
  // A header that claims a huge tensor over a tiny buffer fails before any
  // allocation.
  EXPECT_CONTAINS(
      parseFailure(image("{" +
                         entry("p", "F64", "[1000000000000]",
                               "[0,8000000000000]") +
                         "}",
                         Bytes(8, 0))),
      "past the end");
}

TEST(SafeTensors, RejectsByteSizeMismatch) {
  std::string err = parseFailure(
      image("{" + entry("s", "F32", "[2,3]", "[0,20]") + "}", Bytes(24, 0)));
  EXPECT_CONTAINS(err, "size mismatch");
  EXPECT_CONTAINS(err, "'s'");
  EXPECT_CONTAINS(err, "[2, 3]");
  EXPECT_CONTAINS(err, "F32");
  EXPECT_CONTAINS(err, "needs 24 bytes");
  EXPECT_CONTAINS(err, "span 20 bytes");
}

TEST(SafeTensors, RejectsOverlappingTensors) {
  std::string err = parseFailure(
      image("{" + entry("a", "F32", "[2]", "[0,8]") + "," +
                entry("b", "F32", "[2]", "[4,12]") + "}",
            Bytes(12, 0)));
  EXPECT_CONTAINS(err, "overlap");
  EXPECT_CONTAINS(err, "'a'");
  EXPECT_CONTAINS(err, "'b'");
  // Overlap with a range that is not the previous one in offset order.
  EXPECT_CONTAINS(
      parseFailure(image("{" + entry("big", "F32", "[4]", "[0,16]") + "," +
                             entry("x", "F32", "[1]", "[4,8]") + "," +
                             entry("y", "F32", "[1]", "[12,16]") + "}",
                         Bytes(16, 0))),
      "overlap");
  // Identical ranges overlap too.
  EXPECT_CONTAINS(
      parseFailure(image("{" + entry("a", "F32", "[1]", "[0,4]") + "," +
                             entry("b", "I32", "[1]", "[0,4]") + "}",
                         Bytes(4, 0))),
      "overlap");
}

TEST(SafeTensors, RejectsMalformedMetadata) {
  EXPECT_CONTAINS(parseFailure(image("{\"__metadata__\":[\"a\"]}")),
                  "\"__metadata__\" in the header is not a JSON object");
  std::string err = parseFailure(image("{\"__metadata__\":{\"n\":3}}"));
  EXPECT_CONTAINS(err, "__metadata__");
  EXPECT_CONTAINS(err, "'n' is not a string");
}

TEST(SafeTensors, CorruptedImagesNeverCrash) {
  TensorMap m;
  m["a"] = tensor(DType::F32, {2, 2}, {1, 2, 3, 4});
  m["b"] = tensor(DType::BF16, {3}, {1, 2, 3});
  m["c"] = tensor(DType::I64, {1}, {9});
  Bytes good = serializeSafeTensors(m, {{"k", "v"}});
  parseOk(good);

  // Every proper prefix is truncated somewhere and must be rejected.
  for (size_t len = 0; len < good.size(); ++len) {
    TensorMap t;
    std::string error;
    EXPECT_FALSE(parseSafeTensors(good.data(), len, t, error)) << len;
    EXPECT_FALSE(error.empty());
  }
  // Random byte corruptions may or may not parse, but must not crash, and a
  // failure always explains itself.
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 3000; ++iter) {
    Bytes bad = good;
    int flips = 1 + iter % 4;
    for (int f = 0; f < flips; ++f)
      bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
    TensorMap t;
    std::string error;
    if (!parseSafeTensors(bad.data(), bad.size(), t, error)) {
      EXPECT_FALSE(error.empty());
    }
  }
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

TEST(SafeTensors, FileRoundTrip) {
  TensorMap m;
  m["k"] = tensor(DType::BF16, {2, 2}, {0.1, 0.2, -0.3, 1e10});
  m["v"] = tensor(DType::F64, {3}, {1.0 / 3, -0.0, 1e-300});
  m["idx"] = tensor(DType::I32, {2}, {-5, 7});
  Metadata meta = {{"format", "pt"}, {"producer", "rkc"}};
  std::string path = tempPath("roundtrip");
  std::string error;
  ASSERT_TRUE(writeSafeTensors(path, m, error, meta)) << error;

  TensorMap back;
  Metadata metaBack;
  ASSERT_TRUE(readSafeTensors(path, back, error, &metaBack)) << error;
  EXPECT_EQ(metaBack, meta);
  ASSERT_EQ(back.size(), m.size());
  for (const auto &[name, t] : m) {
    EXPECT_EQ(back[name].dtype, t.dtype) << name;
    EXPECT_EQ(back[name].shape, t.shape) << name;
    for (size_t i = 0; i < t.values.size(); ++i)
      EXPECT_TRUE(sameDouble(back[name].values[i],
                             rkc::roundToDType(t.values[i], t.dtype)))
          << name << "[" << i << "]";
  }
  // The file holds exactly what serializeSafeTensors produces.
  std::FILE *f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  Bytes onDisk;
  int c;
  while ((c = std::fgetc(f)) != EOF)
    onDisk.push_back(static_cast<uint8_t>(c));
  std::fclose(f);
  EXPECT_EQ(onDisk, serializeSafeTensors(m, meta));
  std::remove(path.c_str());
}

TEST(SafeTensors, ReadingNonexistentPathFailsCleanly) {
  std::string path = tempPath("does_not_exist");
  std::remove(path.c_str());
  TensorMap t;
  std::string error;
  EXPECT_FALSE(readSafeTensors(path, t, error));
  EXPECT_CONTAINS(error, "cannot read");
  EXPECT_CONTAINS(error, path);
}

TEST(SafeTensors, ReadingDirectoryFailsCleanly) {
  TensorMap t;
  std::string error;
  EXPECT_FALSE(readSafeTensors(::testing::TempDir(), t, error));
  EXPECT_FALSE(error.empty());
}

TEST(SafeTensors, ReadingMalformedFileNamesThePath) {
  std::string path = tempPath("malformed");
  std::FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("abc", f);
  std::fclose(f);
  TensorMap t;
  std::string error;
  EXPECT_FALSE(readSafeTensors(path, t, error));
  EXPECT_CONTAINS(error, path);
  EXPECT_CONTAINS(error, "truncated");
  std::remove(path.c_str());
}

TEST(SafeTensors, WritingToMissingDirectoryFailsCleanly) {
  std::string path = ::testing::TempDir() + "rkc_no_such_dir_" +
                     std::to_string(getpid()) + "/x.safetensors";
  std::string error;
  EXPECT_FALSE(writeSafeTensors(path, {{"x", HostTensor({1})}}, error));
  EXPECT_CONTAINS(error, "cannot write");
  EXPECT_CONTAINS(error, path);
}

TEST(SafeTensors, WriteRejectsInvalidTensors) {
  std::string path = tempPath("invalid");
  std::string error;
  auto rejects = [&](const TensorMap &m, const std::string &why,
                     const Metadata &meta = {}) {
    std::remove(path.c_str());
    EXPECT_FALSE(writeSafeTensors(path, m, error, meta)) << why;
    EXPECT_CONTAINS(error, why);
    EXPECT_EQ(std::fopen(path.c_str(), "rb"), nullptr)
        << "nothing should be written for: " << why;
  };
  rejects({{"i", tensor(DType::I32, {2}, {1, 2.5})}}, "not an integer");
  rejects({{"i", tensor(DType::I32, {1}, {2147483648.0})}}, "not an integer");
  rejects({{"i", tensor(DType::I64, {1}, {kNaN})}}, "not an integer");
  rejects({{"i", tensor(DType::I64, {1}, {std::ldexp(1.0, 63)})}},
          "not an integer");
  rejects({{"f", tensor(DType::F32, {2, 2}, {1, 2, 3})}}, "holds 3 values");
  rejects({{"f", tensor(DType::F32, {-1}, {})}}, "negative dimension");
  rejects({{"__metadata__", tensor(DType::F32, {1}, {1})}}, "reserves");
  rejects({{"bad\xFFname", tensor(DType::F32, {1}, {1})}}, "not valid UTF-8");
  rejects({{"f", tensor(DType::F32, {1}, {1})}}, "not valid UTF-8",
          {{"k", "\xC3"}});
  // The edge of the I64 range that a double can hold is accepted.
  TensorMap edge = {
      {"i", tensor(DType::I64, {2},
                   {-std::ldexp(1.0, 63), std::ldexp(1.0, 63) - 1024})}};
  EXPECT_TRUE(writeSafeTensors(path, edge, error)) << error;
  std::remove(path.c_str());
}

TEST(SafeTensors, SerializeSkipsTensorsItCannotWrite) {
  TensorMap m;
  m["__metadata__"] = tensor(DType::F32, {1}, {1});
  m["short"] = tensor(DType::F32, {1000000000000}, {1, 2});
  m["ok"] = tensor(DType::F32, {1}, {3});
  TensorMap back = parseOk(serializeSafeTensors(m));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back["ok"].values, std::vector<double>{3});
}

} // namespace
