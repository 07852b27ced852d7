//===- SplitWorkspaceTest.cpp - The split kernels' workspace size ---------===//
//
// rkc_eda_fwd_workspace of a launcher built with --split-scan 1 (EDA, dk = dv
// = 64, chunk 16, no fatbin): the bytes rkc_eda_fwd takes on its stream, a
// (chunk slot, value head) each, of RKC_EDA_WORKSPACE_BYTES for float32
// outputs and RKC_EDA_WORKSPACE_BYTES_16 (values the scan only multiplies or
// adds kept in bf16) for 16-bit ones; no GPU is touched.
//
//===----------------------------------------------------------------------===//

#include "eda.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cstdint>
#include <vector>

namespace {

const void *fakeDevice() { return reinterpret_cast<const void *>(uintptr_t(1) << 32); }

rkc_tensor tensor(std::initializer_list<int64_t> shape, rkc_dtype dtype = RKC_BF16) {
  std::vector<int64_t> dims(shape);
  return rkc_contiguous(fakeDevice(), dtype, static_cast<int32_t>(dims.size()),
                        dims.data());
}

/// EDA arguments with B sequences of T tokens (or one packed row of T).
rkc_eda_args args(int64_t B, int64_t T, int64_t H) {
  rkc_eda_args a = {};
  a.q = a.k = a.e = a.v = a.o = tensor({B, T, H, 64});
  a.g = tensor({B, T, H, 64}, RKC_F32);
  a.beta = a.gamma = tensor({B, T, H});
  return a;
}

size_t workspace(const rkc_eda_args &a) {
  size_t bytes = 0;
  EXPECT_EQ(rkc_eda_fwd_workspace(&a, &bytes), RKC_SUCCESS) << rkc_last_error();
  return bytes;
}

TEST(SplitWorkspace, AChunkSlotAndValueHeadEach) {
  ASSERT_EQ(RKC_EDA_CHUNK_SIZE, 16);
  ASSERT_GT(RKC_EDA_WORKSPACE_BYTES_16, 0);
  // bf16 outputs, v dense and aligned: the scan stages the value rows from
  // v, the workspace holds none.
  const size_t chunk = RKC_EDA_WORKSPACE_BYTES_16_LEAN;
  // ceil(T / 16) slots a batch row.
  EXPECT_EQ(workspace(args(2, 10, 3)), 2 * 1 * 3 * chunk);
  EXPECT_EQ(workspace(args(2, 16, 3)), 2 * 1 * 3 * chunk);
  EXPECT_EQ(workspace(args(2, 17, 3)), 2 * 2 * 3 * chunk);
  EXPECT_EQ(workspace(args(1, 100, 4)), 1 * 7 * 4 * chunk);
  // Packed sequences: num_seqs + ceil(T / 16) slots in all.
  rkc_eda_args packed = args(1, 10, 3);
  const int64_t cu[] = {0, 4, 10};
  packed.cu_seqlens = static_cast<const int64_t *>(fakeDevice());
  packed.cu_seqlens_host = cu;
  packed.num_seqs = 2;
  EXPECT_EQ(workspace(packed), (2 + 1) * 3 * chunk);
}

TEST(SplitWorkspace, ValueRowsWhereVCannotBeStaged) {
  const size_t lean = RKC_EDA_WORKSPACE_BYTES_16_LEAN,
               full = RKC_EDA_WORKSPACE_BYTES_16;
  ASSERT_LT(lean, full);
  EXPECT_EQ(workspace(args(2, 10, 3)), 2 * 1 * 3 * lean);
  // Rows not 16-byte aligned, a strided last axis, float16 or float32
  // elements: the prep kernel hands the value rows over in the workspace.
  rkc_eda_args a = args(2, 10, 3);
  a.v.data = static_cast<const char *>(fakeDevice()) + 2;
  EXPECT_EQ(workspace(a), 2 * 1 * 3 * full);
  a = args(2, 10, 3);
  a.v.stride[1] = 3 * 64 + 4;
  EXPECT_EQ(workspace(a), 2 * 1 * 3 * full);
  a = args(2, 10, 3);
  a.v.dtype = RKC_F16;
  a.o.dtype = RKC_F16;
  EXPECT_EQ(workspace(a), 2 * 1 * 3 * full);
  a = args(2, 10, 3);
  a.v.dtype = RKC_F32;
  EXPECT_EQ(workspace(a), 2 * 1 * 3 * full);
}

TEST(SplitWorkspace, HalfForSixteenBitOutputs) {
  // The gate's last row stays float32; the rest is bf16: a little over half.
  EXPECT_GT(2 * RKC_EDA_WORKSPACE_BYTES_16, RKC_EDA_WORKSPACE_BYTES);
  EXPECT_LT(RKC_EDA_WORKSPACE_BYTES_16, RKC_EDA_WORKSPACE_BYTES * 6 / 10);
  rkc_eda_args a = args(2, 10, 3);
  a.o.dtype = RKC_F32;
  EXPECT_EQ(workspace(a), 2 * 1 * 3 * size_t(RKC_EDA_WORKSPACE_BYTES));
}

TEST(SplitWorkspace, ValidatedLikeTheCall) {
  rkc_eda_args a = args(2, 10, 3);
  a.v.data = nullptr;
  size_t bytes = 1;
  EXPECT_EQ(rkc_eda_fwd_workspace(&a, &bytes), RKC_ERROR_NULL_POINTER);
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(rkc_eda_fwd_workspace(nullptr, &bytes), RKC_ERROR_NULL_POINTER);
}

} // namespace
