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
// With --tuning DB (from `rkc tune`), the default schedule and each shape
// bucket's winner become variants NAME__TAG (NAME__TAG.h, .cu, .fatbin and
// NAME__TAG_launch.inc), and NAME_launch.c includes them all and picks one
// by the call's shape bucket; NAME.h and NAME.json stay the public ABI.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Embedded.h"
#include "Tuning.h"

#include "Rec/Passes.h"
#include "Target/CudaEmitter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <thread>

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
cl::opt<int64_t> prepValueTile(
    "prep-value-tile", cl::sub(compileCommand), cl::init(0),
    cl::desc("Value columns the prep kernel's value-side ops take at a time, "
             "a multiple of the value tile dividing dv (default 0: the widest "
             "needing no more shared memory than the value tile)"),
    cl::cat(compileCategory));
cl::opt<int64_t> factorProducts(
    "factor-products", cl::sub(compileCommand), cl::init(0),
    cl::desc("1: products that share their left operand become one product "
             "of the sum of their right operands (fewer products; with bf16 "
             "products the sum is rounded once, where the terms were)"),
    cl::cat(compileCategory));
cl::opt<int64_t> sinkRowScales(
    "sink-row-scales", cl::sub(compileCommand), cl::init(0),
    cl::desc("1: a product's left operand scaled row by row by one scalar "
             "(a scalar gate's decay, a strength) is scaled elsewhere: the "
             "product's rows, or its right operand's (--rec-sink-row-scales)"),
    cl::cat(compileCategory));
cl::opt<int64_t> prefetch("prefetch", cl::sub(compileCommand), cl::init(0),
                          cl::desc("1: fetch input rows into L2 ahead of "
                                   "their loads (the next chunk's while a "
                                   "chunk runs; the prep kernel its own "
                                   "chunk's at its start)"),
                          cl::cat(compileCategory));
cl::opt<int64_t> scanSegments(
    "scan-segments", cl::sub(compileCommand), cl::init(4),
    cl::desc("Split kernels, where the scan's blocks leave half the "
             "multiprocessors free: each sequence's chunks in this many "
             "segments, the prep of one running beside the scan of the one "
             "before on a second stream (default 4; 1: the prep, then the "
             "scan)"),
    cl::cat(compileCategory));
cl::opt<int64_t> decodeBlocks(
    "decode-blocks", cl::sub(compileCommand), cl::init(-1),
    cl::desc("Blocks an SM the decode kernel's registers leave room for "
             "(default -1: as many as 48 registers a thread allow; 0: "
             "nvcc chooses)"),
    cl::cat(compileCategory));
cl::opt<int64_t> prepBlocks(
    "prep-blocks", cl::sub(compileCommand), cl::init(0),
    cl::desc("Split kernels: the prep kernel's launch bound asks for as many "
             "blocks an SM as its shared memory allows, at most this many "
             "(1 to 4, and at least 64 registers a thread; default 0: at "
             "most 4)"),
    cl::cat(compileCategory));
cl::opt<int64_t> decodeQuads(
    "decode-quads", cl::sub(compileCommand), cl::init(-1),
    cl::desc("1: the decode kernel keeps a thread's rows of the state "
             "consecutive, so that the key-axis vectors load four rows at a "
             "time where a thread's rows come in whole fours (fewer shared "
             "loads, a few more registers); 0: strided rows; -1 (default): 1 "
             "where a token has two or more sub-steps"),
    cl::cat(compileCategory));
cl::opt<int64_t> decodeRawRows(
    "decode-raw-rows", cl::sub(compileCommand), cl::init(-1),
    cl::desc(
        "The decode kernel: a row role that reads from two to this "
        "many input rows loads them all as stored before widening any (one "
        "round trip to memory, more registers); 0: none; -1 (default): "
        "where a token has one sub-step, the roles of two rows (every role "
        "if none reads more), else none"),
    cl::cat(compileCategory));
cl::opt<int64_t> elementwiseQuads(
    "elementwise-quads", cl::sub(compileCommand), cl::init(-1),
    cl::desc("1: elementwise prep ops (scalings, decays) take four elements "
             "a lane at a time where their tiles allow; 0: one at a time; -1 "
             "(default): 1 unless a sub-step with a per-channel gate reads "
             "the state before its decay"),
    cl::cat(compileCategory));
