//===- LoweringTest.cpp - chunked and decode backends == interpreter ------===//
//
// Every example spec, lowered by the pass pipelines and run by the chunk
// executor (--rec-lower-chunked) and the sub-step executor
// (--rec-lower-decode), against the interpreter in float64, over lengths
// and chunk sizes that do and do not divide each other.
//
// MATH.md's pitfalls, and the inputs here that catch each:
//  1. inclusive/exclusive cumulative decay: per-channel gates (kda, eda, gdn2,
//     qed, dplr) on every case; g = 0 would hide it;
//  2. strict UT system vs inclusive outputs: every T > 1 case (reading at
//     the own row of a chunk is the diagonal);
//  3. GDN-2's (I - k aᵀ) transposed: random a, never parallel to k;
//  4. EDA's erase sub-step entering the UT system: eda on every case;
//  5. DeltaProduct's single decay a token: deltaproduct n = 2 and 3;
//  6. exp(G_t)·exp(-G_s) overflow: StrongDecayGatesDownToMinus20 over
//     chunks of 64 tokens (G reaches -1280);
//  7. neutral padding of a short last chunk: T in {1, 5, 37, 100, 300} with
//     C in {16, 32, 64}, and varlen sequences shorter than a chunk.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "Interpreter/Backends.h"
#include "Interpreter/ChunkExecutor.h"
#include "Interpreter/RandomInputs.h"
#include "Rec/OutPhase.h"
#include "Rec/Passes.h"
#include "Target/CudaEmitter.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>

using namespace rkc;
using namespace rkc::test;

