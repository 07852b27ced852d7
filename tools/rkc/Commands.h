//===- Commands.h - Subcommands of the rkc CLI ------------------*- C++ -*-===//

#ifndef RKC_TOOLS_RKC_COMMANDS_H
#define RKC_TOOLS_RKC_COMMANDS_H

#include "CompileRequest.h"

#include "Interpreter/SpecFile.h"
#include "Interpreter/SpecPlan.h"
#include "Target/CudaEmitter.h"

#include "llvm/Support/CommandLine.h"

namespace rkc::cli {

/// Loads the spec a subcommand names (`path`), or the embedded EDA spec
/// when `path` is empty. Diagnostics go to stderr.
bool loadSpecArgument(mlir::MLIRContext &context, const std::string &path,
                      const std::string &name, SpecFile &spec);

/// Parses `--param name=integer` arguments into `options`; false with
/// `error` set on a malformed one.
bool parseParamArgs(const std::vector<std::string> &args, RunOptions &options,
                    std::string &error);

extern llvm::cl::SubCommand runCommand;
extern llvm::cl::OptionCategory runCategory;
int runRun();

/// Lowers, schedules and prints `spec` into request.outDir, building the
/// fatbin with nvcc when one is found; progress goes to `log`. Returns 0, or
/// 1 after printing an error.
int compileSpec(rec::RecurrenceOp spec, const CompileRequest &request,
                llvm::raw_ostream &log);

/// compileSpec, with the schedules `rkc tune` measured fastest: the default
/// schedule and each bucket's winner compiled as variants, and a launcher
/// that picks one by the call's shape bucket. Without usable rows in
/// `database` for this spec, a plain compileSpec (with a note on `log`).
int compileTuned(rec::RecurrenceOp spec, const CompileRequest &request,
                 const std::string &database, llvm::raw_ostream &log);

/// The pieces compileSpec is made of, shared with `rkc tune`.
///
/// Lowers `spec` for `request` (the chunk size: request.chunkSize, or the
/// largest of 64, 32, 16, 8 that fits when 0) and emits its kernels. On
/// failure returns false with `error` ("@NAME: why").
bool emitKernels(rec::RecurrenceOp spec, const CompileRequest &request,
                 CudaKernels &kernels, int64_t &chunkSize, std::string &error);
/// A copy of `spec` named `symbol`, owned by `holder`: every symbol the
/// emitter derives from the name is then distinct, so that variants link
/// together.
rec::RecurrenceOp renamedSpec(rec::RecurrenceOp spec, llvm::StringRef symbol,
                              mlir::OwningOpRef<mlir::ModuleOp> &holder);
/// Writes `text` to `path`.
bool writeFile(const std::string &path, llvm::StringRef text,
               std::string &error);
/// Writes rkc/runtime.h, rkc/runtime.c and rkc/tile.cuh under `dir`.
bool writeRuntime(const std::string &dir, std::string &error);
/// nvcc -fatbin DIR/NAME.cu into DIR/NAME.fatbin (sm code and PTX of
/// `arch`), read back into `image`. nvcc's output goes to `logFile` when
/// given (else it is inherited).
bool buildFatbin(const std::string &nvcc, const std::string &arch,
                 const std::string &dir, const std::string &name,
                 std::string &image, std::string &error,
                 llvm::StringRef logFile = "");
/// NAME_launch.c: the fatbin embedded as bytes (null: launches return
/// RKC_ERROR_NO_KERNELS), then the emitted launchers.
std::string launcherSource(const std::string &name, const std::string *image,
                           const CudaKernels &kernels);
/// A hash of the generated sources (kernels, launchers, header, runtime):
/// equal hashes, equal code.
std::string codeHash(const CudaKernels &kernels);
/// The spec's identity in a tuning database: a SHA-256 prefix of its printed
/// form and its resolved parameters (the spec's, overridden by `params`).
std::string specHash(rec::RecurrenceOp spec,
                     const std::vector<std::string> &params);

/// nvcc: `given`, else $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, PATH.
std::string findNvcc(const std::string &given);

/// Runs `spec` on device 0: compiles it for the inputs' sizes (or takes it
/// from the cache, $RKC_CACHE_DIR or ~/.cache/rkc), runs the prefill kernel,
/// and returns o and final_state (float32 values).
bool runCudaBackend(rec::RecurrenceOp spec, const TensorMap &inputs,
                    const RunOptions &options, TensorMap &outputs,
                    std::string &error, llvm::raw_ostream &log);

extern llvm::cl::SubCommand compileCommand;
extern llvm::cl::OptionCategory compileCategory;
int runCompile();

extern llvm::cl::SubCommand tuneCommand;
extern llvm::cl::OptionCategory tuneCategory;
int runTune();

} // namespace rkc::cli

#endif // RKC_TOOLS_RKC_COMMANDS_H
