//===- RecOps.h - Operations of the rec dialect -----------------*- C++ -*-===//

#ifndef RKC_DIALECT_REC_RECOPS_H
#define RKC_DIALECT_REC_RECOPS_H

#include "Rec/RecDialect.h"
#include "Rec/RecTypes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace rkc::rec {
class StepOp;
class InputOp;
} // namespace rkc::rec

#define GET_OP_CLASSES
#include "Rec/RecOps.h.inc"

#endif // RKC_DIALECT_REC_RECOPS_H
