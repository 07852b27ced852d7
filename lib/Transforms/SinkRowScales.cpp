//===- SinkRowScales.cpp - Row scalings moved off products' left operands -===//
//
// A product whose left operand is a row scaling of a tile (each row by one
// scalar: rec.chunk.scale_rows, or rec.chunk.decay_rows / decay_to_end with
// a scalar gate) can scale elsewhere: diag(c) A · B = diag(c) (A B), the
// product's rows; (diag(c) A)ᵀ B = Aᵀ (diag(c) B), the right operand's rows.
// For a scalar-gate delta factor (GDN, Comba, DeltaNet) the scan's Q̃ S and
// K̂ᵀ X then read the input rows q and k themselves, which the scan can stage
// from the inputs, instead of the prep's decayed tiles, which it writes to
// the workspace for the scan to read back; the scalings fall on chunk x
// value tiles the scan holds anyway.
//
//===----------------------------------------------------------------------===//

#include "Rec/Passes.h"

#include "mlir/IR/Builders.h"

namespace rkc::rec {
#define GEN_PASS_DEF_RECSINKROWSCALES
#include "Rec/Passes.h.inc"
} // namespace rkc::rec

using namespace mlir;
using namespace rkc::rec;

namespace {

/// Whether `op` scales each row of its first operand by one scalar.
bool isRowScale(Operation *op) {
  if (isa<ChunkScaleRowsOp>(op))
    return true;
  if (!isa<ChunkDecayRowsOp, ChunkDecayToEndOp>(op))
    return false;
  return cast<TileType>(op->getOperand(1).getType()).getCols() == Axis::one;
}

/// `op`'s scaling applied to x instead (x's type: the rows are the same).
Value scaleLike(Operation *op, Value x, OpBuilder &b) {
  Location loc = op->getLoc();
  Value by = op->getOperand(1);
  if (isa<ChunkScaleRowsOp>(op))
    return ChunkScaleRowsOp::create(b, loc, x.getType(), x, by);
  if (isa<ChunkDecayRowsOp>(op))
    return ChunkDecayRowsOp::create(b, loc, x.getType(), x, by);
  return ChunkDecayToEndOp::create(b, loc, x.getType(), x, by);
}

/// Moves one product's row scaling; whether there was one.
bool sink(ChunkMatmulOp mm) {
  Operation *scale = mm.getLhs().getDefiningOp();
  if (!scale || !isRowScale(scale))
    return false;
  OpBuilder b(mm);
  Value x = scale->getOperand(0), result;
  if (mm.getTransposeLhs()) {
    Value rhs = scaleLike(scale, mm.getRhs(), b);
    result = ChunkMatmulOp::create(b, mm.getLoc(), mm.getType(), x, rhs,
                                   /*transpose_lhs=*/true);
  } else {
    Value product = ChunkMatmulOp::create(b, mm.getLoc(), mm.getType(), x,
                                          mm.getRhs(), /*transpose_lhs=*/false);
    result = scaleLike(scale, product, b);
  }
  mm.getResult().replaceAllUsesWith(result);
  mm->erase();
  if (scale->use_empty())
    scale->erase();
  return true;
}

struct RecSinkRowScalesPass
    : rkc::rec::impl::RecSinkRowScalesBase<RecSinkRowScalesPass> {
  void runOnOperation() override {
    getOperation().walk([](ChunkedOp chunked) {
      // A scaling of a scaling (K̂ = decay_to_end(scale_rows(K, β))) moves
      // one at a time: until no product's left operand is one.
      for (bool changed = true; changed;) {
        changed = false;
        SmallVector<ChunkMatmulOp> products;
        chunked.getBody().front().walk(
            [&](ChunkMatmulOp mm) { products.push_back(mm); });
        for (ChunkMatmulOp mm : products)
          changed |= sink(mm);
      }
    });
  }
};

} // namespace
