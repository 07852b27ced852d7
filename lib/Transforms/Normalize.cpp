//===- Normalize.cpp - Canonical factors and simplified prologues ---------===//

#include "Rec/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace rkc::rec {
#define GEN_PASS_DEF_RECNORMALIZE
#include "Rec/Passes.h.inc"
} // namespace rkc::rec

using namespace mlir;
using namespace rkc::rec;

namespace {

/// The value of `v` if it is a rec.constant.
std::optional<double> constantValue(Value v) {
  if (!v)
    return std::nullopt;
  if (auto c = v.getDefiningOp<ConstantOp>())
    return c.getValue().convertToDouble();
  return std::nullopt;
}

/// Diag(exp 0) is the identity.
struct RemoveZeroDecay : OpRewritePattern<DecayOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DecayOp op,
                                PatternRewriter &rewriter) const override {
    if (constantValue(op.getGate()) != 0.0)
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// (I - 0·x yᵀ) and 0·k vᵀ do nothing; so does a delta rule of strength 0.
template <typename FactorOp>
struct RemoveZeroStrength : OpRewritePattern<FactorOp> {
  using OpRewritePattern<FactorOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(FactorOp op,
                                PatternRewriter &rewriter) const override {
    if (constantValue(op.getScale()) != 0.0)
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// Diag(exp g2) Diag(exp g1) = Diag(exp(g1 + g2)): one decay per sub-step.
struct MergeAdjacentDecays : OpRewritePattern<DecayOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DecayOp op,
                                PatternRewriter &rewriter) const override {
    auto next = dyn_cast_or_null<DecayOp>(op->getNextNode());
    if (!next)
      return failure();
    // Prologue expressions live in the recurrence body, before the step.
    Operation *step = op->getParentOfType<StepOp>();
    rewriter.setInsertionPoint(step);
    Value sum = AddOp::create(rewriter, op.getLoc(), op.getGate(),
                              next.getGate());
    rewriter.modifyOpInPlace(next, [&] { next.getGateMutable().assign(sum); });
    rewriter.eraseOp(op);
    return success();
  }
};

/// A scalar decay commutes with a rank-1 factor that writes nothing:
/// c·(I - x yᵀ) = (I - x yᵀ)·c. Moving it first lets it join that factor's
/// sub-step.
struct HoistScalarDecay : OpRewritePattern<DecayOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DecayOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<ScalarType>(op.getGate().getType()))
      return failure();
    Operation *prev = op->getPrevNode();
    if (!prev || !isa<EraseOp, Rank1Op>(prev))
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op->moveBefore(prev); });
    return success();
  }
};

/// x ⊙ 1 = x and x + 0 = x, when the result keeps x's type.
template <typename BinaryOp>
struct FoldNeutralOperand : OpRewritePattern<BinaryOp> {
  FoldNeutralOperand(MLIRContext *context, double neutral)
      : OpRewritePattern<BinaryOp>(context), neutral(neutral) {}
  LogicalResult matchAndRewrite(BinaryOp op,
                                PatternRewriter &rewriter) const override {
    for (auto [kept, other] : {std::pair{op.getLhs(), op.getRhs()},
                               std::pair{op.getRhs(), op.getLhs()}}) {
      if (constantValue(other) == neutral &&
          kept.getType() == op.getType()) {
        rewriter.replaceOp(op, kept);
        return success();
      }
    }
    return failure();
  }
  double neutral;
};

struct RecNormalizePass
    : rkc::rec::impl::RecNormalizeBase<RecNormalizePass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<RemoveZeroDecay, RemoveZeroStrength<EraseOp>,
                 RemoveZeroStrength<Rank1Op>, RemoveZeroStrength<DeltaOp>,
                 RemoveZeroStrength<WriteOp>, MergeAdjacentDecays,
                 HoistScalarDecay>(context);
    patterns.add<FoldNeutralOperand<MulOp>>(context, 1.0);
    patterns.add<FoldNeutralOperand<AddOp>>(context, 0.0);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
