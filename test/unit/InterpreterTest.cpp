//===- InterpreterTest.cpp - The interpreter against independent results -===//
//
// The interpreter runs the example specs; the oracle (Reference.cpp) builds
// explicit dk x dk transition matrices straight from MATH.md. Also: the
// identities of MATH.md through the specs, GVA and varlen against their
// unpacked equivalents, the prologue spec, and input validation.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"
#include "TestSupport.h"

#include "Interpreter/RandomInputs.h"

#include <algorithm>
#include <cmath>

using namespace rkc;
using namespace rkc::test;

namespace {

constexpr double kBound = 1e-10; // float64 CPU paths (MATH.md)

//===----------------------------------------------------------------------===//
// Every example spec against the oracle
//===----------------------------------------------------------------------===//

struct OracleCase {
  const char *spec;
  int64_t dk, dv, T;
};

void PrintTo(const OracleCase &c, std::ostream *os) {
  *os << c.spec << " dk=" << c.dk << " dv=" << c.dv << " T=" << c.T;
}

class InterpreterVsOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(InterpreterVsOracle, MatchesExplicitTransitionMatrices) {
  OracleCase c = GetParam();
  SpecPlan plan = loadExample(c.spec);
  for (uint64_t seed : {11u, 12u}) {
    TensorMap inputs =
        reference::randomInputs(c.spec, /*B=*/2, c.T, /*H=*/3, c.dk, c.dv,
                                seed, /*withInitialState=*/true);
    expectClose(interpretOrFail(plan, inputs), reference::run(c.spec, inputs),
                kBound, c.spec);
  }
}

std::vector<OracleCase> oracleCases() {
  std::vector<OracleCase> cases;
  for (const char *spec : kExampleSpecs)
    for (auto [dk, dv] : {std::pair{8, 5}, std::pair{5, 8}})
      for (int64_t T : {1, 9})
        cases.push_back({spec, dk, dv, T});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    ExampleSpecs, InterpreterVsOracle, ::testing::ValuesIn(oracleCases()),
    [](const ::testing::TestParamInfo<OracleCase> &info) {
      return std::string(info.param.spec) + "_dk" +
             std::to_string(info.param.dk) + "_dv" +
             std::to_string(info.param.dv) + "_T" +
             std::to_string(info.param.T);
    });

TEST(Interpreter, StrongPerChannelDecay) {
  // Gates down to -20 a step: exp(G) underflows in a factored chunk form,
  // never in the token-by-token semantics.
  for (const char *spec : {"kda", "eda", "gdn2", "dplr"}) {
    SpecPlan plan = loadExample(spec);
    TensorMap inputs = reference::randomInputs(spec, 2, 12, 3, 6, 4, 3);
    for (double &g : inputs["g"].values)
      g *= 4.0; // [-5, 0] -> [-20, 0]
    expectClose(interpretOrFail(plan, inputs), reference::run(spec, inputs),
                kBound, spec);
  }
}

TEST(Interpreter, DeltaProductParameterOverride) {
  SpecPlan plan = loadExample("deltaproduct");
  for (int64_t n : {1, 3}) {
    TensorMap inputs = reference::randomInputs("deltaproduct", 2, 6, 3, 5, 7,
                                               21, true, n);
    RunOptions options;
    options.params = {{"n", n}};
    reference::Options ref;
    ref.n = n;
    expectClose(interpretOrFail(plan, inputs, options),
                reference::run("deltaproduct", inputs, ref), kBound,
                "deltaproduct n=" + std::to_string(n));
  }
}

TEST(Interpreter, ScaleOverride) {
  SpecPlan plan = loadExample("gdn");
  TensorMap inputs = reference::randomInputs("gdn", 2, 5, 3, 8, 8, 4);
  RunOptions options;
  options.scale = 0.3;
  reference::Options ref;
  ref.scale = 0.3;
  expectClose(interpretOrFail(plan, inputs, options),
              reference::run("gdn", inputs, ref), kBound, "gdn scale 0.3");
}

//===----------------------------------------------------------------------===//
// MATH.md's identities, through the example specs
//===----------------------------------------------------------------------===//

/// The tensors of `from` that `spec` takes (plus initial_state).
TensorMap only(const TensorMap &from, std::initializer_list<const char *> names) {
  TensorMap out;
  for (const char *n : names)
    out[n] = from.at(n);
  if (from.count("initial_state"))
    out["initial_state"] = from.at("initial_state");
  return out;
}

/// Per-token scalar [B,T,H] broadcast to a per-value-channel [B,T,H,dv].
HostTensor broadcastLast(const HostTensor &scalar, int64_t width) {
  std::vector<int64_t> shape = scalar.shape;
  shape.push_back(width);
  HostTensor out(shape);
  for (int64_t i = 0; i < scalar.numel(); ++i)
    for (int64_t d = 0; d < width; ++d)
      out[i * width + d] = scalar[i];
  return out;
}

/// x[i, :] * s[i] for a vector tensor and a per-row scalar tensor.
HostTensor scaleRows(const HostTensor &x, const HostTensor &s) {
  HostTensor out = x;
  int64_t width = x.shape.back();
  for (int64_t i = 0; i < s.numel(); ++i)
    for (int64_t d = 0; d < width; ++d)
      out[i * width + d] *= s[i];
  return out;
}

class Identities : public ::testing::TestWithParam<std::pair<int, int>> {
protected:
  int64_t dk() const { return GetParam().first; }
  int64_t dv() const { return GetParam().second; }
  TensorMap random(const char *spec, uint64_t seed) {
    return reference::randomInputs(spec, 2, 7, 3, dk(), dv(), seed);
  }
};

TEST_P(Identities, EdaWithGammaZeroIsKda) {
  TensorMap in = random("eda", 1);
  for (double &x : in["gamma"].values)
    x = 0;
  expectClose(interpretOrFail(loadExample("eda"), in),
              interpretOrFail(loadExample("kda"),
                              only(in, {"q", "k", "v", "g", "beta"})),
              kBound, "eda(gamma=0) vs kda");
}

TEST_P(Identities, QedWithLambdaZeroIsGdn2WithBTimesK) {
  TensorMap in = random("qed", 2);
  for (double &x : in["lam"].values)
    x = 0;
  TensorMap gdn2 = only(in, {"q", "k", "v", "g", "w"});
  gdn2["a"] = in["b"];
  for (int64_t i = 0; i < gdn2["a"].numel(); ++i)
    gdn2["a"][i] *= in["k"][i];
  expectClose(interpretOrFail(loadExample("qed"), in),
              interpretOrFail(loadExample("gdn2"), gdn2), kBound,
              "qed(lam=0) vs gdn2(a = b*k)");
}

TEST_P(Identities, Gdn2WithBetaKIsKda) {
  TensorMap in = random("kda", 3);
  TensorMap gdn2 = only(in, {"q", "k", "v", "g"});
  gdn2["a"] = scaleRows(in["k"], in["beta"]);
  gdn2["w"] = broadcastLast(in["beta"], dv());
  expectClose(interpretOrFail(loadExample("gdn2"), gdn2),
              interpretOrFail(loadExample("kda"), in), kBound,
              "gdn2(a = beta k, w = beta) vs kda");
}

TEST_P(Identities, KdaWithBroadcastScalarGateIsGdn) {
  TensorMap in = random("gdn", 4);
  TensorMap kda = in;
  kda["g"] = broadcastLast(in["g"], dk());
  expectClose(interpretOrFail(loadExample("kda"), kda),
              interpretOrFail(loadExample("gdn"), in), kBound,
              "kda(broadcast g) vs gdn");
}

TEST_P(Identities, DeltaProductWithOneSubstepIsGdn) {
  TensorMap in = random("gdn", 5);
  RunOptions n1;
  n1.params = {{"n", 1}};
  expectClose(interpretOrFail(loadExample("deltaproduct"), in, n1),
              interpretOrFail(loadExample("gdn"), in), kBound,
              "deltaproduct(n=1) vs gdn");
}

TEST_P(Identities, EdaWithEEqualKIsGdn2) {
  TensorMap in = random("eda", 6);
  in["e"] = in["k"];
  // (I - βkkᵀ)(I - γkkᵀ) = I - (β + γ - βγ|k|²) k kᵀ
  HostTensor coef = in["beta"];
  for (int64_t i = 0; i < coef.numel(); ++i) {
    double k2 = 0;
    for (int64_t d = 0; d < dk(); ++d)
      k2 += in["k"][i * dk() + d] * in["k"][i * dk() + d];
    double b = in["beta"][i], c = in["gamma"][i];
    coef[i] = b + c - b * c * k2;
  }
  TensorMap gdn2 = only(in, {"q", "k", "v", "g"});
  gdn2["a"] = scaleRows(in["k"], coef);
  gdn2["w"] = broadcastLast(in["beta"], dv());
  expectClose(interpretOrFail(loadExample("eda"), in),
              interpretOrFail(loadExample("gdn2"), gdn2), kBound,
              "eda(e = k) vs gdn2");
}

INSTANTIATE_TEST_SUITE_P(Shapes, Identities,
                         ::testing::Values(std::pair{8, 5}, std::pair{5, 8}));

//===----------------------------------------------------------------------===//
// Random inputs: the gate floor (`--random ...,gates=N`)
//===----------------------------------------------------------------------===//

TEST(RandomInputs, GateFloorStretchesTheGates) {
  SpecPlan plan = loadExample("kda");
  RandomShape shape;
  shape.batch = 2, shape.length = 64, shape.keyHeads = 2, shape.dk = 16,
  shape.dv = 8, shape.seed = 4, shape.dtype = DType::F64;
  auto range = [&](int64_t floor) {
    shape.gateFloor = floor;
    const HostTensor &g = randomInputs(plan, shape)["g"];
    auto [lo, hi] = std::minmax_element(g.values.begin(), g.values.end());
    return std::pair{*lo, *hi};
  };
  auto [lo5, hi5] = range(5);
  EXPECT_GE(lo5, -5.0);
  EXPECT_LE(hi5, 0.0);
  auto [lo40, hi40] = range(40);
  EXPECT_GE(lo40, -40.0);
  EXPECT_LE(hi40, 0.0);
  // The same draws, eight times as strong: past what -5 allows.
  EXPECT_LT(lo40, -5.0);
  EXPECT_NEAR(lo40, 8 * lo5, 1e-9 * std::abs(lo40));

  std::string error;
  RandomShape parsed;
  ASSERT_TRUE(parseRandomShape("B=1,gates=40", parsed, error)) << error;
  EXPECT_EQ(parsed.gateFloor, 40);
  EXPECT_FALSE(parseRandomShape("gates=-3", parsed, error));
}

//===----------------------------------------------------------------------===//
// The prologue spec: kda_prologue == kda on prologue-applied inputs
//===----------------------------------------------------------------------===//

TEST(Interpreter, KdaPrologueIsKdaOnTransformedInputs) {
  const int64_t B = 2, T = 6, H = 3, dk = 8, dv = 5;
  TensorMap raw = reference::randomInputs("kda", B, T, H, dk, dv, 8);
  SpecPlan plan = loadExample("kda_prologue");
  RandomShape shape;
  shape.batch = B, shape.length = T, shape.keyHeads = H, shape.dk = dk,
  shape.dv = dv, shape.seed = 9, shape.dtype = DType::F64;
  TensorMap drawn = randomInputs(plan, shape);
  raw["A_log"] = drawn["A_log"];
  raw["dt_bias"] = drawn["dt_bias"];
  for (double &x : raw["g"].values) // raw gate pre-activations
    x = 3 * x + 0.5;
  for (double &x : raw["beta"].values) // raw logits
    x = 4 * x - 2;
  for (double &x : raw["q"].values)
    x *= 3;

  TensorMap kda = raw;
  for (const char *name : {"q", "k"}) {
    HostTensor &t = kda[name];
    for (int64_t row = 0; row < t.numel() / dk; ++row) {
      double sum = 0;
      for (int64_t d = 0; d < dk; ++d)
        sum += t[row * dk + d] * t[row * dk + d];
      for (int64_t d = 0; d < dk; ++d)
        t[row * dk + d] /= std::sqrt(sum + 1e-6);
    }
  }
  for (double &x : kda["beta"].values)
    x = 1 / (1 + std::exp(-x));
  for (int64_t row = 0; row < B * T * H; ++row) {
    int64_t h = row % H;
    for (int64_t d = 0; d < dk; ++d) {
      double x = raw["g"][row * dk + d] + raw["dt_bias"][h * dk + d];
      kda["g"][row * dk + d] =
          -std::exp(raw["A_log"][h]) * std::log1p(std::exp(x));
    }
  }
  kda.erase("A_log");
  kda.erase("dt_bias");
  expectClose(interpretOrFail(plan, raw), reference::run("kda", kda), kBound,
              "kda_prologue");
}

//===----------------------------------------------------------------------===//
// GVA and varlen against their unpacked equivalents
//===----------------------------------------------------------------------===//

/// Keeps heads h with h % group == 0 of a [B, T', HV, d] tensor.
HostTensor keyHeadsOf(const HostTensor &t, int64_t group) {
  std::vector<int64_t> shape = t.shape;
  int64_t HV = shape[2], width = shape[3];
  shape[2] = HV / group;
  HostTensor out(shape);
  for (int64_t row = 0; row < shape[0] * shape[1]; ++row)
    for (int64_t h = 0; h < shape[2]; ++h)
      for (int64_t d = 0; d < width; ++d)
        out[(row * shape[2] + h) * width + d] =
            t[(row * HV + h * group) * width + d];
  return out;
}

/// Makes every value head of a group share the first head's vector.
void shareWithinGroups(HostTensor &t, int64_t group) {
  int64_t HV = t.shape[2], width = t.shape[3];
  for (int64_t row = 0; row < t.shape[0] * t.shape[1]; ++row)
    for (int64_t h = 0; h < HV; ++h)
      for (int64_t d = 0; d < width; ++d)
        t[(row * HV + h) * width + d] =
            t[(row * HV + h / group * group) * width + d];
}

TEST(Interpreter, GroupedValueHeadsMatchReplicatedKeys) {
  const int64_t group = 2, HV = 4;
  for (const char *spec : kExampleSpecs) {
    TensorMap full = reference::randomInputs(spec, 2, 7, HV, 6, 5, 31);
    TensorMap gva = full;
    for (const char *name : {"q", "k"}) {
      shareWithinGroups(full[name], group);
      gva[name] = keyHeadsOf(full[name], group);
    }
    expectClose(interpretOrFail(loadExample(spec), gva),
                reference::run(spec, full), kBound,
                std::string(spec) + " GVA");
  }
}

/// Concatenates [1, T_i, ...] tensors along dim 1.
HostTensor concatTokens(const std::vector<HostTensor> &parts) {
  std::vector<int64_t> shape = parts.front().shape;
  shape[1] = 0;
  for (const HostTensor &p : parts)
    shape[1] += p.shape[1];
  HostTensor out(shape);
  out.values.clear();
  for (const HostTensor &p : parts)
    out.values.insert(out.values.end(), p.values.begin(), p.values.end());
  return out;
}

TEST(Interpreter, VarlenMatchesSequencesRunAlone) {
  const std::vector<int64_t> lengths = {3, 17, 1, 9, 0};
  for (const char *spec : kExampleSpecs) {
    SpecPlan plan = loadExample(spec);
    std::vector<TensorMap> seqs;
    for (size_t i = 0; i < lengths.size(); ++i) {
      seqs.push_back(reference::randomInputs(
          spec, 1, std::max<int64_t>(lengths[i], 1), 2, 6, 4, 40 + i));
      if (lengths[i] == 0) // an empty sequence keeps its initial state
        for (auto &[name, t] : seqs.back())
          if (t.rank() >= 3 && name != "initial_state") {
            t.shape[1] = 0;
            t.values.clear();
          }
    }
    TensorMap packed;
    for (auto &[name, t] : seqs.front()) {
      std::vector<HostTensor> parts;
      for (TensorMap &s : seqs)
        parts.push_back(s[name]);
      if (name == "lam") { // per-head constant: one for all sequences
        for (TensorMap &s : seqs)
          s[name] = t;
        packed[name] = t;
      } else if (name == "initial_state") { // [1, H, dk, dv] each: stack
        HostTensor stacked = concatTokens(parts); // same bytes as dim 0
        stacked.shape = {static_cast<int64_t>(parts.size()), 2, 6, 4};
        packed[name] = stacked;
      } else {
        packed[name] = concatTokens(parts);
      }
    }
    HostTensor cu({static_cast<int64_t>(lengths.size()) + 1}, DType::I64);
    for (size_t i = 0; i < lengths.size(); ++i)
      cu[i + 1] = cu[i] + lengths[i];
    packed["cu_seqlens"] = cu;

    TensorMap got = interpretOrFail(plan, packed);
    std::vector<HostTensor> oParts, stateParts;
    for (TensorMap &s : seqs) {
      TensorMap alone = reference::run(spec, s);
      oParts.push_back(alone["o"]);
      stateParts.push_back(alone["final_state"]);
    }
    TensorMap want;
    want["o"] = concatTokens(oParts);
    want["final_state"] = concatTokens(stateParts);
    want["final_state"].shape = got["final_state"].shape;
    expectClose(got, want, kBound, std::string(spec) + " varlen");
  }
}

//===----------------------------------------------------------------------===//
// Input validation: one clear error, never a crash
//===----------------------------------------------------------------------===//

std::string errorOf(const SpecPlan &plan, const TensorMap &inputs,
                    const RunOptions &options = {}) {
  TensorMap outputs;
  std::string error;
  EXPECT_FALSE(interpret(plan, inputs, options, outputs, error));
  return error;
}

TEST(InterpreterValidation, RejectsBadTensors) {
  SpecPlan plan = loadExample("eda");
  TensorMap good = reference::randomInputs("eda", 2, 5, 3, 8, 4, 1);
  auto with = [&](auto change) {
    TensorMap t = good;
    change(t);
    return errorOf(plan, t);
  };
  using ::testing::HasSubstr;
  EXPECT_THAT(with([](TensorMap &t) { t.erase("beta"); }),
              HasSubstr("missing input 'beta'"));
  EXPECT_THAT(with([](TensorMap &t) { t.erase("beta"); }),
              HasSubstr("[B, T, H]"));
  EXPECT_THAT(with([](TensorMap &t) { t["bogus"] = t["beta"]; }),
              HasSubstr("unexpected tensor 'bogus'"));
  EXPECT_THAT(with([](TensorMap &t) { t["gamma"].shape = {2, 5, 3, 1}; }),
              HasSubstr("input 'gamma' has shape [2, 5, 3, 1]"));
  EXPECT_THAT(with([](TensorMap &t) { t["e"].dtype = DType::I64; }),
              HasSubstr("input 'e' has dtype I64"));
  EXPECT_THAT(with([](TensorMap &t) {
                t["k"] = HostTensor({2, 5, 3, 7});
              }),
              HasSubstr("does not match dk = 8"));
  EXPECT_THAT(with([](TensorMap &t) { t["v"] = HostTensor({2, 6, 3, 4}); }),
              HasSubstr("input 'v' has shape [2, 6, 3, 4]; expected"));
  EXPECT_THAT(with([](TensorMap &t) { t["v"] = HostTensor({2, 5, 5, 4}); }),
              HasSubstr("do not form a GVA group"));
  EXPECT_THAT(
      with([](TensorMap &t) { t["initial_state"] = HostTensor({2, 3, 4, 8}); }),
      HasSubstr("initial_state has shape [2, 3, 4, 8]; expected [N, HV, dk, "
                "dv] = [2, 3, 8, 4]"));
}

TEST(InterpreterValidation, RejectsBadCuSeqlens) {
  SpecPlan plan = loadExample("gdn");
  TensorMap packed = reference::randomInputs("gdn", 1, 10, 2, 4, 4, 2, false);
  auto cu = [&](std::vector<double> values, DType dtype = DType::I64) {
    TensorMap t = packed;
    HostTensor c({static_cast<int64_t>(values.size())}, dtype);
    c.values = values;
    t["cu_seqlens"] = c;
    return errorOf(plan, t);
  };
  using ::testing::HasSubstr;
  EXPECT_THAT(cu({1, 10}), HasSubstr("must start at 0"));
  EXPECT_THAT(cu({0, 6, 4, 10}), HasSubstr("must be non-decreasing"));
  EXPECT_THAT(cu({0, 4, 9}), HasSubstr("must end at T = 10"));
  EXPECT_THAT(cu({0, 4, 10}, DType::F32), HasSubstr("cu_seqlens has dtype F32"));
  EXPECT_THAT(cu({0}), HasSubstr("expected [N + 1]"));
  TensorMap batched = reference::randomInputs("gdn", 2, 10, 2, 4, 4, 2, false);
  HostTensor c({2}, DType::I64);
  c.values = {0, 10};
  batched["cu_seqlens"] = c;
  EXPECT_THAT(errorOf(plan, batched), HasSubstr("but B = 2"));
  // initial_state is per sequence once cu_seqlens is given.
  TensorMap t = packed;
  HostTensor c3({3}, DType::I64);
  c3.values = {0, 4, 10};
  t["cu_seqlens"] = c3;
  t["initial_state"] = HostTensor({1, 2, 4, 4});
  EXPECT_THAT(errorOf(plan, t), HasSubstr("expected [N, HV, dk, dv] = [2, 2"));
}

TEST(InterpreterValidation, RejectsBadParameters) {
  SpecPlan plan = loadExample("deltaproduct");
  TensorMap in = reference::randomInputs("deltaproduct", 1, 4, 2, 4, 4, 2);
  RunOptions unknown, zero, mismatch;
  unknown.params = {{"m", 2}};
  zero.params = {{"n", 0}};
  mismatch.params = {{"n", 3}}; // inputs have 2 rows a token
  using ::testing::HasSubstr;
  EXPECT_THAT(errorOf(plan, in, unknown), HasSubstr("no parameter 'm'"));
  EXPECT_THAT(errorOf(plan, in, zero), HasSubstr("positive integer, got 0"));
  EXPECT_THAT(errorOf(plan, in, mismatch),
              HasSubstr("input 'k' has shape [1, 8, 2, 4]; expected [B, T*n, "
                        "H, dk] = [1, 12, 2, 4]"));
}

} // namespace
