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

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

namespace rkc {
namespace tile {

/// The threads of every block that runs these functions, a compile-time
/// constant (the generated kernels define RKC_BLOCK_THREADS): a loop over a
/// tile by the block's threads has a constant step, and a product's plan
/// (which warp takes which 16-row block and how many columns) folds away
/// instead of costing divisions and a switch on each call.
#ifndef RKC_BLOCK_THREADS
#error "rkc/tile.cuh: define RKC_BLOCK_THREADS, the threads of a block"
#endif
constexpr int kBlockThreads = RKC_BLOCK_THREADS;

/// Operands a kernel keeps in 16 bits (the split kernels' workspace for
/// 16-bit outputs) are read as float32; the products' TF32 conversion of a
/// bf16 value is exact.
__device__ inline float toFloat(float x) { return x; }
__device__ inline float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ inline float toFloat(__half x) { return __half2float(x); }

/// A bf16 element of a tile whose rows are dense and whose 16-byte pieces
/// are swizzled by row (`at`): the scan's staged key-side tiles in the
/// kernels for bf16 products. The type carries the layout: the readers that
/// know it (a product's left operand: productBlock, productElement) address
/// it through `at`, and those that do not (a right operand, an addend, a
/// store) assert that they are not given it. The planner lets only products
/// read such a tile as their left operand, and the emitter refuses any other
/// reader.
struct SwizzledBf16 {
  __nv_bfloat16 x;
};
__device__ inline float toFloat(SwizzledBf16 x) {
  return __bfloat162float(x.x);
}
template <typename T> struct IsSwizzled {
  static constexpr bool value = false;
};
template <> struct IsSwizzled<SwizzledBf16> {
  static constexpr bool value = true;
};

/// The column where element (i, j) of a swizzled tile (rows `ld` 16-bit
/// elements apart, ld / 8 a power of two) is stored: its 16-byte piece j / 8
/// XORed with a function of the row, within the row. Any eight consecutive
/// rows from a multiple of 8 then put a given piece in eight distinct bank
/// groups (ldmatrix's rows: no conflict), and a run of 128 bytes of a row
/// stays in its 128-byte line (a cp.async copy of whole rows fills whole
/// lines, where rows padded by 16 bytes straddle them).
/// (Shifts and masks: `ld` may reach here at run time; i / (8 / pieces) is
/// i * pieces / 8 where pieces divides 8.)
__device__ inline int swizzledCol(int ld, int i, int j) {
  const int pieces = ld / 8;
  const int f = pieces >= 8 ? (i & 7) : ((i * pieces) >> 3) & (pieces - 1);
  return j ^ (f << 3);
}

/// Where element (i, j) of a tile with rows `ld` elements apart is: dense,
/// or swizzled (SwizzledBf16).
template <typename T> __device__ inline T *at(T *a, int ld, int i, int j) {
  if constexpr (IsSwizzled<typename std::remove_cv<T>::type>::value)
    return a + i * ld + swizzledCol(ld, i, j);
  else
    return a + i * ld + j;
}

/// at(a, ld, i0 + r, j) for i0 a multiple of 8 and 0 <= r < 8 (ldmatrix's
/// rows): a swizzled tile's piece then depends on r alone, which the caller
/// knows and the compiler cannot.
template <typename T>
__device__ inline T *at8(T *a, int ld, int i0, int r, int j) {
  if constexpr (IsSwizzled<typename std::remove_cv<T>::type>::value)
    return a + (i0 + r) * ld + swizzledCol(ld, r, j);
  else
    return a + (i0 + r) * ld + j;
}

/// float32 to a workspace element type (round to nearest).
template <typename T> __device__ inline T fromFloat(float x);
template <> __device__ inline float fromFloat<float>(float x) { return x; }
template <> __device__ inline __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}

/// The rows of a chunk axis: `count` indices over `period` sub-steps a token,
/// keeping the slots `slots[0..nslots)` of each token.
struct Rows {
  int count, period, nslots;
  int slots[8];

  /// Whether the axis keeps every sub-step (tile index = sub-step row).
  __device__ bool all() const { return nslots == period; }
  /// The sub-step row (token · period + slot) of tile index i.
  __device__ int real(int i) const {
    if (all())
      return i;
    return (i / nslots) * period + slots[i % nslots];
  }
  /// Whether real() increases with the tile index (the slots in order).
  __device__ bool ascending() const {
    for (int s = 1; s < nslots; ++s)
      if (slots[s] <= slots[s - 1])
        return false;
    return true;
  }
  /// The tile index holding sub-step row r, or -1.
  __device__ int index(int r) const {
    if (all())
      return r;
    int token = r / period, slot = r % period;
    for (int s = 0; s < nslots; ++s)
      if (slots[s] == slot)
        return token * nslots + s;
    return -1;
  }
};

//===----------------------------------------------------------------------===//
// Tensor cores: mma.sync m16n8k8 on TF32 operands (or m16n8k16 on bf16 ones,
// RKC_BF16_PRODUCTS, below), float32 accumulation
//===----------------------------------------------------------------------===//
//
// Fragment layout (PTX ISA, mma.m16n8k8 .tf32), with g = lane / 4 and
// c = lane % 4:  A (16 x 8, row-major) a0 (g, c), a1 (g+8, c), a2 (g, c+4),
// a3 (g+8, c+4);  B (8 x 8, column-major) b0 (c, g), b1 (c+4, g);
// C (16 x 8) c0 (g, 2c), c1 (g, 2c+1), c2 (g+8, 2c), c3 (g+8, 2c+1).
// Operands are loaded element by element from shared memory, so a caller can
// scale each one on the way (the decay factoring of `gram`).

__device__ inline uint32_t tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

/// How a block's warps share a product of 16-row blocks: each warp takes
/// (16 rows, `width` columns) of the output, four 8-column blocks at a time
/// (sharing the row operand) unless that leaves warps idle. (Splitting the
/// inner axis over idle warps as well, adding the slices with shared-memory
/// atomics, measured 34% slower on KDA: see NOTES.md.)
struct ProductPlan {
  int width, groups, tasks;

  /// (minWidth: the narrowest task, 8, 16 or 32 columns.)
  __device__ ProductPlan(int rowBlocks, int cols, int minWidth = 8) {
    const int warps = kBlockThreads / 32;
    width = minWidth;
    for (int w = 32; w > minWidth; w /= 2)
      if (rowBlocks * ((cols + w - 1) / w) >= warps) {
        width = w;
        break;
      }
    groups = (cols + width - 1) / width;
    tasks = rowBlocks * groups;
  }
};

/// One mma.sync (`instruction`) into a 16 x 8 float32 accumulator c, A in
/// four registers and B in two.
#define RKC_MMA_16X8(instruction, c, a, b)                                    \
  asm volatile(instruction " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "  \
                           "{%0, %1, %2, %3};"                                \
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])               \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),       \
                 "r"(b[1]))

__device__ inline void mma16x8x8(float c[4], const uint32_t a[4],
                                 const uint32_t b[2]) {
  RKC_MMA_16X8("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", c, a, b);
}

// With RKC_BF16_PRODUCTS (rec-schedule products = bf16) the products whose
// inner extent is a multiple of 16 run mma.sync m16n8k16 on bf16 operands
// instead: half the instructions and a third of the conversions of TF32's
// two m16n8k8, at bf16's rounding of each operand (`rkc run
// --bf16-products` measures its cost). Fragment layout (PTX ISA,
// mma.m16n8k16 .bf16), two values a register, the lower index in the low
// half: A a0 (g, 2c..2c+1), a1 (g+8, 2c..2c+1), a2 (g, 2c+8..2c+9),
// a3 (g+8, 2c+8..2c+9); B b0 (2c..2c+1, g), b1 (2c+8..2c+9, g); C as TF32's.
// The quads forms map a lane's four inner indices d..d+3 to the slots 2c,
// 2c+1, 2c+8, 2c+9 of both operands (a relabelling of the inner axis).
#ifndef RKC_BF16_PRODUCTS
#define RKC_BF16_PRODUCTS 0
#endif
constexpr bool kBf16Products = RKC_BF16_PRODUCTS;

/// The element type of a tile that only products read, where every one of
/// them rounds it to bf16 anyway (CudaEmitter's product operands): bf16 in
/// the kernels whose products take bf16 operands, so that it loads by
/// ldmatrix at half the bytes; float elsewhere.
template <bool Half> struct OperandType { using type = float; };
template <> struct OperandType<true> { using type = __nv_bfloat16; };
template <bool TensorCores>
using Operand = typename OperandType<TensorCores && kBf16Products>::type;

/// Two floats rounded to bf16 in one register, `lo` in the low half.
__device__ inline uint32_t bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t *>(&v);
}

__device__ inline void mma16x8x16(float c[4], const uint32_t a[4],
                                  const uint32_t b[2]) {
  RKC_MMA_16X8("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", c, a,
               b);
}

//===----------------------------------------------------------------------===//
// Asynchronous copies (cp.async, 16 bytes): the scan stages the next chunk's
// workspace while it runs this one
//===----------------------------------------------------------------------===//

/// Starts copying 16 bytes from global `src` to shared `dst` (both 16-byte
/// aligned); they are there after copyAsyncWait and a barrier.
__device__ inline void copyAsync16(void *dst, const void *src) {
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to),
               "l"(src));
}

