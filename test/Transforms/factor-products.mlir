// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=16" --rec-factor-products | FileCheck %s
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=16 split-scan=true factor-products=true" | FileCheck %s --check-prefix=SPLIT
// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked="chunk-size=16" --rec-factor-products | FileCheck %s --check-prefix=EDA
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=16" --rec-factor-products --rec-factor-products | FileCheck %s --check-prefix=AGAIN

// KDA's output, Q S + A_qk U' + A_qk V with U' = W S + U, is one product
// of A_qk and V + U + W S (the state-free terms, the value rows and U,
// summed first); so is the state update, K̃ᵀ (that same sum) + decay(S).
// CHECK-LABEL: rec.recurrence @kda
// CHECK: %[[V:[0-9]+]] = rec.chunk.rows value
// CHECK: %[[WS:[0-9]+]] = rec.chunk.matmul %{{[0-9]+}}, %arg0 :
// CHECK: %[[AV0:[0-9]+]] = rec.chunk.matmul %{{[0-9]+}}, %[[V]] :
// CHECK-NEXT: %[[U:[0-9]+]] = rec.chunk.matmul %{{[0-9]+}}, %[[AV0]] :
// CHECK: %[[QS:[0-9]+]] = rec.chunk.matmul %{{[0-9]+}}, %arg0 :
// CHECK: %[[AQK:[0-9]+]] = rec.chunk.scale_cols
// CHECK: %[[VU:[0-9]+]] = rec.chunk.add %[[V]], %[[U]]
// CHECK-NEXT: %[[NEW:[0-9]+]] = rec.chunk.add %[[VU]], %[[WS]]
// CHECK-NEXT: %[[AV:[0-9]+]] = rec.chunk.matmul %[[AQK]], %[[NEW]] :
// CHECK-NEXT: %[[O:[0-9]+]] = rec.chunk.add %[[QS]], %[[AV]]
// CHECK-NEXT: rec.chunk.output %[[O]]
// CHECK: %[[DS:[0-9]+]] = rec.chunk.decay_state %arg0
// CHECK: %[[KT:[0-9]+]] = rec.chunk.decay_to_end
// The same sum, built once, for the state update.
// CHECK: %[[KV:[0-9]+]] = rec.chunk.matmul %[[KT]], %[[NEW]] {transpose_lhs}
// CHECK-NEXT: %[[S:[0-9]+]] = rec.chunk.add %[[DS]], %[[KV]]
// CHECK-NEXT: rec.chunk.yield %[[S]]

// After --rec-split-scan the state-free part is one prep value that
// crosses; the value rows do not reach the scan.
// SPLIT: %[[V:[0-9]+]] = rec.chunk.rows value {rec.phase = "prep"}
// SPLIT: rec.chunk.add %[[V]], %{{[0-9]+}} {rec.phase = "prep", rec.to_scan = "all"}

// EDA's products share no left operand within a sum: unchanged.
// EDA-COUNT-9: rec.chunk.matmul
// EDA-NOT: rec.chunk.matmul

// Seven products where there were nine; a second run finds nothing more.
// AGAIN-COUNT-7: rec.chunk.matmul
// AGAIN-NOT: rec.chunk.matmul
