//===- RecOps.cpp - Operations of the rec dialect -------------------------===//
//
// Verifiers of the spec level. Every diagnostic names the offending value
// and says what was expected; test/Dialect/Rec/invalid.mlir has one test per
// diagnostic.
//
//===----------------------------------------------------------------------===//

#include "Rec/RecOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace rkc::rec;

//===----------------------------------------------------------------------===//
// RecurrenceOp
//===----------------------------------------------------------------------===//

Operation *RecurrenceOp::getTransition() {
  Block &body = getBody().front();
  return body.empty() ? nullptr : &body.back();
}

StepOp RecurrenceOp::getStep() {
  for (Operation &op : getBody().front())
    if (auto step = dyn_cast<StepOp>(op))
      return step;
  return {};
}

SmallVector<InputOp> RecurrenceOp::getInputs() {
  return llvm::to_vector(getBody().front().getOps<InputOp>());
}

std::optional<int64_t> RecurrenceOp::getParam(StringRef name) {
  if (!getParams())
    return std::nullopt;
  if (auto value = dyn_cast_or_null<IntegerAttr>(getParams()->get(name)))
    return value.getInt();
  return std::nullopt;
}

LogicalResult RecurrenceOp::verify() {
  if (std::optional<APFloat> scaleAttr = getScale()) {
    double scale = scaleAttr->convertToDouble();
    if (!std::isfinite(scale) || scale <= 0)
      return emitOpError() << "scale must be a positive finite number, got "
                           << scale;
  }
  if (std::optional<DictionaryAttr> params = getParams()) {
    for (NamedAttribute param : *params) {
      auto value = dyn_cast<IntegerAttr>(param.getValue());
      if (!value)
        return emitOpError() << "parameter '" << param.getName().getValue()
                             << "' must be an integer, got "
                             << param.getValue();
      if (value.getInt() < 1)
        return emitOpError() << "parameter '" << param.getName().getValue()
                             << "' must be a positive integer, got "
                             << value.getInt();
    }
  }
  return success();
}

LogicalResult RecurrenceOp::verifyRegions() {
  Block &body = getBody().front();
  llvm::StringMap<InputOp> inputsByName;
  for (InputOp input : body.getOps<InputOp>()) {
    auto [it, inserted] = inputsByName.try_emplace(input.getName(), input);
    if (!inserted) {
      InFlightDiagnostic diag = input.emitOpError()
                                << "input \"" << input.getName()
                                << "\" is declared twice";
      diag.attachNote(it->second.getLoc()) << "first declared here";
      return diag;
    }
  }

  // The transition: the spec's rec.step, or what a lowering made of it.
  SmallVector<Operation *> steps;
  for (Operation &op : body)
    if (isa<StepOp, InterleavedOp, DecodeOp, ChunkedOp>(op))
      steps.push_back(&op);
  if (steps.empty())
    return emitOpError() << "has no 'rec.step': a recurrence must say how "
                            "the state is updated";
  if (steps.size() > 1)
    return steps[1]->emitOpError()
           << "is a second step of @" << getSymName()
           << ": a recurrence has exactly one 'rec.step'";
  if (&body.back() != steps.front())
    return body.back().emitOpError()
           << "follows the '" << steps.front()->getName()
           << "': the step must be the last operation of the recurrence";
  return success();
}

//===----------------------------------------------------------------------===//
// InputOp
//===----------------------------------------------------------------------===//

void InputOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), getName());
}

LogicalResult InputOp::verify() {
  StringRef name = getName();
  if (name.empty())
    return emitOpError() << "input name must not be empty";
  for (StringRef reserved : {"o", "final_state", "initial_state", "cu_seqlens"})
    if (name == reserved)
      return emitOpError() << "input name \"" << name
                           << "\" is reserved (o, final_state, initial_state "
                              "and cu_seqlens are implicit)";
  return success();
}

//===----------------------------------------------------------------------===//
// StepOp and RepeatOp
//===----------------------------------------------------------------------===//

/// The operands of `op` that change once per sub-step must be used inside a
/// rec.repeat, where a sub-step index exists.
static LogicalResult verifySubstepUses(Operation *op) {
  bool inRepeat = isa<RepeatOp>(op->getParentOp());
  for (OpOperand &operand : op->getOpOperands()) {
    Type type = operand.get().getType();
    if (!isa<KeyType, ValueType, ScalarType>(type))
      continue;
    if (getRate(type) == Rate::substep && !inRepeat)
      return op->emitOpError()
             << "operand #" << operand.getOperandNumber()
             << " changes once per sub-step (" << type
             << ") but is used outside a 'rec.repeat'";
  }
  return success();
}

