//===- RuntimeToolsTest.cpp - The runtime's timing and device queries -----===//
//
// Without a GPU (or a driver) the queries rkc tune uses fail with a status
// and a message, never a crash; with one they answer.
//
//===----------------------------------------------------------------------===//

#include "rkc/runtime.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>

namespace {

using ::testing::AnyOf;
using ::testing::Eq;

TEST(RuntimeTools, DevicePropertiesOrAnError) {
  rkc_device_properties properties;
  rkc_status status = rkc_device_get_properties(0, &properties);
  if (status == RKC_SUCCESS) {
    EXPECT_GT(std::strlen(properties.name), 0u);
    EXPECT_GE(properties.major, 7);
    EXPECT_GT(properties.multiprocessors, 0);
    EXPECT_GT(properties.l2_bytes, 0);
    EXPECT_GT(properties.max_shared_bytes_optin, 0);
  } else {
    EXPECT_THAT(status, AnyOf(Eq(RKC_ERROR_NO_DRIVER), Eq(RKC_ERROR_CUDA)));
    EXPECT_GT(std::strlen(rkc_last_error()), 0u);
  }
}

TEST(RuntimeTools, WithoutAContextNothingCrashes) {
  // A null event is nothing to destroy.
  EXPECT_EQ(rkc_event_destroy(nullptr), RKC_SUCCESS);
  // Zero bytes is nothing to set, with a driver or without.
  rkc_status status = rkc_device_memset_async(nullptr, 0, 0, nullptr);
  EXPECT_THAT(status, AnyOf(Eq(RKC_SUCCESS), Eq(RKC_ERROR_NO_DRIVER)));
  // Not a fatbin: an error, whatever the machine.
  const unsigned char junk[16] = {1, 2, 3};
  rkc_kernel_properties properties;
  EXPECT_NE(rkc_kernel_get_properties(junk, "k", &properties), RKC_SUCCESS);
  EXPECT_GT(std::strlen(rkc_last_error()), 0u);
}

TEST(RuntimeTools, WorkspacePoolAnswersOrFails) {
  EXPECT_EQ(rkc_memory_pool(nullptr), RKC_ERROR_NULL_POINTER);
  EXPECT_GT(std::strlen(rkc_last_error()), 0u);
  // Without a current context (this test opens none), a status and a
  // message, and no stale handle.
  CUmemoryPool pool = reinterpret_cast<CUmemoryPool>(uintptr_t(1));
  rkc_status status = rkc_memory_pool(&pool);
  if (status == RKC_SUCCESS) {
    EXPECT_NE(pool, nullptr);
  } else {
    EXPECT_EQ(pool, nullptr);
    EXPECT_THAT(status, AnyOf(Eq(RKC_ERROR_NO_DRIVER), Eq(RKC_ERROR_CUDA)));
    EXPECT_GT(std::strlen(rkc_last_error()), 0u);
  }
  // Nothing held is nothing to hand back, with a driver or without.
  EXPECT_EQ(rkc_release_memory(), RKC_SUCCESS);
}

} // namespace
