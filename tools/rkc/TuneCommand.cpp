//===- TuneCommand.cpp - rkc tune: measure a spec's schedules -------------===//
//
// Enumerates the schedule space (Tuning.h), drops the schedules the lowering
// rejects (tiles over the shared-memory limit), compiles the others in
// parallel with nvcc, checks each on GPU 0 against the float64 interpreter,
// times those that pass with CUDA events at every --shape, and appends one
// JSON line a (schedule, shape bucket) to the database. A rerun skips what
// the database already has; `rkc compile --tuning` reads it back.
//
// Everything GPU-side goes through the runtime's dlopen'ed driver: each
// candidate is built into a shared library of its launcher and called as an
// engine would call it.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "DeviceArgs.h"
#include "Tuning.h"

#include "Interpreter/Backends.h"
#include "Interpreter/RandomInputs.h"
#include "rkc/runtime.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <thread>

using namespace llvm;
using namespace mlir;

namespace rkc::cli {

cl::SubCommand tuneCommand("tune",
                           "Measure a spec's schedules on the GPU and record "
                           "the fastest per shape bucket");
cl::OptionCategory tuneCategory("rkc tune options");

namespace {

using namespace tuning;

cl::opt<std::string> specPath(cl::Positional, cl::sub(tuneCommand),
                              cl::init(""),
                              cl::desc("<spec.mlir> (default: the embedded "
                                       "EDA spec)"),
                              cl::cat(tuneCategory));
cl::opt<std::string> specName("spec-name", cl::sub(tuneCommand),
                              cl::desc("Recurrence to tune when the file "
                                       "holds several"),
                              cl::cat(tuneCategory));
cl::list<std::string> shapeArgs(
    "shape", cl::sub(tuneCommand),
    cl::desc("A problem to time at (repeatable): B sequences of T tokens, H "
             "key heads, HV value heads (default H)"),
    cl::value_desc("B=1,T=8192,H=32[,HV=32]"), cl::cat(tuneCategory));
cl::opt<std::string> dbPath("db", cl::sub(tuneCommand),
                            cl::desc("The database (JSON lines) to read and "
                                     "append to"),
                            cl::value_desc("tuning.jsonl"),
                            cl::cat(tuneCategory));
cl::opt<int64_t> dk("dk", cl::sub(tuneCommand), cl::init(128),
                    cl::desc("Key dimension"), cl::cat(tuneCategory));
cl::opt<int64_t> dv("dv", cl::sub(tuneCommand), cl::init(128),
                    cl::desc("Value dimension"), cl::cat(tuneCategory));
cl::list<std::string> params("param", cl::sub(tuneCommand),
                             cl::desc("Override a spec parameter, e.g. "
                                      "--param n=3"),
                             cl::value_desc("name=value"),
                             cl::cat(tuneCategory));
cl::opt<unsigned> jobs("jobs", cl::sub(tuneCommand), cl::init(0),
                       cl::desc("nvcc processes at once (default: the "
                                "number of cores)"),
                       cl::cat(tuneCategory));
cl::opt<unsigned> budget("budget", cl::sub(tuneCommand), cl::init(0),
                         cl::desc("Compile and measure at most N schedules, "
                                  "the default first, then its nearest "
                                  "neighbours (default: all)"),
                         cl::value_desc("N"), cl::cat(tuneCategory));
cl::opt<unsigned> reps("reps", cl::sub(tuneCommand), cl::init(20),
                       cl::desc("Timed runs a schedule and shape"),
                       cl::cat(tuneCategory));
cl::opt<unsigned> warmup("warmup", cl::sub(tuneCommand), cl::init(3),
                         cl::desc("Untimed runs before them"),
                         cl::cat(tuneCategory));
cl::opt<std::string> winnersPath(
    "winners", cl::sub(tuneCommand),
    cl::desc("Write the winners table (markdown) here (default: the "
             "database's name with .winners.md)"),
    cl::value_desc("file.md"), cl::cat(tuneCategory));
cl::opt<std::string> workDir("work", cl::sub(tuneCommand),
                             cl::desc("Build the candidates here and keep "
                                      "them (default: a temporary folder, "
                                      "removed)"),
                             cl::value_desc("dir"), cl::cat(tuneCategory));
cl::opt<std::string> archArg("arch", cl::sub(tuneCommand),
                             cl::desc("GPU architecture (default: GPU 0's, "
                                      "sm_90a on compute capability 9.0)"),
                             cl::cat(tuneCategory));
cl::opt<std::string> nvccPath("nvcc", cl::sub(tuneCommand),
                              cl::desc("The nvcc to build with (default: "
                                       "$CUDA_HOME/bin/nvcc, "
                                       "/usr/local/cuda/bin/nvcc, PATH)"),
                              cl::cat(tuneCategory));
cl::opt<std::string> gpuArg("gpu", cl::sub(tuneCommand),
                            cl::desc("The GPU name database rows are keyed by "
                                     "(default: GPU 0's), e.g. to plan with "
                                     "--dry-run where there is none"),
                            cl::cat(tuneCategory));
cl::opt<bool> dryRun("dry-run", cl::sub(tuneCommand),
                     cl::desc("Print the plan (the schedules, those "
                              "shared memory rules out, those the database "
                              "has) and stop: no GPU, no nvcc"),
                     cl::cat(tuneCategory));

/// The bound on the relative Frobenius error of bf16 kernels against the
/// float64 interpreter (test/gpu/check.py uses the same).
constexpr double kCheckBound = 5e-3;

int fail(const Twine &message) {
  errs() << "rkc tune: error: " << message << "\n";
  return 1;
}

/// One schedule of the search and what became of it.
struct Candidate {
  Schedule schedule;
  bool isDefault = false;
  std::string symbol; // NAME__TAG
  CompileRequest request;
  CudaKernels kernels;
  std::string codeHash;
  /// Why the lowering rejects it (empty: it lowers).
  std::string pruned;
  /// Indices of the shapes to measure (not in the database); per shape,
  /// the database row that makes it skip, if any.
  std::vector<size_t> pending;
  std::vector<const Row *> known;
  bool overBudget = false;