/// Rows x Cols elements from `from` (rows FromLd elements apart) to shared
/// memory at `to` (rows ToLd apart; swizzled where T says, `at`) by
/// cp.async, a 16-byte piece a thread each pass of the block's threads.
/// Every extent is a compile-time constant: the passes unroll with no
/// remainder loop, and where a pass covers whole rows (the usual case) a
/// thread's row and column are computed once, its later pieces whole rows
/// further on (a swizzled piece's column again a pass, from its row).
template <int Rows, int Cols, int ToLd, int FromLd, typename T, typename F>
__device__ inline void stageRows(T *to, const F *from) {
  static_assert(sizeof(T) == sizeof(F), "one element type, one size");
  constexpr int P = 16 / sizeof(T), N = Rows * Cols,
                Step = kBlockThreads * P, Passes = (N + Step - 1) / Step;
  static_assert(Cols % P == 0, "rows of whole 16-byte pieces");
  static_assert(!IsSwizzled<T>::value || (ToLd == Cols && ToLd % 8 == 0 &&
                                          ((ToLd / 8) & (ToLd / 8 - 1)) == 0),
                "a swizzled tile's rows are dense, a power-of-two count of "
                "16-byte pieces (swizzledCol)");
  const int e = threadIdx.x * P;
  if constexpr (Step % Cols == 0) {
    const int r = e / Cols, c = e % Cols;
#pragma unroll
    for (int k = 0; k < Passes; ++k)
      if (N % Step == 0 || e + k * Step < N)
        copyAsync16(at(to, ToLd, r + k * (Step / Cols), c),
                    from + (r + k * (Step / Cols)) * FromLd + c);
  } else {
#pragma unroll
    for (int k = 0; k < Passes; ++k) {
      const int e0 = e + k * Step;
      if (N % Step == 0 || e0 < N)
        copyAsync16(at(to, ToLd, e0 / Cols, e0 % Cols),
                    from + e0 / Cols * FromLd + e0 % Cols);
    }
  }
}

/// Closes the group of copies this thread started since the last commit.
__device__ inline void copyAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::);
}

/// Waits for this thread's committed copies but the newest `Pending` groups.
template <int Pending> __device__ inline void copyAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

//===----------------------------------------------------------------------===//
// Fragment loads in quads
//===----------------------------------------------------------------------===//
//
// Rows a multiple of 32 floats apart put the eight rows of an A fragment
// (lanes g = 0..7 at the same column c) in one bank: eight-way conflicts.
// Within each 16-wide block of the inner axis, the products relabel the axis
// so that a lane's four inner indices are adjacent: k-slot s of the first
// mma is p + 4s and slot s + 4 is p + 4s + 1; of the second, p + 4s + 2 and
// p + 4s + 3. Both operands use the same relabelling, so the sum is the
// same; a row's four values are one 16-byte load (two-way conflicts at
// worst) instead of four scalar ones.

template <typename T> struct IsFloat { static constexpr bool value = false; };
template <> struct IsFloat<float> { static constexpr bool value = true; };

__device__ inline float4 load4(const float *p) {
  return *reinterpret_cast<const float4 *>(p);
}

/// x ⊙ exp(a - b), elementwise.
__device__ inline float4 scaled(float4 x, float4 a, float4 b) {
  return make_float4(x.x * __expf(a.x - b.x), x.y * __expf(a.y - b.y),
                     x.z * __expf(a.z - b.z), x.w * __expf(a.w - b.w));
}

/// Swizzled rows (the prep kernel's input rows that Grams read): in each
/// odd row the two 16-float halves of every 32 floats trade places, so
/// element (i, j) lives at column swizzle(i, j). A quad load's phase (eight
/// lanes, rows g and g + 1 of one fragment) then meets no bank conflict
/// where dense rows a multiple of 32 floats apart put both rows' four
/// floats in the same banks (two-way). A row keeps its floats, so row ops,
/// elementwise quads and a warp's 32 columns stay conflict-free. Only for
/// rows of a multiple of 32 floats.
__device__ inline int swizzle(bool swizzled, int i, int j) {
  return swizzled ? j ^ ((i & 1) << 4) : j;
}

/// Swizzled right operands (the prep kernel's tiles that only products
/// read as B): row i's 8-float blocks of every 32 floats XORed by
/// (i / 4 XOR i) mod 4, so element (i, j) lives at column swizzleB(i, j).
/// The quads form of a product reads B's rows p + 4c + r (r = 0..3, p a
/// multiple of 16) at one column for lanes c = 0..3 (see "Fragment loads in
/// quads"): four rows a multiple of 32 floats apart in one bank for dense
/// rows (four-way), four different 8-bank blocks here (c XOR r). A
/// product's pair stores write rows i0 + g, g = 0..3 and 4..7 in a
/// half-warp, two floats of one 8-float block each: by (i / 4) alone those
/// rows share their blocks (four-way), by i mod 4 as well they do not.
/// Only for rows of a multiple of 32 floats.
__device__ inline int swizzleB(bool swizzled, int i, int j) {
  return swizzled ? j ^ ((((i >> 2) ^ i) & 3) << 3) : j;
}

/// One 16-wide block of the inner axis in quads: A's rows g and g + 8 (lo,
/// hi) and B's column g at this lane's four inner indices (b), one bf16 mma
/// or two TF32 ones.
__device__ inline void mmaQuads(float c[4], float4 lo, float4 hi, float4 b) {
  if (kBf16Products) {
    const uint32_t ab[4] = {bf16x2(lo.x, lo.y), bf16x2(hi.x, hi.y),
                            bf16x2(lo.z, lo.w), bf16x2(hi.z, hi.w)};
    const uint32_t bb[2] = {bf16x2(b.x, b.y), bf16x2(b.z, b.w)};
    mma16x8x16(c, ab, bb);
    return;
  }
  const uint32_t a1[4] = {tf32(lo.x), tf32(hi.x), tf32(lo.y), tf32(hi.y)};
  const uint32_t a2[4] = {tf32(lo.z), tf32(hi.z), tf32(lo.w), tf32(hi.w)};
  const uint32_t b1[2] = {tf32(b.x), tf32(b.y)};
  const uint32_t b2[2] = {tf32(b.z), tf32(b.w)};
  mma16x8x8(c, a1, b1);
  mma16x8x8(c, a2, b2);
}

/// G[r, :] = Σ_{r' ≤ r} g[r'] (or r' < r when exclusive), over all L rows;
/// rows g does not keep contribute zero. Returns whether every gate is at
/// most 0, so that no column of G rises along the rows (`gram` then bounds
/// its factored exponents from two rows); false without the barrier, which
/// the block-wide answer needs.
__device__ inline bool cumsum(const float *g, Rows gRows, int cols, int L,
                              bool exclusive, float *out, bool barrier = true) {
  bool falls = true;
  for (int c = threadIdx.x; c < cols; c += kBlockThreads) {
    float running = 0.f;
    for (int r = 0; r < L; ++r) {
      int i = gRows.index(r);
      float gr = i >= 0 ? g[i * cols + c] : 0.f;
      falls = falls && gr <= 0.f; // (false for a NaN)
      if (!exclusive)
        running += gr;
      out[r * cols + c] = running;
      if (exclusive)
        running += gr;
    }
  }
  return barrier && __syncthreads_and(falls);
}

/// One pair of `gram` on CUDA cores: Σ_d l[i, d] r[j, d] exp(Dl[ri, d] -
/// Dr[rj, d]), without the mask.
/// (swizzled: bit 0 l's rows, bit 1 r's, as `swizzle` stores them.)
__device__ inline float gramPair(const float *l, const float *r, int inner,
                                 const float *dl, const float *dr,
                                 int decayCols, int i, int j, int ri, int rj,
                                 int swizzled = 0) {
  const float *li = l + i * inner, *rjp = r + j * inner;
  const int ls = swizzle(swizzled & 1, i, 0), rs = swizzle(swizzled & 2, j, 0);
  float sum = 0.f;
  if (!dl) {
    for (int d = 0; d < inner; ++d)
      sum += li[d ^ ls] * rjp[d ^ rs];
  } else if (decayCols == 1) {
    for (int d = 0; d < inner; ++d)
      sum += li[d ^ ls] * rjp[d ^ rs];
    sum *= __expf(dl[ri] - dr[rj]);
  } else {
    const float *a = dl + ri * decayCols, *b = dr + rj * decayCols;
    for (int d = 0; d < inner; ++d)
      sum += li[d ^ ls] * rjp[d ^ rs] * __expf(a[d] - b[d]);
  }
  return sum;
}

/// The largest exponent `gram`'s factored form may meet; beyond it a block of
/// rows is computed pair by pair. Below 88 (no overflow), and low enough
/// that a left factor flushed to zero (exponent below about -87) can only
/// drop weights under e^(40 - 87) ≈ 4e-21.
constexpr float kMaxFactoredExponent = 40.f;

/// Steps of 16 inner elements `gramBlock` unrolls (RKC_GRAM_UNROLL, by
/// default 2). Each step is ~100 instructions a live column block, and the
/// prep kernel, whose two Grams took ~12 k of its ~20 k instructions fully
/// unrolled, stalled on instruction fetch: on the H200 two steps measured
/// 1.014x (KDA), 1.022x (EDA), 1.047x (GDN-2) over all of them, four half
/// that (NOTES.md, v14).
#ifndef RKC_GRAM_UNROLL
#define RKC_GRAM_UNROLL 2
#endif
constexpr int kGramUnroll = RKC_GRAM_UNROLL;

/// The narrowest warp task of a Gram, in columns (RKC_GRAM_WIDTH: 8, 16 or
/// 32). Each task loads its 16 left rows again (and with a decay per channel
/// scales them by their exponentials again), so wider tasks do that fewer
/// times, on fewer warps. At chunk 32 on the H200, 16 against 8: KDA and
/// GDN-2 1.04x, QED, DPLR 1.03-1.04x, GDN and DeltaNet 1.02x, EDA and
/// DeltaProduct 0.99-1.00x; 32 slower for all but DeltaNet (NOTES.md, v26).
/// (One width for every Gram: a width that depends on the decay, which the
/// compiler cannot always tell, keeps both plans' code.)
#ifndef RKC_GRAM_WIDTH
#define RKC_GRAM_WIDTH 16
#endif
constexpr int kGramWidth = RKC_GRAM_WIDTH;
static_assert(kGramWidth == 8 || kGramWidth == 16 || kGramWidth == 32,
              "RKC_GRAM_WIDTH is 8, 16 or 32");

