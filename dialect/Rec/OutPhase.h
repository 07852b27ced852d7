//===- OutPhase.h - The order the out kernel runs its ops in ---*- C++ -*-===//
//
// One order for rec-schedule (which plans the out kernel's shared memory by
// it), the CUDA emitter (which prints the kernel in it) and the plan's test.
//
//===----------------------------------------------------------------------===//

#ifndef RKC_DIALECT_REC_OUTPHASE_H
#define RKC_DIALECT_REC_OUTPHASE_H

#include "Rec/RecTypes.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>

namespace rkc::rec {

/// Whether the out kernel runs `op` (rec.phase "out" or "both").
inline bool runsInOutKernel(mlir::Operation *op) {
  auto phase = op->getAttrOfType<mlir::StringAttr>("rec.phase");
  return phase && (phase.getValue() == "out" || phase.getValue() == "both");
}

/// The out kernel's ops in the order it runs them: its own in body order,
/// and each value it receives (rec.to_out, rec.scan_to_out) right before
/// the first of them that reads it. A received value is read from memory
/// there rather than where its op stands, so that its tile is not live
/// before it is needed. A sum reads its addends where the product of its
/// other addend stands (the emitter folds a sum into the product before
/// it, which adds the addend as it stores): a value a sum receives comes
/// before that product.
inline llvm::SmallVector<mlir::Operation *> outKernelOrder(mlir::Block &body) {
  llvm::SmallVector<mlir::Operation *> order;
  llvm::DenseSet<mlir::Operation *> received;
  auto isReceived = [](mlir::Operation *def) {
    return def && !runsInOutKernel(def) &&
           (def->hasAttr("rec.to_out") || def->hasAttr("rec.scan_to_out"));
  };
  for (mlir::Operation &op : body) {
    if (!runsInOutKernel(&op))
      continue;
    // Where op's received operands go: before op, or before the earliest
    // out op (placed already) that defines another of a sum's operands.
    size_t at = order.size();
    if (op.getName().getStringRef() == "rec.chunk.add")
      for (mlir::Value operand : op.getOperands())
        if (mlir::Operation *def = operand.getDefiningOp();
            def && runsInOutKernel(def))
          if (auto it = llvm::find(order, def); it != order.end())
            at = std::min<size_t>(at, it - order.begin());
    for (mlir::Value operand : op.getOperands()) {
      mlir::Operation *def = operand.getDefiningOp();
      if (isReceived(def) && received.insert(def).second)
        order.insert(order.begin() + at++, def);
    }
    order.push_back(&op);
  }
  return order;
}

/// Whether `op` is on the value side of a kernel that loops over value
/// tiles (the prep's value loop, the out kernel's): a result with a value
/// axis, or an operand that is the state (a block argument with one) or the
/// result of an op of the value side (`valueSide`: those of them that come
/// before `op`).
inline bool onValueSide(mlir::Operation *op,
                        const llvm::DenseSet<mlir::Operation *> &valueSide) {
  auto valueAxis = [](mlir::Type type) {
    auto tile = mlir::dyn_cast<TileType>(type);
    return tile &&
           (tile.getRows() == Axis::value || tile.getCols() == Axis::value);
  };
  return llvm::any_of(op->getResultTypes(), valueAxis) ||
         llvm::any_of(op->getOperands(), [&](mlir::Value v) {
           mlir::Operation *def = v.getDefiningOp();
           return def ? valueSide.contains(def) : valueAxis(v.getType());
         });
}

/// The out kernel's order with a value loop (--out-value-loop): the ops of
/// outKernelOrder's that no value tile changes first, once a block, then
/// the value side, run again for each value tile from `loopBegin` on. A
/// received value keeps its place on its side (right before its first
/// reader there, or at the end of the key side where that reader is on the
/// value side). The key side's results that the loop reads live across it.
inline llvm::SmallVector<mlir::Operation *>
outKernelLoopOrder(mlir::Block &body, size_t &loopBegin) {
  llvm::SmallVector<mlir::Operation *> key, value;
  llvm::DenseSet<mlir::Operation *> valueSide;
  for (mlir::Operation *op : outKernelOrder(body)) {
    if (onValueSide(op, valueSide)) {
      valueSide.insert(op);
      value.push_back(op);
    } else {
      key.push_back(op);
    }
  }
  loopBegin = key.size();
  key.append(value.begin(), value.end());
  return key;
}

} // namespace rkc::rec

#endif // RKC_DIALECT_REC_OUTPHASE_H
