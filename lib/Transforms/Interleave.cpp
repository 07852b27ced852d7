//===- Interleave.cpp - Factors to generalized DPLR sub-steps -------------===//
//
// Walks a step's factors in acting order and groups them into sub-steps of
// the one form S ← (Diag(exp g) + a bᵀ) S + k vᵀ:
//   - a decay waits for the next rank-1 factor, whose sub-step then decays
//     first (and whose read vector carries the decay);
//   - a write joins the sub-step before it (it acts after that transition);
//   - a repeat is unrolled with its count.
//
//===----------------------------------------------------------------------===//

#include "Rec/Passes.h"

#include "mlir/IR/Builders.h"

namespace rkc::rec {
#define GEN_PASS_DEF_RECINTERLEAVE
#include "Rec/Passes.h.inc"
} // namespace rkc::rec

using namespace mlir;
using namespace rkc::rec;

namespace {

/// One sub-step while it is being assembled.
struct PendingSubstep {
  Value gate, eraseAlong, readAlong, strength;
  Value key, value, writeStrength, query;
  bool undecayedRead = false;
  int64_t index = 0;
};

class Interleaver {
public:
  Interleaver(RecurrenceOp recurrence, OpBuilder &prologue)
      : recurrence(recurrence), prologue(prologue) {}

  LogicalResult run(StepOp step, ArrayRef<std::pair<std::string, int64_t>>
                                     overrides) {
    this->overrides = overrides;
    if (failed(visit(step.getBody().front(), 0)))
      return failure();
    if (pendingGate) // a decay that no factor followed
      emitNew().gate = pendingGate;
    return success();
  }

  std::vector<PendingSubstep> substeps;

private:
  Value constant(double value) {
    auto &slot = constants[value];
    if (!slot)
      slot = ConstantOp::create(prologue, recurrence.getLoc(), value);
    return slot;
  }
  Value orOne(Value strength) { return strength ? strength : constant(1.0); }

  PendingSubstep &emitNew() {
    substeps.emplace_back();
    substeps.back().index = index;
    return substeps.back();
  }
  /// A new sub-step that takes the decay waiting for it, if any.
  PendingSubstep &emitWithPendingDecay() {
    PendingSubstep &s = emitNew();
    s.gate = pendingGate;
    pendingGate = nullptr;
    return s;
  }
  void flushPendingDecay() {
    if (pendingGate)
      emitWithPendingDecay();
  }

  std::optional<int64_t> countOf(RepeatOp repeat) {
    for (auto &[name, value] : overrides)
      if (name == repeat.getCount())
        return value;
    return recurrence.getParam(repeat.getCount());
  }

  LogicalResult visit(Block &block, int64_t j) {
    for (Operation &op : block) {
      index = j;
      if (auto decay = dyn_cast<DecayOp>(op)) {
        flushPendingDecay();
        pendingGate = decay.getGate();
      } else if (auto erase = dyn_cast<EraseOp>(op)) {
        PendingSubstep &s = emitWithPendingDecay();
        s.eraseAlong = s.readAlong = erase.getAddress();
        s.strength = orOne(erase.getScale());
      } else if (auto rank1 = dyn_cast<Rank1Op>(op)) {
        PendingSubstep &s = emitWithPendingDecay();
        s.eraseAlong = rank1.getWriteAlong();
        s.readAlong = rank1.getReadAlong();
        s.strength = orOne(rank1.getScale());
      } else if (auto delta = dyn_cast<DeltaOp>(op)) {
        PendingSubstep &s = emitWithPendingDecay();
        s.eraseAlong = s.readAlong = s.key = delta.getKey();
        s.strength = s.writeStrength = orOne(delta.getScale());
        s.value = delta.getValue();
      } else if (auto dplr = dyn_cast<DPLROp>(op)) {
        // (Diag(exp g) + a bᵀ): a = -(-1)·a, read at b before the decay.
        flushPendingDecay();
        PendingSubstep &s = emitNew();
        s.gate = dplr.getGate();
        s.eraseAlong = dplr.getWriteAlong();
        s.readAlong = dplr.getReadAlong();
        s.strength = constant(-1.0);
        s.undecayedRead = true;
      } else if (auto write = dyn_cast<WriteOp>(op)) {
        bool joinsPrevious = !pendingGate && !substeps.empty() &&
                             !substeps.back().key &&
                             substeps.back().index == j;
        PendingSubstep &s =
            joinsPrevious ? substeps.back() : emitWithPendingDecay();
        s.key = write.getKey();
        s.value = write.getValue();
        s.writeStrength = orOne(write.getScale());
      } else if (auto repeat = dyn_cast<RepeatOp>(op)) {
        std::optional<int64_t> count = countOf(repeat);
        if (!count || *count < 1)
          return repeat.emitOpError()
                 << "count \"" << repeat.getCount()
                 << "\" has no positive value to unroll with";
        for (int64_t iteration = 0; iteration < *count; ++iteration)
          if (failed(visit(repeat.getBody().front(), iteration)))
            return failure();
      } else if (auto read = dyn_cast<ReadOp>(op)) {
        flushPendingDecay();
        substeps.back().query = read.getQuery();
      }
    }
    return success();
  }