/// The products of `gramTensorCores` for one warp's block: 16 rows from i0
/// and NB live 8-column blocks from j0, the decay factored through the
/// reference X (null: none, or one column of decay, applied after). NB is a
/// compile-time constant so that the loop has no branch between the mma of
/// one step (see productBlock); so is the inner extent when Inner is not 0
/// (the loop unrolls).
template <int NB, int Inner>
__device__ inline void
gramBlock(float (&acc)[4][4], const float *l, Rows lRows, const float *r,
          Rows rRows, int inner, const float *dl, const float *dr,
          int decayCols, const float *X, int i0, int j0, int swizzled) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  const bool channel = X != nullptr;
  // (Rows i0 + g, i0 + g + 8 and j0 + 8 nb + g share g's parity.)
  const int ls = swizzle(swizzled & 1, g, 0), rs = swizzle(swizzled & 2, g, 0);
  if (Inner)
    inner = Inner;
  if (inner % 16 == 0 && (!channel || decayCols % 4 == 0)) {
#pragma unroll kGramUnroll
    for (int p = 0; p < inner; p += 16) {
      const int d = p + 4 * c; // this lane's four inner indices
      float4 lo = load4(l + (i0 + g) * inner + (d ^ ls)),
             hi = load4(l + (i0 + g + 8) * inner + (d ^ ls)),
             x = make_float4(0.f, 0.f, 0.f, 0.f);
      if (channel) {
        x = load4(X + d);
        lo = scaled(lo, load4(dl + lRows.real(i0 + g) * decayCols + d), x);
        hi = scaled(hi, load4(dl + lRows.real(i0 + g + 8) * decayCols + d), x);
      }
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        const int j = j0 + nb * 8 + g;
        float4 v = load4(r + j * inner + (d ^ rs));
        if (channel)
          v = scaled(v, x, load4(dr + rRows.real(j) * decayCols + d));
        mmaQuads(acc[nb], lo, hi, v);
      }
    }
    return;
  }
  for (int p = 0; p < inner; p += 8) {
    uint32_t a[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int i = i0 + g + (k % 2) * 8, d = p + c + (k / 2) * 4;
      float x = l[i * inner + (d ^ ls)];
      if (channel)
        x *= __expf(dl[lRows.real(i) * decayCols + d] - X[d]);
      a[k] = tf32(x);
    }
#pragma unroll
    for (int nb = 0; nb < NB; ++nb) {
      const int j = j0 + nb * 8 + g, rj = rRows.real(j);
      uint32_t b[2];
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const int d = p + c + k * 4;
        float x = r[j * inner + (d ^ rs)];
        if (channel)
          x *= __expf(X[d] - dr[rj * decayCols + d]);
        b[k] = tf32(x);
      }
      mma16x8x8(acc[nb], a, b);
    }
  }
}

template <typename T>
__device__ inline void putPair(T *out, int ld, int i, int j, float x0,
                               float x1);

/// One task of `gram` on tensor cores: a warp's (16 rows, up to 32 columns)
/// of the plan. With per-channel decay the weight exp(Dl[ri] - Dr[rj]) is
/// factored through a reference X = Dl[first row of the block] into exp(Dl[ri]
/// - X) on the left operand and exp(X - Dr[rj]) on the right one: with
/// log-decays that do not increase along the chunk, the left exponent is never
/// positive, nor is the right one for the columns before the block; only
/// columns inside the block can grow, so the block's largest exponent is
/// checked, and a block past kMaxFactoredExponent is computed pair by pair
/// (exact, slower). Where the caller knows the sums fall (`falling`: every gate
/// at most 0), two rows bound that exponent (X - Dr[last row]) and the search
/// runs only when the bound is past the limit.
template <int Inner>
__device__ inline void gramTask(const ProductPlan &plan, int task,
                                const float *l, Rows lRows, const float *r,
                                Rows rRows, int inner, const float *dl,
                                const float *dr, int decayCols, bool strict,
                                float *out, int swizzled, bool falling) {
  if (Inner)
    inner = Inner;
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  const int R = rRows.count;
  const bool channel = dl && decayCols > 1;
  const int i0 = (task / plan.groups) * 16,
            j0 = (task % plan.groups) * plan.width;
  const int jEnd = min(j0 + plan.width, R);
  const int firstRow = lRows.real(i0), lastRow = lRows.real(i0 + 15);
  // Columns past the last unmasked one are zero: a block of them is a
  // store.
  if (!(strict ? rRows.real(j0) < lastRow : rRows.real(j0) <= lastRow)) {
    for (int e = lane; e < 16 * (jEnd - j0); e += 32)
      out[(i0 + e / (jEnd - j0)) * R + j0 + e % (jEnd - j0)] = 0.f;
    return;
  }
  auto live = [&](int jb) {
    const int rj = rRows.real(jb);
    return strict ? rj < lastRow : rj <= lastRow;
  };
  const float *X = channel ? dl + firstRow * decayCols : nullptr;
  bool exact = false, channelChecked = false;
  if (channel && falling && lRows.ascending()) {
    // Sums that never rise bound every exponent by X - Dr[lastRow]: the
    // left ones Dl[ri] - X are at most 0 (ri >= firstRow), the right
    // ones X - Dr[rj] grow with rj, which is at most lastRow for a live
    // column. Within the limit the factored form is safe; past it the
    // exact exponents below decide, as without the bound.
    float bound = -3.4e38f;
#pragma unroll
    for (int d = lane; d < inner; d += 32)
      bound = fmaxf(bound, X[d] - dr[lastRow * decayCols + d]);
    for (int offset = 16; offset > 0; offset >>= 1)
      bound = fmaxf(bound, __shfl_xor_sync(0xffffffffu, bound, offset));
    channelChecked = bound <= kMaxFactoredExponent;
  }
  if (channel && !channelChecked) {
    // Both factors' largest exponents (the left one only grows if a gate
    // is positive).
    // (Unrolled: the loads are independent, only the maxima chain.)
    float worst = -3.4e38f;
#pragma unroll 4
    for (int i = i0; i < i0 + 16; ++i) {
      const float *a = dl + lRows.real(i) * decayCols;
#pragma unroll
      for (int d = lane; d < inner; d += 32)
        worst = fmaxf(worst, a[d] - X[d]);
    }
    int liveColumns = 0; // a prefix (the mask is causal)
    while (j0 + liveColumns < jEnd && live(j0 + liveColumns))
      ++liveColumns;
#pragma unroll 4
    for (int j = j0; j < j0 + liveColumns; ++j) {
      const float *b = dr + rRows.real(j) * decayCols;
#pragma unroll
      for (int d = lane; d < inner; d += 32)
        worst = fmaxf(worst, X[d] - b[d]);
    }
    for (int offset = 16; offset > 0; offset >>= 1)
      worst = fmaxf(worst, __shfl_xor_sync(0xffffffffu, worst, offset));
    exact = worst > kMaxFactoredExponent;
  }
  if (exact) {
    // Pair by pair.
    for (int e = lane; e < 16 * (jEnd - j0); e += 32) {
      const int i = i0 + e / (jEnd - j0), j = j0 + e % (jEnd - j0);
      const int ri = lRows.real(i), rj = rRows.real(j);
      out[i * R + j] =
          (strict ? rj < ri : rj <= ri)
              ? gramPair(l, r, inner, dl, dr, decayCols, i, j, ri, rj, swizzled)
              : 0.f;
    }
    return;
  }
  // The live column blocks are a prefix (the mask is causal).
  int liveBlocks = 0;
  while (liveBlocks < 4 && j0 + liveBlocks * 8 < jEnd &&
         live(j0 + liveBlocks * 8))
    ++liveBlocks;
  float acc[4][4] = {};
  switch (liveBlocks) {
  case 4:
    gramBlock<4, Inner>(acc, l, lRows, r, rRows, inner, dl, dr, decayCols, X,
                        i0, j0, swizzled);
    break;
  case 3:
    gramBlock<3, Inner>(acc, l, lRows, r, rRows, inner, dl, dr, decayCols, X,
                        i0, j0, swizzled);
    break;
  case 2:
    gramBlock<2, Inner>(acc, l, lRows, r, rRows, inner, dl, dr, decayCols, X,
                        i0, j0, swizzled);
    break;
  default:
    gramBlock<1, Inner>(acc, l, lRows, r, rRows, inner, dl, dr, decayCols, X,
                        i0, j0, swizzled);
  }
#pragma unroll
  for (int nb = 0; nb < 4; ++nb) {
    const int jb = j0 + nb * 8;
    if (jb >= jEnd)
      return;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // A lane's two adjacent columns of row i: one 8-byte store where
      // the rows' stride allows (putPair; half the store wavefronts of
      // two).
      const int i = i0 + g + h * 8, ri = lRows.real(i);
      float x[2];
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const int rj = rRows.real(jb + 2 * c + k);
        x[k] = 0.f;
        if (live(jb) && (strict ? rj < ri : rj <= ri)) {
          x[k] = acc[nb][2 * h + k];
          if (dl && !channel)
            x[k] *= __expf(dl[ri] - dr[rj]);
        }
      }
      putPair(out, R, i, jb + 2 * c, x[0], x[1]);
    }
  }
}

/// `gram` on tensor cores: the plan's tasks dealt to the warps in turn.
template <int Inner>
__device__ inline void
gramTensorCores(const float *l, Rows lRows, const float *r, Rows rRows,
                int inner, const float *dl, const float *dr, int decayCols,
                bool strict, float *out, int swizzled, bool falling) {
  const ProductPlan plan(lRows.count / 16, rRows.count, kGramWidth);
  for (int task = threadIdx.x / 32; task < plan.tasks;
       task += kBlockThreads / 32)
    gramTask<Inner>(plan, task, l, lRows, r, rRows, inner, dl, dr, decayCols,
                    strict, out, swizzled, falling);
}

