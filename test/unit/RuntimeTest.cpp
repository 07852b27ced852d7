//===- RuntimeTest.cpp - Argument validation of runtime and launchers -----===//
//
// Calls that must fail do, with the right status and a message naming the
// argument; a valid call gets past validation (and, with no kernels built
// into this launcher, stops at RKC_ERROR_NO_KERNELS). No GPU is touched.
//
//===----------------------------------------------------------------------===//

#include "eda.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cstdint>
#include <limits>
#include <string>

namespace {

using ::testing::HasSubstr;

/// A plausible device address (never dereferenced on the host).
const void *fakeDevice(uintptr_t offset = 0) {
  return reinterpret_cast<const void *>(uintptr_t(1) << 32 | offset);
}

rkc_tensor tensor(std::initializer_list<int64_t> shape,
                  rkc_dtype dtype = RKC_BF16, uintptr_t offset = 0) {
  std::vector<int64_t> dims(shape);
  return rkc_contiguous(fakeDevice(offset), dtype,
                        static_cast<int32_t>(dims.size()), dims.data());
}

/// Valid EDA arguments: B = 2, T = 10, H = 3, dk = dv = 64.
rkc_eda_args validArgs() {
  rkc_eda_args a = {};
  a.q = a.k = a.e = a.g = tensor({2, 10, 3, 64});
  a.g.dtype = RKC_F32;
  a.v = tensor({2, 10, 3, 64});
  a.beta = a.gamma = tensor({2, 10, 3});
  a.o = tensor({2, 10, 3, 64});
  return a;
}

struct Call {
  rkc_status status;
  std::string message;
};

Call fwd(const rkc_eda_args &a) {
  rkc_status status = rkc_eda_fwd(nullptr, &a);
  return {status, rkc_last_error()};
}

TEST(Runtime, ValidCallsPassValidation) {
  for (auto entry : {rkc_eda_fwd, rkc_eda_decode}) {
    rkc_eda_args a = validArgs();
    EXPECT_EQ(entry(nullptr, &a), RKC_ERROR_NO_KERNELS);
    EXPECT_THAT(rkc_last_error(), HasSubstr("without a fatbin"));
  }
}

TEST(Runtime, NullPointers) {
  EXPECT_EQ(rkc_eda_fwd(nullptr, nullptr), RKC_ERROR_NULL_POINTER);
  rkc_eda_args a = validArgs();
  a.k.data = nullptr;
  Call c = fwd(a);
  EXPECT_EQ(c.status, RKC_ERROR_NULL_POINTER);
  EXPECT_THAT(c.message, HasSubstr("k is a null pointer"));
}

TEST(Runtime, Shapes) {
  rkc_eda_args a = validArgs();
  a.k = tensor({2, 10, 3});
  Call c = fwd(a);
  EXPECT_EQ(c.status, RKC_ERROR_SHAPE);
  EXPECT_THAT(c.message, HasSubstr("k has rank 3; expected 4"));

  a = validArgs();
  a.v = tensor({2, 10, 3, 32}); // dv is 64
  c = fwd(a);
  EXPECT_EQ(c.status, RKC_ERROR_SHAPE);
  EXPECT_THAT(c.message, HasSubstr("v has size 32 in dimension 3; expected 64"));

  a = validArgs();
  a.gamma = tensor({2, 11, 3}); // T is 10
  EXPECT_THAT(fwd(a).message, HasSubstr("gamma has size 11 in dimension 1"));

  a = validArgs();
  a.o = tensor({2, 10, 3, 32});
  EXPECT_THAT(fwd(a).message, HasSubstr("o has size 32 in dimension 3"));
}

TEST(Runtime, GroupedValueHeads) {
  rkc_eda_args a = validArgs();
  a.v = tensor({2, 10, 6, 64}); // HV = 6 over H = 3: a GVA group of 2
  a.o = tensor({2, 10, 6, 64});
  EXPECT_EQ(fwd(a).status, RKC_ERROR_NO_KERNELS);

  a.beta = tensor({2, 10, 4}); // neither H nor HV
  Call c = fwd(a);
  EXPECT_EQ(c.status, RKC_ERROR_SHAPE);

  a = validArgs();
  a.v = tensor({2, 10, 4, 64}); // 4 is not a multiple of 3
  c = fwd(a);
  EXPECT_EQ(c.status, RKC_ERROR_SHAPE);
  EXPECT_THAT(c.message, HasSubstr("do not form a GVA group"));
}

TEST(Runtime, DtypesStridesAlignment) {
  rkc_eda_args a = validArgs();
  a.beta.dtype = 7;
  Call c = fwd(a);
  EXPECT_EQ(c.status, RKC_ERROR_DTYPE);
  EXPECT_THAT(c.message, HasSubstr("beta has dtype unknown"));

  a = validArgs();
  a.q.stride[1] = -64;
  c = fwd(a);
  EXPECT_EQ(c.status, RKC_ERROR_STRIDE);
  EXPECT_THAT(c.message, HasSubstr("q has a negative stride"));

  a = validArgs();
  a.g = tensor({2, 10, 3, 64}, RKC_F32, 2); // 2-byte offset, 4-byte floats
  c = fwd(a);
  EXPECT_EQ(c.status, RKC_ERROR_ALIGNMENT);
  EXPECT_THAT(c.message, HasSubstr("g is not aligned"));

  a = validArgs();
  a.initial_state = static_cast<const float *>(fakeDevice(2));
  EXPECT_EQ(fwd(a).status, RKC_ERROR_ALIGNMENT);

  a = validArgs();
  a.scale = -1.f;
  EXPECT_THAT(fwd(a).message, HasSubstr("scale must be positive"));
  a.scale = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THAT(fwd(a).message, HasSubstr("scale must be positive and finite"));
  a.scale = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fwd(a).status, RKC_ERROR_SHAPE);

