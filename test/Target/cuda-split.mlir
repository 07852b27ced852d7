// rkc compile --split-scan 1: a prep kernel runs the state-free ops of every
// chunk at once and writes what the scan reads to a per-chunk workspace; the
// prefill kernel is the scan, which reads those values back where their ops
// stood; the launcher allocates the workspace on the stream.
// RUN: rm -rf %t && rkc compile %rkc_src/examples/specs/kda.mlir -o %t --no-fatbin --dk 64 --dv 64 --chunk-size 16 --split-scan 1 > /dev/null
// RUN: FileCheck %s --input-file=%t/kda.cu
// RUN: FileCheck %s --check-prefix=LAUNCH --input-file=%t/kda_launch.c
// RUN: FileCheck %s --check-prefix=PREPGRID --input-file=%t/kda.cu
// RUN: FileCheck %s --check-prefix=HEADS --input-file=%t/kda.cu
// RUN: rm -rf %t.gdn && rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.gdn --no-fatbin --dk 128 --dv 128 --split-scan 1 --chunk-size 64 --value-tile 64 > /dev/null
// RUN: FileCheck %s --check-prefix=UNSTAGED --input-file=%t.gdn/gdn.cu
// RUN: rm -rf %t.gdn2 && rkc compile %rkc_src/examples/specs/gdn2.mlir -o %t.gdn2 --no-fatbin --dk 128 --dv 128 --chunk-size 64 --value-tile 64 > /dev/null
// RUN: FileCheck %s --check-prefix=PREPORDER --input-file=%t.gdn2/gdn2.cu
// RUN: rm -rf %t.gdn64 && rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.gdn64 --no-fatbin --dk 128 --dv 128 --chunk-size 64 | FileCheck %s --check-prefix=ONESTAGELOG
// RUN: FileCheck %s --check-prefix=ONESTAGE --input-file=%t.gdn64/gdn.cu
// RUN: rm -rf %t.gdn32 && rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.gdn32 --no-fatbin --dk 128 --dv 128 | FileCheck %s --check-prefix=GDNCHUNK
// RUN: FileCheck %s --check-prefix=GDNSTAGED --input-file=%t.gdn32/gdn.cu
// RUN: rkc compile %rkc_src/examples/specs/deltanet.mlir -o %t.dn --no-fatbin --dk 128 --dv 128 | FileCheck %s --check-prefix=AUTOCHUNK
// RUN: rkc compile %rkc_src/examples/specs/deltanet.mlir -o %t.dn64 --no-fatbin --dk 128 --dv 128 --chunk-size 64 | FileCheck %s --check-prefix=ASKED
// RUN: rm -rf %t.dplr && rkc compile %rkc_src/examples/specs/dplr.mlir -o %t.dplr --no-fatbin > /dev/null
// RUN: FileCheck %s --check-prefix=SHIFTED --input-file=%t.dplr/dplr.cu

// The automatic chunk of the split kernels is the largest whose scan stages
// its workspace in two buffers in both kernels (DeltaNet: 64 stages only in
// one float32 buffer, 32 in two); a chunk asked for is taken staged or not.
// AUTOCHUNK: schedule  dk=128 dv=128 chunk=32 tokens
// ASKED: schedule  dk=128 dv=128 chunk=64 tokens

// GDN's scalar gate crosses as one float (its last row), staged in a 16-byte
// piece like the workspace's: GDN stages at chunk 32. In the 16-bit layouts
// every value starts at a multiple of 128 bytes, the next tile too.
// GDNCHUNK: schedule  dk=128 dv=128 chunk=32 tokens
// GDNSTAGED: { // tile{{[0-9]+}}: !rec.tile<chunk, one> (float)
// GDNSTAGED: rkc::tile::stageRows<(1 + P - 1) / P, P, P, P>(to, from); // one run
// GDNSTAGED-NEXT: }
// GDNSTAGED-NEXT: { // tile{{[0-9]+}}: !rec.tile<chunk, {{key|value}}> (Crossing<TensorCores>)
// GDNSTAGED: reinterpret_cast<Crossing<TensorCores> *>(stage + (TensorCores ? 128 : 16));

// GDN at chunk 64 reads the workspace where the prep ops stood (no staging):
// the addend U0 arrives after the product W S, which therefore cannot add it.
// At chunk 64 and value tile 64 the scan cannot stage what crosses and
// keeps the chunk algorithm's order; the prep kernel is written in the
// order its shared memory was planned in (rec.prep_order): GDN-2's query
// rows and their decay first, then the erase rows.
// PREPORDER: __device__ __forceinline__ void prep(const Params &p) {
// PREPORDER: rec.chunk.rows query {rec.phase = "prep", rec.prep_order = 0 : i64
// PREPORDER: rec.chunk.rows gate {rec.phase = "prep", rec.prep_order = 1 : i64
// PREPORDER: rec.chunk.cumsum {{.*}}rec.prep_order = 2 : i64
// PREPORDER: rec.chunk.decay_rows {{.*}}rec.prep_order = 3 : i64
// PREPORDER: rec.chunk.rows erase_along {rec.phase = "prep", rec.prep_order = 4 : i64
// UNSTAGED: rkc::tile::matmul<TensorCores, 128>(tile{{[0-9]+}}, S, 64, 128, 64, false, [[WS:tile[0-9]+]], 0, SLD);
// UNSTAGED: { // from the prep kernel: [[U0:tile[0-9]+]]
// UNSTAGED: rkc::tile::add([[WS]], [[U0]], 4096, tile{{[0-9]+}});
// At chunk 64 and value tile 32, two staging buffers fit in the kernel for
// 16-bit outputs (their 16-bit layout) and one in the float32 kernel: that
// one stages a chunk at a time, the next chunk's copies issued once every
// thread is done with this chunk's.
// ONESTAGELOG: prefill 200720 B (180480 B for 16-bit outputs)
// ONESTAGE: constexpr int STAGE_FLOATS = 34820, STAGE_AT = 15360;
// ONESTAGE: template <bool TensorCores> constexpr bool kTwoStages = TensorCores;
// ONESTAGE: unsigned char *const stage = stages + (kTwoStages<TensorCores> ? (n % 2) * STAGE_BYTES : 0);
// ONESTAGE: if (kTwoStages<TensorCores> && t0 + C < tEnd)
// ONESTAGE: if constexpr (!kTwoStages<TensorCores>) {
// ONESTAGE-NEXT: __syncthreads();
// ONESTAGE-NEXT: if (t0 + C < tEnd)
// ONESTAGE-NEXT: stageChunk<TensorCores>(stages, wsNext += wsStep, v0, p, row, t0 + C, eos, hv);
// ONESTAGE: rkc::tile::copyAsyncCommit();
// ONESTAGE-NEXT: }
// ONESTAGE-NEXT: }

