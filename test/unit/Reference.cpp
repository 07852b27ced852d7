//===- Reference.cpp - Float64 oracle for the example recurrences ---------===//
//
// Every recurrence is written as MATH.md's table writes it: the factors of the
// per-token transition matrix are built as explicit dk x dk matrices and
// multiplied in the written order (the rightmost factor acts first on S), then
// the write term is added and the state is read. Nothing here is clever on
// purpose: this file is the oracle, and plain code is the easiest to trust.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace rkc {
namespace reference {

namespace {

using Vec = std::vector<double>;

[[noreturn]] void fail(const std::string &spec, const std::string &message) {
  std::fprintf(stderr, "rkc::reference(%s): %s\n", spec.c_str(),
               message.c_str());
  std::fflush(stderr);
  std::abort();
}

//===----------------------------------------------------------------------===//
// Dense matrices, row-major.
//===----------------------------------------------------------------------===//

struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> data;

  Mat(int64_t rows, int64_t cols)
      : rows(rows), cols(cols), data(rows * cols, 0.0) {}
  double &operator()(int64_t i, int64_t j) { return data[i * cols + j]; }
  double operator()(int64_t i, int64_t j) const { return data[i * cols + j]; }
};

Mat identity(int64_t n) {
  Mat m(n, n);
  for (int64_t i = 0; i < n; ++i)
    m(i, i) = 1.0;
  return m;
}

Mat diag(const Vec &d) {
  Mat m(d.size(), d.size());
  for (size_t i = 0; i < d.size(); ++i)
    m(i, i) = d[i];
  return m;
}

/// x y^T.
Mat outer(const Vec &x, const Vec &y) {
  Mat m(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = 0; j < y.size(); ++j)
      m(i, j) = x[i] * y[j];
  return m;
}

Mat operator*(const Mat &a, const Mat &b) {
  Mat m(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t l = 0; l < a.cols; ++l) {
      double ail = a(i, l);
      for (int64_t j = 0; j < b.cols; ++j)
        m(i, j) += ail * b(l, j);
    }
  return m;
}

Mat operator*(double s, const Mat &a) {
  Mat m = a;
  for (double &x : m.data)
    x *= s;
  return m;
}

Mat operator+(const Mat &a, const Mat &b) {
  Mat m = a;
  for (size_t i = 0; i < m.data.size(); ++i)
    m.data[i] += b.data[i];
  return m;
}

Mat operator-(const Mat &a, const Mat &b) { return a + (-1.0) * b; }

double dot(const Vec &x, const Vec &y) {
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i)
    s += x[i] * y[i];
  return s;
}