namespace {

constexpr double kBound = 1e-10;

const char *const kAllSpecs[] = {
    "linear_attention", "deltanet", "gdn",   "kda",  "gdn2",        "qed",
    "eda",              "deltaproduct", "comba", "dplr", "kda_prologue"};

/// Loads a spec and keeps its context alive.
struct LoadedSpec {
  mlir::MLIRContext context;
  SpecFile file;
  explicit LoadedSpec(const std::string &name) {
    context.loadDialect<rec::RecDialect>();
    EXPECT_TRUE(loadSpecFile(context, examplePath(name), "", file)) << name;
  }
  rec::RecurrenceOp op() { return file.recurrence; }
};

TensorMap run(rec::RecurrenceOp spec, const std::string &backend,
              int64_t chunkSize, const TensorMap &inputs,
              const RunOptions &options = {}, bool stateTransfer = false,
              bool splitScan = false, int64_t segments = 1,
              bool keepRows = true, bool outPhase = false,
              bool factorProducts = false, bool sinkRowScales = false) {
  BackendOptions b;
  b.backend = backend;
  b.chunkSize = chunkSize;
  b.stateTransfer = stateTransfer;
  b.splitScan = splitScan;
  b.segments = segments;
  b.keepRows = keepRows;
  b.outPhase = outPhase;
  b.factorProducts = factorProducts;
  b.sinkRowScales = sinkRowScales;
  TensorMap outputs;
  std::string error;
  EXPECT_TRUE(runBackend(spec, b, inputs, options, outputs, error))
      << backend << ": " << error;
  return outputs;
}

/// Realistic inputs in float64; `gateScale` stretches log-space gates from
/// [-5, 0] (4 gives gates down to -20 a step).
TensorMap inputsFor(rec::RecurrenceOp spec, RandomShape shape,
                    double gateScale = 1.0, const RunOptions &options = {}) {
  shape.dtype = DType::F64;
  SpecPlan plan = SpecPlan::build(spec);
  TensorMap inputs = randomInputs(plan, shape, options);
  std::vector<InputRole> roles = classifyInputs(plan);
  for (size_t i = 0; i < plan.inputs.size(); ++i)
    if (roles[i] == InputRole::Gate)
      for (double &g : inputs[plan.inputs[i].name].values)
        g *= gateScale;
  return inputs;
}

void expectBackendsAgree(rec::RecurrenceOp spec, const TensorMap &inputs,
                         const std::vector<int64_t> &chunkSizes,
                         const std::string &what,
                         const RunOptions &options = {}) {
  TensorMap want = run(spec, "interp", 0, inputs, options);
  for (int64_t C : chunkSizes)
    expectClose(run(spec, "chunked", C, inputs, options), want, kBound,
                what + " chunked C=" + std::to_string(C));
  expectClose(run(spec, "decode", 0, inputs, options), want, kBound,
              what + " decode");
}

struct GridCase {
  const char *spec;
  int64_t dk, dv;
};

void PrintTo(const GridCase &c, std::ostream *os) {
  *os << c.spec << " dk=" << c.dk << " dv=" << c.dv;
}

class BackendsAgree : public ::testing::TestWithParam<GridCase> {};

TEST_P(BackendsAgree, OverLengthsAndChunkSizes) {
  GridCase c = GetParam();
  LoadedSpec spec(c.spec);
  for (int64_t T : {1, 5, 37, 64, 100, 300}) {
    RandomShape shape;
    shape.batch = 2, shape.length = T, shape.keyHeads = 3, shape.dk = c.dk,
    shape.dv = c.dv, shape.seed = static_cast<uint64_t>(T);
    TensorMap inputs = inputsFor(spec.op(), shape);
    expectBackendsAgree(spec.op(), inputs, {1, 2, 3, 16, 32, 64},
                        std::string(c.spec) + " T=" + std::to_string(T));
  }
}

TEST_P(BackendsAgree, StrongDecayGatesDownToMinus20) {
  GridCase c = GetParam();
  LoadedSpec spec(c.spec);
  RandomShape shape;
  shape.batch = 2, shape.length = 100, shape.keyHeads = 3, shape.dk = c.dk,
  shape.dv = c.dv, shape.seed = 5;
  expectBackendsAgree(spec.op(), inputsFor(spec.op(), shape, 4.0), {16, 64},
                      std::string(c.spec) + " strong decay");
}

TEST_P(BackendsAgree, VarlenAndGroupedValueHeads) {
  GridCase c = GetParam();
  LoadedSpec spec(c.spec);
  RandomShape shape;
  shape.seqLens = {3, 70, 1, 17, 0, 33};
  shape.batch = 1, shape.length = 124, shape.keyHeads = 3,
  shape.valueHeads = 6, shape.dk = c.dk, shape.dv = c.dv, shape.seed = 9;
  expectBackendsAgree(spec.op(), inputsFor(spec.op(), shape), {1, 3, 16},
                      std::string(c.spec) + " varlen GVA");
}

/// A lowered form of the chunked backend (the transfer form, the split
/// form or both) against the interpreter: lengths 1, 37 and 100 (the last
/// with gates down to -20) at chunks of 1, 3 and 16 tokens, and varlen GVA.
void expectFormAgrees(const GridCase &c, bool stateTransfer, bool splitScan,
                      uint64_t seed, const std::string &form,
                      bool keepRows = true, bool outPhase = false,
                      bool factorProducts = false, bool sinkRowScales = false) {
  LoadedSpec spec(c.spec);
  for (int64_t T : {1, 37, 100}) {
    RandomShape shape;
    shape.batch = 2, shape.length = T, shape.keyHeads = 3, shape.dk = c.dk,
    shape.dv = c.dv, shape.seed = static_cast<uint64_t>(T) + seed;
    TensorMap inputs = inputsFor(spec.op(), shape, T == 100 ? 4.0 : 1.0);
    TensorMap want = run(spec.op(), "interp", 0, inputs);
    for (int64_t C : {1, 3, 16})
      expectClose(run(spec.op(), "chunked", C, inputs, {}, stateTransfer,
                      splitScan, 1, keepRows, outPhase, factorProducts,
                      sinkRowScales),
                  want, kBound,
                  std::string(c.spec) + " T=" + std::to_string(T) + " " + form +
                      " C=" + std::to_string(C));
  }
  RandomShape varlen;
  varlen.seqLens = {3, 70, 1, 17};
  varlen.batch = 1, varlen.keyHeads = 3, varlen.valueHeads = 6,
  varlen.dk = c.dk, varlen.dv = c.dv, varlen.seed = seed + 3;
  TensorMap inputs = inputsFor(spec.op(), varlen);
  expectClose(run(spec.op(), "chunked", 16, inputs, {}, stateTransfer,
                  splitScan, 1, keepRows, outPhase, factorProducts,
                  sinkRowScales),
              run(spec.op(), "interp", 0, inputs), kBound,
              std::string(c.spec) + " varlen GVA " + form);
}

// The transfer-operator form (--rec-state-transfer): each chunk as
// S_L = M S₀ + N, O = P S₀ + R, the same numbers.
TEST_P(BackendsAgree, StateTransferForm) {
  expectFormAgrees(GetParam(), true, false, 100, "transfer form");
}

// The split form (--rec-split-scan): the prep ops of every chunk of a
// sequence first, then the scan ops chunk after chunk, with only the values
// marked rec.to_scan handed over (and only the last row of "last_row"
// ones: the executor poisons the others); alone and with the transfer form;
// with the rows the scan reads kept from the prep (the kernels' form) and
// loaded again by the scan (keep-rows off).
TEST_P(BackendsAgree, SplitScanForm) {
  expectFormAgrees(GetParam(), false, true, 200, "split");
  expectFormAgrees(GetParam(), true, true, 300, "split transfer form");
  expectFormAgrees(GetParam(), false, true, 250, "split, rows reloaded",
                   /*keepRows=*/false);
}

// The out phase (--rec-split-scan out-phase): the scan runs only the state
// recursion, keeping each chunk's entering state and the scan values the
// output reads (rec.scan_to_out); then the output ops of every chunk run
// (last chunk first) from those and the prep values marked rec.to_out, and
// from nothing else (the executor refuses an op reading more).
TEST_P(BackendsAgree, OutPhaseForm) {
  expectFormAgrees(GetParam(), false, true, 400, "split, out phase",
                   /*keepRows=*/true, /*outPhase=*/true);
  expectFormAgrees(GetParam(), true, true, 500,
                   "split transfer form, out phase", true, true);
  expectFormAgrees(GetParam(), false, true, 450,
                   "split, rows reloaded, out phase", false, true);
}

// Products that share their left operand as one product of a sum
// (--rec-factor-products): the same numbers in every form.
TEST_P(BackendsAgree, FactoredProducts) {
  expectFormAgrees(GetParam(), false, false, 600, "factored", true, false,
                   /*factorProducts=*/true);
  expectFormAgrees(GetParam(), false, true, 700, "factored, split", true,
                   false, true);
  expectFormAgrees(GetParam(), true, true, 800,
                   "factored, split transfer form", true, false, true);
  expectFormAgrees(GetParam(), false, true, 900, "factored, out phase", true,
                   true, true);
}

// Row scalings moved off products' left operands (--rec-sink-row-scales):
// the same numbers, alone, split (the scan loading q and k itself), and
// with factored products.
TEST_P(BackendsAgree, SunkRowScales) {
  expectFormAgrees(GetParam(), false, false, 1000, "row scales sunk", true,
                   false, false, /*sinkRowScales=*/true);
  expectFormAgrees(GetParam(), false, true, 1100, "row scales sunk, split",
                   /*keepRows=*/false, false, false, true);
  expectFormAgrees(GetParam(), false, true, 1200,
                   "row scales sunk, factored, split", true, false, true, true);
}

// A sequence in segments (intra-sequence or context parallelism): each
// segment composes its chunks' transfer operators from (I, 0) on its own,
// the segments exchange only states, then scan from them. Two, three and
// more segments than chunks; varlen sequences shorter than a segment.
TEST_P(BackendsAgree, SegmentsJoinedByTransferOperators) {
  GridCase c = GetParam();
  LoadedSpec spec(c.spec);
  RandomShape shape;
  shape.batch = 2, shape.length = 100, shape.keyHeads = 3, shape.dk = c.dk,
  shape.dv = c.dv, shape.seed = 400;
  TensorMap inputs = inputsFor(spec.op(), shape, 2.0);
  RunOptions options;
  TensorMap want = run(spec.op(), "interp", 0, inputs);
  for (int64_t segments : {2, 3, 40})
    expectClose(run(spec.op(), "chunked", 8, inputs, options, false, false,
                    segments),
                want, kBound,
                std::string(c.spec) + " " + std::to_string(segments) +
                    " segments");
  RandomShape varlen;
  varlen.seqLens = {3, 70, 1, 17};
  varlen.batch = 1, varlen.keyHeads = 3, varlen.valueHeads = 6,
  varlen.dk = c.dk, varlen.dv = c.dv, varlen.seed = 401;
  TensorMap packed = inputsFor(spec.op(), varlen);
  expectClose(run(spec.op(), "chunked", 4, packed, options, false, false, 3),
              run(spec.op(), "interp", 0, packed), kBound,
              std::string(c.spec) + " varlen GVA in 3 segments");
}

std::vector<GridCase> gridCases() {
  std::vector<GridCase> cases;
  for (const char *spec : kAllSpecs)
    for (auto [dk, dv] : {std::pair{8, 5}, std::pair{5, 8}})
      cases.push_back({spec, dk, dv});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    ExampleSpecs, BackendsAgree, ::testing::ValuesIn(gridCases()),
    [](const ::testing::TestParamInfo<GridCase> &info) {
      return std::string(info.param.spec) + "_dk" +
             std::to_string(info.param.dk) + "_dv" +
             std::to_string(info.param.dv);
    });

TEST(BackendsAgree, DeltaProductWithThreeSubsteps) {
  LoadedSpec spec("deltaproduct");
  RunOptions options;
  options.params = {{"n", 3}};
  RandomShape shape;
  shape.batch = 2, shape.length = 41, shape.keyHeads = 3, shape.dk = 6,
  shape.dv = 7, shape.seed = 1;
  expectBackendsAgree(spec.op(), inputsFor(spec.op(), shape, 1.0, options),
                      {1, 2, 3, 16, 64}, "deltaproduct n=3", options);
}

// A DPLR factor (b reads before its decay) and a general factor whose read
// vector carries its own decay (b = e^h ⊙ y), in one token: rec-chunk then
// keeps the read rows b with the exclusive sum for both slots, the form
// every example spec but DPLR has left (test/Transforms/chunk.mlir, MIXED).
TEST(BackendsAgree, MixedReads) {
  mlir::MLIRContext context;
  context.loadDialect<rec::RecDialect>();
  SpecFile file;
  ASSERT_TRUE(loadSpecFile(context,
                           std::string(RKC_SOURCE_DIR) +
                               "/test/Transforms/Inputs/mixed-reads.mlir",
                           "", file));
  for (int64_t T : {1, 5, 37, 100}) {
    RandomShape shape;
    shape.batch = 2, shape.length = T, shape.keyHeads = 3, shape.dk = 6,
    shape.dv = 7, shape.seed = static_cast<uint64_t>(T) + 11;
    expectBackendsAgree(file.recurrence, inputsFor(file.recurrence, shape),
                        {1, 3, 16, 32}, "mixed reads T=" + std::to_string(T));
  }
}

TEST(BackendsAgree, ChunkSizeMustBePositive) {
  LoadedSpec spec("kda");
  RandomShape shape;
  BackendOptions b;
  b.backend = "chunked";
  b.chunkSize = 0;
  TensorMap outputs;
  std::string error;
  EXPECT_FALSE(runBackend(spec.op(), b, inputsFor(spec.op(), shape), {},
                          outputs, error));
  EXPECT_THAT(error, ::testing::HasSubstr("positive number of tokens"));
}


// The split executor trusts nothing it was not handed: a scan that reads a
// value the prep did not mark is an error, and a value marked "last_row"
// whose other rows the scan reads comes out as NaN (so the tests above
// would see a wrong rec.to_scan).
TEST(SplitScan, TheExecutorChecksWhatCrosses) {
  LoadedSpec spec("kda");
  RandomShape shape;
  shape.batch = 1, shape.length = 40, shape.keyHeads = 2, shape.dk = 16,
  shape.dv = 8, shape.seed = 11;
  TensorMap inputs = inputsFor(spec.op(), shape);

  auto lowered = [&](mlir::OwningOpRef<mlir::ModuleOp> &module) {
    module = mlir::ModuleOp::create(spec.op().getLoc());
    module->getBody()->push_back(spec.op()->clone());
    mlir::PassManager pm(spec.op().getContext());
    rec::LoweringOptions options;
    options.chunkSize = 16;
    options.splitScan = true;
    rec::buildLowerChunkedPipeline(pm, options);
    EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
    rec::RecurrenceOp recurrence =
        *module->getOps<rec::RecurrenceOp>().begin();
    return std::pair<rec::RecurrenceOp, rec::ChunkedOp>(
        recurrence, llvm::cast<rec::ChunkedOp>(recurrence.getTransition()));
  };
  // The W of the WY form (a prep product the scan multiplies by S0).
  auto findCrossingProduct = [](rec::ChunkedOp chunked) {
    for (mlir::Operation &op : chunked.getBody().front())
      if (llvm::isa<rec::ChunkMatmulOp>(op) && op.hasAttr("rec.to_scan"))
        return &op;
    return static_cast<mlir::Operation *>(nullptr);
  };

  {
    mlir::OwningOpRef<mlir::ModuleOp> module;
    auto [recurrence, chunked] = lowered(module);
    mlir::Operation *w = findCrossingProduct(chunked);
    ASSERT_NE(w, nullptr);
    w->removeAttr("rec.to_scan");
    TensorMap outputs;
    std::string error;
    EXPECT_FALSE(runChunked(recurrence, inputs, {}, outputs, error));
    EXPECT_THAT(error, ::testing::HasSubstr(
                           "the scan phase of a split chunk reads a value it "
                           "neither computes nor receives"));
  }
  {
    // A product with the entering state marked prep: the prep phase has no
    // state to read.
    mlir::OwningOpRef<mlir::ModuleOp> module;
    auto [recurrence, chunked] = lowered(module);
    mlir::Operation *scanProduct = nullptr;
    for (mlir::Operation &op : chunked.getBody().front())
      if (llvm::isa<rec::ChunkMatmulOp>(op) &&
          llvm::is_contained(op.getOperands(),
                             chunked.getBody().front().getArgument(0)))
        scanProduct = &op;
    ASSERT_NE(scanProduct, nullptr);
    scanProduct->setAttr(
        "rec.phase", mlir::StringAttr::get(spec.op().getContext(), "prep"));
    TensorMap outputs;
    std::string error;
    EXPECT_FALSE(runChunked(recurrence, inputs, {}, outputs, error));
    EXPECT_THAT(error, ::testing::HasSubstr(
                           "the prep phase of a split chunk reads a value it "
                           "neither computes nor receives"));
  }
  {
    mlir::OwningOpRef<mlir::ModuleOp> module;
    auto [recurrence, chunked] = lowered(module);
    mlir::Operation *w = findCrossingProduct(chunked);
    ASSERT_NE(w, nullptr);
    w->setAttr("rec.to_scan",
               mlir::StringAttr::get(spec.op().getContext(), "last_row"));
    TensorMap outputs;
    std::string error;
    ASSERT_TRUE(runChunked(recurrence, inputs, {}, outputs, error)) << error;
    EXPECT_TRUE(std::isnan(outputs.at("o").values[0]));
  }
}

} // namespace

