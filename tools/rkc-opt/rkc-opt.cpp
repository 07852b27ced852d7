//===- rkc-opt.cpp - The rec dialect's pass driver ------------------------===//
//
// MlirOptMain with the rec dialect and RKC's passes registered; lit tests
// run every pass through it.
//
//===----------------------------------------------------------------------===//

#include "Rec/Passes.h"
#include "Rec/RecDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  rkc::rec::registerRecPassesAndPipelines();

  mlir::DialectRegistry registry;
  registry.insert<rkc::rec::RecDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "RKC optimizer driver (rec dialect and passes)\n", registry));
}
