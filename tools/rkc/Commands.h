//===- Commands.h - Subcommands of the rkc CLI ------------------*- C++ -*-===//

#ifndef RKC_TOOLS_RKC_COMMANDS_H
#define RKC_TOOLS_RKC_COMMANDS_H

#include "Interpreter/SpecFile.h"

#include "llvm/Support/CommandLine.h"

namespace rkc::cli {

/// Loads the spec a subcommand names (`path`), or the embedded EDA spec
/// when `path` is empty. Diagnostics go to stderr.
bool loadSpecArgument(mlir::MLIRContext &context, const std::string &path,
                      const std::string &name, SpecFile &spec);

extern llvm::cl::SubCommand runCommand;
extern llvm::cl::OptionCategory runCategory;
int runRun();

extern llvm::cl::SubCommand compileCommand;
extern llvm::cl::OptionCategory compileCategory;
int runCompile();

} // namespace rkc::cli

#endif // RKC_TOOLS_RKC_COMMANDS_H
