//===- tile.cuh - RKC's device tile library ---------------------*- CUDA -*-===//
//
// Tile-level primitives that generated kernels call, one per chunk-level op
// of the rec dialect (rec.chunk.*). Each is executed by a whole thread block
// on float32 tiles in shared memory, row-major, and ends with a barrier.
// The algorithm (which primitives run, on which rows, in which order) is the
// generated kernel's; nothing here knows about recurrences.
//
// A chunk axis may keep only some sub-step slots (a `!rec.tile<chunk[1], …>`):
// `Rows` maps a tile index to the sub-step row of the chunk it holds.
//
//===----------------------------------------------------------------------===//

#ifndef RKC_TILE_CUH
#define RKC_TILE_CUH

namespace rkc {
namespace tile {

/// The rows of a chunk axis: `count` indices over `period` sub-steps a token,
/// keeping the slots `slots[0..nslots)` of each token.
struct Rows {
  int count, period, nslots;
  int slots[8];

  /// The sub-step row (token · period + slot) of tile index i.
  __device__ int real(int i) const {
    return (i / nslots) * period + slots[i % nslots];
  }
  /// The tile index holding sub-step row r, or -1.
  __device__ int index(int r) const {
    int token = r / period, slot = r % period;
    for (int s = 0; s < nslots; ++s)
      if (slots[s] == slot)
        return token * nslots + s;
    return -1;
  }
};

/// G[r, :] = Σ_{r' ≤ r} g[r'] (or r' < r when exclusive), over all L rows;
/// rows g does not keep contribute zero.
__device__ inline void cumsum(const float *g, Rows gRows, int cols, int L,
                              bool exclusive, float *out) {
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    float running = 0.f;
    for (int r = 0; r < L; ++r) {
      int i = gRows.index(r);
      float gr = i >= 0 ? g[i * cols + c] : 0.f;
      if (!exclusive)
        running += gr;
      out[r * cols + c] = running;
      if (exclusive)
        running += gr;
    }
  }
  __syncthreads();
}

/// M[i, j] = Σ_d l[i, d] r[j, d] exp(Dl[ri, d] - Dr[rj, d]) where the mask
/// keeps rj < ri (strict) or rj ≤ ri; zero elsewhere. Without decay tiles
/// (dl == nullptr) there is no exponential; with one column of decay the
/// weight is one scalar per pair. The mask is applied before the exp.
__device__ inline void gram(const float *l, Rows lRows, const float *r,
                            Rows rRows, int inner, const float *dl,
                            const float *dr, int decayCols, bool strict,
                            float *out) {
  int n = lRows.count * rRows.count;
  for (int e = threadIdx.x; e < n; e += blockDim.x) {
    int i = e / rRows.count, j = e % rRows.count;
    int ri = lRows.real(i), rj = rRows.real(j);
    float sum = 0.f;
    if (strict ? rj < ri : rj <= ri) {
      const float *li = l + i * inner, *rjp = r + j * inner;
      if (!dl) {
        for (int d = 0; d < inner; ++d)
          sum += li[d] * rjp[d];
      } else if (decayCols == 1) {
        for (int d = 0; d < inner; ++d)
          sum += li[d] * rjp[d];
        sum *= __expf(dl[ri] - dr[rj]);
      } else {
        const float *a = dl + ri * decayCols, *b = dr + rj * decayCols;
        for (int d = 0; d < inner; ++d)
          sum += li[d] * rjp[d] * __expf(a[d] - b[d]);
      }
    }
    out[e] = sum;
  }
  __syncthreads();
}

/// out[i, j] = M[i, col(j)] · c[j], keeping the columns of c's rows.
__device__ inline void scaleCols(const float *m, int rows, Rows mCols,
                                 const float *c, Rows cRows, float *out) {
  int n = rows * cRows.count;
  for (int e = threadIdx.x; e < n; e += blockDim.x) {
    int i = e / cRows.count, j = e % cRows.count;
    int src = mCols.index(cRows.real(j));
    out[e] = m[i * mCols.count + src] * c[j];
  }
  __syncthreads();
}

/// out[i, :] = x[i, :] · c[i]
__device__ inline void scaleRows(const float *x, int rows, int cols,
                                 const float *c, float *out) {
  for (int e = threadIdx.x; e < rows * cols; e += blockDim.x)
    out[e] = x[e] * c[e / cols];
  __syncthreads();
}

__device__ inline void neg(const float *x, int n, float *out) {
  for (int e = threadIdx.x; e < n; e += blockDim.x)
    out[e] = -x[e];
  __syncthreads();
}

__device__ inline void add(const float *x, const float *y, int n,
                           float *out) {
  for (int e = threadIdx.x; e < n; e += blockDim.x)
    out[e] = x[e] + y[e];
  __syncthreads();
}

/// T = (I - A)⁻¹ for strictly lower A (n x n): T = I + A T, one row at a
/// time (forward substitution), the columns of a row in parallel.
__device__ inline void utInverse(const float *a, int n, float *t) {
  for (int e = threadIdx.x; e < n * n; e += blockDim.x)
    t[e] = (e / n == e % n) ? 1.f : 0.f;
  __syncthreads();
  for (int i = 1; i < n; ++i) {
    for (int j = threadIdx.x; j < i; j += blockDim.x) {
      float sum = 0.f;
      for (int k = j; k < i; ++k)
        sum += a[i * n + k] * t[k * n + j];
      t[i * n + j] = sum;
    }
    __syncthreads();
  }
}

/// out[i, c] = x[i, c] · exp(G[ri, c]) (G with one column: the same on every c).
__device__ inline void decayRows(const float *x, Rows xRows, int cols,
                                 const float *G, int gCols, float *out) {
  for (int e = threadIdx.x; e < xRows.count * cols; e += blockDim.x) {
    int i = e / cols, c = e % cols;
    out[e] = x[e] * __expf(G[xRows.real(i) * gCols + (gCols == 1 ? 0 : c)]);
  }
  __syncthreads();
}

/// out[i, c] = x[i, c] · exp(G[L-1, c] - G[ri, c])
__device__ inline void decayToEnd(const float *x, Rows xRows, int cols,
                                  const float *G, int gCols, int L,
                                  float *out) {
  for (int e = threadIdx.x; e < xRows.count * cols; e += blockDim.x) {
    int i = e / cols, c = gCols == 1 ? 0 : e % cols;
    out[e] = x[e] * __expf(G[(L - 1) * gCols + c] -
                           G[xRows.real(i) * gCols + c]);
  }
  __syncthreads();
}

/// out[d, c] = S[d, c] · exp(G[L-1, d]): the state decayed over the chunk.
__device__ inline void decayState(const float *s, int rows, int cols,
                                  const float *G, int gCols, int L,
                                  float *out) {
  for (int e = threadIdx.x; e < rows * cols; e += blockDim.x) {
    int d = gCols == 1 ? 0 : e / cols;
    out[e] = s[e] * __expf(G[(L - 1) * gCols + d]);
  }
  __syncthreads();
}

/// out = A B with A m x k, B k x n (transposeA: A is k x m, out = Aᵀ B).
__device__ inline void matmul(const float *a, const float *b, int m, int k,
                              int n, bool transposeA, float *out) {
  for (int e = threadIdx.x; e < m * n; e += blockDim.x) {
    int i = e / n, j = e % n;
    float sum = 0.f;
    for (int p = 0; p < k; ++p)
      sum += (transposeA ? a[p * m + i] : a[i * k + p]) * b[p * n + j];
    out[e] = sum;
  }
  __syncthreads();
}

/// Warp-wide sum.
__device__ inline float warpSum(float x) {
  for (int offset = 16; offset > 0; offset >>= 1)
    x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

} // namespace tile
} // namespace rkc

#endif // RKC_TILE_CUH
