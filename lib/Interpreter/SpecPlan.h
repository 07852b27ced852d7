//===- SpecPlan.h - A verified spec, flattened for the CPU executors -*- C++ -*-===//
//
// The CPU executors do not walk MLIR operations per token: they first flatten
// a verified `rec.recurrence` into a SpecPlan (inputs, prologue expressions in
// program order, factors in acting order), then bind it to concrete tensors
// (ProblemShape: batch, lengths, heads, dk, dv, sequences).
//
//===----------------------------------------------------------------------===//

#ifndef RKC_INTERPRETER_SPECPLAN_H
#define RKC_INTERPRETER_SPECPLAN_H

#include "Rec/RecOps.h"
#include "Support/Tensor.h"

#include <optional>
#include <string>
#include <vector>

namespace rkc {

struct SpecPlan {
  struct Input {
    std::string name;
    rec::Side side;
    rec::Rate rate;
  };

  enum class ExprKind {
    Input,
    Constant,
    Add,
    Sub,
    Mul,
    Neg,
    Exp,
    Sigmoid,
    Softplus,
    LogSigmoid,
    L2Norm,
    Dot,
    ProjectOut
  };
  /// One value of the spec. Operands index earlier entries of `exprs`.
  struct Expr {
    ExprKind kind;
    rec::Side side;
    rec::Rate rate;
    int lhs = -1, rhs = -1;
    int input = -1;        // ExprKind::Input: index into `inputs`
    double constant = 0;   // ExprKind::Constant; ExprKind::L2Norm: eps
  };

  enum class FactorKind { Decay, Erase, Delta, Rank1, DPLR, Write, Repeat };
  /// One factor of the step. Operand roles by kind:
  ///   Decay  {gate}                 Erase {address}, scale
  ///   Delta  {key, value}, scale    Rank1 {write_along, read_along}, scale
  ///   DPLR   {gate, write, read}    Write {key, value}, scale
  ///   Repeat: `body` repeated `params[count]` times.
  struct Factor {
    FactorKind kind;
    std::vector<int> operands;
    int scale = -1; // -1: strength 1
    std::string count;
    std::vector<Factor> body;
  };

  /// One generalized DPLR sub-step of a lowered spec (rec.substep), by
  /// expr index (-1: absent):
  ///   S ← (Diag(exp g) - α x bᵀ) S + κ k vᵀ,  b = exp(g) ⊙ y or y,
  ///   o = Sᵀ (scale q) when `query` is present.
  struct Substep {
    int gate = -1, eraseAlong = -1, readAlong = -1, strength = -1;
    int key = -1, value = -1, writeStrength = -1, query = -1;
    bool undecayedRead = false;
    int64_t index = 0; // row j of <substep> inputs
  };

  /// Which form the state transition has.
  enum class Form { Step, Interleaved, Decode, Chunked };

  std::string name;
  Form form = Form::Step;
  std::optional<double> scale;
  std::vector<std::pair<std::string, int64_t>> params;
  std::vector<Input> inputs;
  std::vector<Expr> exprs;
  std::vector<Factor> factors;     // Form::Step
  std::vector<Substep> substeps;   // the lowered forms
  int query = -1; // the expr read by rec.read (Form::Step)

  /// Flattens a verified recurrence.
  static SpecPlan build(rec::RecurrenceOp recurrence);

  int64_t getParam(const std::string &name) const;
  /// Rows a token of `<substep>` inputs, given resolved parameters.
  int64_t substepRows(
      const std::vector<std::pair<std::string, int64_t>> &params) const;
};

/// How a caller runs a spec: overrides of scale and parameters.
struct RunOptions {
  std::optional<double> scale;
  std::vector<std::pair<std::string, int64_t>> params;
};

/// A spec bound to concrete input tensors.
struct ProblemShape {
  int64_t batch = 0;      // B (1 with cu_seqlens)
  int64_t length = 0;     // T: tokens per batch row
  int64_t keyHeads = 0;   // H
  int64_t valueHeads = 0; // HV, a multiple of H (GVA)
  int64_t dk = 0, dv = 0;
  double scale = 0;
  /// Sequences: N of them, sequence i in batch row seqRow[i], tokens
  /// [seqBegin[i], seqEnd[i]) of that row.
  std::vector<int64_t> seqRow, seqBegin, seqEnd;
  /// Resolved parameters (spec defaults with overrides applied).
  std::vector<std::pair<std::string, int64_t>> params;
  /// Head count of each plan input (H or HV).
  std::vector<int64_t> inputHeads;

  int64_t numSequences() const { return static_cast<int64_t>(seqRow.size()); }
  int64_t getParam(const std::string &name) const;
  /// Rows a token of `<substep>` inputs, given resolved parameters.
  int64_t substepRows(
      const std::vector<std::pair<std::string, int64_t>> &params) const;
};

/// The layout of an input as MATH.md writes it ("[B, T, H, dk]").
std::string describeLayout(const SpecPlan::Input &input);

/// Checks `tensors` against the spec (names, dtypes, ranks, shapes, heads,
/// cu_seqlens, initial_state) and resolves the problem shape. On failure
/// returns false with one sentence naming the tensor and what was expected.
bool bindProblem(const SpecPlan &plan, const TensorMap &tensors,
                 const RunOptions &options, ProblemShape &shape,
                 std::string &error);

} // namespace rkc

#endif // RKC_INTERPRETER_SPECPLAN_H
