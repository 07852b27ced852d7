// The CUDA rkc compile prints, from the scheduled chunk-level and decode IR.
// RUN: rm -rf %t && rkc compile %rkc_src/examples/specs/eda.mlir -o %t --split-scan 0 --no-fatbin --dk 64 --dv 64 --chunk-size 16 | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=EDA --input-file=%t/eda.cu
// RUN: FileCheck %s --check-prefix=HEADER --input-file=%t/eda.h
// RUN: rkc compile %rkc_src/examples/specs/eda.mlir -o %t.strided --split-scan 0 --no-fatbin --dk 64 --dv 64 --chunk-size 16 --decode-quads 0 | FileCheck %s --check-prefix=STRIDEDLOG
// RUN: FileCheck %s --check-prefix=STRIDED --input-file=%t.strided/eda.cu
// RUN: not rkc compile %rkc_src/examples/specs/eda.mlir -o %t.strided --no-fatbin --decode-quads 2 2>&1 | FileCheck %s --check-prefix=BADQUADS
// RUN: FileCheck %s --check-prefix=LAUNCH --input-file=%t/eda_launch.c
// RUN: rkc compile %rkc_src/examples/specs/gdn.mlir -o %t --split-scan 0 --no-fatbin --dk 64 --dv 64 > /dev/null
// RUN: FileCheck %s --check-prefix=GDN --input-file=%t/gdn.cu
// RUN: rkc compile %rkc_src/examples/specs/qed.mlir -o %t.qed --no-fatbin --dk 64 --dv 64 > /dev/null
// RUN: FileCheck %s --check-prefix=QED --input-file=%t.qed/qed.cu
// RUN: rkc compile %rkc_src/examples/specs/qed.mlir -o %t.raw4 --no-fatbin --dk 64 --dv 64 --decode-raw-rows 4 | FileCheck %s --check-prefix=RAW4LOG
// RUN: FileCheck %s --check-prefix=RAW4 --input-file=%t.raw4/qed.cu
// RUN: rkc compile %rkc_src/examples/specs/qed.mlir -o %t.raw0 --no-fatbin --dk 64 --dv 64 --decode-raw-rows 0 > /dev/null
// RUN: FileCheck %s --check-prefix=RAW0 --input-file=%t.raw0/qed.cu
// RUN: not rkc compile %rkc_src/examples/specs/qed.mlir -o %t.raw2 --no-fatbin --decode-raw-rows 9 2>&1 | FileCheck %s --check-prefix=BADRAW
// RUN: rkc compile %rkc_src/examples/specs/qed.mlir -o %t.quads --no-fatbin --elementwise-quads 1 | FileCheck %s --check-prefix=QUADSLOG
// RUN: FileCheck %s --check-prefix=QUADS --input-file=%t.quads/qed.cu
// RUN: rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.pair --no-fatbin --pair-grams 1 | FileCheck %s --check-prefix=PAIRLOG
// RUN: FileCheck %s --check-prefix=PAIR --input-file=%t.pair/gdn.cu
// RUN: rkc compile %rkc_src/examples/specs/deltanet.mlir -o %t --split-scan 0 --no-fatbin --dk 64 --dv 64 --decode-blocks 0 | FileCheck %s --check-prefix=DBLOG
// RUN: FileCheck %s --check-prefix=DELTANET --input-file=%t/deltanet.cu
// RUN: not rkc compile %rkc_src/examples/specs/deltanet.mlir -o %t --no-fatbin --threads 512 --decode-blocks 5 2>&1 | FileCheck %s --check-prefix=BADBLOCKS
// RUN: not rkc compile %rkc_src/examples/specs/eda.mlir -o %t --split-scan 0 --no-fatbin --dk 96 --dv 100 2>&1 | FileCheck %s --check-prefix=BADDIM
// RUN: rkc compile %rkc_src/examples/specs/eda.mlir -o %t --split-scan 0 --no-fatbin --dk 64 --dv 64 --prefetch 1 > /dev/null
// RUN: FileCheck %s --check-prefix=PREFETCH --input-file=%t/eda.cu
// RUN: rkc compile %rkc_src/examples/specs/kda.mlir -o %t.bf16 --no-fatbin --dk 64 --dv 64 | FileCheck %s --check-prefix=BF16LOG
// RUN: FileCheck %s --check-prefix=BF16 --input-file=%t.bf16/kda.cu
// RUN: rkc compile %rkc_src/examples/specs/kda.mlir -o %t.tf32 --no-fatbin --dk 64 --dv 64 --products tf32 | FileCheck %s --check-prefix=TF32LOG
// RUN: FileCheck %s --check-prefix=TF32 --input-file=%t.tf32/kda.cu

