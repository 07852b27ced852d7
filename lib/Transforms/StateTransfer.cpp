//===- StateTransfer.cpp - A chunk as an affine map of its entering state -===//
//
// Propagates, op by op, the decomposition v = A_v S₀ + B_v of every value
// that depends on the entering state S₀ (A_v: rows(v) x dk; B_v may be
// absent, meaning zero), creating the coefficient ops next to the originals.
// The output and the yielded state are then rebuilt at the end of the body
// from their coefficients, and the originals, now dead, are erased.
//
//===----------------------------------------------------------------------===//

#include "Rec/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace rkc::rec {
#define GEN_PASS_DEF_RECSTATETRANSFER
#include "Rec/Passes.h.inc"
} // namespace rkc::rec

using namespace mlir;
using namespace rkc::rec;

namespace {

struct Affine {
  Value coefficient; // A_v
  Value bias;        // B_v, or null for zero
};

class Linearizer {
public:
  Linearizer(ChunkedOp chunked) : chunked(chunked) {}

  LogicalResult run() {
    Block &body = chunked.getBody().front();
    Value state = body.getArgument(0);
    MLIRContext *context = chunked.getContext();
    OpBuilder b(context);
    b.setInsertionPointToStart(&body);
    Location loc = chunked.getLoc();
    affine[state] = {ChunkIdentityOp::create(
                         b, loc, TileType::get(context, Axis::key, Axis::key)),
                     nullptr};

    SmallVector<Operation *> dependent;
    ChunkOutputOp output;
    ChunkYieldOp yield;
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (auto out = dyn_cast<ChunkOutputOp>(op)) {
        output = out;
        continue;
      }
      if (auto y = dyn_cast<ChunkYieldOp>(op)) {
        yield = y;
        continue;
      }
      if (!llvm::any_of(op.getOperands(),
                        [&](Value v) { return affine.count(v); }))
        continue;
      b.setInsertionPointAfter(&op);
      if (failed(linearize(&op, b)))
        return failure();
      dependent.push_back(&op);
    }

    // The state-dependent products, last: O = P S₀ + R, S_L = M S₀ + N.
    b.setInsertionPoint(yield);
    if (affine.count(output.getOutput()))
      output.getOutputMutable().assign(
          apply(b, loc, affine[output.getOutput()], state,
                output.getOutput().getType()));
    b.setInsertionPoint(yield);
    Value leaving = yield.getState()[0];
    if (affine.count(leaving))
      yield.getStateMutable().assign(
          apply(b, loc, affine[leaving], state, leaving.getType()));
    // Keep the output before the yield and after everything it reads.
    output->moveBefore(yield);
    for (Operation *op : llvm::reverse(dependent))
      op->erase();
    return success();
  }

private:
  /// A S₀ + B.
  Value apply(OpBuilder &b, Location loc, Affine a, Value state, Type type) {
    Value product = ChunkMatmulOp::create(b, loc, type, a.coefficient, state,
                                          false);
    return a.bias ? ChunkAddOp::create(b, loc, type, product, a.bias)
                        .getResult()
                  : product;
  }

  static Type coefficientType(Type t) {
    auto tile = cast<TileType>(t);
    return TileType::get(t.getContext(), tile.getRows(), tile.getRowSlots(),
                         Axis::key, {});
  }

  LogicalResult linearize(Operation *op, OpBuilder &b) {
    Location loc = op->getLoc();
    auto dependent = [&](Value v) { return affine.count(v) != 0; };
    Value result = op->getNumResults() ? op->getResult(0) : Value();
    if (auto mm = dyn_cast<ChunkMatmulOp>(op)) {
      // X·Y (or Xᵀ·Y) with Y = A S₀ + B and X independent of S₀.
      if (dependent(mm.getLhs()) || !dependent(mm.getRhs()))
        return op->emitError("rec-state-transfer: the chunk is not linear "
                             "in the entering state here");
      Affine y = affine[mm.getRhs()];
      Affine r;
      r.coefficient = ChunkMatmulOp::create(b, loc, coefficientType(mm.getType()),
                                            mm.getLhs(), y.coefficient,
                                            mm.getTransposeLhs());
      if (y.bias)
        r.bias = ChunkMatmulOp::create(b, loc, mm.getType(), mm.getLhs(),
                                       y.bias, mm.getTransposeLhs());
      affine[result] = r;
      return success();
    }
    if (auto add = dyn_cast<ChunkAddOp>(op)) {
      Affine r;
      auto sum = [&](Value x, Value y, Type type) -> Value {
        if (!x || !y)
          return x ? x : y;
        return ChunkAddOp::create(b, loc, type, x, y);
      };
      Affine x = dependent(add.getLhs()) ? affine[add.getLhs()]
                                         : Affine{nullptr, add.getLhs()};
      Affine y = dependent(add.getRhs()) ? affine[add.getRhs()]
                                         : Affine{nullptr, add.getRhs()};
      r.coefficient = sum(x.coefficient, y.coefficient,
                          coefficientType(add.getType()));
      r.bias = sum(x.bias, y.bias, add.getType());
      affine[result] = r;
      return success();
    }
    if (auto decay = dyn_cast<ChunkDecayStateOp>(op)) {
      // Diag(exp G_L)(A S₀ + B): scales the rows of A and B.
      if (dependent(decay.getDecay()))
        return op->emitError("rec-state-transfer: a gate depends on the "
                             "state");
      Affine s = affine[decay.getState()];
      Affine r;
      r.coefficient = ChunkDecayStateOp::create(
          b, loc, s.coefficient.getType(), s.coefficient, decay.getDecay());
      if (s.bias)
        r.bias = ChunkDecayStateOp::create(b, loc, decay.getType(), s.bias,
                                           decay.getDecay());
      affine[result] = r;
      return success();
    }
    if (auto scale = dyn_cast<ChunkScaleRowsOp>(op)) {
      if (dependent(scale.getScale()))
        return op->emitError("rec-state-transfer: a scale depends on the "
                             "state");
      Affine x = affine[scale.getMatrix()];
      Affine r;
      r.coefficient = ChunkScaleRowsOp::create(
          b, loc, coefficientType(scale.getType()), x.coefficient,
          scale.getScale());
      if (x.bias)
        r.bias = ChunkScaleRowsOp::create(b, loc, scale.getType(), x.bias,
                                          scale.getScale());
      affine[result] = r;
      return success();
    }
    return op->emitError("rec-state-transfer: cannot write '")
           << op->getName() << "' as an affine map of the entering state";
  }

  ChunkedOp chunked;
  llvm::DenseMap<Value, Affine> affine;
};

struct RecStateTransferPass
    : rkc::rec::impl::RecStateTransferBase<RecStateTransferPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](ChunkedOp chunked) {
      return failed(Linearizer(chunked).run()) ? WalkResult::interrupt()
                                               : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
