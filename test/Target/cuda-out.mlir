// rkc compile --out-phase 1: the scan carries the state alone and stores each
// chunk's entering state (16 bits for 16-bit outputs); an out kernel, one block
// per (chunk, value head) x value tile x sequence, loads it and computes the
// output from its own rows; the launcher runs the scan, then the out kernel,
// with what crosses between them in stream-ordered memory. With --keep-rows 0
// the scan loads its own rows, so that linear attention runs no prep kernel.
// RUN: rm -rf %t && rkc compile %rkc_src/examples/specs/linear_attention.mlir -o %t --no-fatbin --out-phase 1 --keep-rows 0 | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --input-file=%t/linear_attention.cu
// RUN: FileCheck %s --check-prefix=LAUNCH --input-file=%t/linear_attention_launch.c
// RUN: FileCheck %s --check-prefix=HEADER --input-file=%t/linear_attention.h
// With a prep kernel (GDN): the out kernel redoes the prep's row loads and
// gate sums, and U = W S + U₀ from W and U₀, which it reads from the scan's
// workspace; it runs after each segment's scan, before a later segment's
// prep reuses that workspace.
// RUN: rm -rf %t.gdn && rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.gdn --no-fatbin --out-phase 1 > /dev/null
// RUN: FileCheck %s --check-prefix=GDN --input-file=%t.gdn/gdn.cu
// RUN: FileCheck %s --check-prefix=GDNLAUNCH --input-file=%t.gdn/gdn_launch.c
// RUN: not rkc compile %rkc_src/examples/specs/linear_attention.mlir -o %t.one --no-fatbin --out-phase 1 --split-scan 0 2>&1 | FileCheck %s --check-prefix=ONEKERNEL
// RUN: not rkc compile %rkc_src/examples/specs/linear_attention.mlir -o %t.two --no-fatbin --out-phase 2 2>&1 | FileCheck %s --check-prefix=BADVALUE
// By default (--keep-rows 1) the scan stages the rows it reads from the prep's
// workspace (or the inputs), as without an out phase; the out kernel loads
// its own.
// RUN: rm -rf %t.keep && rkc compile %rkc_src/examples/specs/kda.mlir -o %t.keep --no-fatbin --out-phase 1 | FileCheck %s --check-prefix=KEEP
// RUN: FileCheck %s --check-prefix=KEEPCU --input-file=%t.keep/kda.cu
// Linear attention's chunk then starts with the state update, which writes
// S's bf16 shadow while other warps may still be copying it: a barrier
// between the copy and the update.
// RUN: rm -rf %t.la && rkc compile %rkc_src/examples/specs/linear_attention.mlir -o %t.la --no-fatbin --out-phase 1 > /dev/null
// RUN: FileCheck %s --check-prefix=STAGED --input-file=%t.la/linear_attention.cu
// RUN: not rkc compile %rkc_src/examples/specs/kda.mlir -o %t.keep2 --no-fatbin --keep-rows 2 2>&1 | FileCheck %s --check-prefix=BADKEEP
// With --out-value-loop 1 the out kernel takes a chunk and value head a block:
// the query side and the chunk's own attention once, then for each value
// tile the state's slice and the value side.
// RUN: rm -rf %t.loop && rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.loop --no-fatbin --out-phase 1 --out-value-loop 1 | FileCheck %s --check-prefix=LOOP
// RUN: FileCheck %s --check-prefix=LOOPCU --input-file=%t.loop/gdn.cu
// RUN: FileCheck %s --check-prefix=LOOPLAUNCH --input-file=%t.loop/gdn_launch.c
// With --prefetch 1 the out kernel fetches its chunk's input rows into L2 at
// its start, as the prep kernel does.
// RUN: rm -rf %t.pf && rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.pf --no-fatbin --out-phase 1 --prefetch 1 > /dev/null
// RUN: FileCheck %s --check-prefix=PREFETCH --input-file=%t.pf/gdn.cu
// RUN: not rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.loop2 --no-fatbin --out-value-loop 1 2>&1 | FileCheck %s --check-prefix=LOOPALONE
// RUN: not rkc compile %rkc_src/examples/specs/gdn.mlir -o %t.loop3 --no-fatbin --out-phase 1 --out-value-loop 2 2>&1 | FileCheck %s --check-prefix=BADLOOP