// LOG: schedule  dk=64 dv=64 chunk=16 tokens value-tile=32 threads=256 prefetch=0 decode-blocks=auto
// LOG: wrote     eda.h, eda.cu, eda.json, rkc/runtime.h, rkc/runtime.c, rkc/tile.cuh
// LOG: wrote     eda_launch.c

// EDA's erase sub-step (slot 0) has rows for the UT system (its address,
// which is also where it reads) but no write: the key and value rows are
// slot 1's. Both sub-steps read after their decay, so the prefill loads no
// read row: the erase rows decayed by the inclusive sum stand for it.
// EDA's elementwise ops take four elements at a time, per-channel gates and
// all (one at a time only where such a gate's sub-step reads the state before
// its decay: DPLR's, Target/cuda-split.mlir).
// EDA: #define RKC_ELEMENTWISE_QUADS 1
// EDA: __device__ __forceinline__ void prefill_s0_erase_along_values(
// A row's elements are loaded with the dtype switched on once (loadRow), so
// that a lane's loads are in flight together.
// EDA: loadRow<2>(p.a.e, row_e, p.a.e.stride[3], lane, e{{[0-9]+}});
// EDA-NOT: prefill_s0_read
// EDA-NOT: prefill_s0_key
// EDA-NOT: prefill_s0_value
// Rows of one sub-step's load as stored (..._raw: 16-bit ones zero-extended),
// a batch of them before any is widened (..._from_raw), so that no row's
// loads wait for another's.
// EDA: __device__ __forceinline__ void prefill_s1_value_raw(const Params &p, int64_t row, int64_t t, int64_t hv, unsigned *raw) {
// EDA: loadRowRaw<2>(p.a.v, row_v, p.a.v.stride[3], lane, raw + 0);
// EDA: __device__ __forceinline__ void prefill_s1_value_from_raw(const Params &p, const unsigned *raw, float *out) {
// EDA-NEXT: // input "v" [B, T, HV, dv]
// EDA-NEXT: float e[[V:[0-9]+]][2];
// EDA-NEXT: for (int i = 0; i < 2; ++i)
// EDA-NEXT: e[[V]][i] = widen(p.a.v.dtype, raw[0 + i]);
// The decode kernel's rows deal a lane consecutive elements, which it loads
// as one vector where the row's layout allows, and stores likewise
// (storeRow). With two sub-steps a token, a role widens each input as it
// loads it (loadRowConsecutive); see GDN's below.
// EDA: __device__ __forceinline__ void decode_s0_read_values(
// EDA-NOT: raw
// EDA: loadRowConsecutive<2>(p.a.e, row_e, p.a.e.stride[3], lane, e{{[0-9]+}});
// EDA-NEXT: // input "g"
// EDA-NEXT: const int64_t row_g =
// EDA-NEXT: float e{{[0-9]+}}[2];
// EDA-NEXT: loadRowConsecutive<2>(p.a.g, row_g, p.a.g.stride[3], lane, e{{[0-9]+}});
// EDA-NEXT: for (int i = 0; i < 2; ++i)
// EDA-NEXT: out[i] = e{{[0-9]+}}[i] * __expf(e{{[0-9]+}}[i]);
// EDA: template <bool TensorCores>
// EDA-NEXT: __device__ __forceinline__ void prefill(const Params &p) {
// EDA: for (int64_t t0 = tBegin; t0 < tEnd; t0 += C) {
// EDA-NOT: prefetchRows(p.a
// A warp loads all its rows (a row past the sequence's end at its last
// token), then stores them (zeros past the end): no load waits behind a
// branch or a store.
// EDA: // %{{[0-9]+}} = rec.chunk.rows value {{.*}} : !rec.tile<chunk[1], value>
// EDA: for (int r0 = 0; r0 < R; r0 += 2) {
// EDA-NEXT: unsigned raw[2][2];
// EDA: const int64_t t = min(t0 + i, eos - 1);
// EDA-NEXT: prefill_s1_value_raw(p, row, t, hv, raw[r - r0]);
// EDA: prefill_s1_value_from_raw(p, raw[r - r0], values[r]);
// EDA: const bool live = t0 + i / 1 < eos;
// EDA: dst[d - v0] = (live ? values[r][c] : 0.f);
// EDA: rkc::tile::utInverse(
// Two instantiations: float32 products, and TF32 tensor cores for 16-bit outputs.
// EDA: rkc_eda_prefill_kernel(const Params p) {
// EDA-NEXT: prefill<false>(p);
// EDA: rkc_eda_prefill_kernel_tc(const Params p) {
// EDA-NEXT: prefill<true>(p);
// The decode kernel keeps its state slice in registers; its registers leave
// room for RKC_DECODE_BLOCKS blocks an SM (by default as many as 48
// registers a thread allow: 5 of 256 threads). Both sub-steps' row vectors load
// before the first runs (one barrier): eleven roles, eight distinct rows (the
// delta sub-step's k erases along, reads and writes; its β is both strengths),
// one a warp, the gate's exponential taken in registers. Each sum over the key
// axis takes one barrier, its partial sums alternating between two buffers.
// The erase sub-step reads
// bᵀS and writes nothing, the delta sub-step reads and writes, and the
// read qᵀS comes after it.
// With two sub-steps a token the vectors are padded to four floats (every
// one 16-byte aligned) and a thread's rows come in fours where they fill DK.
// A row's test against DK folds away where the threads' rows fill it.
// EDA: __device__ __forceinline__ bool inState(int d) {
// EDA-NEXT: return ROWS * GROUPS == DK || d < DK;
// EDA: constexpr int VECTORS = (5 * DK + BV + 2 + 3) / 4 * 4;
// EDA: constexpr int QUAD = ROWS % 4 == 0 && ROWS * GROUPS == DK ? 4 : 1;
// EDA: #define RKC_DECODE_BLOCKS 5
// EDA: #define RKC_DECODE_BOUNDS __launch_bounds__(THREADS, RKC_DECODE_BLOCKS)
// EDA: extern "C" __global__ void RKC_DECODE_BOUNDS
// EDA-NEXT: rkc_eda_decode_kernel(const Params p) {
// The final state's offset is read back from shared memory, not held in a
// register across the tokens.
// EDA: __shared__ int64_t stateBase[THREADS / 32];
// EDA-NEXT: if (lane == 0)
// EDA-NEXT: stateBase[warp] = base - c;
// EDA-NEXT: __syncwarp();
// EDA-NEXT: float s[ROWS];
// EDA-NEXT: #pragma unroll
// EDA-NEXT: for (int i = 0; i < ROWS; ++i) {
// EDA-NEXT: const int d = group * ROWS + i;
// EDA-NEXT: s[i] = p.a.initial_state && inState(d) ? p.a.initial_state[base + d * DV] : 0.f;
// The roles' row offsets come from opaque copies of the row and head, so
// that ptxas computes them where they load rather than holding them across
// the tokens (and spilling them).
// EDA: int64_t rowT = row, hvT = hv;
// EDA-NEXT: asm volatile("" : "+l"(rowT), "+l"(hvT));
// EDA: if (warp == 0) {
// EDA-NEXT: float r0[2];
// EDA-NEXT: decode_s0_gate_values(p, rowT, t, hvT, r0);
// EDA-NEXT: for (int c = 0; c < 2; ++c)
// EDA-NEXT: r0[c] = __expf(r0[c]);
// EDA-NEXT: {
// EDA-NEXT: float *const dst = gate0;
// EDA-NEXT: storeRow<2>(dst, threadIdx.x % 32, r0, true);
// EDA: if (warp == 4) {
// EDA-NEXT: float r4[2];
// EDA-NEXT: decode_s1_erase_along_values(p, rowT, t, hvT, r4);
// EDA-NEXT: {
// EDA-NEXT: float *const dst = along1;
// EDA: float *const dst = at1;
// EDA: float *const dst = key1;
// EDA: if (warp == 5) {
// EDA-NEXT: float r5[1];
// EDA-NEXT: decode_s1_strength_values(p, rowT, t, hvT, r5);
// EDA: float *const dst = strengths1;
// EDA: float *const dst = strengths1 + 1;
// The value row keeps the block's columns [v0, v0 + BV).
// EDA: if (warp == 6) {
// EDA: float *const dst = value1;
// EDA-NEXT: storeRowColumns<2>(dst, threadIdx.x % 32, r6, true, v0, BV);
// EDA: if (warp == 7) {
// EDA-NEXT: float r7[2];
// EDA-NEXT: decode_s1_query_values(p, rowT, t, hvT, r7);
// EDA-NOT: if (warp ==
// With -DRKC_PROFILE_DECODE, clock stamps around the barrier after the row
// loads (no code without it).
// EDA: RKC_DECODE_STAMP(1);
// EDA-NEXT: __syncthreads();
// EDA-NEXT: RKC_DECODE_STAMP(2);
// EDA-NEXT: // Sub-step 0: S ← Diag(exp g) S - α x (bᵀS) + κ k vᵀ
// EDA-NEXT: const float u0 = columnSum(s, at0, partials + (sums++ & 1u) * THREADS, group, c);
// EDA-NOT: __syncthreads
// With two sub-steps a token, a thread's rows are consecutive (decode
// quads): the erase sub-step's gate and erase direction load four rows at a
// time, and the delta sub-step's erase direction and key.
// EDA-NEXT: #pragma unroll
// EDA-NEXT: for (int j = 0; j < ROWS; j += QUAD) {
// EDA-NEXT: float gate[QUAD];
// EDA-NEXT: rowsOf(gate0, group, j, gate);
// EDA-NEXT: float along[QUAD];
// EDA-NEXT: rowsOf(along0, group, j, along);
// EDA-NEXT: #pragma unroll
// EDA-NEXT: for (int e = 0; e < QUAD; ++e) {
// EDA-NEXT: s[j + e] *= gate[e];
// EDA-NEXT: s[j + e] -= strengths0[0] * along[e] * u0;
// EDA-NEXT: }
// EDA-NOT: strengths0[1]
// EDA: // Sub-step 1:
// EDA-NEXT: const float u1 = columnSum(s, at1, partials + (sums++ & 1u) * THREADS, group, c);
// EDA-NOT: __syncthreads
// EDA: rowsOf(key1, group, j, key);
// EDA: s[j + e] += strengths1[1] * key[e] * value1[c];
// EDA: const float o = columnSum(s, query1, partials + (sums++ & 1u) * THREADS, group, c);
// EDA-NEXT: if (group == 0) {
// EDA-NEXT: int64_t rowO = row, hvO = hv; // opaque, as rowT
// EDA-NEXT: asm volatile("" : "+l"(rowO), "+l"(hvO));
// EDA-NEXT: store(p.a.o, rowO * p.a.o.stride[0] + t * p.a.o.stride[1] + hvO * p.a.o.stride[2] + (v0 + threadAgain() % BV) * p.a.o.stride[3], o);
// The next token's row loads wait for every thread's reads of this one's;
// after the last token nothing waits.
// EDA: RKC_DECODE_STAMP(3);
// EDA-NEXT: if (t + 1 < eos)
// EDA-NEXT: __syncthreads();
// EDA-NEXT: }
// EDA: const int tid = threadAgain(), c = tid % BV, group = tid / BV;
// EDA: const int d = group * ROWS + i;
// EDA: p.a.final_state[stateBase[tid / 32] + c + d * DV] = s[i];