cl::opt<int64_t> pairGrams(
    "pair-grams", cl::sub(compileCommand), cl::init(-1),
    cl::desc("Split kernels: 1 computes two independent Grams of the prep "
             "kernel together (their tasks dealt to the warps at once, one "
             "barrier after both); 0: one after the other; -1 (default): 0"),
    cl::cat(compileCategory));
cl::opt<int64_t> padAddendRows(
    "pad-addend-rows", cl::sub(compileCommand), cl::init(1),
    cl::desc("Split kernels: 1 gives a float32 scan tile that a product "
             "stores and only sums read (a delta factor's Q S, which the "
             "output's products add) rows 8 floats longer than dense, free "
             "of bank conflicts (the default); 0: dense"),
    cl::cat(compileCategory));
cl::opt<std::string> products(
    "products", cl::sub(compileCommand), cl::init("bf16"),
    cl::desc("Tensor-core products of the kernels for 16-bit outputs: bf16 "
             "(default; m16n8k16, operands rounded to bf16, float32 sums; "
             "`rkc run --bf16-products` measures what that rounding costs) "
             "or tf32 (m16n8k8 on float32 operands)"),
    cl::cat(compileCategory));
cl::opt<int64_t> splitScan("split-scan", cl::sub(compileCommand), cl::init(1),
                           cl::desc("1 (default): a prep kernel runs the "
                                    "state-free part of every chunk at once, "
                                    "then the scan kernel the rest chunk "
                                    "after chunk; 0: one kernel, no "
                                    "workspace"),
                           cl::cat(compileCategory));
cl::opt<int64_t> outPhase(
    "out-phase", cl::sub(compileCommand), cl::init(0),
    cl::desc("1: what only the output needs (Q S, the chunk's own "
             "attention, the stores of o) runs after the scan in an out "
             "kernel, every chunk at once, from each chunk's entering state, "
             "which the scan stores (16 bits for 16-bit outputs), its own "
             "row loads and what it reads of the prep's workspace; the scan "
             "carries the state alone. Needs --split-scan 1. 0 (default): "
             "the scan computes the output"),
    cl::cat(compileCategory));
cl::opt<int64_t> outValueLoop(
    "out-value-loop", cl::sub(compileCommand), cl::init(0),
    cl::desc("With --out-phase 1: 1 gives the out kernel one block a chunk "
             "and value head, which computes what no value tile changes (the "
             "query side, the chunk's own attention) once and then the value "
             "side for each value tile in turn; 0 (default): a block a value "
             "tile, each computing the key side again"),
    cl::cat(compileCategory));
