// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=16 split-scan=true" | FileCheck %s
// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked="chunk-size=16" --rec-split-scan | FileCheck %s --check-prefix=EDA
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=16 split-scan=true" --rec-schedule | FileCheck %s --check-prefix=WORKSPACE
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=16 split-scan=true" --rec-schedule | FileCheck %s --check-prefix=PLAN
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=16" --rec-split-scan="keep-rows=true" | FileCheck %s --check-prefix=KEEP
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=16" --rec-split-scan="keep-rows=true" | not grep '"both"'
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=16" --rec-split-scan="keep-rows=true out-phase=true" | FileCheck %s --check-prefix=OUT
// RUN: rkc-opt %rkc_src/examples/specs/linear_attention.mlir --rec-lower-chunked="chunk-size=64" --rec-split-scan="out-phase=true" | FileCheck %s --check-prefix=LAOUT
// A DPLR strength's -α is redone in the out phase too: what crosses to it of
// the prep's is what the scan reads whole, and nothing of the scan's does.
// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked="chunk-size=16" --rec-split-scan="out-phase=true" | not grep -e 'rec.to_out = "all"}' -e rec.scan_to_out
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=16" --rec-split-scan="keep-rows=true out-phase=true" | not grep -e 'rec.to_out = "all"}' -e rec.scan_to_out
// RUN: rkc-opt %rkc_src/examples/specs/linear_attention.mlir --rec-lower-chunked="chunk-size=64" --rec-split-scan="out-phase=true" | not grep -e '"prep"' -e rec.to_out

// keep-rows: the value rows the scan reads are a prep value that crosses,
// like the WY vectors; no op runs in both phases.
// KEEP: rec.chunk.rows value {rec.phase = "prep", rec.to_scan = "all"}

// KDA: everything up to the WY vectors is prep (every chunk at once); the
// products with the entering state %arg0 and what follows them are scan.
// CHECK: rec.chunked chunk_size(16) substeps_per_token(1) attributes {rec.split_scan}
// G is kept for the scan's decay_state, which reads its last row only.
// CHECK: %[[G:[0-9]+]] = rec.chunk.cumsum %{{[0-9]+}} {rec.phase = "prep", rec.to_scan = "last_row"}
// The value rows are read by both phases: loaded again rather than kept.
// CHECK: %[[V:[0-9]+]] = rec.chunk.rows value {rec.phase = "both"}
// CHECK: rec.chunk.gram {{.*}} mask(strict) {rec.phase = "prep"}
// CHECK: rec.chunk.ut_inverse {{.*}} {rec.phase = "prep"}
// CHECK: %[[W:[0-9]+]] = rec.chunk.matmul {{.*}} {rec.phase = "prep", rec.to_scan = "all"}
// CHECK: rec.chunk.matmul %[[W]], %arg0 {rec.phase = "scan"}
// CHECK: rec.chunk.gram {{.*}} mask(lower) {rec.phase = "prep"}
// A_qa crosses for A_qa U', and V's rows reach the scan anyway: A_qk V (a
// delta factor's A_qk is A_qa) is computed there, not handed over.
// CHECK: %[[AQ:[0-9]+]] = rec.chunk.scale_cols {{.*}} {rec.phase = "prep", rec.to_scan = "all"}
// CHECK: rec.chunk.matmul %[[AQ]], %{{[0-9]+}} {rec.phase = "scan"}
// CHECK: rec.chunk.matmul %[[AQ]], %[[V]] {rec.phase = "scan"}
// CHECK: rec.chunk.output %{{[0-9]+}} {rec.phase = "scan"}
// CHECK: rec.chunk.decay_state %arg0, %[[G]] {rec.phase = "scan"}
// Kᵀ V is state-free but state-shaped: it moves into the scan, which keeps
// the chunk-sized K̃ instead of a dk x dv tile per chunk.
// CHECK: rec.chunk.decay_to_end {{.*}} {rec.phase = "prep", rec.to_scan = "all"}
// CHECK: rec.chunk.matmul %{{[0-9]+}}, %[[V]] {rec.phase = "scan", transpose_lhs}
// CHECK: rec.chunk.yield {{.*}} {rec.phase = "scan"}