/// `gram` without its closing barrier.
template <bool TensorCores, int Inner = 0>
__device__ inline void gramUnfenced(const float *l, Rows lRows, const float *r,
                                    Rows rRows, int inner, const float *dl,
                                    const float *dr, int decayCols, bool strict,
                                    float *out, int swizzled, bool falling) {
  if (Inner)
    inner = Inner;
  if (TensorCores && lRows.count % 16 == 0 && rRows.count % 8 == 0 &&
      inner % 8 == 0) {
    gramTensorCores<Inner>(l, lRows, r, rRows, inner, dl, dr, decayCols, strict,
                           out, swizzled, falling);
    return;
  }
  int n = lRows.count * rRows.count;
#pragma unroll 4
  for (int e = threadIdx.x; e < n; e += kBlockThreads) {
    int i = e / rRows.count, j = e % rRows.count;
    int ri = lRows.real(i), rj = rRows.real(j);
    out[e] =
        (strict ? rj < ri : rj <= ri)
            ? gramPair(l, r, inner, dl, dr, decayCols, i, j, ri, rj, swizzled)
            : 0.f;
  }
}

/// M[i, j] = Σ_d l[i, d] r[j, d] exp(Dl[ri, d] - Dr[rj, d]) where the mask
/// keeps rj < ri (strict) or rj ≤ ri; zero elsewhere. Without decay tiles
/// (dl == nullptr) there is no exponential; with one column of decay the
/// weight is one scalar per pair. The mask is applied before the exp.
/// TensorCores: TF32 products, bf16 with RKC_BF16_PRODUCTS (the kernels for
/// 16-bit inputs). Inner (when not 0) is `inner` known at compile time: the
/// loops over it unroll. swizzled: bit 0 where l's rows are stored as
/// `swizzle` says, bit 1 r's. falling: no column of Dl or Dr rises along the
/// rows (what `cumsum` returns; false when not known).
template <bool TensorCores, int Inner = 0>
__device__ inline void
gram(const float *l, Rows lRows, const float *r, Rows rRows, int inner,
     const float *dl, const float *dr, int decayCols, bool strict, float *out,
     int swizzled = 0, bool falling = false) {
  gramUnfenced<TensorCores, Inner>(l, lRows, r, rRows, inner, dl, dr, decayCols,
                                   strict, out, swizzled, falling);
  __syncthreads();
}

/// A Gram's operands and result, in `gram`'s order (for `gramsTogether`).
struct GramArgs {
  const float *l;
  Rows lRows;
  const float *r;
  Rows rRows;
  int inner;
  const float *dl, *dr;
  int decayCols;
  bool strict;
  float *out;
  int swizzled;
  bool falling;
};

/// Two Grams that read nothing the other writes, as one step: on tensor
/// cores the second's tasks follow the first's in the warps' turn, in
/// reverse (a Gram's live tasks are its later rows' blocks: reversed, they
/// meet the first Gram's early ones, whose blocks are masked or short), and
/// one barrier closes both. A 32-token chunk's Gram has three live tasks of
/// four for eight warps: two together take about the time of one.
template <bool TensorCores, int InnerA = 0, int InnerB = 0>
__device__ inline void gramsTogether(const GramArgs &a, const GramArgs &b) {
  auto onTensorCores = [](const GramArgs &g, int inner) {
    return TensorCores && g.lRows.count % 16 == 0 && g.rRows.count % 8 == 0 &&
           inner % 8 == 0;
  };
  const int innerA = InnerA ? InnerA : a.inner,
            innerB = InnerB ? InnerB : b.inner;
  if (onTensorCores(a, innerA) && onTensorCores(b, innerB)) {
    const ProductPlan planA(a.lRows.count / 16, a.rRows.count, kGramWidth),
        planB(b.lRows.count / 16, b.rRows.count, kGramWidth);
    const int tasks = planA.tasks + planB.tasks;
    for (int task = threadIdx.x / 32; task < tasks; task += kBlockThreads / 32)
      if (task < planA.tasks)
        gramTask<InnerA>(planA, task, a.l, a.lRows, a.r, a.rRows, innerA, a.dl,
                         a.dr, a.decayCols, a.strict, a.out, a.swizzled,
                         a.falling);
      else
        gramTask<InnerB>(planB, tasks - 1 - task, b.l, b.lRows, b.r, b.rRows,
                         innerB, b.dl, b.dr, b.decayCols, b.strict, b.out,
                         b.swizzled, b.falling);
  } else {
    gramUnfenced<TensorCores, InnerA>(a.l, a.lRows, a.r, a.rRows, innerA, a.dl,
                                      a.dr, a.decayCols, a.strict, a.out,
                                      a.swizzled, a.falling);
    gramUnfenced<TensorCores, InnerB>(b.l, b.lRows, b.r, b.rRows, innerB, b.dl,
                                      b.dr, b.decayCols, b.strict, b.out,
                                      b.swizzled, b.falling);
  }
  __syncthreads();
}

/// Whether p is a multiple of Bytes. A shared-memory address is tested in
/// the shared window, where the compiler sees a kernel's tile as the
/// (aligned) dynamic shared array plus a constant and folds the test; on the
/// generic address (the window's base added at run time) it cannot, and each
/// caller keeps both of its paths (a float pair stored as two scalar stores).
/// The window's base is aligned far beyond 16 bytes: both tests agree.
template <unsigned Bytes> __device__ inline bool isAligned(const void *p) {
  static_assert((Bytes & (Bytes - 1)) == 0, "a power of two");
  if (__isShared(p))
    return (static_cast<unsigned>(__cvta_generic_to_shared(p)) & (Bytes - 1)) ==
           0;
  return (reinterpret_cast<uintptr_t>(p) & (Bytes - 1)) == 0;
}

/// Where an elementwise op also stores each element it computes, element e
/// at e: nowhere (NoKeep), or a chunk's workspace (KeepIn: a prep value the
/// scan reads, stored as it is computed, where a copy after the op would
/// cost a barrier and a second pass over shared memory). These ops end with
/// a barrier unless `barrier` is false: the emitter leaves it out where the
/// next op touches nothing this one did (planPrepBarriers).
///
/// Where a row's length is a multiple of four and the op's input and output
/// tiles and the workspace it keeps into are 16-byte aligned (the kernels'
/// are), an op takes its elements four at a time (`quads`): one 16-byte
/// shared load and store a lane instead of four, one exponential for the
/// four where the gate is a scalar (a gate's or a scale's row is read four
/// at a time where it is aligned, else one by one), and the same arithmetic
/// on each element, so the same results. scaleCols does so only where M's
/// columns are c's rows.
struct NoKeep {
  __device__ void operator()(int, float) const {}
  __device__ void quad(int, float4) const {}
  __device__ bool quadAligned() const { return true; }
};
template <typename T> struct KeepIn {
  T *w;
  __device__ void operator()(int e, float x) const { w[e] = fromFloat<T>(x); }
  /// Elements e..e+3 (e a multiple of four) in one store.
  __device__ void quad(int e, float4 x) const {
    struct alignas(4 * sizeof(T)) Quad {
      T e[4];
    };
    *reinterpret_cast<Quad *>(w + e) =
        Quad{{fromFloat<T>(x.x), fromFloat<T>(x.y), fromFloat<T>(x.z),
              fromFloat<T>(x.w)}};
  }
  __device__ bool quadAligned() const { return isAligned<4 * sizeof(T)>(w); }
};

/// Whether elementwise ops take four elements at a time where they can
/// (above). The generated kernels say (CudaEmitter: where every gate is a
/// scalar).
#ifndef RKC_ELEMENTWISE_QUADS
#define RKC_ELEMENTWISE_QUADS 1
#endif
constexpr bool kElementwiseQuads = RKC_ELEMENTWISE_QUADS;

/// Whether p is 16-byte aligned (a float4 of shared memory).
__device__ inline bool aligned16(const void *p) { return isAligned<16>(p); }
__device__ inline float4 load4f(const float *p) {
  return *reinterpret_cast<const float4 *>(p);
}
__device__ inline void store4f(float *p, float4 v) {
  *reinterpret_cast<float4 *>(p) = v;
}
__device__ inline float4 scale4(float4 v, float s) {
  return make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
}
__device__ inline float4 scale4(float4 v, float4 s) {
  return make_float4(v.x * s.x, v.y * s.y, v.z * s.z, v.w * s.w);
}
/// exp of each of four floats, `__expf` as the one-at-a-time loops take it.
__device__ inline float4 exp4(float4 v) {
  return make_float4(__expf(v.x), __expf(v.y), __expf(v.z), __expf(v.w));
}
/// Four consecutive floats from p: one load where `aligned` (p 16-byte
/// aligned), else four.
__device__ inline float4 load4If(const float *p, bool aligned) {
  return aligned ? load4f(p) : make_float4(p[0], p[1], p[2], p[3]);
}

/// out[i, j] = M[i, col(j)] · c[j], keeping the columns of c's rows; with
/// Negate, M[i, col(j)] · -c[j] (a negation of c folded in by the emitter).
template <bool Negate = false, typename Keep = NoKeep>
__device__ inline void scaleCols(const float *m, int rows, Rows mCols,
                                 const float *c, Rows cRows, float *out,
                                 Keep keep = {}, bool barrier = true) {
  int n = rows * cRows.count;
  if (kElementwiseQuads && mCols.all() && cRows.all() && mCols.count == cRows.count &&
      n % 4 == 0 && cRows.count % 4 == 0 && aligned16(m) && aligned16(out) &&
      keep.quadAligned()) {
    // M's columns are c's rows: element e of out is element e of M.
    const bool cAligned = aligned16(c);
#pragma unroll 2
    for (int e = 4 * threadIdx.x; e < n; e += 4 * kBlockThreads) {
      float4 s = load4If(c + e % cRows.count, cAligned);
      if (Negate)
        s = make_float4(-s.x, -s.y, -s.z, -s.w);
      const float4 value = scale4(load4f(m + e), s);
      store4f(out + e, value);
      keep.quad(e, value);
    }
    if (barrier)
      __syncthreads();
    return;
  }
#pragma unroll 4
  for (int e = threadIdx.x; e < n; e += kBlockThreads) {
    int i = e / cRows.count, j = e % cRows.count;
    int src = mCols.index(cRows.real(j));
    const float value = m[i * mCols.count + src] * (Negate ? -c[j] : c[j]);
    out[e] = value;
    keep(e, value);
  }
  if (barrier)
    __syncthreads();
}