// --decode-quads 0: rows group + GROUPS * i, each vector's element loaded
// alone (the default where a token has one sub-step).
// STRIDED: constexpr int VECTORS = 5 * DK + BV + 2;
// STRIDED-NOT: QUAD
// STRIDED: const int d = group + GROUPS * i;
// STRIDED-NEXT: if (inState(d))
// STRIDED-NEXT: part += w[d] * s[i];
// STRIDED: float s[ROWS];
// STRIDED-NEXT: #pragma unroll
// STRIDED-NEXT: for (int i = 0; i < ROWS; ++i) {
// STRIDED-NEXT: const int d = group + GROUPS * i;
// STRIDED-NEXT: s[i] = p.a.initial_state && inState(d) ? p.a.initial_state[base + d * DV] : 0.f;
// STRIDED: s[i] *= gate0[d];
// STRIDED-NEXT: s[i] -= strengths0[0] * along0[d] * u0;
// STRIDED: s[i] += strengths1[1] * key1[d] * value1[c];
// STRIDED: const int d = group + GROUPS * i;
// STRIDED-NEXT: if (inState(d))
// STRIDED-NEXT: p.a.final_state[stateBase[tid / 32] + c + d * DV] = s[i];

// STRIDEDLOG: decode-blocks=auto decode-quads=0 products=bf16
// BADQUADS: rkc compile: error: @eda: rec-schedule: decode-quads (2) must be -1, 0 or 1

