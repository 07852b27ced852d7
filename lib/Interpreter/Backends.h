//===- Backends.h - Running a spec through a CPU backend --------*- C++ -*-===//

#ifndef RKC_INTERPRETER_BACKENDS_H
#define RKC_INTERPRETER_BACKENDS_H

#include "Interpreter/Interpreter.h"

namespace rkc {

/// The CPU backends: `interp` (the spec, token by token), `chunked` (lowered
/// with --rec-lower-chunked, run by the chunk executor) and `decode`
/// (lowered with --rec-lower-decode, the sub-steps token by token).
struct BackendOptions {
  std::string backend = "interp";
  int64_t chunkSize = 64;
  /// chunked: run the transfer-operator form (--rec-state-transfer).
  bool stateTransfer = false;
  /// chunked: run the prep phase of every chunk, then the scan
  /// (--rec-split-scan).
  bool splitScan = false;
  /// chunked, split: rows the scan reads cross from the prep, as in the
  /// kernels (false: the scan loads them again).
  bool keepRows = true;
  /// chunked, split: run what only the output needs after the scan, every
  /// chunk at once from its entering state (--rec-split-scan out-phase).
  bool outPhase = false;
  /// chunked: run each sequence in this many segments joined by their
  /// composed transfer operators (implies the transfer and split forms).
  int64_t segments = 1;
  /// chunked, split: round the values the scan only multiplies or adds
  /// (rec-schedule's rec.half) to bf16 where they cross, as the split
  /// kernels for 16-bit outputs keep them (dk and dv multiples of 32).
  bool halfWorkspace = false;
  /// chunked: round both operands of every Gram and product to bf16, as
  /// bf16 tensor cores would take them (float32 sums).
  bool bf16Products = false;
  /// chunked: products that share their left operand as one product of a
  /// sum (--rec-factor-products).
  bool factorProducts = false;
  /// chunked: row scalings moved off products' left operands
  /// (--rec-sink-row-scales).
  bool sinkRowScales = false;
};

/// Lowers a copy of `spec` as the backend needs and runs it. All backends
/// compute in float64 and produce the interpreter's outputs.
bool runBackend(rec::RecurrenceOp spec, const BackendOptions &backend,
                const TensorMap &inputs, const RunOptions &options,
                TensorMap &outputs, std::string &error);

} // namespace rkc

#endif // RKC_INTERPRETER_BACKENDS_H
