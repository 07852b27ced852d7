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

  auto steps = llvm::to_vector(body.getOps<StepOp>());
  if (steps.empty())
    return emitOpError() << "has no 'rec.step': a recurrence must say how "
                            "the state is updated";
  if (steps.size() > 1)
    return steps[1].emitOpError()
           << "is a second step of @" << getSymName()
           << ": a recurrence has exactly one 'rec.step'";
  if (&body.back() != steps.front().getOperation())
    return body.back().emitOpError()
           << "follows the 'rec.step': the step must be the last operation "
              "of the recurrence";
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

#define GET_OP_CLASSES
#include "Rec/RecOps.cpp.inc"