// HEADER: typedef struct rkc_eda_args {
// HEADER-NEXT: rkc_tensor q; /* [B, T, H, dk] */
// HEADER: rkc_tensor gamma; /* [B, T, H] */
// HEADER: rkc_status rkc_eda_fwd(CUstream stream, const rkc_eda_args *args);
// HEADER: rkc_status rkc_eda_decode(CUstream stream, const rkc_eda_args *args);

// LAUNCH: Written without a fatbin: launches return RKC_ERROR_NO_KERNELS.
// LAUNCH: static rkc_status rkc_eda_prepare(
// LAUNCH: rkc_check_tensor("gamma", &a->gamma, 3, shape, floats)
// LAUNCH: return rkc_launch(&rkc_eda_module, params.a.o.dtype == RKC_F32 ? "rkc_eda_prefill_kernel" : "rkc_eda_prefill_kernel_tc", grid, block,
// LAUNCH: return rkc_launch(&rkc_eda_module, "rkc_eda_decode_kernel", grid, block,

// GDN: #define RKC_ELEMENTWISE_QUADS 1
// Every gate a scalar and a sub-step that erases: the prep's rows take an
// input's head by one merged call (linear attention's and the per-channel
// specs' keep the branch, BF16 below).
// GDN: #ifndef RKC_PREFILL_HEAD_ONCE // {{.*}}: every gate a scalar, and a sub-step erases
// GDN-NEXT: #define RKC_PREFILL_HEAD_ONCE 1
// --elementwise-quads 1 asks for them with per-channel gates too.
// QUADSLOG: decode-quads=auto elementwise-quads=1 products=bf16
// QUADS: #ifndef RKC_ELEMENTWISE_QUADS // elementwise ops four elements at a time: --elementwise-quads
// QUADS-NEXT: #define RKC_ELEMENTWISE_QUADS 1
// --pair-grams 1: the prep's two Grams as one step, every argument of
// each spelled out, the second's op left with a note.
// PAIRLOG: pair-grams=1
// PAIR: rec.chunk.gram %[[Q:[0-9]+]], %[[K:[0-9]+]] {{.*}}rec.gram_with_next
// PAIR: rkc::tile::gramsTogether<TensorCores, 128, 128>(
// PAIR-NEXT: {tile[[Q]], {32, 1, 1, {0}}, tile[[K]], {32, 1, 1, {0}}, 128, {{.*}}, false, tile{{[0-9]+}}, /*swizzled=*/{{[0-3]}}, false},
// PAIR-NEXT: {tile[[K]], {32, 1, 1, {0}}, tile[[K]], {32, 1, 1, {0}}, 128, {{.*}}, true, tile{{[0-9]+}}, /*swizzled=*/{{[0-3]}}, false});
// PAIR: rec.chunk.gram %[[K]], %[[K]]
// PAIR-NEXT: // (computed with the Gram above)
// GDN's gate is a scalar: Gram products weigh a pair of rows by one exp
// (one decay column), and the decode kernel's decayed read vector
// multiplies by a scalar.
// One sub-step a token: a decode role of at most two rows loads every input
// as stored before it widens any, so that no load waits for another's.
// GDN: __device__ __forceinline__ void decode_s0_read_values(
// GDN: unsigned raw[3]; // the inputs as stored
// GDN-NEXT: // input "k"
// GDN-NEXT: const int64_t row_k =
// GDN-NEXT: loadRowRawConsecutive<2>(p.a.k, row_k, p.a.k.stride[3], lane, raw + 0);
// GDN-NEXT: // input "g"
// GDN-NEXT: const int64_t row_g =
// GDN-NEXT: raw[2] = loadRaw(p.a.g, row_g);
// GDN-NEXT: // input "k"
// GDN-NEXT: float e{{[0-9]+}}[2];
// GDN-NEXT: for (int i = 0; i < 2; ++i)
// GDN-NEXT: e{{[0-9]+}}[i] = widenPacked(p.a.k.dtype, raw + 0, i);
// GDN: out[i] = e{{[0-9]+}}[i] * __expf(e{{[0-9]+}});
// QED has one sub-step a token and a read role of four rows (b, k, q, g): only
// its role of two rows (the value role, w ⊙ v) loads first.
// QED: __device__ __forceinline__ void decode_s0_gate_values(
// QED-NOT: unsigned raw[
// QED: __device__ __forceinline__ void decode_s0_read_values(
// QED-NOT: unsigned raw[
// QED: loadRowConsecutive<2>(p.a.b,
// QED: loadRowConsecutive<2>(p.a.k,
// QED: loadRowConsecutive<2>(p.a.q,
// QED: loadRowConsecutive<2>(p.a.g,
// QED-NOT: unsigned raw[
// QED: __device__ __forceinline__ void decode_s0_value_values(
// QED: unsigned raw[{{[0-9]+}}]; // the inputs as stored
// QED: __global__
// --decode-raw-rows 4: the roles of two to four rows load first, QED's read
// role of four rows (b, k, q, g) too, unlike the default; its one-row roles
// widen as they load.
// RAW4LOG: decode-quads=auto decode-raw-rows=4
// RAW4: __device__ __forceinline__ void decode_s0_gate_values(
// RAW4-NOT: unsigned raw[
// RAW4: __device__ __forceinline__ void decode_s0_read_values(
// RAW4-NEXT: const int lane
// RAW4-NEXT: const int j
// RAW4-NEXT: (void)j;
// RAW4-NEXT: unsigned raw[{{[0-9]+}}]; // the inputs as stored
// RAW4: __device__ __forceinline__ void decode_s0_value_values(
// RAW4-NEXT: const int lane
// RAW4-NEXT: const int j
// RAW4-NEXT: (void)j;
// RAW4-NEXT: unsigned raw[{{[0-9]+}}]; // the inputs as stored
// RAW4: __device__ __forceinline__ void decode_s0_query_values(
// RAW4-NOT: unsigned raw[
// RAW4: __global__
// --decode-raw-rows 0: no role loads first, not even QED's value role.
// RAW0: __device__ __forceinline__ void decode_s0_gate_values(
// RAW0-NOT: unsigned raw[
// RAW0: __global__
// BADRAW: rkc compile: error: @qed: rec-schedule: decode-raw-rows (9) must be -1 or from 0 to 8
// GDN: rkc::tile::cumsum({{.*}}, 1, L, false,
// A scalar decay's Gram weighs by exact exponentials: no bound to pass.
// GDN: rkc::tile::gram<TensorCores, 64>({{.*}}, 64, tile{{[0-9]+}}, tile{{[0-9]+}}, 1, true, tile{{[0-9]+}}{{(, /\*swizzled=\*/[0-3])?}});
// GDN-NOT: __expf(e{{[0-9]+}}[i])