/// The element of x that a dense tile's element e (of rows `cols` long)
/// is, x stored as `swizzle` says where `swizzled`. An op that reads x
/// swizzled and writes its dense result in x's place has every lane of a
/// warp read before any writes (__syncwarp): the 32 floats that trade
/// halves are one warp's.
__device__ inline int swizzledAt(bool swizzled, int e, int cols) {
  return swizzled ? e ^ (((e / cols) & 1) << 4) : e;
}
/// The same for a tile stored as `swizzleB` says.
__device__ inline int swizzledBAt(bool swizzled, int e, int cols) {
  // (cols a multiple of 32: the XOR stays within the row.)
  return swizzled ? swizzleB(true, e / cols, e) : e;
}

/// out[i, :] = x[i, :] · c[i] (x swizzled where `xSwizzled`)
template <typename Keep = NoKeep>
__device__ inline void scaleRows(const float *x, int rows, int cols,
                                 const float *c, float *out, Keep keep = {},
                                 bool barrier = true, bool xSwizzled = false) {
  if (kElementwiseQuads && cols % 4 == 0 && aligned16(x) && aligned16(out) && keep.quadAligned()) {
#pragma unroll 2
    for (int e = 4 * threadIdx.x; e < rows * cols; e += 4 * kBlockThreads) {
      const float4 value =
          scale4(load4f(x + swizzledAt(xSwizzled, e, cols)), c[e / cols]);
      if (xSwizzled)
        __syncwarp();
      store4f(out + e, value);
      keep.quad(e, value);
    }
    if (barrier)
      __syncthreads();
    return;
  }
#pragma unroll 4
  for (int e = threadIdx.x; e < rows * cols; e += kBlockThreads) {
    const float value = x[swizzledAt(xSwizzled, e, cols)] * c[e / cols];
    if (xSwizzled)
      __syncwarp();
    out[e] = value;
    keep(e, value);
  }
  if (barrier)
    __syncthreads();
}

template <typename Keep = NoKeep>
__device__ inline void neg(const float *x, int n, float *out, Keep keep = {},
                           bool barrier = true) {
#pragma unroll 4
  for (int e = threadIdx.x; e < n; e += kBlockThreads) {
    const float value = -x[e];
    out[e] = value;
    keep(e, value);
  }
  if (barrier)
    __syncthreads();
}

template <typename X, typename Y, typename Keep = NoKeep>
__device__ inline void add(const X *x, const Y *y, int n, float *out,
                           Keep keep = {}, bool barrier = true) {
#pragma unroll 4
  for (int e = threadIdx.x; e < n; e += kBlockThreads) {
    const float value = toFloat(x[e]) + toFloat(y[e]);
    out[e] = value;
    keep(e, value);
  }
  if (barrier)
    __syncthreads();
}

/// T = (I - A)⁻¹ for strictly lower A (n x n), by blocks of 16 when n
/// allows: each diagonal block by forward substitution, one lane a column
/// (a column only reads itself), then block row by block row
/// T[I][J] = T[I][I] Σ_{J ≤ K < I} A[I][K] T[K][J], the products of a block
/// row parked in the (still zero) upper blocks. Otherwise one row at a time.
/// With Negate, -T: the diagonal starts at -1, and since every other element
/// is linear in those, the rest follows (the block-row step multiplies two
/// negated blocks, so it negates its sum).
template <bool Negate = false>
__device__ inline void utInverse(const float *a, int n, float *t) {
  constexpr float one = Negate ? -1.f : 1.f;
  if (n % 16 == 0 && n / 16 <= kBlockThreads / 32) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int blocks = n / 16;
    for (int e = threadIdx.x; e < n * n; e += kBlockThreads) {
      const int i = e / n, j = e % n;
      if (i / 16 != j / 16)
        t[e] = 0.f;
    }
    if (warp < blocks && lane < 16) {
      // The lane's column of the diagonal block stays in registers (zero
      // above the diagonal, so each row's sum may run over every earlier
      // row); the loops unroll, and A's rows (the same for every lane) load
      // ahead of the chain of sums.
      const int base = warp * 16, j = lane;
      float column[16];
#pragma unroll
      for (int i = 0; i < 16; ++i) {
        float sum = i == j ? one : 0.f;
#pragma unroll
        for (int k = 0; k < i; ++k)
          sum += a[(base + i) * n + base + k] * column[k];
        column[i] = i < j ? 0.f : sum;
      }
#pragma unroll
      for (int i = 0; i < 16; ++i)
        t[(base + i) * n + base + j] = column[i];
    }
    __syncthreads();
    for (int I = 1; I < blocks; ++I) {
      // P[J] = Σ_K A[I][K] T[K][J] into the upper block (J, I).
      for (int e = threadIdx.x; e < I * 256; e += kBlockThreads) {
        const int J = e / 256, r = (e / 16) % 16, c = e % 16;
        float sum = 0.f;
        for (int K = J; K < I; ++K)
#pragma unroll
          for (int k = K * 16; k < K * 16 + 16; ++k)
            sum += a[(I * 16 + r) * n + k] * t[k * n + J * 16 + c];
        t[(J * 16 + r) * n + I * 16 + c] = sum;
      }
      __syncthreads();
      // T[I][J] = T[I][I] P[J]; T[I][I] is zero above its diagonal, so the
      // sum runs over all 16 rows (unrolled).
      for (int e = threadIdx.x; e < I * 256; e += kBlockThreads) {
        const int J = e / 256, r = (e / 16) % 16, c = e % 16;
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < 16; ++k)
          sum += t[(I * 16 + r) * n + I * 16 + k] *
                 t[(J * 16 + k) * n + I * 16 + c];
        t[(I * 16 + r) * n + J * 16 + c] = Negate ? -sum : sum;
      }
      __syncthreads();
      for (int e = threadIdx.x; e < I * 256; e += kBlockThreads) {
        const int J = e / 256, r = (e / 16) % 16, c = e % 16;
        t[(J * 16 + r) * n + I * 16 + c] = 0.f;
      }
    }
    __syncthreads();
    return;
  }
  for (int e = threadIdx.x; e < n * n; e += kBlockThreads)
    t[e] = (e / n == e % n) ? one : 0.f;
  __syncthreads();
  for (int i = 1; i < n; ++i) {
    for (int j = threadIdx.x; j < i; j += kBlockThreads) {
      float sum = 0.f;
      for (int k = j; k < i; ++k)
        sum += a[i * n + k] * t[k * n + j];
      t[i * n + j] = sum;
    }
    __syncthreads();
  }
}

/// out[i, c] = x[i, c] · exp(G[ri, c]) (G with one column: the same on
/// every c; x swizzled where `xSwizzled`, out stored as swizzleB says where
/// `outSwizzledB`).
template <typename Keep = NoKeep>
__device__ inline void
decayRows(const float *x, Rows xRows, int cols, const float *G, int gCols,
          float *out, Keep keep = {}, bool barrier = true,
          bool xSwizzled = false, bool outSwizzledB = false) {
  if (kElementwiseQuads && cols % 4 == 0 && aligned16(x) && aligned16(out) && keep.quadAligned()) {
    const bool gAligned = aligned16(G) && gCols % 4 == 0;
#pragma unroll 2
    for (int e = 4 * threadIdx.x; e < xRows.count * cols; e += 4 * kBlockThreads) {
      const float *const g = G + xRows.real(e / cols) * gCols;
      const float4 x4 = load4f(x + swizzledAt(xSwizzled, e, cols));
      const float4 value =
          gCols == 1 ? scale4(x4, __expf(g[0]))
                     : scale4(x4, exp4(load4If(g + e % cols, gAligned)));
      if (xSwizzled || outSwizzledB)
        __syncwarp();
      store4f(out + swizzledBAt(outSwizzledB, e, cols), value);
      keep.quad(e, value);
    }
    if (barrier)
      __syncthreads();
    return;
  }
#pragma unroll 4
  for (int e = threadIdx.x; e < xRows.count * cols; e += kBlockThreads) {
    int i = e / cols, c = e % cols;
    const float value = x[swizzledAt(xSwizzled, e, cols)] *
                        __expf(G[xRows.real(i) * gCols + (gCols == 1 ? 0 : c)]);
    if (xSwizzled || outSwizzledB)
      __syncwarp();
    out[swizzledBAt(outSwizzledB, e, cols)] = value;
    keep(e, value);
  }
  if (barrier)
    __syncthreads();
}

/// out[i, c] = x[i, c] · exp(G[L-1, c] - G[ri, c])
template <typename Keep = NoKeep>
__device__ inline void decayToEnd(const float *x, Rows xRows, int cols,
                                  const float *G, int gCols, int L, float *out,
                                  Keep keep = {}, bool barrier = true) {
  if (kElementwiseQuads && cols % 4 == 0 && aligned16(x) && aligned16(out) && keep.quadAligned()) {
    const float *const last = G + (L - 1) * gCols;
    const bool gAligned = aligned16(G) && gCols % 4 == 0;
#pragma unroll 2
    for (int e = 4 * threadIdx.x; e < xRows.count * cols; e += 4 * kBlockThreads) {
      const float *const g = G + xRows.real(e / cols) * gCols;
      const float4 x4 = load4f(x + e);
      float4 value;
      if (gCols == 1) {
        value = scale4(x4, __expf(last[0] - g[0]));
      } else {
        const float4 a = load4If(last + e % cols, gAligned),
                     b = load4If(g + e % cols, gAligned);
        value = scale4(x4, exp4(make_float4(a.x - b.x, a.y - b.y, a.z - b.z,
                                            a.w - b.w)));
      }
      store4f(out + e, value);
      keep.quad(e, value);
    }
    if (barrier)
      __syncthreads();
    return;
  }
#pragma unroll 4
  for (int e = threadIdx.x; e < xRows.count * cols; e += kBlockThreads) {
    int i = e / cols, c = gCols == 1 ? 0 : e % cols;
    const float value =
        x[e] * __expf(G[(L - 1) * gCols + c] - G[xRows.real(i) * gCols + c]);
    out[e] = value;
    keep(e, value);
  }
  if (barrier)
    __syncthreads();
}