// 64 (G's last row) + 5 x 16 x 64 (V, W, U0, Q, K) + 16 x 16
// (A_qa): the value rows the scan reads cross too (keep-rows), so the scan
// loads no input.
// CHECK: constexpr int SLD = 40;
// CHECK: constexpr int64_t WS_FLOATS = 5440;
// For 16-bit outputs what the scan only multiplies or adds is bf16 (G's last
// row stays float32): 64 x 4 + 5 x 16 x 64 x 2 + 16 x 16 x 2 bytes.
// CHECK: constexpr int64_t WS_HALF_BYTES = 11008;
// The value rows are v's rows as they are: where v is bf16, dense and
// aligned (p.rows_from_inputs, the launcher's test), the scan stages them
// from v itself, and the workspace, which keeps them last, is allocated
// without them: 11008 - 16 x 64 x 2 bytes.
// CHECK: constexpr int64_t WS_HALF_LEAN_BYTES = 8960; // without the raw input rows (p.rows_from_inputs)
// CHECK: template <> struct CrossingType<true> { using type = __nv_bfloat16; };
// CHECK: return static_cast<unsigned char *>(p.workspace) + (slot * p.value_heads + hv) *
// CHECK-NEXT: (!TensorCores ? WS_FLOATS * 4 : p.rows_from_inputs ? WS_HALF_LEAN_BYTES : WS_HALF_BYTES);
// The scan stages what crosses in two buffers after its own tiles: one
// buffer holds G's last row, the key-side tiles whole (the three that only
// products read as their left operand with rows of 64 + 8 floats, so that
// fragment loads meet no bank conflicts) and the value-side ones by the value
// tile's 32 columns: 64 + 3 x 16 x 72 + 2 x 16 x 32 + 16 x 16. For the
// kernels for 16-bit outputs, the value rows that products alone read (as
// their right operand) are 32 + 8 elements apart (no ldmatrix bank
// conflicts): 9728 bytes dense, 256 more.
// CHECK: constexpr int STAGE_FLOATS = 4800, STAGE_AT = [[AT:[0-9]+]];
// CHECK: constexpr int STAGE_HALF_BYTES = 9984;
// CHECK: void stageChunk(unsigned char *stage, unsigned char *ws, int64_t v0,
// CHECK-NEXT: const Params &p, int64_t row, int64_t t0,
// CHECK-NEXT: int64_t eos, int64_t hv) {
// CHECK: { // tile{{[0-9]+}}: !rec.tile<chunk, key> (float)
// CHECK: float *const to = reinterpret_cast<float *>(stage + (TensorCores ? 0 : 0));
// Every staging copy is rkc::tile::stageRows, its extents template
// arguments: the passes of the block's threads unroll.
// CHECK: rkc::tile::stageRows<(64 + P - 1) / P, P, P, P>(to, from); // one run
// A key-side tile that products alone read as their left operand is staged
// swizzled in the kernels for 16-bit outputs (KeyStage: dense rows, KLD
// elements apart), with rows 8 floats longer than dense in the others.
// CHECK: { // tile{{[0-9]+}}: !rec.tile<chunk, key> (KeyStage<TensorCores>)
// CHECK-NEXT: {{\[\[maybe_unused\]\]}} constexpr int P = 16 / sizeof(KeyStage<TensorCores>); // elements a 16-byte piece
// CHECK-NEXT: KeyStage<TensorCores> *const to = reinterpret_cast<KeyStage<TensorCores> *>(stage + (TensorCores ? 256 : 256));
// CHECK-NEXT: const Crossing<TensorCores> *const from = reinterpret_cast<const Crossing<TensorCores> *>(ws + (TensorCores ? 256 : 256));
// CHECK-NEXT: rkc::tile::stageRows<16, 64, KLD<TensorCores, 64>, 64>(to, from); // swizzled rows (KeyStage) or rows 72 elements apart
// CHECK: if (TensorCores && p.rows_from_inputs) { // input "v" as it is
// CHECK-NEXT: const __nv_bfloat16 *const x = static_cast<const __nv_bfloat16 *>(p.a.v.data);
// CHECK-NEXT: constexpr int N = 16 * BV, STEP = THREADS * P;
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT: for (int k = 0; k < (N + STEP - 1) / STEP; ++k) {
// CHECK-NEXT: const int e = threadIdx.x * P + k * STEP;
// CHECK-NEXT: if (N % STEP && e >= N)
// CHECK-NEXT: break;
// CHECK-NEXT: const int i = e / BV, c = e % BV;
// CHECK-NEXT: const int64_t t = t0 + i / 1;
// CHECK-NEXT: Crossing<TensorCores> *const dst = to + i * VLD<TensorCores> + c;
// CHECK-NEXT: const int j = 0;
// CHECK-NEXT: if (t < eos)
// CHECK-NEXT: rkc::tile::copyAsync16(dst, x + inputRow(p.a.v, 2, row, t, 1, j, hv, p.value_heads) + v0 + c);
// CHECK-NEXT: else
// CHECK-NEXT: *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
// CHECK-NEXT: }
// CHECK-NEXT: } else {
// CHECK-NEXT: const Crossing<TensorCores> *const from = reinterpret_cast<const Crossing<TensorCores> *>(ws + (TensorCores ? 8960 : {{[0-9]+}}));
// CHECK-NEXT: rkc::tile::stageRows<16, BV, VLD<TensorCores>, DV>(to, from + v0); // rows VLD elements apart
// CHECK-NEXT: }
// The chunk's output rows are the sink of a product's stores, from the
// block's base offset in o (computed once, before the chunks).
// CHECK: struct OutputRows {
// CHECK: static __device__ bool pairsFit(const Params &p) {
// CHECK-NEXT: return p.a.o.dtype == RKC_BF16 && p.a.o.stride[3] == 1 && p.a.o.stride[0] % 2 == 0 &&
// CHECK: const int64_t t = t0 + i / 1;
// CHECK-NEXT: if (t < eos)
// CHECK-NEXT: store(p.a.o, base + t * p.a.o.stride[1] + j * p.a.o.stride[3], x);
// Two adjacent columns at once: one 4-byte store where o's layout allows
// (pairsFit, decided once), else two stores.
// CHECK: __device__ void operator()(int i, int j, float x0, float x1) const {
// CHECK: if (pairs) {
// CHECK-NEXT: *reinterpret_cast<uint32_t *>(static_cast<__nv_bfloat16 *>(const_cast<void *>(p.a.o.data)) + at) =
// CHECK-NEXT: rkc::tile::bf16x2(x0, x1);
// CHECK-NEXT: } else {
// CHECK-NEXT: store(p.a.o, at, x0);
// CHECK-NEXT: store(p.a.o, at + p.a.o.stride[3], x1);
// CHECK: __device__ __forceinline__ void prefill(const Params &p) {
// CHECK: const int64_t oBase = row * p.a.o.stride[0] + hv * p.a.o.stride[2] + v0 * p.a.o.stride[3];
// CHECK-NEXT: const bool oPairs = OutputRows::pairsFit(p);
// The state slice's rows are 32 + 8 floats apart (no bank conflicts in the
// products that read S); the sum W S + U is computed by its product, which
// then has no tile of its own (nor has the last sum, stored into S). Only
// products read that sum (U): it is stored as their operand (16 bits where
// they take bf16 operands).
// CHECK: S[(e / BV) * SLD + e % BV] = entering ? entering[(enteringRow + e / BV) * DV + v0 + e % BV]
// Its place is a multiple of 16 bytes, and the kernel says so (the products
// then need no path for rows that are not 16-byte aligned).
// CHECK: rkc::tile::Operand<TensorCores> *const [[U:tile[0-9]+]] = static_cast<rkc::tile::Operand<TensorCores> *>(__builtin_assume_aligned(smem + {{[0-9]+}}, 16)); // !rec.tile<chunk, value>, only bf16 products read it
// The kernel for 16-bit outputs starts its staging buffers right after the
// state's bf16 shadow and the tiles it names (U's Operand tile and the last
// one, 16 rows of 40 floats from 3072), not after the float32 plan's room
// for the tiles its products fuse away.
// CHECK: // (The kernel for 16-bit outputs: its buffers right after the state and the tiles above.)
// CHECK-NEXT: unsigned char *const stages = reinterpret_cast<unsigned char *>(smem + (TensorCores ? 3712 : STAGE_AT));
// CHECK-NEXT: constexpr int STAGE_BYTES = TensorCores ? STAGE_HALF_BYTES : STAGE_FLOATS * 4;
// The next chunk's workspace is carried from chunk to chunk (one chunk slot
// of every value head further), not computed again from the chunk index.
// CHECK: unsigned char *wsNext = chunkWorkspace<TensorCores>(p, seq, tBegin, hv);
// CHECK-NEXT: const int64_t wsStep = chunkWorkspace<TensorCores>(p, seq, tBegin + C, hv) - wsNext;
// CHECK-NEXT: if (tBegin < tEnd)
// CHECK-NEXT: stageChunk<TensorCores>(stages, wsNext, v0, p, row, tBegin, eos, hv);
// CHECK-NEXT: rkc::tile::copyAsyncCommit();
// Chunk n's buffer is complete (this thread's copies, then everyone's) before
// the next chunk's copies start into the other one.
// CHECK: unsigned char *const stage = stages + (n % 2) * STAGE_BYTES;
// CHECK-NEXT: rkc::tile::copyAsyncWait<0>();
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: if (t0 + C < tEnd)
// CHECK-NEXT: stageChunk<TensorCores>(stages + ((n + 1) % 2) * STAGE_BYTES, wsNext += wsStep, v0,
// CHECK-NEXT: p, row, t0 + C, eos, hv);
// G's last row is read as row 15 of its tile.
// CHECK: const float *const [[G:tile[0-9]+]] = reinterpret_cast<const float *>(stage + (TensorCores ? 0 : 0)) - 960;
// The other crossing values come staged too, the value rows with them: the
// scan loads no input row. Each starts at a multiple of 16 bytes (G, at its
// last row, is not said to).
// CHECK-COUNT-2: const KeyStage<TensorCores> *const tile{{[0-9]+}} = static_cast<const KeyStage<TensorCores> *>(__builtin_assume_aligned(stage + (TensorCores ? {{[0-9]+}} : {{[0-9]+}}), 16));
// CHECK-COUNT-2: const Crossing<TensorCores> *const tile{{[0-9]+}} = static_cast<const Crossing<TensorCores> *>(__builtin_assume_aligned(stage + (TensorCores ? {{[0-9]+}} : {{[0-9]+}}), 16));
// CHECK-NEXT: const KeyStage<TensorCores> *const tile{{[0-9]+}} = static_cast<const KeyStage<TensorCores> *>(__builtin_assume_aligned(stage + (TensorCores ? {{[0-9]+}} : {{[0-9]+}}), 16));
// CHECK-NEXT: const Crossing<TensorCores> *const tile{{[0-9]+}} = static_cast<const Crossing<TensorCores> *>(__builtin_assume_aligned(stage + (TensorCores ? {{[0-9]+}} : {{[0-9]+}}), 16));
// CHECK-NOT: prefill_s0_value(
// The inner extent is a template argument: the product's loops unroll. The
// sum after it (its only reader, the staged addend there from the start) is
// added as the product stores, into the sum's place. The next product reads
// S too (Q S): the two are one pass over the warps, one barrier.
// CHECK: // with the product below, of the same right operand B: [[U]] = A B + [[U0:tile[0-9]+]], [[QS:tile[0-9]+]] = A B
// W S + U is stored in 16 bits (only products read it) with padded rows,
// Q S in float32 rows of 40 (pad-addend-rows).
// Both read the state's bf16 shadow in the kernel for bf16 products (dk 64:
// four row blocks of the slice, two warps to each), S in the float32 one.
// CHECK-NEXT: rkc::tile::matmulSharedRight<TensorCores, 64>(tile{{[0-9]+}}, KLD<TensorCores, 64>, 16, [[U]], VLD<TensorCores>, [[U0]], tile{{[0-9]+}}, KLD<TensorCores, 64>, 16, [[QS]], 40, static_cast<const float *>(nullptr), S16, SLD, 32);
// CHECK: rkc::tile::matmulSharedRight<TensorCores, 64>(tile{{[0-9]+}}, KLD<TensorCores, 64>, 16, [[U]], VLD<TensorCores>, [[U0]], tile{{[0-9]+}}, KLD<TensorCores, 64>, 16, [[QS]], 40, static_cast<const float *>(nullptr), S, SLD, 32);
// CHECK: rec.chunk.add
// CHECK-NEXT: // (computed by the product above)
// CHECK: rec.chunk.matmul
// CHECK-NEXT: // (computed with the product above (the same right operand))
// CHECK-NOT: from the prep kernel
// CHECK-NOT: rec.chunk.gram
// The output's two products share their left operand (a delta factor's
// A_qk is A_qa, and the scan computes A_qa V itself from the staged A_qa
// and V): one pass, A_qa U' + A_qa V, adding Q S as it stores, and storing
// straight to o (OutputRows: no tile, no pass of the output's own).
// CHECK: // with the sums below: o's rows = A1 B1 + A2 B2 + tile{{[0-9]+}}
// The state update comes next, and it reads nothing the pair wrote (o) nor
// writes what the pair read (it writes S): no barrier between them.
// CHECK-NEXT: rkc::tile::matmulPair<TensorCores, 16, 16>([[AQ:tile[0-9]+]], [[U]], 0, VLD<TensorCores>, [[AQ]], tile{{[0-9]+}}, 0, VLD<TensorCores>, 16, 32, false, OutputRows{p, t0, eos, oBase, oPairs}, 40, tile{{[0-9]+}}, rkc::tile::RowDecay{}, 40, /*barrier=*/false);
// CHECK: rec.chunk.output
// CHECK-NEXT: // (stored to o by the product above)
// The state decayed over the chunk is the addend of the next product's sum:
// the product scales S as it stores (no decayState pass). That sum's only
// reader is the last product's sum: the two products are one pass
// (matmulPair), which stores the new state into S itself, the value rows
// (V) as the second product's right operand
// (no yield copy). A delta factor's two products share their left tile, K̃.
// CHECK: rec.chunk.decay_state
// CHECK-NEXT: // (scaled from S by the product below)
// CHECK: // (computed with the product below)
// CHECK: // (computed with the product below)
// In the kernel for bf16 products the new state stays in registers.
// CHECK: // with the sums below: S = A1 B1 + A2 B2 + S decayed over the chunk, the chunk's new state, in registers; then its shadow
// CHECK-NEXT: rkc::tile::updateStatePair<16, 16>(sreg, [[KE:tile[0-9]+]], [[U]], KLD<TensorCores, 64>, VLD<TensorCores>, [[KE]], tile{{[0-9]+}}, KLD<TensorCores, 64>, VLD<TensorCores>, DK, rkc::tile::RowDecay{[[G]], 64, L}, S16, SLD, /*barrier=*/false);
// CHECK: // with the sums below: S = A1 B1 + A2 B2 + S decayed over the chunk, the chunk's new state
// CHECK-NEXT: rkc::tile::matmulPair<TensorCores, 16, 16>([[KE]], [[U]], KLD<TensorCores, 64>, VLD<TensorCores>, [[KE]], tile{{[0-9]+}}, KLD<TensorCores, 64>, VLD<TensorCores>, 64, 32, true, S, SLD, S, rkc::tile::RowDecay{[[G]], 64, L}, SLD);
// CHECK: rec.chunk.yield
// CHECK-NEXT: // (computed by the product above)
// CHECK-NOT: = tile{{[0-9]+}}[e];
// CHECK: __device__ __forceinline__ void prep(const Params &p) {
// CHECK: if (t0 >= eos)
// CHECK: { // kept for the scan: [[G]] (float)
// CHECK-NEXT: float *const w = reinterpret_cast<float *>(ws + (TensorCores ? 0 : 0));
// The Gram after the copy of the cumsum's last row reads and writes nothing
// the copy wrote, so the copy needs no barrier.
// CHECK: w[e] = rkc::tile::fromFloat<float>([[G]][960 + e]);
// CHECK-NEXT: }
// CHECK-NEXT: // (no barrier: the next op reads nothing written since the last one, nor writes what was read)
// CHECK-NEXT: rec.chunk.gram
// KDA reads where it erases, after the decay: its read rows are the erase
// rows decayed by the inclusive sum, with no exclusive sum.
// CHECK-NOT: exclusive
// The negated strengths that only a column scaling reads are not computed:
// the scaling negates them (its scale's floats are not written between).
// The first scaling's result is not what the second touches, so no barrier
// between them.
// CHECK: rkc::tile::scaleCols([[E:tile[0-9]+]], 16, {16, 1, 1, {0}}, [[B:tile[0-9]+]], {16, 1, 1, {0}}, tile{{[0-9]+}}, rkc::tile::NoKeep{}, /*barrier=*/false);
// CHECK-NEXT: // (no barrier: the next op reads nothing written since the last one, nor writes what was read)
// CHECK: rec.chunk.neg
// CHECK-NEXT: // (the column scaling below negates its scale)
// CHECK-NOT: rkc::tile::neg(
// CHECK: rkc::tile::scaleCols<true>([[E]], 16, {16, 1, 1, {0}}, [[B]], {16, 1, 1, {0}}, tile{{[0-9]+}}
// An elementwise op whose value crosses whole, with key- or chunk-side
// columns, stores it for the scan as it computes it: no copy after it, and
// no barrier before one.
// CHECK: // kept for the scan, stored there as computed
// CHECK-NEXT: rkc::tile::decayToEnd(tile{{[0-9]+}}, {16, 1, 1, {0}}, 64, [[G]], 64, L, [[KT:tile[0-9]+]],
// CHECK-NEXT: rkc::tile::KeepIn<Crossing<TensorCores>>{reinterpret_cast<Crossing<TensorCores> *>(ws + (TensorCores ? {{[0-9]+}} : {{[0-9]+}}))}, /*barrier=*/false);
// CHECK-NOT: kept for the scan: [[KT]]
// The inverse that only a neg reads, in place, stores -T itself.
// CHECK: rkc::tile::utInverse<true>(tile{{[0-9]+}}, 16, tile{{[0-9]+}}); // -T, for the neg below
// CHECK: rec.chunk.neg
// CHECK-NEXT: // (the inverse above stores it negated)
// CHECK-NOT: rkc::tile::neg(
// CHECK: // kept for the scan, stored there as computed
// CHECK-NEXT: rkc::tile::decayRows(
// CHECK: // kept for the scan, stored there as computed
// CHECK-NEXT: rkc::tile::scaleCols(
// Value-side ops run once per prep value tile (PBV: here all of dv = 64,
// whose plan needs no more shared memory than the value tile's), after the
// key-side ones; each writes its columns of the full row. A product only the
// scan reads is stored into the workspace as it is computed (no tile, no
// copy).
// CHECK: for (v0 = 0; v0 < DV; v0 += PBV) {
// CHECK: // kept for the scan, stored there by the product
// CHECK-NEXT: rkc::tile::matmul<TensorCores, 16>(tile{{[0-9]+}}, tile{{[0-9]+}}, 16, 16, 64, false, reinterpret_cast<Crossing<TensorCores> *>(ws + (TensorCores ? {{[0-9]+}} : {{[0-9]+}})) + v0, 0, 0, static_cast<const float *>(nullptr), DV);
// CHECK-NOT: rec.chunk.decay_state
// CHECK: #ifndef RKC_PREP_BLOCKS
// CHECK: extern "C" __global__ void __launch_bounds__(THREADS, RKC_PREP_BLOCKS)
// CHECK-NEXT: rkc_kda_prep_kernel(const Params p) {
// CHECK: rkc_kda_prep_kernel_tc(const Params p) {

// LAUNCH: static int rkc_rows_by_16_bytes(const rkc_tensor *x) {
// LAUNCH-NEXT: if (x->dtype != RKC_BF16 || x->rank < 1 || x->stride[x->rank - 1] != 1 ||
// LAUNCH-NEXT: ((uintptr_t)x->data & 15))
// LAUNCH: if (x->stride[d] % 8)
// LAUNCH: p->workspace = NULL;
// LAUNCH-NEXT: p->chunk_begin = 0;
// LAUNCH-NEXT: p->chunk_end = INT64_MAX;
// LAUNCH-NEXT: p->carry = NULL;
// LAUNCH-NEXT: p->carry_in = p->carry_out = 0;
// LAUNCH-NEXT: p->chunk_slots = 0;
// LAUNCH-NEXT: p->rows_from_inputs = a->o.dtype != RKC_F32 &&
// LAUNCH-NEXT: rkc_rows_by_16_bytes(&a->v);
// A (chunk slot, value head) each: ceil(T / 16) slots a batch row (or
// chunk_slots, the ring below), or num_seqs + ceil(T / 16) in all for packed
// sequences.
// LAUNCH: static size_t rkc_kda_workspace_bytes(const rkc_kda_kernel_params *p) {
// LAUNCH-NEXT: const int64_t perSeq = (p->length + 16 - 1) / 16;
// LAUNCH-NEXT: const int64_t slots = p->a.cu_seqlens ? p->num_seqs + perSeq
// LAUNCH-NEXT: : p->batch * (p->chunk_slots ? p->chunk_slots : perSeq);
// LAUNCH-NEXT: return perSeq == 0 ? 0 : (size_t)slots * p->value_heads *
// LAUNCH-NEXT: (p->a.o.dtype == RKC_F32 ? RKC_KDA_WORKSPACE_BYTES : p->rows_from_inputs ? RKC_KDA_WORKSPACE_BYTES_16_LEAN : RKC_KDA_WORKSPACE_BYTES_16);
// At small B x H the chunks run in segments (the prep of one beside the
// scan of the one before), --scan-segments or RKC_SCAN_SEGMENTS of them
// where the scan's blocks leave half the multiprocessors free; the state
// between them (the carry) follows the workspace, and the query counts it.
// LAUNCH: static int64_t rkc_kda_segments(const rkc_kda_kernel_params *p, CUstream stream, CUstream *side) {
// LAUNCH: int64_t wanted = 4;
// LAUNCH-NEXT: const char *env = getenv("RKC_SCAN_SEGMENTS");
// LAUNCH: if (wanted < 2 || perSeq < 2 ||
// LAUNCH-NEXT: rkc_side_stream(stream, side, &multiprocessors) != RKC_SUCCESS ||
// LAUNCH-NEXT: 2ull * 2 * p->value_heads * p->num_seqs > (unsigned long long)multiprocessors)
// LAUNCH-NEXT: return 1;
// With three segments or more (and not RKC_WORKSPACE_RING=0), a batch row's
// chunk slots are two segments' worth, taken in turn: segment k + 1's prep
// runs after segment k - 1's scan (whose slots it reuses) and beside
// segment k's.
// LAUNCH: static int64_t rkc_kda_chunk_slots(const rkc_kda_kernel_params *p, int64_t segments) {
// LAUNCH: const char *env = getenv("RKC_WORKSPACE_RING");
// LAUNCH-NEXT: if ((env && env[0] == '0' && !env[1]) || p->a.cu_seqlens || segments < 3)
// LAUNCH-NEXT: return 0;
// LAUNCH-NEXT: return 2 * per < perSeq ? 2 * per : 0;
// LAUNCH: static size_t rkc_kda_carry_bytes(const rkc_kda_kernel_params *p, int64_t segments) {
// LAUNCH-NEXT: return segments > 1 ? (size_t)p->num_seqs * p->value_heads * 16384 : 0;
// LAUNCH: rkc_status rkc_kda_fwd_workspace(const rkc_kda_args *args, size_t *bytes) {
// LAUNCH: const int64_t segments = rkc_kda_segments(&params, NULL, &side);
// LAUNCH-NEXT: params.chunk_slots = rkc_kda_chunk_slots(&params, segments);
// LAUNCH-NEXT: *bytes = rkc_kda_workspace_bytes(&params) + rkc_kda_carry_bytes(&params, segments);
// No tokens, or no kernels: the scan's launch answers, nothing is allocated.
// LAUNCH: if (perSeq == 0 || !rkc_kda_module.image)
// LAUNCH-NEXT: return rkc_launch(&rkc_kda_module,
// LAUNCH: const int64_t segments = rkc_kda_segments(&params, stream, &side);
// LAUNCH: params.chunk_slots = rkc_kda_chunk_slots(&params, segments);
// LAUNCH-NEXT: const size_t workspace = rkc_kda_workspace_bytes(&params);
// LAUNCH: rkc_stream_alloc((void **)&params.workspace, workspace + rkc_kda_carry_bytes(&params, segments), stream)
// The prep's blocks: a segment's chunks one after another, the value heads
// of each in turn. Segment k's scan runs on the stream; segment k + 1's prep
// on the side stream after what the stream held before that scan, joined
// back before the next scan. Only events order them: nothing waits by
// spinning, so no schedule of the two can hang.
// LAUNCH: const unsigned prepGrid[3] = {(unsigned)(per * params.value_heads), 1, (unsigned)params.num_seqs};
// LAUNCH: "rkc_kda_prep_kernel" : "rkc_kda_prep_kernel_tc", prepGrid, block, {{[0-9]+}}, stream, &prep, sizeof prep);
// LAUNCH: for (int64_t k = 0; k < segments && !status; ++k) {
// LAUNCH: scan.carry_in = k > 0;
// LAUNCH-NEXT: scan.carry_out = k + 1 < segments;
// LAUNCH: if (fork && (status = rkc_stream_wait(side, stream)))
// The prefill kernel for 16-bit outputs asks for less shared memory than
// the float32 one: its staging buffers in their 16-bit layout.
// LAUNCH: "rkc_kda_prefill_kernel" : "rkc_kda_prefill_kernel_tc", grid, block, (params.a.o.dtype == RKC_F32 ? 67072 : 34816), stream, &scan, sizeof scan);
// LAUNCH: prep.chunk_begin = (k + 1) * per;
// LAUNCH: "rkc_kda_prep_kernel" : "rkc_kda_prep_kernel_tc", prepGrid, block, {{[0-9]+}}, side, &prep, sizeof prep);
// LAUNCH-NEXT: const rkc_status joined = rkc_stream_wait(stream, side);
// A join that fails leaves the prep unordered before the free: wait for it.
// LAUNCH-NEXT: if (joined)
// LAUNCH-NEXT: rkc_stream_synchronize(side);
// LAUNCH: rkc_stream_free(params.workspace, stream)

// The prep's block mapping, and where the scan reads and writes the state.
// A chunk's workspace slot, in the launcher's ring where it has one.
// PREPGRID: const int64_t slot = p.a.cu_seqlens ? seq + t0 / C
// PREPGRID-NEXT: : p.chunk_slots ? seq * p.chunk_slots + t0 / C % p.chunk_slots
// PREPGRID-NEXT: : seq * perSeq + t0 / C;
// PREPGRID: __device__ __forceinline__ void prefill(const Params &p) {
// PREPGRID: const int64_t tBegin = bos + p.chunk_begin * C < eos ? bos + p.chunk_begin * C : eos;
// PREPGRID-NEXT: const int64_t tEnd = (eos - bos + C - 1) / C <= p.chunk_end ? eos : bos + p.chunk_end * C;
// PREPGRID-NEXT: const float *const entering = p.carry_in ? p.carry : p.a.initial_state;
// PREPGRID-NEXT: float *const leaving = p.carry_out ? p.carry : p.a.final_state;
// PREPGRID-NEXT: const int64_t enteringRow = ((p.carry_in ? seq : slot) * p.value_heads + hv) * DK;
// PREPGRID-NEXT: const int64_t leavingRow = ((p.carry_out ? seq : slot) * p.value_heads + hv) * DK;
// PREPGRID: leaving[(leavingRow + e / BV) * DV + v0 + e % BV] = S[(e / BV) * SLD + e % BV];
// PREPGRID: __device__ __forceinline__ void prep(const Params &p) {
// PREPGRID: const unsigned heads = static_cast<unsigned>(p.value_heads);
// PREPGRID-NEXT: const int64_t hv = blockIdx.x % heads, seq = blockIdx.z;
// PREPGRID: const int64_t t0 = bos + (p.chunk_begin + (int64_t)(blockIdx.x / heads)) * C;

// --scan-segments 1: the prep, then the scan, no side stream.
// RUN: rkc compile %rkc_src/examples/specs/kda.mlir -o %t/serial --no-fatbin --scan-segments 1 | FileCheck %s --check-prefix=SERIALLOG
// RUN: FileCheck %s --check-prefix=SERIAL --input-file=%t/serial/kda_launch.c
// SERIALLOG: scan-segments=1
// SERIAL: int64_t wanted = 1;
// RUN: not rkc compile %rkc_src/examples/specs/kda.mlir -o %t/bad0 --no-fatbin --scan-segments 0 2>&1 | FileCheck %s --check-prefix=BADSEGMENTS
// BADSEGMENTS: rec-schedule: scan-segments (0) must be from 1 to 64

// Where neither two buffers nor one float32 buffer (beside two 16-bit ones)
// fit beside the scan's tiles, the scan copies each crossing value from the
// workspace where its op stood.
// RUN: rkc compile %rkc_src/examples/specs/kda.mlir -o %t/copy --no-fatbin --dk 128 --dv 128 --chunk-size 64 --value-tile 64 --split-scan 1 > /dev/null
// RUN: FileCheck %s --check-prefix=COPY --input-file=%t/copy/kda.cu
// COPY-NOT: STAGE_FLOATS
// COPY: unsigned char *const ws = chunkWorkspace<TensorCores>(p, seq, t0, hv);
// COPY: { // from the prep kernel: tile1 (float)
// COPY: tile1[8064 + e] = rkc::tile::toFloat(w[e]);
// COPY: { // from the prep kernel: tile{{[0-9]+}} (Crossing<TensorCores>)

// --prefetch 1: the prep kernel fetches its own chunk's input rows into L2
// before its first row op; the scan, which loads no rows, fetches nothing.
// RUN: rkc compile %rkc_src/examples/specs/kda.mlir -o %t/prefetch --no-fatbin --dk 64 --dv 64 --chunk-size 16 --split-scan 1 --prefetch 1 > /dev/null
// RUN: FileCheck %s --check-prefix=PREFETCH --input-file=%t/prefetch/kda.cu
// PREFETCH: void prefill(const Params &p) {
// PREFETCH-NOT: prefetchRows(p.a
// PREFETCH: void prep(const Params &p) {
// PREFETCH: unsigned char *const ws = chunkWorkspace<TensorCores>(p, seq, t0, hv);
// PREFETCH-NEXT: {
// PREFETCH-NEXT: const int64_t next = t0, tokens = eos - next < C ? eos - next : C;
// PREFETCH-NEXT: prefetchRows(p.a.q, row, next, tokens, 1, hv, p.value_heads, DK);
// PREFETCH: rec.chunk.rows gate

// DPLR's b reads the state before the decay, through the exclusive cumsum:
// that is the inclusive one's rows a row later, so the inclusive gets the
// zero row before it and the exclusive has nothing to compute.
// SHIFTED: // elementwise ops four elements at a time: not with a per-channel gate and a read before its decay
// SHIFTED-NEXT: #define RKC_ELEMENTWISE_QUADS 0
// SHIFTED: // the zero row its shifted view starts with
// SHIFTED: {{\[\[maybe_unused\]\]}} const bool [[FALLS:tile[0-9]+Falls]] = rkc::tile::cumsum(
// SHIFTED: // (the inclusive sum's rows shifted down by one, its zero row first)
// SHIFTED: rec.chunk.gram
// The Grams with a decay per channel learn from the cumsum whether the sums
// fall (every gate at most 0), which bounds their factored exponents from two
// rows; the exclusive sum is the inclusive one's view, with its flag.
// SHIFTED: rkc::tile::gram<TensorCores, 128>({{.*}}, 128, true, tile{{[0-9]+}}, /*swizzled=*/0, [[FALLS]]);

// RUN: not rkc compile %rkc_src/examples/specs/kda.mlir -o %t/bad --no-fatbin --split-scan 2 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: split-scan (2) must be 0 or 1

// The prep kernel's launch bounds ask for the blocks its shared memory allows
// an SM, at most 4: KDA's prep (53504 bytes at dk = dv = 128) fits 4 in an
// sm_90 SM's 228 KB, 3 in sm_80's 164 KB, 1 in 100 KB.
// RUN: rkc compile %rkc_src/examples/specs/kda.mlir -o %t/blocks --no-fatbin | FileCheck %s --check-prefix=BLOCKSLOG
// RUN: FileCheck %s --check-prefix=BLOCKS --input-file=%t/blocks/kda.cu
// BLOCKSLOG: prep 53504 B
// The scan's ask for as many as its shared memory allows, at most 2: here 1
// for the float32 kernel (ptxas would otherwise spend registers on
// occupancy it cannot have) and 2 for the kernel for 16-bit outputs (97 280
// B: its staging buffers in 16 bits, right after the tiles it uses).
// BLOCKS: #ifndef RKC_PREFILL_BLOCKS
// BLOCKS-NEXT: #if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// BLOCKS-NEXT: #define RKC_PREFILL_BLOCKS 1
// BLOCKS: #ifndef RKC_PREFILL_TC_BLOCKS
// BLOCKS-NEXT: #if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// BLOCKS-NEXT: #define RKC_PREFILL_TC_BLOCKS 2
// BLOCKS: extern "C" __global__ void __launch_bounds__(THREADS, RKC_PREFILL_BLOCKS)
// BLOCKS-NEXT: rkc_kda_prefill_kernel(const Params p) {
// BLOCKS: extern "C" __global__ void __launch_bounds__(THREADS, RKC_PREFILL_TC_BLOCKS)
// BLOCKS-NEXT: rkc_kda_prefill_kernel_tc(const Params p) {
// At 16 value columns a block, the kernel for 16-bit outputs (79 KB) fits
// 2 blocks an SM where the float32 one (151 KB) fits 1.
// RUN: rkc compile %rkc_src/examples/specs/kda.mlir -o %t/blocks16 --no-fatbin --value-tile 16 | FileCheck %s --check-prefix=BLOCKS16LOG
// RUN: FileCheck %s --check-prefix=BLOCKS16 --input-file=%t/blocks16/kda.cu
// BLOCKS16LOG: shared    prefill 154624 B (80896 B for 16-bit outputs)
// BLOCKS16: #define RKC_PREFILL_BLOCKS 1
// BLOCKS16: #define RKC_PREFILL_TC_BLOCKS 2
// At 512 threads a block, 1 scan block an SM (128 registers a thread) and
// 2 prep blocks (64 registers; 3 would leave 42).
// RUN: rkc compile %rkc_src/examples/specs/kda.mlir -o %t/blocks512 --no-fatbin --threads 512 > /dev/null
// RUN: FileCheck %s --check-prefix=BLOCKS512 --input-file=%t/blocks512/kda.cu
// --prep-blocks 3 caps them at 3 (79 registers a thread for KDA, no spills),
// and the prep keeps its former order (65536 bytes: the depth-first one
// would fit no more blocks); the log names it.
// RUN: rkc compile %rkc_src/examples/specs/kda.mlir -o %t/blocks3 --no-fatbin --prep-blocks 3 | FileCheck %s --check-prefix=BLOCKS3LOG
// RUN: FileCheck %s --check-prefix=BLOCKS3 --input-file=%t/blocks3/kda.cu
// RUN: not rkc compile %rkc_src/examples/specs/kda.mlir -o %t/blocks5 --no-fatbin --prep-blocks 5 2>&1 | FileCheck %s --check-prefix=BLOCKS5
// BLOCKS3LOG: threads=256 prefetch=0 prep-blocks=3 decode-blocks=auto
// BLOCKS3LOG: prep 65536 B
// BLOCKS3: #ifndef RKC_PREP_BLOCKS
// BLOCKS3-NEXT: #if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// BLOCKS3-NEXT: #define RKC_PREP_BLOCKS 3
// BLOCKS3-NEXT: #elif __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870
// BLOCKS3-NEXT: #define RKC_PREP_BLOCKS 2
// BLOCKS5: rkc compile: error: @kda: rec-schedule: prep-blocks (5) must be from 0 to 4
// BLOCKS512: #ifndef RKC_PREFILL_BLOCKS
// BLOCKS512-NEXT: #if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// BLOCKS512-NEXT: #define RKC_PREFILL_BLOCKS 1
// BLOCKS512: #ifndef RKC_PREP_BLOCKS
// BLOCKS512-NEXT: #if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// BLOCKS512-NEXT: #define RKC_PREP_BLOCKS 2
// BLOCKS: #ifndef RKC_PREP_BLOCKS
// BLOCKS-NEXT: #if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// BLOCKS-NEXT: #define RKC_PREP_BLOCKS 4
// BLOCKS-NEXT: #elif __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870
// BLOCKS-NEXT: #define RKC_PREP_BLOCKS 3
// BLOCKS-NEXT: #else
// BLOCKS-NEXT: #define RKC_PREP_BLOCKS 1

// Raw rows of a tile that keeps some sub-step slots, or of an input with
// rows a sub-step: row i of the tile is token i / (slots it keeps), and the
// input's row within the token is the slot's (sub-step inputs) or 0.
// RUN: rkc compile %rkc_src/examples/specs/deltaproduct.mlir -o %t.dp --no-fatbin > /dev/null
// RUN: FileCheck %s --check-prefix=DPRAW --input-file=%t.dp/deltaproduct.cu
// DPRAW: if (TensorCores && p.rows_from_inputs) { // input "v" as it is
// DPRAW: const int64_t t = t0 + i / 2;
// DPRAW: switch (i % 2) {
// DPRAW-NEXT: case 0: j = 0; break;
// DPRAW-NEXT: case 1: j = 1; break;
// DPRAW: rkc::tile::copyAsync16(dst, x + inputRow(p.a.v, 2, row, t, RKC_SUBSTEP_ROWS, j, hv, p.value_heads) + v0 + c);
// RUN: rkc compile %rkc_src/examples/specs/eda.mlir -o %t.eda --no-fatbin > /dev/null
// RUN: FileCheck %s --check-prefix=EDARAW --input-file=%t.eda/eda.cu
// EDARAW: { // tile{{[0-9]+}}: !rec.tile<chunk[1], value> (Crossing<TensorCores>)
// EDARAW: if (TensorCores && p.rows_from_inputs) { // input "v" as it is
// EDARAW: const int64_t t = t0 + i / 1;
// EDARAW: const int j = 0;
// EDARAW: rkc::tile::copyAsync16(dst, x + inputRow(p.a.v, 2, row, t, 1, j, hv, p.value_heads) + v0 + c);

// QED's erase direction reads b, k, q and λ: 13 raw values a lane a row, so
// its rows load two at a time (26 values, under kRawFloats), each pair
// widened before the next loads.
// RUN: rkc compile %rkc_src/examples/specs/qed.mlir -o %t.qed --no-fatbin > /dev/null
// RUN: FileCheck %s --check-prefix=RAWBATCH --input-file=%t.qed/qed.cu
// RAWBATCH: void prefill_s0_read_along_raw(const Params &p, int64_t row, int64_t t, int64_t hv, unsigned *raw) {
// RAWBATCH: loadRowRaw<4>(p.a.b, row_b, p.a.b.stride[3], lane, raw + 0);
// RAWBATCH: loadRowRaw<4>(p.a.k, row_k, p.a.k.stride[3], lane, raw + 4);
// RAWBATCH: raw[8] = loadRaw(p.a.lam, row_lam);
// RAWBATCH: loadRowRaw<4>(p.a.q, row_q, p.a.q.stride[3], lane, raw + 9);
// RAWBATCH-LABEL: void prep(const Params &p)
// RAWBATCH: rec.chunk.rows read_along
// RAWBATCH: for (int r0 = 0; r0 < R; r0 += 2) {
// RAWBATCH-NEXT: unsigned raw[2][13];
// RAWBATCH: prefill_s0_read_along_raw(p, row, t, hv, raw[r - r0]);
// RAWBATCH: prefill_s0_read_along_from_raw(p, raw[r - r0], values[r]);

// In the prep kernel a row op followed by another loads both rows before
// storing either: one round trip to memory and one barrier (GDN's erase
// rows and scalar gates, 16 + 4 floats a thread of 256). Each loads its rows
// as stored, then widens them.
// RUN: rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.pair --no-fatbin > /dev/null
// RUN: FileCheck %s --check-prefix=ROWPAIR --input-file=%t.pair/gdn.cu
// ROWPAIR-LABEL: void prep(const Params &p)
// ROWPAIR: rec.chunk.rows erase_along
// ROWPAIR: unsigned raw[4][4];
// ROWPAIR: prefill_s0_erase_along_raw(p, row, t, hv, raw[r - r0]);
// ROWPAIR: prefill_s0_erase_along_from_raw(p, raw[r - r0], values[r]);
// ROWPAIR: float values2[R2][1];
// ROWPAIR: unsigned raw2[4][1];
// ROWPAIR: prefill_s0_gate_raw(p, row, t, hv, raw2[r - r0]);
// ROWPAIR: prefill_s0_gate_from_raw(p, raw2[r - r0], values2[r]);
// ROWPAIR: dst[(threadIdx.x % 32 + 32 * c) ^ ((i & 1) << 4)] = (live ? values[r][c] : 0.f);
// ROWPAIR: dst[0] = (live ? values2[r][0] : 0.f);
// ROWPAIR: __syncthreads();
// ROWPAIR-NEXT: RKC_PROFILE_END
// ROWPAIR-NEXT: rec.chunk.rows gate
// ROWPAIR-NEXT: // (loaded with the rows above)

// The prep's key rows that only Grams, decay_rows and scale_rows read are
// stored swizzled (odd rows' 16-float halves traded) and their readers told
// so; the Grams' outputs stay dense. Tiles that only prep products read as B
// (the decayed keys, the values, the products of the values) are stored as
// rkc::tile::swizzleB says, their readers told so; the values' copy for the
// scan reads them as stored.
// RUN: FileCheck %s --check-prefix=SWIZZLE --input-file=%t.pair/gdn.cu
// SWIZZLE-LABEL: void prep(const Params &p)
// SWIZZLE: rec.chunk.rows erase_along
// SWIZZLE: float *dst = tile0 + i * 128;
// SWIZZLE: // swizzled (rkc::tile::swizzle)
// SWIZZLE-NEXT: for (int c = 0; c < 4; ++c)
// SWIZZLE-NEXT: dst[(threadIdx.x % 32 + 32 * c) ^ ((i & 1) << 4)] = (live ? values[r][c] : 0.f);
// SWIZZLE: rkc::tile::gram<TensorCores, 128>(tile0, {32, 1, 1, {0}}, tile0, {32, 1, 1, {0}}, 128, tile2, tile2, 1, true, tile3, /*swizzled=*/3);
// SWIZZLE: rkc::tile::decayRows(tile0, {{.*}}, tile13, {{.*}}, /*barrier=*/true, /*xSwizzled=*/true, /*outSwizzledB=*/true);
// SWIZZLE: rkc::tile::matmul<TensorCores, 32>(tile11, tile13, {{.*}}, /*barrier=*/true, /*bSwizzled=*/true);
// SWIZZLE: rec.chunk.rows query
// SWIZZLE: // swizzled (rkc::tile::swizzle)
// SWIZZLE: rkc::tile::gram<TensorCores, 128>(tile17, {{.*}}, tile0, {{.*}}, /*swizzled=*/3);
// SWIZZLE: rkc::tile::scaleRows(tile0, 32, 128, tile4, tile27, rkc::tile::NoKeep{}, /*barrier=*/true, /*xSwizzled=*/true);
// SWIZZLE: rec.chunk.rows value
// SWIZZLE: float *dst = tile8 + i * 128;
// SWIZZLE: // stored as rkc::tile::swizzleB says
// SWIZZLE: dst[rkc::tile::swizzleB(true, i, d - v0)] = (live ? values[r][c] : 0.f);
// SWIZZLE: kept for the scan: tile8
// SWIZZLE: = rkc::tile::fromFloat<Crossing<TensorCores>>(tile8[rkc::tile::swizzledBAt(true, e, PBV)]);
// SWIZZLE: rkc::tile::matmul<TensorCores, 32>(tile5, tile8, {{.*}}, rkc::tile::SwizzledB{tile9, 128}, {{.*}}, /*bSwizzled=*/true); // stored as rkc::tile::swizzleB says
// SWIZZLE: rkc::tile::matmul<TensorCores, 32>(tile11, tile9, {{.*}}, /*bSwizzled=*/true);
// SWIZZLE-NOT: swizzle
// SWIZZLE: rkc_gdn_prep_kernel(const Params p)

// An input's head under GVA in 32-bit arithmetic, in a function of its own
// that only GVA calls: the rows inline a compare, not a division each.
// HEADS: __device__ __noinline__ int groupHead(unsigned hv, unsigned HV, unsigned heads) {
// HEADS-NEXT: return hv / (HV / heads);
// inputHead (the form RKC_PREFILL_HEAD_ONCE=1 takes, NOTES.md v25f) asks
// the compiler to merge an input's calls: one a block, not a branch a row.
// HEADS: __device__ __noinline__ __attribute__((const)) int inputHead(unsigned hv, unsigned HV,
// HEADS: __device__ inline int64_t inputRow(const rkc_tensor &x, int headDim,
// HEADS: const int heads = static_cast<int>(x.shape[headDim]);
// HEADS: const int64_t h = inputHead(hv, HV, heads);
// HEADS: const int64_t h = heads == HV ? hv : groupHead(hv, HV, heads);
// HEADS-NOT: hv / (HV / heads)
// The prefill's row functions take the flag, the decode's do not.
// HEADS: const int64_t row_k = inputRow<RKC_PREFILL_HEAD_ONCE>(p.a.k, 2, row, t, 1, 0, hv, p.value_heads);
// HEADS: const int64_t row_k = inputRow(p.a.k, 2, row, t, 1, 0, hv, p.value_heads);

// pad-addend-rows (1 by default): Q S's tile has rows of 40 floats. Its
// product stores it with that stride (matmulSharedRight's second output) and
// the output's pair adds it with it; where the output adds it itself (EDA),
// it indexes it by its rows. The log names the option where it is 0, and the
// tile is dense then.
// RUN: rm -rf %t.pad && rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.pad --no-fatbin | FileCheck %s --check-prefix=PADLOG
// RUN: FileCheck %s --check-prefix=PAD --input-file=%t.pad/gdn.cu
// RUN: rm -rf %t.padeda && rkc compile %rkc_src/examples/specs/eda.mlir -o %t.padeda --no-fatbin > /dev/null
// RUN: FileCheck %s --check-prefix=PADEDA --input-file=%t.padeda/eda.cu
// RUN: rm -rf %t.dense && rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.dense --no-fatbin --pad-addend-rows 0 | FileCheck %s --check-prefix=DENSELOG
// RUN: FileCheck %s --check-prefix=DENSE --input-file=%t.dense/gdn.cu
// PADLOG-NOT: pad-addend-rows
// PADLOG: products=bf16
// DENSELOG: schedule {{.*}} pad-addend-rows=0 products=bf16
// DENSE: rkc::tile::matmulSharedRight<TensorCores, 128>({{.*}}, [[QS:tile[0-9]+]], 0, static_cast<const float *>(nullptr), S16, SLD, 32);
// PAD: rkc::tile::matmulSharedRight<TensorCores, 128>({{.*}}, [[QS:tile[0-9]+]], 40, static_cast<const float *>(nullptr), S16, SLD, 32);
// PAD: rkc::tile::matmulPair<TensorCores, 32, 32>({{.*}}, OutputRows{p, t0, eos, oBase, oPairs}, 40, [[QS]], rkc::tile::RowDecay{}, 40, /*barrier=*/false);
// PADEDA: rkc::tile::matmul<TensorCores, 32>({{.*}}, [[OUT:tile[0-9]+]], KLD<TensorCores, 32>, VLD<TensorCores>, [[QS:tile[0-9]+]], 40, rkc::tile::RowDecay{}, 40);
// PADEDA: rkc::tile::toFloat([[OUT]][(e / 32) * 40 + e % 32]) + rkc::tile::toFloat(tile{{[0-9]+}}[e])
