//===- RunCommand.cpp - rkc run: execute a spec on the CPU ----------------===//
//
// Reads input tensors by the spec's input names from a safetensors file (or
// draws realistic random ones), runs a CPU executor in float64 on the exact
// input values and writes `o` and `final_state`.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Embedded.h"

#include "Interpreter/Backends.h"
#include "Interpreter/RandomInputs.h"
#include "Interpreter/SpecFile.h"
#include "Support/SafeTensors.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Diagnostics.h"

#include <chrono>
#include <cmath>

using namespace llvm;
using namespace mlir;

namespace rkc::cli {

cl::SubCommand runCommand("run", "Run a recurrence spec on the CPU (float64)");

cl::OptionCategory runCategory("rkc run options");

namespace {

cl::opt<std::string> specPath(
    cl::Positional, cl::sub(runCommand), cl::init(""),
    cl::desc("<spec.mlir> (default: the embedded EDA spec)"),
    cl::cat(runCategory));
cl::opt<std::string> specName("spec-name", cl::sub(runCommand),
                              cl::desc("Recurrence to run when the file holds "
                                       "several"),
                              cl::value_desc("name"), cl::cat(runCategory));
cl::opt<std::string> inputsPath(
    "inputs", cl::sub(runCommand),
    cl::desc("Input tensors, named as the spec names its inputs "
             "(plus optional initial_state, cu_seqlens)"),
    cl::value_desc("in.safetensors"), cl::cat(runCategory));
cl::opt<std::string> randomShape(
    "random", cl::sub(runCommand),
    cl::desc("Draw realistic random inputs of this shape instead of reading "
             "--inputs, e.g. B=2,T=256,H=4,dk=64,dv=64 (HV=8 for GVA, "
             "seqlens=5:17:64 for varlen, gates=40 for log-decays down to -40 "
             "a token instead of -5). The default when --inputs is absent."),
    cl::value_desc("shape"), cl::cat(runCategory));
cl::opt<uint64_t> seed("seed", cl::sub(runCommand), cl::init(0),
                       cl::desc("Seed of --random"), cl::cat(runCategory));
cl::opt<std::string> randomDType("random-dtype", cl::sub(runCommand),
                                 cl::init("f32"),
                                 cl::desc("Dtype random inputs are rounded "
                                          "to and saved as (f32, bf16, f16, "
                                          "f64)"),
                                 cl::cat(runCategory));
cl::opt<std::string> saveInputs("save-inputs", cl::sub(runCommand),
                                cl::desc("Write the inputs that ran here"),
                                cl::value_desc("in.safetensors"),
                                cl::cat(runCategory));
cl::opt<std::string> outPath("out", cl::sub(runCommand),
                             cl::desc("Write o and final_state here"),
                             cl::value_desc("out.safetensors"),
                             cl::cat(runCategory));
cl::opt<std::string> outDType("out-dtype", cl::sub(runCommand),
                              cl::init("f64"),
                              cl::desc("Dtype of the outputs (f64, f32, bf16, "
                                       "f16)"),
                              cl::cat(runCategory));
cl::opt<std::string> backend(
    "backend", cl::sub(runCommand), cl::init("interp"),
    cl::desc("Executor: interp (the spec token by token), chunked (the "
             "chunked WY/UT algorithm of --rec-lower-chunked), decode (the "
             "sub-steps of --rec-lower-decode token by token), all three in "
             "float64 on the CPU; cuda (the generated prefill kernel on GPU "
             "0, compiled with nvcc or taken from ~/.cache/rkc)"),
    cl::cat(runCategory));
cl::opt<int64_t> chunkSize("chunk-size", cl::sub(runCommand), cl::init(64),
                           cl::desc("Tokens per chunk of --backend chunked"),
                           cl::cat(runCategory));
cl::opt<double> scale("scale", cl::sub(runCommand), cl::init(0.0),
                      cl::desc("Read scale (default: the spec's, else "
                               "dk^-0.5)"),
                      cl::cat(runCategory));
cl::opt<bool> stateTransfer(
    "state-transfer", cl::sub(runCommand),
    cl::desc("With --backend chunked: run each chunk as an affine map of its "
             "entering state, S_L = M S0 + N (--rec-state-transfer)"),
    cl::cat(runCategory));
cl::opt<bool> splitScan(
    "split-scan", cl::sub(runCommand),
    cl::desc("With --backend chunked: run the state-free (prep) part of every "
             "chunk first, then the state-dependent part (scan) chunk after "
             "chunk (--rec-split-scan)"),
    cl::cat(runCategory));
cl::opt<int64_t> segments(
    "segments", cl::sub(runCommand), cl::init(1),
    cl::desc("With --backend chunked: run each sequence in N segments that "
             "compose their chunks' transfer operators independently and "
             "exchange only states (implies --state-transfer --split-scan)"),
    cl::value_desc("N"), cl::cat(runCategory));
cl::opt<bool> halfWorkspace(
    "half-workspace", cl::sub(runCommand),
    cl::desc("With --backend chunked --split-scan: round what crosses from "
             "prep to scan to bf16 where the kernels for 16-bit outputs keep "
             "it so (values the scan only multiplies or adds): its cost in "
             "accuracy, apart from every other rounding"),
    cl::cat(runCategory));
cl::opt<bool> outPhase(
    "out-phase", cl::sub(runCommand),
    cl::desc("With --backend chunked --split-scan: run what only the output "
             "needs after the scan, every chunk at once from its entering "
             "state (the scan keeps those states)"),
    cl::cat(runCategory));
cl::opt<bool> bf16Products(
    "bf16-products", cl::sub(runCommand),
    cl::desc("With --backend chunked: round both operands of every Gram and "
             "product (the state included) to bf16, as bf16 tensor cores "
             "would take them, sums exact: its cost in accuracy, apart from "
             "every other rounding"),
    cl::cat(runCategory));
cl::list<std::string> params("param", cl::sub(runCommand),
                             cl::desc("Override a spec parameter, e.g. "
                                      "--param n=3"),
                             cl::value_desc("name=value"),
                             cl::cat(runCategory));

const char *kDefaultShape = "B=2,T=256,H=4,dk=64,dv=64";

int fail(const Twine &message) {
  errs() << "rkc run: error: " << message << "\n";
  return 1;
}

double frobenius(const HostTensor &t) {
  double s = 0;
  for (double x : t.values)
    s += x * x;
  return std::sqrt(s);
}
} // namespace

bool parseParamArgs(const std::vector<std::string> &args, RunOptions &options,
                    std::string &error) {
  for (const std::string &p : args) {
    size_t eq = p.find('=');
    long long value = 0;
    if (eq == std::string::npos ||
        StringRef(p).substr(eq + 1).getAsInteger(10, value)) {
      error = "--param expects name=integer, got '" + p + "'";
      return false;
    }
    options.params.emplace_back(p.substr(0, eq), value);
  }
  return true;
}

bool loadSpecArgument(MLIRContext &context, const std::string &path,
                      const std::string &name, SpecFile &spec) {
  context.loadDialect<rec::RecDialect>();
  if (!path.empty())
    return loadSpecFile(context, path, name, spec);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      MemoryBuffer::getMemBuffer(kEmbeddedEdaSpec, "embedded eda.mlir"),
      SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  spec.module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!spec.module)
    return false;
  spec.module->walk([&](rec::RecurrenceOp r) { spec.recurrence = r; });
  return true;
}