namespace {

// The split kernels for 16-bit outputs keep in bf16 what the scan only
// multiplies or adds (rec-schedule's rec.half); the float64 executor rounds
// exactly those values where they cross, which measures that rounding apart
// from every other of the GPU. Measured on realistic 16-bit inputs: up to
// 2.4e-3 of relative error (about bf16's half spacing, 2^-9; deltanet's the
// largest; linear attention's 2e-4, as what it keeps is mostly its input
// rows, exact in bf16), no larger at T = 4000 than at 200: under MATH.md's
// 5e-3 for 16-bit outputs, with TF32 products still to come on the GPU. It
// is not nothing either: the rounding happens.
/// A rounding study's inputs: realistic 16-bit inputs (as the kernels for
/// 16-bit outputs get them: the rows that cross are then exact in bf16, and
/// what is measured is the rounding of computed values), T = 1000, d = 64;
/// and the interpreter's float64 outputs on them.
void bf16Study(LoadedSpec &spec, uint64_t seed, TensorMap &inputs,
               TensorMap &want) {
  RandomShape shape;
  shape.batch = 1, shape.length = 1000, shape.keyHeads = 1, shape.dk = 64,
  shape.dv = 64, shape.seed = seed;
  shape.dtype = DType::BF16;
  inputs = randomInputs(SpecPlan::build(spec.op()), shape, {});
  want = run(spec.op(), "interp", 0, inputs);
}

TEST(HalfWorkspace, WhatTheRoundingCosts) {
  for (const char *name : kAllSpecs) {
    LoadedSpec spec(name);
    TensorMap inputs, want;
    bf16Study(spec, 500, inputs, want);
    BackendOptions b;
    b.backend = "chunked", b.chunkSize = 16, b.splitScan = true,
    b.halfWorkspace = true;
    TensorMap got;
    std::string error;
    ASSERT_TRUE(runBackend(spec.op(), b, inputs, {}, got, error))
        << name << ": " << error;
    double largest = 0;
    for (const char *out : {"o", "final_state"}) {
      double err = relativeError(got.at(out), want.at(out));
      EXPECT_LT(err, 3e-3) << name << " " << out;
      largest = std::max(largest, err);
    }
    EXPECT_GT(largest, 1e-4) << name << ": nothing was rounded";
    // Without the rounding the same split form agrees at float64.
    b.halfWorkspace = false;
    got.clear();
    ASSERT_TRUE(runBackend(spec.op(), b, inputs, {}, got, error)) << error;
    expectClose(got, want, kBound, std::string(name) + " float64 workspace");
  }
}

// bf16 tensor cores (m16n8k16, float32 sums) instead of TF32 would round
// both operands of every Gram and product to bf16, the state included where
// a product reads it. The float64 executor rounds exactly those operands,
// alone and with the 16-bit workspace, on realistic 16-bit inputs at the
// kernels' chunk of 32; the errors measured bound what that lever may cost
// before any kernel is written (MATH.md's bound for 16-bit outputs: 5e-3).
TEST(Bf16Products, WhatTheRoundingCosts) {
  double worst = 0, worstBoth = 0, worstFactored = 0;
  for (const char *name : kAllSpecs) {
    LoadedSpec spec(name);
    TensorMap inputs, want;
    bf16Study(spec, 501, inputs, want);
    for (int form : {0, 1, 2}) {
      const bool half = form >= 1, factored = form == 2;
      BackendOptions b;
      b.backend = "chunked", b.chunkSize = 32, b.splitScan = true,
      b.halfWorkspace = half, b.bf16Products = true,
      b.factorProducts = factored;
      TensorMap got;
      std::string error;
      ASSERT_TRUE(runBackend(spec.op(), b, inputs, {}, got, error))
          << name << ": " << error;
      double largest = 0;
      for (const char *out : {"o", "final_state"})
        largest = std::max(largest, relativeError(got.at(out), want.at(out)));
      std::printf("bf16 products%s%s: %-16s %.2e\n",
                  half ? " + 16-bit workspace" : "",
                  factored ? ", factored" : "", name, largest);
      EXPECT_GT(largest, 1e-4) << name << ": nothing was rounded";
      double &w = factored ? worstFactored : half ? worstBoth : worst;
      w = std::max(w, largest);
    }
  }
  std::printf("bf16 products: worst %.2e; with the 16-bit workspace %.2e; "
              "factored %.2e\n",
              worst, worstBoth, worstFactored);
  // Measured: 3.2e-3 alone (deltanet), 3.2e-3 with the 16-bit workspace;
  // factored (--rec-factor-products: a product of U' + V rounds that sum
  // once, where U' and V were rounded apart, V exactly) 3.6e-3 (deltanet).
  // Output rounding and float32 sums come on top on the GPU.
  EXPECT_LT(worst, 4e-3);
  EXPECT_LT(worstBoth, 4e-3);
  EXPECT_LT(worstFactored, 4e-3);
}

TEST(HalfWorkspace, OnlyTheSplitChunkedForm) {
  LoadedSpec spec("kda");
  RandomShape shape;
  shape.batch = 1, shape.length = 10, shape.keyHeads = 1, shape.dk = 64,
  shape.dv = 64;
  TensorMap inputs = inputsFor(spec.op(), shape), got;
  BackendOptions b;
  b.backend = "chunked", b.chunkSize = 16, b.halfWorkspace = true;
  std::string error;
  EXPECT_FALSE(runBackend(spec.op(), b, inputs, {}, got, error));
  EXPECT_THAT(error, ::testing::HasSubstr("16-bit workspace needs the chunked "
                                          "backend's split form"));
}

// rec-schedule's shared-memory plans, checked from the attributes alone: no
// two tiles share a float while both live. A tile lives from its op to its
// last reader in the kernel's order (in the prep, the key-side ops, then the
// value-side ones, which run again for every value tile: a key-side tile
// they read lives to the end); an elementwise op may write its result over
// the operand it reads last, element for element (a sum either addend; neg,
// scale_rows, decay_rows and decay_to_end their first operand); a product
// stored straight into the workspace (rec.to_workspace) has no place; an
// exclusive sum viewed in an inclusive one (rec.shifted_view) is that tile,
// a row before it, which then lives as long as either; a Gram computed with
// the next op (rec.gram_with_next) reads its operands while that one
// writes; a tile with padded rows (rec.smem_stride) takes its rows at that
// stride. The GPU's check.py finds a wrong plan by its outputs; this finds
// it without a GPU.

/// The overlaps of a plan of `ops` (their places `attr`, value tiles
/// `extents.dv` columns wide; ops from `loopBegin` on run again for every
/// value tile; `reads` says which ops' operands count as read), one line
/// each.
std::vector<std::string>
planOverlaps(llvm::ArrayRef<mlir::Operation *> ops, size_t loopBegin,
             llvm::function_ref<bool(mlir::Operation *)> reads,
             llvm::StringRef attr, const rec::TileExtents &extents) {
  llvm::DenseMap<mlir::Value, size_t> def, last;
  for (auto [i, op] : llvm::enumerate(ops))
    for (mlir::Value r : op->getResults())
      def[r] = last[r] = i;
  for (auto [i, op] : llvm::enumerate(ops)) {
    if (!reads(op))
      continue;
    // A paired Gram's step is the next op's too: its result is written then.
    if (op->hasAttr("rec.gram_with_next"))
      for (mlir::Value r : op->getResults())
        last[r] = std::max(last[r], i + 1);
    for (mlir::Value x : op->getOperands()) {
      if (!def.count(x))
        continue;
      size_t use = i >= loopBegin && def[x] < loopBegin ? ops.size() - 1 : i;
      if (op->hasAttr("rec.gram_with_next"))
        use = std::max(use, i + 1);
      last[x] = std::max(last[x], use);
    }
  }
  struct Tile {
    mlir::Value value;
    int64_t begin, end;
  };
  std::vector<std::string> found;
  llvm::SmallVector<Tile> tiles;
  for (mlir::Operation *op : ops) {
    if (op->getNumResults() != 1 || op->hasAttr("rec.to_workspace"))
      continue;
    mlir::Value r = op->getResult(0);
    auto type = llvm::cast<rec::TileType>(r.getType());
    auto at = op->getAttrOfType<mlir::IntegerAttr>(attr);
    if (!at) {
      found.push_back("an op without " + attr.str());
      continue;
    }
    if (op->hasAttr("rec.shifted_view")) {
      // The inclusive sum lives as long as its exclusive view.
      auto excl = llvm::cast<rec::ChunkCumsumOp>(op);
      for (mlir::Operation *other : ops) {
        auto incl = llvm::dyn_cast<rec::ChunkCumsumOp>(other);
        if (!incl || !incl->hasAttr("rec.zero_row_before") ||
            incl.getGate() != excl.getGate())
          continue;
        if (at.getInt() !=
            incl->getAttrOfType<mlir::IntegerAttr>(attr).getInt() -
                extents.cols(type))
          found.push_back("a shifted view not a row before its sum");
        last[incl.getResult()] = std::max(last[incl.getResult()], last[r]);
      }
      continue;
    }
    int64_t before =
        op->hasAttr("rec.zero_row_before") ? extents.cols(type) : 0;
    auto stride = op->getAttrOfType<mlir::IntegerAttr>("rec.smem_stride");
    int64_t size =
        stride ? extents.rows(type) * stride.getInt() : extents.elements(type);
    tiles.push_back({r, at.getInt() - before, at.getInt() + size});
  }
  auto mapped = [](mlir::Operation *op) {
    if (llvm::isa<rec::ChunkAddOp>(op))
      return llvm::to_vector(op->getOperands());
    if (llvm::isa<rec::ChunkNegOp, rec::ChunkScaleRowsOp, rec::ChunkDecayRowsOp,
                  rec::ChunkDecayToEndOp>(op))
      return llvm::SmallVector<mlir::Value>{op->getOperand(0)};
    return llvm::SmallVector<mlir::Value>{};
  };
  for (size_t a = 0; a < tiles.size(); ++a)
    for (size_t b = a + 1; b < tiles.size(); ++b) {
      const Tile &x = tiles[a], &y = tiles[b];
      if (x.end <= y.begin || y.end <= x.begin)
        continue;
      if (last[x.value] < def[y.value] || last[y.value] < def[x.value])
        continue;
      // In place: y's op reads x last, element for element, at x's offset.
      mlir::Operation *writer = y.value.getDefiningOp();
      if (reads(writer) && last[x.value] == def[y.value] &&
          x.begin == y.begin && x.end == y.end &&
          llvm::is_contained(mapped(writer), x.value))
        continue;
      found.push_back(
          "floats [" + std::to_string(x.begin) + ", " + std::to_string(x.end) +
          ") and [" + std::to_string(y.begin) + ", " + std::to_string(y.end) +
          ") of two live tiles (ops " + std::to_string(def[x.value]) + ".." +
          std::to_string(last[x.value]) + " and " +
          std::to_string(def[y.value]) + ".." + std::to_string(last[y.value]) +
          ")");
    }
  return found;
}

/// Every example spec lowered with chunks of 16, 32 and 64, split or not,
/// with pair-grams 0 and 1 where split, and split with an out phase,
/// scheduled at dk = dv = 128; `check`
/// gets each chunked op whose plan fits (what the pipeline refuses is not
/// a plan). Returns how many it got.
int forEachPlan(llvm::function_ref<void(const std::string &, rec::ChunkedOp,
                                        mlir::DictionaryAttr)>
                    check) {
  int plans = 0;
  for (const char *name : kAllSpecs)
    for (int64_t chunkSize : {16, 32, 64})
      // One kernel; split; split, paired; split with an out phase; the
      // same with the out kernel's value loop.
      for (int64_t variant : {0, 1, 2, 3, 4}) {
        LoadedSpec spec(name);
        mlir::MLIRContext *context = spec.op().getContext();
        mlir::OwningOpRef<mlir::ModuleOp> module =
            mlir::ModuleOp::create(spec.op().getLoc());
        module->getBody()->push_back(spec.op()->clone());
        mlir::PassManager pm(context);
        rec::LoweringOptions lowering;
        lowering.chunkSize = chunkSize;
        lowering.splitScan = variant > 0;
        lowering.outPhase = variant >= 3;
        rec::buildLowerChunkedPipeline(pm, lowering);
        rec::RecScheduleOptions schedule;
        schedule.pairGrams = variant == 2;
        schedule.outValueLoop = variant == 4;
        pm.addPass(rec::createRecSchedule(schedule));
        {
          // A chunk too large for shared memory is refused: not a plan.
          // Any other error is the test's failure.
          std::string errors;
          mlir::ScopedDiagnosticHandler collect(context,
                                                [&](mlir::Diagnostic &d) {
                                                  errors += d.str() + "\n";
                                                  return mlir::success();
                                                });
          if (mlir::failed(pm.run(*module))) {
            EXPECT_THAT(errors, ::testing::HasSubstr("bytes of shared memory"))
                << name << " chunk " << chunkSize << " variant " << variant;
            continue;
          }
        }
        rec::ChunkedOp chunked;
        module->walk([&](rec::ChunkedOp op) { chunked = op; });
        EXPECT_TRUE(chunked);
        if (!chunked)
          continue;
        auto dict =
            chunked->getAttrOfType<mlir::DictionaryAttr>("rec.schedule");
        EXPECT_TRUE(dict);
        if (!dict)
          continue;
        check(std::string(name) + " chunk " + std::to_string(chunkSize) +
                  (variant == 0   ? " one kernel"
                   : variant == 1 ? " split"
                   : variant == 2 ? " split, pair-grams"
                                  : " split, out phase"),
              chunked, dict);
        ++plans;
      }
  return plans;
}

int64_t scheduleValue(mlir::DictionaryAttr dict, llvm::StringRef key) {
  auto attr = dict.getAs<mlir::IntegerAttr>(key);
  return attr ? attr.getInt() : 0;
}

llvm::StringRef phaseOf(mlir::Operation *op) {
  auto phase = op->getAttrOfType<mlir::StringAttr>("rec.phase");
  return phase ? phase.getValue() : "";
}

// The prep kernel's plan (rec.prep_smem_offset).
TEST(SharedMemoryPlan, PrepNoTwoLiveTilesShareAFloat) {
  int prepPlans = 0, pairedPlans = 0;
  int plans = forEachPlan([&](const std::string &what, rec::ChunkedOp chunked,
                              mlir::DictionaryAttr dict) {
    if (!scheduleValue(dict, "prep_shared_bytes"))
      return; // no prep kernel
    ++prepPlans;
    pairedPlans += llvm::any_of(chunked.getBody().front(), [](auto &op) {
      return op.hasAttr("rec.gram_with_next");
    });
    int64_t cols = scheduleValue(dict, "prep_value_tile");
    rec::TileExtents extents{chunked.getChunkSize(),
                             chunked.getSubstepsPerToken(),
                             scheduleValue(dict, "dk"),
                             cols ? cols : scheduleValue(dict, "value_tile")};
    // The key side, then the value side, each by rec.prep_order where the
    // body keeps another order.
    llvm::SmallVector<mlir::Operation *> key, value;
    for (mlir::Operation &op : chunked.getBody().front())
      if (phaseOf(&op) == "prep" || phaseOf(&op) == "both")
        (op.hasAttr("rec.per_value_tile") ? value : key).push_back(&op);
    auto byPrepOrder = [](mlir::Operation *a, mlir::Operation *b) {
      auto at = [](mlir::Operation *op) {
        auto o = op->getAttrOfType<mlir::IntegerAttr>("rec.prep_order");
        return o ? o.getInt() : int64_t(0);
      };
      return at(a) < at(b);
    };
    llvm::stable_sort(key, byPrepOrder);
    llvm::stable_sort(value, byPrepOrder);
    llvm::SmallVector<mlir::Operation *> ops(key);
    ops.append(value.begin(), value.end());
    for (const std::string &overlap : planOverlaps(
             ops, key.size(), [](mlir::Operation *) { return true; },
             "rec.prep_smem_offset", extents))
      ADD_FAILURE() << what << ", prep: " << overlap;
  });
  EXPECT_GT(plans, 100);
  EXPECT_GT(prepPlans, 60);
  // (Every spec with two Grams pairs them at every chunk that fits.)
  EXPECT_GT(pairedPlans, 20);
}

// The scan's plan, or the one kernel's (rec.smem_offset, after the state
// slice): with the scan staging what crosses, its own ops; without, the prep
// values it reads where their ops stand, too (read by nothing there).
TEST(SharedMemoryPlan, ScanNoTwoLiveTilesShareAFloat) {
  int plans = forEachPlan([&](const std::string &what, rec::ChunkedOp chunked,
                              mlir::DictionaryAttr dict) {
    rec::TileExtents extents{
        chunked.getChunkSize(), chunked.getSubstepsPerToken(),
        scheduleValue(dict, "dk"), scheduleValue(dict, "value_tile")};
    bool split = chunked->hasAttr("rec.split_scan");
    bool staged = false;
    for (mlir::Operation &op : chunked.getBody().front())
      staged |= op.hasAttr("rec.stage_offset");
    auto runs = [&](mlir::Operation *op) {
      return !split || (phaseOf(op) != "prep" && phaseOf(op) != "out");
    };
    llvm::SmallVector<mlir::Operation *> ops;
    for (mlir::Operation &op : chunked.getBody().front())
      if (runs(&op) ||
          (phaseOf(&op) == "prep" && !staged && op.hasAttr("rec.to_scan")))
        ops.push_back(&op);
    for (const std::string &overlap :
         planOverlaps(ops, ops.size(), runs, "rec.smem_offset", extents))
      ADD_FAILURE() << what << ", " << (split ? "scan" : "kernel") << ": "
                    << overlap;
  });
  EXPECT_GT(plans, 100);
}

/// Emits `spec` split at `chunkSize` (with an out phase where `outPhase`);
/// false with `error` set where the pipeline (a chunk too large for shared
/// memory, say) or the emitter refuses. `mark` may change the lowered body
/// first.
static bool emitSplit(LoadedSpec &spec, int64_t chunkSize, bool outPhase,
                      CudaKernels &kernels, std::string &error,
                      llvm::function_ref<void(rec::ChunkedOp)> mark = nullptr,
                      bool valueLoop = false) {
  mlir::MLIRContext *context = spec.op().getContext();
  auto lower = [&](bool chunked) -> mlir::OwningOpRef<mlir::ModuleOp> {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::ModuleOp::create(spec.op().getLoc());
    module->getBody()->push_back(spec.op()->clone());
    mlir::PassManager pm(context);
    rec::LoweringOptions lowering;
    lowering.chunkSize = chunkSize;
    lowering.splitScan = true;
    lowering.outPhase = outPhase;
    if (chunked)
      rec::buildLowerChunkedPipeline(pm, lowering);
    else
      rec::buildLowerDecodePipeline(pm, lowering);
    rec::RecScheduleOptions schedule;
    schedule.outValueLoop = valueLoop;
    pm.addPass(rec::createRecSchedule(schedule));
    mlir::ScopedDiagnosticHandler collect(context, [&](mlir::Diagnostic &d) {
      error += d.str() + "\n";
      return mlir::success();
    });
    if (mlir::failed(pm.run(*module)))
      return nullptr;
    return module;
  };
  mlir::OwningOpRef<mlir::ModuleOp> chunked = lower(true),
                                    decode = lower(false);
  if (!chunked || !decode)
    return false;
  auto spec0 = *chunked->getOps<rec::RecurrenceOp>().begin();
  if (mark)
    mark(mlir::cast<rec::ChunkedOp>(spec0.getTransition()));
  return emitCudaKernels(spec0, *decode->getOps<rec::RecurrenceOp>().begin(),
                         kernels, error);
}

/// Emits `name` with an out phase (chunk 32); false with `error` set where
/// the emitter refuses. `mark` may change the lowered body first.
static bool
emitWithOutPhase(const std::string &name, CudaKernels &kernels,
                 std::string &error,
                 llvm::function_ref<void(rec::ChunkedOp)> mark = nullptr,
                 bool valueLoop = false) {
  LoadedSpec spec(name);
  return emitSplit(spec, 32, /*outPhase=*/true, kernels, error, mark,
                   valueLoop);
}

/// The text of the generated device function `void NAME(const Params &p)`,
/// up to the next such function (or the end); empty where there is none.
static std::string deviceFunction(const std::string &cu,
                                  const std::string &name) {
  size_t begin = cu.find("void " + name + "(const Params &p)");
  if (begin == std::string::npos)
    return "";
  size_t end = cu.find("__device__ __forceinline__ void ", begin);
  return cu.substr(begin, end == std::string::npos ? end : end - begin);
}

// The scan of the kernel for 16-bit outputs starts its staging buffers
// (`smem + (TensorCores ? AT : STAGE_AT)`) after the state's bf16 shadow and
// every tile the generated scan names, each at its type's rows by its
// columns plus 8 (the most a scan tile's rows are padded), read back from
// the generated text; the launcher asks for AT floats and two buffers, and
// its launch bound for two blocks an SM where those fit.
TEST(SharedMemoryPlan, ScanStagesAfterEveryTileItNames) {
  const std::regex tileDecl(
      R"((tile[0-9]+) = [^;]*smem \+ ([0-9]+)[^;]*; // (!rec\.tile<[a-z]+, [a-z]+>))");
  const std::regex stagesAt(
      R"(smem \+ \(TensorCores \? ([0-9]+) : STAGE_AT\))");
  const std::regex constant(R"(\b([A-Z_]+) = ([0-9]+)\b)");
  const std::regex blocks(
      R"(#ifndef RKC_PREFILL_TC_BLOCKS\n#if [^\n]*\n#define RKC_PREFILL_TC_BLOCKS ([0-9]+))");
  int checked = 0;
  for (const char *name : kAllSpecs)
    for (int64_t chunkSize : {16, 32, 64})
      for (bool outPhase : {false, true}) {
        LoadedSpec spec(name);
        CudaKernels kernels;
        std::string error, what = std::string(name) + " chunk " +
                                  std::to_string(chunkSize) +
                                  (outPhase ? " out phase" : "");
        if (!emitSplit(spec, chunkSize, outPhase, kernels, error)) {
          // A chunk too large for shared memory is not a plan to check.
          EXPECT_THAT(error, ::testing::HasSubstr("bytes of shared memory"))
              << what;
          continue;
        }
        std::string scan = deviceFunction(kernels.device, "prefill");
        std::smatch at;
        if (!std::regex_search(scan, at, stagesAt))
          continue; // unstaged, or nothing to leave out
        int64_t stageAt = std::stoll(at[1]);
        // The kernels' constants (DK, BV, SLD, C and M: tokens and
        // sub-steps a chunk, STAGE_HALF_BYTES), from their declarations.
        std::map<std::string, int64_t> constants;
        std::istringstream lines(kernels.device);
        for (std::string line; std::getline(lines, line);)
          if (line.find("constexpr int ") != std::string::npos)
            for (auto it =
                     std::sregex_iterator(line.begin(), line.end(), constant);
                 it != std::sregex_iterator(); ++it)
              constants.emplace((*it)[1], std::stoll((*it)[2]));
        ASSERT_EQ(constants["C"], chunkSize) << what;
        // The shadow: DK rows of SLD bf16 elements.
        EXPECT_GE(stageAt * 2, constants["DK"] * constants["SLD"]) << what;
        rec::TileExtents extents{constants["C"], constants["M"],
                                 constants["DK"], constants["BV"]};
        for (auto it = std::sregex_iterator(scan.begin(), scan.end(), tileDecl);
             it != std::sregex_iterator(); ++it) {
          auto tile = mlir::dyn_cast_or_null<rec::TileType>(
              mlir::parseType((*it)[3].str(), spec.op().getContext()));
          ASSERT_TRUE(tile) << what << ": " << (*it)[3];
          int64_t end = std::stoll((*it)[2]) +
                        extents.rows(tile) * (extents.cols(tile) + 8);
          EXPECT_LE(end, stageAt) << what << ": " << (*it)[1];
        }
        EXPECT_EQ(stageAt % 32, 0) << what;
        EXPECT_EQ(kernels.prefillTensorCoreSharedBytes,
                  stageAt * 4 + 2 * constants["STAGE_HALF_BYTES"])
            << what;
        std::smatch bound;
        ASSERT_TRUE(std::regex_search(kernels.device, bound, blocks)) << what;
        // Two blocks and their 1 KB each of reserved shared memory in an
        // sm_90 SM's 228 KB.
        EXPECT_EQ(
            std::stoll(bound[1]),
            2 * (kernels.prefillTensorCoreSharedBytes + 1024) <= 228 * 1024 ? 2
                                                                            : 1)
            << what;
        ++checked;
      }
  EXPECT_GT(checked, 20);
}

// A prep value handed to the out phase that the scan's workspace does not
// hold whole (rec.to_out without rec.to_scan "all": rec-split-scan makes
// none for the example specs, so the mark is set by hand here) has no code
// yet: the emitter says so rather than print kernels that leave it out.
TEST(OutPhase, TheEmitterRefusesWhatItCannotHandOver) {
  CudaKernels kernels;
  std::string error;
  EXPECT_FALSE(emitWithOutPhase("kda", kernels, error, [](rec::ChunkedOp c) {
    mlir::Operation &first = c.getBody().front().front();
    first.setAttr("rec.to_out", mlir::StringAttr::get(c.getContext(), "all"));
  }));
  EXPECT_THAT(error, ::testing::HasSubstr("rec.to_out only with rec.to_scan"));
}

// A delta spec (split kernels): the scan stores each chunk's entering state
// (the bf16 shadow where it keeps S in registers) and nothing else; the out
// kernel redoes U = W S + U0 from W and U0, which it reads from the scan's
// workspace, beside the rows it loads itself; the launcher allocates what
// crosses after the workspace and the carry, and runs each segment's out
// kernel right after its scan.
TEST(OutPhase, KdaHandsTheStateAloneToTheOutKernel) {
  CudaKernels kernels;
  std::string error;
  ASSERT_TRUE(emitWithOutPhase("kda", kernels, error)) << error;
  std::string scan = deviceFunction(kernels.device, "prefill"),
              outBody = deviceFunction(kernels.device, "out");
  ASSERT_FALSE(scan.empty());
  ASSERT_FALSE(outBody.empty());
  ASSERT_FALSE(deviceFunction(kernels.device, "prep").empty());
  EXPECT_THAT(scan, ::testing::HasSubstr("the chunk's entering state, which "
                                         "the out kernel starts from"));
  EXPECT_THAT(scan, ::testing::Not(::testing::HasSubstr("for the out kernel")));
  EXPECT_THAT(scan, ::testing::Not(::testing::HasSubstr("OutputRows{")));
  EXPECT_THAT(outBody, ::testing::HasSubstr("// from the prep kernel: "));
  EXPECT_THAT(outBody, ::testing::HasSubstr("rows query"));
  EXPECT_THAT(outBody, ::testing::HasSubstr("rows gate"));
  EXPECT_THAT(kernels.launcher,
              ::testing::HasSubstr("params.out_workspace = (unsigned char "
                                   "*)params.workspace + workspace + "
                                   "rkc_kda_carry_bytes(&params, segments);"));
  size_t loop = kernels.launcher.find("for (int64_t k = 0; k < segments");
  size_t scanLaunch = kernels.launcher.find("&scan, sizeof scan", loop);
  size_t outLaunch = kernels.launcher.find("\"rkc_kda_out_kernel_tc\"");
  size_t fork = kernels.launcher.find("if (fork) {", loop);
  ASSERT_NE(loop, std::string::npos);
  ASSERT_NE(outLaunch, std::string::npos);
  EXPECT_LT(scanLaunch, outLaunch);
  EXPECT_LT(outLaunch, fork);
  // The entering state (128 x 128) alone, in floats.
  EXPECT_EQ(kernels.outWorkspaceBytesPerChunk, 128 * 128 * 4);
}

// The out kernel reads each value it receives (from the scan's workspace or
// the out workspace) before any op touches its tile: a sum the emitter folds
// into the product before it reads its addend where that product stands,
// so a value the sum receives must be there first (outKernelOrder).
TEST(OutPhase, EveryReceivedValueIsLoadedBeforeItsFirstUse) {
  const std::regex load("// from the (prep kernel|scan): (tile[0-9]+)");
  int received = 0;
  for (bool valueLoop : {false, true})
    for (const char *name : kExampleSpecs) {
      CudaKernels kernels;
      std::string error;
      ASSERT_TRUE(emitWithOutPhase(name, kernels, error, nullptr, valueLoop))
          << name << ": " << error;
      std::string out = deviceFunction(kernels.device, "out");
      ASSERT_FALSE(out.empty()) << name;
      llvm::SmallVector<llvm::StringRef> lines;
      llvm::StringRef(out).split(lines, '\n');
      for (auto [k, line] : llvm::enumerate(lines)) {
        std::smatch match;
        std::string text = line.str();
        if (!std::regex_search(text, match, load))
          continue;
        ++received;
        const std::regex use("\\b" + match[2].str() + "\\b");
        for (size_t j = 0; j < k; ++j) {
          std::string before = lines[j].str();
          EXPECT_FALSE(std::regex_search(before, use) &&
                       before.find("float *const") == std::string::npos &&
                       before.find("// %") == std::string::npos)
              << name << ": " << match[2]
              << " is used before it is loaded: " << before;
        }
      }
    }
  EXPECT_GT(received, 20); // every delta spec receives W and U0
}

// With the value loop, GDN's out kernel computes its query side and the
// chunk's own attention once a block (before the loop), then for each value
// tile the state's slice, the value rows and the products that read them;
// the launcher gives it one block a chunk and value head.
TEST(OutPhase, TheValueLoopComputesTheKeySideOnce) {
  CudaKernels kernels;
  std::string error;
  ASSERT_TRUE(emitWithOutPhase("gdn", kernels, error, nullptr,
                               /*valueLoop=*/true))
      << error;
  std::string body = deviceFunction(kernels.device, "out");
  size_t loop = body.find("for (int64_t v0 = 0; v0 < DV; v0 += BV) {");
  ASSERT_NE(loop, std::string::npos);
  EXPECT_EQ(body.find("v0 = blockIdx.y"), std::string::npos);
  for (const char *once :
       {"rows query", "rkc::tile::gram<", "rows erase_along"})
    EXPECT_LT(body.find(once), loop) << once;
  for (const char *each : {"copyTile<BV>(entering + v0", "rows value",
                           "const int64_t oBase", "OutputRows{"})
    EXPECT_GT(body.find(each), loop) << each;
  EXPECT_THAT(kernels.launcher,
              ::testing::HasSubstr("* params.value_heads), 1, "));
}

// Linear attention: the scan carries the state alone and stores each
// chunk's entering state; the out kernel loads it and computes the output;
// the launcher runs one after the other and counts what crosses.
TEST(OutPhase, LinearAttentionGetsAnOutKernel) {
  CudaKernels kernels;
  std::string error;
  ASSERT_TRUE(emitWithOutPhase("linear_attention", kernels, error)) << error;
  const std::string &cu = kernels.device;
  std::string scan = deviceFunction(cu, "prefill"),
              outBody = deviceFunction(cu, "out");
  ASSERT_FALSE(scan.empty());
  ASSERT_FALSE(outBody.empty());
  // The scan: the entering state stored, no output.
  EXPECT_THAT(scan, ::testing::HasSubstr("outWorkspace<TensorCores>(p, seq, "
                                         "t0, hv) + v0;"));
  EXPECT_THAT(scan, ::testing::Not(::testing::HasSubstr("OutputRows{")));
  EXPECT_THAT(scan, ::testing::Not(::testing::HasSubstr("rows query")));
  // The out kernel: the state loaded, the query rows, o stored.
  EXPECT_THAT(outBody, ::testing::HasSubstr(
                           "copyTile<BV>(entering + v0, DV, S, SLD, DK);"));
  EXPECT_THAT(outBody, ::testing::HasSubstr("rows query"));
  EXPECT_THAT(outBody, ::testing::HasSubstr("OutputRows{"));
  EXPECT_THAT(cu, ::testing::HasSubstr("rkc_linear_attention_out_kernel_tc"));
  EXPECT_THAT(kernels.header, ::testing::HasSubstr("void *out_workspace;"));
  EXPECT_THAT(kernels.launcher,
              ::testing::HasSubstr("\"rkc_linear_attention_out_kernel_tc\""));
  EXPECT_THAT(kernels.launcher,
              ::testing::HasSubstr("+ rkc_linear_attention_out_workspace_"
                                   "bytes(&params)"));
  EXPECT_GT(kernels.outSharedBytes, 0);
  EXPECT_EQ(kernels.outWorkspaceBytesPerChunk, 128 * 128 * 4);
  EXPECT_EQ(kernels.prepSharedBytes, 0); // no prep kernel runs
}

// The out phase's plan (rec.out_smem_offset, after the state slice): its
// ops, and what it receives where those ops stand (read by nothing there).
TEST(SharedMemoryPlan, OutNoTwoLiveTilesShareAFloat) {
  int outPlans = 0, loopPlans = 0;
  forEachPlan([&](const std::string &what, rec::ChunkedOp chunked,
                  mlir::DictionaryAttr dict) {
    if (!chunked->hasAttr("rec.out_phase"))
      return;
    ++outPlans;
    EXPECT_GT(scheduleValue(dict, "out_shared_bytes"), 0) << what;
    rec::TileExtents extents{
        chunked.getChunkSize(), chunked.getSubstepsPerToken(),
        scheduleValue(dict, "dk"), scheduleValue(dict, "value_tile")};
    auto runs = [](mlir::Operation *op) {
      return phaseOf(op) == "out" || phaseOf(op) == "both";
    };
    // In the order the out kernel runs them (a received value right before
    // its first reader; with a value loop, the key side first).
    size_t loopBegin = SIZE_MAX;
    const bool valueLoop = scheduleValue(dict, "out_value_loop") != 0;
    if (valueLoop)
      ++loopPlans;
    llvm::SmallVector<mlir::Operation *> ops =
        valueLoop
            ? rec::outKernelLoopOrder(chunked.getBody().front(), loopBegin)
            : rec::outKernelOrder(chunked.getBody().front());
    if (!valueLoop)
      loopBegin = ops.size();
    for (const std::string &overlap :
         planOverlaps(ops, loopBegin, runs, "rec.out_smem_offset", extents))
      ADD_FAILURE() << what << ", out: " << overlap;
    // Every tile after the state slice and within the kernel's bytes;
    // every value it receives other than from the scan's workspace a place
    // of its own in what crosses, after the entering state, 16-byte
    // aligned, within the workspace's floats.
    const int64_t dk = scheduleValue(dict, "dk"),
                  dv = scheduleValue(dict, "dv");
    const int64_t stride = scheduleValue(dict, "state_stride")
                               ? scheduleValue(dict, "state_stride")
                               : scheduleValue(dict, "value_tile");
    const int64_t floats = scheduleValue(dict, "out_shared_bytes") / 4;
    const int64_t crossing = scheduleValue(dict, "out_workspace_floats");
    rec::TileExtents whole{chunked.getChunkSize(),
                           chunked.getSubstepsPerToken(), dk, dv};
    llvm::SmallVector<std::pair<int64_t, int64_t>> received;
    for (mlir::Operation *op : ops) {
      if (op->getNumResults() != 1)
        continue; // the output
      auto type = llvm::cast<rec::TileType>(op->getResult(0).getType());
      auto place = op->getAttrOfType<mlir::IntegerAttr>("rec.out_smem_offset");
      EXPECT_TRUE(place) << what;
      if (!place)
        continue;
      int64_t at = place.getInt();
      EXPECT_GE(at, dk * stride) << what;
      EXPECT_LE(at + extents.elements(type), floats) << what;
      if (runs(op))
        continue;
      auto in =
          op->getAttrOfType<mlir::IntegerAttr>("rec.out_workspace_offset");
      // A prep value the scan reads whole is read from the scan's
      // workspace: no place of its own.
      auto toScan = op->getAttrOfType<mlir::StringAttr>("rec.to_scan");
      if (toScan && toScan.getValue() == "all") {
        EXPECT_FALSE(in) << what;
        continue;
      }
      EXPECT_TRUE(in) << what;
      if (!in)
        continue;
      EXPECT_EQ(in.getInt() % 4, 0) << what;
      EXPECT_GE(in.getInt(), dk * dv) << what;
      EXPECT_LE(in.getInt() + whole.elements(type), crossing) << what;
      for (auto [begin, end] : received)
        EXPECT_TRUE(in.getInt() + whole.elements(type) <= begin ||
                    end <= in.getInt())
            << what << ": two received values share the workspace";
      received.push_back({in.getInt(), in.getInt() + whole.elements(type)});
    }
  });
  EXPECT_GT(outPlans, 20);
  EXPECT_GT(loopPlans, 10);
}
} // namespace
