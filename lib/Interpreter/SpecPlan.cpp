//===- SpecPlan.cpp - A verified spec, flattened for the CPU executors ----===//

#include "Interpreter/SpecPlan.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <sstream>

using namespace mlir;
using namespace rkc::rec;

namespace rkc {

namespace {
/// Builds the plan in program order; values map to expr indices.
struct PlanBuilder {
  SpecPlan plan;
  llvm::DenseMap<Value, int> exprOf;

  int expr(Value value) {
    auto it = exprOf.find(value);
    assert(it != exprOf.end() && "value used before its definition");
    return it->second;
  }

  void addExpr(Value result, SpecPlan::Expr e) {
    e.side = getSide(result.getType());
    e.rate = getRate(result.getType());
    exprOf[result] = static_cast<int>(plan.exprs.size());
    plan.exprs.push_back(e);
  }

  void addPrologueOp(Operation *op) {
    using K = SpecPlan::ExprKind;
    auto binary = [&](K kind) {
      SpecPlan::Expr e{kind, Side::Scalar, Rate::head};
      e.lhs = expr(op->getOperand(0));
      e.rhs = expr(op->getOperand(1));
      addExpr(op->getResult(0), e);
    };
    auto unary = [&](K kind) {
      SpecPlan::Expr e{kind, Side::Scalar, Rate::head};
      e.lhs = expr(op->getOperand(0));
      addExpr(op->getResult(0), e);
    };
    TypeSwitch<Operation *>(op)
        .Case([&](InputOp input) {
          SpecPlan::Expr e{K::Input, Side::Scalar, Rate::head};
          e.input = static_cast<int>(plan.inputs.size());
          plan.inputs.push_back({input.getName().str(),
                                 getSide(input.getType()),
                                 getRate(input.getType())});
          addExpr(input.getResult(), e);
        })
        .Case([&](ConstantOp c) {
          SpecPlan::Expr e{K::Constant, Side::Scalar, Rate::head};
          e.constant = c.getValue().convertToDouble();
          addExpr(c.getResult(), e);
        })
        .Case([&](AddOp) { binary(K::Add); })
        .Case([&](SubOp) { binary(K::Sub); })
        .Case([&](MulOp) { binary(K::Mul); })
        .Case([&](DotOp) { binary(K::Dot); })
        .Case([&](ProjectOutOp) { binary(K::ProjectOut); })
        .Case([&](NegOp) { unary(K::Neg); })
        .Case([&](ExpOp) { unary(K::Exp); })
        .Case([&](SigmoidOp) { unary(K::Sigmoid); })
        .Case([&](SoftplusOp) { unary(K::Softplus); })
        .Case([&](LogSigmoidOp) { unary(K::LogSigmoid); })
        .Case([&](L2NormOp n) {
          unary(K::L2Norm);
          plan.exprs.back().constant = n.getEps().convertToDouble();
        })
        .Default([](Operation *) {});
  }

  int optionalScale(Value scale) { return scale ? expr(scale) : -1; }

