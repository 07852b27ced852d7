//===- SpecFile.cpp - Loading a spec from a file --------------------------===//

#include "Interpreter/SpecFile.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace rkc {

bool loadSpecFile(MLIRContext &context, StringRef path, StringRef name,
                  SpecFile &spec) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (std::error_code ec = buffer.getError()) {
    llvm::errs() << "error: cannot read spec '" << path << "': "
                 << ec.message() << "\n";
    return false;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  spec.module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!spec.module)
    return false;

  SmallVector<rec::RecurrenceOp> found;
  spec.module->walk([&](rec::RecurrenceOp r) {
    if (name.empty() || r.getSymName() == name)
      found.push_back(r);
  });
  if (found.size() != 1) {
    llvm::errs() << "error: " << path << ": ";
    if (found.empty() && name.empty())
      llvm::errs() << "no 'rec.recurrence' in the file\n";
    else if (found.empty())
      llvm::errs() << "no recurrence named @" << name << "\n";
    else
      llvm::errs() << found.size()
                   << " recurrences in the file; choose one with --spec-name\n";
    spec.module = nullptr;
    return false;
  }
  spec.recurrence = found.front();
  return true;
}

} // namespace rkc