// --decode-blocks 0 leaves the decode kernel's registers to ptxas; more
// blocks of 512 threads than an SM holds are an error.
// DBLOG: threads=256 prefetch=0 decode-blocks=0 decode-quads=auto products=bf16
// BADBLOCKS: error: @deltanet: rec-schedule: decode-blocks (5) must be -1, 0 or a number of blocks of 512 threads an SM holds (2048 threads)

// DeltaNet has no decay: no exponential anywhere in its kernels. Its k is
// erase direction, read and key of the decode: one row function loads it
// (no unused functions for nvcc to warn of).
// DELTANET-NOT: expf
// DELTANET-NOT: decode_s0_read_values
// DELTANET-NOT: decode_s0_key_values
// DELTANET-NOT: decode_s0_write_strength_values
// DELTANET: rkc::tile::gram<TensorCores, 64>({{.*}}, nullptr, nullptr, 1, true,
// DELTANET-NOT: expf
// DELTANET: #define RKC_DECODE_BLOCKS 0

// BADDIM: error: @eda: rec-schedule: dk = 96 and dv = 100 must be multiples of 32 from 32 to 256

// With --prefetch 1 the next chunk's rows of every per-token input are
// fetched into L2 at the start of a chunk.
// PREFETCH: for (int64_t t0 = tBegin; t0 < tEnd; t0 += C) {
// PREFETCH-NEXT: if (t0 + C < tEnd) {
// PREFETCH: prefetchRows(p.a.q, row, next, tokens, 1, hv, p.value_heads, DK);
// PREFETCH: prefetchRows(p.a.gamma, row, next, tokens, 1, hv, p.value_heads, 1);
// PREFETCH: rec.chunk.rows

// The kernels' tensor-core products take bf16 operands by default (tile.cuh's
// m16n8k16 path); --products tf32 defines nothing (m16n8k8).
// BF16LOG: schedule {{.*}} products=bf16
// TF32LOG: schedule {{.*}} products=tf32
// The tile library's loops and product plans take the block's threads as a
// compile-time constant.
// BF16: #define RKC_BF16_PRODUCTS 1
// BF16-NEXT: #define RKC_BLOCK_THREADS 256
// BF16-NEXT: #ifndef RKC_ELEMENTWISE_QUADS
// BF16-NEXT: #define RKC_ELEMENTWISE_QUADS 1
// BF16-NEXT: #endif
// BF16-NEXT: #ifndef RKC_PREFILL_HEAD_ONCE
// BF16-NEXT: #define RKC_PREFILL_HEAD_ONCE 0
// BF16-NEXT: #endif
// BF16-NEXT: #include "rkc/tile.cuh"
// TF32-NOT: RKC_BF16_PRODUCTS
// TF32: #define RKC_BLOCK_THREADS 256
