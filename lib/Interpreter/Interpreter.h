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

#include <functional>

namespace rkc {

/// Runs `plan` on `inputs`. On success fills `outputs` with "o"
/// [B, T, HV, dv] and "final_state" [N, HV, dk, dv], both float64, and
/// returns true; otherwise returns false and sets `error`.
bool interpret(const SpecPlan &plan, const TensorMap &inputs,
               const RunOptions &options, TensorMap &outputs,
               std::string &error);

/// The state of one (sequence, value head): S[i * dv + c], i < dk, c < dv,
/// with the three updates every executor is made of.
struct DenseState {
  int64_t dk = 0, dv = 0;
  std::vector<double> s;
  std::vector<double> read; // scratch: yᵀS

  /// read = yᵀ S
  void readAt(const double *y);
  /// S += alpha · x wᵀ
  void addOuter(double alpha, const double *x, const double *w);
  /// S ← Diag(exp g) S, g a scalar or a key-side vector.
  void decay(const double *g, bool perChannel);
};

class PrologueEvaluator;

/// What an executor does for one (sequence, value head): run the tokens of
/// sequence `seq` from `state`, writing o rows into `o`.
using SequenceRunner = std::function<void(
    const ProblemShape &shape, int64_t seq, int64_t valueHead,
    DenseState &state, PrologueEvaluator &prologue, HostTensor &o)>;

/// Binds the inputs, then calls `runner` for every sequence and value head
/// with the state set from initial_state (or zeros); stores the states it
/// leaves as final_state and the outputs as o.
bool runSequences(const SpecPlan &plan, const TensorMap &inputs,
                  const RunOptions &options, TensorMap &outputs,
                  std::string &error, const SequenceRunner &runner);

/// The decode form: the sub-step table applied token by token.
bool runDecode(const SpecPlan &plan, const TensorMap &inputs,
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
  /// The width of expr's value: dk, dv or 1.
  size_t width(int expr) const { return values[expr].size(); }

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