  RecurrenceOp recurrence;
  OpBuilder &prologue;
  ArrayRef<std::pair<std::string, int64_t>> overrides;
  std::map<double, Value> constants;
  Value pendingGate;
  int64_t index = 0;
};

void buildSubstep(OpBuilder &builder, Location loc, const PendingSubstep &s) {
  DecayKind decay = !s.gate ? DecayKind::none
                    : isa<ScalarType>(s.gate.getType()) ? DecayKind::scalar
                                                        : DecayKind::channel;
  Rank1Kind rank1 = !s.eraseAlong                 ? Rank1Kind::none
                    : s.eraseAlong == s.readAlong ? Rank1Kind::symmetric
                                                  : Rank1Kind::general;
  auto op = SubstepOp::create(
      builder, loc, decay, rank1, s.key ? WriteKind::kv : WriteKind::none,
      s.query ? ReadKind::query : ReadKind::none, s.undecayedRead, s.index,
      s.gate, s.eraseAlong, s.readAlong, s.strength, s.key, s.value,
      s.writeStrength, s.query);
  (void)op;
}

struct RecInterleavePass
    : rkc::rec::impl::RecInterleaveBase<RecInterleavePass> {
  using RecInterleaveBase::RecInterleaveBase;

  void runOnOperation() override {
    std::vector<std::pair<std::string, int64_t>> overrides;
    for (const std::string &p : params) {
      size_t eq = p.find('=');
      long long value;
      if (eq == std::string::npos ||
          StringRef(p).substr(eq + 1).getAsInteger(10, value)) {
        getOperation().emitError()
            << "rec-interleave: params expects name=integer, got '" << p
            << "'";
        return signalPassFailure();
      }
      overrides.emplace_back(p.substr(0, eq), value);
    }

    WalkResult result = getOperation().walk([&](RecurrenceOp recurrence) {
      StepOp step = recurrence.getStep();
      if (!step)
        return WalkResult::advance();
      for (auto &[name, value] : overrides)
        if (!recurrence.getParam(name)) {
          recurrence.emitError() << "rec-interleave: @"
                                 << recurrence.getSymName()
                                 << " has no parameter '" << name << "'";
          return WalkResult::interrupt();
        }
      OpBuilder builder(step);
      Interleaver interleaver(recurrence, builder);
      if (failed(interleaver.run(step, overrides)))
        return WalkResult::interrupt();
      // Record the parameters the table was unrolled with.
      if (!overrides.empty()) {
        NamedAttrList params(*recurrence.getParams());
        for (auto &[name, value] : overrides)
          params.set(name, builder.getI64IntegerAttr(value));
        recurrence.setParamsAttr(params.getDictionary(&getContext()));
      }
      auto interleaved = InterleavedOp::create(builder, step.getLoc());
      Block &body = interleaved.getBody().emplaceBlock();
      builder.setInsertionPointToStart(&body);
      for (const PendingSubstep &s : interleaver.substeps)
        buildSubstep(builder, step.getLoc(), s);
      step.erase();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