// The EDA erase sub-step's rows enter the UT system in the prep; its value
// rows (slot 1 only) are still read by both phases.
// EDA: rec.chunked chunk_size(16) substeps_per_token(2) attributes {rec.split_scan}
// EDA: rec.chunk.rows value {rec.phase = "both"} : !rec.tile<chunk[1], value>
// EDA: rec.chunk.ut_inverse {{.*}} {rec.phase = "prep"}
// EDA: rec.chunk.matmul {{.*}}, %arg0 {rec.phase = "scan"}
// EDA-NOT: rec.phase = "prep"{{.*}}%arg0
// EDA: rec.chunk.yield {{.*}} {rec.phase = "scan"}

// rec-schedule lays out what crosses, per (chunk, value head), in floats:
// G's last row (dk = 128), then W, U0, Q̃, A_qa (16 x 16) and K̃ (16 x 128
// each, value-side tiles for all of dv; KDA's delta factor needs no Ã, -K̃
// with the WY vectors' sign, and the scan computes A_qk V = A_qa V itself
// from what it receives anyway): 128 + 4·2048 + 256.
// Each kernel has its own shared-memory plan: the prep's (no state slice)
// in rec.prep_smem_offset, the scan's (its ops, and the prep values it reads
// back where their ops stand) in rec.smem_offset.
// The prep kernel's value-side ops take all of dv at a time where that
// plan needs no more shared memory (prep_value_tile; the value tile is 32).
// WORKSPACE-DAG: rec.chunked {{.*}}prep_shared_bytes = {{[0-9]+}} : i64, prep_value_tile = 128 : i64, scan_segments = 4 : i64, shared_bytes = {{[0-9]+}} : i64{{.*}}workspace_floats = 8576 : i64, workspace_half_bytes = 17408 : i64
// The value rows and what reads them run once per value tile in the prep
// kernel, after the key-side ops: rec.per_value_tile.
// PLAN: rec.chunk.rows value {rec.per_value_tile, rec.phase = "both", rec.prep_smem_offset = {{[0-9]+}} : i64, rec.smem_offset = {{[0-9]+}} : i64}
// PLAN: rec.chunk.gram {{.*}} {rec.phase = "prep", rec.prep_smem_offset = {{[0-9]+}} : i64}
// For 16-bit outputs (rec.workspace_half_offset, bytes) the values the scan
// only multiplies or adds are bf16 (rec.half); G's last row, which the scan
// exponentiates, stays float32: 512 + 4·4096 + 512 bytes (in the order the
// ops stand, which rec-schedule may change for the prep kernel's sake).
// WORKSPACE-DAG: rec.to_scan = "last_row", rec.workspace_half_offset = 0 : i64, rec.workspace_offset = 0 : i64
// WORKSPACE-DAG: rec.half{{.*}}rec.to_scan = "all", {{(rec.to_workspace, )?}}rec.workspace_half_offset = 512 : i64, rec.workspace_offset = 128 : i64
// WORKSPACE-DAG: rec.half{{.*}}rec.to_scan = "all", {{(rec.to_workspace, )?}}rec.workspace_half_offset = 4608 : i64, rec.workspace_offset = 2176 : i64
// WORKSPACE-DAG: rec.half{{.*}}rec.to_scan = "all", {{(rec.to_workspace, )?}}rec.workspace_half_offset = 8704 : i64, rec.workspace_offset = 4224 : i64
// WORKSPACE-DAG: rec.half{{.*}}rec.to_scan = "all", {{(rec.to_workspace, )?}}rec.workspace_half_offset = 12800 : i64, rec.workspace_offset = 6272 : i64
// WORKSPACE-DAG: rec.half{{.*}}rec.to_scan = "all", {{(rec.to_workspace, )?}}rec.workspace_half_offset = 16896 : i64, rec.workspace_offset = 8320 : i64