// SUMMARY: out-phase=1
// SUMMARY: out {{[0-9]+}} B; from the scan 65536 B (32768 B for 16-bit outputs) a chunk and value head

// CHECK: constexpr int64_t OUT_WS_FLOATS = 16384;
// CHECK: __device__ inline Crossing<TensorCores> *outWorkspace(
// CHECK: void prefill(const Params &p) {
// CHECK: for (int64_t t0 = tBegin; t0 < tEnd; t0 += C) {
// CHECK-NEXT: { // the chunk's entering state, which the out kernel starts from
// CHECK-NEXT: Crossing<TensorCores> *const to = outWorkspace<TensorCores>(p, seq, t0, hv) + v0;
// CHECK-NEXT: copyTile<BV>(S, SLD, to, DV, DK);
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads(); // the copy is done before S changes
// CHECK-NOT: rec.chunk.rows query
// CHECK-NOT: OutputRows{
// CHECK: S = A B + S, the chunk's new state
// CHECK: void out(const Params &p) {
// CHECK: const int64_t t0 = bos + (p.chunk_begin + (int64_t)(blockIdx.x / heads)) * C;
// CHECK: const Crossing<TensorCores> *const entering = outWorkspace<TensorCores>(p, seq, t0, hv);
// CHECK: copyTile<BV>(entering + v0, DV, S, SLD, DK);
// CHECK: rec.chunk.rows query
// CHECK: rkc::tile::matmul<TensorCores, 128>({{tile[0-9]+}}, S,
// CHECK: rec.chunk.gram
// CHECK: OutputRows{p, t0, eos, oBase, oPairs}
// CHECK: rkc_linear_attention_out_kernel_tc(const Params p) {

// LAUNCH: static size_t rkc_linear_attention_out_workspace_bytes(
// LAUNCH: *bytes = rkc_linear_attention_workspace_bytes(&params) + rkc_linear_attention_out_workspace_bytes(&params);
// LAUNCH: rkc_stream_alloc(&params.out_workspace, rkc_linear_attention_out_workspace_bytes(&params), stream)
// LAUNCH: "rkc_linear_attention_prefill_kernel_tc"
// LAUNCH: const unsigned outGrid[3] = {(unsigned)(perSeq * params.value_heads), 4, (unsigned)params.num_seqs};
// LAUNCH: "rkc_linear_attention_out_kernel_tc", outGrid
// LAUNCH: rkc_stream_free(params.out_workspace, stream);

// HEADER: void *out_workspace;
// HEADER: #define RKC_LINEAR_ATTENTION_OUT_WORKSPACE_BYTES 65536
// HEADER: #define RKC_LINEAR_ATTENTION_OUT_WORKSPACE_BYTES_16 32768

// GDN: void prefill(const Params &p) {
// GDN: { // the chunk's entering state, which the out kernel starts from
// GDN: if constexpr (TensorCores)
// GDN-NEXT: copyTile<BV>(S16, SLD, to, DV, DK);
// GDN-NOT: for the out kernel
// GDN: void prep(const Params &p) {
// GDN: void out(const Params &p) {
// GDN: const int64_t t0 = bos + (p.chunk_begin + (int64_t)(blockIdx.x / heads)) * C;
// GDN: unsigned char *const ws = chunkWorkspace<TensorCores>(p, seq, t0, hv);
// GDN: rec.chunk.rows gate {{.*}}rec.phase = "out"
// GDN: rec.chunk.cumsum
// GDN: rkc::tile::matmul<TensorCores, 128>({{tile[0-9]+}}, S,
// W is read right before its first reader, W S, and U₀ before it too: the
// sum U = W S + U₀ is folded into that product, which adds U₀ as it stores
// (outKernelOrder).
// W and U₀ are read 16 bytes at a time (copyTile).
// GDN: // from the prep kernel: [[W:tile[0-9]+]]
// GDN-NEXT: Crossing<TensorCores> *const w =
// GDN-NEXT: copyTile<128>(w, 128, [[W]], 128, {{[0-9]+}});
// GDN: // from the prep kernel: [[U0:tile[0-9]+]]
// GDN-NEXT: Crossing<TensorCores> *const w =
// GDN-NEXT: copyTile<BV>(w + v0, DV, [[U0]], BV, {{[0-9]+}});
// GDN: rkc::tile::matmul<TensorCores, 128>([[W]], S, {{.*}}, [[U0]]);

