//===- Pipelines.cpp - Named lowering pipelines ---------------------------===//

#include "Rec/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace rkc::rec {

static void addSubstepPasses(OpPassManager &pm,
                             const LoweringOptions &options) {
  pm.addPass(createRecNormalize());
  RecInterleaveOptions interleave;
  interleave.params.assign(options.params.begin(), options.params.end());
  pm.addPass(createRecInterleave(interleave));
}

void buildLowerChunkedPipeline(OpPassManager &pm,
                               const LoweringOptions &options) {
  addSubstepPasses(pm, options);
  RecChunkOptions chunk;
  chunk.chunkSize = options.chunkSize;
  pm.addPass(createRecChunk(chunk));
  if (options.sinkRowScales)
    pm.addPass(createRecSinkRowScales());
  if (options.factorProducts)
    pm.addPass(createRecFactorProducts());
  if (options.stateTransfer)
    pm.addPass(createRecStateTransfer());
  if (options.splitScan) {
    RecSplitScanOptions split;
    split.keepRows = options.keepRows;
    split.outPhase = options.outPhase;
    pm.addPass(createRecSplitScan(split));
  }
}

void buildLowerDecodePipeline(OpPassManager &pm,
                              const LoweringOptions &options) {
  addSubstepPasses(pm, options);
  pm.addPass(createRecDecode());
}

namespace {
struct PipelineOptions : PassPipelineOptions<PipelineOptions> {
  Option<int64_t> chunkSize{*this, "chunk-size",
                            llvm::cl::desc("Tokens per chunk"),
                            llvm::cl::init(64)};
  ListOption<std::string> params{
      *this, "params", llvm::cl::desc("Parameter overrides, name=value")};
  Option<bool> stateTransfer{
      *this, "state-transfer",
      llvm::cl::desc("Write chunks as affine maps of their entering state"),
      llvm::cl::init(false)};
  Option<bool> splitScan{
      *this, "split-scan",
      llvm::cl::desc("Mark the token-parallel (prep) and sequential (scan) "
                     "parts of chunks"),
      llvm::cl::init(false)};
  Option<bool> keepRows{
      *this, "keep-rows",
      llvm::cl::desc("With split-scan: rows the scan reads cross from the "
                     "prep"),
      llvm::cl::init(false)};
  Option<bool> factorProducts{
      *this, "factor-products",
      llvm::cl::desc("Products that share their left operand as one "
                     "product of a sum (--rec-factor-products)"),
      llvm::cl::init(false)};
  Option<bool> sinkRowScales{
      *this, "sink-row-scales",
      llvm::cl::desc("Row scalings moved off products' left operands "
                     "(--rec-sink-row-scales)"),
      llvm::cl::init(false)};
  Option<bool> outPhase{
      *this, "out-phase",
      llvm::cl::desc("With split-scan: what only the output needs runs after "
                     "the scan, every chunk at once"),
      llvm::cl::init(false)};

  LoweringOptions lowering() const {
    LoweringOptions options;
    options.chunkSize = chunkSize;
    options.params.assign(params.begin(), params.end());
    options.stateTransfer = stateTransfer;
    options.splitScan = splitScan;
    options.keepRows = keepRows;
    options.outPhase = outPhase;
    options.factorProducts = factorProducts;
    options.sinkRowScales = sinkRowScales;
    return options;
  }
};
} // namespace

void registerRecPassesAndPipelines() {
  registerRecPasses();
  PassPipelineRegistration<PipelineOptions>(
      "rec-lower-chunked",
      "Normalize, interleave into sub-steps and chunk (WY/UT)",
      [](OpPassManager &pm, const PipelineOptions &options) {
        buildLowerChunkedPipeline(pm, options.lowering());
      });
  PassPipelineRegistration<PipelineOptions>(
      "rec-lower-decode",
      "Normalize, interleave into sub-steps and lower to a decode update",
      [](OpPassManager &pm, const PipelineOptions &options) {
        buildLowerDecodePipeline(pm, options.lowering());
      });
}

} // namespace rkc::rec
