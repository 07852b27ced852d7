//===- Decode.cpp - Sub-steps to a one-token state update -----------------===//

#include "Rec/Passes.h"

#include "mlir/IR/Builders.h"

namespace rkc::rec {
#define GEN_PASS_DEF_RECDECODE
#include "Rec/Passes.h.inc"
} // namespace rkc::rec

using namespace mlir;
using namespace rkc::rec;

namespace {

struct RecDecodePass : rkc::rec::impl::RecDecodeBase<RecDecodePass> {
  using RecDecodeBase::RecDecodeBase;

  void runOnOperation() override {
    if (tokens < 1) {
      getOperation().emitError()
          << "rec-decode: tokens must be a positive integer, got "
          << static_cast<int64_t>(tokens);
      return signalPassFailure();
    }
    WalkResult result = getOperation().walk([&](RecurrenceOp recurrence) {
      Operation *transition = recurrence.getTransition();
      if (isa<StepOp>(transition)) {
        transition->emitError()
            << "rec-decode needs sub-steps: run --rec-interleave first";
        return WalkResult::interrupt();
      }
      auto interleaved = dyn_cast<InterleavedOp>(transition);
      if (!interleaved)
        return WalkResult::advance();
      OpBuilder builder(interleaved);
      auto decode = DecodeOp::create(builder, interleaved.getLoc(), tokens);
      decode.getBody().takeBody(interleaved.getBody());
      interleaved.erase();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
