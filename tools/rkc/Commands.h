//===- Commands.h - Subcommands of the rkc CLI ------------------*- C++ -*-===//

#ifndef RKC_TOOLS_RKC_COMMANDS_H
#define RKC_TOOLS_RKC_COMMANDS_H

#include "Interpreter/SpecFile.h"
#include "Interpreter/SpecPlan.h"

#include "llvm/Support/CommandLine.h"

namespace rkc::cli {

/// Loads the spec a subcommand names (`path`), or the embedded EDA spec
/// when `path` is empty. Diagnostics go to stderr.
bool loadSpecArgument(mlir::MLIRContext &context, const std::string &path,
                      const std::string &name, SpecFile &spec);

extern llvm::cl::SubCommand runCommand;
extern llvm::cl::OptionCategory runCategory;
int runRun();

/// What `rkc compile` is asked to build.
struct CompileRequest {
  std::string outDir, arch = "sm_90a", nvcc;
  int64_t dk = 128, dv = 128;
  int64_t chunkSize = 0; // 0: the largest of 64, 32, 16, 8 that fits
  int64_t valueTile = 32, threads = 256;
  std::vector<std::string> params; // name=value
  bool noFatbin = false;
};

/// Lowers, schedules and prints `spec` into request.outDir, building the
/// fatbin with nvcc when one is found; progress goes to `log`. Returns 0, or
/// 1 after printing an error.
int compileSpec(rec::RecurrenceOp spec, const CompileRequest &request,
                llvm::raw_ostream &log);
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

} // namespace rkc::cli

#endif // RKC_TOOLS_RKC_COMMANDS_H