int runRun() {
  if (backend != "interp" && backend != "chunked" && backend != "decode" &&
      backend != "cuda")
    return fail("unknown backend '" + backend +
                "' (available: interp, chunked, decode, cuda)");
  for (auto [given, flag] :
       {std::pair{stateTransfer.getValue(), "--state-transfer"},
        std::pair{splitScan.getValue(), "--split-scan"},
        std::pair{segments.getValue() != 1, "--segments"},
        std::pair{halfWorkspace.getValue(), "--half-workspace"},
        std::pair{bf16Products.getValue(), "--bf16-products"},
        std::pair{outPhase.getValue(), "--out-phase"}})
    if (given && backend != "chunked")
      return fail(std::string(flag) +
                  " shapes the chunked backend; it has no meaning with "
                  "--backend " + backend.getValue());
  DType outType, randomType;
  if (!parseDType(outDType, outType) ||
      (outType != DType::F64 && outType != DType::F32 &&
       outType != DType::BF16 && outType != DType::F16))
    return fail("--out-dtype must be f64, f32, bf16 or f16, got '" + outDType +
                "'");
  if (!parseDType(randomDType, randomType) ||
      (randomType == DType::I64 || randomType == DType::I32))
    return fail("--random-dtype must be f64, f32, bf16 or f16, got '" +
                randomDType + "'");
  if (!inputsPath.empty() && !randomShape.empty())
    return fail("give either --inputs or --random, not both");

  RunOptions options;
  if (scale.getNumOccurrences()) {
    if (!(scale > 0) || !std::isfinite(scale))
      return fail("--scale must be a positive finite number");
    options.scale = scale;
  }
  std::string paramError;
  if (!parseParamArgs(params, options, paramError))
    return fail(paramError);

  // The spec: a file, or the embedded EDA spec.
  MLIRContext context;
  SpecFile spec;
  std::string specLabel =
      specPath.empty() ? std::string("embedded eda.mlir") : specPath.getValue();
  if (!loadSpecArgument(context, specPath, specName, spec))
    return 1;
  SpecPlan plan = SpecPlan::build(spec.recurrence);

  // The inputs: a file, or realistic random tensors.
  TensorMap inputs;
  std::string error, inputLabel;
  if (!inputsPath.empty()) {
    if (!readSafeTensors(inputsPath, inputs, error))
      return fail(inputsPath + ": " + error);
    inputLabel = inputsPath;
  } else {
    RandomShape shape;
    shape.seed = seed;
    shape.dtype = randomType;
    std::string text =
        randomShape.empty() ? std::string(kDefaultShape) : randomShape.getValue();
    if (!parseRandomShape(text, shape, error))
      return fail("--random: " + error);
    inputs = randomInputs(plan, shape, options);
    inputLabel = "random " + text + " (seed " + std::to_string(seed) + ", " +
                 dtypeName(randomType) + ")";
  }
  if (!saveInputs.empty() && !writeSafeTensors(saveInputs, inputs, error))
    return fail(saveInputs + ": " + error);

  TensorMap outputs;
  auto start = std::chrono::steady_clock::now();
  BackendOptions backendOptions;
  backendOptions.backend = backend;
  backendOptions.chunkSize = chunkSize;
  backendOptions.stateTransfer = stateTransfer;
  backendOptions.splitScan = splitScan;
  backendOptions.segments = segments;
  backendOptions.halfWorkspace = halfWorkspace;
  backendOptions.bf16Products = bf16Products;
  backendOptions.outPhase = outPhase;
  bool ran = backend == "cuda"
                 ? runCudaBackend(spec.recurrence, inputs, options, outputs,
                                  error, outs())
                 : runBackend(spec.recurrence, backendOptions, inputs,
                              options, outputs, error);
  if (!ran)
    return fail(error);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  ProblemShape shape;
  bindProblem(plan, inputs, options, shape, error);

  outs() << "rkc run: @" << plan.name << " from " << specLabel << "\n";
  outs() << "  inputs   " << inputLabel << "\n";
  for (auto &[name, t] : inputs)
    outs() << "           " << name << " " << dtypeName(t.dtype) << " "
           << formatShape(t.shape) << "\n";
  outs() << "  problem  B=" << shape.batch << " T=" << shape.length
         << " H=" << shape.keyHeads << " HV=" << shape.valueHeads
         << " dk=" << shape.dk << " dv=" << shape.dv
         << " sequences=" << shape.numSequences()
         << format(" scale=%.6g", shape.scale);
  for (auto &[name, value] : shape.params)
    outs() << " " << name << "=" << value;
  outs() << "\n  backend  " << backend.getValue();
  if (backend == "chunked")
    outs() << " (chunk " << chunkSize << " tokens)";
  outs() << (backend == "cuda" ? " (GPU 0, float32 state)" : " (float64)");
  // The roundings asked for: the outputs are not float64's then.
  if (halfWorkspace)
    outs() << " with the 16-bit workspace's rounding";
  if (bf16Products)
    outs() << (halfWorkspace ? " and" : " with") << " bf16 product operands";
  outs() << format(", %.3f s", seconds) << "\n";
  for (auto &[name, t] : outputs)
    outs() << "  output   " << name << " " << formatShape(t.shape)
           << format("  |x|_F = %.6g", frobenius(t)) << "\n";

  if (!outPath.empty()) {
    for (auto &[name, t] : outputs)
      t.dtype = outType;
    if (!writeSafeTensors(outPath, outputs, error))
      return fail(outPath + ": " + error);
    outs() << "  wrote    " << outPath << " (" << dtypeName(outType)
           << ")\n";
  } else {
    outs() << "  (no --out given: outputs not written)\n";
  }
  return 0;
}

} // namespace rkc::cli
