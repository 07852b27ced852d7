//===- CompileCommand.cpp - rkc compile: a spec to CUDA kernels -----------===//
//
// Lowers a spec twice (--rec-lower-chunked for the prefill kernel,
// --rec-lower-decode for the decode kernel), prints CUDA C++, a C header and
// a launcher, builds the fatbin with nvcc, and writes everything an engine
// needs to build them with the CUDA toolkit alone:
//
//   DIR/NAME.h          the C ABI
//   DIR/NAME.cu         the kernels
//   DIR/NAME.fatbin     sm_90a code and PTX
//   DIR/NAME_launch.c   host launchers, the fatbin embedded as bytes
//   DIR/rkc/…           the runtime (runtime.h, runtime.c, tile.cuh)
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Embedded.h"

#include "Rec/Passes.h"
#include "Target/CudaEmitter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <chrono>

using namespace llvm;
using namespace mlir;

namespace rkc::cli {

cl::SubCommand compileCommand("compile",
                              "Compile a spec to CUDA kernels (prefill and "
                              "decode), a C header and a launcher");
cl::OptionCategory compileCategory("rkc compile options");

namespace {
cl::opt<std::string> specPath(cl::Positional, cl::sub(compileCommand),
                              cl::init(""),
                              cl::desc("<spec.mlir> (default: the embedded "
                                       "EDA spec)"),
                              cl::cat(compileCategory));
cl::opt<std::string> outDir("o", cl::sub(compileCommand), cl::Required,
                            cl::desc("Output folder"), cl::value_desc("dir"),
                            cl::cat(compileCategory));
cl::opt<std::string> specName("spec-name", cl::sub(compileCommand),
                              cl::desc("Recurrence to compile when the file "
                                       "holds several"),
                              cl::cat(compileCategory));
cl::opt<std::string> arch("arch", cl::sub(compileCommand), cl::init("sm_90a"),
                          cl::desc("GPU architecture (sm_90a, or sm_80 and "
                                   "newer without Hopper instructions)"),
                          cl::cat(compileCategory));
cl::opt<int64_t> dk("dk", cl::sub(compileCommand), cl::init(128),
                    cl::desc("Key dimension (a multiple of 32, at most 256)"),
                    cl::cat(compileCategory));
cl::opt<int64_t> dv("dv", cl::sub(compileCommand), cl::init(128),
                    cl::desc("Value dimension (a multiple of 32, at most "
                             "256)"),
                    cl::cat(compileCategory));
cl::opt<int64_t> chunkSize("chunk-size", cl::sub(compileCommand),
                           cl::init(0),
                           cl::desc("Tokens per chunk (default: the largest "
                                    "of 64, 32, 16, 8 whose tiles fit in "
                                    "shared memory)"),
                           cl::cat(compileCategory));
cl::opt<int64_t> valueTile("value-tile", cl::sub(compileCommand),
                           cl::init(32),
                           cl::desc("Value columns a thread block owns"),
                           cl::cat(compileCategory));
cl::opt<int64_t> threads("threads", cl::sub(compileCommand), cl::init(256),
                         cl::desc("Threads per block"),
                         cl::cat(compileCategory));
cl::list<std::string> params("param", cl::sub(compileCommand),
                             cl::desc("Override a spec parameter, e.g. "
                                      "--param n=3"),
                             cl::value_desc("name=value"),
                             cl::cat(compileCategory));
cl::opt<bool> noFatbin("no-fatbin", cl::sub(compileCommand),
                       cl::desc("Write the sources and a launcher without "
                                "kernels; do not run nvcc"),
                       cl::cat(compileCategory));
cl::opt<std::string> nvccPath("nvcc", cl::sub(compileCommand),
                              cl::desc("The nvcc to build the fatbin with "
                                       "(default: $CUDA_HOME/bin/nvcc, "
                                       "/usr/local/cuda/bin/nvcc, PATH)"),
                              cl::cat(compileCategory));

bool writeFile(const std::string &path, StringRef text, std::string &error) {
  std::error_code ec;
  raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path + ": " + ec.message();
    return false;
  }
  os << text;
  return true;
}

/// Lowers a copy of `spec` with `build`, then schedules it, into a module
/// of its own; diagnostics are collected into `diagnostics`.
OwningOpRef<ModuleOp> lower(rec::RecurrenceOp spec,
                            void (*build)(OpPassManager &,
                                          const rec::LoweringOptions &),
                            const rec::LoweringOptions &options,
                            const rec::RecScheduleOptions &schedule,
                            std::string &diagnostics) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(spec.getLoc());
  module->getBody()->push_back(spec->clone());
  PassManager pm(spec.getContext());
  build(pm, options);
  pm.addPass(rec::createRecSchedule(schedule));
  ScopedDiagnosticHandler handler(spec.getContext(), [&](Diagnostic &diag) {
    diagnostics = diag.str();
    return success();
  });
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

} // namespace

