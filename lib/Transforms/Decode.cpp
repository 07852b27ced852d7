//===- Decode.cpp - Sub-steps to a one-token state update -----------------===//

#include "Interleaved.h"
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
    auto lower = [&](InterleavedOp interleaved) {
      OpBuilder builder(interleaved);
      auto decode = DecodeOp::create(builder, interleaved.getLoc(), tokens);
      decode.getBody().takeBody(interleaved.getBody());
      interleaved.erase();
    };
    if (failed(forEachInterleaved(getOperation(), "rec-decode", lower)))
      signalPassFailure();
  }
};

} // namespace
