//===- SplitScan.cpp - The token-parallel and sequential parts of a chunk -===//
//
// Marks every op of a `rec.chunked` body with the phase that runs it:
//
//   prep  depends on the chunk's inputs only: every chunk at once;
//   scan  depends on the entering state (or is the output or the yield): the
//         chunks in order, one after another;
//   both  a `rec.chunk.rows` both phases read (a load is cheaper to redo
//         than to keep; with keep-rows, such rows stay prep and cross: the
//         scan then waits on no input load);
//   out   with out-phase: a scan op that the next chunk's state does not
//         need (the output and what only it reads), and a prep op that
//         only out ops read: every chunk at once, after the scan, from the
//         chunk's entering state.
//
// A prep value that a scan op reads crosses from one phase to the other
// through a per-chunk workspace: it gets `rec.to_scan = "all"`, or "last_row"
// when every scan use is the decay of `rec.chunk.decay_state` (which reads
// G's last row only). A state-free product whose result has the state's
// shape (key x value) and that only the scan reads is moved into the scan:
// keeping its chunk-sized operands costs less than keeping a dk x dv tile
// per chunk; so is a product of values the scan receives anyway that
// only the scan reads. With out-phase, a prep value an out op reads gets
// `rec.to_out`, a scan value one reads `rec.scan_to_out` (kept a chunk, as
// the chunk's entering state is).
//
//===----------------------------------------------------------------------===//

#include "Rec/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace rkc::rec {
#define GEN_PASS_DEF_RECSPLITSCAN
#include "Rec/Passes.h.inc"
} // namespace rkc::rec

using namespace mlir;
using namespace rkc::rec;

namespace {

enum class Phase { prep, scan, both, out };

StringRef phaseName(Phase phase) {
  switch (phase) {
  case Phase::prep:
    return "prep";
  case Phase::scan:
    return "scan";
  case Phase::both:
    return "both";
  case Phase::out:
    return "out";
  }
  return "";
}

bool isStateShaped(Type type) {
  auto tile = dyn_cast<TileType>(type);
  return tile && tile.getRows() == Axis::key && tile.getCols() == Axis::value;
}

void split(ChunkedOp chunked, bool keepRows, bool outPhase) {
  Block &body = chunked.getBody().front();
  llvm::DenseMap<Operation *, Phase> phase;

  // 1. What depends on the entering state, and the output and the yield.
  llvm::DenseSet<Value> stateful{body.getArgument(0)};
  for (Operation &op : body) {
    bool dependent = isa<ChunkOutputOp, ChunkYieldOp>(op) ||
                     llvm::any_of(op.getOperands(), [&](Value v) {
                       return stateful.contains(v);
                     });
    phase[&op] = dependent ? Phase::scan : Phase::prep;
    if (dependent)
      for (Value r : op.getResults())
        stateful.insert(r);
  }

  // 1b. With out-phase: scan ops the yield does not need (the next chunk's
  //     state) run after the scan, every chunk at once.
  if (outPhase) {
    llvm::DenseSet<Operation *> needed;
    for (Operation &op : llvm::reverse(body)) {
      if (!isa<ChunkYieldOp>(op) && !needed.contains(&op))
        continue;
      needed.insert(&op);
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp())
          needed.insert(def);
    }
    for (Operation &op : body)
      if (phase[&op] == Phase::scan && !needed.contains(&op))
        phase[&op] = Phase::out;
  }

  // 1c. With out-phase: prep ops that only out ops read (last to first, so
  //     that a chain moves together: A_qk V, A_qk, its Gram, the query
  //     rows) run in the out phase too, every chunk at once as the prep
  //     does: what crosses to it is then the scan's values and the prep's
  //     that the scan reads as well, not tiles the out kernel can compute
  //     from its own rows (fla's chunk_fwd_o computes its A from q and k).
  if (outPhase)
    for (Operation &op : llvm::reverse(body))
      if (phase[&op] == Phase::prep && op.getNumResults() && !op.use_empty() &&
          llvm::all_of(op.getUsers(), [&](Operation *user) {
            return phase[user] == Phase::out;
          }))
        phase[&op] = Phase::out;