Vec hadamard(const Vec &x, const Vec &y) {
  Vec r(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    r[i] = x[i] * y[i];
  return r;
}

Vec scaled(double s, const Vec &x) {
  Vec r(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    r[i] = s * x[i];
  return r;
}

Vec expOf(const Vec &x) {
  Vec r(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    r[i] = std::exp(x[i]);
  return r;
}

//===----------------------------------------------------------------------===//
// Input access.
//===----------------------------------------------------------------------===//

/// What a spec needs of one input: its name and the number of rows along T
/// (T, or T*n for deltaproduct's sub-step tensors) and the trailing width
/// (0 for per-token scalars [B, rows, H]).
class Inputs {
public:
  Inputs(const std::string &spec, const TensorMap &map) : spec(spec), map(map) {
    const HostTensor &q = find("q");
    const HostTensor &v = find("v");
    if (q.rank() != 4 || v.rank() != 4)
      fail(spec, "q and v must be rank 4, got q " + formatShape(q.shape) +
                     ", v " + formatShape(v.shape));
    B = q.shape[0];
    T = q.shape[1];
    H = q.shape[2];
    dk = q.shape[3];
    dv = v.shape[3];
  }

  /// Checks that `name` exists with shape [B, rows, H] (width 0) or
  /// [B, rows, H, width].
  void require(const std::string &name, int64_t rows, int64_t width) const {
    std::vector<int64_t> shape = {B, rows, H};
    if (width > 0)
      shape.push_back(width);
    requireShape(name, shape);
  }

  void requireShape(const std::string &name,
                    const std::vector<int64_t> &shape) const {
    const HostTensor &t = find(name);
    if (t.shape != shape)
      fail(spec, "input '" + name + "' has shape " + formatShape(t.shape) +
                     ", expected " + formatShape(shape));
  }

  /// Row (b, t, h) of a [B, rows, H, width] tensor.
  Vec vec(const std::string &name, int64_t b, int64_t t, int64_t h) const {
    const HostTensor &x = map.at(name);
    int64_t rows = x.shape[1], width = x.shape[3];
    int64_t base = ((b * rows + t) * H + h) * width;
    return Vec(x.values.begin() + base, x.values.begin() + base + width);
  }

  /// Element (b, t, h) of a [B, rows, H] tensor.
  double scalar(const std::string &name, int64_t b, int64_t t,
                int64_t h) const {
    const HostTensor &x = map.at(name);
    return x.values[(b * x.shape[1] + t) * H + h];
  }

  bool has(const std::string &name) const { return map.count(name) != 0; }
  const HostTensor &at(const std::string &name) const { return map.at(name); }

  int64_t B, T, H, dk, dv;

private:
  const HostTensor &find(const std::string &name) const {
    auto it = map.find(name);
    if (it == map.end())
      fail(spec, "missing input '" + name + "'");
    return it->second;
  }

  const std::string &spec;
  const TensorMap &map;
};

enum class Spec {
  LinearAttention,
  DeltaNet,
  GDN,
  KDA,
  GDN2,
  QED,
  EDA,
  DeltaProduct,
  Comba,
  DPLR
};

bool parseSpec(const std::string &name, Spec &spec) {
  static const std::pair<const char *, Spec> names[] = {
      {"linear_attention", Spec::LinearAttention},
      {"deltanet", Spec::DeltaNet},
      {"gdn", Spec::GDN},
      {"kda", Spec::KDA},
      {"gdn2", Spec::GDN2},
      {"qed", Spec::QED},
      {"eda", Spec::EDA},
      {"deltaproduct", Spec::DeltaProduct},
      {"comba", Spec::Comba},
      {"dplr", Spec::DPLR}};
  for (auto &[n, s] : names)
    if (name == n) {
      spec = s;
      return true;
    }
  return false;
}

/// Checks every input `spec` reads, so a malformed map aborts up front with a
/// message instead of reading out of bounds.
void checkInputs(Spec spec, const Inputs &in, int64_t n) {
  int64_t T = in.T, dk = in.dk, dv = in.dv;
  in.require("q", T, dk);
  int64_t subRows = spec == Spec::DeltaProduct ? T * n : T;
  in.require("k", subRows, dk);
  in.require("v", subRows, dv);
  switch (spec) {
  case Spec::LinearAttention:
    break;
  case Spec::DeltaNet:
    in.require("beta", T, 0);
    break;
  case Spec::GDN:
    in.require("g", T, 0);
    in.require("beta", T, 0);
    break;
  case Spec::KDA:
    in.require("g", T, dk);
    in.require("beta", T, 0);
    break;
  case Spec::GDN2:
    in.require("g", T, dk);
    in.require("a", T, dk);
    in.require("w", T, dv);
    break;
  case Spec::QED:
    in.require("g", T, dk);
    in.require("b", T, dk);
    in.require("w", T, dv);
    in.requireShape("lam", {in.H});
    break;
  case Spec::EDA:
    in.require("g", T, dk);
    in.require("beta", T, 0);
    in.require("e", T, dk);
    in.require("gamma", T, 0);
    break;
  case Spec::DeltaProduct:
    in.require("beta", T * n, 0);
    in.require("g", T, 0);
    break;
  case Spec::Comba:
    in.require("p", T, dk);
    in.require("g", T, 0);
    in.require("beta", T, 0);
    break;
  case Spec::DPLR:
    in.require("a", T, dk);
    in.require("b", T, dk);
    in.require("g", T, dk);
    break;
  }
  if (in.has("initial_state"))
    in.requireShape("initial_state", {in.B, in.H, dk, dv});
}

/// One left-multiplication of the state plus a write: S <- M S + W.
struct Step {
  Mat M; // dk x dk
  Mat W; // dk x dv
};

/// The steps of token t of sequence b, head h, in the order they act. Every
/// spec has one step per token except deltaproduct (a decay, then n rank-1
/// steps), whose sub-steps are visible between reads in MATH.md's definition.
std::vector<Step> tokenSteps(Spec spec, const Inputs &in, int64_t b,
                             int64_t t, int64_t h, int64_t n) {
  int64_t dk = in.dk, dv = in.dv;
  Mat I = identity(dk);
  auto vec = [&](const char *name) { return in.vec(name, b, t, h); };
  auto scalar = [&](const char *name) { return in.scalar(name, b, t, h); };

  switch (spec) {
  case Spec::LinearAttention: {
    // S = S + k v^T
    Vec k = vec("k"), v = vec("v");
    return {{I, outer(k, v)}};
  }
  case Spec::DeltaNet: {
    // S = (I - beta k k^T) S + beta k v^T
    Vec k = vec("k"), v = vec("v");
    double beta = scalar("beta");
    return {{I - beta * outer(k, k), beta * outer(k, v)}};
  }
  case Spec::GDN: {
    // S = exp(g) (I - beta k k^T) S + beta k v^T, g a scalar
    Vec k = vec("k"), v = vec("v");
    double beta = scalar("beta"), g = scalar("g");
    return {{std::exp(g) * (I - beta * outer(k, k)), beta * outer(k, v)}};
  }
  case Spec::KDA: {
    // S = (I - beta k k^T) Diag(exp g) S + beta k v^T
    Vec k = vec("k"), v = vec("v"), g = vec("g");
    double beta = scalar("beta");
    return {{(I - beta * outer(k, k)) * diag(expOf(g)), beta * outer(k, v)}};
  }
  case Spec::GDN2: {
    // S = (I - k a^T) Diag(exp g) S + k (w . v)^T: a reads, k writes
    Vec k = vec("k"), v = vec("v"), g = vec("g"), a = vec("a"), w = vec("w");
    return {{(I - outer(k, a)) * diag(expOf(g)), outer(k, hadamard(w, v))}};
  }
  case Spec::QED: {
    // gdn2 with a = b . k + lam_h P_k(b . q), P_k(x) = x - k (k^T x), raw q
    Vec k = vec("k"), v = vec("v"), g = vec("g"), bv = vec("b"),
        w = vec("w"), q = vec("q");
    double lam = in.at("lam").values[h];
    Vec bq = hadamard(bv, q);
    double kbq = dot(k, bq);
    Vec a(dk);
    for (int64_t i = 0; i < dk; ++i)
      a[i] = bv[i] * k[i] + lam * (bq[i] - k[i] * kbq);
    return {{(I - outer(k, a)) * diag(expOf(g)), outer(k, hadamard(w, v))}};
  }
  case Spec::EDA: {
    // S = (I - beta k k^T)(I - gamma e e^T) Diag(exp g) S + beta k v^T
    Vec k = vec("k"), v = vec("v"), g = vec("g"), e = vec("e");
    double beta = scalar("beta"), gamma = scalar("gamma");
    Mat M = (I - beta * outer(k, k)) * (I - gamma * outer(e, e)) *
            diag(expOf(g));
    return {{M, beta * outer(k, v)}};
  }
  case Spec::DeltaProduct: {
    // S = Diag(exp g) S once per token (scalar g), then for j = 0..n-1:
    // S = (I - beta_j k_j k_j^T) S + beta_j k_j v_j^T, rows t*n + j.
    double g = scalar("g");
    std::vector<Step> steps;
    steps.push_back({diag(Vec(dk, std::exp(g))), Mat(dk, dv)});
    for (int64_t j = 0; j < n; ++j) {
      int64_t row = t * n + j;
      Vec k = in.vec("k", b, row, h), v = in.vec("v", b, row, h);
      double beta = in.scalar("beta", b, row, h);
      steps.push_back({I - beta * outer(k, k), beta * outer(k, v)});
    }
    return steps;
  }
  case Spec::Comba: {
    // S = (I - beta k p^T) exp(g) S + beta k v^T, g a scalar
    Vec k = vec("k"), v = vec("v"), p = vec("p");
    double beta = scalar("beta"), g = scalar("g");
    return {{(I - beta * outer(k, p)) * (std::exp(g) * I), beta * outer(k, v)}};
  }
  case Spec::DPLR: {
    // S = (Diag(exp g) + a b^T) S + k v^T: b reads, a writes
    Vec k = vec("k"), v = vec("v"), g = vec("g"), a = vec("a"),
        bv = vec("b");
    return {{diag(expOf(g)) + outer(a, bv), outer(k, v)}};
  }
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Random inputs.
//===----------------------------------------------------------------------===//

constexpr double kPi = 3.14159265358979323846;

/// Uniform and Gaussian numbers from mt19937_64 by hand: std::*_distribution
/// differ between standard libraries, and a failing seed should reproduce
/// everywhere.
class Rng {
public:
  explicit Rng(uint64_t seed) : gen(seed) {}

  /// Uniform in (0, 1]: 53 random bits, shifted off zero so log() is finite.
  double uniform() {
    return (static_cast<double>(gen() >> 11) + 1.0) * 0x1.0p-53;
  }

  /// Standard normal by Box-Muller (one value per call; simple beats fast).
  double gaussian() {
    double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
  }

private:
  std::mt19937_64 gen;
};

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// log(sigmoid(x)) without overflow for large |x|.
double logSigmoid(double x) {
  return x < 0 ? x - std::log1p(std::exp(x)) : -std::log1p(std::exp(-x));
}

HostTensor gaussianTensor(Rng &rng, std::vector<int64_t> shape) {
  HostTensor t(std::move(shape));
  for (double &x : t.values)
    x = rng.gaussian();
  return t;
}

HostTensor sigmoidTensor(Rng &rng, std::vector<int64_t> shape) {
  HostTensor t(std::move(shape));
  for (double &x : t.values)
    x = sigmoid(rng.gaussian());
  return t;
}

/// Log-space decay gates: clamp(logsigmoid(N(0,1)), -5, 0).
HostTensor gateTensor(Rng &rng, std::vector<int64_t> shape) {
  HostTensor t(std::move(shape));
  for (double &x : t.values)
    x = std::fmin(0.0, std::fmax(-5.0, logSigmoid(rng.gaussian())));
  return t;
}

/// Gaussian vectors along the last axis, each scaled to unit L2 norm.
HostTensor unitTensor(Rng &rng, std::vector<int64_t> shape) {
  HostTensor t = gaussianTensor(rng, std::move(shape));
  int64_t width = t.shape.back();
  for (int64_t base = 0; base < t.numel(); base += width) {
    double norm = 0;
    for (int64_t i = 0; i < width; ++i)
      norm += t[base + i] * t[base + i];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < width; ++i)
      t[base + i] /= norm;
  }
  return t;
}

} // namespace

TensorMap run(const std::string &specName, const TensorMap &inputs,
              const Options &options) {
  Spec spec;
  if (!parseSpec(specName, spec))
    fail(specName, "unknown spec");
  if (options.n < 1)
    fail(specName, "n must be at least 1");
  Inputs in(specName, inputs);
  int64_t n = spec == Spec::DeltaProduct ? options.n : 1;
  checkInputs(spec, in, n);

  int64_t B = in.B, T = in.T, H = in.H, dk = in.dk, dv = in.dv;
  double scale = options.scale != 0 ? options.scale
                                    : 1.0 / std::sqrt(static_cast<double>(dk));
  HostTensor o({B, T, H, dv});
  HostTensor finalState({B, H, dk, dv});
  bool hasInitial = in.has("initial_state");

  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      Mat S(dk, dv);
      if (hasInitial) {
        const HostTensor &s0 = in.at("initial_state");
        for (int64_t i = 0; i < dk * dv; ++i)
          S.data[i] = s0.values[(b * H + h) * dk * dv + i];
      }
      for (int64_t t = 0; t < T; ++t) {
        for (const Step &step : tokenSteps(spec, in, b, t, h, n))
          S = step.M * S + step.W;
        // Read after update, scale on q in the read only.
        Vec q = scaled(scale, in.vec("q", b, t, h));
        for (int64_t j = 0; j < dv; ++j) {
          double acc = 0;
          for (int64_t i = 0; i < dk; ++i)
            acc += S(i, j) * q[i];
          o[((b * T + t) * H + h) * dv + j] = acc;
        }
      }
      for (int64_t i = 0; i < dk * dv; ++i)
        finalState[(b * H + h) * dk * dv + i] = S.data[i];
    }
  return {{"o", o}, {"final_state", finalState}};
}

TensorMap randomInputs(const std::string &specName, int64_t B, int64_t T,
                       int64_t H, int64_t dk, int64_t dv, uint64_t seed,
                       bool withInitialState, int64_t n) {
  Spec spec;
  if (!parseSpec(specName, spec))
    fail(specName, "unknown spec");
  if (B < 1 || T < 1 || H < 1 || dk < 1 || dv < 1 || n < 1)
    fail(specName, "randomInputs needs positive sizes");
  Rng rng(seed);
  int64_t rows = spec == Spec::DeltaProduct ? T * n : T;
  std::vector<int64_t> tokens = {B, T, H}, key = {B, T, H, dk},
                       value = {B, T, H, dv};

  TensorMap m;
  m["q"] = unitTensor(rng, key);
  m["k"] = unitTensor(rng, {B, rows, H, dk});
  m["v"] = gaussianTensor(rng, {B, rows, H, dv});
  switch (spec) {
  case Spec::LinearAttention:
    break;
  case Spec::DeltaNet:
    m["beta"] = sigmoidTensor(rng, tokens);
    break;
  case Spec::GDN:
    m["g"] = gateTensor(rng, tokens);
    m["beta"] = sigmoidTensor(rng, tokens);
    break;
  case Spec::KDA:
    m["g"] = gateTensor(rng, key);
    m["beta"] = sigmoidTensor(rng, tokens);
    break;
  case Spec::GDN2: {
    m["g"] = gateTensor(rng, key);
    // A random unit direction (so a is not parallel to k, which would hide a
    // transposed factor) with a per-token strength in (0, 1).
    HostTensor a = unitTensor(rng, key);
    for (int64_t row = 0; row < B * T * H; ++row) {
      double strength = sigmoid(rng.gaussian());
      for (int64_t i = 0; i < dk; ++i)
        a[row * dk + i] *= strength;
    }
    m["a"] = a;
    m["w"] = sigmoidTensor(rng, value);
    break;
  }
  case Spec::QED:
    m["g"] = gateTensor(rng, key);
    m["b"] = sigmoidTensor(rng, key);
    m["w"] = sigmoidTensor(rng, value);
    m["lam"] = gaussianTensor(rng, {H});
    break;
  case Spec::EDA:
    m["g"] = gateTensor(rng, key);
    m["beta"] = sigmoidTensor(rng, tokens);
    m["e"] = unitTensor(rng, key);
    m["gamma"] = sigmoidTensor(rng, tokens);
    break;
  case Spec::DeltaProduct:
    m["beta"] = sigmoidTensor(rng, {B, rows, H});
    m["g"] = gateTensor(rng, tokens);
    break;
  case Spec::Comba:
    m["p"] = unitTensor(rng, key);
    m["g"] = gateTensor(rng, tokens);
    m["beta"] = sigmoidTensor(rng, tokens);
    break;
  case Spec::DPLR: {
    m["g"] = gateTensor(rng, key);
    // RWKV-7: the rank-1 part is -kappa (kappa . iclr)^T with kappa a unit
    // vector and an in-context learning rate in (0, 1) per channel, which
    // keeps the transition close to a contraction.
    HostTensor kappa = unitTensor(rng, key);
    HostTensor iclr = sigmoidTensor(rng, key);
    HostTensor a(key), b(key);
    for (int64_t i = 0; i < a.numel(); ++i) {
      a[i] = -kappa[i];
      b[i] = kappa[i] * iclr[i];
    }
    m["a"] = a;
    m["b"] = b;
    break;
  }
  }
  if (withInitialState)
    m["initial_state"] = gaussianTensor(rng, {B, H, dk, dv});
  return m;
}

} // namespace reference
} // namespace rkc