  // Built by the compile phase.
  std::string folder, library, image;
  bool built = false;
  std::string buildError;

  // The reference check.
  enum class State { Pending, Ok, Failed, Pruned } state = State::Pending;
  std::string error;
  double checkO = 0, checkState = 0;
  rkc_kernel_properties kernel = {};
  rkc_status (*fwd)(CUstream, const void *) = nullptr;
  const char *(*lastError)() = nullptr;
};

/// The last lines of a build log, for a database row.
std::string logTail(StringRef path) {
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return "";
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  std::string text;
  for (size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size();
       ++i)
    text += (text.empty() ? "" : " | ") + lines[i].trim().str();
  return text;
}

/// nvcc: the fatbin, then the launcher (the fatbin embedded) and the runtime
/// as a shared library. Touches no MLIR, so it runs on worker threads.
bool buildCandidate(Candidate &c, const std::string &nvcc,
                    const std::string &arch, std::string &error) {
  std::string log = c.folder + "/nvcc.log";
  if (!buildFatbin(nvcc, arch, c.folder, c.symbol, c.image, error, log)) {
    std::string tail = logTail(log);
    error = "nvcc failed" + (tail.empty() ? "" : ": " + tail);
    return false;
  }
  std::string launcher = c.folder + "/" + c.symbol + "_launch.c";
  if (!writeFile(launcher, launcherSource(c.symbol, &c.image, c.kernels),
                 error))
    return false;
  c.library = c.folder + "/lib" + c.symbol + ".so";
  SmallVector<std::string> argv = {nvcc,     "-shared", "-Xcompiler",
                                   "-fPIC",  "-O2",     "-o",
                                   c.library, launcher, c.folder +
                                                            "/rkc/runtime.c",
                                   "-I",     c.folder,  "-ldl",
                                   "-lpthread"};
  SmallVector<StringRef> refs(argv.begin(), argv.end());
  std::string libraryLog = c.folder + "/library.log";
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(libraryLog),
                                          StringRef(libraryLog)};
  std::string message;
  if (sys::ExecuteAndWait(nvcc, refs, std::nullopt, redirects, 0, 0,
                          &message)) {
    std::string tail = logTail(libraryLog);
    error = "building the launcher failed" +
            (tail.empty() ? message.empty() ? "" : ": " + message
                          : ": " + tail);
    return false;
  }
  return true;
}

/// bf16 bit patterns as float64.
std::vector<double> fromBF16(const std::vector<uint16_t> &bits) {
  std::vector<double> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    uint32_t u = static_cast<uint32_t>(bits[i]) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    values[i] = f;
  }
  return values;
}

/// A problem on the device: inputs, o (bf16), states (f32), and the args
/// struct describing them.
struct DeviceProblem {
  DeviceBuffers buffers;
  ArgsBlock args;
  void *o = nullptr, *finalState = nullptr;
  size_t oBytes = 0, stateBytes = 0;
  std::vector<int64_t> oShape, stateShape;
  explicit DeviceProblem(size_t inputs) : args(inputs) {}
};

/// Allocates o, final_state and (when `initial` is given, else zeros)
/// initial_state for `problem`, B·T·HV·dv and N·HV·dk·dv elements.
bool allocateOutputs(DeviceProblem &problem, int64_t B, int64_t T,
                     int64_t HV, int64_t dkSize, int64_t dvSize,
                     const HostTensor *initial, std::string &error) {
  problem.oShape = {B, T, HV, dvSize};
  problem.stateShape = {B, HV, dkSize, dvSize};
  problem.oBytes = static_cast<size_t>(B * T * HV * dvSize) * 2;
  problem.stateBytes = static_cast<size_t>(B * HV * dkSize * dvSize) * 4;
  void *init;
  if (!problem.buffers.alloc(&problem.o, problem.oBytes, error) ||
      !problem.buffers.alloc(&problem.finalState, problem.stateBytes,
                             error) ||
      !problem.buffers.alloc(&init, problem.stateBytes, error))
    return false;
  rkc_status status;
  if (initial) {
    std::vector<float> values(initial->values.begin(),
                              initial->values.end());
    status = rkc_device_upload(init, values.data(), problem.stateBytes);
  } else {
    status = rkc_device_memset_async(init, 0, problem.stateBytes, nullptr);
  }
  if (status || rkc_device_synchronize()) {
    error = rkc_last_error();
    return false;
  }
  problem.args.o() =
      rkc_contiguous(problem.o, RKC_BF16, 4, problem.oShape.data());
  ArgsTail &tail = problem.args.tail();
  tail.initialState = static_cast<const float *>(init);
  tail.finalState = static_cast<float *>(problem.finalState);
  tail.scale = 0; // the spec's
  return true;
}