// out-phase: what only the output needs (Q S₀, A_qk U and their sums, the
// output) runs after the scan, every chunk at once; the scan keeps U (the
// state update reads it too, so it stays scan) for it. So do the prep ops
// that only those read: the query rows, their decay, A_qk and A_qk V are
// the out phase's own. What it reads of the prep's that the scan reads too
// it redoes rather than receives: the gate's rows and their sums, β, the
// key and value rows (copies before their first out reader). The scan's U
// = W S + U₀ it redoes too, from W and U₀, which the scan reads from the
// workspace as well (rec.to_out beside rec.to_scan): only the entering
// state crosses from the scan. The state recursion is all the scan does.
// OUT: rec.chunked chunk_size(16) substeps_per_token(1) attributes {rec.out_phase, rec.split_scan}
// OUT: %[[G:[0-9]+]] = rec.chunk.cumsum %{{[0-9]+}} {rec.phase = "prep", rec.to_scan = "last_row"}
// OUT: %[[W:[0-9]+]] = rec.chunk.matmul %{{[0-9]+}}, %{{[0-9]+}} {rec.phase = "prep", rec.to_out = "all", rec.to_scan = "all"}
// OUT: %[[U0:[0-9]+]] = rec.chunk.matmul %{{[0-9]+}}, %{{[0-9]+}} {rec.phase = "prep", rec.to_out = "all", rec.to_scan = "all"}
// OUT: %[[SCANU:[0-9]+]] = rec.chunk.add %{{[0-9]+}}, %[[U0]] {rec.phase = "scan"}
// OUT: %[[QR:[0-9]+]] = rec.chunk.rows query {rec.phase = "out"}
// OUT: %[[GR:[0-9]+]] = rec.chunk.rows gate {rec.phase = "out"}
// OUT: %[[GO:[0-9]+]] = rec.chunk.cumsum %[[GR]] {rec.phase = "out"}
// OUT: %[[Q:[0-9]+]] = rec.chunk.decay_rows %[[QR]], %[[GO]] {rec.phase = "out"}
// OUT: rec.chunk.matmul %[[Q]], %arg0 {rec.phase = "out"}
// OUT: %[[KR:[0-9]+]] = rec.chunk.rows erase_along {rec.phase = "out"}
// OUT: rec.chunk.gram %[[QR]], %[[KR]] decay(%[[GO]], %[[GO]]) mask(lower) {rec.phase = "out"}
// OUT: rec.chunk.rows strength {rec.phase = "out"}
// OUT: %[[WS:[0-9]+]] = rec.chunk.matmul %[[W]], %arg0 {rec.phase = "out"}
// OUT: %[[U:[0-9]+]] = rec.chunk.add %[[WS]], %[[U0]] {rec.phase = "out"}
// OUT: rec.chunk.matmul %{{[0-9]+}}, %[[U]] {rec.phase = "out"}
// OUT: rec.chunk.rows value {rec.phase = "out"}
// OUT: rec.chunk.output %{{[0-9]+}} {rec.phase = "out"}
// Linear attention's out phase is fla's chunk_fwd_o: the query rows, the
// Gram of the query and key rows, A V and Q S₀, from the key and value rows
// it loads as the scan does; nothing is left to a prep phase, and nothing
// crosses but the entering state.
// LAOUT: %[[V:[0-9]+]] = rec.chunk.rows value {rec.phase = "both"}
// LAOUT: %[[K:[0-9]+]] = rec.chunk.rows key {rec.phase = "both"}
// LAOUT: %[[Q:[0-9]+]] = rec.chunk.rows query {rec.phase = "out"}
// LAOUT: rec.chunk.matmul %[[Q]], %arg0 {rec.phase = "out"}
// LAOUT: rec.chunk.gram %[[Q]], %[[K]] mask(lower) {rec.phase = "out"}
// LAOUT: rec.chunk.output %{{[0-9]+}} {rec.phase = "out"}
// LAOUT: rec.chunk.matmul %[[K]], %[[V]] {rec.phase = "scan", transpose_lhs}
// OUT: rec.chunk.decay_state %arg0, %{{[0-9]+}} {rec.phase = "scan"}
// OUT: rec.chunk.yield %{{[0-9]+}} : !rec.tile<key, value> {rec.phase = "scan"}