  a = validArgs();
  a.o.stride[2] = 0; // every head would write the same element
  c = fwd(a);
  EXPECT_EQ(c.status, RKC_ERROR_STRIDE);
  EXPECT_THAT(c.message, HasSubstr("o has stride 0 in dimension 2"));
}

TEST(Runtime, GridLimits) {
  rkc_eda_args a = validArgs();
  for (rkc_tensor *t : {&a.q, &a.k, &a.e, &a.g, &a.v, &a.o})
    t->shape[0] = 70000;
  a.beta.shape[0] = a.gamma.shape[0] = 70000;
  for (rkc_tensor *t : {&a.q, &a.k, &a.e, &a.g, &a.v, &a.o, &a.beta,
                        &a.gamma})
    *t = rkc_contiguous(t->data, static_cast<rkc_dtype>(t->dtype), t->rank,
                        t->shape);
  Call c = fwd(a);
  EXPECT_EQ(c.status, RKC_ERROR_SHAPE);
  EXPECT_THAT(c.message, HasSubstr("at most 65535 sequences"));
}

TEST(Runtime, CuSeqlens) {
  rkc_eda_args a = validArgs();
  a.cu_seqlens = static_cast<const int64_t *>(fakeDevice());
  a.num_seqs = 2;
  Call c = fwd(a); // B = 2
  EXPECT_EQ(c.status, RKC_ERROR_CU_SEQLENS);
  EXPECT_THAT(c.message, HasSubstr("but B = 2"));

  rkc_eda_args packed = validArgs();
  for (rkc_tensor *t : {&packed.q, &packed.k, &packed.e, &packed.g,
                        &packed.v, &packed.o})
    t->shape[0] = 1;
  packed.beta.shape[0] = packed.gamma.shape[0] = 1;
  packed.cu_seqlens = static_cast<const int64_t *>(fakeDevice());
  packed.num_seqs = 0;
  EXPECT_THAT(fwd(packed).message, HasSubstr("num_seqs must be at least 1"));

  const int64_t good[] = {0, 4, 10}, decreasing[] = {0, 6, 4, 10},
                short_[] = {0, 4, 9}, late[] = {1, 4, 10};
  packed.num_seqs = 2;
  packed.cu_seqlens_host = good;
  EXPECT_EQ(fwd(packed).status, RKC_ERROR_NO_KERNELS);
  packed.cu_seqlens_host = short_;
  EXPECT_THAT(fwd(packed).message, HasSubstr("must end at T = 10, got 9"));
  packed.cu_seqlens_host = late;
  EXPECT_THAT(fwd(packed).message, HasSubstr("must start at 0"));
  packed.cu_seqlens_host = decreasing;
  packed.num_seqs = 3;
  c = fwd(packed);
  EXPECT_EQ(c.status, RKC_ERROR_CU_SEQLENS);
  EXPECT_THAT(c.message, HasSubstr("non-decreasing"));
}

TEST(Runtime, OneKernelTakesNoWorkspace) {
  rkc_eda_args a = validArgs();
  size_t bytes = 123;
  EXPECT_EQ(rkc_eda_fwd_workspace(&a, &bytes), RKC_SUCCESS);
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(rkc_eda_fwd_workspace(&a, nullptr), RKC_ERROR_NULL_POINTER);
  EXPECT_THAT(rkc_last_error(), HasSubstr("bytes is a null pointer"));
  // Arguments rkc_eda_fwd rejects are rejected alike.
  a.k = tensor({2, 10, 3});
  EXPECT_EQ(rkc_eda_fwd_workspace(&a, &bytes), RKC_ERROR_SHAPE);
  EXPECT_THAT(rkc_last_error(), HasSubstr("k has rank 3; expected 4"));
}

TEST(Runtime, ContiguousDescriptor) {
  const int64_t shape[] = {2, 3, 4};
  rkc_tensor t = rkc_contiguous(fakeDevice(), RKC_F32, 3, shape);
  EXPECT_EQ(t.stride[0], 12);
  EXPECT_EQ(t.stride[1], 4);
  EXPECT_EQ(t.stride[2], 1);
  EXPECT_EQ(rkc_dtype_size(RKC_BF16), 2);
  EXPECT_EQ(rkc_dtype_size(99), 0);
}

} // namespace