/// The timing problem of `shape`: realistic random bf16 inputs drawn for a
/// block of tokens and repeated along T (the kernels' speed does not depend
/// on the values, and drawing B·T·H·d float64 values would take minutes).
bool timingProblem(const SpecPlan &plan, const TuneShape &shape,
                   const RunOptions &options, int64_t rowsPerToken,
                   DeviceProblem &problem, std::string &error) {
  RandomShape block;
  block.batch = 1;
  block.length = std::min<int64_t>(shape.length, 512);
  block.keyHeads = shape.keyHeads;
  block.valueHeads = shape.valueHeads;
  block.dk = shape.dk;
  block.dv = shape.dv;
  block.initialState = false;
  block.dtype = DType::BF16;
  block.seed = 11;
  TensorMap drawn = randomInputs(plan, block, options);
  for (auto [i, in] : llvm::enumerate(plan.inputs)) {
    const HostTensor &t = drawn.at(in.name);
    std::vector<int64_t> dims = t.shape;
    if (in.rate != rec::Rate::head) {
      dims[0] = shape.batch;
      dims[1] = shape.length * (in.rate == rec::Rate::substep ? rowsPerToken
                                                              : 1);
    }
    int64_t elements = 1;
    for (int64_t d : dims)
      elements *= d;
    size_t bytes = static_cast<size_t>(elements) * 2;
    std::vector<uint16_t> bits = halfBits(t);
    size_t blockBytes = bits.size() * 2;
    void *device;
    if (!problem.buffers.alloc(&device, bytes, error))
      return false;
    for (size_t offset = 0; offset < bytes; offset += blockBytes)
      if (rkc_device_upload(static_cast<char *>(device) + offset, bits.data(),
                            std::min(blockBytes, bytes - offset))) {
        error = rkc_last_error();
        return false;
      }
    problem.args.input(i) = rkc_contiguous(
        device, RKC_BF16, static_cast<int32_t>(dims.size()), dims.data());
  }
  return allocateOutputs(problem, shape.batch, shape.length,
                         shape.valueHeads, shape.dk, shape.dv, nullptr,
                         error);
}

double quantile(const std::vector<double> &sorted, double p) {
  double position = p * static_cast<double>(sorted.size() - 1);
  size_t below = static_cast<size_t>(position);
  size_t above = std::min(below + 1, sorted.size() - 1);
  double fraction = position - static_cast<double>(below);
  return sorted[below] * (1 - fraction) + sorted[above] * fraction;
}

/// The prefill kernels of a candidate's module, by their names in its
/// source (`rkc_SYMBOL_prefill_kernel` and its forms, e.g. one for 16-bit
/// outputs).
std::vector<std::string> prefillKernels(const Candidate &c) {
  std::vector<std::string> names;
  std::string prefix = "rkc_" + c.symbol + "_prefill_kernel";
  StringRef text = c.kernels.device;
  for (size_t at = text.find(prefix); at != StringRef::npos;
       at = text.find(prefix, at + 1)) {
    size_t end = at + prefix.size();
    while (end < text.size() && (isAlnum(text[end]) || text[end] == '_'))
      ++end;
    std::string name = text.slice(at, end).str();
    // Kernels only: definitions after `__global__`.
    size_t start = text.rfind('}', at);
    if (!text.slice(start == StringRef::npos ? 0 : start, at)
             .contains("__global__"))
      continue;
    if (!llvm::is_contained(names, name))
      names.push_back(name);
  }
  return names;
}

/// A launch the device cannot run with this schedule: over the shared
/// memory it allows (the runtime's RKC_ERROR_RESOURCES) or over its
/// registers (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701).
bool outOfResources(rkc_status status, StringRef message) {
  return status == RKC_ERROR_RESOURCES ||
         (status == RKC_ERROR_CUDA && message.contains("(701)"));
}

/// `text` with every occurrence of `symbol` read as `name`.
std::string replaceSymbol(StringRef text, StringRef symbol, StringRef name) {
  std::string out;
  for (size_t at; (at = text.find(symbol)) != StringRef::npos;) {
    out += text.take_front(at).str() + name.str();
    text = text.drop_front(at + symbol.size());
  }
  return out + text.str();
}

std::string withoutSymbol(const std::string &error, const std::string &sym) {
  std::string prefix = "@" + sym + ": ";
  return StringRef(error).starts_with(prefix) ? error.substr(prefix.size())
                                              : error;
}

/// The rows of one configuration: this spec (hash), GPU, architecture,
/// rkc version, dk, dv and bf16.
std::vector<Row> configurationRows(const std::vector<Row> &rows,
                                   const std::string &hash,
                                   const std::string &gpu,
                                   const std::string &arch,
                                   const std::string &version) {
  std::vector<Row> group;
  for (const Row &row : rows)
    if (row.specHash == hash && row.gpu == gpu && row.arch == arch &&
        row.rkcVersion == version && row.shape.dk == dk &&
        row.shape.dv == dv && row.dtype == "bf16")
      group.push_back(row);
  return group;
}

