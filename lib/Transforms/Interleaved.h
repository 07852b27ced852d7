//===- Interleaved.h - Shared by the passes that lower sub-steps -*- C++ -*-===//

#ifndef RKC_TRANSFORMS_INTERLEAVED_H
#define RKC_TRANSFORMS_INTERLEAVED_H

#include "Rec/RecOps.h"

namespace rkc::rec {

/// Calls `lower` on the `rec.interleaved` of every recurrence of `module`
/// (recurrences already lowered further are left alone). A recurrence still
/// at `rec.step` is an error: `pass` needs the sub-steps of --rec-interleave.
inline mlir::LogicalResult
forEachInterleaved(mlir::ModuleOp module, llvm::StringRef pass,
                   llvm::function_ref<void(InterleavedOp)> lower) {
  mlir::WalkResult result = module.walk([&](RecurrenceOp recurrence) {
    mlir::Operation *transition = recurrence.getTransition();
    if (mlir::isa<StepOp>(transition)) {
      transition->emitError()
          << pass << " needs sub-steps: run --rec-interleave first";
      return mlir::WalkResult::interrupt();
    }
    if (auto interleaved = mlir::dyn_cast<InterleavedOp>(transition))
      lower(interleaved);
    return mlir::WalkResult::advance();
  });
  return mlir::failure(result.wasInterrupted());
}

} // namespace rkc::rec

#endif // RKC_TRANSFORMS_INTERLEAVED_H
