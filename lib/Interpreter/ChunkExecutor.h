//===- ChunkExecutor.h - float64 executor of chunk-level IR -----*- C++ -*-===//
//
// Runs the body of a `rec.chunked` op, chunk after chunk, in float64: every
// rec.chunk.* op on explicit tiles. It checks the chunked algorithm (and the
// pass that built it) against the interpreter without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef RKC_INTERPRETER_CHUNKEXECUTOR_H
#define RKC_INTERPRETER_CHUNKEXECUTOR_H

#include "Interpreter/Interpreter.h"

namespace rkc {

/// Runs `recurrence` (lowered to rec.chunked) on `inputs`; outputs as the
/// interpreter's. With `segments` > 1 (the split transfer form only) each
/// sequence's chunks run in that many segments joined by their composed
/// transfer operators, as blocks or devices splitting a long sequence would.
/// `rounding` emulates, one by one, what kernels for 16-bit outputs would
/// round to bf16, so that each rounding's cost in accuracy is measured apart
/// from every other.
struct ChunkRounding {
  /// Split bodies: a crossing value marked rec.half is rounded as it
  /// crosses, as the kernels for 16-bit outputs keep it.
  bool halfWorkspace = false;
  /// Both operands of every Gram and product (the state included) are
  /// rounded as they enter it; sums stay exact (float32 accumulation on
  /// bf16 tensor cores, m16n8k16).
  bool bf16Products = false;
};

bool runChunked(rec::RecurrenceOp recurrence, const TensorMap &inputs,
                const RunOptions &options, TensorMap &outputs,
                std::string &error, int64_t segments = 1,
                ChunkRounding rounding = {});

} // namespace rkc

#endif // RKC_INTERPRETER_CHUNKEXECUTOR_H
