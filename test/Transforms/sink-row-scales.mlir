// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-lower-chunked="chunk-size=32" --rec-sink-row-scales | FileCheck %s
// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-lower-chunked="chunk-size=32 sink-row-scales=true split-scan=true" | FileCheck %s --check-prefix=SPLIT
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=32" --rec-sink-row-scales | FileCheck %s --check-prefix=KDA
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked="chunk-size=32" | FileCheck %s --check-prefix=KDA

// GDN (a scalar gate): the output's Q̃ S = diag(e^G) Q S reads q's rows and
// decays the product's rows; the state update's K̂ᵀ X, K̂ = diag(β e^(G_L -
// G)) K, reads k's rows and scales X's, one scaling at a time (decay_to_end
// of X, then its strength). No row scaling of q or k is left.
// CHECK-LABEL: rec.recurrence @gdn
// CHECK: %[[G:[0-9]+]] = rec.chunk.cumsum
// CHECK: %[[B:[0-9]+]] = rec.chunk.rows strength
// CHECK: %[[K:[0-9]+]] = rec.chunk.rows erase_along
// CHECK: %[[Q:[0-9]+]] = rec.chunk.rows query
// CHECK-NEXT: %[[QS:[0-9]+]] = rec.chunk.matmul %[[Q]], %arg0 :
// CHECK-NEXT: %{{[0-9]+}} = rec.chunk.decay_rows %[[QS]], %[[G]] : (!rec.tile<chunk, value>, !rec.tile<chunk, one>)
// CHECK-NOT: rec.chunk.decay_rows %[[Q]],
// CHECK: %[[XE:[0-9]+]] = rec.chunk.decay_to_end %{{[0-9]+}}, %[[G]] : (!rec.tile<chunk, value>
// CHECK-NEXT: %[[XS:[0-9]+]] = rec.chunk.scale_rows %[[XE]], %[[B]]
// CHECK-NEXT: rec.chunk.matmul %[[K]], %[[XS]] {transpose_lhs}
// CHECK-NOT: rec.chunk.scale_rows %[[K]],
// CHECK: rec.chunk.yield

// Split: the rows of q and k reach the scan's products as they are (the
// scan loads them, or they cross unscaled); the scalings of chunk x value
// tiles that read the state are the scan's.
// SPLIT: rec.chunk.rows erase_along {rec.phase = "both"}
// SPLIT: rec.chunk.rows query {rec.phase = "both"}
// SPLIT-NEXT: rec.chunk.matmul %{{[0-9]+}}, %arg0 {rec.phase = "scan"}
// SPLIT-NEXT: rec.chunk.decay_rows %{{[0-9]+}}, %{{[0-9]+}} {rec.phase = "scan"}

// KDA's gate is per channel: its decays scale columns too, so they stay on
// the left operands (the same body as without the pass).
// KDA: rec.chunk.decay_rows %{{[0-9]+}}, %{{[0-9]+}} : (!rec.tile<chunk, key>, !rec.tile<chunk, key>)
// KDA: %[[KH:[0-9]+]] = rec.chunk.decay_to_end %{{[0-9]+}}, %{{[0-9]+}} : (!rec.tile<chunk, key>, !rec.tile<chunk, key>)
// KDA: rec.chunk.matmul %[[KH]], %{{[0-9]+}} {transpose_lhs}
// KDA-NOT: rec.chunk.decay_to_end %{{[0-9]+}}, %{{[0-9]+}} : (!rec.tile<chunk, value>