/// out[d, c] = S[d, c] · exp(G[L-1, d]): the state decayed over the chunk
/// (S's rows `sld` floats apart, 0: dense; out dense).
__device__ inline void decayState(const float *s, int rows, int cols,
                                  const float *G, int gCols, int L,
                                  float *out, int sld = 0) {
  if (!sld)
    sld = cols;
#pragma unroll 4
  for (int e = threadIdx.x; e < rows * cols; e += kBlockThreads) {
    int d = e / cols;
    out[e] = s[d * sld + e % cols] * __expf(G[(L - 1) * gCols + (gCols == 1 ? 0 : d)]);
  }
  __syncthreads();
}

/// Two 16-bit operands in one register, `lo` in the low half: bf16 values
/// as they are (no round trip through float32), floats rounded.
__device__ inline uint32_t pair16(float lo, float hi) { return bf16x2(lo, hi); }
__device__ inline uint32_t pair16(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return uint32_t(__bfloat16_as_ushort(lo)) |
         uint32_t(__bfloat16_as_ushort(hi)) << 16;
}
__device__ inline uint32_t pair16(SwizzledBf16 lo, SwizzledBf16 hi) {
  return pair16(lo.x, hi.x);
}

/// ldmatrix: four (or two) 8 x 8 blocks of 16-bit values from shared
/// memory, lanes 8m..8m+7 giving the addresses of block m's eight rows
/// (16-byte aligned); register m gets lane (g, c)'s part of block m: row g,
/// columns 2c..2c+1, or with Trans the block transposed (rows 2c..2c+1,
/// column g). One instruction for a whole bf16 fragment, where element loads
/// take four to eight.
template <bool Trans>
__device__ inline void loadMatrixX4(uint32_t (&r)[4], const void *row) {
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(row));
  if (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
                 "{%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(at));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                 "{%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(at));
}
__device__ inline void loadMatrixX2Trans(uint32_t (&r)[2], const void *row) {
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(at));
}

/// Whether a 16-bit tile's rows (`ld` elements apart from `p`) suit
/// ldmatrix: every row 16-byte aligned.
template <typename T>
__device__ inline bool matrixRows(const T *p, int ld) {
  return sizeof(T) == 2 && (ld * 2) % 16 == 0 && isAligned<16>(p);
}

/// x[0] and x[1] as pair16 packs them: for bf16, one 32-bit load (x 4-byte
/// aligned).
__device__ inline uint32_t adjacentPair(const float *x) {
  return pair16(x[0], x[1]);
}
__device__ inline uint32_t adjacentPair(const __nv_bfloat16 *x) {
  return *reinterpret_cast<const uint32_t *>(x);
}
__device__ inline uint32_t adjacentPair(const SwizzledBf16 *x) {
  return *reinterpret_cast<const uint32_t *>(x);
}

/// A warp's block of a tensor-core product: acc (16 rows from i0, NB
/// 8-column blocks from j0) = A[i0.., :] B[:, j0..] (Aᵀ with transposeA).
/// NB and, when Inner is not 0, the inner extent are compile-time constants,
/// so the unrolled loop has no branches and every step's fragment loads can
/// issue ahead of the products before them: the products are chains of
/// dependent mma, and a branch between two of them (one a column block, as
/// a run-time count needs) kept the next loads waiting behind each mma.
/// Matrix: the bf16 products load 16-bit operands by ldmatrix (their rows
/// 16-byte aligned).
template <int NB, int Inner, bool Matrix, typename TA, typename TB>
__device__ inline void productBlock(float (&acc)[NB][4], const TA *a,
                                    const TB *b, int k, bool transposeA,
                                    int lda, int ldb, int i0, int j0,
                                    bool bSwizzled = false) {
  static_assert(!IsSwizzled<TB>::value,
                "a swizzled tile is a left operand only (SwizzledBf16)");
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  const int K = Inner ? Inner : k;
  // Where a warp has one or two column blocks, a column block's chain of
  // K / 16 dependent mma is the product's latency: the even and odd 16-wide
  // steps go to two accumulators (`odd`, added at the end), halving it.
  // (Only with K known at compile time: the unrolled steps then pick their
  // accumulator statically and both stay in registers.)
  constexpr bool Halves = Inner >= 64 && NB <= 2;
  float odd[NB][4];
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int q = 0; q < 4; ++q)
      acc[nb][q] = odd[nb][q] = 0.f;
  auto into = [&](int p, int nb) -> float * {
    return Halves && (p / 16) % 2 ? odd[nb] : acc[nb];
  };
  // Dense float rows: the inner axis in quads (see "Fragment loads in
  // quads"); B's four rows of a column stay scalar loads.
  if (IsFloat<TA>::value && !transposeA && lda % 32 == 0 && K % 16 == 0) {
#pragma unroll
    for (int p = 0; p < K; p += 16) {
      const float *row = reinterpret_cast<const float *>(a) + p + 4 * c;
      const float4 lo = load4(row + (i0 + g) * lda),
                   hi = load4(row + (i0 + g + 8) * lda);
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        // (B's row p + 4c + r is swizzleB's (c XOR r): p is a multiple
        // of 16.)
        const int j = j0 + nb * 8 + g;
        const TB *rows = b + (p + 4 * c) * ldb;
        auto B = [&](int r) {
          return toFloat(
              rows[r * ldb + (bSwizzled ? j ^ (((c ^ r) & 3) << 3) : j)]);
        };
        mmaQuads(into(p, nb), lo, hi, make_float4(B(0), B(1), B(2), B(3)));
      }
    }
  } else if (kBf16Products && K % 16 == 0) {
    auto A = [&](int i, int p) {
      return transposeA ? *at(a, lda, p, i) : *at(a, lda, i, p);
    };
    // With Matrix, the 16-bit operands come by ldmatrix: A's four blocks
    // (rows i0 / i0 + 8, inner p / p + 8), transposed when A is stored
    // inner-major; B (stored inner-major, k x n) transposed, two column
    // blocks an instruction.
    constexpr bool matrixA = Matrix && sizeof(TA) == 2,
                   matrixB = Matrix && sizeof(TB) == 2;
    const int m8 = lane / 8, r8 = lane % 8;
#pragma unroll
    for (int p = 0; p < K; p += 16) {
      uint32_t af[4];
      if (matrixA) {
        const int i = i0 + (m8 % 2) * 8, pp = p + (m8 / 2) * 8;
        // (i and pp are multiples of 8.)
        if (transposeA)
          loadMatrixX4<true>(af, at8(a, lda, pp, r8, i));
        else
          loadMatrixX4<false>(af, at8(a, lda, i, r8, pp));
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int i = i0 + g + (q % 2) * 8, pp = p + 2 * c + (q / 2) * 8;
          af[q] = !transposeA && lda % 2 == 0 ? adjacentPair(at(a, lda, i, pp))
                                              : pair16(A(i, pp), A(i, pp + 1));
        }
      }
      uint32_t blocks[4]; // two column blocks' B fragments (matrixB)
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        uint32_t bf[2];
        const TB *rows = b + (p + (m8 % 2) * 8 + r8) * ldb + j0;
        if (matrixB && nb % 2 == 0 && nb + 1 < NB) {
          loadMatrixX4<true>(blocks, rows + (nb + m8 / 2) * 8);
          bf[0] = blocks[0], bf[1] = blocks[1];
        } else if (matrixB && nb % 2 == 1) {
          bf[0] = blocks[2], bf[1] = blocks[3];
        } else if (matrixB) {
          loadMatrixX2Trans(bf, rows + nb * 8);
        } else {
          const int j = j0 + nb * 8 + g, q = p + 2 * c;
          auto B = [&](int i) {
            return b[i * ldb + swizzleB(bSwizzled, i, j)];
          };
          bf[0] = pair16(B(q), B(q + 1));
          bf[1] = pair16(B(q + 8), B(q + 9));
        }
        mma16x8x16(into(p, nb), af, bf);
      }
    }
  } else {
#pragma unroll
    for (int p = 0; p < K; p += 8) {
      uint32_t af[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int i = i0 + g + (q % 2) * 8, pp = p + c + (q / 2) * 4;
        af[q] =
            tf32(toFloat(transposeA ? *at(a, lda, pp, i) : *at(a, lda, i, pp)));
      }
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        const int j = j0 + nb * 8 + g, q = p + c;
        const uint32_t bf[2] = {
            tf32(toFloat(b[q * ldb + swizzleB(bSwizzled, q, j)])),
            tf32(toFloat(b[(q + 4) * ldb + swizzleB(bSwizzled, q + 4, j)]))};
        mma16x8x8(acc[nb], af, bf);
      }
    }
  }
  if (Halves)
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        acc[nb][q] += odd[nb][q];
}

/// Element (i, j) of a product's output: into a tile (rows `ld` elements
/// apart, rounded to its element type), or to a sink, a callable that
/// takes (i, j, value) (a kernel's output rows in global memory).
template <typename T>
__device__ inline void put(T *out, int ld, int i, int j, float x) {
  out[i * ld + j] = fromFloat<T>(x);
}
template <typename Sink>
__device__ inline void put(const Sink &out, int, int i, int j, float x) {
  out(i, j, x);
}

/// Elements (i, j) and (i, j + 1), j even, as put stores them: one 8-byte
/// (float) or 4-byte (16-bit) store where the rows' stride and the tile's
/// start allow it (the kernels' tiles do), else two. A sink takes both
/// (its own pair store).
template <typename T>
__device__ inline void putPair(T *out, int ld, int i, int j, float x0,
                               float x1) {
  T *const at = out + i * ld + j;
  if (ld % 2 == 0 && isAligned<2 * sizeof(T)>(out)) {
    if constexpr (IsFloat<T>::value) {
      *reinterpret_cast<float2 *>(at) = make_float2(x0, x1);
      return;
    } else if constexpr (std::is_same<T, __nv_bfloat16>::value) {
      *reinterpret_cast<uint32_t *>(at) = bf16x2(x0, x1);
      return;
    }
  }
  at[0] = fromFloat<T>(x0);
  at[1] = fromFloat<T>(x1);
}
template <typename Sink>
__device__ inline void putPair(const Sink &out, int, int i, int j, float x0,
                               float x1) {
  out(i, j, x0, x1);
}

