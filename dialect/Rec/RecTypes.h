//===- RecTypes.h - Types of the rec dialect --------------------*- C++ -*-===//

#ifndef RKC_DIALECT_REC_RECTYPES_H
#define RKC_DIALECT_REC_RECTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"

#include "Rec/RecEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "Rec/RecTypes.h.inc"

namespace rkc::rec {

/// Which dimension a spec value spans.
enum class Side { Scalar, Key, Value };

/// The side of a rec type (asserts on other types).
Side getSide(mlir::Type type);
/// The rate of a rec type (asserts on other types).
Rate getRate(mlir::Type type);
/// The rec type of `side` at `rate`.
mlir::Type getType(mlir::MLIRContext *context, Side side, Rate rate);
/// "key-side vector (dk)", "value-side vector (dv)", "scalar".
llvm::StringRef describeSide(Side side);

/// The sizes a tile's axes take for a chunk of `chunk` tokens of `substeps`
/// sub-steps, keys of `dk` and value columns of `dv` (a block's value tile
/// on the GPU, all of dv on the CPU).
struct TileExtents {
  int64_t chunk, substeps, dk, dv;

  int64_t axis(Axis axis, size_t slots) const;
  int64_t rows(TileType type) const;
  int64_t cols(TileType type) const;
  int64_t elements(TileType type) const { return rows(type) * cols(type); }
};

} // namespace rkc::rec

#endif // RKC_DIALECT_REC_RECTYPES_H