/// The winners: this run's configuration on stdout, every configuration of
/// the database (read again) in the winners file; returns `exitCode`, or 1
/// where writing fails. `appended`: whether this run added rows.
int writeWinners(std::vector<Row> &rows, const std::string &hash,
                 const std::string &gpu, const std::string &arch,
                 const std::string &version, bool appended, int exitCode) {
  std::string error;
  if (!readDatabase(dbPath, rows, error))
    return fail(error);
  outs() << winnersMarkdown(
      configurationRows(rows, hash, gpu, arch, version), dbPath);
  std::string winners = winnersPath;
  if (winners.empty()) {
    StringRef db = dbPath;
    winners = (db.ends_with(".jsonl") ? db.drop_back(6) : db).str() +
              ".winners.md";
  }
  if (!writeFile(winners, winnersMarkdown(rows, sys::path::filename(dbPath)),
                 error))
    return fail(error);
  errs() << "rkc tune: " << (appended ? "appended to " : "nothing to measure in ")
         << dbPath << "; wrote " << winners << "\n";
  return exitCode;
}

} // namespace

int runTune() {
  // Options.
  if (dbPath.empty())
    return fail("--db is required: the database to read and append to, "
                "e.g. --db tuning.jsonl");
  if (shapeArgs.empty())
    return fail("give at least one --shape, e.g. --shape B=1,T=8192,H=32");
  if (dk % 32 || dv % 32 || dk < 32 || dv < 32 || dk > 256 || dv > 256)
    return fail("--dk and --dv must be multiples of 32 from 32 to 256");
  if (reps < 1)
    return fail("--reps must be at least 1");
  std::vector<TuneShape> shapes;
  std::vector<std::string> buckets;
  for (const std::string &text : shapeArgs) {
    TuneShape shape;
    shape.dk = dk;
    shape.dv = dv;
    std::string error;
    if (!parseTuneShape(text, shape, error))
      return fail("--shape '" + text + "': " + error);
    std::string bucket = bucketOf(shape);
    if (llvm::is_contained(buckets, bucket)) {
      errs() << "rkc tune: note: --shape " << text << " falls in bucket "
             << bucket << " with an earlier shape: skipped\n";
      continue;
    }
    shapes.push_back(shape);
    buckets.push_back(bucket);
  }
  RunOptions runOptions;
  std::string paramError;
  if (!parseParamArgs(params, runOptions, paramError))
    return fail(paramError);

  std::vector<Row> rows;
  std::string error;
  if (!readDatabase(dbPath, rows, error))
    return fail(error);

  MLIRContext context;
  SpecFile spec;
  if (!loadSpecArgument(context, specPath, specName, spec))
    return 1;
  SpecPlan plan = SpecPlan::build(spec.recurrence);
  std::string name = plan.name;

  // The GPU names the rows; a dry run needs none, nor does a run whose
  // database has every schedule already, given --gpu and --arch (it
  // writes the winners table).
  rkc_device_properties device = {};
  bool haveGpu = false;
  std::string gpuError;
  const bool named = !gpuArg.empty() && !archArg.empty();
  if (!dryRun || !named) {
    if (rkc_device_open(0) == RKC_SUCCESS &&
        rkc_device_get_properties(0, &device) == RKC_SUCCESS)
      haveGpu = true;
    else
      gpuError = rkc_last_error();
  }
  if (!dryRun && !haveGpu && !named)
    return fail("no CUDA driver/GPU: " + gpuError +
                " (with --gpu and --arch, a database that has every "
                "schedule needs none)");
  std::string gpu = !gpuArg.empty() ? gpuArg.getValue()
                    : haveGpu      ? std::string(device.name)
                                   : std::string("(none)");
  std::string arch = archArg;
  if (arch.empty())
    arch = !haveGpu                                  ? "sm_90a"
           : device.major == 9 && device.minor == 0 ? "sm_90a"
                                                    : formatv("sm_{0}{1}",
                                                              device.major,
                                                              device.minor)
                                                          .str();
  if (!StringRef(arch).starts_with("sm_"))
    return fail("--arch must name an sm_ architecture, got '" + arch + "'");

  // The default schedule: what a plain `rkc compile` picks.
  CompileRequest base;
  base.dk = dk;
  base.dv = dv;
  base.arch = arch;
  base.params.assign(params.begin(), params.end());
  CudaKernels defaultKernels;
  int64_t defaultChunk = 0;
  if (!emitKernels(spec.recurrence, base, defaultKernels, defaultChunk,
                   error))
    return fail(error);
  CompileRequest defaultRequest = base;
  defaultRequest.chunkSize = defaultChunk;
  Schedule defaultSchedule = Schedule::of(defaultRequest);
  std::string hash = specHash(spec.recurrence, base.params);
  std::string version = rkcVersion();

  raw_ostream &out = dryRun ? outs() : errs();
  out << "rkc tune: @" << name << " from "
      << (specPath.empty() ? std::string("embedded eda.mlir")
                           : specPath.getValue())
      << (dryRun ? " (dry run)" : "") << "\n"
      << "  key       spec_hash=" << hash << " dk=" << dk << " dv=" << dv
      << " dtype=bf16 arch=" << arch << " rkc_version=" << version
      << " gpu=\"" << gpu << "\"\n";
  if (dryRun && !haveGpu && gpuArg.empty())
    out << "  note      no GPU (" << gpuError
        << "): rows are planned for GPU \"(none)\"; pass --gpu NAME to "
           "match the database\n";
  for (auto [shape, bucket] : llvm::zip_equal(shapes, buckets))
    out << "  shape     " << shape.describe() << " (bucket " << bucket
        << ")\n";

  // Factored products where they change the kernels: for a spec with no
  // products that share a left operand (EDA, DPLR, linear attention) the
  // factored schedules would compile the same code again.
  std::vector<Schedule> space = enumerateSchedules(base);
  bool unfactorable = false;
  {
    CompileRequest factored = defaultRequest;
    factored.factorProducts = 1;
    CudaKernels factoredKernels;
    int64_t chunk = 0;
    if (emitKernels(spec.recurrence, factored, factoredKernels, chunk,
                    error) &&
        factoredKernels.device == defaultKernels.device) {
      unfactorable = true;
      llvm::erase_if(space, [](const Schedule &s) {
        return s.get("factor_products") != 0;
      });
    }
  }
  // The candidates, lowered (a schedule the lowering rejects is pruned, and
  // so is one whose kernels, its symbol aside, are an earlier one's: a knob
  // that changes nothing for this spec or with these other values, e.g. the
  // prep's blocks an SM where its shared memory allows no more, or without
  // a prep kernel).
  std::vector<Candidate> candidates;
  std::map<std::string, std::string> sameKernels; // code hash -> schedule
  for (const Schedule &schedule : orderCandidates(defaultSchedule, space)) {
    Candidate c;
    c.schedule = schedule;
    c.isDefault = schedule == defaultSchedule;
    c.symbol = name + "__" + schedule.tag();
    c.request = base;
    schedule.applyTo(c.request);
    OwningOpRef<ModuleOp> holder;
    rec::RecurrenceOp renamed = renamedSpec(spec.recurrence, c.symbol, holder);
    int64_t chunk = 0;
    if (emitKernels(renamed, c.request, c.kernels, chunk, error)) {
      c.codeHash = codeHash(c.kernels);
      CudaKernels named = c.kernels;
      for (std::string *text : {&named.header, &named.device, &named.launcher})
        *text = replaceSymbol(replaceSymbol(*text, c.symbol, name),
                              StringRef(c.symbol).upper(), StringRef(name).upper());
      auto [it, first] =
          sameKernels.try_emplace(codeHash(named), schedule.describe());
      if (!first)
        c.pruned = "the same kernels as " + it->second;
    } else {
      c.pruned = withoutSymbol(error, c.symbol);
    }
    candidates.push_back(std::move(c));
  }
  out << "  space     " << describeSpace() << ": " << candidates.size()
      << " schedules valid for dv = " << dv
      << (unfactorable ? ", factor-products 0 only (1 compiles the same "
                         "kernels for this spec)"
                       : "")
      << "\n"
      << "  default   " << defaultSchedule.describe() << "\n";

  // What to measure: each (candidate, shape) the database lacks.
  auto plannedRow = [&](const Candidate &c, size_t shape) {
    Row row;
    row.spec = name;
    row.specHash = hash;
    row.shape = shapes[shape];
    row.bucket = buckets[shape];
    row.dtype = "bf16";
    row.gpu = gpu;
    row.arch = arch;
    row.rkcVersion = version;
    row.codeHash = c.codeHash;
    row.schedule = c.schedule.toMap();
    row.isDefault = c.isDefault;
    return row;
  };
  unsigned toBuild = 0, prunedCount = 0, knownCount = 0, overBudget = 0;
  for (Candidate &c : candidates) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      const Row *known = findMeasurement(rows, plannedRow(c, s));
      c.known.push_back(known);
      if (!known)
        c.pending.push_back(s);
    }
    if (c.pending.empty())
      ++knownCount;
    else if (!c.pruned.empty())
      ++prunedCount;
    else if (budget && toBuild >= budget) {
      c.overBudget = true;
      ++overBudget;
    } else {
      ++toBuild;
    }
  }
  if (dryRun) {
    for (auto [i, c] : llvm::enumerate(candidates)) {
      out << formatv("  [{0,2}/{1}] ", i + 1, candidates.size())
          << c.schedule.describe() << (c.isDefault ? " (default)" : "")
          << ": ";
      if (c.pending.empty()) {
        out << "skip (in the database";
        for (auto [s, known] : llvm::enumerate(c.known)) {
          out << (shapes.size() > 1 ? "; " + buckets[s] : std::string()) << ": "
              << known->status;
          if (known->status == "ok")
            out << formatv(" {0:f3} ms", known->medianMs);
        }
        out << ")\n";
        continue;
      }
      if (!c.pruned.empty())
        out << "pruned: " << c.pruned;
      else if (c.overBudget)
        out << "not measured (--budget " << budget << ")";
      else
        out << "measure";
      if (c.pending.size() < shapes.size()) {
        out << " at";
        for (size_t s : c.pending)
          out << " " << buckets[s];
        out << "; the database has the other buckets";
      }
      out << "\n";
    }
  }
  out << "  plan      " << toBuild << " to compile and measure, "
      << prunedCount << " pruned (by the lowering, or the same kernels as "
                         "another), " << knownCount
      << " in the database";
  if (overBudget)
    out << ", " << overBudget << " over --budget";
  out << "\n";
  if (dryRun) {
    std::vector<Row> group = configurationRows(rows, hash, gpu, arch, version);
    if (!group.empty())
      out << "\n" << winnersMarkdown(group, dbPath);
    return 0;
  }
  if (toBuild && !haveGpu)
    return fail("no CUDA driver/GPU: " + gpuError + "; " +
                std::to_string(toBuild) + " schedules left to measure");

  // Rows are appended as soon as they are known, so that an interrupted
  // run resumes where it stopped.
  unsigned appendErrors = 0;
  auto record = [&](const Candidate &c, size_t shape, StringRef status,
                    StringRef why, const std::vector<double> *sorted) {
    Row row = plannedRow(c, shape);
    row.status = status.str();
    row.error = why.str();
    if (sorted) {
      row.medianMs = quantile(*sorted, 0.5);
      row.p20Ms = quantile(*sorted, 0.2);
      row.p80Ms = quantile(*sorted, 0.8);
      row.extra["reps"] = static_cast<int64_t>(sorted->size());
    }
    if (c.state == Candidate::State::Ok || c.kernel.registers) {
      row.extra["registers"] = c.kernel.registers;
      row.extra["local_bytes"] = c.kernel.local_bytes;
    }
    if (c.state == Candidate::State::Ok) {
      row.extra["check_o"] = c.checkO;
      row.extra["check_state"] = c.checkState;
    }
    row.time = isoTimeNow();
    std::string why2;
    if (!appendRow(dbPath, row, why2) && !appendErrors++)
      errs() << "rkc tune: error: " << why2 << "\n";
  };
  for (Candidate &c : candidates)
    if (!c.pruned.empty())
      for (size_t s : c.pending)
        record(c, s, "pruned", c.pruned, nullptr);
  if (!toBuild)
    return appendErrors ? 1
                        : writeWinners(rows, hash, gpu, arch, version,
                                       prunedCount > 0, 0);
  std::string nvcc = findNvcc(nvccPath);
  if (nvcc.empty())
    return fail("nvcc not found (set CUDA_HOME or pass --nvcc)");

  // The work folder: one subfolder a candidate.
  std::string work = workDir;
  bool removeWork = work.empty();
  if (removeWork) {
    SmallString<128> path;
    if (std::error_code ec = sys::fs::createUniqueDirectory("rkc-tune", path))
      return fail("cannot create a temporary folder: " + ec.message());
    work = path.str().str();
  }
  scope_exit cleanup([&] {
    if (removeWork)
      sys::fs::remove_directories(work);
  });
  std::vector<Candidate *> building;
  for (Candidate &c : candidates) {
    if (c.pending.empty() || !c.pruned.empty() || c.overBudget)
      continue;
    c.folder = work + "/" + c.symbol;
    if (std::error_code ec = sys::fs::create_directories(c.folder))
      return fail("cannot create " + c.folder + ": " + ec.message());
    if (!writeFile(c.folder + "/" + c.symbol + ".h", c.kernels.header,
                   error) ||
        !writeFile(c.folder + "/" + c.symbol + ".cu", c.kernels.device,
                   error) ||
        !writeRuntime(c.folder, error))
      return fail(error);
    building.push_back(&c);
  }

  // Compile, `jobs` nvcc processes at once.
  unsigned workers = jobs ? jobs.getValue()
                          : std::max(1u, std::thread::hardware_concurrency());
  workers = std::min<unsigned>(workers, building.size());
  if (!building.empty())
    errs() << "rkc tune: compiling " << building.size() << " schedules with "
           << workers << " jobs in " << work << "\n";
  auto start = std::chrono::steady_clock::now();
  {
    std::atomic<size_t> next{0};
    std::mutex lock;
    size_t done = 0;
    auto worker = [&] {
      for (size_t i; (i = next++) < building.size();) {
        Candidate &c = *building[i];
        auto t0 = std::chrono::steady_clock::now();
        std::string why;
        bool ok = buildCandidate(c, nvcc, arch, why);
        double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
        std::lock_guard<std::mutex> guard(lock);
        c.built = ok;
        c.buildError = why;
        errs() << formatv("  [compiled {0}/{1}] ", ++done, building.size())
               << c.schedule.describe()
               << (ok ? formatv(" ({0:f1} s)", seconds).str()
                      : ": failed: " + why)
               << "\n";
      }
    };
    std::vector<std::thread> pool;
    for (unsigned j = 0; j < workers; ++j)
      pool.emplace_back(worker);
    for (std::thread &t : pool)
      t.join();
  }
  if (!building.empty())
    errs() << formatv("rkc tune: compiled in {0:f1} s\n",
                      std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());

  // The reference check: a small problem whose length is no multiple of any
  // chunk, two sequences from a nonzero state, bf16 inputs as timed.
  RandomShape checkShape;
  checkShape.batch = 2;
  checkShape.length = 203;
  checkShape.keyHeads = 2;
  checkShape.valueHeads = 2 * (shapes[0].valueHeads / shapes[0].keyHeads);
  checkShape.dk = dk;
  checkShape.dv = dv;
  checkShape.initialState = true;
  checkShape.dtype = DType::BF16;
  checkShape.seed = 7;
  TensorMap checkInputs, reference;
  DeviceProblem check(plan.inputs.size());
  if (!building.empty()) {
    checkInputs = randomInputs(plan, checkShape, runOptions);
    BackendOptions interp;
    if (!runBackend(spec.recurrence, interp, checkInputs, runOptions,
                    reference, error))
      return fail("the reference (float64 interpreter): " + error);
    for (auto [i, in] : llvm::enumerate(plan.inputs))
      if (!uploadTensor(checkInputs.at(in.name), check.buffers,
                        check.args.input(i), error))
        return fail(error);
    if (!allocateOutputs(check, checkShape.batch, checkShape.length,
                         checkShape.valueHeads, dk, dv,
                         &checkInputs.at("initial_state"), error))
      return fail(error);
  }

  // A kernel that faults loses the context for every later call: record
  // it, then stop (the database resumes after it).
  auto contextLost = [&](const Candidate &c, const std::string &why) {
    errs() << "rkc tune: error: " << c.schedule.describe()
           << " faulted on the GPU (" << why
           << "); the CUDA context is lost. It is recorded as failed: run "
              "rkc tune again to go on from there.\n";
    return 1;
  };

  size_t checked = 0, checking = 0;
  for (Candidate *c : building)
    checking += c->built;
  for (Candidate *cp : building) {
    Candidate &c = *cp;
    auto failAll = [&](Candidate::State state, const std::string &why) {
      c.state = state;
      c.error = why;
      for (size_t s : c.pending)
        record(c, s, state == Candidate::State::Pruned ? "pruned" : "failed",
               why, nullptr);
    };
    if (!c.built) {
      failAll(Candidate::State::Failed, "does not compile: " + c.buildError);
      continue;
    }
    std::string label = formatv("  [check {0}/{1}] ", ++checked, checking);
    void *handle = dlopen(c.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      c.fwd = reinterpret_cast<rkc_status (*)(CUstream, const void *)>(
          dlsym(handle, ("rkc_" + c.symbol + "_fwd").c_str()));
      c.lastError = reinterpret_cast<const char *(*)()>(
          dlsym(handle, "rkc_last_error"));
    }
    if (!c.fwd || !c.lastError) {
      failAll(Candidate::State::Failed,
              "cannot load " + c.library + ": " +
                  (handle ? "no rkc_" + c.symbol + "_fwd"
                          : std::string(dlerror())));
      errs() << label << c.schedule.describe() << ": " << c.error << "\n";
      continue;
    }
    // Registers decide how many threads a block may have: every prefill
    // kernel of the module must launch with the schedule's threads.
    std::string limit;
    for (const std::string &kernel : prefillKernels(c)) {
      // A kernel the driver cannot load is left to the check's launch,
      // which reports why.
      rkc_kernel_properties properties;
      if (rkc_kernel_get_properties(c.image.data(), kernel.c_str(),
                                    &properties))
        continue;
      c.kernel.registers =
          std::max(c.kernel.registers, properties.registers);
      c.kernel.local_bytes =
          std::max(c.kernel.local_bytes, properties.local_bytes);
      if (c.request.threads > properties.max_threads)
        limit = formatv("{0} uses {1} registers a thread: at most {2} "
                        "threads a block, not {3}",
                        kernel, properties.registers, properties.max_threads,
                        c.request.threads);
      else if (properties.static_shared_bytes + c.kernels.prefillSharedBytes >
               device.max_shared_bytes_optin)
        limit = formatv("{0} needs {1} bytes of shared memory; the GPU "
                        "allows {2}",
                        kernel,
                        properties.static_shared_bytes +
                            c.kernels.prefillSharedBytes,
                        device.max_shared_bytes_optin);
      if (!limit.empty())
        break;
    }
    if (!limit.empty()) {
      failAll(Candidate::State::Pruned, limit);
    } else {
      // Outputs start as NaN, so that a kernel writing nothing fails.
      rkc_status status =
          rkc_device_memset_async(check.o, 0xff, check.oBytes, nullptr);
      if (!status)
        status = rkc_device_memset_async(check.finalState, 0xff,
                                         check.stateBytes, nullptr);
      if (status)
        return fail(rkc_last_error());
      status = c.fwd(nullptr, check.args.data());
      if (outOfResources(status, c.lastError())) {
        failAll(Candidate::State::Pruned, c.lastError());
      } else if (status) {
        failAll(Candidate::State::Failed,
                formatv("rkc_{0}_fwd failed ({1}): {2}", c.symbol,
                        static_cast<int>(status), c.lastError()));
      } else if (rkc_device_synchronize()) {
        std::string why = rkc_last_error();
        failAll(Candidate::State::Failed, "the kernel faulted: " + why);
        return contextLost(c, why);
      } else {
        std::vector<uint16_t> oBits(check.oBytes / 2);
        std::vector<float> state(check.stateBytes / 4);
        if (rkc_device_download(oBits.data(), check.o, check.oBytes) ||
            rkc_device_download(state.data(), check.finalState,
                                check.stateBytes))
          return fail(rkc_last_error());
        HostTensor o(check.oShape), finalState(check.stateShape);
        o.values = fromBF16(oBits);
        finalState.values.assign(state.begin(), state.end());
        c.checkO = relativeError(o, reference.at("o"));
        c.checkState = relativeError(finalState, reference.at("final_state"));
        if (c.checkO <= kCheckBound && c.checkState <= kCheckBound)
          c.state = Candidate::State::Ok;
        else
          failAll(Candidate::State::Failed,
                  formatv("differs from the float64 interpreter: relative "
                          "error {0:e2} in o, {1:e2} in final_state (bound "
                          "{2:e0})",
                          c.checkO, c.checkState, kCheckBound));
      }
    }
    errs() << label << c.schedule.describe() << ": "
           << (c.state == Candidate::State::Ok
                   ? formatv("ok (error {0:e1} in o, {1:e1} in the state; "
                             "{2} registers)",
                             c.checkO, c.checkState, c.kernel.registers)
                         .str()
                   : (c.state == Candidate::State::Pruned ? "pruned: "
                                                          : "failed: ") +
                         c.error)
           << "\n";
  }

  // Timing, shape by shape: the L2 cache flushed (a memset of a buffer far
  // larger than it) before each timed run, outside the events.
  int exitCode = 0;
  size_t flushBytes =
      std::max<size_t>(size_t(256) << 20, size_t(4) * device.l2_bytes);
  DeviceBuffers flushBuffer;
  void *flush = nullptr;
  CUevent begin = nullptr, end = nullptr;
  size_t total = 0, measured = 0;
  for (Candidate *c : building)
    if (c->state == Candidate::State::Ok)
      total += c->pending.size();
  if (total && (!flushBuffer.alloc(&flush, flushBytes, error) ||
                rkc_event_create(&begin) || rkc_event_create(&end)))
    return fail(error.empty() ? rkc_last_error() : error);
  scope_exit destroyEvents([&] {
    rkc_event_destroy(begin);
    rkc_event_destroy(end);
  });
  int64_t rowsPerToken = plan.substepRows([&] {
    std::vector<std::pair<std::string, int64_t>> resolved = plan.params;
    for (auto &[key, value] : runOptions.params)
      for (auto &p : resolved)
        if (p.first == key)
          p.second = value;
    return resolved;
  }());
  for (size_t s = 0; s < shapes.size(); ++s) {
    std::vector<Candidate *> timed;
    for (Candidate *c : building)
      if (c->state == Candidate::State::Ok &&
          llvm::is_contained(c->pending, s))
        timed.push_back(c);
    if (timed.empty())
      continue;
    DeviceProblem problem(plan.inputs.size());
    if (!timingProblem(plan, shapes[s], runOptions, rowsPerToken, problem,
                       error)) {
      errs() << "rkc tune: error: " << shapes[s].describe() << ": " << error
             << "\n";
      exitCode = 1;
      measured += timed.size();
      continue;
    }
    std::optional<double> defaultMedian;
    if (const Row *known = candidates.front().known[s];
        known && known->status == "ok")
      defaultMedian = known->medianMs;
    for (Candidate *cp : timed) {
      Candidate &c = *cp;
      std::string label = formatv("  [{0}/{1}] ", ++measured, total);
      if (shapes.size() > 1)
        label += buckets[s] + " ";
      label += c.schedule.describe() + (c.isDefault ? " (default)" : "");
      rkc_status status = RKC_SUCCESS;
      for (unsigned w = 0; w < warmup && !status; ++w)
        status = c.fwd(nullptr, problem.args.data());
      std::vector<double> samples;
      for (unsigned r = 0; r < reps && !status; ++r) {
        float ms = 0;
        if (rkc_device_memset_async(flush, static_cast<unsigned char>(r),
                                    flushBytes, nullptr) ||
            rkc_event_record(begin, nullptr))
          return fail(rkc_last_error());
        status = c.fwd(nullptr, problem.args.data());
        if (status)
          break;
        if (rkc_event_record(end, nullptr) || rkc_event_synchronize(end) ||
            rkc_event_elapsed_ms(&ms, begin, end)) {
          std::string why = rkc_last_error();
          record(c, s, "failed", "the kernel faulted: " + why, nullptr);
          return contextLost(c, why);
        }
        samples.push_back(ms);
      }
      if (status) {
        std::string why = formatv("rkc_{0}_fwd failed ({1}): {2}", c.symbol,
                                  static_cast<int>(status), c.lastError());
        record(c, s,
               outOfResources(status, c.lastError()) ? "pruned" : "failed",
               why, nullptr);
        errs() << label << ": failed: " << why << "\n";
        continue;
      }
      if (rkc_device_synchronize()) {
        std::string why = rkc_last_error();
        record(c, s, "failed", "the kernel faulted: " + why, nullptr);
        return contextLost(c, why);
      }
      llvm::sort(samples);
      record(c, s, "ok", "", &samples);
      double median = quantile(samples, 0.5);
      if (c.isDefault)
        defaultMedian = median;
      errs() << label
             << formatv(": {0:f3} ms (p20 {1:f3}, p80 {2:f3})", median,
                        quantile(samples, 0.2), quantile(samples, 0.8));
      if (defaultMedian && !c.isDefault)
        errs() << formatv(", {0:f2}x the default", *defaultMedian / median);
      errs() << "\n";
    }
  }
  if (appendErrors)
    return 1;

  return writeWinners(rows, hash, gpu, arch, version, true, exitCode);
}

} // namespace rkc::cli
