//===- RecDialect.h - The rec dialect ---------------------------*- C++ -*-===//

#ifndef RKC_DIALECT_REC_RECDIALECT_H
#define RKC_DIALECT_REC_RECDIALECT_H

#include "mlir/IR/Dialect.h"

#include "Rec/RecDialect.h.inc"

#endif // RKC_DIALECT_REC_RECDIALECT_H