  SpecPlan::Factor factor(Operation *op) {
    using K = SpecPlan::FactorKind;
    return TypeSwitch<Operation *, SpecPlan::Factor>(op)
        .Case([&](DecayOp d) {
          return SpecPlan::Factor{K::Decay, {expr(d.getGate())}};
        })
        .Case([&](EraseOp e) {
          return SpecPlan::Factor{K::Erase, {expr(e.getAddress())},
                                  optionalScale(e.getScale())};
        })
        .Case([&](DeltaOp d) {
          return SpecPlan::Factor{K::Delta,
                                  {expr(d.getKey()), expr(d.getValue())},
                                  optionalScale(d.getScale())};
        })
        .Case([&](Rank1Op r) {
          return SpecPlan::Factor{
              K::Rank1, {expr(r.getWriteAlong()), expr(r.getReadAlong())},
              optionalScale(r.getScale())};
        })
        .Case([&](DPLROp d) {
          return SpecPlan::Factor{K::DPLR,
                                  {expr(d.getGate()), expr(d.getWriteAlong()),
                                   expr(d.getReadAlong())}};
        })
        .Case([&](WriteOp w) {
          return SpecPlan::Factor{K::Write,
                                  {expr(w.getKey()), expr(w.getValue())},
                                  optionalScale(w.getScale())};
        })
        .Case([&](RepeatOp r) {
          SpecPlan::Factor f{K::Repeat, {}};
          f.count = r.getCount().str();
          for (Operation &inner : r.getBody().front())
            f.body.push_back(factor(&inner));
          return f;
        })
        .Default([](Operation *) -> SpecPlan::Factor {
          llvm_unreachable("not a factor");
        });
  }
};
} // namespace

static int64_t lookupParam(
    const std::vector<std::pair<std::string, int64_t>> &params,
    const std::string &name) {
  for (auto &[key, value] : params)
    if (key == name)
      return value;
  return -1;
}

SpecPlan SpecPlan::build(RecurrenceOp recurrence) {
  PlanBuilder builder;
  SpecPlan &plan = builder.plan;
  plan.name = recurrence.getSymName().str();
  if (std::optional<APFloat> scale = recurrence.getScale())
    plan.scale = scale->convertToDouble();
  if (std::optional<DictionaryAttr> params = recurrence.getParams())
    for (NamedAttribute p : *params)
      plan.params.emplace_back(p.getName().str(),
                               cast<IntegerAttr>(p.getValue()).getInt());
  for (Operation &op : recurrence.getBody().front())
    builder.addPrologueOp(&op);
  Operation *transition = recurrence.getTransition();
  if (auto step = dyn_cast<StepOp>(transition)) {
    for (Operation &op : step.getBody().front()) {
      if (auto read = dyn_cast<ReadOp>(op))
        plan.query = builder.expr(read.getQuery());
      else
        plan.factors.push_back(builder.factor(&op));
    }
    return std::move(builder.plan);
  }
  Region *table = TypeSwitch<Operation *, Region *>(transition)
                      .Case([&](InterleavedOp op) {
                        plan.form = SpecPlan::Form::Interleaved;
                        return &op.getBody();
                      })
                      .Case([&](DecodeOp op) {
                        plan.form = SpecPlan::Form::Decode;
                        return &op.getBody();
                      })
                      .Case([&](ChunkedOp op) {
                        plan.form = SpecPlan::Form::Chunked;
                        return &op.getSubsteps();
                      });
  auto index = [&](Value v) { return v ? builder.expr(v) : -1; };
  for (SubstepOp s : table->front().getOps<SubstepOp>()) {
    SpecPlan::Substep sub;
    sub.gate = index(s.getGate());
    sub.eraseAlong = index(s.getEraseAlong());
    sub.readAlong = index(s.getReadAlong());
    sub.strength = index(s.getStrength());
    sub.key = index(s.getKey());
    sub.value = index(s.getValue());
    sub.writeStrength = index(s.getWriteStrength());
    sub.query = index(s.getQuery());
    sub.undecayedRead = s.getUndecayedRead();
    sub.index = s.getIndex();
    plan.substeps.push_back(sub);
  }
  return std::move(builder.plan);
}

int64_t SpecPlan::substepRows(
    const std::vector<std::pair<std::string, int64_t>> &resolved) const {
  int64_t rows = 1;
  for (const Factor &f : factors)
    if (f.kind == FactorKind::Repeat)
      rows = lookupParam(resolved, f.count);
  for (const Substep &s : substeps)
    rows = std::max(rows, s.index + 1);
  return rows;
}

int64_t SpecPlan::getParam(const std::string &name) const {
  return lookupParam(params, name);
}

int64_t ProblemShape::getParam(const std::string &name) const {
  return lookupParam(params, name);
}

std::string describeLayout(const SpecPlan::Input &input) {
  std::string heads = input.side == Side::Value ? "HV" : "H";
  std::string tail = input.side == Side::Key     ? ", dk"
                     : input.side == Side::Value ? ", dv"
                                                 : "";
  switch (input.rate) {
  case Rate::head:
    return "[" + heads + tail + "]";
  case Rate::token:
    return "[B, T, " + heads + tail + "]";
  case Rate::substep:
    return "[B, T*n, " + heads + tail + "]";
  }
  return "?";
}

static bool isFloat(DType dtype) {
  return dtype == DType::F64 || dtype == DType::F32 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

bool bindProblem(const SpecPlan &plan, const TensorMap &tensors,
                 const RunOptions &options, ProblemShape &shape,
                 std::string &error) {
  shape = ProblemShape();
  auto fail = [&](const std::string &message) {
    error = message;
    return false;
  };

  // Parameters: spec defaults, then overrides.
  shape.params = plan.params;
  for (auto &[name, value] : options.params) {
    bool found = false;
    for (auto &p : shape.params)
      if (p.first == name) {
        p.second = value;
        found = true;
      }
    if (!found)
      return fail("@" + plan.name + " has no parameter '" + name + "'");
    if (value < 1)
      return fail("parameter '" + name + "' must be a positive integer, got " +
                  std::to_string(value));
  }
  // Rows a token of `<substep>` inputs.
  int64_t substeps = plan.substepRows(shape.params);

  // Every tensor must be an input of the spec, initial_state or cu_seqlens.
  for (auto &[name, tensor] : tensors) {
    bool known = name == "initial_state" || name == "cu_seqlens";
    for (const SpecPlan::Input &in : plan.inputs)
      known |= in.name == name;
    if (!known) {
      std::string names;
      for (const SpecPlan::Input &in : plan.inputs)
        names += in.name + ", ";
      return fail("unexpected tensor '" + name + "': @" + plan.name +
                  " takes " + names +
                  "and optionally initial_state and cu_seqlens");
    }
  }

  // Ranks and dtypes first, then the sizes they share.
  int64_t &B = shape.batch, &T = shape.length;
  std::string dkFrom, dvFrom, btFrom;
  shape.inputHeads.assign(plan.inputs.size(), 0);
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const SpecPlan::Input &in = plan.inputs[i];
    auto it = tensors.find(in.name);
    if (it == tensors.end())
      return fail("missing input '" + in.name + "': expected a " +
                  describeSide(in.side).str() + " tensor of shape " +
                  describeLayout(in));
    const HostTensor &t = it->second;
    if (!isFloat(t.dtype))
      return fail("input '" + in.name + "' has dtype " + dtypeName(t.dtype) +
                  "; expected a floating-point tensor (F64, F32, F16, BF16)");
    int64_t rank = (in.rate == Rate::head ? 1 : 3) +
                   (in.side == Side::Scalar ? 0 : 1);
    if (t.rank() != rank)
      return fail("input '" + in.name + "' has shape " + formatShape(t.shape) +
                  "; expected " + describeLayout(in));
    for (int64_t d : t.shape)
      if (d < 0)
        return fail("input '" + in.name + "' has a negative dimension");
    int64_t headDim = in.rate == Rate::head ? 0 : 2;
    shape.inputHeads[i] = t.shape[headDim];
    if (in.side != Side::Scalar) {
      int64_t d = t.shape.back();
      int64_t &dim = in.side == Side::Key ? shape.dk : shape.dv;
      std::string &from = in.side == Side::Key ? dkFrom : dvFrom;
      if (from.empty()) {
        dim = d;
        from = in.name;
      } else if (dim != d) {
        return fail("input '" + in.name + "' has shape " +
                    formatShape(t.shape) + ": its last dimension " +
                    std::to_string(d) + " does not match " +
                    (in.side == Side::Key ? "dk" : "dv") + " = " +
                    std::to_string(dim) + " of input '" + from + "'");
      }
    }
    if (in.rate == Rate::token && btFrom.empty()) {
      B = t.shape[0];
      T = t.shape[1];
      btFrom = in.name;
    }
  }
  if (btFrom.empty())
    for (size_t i = 0; i < plan.inputs.size(); ++i)
      if (plan.inputs[i].rate == Rate::substep) {
        const HostTensor &t = tensors.at(plan.inputs[i].name);
        B = t.shape[0];
        if (t.shape[1] % substeps)
          return fail("input '" + plan.inputs[i].name + "' has " +
                      std::to_string(t.shape[1]) +
                      " rows a batch, not a multiple of n = " +
                      std::to_string(substeps));
        T = t.shape[1] / substeps;
        btFrom = plan.inputs[i].name;
        break;
      }
  if (btFrom.empty())
    return fail("@" + plan.name + " has no per-token input to take B and T "
                                  "from");
  if (dkFrom.empty() || dvFrom.empty())
    return fail("@" + plan.name + " needs a key-side and a value-side input "
                                  "to know dk and dv");
  if (shape.dk == 0 || shape.dv == 0)
    return fail("dk and dv must be positive (got dk = " +
                std::to_string(shape.dk) + ", dv = " +
                std::to_string(shape.dv) + ")");

  // Heads: every input has H or HV heads, HV a multiple of H.
  int64_t H = INT64_MAX, HV = 0;
  for (int64_t h : shape.inputHeads) {
    H = std::min(H, h);
    HV = std::max(HV, h);
  }
  if (H <= 0)
    return fail("every input needs at least one head");
  if (HV % H)
    return fail("head counts " + std::to_string(H) + " and " +
                std::to_string(HV) +
                " do not form a GVA group (the larger must be a multiple of "
                "the smaller)");
  shape.keyHeads = H;
  shape.valueHeads = HV;

  // Now every shape is known: compare in full.
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const SpecPlan::Input &in = plan.inputs[i];
    const HostTensor &t = tensors.at(in.name);
    int64_t heads = shape.inputHeads[i];
    if (heads != H && heads != HV)
      return fail("input '" + in.name + "' has " + std::to_string(heads) +
                  " heads; expected H = " + std::to_string(H) + " or HV = " +
                  std::to_string(HV));
    std::vector<int64_t> expected;
    if (in.rate != Rate::head) {
      expected.push_back(B);
      expected.push_back(in.rate == Rate::substep ? T * substeps : T);
    }
    expected.push_back(heads);
    if (in.side == Side::Key)
      expected.push_back(shape.dk);
    if (in.side == Side::Value)
      expected.push_back(shape.dv);
    if (t.shape != expected)
      return fail("input '" + in.name + "' has shape " + formatShape(t.shape) +
                  "; expected " + describeLayout(in) + " = " +
                  formatShape(expected) + " (B, T from '" + btFrom + "')");
  }

