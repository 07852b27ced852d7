//===- Reference.h - Float64 oracle for the example recurrences -*- C++ -*-===//
//
// An independent float64 implementation of every recurrence in
// shared/design/MATH.md, written straight from the per-token update formulas:
// for each token it builds the explicit dk x dk transition matrix M_t, applies
// S <- M_t S + (write term), and reads o_t = S_t^T (scale * q_t).
//
// It deliberately shares nothing with the compiler (no DPLR sub-step mapping,
// no chunked algorithm), so that the interpreter and the kernels can be
// checked against it. It is slow (O(dk^3) per token) and meant for small test
// shapes only.
//
//===----------------------------------------------------------------------===//

#ifndef RKC_TEST_UNIT_REFERENCE_H
#define RKC_TEST_UNIT_REFERENCE_H

#include "Support/Tensor.h"

#include <cstdint>
#include <string>

namespace rkc {
namespace reference {

struct Options {
  double scale = 0; // 0 means the default dk^-0.5
  int64_t n = 2;    // deltaproduct's sub-steps per token
};

/// Runs the recurrence named `spec` (one of: linear_attention deltanet gdn kda
/// gdn2 qed eda deltaproduct comba dplr) on `inputs` named exactly as MATH.md
/// names them (q, k, v, beta, g, a, w, b, lam, e, gamma, p; optional
/// initial_state [B, H, dk, dv]), layouts per MATH.md with batch B (no varlen,
/// no GVA: every tensor has the same H). Inputs the spec does not use are
/// ignored. Returns {"o": [B,T,H,dv], "final_state": [B,H,dk,dv]} in float64.
/// Aborts with a message on an unknown spec, a missing input or a wrong shape.
TensorMap run(const std::string &spec, const TensorMap &inputs,
              const Options &options = {});

/// Random inputs for `spec` with MATH.md's realistic distributions: q, k, e
/// L2-normalised Gaussian vectors; v Gaussian; g = clamp(logsigmoid(N(0,1)),
/// -5, 0) (per channel [B,T,H,dk] for kda/eda/gdn2/qed/dplr, scalar [B,T,H]
/// for gdn/comba/deltaproduct); beta, gamma = sigmoid(N); gdn2's a:
/// L2-normalised Gaussian scaled by sigmoid(N) per token (not parallel to k);
/// gdn2/qed's w: sigmoid(N) per value channel; qed's b = sigmoid(N) per
/// channel; lam [H] Gaussian; comba's p L2-normalised; dplr's a = -kappa and
/// b = kappa * sigmoid(N) with kappa an L2-normalised vector (RWKV-7 style, so
/// the state stays bounded); deltaproduct's k, v, beta have T*n rows.
/// Includes a Gaussian initial_state [B,H,dk,dv] when `withInitialState`.
/// The stream of numbers depends only on the arguments (no std:: distribution
/// is used), so a seed reproduces across standard libraries.
TensorMap randomInputs(const std::string &spec, int64_t B, int64_t T,
                       int64_t H, int64_t dk, int64_t dv, uint64_t seed,
                       bool withInitialState = true, int64_t n = 2);

} // namespace reference
} // namespace rkc

#endif // RKC_TEST_UNIT_REFERENCE_H
