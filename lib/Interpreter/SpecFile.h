//===- SpecFile.h - Loading a spec from a file ------------------*- C++ -*-===//

#ifndef RKC_INTERPRETER_SPECFILE_H
#define RKC_INTERPRETER_SPECFILE_H

#include "Rec/RecOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace rkc {

/// A parsed and verified spec file. Diagnostics (located, with the source
/// line) go to stderr; on failure `module` is null.
struct SpecFile {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  rec::RecurrenceOp recurrence;
};

/// Parses `path` (a `rec.recurrence`, at top level or in a module) and picks
/// the recurrence named `name`, or the only one when `name` is empty.
/// The context must have the rec dialect loaded. Returns false and prints a
/// message when the file cannot be read, parsed, verified, or does not hold
/// exactly one matching recurrence.
bool loadSpecFile(mlir::MLIRContext &context, llvm::StringRef path,
                  llvm::StringRef name, SpecFile &spec);

} // namespace rkc

#endif // RKC_INTERPRETER_SPECFILE_H
