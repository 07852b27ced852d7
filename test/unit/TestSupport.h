//===- TestSupport.h - Shared helpers of the unit tests ---------*- C++ -*-===//

#ifndef RKC_TEST_UNIT_TESTSUPPORT_H
#define RKC_TEST_UNIT_TESTSUPPORT_H

#include "Interpreter/Interpreter.h"
#include "Interpreter/SpecFile.h"

#include "mlir/IR/MLIRContext.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <string>

namespace rkc::test {

/// The ten example specs of MATH.md (kda_prologue is tested on its own).
inline const char *const kExampleSpecs[] = {
    "linear_attention", "deltanet", "gdn",          "kda",   "gdn2",
    "qed",              "eda",      "deltaproduct", "comba", "dplr"};

inline std::string examplePath(const std::string &name) {
  return std::string(RKC_SOURCE_DIR) + "/examples/specs/" + name + ".mlir";
}

/// Parses and flattens examples/specs/NAME.mlir.
inline SpecPlan loadExample(const std::string &name) {
  mlir::MLIRContext context;
  context.loadDialect<rec::RecDialect>();
  SpecFile spec;
  bool loaded = loadSpecFile(context, examplePath(name), "", spec);
  EXPECT_TRUE(loaded) << name;
  if (!loaded)
    return SpecPlan();
  return SpecPlan::build(spec.recurrence);
}

/// Runs the interpreter and fails the test on an error.
inline TensorMap interpretOrFail(const SpecPlan &plan, const TensorMap &inputs,
                                 const RunOptions &options = {}) {
  TensorMap outputs;
  std::string error;
  EXPECT_TRUE(interpret(plan, inputs, options, outputs, error)) << error;
  return outputs;
}

/// Asserts o and final_state agree within `bound` (relative Frobenius).
inline void expectClose(const TensorMap &got, const TensorMap &want,
                        double bound, const std::string &what) {
  for (const char *name : {"o", "final_state"}) {
    ASSERT_TRUE(got.count(name)) << what << ": no " << name;
    ASSERT_TRUE(want.count(name)) << what << ": no reference " << name;
    double err = relativeError(got.at(name), want.at(name));
    EXPECT_LT(err, bound) << what << ": " << name << " relative error " << err
                          << " (shapes " << formatShape(got.at(name).shape)
                          << " vs " << formatShape(want.at(name).shape) << ")";
  }
}

} // namespace rkc::test

#endif // RKC_TEST_UNIT_TESTSUPPORT_H
