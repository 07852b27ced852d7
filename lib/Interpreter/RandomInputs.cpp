//===- RandomInputs.cpp - Realistic random inputs for a spec --------------===//

#include "Interpreter/RandomInputs.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <cmath>
#include <random>

using namespace rkc::rec;

namespace rkc {

bool parseRandomShape(const std::string &text, RandomShape &shape,
                      std::string &error) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos
                                            ? std::string::npos
                                            : comma - pos);
    pos = comma == std::string::npos ? text.size() : comma + 1;
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      error = "expected KEY=VALUE in the shape, got '" + item + "'";
      return false;
    }
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    std::string upper = key;
    for (char &c : upper)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == "N" || upper == "SEQLENS") { // varlen lengths: N=5:17:64
      shape.seqLens.clear();
      size_t p = 0;
      while (p <= value.size()) {
        size_t colon = value.find(':', p);
        std::string part = value.substr(p, colon == std::string::npos
                                               ? std::string::npos
                                               : colon - p);
        char *end = nullptr;
        long long len = std::strtoll(part.c_str(), &end, 10);
        if (part.empty() || *end || len < 0) {
          error = "bad sequence length '" + part + "' in '" + item + "'";
          return false;
        }
        shape.seqLens.push_back(len);
        if (colon == std::string::npos)
          break;
        p = colon + 1;
      }
      continue;
    }
    char *end = nullptr;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end || v <= 0) {
      error = "'" + key + "' must be a positive integer, got '" + value + "'";
      return false;
    }
    if (upper == "B")
      shape.batch = v;
    else if (upper == "T")
      shape.length = v;
    else if (upper == "H")
      shape.keyHeads = v;
    else if (upper == "HV")
      shape.valueHeads = v;
    else if (upper == "DK")
      shape.dk = v;
    else if (upper == "DV")
      shape.dv = v;
    else if (upper == "GATES")
      shape.gateFloor = v;
    else {
      error = "unknown shape key '" + key +
              "' (expected B, T, H, HV, dk, dv, gates or seqlens)";
      return false;
    }
  }
  if (!shape.seqLens.empty()) {
    shape.batch = 1;
    shape.length = 0;
    for (int64_t l : shape.seqLens)
      shape.length += l;
  }
  return true;
}

std::vector<InputRole> classifyInputs(const SpecPlan &plan) {
  std::vector<InputRole> roles(plan.inputs.size(), InputRole::Other);
  auto mark = [&](int expr, InputRole role) {
    const SpecPlan::Expr &e = plan.exprs[expr];
    if (e.kind != SpecPlan::ExprKind::Input)
      return;
    // An address use wins over others (qed's q is read and feeds a).
    InputRole &r = roles[e.input];
    if (r == InputRole::Other || role == InputRole::Address)
      r = role;
  };
  using K = SpecPlan::FactorKind;
  std::function<void(const std::vector<SpecPlan::Factor> &)> visit =
      [&](const std::vector<SpecPlan::Factor> &factors) {
        for (const SpecPlan::Factor &f : factors) {
          if (f.scale >= 0)
            mark(f.scale, InputRole::Strength);
          switch (f.kind) {
          case K::Decay:
            mark(f.operands[0], InputRole::Gate);
            break;
          case K::DPLR:
            mark(f.operands[0], InputRole::Gate);
            mark(f.operands[1], InputRole::Address);
            mark(f.operands[2], InputRole::Address);
            break;
          case K::Erase:
            mark(f.operands[0], InputRole::Address);
            break;
          case K::Rank1:
            mark(f.operands[0], InputRole::Address);
            mark(f.operands[1], InputRole::Address);
            break;
          case K::Delta:
          case K::Write:
            mark(f.operands[0], InputRole::Address);
            mark(f.operands[1], InputRole::Value);
            break;
          case K::Repeat:
            visit(f.body);
            break;
          }
        }
      };
  visit(plan.factors);
  if (plan.query >= 0)
    mark(plan.query, InputRole::Address);
  for (const SpecPlan::Substep &s : plan.substeps) {
    auto markIf = [&](int expr, InputRole role) {
      if (expr >= 0)
        mark(expr, role);
    };
    markIf(s.gate, InputRole::Gate);
    markIf(s.eraseAlong, InputRole::Address);
    markIf(s.readAlong, InputRole::Address);
    markIf(s.strength, InputRole::Strength);
    markIf(s.key, InputRole::Address);
    markIf(s.value, InputRole::Value);
    markIf(s.writeStrength, InputRole::Strength);
    markIf(s.query, InputRole::Address);
  }
  return roles;
}