LogicalResult StepOp::verifyRegions() {
  Block &body = getBody().front();
  ReadOp read;
  bool updates = false;
  for (Operation &op : body) {
    if (auto r = dyn_cast<ReadOp>(op)) {
      if (read)
        return r.emitOpError() << "is a second read of the step: a step "
                                  "produces one output per token";
      read = r;
    } else {
      updates = true;
    }
    if (failed(verifySubstepUses(&op)))
      return failure();
    if (auto repeat = dyn_cast<RepeatOp>(op))
      for (Operation &inner : repeat.getBody().front())
        if (failed(verifySubstepUses(&inner)))
          return failure();
  }
  if (!updates)
    return emitOpError() << "never updates the state: add a factor "
                            "(rec.decay, rec.erase, rec.delta, rec.rank1, "
                            "rec.dplr) or a rec.write";
  if (!read)
    return emitOpError() << "has no 'rec.read': a recurrence must produce an "
                            "output";
  if (read.getOperation() != &body.back())
    return read.emitOpError() << "must be the last operation of the step: "
                                 "the read comes after the update";
  return success();
}

LogicalResult RepeatOp::verify() {
  auto recurrence = (*this)->getParentOfType<RecurrenceOp>();
  if (recurrence && !recurrence.getParam(getCount())) {
    std::string known;
    if (std::optional<DictionaryAttr> params = recurrence.getParams())
      for (NamedAttribute p : *params)
        known += (known.empty() ? "" : ", ") + p.getName().str();
    return emitOpError() << "count \"" << getCount()
                         << "\" is not a parameter of @"
                         << recurrence.getSymName() << " (parameters: "
                         << (known.empty() ? "none" : known) << ")";
  }
  if (getBody().front().empty())
    return emitOpError() << "has no factors to repeat";
  return success();
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// The result type of combining `lhs` and `rhs` elementwise: scalars
/// broadcast over vectors; a key-side and a value-side vector do not combine.
static LogicalResult inferCombined(std::optional<Location> location,
                                   StringRef opName, Type lhs, Type rhs,
                                   bool toScalar,
                                   SmallVectorImpl<Type> &results) {
  for (Type t : {lhs, rhs})
    if (!isa<KeyType, ValueType, ScalarType>(t))
      return emitOptionalError(location, "'", opName,
                               "' op expects rec values, got ", t);
  Side l = getSide(lhs), r = getSide(rhs);
  if (l != Side::Scalar && r != Side::Scalar && l != r)
    return emitOptionalError(location, "'", opName,
                             "' op dimension mismatch: cannot combine a ",
                             describeSide(l), " with a ", describeSide(r));
  Side side = toScalar ? Side::Scalar : (l == Side::Scalar ? r : l);
  Rate rate = std::max(getRate(lhs), getRate(rhs));
  results.push_back(getType(lhs.getContext(), side, rate));
  return success();
}

#define REC_INFER_BINARY(OP, NAME, TO_SCALAR)                                  \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> location, ValueRange operands,    \
      DictionaryAttr, OpaqueProperties, RegionRange,                           \
      SmallVectorImpl<Type> &results) {                                        \
    return inferCombined(location, NAME, operands[0].getType(),                \
                         operands[1].getType(), TO_SCALAR, results);           \
  }

REC_INFER_BINARY(AddOp, "rec.add", false)
REC_INFER_BINARY(SubOp, "rec.sub", false)
REC_INFER_BINARY(MulOp, "rec.mul", false)
REC_INFER_BINARY(DotOp, "rec.dot", true)
REC_INFER_BINARY(ProjectOutOp, "rec.project_out", false)
#undef REC_INFER_BINARY

LogicalResult L2NormOp::verify() {
  double eps = getEps().convertToDouble();
  if (!std::isfinite(eps) || eps < 0)
    return emitOpError() << "eps must be finite and non-negative, got " << eps;
  return success();
}

void ConstantOp::build(OpBuilder &builder, OperationState &state,
                       double value) {
  build(builder, state, builder.getF64FloatAttr(value));
}

LogicalResult ConstantOp::verify() {
  if (!std::isfinite(getValue().convertToDouble()))
    return emitOpError() << "value must be finite";
  return success();
}

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *context,
                                           std::optional<Location>,
                                           ValueRange, DictionaryAttr,
                                           OpaqueProperties, RegionRange,
                                           SmallVectorImpl<Type> &results) {
  results.push_back(ScalarType::get(context, Rate::head));
  return success();
}

//===----------------------------------------------------------------------===//
// Interleaved sub-steps
//===----------------------------------------------------------------------===//

