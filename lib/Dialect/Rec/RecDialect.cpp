//===- RecDialect.cpp - The rec dialect -----------------------------------===//

#include "Rec/RecDialect.h"
#include "Rec/RecOps.h"
#include "Rec/RecTypes.h"

using namespace mlir;
using namespace rkc::rec;

#include "Rec/RecDialect.cpp.inc"

void RecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Rec/RecOps.cpp.inc"
      >();
  registerTypes();
}