TensorMap randomInputs(const SpecPlan &plan, const RandomShape &requested,
                       const RunOptions &options) {
  // Packed sequences make one batch row of their total length.
  RandomShape shape = requested;
  if (!shape.seqLens.empty()) {
    shape.batch = 1;
    shape.length = 0;
    for (int64_t l : shape.seqLens)
      shape.length += l;
  }
  std::mt19937_64 rng(shape.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  const int64_t H = shape.keyHeads;
  const int64_t HV = shape.valueHeads ? shape.valueHeads : H;
  std::vector<std::pair<std::string, int64_t>> params = plan.params;
  for (auto &[name, value] : options.params)
    for (auto &p : params)
      if (p.first == name)
        p.second = value;
  int64_t substeps = plan.substepRows(params);

  std::vector<InputRole> roles = classifyInputs(plan);
  TensorMap tensors;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const SpecPlan::Input &in = plan.inputs[i];
    // Queries and keys are shared by a GVA group; gates, strengths and values
    // belong to the value head.
    int64_t heads =
        (in.side == Side::Key && roles[i] != InputRole::Gate) ? H : HV;
    int64_t width = in.side == Side::Key     ? shape.dk
                    : in.side == Side::Value ? shape.dv
                                             : 1;
    std::vector<int64_t> dims;
    if (in.rate != Rate::head) {
      dims.push_back(shape.batch);
      dims.push_back(in.rate == Rate::substep ? shape.length * substeps
                                              : shape.length);
    }
    dims.push_back(heads);
    if (in.side != Side::Scalar)
      dims.push_back(width);
    HostTensor t(dims, shape.dtype);
    for (int64_t row = 0; row < t.numel() / width; ++row) {
      double *x = &t[row * width];
      for (int64_t d = 0; d < width; ++d)
        x[d] = normal(rng);
      switch (roles[i]) {
      case InputRole::Gate: {
        // log σ(x), stretched so that its floor of -5 becomes -gateFloor.
        const double lowest = static_cast<double>(shape.gateFloor);
        for (int64_t d = 0; d < width; ++d)
          x[d] = std::clamp(-std::log1p(std::exp(-x[d])) * (lowest / 5.0),
                            -lowest, 0.0);
        break;
      }
      case InputRole::Strength:
        for (int64_t d = 0; d < width; ++d)
          x[d] = sigmoid(x[d]);
        break;
      case InputRole::Address:
        if (width > 1) {
          double norm = 0;
          for (int64_t d = 0; d < width; ++d)
            norm += x[d] * x[d];
          norm = std::sqrt(norm);
          for (int64_t d = 0; d < width; ++d)
            x[d] /= norm;
        } else {
          x[0] = sigmoid(x[0]);
        }
        break;
      case InputRole::Value:
      case InputRole::Other:
        break;
      }
      for (int64_t d = 0; d < width; ++d)
        x[d] = roundToDType(x[d], shape.dtype);
    }
    tensors[in.name] = std::move(t);
  }

  int64_t numSeqs = shape.seqLens.empty()
                        ? shape.batch
                        : static_cast<int64_t>(shape.seqLens.size());
  if (!shape.seqLens.empty()) {
    HostTensor cu({numSeqs + 1}, DType::I64);
    for (int64_t s = 0; s < numSeqs; ++s)
      cu[s + 1] = cu[s] + shape.seqLens[s];
    tensors["cu_seqlens"] = std::move(cu);
  }
  if (shape.initialState) {
    HostTensor init({numSeqs, HV, shape.dk, shape.dv}, DType::F32);
    for (double &x : init.values)
      x = roundToDType(0.5 * normal(rng), DType::F32);
    tensors["initial_state"] = std::move(init);
  }
  return tensors;
}

} // namespace rkc
