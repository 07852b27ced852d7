//===- RandomInputs.h - Realistic random inputs for a spec ------*- C++ -*-===//
//
// Draws inputs for any spec with the distributions of MATH.md, choosing each
// input's distribution from how the step uses it: log-space gates
// logsigmoid(N) clamped to [-5, 0], strengths sigmoid(N), addresses, keys and
// queries L2-normalised, values and everything else N(0, 1).
//
//===----------------------------------------------------------------------===//

#ifndef RKC_INTERPRETER_RANDOMINPUTS_H
#define RKC_INTERPRETER_RANDOMINPUTS_H

#include "Interpreter/SpecPlan.h"

namespace rkc {

struct RandomShape {
  int64_t batch = 2, length = 64, keyHeads = 4, valueHeads = 0; // 0: = H
  int64_t dk = 64, dv = 64;
  /// Varlen: sequence lengths packed into one row (batch must be 1).
  std::vector<int64_t> seqLens;
  /// Gates (log-decays) reach down to -gateFloor a token: the default keeps
  /// a chunk's decays in the range trained models show; a large floor (e.g.
  /// gates=40) drives the kernels' exact paths for decays past what their
  /// factored forms take.
  int64_t gateFloor = 5;
  bool initialState = true;
  uint64_t seed = 0;
  /// The dtype the tensors are stored as; values are rounded to it.
  DType dtype = DType::F32;
};

/// Parses "B=2,T=64,H=4,HV=8,dk=64,dv=32,gates=5" (any subset, keys
/// case-insensitive) into `shape`. Returns false with `error` on a bad entry.
bool parseRandomShape(const std::string &text, RandomShape &shape,
                      std::string &error);

/// How the step uses an input, which decides its distribution.
enum class InputRole { Gate, Strength, Address, Value, Other };
std::vector<InputRole> classifyInputs(const SpecPlan &plan);

TensorMap randomInputs(const SpecPlan &plan, const RandomShape &shape,
                       const RunOptions &options = {});

} // namespace rkc

#endif // RKC_INTERPRETER_RANDOMINPUTS_H