std::string findNvcc(const std::string &given) {
  if (!given.empty())
    return given;
  if (const char *home = getenv("CUDA_HOME")) {
    std::string candidate = std::string(home) + "/bin/nvcc";
    if (sys::fs::can_execute(candidate))
      return candidate;
  }
  if (sys::fs::can_execute("/usr/local/cuda/bin/nvcc"))
    return "/usr/local/cuda/bin/nvcc";
  if (ErrorOr<std::string> found = sys::findProgramByName("nvcc"))
    return *found;
  return "";
}

namespace {

std::string bytesAsC(StringRef bytes) {
  std::string text;
  text.reserve(bytes.size() * 6);
  for (size_t i = 0; i < bytes.size(); ++i) {
    text += std::to_string(static_cast<unsigned char>(bytes[i]));
    text += (i + 1) % 24 ? "," : ",\n";
  }
  return text;
}
} // namespace

int compileSpec(rec::RecurrenceOp specOp, const CompileRequest &request,
                raw_ostream &log) {
  std::string name = specOp.getSymName().str();
  const std::string &outDir = request.outDir;
  auto fail = [&](const Twine &message) {
    errs() << "rkc compile: error: " << message << "\n";
    return 1;
  };
  rec::RecScheduleOptions schedule;
  schedule.dk = request.dk;
  schedule.dv = request.dv;
  schedule.valueTile = request.valueTile;
  schedule.threads = request.threads;
  auto start = std::chrono::steady_clock::now();
  std::vector<int64_t> candidates = {64, 32, 16, 8};
  if (request.chunkSize)
    candidates = {request.chunkSize};
  CudaKernels kernels;
  std::string error;
  int64_t chosen = 0;
  for (int64_t candidate : candidates) {
    rec::LoweringOptions lowering;
    lowering.chunkSize = candidate;
    lowering.params = request.params;
    // A chunk whose tiles do not fit in shared memory fails to schedule:
    // try the next smaller one.
    OwningOpRef<ModuleOp> chunked =
        lower(specOp, rec::buildLowerChunkedPipeline, lowering, schedule,
              error);
    if (!chunked)
      continue;
    OwningOpRef<ModuleOp> decode = lower(
        specOp, rec::buildLowerDecodePipeline, lowering, schedule, error);
    if (!decode)
      return fail("@" + name + ": " + error);
    kernels = CudaKernels();
    if (!emitCudaKernels(*chunked->getOps<rec::RecurrenceOp>().begin(),
                         *decode->getOps<rec::RecurrenceOp>().begin(),
                         kernels, error))
      return fail("@" + name + ": " + error);
    chosen = candidate;
    break;
  }
  if (!chosen)
    return fail("@" + name + ": " + error);

  if (std::error_code ec = sys::fs::create_directories(outDir + "/rkc"))
    return fail("cannot create " + outDir + ": " + ec.message());
  std::string base = outDir + "/" + name;
  if (!writeFile(base + ".h", kernels.header, error) ||
      !writeFile(base + ".cu", kernels.device, error) ||
      !writeFile(base + ".json", kernels.manifest, error) ||
      !writeFile(outDir + "/rkc/runtime.h", kEmbeddedRuntimeHeader, error) ||
      !writeFile(outDir + "/rkc/tile.cuh", kEmbeddedTileLibrary, error) ||
      !writeFile(outDir + "/rkc/runtime.c", kEmbeddedRuntimeSource, error))
    return fail(error);
  log << "rkc compile: @" << name << " -> " << outDir << "\n"
      << "  schedule  dk=" << request.dk << " dv=" << request.dv
      << " chunk=" << chosen << " tokens value-tile=" << request.valueTile
      << " threads=" << request.threads << "\n  shared    prefill "
      << kernels.prefillSharedBytes << " B, decode "
      << kernels.decodeSharedBytes << " B a block\n"
      << "  wrote     " << name << ".h, " << name << ".cu, " << name
      << ".json, rkc/runtime.h, rkc/runtime.c, rkc/tile.cuh\n";

  // The launcher embeds the fatbin; without nvcc it is written without one
  // and its calls return RKC_ERROR_NO_KERNELS (validation still works).
  std::string launcherHead = "/* Generated by rkc from @" + name +
                             ": host launchers. */\n#include \"" + name +
                             ".h\"\n\n#include <stdint.h>\n\n";
  std::string nvcc = request.noFatbin ? std::string() : findNvcc(request.nvcc);
  if (nvcc.empty()) {
    if (!request.noFatbin)
      log << "  nvcc not found: no " << name << ".fatbin; " << name
          << "_launch.c is written without kernels (pass --nvcc)\n";
    launcherHead += "/* Written without a fatbin: launches return "
                    "RKC_ERROR_NO_KERNELS. */\nstatic rkc_module rkc_" +
                    name + "_module = {0};\n\n";
  } else {
    std::string fatbin = base + ".fatbin";
    std::string computeArch = "compute_" + request.arch.substr(3);
    SmallVector<std::string> argv = {
        nvcc, "-fatbin", "-std=c++17", "-O3",
        "-gencode=arch=" + computeArch + ",code=" + request.arch,
        "-gencode=arch=" + computeArch + ",code=" + computeArch,
        "-I", outDir, "-o", fatbin, base + ".cu"};
    SmallVector<StringRef> argRefs(argv.begin(), argv.end());
    std::string message;
    log << "  nvcc      " << nvcc << " (" << request.arch << " + PTX) ...\n";
    log.flush();
    int rc = sys::ExecuteAndWait(nvcc, argRefs, std::nullopt, {}, 0, 0,
                                 &message);
    if (rc != 0)
      return fail("nvcc failed on " + base + ".cu" +
                  (message.empty() ? "" : ": " + message));
    auto image = MemoryBuffer::getFile(fatbin);
    if (!image)
      return fail("cannot read " + fatbin);
    launcherHead += "static const unsigned char rkc_" + name +
                    "_fatbin[] __attribute__((aligned(8))) = {\n" +
                    bytesAsC((*image)->getBuffer()) +
                    "};\n\nstatic rkc_module rkc_" + name +
                    "_module = {rkc_" + name + "_fatbin};\n\n";
    log << "  wrote     " << name << ".fatbin (" << (*image)->getBufferSize()
        << " B)\n";
  }
  if (!writeFile(base + "_launch.c", launcherHead + kernels.launcher, error))
    return fail(error);
  log << "  wrote     " << name << "_launch.c\n";
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  log << formatv("  done in {0:f1} s\n", seconds);
  return 0;
}

int runCompile() {
  MLIRContext context;
  context.getOrLoadDialect<rec::RecDialect>();
  SpecFile spec;
  if (!loadSpecArgument(context, specPath, specName, spec))
    return 1;
  CompileRequest request;
  request.outDir = outDir;
  request.arch = arch;
  request.nvcc = nvccPath;
  request.dk = dk;
  request.dv = dv;
  request.chunkSize = chunkSize.getNumOccurrences() ? chunkSize.getValue() : 0;
  request.valueTile = valueTile;
  request.threads = threads;
  request.params.assign(params.begin(), params.end());
  request.noFatbin = noFatbin;
  if (request.chunkSize < 0 || (chunkSize.getNumOccurrences() && !request.chunkSize)) {
    errs() << "rkc compile: error: --chunk-size must be a positive number of tokens\n";
    return 1;
  }
  return compileSpec(spec.recurrence, request, outs());
}

} // namespace rkc::cli