  // Sequences: one per batch row, or cu_seqlens over a single row.
  auto cu = tensors.find("cu_seqlens");
  if (cu != tensors.end()) {
    const HostTensor &c = cu->second;
    if (c.dtype != DType::I64 && c.dtype != DType::I32)
      return fail(std::string("cu_seqlens has dtype ") + dtypeName(c.dtype) +
                  "; expected I64");
    if (c.rank() != 1 || c.shape[0] < 2)
      return fail("cu_seqlens has shape " + formatShape(c.shape) +
                  "; expected [N + 1] with N >= 1 sequences");
    if (B != 1)
      return fail("cu_seqlens packs sequences into one batch row, but B = " +
                  std::to_string(B));
    if (c[0] != 0)
      return fail("cu_seqlens must start at 0, got " +
                  std::to_string(static_cast<int64_t>(c[0])));
    for (int64_t i = 1; i < c.shape[0]; ++i)
      if (c[i] < c[i - 1])
        return fail("cu_seqlens must be non-decreasing, but entry " +
                    std::to_string(i) + " (" +
                    std::to_string(static_cast<int64_t>(c[i])) +
                    ") is less than entry " + std::to_string(i - 1) + " (" +
                    std::to_string(static_cast<int64_t>(c[i - 1])) + ")");
    if (c[c.shape[0] - 1] != T)
      return fail("cu_seqlens must end at T = " + std::to_string(T) +
                  ", got " +
                  std::to_string(static_cast<int64_t>(c[c.shape[0] - 1])));
    for (int64_t i = 0; i + 1 < c.shape[0]; ++i) {
      shape.seqRow.push_back(0);
      shape.seqBegin.push_back(static_cast<int64_t>(c[i]));
      shape.seqEnd.push_back(static_cast<int64_t>(c[i + 1]));
    }
  } else {
    for (int64_t b = 0; b < B; ++b) {
      shape.seqRow.push_back(b);
      shape.seqBegin.push_back(0);
      shape.seqEnd.push_back(T);
    }
  }

  auto init = tensors.find("initial_state");
  if (init != tensors.end()) {
    std::vector<int64_t> expected = {shape.numSequences(), HV, shape.dk,
                                     shape.dv};
    if (!isFloat(init->second.dtype))
      return fail(std::string("initial_state has dtype ") +
                  dtypeName(init->second.dtype) +
                  "; expected a floating-point tensor");
    if (init->second.shape != expected)
      return fail("initial_state has shape " +
                  formatShape(init->second.shape) +
                  "; expected [N, HV, dk, dv] = " + formatShape(expected));
  }

  shape.scale = options.scale ? *options.scale
                : plan.scale  ? *plan.scale
                              : 1.0 / std::sqrt(static_cast<double>(shape.dk));
  if (!(shape.scale > 0) || !std::isfinite(shape.scale))
    return fail("scale must be a positive finite number");
  return true;
}

} // namespace rkc