LogicalResult InterleavedOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.empty())
    return emitOpError() << "has no sub-steps";
  SubstepOp read;
  for (Operation &op : body) {
    auto substep = dyn_cast<SubstepOp>(op);
    if (!substep)
      return op.emitOpError() << "is not a 'rec.substep'";
    if (substep.getRead() == ReadKind::query) {
      if (read)
        return substep.emitOpError() << "is a second reading sub-step";
      read = substep;
    }
  }
  if (!read || read.getOperation() != &body.back())
    return emitOpError() << "must end with its reading sub-step";
  return success();
}

LogicalResult SubstepOp::verify() {
  // The tags say what the operands are; they must agree.
  DecayKind decay = DecayKind::none;
  if (Value g = getGate())
    decay = isa<ScalarType>(g.getType()) ? DecayKind::scalar
                                         : DecayKind::channel;
  if (decay != getDecay())
    return emitOpError() << "is tagged " << stringifyDecayKind(getDecay())
                         << " but its gate makes it "
                         << stringifyDecayKind(decay);
  Rank1Kind rank1 = !getEraseAlong()                  ? Rank1Kind::none
                    : getEraseAlong() == getReadAlong() ? Rank1Kind::symmetric
                                                        : Rank1Kind::general;
  if (rank1 != getRank1())
    return emitOpError() << "is tagged " << stringifyRank1Kind(getRank1())
                         << " but its rank-1 vectors make it "
                         << stringifyRank1Kind(rank1);
  if ((getKey() != nullptr) != (getWrite() == WriteKind::kv))
    return emitOpError() << "is tagged " << stringifyWriteKind(getWrite())
                         << " but " << (getKey() ? "has" : "has no")
                         << " write operands";
  if ((getQuery() != nullptr) != (getRead() == ReadKind::query))
    return emitOpError() << "is tagged " << stringifyReadKind(getRead())
                         << " but " << (getQuery() ? "has" : "has no")
                         << " query";
  if (getUndecayedRead() && rank1 == Rank1Kind::none)
    return emitOpError() << "has undecayed_read but no rank-1 factor";
  if (static_cast<int64_t>(getIndex()) < 0)
    return emitOpError() << "index must be non-negative";
  return success();
}

//===----------------------------------------------------------------------===//
// Chunked form
//===----------------------------------------------------------------------===//

void ChunkedOp::build(OpBuilder &builder, OperationState &state,
                      int64_t chunkSize, int64_t substepsPerToken) {
  state.addAttribute(getChunkSizeAttrName(state.name),
                     builder.getI64IntegerAttr(chunkSize));
  state.addAttribute(getSubstepsPerTokenAttrName(state.name),
                     builder.getI64IntegerAttr(substepsPerToken));
  state.addRegion()->emplaceBlock();
  Region *body = state.addRegion();
  Block &block = body->emplaceBlock();
  block.addArgument(TileType::get(builder.getContext(), Axis::key,
                                  Axis::value),
                    state.location);
}

LogicalResult ChunkedOp::verifyRegions() {
  if (static_cast<int64_t>(getChunkSize()) < 1)
    return emitOpError() << "chunk_size must be positive, got "
                         << static_cast<int64_t>(getChunkSize());
  int64_t substeps = 0;
  for (Operation &op : getSubsteps().front()) {
    if (!isa<SubstepOp>(op))
      return op.emitOpError() << "is not a 'rec.substep'";
    ++substeps;
  }
  if (substeps != getSubstepsPerToken())
    return emitOpError() << "substeps_per_token is " << getSubstepsPerToken()
                         << " but the table has " << substeps
                         << " sub-steps";
  Block &body = getBody().front();
  if (body.getNumArguments() != 1 ||
      body.getArgument(0).getType() !=
          TileType::get(getContext(), Axis::key, Axis::value))
    return emitOpError() << "body must take the entering state "
                            "!rec.tile<key, value>";
  if (body.empty() || !isa<ChunkYieldOp>(body.back()))
    return emitOpError() << "body must end with 'rec.chunk.yield'";
  return success();
}

LogicalResult ChunkMatmulOp::verify() {
  auto lhs = cast<TileType>(getLhs().getType());
  auto rhs = cast<TileType>(getRhs().getType());
  Axis inner = getTransposeLhs() ? lhs.getRows() : lhs.getCols();
  ArrayRef<int64_t> innerSlots =
      getTransposeLhs() ? lhs.getRowSlots() : lhs.getColSlots();
  if (inner != rhs.getRows() || innerSlots != rhs.getRowSlots())
    return emitOpError() << "contracts " << lhs << " with " << rhs
                         << ": the inner axes differ";
  return success();
}

#define GET_OP_CLASSES
#include "Rec/RecOps.cpp.inc"