cl::opt<int64_t> keepRows(
    "keep-rows", cl::sub(compileCommand), cl::init(-1),
    cl::desc("Split kernels: 1 has the input rows the scan reads cross "
             "from the prep kernel (the scan stages them while the chunk "
             "before runs, or copies them from the inputs themselves); 0: "
             "the scan loads them (measured slower, with the out phase too: "
             "its row loads are on the sequential path); -1 (default): 1"),
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
cl::opt<std::string> tuningPath(
    "tuning", cl::sub(compileCommand),
    cl::desc("A database of `rkc tune`: compile the default schedule and "
             "each shape bucket's fastest one, and launchers that pick one "
             "by the call's shape bucket"),
    cl::value_desc("tuning.jsonl"), cl::cat(compileCategory));

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

bool writeRuntime(const std::string &dir, std::string &error) {
  if (std::error_code ec = sys::fs::create_directories(dir + "/rkc")) {
    error = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  return writeFile(dir + "/rkc/runtime.h", kEmbeddedRuntimeHeader, error) &&
         writeFile(dir + "/rkc/tile.cuh", kEmbeddedTileLibrary, error) &&
         writeFile(dir + "/rkc/runtime.c", kEmbeddedRuntimeSource, error);
}

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

bool emitKernels(rec::RecurrenceOp specOp, const CompileRequest &request,
                 CudaKernels &kernels, int64_t &chosen, std::string &error) {
  std::string name = specOp.getSymName().str();
  // The switches the lowering reads (rec-schedule checks its own options).
  for (auto [option, value] :
       {std::pair{"split-scan", request.splitScan},
        {"out-phase", request.outPhase},
        {"out-value-loop", request.outValueLoop},
        {"keep-rows", request.keepRows < 0 ? 0 : request.keepRows},
        {"factor-products", request.factorProducts},
        {"sink-row-scales", request.sinkRowScales}})
    if (value != 0 && value != 1) {
      error = std::string(option) + " (" + std::to_string(value) +
              ") must be 0 or 1";
      return false;
    }
  if (request.outPhase && !request.splitScan) {
    error = "out-phase 1 needs split-scan 1";
    return false;
  }
  if (request.outValueLoop && !request.outPhase) {
    error = "out-value-loop 1 needs out-phase 1";
    return false;
  }
  rec::RecScheduleOptions schedule;
  schedule.dk = request.dk;
  schedule.dv = request.dv;
  schedule.valueTile = request.valueTile;
  schedule.threads = request.threads;
  schedule.prefetch = request.prefetch;
  schedule.prepValueTile = request.prepValueTile;
  schedule.decodeBlocks = request.decodeBlocks;
  schedule.decodeQuads = request.decodeQuads;
  schedule.decodeRawRows = request.decodeRawRows;
  schedule.elementwiseQuads = request.elementwiseQuads;
  schedule.pairGrams = request.pairGrams;
  schedule.padAddendRows = request.padAddendRows;
  schedule.prepBlocks = request.prepBlocks;
  schedule.scanSegments = request.scanSegments;
  schedule.products = request.products;
  schedule.outValueLoop = request.outValueLoop;
  std::vector<int64_t> candidates = {64, 32, 16, 8};
  if (request.chunkSize)
    candidates = {request.chunkSize};
  chosen = 0;
  // The automatic chunk: the largest whose tiles fit and, for the split
  // kernels, whose scan stages its workspace in two buffers in both kernels
  // (the next chunk's arrives by cp.async while this one runs: 1.25x for
  // KDA at the same chunk, NOTES v2; chunk 64, whose float32 kernel stages
  // a chunk at a time, is asked for, not chosen, until measured); where
  // none stages, the largest that fits.
  std::optional<std::pair<int64_t, CudaKernels>> unstaged;
  for (int64_t candidate : candidates) {
    rec::LoweringOptions lowering;
    lowering.chunkSize = candidate;
    lowering.params = request.params;
    lowering.splitScan = request.splitScan != 0;
    lowering.factorProducts = request.factorProducts != 0;
    lowering.sinkRowScales = request.sinkRowScales != 0;
    // The scan kernel then loads no input rows: what it reads crosses
    // through the workspace and is staged while the previous chunk runs.
    lowering.keepRows = lowering.splitScan;
    lowering.outPhase = request.outPhase != 0;
    if (request.keepRows >= 0)
      lowering.keepRows = lowering.splitScan && request.keepRows;
    // A chunk whose tiles do not fit in shared memory fails to schedule:
    // try the next smaller one.
    OwningOpRef<ModuleOp> chunked =
        lower(specOp, rec::buildLowerChunkedPipeline, lowering, schedule,
              error);
    if (!chunked)
      continue;
    OwningOpRef<ModuleOp> decode = lower(
        specOp, rec::buildLowerDecodePipeline, lowering, schedule, error);
    if (!decode) {
      error = "@" + name + ": " + error;
      return false;
    }
    kernels = CudaKernels();
    if (!emitCudaKernels(*chunked->getOps<rec::RecurrenceOp>().begin(),
                         *decode->getOps<rec::RecurrenceOp>().begin(),
                         kernels, error)) {
      error = "@" + name + ": " + error;
      return false;
    }
    if (!request.chunkSize && lowering.splitScan &&
        !kernels.stagesInTwoBuffers) {
      if (!unstaged)
        unstaged = {candidate, kernels};
      continue;
    }
    chosen = candidate;
    return true;
  }
  if (unstaged) {
    std::tie(chosen, kernels) = *unstaged;
    return true;
  }
  error = "@" + name + ": " + error;
  return false;
}

rec::RecurrenceOp renamedSpec(rec::RecurrenceOp spec, StringRef symbol,
                              OwningOpRef<ModuleOp> &holder) {
  holder = ModuleOp::create(spec.getLoc());
  auto copy = cast<rec::RecurrenceOp>(spec->clone());
  holder->getBody()->push_back(copy);
  copy.setSymName(symbol);
  return copy;
}

bool buildFatbin(const std::string &nvcc, const std::string &arch,
                 const std::string &dir, const std::string &name,
                 std::string &image, std::string &error, StringRef logFile) {
  std::string base = dir + "/" + name;
  std::string fatbin = base + ".fatbin";
  std::string computeArch = "compute_" + arch.substr(3);
  SmallVector<std::string> argv = {
      nvcc, "-fatbin", "-std=c++17", "-O3",
      "-gencode=arch=" + computeArch + ",code=" + arch,
      "-gencode=arch=" + computeArch + ",code=" + computeArch,
      "-I", dir, "-o", fatbin, base + ".cu"};
  // Extra nvcc flags for experiments, e.g. -DRKC_PROFILE_OPS (the prefill
  // kernel then prints a per-op cycle breakdown).
  if (const char *extra = getenv("RKC_NVCC_FLAGS")) {
    SmallVector<StringRef> flags;
    StringRef(extra).split(flags, ' ', -1, /*KeepEmpty=*/false);
    for (StringRef flag : flags)
      argv.insert(argv.end() - 1, flag.str());
  }
  SmallVector<StringRef> argRefs(argv.begin(), argv.end());
  std::optional<StringRef> redirects[] = {std::nullopt, logFile, logFile};
  std::string message;
  int rc = sys::ExecuteAndWait(
      nvcc, argRefs, std::nullopt,
      logFile.empty() ? ArrayRef<std::optional<StringRef>>()
                      : ArrayRef<std::optional<StringRef>>(redirects),
      0, 0, &message);
  if (rc != 0) {
    error = "nvcc failed on " + base + ".cu" +
            (message.empty() ? "" : ": " + message);
    return false;
  }
  auto buffer = MemoryBuffer::getFile(fatbin);
  if (!buffer) {
    error = "cannot read " + fatbin;
    return false;
  }
  image = (*buffer)->getBuffer().str();
  return true;
}

std::string launcherSource(const std::string &name, const std::string *image,
                           const CudaKernels &kernels) {
  std::string text = "/* Generated by rkc from @" + name +
                     ": host launchers. */\n#include \"" + name +
                     ".h\"\n\n#include <stdint.h>\n#include <stdlib.h>\n\n";
  if (!image)
    text += "/* Written without a fatbin: launches return "
            "RKC_ERROR_NO_KERNELS. */\nstatic rkc_module rkc_" +
            name + "_module = {0};\n\n";
  else
    text += "static const unsigned char rkc_" + name +
            "_fatbin[] __attribute__((aligned(8))) = {\n" + bytesAsC(*image) +
            "};\n\nstatic rkc_module rkc_" + name + "_module = {rkc_" + name +
            "_fatbin};\n\n";
  return text + kernels.launcher;
}

std::string codeHash(const CudaKernels &kernels) {
  std::string text = kernels.header + '\0' + kernels.device + '\0' +
                     kernels.launcher + '\0' + kEmbeddedTileLibrary + '\0' +
                     kEmbeddedRuntimeSource;
  return utohexstr(xxh3_64bits(text), /*LowerCase=*/true, /*Width=*/16);
}

std::string specHash(rec::RecurrenceOp spec,
                     const std::vector<std::string> &params) {
  std::string text;
  raw_string_ostream os(text);
  spec->print(os);
  // The resolved parameters: the spec's defaults, overridden.
  std::map<std::string, std::string> resolved;
  for (auto &[key, value] : SpecPlan::build(spec).params)
    resolved[key] = std::to_string(value);
  for (const std::string &p : params) {
    size_t eq = p.find('=');
    if (eq != std::string::npos)
      resolved[p.substr(0, eq)] = p.substr(eq + 1);
  }
  os << "\nparams:";
  for (auto &[key, value] : resolved)
    os << " " << key << "=" << value;
  std::array<uint8_t, 32> digest = SHA256::hash(arrayRefFromStringRef(text));
  return toHex(digest, /*LowerCase=*/true).substr(0, 16);
}

int compileSpec(rec::RecurrenceOp specOp, const CompileRequest &request,
                raw_ostream &log) {
  std::string name = specOp.getSymName().str();
  const std::string &outDir = request.outDir;
  auto fail = [&](const Twine &message) {
    errs() << "rkc compile: error: " << message << "\n";
    return 1;
  };
  auto start = std::chrono::steady_clock::now();
  CudaKernels kernels;
  std::string error;
  int64_t chosen = 0;
  if (!emitKernels(specOp, request, kernels, chosen, error))
    return fail(error);

  if (std::error_code ec = sys::fs::create_directories(outDir + "/rkc"))
    return fail("cannot create " + outDir + ": " + ec.message());
  std::string base = outDir + "/" + name;
  if (!writeFile(base + ".h", kernels.header, error) ||
      !writeFile(base + ".cu", kernels.device, error) ||
      !writeFile(base + ".json", kernels.manifest, error) ||
      !writeRuntime(outDir, error))
    return fail(error);
  log << "rkc compile: @" << name << " -> " << outDir << "\n"
      << "  schedule  dk=" << request.dk << " dv=" << request.dv
      << " chunk=" << chosen << " tokens value-tile=" << request.valueTile
      << " threads=" << request.threads << " prefetch=" << request.prefetch
      << (request.factorProducts ? " factor-products=1" : "")
      << (request.sinkRowScales ? " sink-row-scales=1" : "")
      << (request.scanSegments == 4
              ? ""
              : " scan-segments=" + std::to_string(request.scanSegments))
      << (request.prepBlocks
              ? " prep-blocks=" + std::to_string(request.prepBlocks)
              : "")
      << " decode-blocks="
      << (request.decodeBlocks < 0 ? std::string("auto")
                                   : std::to_string(request.decodeBlocks))
      << " decode-quads="
      << (request.decodeQuads < 0 ? std::string("auto")
                                  : std::to_string(request.decodeQuads))
      << (request.decodeRawRows >= 0
              ? " decode-raw-rows=" + std::to_string(request.decodeRawRows)
              : "")
      << (request.elementwiseQuads >= 0
              ? " elementwise-quads=" + std::to_string(request.elementwiseQuads)
              : "")
      << (request.pairGrams >= 0
              ? " pair-grams=" + std::to_string(request.pairGrams)
              : "")
      << (request.padAddendRows ? "" : " pad-addend-rows=0")
      << (request.outPhase ? " out-phase=1" : "")
      << (request.outValueLoop ? " out-value-loop=1" : "")
      << (request.keepRows >= 0
              ? " keep-rows=" + std::to_string(request.keepRows)
              : "")
      << " products=" << request.products << "\n  shared    prefill "
      << kernels.prefillSharedBytes << " B"
      << (kernels.prefillTensorCoreSharedBytes != kernels.prefillSharedBytes
              ? " (" + std::to_string(kernels.prefillTensorCoreSharedBytes) +
                    " B for 16-bit outputs)"
              : std::string())
      << ", decode " << kernels.decodeSharedBytes << " B a block (and "
      << kernels.decodeStaticSharedBytes << " B static)"
      << (kernels.prepSharedBytes
              ? ", prep " + std::to_string(kernels.prepSharedBytes) +
                    " B (value side " + std::to_string(kernels.prepValueTile) +
                    " columns at a time); workspace " +
                    std::to_string(kernels.workspaceBytesPerChunk) + " B (" +
                    std::to_string(kernels.workspaceHalfBytesPerChunk) +
                    " B for 16-bit outputs" +
                    (kernels.workspaceHalfLeanBytesPerChunk
                         ? ", " +
                               std::to_string(
                                   kernels.workspaceHalfLeanBytesPerChunk) +
                               " B where raw input rows are staged from the "
                               "inputs"
                         : std::string()) +
                    ") a chunk and value head"
              : std::string())
      << (kernels.outSharedBytes
              ? ", out " + std::to_string(kernels.outSharedBytes) +
                    " B; from the scan " +
                    std::to_string(kernels.outWorkspaceBytesPerChunk) + " B (" +
                    std::to_string(kernels.outWorkspaceBytesPerChunk / 2) +
                    " B for 16-bit outputs) a chunk and value head"
              : std::string())
      << "\n"
      << "  wrote     " << name << ".h, " << name << ".cu, " << name
      << ".json, rkc/runtime.h, rkc/runtime.c, rkc/tile.cuh\n";

  // The launcher embeds the fatbin; without nvcc it is written without one
  // and its calls return RKC_ERROR_NO_KERNELS (validation still works).
  std::string nvcc = request.noFatbin ? std::string() : findNvcc(request.nvcc);
  std::string image;
  if (nvcc.empty()) {
    if (!request.noFatbin)
      log << "  nvcc not found: no " << name << ".fatbin; " << name
          << "_launch.c is written without kernels (pass --nvcc)\n";
  } else {
    log << "  nvcc      " << nvcc << " (" << request.arch << " + PTX) ...\n";
    log.flush();
    if (!buildFatbin(nvcc, request.arch, outDir, name, image, error))
      return fail(error);
    log << "  wrote     " << name << ".fatbin (" << image.size() << " B)\n";
  }
  if (!writeFile(base + "_launch.c",
                 launcherSource(name, nvcc.empty() ? nullptr : &image,
                                kernels),
                 error))
    return fail(error);
  log << "  wrote     " << name << "_launch.c\n";
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  log << formatv("  done in {0:f1} s\n", seconds);
  return 0;
}

namespace {

/// One schedule a tuned compile builds.
struct Variant {
  tuning::Schedule schedule;
  CompileRequest request;
  CudaKernels kernels;
  tuning::DispatchVariant dispatch;
};

} // namespace

int compileTuned(rec::RecurrenceOp specOp, const CompileRequest &request,
                 const std::string &database, raw_ostream &log) {
  using namespace tuning;
  std::string name = specOp.getSymName().str();
  auto fail = [&](const Twine &message) {
    errs() << "rkc compile: error: " << message << "\n";
    return 1;
  };
  auto note = [&](const Twine &message) {
    errs() << "rkc compile: note: " << message << "\n";
  };
  auto start = std::chrono::steady_clock::now();
  std::string error;
  if (!sys::fs::exists(database))
    return fail(database + ": no such file");
  std::vector<Row> rows;
  if (!readDatabase(database, rows, error))
    return fail(error);

  // The rows of this spec at this size and architecture (rkc tune times
  // bf16 inputs).
  std::string hash = specHash(specOp, request.params);
  std::vector<Row> matching;
  for (const Row &row : rows)
    if (row.specHash == hash && row.shape.dk == request.dk &&
        row.shape.dv == request.dv && row.arch == request.arch &&
        row.dtype == "bf16")
      matching.push_back(row);
  if (matching.empty()) {
    note(database + " has no rows for @" + name + " (spec " + hash +
         ", dk " + Twine(request.dk) + ", dv " + Twine(request.dv) + ", " +
         request.arch + ", bf16): compiling the default schedule only");
    return compileSpec(specOp, request, log);
  }
  // One measured configuration: this rkc's rows, else the newest version's;
  // then the GPU of the newest row.
  std::string version = rkcVersion();
  if (llvm::none_of(matching,
                    [&](const Row &r) { return r.rkcVersion == version; })) {
    note(database + " has no rows of rkc " + version + " for @" + name +
         ": using those of rkc " + matching.back().rkcVersion);
    version = matching.back().rkcVersion;
  }
  llvm::erase_if(matching,
                 [&](const Row &r) { return r.rkcVersion != version; });
  std::string gpu = matching.back().gpu;
  std::set<std::string> others;
  for (const Row &row : matching)
    if (row.gpu != gpu)
      others.insert(row.gpu);
  if (!others.empty())
    note(database + " holds rows of several GPUs (" + join(others, ", ") +
         ", " + gpu + "): using those of " + gpu + ", the newest");
  llvm::erase_if(matching, [&](const Row &r) { return r.gpu != gpu; });

  // The default variant: the schedule a plain compile picks.
  CudaKernels defaultKernels;
  int64_t defaultChunk = 0;
  if (!emitKernels(specOp, request, defaultKernels, defaultChunk, error))
    return fail(error);
  std::vector<Variant> variants(1);
  variants[0].request = request;
  variants[0].request.chunkSize = defaultChunk;
  variants[0].schedule = Schedule::of(variants[0].request);
  variants[0].dispatch.isDefault = true;

  // Each bucket's winner; equal schedules share a variant.
  std::map<std::string, std::string> measuredCode; // symbol -> code hash
  int buckets = 0;
  for (const BucketResult &result : bucketResults(matching)) {
    if (!result.best)
      continue;
    std::optional<Schedule> schedule = Schedule::fromMap(result.best->schedule);
    if (!schedule) {
      note(database + ":" + Twine(result.best->line) +
           ": a schedule of other knobs than this rkc's; bucket " +
           result.bucket + " runs the default");
      continue;
    }
    ++buckets;
    std::string summary = formatv("{0:f3} ms", result.best->medianMs);
    if (result.defaultRow && result.defaultRow->status == "ok" &&
        result.defaultRow != result.best)
      summary += formatv(", default {0:f3} ms", result.defaultRow->medianMs);
    auto it = llvm::find_if(
        variants, [&](const Variant &v) { return v.schedule == *schedule; });
    if (it == variants.end()) {
      Variant v;
      v.schedule = *schedule;
      v.request = request;
      schedule->applyTo(v.request);
      variants.push_back(std::move(v));
      it = variants.end() - 1;
    }
    it->dispatch.buckets.emplace_back(result.bucket, summary);
    if (!result.best->codeHash.empty())
      measuredCode[name + "__" + schedule->tag()] = result.best->codeHash;
  }
  if (variants.size() == 1) {
    note(buckets ? "the default schedule is the fastest in every bucket " +
                       database + " tuned for @" + name +
                       ": compiling it alone"
                 : database + " has no schedule of @" + name +
                       " that passed its check: compiling the default "
                       "schedule only");
    return compileSpec(specOp, request, log);
  }

  // Lower and emit every variant under its own symbol.
  for (size_t i = 0; i < variants.size();) {
    Variant &v = variants[i];
    v.dispatch.symbol = name + "__" + v.schedule.tag();
    v.dispatch.schedule = v.schedule.describe();
    OwningOpRef<ModuleOp> holder;
    rec::RecurrenceOp renamed =
        renamedSpec(specOp, v.dispatch.symbol, holder);
    int64_t chunk = 0;
    if (!emitKernels(renamed, v.request, v.kernels, chunk, error)) {
      if (v.dispatch.isDefault)
        return fail(error);
      note(v.dispatch.symbol + " no longer compiles (" + error +
           "): its buckets run the default");
      variants.erase(variants.begin() + i);
      continue;
    }
    auto measured = measuredCode.find(v.dispatch.symbol);
    if (measured != measuredCode.end() &&
        measured->second != codeHash(v.kernels))
      note(v.dispatch.symbol + " was measured on code that this rkc "
           "generates differently" +
           (request.products != CompileRequest().products
                ? ": `rkc tune` measures " + CompileRequest().products +
                      " products, not --products " + request.products
                : ": re-run rkc tune to measure it again"));
    ++i;
  }
  if (variants.size() == 1)
    return compileSpec(specOp, request, log);

  // What the dispatcher reads from the arguments.
  SpecPlan plan = SpecPlan::build(specOp);
  std::vector<std::pair<std::string, int64_t>> params = plan.params;
  for (const std::string &p : request.params) {
    size_t eq = p.find('=');
    long long value = 0;
    if (eq != std::string::npos &&
        !StringRef(p).substr(eq + 1).getAsInteger(10, value))
      for (auto &[key, v] : params)
        if (key == p.substr(0, eq))
          v = value;
  }
  DispatchSpec dispatch;
  dispatch.name = name;
  for (const SpecPlan::Input &in : plan.inputs) {
    dispatch.inputs.emplace_back(in.name, in.rate == rec::Rate::head ? 0 : 2);
    if (dispatch.tokenInput.empty() && in.rate != rec::Rate::head) {
      dispatch.tokenInput = in.name;
      if (in.rate == rec::Rate::substep)
        dispatch.rowsPerToken = plan.substepRows(params);
    }
  }
  if (dispatch.tokenInput.empty())
    return fail("@" + name + " has no per-token input to find a call's "
                "shape bucket from");

  const std::string &outDir = request.outDir;
  std::string base = outDir + "/" + name;
  if (std::error_code ec = sys::fs::create_directories(outDir + "/rkc"))
    return fail("cannot create " + outDir + ": " + ec.message());
  if (!writeFile(base + ".h", defaultKernels.header, error) ||
      !writeFile(base + ".json", defaultKernels.manifest, error) ||
      !writeRuntime(outDir, error))
    return fail(error);
  log << "rkc compile: @" << name << " -> " << outDir << ", tuned by "
      << database << " (" << gpu << ", rkc " << version << ", " << buckets
      << (buckets == 1 ? " bucket" : " buckets") << ")\n";
  for (const Variant &v : variants)
    log << "  variant   " << v.dispatch.symbol << ": " << v.dispatch.schedule
        << (v.dispatch.isDefault ? " (the default)" : "") << "\n";
  std::vector<std::tuple<int64_t, int64_t, std::string>> routes;
  for (const Variant &v : variants)
    for (auto &[bucket, summary] : v.dispatch.buckets) {
      int64_t bh = 0, t = 0;
      parseBucket(bucket, bh, t);
      routes.emplace_back(bh, t,
                          bucket + " -> " + v.dispatch.symbol + " (" +
                              summary + ")");
    }
  llvm::sort(routes);
  for (auto &[bh, t, route] : routes)
    log << "  dispatch  " << route << "\n";
  log << "  dispatch  any other bucket -> " << variants[0].dispatch.symbol
      << "\n";

  std::string nvcc = request.noFatbin ? std::string() : findNvcc(request.nvcc);
  if (nvcc.empty() && !request.noFatbin)
    log << "  nvcc not found: the variants are written without kernels "
           "(pass --nvcc)\n";
  else if (!nvcc.empty())
    log << "  nvcc      " << nvcc << " (" << request.arch << " + PTX) ...\n";
  log.flush();
  for (const Variant &v : variants)
    if (!writeFile(outDir + "/" + v.dispatch.symbol + ".h", v.kernels.header,
                   error) ||
        !writeFile(outDir + "/" + v.dispatch.symbol + ".cu",
                   v.kernels.device, error))
      return fail(error);
  // The fatbins, one nvcc a variant at once.
  std::vector<std::string> images(variants.size()), errors(variants.size());
  if (!nvcc.empty()) {
    std::vector<std::thread> builds;
    for (size_t i = 0; i < variants.size(); ++i)
      builds.emplace_back([&, i] {
        buildFatbin(nvcc, request.arch, outDir, variants[i].dispatch.symbol,
                    images[i], errors[i]);
      });
    for (std::thread &t : builds)
      t.join();
    for (const std::string &why : errors)
      if (!why.empty())
        return fail(why);
  }
  std::vector<DispatchVariant> dispatchVariants;
  for (auto [v, image] : llvm::zip_equal(variants, images)) {
    const std::string &symbol = v.dispatch.symbol;
    if (!writeFile(outDir + "/" + symbol + "_launch.inc",
                   launcherSource(symbol, nvcc.empty() ? nullptr : &image,
                                  v.kernels),
                   error))
      return fail(error);
    log << "  wrote     " << symbol << ".h, " << symbol << ".cu, ";
    if (!nvcc.empty())
      log << symbol << ".fatbin (" << image.size() << " B), ";
    log << symbol << "_launch.inc\n";
    dispatchVariants.push_back(v.dispatch);
  }
  if (!writeFile(base + "_launch.c",
                 dispatcherSource(dispatch, dispatchVariants,
                                  sys::path::filename(database)),
                 error))
    return fail(error);
  log << "  wrote     " << name << ".h, " << name << ".json, " << name
      << "_launch.c, rkc/runtime.h, rkc/runtime.c, rkc/tile.cuh\n";
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
  request.prefetch = prefetch;
  request.prepValueTile = prepValueTile;
  request.factorProducts = factorProducts;
  request.sinkRowScales = sinkRowScales;
  request.decodeBlocks = decodeBlocks;
  request.decodeQuads = decodeQuads;
  request.decodeRawRows = decodeRawRows;
  request.elementwiseQuads = elementwiseQuads;
  request.pairGrams = pairGrams;
  request.padAddendRows = padAddendRows;
  request.prepBlocks = prepBlocks;
  request.scanSegments = scanSegments;
  request.products = products;
  request.splitScan = splitScan;
  request.outPhase = outPhase;
  request.outValueLoop = outValueLoop;
  request.keepRows = keepRows;
  request.params.assign(params.begin(), params.end());
  request.noFatbin = noFatbin;
  if (request.chunkSize < 0 || (chunkSize.getNumOccurrences() && !request.chunkSize)) {
    errs() << "rkc compile: error: --chunk-size must be a positive number of tokens\n";
    return 1;
  }
  if (!tuningPath.empty())
    return compileTuned(spec.recurrence, request, tuningPath, outs());
  return compileSpec(spec.recurrence, request, outs());
}

} // namespace rkc::cli