/// Elements (i, j) and (i, j + 1), j even, of a tile (rows `ld` apart) as
/// floats: one load where the stride and the start allow it.
template <typename T>
__device__ inline float2 getPair(const T *x, int ld, int i, int j) {
  static_assert(!IsSwizzled<T>::value,
                "a swizzled tile is a left operand only (SwizzledBf16)");
  const T *const at = x + i * ld + j;
  if (ld % 2 == 0 && isAligned<2 * sizeof(T)>(x)) {
    if constexpr (IsFloat<T>::value)
      return *reinterpret_cast<const float2 *>(at);
    else if constexpr (std::is_same<T, __nv_bfloat16>::value)
      return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(at));
  }
  return make_float2(toFloat(at[0]), toFloat(at[1]));
}

/// A product's addend that is the state decayed over the chunk
/// (decay_state folded into the sum): row i of the addend is scaled by
/// exp(G[L-1, i]) (G's one column: by exp(G[L-1])) as the product stores.
struct RowDecay {
  const float *G = nullptr;
  int gCols = 1, L = 0;

  __device__ float operator()(int row) const {
    return G ? __expf(G[(L - 1) * gCols + (gCols == 1 ? 0 : row)]) : 1.f;
  }
};

/// A product's output tile stored as swizzleB says (rows `ld` floats
/// apart): a sink for put and putPair. A pair (j even) stays adjacent.
struct SwizzledB {
  float *p;
  int ld;

  __device__ void operator()(int i, int j, float x) const {
    p[i * ld + swizzleB(true, i, j)] = x;
  }
  __device__ void operator()(int i, int j, float x0, float x1) const {
    *reinterpret_cast<float2 *>(p + i * ld + swizzleB(true, i, j)) =
        make_float2(x0, x1);
  }
};

/// One product of a sum of products (matmul, matmulPair): A (m x k, or
/// k x m with transposeA) times B (k x n), their rows lda and ldb elements
/// apart; Inner is k known at compile time (0: k at run time).
template <int Inner, typename TA, typename TB> struct Product {
  const TA *a;
  const TB *b;
  int k, lda, ldb;
  bool bSwizzled = false; // B stored as swizzleB says
};
/// No second product.
struct NoProduct {};

/// acc = a warp's block of one Product (productBlock), with ldmatrix for
/// its 16-bit operands when their rows are aligned for it (the scan's
/// staged tiles are).
template <int NB, int Inner, typename TA, typename TB>
__device__ inline void accumulate(float (&acc)[NB][4],
                                  const Product<Inner, TA, TB> &p,
                                  bool transposeA, int i0, int j0) {
  // (ldmatrix reads B's rows dense: a swizzled 16-bit B, which the emitter
  // never makes, would take the element path, which follows swizzleB.)
  if ((sizeof(TA) != 2 || matrixRows(p.a, p.lda)) &&
      (sizeof(TB) != 2 || (!p.bSwizzled && matrixRows(p.b, p.ldb))))
    productBlock<NB, Inner, true>(acc, p.a, p.b, p.k, transposeA, p.lda, p.ldb,
                                  i0, j0, p.bSwizzled);
  else
    productBlock<NB, Inner, false>(acc, p.a, p.b, p.k, transposeA, p.lda, p.ldb,
                                   i0, j0, p.bSwizzled);
}

/// acc = a warp's block of P1 + P2 (P2 may be NoProduct): two independent
/// chains of mma, added at the end.
template <int NB, typename P1, typename P2>
__device__ inline void accumulateSum(float (&acc)[NB][4], const P1 &p1,
                                     const P2 &p2, bool transposeA, int i0,
                                     int j0) {
  accumulate<NB>(acc, p1, transposeA, i0, j0);
  if constexpr (!std::is_same<P2, NoProduct>::value) {
    float more[NB][4];
    accumulate<NB>(more, p2, transposeA, i0, j0);
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        acc[nb][q] += more[nb][q];
  }
}

/// A warp's block of out = P1 (+ P2) (+ addend): the products (two
/// independent chains of mma when there are two), then the stores.
template <int NB, typename P1, typename P2, typename TD, typename TO>
__device__ inline void productTask(const P1 &p1, const P2 &p2, int n,
                                   bool transposeA, TO out, int ldo,
                                   const TD *addend, RowDecay decay, int lde,
                                   int i0, int j0) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  float acc[NB][4];
  accumulateSum<NB>(acc, p1, p2, transposeA, i0, j0);
  // The two rows this lane stores, two adjacent columns of each a column
  // block (a pair load of the addend, a pair store).
  const float scale[2] = {decay(i0 + g), decay(i0 + g + 8)};
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int i = i0 + g + h * 8, j = j0 + nb * 8 + 2 * c;
      float x0 = acc[nb][2 * h], x1 = acc[nb][2 * h + 1];
      if (addend) {
        const float2 e = getPair(addend, lde, i, j);
        x0 += e.x * scale[h];
        x1 += e.y * scale[h];
      }
      putPair(out, ldo, i, j, x0, x1);
    }
}

/// productTask for the block at (i0, j0) of a plan: its column-block count
/// (the last group of a ragged n has fewer) as a compile-time constant.
template <typename P1, typename P2, typename TD, typename TO>
__device__ inline void productTaskOf(const ProductPlan &plan, const P1 &p1,
                                     const P2 &p2, int n, bool transposeA,
                                     TO out, int ldo, const TD *addend,
                                     RowDecay decay, int lde, int i0, int j0) {
  // Where the plan's groups divide n (a compile-time fact for the kernels'
  // products), every task has the plan's width: one instantiation.
  switch ((n % plan.width == 0 ? plan.width : min(j0 + plan.width, n) - j0) /
          8) {
  case 4:
    productTask<4>(p1, p2, n, transposeA, out, ldo, addend, decay, lde, i0, j0);
    break;
  case 3:
    productTask<3>(p1, p2, n, transposeA, out, ldo, addend, decay, lde, i0, j0);
    break;
  case 2:
    productTask<2>(p1, p2, n, transposeA, out, ldo, addend, decay, lde, i0, j0);
    break;
  default:
    productTask<1>(p1, p2, n, transposeA, out, ldo, addend, decay, lde, i0, j0);
  }
}

/// The tensor-core form of matmul and matmulPair: one warp per 16-row block
/// of out and 8, 16 or 32 of its columns (ProductPlan), the column-block
/// count a compile-time constant of productTask.
template <typename P1, typename P2, typename TD, typename TO>
__device__ inline void productTasks(const P1 &p1, const P2 &p2, int m, int n,
                                    bool transposeA, TO out, int ldo,
                                    const TD *addend, RowDecay decay,
                                    int lde, bool barrier) {
  const ProductPlan plan(m / 16, n);
  for (int task = threadIdx.x / 32; task < plan.tasks;
       task += kBlockThreads / 32) {
    const int i0 = (task / plan.groups) * 16,
              j0 = (task % plan.groups) * plan.width;
    productTaskOf(plan, p1, p2, n, transposeA, out, ldo, addend, decay, lde,
                  i0, j0);
  }
  if (barrier)
    __syncthreads();
}

/// One element of a Product on CUDA cores (the float32 kernels); 0 of none.
template <int Inner, typename TA, typename TB>
__device__ inline float productElement(const Product<Inner, TA, TB> &p,
                                       bool transposeA, int i, int j) {
  static_assert(!IsSwizzled<TB>::value,
                "a swizzled tile is a left operand only (SwizzledBf16)");
  float sum = 0.f;
  for (int q = 0; q < p.k; ++q)
    sum += toFloat(transposeA ? *at(p.a, p.lda, q, i) : *at(p.a, p.lda, i, q)) *
           toFloat(p.b[q * p.ldb + swizzleB(p.bSwizzled, q, j)]);
  return sum;
}
__device__ inline float productElement(const NoProduct &, bool, int, int) {
  return 0.f;
}

/// out = P1 + P2 (+ addend) for matmul and matmulPair: on tensor cores
/// when the shapes allow (productTasks), else element by element.
template <bool TensorCores, typename P1, typename P2, typename TD,
          typename TO>
__device__ inline void productSum(const P1 &p1, const P2 &p2, int m, int n,
                                  bool tensorShapes, bool transposeA, TO out,
                                  int ldo, const TD *addend, RowDecay decay,
                                  int lde, bool barrier = true) {
  if (!ldo)
    ldo = n;
  if (!lde)
    lde = n;
  if (TensorCores && tensorShapes && m % 16 == 0 && n % 8 == 0) {
    productTasks(p1, p2, m, n, transposeA, out, ldo, addend, decay, lde,
                 barrier);
    return;
  }
  for (int e = threadIdx.x; e < m * n; e += kBlockThreads) {
    int i = e / n, j = e % n;
    const float sum = productElement(p1, transposeA, i, j) +
                      productElement(p2, transposeA, i, j);
    put(out, ldo, i, j,
        sum + (addend ? toFloat(addend[i * lde + j]) * decay(i) : 0.f));
  }
  if (barrier)
    __syncthreads();
}

/// out = A B with A m x k, B k x n (transposeA: A is k x m, out = Aᵀ B).
/// A's rows are `lda` floats apart, B's `ldb` (0: dense); a stride ≡ 8
/// (mod 32) puts the rows a fragment load touches in distinct banks.
/// TensorCores: TF32 products (bf16 with RKC_BF16_PRODUCTS where k is a
/// multiple of 16), one warp per 16-row block of out and 8, 16
/// or 32 of its columns (ProductPlan).
/// Inner (when not 0) is k known at compile time: the inner loops unroll,
/// so a warp's shared-memory loads for later steps issue before earlier
/// products finish.
/// addend (dense m x n, or null): out = A B + addend, a sum without a pass
/// of its own; out may be the addend itself (each element is read, then
/// written, by one thread), its rows `lde` floats apart (0: dense), each
/// scaled by `decay` (a folded decay_state; none by default). out's rows are
/// `ldo` elements apart (0: dense);
/// out is float, or an Operand tile in 16 bits (rounded as it is stored),
/// or a sink (put). Without `barrier` the block does not wait for every
/// warp at the end: the caller knows nothing next reads what it wrote or
/// writes what it read before another barrier.
template <bool TensorCores, int Inner = 0, typename TA, typename TB,
          typename TO, typename TD = float>