// GDNLAUNCH: rkc_stream_alloc((void **)&params.workspace, workspace + rkc_gdn_carry_bytes(&params, segments) + rkc_gdn_out_workspace_bytes(&params), stream)
// GDNLAUNCH: params.out_workspace = (unsigned char *)params.workspace + workspace + rkc_gdn_carry_bytes(&params, segments);
// GDNLAUNCH: for (int64_t k = 0; k < segments && !status; ++k) {
// GDNLAUNCH: "rkc_gdn_prefill_kernel_tc", grid, block, {{.*}}, stream, &scan, sizeof scan);
// GDNLAUNCH-NEXT: /* This segment's outputs
// GDNLAUNCH: const unsigned outGrid[3] = {(unsigned)(per * params.value_heads), 4, (unsigned)params.num_seqs};
// GDNLAUNCH: "rkc_gdn_out_kernel_tc", outGrid, block, {{[0-9]+}}, stream, &scan, sizeof scan);
// GDNLAUNCH-NEXT: if (fork) {
// GDNLAUNCH: rkc_stream_free(params.workspace, stream);
// ONEKERNEL: out-phase 1 needs split-scan 1
// BADVALUE: out-phase (2) must be 0 or 1
// KEEP: out-phase=1 products=
// KEEP: where raw input rows are staged from the inputs
// STAGED: void prefill(const Params &p) {
// STAGED: copyTile<BV>(S16, SLD, to, DV, DK);
// STAGED: }
// STAGED-NEXT: __syncthreads(); // the copy is done before S changes
// STAGED-NEXT: rec.chunk.matmul
// STAGED: rkc::tile::updateStateOne<64>(sreg,

// KEEPCU: void prefill(const Params &p) {
// KEEPCU-NOT: rec.chunk.rows value {{.*}}rec.phase = "both"
// KEEPCU: void out(const Params &p) {
// KEEPCU: rec.chunk.rows value {{.*}}rec.phase = "out"
// BADKEEP: keep-rows (2) must be 0 or 1
// LOOP: out-phase=1 out-value-loop=1
// LOOPCU: void out(const Params &p) {
// LOOPCU: const int64_t hv = blockIdx.x % heads, seq = blockIdx.z;
// LOOPCU: rec.chunk.rows query
// LOOPCU: rkc::tile::gram<TensorCores, 128>(
// LOOPCU: for (int64_t v0 = 0; v0 < DV; v0 += BV) {
// LOOPCU-NEXT: __syncthreads();
// LOOPCU-NEXT: copyTile<BV>(entering + v0, DV, S, SLD, DK);
// LOOPCU: const int64_t oBase = row * p.a.o.stride[0] + hv * p.a.o.stride[2] + v0 * p.a.o.stride[3];
// LOOPCU: rec.chunk.rows value
// LOOPCU-NOT: rkc::tile::gram<
// LOOPCU: OutputRows{p, t0, eos, oBase, oPairs}
// LOOPCU: rkc_gdn_out_kernel_tc(const Params p) {
// LOOPLAUNCH: const unsigned outGrid[3] = {(unsigned)(per * params.value_heads), 1, (unsigned)params.num_seqs};
// LOOPALONE: out-value-loop 1 needs out-phase 1
// BADLOOP: out-value-loop (2) must be 0 or 1
// PREFETCH: void out(const Params &p) {
// PREFETCH: unsigned char *const ws = chunkWorkspace<TensorCores>(p, seq, t0, hv);
// PREFETCH-NEXT: {
// PREFETCH-NEXT: const int64_t next = t0, tokens = eos - next < C ? eos - next : C;
// PREFETCH-NEXT: prefetchRows(p.a.
// PREFETCH: rec.chunk.rows query
