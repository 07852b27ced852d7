//===- Passes.h - Passes of the rec dialect ---------------------*- C++ -*-===//

#ifndef RKC_DIALECT_REC_PASSES_H
#define RKC_DIALECT_REC_PASSES_H

#include "Rec/RecOps.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace rkc::rec {

#define GEN_PASS_DECL
#include "Rec/Passes.h.inc"

/// Options of the named lowering pipelines.
struct LoweringOptions {
  int64_t chunkSize = 64;
  std::vector<std::string> params; // name=value
  /// Chunks as affine maps of their entering state (--rec-state-transfer).
  bool stateTransfer = false;
  /// Mark the token-parallel and sequential parts (--rec-split-scan).
  bool splitScan = false;
  /// With splitScan: rows the scan reads cross from the prep (keep-rows).
  bool keepRows = false;
  /// With splitScan: what only the output needs runs after the scan, every
  /// chunk at once (out-phase).
  bool outPhase = false;
  /// A X + A Y as A (X + Y) in chunk bodies (--rec-factor-products): fewer
  /// products, one bf16 rounding of X + Y where bf16 products round X and Y.
  bool factorProducts = false;
  /// Row scalings moved off products' left operands (--rec-sink-row-scales).
  bool sinkRowScales = false;
};

/// normalize, interleave, chunk.
void buildLowerChunkedPipeline(mlir::OpPassManager &pm,
                               const LoweringOptions &options);
/// normalize, interleave, decode.
void buildLowerDecodePipeline(mlir::OpPassManager &pm,
                              const LoweringOptions &options);

#define GEN_PASS_REGISTRATION
#include "Rec/Passes.h.inc"

/// Registers the passes and the pipelines `rec-lower-chunked` and
/// `rec-lower-decode`.
void registerRecPassesAndPipelines();

} // namespace rkc::rec

#endif // RKC_DIALECT_REC_PASSES_H
