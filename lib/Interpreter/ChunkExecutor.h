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
/// With `halfWorkspace` (split bodies) a crossing value marked rec.half is
/// rounded to bf16 as it crosses, as the kernels for 16-bit outputs keep it.
bool runChunked(rec::RecurrenceOp recurrence, const TensorMap &inputs,
                const RunOptions &options, TensorMap &outputs,
                std::string &error, int64_t segments = 1,
                bool halfWorkspace = false);

} // namespace rkc

#endif // RKC_INTERPRETER_CHUNKEXECUTOR_H
