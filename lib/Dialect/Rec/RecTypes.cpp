//===- RecTypes.cpp - Types of the rec dialect ----------------------------===//

#include "Rec/RecTypes.h"
#include "Rec/RecDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace rkc::rec;

#include "Rec/RecEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "Rec/RecTypes.cpp.inc"

void RecDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "Rec/RecTypes.cpp.inc"
      >();
}

namespace rkc::rec {

Side getSide(Type type) {
  if (isa<KeyType>(type))
    return Side::Key;
  if (isa<ValueType>(type))
    return Side::Value;
  assert(isa<ScalarType>(type) && "not a rec type");
  return Side::Scalar;
}

Rate getRate(Type type) {
  return TypeSwitch<Type, Rate>(type)
      .Case<KeyType, ValueType, ScalarType>([](auto t) { return t.getRate(); })
      .Default([](Type) -> Rate { llvm_unreachable("not a rec type"); });
}

Type getType(MLIRContext *context, Side side, Rate rate) {
  switch (side) {
  case Side::Key:
    return KeyType::get(context, rate);
  case Side::Value:
    return ValueType::get(context, rate);
  case Side::Scalar:
    return ScalarType::get(context, rate);
  }
  llvm_unreachable("unknown side");
}

int64_t TileExtents::axis(Axis axis, size_t slots) const {
  switch (axis) {
  case Axis::chunk: // a chunk axis keeping `slots` of the sub-steps
    return chunk * static_cast<int64_t>(slots ? slots : substeps);
  case Axis::key:
    return dk;
  case Axis::value:
    return dv;
  case Axis::one:
    return 1;
  }
  llvm_unreachable("unknown axis");
}

int64_t TileExtents::rows(TileType type) const {
  return axis(type.getRows(), type.getRowSlots().size());
}

int64_t TileExtents::cols(TileType type) const {
  return axis(type.getCols(), type.getColSlots().size());
}

StringRef describeSide(Side side) {
  switch (side) {
  case Side::Key:
    return "key-side vector (dk)";
  case Side::Value:
    return "value-side vector (dv)";
  case Side::Scalar:
    return "scalar";
  }
  llvm_unreachable("unknown side");
}

} // namespace rkc::rec

//===----------------------------------------------------------------------===//
// TileType: !rec.tile<chunk[1], value>
//===----------------------------------------------------------------------===//

static ParseResult parseTileAxis(AsmParser &parser, Axis &axis,
                                 SmallVectorImpl<int64_t> &slots) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<Axis> parsed = symbolizeAxis(keyword);
  if (!parsed)
    return parser.emitError(loc, "expected a tile axis (chunk, key, value, "
                                 "one), got '")
           << keyword << "'";
  axis = *parsed;
  if (succeeded(parser.parseOptionalLSquare())) {
    if (axis != Axis::chunk)
      return parser.emitError(loc, "only a chunk axis keeps sub-step slots");
    if (parser.parseCommaSeparatedList([&]() {
          int64_t slot;
          if (parser.parseInteger(slot))
            return failure();
          slots.push_back(slot);
          return success();
        }) ||
        parser.parseRSquare())
      return failure();
  }
  return success();
}

Type TileType::parse(AsmParser &parser) {
  Axis rows, cols;
  SmallVector<int64_t> rowSlots, colSlots;
  if (parser.parseLess() || parseTileAxis(parser, rows, rowSlots) ||
      parser.parseComma() || parseTileAxis(parser, cols, colSlots) ||
      parser.parseGreater())
    return {};
  return TileType::get(parser.getContext(), rows, rowSlots, cols, colSlots);
}

static void printTileAxis(AsmPrinter &printer, Axis axis,
                          ArrayRef<int64_t> slots) {
  printer << stringifyAxis(axis);
  if (!slots.empty()) {
    printer << "[";
    llvm::interleaveComma(slots, printer);
    printer << "]";
  }
}

void TileType::print(AsmPrinter &printer) const {
  printer << "<";
  printTileAxis(printer, getRows(), getRowSlots());
  printer << ", ";
  printTileAxis(printer, getCols(), getColSlots());
  printer << ">";
}