  auto onlyScanUses = [&](Operation *op) {
    return !op->use_empty() &&
           llvm::all_of(op->getUsers(), [&](Operation *user) {
             return phase[user] == Phase::scan;
           });
  };

  // 2. State-shaped products that only the scan reads move into it (last
  //    to first, so that a chain of them moves together).
  for (Operation &op : llvm::reverse(body))
    if (phase[&op] == Phase::prep && isa<ChunkMatmulOp>(op) &&
        isStateShaped(op.getResult(0).getType()) && onlyScanUses(&op))
      phase[&op] = Phase::scan;

  // 2b. A product that only the scan reads, of operands the scan receives
  //     anyway (values that cross, or row loads), moves into it: its
  //     result, a chunk-sized tile, then does not cross. (A delta factor's
  //     A_qk V: A_qk is A_qa, which crosses for A_qa U', and V's rows cross
  //     for the state update.)
  auto reachesScan = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && (isa<ChunkRowsOp>(def) ||
                   llvm::any_of(v.getUsers(), [&](Operation *user) {
                     return phase[user] == Phase::scan;
                   }));
  };
  for (Operation &op : llvm::reverse(body))
    if (phase[&op] == Phase::prep && isa<ChunkMatmulOp>(op) &&
        onlyScanUses(&op) && llvm::all_of(op.getOperands(), reachesScan))
      phase[&op] = Phase::scan;

  // 3. Row loads the scan reads are redone there (unless kept).
  for (Operation &op : body)
    if (!keepRows && isa<ChunkRowsOp>(op) && phase[&op] == Phase::prep &&
        llvm::any_of(op.getUsers(), [&](Operation *user) {
          return phase[user] == Phase::scan;
        }))
      phase[&op] = onlyScanUses(&op) ? Phase::scan : Phase::both;

  // The first op of the out phase that reads `op` (null: none), and the
  // out phase reading `copy` wherever it read `op`.
  auto firstOutReader = [&](Operation *op) {
    Operation *first = nullptr;
    for (Operation *user : op->getUsers())
      if (phase[user] == Phase::out && (!first || user->isBeforeInBlock(first)))
        first = user;
    return first;
  };
  auto readInOut = [&](Operation *op, Value copy) {
    op->getResult(0).replaceUsesWithIf(copy, [&](OpOperand &use) {
      return phase[use.getOwner()] == Phase::out;
    });
  };

  // 3a. With out-phase: a scan op that out ops read (a delta factor's U =
  //     W S + U0), with the scan ops it reads in turn, is redone in the out
  //     phase (copies before its first out reader) where that chain reads
  //     nothing but the entering state, row loads and prep values, and is
  //     short: the prep values then cross to it from the workspace the
  //     scan reads them from too, and nothing chunk-sized crosses from the
  //     scan (the entering states alone, as fla's h).
  if (outPhase) {
    constexpr size_t kLongestChain = 4;
    SmallVector<Operation *> ops =
        llvm::map_to_vector(body, [](Operation &op) { return &op; });
    for (Operation *op : ops) {
      Operation *first = op->getNumResults() == 1 && phase[op] == Phase::scan
                             ? firstOutReader(op)
                             : nullptr;
      if (!first)
        continue;
      // The chain, in block order; no decay_state (it reads a prep value's
      // last row only, which is all the workspace may hold of it).
      llvm::SetVector<Operation *> chain;
      SmallVector<Operation *> work = {op};
      bool redo = true;
      while (!work.empty() && redo) {
        Operation *x = work.pop_back_val();
        if (!chain.insert(x))
          continue;
        redo = chain.size() <= kLongestChain && !isa<ChunkDecayStateOp>(x) &&
               !isa<ChunkYieldOp, ChunkOutputOp>(x);
        for (Value operand : x->getOperands())
          if (Operation *def = operand.getDefiningOp();
              def && phase[def] == Phase::scan)
            work.push_back(def);
      }
      if (!redo)
        continue;
      SmallVector<Operation *> ordered(chain.begin(), chain.end());
      llvm::sort(ordered, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      IRMapping copies;
      OpBuilder builder(first);
      for (Operation *x : ordered)
        phase[builder.clone(*x, copies)] = Phase::out;
      readInOut(op, copies.lookup(op->getResult(0)));
    }
  }

  // 3b. With out-phase: row loads, and cumulative sums of row loads, that
  //     out ops read from the prep are redone in the out phase (a copy
  //     before the first out op that reads it): loading a chunk's rows and
  //     summing its gates again costs less than a tile a chunk through
  //     memory (fla's chunk_fwd_o loads q, k and g itself too). So are
  //     negations of such values (a DPLR strength's -α).
  if (outPhase) {
    std::function<bool(Operation *)> recomputable = [&](Operation *op) {
      if (isa<ChunkRowsOp>(op))
        return true;
      if (!isa<ChunkCumsumOp, ChunkNegOp>(op))
        return false;
      Operation *def = op->getOperand(0).getDefiningOp();
      return def && recomputable(def);
    };
    llvm::DenseMap<Operation *, Operation *> copyOf;
    std::function<Value(Operation *, Operation *)> outCopy =
        [&](Operation *op, Operation *before) -> Value {
      if (Operation *copy = copyOf.lookup(op))
        return copy->getResult(0);
      OpBuilder builder(before);
      Operation *copy = builder.clone(*op);
      phase[copy] = Phase::out;
      copyOf[op] = copy;
      for (OpOperand &operand : copy->getOpOperands())
        if (Operation *def = operand.get().getDefiningOp();
            def && phase[def] == Phase::prep)
          operand.set(outCopy(def, copy));
      return copy->getResult(0);
    };
    SmallVector<Operation *> ops =
        llvm::map_to_vector(body, [](Operation &op) { return &op; });
    for (Operation *op : ops) {
      if (phase[op] != Phase::prep || !recomputable(op))
        continue;
      if (Operation *first = firstOutReader(op))
        readInOut(op, outCopy(op, first));
    }
  }

  // 4. The phases, and what crosses.
  Builder b(chunked.getContext());
  for (Operation &op : body) {
    op.setAttr("rec.phase", b.getStringAttr(phaseName(phase[&op])));
    op.removeAttr("rec.to_scan");
    op.removeAttr("rec.to_out");
    op.removeAttr("rec.scan_to_out");
    if (op.getNumResults() == 0)
      continue;
    bool readByOut = llvm::any_of(op.getUsers(), [&](Operation *user) {
      return phase[user] == Phase::out;
    });
    if (readByOut && phase[&op] == Phase::prep)
      op.setAttr("rec.to_out", b.getStringAttr("all"));
    if (readByOut && phase[&op] == Phase::scan)
      op.setAttr("rec.scan_to_out", b.getUnitAttr());
    if (phase[&op] != Phase::prep)
      continue;
    Value result = op.getResult(0);
    bool crosses = false, lastRowOnly = true;
    for (OpOperand &use : result.getUses()) {
      if (phase[use.getOwner()] != Phase::scan)
        continue;
      crosses = true;
      auto decay = dyn_cast<ChunkDecayStateOp>(use.getOwner());
      lastRowOnly &= decay && use.get() == decay.getDecay() &&
                     decay.getState() != result;
    }
    if (crosses)
      op.setAttr("rec.to_scan",
                 b.getStringAttr(lastRowOnly ? "last_row" : "all"));
  }
  chunked->setAttr("rec.split_scan", b.getUnitAttr());
  if (outPhase)
    chunked->setAttr("rec.out_phase", b.getUnitAttr());
  else
    chunked->removeAttr("rec.out_phase");
}

struct RecSplitScanPass
    : rkc::rec::impl::RecSplitScanBase<RecSplitScanPass> {
  using RecSplitScanBase::RecSplitScanBase;
  void runOnOperation() override {
    getOperation().walk(
        [&](ChunkedOp chunked) { split(chunked, keepRows, outPhase); });
  }
};

} // namespace
