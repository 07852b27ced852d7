//===- Interpreter.cpp - The float64 token-by-token interpreter -----------===//

#include "Interpreter/Interpreter.h"

#include <cmath>

using namespace rkc::rec;

namespace rkc {

//===----------------------------------------------------------------------===//
// Prologue
//===----------------------------------------------------------------------===//

PrologueEvaluator::PrologueEvaluator(const SpecPlan &plan,
                                     const ProblemShape &shape,
                                     const TensorMap &inputs)
    : plan(plan), shape(shape) {
  for (const SpecPlan::Input &in : plan.inputs)
    inputTensors.push_back(&inputs.at(in.name));
  for (const SpecPlan::Expr &e : plan.exprs)
    values.emplace_back(e.side == Side::Key     ? shape.dk
                        : e.side == Side::Value ? shape.dv
                                                : 1);
  substeps = plan.substepRows(shape.params);
}

const double *PrologueEvaluator::inputRow(int expr) const {
  int input = plan.exprs[expr].input;
  const SpecPlan::Input &in = plan.inputs[input];
  const HostTensor &t = *inputTensors[input];
  int64_t heads = shape.inputHeads[input];
  // Under GVA an input with the key-head count is shared by a group of
  // HV / H value heads.
  int64_t head =
      heads == shape.valueHeads ? valueHead
                                : valueHead / (shape.valueHeads / heads);
  int64_t width = static_cast<int64_t>(values[expr].size());
  int64_t rowIndex = 0;
  switch (in.rate) {
  case Rate::head:
    rowIndex = head;
    break;
  case Rate::token:
    rowIndex = (row * shape.length + token) * heads + head;
    break;
  case Rate::substep:
    rowIndex =
        ((row * shape.length + token) * substeps + substep) * heads + head;
    break;
  }
  return t.values.data() + rowIndex * width;
}

static double softplus(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}

void PrologueEvaluator::evaluate(int index) {
  using K = SpecPlan::ExprKind;
  const SpecPlan::Expr &e = plan.exprs[index];
  std::vector<double> &out = values[index];
  size_t n = out.size();
  // A scalar operand broadcasts over a vector result.
  auto operand = [&](int expr, size_t i) {
    const std::vector<double> &v = values[expr];
    return v.size() == 1 ? v[0] : v[i];
  };
  switch (e.kind) {
  case K::Input: {
    const double *src = inputRow(index);
    std::copy(src, src + n, out.begin());
    return;
  }
  case K::Constant:
    out[0] = e.constant;
    return;
  case K::Add:
  case K::Sub:
  case K::Mul:
    for (size_t i = 0; i < n; ++i) {
      double x = operand(e.lhs, i), y = operand(e.rhs, i);
      out[i] = e.kind == K::Add ? x + y : e.kind == K::Sub ? x - y : x * y;
    }
    return;
  case K::Neg:
  case K::Exp:
  case K::Sigmoid:
  case K::Softplus:
  case K::LogSigmoid:
    for (size_t i = 0; i < n; ++i) {
      double x = values[e.lhs][i];
      switch (e.kind) {
      case K::Neg:
        out[i] = -x;
        break;
      case K::Exp:
        out[i] = std::exp(x);
        break;
      case K::Sigmoid:
        out[i] = 1.0 / (1.0 + std::exp(-x));
        break;
      case K::Softplus:
        out[i] = softplus(x);
        break;
      default:
        out[i] = -softplus(-x);
        break;
      }
    }
    return;
  case K::L2Norm: {
    const std::vector<double> &x = values[e.lhs];
    double sum = 0;
    for (double xi : x)
      sum += xi * xi;
    double inv = 1.0 / std::sqrt(sum + e.constant);
    for (size_t i = 0; i < n; ++i)
      out[i] = x[i] * inv;
    return;
  }
  case K::Dot: {
    const std::vector<double> &x = values[e.lhs], &y = values[e.rhs];
    double sum = 0;
    for (size_t i = 0; i < x.size(); ++i)
      sum += x[i] * y[i];
    out[0] = sum;
    return;
  }
  case K::ProjectOut: {
    // P⊥_k(x) = x - k (kᵀx)
    const std::vector<double> &x = values[e.lhs], &k = values[e.rhs];
    double kx = 0;
    for (size_t i = 0; i < n; ++i)
      kx += k[i] * x[i];
    for (size_t i = 0; i < n; ++i)
      out[i] = x[i] - k[i] * kx;
    return;
  }
  }
}

void PrologueEvaluator::evaluateToken(int64_t r, int64_t t, int64_t head) {
  row = r;
  token = t;
  valueHead = head;
  substep = 0;
  for (size_t i = 0; i < plan.exprs.size(); ++i)
    if (plan.exprs[i].rate != Rate::substep)
      evaluate(static_cast<int>(i));
}

void PrologueEvaluator::evaluateSubstep(int64_t j) {
  substep = j;
  for (size_t i = 0; i < plan.exprs.size(); ++i)
    if (plan.exprs[i].rate == Rate::substep)
      evaluate(static_cast<int>(i));
}

//===----------------------------------------------------------------------===//
// Factors
//===----------------------------------------------------------------------===//

void DenseState::readAt(const double *y) {
  read.assign(dv, 0.0);
  for (int64_t i = 0; i < dk; ++i)
    for (int64_t c = 0; c < dv; ++c)
      read[c] += y[i] * s[i * dv + c];
}

void DenseState::addOuter(double alpha, const double *x, const double *w) {
  for (int64_t i = 0; i < dk; ++i)
    for (int64_t c = 0; c < dv; ++c)
      s[i * dv + c] += alpha * x[i] * w[c];
}

void DenseState::decay(const double *g, bool perChannel) {
  for (int64_t i = 0; i < dk; ++i) {
    double f = std::exp(perChannel ? g[i] : g[0]);
    for (int64_t c = 0; c < dv; ++c)
      s[i * dv + c] *= f;
  }
}

static void applyFactors(const std::vector<SpecPlan::Factor> &factors,
                         PrologueEvaluator &prologue,
                         const ProblemShape &shape, const SpecPlan &plan,
                         DenseState &state) {
  using K = SpecPlan::FactorKind;
  for (const SpecPlan::Factor &f : factors) {
    auto val = [&](int i) { return prologue.value(f.operands[i]); };
    double strength = f.scale >= 0 ? prologue.value(f.scale)[0] : 1.0;
    switch (f.kind) {
    case K::Decay:
      state.decay(val(0), plan.exprs[f.operands[0]].side == Side::Key);
      break;
    case K::Erase: // S ← (I - γ e eᵀ) S
      state.readAt(val(0));
      state.addOuter(-strength, val(0), state.read.data());
      break;
    case K::Delta: { // S ← (I - β k kᵀ) S + β k vᵀ = S + β k (v - Sᵀk)ᵀ
      state.readAt(val(0));
      const double *v = val(1);
      for (int64_t c = 0; c < state.dv; ++c)
        state.read[c] = v[c] - state.read[c];
      state.addOuter(strength, val(0), state.read.data());
      break;
    }
    case K::Rank1: // S ← (I - s x yᵀ) S
      state.readAt(val(1));
      state.addOuter(-strength, val(0), state.read.data());
      break;
    case K::DPLR: // S ← Diag(exp g) S + a (bᵀ S): b reads the undecayed state
      state.readAt(val(2));
      state.decay(val(0), true);
      state.addOuter(1.0, val(1), state.read.data());
      break;
    case K::Write: // S ← S + s k vᵀ
      state.addOuter(strength, val(0), val(1));
      break;
    case K::Repeat:
      for (int64_t j = 0, n = shape.getParam(f.count); j < n; ++j) {
        prologue.evaluateSubstep(j);
        applyFactors(f.body, prologue, shape, plan, state);
      }
      break;
    }
  }
}

bool runSequences(const SpecPlan &plan, const TensorMap &inputs,
                  const RunOptions &options, TensorMap &outputs,
                  std::string &error, const SequenceRunner &runner) {
  ProblemShape shape;
  if (!bindProblem(plan, inputs, options, shape, error))
    return false;
  const int64_t dk = shape.dk, dv = shape.dv, HV = shape.valueHeads;
  HostTensor o({shape.batch, shape.length, HV, dv});
  HostTensor finalState({shape.numSequences(), HV, dk, dv});
  const HostTensor *init = nullptr;
  if (auto it = inputs.find("initial_state"); it != inputs.end())
    init = &it->second;

  PrologueEvaluator prologue(plan, shape, inputs);
  DenseState state{dk, dv, {}, {}};
  for (int64_t seq = 0; seq < shape.numSequences(); ++seq) {
    for (int64_t h = 0; h < HV; ++h) {
      int64_t stateOffset = (seq * HV + h) * dk * dv;
      if (init)
        state.s.assign(init->values.begin() + stateOffset,
                       init->values.begin() + stateOffset + dk * dv);
      else
        state.s.assign(dk * dv, 0.0);
      runner(shape, seq, h, state, prologue, o);
      std::copy(state.s.begin(), state.s.end(),
                finalState.values.begin() + stateOffset);
    }
  }
  outputs.clear();
  outputs["o"] = std::move(o);
  outputs["final_state"] = std::move(finalState);
  return true;
}

/// o_t = S_tᵀ (scale · q_t), after the update.
static void readOutput(const ProblemShape &shape, int64_t row, int64_t t,
                       int64_t h, DenseState &state, const double *q,
                       HostTensor &o) {
  state.readAt(q);
  double *out = &o[((row * shape.length + t) * shape.valueHeads + h) *
                   shape.dv];
  for (int64_t c = 0; c < shape.dv; ++c)
    out[c] = shape.scale * state.read[c];
}

/// Runs `step` for every token of every sequence and value head, after the
/// prologue of that token, then reads the output at `query(...)`.
template <typename Step>
static bool runTokens(const SpecPlan &plan, const TensorMap &inputs,
                      const RunOptions &options, TensorMap &outputs,
                      std::string &error, Step step) {
  return runSequences(
      plan, inputs, options, outputs, error,
      [&](const ProblemShape &shape, int64_t seq, int64_t h,
          DenseState &state, PrologueEvaluator &prologue, HostTensor &o) {
        int64_t row = shape.seqRow[seq];
        for (int64_t t = shape.seqBegin[seq]; t < shape.seqEnd[seq]; ++t) {
          prologue.evaluateToken(row, t, h);
          const double *query = step(shape, state, prologue);
          readOutput(shape, row, t, h, state, query, o);
        }
      });
}

bool interpret(const SpecPlan &plan, const TensorMap &inputs,
               const RunOptions &options, TensorMap &outputs,
               std::string &error) {
  if (plan.form != SpecPlan::Form::Step) {
    error = "the interpreter runs specs (rec.step); @" + plan.name +
            " is already lowered";
    return false;
  }
  return runTokens(plan, inputs, options, outputs, error,
                   [&](const ProblemShape &shape, DenseState &state,
                       PrologueEvaluator &prologue) {
                     applyFactors(plan.factors, prologue, shape, plan, state);
                     return prologue.value(plan.query);
                   });
}

bool runDecode(const SpecPlan &plan, const TensorMap &inputs,
               const RunOptions &options, TensorMap &outputs,
               std::string &error) {
  if (plan.substeps.empty()) {
    error = "the decode executor runs sub-steps; lower @" + plan.name +
            " with --rec-lower-decode first";
    return false;
  }
  if (plan.substeps.back().query < 0) {
    error = "@" + plan.name + ": the last sub-step must read";
    return false;
  }
  std::vector<double> b;
  return runTokens(
      plan, inputs, options, outputs, error,
      [&](const ProblemShape &shape, DenseState &state,
          PrologueEvaluator &prologue) {
        b.resize(shape.dk);
        const double *query = nullptr;
        for (const SpecPlan::Substep &s : plan.substeps) {
          prologue.evaluateSubstep(s.index);
          // u = Sᵀ b, b = exp(g) ⊙ y (or y): read before the decay.
          const double *g = s.gate >= 0 ? prologue.value(s.gate) : nullptr;
          bool channel = g && prologue.width(s.gate) > 1;
          if (s.eraseAlong >= 0) {
            const double *y = prologue.value(s.readAlong);
            for (int64_t d = 0; d < shape.dk; ++d)
              b[d] = (g && !s.undecayedRead)
                         ? y[d] * std::exp(channel ? g[d] : g[0])
                         : y[d];
            state.readAt(b.data());
          }
          // S ← Diag(exp g) S - α x uᵀ + κ k vᵀ
          if (g)
            state.decay(g, channel);
          if (s.eraseAlong >= 0)
            state.addOuter(-prologue.value(s.strength)[0],
                           prologue.value(s.eraseAlong), state.read.data());
          if (s.key >= 0)
            state.addOuter(prologue.value(s.writeStrength)[0],
                           prologue.value(s.key), prologue.value(s.value));
          if (s.query >= 0)
            query = prologue.value(s.query); // the last sub-step reads
        }
        return query;
      });
}

} // namespace rkc
