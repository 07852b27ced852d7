//===- Interpreter.h - The float64 token-by-token interpreter ---*- C++ -*-===//
//
// The interpreter *is* the semantics of a spec: for every sequence and value
// head it runs the prologue and the step's factors one token at a time, in
// float64, on the exact input values. Every other executor is checked
// against it.
//
//===----------------------------------------------------------------------===//

#ifndef RKC_INTERPRETER_INTERPRETER_H
#define RKC_INTERPRETER_INTERPRETER_H

#include "Interpreter/SpecPlan.h"

namespace rkc {

/// Runs `plan` on `inputs`. On success fills `outputs` with "o"
/// [B, T, HV, dv] and "final_state" [N, HV, dk, dv], both float64, and
/// returns true; otherwise returns false and sets `error`.
bool interpret(const SpecPlan &plan, const TensorMap &inputs,
               const RunOptions &options, TensorMap &outputs,
               std::string &error);

/// The prologue of one (sequence row, token, value head): evaluates spec
/// values into per-expression buffers. Shared by the CPU executors.
class PrologueEvaluator {
public:
  PrologueEvaluator(const SpecPlan &plan, const ProblemShape &shape,
                    const TensorMap &inputs);

  /// Evaluates every value whose rate is below `substep` for token `t` of
  /// batch row `row`, value head `valueHead`.
  void evaluateToken(int64_t row, int64_t t, int64_t valueHead);
  /// Evaluates the `substep`-rate values for sub-step j of the token last
  /// passed to evaluateToken.
  void evaluateSubstep(int64_t j);

  const double *value(int expr) const { return values[expr].data(); }

private:
  void evaluate(int expr);
  const double *inputRow(int expr) const;

  const SpecPlan &plan;
  const ProblemShape &shape;
  std::vector<const HostTensor *> inputTensors;
  std::vector<std::vector<double>> values;
  int64_t row = 0, token = 0, valueHead = 0, substep = 0, substeps = 1;
};

} // namespace rkc

#endif // RKC_INTERPRETER_INTERPRETER_H
