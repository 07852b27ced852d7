//===- Commands.h - Subcommands of the rkc CLI ------------------*- C++ -*-===//

#ifndef RKC_TOOLS_RKC_COMMANDS_H
#define RKC_TOOLS_RKC_COMMANDS_H

#include "llvm/Support/CommandLine.h"

namespace rkc::cli {

extern llvm::cl::SubCommand runCommand;
extern llvm::cl::OptionCategory runCategory;
int runRun();

} // namespace rkc::cli

#endif // RKC_TOOLS_RKC_COMMANDS_H
