/* EDA in an engine: prefill a prompt, then decode ten tokens from the state
 * the prefill left, all through the C ABI rkc generated; the result is
 * checked against the recurrence evaluated here on the CPU:
 *
 *   S_t = (I - β k kᵀ)(I - γ e eᵀ) Diag(exp g) S_{t-1} + β k vᵀ,
 *   o_t = S_tᵀ (q_t / √dk)
 *
 * Exit status: 0 agrees, 1 disagrees, 77 no GPU to run on. */
#include "eda.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2, PROMPT = 70, DECODE = 10, T = PROMPT + DECODE, H = 2,
       DK = RKC_EDA_DK, DV = RKC_EDA_DV };

static uint64_t seed = 7;
static float uniform(void) {
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((seed >> 40) & 0xffffff) / (float)0x1000000;
}

static void unit(float *x, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += (double)x[i] * x[i];
  for (int i = 0; i < n; ++i)
    x[i] = (float)(x[i] / sqrt(s));
}

/* Per-token inputs, [B, T, H, d] and [B, T, H]. */
static float q[B][T][H][DK], k[B][T][H][DK], e[B][T][H][DK], g[B][T][H][DK],
    v[B][T][H][DV], beta[B][T][H], gamma_[B][T][H], o[B][T][H][DV];

static void *device_copy(const void *host, size_t bytes) {
  void *p = NULL;
  if (cudaMalloc(&p, bytes) != cudaSuccess)
    return NULL;
  if (host)
    cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
  return p;
}

/* Device copies of tokens [t0, t0 + n) of every input, as descriptors. */
static rkc_eda_args args_for(int t0, int n, float *state) {
  rkc_eda_args a;
  memset(&a, 0, sizeof a);
  const int64_t key[] = {B, n, H, DK}, val[] = {B, n, H, DV}, sc[] = {B, n, H};
  /* Strided views into whole-sequence device buffers. */
  static float *dq, *dk, *de, *dg, *dv, *dbeta, *dgamma, *dout;
  if (!dq) {
    dq = device_copy(q, sizeof q);
    dk = device_copy(k, sizeof k);
    de = device_copy(e, sizeof e);
    dg = device_copy(g, sizeof g);
    dv = device_copy(v, sizeof v);
    dbeta = device_copy(beta, sizeof beta);
    dgamma = device_copy(gamma_, sizeof gamma_);
    dout = device_copy(NULL, sizeof o);
  }
#define VIEW(name, ptr, shape, rank, width)                                    \
  a.name = rkc_contiguous(ptr + (size_t)t0 * H * (width), RKC_F32, rank,       \
                          shape);                                              \
  a.name.stride[0] = (int64_t)T * H * (width);
  VIEW(q, dq, key, 4, DK)
  VIEW(k, dk, key, 4, DK)
  VIEW(e, de, key, 4, DK)
  VIEW(g, dg, key, 4, DK)
  VIEW(v, dv, val, 4, DV)
  VIEW(beta, dbeta, sc, 3, 1)
  VIEW(gamma, dgamma, sc, 3, 1)
  VIEW(o, dout, val, 4, DV)
#undef VIEW
  a.initial_state = state;
  a.final_state = state;
  return a;
}

int main(void) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h) {
        for (int d = 0; d < DK; ++d) {
          q[b][t][h][d] = uniform() - 0.5f;
          k[b][t][h][d] = uniform() - 0.5f;
          e[b][t][h][d] = uniform() - 0.5f;
          g[b][t][h][d] = -0.5f * uniform();
        }
        unit(q[b][t][h], DK);
        unit(k[b][t][h], DK);
        unit(e[b][t][h], DK);
        for (int c = 0; c < DV; ++c)
          v[b][t][h][c] = uniform() - 0.5f;
        beta[b][t][h] = uniform();
        gamma_[b][t][h] = uniform();
      }

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("eda_prefill_decode: no CUDA device: not run\n");
    return 77;
  }
  cudaSetDevice(0);
  cudaFree(0); /* the primary context, current for the driver API */

  float *state = NULL; /* [B, H, DK, DV], zeros: the engine's state pool */
  cudaMalloc((void **)&state, sizeof(float) * B * H * DK * DV);
  cudaMemset(state, 0, sizeof(float) * B * H * DK * DV);

  rkc_eda_args prefill = args_for(0, PROMPT, state);
  rkc_status status = rkc_eda_fwd(NULL, &prefill);
  for (int t = PROMPT; t < T && status == RKC_SUCCESS; ++t) {
    rkc_eda_args step = args_for(t, 1, state); /* one new token */
    status = rkc_eda_decode(NULL, &step);
  }
  if (status != RKC_SUCCESS) {
    printf("eda_prefill_decode: %s\n", rkc_last_error());
    return 1;
  }
  static float final_state[B][H][DK][DV];
  rkc_eda_args view = args_for(0, T, state);
  cudaMemcpy(o, view.o.data, sizeof o, cudaMemcpyDeviceToHost);
  cudaMemcpy(final_state, state, sizeof final_state, cudaMemcpyDeviceToHost);

  /* The recurrence on the CPU. */
  static double S[DK][DV];
  double u[DV], err = 0, ref = 0, errS = 0, refS = 0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      memset(S, 0, sizeof S);
      for (int t = 0; t < T; ++t) {
        for (int d = 0; d < DK; ++d)
          for (int c = 0; c < DV; ++c)
            S[d][c] *= exp(g[b][t][h][d]);
        for (int c = 0; c < DV; ++c) { /* erase at e */
          u[c] = 0;
          for (int d = 0; d < DK; ++d)
            u[c] += e[b][t][h][d] * S[d][c];
        }
        for (int d = 0; d < DK; ++d)
          for (int c = 0; c < DV; ++c)
            S[d][c] -= gamma_[b][t][h] * e[b][t][h][d] * u[c];
        for (int c = 0; c < DV; ++c) { /* delta at k */
          u[c] = 0;
          for (int d = 0; d < DK; ++d)
            u[c] += k[b][t][h][d] * S[d][c];
        }
        for (int d = 0; d < DK; ++d)
          for (int c = 0; c < DV; ++c)
            S[d][c] += beta[b][t][h] * k[b][t][h][d] * (v[b][t][h][c] - u[c]);
        for (int c = 0; c < DV; ++c) {
          double want = 0;
          for (int d = 0; d < DK; ++d)
            want += q[b][t][h][d] / sqrt((double)DK) * S[d][c];
          err += (o[b][t][h][c] - want) * (o[b][t][h][c] - want);
          ref += want * want;
        }
      }
      for (int d = 0; d < DK; ++d)
        for (int c = 0; c < DV; ++c) {
          double diff = final_state[b][h][d][c] - S[d][c];
          errS += diff * diff;
          refS += S[d][c] * S[d][c];
        }
    }
  double rel = sqrt(err / ref), relS = sqrt(errS / refS);
  int ok = rel < 1e-5 && relS < 1e-5;
  printf("eda_prefill_decode: prefill %d tokens, decode %d; o error %.2e, "
         "state error %.2e (bound 1e-5): %s\n",
         PROMPT, DECODE, rel, relS, ok ? "ok" : "FAIL");
  return ok ? 0 : 1;
}
