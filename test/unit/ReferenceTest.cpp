//===- ReferenceTest.cpp - Self-tests of the float64 oracle ---------------===//
//
// The oracle is only useful if it is right, so it is checked three ways:
// against the identities between recurrences that MATH.md lists (exact up to
// rounding, so the bound is 1e-12), against small cases computed by hand, and
// against the conventions (read after update, where and how `scale` applies).
//
//===----------------------------------------------------------------------===//

#include "Reference.h"
#include "Support/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

using rkc::HostTensor;
using rkc::TensorMap;
using rkc::reference::Options;
using rkc::reference::randomInputs;
using rkc::reference::run;

namespace {

constexpr int64_t B = 2, T = 7, H = 3;
constexpr double kExact = 1e-12;

/// Both orders of dk and dv, so a swapped key/value axis cannot hide.
const std::vector<std::pair<int64_t, int64_t>> kShapes = {{8, 5}, {5, 8}};

double norm(const HostTensor &t) {
  double s = 0;
  for (double x : t.values)
    s += x * x;
  return std::sqrt(s);
}

/// Both outputs agree to `bound`, and the reference is not trivially zero
/// (MATH.md: never test on zeros).
void expectSame(const TensorMap &x, const TensorMap &ref,
                double bound = kExact) {
  for (const char *name : {"o", "final_state"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(x.count(name) && ref.count(name));
    EXPECT_GT(norm(ref.at(name)), 1e-3);
    EXPECT_LT(rkc::relativeError(x.at(name), ref.at(name)), bound);
  }
}

/// [.., n] from [..] by repeating each element n times (a broadcast of a
/// per-token scalar to a per-channel vector).
HostTensor broadcastLast(const HostTensor &t, int64_t n) {
  std::vector<int64_t> shape = t.shape;
  shape.push_back(n);
  HostTensor r(shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    for (int64_t j = 0; j < n; ++j)
      r[i * n + j] = t[i];
  return r;
}

HostTensor filled(std::vector<int64_t> shape, double value) {
  HostTensor t(std::move(shape));
  for (double &x : t.values)
    x = value;
  return t;
}

HostTensor tensor(std::vector<int64_t> shape, std::vector<double> values) {
  HostTensor t(std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  t.values = std::move(values);
  return t;
}

void expectValues(const HostTensor &t, const std::vector<int64_t> &shape,
                  const std::vector<double> &values) {
  ASSERT_EQ(t.shape, shape);
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR(t.values[i], values[i], 1e-12) << "element " << i;
}

//===----------------------------------------------------------------------===//
// Identities from MATH.md.
//===----------------------------------------------------------------------===//

TEST(Reference, EdaWithGammaZeroIsKda) {
  uint64_t seed = 100;
  for (auto [dk, dv] : kShapes) {
    SCOPED_TRACE("dk=" + std::to_string(dk) + " dv=" + std::to_string(dv));
    TensorMap in = randomInputs("eda", B, T, H, dk, dv, seed++);
    in["gamma"] = filled({B, T, H}, 0.0);
    expectSame(run("eda", in), run("kda", in));
  }
}

TEST(Reference, QedWithLambdaZeroIsGdn2WithBTimesK) {
  uint64_t seed = 200;
  for (auto [dk, dv] : kShapes) {
    SCOPED_TRACE("dk=" + std::to_string(dk) + " dv=" + std::to_string(dv));
    TensorMap in = randomInputs("qed", B, T, H, dk, dv, seed++);
    in["lam"] = filled({H}, 0.0);
    HostTensor a(in["k"].shape);
    for (int64_t i = 0; i < a.numel(); ++i)
      a[i] = in["b"][i] * in["k"][i];
    in["a"] = a;
    expectSame(run("qed", in), run("gdn2", in));
  }
}

/// With lam != 0 the erase vector gains lam_h P_k(b . q) built from the raw q.
/// Building it here from the formula checks the wiring of lam per head and of
/// the projection (and that scale stays out of it: the default scale != 1).
TEST(Reference, QedIsGdn2WithItsEraseVector) {
  uint64_t seed = 250;
  for (auto [dk, dv] : kShapes) {
    SCOPED_TRACE("dk=" + std::to_string(dk) + " dv=" + std::to_string(dv));
    TensorMap in = randomInputs("qed", B, T, H, dk, dv, seed++);
    const HostTensor &q = in["q"], &k = in["k"], &b = in["b"];
    HostTensor a(k.shape);
    for (int64_t row = 0; row < B * T * H; ++row) {
      double lam = in["lam"][row % H];
      double kbq = 0;
      for (int64_t i = 0; i < dk; ++i)
        kbq += k[row * dk + i] * b[row * dk + i] * q[row * dk + i];
      for (int64_t i = 0; i < dk; ++i) {
        int64_t x = row * dk + i;
        a[x] = b[x] * k[x] + lam * (b[x] * q[x] - k[x] * kbq);
      }
    }
    in["a"] = a;
    expectSame(run("qed", in), run("gdn2", in));
  }
}

TEST(Reference, Gdn2WithBetaKAndBetaWriteIsKda) {
  uint64_t seed = 300;
  for (auto [dk, dv] : kShapes) {
    SCOPED_TRACE("dk=" + std::to_string(dk) + " dv=" + std::to_string(dv));
    TensorMap in = randomInputs("kda", B, T, H, dk, dv, seed++);
    HostTensor a(in["k"].shape);
    for (int64_t i = 0; i < a.numel(); ++i)
      a[i] = in["beta"][i / dk] * in["k"][i];
    in["a"] = a;
    in["w"] = broadcastLast(in["beta"], dv);
    expectSame(run("gdn2", in), run("kda", in));
  }
}

TEST(Reference, KdaWithBroadcastScalarGateIsGdn) {
  uint64_t seed = 400;
  for (auto [dk, dv] : kShapes) {
    SCOPED_TRACE("dk=" + std::to_string(dk) + " dv=" + std::to_string(dv));
    TensorMap gdn = randomInputs("gdn", B, T, H, dk, dv, seed++);
    TensorMap kda = gdn;
    kda["g"] = broadcastLast(gdn["g"], dk);
    expectSame(run("kda", kda), run("gdn", gdn));
  }
}

TEST(Reference, DeltaProductWithOneSubStepIsGdn) {
  uint64_t seed = 500;
  for (auto [dk, dv] : kShapes) {
    SCOPED_TRACE("dk=" + std::to_string(dk) + " dv=" + std::to_string(dv));
    TensorMap in = randomInputs("gdn", B, T, H, dk, dv, seed++);
    Options one;
    one.n = 1;
    expectSame(run("deltaproduct", in, one), run("gdn", in));
  }
}

/// n = 2 with every second sub-step idle (beta = 0) is gdn on the first
/// sub-steps: the decay is applied once per token, not once per sub-step.
TEST(Reference, DeltaProductWithIdleSubStepsIsGdn) {
  uint64_t seed = 550;
  for (auto [dk, dv] : kShapes) {
    SCOPED_TRACE("dk=" + std::to_string(dk) + " dv=" + std::to_string(dv));
    TensorMap dp = randomInputs("deltaproduct", B, T, H, dk, dv, seed++,
                                /*withInitialState=*/true, /*n=*/2);
    TensorMap gdn = dp;
    gdn["k"] = HostTensor({B, T, H, dk});
    gdn["v"] = HostTensor({B, T, H, dv});
    gdn["beta"] = HostTensor({B, T, H});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t h = 0; h < H; ++h) {
          int64_t sub = (b * T * 2 + t * 2) * H + h; // row t*2 + 0
          int64_t tok = (b * T + t) * H + h;
          dp["beta"][sub + H] = 0.0; // row t*2 + 1
          gdn["beta"][tok] = dp["beta"][sub];
          for (int64_t i = 0; i < dk; ++i)
            gdn["k"][tok * dk + i] = dp["k"][sub * dk + i];
          for (int64_t i = 0; i < dv; ++i)
            gdn["v"][tok * dv + i] = dp["v"][sub * dv + i];
        }
    expectSame(run("deltaproduct", dp), run("gdn", gdn));
  }
}

/// (I - beta k k^T)(I - gamma k k^T) = I - (beta + gamma - beta gamma |k|^2)
/// k k^T, so eda with e = k is a gdn2 with a parallel to k (and not kda).
TEST(Reference, EdaWithEEqualKIsGdn2) {
  uint64_t seed = 600;
  for (auto [dk, dv] : kShapes) {
    SCOPED_TRACE("dk=" + std::to_string(dk) + " dv=" + std::to_string(dv));
    TensorMap in = randomInputs("eda", B, T, H, dk, dv, seed++);
    in["e"] = in["k"];
    HostTensor a(in["k"].shape);
    for (int64_t row = 0; row < B * T * H; ++row) {
      double beta = in["beta"][row], gamma = in["gamma"][row], kk = 0;
      for (int64_t i = 0; i < dk; ++i)
        kk += in["k"][row * dk + i] * in["k"][row * dk + i];
      for (int64_t i = 0; i < dk; ++i)
        a[row * dk + i] = (beta + gamma - beta * gamma * kk) *
                          in["k"][row * dk + i];
    }
    in["a"] = a;
    in["w"] = broadcastLast(in["beta"], dv);
    TensorMap eda = run("eda", in);
    expectSame(eda, run("gdn2", in));
    // ... and it really is not kda (gamma > 0 erases more).
    EXPECT_GT(rkc::relativeError(run("kda", in).at("o"), eda.at("o")), 1e-3);
  }
}

//===----------------------------------------------------------------------===//
// Further exact relations between the specs.
//===----------------------------------------------------------------------===//

/// linear_attention is dplr with no decay and no rank-1 part; deltanet with
/// beta = 0 keeps its state, which is linear_attention writing v = 0.
TEST(Reference, LinearAttentionRelations) {
  uint64_t seed = 700;
  for (auto [dk, dv] : kShapes) {
    SCOPED_TRACE("dk=" + std::to_string(dk) + " dv=" + std::to_string(dv));
    TensorMap in = randomInputs("dplr", B, T, H, dk, dv, seed++);
    in["g"] = filled({B, T, H, dk}, 0.0);
    in["a"] = filled({B, T, H, dk}, 0.0);
    expectSame(run("dplr", in), run("linear_attention", in));

    in["beta"] = filled({B, T, H}, 0.0);
    TensorMap still = in;
    still["v"] = filled({B, T, H, dv}, 0.0);
    expectSame(run("deltanet", in), run("linear_attention", still));
  }
}

/// deltanet = gdn with g = 0 = kda with g = 0 = comba with p = k, g = 0, and
/// dplr with a = -beta k, b = k, k' = beta k (the RWKV-7 form of the delta
/// rule); gdn = comba with p = k (a scalar decay commutes with the factor).
TEST(Reference, DeltaRuleFamilyRelations) {
  uint64_t seed = 800;
  for (auto [dk, dv] : kShapes) {
    SCOPED_TRACE("dk=" + std::to_string(dk) + " dv=" + std::to_string(dv));
    TensorMap in = randomInputs("gdn", B, T, H, dk, dv, seed++);
    in["p"] = in["k"];
    expectSame(run("comba", in), run("gdn", in));

    TensorMap flat = in;
    flat["g"] = filled({B, T, H}, 0.0);
    TensorMap deltanet = run("deltanet", flat);
    expectSame(run("gdn", flat), deltanet);
    expectSame(run("comba", flat), deltanet);
    TensorMap kda = flat;
    kda["g"] = filled({B, T, H, dk}, 0.0);
    expectSame(run("kda", kda), deltanet);

    TensorMap dplr = kda;
    HostTensor a(in["k"].shape), k(in["k"].shape);
    for (int64_t i = 0; i < a.numel(); ++i) {
      k[i] = in["beta"][i / dk] * in["k"][i];
      a[i] = -k[i];
    }
    dplr["a"] = a;
    dplr["b"] = in["k"];
    dplr["k"] = k;
    expectSame(run("dplr", dplr), deltanet);
  }
}

//===----------------------------------------------------------------------===//
// Small cases computed by hand.
//===----------------------------------------------------------------------===//

/// deltanet, dk = 2, dv = 1, T = 2, scale = 1, S0 = (1, 2)^T.
///
/// Token 0: k = (1, 0), v = 3, beta = 0.5, q = (1, 1).
///   (I - 0.5 k k^T) = diag(0.5, 1), so M S0 = (0.5, 2); write 0.5 k 3 =
///   (1.5, 0); S1 = (2, 2); o0 = 2 + 2 = 4.
/// Token 1: k = (0.6, 0.8), v = -1, beta = 1, q = (1, -1).
///   k^T S1 = 1.2 + 1.6 = 2.8; M S1 = S1 - k 2.8 = (2 - 1.68, 2 - 2.24) =
///   (0.32, -0.24); write k (-1) = (-0.6, -0.8); S2 = (-0.28, -1.04);
///   o1 = -0.28 + 1.04 = 0.76.
TEST(Reference, DeltaNetByHand) {
  TensorMap in;
  in["q"] = tensor({1, 2, 1, 2}, {1, 1, 1, -1});
  in["k"] = tensor({1, 2, 1, 2}, {1, 0, 0.6, 0.8});
  in["v"] = tensor({1, 2, 1, 1}, {3, -1});
  in["beta"] = tensor({1, 2, 1}, {0.5, 1});
  in["initial_state"] = tensor({1, 1, 2, 1}, {1, 2});
  Options options;
  options.scale = 1;
  TensorMap out = run("deltanet", in, options);
  expectValues(out.at("o"), {1, 2, 1, 1}, {4, 0.76});
  expectValues(out.at("final_state"), {1, 1, 2, 1}, {-0.28, -1.04});
}

/// dplr, dk = 2, dv = 1, T = 2, scale = 1, S0 = (1, 2)^T.
///
/// Token 0: exp(g) = (0.5, 1), a = (1, 0), b = (0, 1), k = (1, 1), v = 2,
///   q = (1, 0). M = diag(0.5, 1) + a b^T = [[0.5, 1], [0, 1]]: b reads
///   S0[1] = 2 and a writes it into row 0. M S0 = (2.5, 2); write k 2 =
///   (2, 2); S1 = (4.5, 4); o0 = 4.5. (With a and b swapped, M S0 would be
///   (0.5, 3) and o0 = 2.5.)
/// Token 1: exp(g) = (1, 0.25), a = (0, -1), b = (1, 1), k = (0, 1), v = -1,
///   q = (1, 1). M = [[1, 0], [-1, -0.75]]; M S1 = (4.5, -4.5 - 3) =
///   (4.5, -7.5); write (0, -1); S2 = (4.5, -8.5); o1 = 4.5 - 8.5 = -4.
TEST(Reference, DplrByHand) {
  TensorMap in;
  in["q"] = tensor({1, 2, 1, 2}, {1, 0, 1, 1});
  in["k"] = tensor({1, 2, 1, 2}, {1, 1, 0, 1});
  in["v"] = tensor({1, 2, 1, 1}, {2, -1});
  in["g"] = tensor({1, 2, 1, 2}, {std::log(0.5), 0, 0, std::log(0.25)});
  in["a"] = tensor({1, 2, 1, 2}, {1, 0, 0, -1});
  in["b"] = tensor({1, 2, 1, 2}, {0, 1, 1, 1});
  in["initial_state"] = tensor({1, 1, 2, 1}, {1, 2});
  Options options;
  options.scale = 1;
  TensorMap out = run("dplr", in, options);
  expectValues(out.at("o"), {1, 2, 1, 1}, {4.5, -4});
  expectValues(out.at("final_state"), {1, 1, 2, 1}, {4.5, -8.5});
}

/// gdn2 reads at a and writes at k (MATH.md pitfall 3). dk = 2, dv = 1, T = 1,
/// scale = 1, S0 = (1, 2)^T, g = 0, k = (1, 0), a = (0, 1), w = 1, v = 0,
/// q = (1, 0): (I - k a^T) = [[1, -1], [0, 1]], S1 = (1 - 2, 2) = (-1, 2),
/// o = -1. The transposed factor (I - a k^T) would give S1 = (1, 1), o = 1.
TEST(Reference, Gdn2ReadsAtAWritesAtKByHand) {
  TensorMap in;
  in["q"] = tensor({1, 1, 1, 2}, {1, 0});
  in["k"] = tensor({1, 1, 1, 2}, {1, 0});
  in["v"] = tensor({1, 1, 1, 1}, {0});
  in["g"] = tensor({1, 1, 1, 2}, {0, 0});
  in["a"] = tensor({1, 1, 1, 2}, {0, 1});
  in["w"] = tensor({1, 1, 1, 1}, {1});
  in["initial_state"] = tensor({1, 1, 2, 1}, {1, 2});
  Options options;
  options.scale = 1;
  TensorMap out = run("gdn2", in, options);
  expectValues(out.at("o"), {1, 1, 1, 1}, {-1});
  expectValues(out.at("final_state"), {1, 1, 2, 1}, {-1, 2});
}

/// eda applies Diag(exp g) first, then the e erase, then the k delta step.
/// dk = 2, dv = 1, T = 1, scale = 1, S0 = (1, 2)^T, exp(g) = (0.5, 1),
/// e = (0.6, 0.8), gamma = 1, k = (1, 0), beta = 0.5, v = 5, q = (1, 1).
///   decay:  S = (0.5, 2)
///   erase:  e^T S = 0.3 + 1.6 = 1.9; S = (0.5 - 1.14, 2 - 1.52) = (-0.64, 0.48)
///   delta:  k^T S = -0.64; S = (-0.64 + 0.32, 0.48) = (-0.32, 0.48)
///   write:  0.5 k 5 = (2.5, 0); S1 = (2.18, 0.48); o = 2.66.
/// (The two rank-1 factors in the other order give S1 = (1.86, 0.48),
/// o = 2.34; the decay applied last gives S1 = (2.42, 0.24), o = 2.66 too
/// by coincidence, but final_state differs.)
TEST(Reference, EdaByHand) {
  TensorMap in;
  in["q"] = tensor({1, 1, 1, 2}, {1, 1});
  in["k"] = tensor({1, 1, 1, 2}, {1, 0});
  in["v"] = tensor({1, 1, 1, 1}, {5});
  in["g"] = tensor({1, 1, 1, 2}, {std::log(0.5), 0});
  in["beta"] = tensor({1, 1, 1}, {0.5});
  in["e"] = tensor({1, 1, 1, 2}, {0.6, 0.8});
  in["gamma"] = tensor({1, 1, 1}, {1});
  in["initial_state"] = tensor({1, 1, 2, 1}, {1, 2});
  Options options;
  options.scale = 1;
  TensorMap out = run("eda", in, options);
  expectValues(out.at("o"), {1, 1, 1, 1}, {2.66});
  expectValues(out.at("final_state"), {1, 1, 2, 1}, {2.18, 0.48});
}

/// comba reads at p and writes at k. dk = 2, dv = 1, T = 1, scale = 1,
/// S0 = (1, 2)^T, exp(g) = 0.5, k = (1, 0), p = (0, 1), beta = 0.5, v = 4,
/// q = (1, 0).
///   decay:  S = (0.5, 1)
///   erase:  p^T S = 1; S = S - 0.5 k 1 = (0, 1)
///   write:  0.5 k 4 = (2, 0); S1 = (2, 1); o = 2.
/// (Reading at k and writing at p would give S1 = (2.5, 0.75), o = 2.5.)
TEST(Reference, CombaByHand) {
  TensorMap in;
  in["q"] = tensor({1, 1, 1, 2}, {1, 0});
  in["k"] = tensor({1, 1, 1, 2}, {1, 0});
  in["v"] = tensor({1, 1, 1, 1}, {4});
  in["p"] = tensor({1, 1, 1, 2}, {0, 1});
  in["g"] = tensor({1, 1, 1}, {std::log(0.5)});
  in["beta"] = tensor({1, 1, 1}, {0.5});
  in["initial_state"] = tensor({1, 1, 2, 1}, {1, 2});
  Options options;
  options.scale = 1;
  TensorMap out = run("comba", in, options);
  expectValues(out.at("o"), {1, 1, 1, 1}, {2});
  expectValues(out.at("final_state"), {1, 1, 2, 1}, {2, 1});
}

/// deltaproduct decays once per token (MATH.md pitfall 5). dk = dv = 1, T = 1,
/// n = 2, S0 = 1, exp(g) = 0.5, k0 = k1 = 1, q = 1 (default scale 1^-0.5 = 1).
///   decay: S = 0.5
///   j = 0, beta = 0.5, v = 2:  S = 0.5 * 0.5 + 0.5 * 2 = 1.25
///   j = 1, beta = 0.5, v = -1: S = 0.5 * 1.25 - 0.5 = 0.125
/// o = 0.125. (Decaying before each sub-step would give 1.25 -> 0.625 before
/// j = 1, then S = 0.5 * 0.625 - 0.5 = -0.1875.)
TEST(Reference, DeltaProductByHand) {
  TensorMap in;
  in["q"] = tensor({1, 1, 1, 1}, {1});
  in["k"] = tensor({1, 2, 1, 1}, {1, 1});
  in["v"] = tensor({1, 2, 1, 1}, {2, -1});
  in["beta"] = tensor({1, 2, 1}, {0.5, 0.5});
  in["g"] = tensor({1, 1, 1}, {std::log(0.5)});
  in["initial_state"] = tensor({1, 1, 1, 1}, {1});
  TensorMap out = run("deltaproduct", in);
  expectValues(out.at("o"), {1, 1, 1, 1}, {0.125});
  expectValues(out.at("final_state"), {1, 1, 1, 1}, {0.125});
}

//===----------------------------------------------------------------------===//
// Conventions.
//===----------------------------------------------------------------------===//

/// Read after update: from a zero state, token 0's output already sees its
/// own write, o = (scale q)^T k (beta v).
TEST(Reference, ReadsAfterUpdate) {
  for (auto [dk, dv] : kShapes) {
    SCOPED_TRACE("dk=" + std::to_string(dk) + " dv=" + std::to_string(dv));
    TensorMap in = randomInputs("deltanet", B, 1, H, dk, dv, 900 + dk,
                                /*withInitialState=*/false);
    TensorMap out = run("deltanet", in);
    double scale = 1.0 / std::sqrt(static_cast<double>(dk));
    HostTensor expected({B, 1, H, dv});
    for (int64_t row = 0; row < B * H; ++row) {
      double qk = 0;
      for (int64_t i = 0; i < dk; ++i)
        qk += scale * in["q"][row * dk + i] * in["k"][row * dk + i];
      for (int64_t j = 0; j < dv; ++j)
        expected[row * dv + j] = qk * in["beta"][row] * in["v"][row * dv + j];
    }
    EXPECT_GT(norm(expected), 1e-3);
    EXPECT_LT(rkc::relativeError(out.at("o"), expected), kExact);
  }
}

/// The default scale is dk^-0.5, and scale multiplies q in the read only: the
/// final state does not depend on it and o is linear in it, for every spec
/// (qed included, whose erase vector uses the raw q).
TEST(Reference, ScaleDefaultsToInverseSqrtDkAndOnlyScalesTheRead) {
  const char *specs[] = {"linear_attention", "deltanet", "gdn",
                         "kda",              "gdn2",     "qed",
                         "eda",              "deltaproduct", "comba",
                         "dplr"};
  uint64_t seed = 1000;
  for (const char *spec : specs)
    for (auto [dk, dv] : kShapes) {
      SCOPED_TRACE(std::string(spec) + " dk=" + std::to_string(dk) +
                   " dv=" + std::to_string(dv));
      TensorMap in = randomInputs(spec, B, T, H, dk, dv, seed++);
      TensorMap byDefault = run(spec, in);
      Options explicitScale, unit;
      explicitScale.scale = 1.0 / std::sqrt(static_cast<double>(dk));
      unit.scale = 1.0;
      expectSame(run(spec, in, explicitScale), byDefault);

      TensorMap one = run(spec, in, unit);
      EXPECT_EQ(one.at("final_state").values,
                byDefault.at("final_state").values);
      HostTensor rescaled = one.at("o");
      for (double &x : rescaled.values)
        x *= explicitScale.scale;
      EXPECT_LT(rkc::relativeError(byDefault.at("o"), rescaled), kExact);
    }
}

/// The random inputs follow MATH.md's layouts and ranges, and keep the state
/// bounded over a longer sequence (dplr in particular).
TEST(Reference, RandomInputsAreRealistic) {
  TensorMap dp = randomInputs("deltaproduct", B, T, H, 8, 5, 1, true, 3);
  EXPECT_EQ(dp["k"].shape, (std::vector<int64_t>{B, T * 3, H, 8}));
  EXPECT_EQ(dp["v"].shape, (std::vector<int64_t>{B, T * 3, H, 5}));
  EXPECT_EQ(dp["beta"].shape, (std::vector<int64_t>{B, T * 3, H}));
  EXPECT_EQ(dp["g"].shape, (std::vector<int64_t>{B, T, H}));
  EXPECT_EQ(dp["initial_state"].shape, (std::vector<int64_t>{B, H, 8, 5}));
  EXPECT_FALSE(
      randomInputs("gdn", B, T, H, 8, 5, 1, false).count("initial_state"));

  TensorMap kda = randomInputs("kda", B, T, H, 8, 5, 2);
  EXPECT_EQ(kda["g"].shape, (std::vector<int64_t>{B, T, H, 8}));
  for (double g : kda["g"].values) {
    EXPECT_LE(g, 0.0);
    EXPECT_GE(g, -5.0);
  }
  for (double beta : kda["beta"].values) {
    EXPECT_GT(beta, 0.0);
    EXPECT_LT(beta, 1.0);
  }
  for (int64_t row = 0; row < B * T * H; ++row) {
    double qq = 0;
    for (int64_t i = 0; i < 8; ++i)
      qq += kda["q"][row * 8 + i] * kda["q"][row * 8 + i];
    EXPECT_NEAR(qq, 1.0, 1e-12);
  }

  // gdn2's erase vector is not parallel to k.
  TensorMap gdn2 = randomInputs("gdn2", B, T, H, 8, 5, 3);
  double cosine = 0, aa = 0;
  for (int64_t i = 0; i < 8; ++i) {
    cosine += gdn2["a"][i] * gdn2["k"][i];
    aa += gdn2["a"][i] * gdn2["a"][i];
  }
  EXPECT_LT(std::fabs(cosine) / std::sqrt(aa), 0.999);

  // Same seed, same numbers; another seed, other numbers.
  EXPECT_EQ(randomInputs("qed", B, T, H, 8, 5, 4)["b"].values,
            randomInputs("qed", B, T, H, 8, 5, 4)["b"].values);
  EXPECT_NE(randomInputs("qed", B, T, H, 8, 5, 4)["b"].values,
            randomInputs("qed", B, T, H, 8, 5, 5)["b"].values);

  TensorMap dplr = randomInputs("dplr", 1, 256, 2, 16, 16, 6);
  TensorMap out = run("dplr", dplr);
  for (double x : out.at("final_state").values)
    EXPECT_LT(std::fabs(x), 1e3);
}

TEST(ReferenceDeathTest, AbortsOnMissingOrMisshapenInput) {
  TensorMap in = randomInputs("kda", 1, 2, 1, 4, 3, 7);
  TensorMap noBeta = in;
  noBeta.erase("beta");
  EXPECT_DEATH(run("kda", noBeta), "missing input 'beta'");
  TensorMap scalarGate = in;
  scalarGate["g"] = HostTensor({1, 2, 1});
  EXPECT_DEATH(run("kda", scalarGate), "input 'g' has shape");
  EXPECT_DEATH(run("mamba", in), "unknown spec");
}

} // namespace