__device__ inline void matmul(const TA *a, const TB *b, int m, int k, int n,
                              bool transposeA, TO out, int lda = 0, int ldb = 0,
                              const TD *addend = nullptr, int ldo = 0,
                              RowDecay decay = {}, int lde = 0,
                              bool barrier = true, bool bSwizzled = false) {
  if (Inner)
    k = Inner;
  productSum<TensorCores>(Product<Inner, TA, TB>{a, b, k,
                                                 lda          ? lda
                                                 : transposeA ? m
                                                              : k,
                                                 ldb ? ldb : n, bSwizzled},
                          NoProduct{}, m, n, k % 8 == 0, transposeA, out, ldo,
                          addend, decay, lde, barrier);
}

/// out = A1 B1 + A2 B2 (+ addend), two products of the same shape (m x n,
/// both Aᵀ with transposeA) with inner extents Inner1 and Inner2, as matmul
/// computes one: a sum of two products in one pass, each warp running both
/// chains of mma. The rest as matmul's.
template <bool TensorCores, int Inner1, int Inner2, typename TA1,
          typename TB1, typename TA2, typename TB2, typename TO,
          typename TD = float>
__device__ inline void matmulPair(const TA1 *a1, const TB1 *b1, int lda1,
                                  int ldb1, const TA2 *a2, const TB2 *b2,
                                  int lda2, int ldb2, int m, int n,
                                  bool transposeA, TO out, int ldo,
                                  const TD *addend, RowDecay decay = {},
                                  int lde = 0, bool barrier = true) {
  productSum<TensorCores>(
      Product<Inner1, TA1, TB1>{a1, b1, Inner1,
                                lda1 ? lda1 : transposeA ? m : Inner1,
                                ldb1 ? ldb1 : n},
      Product<Inner2, TA2, TB2>{a2, b2, Inner2,
                                lda2 ? lda2 : transposeA ? m : Inner2,
                                ldb2 ? ldb2 : n},
      m, n, Inner1 % 8 == 0 && Inner2 % 8 == 0, transposeA, out, ldo, addend,
      decay, lde, barrier);
}

/// out1 = A1 B (+ addend1) and out2 = A2 B (+ addend2): two products of one
/// right operand B (k x n, rows ldb apart; a delta factor's W S and Q S) in
/// one pass, A1 m1 x k and A2 m2 x k (rows lda1, lda2 apart; 0: dense),
/// outputs m x n with rows ldo1, ldo2 apart (0: dense), addends dense. On tensor cores the warps share the row
/// blocks of both (wider column blocks a warp than either alone) and one
/// barrier ends both. No output may overlap an operand of either product.
template <bool TensorCores, int Inner, typename TA1, typename TO1,
          typename TD1, typename TA2, typename TO2, typename TD2, typename TB>
__device__ inline void matmulSharedRight(const TA1 *a1, int lda1, int m1,
                                         TO1 out1, int ldo1,
                                         const TD1 *addend1, const TA2 *a2,
                                         int lda2, int m2, TO2 out2, int ldo2,
                                         const TD2 *addend2, const TB *b,
                                         int ldb, int n) {
  if (!ldo1)
    ldo1 = n;
  if (!ldo2)
    ldo2 = n;
  if (!TensorCores || Inner % 8 || m1 % 16 || m2 % 16 || n % 8) {
    matmul<TensorCores, Inner>(a1, b, m1, Inner, n, false, out1, lda1, ldb,
                               addend1, ldo1, RowDecay{}, n);
    matmul<TensorCores, Inner>(a2, b, m2, Inner, n, false, out2, lda2, ldb,
                               addend2, ldo2, RowDecay{}, n);
    return;
  }
  const Product<Inner, TA1, TB> p1{a1, b, Inner, lda1 ? lda1 : Inner,
                                   ldb ? ldb : n};
  const Product<Inner, TA2, TB> p2{a2, b, Inner, lda2 ? lda2 : Inner,
                                   ldb ? ldb : n};
  const int blocks1 = m1 / 16;
  const ProductPlan plan(blocks1 + m2 / 16, n);
  for (int task = threadIdx.x / 32; task < plan.tasks;
       task += kBlockThreads / 32) {
    const int block = task / plan.groups,
              j0 = (task % plan.groups) * plan.width;
    if (block < blocks1)
      productTaskOf(plan, p1, NoProduct{}, n, false, out1, ldo1, addend1,
                    RowDecay{}, n, block * 16, j0);
    else
      productTaskOf(plan, p2, NoProduct{}, n, false, out2, ldo2, addend2,
                    RowDecay{}, n, (block - blocks1) * 16, j0);
  }
  __syncthreads();
}

//===----------------------------------------------------------------------===//
// The state slice in registers (the scan of the kernels for bf16 products)
//===----------------------------------------------------------------------===//
//
// The DK x BV slice is split among the warps as mma accumulator fragments:
// DK / 16 row blocks of 16 rows, and `Splits` warps to a row block, each
// holding NB = BV / (8 Splits) column blocks of four floats (warp w: row
// block w % (DK / 16), columns from (w / (DK / 16)) 8 NB). The state update
// accumulates into them (S ← decay ⊙ S + Σ Aᵀ B) without a round trip
// through shared memory, and writes a bf16 copy of its rows (the shadow)
// that the products reading S take as their right operand by ldmatrix.
// Products round their operands to bf16 anyway, so the shadow changes no
// result; S itself stays float32. More warps than DK / 16 (Splits 2 or 4)
// shorten each warp's chains of mma and give each scheduler more warps to
// issue from, where one block an SM runs the scan.

template <int NB, int Splits = 1> struct RegisterState {
  static constexpr int kColumnBlocks = NB;
  /// Row blocks of 16 rows: the warps over the splits of each.
  static constexpr int kRowBlocks = kBlockThreads / 32 / Splits;
  static_assert(kRowBlocks * Splits * 32 == kBlockThreads,
                "the warps must split every row block alike");
  float acc[NB][4];

  /// This warp's first row and first column.
  __device__ static int firstRow() {
    return 16 * ((threadIdx.x / 32) % kRowBlocks);
  }
  __device__ static int firstCol() {
    return (threadIdx.x / 32) / kRowBlocks * NB * 8;
  }
  /// Row and column of element q of column block nb of this lane's fragment.
  __device__ static int row(int q) {
    return firstRow() + (threadIdx.x % 32) / 4 + (q / 2) * 8;
  }
  __device__ static int col(int nb, int q) {
    return firstCol() + nb * 8 + 2 * (threadIdx.x % 4) + q % 2;
  }
};

/// The shadow of the state's rows (bf16, rows `ld` elements apart), then a
/// barrier (unless the caller's next barrier comes first): the products
/// after it may read it.
template <int NB, int Splits>
__device__ inline void storeShadow(const RegisterState<NB, Splits> &s,
                                   __nv_bfloat16 *shadow, int ld,
                                   bool barrier = true) {
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int q = 0; q < 4; q += 2)
      *reinterpret_cast<uint32_t *>(shadow + s.row(q) * ld + s.col(nb, q)) =
          bf16x2(s.acc[nb][q], s.acc[nb][q + 1]);
  if (barrier)
    __syncthreads();
}

/// S ← decay ⊙ S + A1ᵀ B1 (+ A2ᵀ B2) with S in registers (A1, A2: k x DK,
/// the chunk's rows by the state's rows), then its shadow. The products
/// before it that read the shadow are done (a barrier ended them).
template <int NB, int Splits, typename P1, typename P2>
__device__ inline void
updateState(RegisterState<NB, Splits> &s, const P1 &p1, const P2 &p2,
            RowDecay decay, __nv_bfloat16 *shadow, int ld, bool barrier) {
  const int i0 = s.firstRow(), g = (threadIdx.x % 32) / 4;
  float acc[NB][4];
  accumulateSum<NB>(acc, p1, p2, true, i0, s.firstCol());
  const float scale[2] = {decay(i0 + g), decay(i0 + g + 8)};
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int q = 0; q < 4; ++q)
      s.acc[nb][q] = acc[nb][q] + s.acc[nb][q] * scale[q / 2];
  storeShadow(s, shadow, ld, barrier);
}

/// updateState for matmulPair's operands (both Aᵀ, inner extents Inner1
/// and Inner2, rows lda and ldb elements apart, 0: dense).
template <int Inner1, int Inner2, int NB, int Splits, typename TA1,
          typename TB1, typename TA2, typename TB2>
__device__ inline void
updateStatePair(RegisterState<NB, Splits> &s, const TA1 *a1, const TB1 *b1,
                int lda1, int ldb1, const TA2 *a2, const TB2 *b2, int lda2,
                int ldb2, int dk, RowDecay decay, __nv_bfloat16 *shadow, int ld,
                bool barrier = true) {
  updateState(s,
              Product<Inner1, TA1, TB1>{a1, b1, Inner1, lda1 ? lda1 : dk,
                                        ldb1 ? ldb1 : NB * 8 * Splits},
              Product<Inner2, TA2, TB2>{a2, b2, Inner2, lda2 ? lda2 : dk,
                                        ldb2 ? ldb2 : NB * 8 * Splits},
              decay, shadow, ld, barrier);
}
/// updateState for one product (Aᵀ B, inner extent Inner).
template <int Inner, int NB, int Splits, typename TA, typename TB>
__device__ inline void updateStateOne(RegisterState<NB, Splits> &s, const TA *a,
                                      const TB *b, int lda, int ldb, int dk,
                                      RowDecay decay, __nv_bfloat16 *shadow,
                                      int ld, bool barrier = true) {
  updateState(s,
              Product<Inner, TA, TB>{a, b, Inner, lda ? lda : dk,
                                     ldb ? ldb : NB * 8 * Splits},
              NoProduct{}, decay, shadow, ld, barrier);
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
