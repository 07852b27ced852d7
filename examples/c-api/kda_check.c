/* A C program that runs a kernel rkc generated, with the CUDA toolkit alone.
 *
 * It includes only the generated header (kda.h, which brings rkc/runtime.h)
 * and the CUDA runtime for allocations, runs KDA's prefill on the GPU, and
 * checks the output against the recurrence it evaluates on the CPU:
 *
 *   S_t = (I - β k kᵀ) Diag(exp g) S_{t-1} + β k vᵀ,   o_t = S_tᵀ (q_t / √dk)
 *
 * Build: see build.sh. Exit status 0: the kernel agrees; 1: it does not;
 * 77: no GPU to run on. */
#include "kda.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { B = 2, T = 100, H = 2, DK = RKC_KDA_DK, DV = RKC_KDA_DV };

static uint64_t seed = 42;
static float uniform(void) { /* a small LCG: reproducible inputs */
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((seed >> 40) & 0xffffff) / (float)0x1000000;
}

static void normalise(float *x, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += (double)x[i] * x[i];
  for (int i = 0; i < n; ++i)
    x[i] = (float)(x[i] / sqrt(s));
}

static void *upload(const float *host, size_t count) {
  void *device = NULL;
  if (cudaMalloc(&device, count * sizeof(float)) != cudaSuccess)
    return NULL;
  cudaMemcpy(device, host, count * sizeof(float), cudaMemcpyHostToDevice);
  return device;
}

int main(void) {
  const size_t nk = (size_t)B * T * H * DK, nv = (size_t)B * T * H * DV,
               ns = (size_t)B * T * H, nstate = (size_t)B * H * DK * DV;
  float *q = malloc(nk * 4), *k = malloc(nk * 4), *g = malloc(nk * 4),
        *v = malloc(nv * 4), *beta = malloc(ns * 4), *o = malloc(nv * 4),
        *state = malloc(nstate * 4);
  for (size_t i = 0; i < nk; ++i) {
    q[i] = uniform() - 0.5f;
    k[i] = uniform() - 0.5f;
    g[i] = -uniform(); /* log-space gate in (-1, 0] */
  }
  for (size_t r = 0; r < (size_t)B * T * H; ++r) {
    normalise(q + r * DK, DK);
    normalise(k + r * DK, DK);
  }
  for (size_t i = 0; i < nv; ++i)
    v[i] = uniform() - 0.5f;
  for (size_t i = 0; i < ns; ++i)
    beta[i] = uniform();

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("kda_check: no CUDA device: not run\n");
    return 77;
  }
  cudaSetDevice(0);
  cudaFree(0); /* makes the primary context current for the driver API */

  const int64_t shapeK[] = {B, T, H, DK}, shapeV[] = {B, T, H, DV},
                shapeS[] = {B, T, H};
  rkc_kda_args args = {0};
  args.q = rkc_contiguous(upload(q, nk), RKC_F32, 4, shapeK);
  args.k = rkc_contiguous(upload(k, nk), RKC_F32, 4, shapeK);
  args.g = rkc_contiguous(upload(g, nk), RKC_F32, 4, shapeK);
  args.v = rkc_contiguous(upload(v, nv), RKC_F32, 4, shapeV);
  args.beta = rkc_contiguous(upload(beta, ns), RKC_F32, 3, shapeS);
  void *deviceO = NULL, *deviceState = NULL;
  cudaMalloc(&deviceO, nv * 4);
  cudaMalloc(&deviceState, nstate * 4);
  args.o = rkc_contiguous(deviceO, RKC_F32, 4, shapeV);
  args.final_state = (float *)deviceState;

  rkc_status status = rkc_kda_fwd(NULL, &args);
  if (status != RKC_SUCCESS) {
    printf("kda_check: rkc_kda_fwd failed (%d): %s\n", status,
           rkc_last_error());
    return 1;
  }
  cudaMemcpy(o, deviceO, nv * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(state, deviceState, nstate * 4, cudaMemcpyDeviceToHost);

  /* The recurrence on the CPU, in double. */
  double *S = calloc((size_t)DK * DV, sizeof(double)), u[DV];
  double errO = 0, refO = 0, errS = 0, refS = 0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      for (int i = 0; i < DK * DV; ++i)
        S[i] = 0;
      for (int t = 0; t < T; ++t) {
        size_t row = ((size_t)b * T + t) * H + h;
        const float *kt = k + row * DK, *qt = q + row * DK, *gt = g + row * DK,
                    *vt = v + row * DV;
        for (int d = 0; d < DK; ++d)
          for (int c = 0; c < DV; ++c)
            S[d * DV + c] *= exp(gt[d]);
        for (int c = 0; c < DV; ++c) {
          u[c] = 0;
          for (int d = 0; d < DK; ++d)
            u[c] += kt[d] * S[d * DV + c];
        }
        for (int d = 0; d < DK; ++d)
          for (int c = 0; c < DV; ++c)
            S[d * DV + c] += beta[row] * kt[d] * (vt[c] - u[c]);
        for (int c = 0; c < DV; ++c) {
          double want = 0;
          for (int d = 0; d < DK; ++d)
            want += qt[d] / sqrt((double)DK) * S[d * DV + c];
          double got = o[row * DV + c];
          errO += (got - want) * (got - want);
          refO += want * want;
        }
      }
      const float *final = state + ((size_t)b * H + h) * DK * DV;
      for (int i = 0; i < DK * DV; ++i) {
        errS += (final[i] - S[i]) * (final[i] - S[i]);
        refS += S[i] * S[i];
      }
    }
  double relO = sqrt(errO / refO), relS = sqrt(errS / refS);
  int ok = relO < 1e-5 && relS < 1e-5;
  printf("kda_check: B=%d T=%d H=%d dk=%d dv=%d  o error %.2e, final state "
         "error %.2e (bound 1e-5): %s\n",
         B, T, H, DK, DV, relO, relS, ok ? "ok" : "FAIL");
  return ok ? 0 : 1;
}
